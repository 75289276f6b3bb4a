//! The kernel heap: `linked_list_allocator` over a region that grows, with
//! free lists for small blocks in front of it.
//!
//! The heap starts small and maps more frames at its end when an allocation
//! does not fit, up to `HEAP_MAX`. So its size follows what the kernel really
//! uses (the ramfs keeps file data here), and running out is an allocation
//! failure the caller sees, not a fixed limit chosen at boot.
//!
//! Why the free lists: the linked-list heap finds a block by walking its
//! free list from the start (first fit), so its cost grows with how
//! fragmented the heap is; a system call that allocated and freed a one-byte
//! buffer paid about 700 ns for it under TCG, more than the whole null call
//! (measured: `read` of 1 byte from /dev/null, 1760 ns with the buffer on
//! the heap, 1054 ns with it on the stack). Blocks of up to 4 KiB now come
//! from one free list per power-of-two size (16 B to 4 KiB): taking or
//! giving back a block is a push or a pop. A list that runs dry takes a
//! 4 KiB slab from the linked-list heap and cuts it into blocks of its size,
//! each aligned to that size (so any alignment up to the size holds). Freed
//! small blocks stay on their list for the next allocation of that size
//! rather than going back to the linked-list heap: the slab allocators of
//! Linux and the BSDs keep partly used slabs the same way, and a teaching
//! kernel can afford the memory. Larger blocks go to the linked-list heap
//! as before.
//!
//! The 4 KiB list is the buffer cache's: each cached disk block is a 4 KiB
//! block, and a cache that reads a file through evicts one for each it
//! takes. From the linked-list heap, every such free walked a free list
//! that the churn itself had made long (a twelfth of a disk read's time
//! under TCG); from the list it is a push.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::{HEAP_MAX, HEAP_START, PAGE_SIZE, frames, paging};
use crate::sync::{IrqLock, Rank};

const INITIAL_SIZE: u64 = 1 << 20;
const GROW_STEP: u64 = 1 << 20;

/// The smallest block size (a free block holds the next one's address).
const SMALLEST: usize = 16;
/// Size classes: 16, 32, ..., 4096 bytes.
const CLASSES: usize = 9;
/// What a dry list takes from the linked-list heap at once.
const SLAB: usize = 4096;

/// The heap and the free lists, under one lock.
struct Allocator {
    heap: Heap,
    /// The first free block of each size class (0: none); each free block
    /// holds the address of the next.
    free: [usize; CLASSES],
}

struct KernelHeap {
    inner: IrqLock<Allocator>,
}

#[global_allocator]
static ALLOCATOR: KernelHeap = KernelHeap {
    inner: IrqLock::new(
        Rank::Heap,
        Allocator {
            heap: Heap::empty(),
            free: [0; CLASSES],
        },
    ),
};

/// The size class of `layout`, if it is small enough for the free lists:
/// its size rounded up to a power of two, at least its alignment.
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size().max(layout.align()).max(SMALLEST);
    let class = size.next_power_of_two().trailing_zeros() - SMALLEST.trailing_zeros();
    (class < CLASSES as u32).then_some(class as usize)
}

fn class_size(class: usize) -> usize {
    SMALLEST << class
}

/// Maps `bytes` more of heap at `end`; on failure maps nothing and returns false.
fn map_more(end: u64, bytes: u64) -> bool {
    // A request sized by a program (a buffer for what it asked) can be
    // near 2^64 bytes: it must fail here, not overflow.
    if end
        .checked_add(bytes)
        .is_none_or(|top| top > HEAP_START + HEAP_MAX)
    {
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
            .inner
            .lock()
            .heap
            .init(HEAP_START as *mut u8, INITIAL_SIZE as usize)
    };
}

/// Bytes of heap in use (free-list blocks count as used) and mapped.
pub fn usage() -> (usize, usize) {
    let inner = ALLOCATOR.inner.lock();
    (inner.heap.used(), inner.heap.size())
}

/// The heap's accounting holds (used + free = size, inside the mapped
/// range) and it still hands out and takes back memory.
pub fn check() -> Result<(), &'static str> {
    {
        let inner = ALLOCATOR.inner.lock();
        let heap = &inner.heap;
        if heap.used() + heap.free() != heap.size() {
            return Err("heap: used + free != size");
        }
        if heap.bottom() as u64 != HEAP_START || heap.top() as u64 > HEAP_START + HEAP_MAX {
            return Err("heap: bounds moved");
        }
        let (bottom, top) = (heap.bottom() as usize, heap.top() as usize);
        for (class, &first) in inner.free.iter().enumerate() {
            let size = class_size(class);
            let mut block = first;
            while block != 0 {
                if block < bottom || block + size > top || block % size != 0 {
                    return Err("heap: a free-list block is outside the heap or misaligned");
                }
                // SAFETY: a free-list block lies in the mapped heap (just
                // checked) and its first word is the next block's address.
                block = unsafe { *(block as *const usize) };
            }
        }
    }
    let probe = alloc::vec![0x5au8; 4096];
    let small = alloc::vec![0xa5u8; 24];
    if probe.iter().any(|&b| b != 0x5a) || small.iter().any(|&b| b != 0xa5) {
        return Err("heap: a fresh block did not keep its bytes");
    }
    Ok(())
}

impl Allocator {
    /// A block from the linked-list heap, growing it if nothing fits.
    fn take_from_heap(&mut self, layout: Layout) -> *mut u8 {
        if let Ok(block) = self.heap.allocate_first_fit(layout) {
            return block.as_ptr();
        }
        let want = (layout.size() + layout.align()) as u64;
        let grow = want.div_ceil(GROW_STEP) * GROW_STEP;
        let end = self.heap.top() as u64;
        if !map_more(end, grow) {
            return core::ptr::null_mut();
        }
        // SAFETY: the pages right above the heap's top were just mapped.
        unsafe { self.heap.extend(grow as usize) };
        self.heap
            .allocate_first_fit(layout)
            .map_or(core::ptr::null_mut(), |b| b.as_ptr())
    }

    /// Puts the free block at `block` on `class`'s list.
    ///
    /// # Safety
    /// `block` must be a block of `class`'s size that nothing else uses,
    /// aligned to that size, inside the heap.
    unsafe fn push(&mut self, class: usize, block: *mut u8) {
        // SAFETY: by the caller's promise the block is ours to write.
        unsafe { (block as *mut usize).write(self.free[class]) };
        self.free[class] = block as usize;
    }

    /// A block of `class`'s size, from its list (refilled from a slab if
    /// the list is dry).
    fn small(&mut self, class: usize) -> *mut u8 {
        if self.free[class] == 0 {
            let slab = self.take_from_heap(Layout::from_size_align(SLAB, SLAB).expect("a page"));
            if slab.is_null() {
                return slab;
            }
            let size = class_size(class);
            for offset in (0..SLAB).step_by(size).rev() {
                // SAFETY: the slab is a fresh, page-aligned block of SLAB
                // bytes; each piece is `size` bytes aligned to `size`.
                unsafe { self.push(class, slab.add(offset)) };
            }
        }
        let block = self.free[class] as *mut u8;
        // SAFETY: the list's first block is free and holds the next's address.
        self.free[class] = unsafe { *(block as *const usize) };
        block
    }
}

// SAFETY: small blocks come from the free lists, each a distinct block of
// its class's size aligned to it (at least the layout's size and alignment,
// `class_of`), larger ones from the linked-list heap, which hands out
// disjoint, correctly aligned blocks of mapped memory; a block goes back to
// where `alloc` took it from, as the layout decides both.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut inner = self.inner.lock();
        match class_of(layout) {
            Some(class) => inner.small(class),
            None => inner.take_from_heap(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(block) = NonNull::new(ptr) else {
            return;
        };
        let mut inner = self.inner.lock();
        match class_of(layout) {
            // SAFETY: `ptr` came from `small(class)` (the same layout gives
            // the same class) and its owner has let it go.
            Some(class) => unsafe { inner.push(class, ptr) },
            // SAFETY: `ptr` came from the linked-list heap with this layout.
            None => unsafe { inner.heap.deallocate(block, layout) },
        }
    }
}
