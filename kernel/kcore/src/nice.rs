//! Nice values and what they buy: the arithmetic of setpriority(2) and of
//! the scheduler's weighted time slices.
//!
//! A thread's nice runs from -20 (favoured) to 19 (kind to others), 0 by
//! default, inherited across fork and clone. Linux's CFS gives each nice a
//! weight (`sched_prio_to_weight`: 1024 at nice 0, each step about 1.25
//! times the next, so one nice step is about 10% of the CPU against a
//! neighbour) and shares the CPU in proportion. The round-robin scheduler
//! here gets the same proportion more simply: a thread's time slice is the
//! base slice scaled by its weight over nice 0's, so in one round a nice 10
//! spinner runs about a tenth as long as a nice 0 one. (A slice is at least
//! one tick, so with a base slice of few ticks the shares flatten.)

/// The lowest and highest nice.
pub const MIN: i32 = -20;
pub const MAX: i32 = 19;

/// Linux's weights (kernel/sched/core.c), nice -20 first.
const WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// The weight of `nice` (clamped to the range).
pub fn weight(nice: i32) -> u32 {
    WEIGHT[(nice.clamp(MIN, MAX) - MIN) as usize]
}

/// Ticks in the time slice of a thread at `nice`, when nice 0's is `base`:
/// in proportion to its weight, at least one.
pub fn slice_ticks(base: u32, nice: i32) -> u32 {
    let scaled = u64::from(base) * u64::from(weight(nice)) / u64::from(weight(0));
    u32::try_from(scaled).unwrap_or(u32::MAX).max(1)
}

/// A nice asked of setpriority, clamped to the range as Linux clamps it.
pub fn clamp(asked: i64) -> i32 {
    asked.clamp(i64::from(MIN), i64::from(MAX)) as i32
}

/// What the getpriority system call returns for `nice`: 20 - nice, so 1 to
/// 40 and never negative (the C library turns it back into a nice).
pub fn to_syscall(nice: i32) -> usize {
    (20 - nice.clamp(MIN, MAX)) as usize
}

/// Whether a caller may set `target`'s nice to `wanted`: raising it (being
/// kinder) is allowed to the target's owner, lowering it below where it is
/// needs privilege (CAP_SYS_NICE; here, root), as on Linux (which also
/// allows down to RLIMIT_NICE, 0 here). Err(EPERM) for a caller who may
/// not touch the target, Err(EACCES) for a lowering it may not make.
pub fn may_set(
    privileged: bool,
    owner_matches: bool,
    current: i32,
    wanted: i32,
) -> Result<(), abi::Errno> {
    if !privileged && !owner_matches {
        return Err(abi::Errno::EPERM);
    }
    if wanted < current && !privileged {
        return Err(abi::Errno::EACCES);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_follow_linux_weights() {
        assert_eq!(slice_ticks(10, 0), 10);
        // 10 * 110 / 1024: about a tenth, at least one tick.
        assert_eq!(slice_ticks(10, 10), 1);
        assert_eq!(slice_ticks(100, 10), 10);
        assert_eq!(slice_ticks(10, -20), 866);
        assert_eq!(slice_ticks(1, 19), 1);
        assert_eq!(weight(-100), weight(-20));
        assert_eq!(weight(100), weight(19));
    }

    #[test]
    fn the_call_counts_from_twenty() {
        assert_eq!(to_syscall(0), 20);
        assert_eq!(to_syscall(-20), 40);
        assert_eq!(to_syscall(19), 1);
        assert_eq!(clamp(100), 19);
        assert_eq!(clamp(-100), -20);
    }

    #[test]
    fn only_privilege_lowers_nice() {
        use abi::Errno;
        assert_eq!(may_set(false, true, 0, 10), Ok(()));
        assert_eq!(may_set(false, true, 10, 5), Err(Errno::EACCES));
        assert_eq!(may_set(false, false, 0, 10), Err(Errno::EPERM));
        assert_eq!(may_set(true, false, 10, -5), Ok(()));
    }
}
