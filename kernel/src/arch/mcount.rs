//! mcount: the function every function of the profiled kernel calls first.
//!
//! `cargo xtask run --kprof` builds the kernel with `-Z instrument-mcount`
//! (and this module, feature `mcount`): the compiler puts `call mcount`
//! at the top of every function that was not inlined, right after the
//! prologue (`push %rbp; mov %rsp, %rbp`). So, inside mcount, `8(%rbp)`
//! is that function's return address, the call site in its caller (gprof's
//! "from pc"), and mcount's own return address is inside the function
//! itself ("self pc"). kprof.rs counts the arc between them in this CPU's
//! arc table, and the extract hands the arcs to gprof, which makes the
//! call graph of them, as libc-lite's mcount does for a program.
//!
//! ## Why it is assembly, and what it checks first
//!
//! mcount runs inside every function, including those it would call to
//! record, and in any context: a system call, the clock interrupt, a lock's
//! holder with interrupts off. So before any instrumented code can run it
//! checks, in assembly:
//!
//! 1. `kprof::ARCS_ON`, a global byte: off at boot and until kgmon starts
//!    the profile. Early boot, and the start-up of the other CPUs (which
//!    happens before any process can run kgmon), pass here and nothing
//!    else, so they need no per-CPU record (GS) yet.
//! 2. This CPU's busy byte (`percpu::MCOUNT_BUSY_OFFSET`), read and set
//!    in one `xchg` (BSD's `GMON_PROF_BUSY`): 1 means this CPU is already
//!    recording an arc, so the call is one the recorder itself made, or
//!    an interrupt came in the middle; it is not counted, and mcount
//!    returns. No lock is taken, so an interrupt can never wait on one the
//!    code it interrupted holds. `xchg` is also a full barrier, which is
//!    what lets kprof.rs's stop wait for the CPUs to be out of their
//!    tables (turn `ARCS_ON` off, then wait for every busy byte to clear).
//!
//! Then the caller-saved registers are saved (the function has not used its
//! arguments yet; the kernel has no floating point to save), the recorder
//! is called with the two pcs, and the busy byte is cleared.
//!
//! ## What is not instrumented
//!
//! The trap and system-call entries are assembly and call no mcount. The
//! Rust code that can run with the user's GS base (the report of a fatal
//! exception that came between `swapgs` and `sysretq`: arch/percpu.rs's
//! `ensure_kernel_gs`) is marked `#[instrument_fn = "off"]`, since GS is
//! how mcount finds its busy byte; so is the recorder, which would
//! otherwise count a call into itself that the busy byte then drops.

/// mcount, as the compiler calls it: no arguments, every register but
/// the scratch ones it saves kept.
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn mcount() {
    core::arch::naked_asm!(
        "cmpb $0, {on}(%rip)",
        "je 1f",
        "pushq %rax",
        "movb $1, %al",
        "xchgb %al, %gs:{busy}",
        "testb %al, %al",
        "jnz 2f",
        "pushq %rcx",
        "pushq %rdx",
        "pushq %rsi",
        "pushq %rdi",
        "pushq %r8",
        "pushq %r9",
        "pushq %r10",
        "pushq %r11",
        // Nine pushes: mcount's return address is 72 bytes up, and the
        // stack is 16-byte aligned again for the call.
        "movq 72(%rsp), %rsi",
        "movq 8(%rbp), %rdi",
        "call {record}",
        "popq %r11",
        "popq %r10",
        "popq %r9",
        "popq %r8",
        "popq %rdi",
        "popq %rsi",
        "popq %rdx",
        "popq %rcx",
        "movb $0, %gs:{busy}",
        "2:",
        "popq %rax",
        "1:",
        "ret",
        on = sym crate::kprof::ARCS_ON,
        busy = const super::percpu::MCOUNT_BUSY_OFFSET,
        record = sym crate::kprof::record_arc,
        options(att_syntax)
    )
}
