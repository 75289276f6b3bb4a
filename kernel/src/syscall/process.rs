//! Process calls whose mechanism lives in `proc/`: argument checks only.
//! Process groups are here too (setpgid, getpgid): they are process state,
//! whatever signals do with them.

use abi::Errno;
use abi::types::{
    ARCH_GET_FS, ARCH_SET_FS, CLOCK_MONOTONIC, CLOCK_REALTIME, TIMER_ABSTIME, Timespec,
};

use super::SysResult;
use crate::arch::trap::TrapFrame;
use crate::mm::uaccess;
use crate::proc::{Pid, State, TABLE, current, lifecycle, sched};

pub fn fork(tf: &TrapFrame) -> SysResult {
    lifecycle::fork(tf)
}

pub fn execve(tf: &mut TrapFrame, path: u64, argv: u64, envp: u64) -> SysResult {
    crate::proc::exec::execve(tf, path, argv, envp)
}

pub fn exit(code: i32) -> SysResult {
    lifecycle::exit(abi::types::wait_status_exited(code as u8))
}

pub fn wait4(pid: i32, status: u64, options: u32) -> SysResult {
    lifecycle::wait4(pid, status, options)
}

/// getpid(2); also gettid (one thread per process) and set_tid_address,
/// which answers the caller's tid.
pub fn getpid() -> SysResult {
    Ok(current(|p| p.pid) as usize)
}

pub fn getppid() -> SysResult {
    Ok(current(|p| p.ppid) as usize)
}

pub fn sched_yield() -> SysResult {
    sched::yield_now();
    Ok(0)
}

pub fn setpgid(pid: i32, pgid: i32) -> SysResult {
    if pgid < 0 {
        return Err(Errno::EINVAL);
    }
    let me = current(|p| p.pid);
    let target = if pid == 0 { me } else { pid as Pid };
    let group = if pgid == 0 { target } else { pgid as Pid };
    let mut table = TABLE.lock();
    let exists = group == target || table.procs.values().any(|p| p.pgid == group);
    let p = table.procs.get_mut(&target).ok_or(Errno::ESRCH)?;
    if p.pid != me && p.ppid != me {
        return Err(Errno::ESRCH);
    }
    if !exists || matches!(p.state, State::Zombie { .. }) {
        return Err(Errno::EPERM);
    }
    p.pgid = group;
    Ok(0)
}

pub fn getpgid(pid: i32) -> SysResult {
    if pid == 0 {
        return Ok(current(|p| p.pgid) as usize);
    }
    let table = TABLE.lock();
    let p = table.procs.get(&(pid as Pid)).ok_or(Errno::ESRCH)?;
    Ok(p.pgid as usize)
}

pub fn nanosleep(req: u64, rem: u64) -> SysResult {
    let want: Timespec = uaccess::read(req)?;
    sleep_for(nanos_of(&want)?, rem)
}

/// clock_nanosleep(2) on CLOCK_REALTIME or CLOCK_MONOTONIC, relative or
/// absolute (TIMER_ABSTIME).
pub fn clock_nanosleep(clock_id: u32, flags: u32, req: u64, rem: u64) -> SysResult {
    let want = nanos_of(&uaccess::read(req)?)?;
    let now = match clock_id {
        CLOCK_REALTIME => super::info::realtime_nanos(),
        CLOCK_MONOTONIC => crate::clock::nanos_since_boot(),
        _ => return Err(Errno::EINVAL),
    };
    if flags & TIMER_ABSTIME != 0 {
        sleep_for(want.saturating_sub(u128::from(now)), 0)
    } else {
        sleep_for(want, rem)
    }
}

fn nanos_of(t: &Timespec) -> Result<u128, Errno> {
    if t.tv_sec < 0 || !(0..1_000_000_000).contains(&t.tv_nsec) {
        return Err(Errno::EINVAL);
    }
    Ok(t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128)
}

/// Sleeps `nanos` (rounded up to ticks); a signal ends it with EINTR and
/// the time left in `rem` (if not null). Never restarted, as on Linux.
fn sleep_for(nanos: u128, rem: u64) -> SysResult {
    let hz = u128::from(crate::clock::hz());
    let ticks = (nanos * hz).div_ceil(1_000_000_000) as u64;
    let start = crate::clock::ticks();
    match sched::sleep_ticks(ticks) {
        Ok(()) => Ok(0),
        Err(_) => {
            if rem != 0 {
                let left = ticks.saturating_sub(crate::clock::ticks() - start) as u128
                    * 1_000_000_000
                    / hz;
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

/// umask(2): recorded per process, not enforced (one user; modes are kept
/// but never checked).
pub fn umask(mask: u32) -> SysResult {
    Ok(current(|p| core::mem::replace(&mut p.umask, mask & 0o777)) as usize)
}

pub fn arch_prctl(code: u32, addr: u64) -> SysResult {
    match code {
        ARCH_SET_FS => {
            if addr >= crate::mm::USER_TOP {
                return Err(Errno::EPERM);
            }
            current(|p| p.fs_base = addr);
            x86_64::registers::model_specific::FsBase::write(x86_64::VirtAddr::new(addr));
            Ok(0)
        }
        ARCH_GET_FS => {
            uaccess::write(addr, &current(|p| p.fs_base))?;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}
