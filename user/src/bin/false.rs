//! /bin/false: exit with status 1.
#![no_std]
#![no_main]
libc_lite::entry!(run);
fn run() -> i32 {
    1
}
