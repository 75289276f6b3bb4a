//! The areas of every user address space, and the pages they get on demand.
//!
//! `proc/vm.rs` decides where mappings go and records them here, one
//! `kcore::vma::Areas` per address space, named by its root table
//! (`Space::id`). They live in mm, not in the process, because the two
//! places that fill a page on demand are mm's and must not reach into the
//! process table: the user-memory path (`uaccess::check_range`, whose
//! callers may hold the table or a pipe), and `Space::write_user` into
//! another process's memory. The user page-fault handler (`proc/fault.rs`)
//! comes here too.
//!
//! Demand zero: an anonymous mmap area gets no frames when it is made. The
//! first touch of one of its pages, by the program (a page fault) or by the
//! kernel on its behalf (a system call's copy), maps a zeroed frame there
//! with the area's rights, if the area allows that access. So mapping 1 MiB
//! and freeing it costs a few bookkeeping steps, whatever its size, and
//! memory is spent only on pages that are used, as on Linux.
//!
//! Running out: mmap refuses a writable mapping larger than the frames user
//! memory may still take (Linux's default, heuristic overcommit, does the
//! same), but many smaller ones can together promise more than there is. A
//! fault that finds no frame fails with ENOMEM: a system call's copy returns
//! it, and a program's own fault kills it with SIGKILL (Linux's OOM killer
//! picks a victim; this kernel takes the process that asked).
//!
//! File pages: an area that maps a file (mmap with a descriptor, or
//! shared anonymous memory) is filled from the file's own frames
//! (fs/filedata.rs, `FileData::map_page`), not from zeroes: a shared
//! area maps the frame writable and marked `SHARED`, a private one maps it
//! copy-on-write, so its first store copies the page. A page wholly past
//! the file's end has nothing to map: `FaultError::PastEnd`, SIGBUS for the
//! program.
//!
//! Lock order: `AREAS` is a memory lock (level 5 in `sync.rs`), taken
//! before the frame table and never while calling out of mm. A fault takes
//! it to find the area, lets it go, then takes the file's pages.

use abi::Errno;
use abi::types::{PROT_NONE, PROT_WRITE};
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use kcore::vma::Kind;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::frames;
use super::paging::{COW, MapError, SHARED, Space, prot_flags};
use crate::fs::filedata::FileData;
use crate::fs::ramfs::NodeRef;
use crate::sync::{IrqLock, Rank};

/// What a file area maps: the file's pages, and the inode and name that
/// `/proc/PID/maps` shows (the path it was opened by, when it was mapped).
#[derive(Clone)]
pub struct MappedFile {
    pub data: FileData,
    pub ino: u64,
    pub name: Arc<str>,
    /// The descriptor was open for writing, so a shared mapping may be
    /// made writable (Linux's `VM_MAYWRITE`); without it mprotect refuses.
    pub may_write: bool,
    /// A disk file's node, held as Linux's area holds its file: the node
    /// keeps the page cache `data` is, its volume stays mounted (umount
    /// is EBUSY), and msync finds where the stores go (fs/ext2.rs).
    pub disk_node: Option<NodeRef>,
}

impl core::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MappedFile")
            .field("data", &self.data)
            .field("ino", &self.ino)
            .field("name", &self.name)
            .field("may_write", &self.may_write)
            .field("on_disk", &self.disk_node.is_some())
            .finish()
    }
}

impl PartialEq for MappedFile {
    /// The same file, mapped with the same powers.
    fn eq(&self, other: &MappedFile) -> bool {
        self.data == other.data && self.may_write == other.may_write
    }
}

/// The areas of one address space.
pub type Areas = kcore::vma::Areas<MappedFile>;
pub type Area = kcore::vma::Area<MappedFile>;
pub type Range = kcore::vma::Range<MappedFile>;

/// Every address space's areas, by root-table address.
static AREAS: IrqLock<BTreeMap<u64, Areas>> = IrqLock::new(Rank::Areas, BTreeMap::new());

/// A new address space `id` starts with no areas (or `from`'s, for fork).
pub fn create(id: u64, from: Option<u64>) {
    let mut all = AREAS.lock();
    let areas = from
        .and_then(|from| all.get(&from).cloned())
        .unwrap_or_default();
    all.insert(id, areas);
}

/// Address space `id` is gone.
pub fn destroy(id: u64) {
    AREAS.lock().remove(&id);
}

/// Runs `f` on the areas of address space `id` (empty for the kernel's).
/// `f` must not take a lock below memory's level.
pub fn with<R>(id: u64, f: impl FnOnce(&mut Areas) -> R) -> R {
    let mut all = AREAS.lock();
    f(all.entry(id).or_default())
}

/// The area holding `addr` in address space `id`.
pub fn find(id: u64, addr: u64) -> Option<Range> {
    AREAS.lock().get(&id)?.find(addr)
}

/// How many areas, in every address space, map the pages of `data` (a
/// System V segment's `shm_nattch`: an attachment split in two by munmap,
/// or copied by fork, counts twice, as on Linux).
pub fn mappings_of(data: &FileData) -> usize {
    let maps = |area: &kcore::vma::Area<MappedFile>| matches!(&area.kind, Kind::File(map) if map.file.data == *data);
    AREAS
        .lock()
        .values()
        .map(|areas| areas.iter().filter(|r| maps(&r.area)).count())
        .sum()
}

/// Why a page could not be filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultError {
    /// No area holds the address, or its rights forbid the access.
    NotAllowed,
    /// The page lies wholly past the end of the file the area maps.
    PastEnd,
    /// No frame is left.
    NoMemory,
}

impl From<FaultError> for Errno {
    /// What a system call's copy returns (EFAULT, as Linux, for both).
    fn from(e: FaultError) -> Errno {
        match e {
            FaultError::NotAllowed | FaultError::PastEnd => Errno::EFAULT,
            FaultError::NoMemory => Errno::ENOMEM,
        }
    }
}

/// Gives `space` the page at `addr` (not mapped now) if an area holds it
/// and allows the access: a zeroed frame, or the file's frame for a file
/// area (copied at once for a write to a private one). An address just
/// below a MAP_GROWSDOWN area first grows the area down to it
/// (`kcore::vma::Areas::grow_down`), as a stack grows.
pub fn fault_in(space: &Space, addr: u64, write: bool) -> Result<(), FaultError> {
    let area = with(space.id(), |areas| {
        areas.find(addr).or_else(|| {
            use crate::proc::vm::{MMAP_MIN, STACK_GUARD_GAP};
            areas
                .grow_down(addr, STACK_GUARD_GAP, MMAP_MIN)
                .then(|| areas.find(addr))
                .flatten()
        })
    })
    .ok_or(FaultError::NotAllowed)?
    .area;
    if area.prot == PROT_NONE || write && area.prot & PROT_WRITE == 0 {
        return Err(FaultError::NotAllowed);
    }
    let page = VirtAddr::new(super::page_down(addr));
    let flags = prot_flags(area.prot);
    let (frame, flags) = match &area.kind {
        Kind::File(map) => {
            let index = map.offset_of(page.as_u64()) / super::PAGE_SIZE;
            // Only a disk file's stores have somewhere to be written back.
            let may_store = map.shared && map.file.may_write && map.file.disk_node.is_some();
            let frame = map.file.data.map_page(index, may_store)?;
            if map.shared {
                (frame, flags | SHARED)
            } else if flags.contains(Flags::WRITABLE) {
                (frame, (flags - Flags::WRITABLE) | COW)
            } else {
                (frame, flags)
            }
        }
        // A read of a page never written maps the shared zero frame,
        // read-only; the first write copies it (break_cow below, or later).
        _ if !write && let Some(zero) = frames::share_zero_frame() => {
            if flags.contains(Flags::WRITABLE) {
                (zero, (flags - Flags::WRITABLE) | COW)
            } else {
                (zero, flags)
            }
        }
        _ => (
            frames::alloc_user_frame().map_err(|_| FaultError::NoMemory)?,
            flags,
        ),
    };
    match space.map(page, frame, flags) {
        Ok(()) => {}
        // Another thread of the process, on another CPU, filled the page
        // first: the access is retried against its page.
        Err(MapError::AlreadyMapped) => {
            frames::release(frame);
            return Ok(());
        }
        Err(_) => {
            frames::release(frame);
            return Err(FaultError::NoMemory);
        }
    }
    if write && flags.contains(COW) {
        space
            .break_cow(page.as_u64())
            .map_err(|_| FaultError::NoMemory)?;
    }
    Ok(())
}
