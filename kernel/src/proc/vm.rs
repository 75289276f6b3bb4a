//! A process's user memory: program image, heap (brk), mmap areas, stack.
//!
//! Layout of the lower half:
//!
//!     0x0000_0000_0040_0000  program text and data (where the ELF says)
//!     brk_start ..  brk      the heap, grown by brk(2) right after the image
//!          ...               free
//!     .. MMAP_TOP            anonymous mmap areas, handed out downwards
//!          ...               free, one unmapped guard page
//!     STACK_TOP - STACK_SIZE .. STACK_TOP   the user stack
//!
//! Memory is mapped eagerly (frames are zeroed when allocated; `PROT_NONE`
//! pages too, present but not user-accessible) except that fork shares every
//! page copy-on-write. Copy-on-write and frame policy are mm's: rights change
//! only through `Space::protect`, which keeps the rule that a frame with two
//! users is never mapped writable, `Space::break_cow` gives a writer its own
//! copy (mm/paging.rs, `COW`), and user allocations leave `KERNEL_RESERVE`
//! frames free (mm/frames.rs), so a process that eats all memory gets ENOMEM
//! while the kernel can still grow its heap. This file decides where things
//! go in the address space; mm decides what a page may do.

use abi::Errno;
use abi::types::{
    MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, MREMAP_MAYMOVE, PROT_EXEC, PROT_READ,
    PROT_WRITE,
};
use alloc::vec::Vec;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use crate::mm::frames::{self, KERNEL_RESERVE, alloc_user_frame};
use crate::mm::paging::{AddressSpace, COW, prot_flags};
use crate::mm::{PAGE_SIZE, USER_TOP, page_up};

pub const STACK_TOP: u64 = 0x0000_7fff_ffff_f000;
pub const STACK_SIZE: u64 = 256 * 1024;
pub const MMAP_TOP: u64 = 0x0000_7f00_0000_0000;
/// Most the heap may grow past its start.
pub const BRK_MAX: u64 = 1 << 32;
pub struct UserMemory {
    pub space: AddressSpace,
    pub brk_start: u64,
    pub brk: u64,
    mmap_next: u64,
}

impl UserMemory {
    pub fn new(space: AddressSpace, brk_start: u64) -> UserMemory {
        UserMemory {
            space,
            brk_start,
            brk: brk_start,
            mmap_next: MMAP_TOP,
        }
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
    pub fn unmap_range(&self, start: u64, end: u64) {
        let mut at = start;
        while let Some(page) = self.space.next_mapped(at, end) {
            if let Some(frame) = self.space.unmap(VirtAddr::new(page)) {
                frames::release(frame);
            }
            at = page + PAGE_SIZE;
        }
    }

    /// brk(2): moves the break to `new` if it can; returns the break.
    pub fn set_brk(&mut self, new: u64) -> u64 {
        if new < self.brk_start || new > self.brk_start + BRK_MAX {
            return self.brk;
        }
        // Both are at most brk_start + BRK_MAX (checked above): no overflow.
        let up = |a: u64| page_up(a).unwrap_or(a);
        let (old_end, new_end) = (up(self.brk), up(new));
        if new_end > old_end {
            let flags = Flags::PRESENT | Flags::WRITABLE | Flags::NO_EXECUTE;
            if self.map_zeroed(old_end, new_end, flags).is_err() {
                return self.brk;
            }
        } else {
            self.unmap_range(new_end, old_end);
        }
        self.brk = new;
        self.brk
    }

    /// mmap(2) for private anonymous memory.
    pub fn mmap(
        &mut self,
        addr: u64,
        len: u64,
        prot: u32,
        flags: u32,
        fd: i64,
    ) -> Result<u64, Errno> {
        if len == 0 || flags & (MAP_PRIVATE | MAP_SHARED) == 0 {
            return Err(Errno::EINVAL);
        }
        if flags & MAP_ANONYMOUS == 0 || fd != -1 && fd as i32 != -1 {
            return Err(Errno::ENODEV); // no file-backed mappings
        }
        if prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 {
            return Err(Errno::EINVAL);
        }
        if len > MMAP_TOP {
            return Err(Errno::ENOMEM);
        }
        let len = page_up(len).ok_or(Errno::ENOMEM)?;
        let start = if flags & MAP_FIXED != 0 {
            if !addr.is_multiple_of(PAGE_SIZE)
                || addr.checked_add(len).is_none_or(|end| end > USER_TOP)
                || addr == 0
            {
                return Err(Errno::EINVAL);
            }
            self.unmap_range(addr, addr + len);
            addr
        } else {
            self.mmap_next
                .checked_sub(len)
                .filter(|&s| s > self.brk_start + BRK_MAX)
                .ok_or(Errno::ENOMEM)?
        };
        // PROT_NONE pages are mapped too (present, not user-accessible), so
        // a later mprotect can open them, as glibc does with thread stacks.
        self.map_zeroed(start, start + len, prot_flags(prot))?;
        if flags & MAP_FIXED == 0 {
            self.mmap_next = start;
        }
        Ok(start)
    }

    pub fn munmap(&mut self, addr: u64, len: u64) -> Result<(), Errno> {
        let end = page_up(len)
            .and_then(|len| addr.checked_add(len))
            .filter(|&e| e <= USER_TOP)
            .ok_or(Errno::EINVAL)?;
        if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
            return Err(Errno::EINVAL);
        }
        self.unmap_range(addr, end);
        Ok(())
    }

    /// mremap(2): shrinks in place; grows only by moving (`MREMAP_MAYMOVE`),
    /// which hands the pages' frames to a fresh range (nothing is copied)
    /// and maps zeroed pages after them.
    pub fn mremap(
        &mut self,
        old: u64,
        old_len: u64,
        new_len: u64,
        flags: u32,
    ) -> Result<u64, Errno> {
        let (Some(old_len), Some(new_len)) = (page_up(old_len), page_up(new_len)) else {
            return Err(Errno::EINVAL);
        };
        if !old.is_multiple_of(PAGE_SIZE) || new_len == 0 || flags & !MREMAP_MAYMOVE != 0 {
            return Err(Errno::EINVAL);
        }
        let old_end = old
            .checked_add(old_len)
            .filter(|&e| e <= USER_TOP)
            .ok_or(Errno::EFAULT)?;
        let pages: Vec<(u64, Flags)> = (old..old_end)
            .step_by(PAGE_SIZE as usize)
            .map(|page| {
                let (_, flags) = self
                    .space
                    .translate(VirtAddr::new(page))
                    .ok_or(Errno::EFAULT)?;
                Ok((page, flags))
            })
            .collect::<Result<_, Errno>>()?;
        if new_len <= old_len {
            self.unmap_range(old + new_len, old_end);
            return Ok(old);
        }
        if flags & MREMAP_MAYMOVE == 0 {
            return Err(Errno::ENOMEM);
        }
        let start = self
            .mmap_next
            .checked_sub(new_len)
            .filter(|&s| s > self.brk_start + BRK_MAX)
            .ok_or(Errno::ENOMEM)?;
        // A shared (copy-on-write) last page is writable underneath.
        let tail_flags = pages.last().map_or(Flags::PRESENT, |&(_, f)| {
            if f.contains(COW) {
                (f - COW) | Flags::WRITABLE
            } else {
                f
            }
        });
        self.map_zeroed(start + old_len, start + new_len, tail_flags)?;
        for (i, &(page, flags)) in pages.iter().enumerate() {
            let frame = self
                .space
                .unmap(VirtAddr::new(page))
                .expect("translated above");
            let to = VirtAddr::new(start + i as u64 * PAGE_SIZE);
            if self.space.map(to, frame, flags).is_err() {
                // Out of page-table frames half way: the moved pages stay
                // where they went, the rest are lost with the old range.
                frames::release(frame);
                self.unmap_range(old, old_end);
                self.unmap_range(start, start + new_len);
                return Err(Errno::ENOMEM);
            }
        }
        self.mmap_next = start;
        Ok(start)
    }

    pub fn mprotect(&mut self, addr: u64, len: u64, prot: u32) -> Result<(), Errno> {
        let end = page_up(len)
            .and_then(|len| addr.checked_add(len))
            .filter(|&e| e <= USER_TOP)
            .ok_or(Errno::ENOMEM)?;
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(Errno::EINVAL);
        }
        for page in (addr..end).step_by(PAGE_SIZE as usize) {
            if self.space.translate(VirtAddr::new(page)).is_none() {
                return Err(Errno::ENOMEM);
            }
        }
        for page in (addr..end).step_by(PAGE_SIZE as usize) {
            self.space.protect(VirtAddr::new(page), prot_flags(prot));
        }
        Ok(())
    }

    /// A copy-on-write copy for a forked child.
    pub fn fork(&self) -> Result<UserMemory, Errno> {
        let space = self.space.fork_cow().ok_or(Errno::ENOMEM)?;
        Ok(UserMemory {
            space,
            brk_start: self.brk_start,
            brk: self.brk,
            mmap_next: self.mmap_next,
        })
    }
}
