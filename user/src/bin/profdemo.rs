//! /bin/profdemo: profiles itself with profil(2) and prints the histogram.
//!
//! It spends about three quarters of two seconds in `loop_a` and one quarter
//! in `loop_b`, with profil covering its whole text in bins of 16 bytes, and
//! then draws every non-empty bin as a bar, labelled with the function it
//! falls in. The clock interrupt built that histogram, one tick at a time.
//!
//! `profdemo --work` only does the work, for profiling from the outside:
//! `prof profdemo --work` should draw the same 3:1 split.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec;
use libc_lite::{eprintln, print, println, sys};
use user::spin;

libc_lite::entry!(run);

unsafe extern "C" {
    /// Start of the ELF image (the linker defines it).
    static __ehdr_start: u8;
    /// End of the text (the linker defines it).
    static etext: u8;
}

/// Bytes of text per bin: scale = 65536 * 2 / BIN_BYTES.
const BIN_BYTES: u64 = 16;

fn work() {
    let per_tick = spin::cycles_per_tick();
    for _ in 0..250 {
        spin::loop_a(6 * per_tick);
        spin::loop_b(2 * per_tick);
    }
}

fn run() -> i32 {
    if libc_lite::env::args().nth(1) == Some("--work") {
        work();
        return 0;
    }
    let (text_start, text_end) = (&raw const __ehdr_start as u64, &raw const etext as u64);
    let scale = (65536 * 2 / BIN_BYTES) as u32;
    let mut bins = vec![0u16; ((text_end - text_start) / BIN_BYTES + 1) as usize];
    if let Err(e) = sys::profil(&mut bins, text_start, scale) {
        eprintln!("profdemo: profil: {}", e.message());
        return 1;
    }
    let hz = sys::kinfo().map_or(0, |k| k.hz);
    work();
    let _ = sys::profil(&mut [], 0, 0);
    let stat = sys::profstat(0).unwrap_or_default();
    let (a, b) = (spin::range_a(), spin::range_b());
    let name = |addr: u64| {
        if (a.0 & !(BIN_BYTES - 1)..a.1).contains(&addr) {
            "loop_a"
        } else if (b.0 & !(BIN_BYTES - 1)..b.1).contains(&addr) {
            "loop_b"
        } else {
            "elsewhere"
        }
    };
    let total: u64 = bins.iter().map(|&c| u64::from(c)).sum();
    let max = bins.iter().copied().max().unwrap_or(0).max(1);
    println!(
        "profdemo: {total} samples at {hz} Hz over text {text_start:#x}..{text_end:#x}, {BIN_BYTES} bytes per bin (scale {scale}); {} dropped",
        stat.dropped
    );
    for (i, &count) in bins.iter().enumerate().filter(|(_, c)| **c > 0) {
        let addr = text_start + i as u64 * BIN_BYTES;
        let width = (u64::from(count) * 50).div_ceil(u64::from(max)) as usize;
        print!("  {addr:#08x} {:<9} ", name(addr));
        for _ in 0..width {
            print!("#");
        }
        println!(
            " {count} ({:.1}%)",
            f64::from(count) * 100.0 / total.max(1) as f64
        );
    }
    println!("profdemo: loop_a ran 3/4 of the time and loop_b 1/4; the bars should say the same.");
    0
}
