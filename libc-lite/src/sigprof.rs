//! profil emulated in user space, the way glibc does it on Linux (as Linux's manual page describes):
//! an `ITIMER_PROF` timer that fires every clock tick of the process's user
//! plus system time, and a SIGPROF handler that reads the interrupted pc from
//! its `ucontext` and adds one to that pc's bin.
//!
//! Same signature, same bins (kcore::profil, the arithmetic the kernel
//! uses), same 16-bit saturating counters as the native `profil()`, so a
//! program can switch between the two and compare: what the emulation costs
//! is a signal delivery, a handler and a sigreturn per tick, where the
//! native one costs a few instructions in the timer interrupt.

use abi::Errno;
use abi::signal::*;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kcore::profil::{Region, saturating_count};

use crate::signal::{self, Handler};
use crate::sys::Result;

/// The histogram the handler fills (buffer 0 = off).
static BUFFER: AtomicU64 = AtomicU64::new(0);
static SIZE: AtomicU64 = AtomicU64::new(0);
static OFFSET: AtomicU64 = AtomicU64::new(0);
static SCALE: AtomicU32 = AtomicU32::new(0);
/// Samples the handler counted (in a bin or not), for comparisons.
static SAMPLES: AtomicU64 = AtomicU64::new(0);
/// The SIGPROF action before profiling began, restored when it stops:
/// handler, flags, restorer, mask.
static OLD_ACTION: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

extern "C" fn on_sigprof(_signal: i32, _info: *mut SigInfo, context: *mut UContext) {
    // SAFETY: the kernel passes a pointer to the ucontext of this signal's
    // frame, valid for the handler's lifetime.
    let pc = unsafe { (*context).mcontext.gregs[REG_RIP] };
    record(pc);
}

fn record(pc: u64) {
    SAMPLES.fetch_add(1, Ordering::Relaxed);
    let region = Region {
        buffer: BUFFER.load(Ordering::Relaxed),
        size: SIZE.load(Ordering::Relaxed),
        offset: OFFSET.load(Ordering::Relaxed),
        scale: SCALE.load(Ordering::Relaxed),
        high: u64::MAX,
    };
    if region.buffer == 0 {
        return;
    }
    if let Some(bin) = region.bin(pc) {
        let counter = (region.buffer + 2 * bin) as *mut u16;
        // SAFETY: profil_sigprof's caller gave a buffer of `size` bytes that
        // stays valid until profiling stops; bin < size / 2. The handler is
        // the only writer and does not nest (SIGPROF is blocked inside it).
        unsafe { counter.write_volatile(saturating_count(counter.read_volatile(), 1)) };
    }
}

/// profil(2)'s contract with SIGPROF: `samples` (`size` bytes) gets the
/// histogram of pcs from `offset` at `scale`; scale 0 (or a null buffer)
/// turns profiling off and puts the old SIGPROF action back.
///
/// # Safety
/// `samples` must stay valid for writes of `size` bytes until profiling is
/// turned off (as with profil(2), where the kernel checks each write; here a
/// bad buffer faults in the handler).
pub unsafe fn profil_sigprof(
    samples: *mut u16,
    size: usize,
    offset: u64,
    scale: u32,
) -> Result<()> {
    if samples.is_null() || scale == 0 {
        return stop();
    }
    if scale > kcore::profil::SCALE_ONE {
        return Err(Errno::EINVAL);
    }
    let running = BUFFER.swap(0, Ordering::Relaxed) != 0;
    SIZE.store(size as u64, Ordering::Relaxed);
    OFFSET.store(offset, Ordering::Relaxed);
    SCALE.store(scale, Ordering::Relaxed);
    BUFFER.store(samples as u64, Ordering::Relaxed);
    if !running {
        let old = signal::sigaction(SIGPROF, Handler::Info(on_sigprof), SA_RESTART, 0)?;
        for (slot, value) in OLD_ACTION
            .iter()
            .zip([old.handler, old.flags, old.restorer, old.mask])
        {
            slot.store(value, Ordering::Relaxed);
        }
    }
    let tick = tick_micros();
    signal::setitimer(ITIMER_PROF, &signal::itimerval(tick, tick)).map(drop)
}

fn stop() -> Result<()> {
    if BUFFER.swap(0, Ordering::Relaxed) == 0 {
        return Ok(());
    }
    signal::setitimer(ITIMER_PROF, &ItimerVal::default())?;
    let [handler, flags, restorer, mask] = OLD_ACTION.each_ref().map(|a| a.load(Ordering::Relaxed));
    let old = SigAction {
        handler,
        flags,
        restorer,
        mask,
    };
    signal::rt_sigaction(SIGPROF, Some(&old)).map(drop)
}

/// One clock tick in microseconds (glibc asks the kernel the same way:
/// the profiling clock's rate), from the aux vector's AT_CLKTCK.
pub fn tick_micros() -> u64 {
    (1_000_000 / crate::env::clock_ticks_per_second()).max(1)
}

/// SIGPROF signals the handler has taken since the program started.
pub fn samples() -> u64 {
    SAMPLES.load(Ordering::Relaxed)
}
