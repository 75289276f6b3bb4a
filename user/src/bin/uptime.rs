//! /bin/uptime: ticks since boot, the tick rate, and processes.
#![no_std]
#![no_main]
use libc_lite::println;
libc_lite::entry!(run);
fn run() -> i32 {
    let k = match user::kinfo_or_report() {
        Ok(k) => k,
        Err(status) => return status,
    };
    let hz = k.hz.max(1);
    println!(
        "up {}.{:02} s ({} ticks at {} Hz), {} processes",
        k.ticks / hz,
        (k.ticks % hz) * 100 / hz,
        k.ticks,
        k.hz,
        k.processes
    );
    0
}
