//! User and group ids: the get*id and set*id calls and the supplementary
//! groups. The rules are `kcore::cred`'s (tested on the host); here the
//! arguments become ids and the caller's `Cred` is replaced by a changed
//! copy, so a clone another call took earlier (an IPC check, a file
//! permission check) keeps the ids it was judged with.
//!
//! An id argument is 32 bits, -1 meaning "unchanged" where the call allows
//! it (setre*id, setres*id), as in Linux's `uid_t`.
//!
//! capget(2) and capset(2) read and replace the capability sets; how ids
//! and exec change them is `kcore::cred`'s too.

use abi::Errno;
use abi::types::{
    CapData, CapHeader, LINUX_CAPABILITY_VERSION_1, LINUX_CAPABILITY_VERSION_2,
    LINUX_CAPABILITY_VERSION_3,
};
use alloc::sync::Arc;
use alloc::vec::Vec;
use kcore::cred::{ALL_CAPS, Caps, Cred, NGROUPS_MAX};

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

/// capget(2) and capset(2)'s header: the number of 32-bit data structs
/// the version carries, or, for a version this kernel does not know,
/// EINVAL after writing the version it prefers into the header (how a
/// library asks which to use).
fn cap_header(header: u64) -> Result<(CapHeader, usize), Errno> {
    let h: CapHeader = uaccess::read(header)?;
    match h.version {
        LINUX_CAPABILITY_VERSION_1 => Ok((h, 1)),
        LINUX_CAPABILITY_VERSION_2 | LINUX_CAPABILITY_VERSION_3 => Ok((h, 2)),
        _ => {
            let preferred = CapHeader {
                version: LINUX_CAPABILITY_VERSION_3,
                ..h
            };
            uaccess::write(header, &preferred)?;
            Err(Errno::EINVAL)
        }
    }
}

/// capget(2): the capability sets of process `pid` (0: the caller), low
/// word first. A null `data` only checks the header (0 even for an
/// unknown version, which the header then names).
pub fn capget(header: u64, data: u64) -> SysResult {
    let checked = cap_header(header);
    if data == 0 {
        return match checked {
            Ok(_) | Err(Errno::EINVAL) => Ok(0),
            Err(e) => Err(e),
        };
    }
    let (h, words) = checked?;
    if h.pid < 0 {
        return Err(Errno::EINVAL);
    }
    let caps = if h.pid == 0 {
        crate::proc::cred().caps
    } else {
        let table = crate::proc::TABLE.lock();
        table
            .procs
            .get(&(h.pid as u32))
            .filter(|p| !p.is_zombie())
            .map(|p| p.cred.caps)
            .ok_or(Errno::ESRCH)?
    };
    let word = |set: u64, i: usize| (set >> (32 * i)) as u32;
    for i in 0..words {
        let d = CapData {
            effective: word(caps.effective, i),
            permitted: word(caps.permitted, i),
            inheritable: word(caps.inheritable, i),
        };
        uaccess::write(data + (i * core::mem::size_of::<CapData>()) as u64, &d)?;
    }
    Ok(0)
}

/// capset(2): replaces the caller's own capability sets (another
/// process's is EPERM, as on Linux since 2.6.25), within the rule of
/// `kcore::cred::Caps::may_become`. Bits past the last capability are
/// dropped.
pub fn capset(header: u64, data: u64) -> SysResult {
    let (h, words) = cap_header(header)?;
    let me = current(|p| p.pid);
    if h.pid != 0 && h.pid as u32 != me {
        return Err(Errno::EPERM);
    }
    let mut sets = [0u64; 3];
    for i in 0..words {
        let d: CapData = uaccess::read(data + (i * core::mem::size_of::<CapData>()) as u64)?;
        for (set, half) in sets
            .iter_mut()
            .zip([d.effective, d.permitted, d.inheritable])
        {
            *set |= u64::from(half) << (32 * i);
        }
    }
    let [effective, permitted, inheritable] = sets.map(|s| s & ALL_CAPS);
    let new = Caps {
        effective,
        permitted,
        inheritable,
    };
    change(|cred| {
        cred.caps.may_become(&new)?;
        cred.caps = new;
        Ok(())
    })
}
