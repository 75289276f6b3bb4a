//! System V semaphore sets: semget, semop, semtimedop, semctl, and the
//! SEM_UNDO adjustments applied when a process ends.
//!
//! A set is an array of `kcore::ipc::Sem`; `kcore::ipc::semop` decides
//! whether one call's operations can all go now. One that cannot waits on
//! the set's channel, listed among the set's waiters with the operation
//! that held it (what GETNCNT and GETZCNT count), and tries again whenever
//! a value of the set changes (`changes` moves). A fair queue would wake
//! only the waiters that can go; waking them all and letting each look is
//! simpler and right, since every try is all or nothing.
//!
//! SEM_UNDO: the set keeps, per process, the sum of the opposites of its
//! undoable operations (`undo`); when the process ends they are added back
//! (`apply_undo`, clamped to 0..=SEMVMX as on Linux). SETVAL and SETALL
//! clear the adjustments of what they set; IPC_RMID drops them with the
//! set. A fork's child starts with none; threads share their process's.

use abi::Errno;
use abi::ipc::{SEM_UNDO, SEMMNI, SEMMNS, SEMMSL, SEMOPM, SEMVMX, SemBuf, SemInfo, SemidDs};
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use kcore::ipc::{self as rules, Blocked, Entry, Found, Ids, READ, Sem, SemopError, WRITE, Which};

use super::{caller, caller_pid, now, wait};
use crate::proc::sched::{self, Chan};
use crate::sync::{IrqLock, Rank};

struct Set {
    sems: Vec<Sem>,
    otime: i64,
    ctime: i64,
    /// Moves at every change of a value: a waiter looks again.
    changes: u64,
    /// The calls waiting now, by thread, and the operation each waits on.
    waiters: Vec<(u32, Blocked)>,
    /// Process id -> its adjustment for each semaphore.
    undo: BTreeMap<i32, Vec<i32>>,
}

impl Set {
    fn changed(&mut self) {
        self.changes += 1;
    }
}

struct Sets {
    ids: Ids<Set>,
    /// Semaphores in all sets (at most SEMMNS).
    sems: usize,
}

static SETS: IrqLock<Sets> = IrqLock::new(
    Rank::Service,
    Sets {
        ids: Ids::new(SEMMNI),
        sems: 0,
    },
);

fn chan(id: i32) -> Chan {
    Chan::SemSet(id)
}

/// semget(2): the set with `key`, made with `nsems` semaphores if need
/// be. EINVAL for a count past SEMMSL, for a new set of none and for an
/// existing set smaller than asked; ENOSPC past SEMMNS.
pub fn get(key: i32, nsems: i32, flags: u32) -> Result<i32, Errno> {
    let cred = caller();
    let nsems = usize::try_from(nsems)
        .ok()
        .filter(|&n| n <= SEMMSL)
        .ok_or(Errno::EINVAL)?;
    let mut sets = SETS.lock();
    let found = sets.ids.lookup(key, flags, &cred, |set| {
        if nsems > set.sems.len() {
            Err(Errno::EINVAL)
        } else {
            Ok(())
        }
    })?;
    match found {
        Found::Id(id) => Ok(id),
        Found::Create if nsems == 0 => Err(Errno::EINVAL),
        Found::Create if sets.sems + nsems > SEMMNS => Err(Errno::ENOSPC),
        Found::Create => {
            let set = Set {
                sems: vec![Sem::default(); nsems],
                otime: 0,
                ctime: now(),
                changes: 0,
                waiters: Vec::new(),
                undo: BTreeMap::new(),
            };
            let id = sets.ids.insert(rules::new_perm(key, &cred, flags), set)?;
            sets.sems += nsems;
            Ok(id)
        }
    }
}

/// semop(2) and semtimedop(2) of operations already copied in (1 to
/// SEMOPM of them, checked by the caller): EFBIG for a semaphore past the
/// set's end, EACCES, then all at once, waiting until they can (or
/// `deadline`, EAGAIN as Linux says it); EIDRM if the set goes meanwhile.
pub fn op(id: i32, ops: &[SemBuf], deadline: Option<u64>) -> Result<(), Errno> {
    let cred = caller();
    debug_assert!((1..=SEMOPM).contains(&ops.len()));
    let largest = ops
        .iter()
        .map(|o| usize::from(o.sem_num))
        .max()
        .unwrap_or(0);
    let alters = ops.iter().any(|o| o.sem_op != 0);
    let undoes = ops.iter().any(|o| o.sem_flg & SEM_UNDO != 0);
    let pid = caller_pid();
    let tid = crate::proc::current_thread(|t| t.tid);
    let mut missing = Errno::EINVAL;
    loop {
        let seen = {
            let mut sets = SETS.lock();
            let entry = sets.ids.get_mut(id).map_err(|_| missing)?;
            if largest >= entry.obj.sems.len() {
                return Err(Errno::EFBIG);
            }
            if !rules::permits(&entry.perm, &cred, if alters { WRITE } else { READ }) {
                return Err(Errno::EACCES);
            }
            let set = &mut entry.obj;
            let count = set.sems.len();
            let mut undo = match set.undo.remove(&pid) {
                Some(undo) => undo,
                None => vec![0; count],
            };
            let result = rules::semop(&mut set.sems, &mut undo, ops, pid);
            if undoes || undo.iter().any(|&a| a != 0) {
                set.undo.insert(pid, undo);
            }
            match result {
                Ok(()) => {
                    set.otime = now();
                    if alters {
                        set.changed();
                        drop(sets);
                        sched::wakeup(chan(id));
                    }
                    return Ok(());
                }
                Err(SemopError::Fail(e)) => return Err(e),
                Err(SemopError::Wait(blocked)) => {
                    set.waiters.push((tid, blocked));
                    set.changes
                }
            }
        };
        missing = Errno::EIDRM;
        let waited = wait(chan(id), deadline, || {
            SETS.lock()
                .ids
                .get(id)
                .map_or(true, |e| e.obj.changes != seen)
        });
        if let Ok(entry) = SETS.lock().ids.get_mut(id) {
            entry.obj.waiters.retain(|&(t, _)| t != tid);
        }
        match waited {
            Err(Errno::ETIMEDOUT) => return Err(Errno::EAGAIN),
            other => other?,
        }
    }
}

/// The set `id`, checked for `requested` access; the closure runs with the
/// table locked.
fn with_set<R>(
    id: i32,
    requested: u32,
    f: impl FnOnce(&mut Set) -> Result<R, Errno>,
) -> Result<R, Errno> {
    let cred = caller();
    let mut sets = SETS.lock();
    let entry = sets.ids.get_mut(id)?;
    if !rules::permits(&entry.perm, &cred, requested) {
        return Err(Errno::EACCES);
    }
    f(&mut entry.obj)
}

/// The index of semaphore `num` of `set` (EINVAL past its end).
fn index(set: &Set, num: i32) -> Result<usize, Errno> {
    usize::try_from(num)
        .ok()
        .filter(|&n| n < set.sems.len())
        .ok_or(Errno::EINVAL)
}

/// semctl GETVAL, GETPID, GETNCNT, GETZCNT of semaphore `num`.
pub enum Query {
    Value,
    Pid,
    WaitingToDecrease,
    WaitingForZero,
}

pub fn query(id: i32, num: i32, what: Query) -> Result<usize, Errno> {
    with_set(id, READ, |set| {
        let sem = set.sems[index(set, num)?];
        let waiting = |zero: bool| {
            set.waiters
                .iter()
                .filter(|(_, b)| i32::from(b.sem_num) == num && b.for_zero == zero)
                .count()
        };
        Ok(match what {
            Query::Value => sem.val as usize,
            Query::Pid => sem.pid as usize,
            Query::WaitingToDecrease => waiting(false),
            Query::WaitingForZero => waiting(true),
        })
    })
}

/// semctl GETALL: every value.
pub fn get_all(id: i32) -> Result<Vec<u16>, Errno> {
    with_set(id, READ, |set| {
        Ok(set.sems.iter().map(|s| s.val as u16).collect())
    })
}

/// How many semaphores set `id` has (SETALL's caller copies that many).
pub fn count(id: i32) -> Result<usize, Errno> {
    with_set(id, 0, |set| Ok(set.sems.len()))
}

/// semctl SETVAL (`num` Some) and SETALL (`values` for each): ERANGE past
/// SEMVMX; the adjustments of what is set are cleared, waiters look again.
pub fn set_values(id: i32, num: Option<i32>, values: &[i32]) -> Result<(), Errno> {
    if values.iter().any(|v| !(0..=SEMVMX).contains(v)) {
        return Err(Errno::ERANGE);
    }
    let pid = caller_pid();
    with_set(id, WRITE, |set| {
        match num {
            Some(num) => {
                let index = index(set, num)?;
                set.sems[index] = Sem {
                    val: values[0],
                    pid,
                };
                for undo in set.undo.values_mut() {
                    undo[index] = 0;
                }
            }
            None => {
                for (sem, &val) in set.sems.iter_mut().zip(values) {
                    *sem = Sem { val, pid: sem.pid };
                }
                set.undo.clear();
            }
        }
        set.ctime = now();
        set.changed();
        Ok(())
    })?;
    sched::wakeup(chan(id));
    Ok(())
}

/// semctl IPC_STAT, SEM_STAT, SEM_STAT_ANY.
pub fn stat(which: Which) -> Result<(i32, SemidDs), Errno> {
    let cred = caller();
    let sets = SETS.lock();
    let (id, entry) = sets.ids.for_stat(which, &cred)?;
    Ok((id, record(entry)))
}

/// `/proc/sysvipc/sem`: every set, whoever may read it (as on Linux).
pub fn proc_text() -> alloc::string::String {
    let rows: Vec<_> = SETS
        .lock()
        .ids
        .iter()
        .map(|(id, entry)| (id, record(entry)))
        .collect();
    kcore::procfs::sysvipc_sem(&rows)
}

/// What IPC_STAT reports of a set.
fn record(entry: &Entry<Set>) -> SemidDs {
    SemidDs {
        sem_perm: entry.perm,
        sem_otime: entry.obj.otime,
        sem_ctime: entry.obj.ctime,
        sem_nsems: entry.obj.sems.len() as u64,
        ..SemidDs::default()
    }
}

/// semctl IPC_SET: owner, group and permission bits (EPERM unless the
/// owner, the creator or root).
pub fn set(id: i32, from: &SemidDs) -> Result<(), Errno> {
    let cred = caller();
    let mut sets = SETS.lock();
    let entry = sets.ids.owned_mut(id, &cred)?;
    rules::set_owner(&mut entry.perm, &from.sem_perm);
    entry.obj.ctime = now();
    Ok(())
}

/// semctl IPC_RMID: the set goes at once; its waiters wake to EIDRM.
pub fn remove(id: i32) -> Result<(), Errno> {
    let cred = caller();
    let mut sets = SETS.lock();
    sets.ids.owned_mut(id, &cred)?;
    let gone = sets.ids.remove(id).expect("found above");
    sets.sems -= gone.obj.sems.len();
    drop(sets);
    sched::wakeup(chan(id));
    Ok(())
}

/// semctl IPC_INFO (the limits) or SEM_INFO (`usage`: sets and semaphores
/// in use in two of them), and the highest slot in use.
pub fn info(usage: bool) -> (SemInfo, usize) {
    let sets = SETS.lock();
    let mut info = SemInfo {
        semmap: SEMMNS as i32,
        semmni: SEMMNI as i32,
        semmns: SEMMNS as i32,
        semmnu: SEMMNS as i32,
        semmsl: SEMMSL as i32,
        semopm: SEMOPM as i32,
        semume: SEMOPM as i32,
        semusz: 20,
        semvmx: SEMVMX,
        semaem: SEMVMX,
    };
    if usage {
        info.semusz = sets.ids.len() as i32;
        info.semaem = sets.sems as i32;
    }
    (info, sets.ids.highest_index())
}

/// Process `pid` ended: its adjustments go back into every set it had
/// them on, and the waiters of those sets look again.
pub fn apply_undo(pid: i32) {
    let mut woken = Vec::new();
    {
        let mut sets = SETS.lock();
        if sets.ids.is_empty() {
            return; // the usual case: nobody uses semaphores
        }
        for id in sets.ids.ids() {
            let set = &mut sets.ids.get_mut(id).expect("listed").obj;
            if let Some(undo) = set.undo.remove(&pid) {
                rules::apply_undo(&mut set.sems, &undo, pid);
                set.changed();
                woken.push(id);
            }
        }
    }
    for id in woken {
        sched::wakeup(chan(id));
    }
}
