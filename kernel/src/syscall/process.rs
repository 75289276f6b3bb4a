//! Process and thread calls whose mechanism lives in `proc/` (clone, exit,
//! wait, futexes, sleeping): argument checks and conversions only.
//! Process groups are here too (setpgid, getpgid): they are process state,
//! whatever signals do with them.

use abi::Errno;
use abi::types::{
    ARCH_GET_FS, ARCH_GET_GS, ARCH_SET_FS, ARCH_SET_GS, CLOCK_MONOTONIC, CLOCK_REALTIME,
    CLONE_VFORK, CLONE_VM, Rusage, SigInfo, TIMER_ABSTIME, Timespec,
};

use super::SysResult;
use crate::arch::trap::TrapFrame;
use crate::mm::uaccess;
use crate::proc::{Pid, TABLE, Tid, current, current_thread, futex, lifecycle, sched};

/// clone(2), in Linux x86_64's argument order: flags, stack, parent_tid,
/// child_tid, tls.
pub fn clone(
    tf: &TrapFrame,
    flags: u64,
    stack: u64,
    parent_tid: u64,
    child_tid: u64,
    tls: u64,
) -> SysResult {
    lifecycle::clone(
        tf,
        lifecycle::CloneArgs {
            flags,
            stack,
            parent_tid,
            child_tid,
            tls,
        },
    )
}

/// fork(2): clone with SIGCHLD and nothing shared.
pub fn fork(tf: &TrapFrame) -> SysResult {
    clone(tf, u64::from(abi::signal::SIGCHLD), 0, 0, 0, 0)
}

/// vfork(2): the child runs in the caller's memory until it execs or
/// exits; the caller waits until then.
pub fn vfork(tf: &TrapFrame) -> SysResult {
    let flags = CLONE_VM | CLONE_VFORK | u64::from(abi::signal::SIGCHLD);
    clone(tf, flags, 0, 0, 0, 0)
}

pub fn execve(tf: &mut TrapFrame, path: u64, argv: u64, envp: u64) -> SysResult {
    crate::proc::exec::execve(tf, path, argv, envp)
}

/// execveat(2): execve of the program at `path` relative to the directory
/// open as `dirfd` (`AT_FDCWD`: the working directory), or, with
/// `AT_EMPTY_PATH` and an empty `path`, of the file open as `dirfd`
/// itself (fexecve(3); an O_PATH descriptor too). `AT_SYMLINK_NOFOLLOW`
/// makes a symbolic link at `path` ELOOP. Unknown flags are EINVAL.
pub fn execveat(
    tf: &mut TrapFrame,
    dirfd: i32,
    path: u64,
    argv: u64,
    envp: u64,
    flags: u32,
) -> SysResult {
    use abi::types::{AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW, S_IFLNK, S_IFMT};
    if flags & !(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 {
        return Err(Errno::EINVAL);
    }
    let name = uaccess::read_cstr(path, kcore::path::PATH_MAX)?;
    let full = if name.is_empty() {
        if flags & AT_EMPTY_PATH == 0 {
            return Err(Errno::ENOENT);
        }
        // The file the descriptor was opened by, by its path: one since
        // unlinked cannot be run this way (docs/syscalls.md).
        let file = super::fs::fd_path(dirfd)?;
        file.path.clone().ok_or(Errno::EACCES)?
    } else {
        let full = super::fs::resolve_at(dirfd, &name)?;
        let link = |full: &str| -> Result<bool, Errno> {
            let node = crate::fs::ramfs::lookup_nofollow(full)?;
            Ok(node.lock().mode() & S_IFMT == S_IFLNK)
        };
        if flags & AT_SYMLINK_NOFOLLOW != 0 && link(&full)? {
            return Err(Errno::ELOOP);
        }
        full
    };
    crate::proc::exec::exec(tf, full, argv, envp)
}

/// exit(2): ends the calling thread (the process, if it was the last).
pub fn exit(code: i32) -> SysResult {
    lifecycle::exit_thread(abi::types::wait_status_exited(code as u8))
}

/// exit_group(2): ends every thread of the process.
pub fn exit_group(code: i32) -> SysResult {
    lifecycle::exit_group(abi::types::wait_status_exited(code as u8))
}

/// wait4(2): the status word of a child's end, stop or continue, and its
/// resource use (for an end: with its reaped children's).
pub fn wait4(pid: i32, status: u64, options: u32, usage: u64) -> SysResult {
    let (which, options) = kcore::wait::wait4_args(pid, options)?;
    // Checked before the wait, so a bad pointer loses no child.
    check_out(status, size_of::<i32>())?;
    check_out(usage, size_of::<Rusage>())?;
    let Some(waited) = lifecycle::wait(which, options)? else {
        return Ok(0);
    };
    if status != 0 {
        uaccess::write(status, &waited.report.wait_status())?;
    }
    if usage != 0 {
        uaccess::write(usage, &super::info::rusage(waited.ticks, waited.switches))?;
    }
    Ok(waited.pid as usize)
}

/// waitid(2): the same wait told in a `siginfo_t` (si_code CLD_EXITED,
/// CLD_KILLED, CLD_STOPPED or CLD_CONTINUED, si_status the exit code or
/// the signal). With WNOHANG and nothing to report it answers 0 with a
/// zeroed siginfo (si_pid 0), as Linux does.
pub fn waitid(idtype: u32, id: i32, info: u64, options: u32, usage: u64) -> SysResult {
    // P_PIDFD: the process a pidfd names, checked after the options (as
    // Linux's kernel_waitid); a non-blocking pidfd does not wait, and
    // finds nothing with EAGAIN.
    let (idtype, id, nonblock) = if idtype == abi::types::P_PIDFD {
        kcore::wait::waitid_args(abi::types::P_ALL, 0, options)?;
        if id < 0 {
            return Err(Errno::EINVAL);
        }
        let (pid, nonblock) = super::pidfd::pid_of_pidfd(id)?;
        (abi::types::P_PID, pid as i32, nonblock)
    } else {
        (idtype, id, false)
    };
    let options = if nonblock {
        options | abi::types::WNOHANG
    } else {
        options
    };
    let (which, options) = kcore::wait::waitid_args(idtype, id, options)?;
    check_out(info, size_of::<SigInfo>())?;
    check_out(usage, size_of::<Rusage>())?;
    let waited = lifecycle::wait(which, options)?;
    if nonblock && waited.is_none() {
        return Err(Errno::EAGAIN);
    }
    if info != 0 {
        let mut out = SigInfo::new(0, 0);
        if let Some(waited) = &waited {
            let (code, status) = waited.report.code_and_status();
            out = SigInfo::new(abi::signal::SIGCHLD, code);
            out.pid_or_addr = u64::from(waited.pid) | u64::from(waited.uid) << 32;
            out.status = status;
            // In clock ticks (AT_CLKTCK a second), as times(2) counts.
            out.utime = waited.ticks.0 as i64;
            out.stime = waited.ticks.1 as i64;
        }
        uaccess::write(info, &out)?;
    }
    if usage != 0 {
        let (ticks, switches) = waited
            .as_ref()
            .map_or(Default::default(), |w| (w.ticks, w.switches));
        uaccess::write(usage, &super::info::rusage(ticks, switches))?;
    }
    Ok(0)
}

/// A user buffer of `len` bytes that a call will write, checked before it
/// acts (0: none wanted).
fn check_out(ptr: u64, len: usize) -> Result<(), Errno> {
    if ptr != 0 {
        uaccess::check_range(ptr, len, true)?;
    }
    Ok(())
}

/// getpid(2): the process's id, whichever thread asks.
pub fn getpid() -> SysResult {
    Ok(running().1 as usize)
}

/// gettid(2): the calling thread's id.
pub fn gettid() -> SysResult {
    Ok(running().0 as usize)
}

/// The caller's tid and pid, from this CPU's record: no lock, since only
/// the caller's own exec changes them.
fn running() -> (Tid, Pid) {
    let cpu = crate::arch::percpu::this_cpu();
    cpu.tid()
        .zip(cpu.pid())
        .expect("a system call runs in a thread")
}

/// set_tid_address(2): where 0 is written (and a futex waiter woken) when
/// the calling thread exits. Answers its tid.
pub fn set_tid_address(addr: u64) -> SysResult {
    Ok(current_thread(|t| {
        t.clear_child_tid = addr;
        t.tid
    }) as usize)
}

/// futex(2): FUTEX_WAIT, FUTEX_WAKE and their _BITSET forms (the rest is
/// ENOSYS, which glibc and musl survive). The timeout is relative for
/// FUTEX_WAIT and absolute for FUTEX_WAIT_BITSET, on CLOCK_MONOTONIC unless
/// FUTEX_CLOCK_REALTIME; it becomes a deadline on the monotonic clock here.
pub fn futex(addr: u64, op: u32, val: u32, timeout: u64, addr2: u64, val3: u32) -> SysResult {
    use kcore::thread::FutexOp;
    match kcore::thread::decode_futex(op, val3)? {
        FutexOp::Wait {
            bitset,
            absolute,
            realtime,
        } => {
            let deadline = if timeout == 0 {
                None
            } else {
                let nanos = nanos_of(&uaccess::read(timeout)?)?;
                let relative = if !absolute {
                    nanos
                } else if realtime {
                    nanos.saturating_sub(u128::from(crate::clock::realtime_nanos()))
                } else {
                    nanos.saturating_sub(u128::from(crate::clock::nanos_since_boot()))
                };
                Some(deadline_in(relative))
            };
            futex::wait(addr, val, bitset, deadline)
        }
        // Linux reads the count as an int: a negative one wakes nobody.
        FutexOp::Wake { bitset } => futex::wake(addr, (val as i32).max(0) as usize, bitset),
        // The requeue count comes in the timeout's register (val2).
        FutexOp::Requeue { compare } => {
            let wake = (val as i32).max(0) as usize;
            let requeue = (timeout as i32).max(0) as usize;
            let (woken, moved) = futex::requeue(addr, wake, requeue, addr2, compare)?;
            // Linux: FUTEX_REQUEUE counts the woken, CMP_REQUEUE both.
            Ok(if compare.is_some() {
                woken + moved
            } else {
                woken
            })
        }
        // The timeout, if any, is a deadline (CLOCK_REALTIME for LOCK_PI).
        FutexOp::LockPi { try_only, realtime } => {
            let deadline = if timeout == 0 || try_only {
                None
            } else {
                let nanos = nanos_of(&uaccess::read(timeout)?)?;
                let now = if realtime {
                    crate::clock::realtime_nanos()
                } else {
                    crate::clock::nanos_since_boot()
                };
                Some(deadline_in(nanos.saturating_sub(u128::from(now))))
            };
            futex::lock_pi(addr, deadline, try_only)
        }
        FutexOp::UnlockPi => futex::unlock_pi(addr),
    }
}

/// futex_waitv(2): Linux's checks in its order (flags, count, then the
/// timeout and its clock, then each entry), then `futex::wait_many`. The
/// timeout is a deadline on `clock`, CLOCK_MONOTONIC or CLOCK_REALTIME.
pub fn futex_waitv(waiters: u64, count: u32, flags: u32, timeout: u64, clock: i32) -> SysResult {
    use abi::types::{
        CLOCK_MONOTONIC, CLOCK_REALTIME, FUTEX_PRIVATE_FLAG, FUTEX_WAITV_MAX, FUTEX2_SIZE_U32,
        FutexWaitv,
    };
    if flags != 0 || count == 0 || count as usize > FUTEX_WAITV_MAX || waiters == 0 {
        return Err(Errno::EINVAL);
    }
    let deadline = if timeout == 0 {
        None
    } else {
        let now = match clock as u32 {
            CLOCK_REALTIME => crate::clock::realtime_nanos(),
            CLOCK_MONOTONIC => crate::clock::nanos_since_boot(),
            _ => return Err(Errno::EINVAL),
        };
        let nanos = nanos_of(&uaccess::read(timeout)?)?;
        Some(deadline_in(nanos.saturating_sub(u128::from(now))))
    };
    let mut words = alloc::vec::Vec::with_capacity(count as usize);
    for i in 0..u64::from(count) {
        let entry: FutexWaitv = uaccess::read(waiters.wrapping_add(i * 24))?;
        if entry.flags & !(FUTEX2_SIZE_U32 | FUTEX_PRIVATE_FLAG) != 0
            || entry.flags & FUTEX2_SIZE_U32 == 0
            || entry.reserved != 0
        {
            return Err(Errno::EINVAL);
        }
        words.push((entry.uaddr, entry.val));
    }
    futex::wait_many(&words, deadline)
}

pub fn set_robust_list(head: u64, len: u64) -> SysResult {
    futex::set_robust_list(head, len)
}

pub fn get_robust_list(tid: i32, head: u64, len: u64) -> SysResult {
    if tid < 0 {
        return Err(Errno::ESRCH);
    }
    futex::get_robust_list(tid as Tid, head, len)
}

pub fn getppid() -> SysResult {
    Ok(current(|p| p.ppid) as usize)
}

pub fn sched_yield() -> SysResult {
    sched::yield_now();
    Ok(0)
}

/// setpgid(2): moves the caller or one of its children into group
/// `pgid` (0: the target's own pid), which must exist in the target's
/// session unless it is the target's own new group. A session leader
/// stays in its group, and a child in another session cannot be moved
/// (EPERM), as POSIX says.
pub fn setpgid(pid: i32, pgid: i32) -> SysResult {
    if pid < 0 || pgid < 0 {
        return Err(Errno::EINVAL);
    }
    let (me, my_sid) = current(|p| (p.pid, p.sid));
    let target = if pid == 0 { me } else { pid as Pid };
    let group = if pgid == 0 { target } else { pgid as Pid };
    let mut table = TABLE.lock();
    let p = table.procs.get(&target).ok_or(Errno::ESRCH)?;
    if p.pid != me && p.ppid != me {
        return Err(Errno::ESRCH);
    }
    let sid = p.sid;
    let exists = group == target
        || table
            .procs
            .values()
            .any(|q| q.pgid == group && q.sid == sid && !q.is_zombie());
    if !exists || p.is_zombie() || sid == target || sid != my_sid {
        return Err(Errno::EPERM);
    }
    table.procs.get_mut(&target).expect("looked up above").pgid = group;
    Ok(0)
}

/// personality(2): sets the caller's execution domain and flags to
/// `persona`, unless it is 0xffffffff (a query); answers the old one.
pub fn personality(persona: u32) -> SysResult {
    current(|p| {
        let old = p.personality;
        if persona != u32::MAX {
            p.personality = persona;
        }
        Ok(old as usize)
    })
}

/// setsid(2): the caller leads a new session and a new group, both
/// numbered by its pid. A group leader cannot (EPERM): its group's other
/// members would be left in a session their leader is not in.
pub fn setsid() -> SysResult {
    let me = current(|p| p.pid);
    let mut table = TABLE.lock();
    if table.procs.values().any(|p| p.pgid == me) {
        return Err(Errno::EPERM);
    }
    let p = table
        .procs
        .get_mut(&me)
        .expect("the caller is in the table");
    p.sid = me;
    p.pgid = me;
    Ok(me as usize)
}

/// getsid(2): the session of process `pid` (0: the caller).
pub fn getsid(pid: i32) -> SysResult {
    of_process(pid, |p| p.sid)
}

/// getpgid(2): the group of process `pid` (0: the caller).
pub fn getpgid(pid: i32) -> SysResult {
    of_process(pid, |p| p.pgid)
}

/// `field` of process `pid` (0: the caller); ESRCH if there is none.
fn of_process(pid: i32, field: impl Fn(&crate::proc::Process) -> Pid) -> SysResult {
    if pid == 0 {
        return Ok(current(|p| field(p)) as usize);
    }
    let table = TABLE.lock();
    let p = table.procs.get(&(pid as Pid)).ok_or(Errno::ESRCH)?;
    Ok(field(p) as usize)
}

pub fn nanosleep(req: u64, rem: u64) -> SysResult {
    let want: Timespec = uaccess::read(req)?;
    sleep_for(nanos_of(&want)?, rem)
}

/// clock_nanosleep(2) on CLOCK_REALTIME or CLOCK_MONOTONIC, relative or
/// absolute (TIMER_ABSTIME).
pub fn clock_nanosleep(clock_id: u32, flags: u32, req: u64, rem: u64) -> SysResult {
    use abi::types::{
        CLOCK_BOOTTIME, CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_RAW, CLOCK_PROCESS_CPUTIME_ID,
        CLOCK_REALTIME_COARSE, CLOCK_TAI, CLOCK_THREAD_CPUTIME_ID,
    };
    // Linux's answer for the clocks that have no sleep: EOPNOTSUPP (the
    // thread's CPU time among them: it would wait for itself).
    if let CLOCK_MONOTONIC_RAW
    | CLOCK_REALTIME_COARSE
    | CLOCK_MONOTONIC_COARSE
    | CLOCK_THREAD_CPUTIME_ID = clock_id
    {
        return Err(Errno::EOPNOTSUPP);
    }
    let want = nanos_of(&uaccess::read(req)?)?;
    let now = match clock_id {
        CLOCK_REALTIME | CLOCK_TAI => crate::clock::realtime_nanos(),
        CLOCK_MONOTONIC | CLOCK_BOOTTIME => crate::clock::nanos_since_boot(),
        CLOCK_PROCESS_CPUTIME_ID => return cpu_time_sleep(want, flags & TIMER_ABSTIME != 0, rem),
        _ => return Err(Errno::EINVAL),
    };
    if flags & TIMER_ABSTIME != 0 {
        sleep_for(want.saturating_sub(u128::from(now)), 0)
    } else {
        sleep_for(want, rem)
    }
}

/// clock_nanosleep on the process's CPU time: until its threads together
/// have run `want` nanoseconds more (or, `absolute`, in all). CPU time
/// runs no faster than the wall clock, so each step sleeps what is left
/// of it and looks again. A signal ends it with EINTR, and `rem` (for a
/// relative sleep) gets the CPU time still to run.
fn cpu_time_sleep(want: u128, absolute: bool, rem: u64) -> SysResult {
    let cpu_nanos = || {
        let ticks = current(|p| p.user_ticks + p.system_ticks);
        u128::from(ticks) * 1_000_000_000 / u128::from(crate::clock::hz())
    };
    let target = if absolute { want } else { cpu_nanos() + want };
    loop {
        let left = target.saturating_sub(cpu_nanos());
        if left == 0 {
            return Ok(0);
        }
        if sched::sleep_until(deadline_in(left)).is_err() {
            if rem != 0 && !absolute {
                let left = target.saturating_sub(cpu_nanos());
                let left = Timespec {
                    tv_sec: (left / 1_000_000_000) as i64,
                    tv_nsec: (left % 1_000_000_000) as i64,
                };
                uaccess::write(rem, &left)?;
            }
            return Err(Errno::EINTR);
        }
    }
}

pub(super) fn nanos_of(t: &Timespec) -> Result<u128, Errno> {
    if t.tv_sec < 0 || !(0..1_000_000_000).contains(&t.tv_nsec) {
        return Err(Errno::EINVAL);
    }
    Ok(t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128)
}

/// The monotonic clock's reading `nanos` from now, as a sleep's deadline.
pub(super) fn deadline_in(nanos: u128) -> u64 {
    let now = crate::clock::nanos_since_boot();
    now.saturating_add(nanos.min(u128::from(u64::MAX)) as u64)
}

/// Sleeps `nanos` (the wakeup comes at the first tick after that time); a
/// signal ends it with EINTR and the time left in `rem` (if not null).
/// Never restarted, as on Linux.
fn sleep_for(nanos: u128, rem: u64) -> SysResult {
    let deadline = deadline_in(nanos);
    match sched::sleep_until(deadline) {
        Ok(()) => Ok(0),
        Err(_) => {
            if rem != 0 {
                let left = deadline.saturating_sub(crate::clock::nanos_since_boot());
                let left = Timespec {
                    tv_sec: (left / 1_000_000_000) as i64,
                    tv_nsec: (left % 1_000_000_000) as i64,
                };
                uaccess::write(rem, &left)?;
            }
            Err(Errno::EINTR)
        }
    }
}

/// umask(2): the permission bits new files and directories lose (per
/// process, inherited at fork and kept across exec).
pub fn umask(mask: u32) -> SysResult {
    Ok(current(|p| core::mem::replace(&mut p.umask, mask & 0o777)) as usize)
}

/// arch_prctl(2): the user's FS base (the thread pointer of musl and
/// glibc) and GS base, per thread. An address outside user space is EPERM,
/// as on Linux; so a user GS base can never look like a kernel one, which
/// is what arch/percpu.rs's `ensure_kernel_gs` relies on.
pub fn arch_prctl(code: u32, addr: u64) -> SysResult {
    match code {
        ARCH_SET_FS | ARCH_SET_GS => {
            if addr >= crate::mm::USER_TOP {
                return Err(Errno::EPERM);
            }
            current_thread(|t| {
                if code == ARCH_SET_FS {
                    t.fs_base = addr;
                } else {
                    t.gs_base = addr;
                }
                sched::load_user_registers(t);
            });
            Ok(0)
        }
        ARCH_GET_FS | ARCH_GET_GS => {
            let base = current_thread(|t| {
                if code == ARCH_GET_FS {
                    t.fs_base
                } else {
                    t.gs_base
                }
            });
            uaccess::write(addr, &base)?;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// prctl(2): PR_SET_NAME and PR_GET_NAME (the process's name, which `ps`
/// shows; per thread on Linux, per process here), PR_SET_PDEATHSIG and
/// PR_GET_PDEATHSIG (a signal when the parent ends), PR_SET_TIMERSLACK
/// and PR_GET_TIMERSLACK (kept per thread; 0 sets the default back),
/// PR_SET_TSC and PR_GET_TSC (whether the thread's `rdtsc` faults:
/// `percpu::set_user_tsc`); every other option is EINVAL, as Linux answers an option it does not
/// know.
pub fn prctl(option: u32, arg: u64) -> SysResult {
    use abi::types::*;
    match option {
        PR_SET_PDEATHSIG => {
            let sig = u32::try_from(arg)
                .ok()
                .filter(|&s| s < abi::signal::NSIG)
                .ok_or(Errno::EINVAL)?;
            current(|p| p.pdeath_signal = sig);
            Ok(0)
        }
        PR_GET_PDEATHSIG => {
            let sig = current(|p| p.pdeath_signal) as i32;
            uaccess::write(arg, &sig)?;
            Ok(0)
        }
        PR_SET_TIMERSLACK => {
            let slack = if arg == 0 {
                DEFAULT_TIMER_SLACK_NS
            } else {
                arg
            };
            current_thread(|t| t.timer_slack = slack);
            Ok(0)
        }
        PR_GET_TIMERSLACK => Ok(current_thread(|t| t.timer_slack) as usize),
        PR_SET_TSC => {
            let faults = match arg {
                PR_TSC_ENABLE => false,
                PR_TSC_SIGSEGV => true,
                _ => return Err(Errno::EINVAL),
            };
            current_thread(|t| {
                t.tsc_faults = faults;
                sched::load_user_registers(t);
            });
            Ok(0)
        }
        PR_GET_TSC => {
            let mode = if current_thread(|t| t.tsc_faults) {
                PR_TSC_SIGSEGV
            } else {
                PR_TSC_ENABLE
            } as i32;
            uaccess::write(arg, &mode)?;
            Ok(0)
        }
        PR_SET_NAME => {
            let mut name = uaccess::read_cstr(arg, kcore::path::PATH_MAX)?;
            let mut keep = name.len().min(TASK_COMM_LEN - 1);
            while !name.is_char_boundary(keep) {
                keep -= 1;
            }
            name.truncate(keep);
            current(|p| p.name = name);
            Ok(0)
        }
        PR_GET_NAME => {
            let mut bytes = [0u8; TASK_COMM_LEN];
            current(|p| {
                let n = p.name.len().min(TASK_COMM_LEN - 1);
                bytes[..n].copy_from_slice(&p.name.as_bytes()[..n]);
            });
            uaccess::copy_to_user(arg, &bytes)?;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}
