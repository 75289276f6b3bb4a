//! /bin/soak [RUNS] [PROGRAM ARGS...]: runs a test program (default
//! /bin/usertests) RUNS times (default 5) in one boot, and checks that the
//! kernel neither loses frames nor grows its heap after the first run (which
//! may warm it up), and that its own bookkeeping stays sound (`kcheck`).
//! `cargo xtask run -- /bin/soak 50` is the long soak; the test command runs
//! a short one.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use libc_lite::{println, sys};

libc_lite::entry!(run);

/// (frames in use outside the kernel heap and kernel page tables, heap frames).
fn measure() -> (u64, u64) {
    sys::kinfo().map_or((0, 0), |k| (k.frames_in_use(), k.heap_frames))
}

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let runs: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(5);
    let program: Vec<&str> = match args.get(1..) {
        Some(rest) if !rest.is_empty() => rest.to_vec(),
        _ => Vec::from(["/bin/usertests"]),
    };
    let mut baseline = None;
    let mut failed_runs = 0;
    for i in 1..=runs {
        let status = user::run(program[0], &program);
        let ok = matches!(status, Ok(s) if sys::exited(s) == Some(0));
        failed_runs += u32::from(!ok);
        let now = measure();
        println!(
            "soak: run {i}/{runs}: {} ; frames in use {}, heap frames {}",
            if ok { "passed" } else { "FAILED" },
            now.0,
            now.1
        );
        baseline.get_or_insert(now);
    }
    let (first, last) = (baseline.unwrap_or_default(), measure());
    let sound = sys::kcheck().is_ok();
    println!(
        "soak: {runs} runs of {}: {failed_runs} failed; frames in use {} -> {}, heap frames {} -> {}; kernel self-check {}",
        program[0],
        first.0,
        last.0,
        first.1,
        last.1,
        if sound { "sound" } else { "FAILED" }
    );
    if failed_runs == 0 && first == last && sound {
        println!("soak: ok");
        0
    } else {
        println!("soak: FAIL");
        1
    }
}
