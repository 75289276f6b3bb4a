//! User and group ids: the get*id and set*id calls and the supplementary
//! groups. The rules are `kcore::cred`'s (tested on the host); here the
//! arguments become ids and the caller's `Cred` is replaced by a changed
//! copy, so a clone another call took earlier (an IPC check, a file
//! permission check) keeps the ids it was judged with.
//!
//! An id argument is 32 bits, -1 meaning "unchanged" where the call allows
//! it (setre*id, setres*id), as in Linux's `uid_t`.

use abi::Errno;
use alloc::sync::Arc;
use alloc::vec::Vec;
use kcore::cred::{Cred, NGROUPS_MAX};

use super::SysResult;
use crate::mm::uaccess;
use crate::proc::current;

/// Runs `f` on a copy of the caller's credentials and installs the copy if
/// `f` succeeds.
fn change(f: impl FnOnce(&mut Cred) -> Result<(), Errno>) -> SysResult {
    current(|p| {
        let mut cred = Cred::clone(&p.cred);
        f(&mut cred)?;
        p.cred = Arc::new(cred);
        Ok(0)
    })
}

/// Reads one of the caller's ids.
fn id(f: impl FnOnce(&Cred) -> u32) -> SysResult {
    Ok(current(|p| f(&p.cred)) as usize)
}

pub fn getuid() -> SysResult {
    id(|c| c.ruid)
}

pub fn geteuid() -> SysResult {
    id(|c| c.euid)
}

pub fn getgid() -> SysResult {
    id(|c| c.rgid)
}

pub fn getegid() -> SysResult {
    id(|c| c.egid)
}

pub fn setuid(uid: u32) -> SysResult {
    change(|c| c.setuid(uid))
}

pub fn setgid(gid: u32) -> SysResult {
    change(|c| c.setgid(gid))
}

pub fn setreuid(ruid: u32, euid: u32) -> SysResult {
    change(|c| c.setreuid(ruid, euid))
}

pub fn setregid(rgid: u32, egid: u32) -> SysResult {
    change(|c| c.setregid(rgid, egid))
}

pub fn setresuid(ruid: u32, euid: u32, suid: u32) -> SysResult {
    change(|c| c.setresuid(ruid, euid, suid))
}

pub fn setresgid(rgid: u32, egid: u32, sgid: u32) -> SysResult {
    change(|c| c.setresgid(rgid, egid, sgid))
}

/// getresuid(2) and getresgid(2): three ids written to three pointers,
/// each checked before any is written, so a bad one changes nothing.
fn write_three(ids: [u32; 3], out: [u64; 3]) -> SysResult {
    for addr in out {
        uaccess::check_range(addr, 4, true)?;
    }
    for (id, addr) in ids.into_iter().zip(out) {
        uaccess::write(addr, &id)?;
    }
    Ok(0)
}

pub fn getresuid(r: u64, e: u64, s: u64) -> SysResult {
    let c = crate::proc::cred();
    write_three([c.ruid, c.euid, c.suid], [r, e, s])
}

pub fn getresgid(r: u64, e: u64, s: u64) -> SysResult {
    let c = crate::proc::cred();
    write_three([c.rgid, c.egid, c.sgid], [r, e, s])
}

/// setfsuid(2): answers the old id, whether or not it changed it.
pub fn setfsuid(uid: u32) -> SysResult {
    current(|p| {
        let mut cred = Cred::clone(&p.cred);
        let old = cred.setfsuid(uid);
        p.cred = Arc::new(cred);
        Ok(old as usize)
    })
}

pub fn setfsgid(gid: u32) -> SysResult {
    current(|p| {
        let mut cred = Cred::clone(&p.cred);
        let old = cred.setfsgid(gid);
        p.cred = Arc::new(cred);
        Ok(old as usize)
    })
}

/// getgroups(2): the number of supplementary groups for size 0, else
/// them, EINVAL if `size` is too small for all.
pub fn getgroups(size: i32, list: u64) -> SysResult {
    let size = usize::try_from(size).map_err(|_| Errno::EINVAL)?;
    let cred = crate::proc::cred();
    let groups = &cred.groups;
    if size == 0 {
        return Ok(groups.len());
    }
    if size < groups.len() {
        return Err(Errno::EINVAL);
    }
    let bytes: Vec<u8> = groups.iter().flat_map(|g| g.to_le_bytes()).collect();
    uaccess::copy_to_user(list, &bytes)?;
    Ok(groups.len())
}

/// setgroups(2): EPERM unless root, then EINVAL for a size past
/// NGROUPS_MAX (or negative), then EFAULT for a list that cannot be read
/// (Linux's order).
pub fn setgroups(size: i32, list: u64) -> SysResult {
    if !crate::proc::cred().is_root() {
        return Err(Errno::EPERM);
    }
    let size = usize::try_from(size)
        .ok()
        .filter(|&n| n <= NGROUPS_MAX)
        .ok_or(Errno::EINVAL)?;
    let mut bytes = alloc::vec![0u8; size * 4];
    uaccess::copy_from_user(&mut bytes, list)?;
    let groups: Vec<u32> = bytes
        .as_chunks::<4>()
        .0
        .iter()
        .map(|b| u32::from_le_bytes(*b))
        .collect();
    change(|c| c.setgroups(&groups))
}
