//! Record locks: fcntl's `F_GETLK`, `F_SETLK`, `F_SETLKW` (POSIX locks,
//! owned by the process) and `F_OFD_*` (owned by the open file
//! description), over the files of the ramfs; and flock(2)'s whole-file
//! locks, owned by the open file description.
//!
//! As on Linux, flock locks and record locks live apart: neither sees the
//! other (a file may be flock-locked by one description and record-locked
//! by another process at once). Each file has one `FileLocks` per `Space`;
//! a flock lock is a lock over the whole file, `[0, u64::MAX)`.
//!
//! The rules (ranges, conflicts, splitting and merging, deadlock) are
//! `kcore::flock`'s, host-tested; this file keeps every file's locks in
//! one table, by inode number, beside the "who waits for whom" map that
//! deadlock detection reads, and puts waiters to sleep. A waiter sleeps on
//! `Chan::FileLock(ino)` and looks again when any lock of that file goes
//! or weakens, and goes through the whole request again (deadlock check
//! included) when its range is free or another owner now blocks it; a
//! signal ends the wait (ERESTARTSYS: restarted under SA_RESTART, else
//! EINTR).
//!
//! Locks go away as Linux lets them go: a process's POSIX locks on a file
//! when it closes *any* descriptor of that file (`closed`) and all of them
//! when it exits (`release_process`); an open file description's locks,
//! OFD and flock, when its last descriptor closes (`OpenFile`'s drop). The table's lock
//! is taken with no other held, or inside the process table (an open file
//! dropped there), so it sits at level 3 of the order in sync.rs.

use abi::Errno;
use alloc::collections::BTreeMap;
use kcore::flock::{FileLocks, Kind, Lock, Owner, would_deadlock};

use crate::proc::sched::{self, Chan};
use crate::sync::{IrqLock, Rank};

/// Which of a file's two sets of locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Space {
    /// fcntl's record locks, POSIX and OFD, which see each other.
    Record,
    /// flock(2)'s.
    Whole,
}

struct Table {
    /// (Space, inode number) -> the file's locks (no entry: none).
    files: BTreeMap<(Space, u64), FileLocks>,
    /// A blocked owner -> the owner of the lock it waits for.
    waits_for: BTreeMap<Owner, Owner>,
}

static LOCKS: IrqLock<Table> = IrqLock::new(
    Rank::Service,
    Table {
        files: BTreeMap::new(),
        waits_for: BTreeMap::new(),
    },
);

/// F_GETLK: the first lock that keeps `owner` from taking `kind` over
/// `[start, end)` of file `ino`.
pub fn conflict(ino: u64, owner: Owner, kind: Kind, start: u64, end: u64) -> Option<Lock> {
    let table = LOCKS.lock();
    table
        .files
        .get(&(Space::Record, ino))?
        .conflict(owner, kind, start, end)
}

/// F_SETLK (`wait` false) and F_SETLKW: gives `owner` a lock of `kind`
/// (None: unlocks) over `[start, end)` of file `ino`. A conflict is EAGAIN
/// without `wait`; with it, the caller sleeps until the conflict is gone,
/// unless sleeping would close a circle of waiting processes (EDEADLK).
pub fn set(
    ino: u64,
    owner: Owner,
    kind: Option<Kind>,
    start: u64,
    end: u64,
    wait: bool,
) -> Result<(), Errno> {
    set_in((Space::Record, ino), owner, kind, start, end, wait)
}

/// flock(2): open file description `id` takes a lock of `kind` on the
/// whole of file `ino`, or lets its lock go (None). A conflict is EAGAIN
/// without `wait` (LOCK_NB); with it, the caller sleeps until the lock is
/// free or a signal comes (ERESTARTSYS).
///
/// A description that holds one kind and asks for the other lets go of
/// what it holds first, as Linux's `flock_lock_inode` does: a conversion
/// is not atomic, so one that fails (EAGAIN) or is interrupted leaves the
/// description with no lock, and a waiter may get in between.
pub fn flock(ino: u64, id: u64, kind: Option<Kind>, wait: bool) -> Result<(), Errno> {
    let key = (Space::Whole, ino);
    let owner = Owner::Description(id);
    let held = {
        let mut table = LOCKS.lock();
        let held = table
            .files
            .get(&key)
            .and_then(|file| file.iter().find(|l| l.owner == owner))
            .map(|l| l.kind);
        if held.is_some() && held != kind {
            let file = table.files.get_mut(&key).expect("it holds a lock there");
            file.set(owner, None, 0, u64::MAX);
            if file.is_empty() {
                table.files.remove(&key);
            }
        }
        held
    };
    if held.is_some() && held == kind {
        return Ok(());
    }
    if held.is_some() {
        sched::wakeup(Chan::FileLock(ino));
    }
    match kind {
        None => Ok(()),
        kind => set_in(key, owner, kind, 0, u64::MAX, wait),
    }
}

/// `set` in the locks `key` names.
fn set_in(
    key: (Space, u64),
    owner: Owner,
    kind: Option<Kind>,
    start: u64,
    end: u64,
    wait: bool,
) -> Result<(), Errno> {
    let ino = key.1;
    loop {
        let blocker = {
            let mut table = LOCKS.lock();
            let held = kind.and_then(|kind| {
                table
                    .files
                    .get(&key)
                    .and_then(|f| f.conflict(owner, kind, start, end))
            });
            let Some(holder) = held else {
                let file = table.files.entry(key).or_default();
                file.set(owner, kind, start, end);
                if file.is_empty() {
                    table.files.remove(&key);
                }
                drop(table);
                // An unlock or a weaker lock may let a waiter in.
                sched::wakeup(Chan::FileLock(ino));
                return Ok(());
            };
            if !wait {
                return Err(Errno::EAGAIN);
            }
            // Linux looks for circles among POSIX locks only.
            if matches!(owner, Owner::Process(_))
                && would_deadlock(owner, holder.owner, &table.waits_for)
            {
                return Err(Errno::EDEADLK);
            }
            table.waits_for.insert(owner, holder.owner);
            holder.owner
        };
        // Look again when the range is free, and also when someone else
        // now holds it: the new holder may be waiting for us, a circle
        // that only the loop's deadlock check above can find.
        let waited = sched::wait_event(Chan::FileLock(ino), || {
            let now = kind.and_then(|kind| {
                LOCKS
                    .lock()
                    .files
                    .get(&key)
                    .and_then(|f| f.conflict(owner, kind, start, end))
            });
            (now.map(|lock| lock.owner) != Some(blocker)).then_some(())
        });
        LOCKS.lock().waits_for.remove(&owner);
        waited?;
    }
}

/// A process closed a descriptor of file `ino`: its POSIX locks on the
/// file go (all of them, whichever descriptor took them).
pub fn closed(pid: u32, ino: u64) {
    release(Owner::Process(pid), Some(ino));
}

/// A process ended: all its POSIX locks go.
pub fn release_process(pid: u32) {
    release(Owner::Process(pid), None);
}

/// The last descriptor of an open file description closed: its OFD locks
/// and its flock lock on file `ino` go.
pub fn description_closed(id: u64, ino: u64) {
    release(Owner::Description(id), Some(ino));
}

/// Drops `owner`'s locks on file `only` (or on every file) and wakes the
/// waiters of each file that lost one.
fn release(owner: Owner, only: Option<u64>) {
    let mut woken = alloc::vec::Vec::new();
    {
        let mut table = LOCKS.lock();
        if table.files.is_empty() {
            return; // the usual case: nobody locks anything
        }
        table.files.retain(|&(_, ino), file| {
            if only.is_none_or(|o| o == ino) && file.release(owner) {
                woken.push(ino);
            }
            !file.is_empty()
        });
    }
    for ino in woken {
        sched::wakeup(Chan::FileLock(ino));
    }
}
