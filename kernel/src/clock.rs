//! The clock: the periodic tick that drives time, scheduling and profiling.
//!
//! One of three sources ticks, chosen at boot (`tick=pit|apic|hpet`): the
//! PIT on IRQ 0, the local APIC timer, or the HPET's timer 0, which takes
//! over IRQ 0 (arch/hpet.rs). Either way every tick arrives at
//! `on_timer_interrupt`, which counts it and hands it on, so nothing above this
//! file knows which chip is ticking. The TSC, calibrated against the PIT at
//! boot, gives the finer time that `clock_gettime` and the benchmarks need.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kcore::bootopts::TickSource;

use crate::arch::{self, apic, pic, pit, trap::TrapFrame};

static TICKS: AtomicU64 = AtomicU64::new(0);
static HZ: AtomicU32 = AtomicU32::new(0);
/// 0 until `init` calibrates the TSC.
static TSC_PER_SEC: AtomicU64 = AtomicU64::new(0);
static TSC_AT_BOOT: AtomicU64 = AtomicU64::new(0);

/// Calibrates the TSC and starts the tick at `hz` from `source`; `rsdp`
/// leads to the HPET's table. An HPET that cannot tick leaves the PIT
/// ticking, with a warning.
pub fn init(hz: u32, source: TickSource, rsdp: Option<u64>) {
    let start = arch::rdtsc();
    TSC_PER_SEC.store(calibrate_tsc(), Ordering::Relaxed);
    TSC_AT_BOOT.store(start, Ordering::Relaxed);
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

/// Nanoseconds since the clock was calibrated, from the TSC; 0 before
/// that (the ramfs stamps its first files' times before the clock starts).
pub fn nanos_since_boot() -> u64 {
    let per_sec = tsc_per_sec();
    if per_sec == 0 {
        return 0;
    }
    let cycles = arch::rdtsc().saturating_sub(TSC_AT_BOOT.load(Ordering::Relaxed));
    (u128::from(cycles) * 1_000_000_000 / u128::from(per_sec)) as u64
}

/// The Unix time at boot, read from the RTC the first time it is asked.
static BOOT_UNIX_TIME: spin::Once<u64> = spin::Once::new();

/// Nanoseconds since the Unix epoch (CLOCK_REALTIME, file times).
pub fn realtime_nanos() -> u64 {
    let boot = *BOOT_UNIX_TIME.call_once(arch::rtc::unix_time);
    boot.saturating_mul(1_000_000_000)
        .saturating_add(nanos_since_boot())
}

/// The timer interrupt, from whichever source ticks, on any CPU. The boot
/// CPU's ticks are the clock's (`ticks`); every CPU's tick charges the
/// thread it interrupted.
pub fn on_timer_interrupt(tf: &mut TrapFrame) {
    if tf.vector == arch::trap::APIC_TIMER {
        apic::end_of_interrupt();
    } else {
        pic::end_of_interrupt(arch::trap::IRQ_PIT);
    }
    let keeps_time = arch::percpu::this_cpu().index() == 0;
    if keeps_time {
        TICKS.fetch_add(1, Ordering::Relaxed);
    }
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
