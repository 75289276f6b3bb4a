//! Memory calls: brk, mmap, munmap, mremap, mprotect, msync, madvise and
//! the mlock family on the current process.
//!
//! mmap's arguments become types here: the descriptor becomes the file
//! whose pages the area maps (`MappedFile`), after Linux's checks in
//! Linux's order (offset EINVAL, descriptor EBADF, then
//! `kcore::vma::check_mmap`'s: length, address, file range, mapping type,
//! rights; then the kind of file, ENODEV); proc/vm.rs then places the
//! area. Linux looks for room in the address space (ENOMEM, EEXIST) before
//! the file range and type; here that comes last, so only a call wrong in
//! both ways can tell.

use abi::Errno;
use abi::types::{
    CAP_IPC_LOCK, MAP_ANONYMOUS, MAP_PRIVATE, MAP_SHARED, MAP_TYPE, MCL_CURRENT, MCL_FUTURE,
    MCL_ONFAULT, MEMBARRIER_CMD_PRIVATE_EXPEDITED, MEMBARRIER_CMD_QUERY,
    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, MLOCK_ONFAULT, PROT_EXEC, PROT_READ, PROT_WRITE,
    RLIMIT_MEMLOCK,
};
use alloc::sync::Arc;

use super::SysResult;
use super::fs::fd_file;
use crate::fs::dev::Device;
use crate::fs::file::{Kind, OpenFile};
use crate::fs::filedata::FileData;
use crate::fs::ramfs::{self, Content};
use crate::mm::areas::MappedFile;
use crate::mm::{PAGE_SIZE, USER_TOP};
use crate::proc::current;
use crate::proc::vm::UserMemory;
use kcore::rlimit::Limits;
use kcore::vma::{OpenedFor, check_mmap};

/// Runs `f` on the caller's memory and resource limits.
fn with_memory<R>(f: impl FnOnce(&mut UserMemory, &Limits) -> R) -> R {
    current(|p| {
        let mem = p.mem.as_mut().expect("a running process has memory");
        f(mem, &p.limits)
    })
}

/// Linux's brk returns the (possibly unchanged) break, never an error.
pub fn brk(addr: u64) -> SysResult {
    Ok(with_memory(|m, l| m.set_brk(addr, l)) as usize)
}

pub fn mmap(addr: u64, len: u64, prot: u32, flags: u32, fd: i32, offset: u64) -> SysResult {
    if !offset.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    let opened = if flags & MAP_ANONYMOUS == 0 {
        Some(fd_file(fd)?)
    } else {
        None
    };
    let opened_for = opened.as_ref().map(|o| OpenedFor {
        read: o.readable(),
        write: o.writable(),
    });
    let shared = check_mmap(addr, len, flags, prot, offset, opened_for, USER_TOP)?;
    let file = match opened {
        Some(opened) => mapping_of(&opened)?,
        None => None,
    };
    // Shared anonymous memory is a file with no name, as on Linux, so that
    // fork's child shares its pages instead of copying them. One made from
    // /dev/zero opened read-only may never be written (mprotect: EACCES).
    let file = match file {
        None if shared => Some((
            MappedFile {
                data: FileData::sized(len)?,
                ino: ramfs::new_ino(),
                name: Arc::from("/dev/zero (deleted)"),
                may_write: opened_for.is_none_or(|o| o.write),
                disk_node: None,
            },
            0,
        )),
        None => None,
        Some(file) => Some((file, offset)),
    };
    let flags = if shared {
        flags & !MAP_TYPE | MAP_SHARED
    } else {
        flags & !MAP_TYPE | MAP_PRIVATE
    };
    let prot = prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
    with_memory(|m, l| m.mmap(addr, len, prot, flags, file, l)).map(|a| a as usize)
}

/// The file an mmap of `opened` maps: a regular file's pages, or None for
/// `/dev/zero` (anonymous memory, as on Linux). ENODEV for what has no
/// pages to map (pipes, directories, other devices, /proc).
fn mapping_of(opened: &OpenFile) -> Result<Option<MappedFile>, Errno> {
    let Kind::Node(node) = &opened.kind else {
        return Err(Errno::ENODEV);
    };
    if crate::fs::file::is_disk_file(node) {
        return disk_mapping(node, opened).map(Some);
    }
    let node = node.lock();
    match &node.content {
        Content::File(data) => Ok(Some(MappedFile {
            data: data.clone(),
            ino: node.ino,
            name: Arc::from(opened.path.as_deref().unwrap_or("")),
            may_write: opened.writable(),
            disk_node: None,
        })),
        Content::Device(Device::Zero) => Ok(None),
        _ => Err(Errno::ENODEV),
    }
}

/// A mapping of a file on a mounted disk: its page cache
/// (fs/ext2.rs, `ext2::pages`), and its node, which the mapping holds.
fn disk_mapping(node: &ramfs::NodeRef, opened: &OpenFile) -> Result<MappedFile, Errno> {
    Ok(MappedFile {
        data: crate::fs::ext2::pages(node)?,
        ino: node.lock().ino,
        name: Arc::from(opened.path.as_deref().unwrap_or("")),
        may_write: opened.writable(),
        disk_node: Some(node.clone()),
    })
}

pub fn madvise(addr: u64, len: u64, advice: u32) -> SysResult {
    with_memory(|m, _| m.madvise(addr, len, advice)).map(|()| 0)
}

/// membarrier(2), the private expedited form that musl's and glibc's
/// dynamic loaders ask for: once registered, a call returns only when
/// every CPU running a thread of this process has passed a memory
/// barrier. The shootdown that a TLB flush uses reaches exactly those CPUs
/// and waits for each to answer, and an interrupt and its `iretq` order
/// memory on x86; a thread not running passes the barrier of the context
/// switch before it runs again. The global commands are not offered
/// (QUERY leaves them out): EINVAL, as on a Linux built without them.
pub fn membarrier(cmd: u32, flags: u32) -> SysResult {
    const OFFERED: u32 =
        MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
    if flags != 0 {
        return Err(Errno::EINVAL);
    }
    match cmd {
        MEMBARRIER_CMD_QUERY => Ok(OFFERED as usize),
        MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED => with_memory(|m, _| {
            m.membarrier_registered = true;
            Ok(0)
        }),
        MEMBARRIER_CMD_PRIVATE_EXPEDITED => with_memory(|m, _| {
            if !m.membarrier_registered {
                return Err(Errno::EPERM);
            }
            m.space.flush_others();
            Ok(0)
        }),
        _ => Err(Errno::EINVAL),
    }
}

/// mlock(2), and mlock2(2) with its one flag, MLOCK_ONFAULT.
pub fn mlock2(addr: u64, len: u64, flags: u32) -> SysResult {
    if flags & !MLOCK_ONFAULT != 0 {
        return Err(Errno::EINVAL);
    }
    let on_fault = flags & MLOCK_ONFAULT != 0;
    current(|p| {
        let may_lock = lock_limit(p);
        let mem = p.mem.as_ref().expect("a running process has memory");
        mem.mlock(addr, len, on_fault, may_lock)
    })
    .map(|()| 0)
}

/// munlock(2): the range must be mapped, as for mlock; nothing was held
/// that could be let go (there is no swap).
pub fn munlock(addr: u64, len: u64) -> SysResult {
    with_memory(|m, _| m.mlock(addr, len, true, u64::MAX)).map(|()| 0)
}

/// mlockall(2): MCL_CURRENT fills every page of every area now (unless
/// MCL_ONFAULT); MCL_FUTURE asks the same of mappings to come, which the
/// lack of swap keeps already. MCL_ONFAULT alone, or no flag, is EINVAL.
pub fn mlockall(flags: u32) -> SysResult {
    if flags == 0 || flags & !(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0 || flags == MCL_ONFAULT
    {
        return Err(Errno::EINVAL);
    }
    current(|p| {
        let may_lock = lock_limit(p);
        let mem = p.mem.as_ref().expect("a running process has memory");
        if may_lock == 0 {
            return Err(Errno::EPERM);
        }
        if flags & MCL_CURRENT == 0 {
            return Ok(());
        }
        let ranges = mem.ranges();
        let total: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        if total > may_lock {
            return Err(Errno::ENOMEM);
        }
        let on_fault = flags & MCL_ONFAULT != 0;
        for range in ranges {
            mem.mlock(range.start, range.end - range.start, on_fault, u64::MAX)?;
        }
        Ok(())
    })
    .map(|()| 0)
}

/// The bytes process `p` may lock: all with CAP_IPC_LOCK, else its
/// RLIMIT_MEMLOCK.
fn lock_limit(p: &crate::proc::Process) -> u64 {
    if p.cred.capable(CAP_IPC_LOCK) {
        u64::MAX
    } else {
        p.limits.cur(RLIMIT_MEMLOCK)
    }
}

/// msync(2): with MS_SYNC, the disk files the range maps shared are
/// synced (their stores written back, fs/ext2.rs), asleep on the disk
/// with no lock held.
pub fn msync(addr: u64, len: u64, flags: u32) -> SysResult {
    let disk_files = with_memory(|m, _| m.msync(addr, len, flags))?;
    for node in disk_files {
        crate::fs::ext2::fsync(&node)?;
    }
    Ok(0)
}

pub fn munmap(addr: u64, len: u64) -> SysResult {
    with_memory(|m, _| m.munmap(addr, len)).map(|()| 0)
}

pub fn mremap(old: u64, old_len: u64, new_len: u64, flags: u32, new_addr: u64) -> SysResult {
    with_memory(|m, l| m.mremap(old, old_len, new_len, flags, new_addr, l)).map(|a| a as usize)
}

pub fn mprotect(addr: u64, len: u64, prot: u32) -> SysResult {
    with_memory(|m, _| m.mprotect(addr, len, prot)).map(|()| 0)
}
