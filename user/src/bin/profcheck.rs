//! /bin/profcheck: run by proftests after a profiled process execs it.
//! Exits 0 if this program is not being profiled: profstat says off because
//! of the exec, and a buffer at the address the old image profiled into
//! stays zero while we spin.
#![no_std]
#![no_main]
use abi::types::{PROF_STOPPED_BY_EXEC, PROT_READ, PROT_WRITE};
use libc_lite::{eprintln, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let s = sys::profstat(0).unwrap_or_default();
    if s.on != 0 || s.stopped_by != PROF_STOPPED_BY_EXEC {
        eprintln!("profcheck: profstat after exec: {s:?}");
        return 1;
    }
    let Ok(p) = sys::mmap_fixed(0x6000_0000, 65536, PROT_READ | PROT_WRITE) else {
        return 3;
    };
    user::spin::loop_a(30 * user::spin::cycles_per_tick());
    // SAFETY: p..p+65536 is our fresh mapping.
    let buf = unsafe { core::slice::from_raw_parts(p, 65536) };
    if buf.iter().any(|&b| b != 0) {
        eprintln!("profcheck: counts arrived in the old buffer's place after exec");
        return 1;
    }
    0
}
