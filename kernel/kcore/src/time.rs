//! Calendar arithmetic for the RTC, the TSC's rate from timed rounds, and
//! the earliest of many deadlines, so a clock tick need not look at them all.

use core::sync::atomic::{AtomicU64, Ordering};

/// The earliest of a set of deadlines (nanoseconds since boot), kept so
/// that the clock tick walks the set only when one may have passed: with a
/// thousand processes asleep, walking them all on every tick took most of
/// the machine's time. Whoever sets a deadline `lower`s this; the tick asks
/// `due`, which, when true, forgets the earliest, and the walk that follows
/// `lower`s it again with every deadline still in the future. It may be
/// earlier than any deadline (one was cancelled, or went later): that
/// costs a walk that finds nothing, never a deadline missed. Callers keep
/// setters and the walk apart with a lock of their own (the atomic only
/// lets the tick's first look go without it).
pub struct Earliest(AtomicU64);

impl Earliest {
    /// No deadline.
    pub const fn new() -> Earliest {
        Earliest(AtomicU64::new(u64::MAX))
    }

    /// A deadline at `at` was set.
    pub fn lower(&self, at: u64) {
        self.0.fetch_min(at, Ordering::Relaxed);
    }

    /// Whether a deadline may have passed at `now`; if so the earliest is
    /// forgotten, and the caller must walk every deadline, `lower`ing this
    /// with each one left.
    pub fn due(&self, now: u64) -> bool {
        if now < self.0.load(Ordering::Relaxed) {
            return false;
        }
        self.0.store(u64::MAX, Ordering::Relaxed);
        true
    }
}

impl Default for Earliest {
    fn default() -> Self {
        Earliest::new()
    }
}

/// The TSC's rate in cycles per second from timed waits: `short`, the
/// cycles each of several waits of `short_us` microseconds took, and
/// `long`, of waits of `long_us`. A host that stops a virtual CPU in the
/// middle of a wait makes it longer (the TSC runs on while the wait's end
/// goes unseen), never shorter, so the fewest cycles of each kind are the
/// ones nothing disturbed; their difference leaves out what every wait
/// spends besides waiting (programming the timer). None without waits, or
/// if the long ones were not longer.
pub fn tsc_rate(
    short: impl IntoIterator<Item = u64>,
    short_us: u64,
    long: impl IntoIterator<Item = u64>,
    long_us: u64,
) -> Option<u64> {
    let (short, long) = (short.into_iter().min()?, long.into_iter().min()?);
    let cycles = long.checked_sub(short).filter(|&c| c > 0)?;
    let micros = long_us.checked_sub(short_us).filter(|&m| m > 0)?;
    Some(cycles * 1_000_000 / micros)
}

/// Days from 1970-01-01 to the given date (proleptic Gregorian), by Howard
/// Hinnant's `days_from_civil`.
pub fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_is_due_once_its_deadline_passes() {
        let e = Earliest::new();
        assert!(!e.due(u64::MAX - 1), "no deadline: never due");
        e.lower(500);
        e.lower(900);
        assert!(!e.due(499));
        assert!(e.due(500));
        // The walk found 900 left.
        e.lower(900);
        assert!(!e.due(899));
        assert!(e.due(1000));
        assert!(!e.due(1000), "forgotten until lowered again");
    }

    #[test]
    fn a_stopped_wait_does_not_count() {
        // 2.6 GHz, and 20,000 cycles of setting up each wait; some waits
        // the host stopped for a while.
        let short = [2_620_400, 5_200_000, 2_620_000, 9_000_000];
        let long = [7_820_000, 7_820_300, 15_000_000];
        assert_eq!(tsc_rate(short, 1000, long, 3000), Some(2_600_000_000));
        assert_eq!(tsc_rate([], 1000, long, 3000), None);
        assert_eq!(tsc_rate(long, 1000, short, 3000), None);
    }

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 11, 22), 20_779);
        assert_eq!(
            days_from_civil(2024, 2, 29) + 1,
            days_from_civil(2024, 3, 1)
        );
    }
}
