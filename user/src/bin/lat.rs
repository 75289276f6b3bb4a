//! /bin/lat: latency of a few basic operations, in TSC cycles and
//! nanoseconds (median of many runs). A measurement tool, not a test.
#![no_std]
#![no_main]

extern crate alloc;
use alloc::vec::Vec;
use libc_lite::{println, sys};

libc_lite::entry!(run);

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn measure(runs: usize, mut f: impl FnMut()) -> u64 {
    let samples: Vec<u64> = (0..runs)
        .map(|_| {
            let t0 = sys::rdtsc();
            f();
            sys::rdtsc() - t0
        })
        .collect();
    median(samples)
}

fn run() -> i32 {
    let tsc = sys::kinfo().map(|k| k.tsc_per_sec).unwrap_or(1).max(1);
    let report = |name: &str, cycles: u64| {
        println!(
            "lat: {name:<20} {cycles:>10} cycles {:>10} ns",
            cycles as u128 * 1_000_000_000 / tsc as u128
        );
    };
    report(
        "getpid",
        measure(10_000, || {
            sys::getpid();
        }),
    );
    report(
        "fork+exit+wait",
        measure(200, || {
            if sys::fork() == Ok(0) {
                sys::exit(0);
            }
            let _ = sys::wait4(-1, 0);
        }),
    );
    report(
        "fork+exec+wait",
        measure(100, || {
            if sys::fork() == Ok(0) {
                sys::execve("/bin/true", &["true"], &[]);
                sys::exit(127);
            }
            let _ = sys::wait4(-1, 0);
        }),
    );
    0
}
