//! Per-thread kernel stacks.
//!
//! Each thread runs kernel code (system calls, faults, its half of a context
//! switch) on its own stack, so it can sleep in the kernel while others run,
//! the other threads of its process too.
//! Stacks live in fixed slots above `KSTACKS_START`; the lowest page of every
//! slot stays unmapped, so an overflow hits a guard page and becomes a double
//! fault report instead of silently corrupting the neighbour.
//!
//! The top of a stack, from high to low:
//!
//!     top()                      end of the stack
//!     saved context (8 bytes)    the stack pointer `suspend` saved, which
//!                                `resume` switches back to; 0 while the
//!                                stack runs
//!     (8 bytes unused)           keeps the frame 16-byte aligned
//!     work due (8 bytes)         what the thread must do before it next
//!                                returns to user mode (`work_due`)
//!     entry record (8 bytes)     the user pc of the latest entry from user
//!                                mode (arch::trap::record_entry)
//!     entry_top()                the TSS's rsp0 and the syscall stub's stack
//!     TrapFrame                  built by every entry from user mode
//!     ...                        the kernel's own calls
//!
//! The record exists because the frame does not stay as it was built:
//! rt_sigreturn and execve rewrite it in the middle of the call, and a tick
//! that lands after that must still be charged to the pc the process
//! entered at (profil's system time, proc::on_tick).
//!
//! The work-due word is Linux's `thread_info` flags, which also began life
//! at the end of the kernel stack: bits others set (a signal sent, a tick
//! that ends the time slice or leaves profil ticks pending; proc/mod.rs
//! names them) and the thread clears on its way out. It is on the stack
//! rather than in `proc::Thread` because the way out reads it without the
//! process table's lock: the running thread finds its own stack's word
//! through this CPU's record (`running_work_due`), so returning to user
//! mode with nothing due costs one load and one test.
//!
//! The context switch is here too, behind two safe functions: `resume`
//! switches from the scheduler to a suspended stack and `suspend` from the
//! running stack back to the scheduler. A stack is named by its `StackId`,
//! both check what they are given (a live, suspended stack; the stack the
//! CPU is on) and panic otherwise, so the scheduler in proc/ needs no unsafe
//! code to switch.

use alloc::vec::Vec;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::{KSTACKS_START, PAGE_SIZE, frames, paging};
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::trap::TrapFrame;
use crate::arch::{percpu, switch};
use crate::sync::{IrqLock, Rank};

/// Usable pages per stack (64 KiB), plus one guard page per slot.
const STACK_PAGES: u64 = 16;
/// Bytes above the trap frame for the entry record, the work-due word and
/// the saved context; a multiple of 16 keeps the frame, and so the stack
/// below it, 16-byte aligned.
const ENTRY_RECORD: u64 = 32;
/// Where the work-due word lies above the entry top.
const WORK_DUE_OFFSET: u64 = 8;

const SLOT_SIZE: u64 = (STACK_PAGES + 1) * PAGE_SIZE;

/// Freed slots that wait for one TLB shootdown together before any of
/// them is used again (see `Slots`).
const STALE_BATCH: usize = 16;

/// The stack slots. A freed stack's pages are unmapped and its frames go
/// back at once, but another CPU that ran its thread may still hold TLB
/// entries for its addresses. Those are harmless as long as nothing uses
/// the addresses (nothing does: the thread is gone), so instead of making
/// every CPU flush for each stack that goes (an IPI round per exiting
/// thread), the slot waits in `stale` and is not handed out again until a
/// single shootdown has cleared the whole batch: Linux's lazy purge of
/// vmalloc addresses (mm/vmalloc.c), for the same reason.
struct Slots {
    /// Slots that no CPU caches entries for: reusable.
    free: Vec<u64>,
    /// Freed slots that some CPU may still cache entries for.
    stale: Vec<u64>,
    /// Slots above this one were never used.
    next: u64,
}

static SLOTS: IrqLock<Slots> = IrqLock::new(
    Rank::StackSlots,
    Slots {
        free: Vec::new(),
        stale: Vec::new(),
        next: 0,
    },
);

impl Slots {
    /// A slot for a new stack: a clean one; or, once enough stale ones
    /// wait, all of them after one shootdown; or a never-used one.
    fn take(&mut self) -> u64 {
        if self.free.is_empty() && self.stale.len() >= STALE_BATCH {
            crate::arch::smp::shootdown_kernel();
            self.free.append(&mut self.stale);
        }
        self.free.pop().unwrap_or_else(|| {
            self.next += 1;
            self.next - 1
        })
    }

    fn is_live(&self, slot: u64) -> bool {
        slot < self.next && !self.free.contains(&slot) && !self.stale.contains(&slot)
    }
}

pub struct KernelStack {
    slot: u64,
}

/// Names a kernel stack for `resume` and `suspend`: a copy the scheduler
/// can keep after letting go of the process table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackId(u64);

/// The saved-context word of the stack in `slot`.
fn context_word(slot: u64) -> *mut u64 {
    let top = KSTACKS_START + slot * SLOT_SIZE + (STACK_PAGES + 1) * PAGE_SIZE;
    (top - 8) as *mut u64
}

/// Whether `slot` holds a stack right now.
fn is_live(slot: u64) -> bool {
    SLOTS.lock().is_live(slot)
}

/// Switches from the scheduler to the suspended stack `id`; returns when
/// that stack calls `suspend`. Panics if `id` names no live stack, or one
/// with no saved context (it runs already, or was never prepared).
pub fn resume(id: StackId) {
    assert!(is_live(id.0), "resume: no kernel stack in slot {}", id.0);
    // SAFETY: the slot holds a live stack (checked), whose top page is
    // mapped; the scheduler is the only one switching, with interrupts off.
    let next = unsafe { context_word(id.0).replace(0) };
    assert!(
        next != 0,
        "resume: kernel stack {} has no saved context",
        id.0
    );
    let scheduler = percpu::this_cpu().scheduler_context();
    // SAFETY: `next` was saved by `suspend` or `with_first_frame` on that
    // stack, which is still mapped; the scheduler's own context goes to
    // this CPU's record, where `suspend` finds it.
    unsafe { switch::switch_stacks(scheduler.as_ptr(), next) };
}

/// Switches from the running stack `id` back to the scheduler, saving this
/// context for a later `resume`. Panics unless the CPU is on that stack.
pub fn suspend(id: StackId) {
    let here = &id as *const StackId as u64;
    let base = KSTACKS_START + id.0 * SLOT_SIZE;
    assert!(
        is_live(id.0) && (base..base + SLOT_SIZE).contains(&here),
        "suspend: not running on kernel stack {}",
        id.0
    );
    let scheduler = percpu::this_cpu().scheduler_context();
    // SAFETY: this is the running stack (checked), so its top page is
    // mapped and stays so until it is resumed; the scheduler saved its own
    // context in this CPU's record before resuming this stack (a thread
    // goes back to the scheduler of the CPU it runs on).
    unsafe { switch::switch_stacks(context_word(id.0), scheduler.load(Ordering::Relaxed)) };
}

impl KernelStack {
    /// A mapped stack; None when out of memory.
    pub fn new() -> Option<KernelStack> {
        let slot = SLOTS.lock().take();
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

    /// A new stack prepared so that its first `resume` returns through
    /// `trap_return` with `frame` (the way a new process starts). None when
    /// out of memory.
    pub fn with_first_frame(frame: &TrapFrame) -> Option<KernelStack> {
        let stack = KernelStack::new()?;
        // SAFETY: the stack was just mapped and nothing runs on it yet; the
        // context word is in its top page, above the frame.
        unsafe {
            let saved = switch::prepare_new_stack(stack.entry_top(), frame);
            context_word(stack.slot).write(saved);
        }
        Some(stack)
    }

    /// A new stack prepared so that its first `resume` calls `entry`, a
    /// kernel thread's start (proc/kthread.rs). None when out of memory.
    pub fn for_kernel_thread(entry: extern "C" fn() -> !) -> Option<KernelStack> {
        let stack = KernelStack::new()?;
        // SAFETY: as in `with_first_frame`: a fresh stack, and the context
        // word above what `prepare_kernel_thread_stack` writes.
        unsafe {
            let saved = switch::prepare_kernel_thread_stack(stack.entry_top(), entry);
            context_word(stack.slot).write(saved);
        }
        Some(stack)
    }

    /// The name `resume` and `suspend` take.
    pub fn id(&self) -> StackId {
        StackId(self.slot)
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

    /// The thread's work-due word (see the top of this file).
    pub fn work_due(&self) -> &AtomicU64 {
        // SAFETY: this stack's top is mapped for as long as `self` lives,
        // which the returned borrow cannot outlast.
        unsafe { work_word(self.entry_top()) }
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
        // Until a shootdown, another CPU may cache entries for the slot.
        SLOTS.lock().stale.push(self.slot);
    }
}

/// The work-due word of the thread this CPU runs, read without the process
/// table: its stack is the one the CPU's entry top points into.
///
/// Only for code running on that thread's behalf (its way back to user
/// mode), when its stack is the running one and so cannot be freed.
pub fn running_work_due() -> &'static AtomicU64 {
    let entry_top = percpu::this_cpu().entry_top();
    debug_assert!(
        entry_top >= KSTACKS_START,
        "running_work_due with no thread running"
    );
    // SAFETY: the scheduler set the entry top to the running thread's
    // stack, which stays mapped while the thread runs (it is freed only by
    // the scheduler after the thread's last switch away). The 'static is
    // the caller's promise above.
    unsafe { work_word(entry_top) }
}

/// The work-due word of the stack whose entry top is `entry_top`: 8-byte
/// aligned in its reserved top, and only ever used as an atomic.
///
/// # Safety
/// That stack must stay mapped for as long as the returned borrow lives.
unsafe fn work_word<'a>(entry_top: u64) -> &'a AtomicU64 {
    // SAFETY: the caller's promise keeps the word mapped; it is aligned
    // and nothing reaches it but through an `AtomicU64`.
    unsafe { &*((entry_top + WORK_DUE_OFFSET) as *const AtomicU64) }
}
