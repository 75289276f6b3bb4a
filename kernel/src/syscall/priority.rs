//! getpriority(2) and setpriority(2): a thread's nice, which the scheduler
//! turns into the length of its time slice (`kcore::nice`, proc/sched.rs).
//!
//! As on Linux the nice belongs to a thread: `PRIO_PROCESS` names one
//! thread by its id (0: the caller; a process's pid is its first thread's
//! tid), `PRIO_PGRP` every thread of a process group (0: the caller's), and
//! `PRIO_USER` every thread of a user's processes (0: the caller's real
//! user). The raw call returns 20 - nice, 1 to 40, so that no priority
//! looks like an error; the C library gives back the nice.

use abi::Errno;
use abi::types::{PRIO_PGRP, PRIO_PROCESS, PRIO_USER};
use alloc::vec::Vec;

use super::SysResult;
use crate::proc::{TABLE, Table, Tid};

/// Who a request names, turned from the raw `which` and `who`.
enum Target {
    Thread(Tid),
    Group(u32),
    User(u32),
}

impl Target {
    /// Reads `which` and `who`, filling in the caller's own for a 0.
    /// Caller holds the table.
    fn parse(table: &mut Table, which: u32, who: u32) -> Result<Target, Errno> {
        let (t, p) = table.current_both().expect("a thread is calling");
        let or = |own: u32| if who == 0 { own } else { who };
        match which {
            PRIO_PROCESS => Ok(Target::Thread(or(t.tid))),
            PRIO_PGRP => Ok(Target::Group(or(p.pgid))),
            PRIO_USER => Ok(Target::User(or(p.cred.ruid))),
            _ => Err(Errno::EINVAL),
        }
    }

    /// The live threads it names. Caller holds the table.
    fn threads(&self, table: &Table) -> Vec<Tid> {
        table
            .threads
            .values()
            .filter(|t| t.state != crate::proc::State::Dead)
            .filter(|t| {
                let p = table.procs.get(&t.pid);
                match *self {
                    Target::Thread(tid) => t.tid == tid,
                    Target::Group(pgid) => p.is_some_and(|p| p.pgid == pgid),
                    Target::User(uid) => p.is_some_and(|p| p.cred.ruid == uid),
                }
            })
            .map(|t| t.tid)
            .collect()
    }
}

/// getpriority(which, who): 20 - the lowest nice among the threads named;
/// ESRCH if none.
pub fn getpriority(which: u32, who: u32) -> SysResult {
    let mut table = TABLE.lock();
    let target = Target::parse(&mut table, which, who)?;
    target
        .threads(&table)
        .iter()
        .filter_map(|tid| table.threads.get(tid))
        .map(|t| t.nice)
        .min()
        .map(kcore::nice::to_syscall)
        .ok_or(Errno::ESRCH)
}

/// setpriority(which, who, nice): sets the nice (clamped to -20..19) of
/// every thread named; ESRCH if none, EPERM for a thread the caller does
/// not own, EACCES for a lowering it may not make (`kcore::nice::may_set`).
/// As on Linux, the error of the last refused thread is returned even when
/// others were set.
pub fn setpriority(which: u32, who: u32, nice: i64) -> SysResult {
    let nice = kcore::nice::clamp(nice);
    let mut table = TABLE.lock();
    let target = Target::parse(&mut table, which, who)?;
    let caller = table
        .current_both()
        .map(|(_, p)| p.cred.clone())
        .expect("a thread is calling");
    let tids = target.threads(&table);
    if tids.is_empty() {
        return Err(Errno::ESRCH);
    }
    let mut result = Ok(0);
    let Table { procs, threads, .. } = &mut *table;
    for tid in tids {
        let Some(t) = threads.get_mut(&tid) else {
            continue;
        };
        let owner = procs
            .get(&t.pid)
            .is_some_and(|p| p.cred.ruid == caller.euid || p.cred.euid == caller.euid);
        match kcore::nice::may_set(caller.euid == 0, owner, t.nice, nice) {
            Ok(()) => t.nice = nice,
            Err(e) => result = Err(e),
        }
    }
    result
}
