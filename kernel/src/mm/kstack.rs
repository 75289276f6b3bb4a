//! Per-process kernel stacks.
//!
//! Each process runs kernel code (system calls, faults, its half of a context
//! switch) on its own stack, so it can sleep in the kernel while others run.
//! Stacks live in fixed slots above `KSTACKS_START`; the lowest page of every
//! slot stays unmapped, so an overflow hits a guard page and becomes a double
//! fault report instead of silently corrupting the neighbour.

use alloc::vec::Vec;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::{KSTACKS_START, PAGE_SIZE, frames, paging};
use crate::sync::IrqLock;

/// Usable pages per stack (64 KiB), plus one guard page per slot.
const STACK_PAGES: u64 = 16;
const SLOT_SIZE: u64 = (STACK_PAGES + 1) * PAGE_SIZE;

struct Slots {
    free: Vec<u64>,
    next: u64,
}

static SLOTS: IrqLock<Slots> = IrqLock::new(Slots {
    free: Vec::new(),
    next: 0,
});

pub struct KernelStack {
    slot: u64,
}

impl KernelStack {
    /// A mapped stack; None when out of memory.
    pub fn new() -> Option<KernelStack> {
        let slot = {
            let mut slots = SLOTS.lock();
            slots.free.pop().unwrap_or_else(|| {
                slots.next += 1;
                slots.next - 1
            })
        };
        let stack = KernelStack { slot };
        for page in 0..STACK_PAGES {
            let frame = frames::alloc()?; // Drop unmaps what was mapped so far
            let flags = Flags::PRESENT | Flags::WRITABLE | Flags::NO_EXECUTE;
            if paging::map_kernel(stack.page(page), frame, flags).is_err() {
                frames::release(frame);
                return None;
            }
        }
        Some(stack)
    }

    fn page(&self, n: u64) -> VirtAddr {
        VirtAddr::new(KSTACKS_START + self.slot * SLOT_SIZE + (n + 1) * PAGE_SIZE)
    }

    /// The address just above the stack (stacks grow down).
    pub fn top(&self) -> u64 {
        self.page(STACK_PAGES).as_u64()
    }
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        for page in 0..STACK_PAGES {
            if let Some(frame) = paging::unmap_kernel(self.page(page)) {
                frames::release(frame);
            }
        }
        SLOTS.lock().free.push(self.slot);
    }
}
