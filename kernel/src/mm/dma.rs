//! Memory a device reads and writes on its own: frames for DMA, and a
//! device's registers in a PCI BAR.
//!
//! Both are memory the compiler does not own. A device changes a DMA
//! frame (a virtqueue's used ring, a status byte) while the kernel holds
//! no reference to it, and a register read can change the device (reading
//! virtio's interrupt status clears it). So every access here is volatile:
//! done once, in program order, never cached in a register or merged with
//! another. Ordering against the device (publish a descriptor before the
//! index that offers it) is the caller's, with `fence`s.
//!
//! The one exception is a request's data (`DmaFrame::read_bytes`,
//! `DmaFrame::write_bytes`), copied with one `memcpy`: the device touches
//! those bytes only between the offer and the completion, and the copy
//! is made outside that span (before the offer, after the completion),
//! so there is nothing for volatile accesses to guard against. Word by
//! word, a 64 KiB request's copy was a visible share of a disk read's
//! time under TCG.
//!
//! "Valid" here means: inside the one frame or the one register window
//! the value was made for. Each accessor (`Window`) checks its offset
//! against that and panics on a stray one, which is a driver bug, before
//! touching memory; so the unsafe code relies only on the window being
//! mapped, which `DmaFrame::new` and `Registers::map` establish, and on
//! `span` saying what they made (the two implementations here).

use core::sync::atomic::{AtomicU64, Ordering, fence};
use x86_64::structures::paging::{PageTableFlags, PhysFrame};
use x86_64::{PhysAddr, VirtAddr};

use super::{
    DEVICES_MAX, DEVICES_START, PAGE_SIZE, frames, page_down, page_up, paging, phys_to_virt,
};

/// What both kinds of window give: volatile reads and writes of 8 to 64
/// bits at an offset, checked against the window (`span`: the kernel's
/// address of byte 0, and the length).
///
/// # Safety
///
/// An implementation promises that `span` names memory mapped for the
/// kernel, all of it, for as long as the value lives, and that nothing
/// but device accesses through these methods touch it.
pub unsafe trait Window {
    fn span(&self) -> (u64, usize);

    /// The address of `size` bytes at `at`, which must lie inside the
    /// window and be aligned to `size`.
    fn checked(&self, at: usize, size: usize) -> *mut u8 {
        let (base, len) = self.span();
        assert!(
            at.is_multiple_of(size) && at + size <= len,
            "{size}-byte access at {at:#x} of a {len:#x}-byte window"
        );
        (base + at as u64) as *mut u8
    }

    fn read_u8(&self, at: usize) -> u8 {
        // SAFETY: `checked` keeps the access inside the mapped window.
        unsafe { core::ptr::read_volatile(self.checked(at, 1)) }
    }

    fn read_u16(&self, at: usize) -> u16 {
        // SAFETY: as in `read_u8`; `checked` also aligns it.
        unsafe { core::ptr::read_volatile(self.checked(at, 2).cast::<u16>()) }
    }

    fn read_u32(&self, at: usize) -> u32 {
        // SAFETY: as in `read_u16`.
        unsafe { core::ptr::read_volatile(self.checked(at, 4).cast::<u32>()) }
    }

    fn write_u8(&self, at: usize, value: u8) {
        // SAFETY: as in `read_u8`.
        unsafe { core::ptr::write_volatile(self.checked(at, 1), value) }
    }

    fn write_u16(&self, at: usize, value: u16) {
        // SAFETY: as in `read_u16`.
        unsafe { core::ptr::write_volatile(self.checked(at, 2).cast::<u16>(), value) }
    }

    fn write_u32(&self, at: usize, value: u32) {
        // SAFETY: as in `read_u16`.
        unsafe { core::ptr::write_volatile(self.checked(at, 4).cast::<u32>(), value) }
    }

    /// A 64-bit value as two 32-bit writes, low half first: virtio's
    /// common configuration allows that for its 64-bit fields, and some
    /// devices take nothing wider.
    fn write_u64(&self, at: usize, value: u64) {
        self.write_u32(at, value as u32);
        self.write_u32(at + 4, (value >> 32) as u32);
    }
}

/// One zeroed frame given to a device, freed when dropped (the caller
/// makes sure the device no longer uses it by then: reset it first).
pub struct DmaFrame {
    frame: PhysFrame,
    base: u64,
    len: usize,
}

impl DmaFrame {
    /// None when memory is exhausted.
    pub fn new() -> Option<DmaFrame> {
        let frame = frames::alloc()?;
        let base = phys_to_virt(frame.start_address()).as_u64();
        Some(DmaFrame {
            frame,
            base,
            len: PAGE_SIZE as usize,
        })
    }

    /// The address the device uses.
    pub fn phys(&self) -> u64 {
        self.frame.start_address().as_u64()
    }

    /// The kernel's address of bytes `at..at + len` of the frame, which
    /// must lie inside it.
    fn range(&self, at: usize, len: usize) -> *mut u8 {
        assert!(
            at.checked_add(len).is_some_and(|end| end <= self.len),
            "{len} bytes at {at:#x} of a {:#x}-byte DMA frame",
            self.len
        );
        (self.base + at as u64) as *mut u8
    }

    /// Copies `out.len()` bytes from `at` out of the frame, after the
    /// device wrote them: the caller saw its completion first, and the
    /// device writes them again only after the next offer.
    pub fn read_bytes(&self, at: usize, out: &mut [u8]) {
        let from = self.range(at, out.len());
        fence(Ordering::Acquire);
        // SAFETY: `range` keeps the bytes inside the frame, which `new`
        // mapped and nothing else owns; the device is done with them (the
        // fence orders the copy after the completion the caller saw), so
        // nothing writes them during the copy, and `out` is the caller's
        // own memory, not the frame's.
        unsafe { core::ptr::copy_nonoverlapping(from, out.as_mut_ptr(), out.len()) }
    }

    /// Copies `bytes` into the frame at `at`, before offering it to the
    /// device (which the caller orders after the copy with a fence).
    pub fn write_bytes(&self, at: usize, bytes: &[u8]) {
        let to = self.range(at, bytes.len());
        // SAFETY: as in `read_bytes`: inside the frame, which the device
        // does not read before the offer that follows.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), to, bytes.len()) }
    }
}

// SAFETY: the frame is the value's own (allocated in `new`, freed in
// `drop`) and the physical window maps it.
unsafe impl Window for DmaFrame {
    fn span(&self) -> (u64, usize) {
        (self.base, self.len)
    }
}

impl Drop for DmaFrame {
    fn drop(&mut self) {
        frames::release(self.frame);
    }
}

/// A device's registers: `len` bytes of a BAR at physical `phys`, seen
/// through the kernel's window on physical memory.
pub struct Registers {
    base: u64,
    len: usize,
}

/// How much of the devices' region (`DEVICES_START`) `Registers::map`
/// has handed out; it is never given back (devices are found once, at
/// boot, and kept).
static DEVICES_USED: AtomicU64 = AtomicU64::new(0);

impl Registers {
    /// The window on `len` bytes at `phys`. Below the end of the
    /// bootloader's physical-memory mapping (SeaBIOS puts every BAR below
    /// 4 GiB) that mapping serves, cacheable: QEMU's devices do not mind, a
    /// real machine's would need the page attributes changed (PAT, PCD).
    /// Past it (OVMF places 64-bit BARs, virtio's among them, high above
    /// RAM) the pages are mapped anew, uncached, in the devices' region of
    /// the kernel half, which every address space shares. None when that
    /// region is full or a page table cannot be made.
    pub fn map(phys: u64, len: usize) -> Option<Registers> {
        let end = phys.checked_add(len as u64)?;
        if end <= super::physical_end() {
            return Some(Registers {
                base: phys_to_virt(phys).as_u64(),
                len,
            });
        }
        let first = page_down(phys);
        let bytes = page_up(end)? - first;
        let at = DEVICES_USED.fetch_add(bytes, Ordering::Relaxed);
        if at + bytes > DEVICES_MAX {
            return None;
        }
        let flags =
            PageTableFlags::WRITABLE | PageTableFlags::NO_EXECUTE | PageTableFlags::NO_CACHE;
        for page in (0..bytes).step_by(PAGE_SIZE as usize) {
            let frame = PhysFrame::containing_address(PhysAddr::new(first + page));
            let virt = VirtAddr::new(DEVICES_START + at + page);
            paging::map_kernel(virt, frame, flags).ok()?;
        }
        Some(Registers {
            base: DEVICES_START + at + (phys - first),
            len,
        })
    }
}

// SAFETY: `map` made the span from a BAR range inside the physical
// window, which is never unmapped, or mapped it in the devices' region,
// whose mappings are never taken down.
unsafe impl Window for Registers {
    fn span(&self) -> (u64, usize) {
        (self.base, self.len)
    }
}
