//! Traps: every way into the kernel except `syscall` comes through here.
//!
//! Each of the 256 IDT vectors points at a 16-byte stub that pushes the vector
//! number (and a zero where the CPU pushes no error code), so that every trap
//! leaves the same `TrapFrame` on the stack: the general registers, vector,
//! error code and the CPU's own interrupt frame. `alltraps` saves the
//! registers and calls `trap_dispatch`, which decides what the trap means;
//! `trap_return` restores whatever the frame holds then, which is how the
//! kernel changes a process's registers (a system call's result, a signal
//! handler, a fixed-up fault) and how a new process enters user mode. A
//! system call's frame goes out through `syscall_return` (arch/syscall.rs),
//! which uses the cheaper `sysretq` when the frame allows it and comes back
//! to `trap_return` when it does not.
//!
//! Entries from user mode and returns to it also exchange the GS base with
//! `swapgs`, so that kernel code finds this CPU's record through GS
//! (arch/percpu.rs says why and when).
//!
//! This is xv6's design, kept because a student can read the whole path from
//! the CPU to Rust in one file.

use core::sync::atomic::{AtomicU64, Ordering};
use spin::Lazy;
use x86_64::PrivilegeLevel;
use x86_64::VirtAddr;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::{InterruptDescriptorTable, PageFaultErrorCode};

use super::{gdt, power};

pub const DIVIDE_ERROR: u64 = 0;
pub const NMI: u64 = 2;
pub const BREAKPOINT: u64 = 3;
pub const INVALID_OPCODE: u64 = 6;
pub const DOUBLE_FAULT: u64 = 8;
pub const GENERAL_PROTECTION: u64 = 13;
pub const PAGE_FAULT: u64 = 14;
pub const X87_FP_ERROR: u64 = 16;
pub const SIMD_FP_ERROR: u64 = 19;
/// First vector of the remapped legacy PIC (IRQ 0 = the PIT).
pub const PIC_BASE: u64 = 32;
pub const IRQ_PIT: u64 = PIC_BASE;
pub const IRQ_COM1: u64 = PIC_BASE + 4;
pub const APIC_TIMER: u64 = 48;
/// The first virtio disk's completion interrupt (MSI-X, `virtio_blk.rs`);
pub const DISK_VECTOR: u64 = 49; // the next MAX_DISKS - 1 are the others'.
pub const APIC_SPURIOUS: u64 = 255;

/// The registers of the interrupted code, as the stubs leave them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    pub vector: u64,
    pub error_code: u64,
    // Pushed by the CPU.
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

impl TrapFrame {
    /// Whether the trap interrupted user mode (ring 3). Not instrumented:
    /// `trap_dispatch` asks it before it knows GS is the kernel's.
    #[instrument_fn = "off"]
    pub fn is_from_user(&self) -> bool {
        self.cs & 3 == 3
    }

    /// A page fault's error code, decoded (meaningless for other vectors).
    pub fn page_fault_error(&self) -> PageFaultErrorCode {
        PageFaultErrorCode::from_bits_truncate(self.error_code)
    }
}

// The stubs, 16 bytes apart, then the common save/restore path.
core::arch::global_asm!(
    r#"
    .section .text.traps, "ax"
    .global trap_stubs
    .p2align 4
trap_stubs:
    .set vec, 0
    .rept 256
    .p2align 4
    .if vec == 8 || (vec >= 10 && vec <= 14) || vec == 17 || vec == 21 || vec == 29 || vec == 30
    .else
    pushq $0
    .endif
    pushq $vec
    jmp alltraps
    .set vec, vec + 1
    .endr

    // From user mode (the frame's cs is ring 3), GS still holds the user's
    // base: swapgs makes it this CPU's record (arch/percpu.rs). From the
    // kernel it is the kernel's already. The syscall stub swapped itself
    // and comes in below.
    .global alltraps
alltraps:
    testb $3, {cs_above_vector}(%rsp)
    jz alltraps_gs_ready
    swapgs
    .global alltraps_gs_ready
alltraps_gs_ready:
    cmpb $0, SMAP_ENABLED(%rip)
    je 1f
    clac
1:
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %rdi
    cld
    call trap_dispatch
    cmpq ${syscall_vector}, {vector}(%rsp)
    je syscall_return

    .global trap_return
trap_return:
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
    addq $16, %rsp
    // Back to user mode: the user's GS base again, as the last act before
    // iretq (interrupts are off until iretq restores rflags).
    testb $3, {cs_above_rip}(%rsp)
    jz 2f
    swapgs
2:
    iretq
    "#,
    syscall_vector = const super::syscall::SYSCALL_VECTOR,
    vector = const core::mem::offset_of!(TrapFrame, vector),
    cs_above_vector = const core::mem::offset_of!(TrapFrame, cs) - core::mem::offset_of!(TrapFrame, vector),
    cs_above_rip = const core::mem::offset_of!(TrapFrame, cs) - core::mem::offset_of!(TrapFrame, rip),
    options(att_syntax)
);

unsafe extern "C" {
    fn trap_stubs();
    /// Restores a `TrapFrame` at `rsp` and returns from the trap.
    pub fn trap_return();
}

static IDT: Lazy<InterruptDescriptorTable> = Lazy::new(|| {
    let mut idt = InterruptDescriptorTable::new();
    let stub = |vector: usize| VirtAddr::new(trap_stubs as *const () as u64 + 16 * vector as u64);
    // SAFETY (all set_handler_addr calls): each stub is the entry of the
    // common trap path for that vector, which saves everything it touches and
    // returns with iretq.
    unsafe {
        idt.divide_error.set_handler_addr(stub(0));
        idt.debug.set_handler_addr(stub(1));
        idt.non_maskable_interrupt
            .set_handler_addr(stub(2))
            .set_stack_index(gdt::NMI_IST);
        idt.breakpoint
            .set_handler_addr(stub(3))
            .set_privilege_level(PrivilegeLevel::Ring3);
        idt.overflow.set_handler_addr(stub(4));
        idt.bound_range_exceeded.set_handler_addr(stub(5));
        idt.invalid_opcode.set_handler_addr(stub(6));
        idt.device_not_available.set_handler_addr(stub(7));
        idt.double_fault
            .set_handler_addr(stub(8))
            .set_stack_index(gdt::DOUBLE_FAULT_IST);
        idt.invalid_tss.set_handler_addr(stub(10));
        idt.segment_not_present.set_handler_addr(stub(11));
        idt.stack_segment_fault.set_handler_addr(stub(12));
        idt.general_protection_fault.set_handler_addr(stub(13));
        idt.page_fault.set_handler_addr(stub(14));
        idt.x87_floating_point.set_handler_addr(stub(16));
        idt.alignment_check.set_handler_addr(stub(17));
        idt.machine_check.set_handler_addr(stub(18));
        idt.simd_floating_point.set_handler_addr(stub(19));
        idt.virtualization.set_handler_addr(stub(20));
        idt.cp_protection_exception.set_handler_addr(stub(21));
        idt.hv_injection_exception.set_handler_addr(stub(28));
        idt.vmm_communication_exception.set_handler_addr(stub(29));
        idt.security_exception.set_handler_addr(stub(30));
        for vector in 32..256 {
            idt[vector as u8].set_handler_addr(stub(vector));
        }
    }
    idt
});

/// Loads the IDT.
pub fn init() {
    IDT.load();
}

/// Breakpoints taken so far (`int3` returns; the self-test counts them).
pub static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);

/// Traps taken, by vector (256: system calls), on every CPU.
static TRAP_COUNTS: [AtomicU64; 257] = [const { AtomicU64::new(0) }; 257];

/// Logs one line per vector taken: `traps: vector N: COUNT`.
pub fn log_trap_counts() {
    for (vector, count) in TRAP_COUNTS.iter().enumerate() {
        let count = count.load(Ordering::Relaxed);
        if count > 0 {
            crate::info!("traps: vector {vector}: {count}");
        }
    }
}

/// Records the user pc of an entry from user mode in the word just above
/// its trap frame (the entry record, mm/kstack.rs), before anything can
/// rewrite the frame.
///
/// # Safety
/// `tf` must have been built by an entry from user mode, so that it lies at
/// its kernel stack's `entry_top` (the TSS's rsp0 or the syscall stub's
/// stack), with the record above it.
pub unsafe fn record_entry(tf: &mut TrapFrame) {
    let rip = tf.rip;
    // SAFETY: by the caller's promise the word after the frame is the entry
    // record of the same stack.
    unsafe { (tf as *mut TrapFrame).add(1).cast::<u64>().write(rip) };
}

/// The Rust half of every trap and interrupt (`alltraps` calls it).
/// Not instrumented, nor is what it calls for a fatal exception: an NMI
/// or a faulting `sysretq` can come in with the user's GS base, where the
/// profiled kernel's mcount would look for this CPU's record
/// (arch/mcount.rs).
#[unsafe(no_mangle)]
#[instrument_fn = "off"]
extern "C" fn trap_dispatch(tf: &mut TrapFrame) {
    if let Some(count) = TRAP_COUNTS.get(tf.vector as usize) {
        count.fetch_add(1, Ordering::Relaxed);
    }
    // NMI and double fault run on IST stacks of their own, not at entry_top.
    let on_ist_stack = matches!(tf.vector, NMI | DOUBLE_FAULT);
    if tf.is_from_user() && !on_ist_stack {
        // SAFETY: a trap from ring 3 (or a system call) switched to the
        // process's entry_top before pushing the frame.
        unsafe { record_entry(tf) };
    }
    match tf.vector {
        super::syscall::SYSCALL_VECTOR => {
            x86_64::instructions::interrupts::enable();
            crate::syscall::dispatch(tf);
            x86_64::instructions::interrupts::disable();
        }
        BREAKPOINT if !tf.is_from_user() => {
            BREAKPOINTS.fetch_add(1, Ordering::Relaxed);
        }
        IRQ_PIT | APIC_TIMER => crate::clock::on_timer_interrupt(tf),
        v if v == u64::from(super::smp::TLB_VECTOR) => {
            super::smp::while_spinning();
            super::apic::end_of_interrupt();
        }
        // Its work is done by the way out: the idle loop looks again, a
        // thread returning to user mode looks at its work-due word.
        v if v == u64::from(super::smp::WAKE_VECTOR) => super::apic::end_of_interrupt(),
        IRQ_COM1 => crate::fs::console::on_interrupt(),
        v if let Some(disk) = crate::virtio_blk::DiskId::of_vector(v) => {
            crate::virtio_blk::on_interrupt(disk);
            super::apic::end_of_interrupt();
        }
        APIC_SPURIOUS => {}
        v if v == PIC_BASE + 7 || v == PIC_BASE + 15 => super::pic::spurious(v),
        PAGE_FAULT if !tf.is_from_user() => match crate::mm::uaccess::fixup_for(tf.rip) {
            Some(resume) => tf.rip = resume,
            None => exception(tf),
        },
        v if v < 32 && tf.is_from_user() => crate::proc::fault::user_fault(tf),
        v if v < 32 => exception(tf),
        v if v < PIC_BASE + 16 => {
            crate::warn!("trap: unexpected irq {}", v - PIC_BASE);
            super::pic::end_of_interrupt(v);
        }
        v => crate::warn!("trap: unexpected vector {v}"),
    }
    if tf.is_from_user() {
        crate::proc::return_to_user(tf);
    }
}

/// The 16 bytes of code at `rip`, as Linux's `Code:` line: with them and
/// the kernel ELF (or an assembler) the faulting instruction can be read
/// even when rip is not in a symbol. Reading at rip is not always safe: a
/// fault on an instruction fetch means rip's page is not mapped, and rip
/// may not be canonical at all (a #GP with no fixup). So a non-canonical
/// range is not read, and each byte is read with a fault fixup
/// (`mm::uaccess::kernel_read_byte`); an unreadable byte prints as `??`.
fn code_at_rip(rip: u64) {
    const BYTES: u64 = 16;
    let canonical = |a: u64| (a as i64) << 16 >> 16 == a as i64;
    crate::log::emergency_write(format_args!("    code at rip:"));
    for i in 0..BYTES {
        let at = rip.wrapping_add(i);
        let byte = if canonical(rip) && canonical(at) && at >= rip {
            crate::mm::uaccess::kernel_read_byte(at)
        } else {
            None
        };
        match byte {
            Some(b) => crate::log::emergency_write(format_args!(" {b:02x}")),
            None => crate::log::emergency_write(format_args!(" ??")),
        }
    }
    crate::log::emergency_write(format_args!("\n"));
}

/// A CPU exception the kernel did not expect: report and stop the machine.
#[instrument_fn = "off"]
fn exception(tf: &TrapFrame) {
    // An NMI or a faulting sysretq/iretq may have come in with the user's
    // GS base; the report takes locks, which need this CPU's record.
    super::percpu::ensure_kernel_gs();
    report(tf);
    power::fail();
}

/// The name of exception `vector`.
pub fn exception_name(vector: u64) -> &'static str {
    const NAMES: [&str; 32] = [
        "divide error (#DE)",
        "debug (#DB)",
        "non-maskable interrupt",
        "breakpoint (#BP)",
        "overflow (#OF)",
        "bound range exceeded (#BR)",
        "invalid opcode (#UD)",
        "device not available (#NM)",
        "double fault (#DF)",
        "coprocessor segment overrun",
        "invalid TSS (#TS)",
        "segment not present (#NP)",
        "stack-segment fault (#SS)",
        "general protection fault (#GP)",
        "page fault (#PF)",
        "reserved",
        "x87 floating-point error (#MF)",
        "alignment check (#AC)",
        "machine check (#MC)",
        "SIMD floating-point error (#XM)",
        "virtualization exception (#VE)",
        "control protection (#CP)",
        "reserved",
        "reserved",
        "reserved",
        "reserved",
        "reserved",
        "reserved",
        "hypervisor injection",
        "VMM communication (#VC)",
        "security exception (#SX)",
        "reserved",
    ];
    NAMES.get(vector as usize).copied().unwrap_or("interrupt")
}

/// Prints a readable report of an exception: what, where, and the registers.
pub fn report(tf: &TrapFrame) {
    let mode = if tf.is_from_user() { "user" } else { "kernel" };
    crate::log::emergency_write(format_args!(
        "\n!!! EXCEPTION: {} (vector {}) in {} mode\n    error code {:#x}\n    rip {:#018x}  cs {:#x}  rflags {:#x}\n",
        exception_name(tf.vector),
        tf.vector,
        mode,
        tf.error_code,
        tf.rip,
        tf.cs,
        tf.rflags,
    ));
    if tf.vector == PAGE_FAULT {
        let e = tf.page_fault_error();
        crate::log::emergency_write(format_args!(
            "    cr2 {:#018x} ({}, {}, {})\n",
            Cr2::read_raw(),
            if e.contains(PageFaultErrorCode::PROTECTION_VIOLATION) {
                "protection violation"
            } else {
                "page not present"
            },
            if e.contains(PageFaultErrorCode::CAUSED_BY_WRITE) {
                "write"
            } else if e.contains(PageFaultErrorCode::INSTRUCTION_FETCH) {
                "instruction fetch"
            } else {
                "read"
            },
            if e.contains(PageFaultErrorCode::USER_MODE) {
                "user"
            } else {
                "supervisor"
            },
        ));
    }
    code_at_rip(tf.rip);
    let regs = [
        ("rax", tf.rax),
        ("rbx", tf.rbx),
        ("rcx", tf.rcx),
        ("rdx", tf.rdx),
        ("rsi", tf.rsi),
        ("rdi", tf.rdi),
        ("rbp", tf.rbp),
        ("rsp", tf.rsp),
        ("r8", tf.r8),
        ("r9", tf.r9),
        ("r10", tf.r10),
        ("r11", tf.r11),
        ("r12", tf.r12),
        ("r13", tf.r13),
        ("r14", tf.r14),
        ("r15", tf.r15),
    ];
    for row in regs.chunks(4) {
        crate::log::emergency_write(format_args!("   "));
        for (name, value) in row {
            crate::log::emergency_write(format_args!(" {name:>3} {value:#018x}"));
        }
        crate::log::emergency_write(format_args!("\n"));
    }
}
