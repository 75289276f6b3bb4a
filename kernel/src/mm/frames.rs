//! The physical frame allocator.
//!
//! At boot the usable regions of the bootloader's memory map go into a
//! `kcore::frames::FrameTable` (a free stack plus a reference count per
//! frame), whose two arrays are carved out of the first usable region large
//! enough to hold them. Frames are zeroed when allocated, so no process ever
//! sees another's old data.

use bootloader_api::info::{MemoryRegionKind, MemoryRegions};
use kcore::frames::FrameTable;
use x86_64::PhysAddr;
use x86_64::structures::paging::{FrameAllocator, PhysFrame, Size4KiB};

use super::{PAGE_SIZE, phys_to_virt};
use crate::sync::{IrqLock, Rank};

static TABLE: IrqLock<Option<FrameTable<'static>>> = IrqLock::new(Rank::Frames, None);

/// Pages the frame allocator leaves alone for starting the other CPUs
/// (arch/smp.rs): a startup IPI can only start a CPU below 1 MiB.
pub const TRAMPOLINE_PAGES: u64 = 4;
/// The first of them (a physical address), if the memory map had room.
static TRAMPOLINE: spin::Once<u64> = spin::Once::new();

/// The physical address of the `TRAMPOLINE_PAGES` pages kept below 1 MiB
/// for starting CPUs, None if no usable memory lay there.
pub fn trampoline_pages() -> Option<u64> {
    TRAMPOLINE.get().copied()
}

/// The highest run of `TRAMPOLINE_PAGES` usable frames below 1 MiB (not
/// frame 0, whose address a startup IPI cannot name apart from "none").
fn find_trampoline(regions: &MemoryRegions) -> Option<u64> {
    const BELOW: u64 = 0x10_0000 / PAGE_SIZE;
    usable(regions)
        .filter_map(|(s, e)| {
            let (s, e) = (s.max(1), e.min(BELOW));
            (e >= s + TRAMPOLINE_PAGES).then(|| e - TRAMPOLINE_PAGES)
        })
        .max()
}

/// The usable frames, region by region: [first, end) frame numbers. Frame
/// 0 is never among them: physical address 0 is where a zeroed pointer
/// leads, and a frame number 0 reads as "none" (pagemap, a startup IPI);
/// Linux keeps the first page out of its allocator too.
fn usable(regions: &MemoryRegions) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
    regions
        .iter()
        .filter(|r| r.kind == MemoryRegionKind::Usable)
        .map(|r| (r.start.div_ceil(PAGE_SIZE).max(1), r.end / PAGE_SIZE))
        .filter(|(start, end)| start < end)
}

pub fn init(regions: &'static MemoryRegions) {
    let frame_count = usable(regions).map(|(_, end)| end).max().unwrap_or(0) as usize;
    let usable_count = usable(regions)
        .map(|(s, e)| e.saturating_sub(s))
        .sum::<u64>() as usize;
    let pages = ((usable_count * 4 + frame_count * 2) as u64).div_ceil(PAGE_SIZE);
    let (home, _) = usable(regions)
        .find(|(s, e)| e - s >= pages)
        .expect("no usable region can hold the frame table");
    let trampoline = find_trampoline(regions);
    if let Some(first) = trampoline {
        TRAMPOLINE.call_once(|| first * PAGE_SIZE);
    }
    let kept = |f: &u64| trampoline.is_some_and(|t| (t..t + TRAMPOLINE_PAGES).contains(f));
    let base = phys_to_virt(home * PAGE_SIZE).as_mut_ptr::<u32>();
    // SAFETY: [home, home + pages) is usable RAM that nothing else owns (it is
    // left out of the table below) and the physical window maps it. The u32
    // free stack starts page aligned; the u16 counts follow it, aligned too.
    let mut table = unsafe {
        let free = core::slice::from_raw_parts_mut(base, usable_count);
        let counts =
            core::slice::from_raw_parts_mut(base.add(usable_count).cast::<u16>(), frame_count);
        FrameTable::new(counts, free)
    };
    // Pushed from the top down, so allocation hands out low frames first.
    for (start, end) in usable(regions).rev() {
        for frame in (start..end)
            .rev()
            .filter(|f| !(home..home + pages).contains(f) && !kept(f))
        {
            table.add_free(frame).expect("usable frames are added once");
        }
    }
    *TABLE.lock() = Some(table);
}

fn with_table<R>(f: impl FnOnce(&mut FrameTable<'static>) -> R) -> R {
    f(TABLE.lock().as_mut().expect("frames::init not called"))
}

/// A zeroed frame, or None when memory is exhausted.
pub fn alloc() -> Option<PhysFrame> {
    let frame = with_table(|t| t.alloc())?;
    let addr = PhysAddr::new(frame * PAGE_SIZE);
    // SAFETY: the frame was just allocated, so nothing else uses it, and the
    // physical window maps it writable.
    unsafe { core::ptr::write_bytes(phys_to_virt(addr).as_mut_ptr::<u8>(), 0, PAGE_SIZE as usize) };
    Some(PhysFrame::containing_address(addr))
}

/// The table's index of `frame`.
fn number(frame: PhysFrame) -> u64 {
    frame.start_address().as_u64() / PAGE_SIZE
}

/// The one frame of zeros that reads of never-written anonymous pages map,
/// read-only and copy-on-write. Taken at boot (so it is the kernel's, not
/// counted against any process) and never freed: its own reference is
/// never dropped.
static ZERO: spin::Once<PhysFrame> = spin::Once::new();

/// Frame users the zero frame may have: its count is 16 bits, so past this
/// a read fault gets a frame of its own, as before.
const ZERO_MAX_USERS: u16 = 60_000;

/// Takes the zero frame; called once by `mm::init`.
pub fn init_zero_frame() {
    ZERO.call_once(|| alloc().expect("a frame for the shared zero page"));
}

/// The zero frame with one more user (the caller maps it), or None if it
/// has as many as its count holds.
pub fn share_zero_frame() -> Option<PhysFrame> {
    let zero = *ZERO.get()?;
    if users(zero) >= ZERO_MAX_USERS {
        return None;
    }
    share(zero);
    Some(zero)
}

/// Adds a user to `frame` (copy-on-write sharing).
pub fn share(frame: PhysFrame) {
    with_table(|t| t.incref(number(frame))).expect("sharing a frame that is not allocated");
}

/// Drops a user of `frame`; the last one frees it.
pub fn release(frame: PhysFrame) {
    with_table(|t| t.decref(number(frame))).expect("releasing a frame that is not allocated");
}

/// How many users `frame` has.
pub fn users(frame: PhysFrame) -> u16 {
    with_table(|t| t.refcount(number(frame))).unwrap_or(0)
}

/// The table's invariants (kcore::frames::FrameTable::check).
pub fn check() -> Result<(), &'static str> {
    with_table(|t| t.check())
}

/// Frames that user memory and file data leave for the kernel, so a process
/// (or a ramfs) that eats all memory gets ENOMEM (ENOSPC) while the kernel
/// can still grow its heap and make kernel stacks.
pub const KERNEL_RESERVE: usize = 2048;

/// A zeroed frame for user memory or file data, or ENOMEM past the
/// kernel's reserve.
pub fn alloc_user_frame() -> Result<PhysFrame, abi::Errno> {
    if free_count() <= KERNEL_RESERVE {
        return Err(abi::Errno::ENOMEM);
    }
    alloc().ok_or(abi::Errno::ENOMEM)
}

/// A frame for user memory holding a copy of `source` (a copy-on-write
/// break), or ENOMEM past the kernel's reserve. The copy fills the whole
/// frame, so it is not zeroed first; a copy of the zero frame is a zeroed
/// frame, with nothing to copy.
pub fn alloc_user_copy(source: PhysFrame) -> Result<PhysFrame, abi::Errno> {
    if ZERO.get() == Some(&source) {
        return alloc_user_frame();
    }
    if free_count() <= KERNEL_RESERVE {
        return Err(abi::Errno::ENOMEM);
    }
    let frame = with_table(|t| t.alloc()).ok_or(abi::Errno::ENOMEM)?;
    let to = PhysAddr::new(frame * PAGE_SIZE);
    // SAFETY: the new frame was just allocated, so nothing else uses it;
    // `source` stays allocated (the caller holds a use of it) while it is
    // read; the physical window maps both.
    unsafe {
        core::ptr::copy_nonoverlapping(
            phys_to_virt(source.start_address()).as_ptr::<u8>(),
            phys_to_virt(to).as_mut_ptr::<u8>(),
            PAGE_SIZE as usize,
        )
    };
    Ok(PhysFrame::containing_address(to))
}

/// A frame that belongs to one owner (a page of a file): given back to the
/// allocator when dropped, its bytes borrowed from the owner through the
/// physical window. Owning the frame is what makes those borrows safe for
/// the kernel: no other kernel code reaches the frame's bytes. User
/// mappings of it (`share`, for mmap of a file) may store into it, but only
/// while user code runs, never inside the owner's lock, which is held with
/// interrupts off on the one CPU, so a borrow never sees a byte change.
pub struct OwnedFrame(PhysFrame);

impl OwnedFrame {
    /// A zeroed frame for file data, or ENOMEM past the kernel's reserve.
    pub fn new_user() -> Result<OwnedFrame, abi::Errno> {
        alloc_user_frame().map(OwnedFrame)
    }

    /// The frame with one more user, for a mapping of it that will release
    /// that user when it is unmapped.
    pub fn share(&self) -> PhysFrame {
        share(self.0);
        self.0
    }

    pub fn bytes(&self) -> &[u8; PAGE_SIZE as usize] {
        // SAFETY: the window maps the frame, it lives as long as the owner
        // (given back only when this drops), and the shared borrow of the
        // owner keeps kernel writers away (user stores: see the type).
        unsafe { &*phys_to_virt(self.0.start_address()).as_ptr::<[u8; PAGE_SIZE as usize]>() }
    }

    /// Whether a mapping shares it (more users than its owner).
    pub fn is_shared(&self) -> bool {
        users(self.0) > 1
    }

    pub fn bytes_mut(&mut self) -> &mut [u8; PAGE_SIZE as usize] {
        // SAFETY: as in `bytes`; the exclusive borrow makes this the only
        // kernel reference to the frame's bytes.
        unsafe {
            &mut *phys_to_virt(self.0.start_address()).as_mut_ptr::<[u8; PAGE_SIZE as usize]>()
        }
    }
}

impl Drop for OwnedFrame {
    fn drop(&mut self) {
        release(self.0);
    }
}

pub fn free_count() -> usize {
    with_table(|t| t.free_count())
}

pub fn total_count() -> usize {
    with_table(|t| t.total())
}

/// The allocator the `x86_64` crate's page-table code asks for new tables.
pub struct KernelFrames;

// SAFETY: `alloc` returns frames that are unused and zeroed.
unsafe impl FrameAllocator<Size4KiB> for KernelFrames {
    fn allocate_frame(&mut self) -> Option<PhysFrame> {
        alloc()
    }
}
