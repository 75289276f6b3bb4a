//! System V IPC calls: msgget, msgsnd, msgrcv, msgctl, semget, semop,
//! semtimedop, semctl, shmget, shmat, shmdt, shmctl.
//!
//! Each turns its integers into what they mean (a command into an
//! operation, a `msgtyp` into a `Pick`, a timeout into a deadline) and
//! copies user memory in before and out after, in Linux's order of checks
//! (`ipc/msg.c`, `ipc/sem.c`, `ipc/shm.c`), so the same bad call fails the
//! same way; the objects and the waiting are kernel/src/ipc's. A `*ctl`
//! command this kernel does not know, or one with `IPC_64` (0x100) added,
//! is EINVAL, as on Linux x86_64, where that bit is never stripped.

use abi::Errno;
use abi::ipc::*;
use abi::types::Timespec;
use alloc::vec::Vec;
use kcore::ipc::{Pick, Which};

use super::SysResult;
use super::process::{deadline_in, nanos_of};
use crate::ipc::{msg, sem, shm};
use crate::mm::uaccess;

pub fn msgget(key: i32, flags: u32) -> SysResult {
    msg::get(key, flags).map(|id| id as usize)
}

/// `msgp` points at a `long` type and then the text.
pub fn msgsnd(id: i32, msgp: u64, size: u64, flags: u32) -> SysResult {
    let mtype: i64 = uaccess::read(msgp)?;
    if size > MSGMAX as u64 || id < 0 || mtype < 1 {
        return Err(Errno::EINVAL);
    }
    let mut text = alloc::vec![0u8; size as usize];
    uaccess::copy_from_user(&mut text, msgp.wrapping_add(8))?;
    msg::send(id, mtype, text, flags).map(|()| 0)
}

pub fn msgrcv(id: i32, msgp: u64, size: u64, msgtyp: i64, flags: u32) -> SysResult {
    if id < 0 || size > i64::MAX as u64 {
        return Err(Errno::EINVAL);
    }
    if flags & MSG_COPY != 0 && (flags & MSG_EXCEPT != 0 || flags & IPC_NOWAIT == 0) {
        return Err(Errno::EINVAL);
    }
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    msg::receive(id, size, Pick::new(msgtyp, flags), flags, |mtype, text| {
        uaccess::write(msgp, &mtype)?;
        uaccess::copy_to_user(msgp.wrapping_add(8), text)
    })
}

pub fn msgctl(id: i32, cmd: i32, buf: u64) -> SysResult {
    if id < 0 || cmd < 0 {
        return Err(Errno::EINVAL);
    }
    match cmd {
        IPC_INFO | MSG_INFO => {
            let (info, highest) = msg::info(cmd == MSG_INFO);
            uaccess::write(buf, &info)?;
            Ok(highest)
        }
        IPC_STAT | MSG_STAT | MSG_STAT_ANY => {
            let (id, ds) = msg::stat(which(cmd == IPC_STAT, id, cmd != MSG_STAT_ANY))?;
            uaccess::write(buf, &ds)?;
            Ok(if cmd == IPC_STAT { 0 } else { id as usize })
        }
        IPC_SET => {
            let ds: MsqidDs = uaccess::read(buf)?;
            msg::set(id, &ds).map(|()| 0)
        }
        IPC_RMID => msg::remove(id).map(|()| 0),
        _ => Err(Errno::EINVAL),
    }
}

/// IPC_STAT names an object by id; the `*_STAT` commands by slot.
fn which(by_id: bool, id: i32, check: bool) -> Which {
    if by_id {
        Which::Id(id)
    } else {
        Which::Index { index: id, check }
    }
}

pub fn semget(key: i32, nsems: i32, flags: u32) -> SysResult {
    sem::get(key, nsems, flags).map(|id| id as usize)
}

pub fn semtimedop(id: i32, sops: u64, nsops: u64, timeout: u64) -> SysResult {
    let timeout: Option<Timespec> = match timeout {
        0 => None,
        at => Some(uaccess::read(at)?),
    };
    if nsops < 1 || id < 0 {
        return Err(Errno::EINVAL);
    }
    if nsops > SEMOPM as u64 {
        return Err(Errno::E2BIG);
    }
    let size = size_of::<SemBuf>() as u64;
    let ops = (0..nsops)
        .map(|i| uaccess::read::<SemBuf>(sops + i * size))
        .collect::<Result<Vec<_>, _>>()?;
    let deadline = match timeout {
        Some(t) => Some(deadline_in(nanos_of(&t)?)),
        None => None,
    };
    sem::op(id, &ops, deadline).map(|()| 0)
}

/// `arg` is `union semun`, passed by value: an `int` for SETVAL, else a
/// pointer.
pub fn semctl(id: i32, num: i32, cmd: i32, arg: u64) -> SysResult {
    if id < 0 {
        return Err(Errno::EINVAL);
    }
    match cmd {
        IPC_INFO | SEM_INFO => {
            let (info, highest) = sem::info(cmd == SEM_INFO);
            uaccess::write(arg, &info)?;
            Ok(highest)
        }
        IPC_STAT | SEM_STAT | SEM_STAT_ANY => {
            let (id, ds) = sem::stat(which(cmd == IPC_STAT, id, cmd != SEM_STAT_ANY))?;
            uaccess::write(arg, &ds)?;
            Ok(if cmd == IPC_STAT { 0 } else { id as usize })
        }
        GETVAL => sem::query(id, num, sem::Query::Value),
        GETPID => sem::query(id, num, sem::Query::Pid),
        GETNCNT => sem::query(id, num, sem::Query::WaitingToDecrease),
        GETZCNT => sem::query(id, num, sem::Query::WaitingForZero),
        GETALL => {
            let values = sem::get_all(id)?;
            for (i, value) in values.iter().enumerate() {
                uaccess::write(arg + 2 * i as u64, value)?;
            }
            Ok(0)
        }
        SETVAL => sem::set_values(id, Some(num), &[arg as i32]).map(|()| 0),
        SETALL => {
            let count = sem::count(id)?;
            let values = (0..count as u64)
                .map(|i| uaccess::read::<u16>(arg + 2 * i).map(i32::from))
                .collect::<Result<Vec<_>, _>>()?;
            sem::set_values(id, None, &values).map(|()| 0)
        }
        IPC_SET => {
            let ds: SemidDs = uaccess::read(arg)?;
            sem::set(id, &ds).map(|()| 0)
        }
        IPC_RMID => sem::remove(id).map(|()| 0),
        _ => Err(Errno::EINVAL),
    }
}

pub fn shmget(key: i32, size: u64, flags: u32) -> SysResult {
    shm::get(key, size, flags).map(|id| id as usize)
}

pub fn shmat(id: i32, addr: u64, flags: u32) -> SysResult {
    if id < 0 {
        return Err(Errno::EINVAL);
    }
    shm::attach(id, addr, flags).map(|a| a as usize)
}

pub fn shmdt(addr: u64) -> SysResult {
    shm::detach(addr).map(|()| 0)
}

pub fn shmctl(id: i32, cmd: i32, buf: u64) -> SysResult {
    if id < 0 || cmd < 0 {
        return Err(Errno::EINVAL);
    }
    match cmd {
        IPC_INFO => {
            let (info, highest) = shm::info();
            uaccess::write(buf, &info)?;
            Ok(highest)
        }
        SHM_INFO => {
            let (usage, highest) = shm::usage();
            uaccess::write(buf, &usage)?;
            Ok(highest)
        }
        IPC_STAT | SHM_STAT | SHM_STAT_ANY => {
            let (id, ds) = shm::stat(which(cmd == IPC_STAT, id, cmd != SHM_STAT_ANY))?;
            uaccess::write(buf, &ds)?;
            Ok(if cmd == IPC_STAT { 0 } else { id as usize })
        }
        IPC_SET => {
            let ds: ShmidDs = uaccess::read(buf)?;
            shm::set(id, &ds).map(|()| 0)
        }
        IPC_RMID => shm::remove(id).map(|()| 0),
        SHM_LOCK | SHM_UNLOCK => shm::lock_in_memory(id, cmd == SHM_LOCK).map(|()| 0),
        _ => Err(Errno::EINVAL),
    }
}
