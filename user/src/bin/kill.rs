//! /bin/kill [-SIGNAL] PID...: send a signal (default SIGTERM).
#![no_std]
#![no_main]
use libc_lite::{eprintln, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let mut signal = abi::types::SIGTERM;
    let mut status = 0;
    let mut any = false;
    for arg in libc_lite::env::args().skip(1) {
        if let Some(name) = arg.strip_prefix('-') {
            match user::parse_signal(name) {
                Some(s) => signal = s,
                None => {
                    eprintln!("kill: unknown signal {name}");
                    return 2;
                }
            }
            continue;
        }
        any = true;
        let result = arg
            .parse::<i32>()
            .map_err(|_| libc_lite::Errno::EINVAL)
            .and_then(|pid| sys::kill(pid, signal));
        if let Err(e) = result {
            eprintln!("kill: {arg}: {}", e.message());
            status = 1;
        }
    }
    if !any {
        eprintln!("usage: kill [-SIGNAL] PID...");
        return 2;
    }
    status
}
