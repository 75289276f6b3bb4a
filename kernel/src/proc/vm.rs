//! A process's user memory: program image, heap (brk), mmap areas, stack.
//!
//! Layout of the lower half:
//!
//!     0x0000_0000_0040_0000  program text and data (where the ELF says)
//!     brk_start ..  brk      the heap, grown by brk(2) right after the image
//!          ...               room for the heap to grow (BRK_MAX)
//!     .. MMAP_TOP            mmap areas, placed top-down in the highest gap
//!                            (below it, in the heap's room, when it is full)
//!          ...               free, one unmapped guard page
//!     STACK_TOP - RLIMIT_STACK .. STACK_TOP   the user stack
//!
//! Those are the places with randomisation off. With it on (the default,
//! `kcore::aslr`), exec moves the stack's top down, the mmap region's top
//! (`UserMemory::mmap_top`) down, a position-independent program's base up
//! and, at level 2, the heap's start up, by a random number of pages each.
//!
//! Where things are is kept twice, for two readers. The areas
//! (`kcore::vma::Areas`, kept by mm/areas.rs for each address space) are
//! the kernel's list of mapped ranges, with their rights and purpose: mmap
//! asks them for a free range (so what munmap gave back is handed out
//! again), munmap and mprotect cut them, MAP_FIXED replaces and
//! MAP_FIXED_NOREPLACE refuses by them. The page tables are the MMU's: they
//! hold the pages that are there.
//!
//! The rule between the two: the program's file pages and the top 256 KiB
//! of the stack are mapped when made; the program's .bss, the heap, an
//! mmap area and the rest of the stack get their pages on demand, a zeroed frame (or, for a file
//! area, the file's own frame) at the first touch (mm/areas.rs), so a
//! mapping costs nothing until used and a 64 TiB `PROT_NONE` reservation
//! costs nothing at all. A page that
//! was filled and then closed with `PROT_NONE` keeps its frame, present but
//! not user-accessible, so its contents survive. Fork shares every present
//! page copy-on-write and copies the areas. Copy-on-write and frame policy are mm's: rights change only
//! through `Space::protect`, which keeps the rule that a frame with two
//! users is never mapped writable, `Space::break_cow` gives a writer its own
//! copy (mm/paging.rs, `COW`), and user allocations leave `KERNEL_RESERVE`
//! frames free (mm/frames.rs), so a process that eats all memory gets ENOMEM
//! while the kernel can still grow its heap. This file decides where things
//! go in the address space; mm decides what a page may do.
//!
//! Resource limits are checked here, where memory is promised: mmap, brk
//! and mremap refuse with ENOMEM a growth that would take the areas past
//! `RLIMIT_AS`, or the data areas (writable, not the stack) past
//! `RLIMIT_DATA`, as Linux's `may_expand_vm`. The areas keep both sums
//! (`kcore::vma::Usage`), so the check costs nothing.

use abi::Errno;
use abi::types::{
    MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_GROWSDOWN, MAP_PRIVATE, MAP_SHARED, MREMAP_FIXED,
    MREMAP_MAYMOVE, PROT_EXEC, PROT_READ, PROT_WRITE, RLIMIT_STACK,
};
use kcore::rlimit::Limits;
use kcore::vma::{FileMap, Kind, Usage};
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use crate::fs::filedata::ExecHold;
use crate::fs::ramfs::NodeRef;
use crate::mm::areas::{self, Area, Areas, MappedFile};
use crate::mm::frames::{self, KERNEL_RESERVE, alloc_user_frame};
use crate::mm::paging::{AddressSpace, Space, prot_flags};
use crate::mm::{PAGE_SIZE, USER_TOP, page_down, page_up};
use alloc::sync::Arc;
use alloc::vec::Vec;

pub const STACK_TOP: u64 = 0x0000_7fff_ffff_f000;
/// The largest stack exec makes, for an unlimited `RLIMIT_STACK`: 256 GiB,
/// a quarter of the room between the mmap region and the stack.
pub const STACK_MAX: u64 = 1 << 38;
const _: () = assert!(STACK_MAX <= (STACK_TOP - MMAP_TOP) / 2);
// Moved as far as randomisation moves them, the largest stack still ends
// above the mmap region, and the mmap region above a position-independent
// program's image and heap room (`BRK_MAX`), 64 GiB of them together.
const _: () = assert!(STACK_MAX + kcore::aslr::STACK_MAX_SHIFT < STACK_TOP - MMAP_TOP);
const _: () = assert!(
    kcore::elf::DYN_BASE + kcore::aslr::PIE_MAX_SHIFT + (1 << 36) + kcore::aslr::BRK_MAX_SHIFT
        < MMAP_TOP - kcore::aslr::MMAP_MAX_SHIFT
);
pub const MMAP_TOP: u64 = 0x0000_7f00_0000_0000;
/// Most the heap may grow past its start.
pub const BRK_MAX: u64 = 1 << 32;
/// No mapping below this (Linux's `vm.mmap_min_addr`): a null pointer plus
/// a small offset always faults.
pub const MMAP_MIN: u64 = 0x1_0000;
/// How close a MAP_GROWSDOWN area may grow to the mapping below it
/// (Linux's `stack_guard_gap`, 256 pages).
pub const STACK_GUARD_GAP: u64 = 256 * PAGE_SIZE;

pub struct UserMemory {
    pub space: AddressSpace,
    pub brk_start: u64,
    pub brk: u64,
    /// The top of the mmap region: `MMAP_TOP`, lowered by exec's
    /// randomisation (`kcore::aslr`) when it is on.
    pub mmap_top: u64,
    /// membarrier(2)'s MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED was
    /// called: the private command may be used (Linux keeps it per
    /// address space too, so exec forgets it and fork keeps it).
    pub membarrier_registered: bool,
    /// The program file this memory was made from by exec, kept busy for
    /// writers while the memory lives (fs/filedata.rs: `ExecHold`).
    pub program: Option<ExecHold>,
}

impl UserMemory {
    pub fn new(space: AddressSpace, brk_start: u64, mmap_top: u64) -> UserMemory {
        UserMemory {
            space,
            brk_start,
            brk: brk_start,
            mmap_top,
            membarrier_registered: false,
            program: None,
        }
    }

    /// Runs `f` on this address space's areas (no other lock inside).
    fn areas<R>(&self, f: impl FnOnce(&mut Areas) -> R) -> R {
        areas::with(self.space.id(), f)
    }

    /// The areas, lowest first (/proc/PID/maps).
    pub fn ranges(&self) -> alloc::vec::Vec<areas::Range> {
        self.areas(|a| a.iter().collect())
    }

    /// Bytes in areas (the virtual size) and pages present in the page
    /// tables (the resident set): the walk costs what is mapped, not the
    /// size of the areas.
    pub fn sizes(&self) -> (u64, u64) {
        let (mut bytes, mut pages) = (0, 0);
        for range in self.ranges() {
            bytes += range.end - range.start;
            let mut at = range.start;
            while let Some(page) = self.space.next_mapped(at, range.end) {
                pages += 1;
                at = page + PAGE_SIZE;
            }
        }
        (bytes, pages)
    }

    /// Records `[start, end)` as an area of `kind` with rights `prot`,
    /// replacing what was recorded there (exec: a later ELF segment that
    /// shares a page with an earlier one wins, as its page flags do). The
    /// caller maps the pages.
    pub fn record(&mut self, start: u64, end: u64, prot: u32, kind: Kind<MappedFile>) {
        self.areas(|a| {
            a.remove(start, end);
            a.insert(start, end, Area::new(prot, kind));
        });
    }

    /// ENOMEM unless the areas may grow by `more` within `RLIMIT_AS` and
    /// `RLIMIT_DATA`.
    fn may_expand(&self, limits: &Limits, more: Usage) -> Result<(), Errno> {
        use abi::types::{RLIMIT_AS, RLIMIT_DATA};
        let used = self.areas(|a| a.usage());
        if limits.allows(RLIMIT_AS, used.total, more.total)
            && limits.allows(RLIMIT_DATA, used.data, more.data)
        {
            Ok(())
        } else {
            Err(Errno::ENOMEM)
        }
    }

    /// Where the mmap region starts: above the heap's room, which mmap
    /// takes only when the region is full (`find_room`).
    fn mmap_low(&self) -> u64 {
        self.brk_start + BRK_MAX
    }

    /// Maps zeroed pages over `[start, end)`; on failure maps nothing. A
    /// range larger than the frames user memory may still take is ENOMEM at
    /// once, not after filling memory page by page.
    pub fn map_zeroed(&self, start: u64, end: u64, flags: Flags) -> Result<(), Errno> {
        let pages = end.saturating_sub(start) / PAGE_SIZE;
        if pages > frames::free_count().saturating_sub(KERNEL_RESERVE) as u64 {
            return Err(Errno::ENOMEM);
        }
        for page in (start..end).step_by(PAGE_SIZE as usize) {
            let mapped = alloc_user_frame().and_then(|frame| {
                self.space
                    .map(VirtAddr::new(page), frame, flags)
                    .map_err(|_| {
                        frames::release(frame);
                        Errno::ENOMEM
                    })
            });
            if let Err(e) = mapped {
                self.unmap_range(start, page);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Unmaps every mapped page in `[start, end)`, visiting only those
    /// (a range may be as large as the user half).
    ///
    /// The frames are released only after one shootdown for the whole
    /// range (`Space::unmap_batch`): until every CPU has flushed, another
    /// thread of the process may still reach them through its TLB.
    pub fn unmap_range(&self, start: u64, end: u64) {
        unmap_pages(&self.space, start, end);
    }

    /// brk(2): moves the break to `new` if it can (within the memory left
    /// and the limits); returns the break.
    pub fn set_brk(&mut self, new: u64, limits: &Limits) -> u64 {
        if new < self.brk_start || new > self.brk_start + BRK_MAX {
            return self.brk;
        }
        // Both are at most brk_start + BRK_MAX (checked above): no overflow.
        let up = |a: u64| page_up(a).unwrap_or(a);
        let (old_end, new_end) = (up(self.brk), up(new));
        if new_end > old_end {
            let heap = Area::new(PROT_READ | PROT_WRITE, Kind::Heap);
            // The heap may not grow over a mapping placed above it.
            if self.areas(|a| a.overlaps(old_end, new_end))
                || self
                    .may_expand(limits, Usage::of(&heap, new_end - old_end))
                    .is_err()
            {
                return self.brk;
            }
            // Only the area is made: its pages come at the first touch
            // (mm/areas.rs), as an mmap area's do. A growth larger than
            // the frames user memory may still take is refused now, as
            // Linux's heuristic overcommit refuses it.
            let pages = (new_end - old_end) / PAGE_SIZE;
            if pages > frames::free_count().saturating_sub(KERNEL_RESERVE) as u64 {
                return self.brk;
            }
            self.areas(|a| a.insert(old_end, new_end, heap));
        } else if new_end < old_end {
            self.areas(|a| a.remove(new_end, old_end));
            self.unmap_range(new_end, old_end);
        }
        self.brk = new;
        self.brk
    }

    /// mmap(2) of anonymous memory (`file` None) or of `file` from byte
    /// `offset` (page-aligned; shared anonymous memory comes here as a file
    /// with no name, made by the caller, as Linux's). Only the area is
    /// made; its pages come on demand (mm/areas.rs). The caller has made
    /// `kcore::vma::check_mmap`'s checks: `len` is not zero, `flags` say
    /// MAP_PRIVATE or MAP_SHARED, `prot` holds only PROT_READ, PROT_WRITE
    /// and PROT_EXEC.
    pub fn mmap(
        &mut self,
        addr: u64,
        len: u64,
        prot: u32,
        flags: u32,
        file: Option<(MappedFile, u64)>,
        limits: &Limits,
    ) -> Result<u64, Errno> {
        debug_assert!(len != 0 && flags & (MAP_PRIVATE | MAP_SHARED) != 0);
        debug_assert!(prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) == 0);
        let len = page_up(len)
            .filter(|&len| len <= USER_TOP)
            .ok_or(Errno::ENOMEM)?;
        // Pages come on demand, but a writable mapping larger than all the
        // memory left is refused at once (Linux's heuristic overcommit).
        let pages = len / PAGE_SIZE;
        if prot & PROT_WRITE != 0
            && pages > frames::free_count().saturating_sub(KERNEL_RESERVE) as u64
        {
            return Err(Errno::ENOMEM);
        }
        let shared = flags & MAP_SHARED != 0;
        let area_at = |start: u64| {
            let kind = match &file {
                Some((file, offset)) => {
                    Kind::File(FileMap::new(file.clone(), start, *offset, shared))
                }
                None if flags & MAP_GROWSDOWN != 0 => Kind::GrowsDown {
                    most: limits.cur(RLIMIT_STACK),
                },
                None => Kind::Anonymous,
            };
            Area::new(prot, kind)
        };
        // What the limits count does not depend on where the area goes.
        let area = area_at(0);
        let start = if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 {
            if !addr.is_multiple_of(PAGE_SIZE)
                || addr.checked_add(len).is_none_or(|end| end > USER_TOP)
                || addr < MMAP_MIN
            {
                return Err(Errno::EINVAL);
            }
            if flags & MAP_FIXED == 0 && self.areas(|a| a.overlaps(addr, addr + len)) {
                return Err(Errno::EEXIST);
            }
            // What is replaced is given back first (Linux counts it so).
            let replaced = self.areas(|a| a.usage_in(addr, addr + len));
            self.may_expand(limits, Usage::of(&area, len).less(replaced))?;
            self.munmap(addr, len)?;
            addr
        } else {
            self.may_expand(limits, Usage::of(&area, len))?;
            self.place(addr, len)?
        };
        self.areas(|a| a.insert(start, start + len, area_at(start)));
        Ok(start)
    }

    /// Where a mapping of `len` bytes goes: at the hint if that range is
    /// free, else in the highest gap of the mmap region.
    fn place(&self, hint: u64, len: u64) -> Result<u64, Errno> {
        let hint = page_down(hint);
        let end = hint.checked_add(len).filter(|&end| end <= USER_TOP);
        if hint >= MMAP_MIN
            && let Some(end) = end
            && !self.areas(|a| a.overlaps(hint, end))
        {
            return Ok(hint);
        }
        self.find_room(len).ok_or(Errno::ENOMEM)
    }

    /// A free range of `len` bytes for a mapping: the highest gap of the
    /// mmap region, or when that is full, the highest gap below it, in
    /// the heap's room (or under the program). Linux's top-down search
    /// goes down to `mmap_min_addr` the same way, so a process that maps
    /// everything leaves brk no room to grow (musl's malloc-brk-fail).
    fn find_room(&self, len: u64) -> Option<u64> {
        let low = self.mmap_low();
        self.areas(|a| a.find_gap(len, low, self.mmap_top))
            .or_else(|| self.areas(|a| a.find_gap(len, MMAP_MIN, low)))
    }

    /// Where exec puts an image of `len` bytes that is not the program (its
    /// interpreter): where mmap would put a mapping that size, the top of
    /// the mmap region. ENOMEM if there is no room.
    pub fn room_for(&self, len: u64) -> Result<u64, Errno> {
        self.find_room(len).ok_or(Errno::ENOMEM)
    }

    /// munmap(2): unmapping what is not mapped is not an error.
    pub fn munmap(&mut self, addr: u64, len: u64) -> Result<(), Errno> {
        let end = page_up(len)
            .and_then(|len| addr.checked_add(len))
            .filter(|&e| e <= USER_TOP)
            .ok_or(Errno::EINVAL)?;
        if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
            return Err(Errno::EINVAL);
        }
        self.areas(|a| a.remove(addr, end));
        self.unmap_range(addr, end);
        Ok(())
    }

    /// mremap(2) of one area: shrinks in place; grows in place when the
    /// pages after it are free, else only by moving (`MREMAP_MAYMOVE`),
    /// which hands the present pages' frames to a fresh range (nothing is
    /// copied; the rest come on demand there). `MREMAP_FIXED` moves to
    /// `new_addr` whatever the size, replacing what was mapped there.
    pub fn mremap(
        &mut self,
        old: u64,
        old_len: u64,
        new_len: u64,
        flags: u32,
        new_addr: u64,
        limits: &Limits,
    ) -> Result<u64, Errno> {
        let (Some(old_len), Some(new_len)) = (page_up(old_len), page_up(new_len)) else {
            return Err(Errno::EINVAL);
        };
        let fixed = flags & MREMAP_FIXED != 0;
        if !old.is_multiple_of(PAGE_SIZE)
            || old_len == 0
            || new_len == 0
            || flags & !(MREMAP_MAYMOVE | MREMAP_FIXED) != 0
            || fixed && flags & MREMAP_MAYMOVE == 0
        {
            return Err(Errno::EINVAL);
        }
        // Linux checks the new place before the old range.
        let fixed_end = if fixed {
            let end = new_addr
                .checked_add(new_len)
                .filter(|&e| e <= USER_TOP && new_addr.is_multiple_of(PAGE_SIZE))
                .ok_or(Errno::EINVAL)?;
            // The two ranges may not overlap.
            if new_addr < old.saturating_add(old_len) && old < end {
                return Err(Errno::EINVAL);
            }
            Some(end)
        } else {
            None
        };
        let old_end = old
            .checked_add(old_len)
            .filter(|&e| e <= USER_TOP)
            .ok_or(Errno::EFAULT)?;
        // The old range must lie inside one area.
        let area = areas::find(self.space.id(), old)
            .filter(|r| r.end >= old_end)
            .ok_or(Errno::EFAULT)?
            .area;
        if let Some(end) = fixed_end {
            if new_len > old_len {
                self.may_expand(limits, Usage::of(&area, new_len - old_len))?;
            } else if new_len < old_len {
                self.munmap(old + new_len, old_len - new_len)?;
            }
            self.munmap(new_addr, end - new_addr)?;
            return self.move_area(old, old_len.min(new_len), new_addr, new_len, area);
        }
        // The same number of pages is no change at all (munmap would
        // refuse the empty tail with EINVAL).
        if new_len <= old_len {
            if new_len < old_len {
                self.munmap(old + new_len, old_len - new_len)?;
            }
            return Ok(old);
        }
        let new_end = old.checked_add(new_len).ok_or(Errno::ENOMEM)?;
        self.may_expand(limits, Usage::of(&area, new_len - old_len))?;
        let high = if old < self.mmap_top {
            self.mmap_top
        } else {
            USER_TOP
        };
        // The new pages come on demand, as in a new mapping.
        if new_end <= high && !self.areas(|a| a.overlaps(old_end, new_end)) {
            self.areas(|a| a.insert(old_end, new_end, area));
            return Ok(old);
        }
        if flags & MREMAP_MAYMOVE == 0 {
            return Err(Errno::ENOMEM);
        }
        let start = self.find_room(new_len).ok_or(Errno::ENOMEM)?;
        self.move_area(old, old_len, start, new_len, area)
    }

    /// Moves `[old, old + len)` of `area` to `start`, whose `new_len`
    /// bytes are free: the present pages' frames go to the same offsets
    /// there, and the area is recorded over the new range.
    fn move_area(
        &mut self,
        old: u64,
        len: u64,
        start: u64,
        new_len: u64,
        area: Area,
    ) -> Result<u64, Errno> {
        let old_end = old + len;
        let mut at = old;
        while let Some(page) = self.space.next_mapped(at, old_end) {
            at = page + PAGE_SIZE;
            let (_, flags) = self.space.translate(VirtAddr::new(page)).expect("mapped");
            let frame = self.space.unmap(VirtAddr::new(page)).expect("mapped");
            let to = VirtAddr::new(start + (page - old));
            if self.space.map(to, frame, flags).is_err() {
                // Out of page-table frames half way: the moved pages stay
                // where they went, the rest are lost with the old range.
                frames::release(frame);
                self.munmap(old, len)?;
                self.unmap_range(start, start + new_len);
                return Err(Errno::ENOMEM);
            }
        }
        self.areas(|a| {
            a.remove(old, old_end);
            a.insert(start, start + new_len, area.moved(old, start));
        });
        Ok(start)
    }

    /// mprotect(2): every page of the range must be mapped (ENOMEM if not).
    pub fn mprotect(&mut self, addr: u64, len: u64, prot: u32) -> Result<(), Errno> {
        let end = page_up(len)
            .and_then(|len| addr.checked_add(len))
            .filter(|&e| e <= USER_TOP)
            .ok_or(Errno::ENOMEM)?;
        if !addr.is_multiple_of(PAGE_SIZE) || prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 {
            return Err(Errno::EINVAL);
        }
        if addr == end {
            return Ok(());
        }
        // A shared mapping of a file opened read-only never becomes
        // writable: stores would reach a file its opener could not write.
        let read_only_file = |area: &Area| matches!(&area.kind, Kind::File(map) if map.shared && !map.file.may_write);
        self.areas(|a| {
            if !a.covers(addr, end) {
                Err(Errno::ENOMEM)
            } else if prot & PROT_WRITE != 0 && a.any_in(addr, end, read_only_file) {
                Err(Errno::EACCES)
            } else {
                a.protect(addr, end, prot);
                Ok(())
            }
        })?;
        // Pages not there yet get the new rights when they are filled.
        let flags = prot_flags(prot);
        let mut at = addr;
        while let Some(page) = self.space.next_mapped(at, end) {
            self.space.protect(VirtAddr::new(page), flags);
            at = page + PAGE_SIZE;
        }
        Ok(())
    }

    /// msync(2)'s checks: the range must be mapped (ENOMEM). A mapped
    /// file's pages are the file's own (fs/filedata.rs), so nothing needs
    /// invalidating; what is left to do is writing back the stores of
    /// shared mappings of disk files, with MS_SYNC: their nodes are
    /// returned, for the caller to sync once it holds no lock (the disk
    /// sleeps). MS_ASYNC leaves them to the flusher, as Linux does.
    pub fn msync(&self, addr: u64, len: u64, flags: u32) -> Result<Vec<NodeRef>, Errno> {
        use abi::types::{MS_ASYNC, MS_INVALIDATE, MS_SYNC};
        if flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0
            || !addr.is_multiple_of(PAGE_SIZE)
            || flags & MS_ASYNC != 0 && flags & MS_SYNC != 0
        {
            return Err(Errno::EINVAL);
        }
        let end = page_up(len)
            .and_then(|len| addr.checked_add(len))
            .ok_or(Errno::ENOMEM)?;
        if addr == end {
            return Ok(Vec::new());
        }
        if !self.areas(|a| a.covers(addr, end)) {
            return Err(Errno::ENOMEM);
        }
        if flags & MS_SYNC == 0 {
            return Ok(Vec::new());
        }
        let mut nodes: Vec<NodeRef> = Vec::new();
        for range in self.ranges() {
            if range.start >= end || range.end <= addr {
                continue;
            }
            if let Kind::File(map) = &range.area.kind
                && map.shared
                && let Some(node) = &map.file.disk_node
                && !nodes.iter().any(|n| Arc::ptr_eq(n, node))
            {
                nodes.push(node.clone());
            }
        }
        Ok(nodes)
    }

    /// madvise(2) over `[addr, addr + len)` (`kcore::vma::advice` reads
    /// the advice). A drop unmaps the range's pages, so the next touch
    /// fills them as a fresh mapping would: zeroes in anonymous memory,
    /// the file's bytes in a private file mapping (its copies gone), the
    /// file's own page in a shared one. Parts of the range with no area
    /// are ENOMEM, after the rest was done, as on Linux.
    pub fn madvise(&self, addr: u64, len: u64, advice: u32) -> Result<(), Errno> {
        use kcore::vma::Advice;
        let advice = kcore::vma::advice(advice)?;
        let end = self.user_range(addr, len)?;
        match advice {
            Advice::Hint => {}
            Advice::Drop => self.unmap_range(addr, end),
            Advice::Populate => self.populate(addr, end)?,
            Advice::WipeOnFork(wipe) => self.areas(|a| a.set_wipe_on_fork(addr, end, wipe))?,
        }
        if self.areas(|a| a.covers(addr, end)) {
            Ok(())
        } else {
            Err(Errno::ENOMEM)
        }
    }

    /// mlock(2) and mlock2(2) (`may_lock`: the bytes the caller may lock,
    /// u64::MAX with CAP_IPC_LOCK): there is no swap, so every page stays in
    /// memory once it is there; locking fills the range's pages now
    /// (unless `on_fault`, MLOCK_ONFAULT), so that touching them later
    /// takes no fault. The whole range must be mapped (ENOMEM). A user
    /// without CAP_IPC_LOCK may lock at most RLIMIT_MEMLOCK bytes in one
    /// call (Linux counts what the process holds locked; nothing counts
    /// that here).
    pub fn mlock(&self, addr: u64, len: u64, on_fault: bool, may_lock: u64) -> Result<(), Errno> {
        let start = page_down(addr);
        let end = self.user_range(start, len.saturating_add(addr - start))?;
        if end - start > may_lock {
            return Err(if may_lock == 0 {
                Errno::EPERM
            } else {
                Errno::ENOMEM
            });
        }
        if !self.areas(|a| a.covers(start, end)) {
            return Err(Errno::ENOMEM);
        }
        if !on_fault {
            self.populate(start, end)?;
        }
        Ok(())
    }

    /// The end of the page-aligned range `[addr, addr + len)` rounded up
    /// to pages: EINVAL if `addr` is not aligned or the range wraps, ENOMEM
    /// past user space.
    fn user_range(&self, addr: u64, len: u64) -> Result<u64, Errno> {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(Errno::EINVAL);
        }
        let end = page_up(len)
            .and_then(|len| addr.checked_add(len))
            .ok_or(Errno::EINVAL)?;
        if end > USER_TOP {
            return Err(Errno::ENOMEM);
        }
        Ok(end)
    }

    /// Fills every page of `[start, end)` that an area holds and that is
    /// not there yet, as a read would (a page past the end of its file
    /// stays empty). PROT_NONE areas are passed over whole, however large
    /// (an address-space reservation); an area with more pages than free
    /// frames is ENOMEM at once, not after filling memory page by page.
    fn populate(&self, start: u64, end: u64) -> Result<(), Errno> {
        for range in self.ranges() {
            let (from, to) = (range.start.max(start), range.end.min(end));
            if from >= to || range.area.prot == abi::types::PROT_NONE {
                continue;
            }
            let free = frames::free_count().saturating_sub(KERNEL_RESERVE) as u64;
            if (to - from) / PAGE_SIZE > free {
                return Err(Errno::ENOMEM);
            }
            for page in (from..to).step_by(PAGE_SIZE as usize) {
                if self.space.translate(VirtAddr::new(page)).is_some() {
                    continue;
                }
                // A page past the end of its file stays empty, as a
                // read there would fault.
                let filled = areas::fault_in(&self.space, page, false);
                if let Err(areas::FaultError::NoMemory) = filled {
                    return Err(Errno::ENOMEM);
                }
            }
        }
        Ok(())
    }

    /// A forked child's memory: `space`, the copy-on-write copy that
    /// `Space::fork_cow` made of this memory's space (and `wipe_marked`
    /// emptied where asked), with this memory's break and program.
    pub fn forked(&self, space: AddressSpace) -> UserMemory {
        UserMemory {
            space,
            brk_start: self.brk_start,
            brk: self.brk,
            mmap_top: self.mmap_top,
            membarrier_registered: self.membarrier_registered,
            program: self.program.clone(),
        }
    }
}

/// Takes the pages of `[start, end)` out of `space`, giving their frames
/// back once no CPU can reach them.
fn unmap_pages(space: &Space, start: u64, end: u64) {
    let mut at = start;
    let mut unmapped = alloc::vec::Vec::new();
    while let Some(page) = space.next_mapped(at, end) {
        unmapped.extend(space.unmap_batch(VirtAddr::new(page)));
        at = page + PAGE_SIZE;
    }
    space.flush_others();
    for frame in unmapped {
        frames::release(frame);
    }
}

/// MADV_WIPEONFORK, for fork: the areas so marked keep no pages in
/// `space`, the child's copy from `Space::fork_cow`, so the child reads
/// zeros there. fork_cow shared those pages like the rest (and made the
/// parent's read-only, so the parent's next store to each takes a
/// copy-on-write fault that finds the frame its own again). The child's
/// areas, copied from the parent's, keep the mark, as Linux's do. Called
/// before the child can run, without the process table's lock, so a large
/// area's walk keeps no interrupts off.
pub fn wipe_marked(space: &AddressSpace) {
    let marked: alloc::vec::Vec<(u64, u64)> = areas::with(space.id(), |a| {
        a.iter()
            .filter(|r| r.area.wipe_on_fork)
            .map(|r| (r.start, r.end))
            .collect()
    });
    for (start, end) in marked {
        unmap_pages(space, start, end);
    }
}
