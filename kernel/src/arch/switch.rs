//! Switching kernel stacks: the heart of the scheduler.
//!
//! `switch_stacks(save, next)` pushes the callee-saved registers, stores rsp
//! in `*save`, loads `next` and pops the registers saved there: the caller's
//! call returns in the other thread of control. A new process's stack is
//! prepared (`prepare_new_stack`) so that its first switch "returns" into
//! `trap_return` with its `TrapFrame` on top, which drops it into user mode.
//! A kernel thread's stack (`prepare_kernel_thread_stack`) has no frame: its
//! first switch "returns" into the thread's entry function, which never
//! leaves the kernel.

use super::trap::TrapFrame;

core::arch::global_asm!(
    r#"
    .section .text.switch, "ax"
    .global switch_stacks
switch_stacks:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    /// Saves the current context's rsp to `*save` and resumes `next`.
    pub fn switch_stacks(save: *mut u64, next: u64);
}

/// Lays out a fresh kernel stack whose entry top is `top`
/// (`KernelStack::entry_top`): the entry record above it says the process
/// entered at `frame.rip`, `frame` lies just under it, and under that what
/// `switch_stacks` pops (six zero registers and the return address
/// `trap_return`). Returns the rsp to switch to.
///
/// # Safety
/// `top` must be the entry top of a mapped, unused kernel stack of at least
/// a page.
pub unsafe fn prepare_new_stack(top: u64, frame: &TrapFrame) -> u64 {
    let frame_at = top - size_of::<TrapFrame>() as u64;
    let words = frame_at - 7 * 8;
    // SAFETY: every write stays within the top page of the caller's stack
    // (the entry record is reserved above `top`).
    unsafe {
        (top as *mut u64).write(frame.rip);
        (frame_at as *mut TrapFrame).write(*frame);
        let slots = words as *mut u64;
        for i in 0..6 {
            slots.add(i).write(0);
        }
        slots
            .add(6)
            .write(super::trap::trap_return as *const () as u64);
    }
    words
}

/// Lays out a fresh kernel stack whose entry top is `top` for a kernel
/// thread: its first switch "returns" into `entry`, with the stack aligned
/// as a call would leave it and a zero return address above (so a
/// backtrace ends there). The entry record says the thread entered at pc
/// 0: it never came from user mode. Returns the rsp to switch to.
///
/// # Safety
/// `top` must be the entry top of a mapped, unused kernel stack of at least
/// a page.
pub unsafe fn prepare_kernel_thread_stack(top: u64, entry: extern "C" fn() -> !) -> u64 {
    // At a function's first instruction rsp + 8 is a multiple of 16.
    let return_at = ((top - 64) & !15) - 8;
    let words = return_at - 7 * 8;
    // SAFETY: every write stays within the 64 bytes under `top` and the
    // entry record above it, in the top page of the caller's stack.
    unsafe {
        (top as *mut u64).write(0);
        (return_at as *mut u64).write(0);
        let slots = words as *mut u64;
        for i in 0..6 {
            slots.add(i).write(0);
        }
        slots.add(6).write(entry as *const () as u64);
    }
    words
}
