//! /bin/kill [-SIGNAL] PID...: send a signal (default SIGTERM) to processes
//! (a negative PID is a process group); `kill -l` lists the signals.
#![no_std]
#![no_main]
use libc_lite::{eprintln, println, signal, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let args: alloc::vec::Vec<&str> = libc_lite::env::args().skip(1).collect();
    let (signal, pids) = match args.split_first() {
        Some((&"-l", _)) => {
            for number in 1..32 {
                println!("{number:>2} {}", signal::name(number));
            }
            return 0;
        }
        Some((first, rest)) if first.starts_with('-') && !rest.is_empty() => {
            match signal::parse(&first[1..]) {
                Some(s) => (s, rest),
                None => {
                    eprintln!("kill: unknown signal {first}");
                    return 2;
                }
            }
        }
        _ => (abi::signal::SIGTERM, &args[..]),
    };
    if pids.is_empty() {
        eprintln!("usage: kill [-SIGNAL] PID... | kill -l");
        return 2;
    }
    let mut status = 0;
    for arg in pids {
        let result = arg
            .parse::<i32>()
            .map_err(|_| libc_lite::Errno::EINVAL)
            .and_then(|pid| sys::kill(pid, signal));
        if let Err(e) = result {
            eprintln!("kill: {arg}: {}", e.message());
            status = 1;
        }
    }
    status
}
extern crate alloc;
