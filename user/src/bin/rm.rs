//! /bin/rm [-d] PATH...: remove files (with -d, empty directories too).
#![no_std]
#![no_main]
use libc_lite::{Errno, eprintln, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let mut dirs = false;
    let mut status = 0;
    for path in libc_lite::env::args().skip(1) {
        if path == "-d" {
            dirs = true;
            continue;
        }
        let result = match sys::unlink(path) {
            Err(Errno::EISDIR) if dirs => sys::rmdir(path),
            other => other,
        };
        if let Err(e) = result {
            eprintln!("rm: {path}: {}", e.message());
            status = 1;
        }
    }
    status
}
