//! /bin/init, process 1.
//!
//! With arguments (`cargo xtask run -- PROGRAM ARGS`), it runs that one
//! program and exits with its status, which powers the machine off. Without,
//! it runs the shell on the console; when the shell exits, so does init.
//! Meanwhile it reaps every orphan the kernel hands it.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use libc_lite::{eprintln, sys};

libc_lite::entry!(run);

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let argv: &[&str] = if args.is_empty() { &["/bin/sh"] } else { &args };
    let child = match sys::fork() {
        Ok(0) => {
            let e = sys::execve(argv[0], argv, &["PATH=/bin", "HOME=/"]);
            eprintln!("init: cannot run {}: {}", argv[0], e.message());
            sys::exit(127);
        }
        Ok(pid) => pid,
        Err(e) => {
            eprintln!("init: fork: {}", e.message());
            return 1;
        }
    };
    loop {
        match sys::wait4(-1, 0) {
            Ok((pid, status)) if pid == child => {
                return match (sys::exited(status), sys::signaled(status)) {
                    (Some(code), _) => code,
                    (_, Some(sig)) => 128 + sig as i32,
                    _ => 1,
                };
            }
            Ok(_) => {} // an orphan, reaped
            Err(e) => {
                eprintln!("init: wait: {}", e.message());
                return 1;
            }
        }
    }
}
