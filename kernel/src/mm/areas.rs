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
//! Lock order: `AREAS` is a memory lock (level 5 in `sync.rs`), taken
//! before the frame table and never while calling out of mm.

use abi::Errno;
use abi::types::{PROT_NONE, PROT_WRITE};
use alloc::collections::BTreeMap;
use kcore::vma::{Areas, Range};
use x86_64::VirtAddr;

use super::frames;
use super::paging::{Space, prot_flags};
use crate::sync::IrqLock;

/// Every address space's areas, by root-table address.
static AREAS: IrqLock<BTreeMap<u64, Areas>> = IrqLock::new(BTreeMap::new());

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

/// Gives `space` a zeroed page at `addr` (not mapped now) if an area holds
/// it and allows the access: EFAULT if none does, ENOMEM if no frame is
/// left.
pub fn fault_in(space: &Space, addr: u64, write: bool) -> Result<(), Errno> {
    let area = find(space.id(), addr).ok_or(Errno::EFAULT)?.area;
    if area.prot == PROT_NONE || write && area.prot & PROT_WRITE == 0 {
        return Err(Errno::EFAULT);
    }
    let frame = frames::alloc_user_frame()?;
    let page = VirtAddr::new(super::page_down(addr));
    space.map(page, frame, prot_flags(area.prot)).map_err(|_| {
        frames::release(frame);
        Errno::ENOMEM
    })
}
