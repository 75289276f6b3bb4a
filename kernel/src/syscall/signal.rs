//! Signal and timer calls: argument checks and copies only; the mechanism is
//! in `signal.rs` (and the timers' counting in its `on_tick`).

use abi::Errno;
use abi::signal::*;
use kcore::signal::{self as rules, RealTimer, Timer};

use super::SysResult;
use crate::arch::trap::TrapFrame;
use crate::mm::uaccess;
use crate::proc::{Pid, TABLE, Tid, current, current_both, current_thread, sched};
use crate::signal::{self, Origin};

/// The only sigset size the kernel's calls accept (8 bytes, as on Linux).
pub(super) const SIGSET_SIZE: u64 = 8;

pub fn rt_sigaction(signal: u32, act: u64, old: u64, setsize: u64) -> SysResult {
    if setsize != SIGSET_SIZE || !rules::valid(signal) {
        return Err(Errno::EINVAL);
    }
    let new = if act != 0 {
        if sig_bit(signal) & rules::UNCATCHABLE != 0 {
            return Err(Errno::EINVAL);
        }
        Some(uaccess::read::<SigAction>(act)?)
    } else {
        None
    };
    if old != 0 {
        uaccess::check_range(old, size_of::<SigAction>(), true)?;
    }
    let previous = {
        let mut table = TABLE.lock();
        let pid = table.current_mut().expect("a current process").pid;
        let (p, threads) = table.process_and_threads(pid).expect("the current process");
        let previous = p.sig.action(signal);
        if let Some(mut action) = new {
            action.mask = rules::sanitize_mask(action.mask);
            p.sig.set_action(signal, action);
            // Ignoring a signal discards it wherever it is pending (POSIX).
            if signal::is_ignored(&action, signal) {
                for t in threads {
                    t.sig.own.discard(signal);
                }
            }
        }
        previous
    };
    if old != 0 {
        uaccess::write(old, &previous)?;
    }
    Ok(0)
}

pub fn rt_sigprocmask(how: u32, set: u64, old: u64, setsize: u64) -> SysResult {
    if setsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let change = if set != 0 {
        Some(uaccess::read::<SigSet>(set)?)
    } else {
        None
    };
    let previous = current_thread(|t| t.sig.blocked);
    if let Some(set) = change {
        let blocked = rules::apply_mask(previous, how, set).ok_or(Errno::EINVAL)?;
        current_thread(|t| signal::set_mask(t, blocked));
    }
    if old != 0 {
        uaccess::write(old, &previous)?;
    }
    Ok(0)
}

pub fn rt_sigpending(set: u64, setsize: u64) -> SysResult {
    if setsize > SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let pending = current_both(|t, p| signal::pending_for(t, p) & t.sig.blocked);
    uaccess::copy_to_user(set, &pending.to_le_bytes()[..setsize as usize])?;
    Ok(0)
}

/// Waits with `mask` in place for a signal whose handler then runs; the old
/// mask comes back when that handler returns. Always "fails" with EINTR.
pub fn rt_sigsuspend(mask: u64, setsize: u64) -> SysResult {
    if setsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let mask: SigSet = uaccess::read(mask)?;
    current_thread(|t| signal::suspend_with(t, mask));
    pause()
}

/// rt_sigtimedwait(2): takes a signal of `set` that is pending (waiting
/// for one, for at most `timeout` if given) without running its handler;
/// returns its number, its siginfo at `info` if asked. EAGAIN when the
/// time is up, EINTR when another signal's handler must run.
///
/// While it waits the set is unblocked, as on Linux (the mask is put back
/// before it returns), so that a signal sent to the process finds this
/// thread willing to take it and wakes it.
pub fn rt_sigtimedwait(set: u64, info: u64, timeout: u64, setsize: u64) -> SysResult {
    if setsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let set = rules::sanitize_mask(uaccess::read::<SigSet>(set)?);
    let deadline = if timeout != 0 {
        let t: abi::types::Timespec = uaccess::read(timeout)?;
        if t.tv_sec < 0 || !(0..1_000_000_000).contains(&t.tv_nsec) {
            return Err(Errno::EINVAL);
        }
        let nanos = (t.tv_sec as u128) * 1_000_000_000 + t.tv_nsec as u128;
        Some(super::process::deadline_in(nanos))
    } else {
        None
    };
    let taken = match current_both(|t, p| signal::take_waited(t, p, set)) {
        Some(taken) => Ok(taken),
        None => {
            let blocked = current_thread(|t| {
                let blocked = t.sig.blocked;
                t.sig.blocked &= !set;
                blocked
            });
            let waited = sched::wait_event_until(sched::Chan::Signal, deadline, || {
                current_both(|t, p| signal::take_waited(t, p, set))
            });
            current_thread(|t| signal::set_mask(t, blocked));
            match waited {
                Err(Errno::ETIMEDOUT) => Err(Errno::EAGAIN),
                Err(_) => Err(Errno::EINTR),
                Ok(taken) => Ok(taken),
            }
        }
    };
    let (signal, origin) = taken?;
    if info != 0 {
        uaccess::write(info, &origin.info(signal))?;
    }
    Ok(signal as usize)
}

/// rt_sigqueueinfo(2): sends `signal` with the caller's siginfo (its
/// si_value above all) to process `pid`. A siginfo that claims to come
/// from kill or the kernel (si_code >= 0, or SI_TKILL) may only be sent to
/// the caller itself (EPERM), as Linux rules.
pub fn rt_sigqueueinfo(pid: i32, signal: u32, info: u64) -> SysResult {
    queue_info(pid, None, signal, info)
}

/// rt_tgsigqueueinfo(2): rt_sigqueueinfo to thread `tid` of `tgid`.
pub fn rt_tgsigqueueinfo(tgid: i32, tid: i32, signal: u32, info: u64) -> SysResult {
    if tid <= 0 {
        return Err(Errno::EINVAL);
    }
    queue_info(tgid, Some(tid as Tid), signal, info)
}

fn queue_info(pid: i32, tid: Option<Tid>, signal: u32, info: u64) -> SysResult {
    let mut siginfo: SigInfo = uaccess::read(info)?;
    if pid <= 0 || (signal != 0 && !rules::valid(signal)) {
        return Err(Errno::EINVAL);
    }
    let (me, cred) = current(|p| (p.pid, p.cred.clone()));
    if (siginfo.code >= 0 || siginfo.code == SI_TKILL) && pid as Pid != me {
        return Err(Errno::EPERM);
    }
    siginfo.signo = signal as i32;
    let mut table = TABLE.lock();
    let found = match tid {
        Some(tid) => table
            .threads
            .get(&tid)
            .filter(|t| t.state != crate::proc::State::Dead && t.pid == pid as Pid)
            .map(|t| t.pid),
        None => table
            .procs
            .get(&(pid as Pid))
            .filter(|p| !p.is_zombie())
            .map(|p| p.pid),
    };
    let Some(owner) = found else {
        return Err(Errno::ESRCH);
    };
    may_signal(&table, me, &cred, owner)?;
    if signal != 0 {
        let origin = Origin::queued(&siginfo);
        match tid {
            Some(tid) => signal::send_to_thread(&mut table, tid, signal, origin),
            None => signal::send(&mut table, owner, signal, origin),
        }
    }
    Ok(0)
}

/// EPERM unless process `me`, with `cred`, may signal process `owner`
/// (itself, a shared user id, or root: `kcore::cred::Cred::may_signal`).
fn may_signal(
    table: &crate::proc::Table,
    me: Pid,
    cred: &kcore::cred::Cred,
    owner: Pid,
) -> Result<(), Errno> {
    let allowed = owner == me
        || table
            .procs
            .get(&owner)
            .is_some_and(|p| cred.may_signal(&p.cred));
    if allowed { Ok(()) } else { Err(Errno::EPERM) }
}

/// rt_sigreturn(2): back to the state the handler's frame saved.
pub fn rt_sigreturn(tf: &mut TrapFrame) -> SysResult {
    signal::sigreturn(tf)
}

pub fn pause() -> SysResult {
    let _ = sched::wait_event(sched::Chan::Signal, || None::<()>);
    Err(Errno::EINTR)
}

pub fn sigaltstack(new: u64, old: u64) -> SysResult {
    let request = if new != 0 {
        Some(uaccess::read::<StackT>(new)?)
    } else {
        None
    };
    let (now, on_it) = current_thread(|t| {
        let stack = t.sig.altstack();
        (stack, signal::on_stack(&stack, t.user_sp_at_entry()))
    });
    if old != 0 {
        let flags = if on_it { SS_ONSTACK } else { now.flags };
        uaccess::write(old, &StackT::new(now.sp, flags, now.size))?;
    }
    if let Some(stack) = request {
        if on_it {
            return Err(Errno::EPERM);
        }
        let stack = match stack.flags {
            SS_DISABLE => StackT::new(0, SS_DISABLE, 0),
            0 if stack.size < MINSIGSTKSZ => return Err(Errno::ENOMEM),
            0 => StackT::new(stack.sp, 0, stack.size),
            _ => return Err(Errno::EINVAL),
        };
        current_thread(|t| t.sig.set_altstack(stack));
    }
    Ok(0)
}

/// kill(2): pid > 0 one process, 0 the caller's group, -1 everyone but init
/// and the caller, < -1 the group -pid. A process-directed signal: any
/// thread of each target that does not block it takes it.
pub fn kill(pid: i32, signal: u32) -> SysResult {
    if signal != 0 && !rules::valid(signal) {
        return Err(Errno::EINVAL);
    }
    let (me, my_group, cred) = current(|p| (p.pid, p.pgid, p.cred.clone()));
    let wanted = |p: &crate::proc::Process| match pid {
        0 => p.pgid == my_group,
        -1 => p.pid != crate::proc::INIT_PID && p.pid != me,
        n if n < 0 => p.pgid == n.unsigned_abs(),
        n => p.pid == n as Pid,
    };
    let mut table = TABLE.lock();
    let targets = signal::pids_where(&table, wanted);
    // kill(2): the processes the caller may signal (a shared user id,
    // `kcore::cred::Cred::may_signal`, or root); ESRCH if none matched,
    // EPERM if it may signal none of them.
    let permitted: alloc::vec::Vec<Pid> = targets
        .iter()
        .copied()
        .filter(|t| *t == me || table.procs.get(t).is_some_and(|p| cred.may_signal(&p.cred)))
        .collect();
    for &target in &permitted {
        match (signal, pid) {
            (0, _) => {}
            (_, ..=0) => signal::send_to_many(&mut table, target, signal, Origin::user(me)),
            _ => signal::send(&mut table, target, signal, Origin::user(me)),
        }
    }
    if targets.is_empty() {
        Err(Errno::ESRCH)
    } else if permitted.is_empty() {
        Err(Errno::EPERM)
    } else {
        Ok(0)
    }
}

/// tgkill(2) (and tkill, `tgid` -1): `signal` to thread `tid` alone, which
/// must belong to process `tgid`. musl's raise() and pthread_kill use them.
pub fn tgkill(tgid: i32, tid: i32, signal: u32) -> SysResult {
    if tid <= 0 || (tgid != -1 && tgid <= 0) || (signal != 0 && !rules::valid(signal)) {
        return Err(Errno::EINVAL);
    }
    let (me, cred) = current(|p| (p.pid, p.cred.clone()));
    let mut table = TABLE.lock();
    let found = table.threads.get(&(tid as Tid)).and_then(|t| {
        (t.state != crate::proc::State::Dead && (tgid == -1 || t.pid == tgid as Pid))
            .then_some(t.pid)
    });
    let Some(owner) = found else {
        return Err(Errno::ESRCH);
    };
    may_signal(&table, me, &cred, owner)?;
    if signal != 0 {
        signal::send_to_thread(&mut table, tid as Tid, signal, Origin::tkill(me));
    }
    Ok(0)
}

/// Which interval timer: ITIMER_REAL, or the index of a CPU-time one.
enum Which {
    Real,
    Cpu(usize),
}

fn which_timer(which: u32) -> Result<Which, Errno> {
    match which {
        ITIMER_REAL => Ok(Which::Real),
        ITIMER_VIRTUAL | ITIMER_PROF => Ok(Which::Cpu(which as usize - 1)),
        _ => Err(Errno::EINVAL),
    }
}

fn cpu_itimerval(timer: Timer) -> ItimerVal {
    let hz = u64::from(crate::clock::hz());
    ItimerVal {
        interval: rules::timeval_from_ticks(timer.interval, hz),
        value: rules::timeval_from_ticks(timer.ticks_left(), hz),
    }
}

fn real_itimerval(timer: RealTimer, now: u64) -> ItimerVal {
    ItimerVal {
        interval: rules::timeval_from_nanos(timer.interval),
        value: rules::timeval_from_nanos(timer.left(now)),
    }
}

pub fn getitimer(which: u32, out: u64) -> SysResult {
    let now = crate::clock::nanos_since_boot();
    let value = match which_timer(which)? {
        Which::Real => real_itimerval(current(|p| p.sig.real_timer), now),
        Which::Cpu(i) => cpu_itimerval(current(|p| p.sig.cpu_timers[i])),
    };
    uaccess::write(out, &value)?;
    Ok(0)
}

pub fn setitimer(which: u32, new: u64, old: u64) -> SysResult {
    let which = which_timer(which)?;
    let wanted: ItimerVal = uaccess::read(new)?;
    if old != 0 {
        uaccess::check_range(old, size_of::<ItimerVal>(), true)?;
    }
    let previous = match which {
        Which::Real => {
            let value = rules::nanos_from_timeval(wanted.value).ok_or(Errno::EINVAL)?;
            let interval = rules::nanos_from_timeval(wanted.interval).ok_or(Errno::EINVAL)?;
            let now = crate::clock::nanos_since_boot();
            let timer = RealTimer::armed(now, value, interval);
            let previous = current(|p| crate::signal::set_real_timer(p, timer));
            real_itimerval(previous, now)
        }
        Which::Cpu(i) => {
            let hz = u64::from(crate::clock::hz());
            let timer = Timer::armed(
                rules::ticks_from_timeval(wanted.value, hz).ok_or(Errno::EINVAL)?,
                rules::ticks_from_timeval(wanted.interval, hz).ok_or(Errno::EINVAL)?,
            );
            cpu_itimerval(current(|p| {
                core::mem::replace(&mut p.sig.cpu_timers[i], timer)
            }))
        }
    };
    if old != 0 {
        uaccess::write(old, &previous)?;
    }
    Ok(0)
}

pub fn alarm(seconds: u32) -> SysResult {
    let now = crate::clock::nanos_since_boot();
    let timer = RealTimer::armed(now, u64::from(seconds) * 1_000_000_000, 0);
    let previous = current(|p| crate::signal::set_real_timer(p, timer));
    Ok(rules::alarm_seconds_from_nanos(previous.left(now)) as usize)
}
