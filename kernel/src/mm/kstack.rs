//! Per-process kernel stacks.
//!
//! Each process runs kernel code (system calls, faults, its half of a context
//! switch) on its own stack, so it can sleep in the kernel while others run.
//! Stacks live in fixed slots above `KSTACKS_START`; the lowest page of every
//! slot stays unmapped, so an overflow hits a guard page and becomes a double
//! fault report instead of silently corrupting the neighbour.
//!
//! The top of a stack, from high to low:
//!
//!     top()                      end of the stack
//!     entry record (16 bytes)    the user pc of the latest entry from user
//!                                mode (arch::trap::record_entry)
//!     entry_top()                the TSS's rsp0 and the syscall stub's stack
//!     TrapFrame                  built by every entry from user mode
//!     ...                        the kernel's own calls
//!
//! The record exists because the frame does not stay as it was built:
//! rt_sigreturn and execve rewrite it in the middle of the call, and a tick
//! that lands after that must still be charged to the pc the process
//! entered at (profil's system time, proc::on_tick).

use alloc::vec::Vec;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::{KSTACKS_START, PAGE_SIZE, frames, paging};
use crate::arch::trap::TrapFrame;
use crate::sync::IrqLock;

/// Usable pages per stack (64 KiB), plus one guard page per slot.
const STACK_PAGES: u64 = 16;
/// Bytes above the trap frame for the entry record; 16 keeps the frame, and
/// so the stack below it, 16-byte aligned.
const ENTRY_RECORD: u64 = 16;
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

    /// A new stack prepared so that the first switch to it returns through
    /// `trap_return` with `frame` (the way a new process starts); with the
    /// saved stack pointer to switch to. None when out of memory.
    pub fn with_first_frame(frame: &TrapFrame) -> Option<(KernelStack, u64)> {
        let stack = KernelStack::new()?;
        // SAFETY: the stack was just mapped and nothing runs on it yet.
        let saved_rsp = unsafe { crate::arch::switch::prepare_new_stack(stack.entry_top(), frame) };
        Some((stack, saved_rsp))
    }

    /// Where an entry from user mode builds its trap frame: just under the
    /// entry record.
    pub fn entry_top(&self) -> u64 {
        self.top() - ENTRY_RECORD
    }

    /// Where the trap frame of the latest entry from user mode lies (or the
    /// one a new process's first switch returns through).
    pub fn user_frame_at(&self) -> *mut TrapFrame {
        (self.entry_top() - size_of::<TrapFrame>() as u64) as *mut TrapFrame
    }

    /// The trap frame of the latest entry from user mode, as it is now.
    pub fn user_frame(&self) -> TrapFrame {
        // SAFETY: the top page of a live stack is mapped, and the frame
        // there was written by the entry (or by prepare_new_stack); this
        // copies kernel memory only.
        unsafe { self.user_frame_at().read() }
    }

    /// The user pc at which the process last entered the kernel, as recorded
    /// at entry: later rewrites of the frame do not move it.
    pub fn entry_pc(&self) -> u64 {
        // SAFETY: the record is the first word of the reserved top of a
        // mapped stack, written at every entry (and by prepare_new_stack).
        unsafe { (self.entry_top() as *const u64).read() }
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
