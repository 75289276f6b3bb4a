//! Record locks (fcntl `F_GETLK`, `F_SETLK`, `F_SETLKW` and their
//! open-file-description forms): the ranges of one file, who holds them,
//! what conflicts, and when waiting would deadlock.
//!
//! A lock covers the bytes `[start, end)` of a file (`end` may be
//! `u64::MAX`: "to the end, however far the file grows") for reading
//! (shared) or writing (exclusive). Two locks conflict when their owners
//! differ, their ranges overlap and one is for writing. An owner's own
//! locks never conflict: a new lock replaces whatever the owner held over
//! its range, cutting older locks at its edges and merging with neighbours
//! of the same kind, so unlocking the middle of a lock leaves two.
//!
//! Owners are of two kinds, as on Linux: a *process* (POSIX locks: every
//! descriptor of the process shares them, and closing any descriptor of the
//! file releases them all, a trap POSIX is known for) or an *open file
//! description* (OFD locks: released when the last descriptor sharing that
//! description is closed).
//!
//! A process that would wait for a lock held by a process that is itself
//! waiting (directly or down a chain) for a lock the first one holds would
//! wait forever: `F_SETLKW` answers EDEADLK instead (`would_deadlock`), as
//! Linux's `posix_locks_deadlock` does for POSIX locks.

use abi::Errno;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Who holds a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// A POSIX lock's process.
    Process(u32),
    /// An OFD lock's open file description (the kernel's id for it).
    Description(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lock {
    pub owner: Owner,
    pub kind: Kind,
    pub start: u64,
    pub end: u64,
}

/// `struct flock`'s `l_start` (made absolute by the caller from
/// `l_whence`) and `l_len` as a range: a positive length counts forward,
/// 0 means to the end of any file, a negative one counts back from `start`.
/// A range that starts before byte 0 is EINVAL, one past the largest
/// offset EOVERFLOW (Linux's `flock_to_posix_lock`).
pub fn range(start: i64, len: i64) -> Result<(u64, u64), Errno> {
    if start < 0 {
        return Err(Errno::EINVAL);
    }
    match len {
        0 => Ok((start as u64, u64::MAX)),
        len if len > 0 => {
            let end = start.checked_add(len).ok_or(Errno::EOVERFLOW)?;
            Ok((start as u64, end as u64))
        }
        len => {
            let first = start
                .checked_add(len)
                .filter(|&s| s >= 0)
                .ok_or(Errno::EINVAL)?;
            Ok((first as u64, start as u64))
        }
    }
}

/// The locks of one file.
#[derive(Clone, Debug, Default)]
pub struct FileLocks {
    /// Never two of one owner overlapping or touching with the same kind.
    locks: Vec<Lock>,
}

impl FileLocks {
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty()
    }

    /// The locks, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Lock> {
        self.locks.iter()
    }

    /// The lock of another owner that keeps `owner` from taking `kind`
    /// over `[start, end)` and starts first (F_GETLK's answer: Linux keeps
    /// an owner's locks in the order of their starts and answers the first
    /// that conflicts, so a holder of a read lock at 5 and a write lock at
    /// 10 is reported by its lock at 5, whichever was taken first).
    pub fn conflict(&self, owner: Owner, kind: Kind, start: u64, end: u64) -> Option<Lock> {
        self.locks
            .iter()
            .copied()
            .filter(|l| {
                l.owner != owner
                    && l.start < end
                    && start < l.end
                    && (kind == Kind::Write || l.kind == Kind::Write)
            })
            .min_by_key(|l| l.start)
    }

    /// Gives `owner` a lock of `kind` over `[start, end)`, or none
    /// (`None`: unlock), replacing what it held there. The caller checked
    /// `conflict` first.
    pub fn set(&mut self, owner: Owner, kind: Option<Kind>, start: u64, end: u64) {
        let mut kept = Vec::with_capacity(self.locks.len() + 2);
        for l in self.locks.drain(..) {
            if l.owner != owner || l.end <= start || end <= l.start {
                kept.push(l);
                continue;
            }
            // The parts of the old lock outside the new range stay.
            if l.start < start {
                kept.push(Lock { end: start, ..l });
            }
            if end < l.end {
                kept.push(Lock { start: end, ..l });
            }
        }
        self.locks = kept;
        if let Some(kind) = kind {
            let (mut start, mut end) = (start, end);
            // Merge with the owner's touching locks of the same kind.
            self.locks.retain(|l| {
                let touches =
                    l.owner == owner && l.kind == kind && l.start <= end && start <= l.end;
                if touches {
                    start = start.min(l.start);
                    end = end.max(l.end);
                }
                !touches
            });
            self.locks.push(Lock {
                owner,
                kind,
                start,
                end,
            });
        }
    }

    /// Drops every lock of `owner`; whether it held any.
    pub fn release(&mut self, owner: Owner) -> bool {
        let before = self.locks.len();
        self.locks.retain(|l| l.owner != owner);
        self.locks.len() != before
    }
}

/// Whether `waiter` waiting for `holder` would close a circle: `holder`
/// waits (through `waits_for`, each blocked owner to the owner of the lock
/// it waits for) for `waiter`.
pub fn would_deadlock(waiter: Owner, holder: Owner, waits_for: &BTreeMap<Owner, Owner>) -> bool {
    let mut at = holder;
    // Each step moves to a different blocked owner; more steps than there
    // are waiters means a circle that does not include `waiter`.
    for _ in 0..=waits_for.len() {
        if at == waiter {
            return true;
        }
        match waits_for.get(&at) {
            Some(&next) => at = next,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Owner = Owner::Process(1);
    const B: Owner = Owner::Process(2);

    fn ranges(f: &FileLocks, owner: Owner) -> Vec<(u64, u64, Kind)> {
        let mut v: Vec<_> = f
            .iter()
            .filter(|l| l.owner == owner)
            .map(|l| (l.start, l.end, l.kind))
            .collect();
        v.sort_by_key(|r| r.0);
        v
    }

    #[test]
    fn getlk_reports_the_conflict_that_starts_first() {
        let mut f = FileLocks::default();
        let holder = Owner::Process(1);
        f.set(holder, Some(Kind::Write), 10, 15);
        f.set(holder, Some(Kind::Read), 5, 10);
        let asked = f
            .conflict(Owner::Process(2), Kind::Write, 0, u64::MAX)
            .unwrap();
        assert_eq!((asked.kind, asked.start, asked.end), (Kind::Read, 5, 10));
    }

    #[test]
    fn ranges_from_start_and_length() {
        assert_eq!(range(10, 5), Ok((10, 15)));
        assert_eq!(range(10, 0), Ok((10, u64::MAX)));
        assert_eq!(range(10, -4), Ok((6, 10)));
        assert_eq!(range(10, -11), Err(Errno::EINVAL));
        assert_eq!(range(-1, 5), Err(Errno::EINVAL));
        assert_eq!(range(i64::MAX, 1), Err(Errno::EOVERFLOW));
    }

    #[test]
    fn readers_share_and_a_writer_excludes() {
        let mut f = FileLocks::default();
        f.set(A, Some(Kind::Read), 0, 100);
        assert_eq!(f.conflict(B, Kind::Read, 50, 60), None);
        assert_eq!(
            f.conflict(B, Kind::Write, 99, 200).map(|l| l.owner),
            Some(A)
        );
        assert_eq!(f.conflict(B, Kind::Write, 100, 200), None);
        assert_eq!(
            f.conflict(A, Kind::Write, 0, 100),
            None,
            "own locks never conflict"
        );
    }

    #[test]
    fn unlocking_the_middle_leaves_two_and_relocking_merges() {
        let mut f = FileLocks::default();
        f.set(A, Some(Kind::Write), 0, 100);
        f.set(A, None, 40, 60);
        assert_eq!(
            ranges(&f, A),
            [(0, 40, Kind::Write), (60, 100, Kind::Write)]
        );
        f.set(A, Some(Kind::Write), 40, 60);
        assert_eq!(ranges(&f, A), [(0, 100, Kind::Write)]);
    }

    #[test]
    fn a_new_kind_replaces_the_old_over_its_range() {
        let mut f = FileLocks::default();
        f.set(A, Some(Kind::Write), 0, 100);
        f.set(A, Some(Kind::Read), 20, 30);
        assert_eq!(
            ranges(&f, A),
            [
                (0, 20, Kind::Write),
                (20, 30, Kind::Read),
                (30, 100, Kind::Write)
            ]
        );
        assert_eq!(f.conflict(B, Kind::Read, 20, 30), None);
        assert!(f.conflict(B, Kind::Read, 10, 25).is_some());
    }

    #[test]
    fn release_drops_only_the_owners_locks() {
        let mut f = FileLocks::default();
        f.set(A, Some(Kind::Read), 0, 10);
        f.set(B, Some(Kind::Read), 5, 20);
        assert!(f.release(A));
        assert!(!f.release(A));
        assert_eq!(ranges(&f, B), [(5, 20, Kind::Read)]);
    }

    #[test]
    fn a_circle_of_waiters_is_a_deadlock() {
        let c = Owner::Process(3);
        let mut waits = BTreeMap::new();
        assert!(!would_deadlock(A, B, &waits));
        waits.insert(B, c);
        assert!(!would_deadlock(A, B, &waits));
        waits.insert(c, A);
        assert!(would_deadlock(A, B, &waits), "A -> B -> C -> A");
        // A circle that does not pass through the waiter ends the walk.
        let mut other = BTreeMap::new();
        other.insert(B, c);
        other.insert(c, B);
        assert!(!would_deadlock(A, B, &other));
    }
}
