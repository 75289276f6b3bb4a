//! /bin/showargs ARGS...: prints its arguments as Rust string literals on
//! one line, `showargs: ["a", "b\nc"]`, so a test can see each byte
//! (newlines, quotes, empty arguments) that reached the program.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use libc_lite::println;

libc_lite::entry!(run);

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    println!("showargs: {args:?}");
    0
}
