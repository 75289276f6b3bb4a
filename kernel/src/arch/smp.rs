//! The other processors: starting them, and what CPUs ask of each other.
//!
//! ## Starting a processor
//!
//! At power-on only the boot CPU runs; the others (application processors,
//! APs) wait for an INIT IPI and then a startup IPI (SIPI), which starts
//! them in 16-bit real mode at a page-aligned address below 1 MiB given in
//! the IPI (Intel SDM vol. 3, 9.4). So each AP has to climb the modes the
//! bootloader climbed for the boot CPU: the trampoline below, copied to
//! low pages that `mm::frames` kept out of the allocator, loads a small GDT
//! of its own, turns on protected mode, then PAE, long mode and paging
//! (with page tables that map the trampoline at its own address, so the
//! next instruction is still there, and the kernel's half as every address
//! space has it), and jumps to `ap_main` in the kernel on a stack the boot
//! CPU gave it. `ap_main` sets the CPU up as the boot CPU was (its record,
//! GDT and TSS, IDT, system-call MSRs, control registers, APIC and timer)
//! and enters the scheduler. The boot CPU starts one AP at a time, since
//! they share the trampoline's parameter words, and waits for each to say
//! it is up.
//!
//! ## What CPUs ask of each other
//!
//! Two IPIs, both through the local APIC (arch/apic.rs):
//!
//! - `WAKE_VECTOR` does nothing but interrupt: an idle CPU halts until an
//!   interrupt comes, so a CPU that makes a thread runnable sends it to an
//!   idle one (proc/sched.rs), and a signal for a thread running on another
//!   CPU sends it there, so the thread looks at its work-due word now rather
//!   than at its next tick.
//! - `TLB_VECTOR` is a TLB shootdown. A CPU caches page-table entries in
//!   its TLB and no other CPU can see or clear that cache: after an entry
//!   changes (munmap, mprotect, a copy-on-write break, fork's write
//!   protection, an address space or a kernel stack going away), every
//!   other CPU that may hold the old entry must flush it before the change
//!   may be relied on (a freed frame reused, a write protection trusted).
//!   `shootdown` writes a request in each such CPU's record, sends the IPI
//!   and waits until each has answered.
//!
//! Waiting for another CPU is where deadlocks come from: the CPU asked may
//! have its interrupts off, spinning on a lock the asker holds. So every
//! place a CPU spins (a lock's wait, a shootdown's own wait) answers its
//! requests as it spins (`while_spinning`), and nothing waits for an
//! answer while halted with interrupts off.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};

use alloc::boxed::Box;
use alloc::vec::Vec;
use x86_64::registers::control::{Cr0, Cr3, Cr4, Cr4Flags};
use x86_64::registers::model_specific::Efer;

use super::percpu::{self, MAX_CPUS};
use super::{apic, gdt, pit, trap};

/// The do-nothing IPI that wakes a halted CPU or makes a running one look
/// at its thread's work.
pub const WAKE_VECTOR: u8 = 0xf1;
/// The TLB shootdown IPI.
pub const TLB_VECTOR: u8 = 0xf0;

/// A shootdown request is the level-4 table's physical address (page
/// aligned) with one of these in its low bits.
const FLUSH: u64 = 1;
/// The address space is going away: load the kernel's table instead.
const LEAVE: u64 = 2;
/// A kernel-half mapping went away: flush everything, global entries too.
const KERNEL: u64 = 4;

/// Each AP's kernel stack while it runs the scheduler (the boot CPU's is
/// the bootloader's).
const AP_STACK_SIZE: usize = 64 * 1024;

core::arch::global_asm!(
    r#"
    .section .rodata.ap_trampoline, "a"
    .global ap_trampoline_start
    .global ap_trampoline_end
    .global ap_tramp_gdtr
    .global ap_tramp_far32
    .global ap_tramp_far64
    .global ap_tramp_cr3
    .global ap_tramp_stack
    .global ap_tramp_entry
    .global ap_tramp_arg
    .global ap_tramp_gdt
    .global ap_tramp_32
    .global ap_tramp_64

    // Real mode: cs = the page's address / 16, ip = 0.
    .code16
ap_trampoline_start:
    cli
    cld
    movw %cs, %ax
    movw %ax, %ds
    xorl %ebx, %ebx
    movw %ax, %bx
    shll $4, %ebx
    lgdtl ap_tramp_gdtr - ap_trampoline_start
    movl %cr0, %eax
    orl $1, %eax
    movl %eax, %cr0
    ljmpl *(ap_tramp_far32 - ap_trampoline_start)

    // Protected mode, flat segments; ebx = the trampoline's address.
    .code32
ap_tramp_32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl %cr4, %eax
    orl $0x20, %eax
    movl %eax, %cr4
    movl (ap_tramp_cr3 - ap_trampoline_start)(%ebx), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx
    rdmsr
    orl $0x900, %eax
    wrmsr
    movl %cr0, %eax
    orl $0x80000001, %eax
    movl %eax, %cr0
    ljmpl *(ap_tramp_far64 - ap_trampoline_start)(%ebx)

    // Long mode, still at the trampoline's own (identity-mapped) address.
    .code64
ap_tramp_64:
    movq (ap_tramp_stack - ap_trampoline_start)(%rbx), %rsp
    movq (ap_tramp_arg - ap_trampoline_start)(%rbx), %rdi
    movq (ap_tramp_entry - ap_trampoline_start)(%rbx), %rax
    xorl %ebp, %ebp
    pushq $0
    jmpq *%rax

    .balign 8
ap_tramp_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff
    .quad 0x00cf92000000ffff
    .quad 0x00af9a000000ffff
ap_tramp_gdtr:
    .word 31
    .long 0
    .balign 4
ap_tramp_far32:
    .long 0
    .word 0x08
    .balign 4
ap_tramp_far64:
    .long 0
    .word 0x18
    .balign 4
ap_tramp_cr3:
    .long 0
    .balign 8
ap_tramp_stack:
    .quad 0
ap_tramp_entry:
    .quad 0
ap_tramp_arg:
    .quad 0
ap_trampoline_end:
    .text
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    static ap_trampoline_start: u8;
    static ap_trampoline_end: u8;
    static ap_tramp_gdtr: u8;
    static ap_tramp_far32: u8;
    static ap_tramp_far64: u8;
    static ap_tramp_cr3: u8;
    static ap_tramp_stack: u8;
    static ap_tramp_entry: u8;
    static ap_tramp_arg: u8;
    static ap_tramp_gdt: u8;
    static ap_tramp_32: u8;
    static ap_tramp_64: u8;
}

/// Where `label` lies in the trampoline, in bytes from its start.
fn offset_of(label: *const u8) -> u64 {
    label as u64 - (&raw const ap_trampoline_start) as u64
}

/// The boot CPU's control registers, which each AP copies (paging
/// features, SMEP/SMAP, SSE, write protection, system calls, NX).
static BOOT_CR0: AtomicU64 = AtomicU64::new(0);
static BOOT_CR4: AtomicU64 = AtomicU64::new(0);
static BOOT_EFER: AtomicU64 = AtomicU64::new(0);
/// The tick rate every CPU's timer runs at.
static HZ: AtomicU64 = AtomicU64::new(0);
/// Set by an AP once it is ready to schedule.
static AP_READY: AtomicBool = AtomicBool::new(false);

/// Starts the processors the firmware listed besides this one, at most
/// `MAX_CPUS` in all, each ticking at `hz`; returns how many CPUs run.
/// Called once by the boot CPU, after the clock has started and before
/// its interrupts are on.
pub fn start_others(apic_ids: &[u32], hz: u32) -> usize {
    let me = apic::enable();
    percpu::set_apic_id(me);
    let others: Vec<u32> = apic_ids.iter().copied().filter(|&id| id != me).collect();
    if others.is_empty() {
        return 1;
    }
    let Some(base) = crate::mm::frames::trampoline_pages() else {
        crate::warn!("smp: no free page below 1 MiB for the start-up code; one CPU");
        return 1;
    };
    let rate = apic::calibrate();
    crate::info!("smp: local APIC timers run from {} kHz", rate / 1000);
    BOOT_CR0.store(Cr0::read_raw(), Ordering::Relaxed);
    BOOT_CR4.store(Cr4::read_raw(), Ordering::Relaxed);
    BOOT_EFER.store(Efer::read_raw(), Ordering::Relaxed);
    HZ.store(u64::from(hz), Ordering::Relaxed);
    let cr3 = crate::mm::paging::trampoline_tables(base);
    copy_trampoline(base, cr3);

    let mut running = 1;
    for id in others {
        if running == MAX_CPUS {
            crate::warn!("smp: more than {MAX_CPUS} CPUs; the rest stay off");
            break;
        }
        if start_one(base, id, running) {
            running += 1;
            percpu::set_online(running);
        } else {
            crate::warn!("smp: the CPU with APIC id {id} did not start");
        }
    }
    running
}

/// Copies the trampoline to physical page `base` and fills in the words
/// that depend on where it lies.
fn copy_trampoline(base: u64, cr3: u64) {
    let len = offset_of(&raw const ap_trampoline_end) as usize;
    assert!(len <= 4096, "the trampoline fits in its page");
    let at = crate::mm::phys_to_virt(base).as_mut_ptr::<u8>();
    // SAFETY: `base` is a page below 1 MiB that the frame allocator never
    // hands out (`frames::trampoline_pages`), mapped by the physical window;
    // the source is the trampoline's bytes in the kernel image.
    unsafe { core::ptr::copy_nonoverlapping(&raw const ap_trampoline_start, at, len) };
    let put32 = |label: *const u8, value: u64| {
        // SAFETY: each label is a 4-byte-aligned word inside the copy.
        unsafe {
            at.add(offset_of(label) as usize)
                .cast::<u32>()
                .write(value as u32)
        }
    };
    put32(
        (&raw const ap_tramp_gdtr).wrapping_add(2),
        base + offset_of(&raw const ap_tramp_gdt),
    );
    put32(
        &raw const ap_tramp_far32,
        base + offset_of(&raw const ap_tramp_32),
    );
    put32(
        &raw const ap_tramp_far64,
        base + offset_of(&raw const ap_tramp_64),
    );
    put32(&raw const ap_tramp_cr3, cr3);
}

/// Writes one of the 64-bit parameter words of the trampoline at `base`.
fn put64(base: u64, label: *const u8, value: u64) {
    let at = crate::mm::phys_to_virt(base + offset_of(label)).as_mut_ptr::<u64>();
    // SAFETY: an 8-byte-aligned word of the trampoline's copy (see
    // `copy_trampoline`), which no AP reads until the next startup IPI.
    unsafe { at.write_volatile(value) };
}

/// Starts the CPU with APIC id `apic_id` as CPU number `index`: INIT, then
/// up to two startup IPIs (as the SDM's MP start-up sequence does), then
/// waits up to two seconds for it to report. True if it did.
fn start_one(base: u64, apic_id: u32, index: usize) -> bool {
    let stack = Box::leak(alloc::vec![0u8; AP_STACK_SIZE].into_boxed_slice());
    let top = (stack.as_ptr() as u64 + AP_STACK_SIZE as u64) & !0xf;
    put64(base, &raw const ap_tramp_stack, top);
    put64(base, &raw const ap_tramp_entry, ap_main as *const () as u64);
    put64(base, &raw const ap_tramp_arg, index as u64);
    AP_READY.store(false, Ordering::SeqCst);
    let page = (base >> 12) as u8;
    apic::send_init(apic_id);
    pit::busy_wait_us(10_000);
    for _ in 0..2 {
        apic::send_startup(apic_id, page);
        pit::busy_wait_us(200);
        if AP_READY.load(Ordering::Acquire) {
            return true;
        }
    }
    for _ in 0..2000 {
        if AP_READY.load(Ordering::Acquire) {
            return true;
        }
        pit::busy_wait_us(1000);
    }
    false
}

/// Where an AP enters the kernel, from the trampoline: interrupts off, on
/// its own stack, with the trampoline's page tables and GDT.
extern "C" fn ap_main(index: u64) -> ! {
    let index = index as usize;
    // SAFETY: the boot CPU's values, under which the kernel runs: they only
    // turn on features (paging's, SSE, SMEP/SMAP, write protection, NX,
    // system calls) its code relies on. Long mode stays on (LME is set in
    // the copy as in the register).
    unsafe {
        Cr0::write_raw(BOOT_CR0.load(Ordering::Relaxed));
        Cr4::write_raw(BOOT_CR4.load(Ordering::Relaxed));
        Efer::write_raw(BOOT_EFER.load(Ordering::Relaxed));
    }
    // First its record, before anything takes a lock (locks count
    // themselves there).
    percpu::init_cpu(index);
    crate::mm::paging::activate_kernel();
    gdt::init_cpu(index);
    trap::init();
    super::syscall::init();
    super::fpu::init();
    percpu::set_apic_id(apic::enable());
    apic::start_timer(HZ.load(Ordering::Relaxed) as u32);
    AP_READY.store(true, Ordering::Release);
    crate::proc::sched::run()
}

/// Sends the wake IPI to CPU `index`.
pub fn wake(index: usize) {
    apic::send_ipi(percpu::cpu(index).apic_id(), WAKE_VECTOR);
}

/// Makes every other CPU that may cache entries of the address space whose
/// level-4 table is at `l4` flush them, and waits until each has.
/// `leaving`: the address space is going away, so those CPUs switch to the
/// kernel's table instead. The caller changed the entries first.
pub fn shootdown(l4: u64, leaving: bool) {
    let request = l4 | if leaving { LEAVE } else { FLUSH };
    ask_others(request, |cpu| cpu.loaded_l4().load(Ordering::SeqCst) == l4);
}

/// Makes every CPU, this one included, flush its whole TLB, global
/// entries too, after kernel-half mappings went away (freed kernel stacks,
/// mm/kstack.rs), and waits until each has.
pub fn shootdown_kernel() {
    flush_everything();
    ask_others(KERNEL, |_| true);
}

fn ask_others(request: u64, concerned: impl Fn(&percpu::Cpu) -> bool) {
    if percpu::online() == 1 {
        return;
    }
    let me = percpu::this_cpu();
    // The entries were changed before this point; a CPU that loads the
    // table after the load of its `loaded_l4` below sees the new entries.
    fence(Ordering::SeqCst);
    let mut asked = [false; MAX_CPUS];
    for (i, cpu) in percpu::all().iter().enumerate() {
        if core::ptr::eq(cpu, me) || !concerned(cpu) {
            continue;
        }
        while cpu
            .tlb_request()
            .compare_exchange(0, request, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            while_spinning();
            core::hint::spin_loop();
        }
        apic::send_ipi(cpu.apic_id(), TLB_VECTOR);
        asked[i] = true;
    }
    for (i, cpu) in percpu::all().iter().enumerate() {
        while asked[i] && cpu.tlb_request().load(Ordering::Acquire) != 0 {
            while_spinning();
            core::hint::spin_loop();
        }
    }
}

/// Answers a shootdown asked of this CPU, if one is: called by the IPI's
/// handler and by every loop that spins (a lock's wait, a shootdown's).
pub fn while_spinning() {
    let cpu = percpu::this_cpu();
    let request = cpu.tlb_request().load(Ordering::Acquire);
    if request == 0 {
        return;
    }
    let l4 = request & !0xfff;
    if request & KERNEL != 0 {
        flush_everything();
    } else if Cr3::read().0.start_address().as_u64() == l4 {
        if request & LEAVE != 0 {
            crate::mm::paging::activate_kernel();
        } else {
            x86_64::instructions::tlb::flush_all();
        }
    }
    cpu.tlb_request().store(0, Ordering::Release);
}

/// Flushes this CPU's TLB, global entries included (turning CR4.PGE off
/// and on again, if it is on; reloading CR3 otherwise).
fn flush_everything() {
    let cr4 = Cr4::read();
    if cr4.contains(Cr4Flags::PAGE_GLOBAL) {
        // SAFETY: clearing and restoring PGE only flushes the TLB.
        unsafe {
            Cr4::write(cr4 - Cr4Flags::PAGE_GLOBAL);
            Cr4::write(cr4);
        }
    } else {
        x86_64::instructions::tlb::flush_all();
    }
}
