//! The raw `syscall` instruction: number in rax, arguments in rdi, rsi, rdx,
//! r10, r8, r9, result in rax (rcx and r11 are clobbered by the CPU).

use core::arch::asm;

/// Issues system call `nr` with up to six arguments.
///
/// # Safety
/// The arguments must be valid for that call: pointers the kernel will
/// read or write must point to memory the caller allows it to use.
#[inline(always)]
pub unsafe fn syscall6(
    nr: usize,
    a0: usize,
    a1: usize,
    a2: usize,
    a3: usize,
    a4: usize,
    a5: usize,
) -> isize {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments; the kernel preserves
    // every register but rax, rcx and r11.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a0, in("rsi") a1, in("rdx") a2, in("r10") a3, in("r8") a4, in("r9") a5,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// `syscall6` with fewer arguments (the rest are zero).
///
/// # Safety
/// As for `syscall6`.
#[inline(always)]
pub unsafe fn syscall(nr: usize, args: &[usize]) -> isize {
    let a = |i: usize| args.get(i).copied().unwrap_or(0);
    // SAFETY: forwarded from the caller.
    unsafe { syscall6(nr, a(0), a(1), a(2), a(3), a(4), a(5)) }
}
