//! The heap: `linked_list_allocator` over memory from brk.
//!
//! The heap starts empty at the initial break and grows by moving the break
//! (at least 64 KiB at a time) when an allocation does not fit.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;

use crate::sys;

const GROW_MIN: usize = 64 * 1024;

struct BrkHeap {
    heap: spin_cell::Cell<Heap>,
}

/// A single-threaded cell: programs here have one thread.
mod spin_cell {
    use core::cell::UnsafeCell;
    pub struct Cell<T>(UnsafeCell<T>);
    // SAFETY: user programs on profkern are single-threaded, and the
    // allocator is not reentrant (no signal handler allocates).
    unsafe impl<T> Sync for Cell<T> {}
    impl<T> Cell<T> {
        pub const fn new(v: T) -> Self {
            Cell(UnsafeCell::new(v))
        }
        #[allow(clippy::mut_from_ref)]
        pub fn get(&self) -> &mut T {
            // SAFETY: see the Sync impl.
            unsafe { &mut *self.0.get() }
        }
    }
}

#[global_allocator]
static HEAP: BrkHeap = BrkHeap {
    heap: spin_cell::Cell::new(Heap::empty()),
};

impl BrkHeap {
    fn grow(&self, at_least: usize) -> bool {
        let heap = self.heap.get();
        let want = at_least.max(GROW_MIN).next_multiple_of(4096);
        if heap.size() == 0 {
            let start = sys::brk(0).next_multiple_of(16);
            if sys::brk(start + want) != start + want {
                return false;
            }
            // SAFETY: [start, start + want) was just given to us by brk.
            unsafe { heap.init(start as *mut u8, want) };
        } else {
            let top = heap.top() as usize;
            if sys::brk(top + want) != top + want {
                return false;
            }
            // SAFETY: the break moved up by `want` right above the heap's top.
            unsafe { heap.extend(want) };
        }
        true
    }
}

// SAFETY: blocks come from the linked-list heap over brk memory, disjoint and
// aligned as requested.
unsafe impl GlobalAlloc for BrkHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Ok(p) = self.heap.get().allocate_first_fit(layout) {
            return p.as_ptr();
        }
        if !self.grow(layout.size() + layout.align()) {
            return core::ptr::null_mut();
        }
        self.heap
            .get()
            .allocate_first_fit(layout)
            .map_or(core::ptr::null_mut(), |p| p.as_ptr())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // SAFETY: `ptr` came from `alloc` with this layout.
            unsafe { self.heap.get().deallocate(p, layout) };
        }
    }
}
