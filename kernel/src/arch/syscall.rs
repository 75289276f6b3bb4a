//! The `syscall` instruction's way into the kernel.
//!
//! `syscall` jumps to `syscall_entry` in ring 0 with the user's rip in rcx and
//! rflags in r11, interrupts masked (FMASK), and the user's stack still in rsp.
//! The stub switches to the current process's kernel stack and builds the same
//! `TrapFrame` an interrupt would (with vector `SYSCALL_VECTOR`), then joins
//! the common path in trap.rs, which returns with `iretq`. The frame's error
//! code slot holds the system call number (Linux's orig_rax), which survives
//! the result overwriting rax, so a call a signal interrupted can restart. One frame layout
//! for every entry keeps fork, exec and signals simple: each of them
//! just edits the frame.
//!
//! This kernel runs on one CPU and does not use GS: the kernel stack top lives
//! in `SYSCALL_KERNEL_RSP`, updated by the scheduler on every switch.

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::VirtAddr;
use x86_64::registers::model_specific::{Efer, EferFlags, LStar, SFMask, Star};
use x86_64::registers::rflags::RFlags;

use super::gdt;

/// The pseudo-vector of system calls in a `TrapFrame`.
pub const SYSCALL_VECTOR: u64 = 256;

/// Kernel stack top of the running process (read by the entry stub).
#[unsafe(no_mangle)]
static SYSCALL_KERNEL_RSP: AtomicU64 = AtomicU64::new(0);
/// Scratch slot for the user rsp while the stub switches stacks.
#[unsafe(no_mangle)]
static SYSCALL_USER_RSP: AtomicU64 = AtomicU64::new(0);

core::arch::global_asm!(
    r#"
    .section .text.syscall, "ax"
    .global syscall_entry
syscall_entry:
    movq %rsp, SYSCALL_USER_RSP(%rip)
    movq SYSCALL_KERNEL_RSP(%rip), %rsp
    pushq ${user_ss}
    pushq SYSCALL_USER_RSP(%rip)
    pushq %r11
    pushq ${user_cs}
    pushq %rcx
    pushq %rax
    pushq ${vector}
    jmp alltraps
    "#,
    user_ss = const 0x1b,
    user_cs = const 0x23,
    vector = const SYSCALL_VECTOR,
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

/// Sets the stack `syscall_entry` switches to.
pub fn set_kernel_stack(top: u64) {
    SYSCALL_KERNEL_RSP.store(top, Ordering::Relaxed);
}
