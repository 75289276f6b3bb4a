//! /bin/forkcall: a profiled program that forks, for `GMON_OUT_PREFIX`.
//!
//! The child calls `b` 10 times and exits; the parent waits for it, checks
//! that the child's profile is in a file of its own (`PREFIX.PID`, when the
//! environment has `GMON_OUT_PREFIX=PREFIX`), then calls `a` 1000 times and
//! exits, writing its own. Without a prefix both would write `gmon.out`,
//! and the parent's would replace the child's.

#![no_std]
#![no_main]

extern crate alloc;

use libc_lite::{println, sys};

libc_lite::entry!(run);

/// Busy for `cycles` TSC cycles, charged to the caller it is inlined into.
#[inline(always)]
fn spin(cycles: u64) {
    let end = sys::rdtsc() + cycles;
    while sys::rdtsc() < end {
        core::hint::spin_loop();
    }
}

#[inline(never)]
fn a(cycles: u64) {
    spin(cycles);
}

#[inline(never)]
fn b(cycles: u64) {
    spin(cycles);
}

fn run() -> i32 {
    let cycles_per_ms = sys::kinfo().map_or(1_000_000, |k| k.tsc_per_sec / 1000);
    let child = match sys::fork() {
        Ok(0) => {
            for _ in 0..10 {
                b(cycles_per_ms * 5);
            }
            return 0;
        }
        Ok(pid) => pid,
        Err(e) => {
            println!("forkcall: fork: {}", e.message());
            return 1;
        }
    };
    let _ = sys::waitpid(child as i32);
    let prefix = libc_lite::env::vars().find_map(|v| v.strip_prefix("GMON_OUT_PREFIX="));
    if let Some(prefix) = prefix {
        let theirs = alloc::format!("{prefix}.{child}");
        match sys::stat(&theirs) {
            Ok(st) if st.st_size > 0 => {
                println!("forkcall: the child wrote {theirs} ({} bytes)", st.st_size)
            }
            _ => println!("forkcall: the child's profile is not in {theirs}"),
        }
    }
    for _ in 0..1000 {
        a(cycles_per_ms / 2);
    }
    println!("forkcall: called a 1000 times, the child b 10 times");
    0
}
