//! Memory: physical frames, page tables, the kernel heap.
//!
//! The kernel's virtual address space (the upper half, shared by every
//! process) is laid out as:
//!
//!     0xffff_8000_0000_0000  bootloader mappings: all physical memory, boot
//!                            info, ramdisk, the boot stack
//!     0xffff_c000_0000_0000  kernel heap (grows on demand)
//!     0xffff_d000_0000_0000  per-process kernel stacks, each under a guard page
//!     0xffff_ffff_8000_0000  the kernel image
//!
//! The lower half, 0 .. 0x0000_8000_0000_0000, belongs to the user process.

pub mod areas;
pub mod dma;
pub mod frames;
pub mod heap;
pub mod kstack;
pub mod paging;
pub mod uaccess;

use bootloader_api::BootInfo;
use spin::Once;
use x86_64::{PhysAddr, VirtAddr};

pub const PAGE_SIZE: u64 = 4096;
pub const HEAP_START: u64 = 0xffff_c000_0000_0000;
pub const HEAP_MAX: u64 = 1 << 30;
pub const KSTACKS_START: u64 = 0xffff_d000_0000_0000;
/// Device registers the physical window does not reach (`dma::Registers`).
pub const DEVICES_START: u64 = 0xffff_e000_0000_0000;
pub const DEVICES_MAX: u64 = 1 << 30;
/// First address above user space.
pub const USER_TOP: u64 = 0x0000_8000_0000_0000;

/// `a` rounded down to a page boundary.
pub const fn page_down(a: u64) -> u64 {
    a & !(PAGE_SIZE - 1)
}

/// `a` rounded up to a page boundary; None if that passes 2^64 (a user's
/// length near u64::MAX must be an error, not an overflow).
pub const fn page_up(a: u64) -> Option<u64> {
    match a.checked_add(PAGE_SIZE - 1) {
        Some(x) => Some(x & !(PAGE_SIZE - 1)),
        None => None,
    }
}

static PHYS_OFFSET: Once<u64> = Once::new();
/// The end of the highest region of the bootloader's memory map: all of
/// physical memory below it is mapped at `PHYS_OFFSET`.
static PHYS_END: Once<u64> = Once::new();

/// The kernel's virtual address for physical address `phys`.
pub fn phys_to_virt(phys: impl Into<PhysAddrLike>) -> VirtAddr {
    let offset = *PHYS_OFFSET.get().expect("mm::init not called");
    VirtAddr::new(phys.into().0 + offset)
}

/// The kernel's view of the clock page (`kcore::vdso::ClockPage`) in
/// `frame`, the frame the vDSO's data page is (vdso.rs). The caller must
/// hold a use of `frame` for as long as the kernel runs (vdso.rs takes one
/// and never gives it back), and the frame must have been zeroed.
pub fn clock_page_at(
    frame: x86_64::structures::paging::PhysFrame,
) -> &'static kcore::vdso::ClockPage {
    use kcore::vdso::ClockPage;
    const _: () = assert!(core::mem::size_of::<ClockPage>() <= PAGE_SIZE as usize);
    let at = phys_to_virt(frame.start_address()).as_u64();
    // SAFETY: the frame is mapped at `at` through the physical-memory
    // window, page-aligned (more than ClockPage's alignment) and larger
    // than it; it is never freed (the caller's contract), so `'static`
    // holds; zeroes are a valid ClockPage (all atomics). User mappings of
    // the frame are read-only and the vDSO reads it with atomic loads, so
    // every access to it, the kernel's and user code's, is atomic.
    unsafe { &*(at as *const ClockPage) }
}

/// The end of what the physical-memory window maps: the bootloader maps
/// every region of its memory map, and always the first 4 GiB, where the
/// local APIC and the PCI BARs below 4 GiB are (bootloader 0.11's
/// `max_phys_addr`).
pub fn physical_end() -> u64 {
    PHYS_END.get().copied().unwrap_or(0).max(1 << 32)
}

/// Copies physical memory from `phys` into `out`, for what the firmware
/// left outside the frames the kernel manages (the ACPI tables). None
/// unless the whole range lies below the end of the bootloader's memory
/// map.
pub fn read_physical(phys: u64, out: &mut [u8]) -> Option<()> {
    let end = phys.checked_add(out.len() as u64)?;
    if end > *PHYS_END.get()? {
        return None;
    }
    // SAFETY: the bootloader maps all physical memory up to the end of its
    // memory map at PHYS_OFFSET (BOOTLOADER_CONFIG asks for it), and the
    // range was checked to lie below that end; the bytes are only read.
    unsafe {
        core::ptr::copy_nonoverlapping(
            phys_to_virt(phys).as_ptr::<u8>(),
            out.as_mut_ptr(),
            out.len(),
        )
    };
    Some(())
}

/// A physical address given as `PhysAddr` or a raw `u64`.
pub struct PhysAddrLike(u64);

impl From<u64> for PhysAddrLike {
    fn from(a: u64) -> Self {
        PhysAddrLike(a)
    }
}

impl From<PhysAddr> for PhysAddrLike {
    fn from(a: PhysAddr) -> Self {
        PhysAddrLike(a.as_u64())
    }
}

/// Sets up frames, paging and the heap from what the bootloader found.
pub fn init(boot_info: &'static BootInfo) {
    let offset = boot_info
        .physical_memory_offset
        .into_option()
        .expect("the bootloader config asks for a physical memory mapping");
    PHYS_OFFSET.call_once(|| offset);
    let end = boot_info.memory_regions.iter().map(|r| r.end).max();
    PHYS_END.call_once(|| end.unwrap_or(0));
    frames::init(&boot_info.memory_regions);
    frames::init_zero_frame();
    paging::init();
    heap::init();
    // W^X over frames (kcore::wx): no address may write kernel code.
    paging::protect_code_aliases();
}
