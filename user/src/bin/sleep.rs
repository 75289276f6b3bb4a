//! /bin/sleep SECONDS: sleep (fractions allowed, e.g. 0.25).
#![no_std]
#![no_main]
use libc_lite::{eprintln, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let Some(arg) = libc_lite::env::args().nth(1) else {
        eprintln!("usage: sleep SECONDS");
        return 2;
    };
    let parse = || -> Option<u64> {
        let (whole, frac) = arg.split_once('.').unwrap_or((arg, ""));
        let secs: u64 = whole.parse().ok()?;
        let digits = frac.len().min(9);
        let nanos = if digits == 0 {
            0
        } else {
            frac[..digits].parse::<u64>().ok()? * 10u64.pow(9 - digits as u32)
        };
        secs.checked_mul(1_000_000_000)?.checked_add(nanos)
    };
    let Some(total) = parse() else {
        eprintln!("sleep: bad time '{arg}'");
        return 2;
    };
    match sys::nanosleep(total) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("sleep: {}", e.message());
            1
        }
    }
}
