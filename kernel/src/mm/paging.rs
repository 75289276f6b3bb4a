//! Page tables and address spaces.
//!
//! Every address space has its own level-4 table. Its upper half (entries
//! 256..512) points at the kernel's level-3 tables, which are all created at
//! boot, so a kernel mapping made later (heap growth, a new kernel stack) is
//! seen by every process without touching their tables. The lower half is the
//! process's own; dropping an `AddressSpace` gives back every frame in it and
//! every table that mapped it.
//!
//! Page-table entries are edited with the `x86_64` crate's `OffsetPageTable`,
//! which reaches tables through the bootloader's physical-memory window.

use spin::Once;
use x86_64::registers::control::{Cr3, Cr3Flags};
use x86_64::structures::paging::mapper::{MapToError, Translate, TranslateResult};
use x86_64::structures::paging::{
    Mapper, OffsetPageTable, Page, PageTable, PageTableFlags as Flags, PhysFrame, Size4KiB,
};
use x86_64::{PhysAddr, VirtAddr};

use super::frames::{self, KernelFrames};
use super::phys_to_virt;

static KERNEL_L4: Once<PhysFrame> = Once::new();

/// Why a mapping could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    OutOfMemory,
    AlreadyMapped,
}

/// A page table reached through the physical window.
fn table(frame: PhysFrame) -> &'static mut PageTable {
    // SAFETY: `frame` holds a page table (callers only pass frames taken from
    // page-table entries or allocated for tables) and the physical window maps
    // it; the kernel is single-CPU and edits tables without interleaving.
    unsafe { &mut *phys_to_virt(frame.start_address()).as_mut_ptr::<PageTable>() }
}

fn mapper_for(l4: PhysFrame) -> OffsetPageTable<'static> {
    let offset = phys_to_virt(0u64);
    // SAFETY: `l4` is a valid level-4 table and `offset` is where the
    // bootloader mapped all of physical memory.
    unsafe { OffsetPageTable::new(table(l4), offset) }
}

fn map_in(l4: PhysFrame, page: VirtAddr, frame: PhysFrame, flags: Flags) -> Result<(), MapError> {
    let page = Page::<Size4KiB>::containing_address(page);
    let parent_flags = Flags::PRESENT | Flags::WRITABLE | (flags & Flags::USER_ACCESSIBLE);
    // SAFETY: the caller owns `frame`; mapping it cannot alias kernel data
    // because it came from the frame allocator.
    let result = unsafe {
        mapper_for(l4).map_to_with_table_flags(
            page,
            frame,
            flags | Flags::PRESENT,
            parent_flags,
            &mut KernelFrames,
        )
    };
    match result {
        Ok(flush) => {
            flush.flush();
            Ok(())
        }
        Err(MapToError::FrameAllocationFailed) => Err(MapError::OutOfMemory),
        Err(_) => Err(MapError::AlreadyMapped),
    }
}

/// Records the boot page table as the kernel's and creates every upper-half
/// level-3 table, so that all address spaces share the kernel's mappings.
pub fn init() {
    let (l4, _) = Cr3::read();
    KERNEL_L4.call_once(|| l4);
    for entry in table(l4).iter_mut().skip(256) {
        if entry.is_unused() {
            let frame = frames::alloc().expect("memory for the kernel's page tables");
            entry.set_frame(frame, Flags::PRESENT | Flags::WRITABLE);
        }
    }
}

fn kernel_l4() -> PhysFrame {
    *KERNEL_L4.get().expect("paging::init not called")
}

/// Maps a kernel page (upper half), seen by every address space.
pub fn map_kernel(page: VirtAddr, frame: PhysFrame, flags: Flags) -> Result<(), MapError> {
    debug_assert!(page.as_u64() >= super::USER_TOP);
    map_in(kernel_l4(), page, frame, flags)
}

/// Removes a kernel mapping and returns the frame it mapped.
pub fn unmap_kernel(page: VirtAddr) -> Option<PhysFrame> {
    let (frame, flush) = mapper_for(kernel_l4())
        .unmap(Page::<Size4KiB>::containing_address(page))
        .ok()?;
    flush.flush();
    Some(frame)
}

/// Switches to the kernel's own address space (no user mappings).
pub fn activate_kernel() {
    // SAFETY: the kernel's table maps everything the kernel uses.
    unsafe { Cr3::write(kernel_l4(), Cr3Flags::empty()) };
}

/// A process's address space.
pub struct AddressSpace {
    l4: PhysFrame,
}

impl AddressSpace {
    /// An empty user half over the shared kernel half; None when out of memory.
    pub fn new() -> Option<AddressSpace> {
        let l4 = frames::alloc()?;
        let kernel = table(kernel_l4());
        let new = table(l4);
        for i in 256..512 {
            new[i] = kernel[i].clone();
        }
        Some(AddressSpace { l4 })
    }

    /// Maps user page `page` to `frame`. The frame's reference now belongs to
    /// this address space, which releases it when unmapped or dropped.
    pub fn map(&mut self, page: VirtAddr, frame: PhysFrame, flags: Flags) -> Result<(), MapError> {
        debug_assert!(page.as_u64() < super::USER_TOP);
        map_in(self.l4, page, frame, flags | Flags::USER_ACCESSIBLE)
    }

    /// Removes the mapping of `page`, giving the frame's reference back to
    /// the caller.
    pub fn unmap(&mut self, page: VirtAddr) -> Option<PhysFrame> {
        let (frame, flush) = mapper_for(self.l4)
            .unmap(Page::<Size4KiB>::containing_address(page))
            .ok()?;
        flush.flush();
        Some(frame)
    }

    /// The frame and flags mapping `addr`, if it is mapped by a 4 KiB page.
    pub fn translate(&self, addr: VirtAddr) -> Option<(PhysAddr, Flags)> {
        match mapper_for(self.l4).translate(addr) {
            TranslateResult::Mapped {
                frame,
                offset,
                flags,
            } => Some((frame.start_address() + offset, flags)),
            _ => None,
        }
    }

    /// Makes this the address space the CPU uses.
    pub fn activate(&self) {
        // SAFETY: the upper half is the kernel's, so the kernel keeps running.
        unsafe { Cr3::write(self.l4, Cr3Flags::empty()) };
    }

    pub fn is_active(&self) -> bool {
        Cr3::read().0 == self.l4
    }
}

/// Releases every frame below `level` and the table frames themselves.
fn free_table(frame: PhysFrame, level: u8) {
    for entry in table(frame).iter() {
        if !entry.flags().contains(Flags::PRESENT) {
            continue;
        }
        let child = PhysFrame::containing_address(entry.addr());
        if level > 1 {
            free_table(child, level - 1);
        } else {
            frames::release(child);
        }
    }
    frames::release(frame);
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        if self.is_active() {
            activate_kernel();
        }
        for entry in table(self.l4).iter().take(256) {
            if entry.flags().contains(Flags::PRESENT) {
                free_table(PhysFrame::containing_address(entry.addr()), 3);
            }
        }
        frames::release(self.l4);
    }
}
