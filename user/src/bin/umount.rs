//! /bin/umount DIR...: unmount what is mounted on each DIR.
#![no_std]
#![no_main]
use libc_lite::{eprintln, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let mut status = 0;
    for dir in libc_lite::env::args().skip(1) {
        if let Err(e) = sys::umount2(dir, 0) {
            eprintln!("umount: {dir}: {}", e.message());
            status = 1;
        }
    }
    status
}
