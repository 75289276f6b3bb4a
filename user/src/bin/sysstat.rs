//! /bin/sysstat: the system calls made since boot, most used first, from
//! /proc/sysstat (`NUMBER COUNT` lines).
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use libc_lite::{println, sys};

libc_lite::entry!(run);

fn run() -> i32 {
    let Ok(bytes) = sys::read_file("/proc/sysstat") else {
        println!("sysstat: cannot read /proc/sysstat");
        return 1;
    };
    let text = core::str::from_utf8(&bytes).unwrap_or("");
    let mut rows: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let (n, c) = l.split_once(' ')?;
            Some((n.parse().ok()?, c.parse().ok()?))
        })
        .collect();
    rows.sort_by_key(|a| core::cmp::Reverse(a.1));
    println!("{:>8}  {:>10}", "NUMBER", "CALLS");
    for (number, count) in rows {
        println!("{number:>8}  {count:>10}");
    }
    0
}
