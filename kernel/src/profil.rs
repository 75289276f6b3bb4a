//! profil(2): the clock interrupt builds each process's execution histogram.
//!
//! The path of one sample (the contract is `docs/profil.md`):
//!
//!     timer interrupt -> clock::on_timer_interrupt -> proc::on_tick
//!         -> Profile::on_tick(pc, ..) computes the bin; from user mode
//!                                    tries it at once (one fixed-up
//!                                    lock cmpxchg that never handles a
//!                                    fault); else records a pending tick
//!                                    in the running thread
//!     return to user mode -> proc::return_to_user
//!         -> apply_pending()         one atomic read-modify-write of the
//!                                    16-bit bin through mm::uaccess,
//!                                    saturating at 65535
//!     that copy fails        -> Profile::stop(FAULT): silently off, the
//!                                    process (every thread) runs on
//!     fork / exec / exit     -> Profile::for_child / stop(EXEC) / stop(EXIT)
//!
//! The regions, the buffer and the counters are the process's; the pending
//! ticks are each thread's (`PendingTicks`), earned on its own ticks and
//! applied on its own return to user mode, into the one buffer: so the
//! counts are the sum over the threads (OSF/1's rule). A thread's exit
//! drops only its own pending ticks.
//!
//! This is the BSD design (`addupc_intr` records, `addupc_task` applies at
//! the AST): an interrupt handler cannot handle a page fault on a user
//! buffer, but the return to user mode runs in the process's own context,
//! where the checked copy path can. The interrupt's own try is the fast
//! case of it: when the tick interrupted user mode and the bin's page is
//! present and writable, the add needs no handling at all; if it faults,
//! the fixup only reports it and the tick goes pending as before
//! (docs/profil.md says why this is still BSD-safe).
//!
//! A tick that lands while the process is in the kernel on its own behalf
//! is charged to the user pc at which it entered (proc::on_tick reads it
//! from the entry record above the trap frame at the top of its kernel
//! stack, written at entry: see mm/kstack.rs).

use abi::Errno;
use abi::types::*;
use alloc::vec::Vec;
use kcore::profil::{MAX_REGIONS, Region, regions_from};

use crate::mm::uaccess;
use crate::proc::{current, current_thread};
use crate::sync::{IrqLock, Rank};

/// Distinct bins a process can have pending between two returns to user
/// mode. One is the usual case (a long system call adds its ticks to the same
/// bin); a tick for a further distinct bin is counted as dropped.
const MAX_PENDING: usize = 4;

/// The ticks a thread earned and has not yet added to the buffer: (user
/// address of the bin, ticks), applied on its return to user mode.
#[derive(Clone, Default)]
pub struct PendingTicks {
    pending: [(u64, u64); MAX_PENDING],
    len: usize,
    /// Bumped by every start and stop of the process's profile: ticks
    /// recorded under an older one are not applied (the buffer they were
    /// computed for may be gone).
    epoch: u64,
}

impl PendingTicks {
    pub fn has_pending(&self) -> bool {
        self.len > 0
    }

    /// Drops the pending ticks (the thread is exiting).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    fn take(&mut self) -> ([(u64, u64); MAX_PENDING], usize, u64) {
        let taken = (self.pending, self.len, self.epoch);
        self.len = 0;
        taken
    }
}

#[derive(Clone, Default)]
/// A process's profile: its regions (empty when profiling is off) and the
/// counters profstat reports, over all its threads.
pub struct Profile {
    /// Empty when profiling is off.
    regions: Vec<Region>,
    /// Bumped by every start and stop (see `PendingTicks::epoch`).
    epoch: u64,
    samples: u64,
    dropped: u64,
    applied: u64,
    stopped_by: u32,
    /// Ticks charged to the process while on, sampled or not (profhz).
    ticks_seen: u64,
}

/// Clock ticks per profil sample: hz / profhz (the boot option), 1 by
/// default.
static TICKS_PER_SAMPLE: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(1);

/// Sets profil's rate to `profhz` samples a second on a clock of `hz`;
/// Err if it does not divide the clock's rate.
pub fn set_profhz(profhz: u32, hz: u32) -> Result<(), &'static str> {
    if profhz == 0 || profhz > hz || !hz.is_multiple_of(profhz) {
        return Err("profhz must divide hz");
    }
    TICKS_PER_SAMPLE.store(hz / profhz, core::sync::atomic::Ordering::Relaxed);
    Ok(())
}

impl Profile {
    pub fn is_on(&self) -> bool {
        !self.regions.is_empty()
    }

    /// The regions being sampled (none when off).
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Turns profiling on with `regions`, replacing any earlier ones.
    pub fn start(&mut self, regions: Vec<Region>) {
        *self = Profile {
            regions,
            epoch: self.epoch + 1,
            stopped_by: PROF_RUNNING,
            ..Profile::default()
        };
    }

    /// Turns profiling off; every thread's pending ticks are dropped (their
    /// epoch is over).
    pub fn stop(&mut self, reason: u32) {
        if self.is_on() || reason == PROF_STOPPED_BY_CALL || reason == PROF_STOPPED_BY_BAD_CALL {
            self.regions.clear();
            self.epoch += 1;
            self.stopped_by = reason;
        }
    }

    /// A forked child's state: the same buffers (in its own copy of memory),
    /// fresh counters, nothing pending.
    pub fn for_child(&self) -> Profile {
        Profile {
            regions: self.regions.clone(),
            stopped_by: self.stopped_by,
            ..Profile::default()
        }
    }

    /// Called by the timer interrupt with the pc to charge to the running
    /// thread, whose pending ticks are `pending`; `in_user` if the tick
    /// interrupted user mode (then the bin is tried at once, see the top of
    /// this file).
    pub fn on_tick(&mut self, pc: u64, pending: &mut PendingTicks, in_user: bool) {
        if !self.is_on() {
            return;
        }
        // profhz: one tick in `every` is a sample (4.4BSD's psratio).
        let every = TICKS_PER_SAMPLE.load(core::sync::atomic::Ordering::Relaxed);
        self.ticks_seen += 1;
        if !self.ticks_seen.is_multiple_of(u64::from(every.max(1))) {
            return;
        }
        let start = crate::arch::rdtsc();
        let hit = match self.regions.as_slice() {
            [single] if single.high == u64::MAX => single.bin(pc).map(|bin| (single, bin)),
            regions => regions
                .iter()
                .find(|r| r.contains(pc))
                .and_then(|r| r.bin(pc).map(|bin| (r, bin))),
        };
        match hit {
            Some((region, bin)) => {
                self.samples += 1;
                let addr = region.buffer.wrapping_add(2 * bin);
                if in_user && uaccess::try_add_to_u16_saturating(addr, 1) {
                    self.applied += 1;
                } else {
                    if pending.epoch != self.epoch {
                        *pending = PendingTicks {
                            epoch: self.epoch,
                            ..PendingTicks::default()
                        };
                    }
                    if !add_pending(pending, addr) {
                        self.dropped += 1;
                    }
                }
            }
            None => self.dropped += 1,
        }
        TICK_COSTS.lock().record(crate::arch::rdtsc() - start);
    }

    pub fn stat(&self) -> ProfStat {
        ProfStat {
            on: u32::from(self.is_on()),
            stopped_by: self.stopped_by,
            samples: self.samples,
            dropped: self.dropped,
            applied: self.applied,
            regions: self.regions.len() as u32,
            pad: 0,
        }
    }
}

/// Records one tick for the bin at `addr`; false if the tick had to be
/// dropped (MAX_PENDING distinct bins already wait).
fn add_pending(pending: &mut PendingTicks, addr: u64) -> bool {
    if let Some(slot) = pending.pending[..pending.len]
        .iter_mut()
        .find(|(a, _)| *a == addr)
    {
        slot.1 += 1;
    } else if pending.len < MAX_PENDING {
        pending.pending[pending.len] = (addr, 1);
        pending.len += 1;
    } else {
        return false;
    }
    true
}

/// On the current thread's way back to user mode: add its pending ticks to
/// their bins in the process's buffer. Ticks from a profile that has since
/// been stopped or replaced are dropped.
pub fn apply_pending() {
    let (pending, len, epoch) = current_thread(|t| t.prof.take());
    if current(|p| p.prof.epoch != epoch) {
        return;
    }
    for &(addr, ticks) in &pending[..len] {
        let start = crate::arch::rdtsc();
        let updated = add_to_bin(addr, ticks);
        APPLY_COSTS.lock().record(crate::arch::rdtsc() - start);
        let applied = current(|p| {
            if p.prof.epoch != epoch {
                return false; // another thread stopped it meanwhile
            }
            if updated.is_err() {
                p.prof.stop(PROF_STOPPED_BY_FAULT);
                return false;
            }
            p.prof.applied += 1;
            true
        });
        if !applied {
            return;
        }
    }
}

/// Adds `ticks` to the 16-bit bin at user address `addr`, saturating: the
/// one place a profile touches user memory, and only through uaccess (one
/// atomic read-modify-write, so threads on other CPUs lose no counts).
pub fn add_to_bin(addr: u64, ticks: u64) -> Result<(), Errno> {
    uaccess::add_to_u16_saturating(addr, ticks)
}

/// Turns profiling off at the process's own request (profil with scale 0).
pub fn stop_by_call() {
    current(|p| p.prof.stop(PROF_STOPPED_BY_CALL));
}

/// Turns profiling on with one region: `size` bytes of bins at `samples`,
/// `offset` and `scale` (1..=65536) as in the relation. A scale above 65536
/// is EINVAL with the state unchanged; a buffer that is not writable user
/// memory is EFAULT with profiling off (4.4BSD: "profiling is terminated").
pub fn start(samples: u64, size: u64, offset: u64, scale: u32) -> Result<(), Errno> {
    if scale > kcore::profil::SCALE_ONE {
        return Err(Errno::EINVAL); // previous state unchanged
    }
    if let Err(e) = uaccess::check_range(samples, size as usize, true) {
        current(|p| p.prof.stop(PROF_STOPPED_BY_BAD_CALL));
        return Err(e);
    }
    let region = Region {
        buffer: samples,
        size,
        offset,
        scale,
        high: u64::MAX,
    };
    current(|p| p.prof.start(alloc::vec![region]));
    Ok(())
}

/// The AIX form: an array of `struct prof` ended by `p_high == 0`. Only
/// `p_high` of the last entry is read ("all other fields in this last
/// structure are ignored"), so an array may end where its memory does.
pub fn start_regions(array: u64) -> Result<(), Errno> {
    let fault = |e: Errno| {
        current(|p| p.prof.stop(PROF_STOPPED_BY_BAD_CALL));
        Err(e)
    };
    let mut entries = Vec::new();
    loop {
        let at = array.wrapping_add((entries.len() * size_of::<Prof>()) as u64);
        let high_at = at.wrapping_add(core::mem::offset_of!(Prof, p_high) as u64);
        match uaccess::read::<u64>(high_at) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return fault(e),
        }
        let entry: Prof = match uaccess::read(at) {
            Ok(entry) => entry,
            Err(e) => return fault(e),
        };
        if entries.len() == MAX_REGIONS {
            return Err(Errno::EINVAL);
        }
        entries.push(entry);
    }
    let mut regions = [None; MAX_REGIONS];
    let n = regions_from(&entries, &mut regions)?;
    let regions: Vec<Region> = regions[..n].iter().flatten().copied().collect();
    for r in &regions {
        if let Err(e) = uaccess::check_range(r.buffer, r.size as usize, true) {
            return fault(e);
        }
    }
    if regions.is_empty() {
        stop_by_call();
    } else {
        current(|p| p.prof.start(regions));
    }
    Ok(())
}

/// Recent costs of one side of the path, in TSC cycles.
struct Costs {
    samples: [u32; 1024],
    next: usize,
    total: u64,
}

impl Costs {
    const fn new() -> Self {
        Costs {
            samples: [0; 1024],
            next: 0,
            total: 0,
        }
    }

    fn record(&mut self, cycles: u64) {
        self.samples[self.next] = cycles.min(u64::from(u32::MAX)) as u32;
        self.next = (self.next + 1) % self.samples.len();
        self.total += 1;
    }

    /// (samples seen, median, 99th percentile) of the recent ones.
    fn summary(&self) -> (u64, u64, u64) {
        let n = (self.total as usize).min(self.samples.len());
        if n == 0 {
            return (0, 0, 0);
        }
        let mut sorted: Vec<u32> = self.samples[..n].to_vec();
        sorted.sort_unstable();
        (
            self.total,
            u64::from(sorted[n / 2]),
            u64::from(sorted[(n * 99 / 100).min(n - 1)]),
        )
    }
}

static TICK_COSTS: IrqLock<Costs> = IrqLock::new(Rank::ProfilCosts, Costs::new());
static APPLY_COSTS: IrqLock<Costs> = IrqLock::new(Rank::ProfilCosts, Costs::new());

pub fn costs() -> ProfCost {
    let (tick_samples, tick_median, tick_p99) = TICK_COSTS.lock().summary();
    let (apply_samples, apply_median, apply_p99) = APPLY_COSTS.lock().summary();
    ProfCost {
        tick_samples,
        tick_median,
        tick_p99,
        apply_samples,
        apply_median,
        apply_p99,
    }
}
