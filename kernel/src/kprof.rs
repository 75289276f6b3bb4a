//! kgmon: the kernel profiles itself, as 4.4BSD's profiled kernels did.
//!
//! The clock interrupt already samples the program counter of every
//! process that asked (profil.rs). Here it samples the kernel's own: a tick
//! that interrupted kernel mode adds one to the bin of the kernel's text
//! its program counter falls in, with profil's arithmetic
//! (`kcore::profil::bin_for`, one 16-bit bin per 4 bytes of text, the bins
//! libc-lite's gmon.out uses). `kgmon(2)` (syscall/kgmon.rs) starts, stops,
//! resets and extracts, and the extract is a gmon.out GNU gprof reads with
//! the kernel's ELF: `cargo xtask kprof` does that from the host.
//!
//! ## One histogram per CPU
//!
//! Every CPU's tick samples its own CPU, and each adds only to its own
//! histogram, so the tick takes no lock and no two CPUs write one cache
//! line. The histograms are summed when the profile is read. A bin is an
//! atomic only because a reset or an extract on another CPU reads or
//! zeroes it while the tick may be adding.
//!
//! ## Where the samples land
//!
//! The tick is an interrupt, so it cannot interrupt code that runs with
//! interrupts off (a spinlock's holder, the trap entry, the scheduler's
//! switch). Their time is not lost: the tick waits, and lands on the first
//! instruction after interrupts come back on, so it is charged to whatever
//! turned them on (`IrqLock`'s guard as it drops, mostly). BSD's profiled
//! kernels had the same blind spot; only a non-maskable interrupt could
//! see inside, and this kernel takes none for profiling.
//!
//! How much time that is, the histogram cannot say, so the lock says it:
//! while the kernel profiles itself, an `IrqLock` that turns interrupts
//! off (a CPU's outermost lock) reads the TSC, and its guard adds the
//! cycles to its rank's total as it turns them back on
//! (`interrupts_were_off`). `KGMON_IRQS_OFF` reads the totals beside the
//! time profiled; `kgmon -i` prints them. The other interrupts-off regions
//! (the trap entry, the switch, code that turns them off by hand) are not
//! locks and are not counted.
//!
//! A tick on a CPU that is idle lands in `clock::idle_halt`, so the idle
//! share of the machine is in the profile too, as the idle loop was in
//! BSD's.
//!
//! ## The call graph
//!
//! The profiled kernel (`cargo xtask run --kprof`, feature `mcount`) calls
//! mcount (arch/mcount.rs) at the top of every function, and mcount calls
//! `record_arc` here with the call site and the function: each CPU counts
//! its calls in its own `kcore::gmon::ArcTable`, again without a lock, and
//! the extract adds the CPUs' tables together into gmon.out's arcs, from
//! which gprof makes the call graph and the call counts. A table holds 3
//! arcs per 100 bytes of text (glibc's density); a call on a new arc past
//! that is counted as lost (`KGMON_LOST_ARCS`), never a failure. The
//! kernel built without the feature makes no tables and pays nothing: its
//! functions have no mcount call to make.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicUsize, Ordering};

use abi::Errno;
use kcore::gmon::ArcTable;
use spin::Once;

use crate::arch;

/// profil's scale for one 16-bit bin per 4 bytes of text
/// (`kcore::gmon::BYTES_PER_BIN`): `bin = (pc - low) / 4`.
const SCALE: u32 = 32768;

/// The profile: made at the first start, kept until the machine stops.
struct Profile {
    /// The kernel's text: `[low, high)`, `high` rounded up so that the
    /// bins divide it evenly, as gprof divides it.
    low: u64,
    high: u64,
    /// One histogram per CPU (by `percpu` index), each `bins` long.
    cpus: Vec<Box<[AtomicU16]>>,
    /// Samples each CPU added (a bin's count stops at 65535; these do not).
    samples: Vec<AtomicU64>,
    /// One arc table per CPU, when the kernel records its call graph
    /// (`CALL_GRAPH`); none otherwise.
    arcs: Vec<ArcTable>,
}

static PROFILE: Once<Profile> = Once::new();
/// Whether the tick samples the kernel now.
static RUNNING: AtomicBool = AtomicBool::new(false);
/// Ticks inside `on_tick` past its look at `RUNNING`: `stop` waits for
/// them, so a stopped profile no longer moves (a virtual CPU the host
/// paused in the middle of one would otherwise add its sample later).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Whether mcount records arcs now (arch/mcount.rs reads it, as a byte,
/// before anything else): on and off with `RUNNING`, in a kernel built
/// with mcount.
pub static ARCS_ON: AtomicBool = AtomicBool::new(false);

/// Whether this kernel was built to record its call graph (feature
/// `mcount`: every function calls mcount).
pub const CALL_GRAPH: bool = cfg!(feature = "mcount");

/// TSC cycles with interrupts off, by the rank of the lock that turned
/// them off, while profiling ran (see the top of this file).
static INTERRUPTS_OFF: [AtomicU64; crate::sync::RANKS] =
    [const { AtomicU64::new(0) }; crate::sync::RANKS];
/// When profiling last began to run (TSC), and how long it ran before
/// that since the last reset, in cycles: the time the totals above are
/// part of (on each CPU).
static RUN_SINCE: AtomicU64 = AtomicU64::new(0);
static RAN_FOR: AtomicU64 = AtomicU64::new(0);

/// For `IrqLock::lock` as it turns interrupts off: the TSC now while
/// profiling runs (never 0), else 0, so that the lock pays one load when
/// nobody profiles.
pub fn interrupts_off_now() -> u64 {
    if RUNNING.load(Ordering::Relaxed) {
        arch::rdtsc().max(1)
    } else {
        0
    }
}

/// For an `IrqLock` guard about to turn interrupts back on: they were off
/// since `since` (from `interrupts_off_now`), for a lock of rank `rank`.
/// Counted while profiling runs. Takes no lock.
pub fn interrupts_were_off(rank: crate::sync::Rank, since: u64) {
    if RUNNING.load(Ordering::Relaxed) {
        let cycles = arch::rdtsc().saturating_sub(since);
        INTERRUPTS_OFF[rank as usize].fetch_add(cycles, Ordering::Relaxed);
    }
}

/// The state `kgmon` reports (`abi::types::KGMON_*`).
pub fn state() -> usize {
    match (PROFILE.get(), RUNNING.load(Ordering::SeqCst)) {
        (None, _) => abi::types::KGMON_NEVER,
        (Some(_), false) => abi::types::KGMON_OFF,
        (Some(_), true) => abi::types::KGMON_RUNNING,
    }
}

/// The clock interrupt's part, on every CPU: a tick that interrupted the
/// kernel at `pc` is counted, while profiling runs. Takes no lock.
pub fn on_tick(pc: u64, from_user: bool) {
    // The common case, not profiling, costs one load.
    if from_user || !RUNNING.load(Ordering::Relaxed) {
        return;
    }
    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    if RUNNING.load(Ordering::SeqCst) {
        record(pc);
    }
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
}

/// `on_tick`'s count of one sample at `pc` on this CPU.
fn record(pc: u64) {
    let Some(profile) = PROFILE.get() else {
        return;
    };
    let cpu = arch::percpu::this_cpu().index() as usize;
    let (Some(histogram), Some(samples)) = (profile.cpus.get(cpu), profile.samples.get(cpu)) else {
        return;
    };
    let Some(bin) = kcore::profil::bin_for(pc, profile.low, SCALE)
        .and_then(|bin| histogram.get(usize::try_from(bin).ok()?))
    else {
        return;
    };
    let _ = bin.try_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
        Some(kcore::profil::saturating_count(old, 1))
    });
    samples.fetch_add(1, Ordering::Relaxed);
}

/// mcount's part (arch/mcount.rs), on every CPU, in any context: one call
/// from the call site `from_pc` into the function at `self_pc`, counted
/// in this CPU's table. mcount has set this CPU's busy byte, so nothing
/// else on this CPU records until it returns; another CPU only reads the
/// table once every busy byte is clear with `ARCS_ON` off (`stop`), and
/// the look at `ARCS_ON` here, after the byte was set, is what makes that
/// wait enough. Not instrumented: it would count a call into itself.
#[instrument_fn = "off"]
#[cfg_attr(not(feature = "mcount"), allow(dead_code))]
pub extern "C" fn record_arc(from_pc: u64, self_pc: u64) {
    if !ARCS_ON.load(Ordering::SeqCst) {
        return;
    }
    let Some(profile) = PROFILE.get() else {
        return;
    };
    let cpu = arch::percpu::this_cpu().index() as usize;
    if let Some(table) = profile.arcs.get(cpu) {
        table.record(from_pc, self_pc);
    }
}

/// Starts profiling; the first start makes the histograms (and, with
/// `CALL_GRAPH`, the arc tables), one per CPU online. EALREADY when it
/// runs; ENOMEM when they cannot be made; ENOEXEC when the kernel cannot
/// find its own text.
pub fn start() -> Result<(), Errno> {
    if PROFILE.get().is_none() {
        let (low, end) = arch::kernel_text().ok_or(Errno::ENOEXEC)?;
        let bins = (end - low).div_ceil(kcore::gmon::BYTES_PER_BIN) as usize;
        let cpus = arch::percpu::online();
        let mut histograms = Vec::new();
        histograms
            .try_reserve_exact(cpus)
            .map_err(|_| Errno::ENOMEM)?;
        for _ in 0..cpus {
            let mut bins_of_cpu = Vec::new();
            bins_of_cpu
                .try_reserve_exact(bins)
                .map_err(|_| Errno::ENOMEM)?;
            bins_of_cpu.resize_with(bins, || AtomicU16::new(0));
            histograms.push(bins_of_cpu.into_boxed_slice());
        }
        let mut arcs = Vec::new();
        if CALL_GRAPH {
            let limit = kcore::gmon::arc_limit(None, end - low);
            arcs.try_reserve_exact(cpus).map_err(|_| Errno::ENOMEM)?;
            for _ in 0..cpus {
                arcs.push(ArcTable::new(limit).ok_or(Errno::ENOMEM)?);
            }
        }
        // Two starts at once: the first to get here makes it.
        PROFILE.call_once(|| Profile {
            low,
            high: low + bins as u64 * kcore::gmon::BYTES_PER_BIN,
            cpus: histograms,
            samples: (0..cpus).map(|_| AtomicU64::new(0)).collect(),
            arcs,
        });
    }
    if RUNNING.swap(true, Ordering::SeqCst) {
        return Err(Errno::EALREADY);
    }
    resume();
    Ok(())
}

/// Lets the profile run (again) from now: the start, and a reset or an
/// extract that paused it (`stop`, which added the time it had run to
/// `RAN_FOR`). The time profiled counts on from now.
fn resume() {
    RUN_SINCE.store(arch::rdtsc(), Ordering::SeqCst);
    RUNNING.store(true, Ordering::SeqCst);
    ARCS_ON.store(CALL_GRAPH, Ordering::SeqCst);
}

/// Stops profiling, once no tick is still counting; what was counted is
/// kept.
pub fn stop() {
    if RUNNING.swap(false, Ordering::SeqCst) {
        let ran = arch::rdtsc().saturating_sub(RUN_SINCE.load(Ordering::SeqCst));
        RAN_FOR.fetch_add(ran, Ordering::SeqCst);
    }
    ARCS_ON.store(false, Ordering::SeqCst);
    while IN_FLIGHT.load(Ordering::SeqCst) != 0
        || arch::percpu::all().iter().any(|cpu| cpu.in_mcount())
    {
        core::hint::spin_loop();
    }
}

/// Zeroes every CPU's histogram and sample count. A running profile is
/// paused for it, so that no tick counts into a bin already zeroed and
/// a sample count not yet zeroed.
pub fn reset() {
    let Some(profile) = PROFILE.get() else {
        return;
    };
    let was_running = RUNNING.load(Ordering::SeqCst);
    stop();
    for histogram in &profile.cpus {
        for bin in histogram.iter() {
            bin.store(0, Ordering::Relaxed);
        }
    }
    for samples in &profile.samples {
        samples.store(0, Ordering::Relaxed);
    }
    for table in &profile.arcs {
        table.clear();
    }
    for cycles in &INTERRUPTS_OFF {
        cycles.store(0, Ordering::Relaxed);
    }
    RAN_FOR.store(0, Ordering::SeqCst);
    if was_running {
        resume();
    }
}

/// Samples CPU `cpu` added since the last reset; EINVAL past the CPUs
/// profiled, ENODATA before the first start.
pub fn cpu_samples(cpu: usize) -> Result<u64, Errno> {
    let profile = PROFILE.get().ok_or(Errno::ENODATA)?;
    let samples = profile.samples.get(cpu).ok_or(Errno::EINVAL)?;
    Ok(samples.load(Ordering::Relaxed))
}

/// The interrupts-off totals as text, for `KGMON_IRQS_OFF`: first
/// `profiled NS CPUS` (how long profiling ran since the last reset, on
/// how many CPUs), then `RANK NS` for each lock rank that turned
/// interrupts off, largest first. ENODATA before the first start.
pub fn interrupts_off_text() -> Result<alloc::string::String, Errno> {
    use core::fmt::Write;
    PROFILE.get().ok_or(Errno::ENODATA)?;
    let mut ran = RAN_FOR.load(Ordering::SeqCst);
    if RUNNING.load(Ordering::SeqCst) {
        ran += arch::rdtsc().saturating_sub(RUN_SINCE.load(Ordering::SeqCst));
    }
    let ns = crate::clock::tsc_to_ns;
    let mut ranks: Vec<(crate::sync::Rank, u64)> = crate::sync::Rank::ALL
        .iter()
        .map(|&rank| (rank, INTERRUPTS_OFF[rank as usize].load(Ordering::Relaxed)))
        .filter(|&(_, cycles)| cycles > 0)
        .collect();
    ranks.sort_unstable_by_key(|&(_, cycles)| core::cmp::Reverse(cycles));
    let mut text = alloc::string::String::new();
    let _ = writeln!(text, "profiled {} {}", ns(ran), arch::percpu::online());
    for (rank, cycles) in ranks {
        let _ = writeln!(text, "{rank:?} {}", ns(cycles));
    }
    Ok(text)
}

/// Calls on new arcs the tables had no room for, on every CPU, since the
/// last reset; EOPNOTSUPP in a kernel without a call graph, ENODATA
/// before the first start.
pub fn lost_arcs() -> Result<u64, Errno> {
    if !CALL_GRAPH {
        return Err(Errno::EOPNOTSUPP);
    }
    let profile = PROFILE.get().ok_or(Errno::ENODATA)?;
    Ok(profile.arcs.iter().map(ArcTable::lost).sum())
}

/// The profile as a gmon.out: the CPUs' histograms summed (a bin stops at
/// 65535), at the clock's rate, over the kernel's text, and their arcs
/// added together. ENODATA before the first start. A running profile is
/// paused while it is read (mcount must not write an arc table being
/// read), so the extract is one moment's; it runs on afterwards.
pub fn extract() -> Result<Vec<u8>, Errno> {
    let profile = PROFILE.get().ok_or(Errno::ENODATA)?;
    let was_running = RUNNING.load(Ordering::SeqCst);
    if was_running {
        stop();
    }
    let out = encode(profile);
    if was_running {
        resume();
    }
    out
}

/// `extract`'s gmon.out of a profile that no CPU is adding to.
fn encode(profile: &Profile) -> Result<Vec<u8>, Errno> {
    let arcs = kcore::gmon::merge_arcs(profile.arcs.iter());
    let bins = profile.cpus.first().map_or(0, |h| h.len());
    let mut summed = Vec::new();
    summed.try_reserve_exact(bins).map_err(|_| Errno::ENOMEM)?;
    for i in 0..bins {
        let total: u64 = profile
            .cpus
            .iter()
            .map(|h| u64::from(h[i].load(Ordering::Relaxed)))
            .sum();
        summed.push(kcore::profil::saturating_count(0, total));
    }
    let hist = kcore::gmon::Histogram {
        low_pc: profile.low,
        high_pc: profile.high,
        prof_rate: crate::clock::hz(),
        bins: &summed,
    };
    let mut out = Vec::new();
    out.try_reserve_exact(64 + 2 * bins + 21 * arcs.len())
        .map_err(|_| Errno::ENOMEM)?;
    kcore::gmon::encode(&hist, &arcs, &mut out);
    Ok(out)
}

/// An empty function the compiler may not inline, for `kbench`'s
/// `KBENCH_CALL`: in the profiled kernel its one cost beyond a call is its
/// mcount.
#[inline(never)]
pub fn empty_call(x: u64) -> u64 {
    core::hint::black_box(x)
}

/// Spins until `cycles` of the TSC have passed on this CPU, not counting
/// a gap of more than `stall` cycles between two looks: the host stopped
/// the virtual CPU there. The kernel sees no tick in such a gap (the ones
/// due come late, as one), so counting it would hand the time, and no
/// samples, to whichever function was spinning: beside a CPU hog the
/// split moved by 5 points when it was counted.
fn spin_for(cycles: u64, stall: u64) {
    let mut left = cycles;
    let mut last = arch::rdtsc();
    while left > 0 {
        core::hint::spin_loop();
        let now = arch::rdtsc();
        let step = now.saturating_sub(last);
        last = now;
        if step < stall {
            left = left.saturating_sub(step);
        }
    }
}

/// Three parts of `spin`'s workload. Never inlined: the profile must find
/// it under its own name.
#[inline(never)]
pub fn spin_three_parts(cycles: u64, stall: u64) {
    spin_for(cycles, stall);
}

/// One part of `spin`'s workload.
#[inline(never)]
pub fn spin_one_part(cycles: u64, stall: u64) {
    spin_for(cycles, stall);
}

/// A workload of known shape, for the tests (`KGMON_SPIN`): `ms`
/// milliseconds with interrupts on, in turns of 20: three quarters in
/// `spin_three_parts` and one in `spin_one_part`. Time the host took from
/// the virtual CPU (a gap of over half a tick) is not counted.
pub fn spin(ms: u64) {
    let per_ms = crate::clock::tsc_per_sec() / 1000;
    let stall = crate::clock::tsc_per_sec() / u64::from(crate::clock::hz().max(1)) / 2;
    const TURN_MS: u64 = 20;
    for _ in 0..ms.div_ceil(TURN_MS) {
        spin_three_parts(per_ms * TURN_MS * 3 / 4, stall);
        spin_one_part(per_ms * TURN_MS / 4, stall);
    }
}
