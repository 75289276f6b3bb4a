//! /bin/echo [-n] ARGS: print the arguments separated by spaces.
#![no_std]
#![no_main]

extern crate alloc;
use alloc::string::String;
use alloc::vec::Vec;

libc_lite::entry!(run);

fn run() -> i32 {
    let mut args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let newline = args.first() != Some(&"-n");
    if !newline {
        args.remove(0);
    }
    let mut out = args.join(" ");
    if newline {
        out.push('\n');
    }
    let _: &String = &out;
    match libc_lite::sys::write_all(1, out.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}
