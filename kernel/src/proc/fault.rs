//! Faults in user code.
//!
//! A write to a copy-on-write page is not an error: the page is copied and the
//! instruction runs again. Nor is the first touch of an mmap page that is
//! not there yet: it is filled on demand, with zeroes or from the file it
//! maps (mm/areas.rs), unless no frame is left, which kills the process
//! (SIGKILL, "out of memory"), or the page lies past the end of the mapped
//! file, which is SIGBUS. Anything else raises the signal Unix uses for that
//! fault, to the thread that faulted. With a handler installed the handler
//! runs (and may repair the cause or move rip on); otherwise the process
//! (all its threads, and only it) dies of the signal,
//! after one line on the console that says who, what and where.

use abi::signal::*;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::PageFaultErrorCode;

use super::current_both;
use crate::arch::trap::{self, TrapFrame};
use crate::mm::USER_TOP;
use crate::mm::areas::{self, FaultError};
use crate::mm::paging::Space;
use crate::signal::{self, Origin};

pub fn user_fault(tf: &TrapFrame) {
    let addr = Cr2::read_raw();
    let error = tf.page_fault_error();
    let write_protect = error
        .contains(PageFaultErrorCode::PROTECTION_VIOLATION | PageFaultErrorCode::CAUSED_BY_WRITE);
    if tf.vector == trap::PAGE_FAULT
        && write_protect
        && addr < USER_TOP
        && Space::current().break_cow(addr).is_ok()
    {
        return;
    }
    let mut past_end = false;
    if tf.vector == trap::PAGE_FAULT
        && !error.contains(PageFaultErrorCode::PROTECTION_VIOLATION)
        && addr < USER_TOP
    {
        let write = error.contains(PageFaultErrorCode::CAUSED_BY_WRITE);
        match areas::fault_in(&Space::current(), addr, write) {
            Ok(()) => return,
            Err(FaultError::NoMemory) => {
                let (pid, name) = current_both(|t, p| {
                    signal::force(t, p, SIGKILL, Origin::kernel());
                    (p.pid, p.name.clone())
                });
                crate::log::user_line(format_args!(
                    "pid {pid} ({name}): out of memory at address {addr:#x}, killed"
                ));
                return;
            }
            Err(FaultError::PastEnd) => past_end = true,
            Err(FaultError::NotAllowed) => {} // a segmentation fault
        }
    }
    let (signal, what, origin) = match tf.vector {
        trap::DIVIDE_ERROR => (SIGFPE, "divide error", Origin::fault(FPE_INTDIV, tf.rip)),
        trap::INVALID_OPCODE => (SIGILL, "invalid opcode", Origin::fault(ILL_ILLOPC, tf.rip)),
        trap::BREAKPOINT => (SIGTRAP, "breakpoint", Origin::fault(TRAP_BRKPT, tf.rip)),
        // A mapped file has no page there: Linux's SIGBUS.
        trap::PAGE_FAULT if past_end => (
            SIGBUS,
            "bus error (past the end of a mapped file)",
            Origin::fault(BUS_ADRERR, addr),
        ),
        trap::PAGE_FAULT => {
            // Linux's rule: inside a mapping the access was not allowed;
            // outside every mapping there was nothing to access. A page of
            // a mapping may be absent (not filled yet), so the page tables
            // cannot tell; above user space they can.
            let code = if addr < USER_TOP {
                if areas::find(Space::current().id(), addr).is_some() {
                    SEGV_ACCERR
                } else {
                    SEGV_MAPERR
                }
            } else if error.contains(PageFaultErrorCode::PROTECTION_VIOLATION) {
                SEGV_ACCERR
            } else {
                SEGV_MAPERR
            };
            (SIGSEGV, "segmentation fault", Origin::fault(code, addr))
        }
        trap::GENERAL_PROTECTION => (SIGSEGV, "general protection fault", Origin::kernel()),
        trap::X87_FP_ERROR | trap::SIMD_FP_ERROR => {
            (SIGFPE, "floating-point error", Origin::fault(0, tf.rip))
        }
        _ => (SIGSEGV, trap::exception_name(tf.vector), Origin::kernel()),
    };
    let (pid, name, caught) = current_both(|t, p| {
        let caught = signal::will_catch(t, p, signal);
        signal::force(t, p, signal, origin);
        (p.pid, p.name.clone(), caught)
    });
    if caught {
        return;
    }
    if tf.vector == trap::PAGE_FAULT {
        crate::log::user_line(format_args!(
            "pid {pid} ({name}): {what} at rip {:#x}, address {addr:#x} (error {:#x}, cs {:#x})",
            tf.rip, tf.error_code, tf.cs
        ));
    } else {
        crate::log::user_line(format_args!(
            "pid {pid} ({name}): {what} at rip {:#x}",
            tf.rip
        ));
    }
}
