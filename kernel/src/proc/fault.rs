//! Faults in user code.
//!
//! A write to a copy-on-write page is not an error: the page is copied and the
//! instruction runs again. Anything else ends the faulting process (and only
//! it) with the signal Unix uses for that fault, after one line on the console
//! that says who, what and where.

use abi::types::{SIGFPE, SIGILL, SIGSEGV, SIGTRAP};
use x86_64::registers::control::Cr2;

use super::{current, vm};
use crate::arch::trap::{self, TrapFrame};
use crate::mm::USER_TOP;
use crate::mm::paging::Space;

pub fn user_fault(tf: &TrapFrame) {
    let addr = Cr2::read_raw();
    let write_protect = tf.error_code & 0b11 == 0b11; // present page, write access
    if tf.vector == trap::PAGE_FAULT
        && write_protect
        && addr < USER_TOP
        && vm::break_cow(Space::current(), addr).is_ok()
    {
        return;
    }
    let (signal, what) = match tf.vector {
        trap::DIVIDE_ERROR => (SIGFPE, "divide error"),
        trap::INVALID_OPCODE => (SIGILL, "invalid opcode"),
        trap::BREAKPOINT => (SIGTRAP, "breakpoint"),
        trap::PAGE_FAULT => (SIGSEGV, "segmentation fault"),
        trap::GENERAL_PROTECTION => (SIGSEGV, "general protection fault"),
        16 | 19 => (SIGFPE, "floating-point error"),
        _ => (SIGSEGV, trap::exception_name(tf.vector)),
    };
    let (pid, name) = current(|p| (p.pid, p.name.clone()));
    if tf.vector == trap::PAGE_FAULT {
        crate::println!(
            "pid {pid} ({name}): {what} at rip {:#x}, address {addr:#x} (error {:#x}, cs {:#x})",
            tf.rip,
            tf.error_code,
            tf.cs
        );
    } else {
        crate::println!("pid {pid} ({name}): {what} at rip {:#x}", tf.rip);
    }
    current(|p| {
        p.killed.get_or_insert(signal);
    });
}
