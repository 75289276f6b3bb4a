//! /bin/profcompare [--quick]: what profiling costs a program, native profil
//! against the SIGPROF emulation, measured in one boot on one workload.
//!
//! Two measurements, each with profiling off, with the native `profil()` and
//! with `profil_sigprof()` over the whole text:
//!
//! - **cost per sample**: a loop that reads the TSC back to back sees each
//!   clock tick as a gap (the interrupt, and whatever profiling adds to it:
//!   the bin update on the way out, or the signal frame, handler and
//!   sigreturn). The median gap with profiling on, minus the median with it
//!   off, is what one sample costs, in TSC cycles.
//! - **slowdown**: a fixed amount of computation, timed; median of rounds
//!   that alternate the three modes, so drift in the host hits all alike.
//!
//! A measurement tool (the test command runs it with `--quick` only to see
//! that it produces its numbers); the figures go into the notes and
//! docs/profil.md.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
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

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Gaps between two back-to-back TSC reads longer than `threshold`: one per
/// interruption, until `count` are seen.
fn gaps(count: usize, threshold: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(count);
    let mut last = sys::rdtsc();
    while out.len() < count {
        let now = sys::rdtsc();
        if now - last > threshold {
            out.push(now - last);
        }
        last = now;
    }
    out
}

/// A gap well above what two TSC reads take when nothing interrupts them.
fn gap_threshold() -> u64 {
    let mut deltas = Vec::with_capacity(10_000);
    let mut last = sys::rdtsc();
    for _ in 0..10_000 {
        let now = sys::rdtsc();
        deltas.push(now - last);
        last = now;
    }
    (median(deltas) * 20).max(500)
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
    let (ticks, rounds, seconds_per_round) = if quick { (200, 3, 0.1) } else { (3000, 7, 0.5) };
    let (low, high) = text();
    let mut bins = vec![0u16; ((high - low) / 8 + 1) as usize];
    println!(
        "profcompare: {} Hz tick, TSC {} MHz, text {:#x}..{:#x}, {ticks} ticks and {rounds} rounds per mode",
        k.hz,
        k.tsc_per_sec / 1_000_000,
        low,
        high
    );

    let threshold = gap_threshold();
    let mut tick_cost = [0u64; 3];
    for (i, &mode) in MODES.iter().enumerate() {
        bins.fill(0);
        start(mode, &mut bins);
        tick_cost[i] = median(gaps(ticks, threshold));
        stop(mode);
    }
    let per_sample = |i: usize| tick_cost[i] as i64 - tick_cost[0] as i64;
    for (i, &mode) in MODES.iter().enumerate() {
        println!(
            "profcompare: tick cost {:<18} median {:>8} cycles per tick ({:+} per sample)",
            mode.name(),
            tick_cost[i],
            per_sample(i)
        );
    }
    if per_sample(1) > 0 {
        println!(
            "profcompare: a SIGPROF sample costs {:.1}x a native one",
            per_sample(2) as f64 / per_sample(1) as f64
        );
    } else {
        println!("profcompare: a native sample costs less than the noise of the measurement");
    }

    let per_iteration = (timed(1_000_000) / 1_000_000).max(1);
    let iterations = (k.tsc_per_sec as f64 * seconds_per_round) as u64 / per_iteration;
    let mut times = [const { Vec::new() }; 3];
    let mut samples = [0u64; 3];
    for _ in 0..rounds {
        for (i, &mode) in MODES.iter().enumerate() {
            bins.fill(0);
            start(mode, &mut bins);
            times[i].push(timed(iterations));
            stop(mode);
            samples[i] += total(&bins);
        }
    }
    let times = times.map(median);
    for (i, &mode) in MODES.iter().enumerate() {
        let slowdown = (times[i] as f64 / times[0] as f64 - 1.0) * 100.0;
        println!(
            "profcompare: workload {:<18} median {:>12} cycles ({slowdown:+.2}%), {} samples",
            mode.name(),
            times[i],
            samples[i]
        );
    }
    if let Ok(c) = sys::profcost() {
        println!(
            "profcompare: kernel's count of the native path: tick median {} p99 {}, update median {} p99 {} cycles",
            c.tick_median, c.tick_p99, c.apply_median, c.apply_p99
        );
    }
    println!("profcompare: done");
    0
}
