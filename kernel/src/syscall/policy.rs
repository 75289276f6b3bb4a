//! sched_setscheduler(2) and its family: a thread's scheduling policy and
//! real-time priority, the range of priorities each policy has, and the
//! length of a thread's time slice.
//!
//! The rules are `kcore::policy`'s: the normal policies (SCHED_OTHER,
//! SCHED_BATCH, SCHED_IDLE) are kept and change how long the thread's
//! slices are (proc/sched.rs); a real-time one is refused with EPERM, as
//! Linux refuses it to a group with no real-time runtime. As on Linux, the
//! `pid` of each call names one thread (0: the caller), and a negative one
//! is EINVAL, not ESRCH.

use abi::Errno;
use abi::types::{CAP_SYS_NICE, RLIMIT_NICE, SchedParam, Timespec};
use kcore::policy::{Asker, Request, Scheduling};

use super::SysResult;
use crate::mm::uaccess;
use crate::proc::{TABLE, Tid};

/// The thread `pid` names (0: the caller): EINVAL for a negative `pid`,
/// ESRCH for no live thread.
fn target(pid: i32) -> Result<Tid, Errno> {
    let table = TABLE.lock();
    let tid = match pid {
        ..0 => return Err(Errno::EINVAL),
        0 => table.current_tid().expect("a thread is calling"),
        _ => pid as Tid,
    };
    match table.threads.get(&tid) {
        Some(t) if t.state != crate::proc::State::Dead => Ok(tid),
        _ => Err(Errno::ESRCH),
    }
}

/// The scheduling and nice of thread `tid`; ESRCH if it has gone.
fn scheduling_of(tid: Tid) -> Result<(Scheduling, i32), Errno> {
    TABLE
        .lock()
        .threads
        .get(&tid)
        .map(|t| (t.scheduling, t.nice))
        .ok_or(Errno::ESRCH)
}

/// Reads a `struct sched_param` the way Linux does before anything else
/// is looked at: a null pointer or a negative `pid` is EINVAL, a bad
/// pointer EFAULT.
fn read_param(pid: i32, param: u64) -> Result<SchedParam, Errno> {
    if param == 0 || pid < 0 {
        return Err(Errno::EINVAL);
    }
    uaccess::read::<SchedParam>(param)
}

/// Applies `request` to thread `pid`: the checks of `kcore::policy::set`,
/// with the caller's privilege and ownership of the target; a thread
/// whose slice should now be shorter gets it at its next one.
fn set(pid: i32, request: Request) -> SysResult {
    let tid = target(pid)?;
    let cred = crate::proc::cred();
    let mut table = TABLE.lock();
    let table = &mut *table;
    let t = table.threads.get_mut(&tid).ok_or(Errno::ESRCH)?;
    let p = table.procs.get(&t.pid).ok_or(Errno::ESRCH)?;
    let asker = Asker {
        privileged: cred.capable(CAP_SYS_NICE),
        same_owner: cred.euid == p.cred.ruid || cred.euid == p.cred.euid,
        nice_limit: p.limits.cur(RLIMIT_NICE),
    };
    t.scheduling = kcore::policy::set(t.scheduling, t.nice, request, asker)?;
    Ok(0)
}

/// sched_setscheduler(pid, policy, param): sets thread `pid`'s policy,
/// with SCHED_RESET_ON_FORK or'ed in to keep its children from its
/// negative nice; the priority must be 0 for the normal policies.
pub fn sched_setscheduler(pid: i32, policy: i32, param: u64) -> SysResult {
    let policy = u32::try_from(policy).map_err(|_| Errno::EINVAL)?;
    let param = read_param(pid, param)?;
    set(
        pid,
        Request {
            policy: Some(policy),
            priority: param.sched_priority,
        },
    )
}

/// sched_setparam(pid, param): sets thread `pid`'s priority within its
/// policy, which for the normal policies can only be 0.
pub fn sched_setparam(pid: i32, param: u64) -> SysResult {
    let param = read_param(pid, param)?;
    set(
        pid,
        Request {
            policy: None,
            priority: param.sched_priority,
        },
    )
}

/// sched_getscheduler(pid): thread `pid`'s policy, with
/// SCHED_RESET_ON_FORK or'ed in when set.
pub fn sched_getscheduler(pid: i32) -> SysResult {
    let (scheduling, _) = scheduling_of(target(pid)?)?;
    Ok(scheduling.raw() as usize)
}

/// sched_getparam(pid, param): thread `pid`'s priority, always 0 here
/// (only the real-time policies have one).
pub fn sched_getparam(pid: i32, param: u64) -> SysResult {
    if param == 0 || pid < 0 {
        return Err(Errno::EINVAL);
    }
    scheduling_of(target(pid)?)?;
    uaccess::write(param, &SchedParam { sched_priority: 0 })?;
    Ok(0)
}

/// sched_get_priority_max(policy) and sched_get_priority_min(policy).
pub fn sched_get_priority_max(policy: i32) -> SysResult {
    Ok(kcore::policy::priority_max(policy)? as usize)
}

pub fn sched_get_priority_min(policy: i32) -> SysResult {
    Ok(kcore::policy::priority_min(policy)? as usize)
}

/// sched_rr_get_interval(pid, interval): the length of thread `pid`'s
/// time slice, as Linux gives a normal thread its CFS slice: in whole
/// ticks.
pub fn sched_rr_get_interval(pid: i32, interval: u64) -> SysResult {
    let (scheduling, nice) = scheduling_of(target(pid)?)?;
    let ticks = scheduling
        .policy
        .slice_ticks(crate::proc::sched::time_slice(), nice);
    let ns = u64::from(ticks) * 1_000_000_000 / u64::from(crate::clock::hz().max(1));
    let slice = Timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as i64,
    };
    uaccess::write(interval, &slice)?;
    Ok(0)
}
