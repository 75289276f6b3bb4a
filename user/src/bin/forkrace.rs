//! /bin/forkrace ROUNDS: does a Ctrl-C typed while a process forks reach
//! the child it is forking?
//!
//! Each round, a forker in a process group of its own takes the terminal's
//! foreground and forks in a loop (each child pauses; the forker kills and
//! reaps it), and says `forkrace: go N`. `cargo xtask test` types Ctrl-C on
//! seeing that line. The console's interrupt sends SIGINT to the foreground
//! group wherever the CPU is, often in the middle of a fork; the child being
//! made belongs to the group too and must get the signal as well, or it
//! outlives its job (a fork does not happen in one instant: the kernel keeps
//! group signals for the child until it is in the process table). After the
//! forker has died, no member of its group may be alive.
//!
//! Prints `forkrace: ok` and exits 0, or names the rounds that left
//! survivors and exits 1.

#![no_std]
#![no_main]

use abi::types::{PROC_ZOMBIE, ProcInfo};
use libc_lite::signal;
use libc_lite::{println, sys};

libc_lite::entry!(run);

/// Members of process group `pgid` that are still alive.
fn alive_in_group(pgid: u32) -> usize {
    let mut rows = [ProcInfo::default(); 64];
    let n = sys::proclist(&mut rows).unwrap_or(0).min(64);
    rows[..n]
        .iter()
        .filter(|p| p.pgid == pgid && p.state != PROC_ZOMBIE)
        .count()
}

/// The forker: foreground, then forks until Ctrl-C ends it.
fn forker(ready: i32) -> ! {
    let _ = signal::setpgid(0, 0);
    let _ = signal::tcsetpgrp(0, sys::getpid());
    let _ = sys::write(ready, b"x");
    loop {
        match sys::fork() {
            Ok(0) => loop {
                signal::pause();
            },
            Ok(child) => {
                let _ = sys::kill(child as i32, abi::signal::SIGKILL);
                let _ = sys::waitpid(child as i32);
            }
            Err(_) => core::hint::spin_loop(),
        }
    }
}

fn run() -> i32 {
    let rounds: u32 = libc_lite::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let me = sys::getpid();
    let _ = signal::setpgid(0, 0);
    let mut bad_rounds = 0;
    for round in 1..=rounds {
        let Ok((r, w)) = sys::pipe() else {
            println!("forkrace: pipe failed");
            return 1;
        };
        let pid = match sys::fork() {
            Ok(0) => forker(w),
            Ok(pid) => pid,
            Err(e) => {
                println!("forkrace: fork: {}", e.message());
                return 1;
            }
        };
        let _ = signal::setpgid(pid as i32, pid as i32);
        let mut b = [0u8; 1];
        let _ = sys::read(r, &mut b);
        let _ = sys::close(r);
        let _ = sys::close(w);
        println!("forkrace: go {round}");
        let status = sys::waitpid(pid as i32).unwrap_or(0);
        let _ = signal::tcsetpgrp(0, me);
        // A child killed with its forker needs a moment to be reaped by init.
        let _ = sys::nanosleep(20_000_000);
        let survivors = alive_in_group(pid);
        let _ = sys::kill(-(pid as i32), abi::signal::SIGKILL);
        if sys::signaled(status) != Some(abi::signal::SIGINT) || survivors > 0 {
            bad_rounds += 1;
            println!(
                "forkrace: round {round}: forker status {status:#x}, {survivors} child(ren) outlived the Ctrl-C"
            );
        }
    }
    if bad_rounds == 0 {
        println!("forkrace: ok");
        0
    } else {
        println!("forkrace: FAIL in {bad_rounds} of {rounds} rounds");
        1
    }
}
