//! /bin/uptime: ticks since boot, the tick rate, and processes.
#![no_std]
#![no_main]
use libc_lite::{eprintln, println, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    match sys::kinfo() {
        Ok(k) => {
            let secs = k.ticks / k.hz.max(1);
            println!(
                "up {}.{:02} s ({} ticks at {} Hz), {} processes",
                secs,
                (k.ticks % k.hz.max(1)) * 100 / k.hz.max(1),
                k.ticks,
                k.hz,
                k.processes
            );
            0
        }
        Err(e) => {
            eprintln!("uptime: {}", e.message());
            1
        }
    }
}
