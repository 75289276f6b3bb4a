//! kbench: the kernel times a few of its own operations that no program
//! can time from outside, for `cargo xtask bench` (the multiprocessor
//! costs: what a lock costs when nobody else wants it, what a TLB
//! shootdown costs). A program can time a system call that takes a lock or
//! shoots down TLBs, and the bench does (mprotect beside a thread on
//! another CPU, against Linux), but there the operation is one part of
//! many; here it is alone.
//!
//! And what the kernel's own profile costs (kprof.rs): a function call
//! with the profiled kernel's mcount in it, and the clock interrupt's
//! sample of the kernel.
//!
//! Each call times `rounds` rounds and reports the median and quartiles in
//! picoseconds, and the median in cycles; the rounds run with nothing
//! held, on the caller's CPU.

use abi::Errno;
use abi::types::{
    KBENCH_CALL, KBENCH_KPROF_TICK, KBENCH_LOCK, KBENCH_MAX_ROUNDS, KBENCH_SHOOTDOWN, KBench,
};
use alloc::vec::Vec;

use super::SysResult;
use crate::mm::uaccess;
use crate::sync::{IrqLock, Rank};

/// Lock and release pairs timed together in one round of `KBENCH_LOCK`:
/// one pair is shorter than the TSC reads around it are precise.
const LOCK_PAIRS_PER_ROUND: u64 = 64;

pub fn kbench(what: u32, rounds: u32, out: u64) -> SysResult {
    if rounds == 0 || rounds > KBENCH_MAX_ROUNDS {
        return Err(Errno::EINVAL);
    }
    let mut cycles: Vec<u64> = match what {
        KBENCH_LOCK => (0..rounds).map(|_| uncontended_lock()).collect(),
        KBENCH_SHOOTDOWN if crate::arch::percpu::online() > 1 => {
            (0..rounds).map(|_| shootdown()).collect()
        }
        KBENCH_SHOOTDOWN => return Err(Errno::ENXIO),
        KBENCH_CALL => (0..rounds).map(|_| function_call()).collect(),
        KBENCH_KPROF_TICK => (0..rounds).map(|_| kernel_sample()).collect(),
        _ => return Err(Errno::EINVAL),
    };
    cycles.sort_unstable();
    let n = cycles.len();
    let ps = |c: u64| {
        let per_sec = crate::clock::tsc_per_sec().max(1);
        (u128::from(c) * 1_000_000_000_000 / u128::from(per_sec)) as u64
    };
    let result = KBench {
        median_ps: ps(cycles[n / 2]),
        q1_ps: ps(cycles[n / 4]),
        q3_ps: ps(cycles[(3 * n) / 4]),
        median_cycles: cycles[n / 2],
    };
    uaccess::write(out, &result)?;
    Ok(0)
}

/// TSC cycles of one uncontended take and release of an `IrqLock` (the
/// ticket drawn and served, interrupts off and on, the debug checks),
/// averaged over a round of pairs.
fn uncontended_lock() -> u64 {
    static ALONE: IrqLock<u64> = IrqLock::new(Rank::Service, 0);
    let start = crate::arch::rdtsc();
    for _ in 0..LOCK_PAIRS_PER_ROUND {
        *ALONE.lock() += 1;
    }
    (crate::arch::rdtsc() - start) / LOCK_PAIRS_PER_ROUND
}

/// TSC cycles of one shootdown of every CPU's TLB, from the first IPI
/// sent to the last CPU's answer, with interrupts off as where the kernel
/// shoots down for itself (a kernel stack's slot reused, mm/kstack.rs).
fn shootdown() -> u64 {
    x86_64::instructions::interrupts::without_interrupts(|| {
        let start = crate::arch::rdtsc();
        crate::arch::smp::shootdown_kernel();
        crate::arch::rdtsc() - start
    })
}

/// Calls timed together in one round of `KBENCH_CALL` and
/// `KBENCH_KPROF_TICK`, for the same reason as `LOCK_PAIRS_PER_ROUND`.
const CALLS_PER_ROUND: u64 = 64;

/// TSC cycles of one call of `kprof::empty_call` (with its mcount in the
/// profiled kernel), averaged over a round.
fn function_call() -> u64 {
    let start = crate::arch::rdtsc();
    for i in 0..CALLS_PER_ROUND {
        core::hint::black_box(crate::kprof::empty_call(i));
    }
    (crate::arch::rdtsc() - start) / CALLS_PER_ROUND
}

/// TSC cycles of the clock interrupt's part of the kernel profile for one
/// tick in the kernel, averaged over a round: with interrupts off, as in
/// the interrupt, at a program counter in the kernel's text (this
/// function's).
fn kernel_sample() -> u64 {
    let pc = kernel_sample as fn() -> u64 as usize as u64;
    x86_64::instructions::interrupts::without_interrupts(|| {
        let start = crate::arch::rdtsc();
        for _ in 0..CALLS_PER_ROUND {
            crate::kprof::on_tick(core::hint::black_box(pc), false);
        }
        (crate::arch::rdtsc() - start) / CALLS_PER_ROUND
    })
}
