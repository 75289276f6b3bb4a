//! /bin/cat [FILE...]: copy files (or standard input) to standard output.
#![no_std]
#![no_main]

use abi::types::O_RDONLY;
use libc_lite::{eprintln, sys};

libc_lite::entry!(run);

fn copy(fd: i32) -> Result<(), libc_lite::Errno> {
    let mut buf = [0u8; 4096];
    loop {
        let n = sys::read(fd, &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        sys::write_all(1, &buf[..n])?;
    }
}

fn run() -> i32 {
    let mut status = 0;
    let mut any = false;
    for path in libc_lite::env::args().skip(1) {
        any = true;
        let result = sys::open(path, O_RDONLY, 0).and_then(|fd| {
            let r = copy(fd);
            let _ = sys::close(fd);
            r
        });
        if let Err(e) = result {
            eprintln!("cat: {path}: {}", e.message());
            status = 1;
        }
    }
    if !any && let Err(e) = copy(0) {
        eprintln!("cat: {}", e.message());
        status = 1;
    }
    status
}
