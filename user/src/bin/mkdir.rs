//! /bin/mkdir DIR...: make directories.
#![no_std]
#![no_main]
use libc_lite::{eprintln, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let mut status = 0;
    for dir in libc_lite::env::args().skip(1) {
        if let Err(e) = sys::mkdir(dir, 0o755) {
            eprintln!("mkdir: {dir}: {}", e.message());
            status = 1;
        }
    }
    status
}
