//! /bin/callgraph: the Rust example for `cargo xtask prof`.
//!
//! Built with `-Z instrument-mcount` and libc-lite's `gprof` start-up, so
//! running it writes gmon.out. Its profile is known in advance: `main` calls
//! `a` exactly 1000 times and `b` exactly 10 times, and `a` takes about three
//! times as long as `b` in all (1.5 ms per call against 50 ms per call), so
//! gprof must show `a` on top of the flat profile and those call counts in
//! the call graph.

#![no_std]
#![no_main]

use libc_lite::{println, sys};

libc_lite::entry!(run);

/// Busy for `cycles` TSC cycles, without a call or a system call, so the
/// time is charged to the function this is inlined into.
#[inline(always)]
fn spin(cycles: u64) {
    // SAFETY: rdtsc is allowed in user mode.
    let now = || unsafe { core::arch::x86_64::_rdtsc() };
    let end = now() + cycles;
    while now() < end {
        core::hint::spin_loop();
    }
}

#[inline(never)]
fn a(cycles_per_ms: u64) {
    spin(cycles_per_ms * 3 / 2);
}

#[inline(never)]
fn b(cycles_per_ms: u64) {
    spin(cycles_per_ms * 50);
}

fn run() -> i32 {
    let cycles_per_ms = sys::kinfo().map_or(1_000_000, |k| k.tsc_per_sec / 1000);
    for i in 0..1000 {
        a(cycles_per_ms);
        if i % 100 == 0 {
            b(cycles_per_ms);
        }
    }
    println!("callgraph: called a 1000 times and b 10 times");
    0
}
