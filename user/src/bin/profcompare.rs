//! /bin/profcompare [--quick]: what profiling costs a program, native profil
//! against the SIGPROF emulation, measured in one boot on one workload.
//!
//! A fixed amount of computation is timed with profiling off, with the
//! native `profil()` and with `profil_sigprof()` over the whole text, in
//! rounds in which the three modes take turns slice by slice (`SLICES` a
//! round, about 12 ms each, the order rotating), so that a slow stretch of
//! the host, which under emulation lasts tens of milliseconds, lands on all
//! three alike. Profiling starts and stops outside the timed part of each
//! slice. From each round:
//!
//! - **slowdown**: the mode's time against that round's "off" time;
//! - **cost per sample**: the time the mode added, divided by the samples
//!   it took in that round (TSC cycles).
//!
//! Each is printed as the median of the rounds with its quartiles. Under
//! emulation one run of the same work moves by a percent or so, more than a
//! cheap sample adds, so a cost whose quartiles reach zero is reported as
//! below what the measurement resolves, and the SIGPROF/native ratio is
//! given only when both costs are resolved (`kcore::spread`): never a
//! negative cost or ratio. The kernel's own count of its sampling path
//! (`profcost`: the timer interrupt's side, then the deferred updates) is
//! printed last; it is the finer measure of the native cost.
//!
//! A measurement tool (the test command runs it with `--quick` only to see
//! that it produces its numbers); the figures go into docs/profil.md and
//! docs/performance.md.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
use kcore::spread::Quartiles;
use libc_lite::{println, sys};

libc_lite::entry!(run);

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Off,
    Native,
    Sigprof,
}

const MODES: [Mode; 3] = [Mode::Off, Mode::Native, Mode::Sigprof];

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Native => "native profil",
            Mode::Sigprof => "SIGPROF emulation",
        }
    }
}

/// The program's text, as the linker marks it.
fn text() -> (u64, u64) {
    unsafe extern "C" {
        static __ehdr_start: u8;
        static etext: u8;
    }
    (&raw const __ehdr_start as u64, &raw const etext as u64)
}

/// Turns `mode` on over the whole text, with one bin per 8 bytes.
fn start(mode: Mode, bins: &mut [u16]) {
    let (low, _) = text();
    let scale = 16384;
    match mode {
        Mode::Off => {}
        Mode::Native => {
            let _ = sys::profil(bins, low, scale);
        }
        Mode::Sigprof => {
            // SAFETY: `bins` outlives the profiling, which `stop` ends.
            let _ = unsafe {
                libc_lite::sigprof::profil_sigprof(bins.as_mut_ptr(), bins.len() * 2, low, scale)
            };
        }
    }
}

fn stop(mode: Mode) {
    match mode {
        Mode::Off => {}
        Mode::Native => {
            let _ = sys::profil_raw(0, 0, 0, 0);
        }
        Mode::Sigprof => {
            // SAFETY: turning off takes no buffer.
            let _ = unsafe { libc_lite::sigprof::profil_sigprof(core::ptr::null_mut(), 0, 0, 0) };
        }
    }
}

/// A fixed amount of computation.
#[inline(never)]
fn work(iterations: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iterations {
        x = core::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

/// Slices a round's work per mode is cut into.
const SLICES: usize = 24;

fn timed(iterations: u64) -> u64 {
    let t0 = sys::rdtsc();
    core::hint::black_box(work(iterations));
    sys::rdtsc() - t0
}

fn total(bins: &[u16]) -> u64 {
    bins.iter().map(|&c| u64::from(c)).sum()
}

fn run() -> i32 {
    let quick = libc_lite::env::args().any(|a| a == "--quick");
    let Ok(k) = sys::kinfo() else {
        println!("profcompare: kinfo failed");
        return 1;
    };
    let (rounds, seconds_per_round) = if quick { (3, 0.1) } else { (15, 0.3) };
    let slices = if quick { 1 } else { SLICES };
    let (low, high) = text();
    // One histogram per mode, each kept over a round's slices.
    let mut bins: [Vec<u16>; 3] =
        core::array::from_fn(|_| vec![0u16; ((high - low) / 8 + 1) as usize]);
    println!(
        "profcompare: {} Hz tick, TSC {} MHz, text {:#x}..{:#x}, {rounds} rounds per mode",
        k.hz,
        k.tsc_per_sec / 1_000_000,
        low,
        high
    );

    let per_iteration = (timed(1_000_000) / 1_000_000).max(1);
    let iterations =
        (k.tsc_per_sec as f64 * seconds_per_round) as u64 / per_iteration / slices as u64;
    let mut slowdown = [const { Vec::new() }; 3];
    let mut cost = [const { Vec::new() }; 3];
    let mut samples = [0u64; 3];
    for round in 0..rounds {
        let mut times = [0u64; 3];
        for b in bins.iter_mut() {
            b.fill(0);
        }
        for slice in 0..slices {
            for turn in 0..3 {
                let i = (turn + slice + round) % 3;
                start(MODES[i], &mut bins[i]);
                times[i] += timed(iterations);
                stop(MODES[i]);
            }
        }
        for i in 1..3 {
            let taken = total(&bins[i]);
            samples[i] += taken;
            let added = times[i] as f64 - times[0] as f64;
            slowdown[i].push(added * 100.0 / times[0] as f64);
            if taken > 0 {
                cost[i].push(added / taken as f64);
            }
        }
    }
    let spread = |v: &[f64]| {
        Quartiles::of(v).unwrap_or(Quartiles {
            q1: 0.0,
            median: 0.0,
            q3: 0.0,
        })
    };
    for (i, &mode) in MODES.iter().enumerate().skip(1) {
        let s = spread(&slowdown[i]);
        let c = spread(&cost[i]);
        println!(
            "profcompare: {:<18} slowdown median {:+.2}% (quartiles {:+.2} to {:+.2}), {} samples",
            mode.name(),
            s.median,
            s.q1,
            s.q3,
            samples[i]
        );
        if c.resolved() {
            println!(
                "profcompare: {:<18} cost per sample median {:.0} cycles (quartiles {:.0} to {:.0})",
                mode.name(),
                c.median,
                c.q1,
                c.q3
            );
        } else {
            println!(
                "profcompare: {:<18} cost per sample below what this run resolves (quartiles {:.0} to {:.0} cycles)",
                mode.name(),
                c.q1,
                c.q3
            );
        }
    }
    match kcore::spread::ratio(spread(&cost[2]), spread(&cost[1])) {
        Some(r) => println!(
            "profcompare: a SIGPROF sample costs {:.1}x a native one (quartiles allow {:.1}x to {:.1}x)",
            r.median, r.q1, r.q3
        ),
        None => println!(
            "profcompare: no ratio: a cost is below what this run resolves (see the kernel's count below)"
        ),
    }
    if let Ok(c) = sys::profcost() {
        println!(
            "profcompare: kernel's count of the native path: tick median {} p99 {} (the bin, and its update when the tick came from user mode), deferred update median {} p99 {} cycles",
            c.tick_median, c.tick_p99, c.apply_median, c.apply_p99
        );
    }
    println!("profcompare: done");
    0
}
