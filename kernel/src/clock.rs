//! The clock: the periodic tick that drives time, scheduling and profiling.
//!
//! One of three sources ticks, chosen at boot (`tick=pit|apic|hpet`): the
//! PIT on IRQ 0, the local APIC timer, or the HPET's timer 0, which takes
//! over IRQ 0 (arch/hpet.rs). Either way every tick arrives at
//! `on_timer_interrupt`, which counts it and hands it on, so nothing above this
//! file knows which chip is ticking. The TSC, calibrated against the PIT at
//! boot, gives the finer time that `clock_gettime` and the benchmarks need.
//!
//! Timekeeping is Linux's: the clock's state as of the last tick
//! (`kcore::vdso::Base`) sits behind a sequence lock, and a reading is that
//! state plus the TSC cycles since, scaled. The boot CPU's tick moves the
//! state on and publishes it in the clock page every process maps
//! (vdso.rs), which the kernel's readers read as well as the vDSO: one
//! state, read with the same arithmetic, so the system call and the vDSO
//! give the same time. Readers never wait; the writers (the tick,
//! `set_realtime`) take `TIMEKEEPING`.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kcore::bootopts::TickSource;
use kcore::vdso::{Base, Clock, ClockPage, Time};

use crate::arch::{self, apic, pic, pit, trap::TrapFrame};
use crate::sync::{IrqLock, Rank};

static TICKS: AtomicU64 = AtomicU64::new(0);
static HZ: AtomicU32 = AtomicU32::new(0);
/// 0 until `init` calibrates the TSC.
static TSC_PER_SEC: AtomicU64 = AtomicU64::new(0);

/// The clock's state, for its writers (the tick and `set_realtime`): the
/// one writer a sequence lock allows at a time.
static TIMEKEEPING: IrqLock<Base> = IrqLock::new(
    Rank::Clock,
    Base {
        user_tsc: false,
        cycle_last: 0,
        mult: 0,
        mono_sec: 0,
        mono_nsec_scaled: 0,
        wall_offset: Time { sec: 0, nsec: 0 },
    },
);
/// What the kernel reads before the vDSO's clock page exists: a page
/// nobody publishes to, whose state says the clock has not started.
static NOT_STARTED: ClockPage = ClockPage::new();

/// The published state, which the kernel reads: the very page every
/// process's vDSO reads (vdso.rs). One page, not a copy for each: with a
/// copy, a reader between the two publishes would see the new state in
/// one and the old in the other, and a coarse clock read by the system
/// call and then by the vDSO would step back a tick (tests/musl/vdso.c
/// caught it on four CPUs).
fn published() -> &'static ClockPage {
    crate::vdso::clock_page().unwrap_or(&NOT_STARTED)
}

/// Calibrates the TSC and starts the tick at `hz` from `source`; `rsdp`
/// leads to the HPET's table. An HPET that cannot tick leaves the PIT
/// ticking, with a warning.
pub fn init(hz: u32, source: TickSource, rsdp: Option<u64>) {
    let start = arch::rdtsc();
    let per_sec = calibrate_tsc();
    TSC_PER_SEC.store(per_sec, Ordering::Relaxed);
    let wall = Time {
        sec: boot_unix_time(),
        nsec: 0,
    };
    publish(&mut TIMEKEEPING.lock(), Base::start(start, per_sec, wall));
    HZ.store(hz, Ordering::Relaxed);
    match source {
        TickSource::Pit => {
            let exact = pit::start_periodic(hz);
            pic::set_irq_enabled(0, true);
            crate::info!("clock: PIT tick at {hz} Hz (exactly {exact} Hz)");
        }
        TickSource::Hpet => {
            pic::set_irq_enabled(0, false);
            pit::stop();
            let started =
                arch::acpi::hpet(rsdp).and_then(|base| arch::hpet::start_periodic(base, hz));
            match started {
                Ok(rate) => crate::info!(
                    "clock: HPET tick at {hz} Hz (counter at {} MHz)",
                    rate / 1_000_000
                ),
                Err(why) => {
                    crate::warn!("clock: no HPET tick ({why}); the PIT ticks instead");
                    pit::start_periodic(hz);
                }
            }
            pic::set_irq_enabled(0, true);
        }
        TickSource::Apic => {
            pit::stop();
            pic::set_irq_enabled(0, false);
            let rate = apic::start_timer(hz);
            crate::info!(
                "clock: local APIC tick at {hz} Hz (timer input {} kHz)",
                rate / 1000
            );
        }
    }
    crate::info!("clock: TSC runs at {} MHz", tsc_per_sec() / 1_000_000);
}

/// Ticks since the clock started.
pub fn ticks() -> u64 {
    TICKS.load(Ordering::Relaxed)
}

/// Ticks per second.
pub fn hz() -> u32 {
    HZ.load(Ordering::Relaxed)
}

/// Waits of the TSC's calibration: how many of each kind, and how long.
const CALIBRATION_WAITS: usize = 10;
const SHORT_WAIT_US: u32 = 1000;
const LONG_WAIT_US: u32 = 3000;

/// The TSC's rate, timed against the PIT: the fewest cycles of ten waits
/// of 3 ms, less the fewest of ten of 1 ms, over 2 ms
/// (`kcore::time::tsc_rate`). One wait of 10 ms, as before, measured 5154
/// MHz for a 2600 MHz TSC when the host stopped the virtual CPU during it
/// (four CPU hogs on the host), and then every clock, sleep and timeout
/// of the boot ran at half speed.
fn calibrate_tsc() -> u64 {
    let timed = |micros: u32| {
        (0..CALIBRATION_WAITS).map(move |_| {
            let start = arch::rdtsc();
            pit::busy_wait_us(micros);
            arch::rdtsc() - start
        })
    };
    // The short waits are all taken before the long ones begin.
    kcore::time::tsc_rate(
        timed(SHORT_WAIT_US),
        u64::from(SHORT_WAIT_US),
        timed(LONG_WAIT_US),
        u64::from(LONG_WAIT_US),
    )
    .expect("the PIT's longer waits take longer")
}

pub fn tsc_per_sec() -> u64 {
    TSC_PER_SEC.load(Ordering::Relaxed)
}

/// Makes `base` the clock's state: the kernel's readers and every
/// process's vDSO see it from now on. The caller holds `TIMEKEEPING`
/// (`state`), so the page has one writer.
fn publish(state: &mut Base, base: Base) {
    *state = base;
    let page = crate::vdso::clock_page().expect("vdso::init runs before the clock starts");
    page.publish(&base);
}

/// Clock `clock` now. Before the clock starts: the time since boot is 0,
/// and the wall clock is the RTC's (the ramfs stamps its first files'
/// times before then).
pub fn now(clock: Clock) -> Time {
    let base = published().read();
    if !base.user_tsc {
        return match clock {
            Clock::Realtime | Clock::RealtimeCoarse => Time {
                sec: boot_unix_time(),
                nsec: 0,
            },
            Clock::Monotonic | Clock::MonotonicCoarse => Time::default(),
        };
    }
    base.now(clock, arch::rdtsc())
}

/// Nanoseconds since the clock was calibrated, from the TSC; 0 before
/// that.
pub fn nanos_since_boot() -> u64 {
    now(Clock::Monotonic).nanos()
}

/// The Unix time at boot, read from the RTC the first time it is asked.
static BOOT_UNIX_TIME: spin::Once<u64> = spin::Once::new();

fn boot_unix_time() -> u64 {
    *BOOT_UNIX_TIME.call_once(arch::rtc::unix_time)
}

/// Nanoseconds since the Unix epoch (CLOCK_REALTIME, file times).
pub fn realtime_nanos() -> u64 {
    now(Clock::Realtime).nanos()
}

/// Sets the wall clock (clock_settime, settimeofday); the time since boot
/// does not move. EINVAL for a time before the time since boot, as Linux
/// refuses one, or nanoseconds past a second.
pub fn set_realtime(wall: Time) -> Result<(), abi::Errno> {
    let mut state = TIMEKEEPING.lock();
    if !state.user_tsc {
        return Err(abi::Errno::EINVAL); // (no process runs before the clock)
    }
    let base = state
        .set_wall(arch::rdtsc(), wall)
        .ok_or(abi::Errno::EINVAL)?;
    publish(&mut state, base);
    Ok(())
}

/// The boot CPU's tick: the clock's state moves on to now.
fn advance() {
    let mut state = TIMEKEEPING.lock();
    let base = state.advance(arch::rdtsc());
    publish(&mut state, base);
}

/// The timer interrupt, from whichever source ticks, on any CPU. The boot
/// CPU's ticks are the clock's (`ticks`); every CPU's tick samples the
/// kernel when it profiles itself (kprof.rs) and charges the thread it
/// interrupted.
pub fn on_timer_interrupt(tf: &mut TrapFrame) {
    if tf.vector == arch::trap::APIC_TIMER {
        apic::end_of_interrupt();
    } else {
        pic::end_of_interrupt(arch::trap::IRQ_PIT);
    }
    let keeps_time = arch::percpu::this_cpu().index() == 0;
    if keeps_time {
        TICKS.fetch_add(1, Ordering::Relaxed);
        advance();
    }
    crate::kprof::on_tick(tf.rip, tf.is_from_user());
    crate::proc::on_tick(tf, keeps_time);
}

/// Halts this CPU until an interrupt: called by an idle CPU with
/// interrupts off, returns with them off.
///
/// A CPU other than the boot CPU (which keeps time) stops its tick while
/// it halts, as Linux's idle CPUs do (NO_HZ_IDLE): nothing on it needs one,
/// and a thread made runnable for it comes with the wake IPI. Under
/// emulation this matters more than on hardware: every tick of an idle
/// virtual CPU takes host time, and the process table's lock, from the
/// CPUs that have work. The ticks it would have counted idle are counted
/// when it wakes, from the TSC.
pub fn idle_halt() {
    use x86_64::instructions::interrupts;
    if arch::percpu::this_cpu().index() == 0 {
        interrupts::enable_and_hlt();
        interrupts::disable();
        return;
    }
    apic::stop_timer();
    let asleep = arch::rdtsc();
    interrupts::enable_and_hlt();
    interrupts::disable();
    apic::restart_timer();
    let per_tick = (tsc_per_sec() / u64::from(hz().max(1))).max(1);
    // The tick boundaries passed while halted.
    let missed = arch::rdtsc() / per_tick - asleep / per_tick;
    crate::proc::count_idle_ticks(missed);
}

/// `cycles` of the TSC in nanoseconds, by the calibration (for reports:
/// /proc/lock_stat's holds, kgmon's interrupts-off times).
pub fn tsc_to_ns(cycles: u64) -> u64 {
    (u128::from(cycles) * 1_000_000_000 / u128::from(tsc_per_sec().max(1))) as u64
}
