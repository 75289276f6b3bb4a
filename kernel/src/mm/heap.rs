//! The kernel heap: `linked_list_allocator` over a region that grows.
//!
//! The heap starts small and maps more frames at its end when an allocation
//! does not fit, up to `HEAP_MAX`. So its size follows what the kernel really
//! uses (the ramfs keeps file data here), and running out is an allocation
//! failure the caller sees, not a fixed limit chosen at boot.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::{HEAP_MAX, HEAP_START, PAGE_SIZE, frames, paging};
use crate::sync::IrqLock;

const INITIAL_SIZE: u64 = 1 << 20;
const GROW_STEP: u64 = 1 << 20;

struct KernelHeap {
    heap: IrqLock<Heap>,
}

#[global_allocator]
static ALLOCATOR: KernelHeap = KernelHeap {
    heap: IrqLock::new(Heap::empty()),
};

/// Maps `bytes` more of heap at `end`; on failure maps nothing and returns false.
fn map_more(end: u64, bytes: u64) -> bool {
    if end + bytes > HEAP_START + HEAP_MAX {
        return false;
    }
    let flags = Flags::PRESENT | Flags::WRITABLE | Flags::NO_EXECUTE;
    for page in (end..end + bytes).step_by(PAGE_SIZE as usize) {
        let mapped = frames::alloc().is_some_and(|frame| {
            let ok = paging::map_kernel(VirtAddr::new(page), frame, flags).is_ok();
            if !ok {
                frames::release(frame);
            }
            ok
        });
        if !mapped {
            for done in (end..page).step_by(PAGE_SIZE as usize) {
                if let Some(frame) = paging::unmap_kernel(VirtAddr::new(done)) {
                    frames::release(frame);
                }
            }
            return false;
        }
    }
    true
}

pub fn init() {
    assert!(
        map_more(HEAP_START, INITIAL_SIZE),
        "no memory for the kernel heap"
    );
    // SAFETY: the region was just mapped and is used by nothing else.
    unsafe {
        ALLOCATOR
            .heap
            .lock()
            .init(HEAP_START as *mut u8, INITIAL_SIZE as usize)
    };
}

/// Bytes of heap in use and mapped.
pub fn usage() -> (usize, usize) {
    let heap = ALLOCATOR.heap.lock();
    (heap.used(), heap.size())
}

/// The heap's accounting holds (used + free = size, inside the mapped
/// range) and it still hands out and takes back memory.
pub fn check() -> Result<(), &'static str> {
    {
        let heap = ALLOCATOR.heap.lock();
        if heap.used() + heap.free() != heap.size() {
            return Err("heap: used + free != size");
        }
        if heap.bottom() as u64 != HEAP_START || heap.top() as u64 > HEAP_START + HEAP_MAX {
            return Err("heap: bounds moved");
        }
    }
    let probe = alloc::vec![0x5au8; 4096];
    if probe.iter().any(|&b| b != 0x5a) {
        return Err("heap: a fresh block did not keep its bytes");
    }
    Ok(())
}

// SAFETY: allocations come from the linked-list heap, which hands out
// disjoint, correctly aligned blocks of mapped memory.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut heap = self.heap.lock();
        if let Ok(block) = heap.allocate_first_fit(layout) {
            return block.as_ptr();
        }
        let want = (layout.size() + layout.align()) as u64;
        let grow = want.div_ceil(GROW_STEP) * GROW_STEP;
        let end = heap.top() as u64;
        if !map_more(end, grow) {
            return core::ptr::null_mut();
        }
        // SAFETY: the pages right above the heap's top were just mapped.
        unsafe { heap.extend(grow as usize) };
        heap.allocate_first_fit(layout)
            .map_or(core::ptr::null_mut(), |b| b.as_ptr())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(block) = NonNull::new(ptr) {
            // SAFETY: `ptr` came from `alloc` with this layout.
            unsafe { self.heap.lock().deallocate(block, layout) };
        }
    }
}
