//! What the kernel and its vDSO share: the clock page, its sequence lock,
//! and the one piece of arithmetic that turns a TSC reading into a time.
//!
//! `clock_gettime` is the call programs make most often (a profiler, a
//! logger, every timeout), and the answer is one multiplication away from
//! a counter user code may read itself (RDTSC). So, as Linux does, the
//! kernel maps into every process a small shared object, the vDSO
//! (`kernel/vdso`), whose `clock_gettime` reads the TSC and the clock's
//! last state from a page the kernel shares read-only with every process,
//! the clock page, and makes no system call.
//!
//! **Timekeeping.** The clock's state (`Base`) is where it stood at the
//! last tick: the TSC then (`cycle_last`), the time since boot then, kept
//! in nanoseconds scaled up by 2^`SHIFT` so the fraction of a nanosecond
//! each tick adds is not lost, and how far the wall clock is ahead of it.
//! A reading `tsc` is `(tsc - cycle_last) * mult >> SHIFT` nanoseconds
//! past that. The tick moves the state forward by the same product
//! (`advance`), so a reading taken just before a tick and one taken just
//! after can never step backwards; the kernel's own clock reads the same
//! state with the same function (`Base::now`), so the vDSO and the system
//! call agree to the nanosecond.
//!
//! **The sequence lock.** One writer (the tick, or `clock_settime`, under
//! the kernel's timekeeping lock) and any number of readers that must
//! never wait for it and cannot take a lock (the vDSO runs in user mode,
//! the page is read-only there). The writer makes the count odd, writes,
//! and makes it even again. A reader reads the count, the fields, then the
//! count again: if it was odd, or changed, a write overlapped the reading
//! and the reader tries again. Every field is an atomic, so a torn read is
//! merely retried, never undefined.
//!
//! The vDSO compiles this file itself (`#[path]`): the rest of kcore
//! brings `alloc`, and a vDSO has no allocator. So nothing here may use
//! more than `core` and `abi`.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use abi::types::{
    CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME,
    CLOCK_REALTIME_COARSE, CLOCK_TAI,
};

pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// The latest wall clock settimeofday and clock_settime accept: Linux's
/// TIME_SETTOD_SEC_MAX, the seconds a signed 64-bit count of nanoseconds
/// holds (KTIME_SEC_MAX) less 30 years of uptime, so that no clock the
/// kernel keeps in nanoseconds can overflow while the machine runs.
pub const SETTOD_SEC_MAX: u64 = i64::MAX as u64 / NSEC_PER_SEC - 30 * 31_536_000;

/// The scale of the TSC's rate: a reading is `delta * mult >> SHIFT`
/// nanoseconds. 32 bits keep the rate's rounding under one part in 4e9
/// (a quarter of a millisecond a month) for any TSC from 1 MHz up.
pub const SHIFT: u32 = 32;

/// The selector of the descriptor whose limit is the CPU's number, one in
/// every CPU's GDT (`arch/gdt.rs`): the vDSO's `getcpu` asks it with LSL,
/// an unprivileged instruction, as Linux's vDSO does. Index 7, ring 3.
pub const CPU_NUMBER_SELECTOR: u16 = (7 << 3) | 3;

/// The clocks the vDSO answers. The others (the CPU-time clocks) need the
/// kernel: the vDSO passes them to the system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Since boot: MONOTONIC, MONOTONIC_RAW (no rate correction here) and
    /// BOOTTIME (nothing suspends).
    Monotonic,
    /// The wall clock: REALTIME, and TAI (no leap-second table here).
    Realtime,
    /// The same, as of the last tick, without reading the TSC.
    MonotonicCoarse,
    RealtimeCoarse,
}

impl Clock {
    pub fn from_id(id: u32) -> Option<Clock> {
        match id {
            CLOCK_MONOTONIC | CLOCK_MONOTONIC_RAW | CLOCK_BOOTTIME => Some(Clock::Monotonic),
            CLOCK_REALTIME | CLOCK_TAI => Some(Clock::Realtime),
            CLOCK_MONOTONIC_COARSE => Some(Clock::MonotonicCoarse),
            CLOCK_REALTIME_COARSE => Some(Clock::RealtimeCoarse),
            _ => None,
        }
    }
}

/// A time: seconds and nanoseconds (below `NSEC_PER_SEC`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Time {
    pub sec: u64,
    pub nsec: u64,
}

impl Time {
    pub fn from_nanos(nanos: u64) -> Time {
        Time {
            sec: nanos / NSEC_PER_SEC,
            nsec: nanos % NSEC_PER_SEC,
        }
    }

    /// Nanoseconds (saturating: 584 years).
    pub fn nanos(self) -> u64 {
        self.sec
            .saturating_mul(NSEC_PER_SEC)
            .saturating_add(self.nsec)
    }
}

/// The clock's state at the last tick (see the file's comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Base {
    /// Whether user code may read the TSC and compute the time itself;
    /// false until the kernel has calibrated it, and the vDSO then makes
    /// the system call.
    pub user_tsc: bool,
    /// The TSC at the last tick.
    pub cycle_last: u64,
    /// Nanoseconds per cycle, times 2^SHIFT.
    pub mult: u64,
    /// The time since boot at `cycle_last`: whole seconds, and the
    /// nanoseconds past them times 2^SHIFT.
    pub mono_sec: u64,
    pub mono_nsec_scaled: u64,
    /// How far the wall clock is ahead of the time since boot: the Unix
    /// time at boot, moved by every `clock_settime`.
    pub wall_offset: Time,
}

impl Base {
    /// The clock starting at `tsc`, with the TSC running at `tsc_per_sec`
    /// and the wall clock at `wall` (the Unix time then).
    pub fn start(tsc: u64, tsc_per_sec: u64, wall: Time) -> Base {
        let mult = ((u128::from(NSEC_PER_SEC) << SHIFT) / u128::from(tsc_per_sec.max(1))) as u64;
        Base {
            user_tsc: true,
            cycle_last: tsc,
            mult,
            mono_sec: 0,
            mono_nsec_scaled: 0,
            wall_offset: wall,
        }
    }

    /// The state at a later tick, `tsc`: the time since boot moved on by
    /// exactly what `now` would have added, so no reading steps back. A
    /// `tsc` behind `cycle_last` (read on a CPU whose TSC lags by a few
    /// cycles) moves nothing.
    pub fn advance(&self, tsc: u64) -> Base {
        let delta = tsc.saturating_sub(self.cycle_last);
        let scaled = u128::from(self.mono_nsec_scaled) + u128::from(delta) * u128::from(self.mult);
        let second = u128::from(NSEC_PER_SEC) << SHIFT;
        Base {
            cycle_last: self.cycle_last.max(tsc),
            mono_sec: self.mono_sec + (scaled / second) as u64,
            mono_nsec_scaled: (scaled % second) as u64,
            ..*self
        }
    }

    /// The time since boot at TSC reading `tsc`. No division but by a
    /// constant, which the compiler makes a multiplication: this runs in
    /// the vDSO, which has no library to call.
    pub fn monotonic(&self, tsc: u64) -> Time {
        let delta = tsc.saturating_sub(self.cycle_last);
        let scaled = u128::from(self.mono_nsec_scaled) + u128::from(delta) * u128::from(self.mult);
        let nanos = (scaled >> SHIFT) as u64;
        Time {
            sec: self.mono_sec + nanos / NSEC_PER_SEC,
            nsec: nanos % NSEC_PER_SEC,
        }
    }

    /// Clock `clock` at TSC reading `tsc`.
    pub fn now(&self, clock: Clock, tsc: u64) -> Time {
        match clock {
            Clock::Monotonic => self.monotonic(tsc),
            Clock::Realtime => add(self.monotonic(tsc), self.wall_offset),
            Clock::MonotonicCoarse => self.monotonic(self.cycle_last),
            Clock::RealtimeCoarse => add(self.monotonic(self.cycle_last), self.wall_offset),
        }
    }

    /// The state with the wall clock set to `wall` at TSC reading `tsc`.
    /// None for a time before the time since boot (Linux's settimeofday
    /// refuses one too: EINVAL), at or past `SETTOD_SEC_MAX`, or with
    /// `nsec` past a second.
    pub fn set_wall(&self, tsc: u64, wall: Time) -> Option<Base> {
        if wall.nsec >= NSEC_PER_SEC || wall.sec >= SETTOD_SEC_MAX {
            return None;
        }
        let since_boot = self.monotonic(tsc);
        if wall < since_boot {
            return None;
        }
        let wall_offset = if wall.nsec >= since_boot.nsec {
            Time {
                sec: wall.sec - since_boot.sec,
                nsec: wall.nsec - since_boot.nsec,
            }
        } else {
            Time {
                sec: wall.sec - since_boot.sec - 1,
                nsec: wall.nsec + NSEC_PER_SEC - since_boot.nsec,
            }
        };
        Some(Base {
            wall_offset,
            ..*self
        })
    }
}

fn add(a: Time, b: Time) -> Time {
    let nsec = a.nsec + b.nsec;
    if nsec >= NSEC_PER_SEC {
        Time {
            sec: a.sec + b.sec + 1,
            nsec: nsec - NSEC_PER_SEC,
        }
    } else {
        Time {
            sec: a.sec + b.sec,
            nsec,
        }
    }
}

/// The clock page: a `Base` behind a sequence lock, in the page the
/// kernel shares with every process. The kernel reads it where it keeps
/// it, the vDSO where exec mapped it, the page before its own image: one
/// page for both, so they can never see different states.
/// All zeros (what a fresh page holds) is a valid page whose `Base` says
/// "ask the kernel".
#[repr(C)]
pub struct ClockPage {
    seq: AtomicU32,
    user_tsc: AtomicU32,
    cycle_last: AtomicU64,
    mult: AtomicU64,
    mono_sec: AtomicU64,
    mono_nsec_scaled: AtomicU64,
    wall_sec: AtomicU64,
    wall_nsec: AtomicU64,
}

impl ClockPage {
    pub const fn new() -> ClockPage {
        ClockPage {
            seq: AtomicU32::new(0),
            user_tsc: AtomicU32::new(0),
            cycle_last: AtomicU64::new(0),
            mult: AtomicU64::new(0),
            mono_sec: AtomicU64::new(0),
            mono_nsec_scaled: AtomicU64::new(0),
            wall_sec: AtomicU64::new(0),
            wall_nsec: AtomicU64::new(0),
        }
    }

    /// The `Base` last published. Never waits for a lock: a read that a
    /// `publish` overlapped is taken again.
    pub fn read(&self) -> Base {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            if before & 1 == 1 {
                core::hint::spin_loop();
                continue;
            }
            let base = Base {
                user_tsc: self.user_tsc.load(Ordering::Relaxed) != 0,
                cycle_last: self.cycle_last.load(Ordering::Relaxed),
                mult: self.mult.load(Ordering::Relaxed),
                mono_sec: self.mono_sec.load(Ordering::Relaxed),
                mono_nsec_scaled: self.mono_nsec_scaled.load(Ordering::Relaxed),
                wall_offset: Time {
                    sec: self.wall_sec.load(Ordering::Relaxed),
                    nsec: self.wall_nsec.load(Ordering::Relaxed),
                },
            };
            // The fields' loads happen before the second look at the
            // count (Linux's smp_rmb in read_seqcount_retry).
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == before {
                return base;
            }
        }
    }

    /// Publishes `base`. The caller must be the only writer (the kernel
    /// holds its timekeeping lock): two writers at once would leave the
    /// count even in the middle of a write.
    pub fn publish(&self, base: &Base) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        // The odd count is seen before any new field (smp_wmb).
        fence(Ordering::Release);
        self.user_tsc
            .store(u32::from(base.user_tsc), Ordering::Relaxed);
        self.cycle_last.store(base.cycle_last, Ordering::Relaxed);
        self.mult.store(base.mult, Ordering::Relaxed);
        self.mono_sec.store(base.mono_sec, Ordering::Relaxed);
        self.mono_nsec_scaled
            .store(base.mono_nsec_scaled, Ordering::Relaxed);
        self.wall_sec.store(base.wall_offset.sec, Ordering::Relaxed);
        self.wall_nsec
            .store(base.wall_offset.nsec, Ordering::Relaxed);
        // Every field is seen before the even count.
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }
}

impl Default for ClockPage {
    fn default() -> Self {
        ClockPage::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GHZ_2_6: u64 = 2_600_000_000;

    fn exact_nanos(cycles: u64, per_sec: u64) -> u64 {
        (u128::from(cycles) * u128::from(NSEC_PER_SEC) / u128::from(per_sec)) as u64
    }

    #[test]
    fn a_reading_is_the_cycles_over_the_rate() {
        let base = Base::start(1000, GHZ_2_6, Time::default());
        for cycles in [0, 1, 2_600, 2_600_000_000, 7 * 2_600_000_000 + 13, 1 << 50] {
            let got = base.monotonic(1000 + cycles).nanos();
            let want = exact_nanos(cycles, GHZ_2_6);
            // The rate's rounding: under one part in 2^32.
            assert!(
                want - got <= want / (1 << 31) + 1,
                "{cycles}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn ticks_never_step_a_reading_back_and_lose_nothing() {
        // A tick every 10 ms of a 2.6 GHz TSC, with some ticks late.
        let start = Base::start(0, GHZ_2_6, Time::default());
        let mut base = start;
        let mut tsc = 0u64;
        let mut last = Time::default();
        for i in 0..2000u64 {
            let step = 26_000_000 + (i % 7) * 1_234_567;
            for probe in [tsc, tsc + 1, tsc + step / 2, tsc + step - 1] {
                let now = base.monotonic(probe);
                assert!(now >= last, "tick {i}: {now:?} before {last:?}");
                last = now;
            }
            tsc += step;
            let before = base.monotonic(tsc);
            base = base.advance(tsc);
            assert_eq!(base.monotonic(tsc), before, "tick {i}");
        }
        // Many ticks add up to what one long reading says.
        assert_eq!(base.monotonic(tsc), start.monotonic(tsc));
    }

    #[test]
    fn a_tsc_behind_the_last_tick_reads_the_tick() {
        let base = Base::start(5000, GHZ_2_6, Time::default()).advance(9000);
        assert_eq!(base.monotonic(8000), base.monotonic(9000));
        assert_eq!(base.advance(8000), base);
    }

    #[test]
    fn the_wall_clock_is_the_boot_time_plus_the_time_since_boot() {
        let boot = Time {
            sec: 1_764_300_000,
            nsec: 0,
        };
        let base = Base::start(0, 1_000_000_000, boot).advance(2_500_000_000);
        let real = base.now(Clock::Realtime, 3_700_000_000);
        assert_eq!((real.sec, real.nsec / 1000), (boot.sec + 3, 700_000));
        // Coarse clocks stop at the tick.
        let coarse = base.now(Clock::RealtimeCoarse, 3_700_000_000);
        assert_eq!((coarse.sec, coarse.nsec / 1000), (boot.sec + 2, 500_000));
        let mono = base.now(Clock::MonotonicCoarse, 3_700_000_000);
        assert_eq!((mono.sec, mono.nsec / 1000), (2, 500_000));
    }

    #[test]
    fn setting_the_wall_clock_moves_only_the_wall_clock() {
        let base = Base::start(0, 1_000_000_000, Time { sec: 100, nsec: 0 });
        let tsc = 1_999_999_999 + 1; // 2 s since boot
        let wanted = Time { sec: 50, nsec: 300 };
        let set = base.set_wall(tsc, wanted).unwrap();
        let real = set.now(Clock::Realtime, tsc);
        assert!(real.nanos().abs_diff(wanted.nanos()) <= 1, "{real:?}");
        assert_eq!(set.monotonic(tsc), base.monotonic(tsc));
        // Not before the time since boot, and no nanoseconds past a second.
        assert_eq!(base.set_wall(tsc, Time { sec: 1, nsec: 0 }), None);
        let bad = Time {
            sec: 50,
            nsec: NSEC_PER_SEC,
        };
        assert_eq!(base.set_wall(tsc, bad), None);
        // Nor so late that a clock in nanoseconds could overflow.
        let late = Time {
            sec: SETTOD_SEC_MAX,
            nsec: 0,
        };
        assert_eq!(base.set_wall(tsc, late), None);
        assert_eq!(SETTOD_SEC_MAX, 8_277_292_036);
        let latest = Time {
            sec: SETTOD_SEC_MAX - 1,
            nsec: 999_999_999,
        };
        assert!(base.set_wall(tsc, latest).is_some());
        // The earliest allowed: the wall clock equals the time since boot.
        let equal = base.set_wall(tsc, base.monotonic(tsc)).unwrap();
        assert_eq!(equal.wall_offset, Time::default());
    }

    #[test]
    fn clock_ids_are_linuxs() {
        assert_eq!(Clock::from_id(CLOCK_REALTIME), Some(Clock::Realtime));
        assert_eq!(Clock::from_id(CLOCK_BOOTTIME), Some(Clock::Monotonic));
        assert_eq!(
            Clock::from_id(CLOCK_MONOTONIC_COARSE),
            Some(Clock::MonotonicCoarse)
        );
        // The CPU-time clocks are the kernel's to answer.
        assert_eq!(Clock::from_id(2), None);
        assert_eq!(Clock::from_id(3), None);
        assert_eq!(Clock::from_id(99), None);
    }

    #[test]
    fn a_fresh_page_says_ask_the_kernel() {
        let page = ClockPage::new();
        assert!(!page.read().user_tsc);
    }

    /// One writer publishes states whose fields all say the same number
    /// while readers on other threads read: no reader ever sees a mix.
    #[test]
    fn readers_never_see_half_a_publish() {
        extern crate std;
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        const READERS: usize = 3;
        const READS_EACH: u64 = 10_000;
        let page = Arc::new(ClockPage::new());
        let stop = Arc::new(AtomicBool::new(false));
        // Readers that have read enough: the writer goes on until all have,
        // however the host schedules the threads.
        let done = Arc::new(AtomicU32::new(0));
        let same = |n: u64| Base {
            user_tsc: true,
            cycle_last: n,
            mult: n,
            mono_sec: n,
            mono_nsec_scaled: n,
            wall_offset: Time { sec: n, nsec: n },
        };
        page.publish(&same(0));
        let readers: std::vec::Vec<_> = (0..READERS)
            .map(|_| {
                let (page, stop, done) = (page.clone(), stop.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut reads = 0u64;
                    let mut last = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let base = page.read();
                        assert_eq!(base, same(base.cycle_last));
                        assert!(base.cycle_last >= last);
                        last = base.cycle_last;
                        reads += 1;
                        if reads == READS_EACH {
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        let mut n = 1;
        while n < 100_000 || done.load(Ordering::Relaxed) < READERS as u32 {
            page.publish(&same(n));
            n += 1;
        }
        stop.store(true, Ordering::Relaxed);
        for reader in readers {
            reader.join().unwrap();
        }
    }
}
