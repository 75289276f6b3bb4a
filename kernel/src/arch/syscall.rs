//! The `syscall` instruction's way into the kernel.
//!
//! `syscall` jumps to `syscall_entry` in ring 0 with the user's rip in rcx and
//! rflags in r11, interrupts masked (FMASK), and the user's stack still in rsp.
//! The stub switches to the current process's kernel stack and builds the same
//! `TrapFrame` an interrupt would (with vector `SYSCALL_VECTOR`), then joins
//! the common path in trap.rs. The frame's error code slot holds the system
//! call number (Linux's orig_rax), which survives the result overwriting
//! rax, so a call a signal interrupted can restart. One frame layout for
//! every entry keeps fork, exec and signals simple: each of them just edits
//! the frame.
//!
//! The way out is `syscall_return`: `sysretq` when it would restore exactly
//! what `iretq` would, `trap_return`'s `iretq` otherwise. `sysretq` is the
//! cheaper instruction (no stack frame to read, no descriptor checks), but
//! it takes rip from rcx and rflags from r11 and sets cs and ss to the
//! STAR selectors, so it is used only when the frame says rcx == rip,
//! r11 == rflags and the selectors are the user's, which holds after any
//! ordinary call and fails when the kernel rewrote the frame (a signal
//! handler entered, `rt_sigreturn`, exec's new program). As Linux's
//! `entry_SYSCALL_64` does, it also refuses a non-canonical rip (Intel's
//! `sysretq` would fault in ring 0 on the user's stack) and a set TF or RF
//! (which `sysretq` cannot restore as `iretq` does).
//!
//! `syscall` does not switch stacks, so the stub's first act is `swapgs`,
//! which makes GS point at this CPU's record (arch/percpu.rs); it keeps the
//! user's rsp there for a moment and loads the running thread's kernel
//! stack from the same record, which the scheduler updates on every switch.
//! The last act before `sysretq` is the `swapgs` that gives the user back
//! its own GS base.

use x86_64::VirtAddr;
use x86_64::registers::model_specific::{Efer, EferFlags, LStar, SFMask, Star};
use x86_64::registers::rflags::RFlags;

use super::gdt;
use super::trap::TrapFrame;
use core::mem::offset_of;

/// The pseudo-vector of system calls in a `TrapFrame`.
pub const SYSCALL_VECTOR: u64 = 256;

core::arch::global_asm!(
    r#"
    .section .text.syscall, "ax"
    .global syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:{cpu_user_rsp}
    movq %gs:{cpu_entry_top}, %rsp
    pushq ${user_ss}
    pushq %gs:{cpu_user_rsp}
    pushq %r11
    pushq ${user_cs}
    pushq %rcx
    pushq %rax
    pushq ${vector}
    jmp alltraps_gs_ready

    // Entered from alltraps with rsp at a system call's TrapFrame, after
    // trap_dispatch (and return_to_user) made it what user mode resumes.
    .global syscall_return
syscall_return:
    cli
    movq {rcx}(%rsp), %rcx
    cmpq {rip}(%rsp), %rcx
    jne trap_return
    movq {r11}(%rsp), %r11
    cmpq {rflags}(%rsp), %r11
    jne trap_return
    testq ${tf_rf}, %r11
    jnz trap_return
    shrq $47, %rcx
    jnz trap_return
    cmpq ${user_cs}, {cs}(%rsp)
    jne trap_return
    cmpq ${user_ss}, {ss}(%rsp)
    jne trap_return
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    // rsp is at the vector now. Interrupts stay off from here (rflags comes
    // back with sysretq), so nothing lands on the user's stack once rsp
    // holds it, and nothing runs with the user's GS base but sysretq.
    movq {user_rsp}(%rsp), %rsp
    swapgs
    sysretq
    "#,
    user_ss = const 0x1b,
    user_cs = const 0x23,
    vector = const SYSCALL_VECTOR,
    cpu_user_rsp = const super::percpu::USER_RSP_OFFSET,
    cpu_entry_top = const super::percpu::ENTRY_TOP_OFFSET,
    rcx = const offset_of!(TrapFrame, rcx),
    r11 = const offset_of!(TrapFrame, r11),
    rip = const offset_of!(TrapFrame, rip),
    rflags = const offset_of!(TrapFrame, rflags),
    cs = const offset_of!(TrapFrame, cs),
    ss = const offset_of!(TrapFrame, ss),
    user_rsp = const offset_of!(TrapFrame, rsp) - offset_of!(TrapFrame, vector),
    tf_rf = const RFlags::TRAP_FLAG.bits() | RFlags::RESUME_FLAG.bits(),
    options(att_syntax)
);

unsafe extern "C" {
    fn syscall_entry();
}

/// Enables `syscall` and points it at the entry stub.
pub fn init() {
    let sel = gdt::selectors();
    assert_eq!(sel.user_data.0, 0x1b, "syscall_entry pushes this selector");
    assert_eq!(sel.user_code.0, 0x23, "syscall_entry pushes this selector");
    Star::write(
        sel.user_code,
        sel.user_data,
        sel.kernel_code,
        sel.kernel_data,
    )
    .expect("GDT order fits STAR");
    LStar::write(VirtAddr::new(syscall_entry as *const () as u64));
    SFMask::write(
        RFlags::INTERRUPT_FLAG
            | RFlags::DIRECTION_FLAG
            | RFlags::TRAP_FLAG
            | RFlags::ALIGNMENT_CHECK,
    );
    // SAFETY: enabling SCE only makes the syscall instruction available.
    unsafe { Efer::update(|f| *f |= EferFlags::SYSTEM_CALL_EXTENSIONS) };
}
