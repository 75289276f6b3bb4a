//! pidfd_open and pidfd_send_signal: a process named by a descriptor
//! rather than by its id (fs/pidfd.rs says why), and waitid's P_PIDFD.

use abi::Errno;
use abi::signal::{SI_TKILL, SigInfo};
use abi::types::{O_NONBLOCK, O_RDWR, PIDFD_NONBLOCK};
use alloc::sync::Arc;

use super::SysResult;
use super::fs::fd_file;
use crate::fs::file::{Kind, OpenFile};
use crate::fs::pidfd::Watch;
use crate::fs::procfs::Dir;
use crate::fs::ramfs::Content;
use crate::mm::uaccess;
use crate::proc::{Pid, TABLE, current};
use crate::signal::{self, Origin};

/// pidfd_open(2): a pidfd for process `pid`, close-on-exec, with
/// PIDFD_NONBLOCK its one flag (EINVAL for others); EINVAL for a pid
/// that is not positive or names a thread other than its process's
/// first, ESRCH for none. A zombie has one too (readable at once).
pub fn pidfd_open(pid: i32, flags: u32) -> SysResult {
    if flags & !PIDFD_NONBLOCK != 0 || pid <= 0 {
        return Err(Errno::EINVAL);
    }
    let pid = pid as Pid;
    let watch = {
        let mut table = TABLE.lock();
        if !table.procs.contains_key(&pid) {
            let a_thread = table.threads.contains_key(&pid);
            return Err(if a_thread {
                Errno::EINVAL
            } else {
                Errno::ESRCH
            });
        }
        let p = table.procs.get_mut(&pid).expect("looked up above");
        let made = p.watch.is_none();
        let watch = p.watch.get_or_insert_with(|| Watch::new(pid)).clone();
        (watch, made && p.is_zombie())
    };
    let (watch, ended_before) = watch;
    // It ended before it had a pidfd: readable at once.
    if ended_before {
        watch.ended();
    }
    let file = OpenFile::new(Kind::PidFd(watch), O_RDWR | (flags & O_NONBLOCK), None);
    current(|p| p.files.install(&file, true, p.fd_limit())).map(|fd| fd as usize)
}

/// The process a descriptor names, for pidfd_send_signal: a pidfd's, or
/// a `/proc/PID` directory's (Linux takes those too); EBADF for any other
/// file. The watch, for a pidfd, is what the process must still hold.
fn named_process(file: &OpenFile) -> Result<(Pid, Option<Arc<Watch>>), Errno> {
    match &file.kind {
        Kind::PidFd(watch) => Ok((watch.pid, Some(watch.clone()))),
        Kind::Node(node) => match node.lock().content {
            Content::ProcDir(Dir::Process(pid)) => Ok((pid, None)),
            _ => Err(Errno::EBADF),
        },
        _ => Err(Errno::EBADF),
    }
}

/// The pid of the process a pidfd names and whether it was opened
/// non-blocking, for waitid(P_PIDFD); EBADF for any other descriptor.
pub fn pid_of_pidfd(fd: i32) -> Result<(Pid, bool), Errno> {
    let file = fd_file(fd)?;
    match &file.kind {
        Kind::PidFd(watch) => Ok((watch.pid, file.nonblock())),
        _ => Err(Errno::EBADF),
    }
}

/// pidfd_send_signal(2): `signal` to the process `pidfd` names, with the
/// caller's siginfo if `info` is given, in Linux's order of checks: flags
/// (EINVAL), the descriptor (EBADF), the siginfo (EFAULT; EINVAL if its
/// signal is another; EPERM if it claims to come from kill or the kernel
/// and the target is not the caller), the process (ESRCH once reaped,
/// whoever has its id since), the signal (EINVAL) and the permission
/// (EPERM). A zombie takes the signal and drops it, as on Linux.
pub fn pidfd_send_signal(pidfd: i32, sig: u32, info: u64, flags: u32) -> SysResult {
    if flags != 0 {
        return Err(Errno::EINVAL);
    }
    let (pid, watch) = named_process(&*fd_file(pidfd)?)?;
    let (me, cred) = current(|p| (p.pid, p.cred.clone()));
    let origin = if info != 0 {
        let given: SigInfo = uaccess::read(info)?;
        if given.signo != sig as i32 {
            return Err(Errno::EINVAL);
        }
        if pid != me && (given.code >= 0 || given.code == SI_TKILL) {
            return Err(Errno::EPERM);
        }
        Origin::queued(&given)
    } else {
        Origin::user(me)
    };
    let mut table = TABLE.lock();
    let same = table
        .procs
        .get(&pid)
        .is_some_and(|p| match (&watch, &p.watch) {
            (Some(ours), Some(its)) => Arc::ptr_eq(ours, its),
            (Some(_), None) => false,
            (None, _) => true,
        });
    if !same {
        return Err(Errno::ESRCH);
    }
    if sig != 0 && !kcore::signal::valid(sig) {
        return Err(Errno::EINVAL);
    }
    let allowed = pid == me
        || table
            .procs
            .get(&pid)
            .is_some_and(|p| cred.may_signal(&p.cred));
    if !allowed {
        return Err(Errno::EPERM);
    }
    if sig != 0 {
        signal::send(&mut table, pid, sig, origin);
    }
    Ok(0)
}
