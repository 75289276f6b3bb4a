//! /bin/sync: every mounted disk's changes reach it (sync(2)).
#![no_std]
#![no_main]
use libc_lite::sys;
libc_lite::entry!(run);
fn run() -> i32 {
    sys::sync();
    0
}
