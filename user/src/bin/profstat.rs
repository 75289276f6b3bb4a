//! /bin/profstat [PID...]: profiling state and counters of processes (all
//! of them without arguments): on/off, why it stopped, samples counted,
//! samples dropped, bin updates applied; then what the profil path costs.
#![no_std]
#![no_main]
extern crate alloc;
use abi::types::*;
use alloc::vec::Vec;
use libc_lite::{eprintln, println, sys};
libc_lite::entry!(run);

fn reason(r: u32) -> &'static str {
    match r {
        PROF_NEVER_STARTED => "never on",
        PROF_RUNNING => "running",
        PROF_STOPPED_BY_CALL => "off by call",
        PROF_STOPPED_BY_EXEC => "off by exec",
        PROF_STOPPED_BY_FAULT => "off by fault",
        PROF_STOPPED_BY_BAD_CALL => "off by EFAULT",
        PROF_STOPPED_BY_EXIT => "off by exit",
        _ => "?",
    }
}

fn run() -> i32 {
    let mut pids: Vec<i32> = libc_lite::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if pids.is_empty() {
        let mut rows = [ProcInfo::default(); 64];
        let n = sys::proclist(&mut rows).unwrap_or(0).min(64);
        pids = rows[..n].iter().map(|p| p.pid as i32).collect();
    }
    println!("  PID STATE          REGIONS   SAMPLES   DROPPED   APPLIED");
    let mut status = 0;
    for pid in pids {
        match sys::profstat(pid) {
            Ok(s) => println!(
                "{pid:>5} {:<14} {:>7} {:>9} {:>9} {:>9}",
                reason(s.stopped_by),
                s.regions,
                s.samples,
                s.dropped,
                s.applied
            ),
            Err(e) => {
                eprintln!("profstat: {pid}: {}", e.message());
                status = 1;
            }
        }
    }
    if let Ok(c) = sys::profcost() {
        println!(
            "profil cost (TSC cycles): tick median {} p99 {}; update median {} p99 {}",
            c.tick_median, c.tick_p99, c.apply_median, c.apply_p99
        );
    }
    status
}
