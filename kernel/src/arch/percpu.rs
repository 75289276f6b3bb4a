//! Per-CPU data, reached through the GS segment base.
//!
//! Some state belongs to a CPU rather than to the kernel as a whole: which
//! thread it runs, the kernel stack an entry from user mode switches to,
//! the scheduler's saved context, how many locks it holds. With one CPU
//! these could be plain statics; with several, each CPU needs its own copy
//! and a way to find it that costs no more than a static. x86_64 gives that
//! way: the GS base. Each CPU's `Cpu` record sits in `CPUS`, and while the
//! CPU runs kernel code its GS base holds the record's address, so
//! `mov %gs:OFFSET, %reg` reads a field in one instruction with no lock
//! (the record's first word is its own address, so `this_cpu()` is one
//! `mov %gs:0`).
//!
//! User mode has a GS base of its own (arch_prctl(ARCH_SET_GS)). The CPU
//! keeps the other one in the `IA32_KERNEL_GS_BASE` register, and `swapgs`
//! exchanges the two. So every way in from user mode begins with `swapgs`
//! and every way out ends with it, and nothing else may: the `syscall`
//! stub (arch/syscall.rs) always swaps, since `syscall` only comes from
//! user mode; `alltraps` (arch/trap.rs) swaps when the frame's cs says the
//! trap interrupted ring 3, and `trap_return` when it goes back there; the
//! one window where the kernel runs with the user's base (between the last
//! `swapgs` and `sysretq`/`iretq`, interrupts off) can only be hit by an
//! NMI or a fault of the return instruction itself, both fatal here, and
//! `ensure_kernel_gs` puts the kernel's base back before the report (what
//! Linux's "paranoid" entries do by reading the base).
//!
//! While the kernel runs, then, `IA32_KERNEL_GS_BASE` holds the user's GS
//! base: the scheduler writes the next thread's there (`set_user_bases`),
//! as it writes the FS base.
//!
//! A field another CPU never touches needs no lock, but an interrupt on this
//! CPU may change some of them (the timer picks another thread only through
//! the scheduler, which runs with interrupts off), so each field is an
//! atomic read and written with `Relaxed`: single instructions, which is
//! what the entry stubs need too.
//!
//! The boot CPU's record is set first thing at boot (`init_boot_cpu`);
//! each other CPU sets its own as the first act of its start-up
//! (arch/smp.rs, `init_cpu` with its index). Fields that other CPUs read
//! (what a CPU runs, its APIC id, its CR3, a shootdown request) are read
//! through `cpu(index)` and `all()`.

use core::mem::offset_of;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use x86_64::VirtAddr;
use x86_64::registers::control::{Cr4, Cr4Flags};
use x86_64::registers::model_specific::{FsBase, GsBase, KernelGsBase};

/// Most CPUs the kernel will drive.
pub const MAX_CPUS: usize = 16;

/// One CPU's own state. `#[repr(C)]` because the entry stubs read fields at
/// fixed offsets; 64-byte aligned so two CPUs never share a cache line.
#[repr(C, align(64))]
pub struct Cpu {
    /// The record's own address (`this_cpu` reads it through GS).
    this: AtomicU64,
    /// Its place in `CPUS`: 0 for the boot CPU, then in the order the
    /// others were started (arch/smp.rs).
    index: AtomicU32,
    /// This CPU's local APIC id, where IPIs for it are sent.
    apic_id: AtomicU32,
    /// The level-4 table CR3 holds (`mm::paging`), so a shootdown knows
    /// which CPUs may cache an address space's entries.
    loaded_l4: AtomicU64,
    /// The page-table lock of the address space CR3 holds (a pointer;
    /// 0 before this CPU first loads one), for `mm::paging::Space::current`.
    loaded_tables: AtomicU64,
    /// A TLB shootdown asked of this CPU (arch/smp.rs): the level-4 table
    /// to flush, with low bits saying what to do (smp.rs's `FLUSH`,
    /// `LEAVE`, `KERNEL`); 0 when nothing is asked. The asker waits until
    /// it reads 0 again.
    tlb_request: AtomicU64,
    /// Where an entry from user mode builds its trap frame: the running
    /// thread's `KernelStack::entry_top` (the syscall stub loads rsp from
    /// here; the TSS's rsp0 holds the same for interrupts).
    entry_top: AtomicU64,
    /// The user's rsp while the syscall stub switches stacks.
    user_rsp: AtomicU64,
    /// The scheduler's saved stack pointer while a thread's stack runs
    /// (mm/kstack.rs).
    scheduler_context: AtomicU64,
    /// The thread this CPU runs and its process, 0 for none (the
    /// scheduler's own loop, or boot).
    tid: AtomicU32,
    pid: AtomicU32,
    /// IrqLocks this CPU holds (sync.rs).
    locks_held: AtomicU32,
    /// The ranks of the locks this CPU holds (sync.rs), one bit each, and
    /// how many of each rank (most ranks allow one at a time).
    ranks_held: AtomicU32,
    rank_counts: [core::sync::atomic::AtomicU8; crate::sync::RANKS],
    /// The user FS and GS bases loaded in this CPU's registers, so that a
    /// switch between threads with the same bases writes no MSR (a `wrmsr`
    /// costs hundreds of cycles on hardware and more under emulation).
    user_fs: AtomicU64,
    user_gs: AtomicU64,
    /// Whether CR4.TSD is set on this CPU: `rdtsc` in user mode faults.
    user_tsc_off: core::sync::atomic::AtomicBool,
    /// 1 while this CPU's mcount records an arc (arch/mcount.rs), so that
    /// the functions it calls, and an interrupt in the middle, record
    /// nothing; kprof.rs waits for it to clear before it reads the tables.
    mcount_busy: core::sync::atomic::AtomicU8,
}

impl Cpu {
    const fn new() -> Cpu {
        Cpu {
            this: AtomicU64::new(0),
            index: AtomicU32::new(0),
            apic_id: AtomicU32::new(0),
            loaded_l4: AtomicU64::new(0),
            loaded_tables: AtomicU64::new(0),
            tlb_request: AtomicU64::new(0),
            entry_top: AtomicU64::new(0),
            user_rsp: AtomicU64::new(0),
            scheduler_context: AtomicU64::new(0),
            tid: AtomicU32::new(0),
            pid: AtomicU32::new(0),
            locks_held: AtomicU32::new(0),
            ranks_held: AtomicU32::new(0),
            rank_counts: [const { core::sync::atomic::AtomicU8::new(0) }; crate::sync::RANKS],
            user_fs: AtomicU64::new(0),
            user_gs: AtomicU64::new(0),
            user_tsc_off: core::sync::atomic::AtomicBool::new(false),
            mcount_busy: core::sync::atomic::AtomicU8::new(0),
        }
    }

    /// Its index among the CPUs (0 = the boot CPU).
    pub fn index(&self) -> u32 {
        self.index.load(Ordering::Relaxed)
    }

    pub fn apic_id(&self) -> u32 {
        self.apic_id.load(Ordering::Relaxed)
    }

    /// The level-4 table this CPU's CR3 holds (written by `mm::paging`
    /// just before it loads CR3).
    pub fn loaded_l4(&self) -> &AtomicU64 {
        &self.loaded_l4
    }

    /// The page-table lock of the loaded address space (mm/paging.rs).
    pub fn loaded_tables(&self) -> &AtomicU64 {
        &self.loaded_tables
    }

    /// The shootdown request word (arch/smp.rs).
    pub fn tlb_request(&self) -> &AtomicU64 {
        &self.tlb_request
    }

    /// The running thread's id, None when the CPU runs none.
    pub fn tid(&self) -> Option<u32> {
        match self.tid.load(Ordering::Relaxed) {
            0 => None,
            tid => Some(tid),
        }
    }

    /// The running thread's process id, None when the CPU runs none.
    pub fn pid(&self) -> Option<u32> {
        match self.pid.load(Ordering::Relaxed) {
            0 => None,
            pid => Some(pid),
        }
    }

    /// Records which thread (of which process) the CPU runs now; `None`
    /// when it goes back to the scheduler.
    pub fn set_running(&self, running: Option<(u32, u32)>) {
        let (tid, pid) = running.unwrap_or((0, 0));
        self.tid.store(tid, Ordering::Relaxed);
        self.pid.store(pid, Ordering::Relaxed);
    }

    /// Sets the stack an entry from user mode switches to (the running
    /// thread's entry top).
    pub fn set_entry_top(&self, top: u64) {
        self.entry_top.store(top, Ordering::Relaxed);
    }

    pub fn entry_top(&self) -> u64 {
        self.entry_top.load(Ordering::Relaxed)
    }

    /// The word where the scheduler's context is saved while a thread runs.
    pub fn scheduler_context(&self) -> &AtomicU64 {
        &self.scheduler_context
    }

    /// The count of locks held, for sync.rs.
    pub fn locks_held(&self) -> &AtomicU32 {
        &self.locks_held
    }

    /// The ranks of the locks held, one bit per rank (sync.rs).
    pub fn ranks_held(&self) -> &AtomicU32 {
        &self.ranks_held
    }

    /// How many locks of rank `rank` this CPU holds.
    pub fn rank_count(&self, rank: usize) -> &core::sync::atomic::AtomicU8 {
        &self.rank_counts[rank]
    }

    /// Whether this CPU's mcount is recording an arc now.
    pub fn in_mcount(&self) -> bool {
        self.mcount_busy.load(Ordering::SeqCst) != 0
    }
}

static CPUS: [Cpu; MAX_CPUS] = [const { Cpu::new() }; MAX_CPUS];

/// CPUs whose records are in use (started, or being started).
static ONLINE: AtomicU32 = AtomicU32::new(1);

/// How many CPUs run the kernel.
pub fn online() -> usize {
    ONLINE.load(Ordering::Acquire) as usize
}

/// Sets how many CPUs run (arch/smp.rs, as each one comes up).
pub fn set_online(count: usize) {
    ONLINE.store(count as u32, Ordering::Release);
}

/// The record of CPU `index`, for another CPU to read (what it runs, where
/// to send an IPI).
pub fn cpu(index: usize) -> &'static Cpu {
    &CPUS[index]
}

/// The records of every CPU that runs the kernel.
pub fn all() -> &'static [Cpu] {
    &CPUS[..online()]
}

/// Byte offsets of the fields the syscall stub reads through GS.
pub const ENTRY_TOP_OFFSET: usize = offset_of!(Cpu, entry_top);
pub const USER_RSP_OFFSET: usize = offset_of!(Cpu, user_rsp);
/// And the one mcount reads (arch/mcount.rs).
#[cfg_attr(not(feature = "mcount"), allow(dead_code))]
pub const MCOUNT_BUSY_OFFSET: usize = offset_of!(Cpu, mcount_busy);

/// The boot CPU's GS base, set first thing at boot (before the first lock,
/// which counts itself in the record).
pub fn init_boot_cpu() {
    init_cpu(0);
}

/// Points this CPU's GS base at record `index`, with a user GS base of 0.
/// Its APIC id is recorded later, once the APIC is on (`set_apic_id`).
/// Called once per CPU, with interrupts off, before anything on it takes
/// a lock.
pub fn init_cpu(index: usize) {
    let cpu = &CPUS[index];
    let at = cpu as *const Cpu as u64;
    cpu.this.store(at, Ordering::Relaxed);
    cpu.index.store(index as u32, Ordering::Relaxed);
    GsBase::write(VirtAddr::new(at));
    KernelGsBase::write(VirtAddr::zero());
    FsBase::write(VirtAddr::zero());
    // User mode must not write its bases itself (wrgsbase could plant a
    // kernel address where `swapgs` would take it for this record, and
    // `set_user_bases` trusts that the registers hold what it loaded), so
    // the FSGSBASE instructions stay off.
    // SAFETY: clearing FSGSBASE only makes rd/wr{fs,gs}base fault; the
    // kernel does not use them.
    unsafe { Cr4::update(|f| f.remove(Cr4Flags::FSGSBASE)) };
}

/// Records this CPU's local APIC id (read from the APIC itself).
pub fn set_apic_id(id: u32) {
    this_cpu().apic_id.store(id, Ordering::Relaxed);
}

/// This CPU's record.
///
/// The GS base points at it whenever kernel code runs (the `swapgs` rules
/// atop this file), from `init_boot_cpu` on.
pub fn this_cpu() -> &'static Cpu {
    let at: u64;
    // SAFETY: reads one word through GS, which in kernel mode holds the
    // address of this CPU's record, whose first word is that address.
    unsafe {
        core::arch::asm!(
            "mov {}, gs:[0]",
            out(reg) at,
            options(nostack, preserves_flags, readonly)
        )
    };
    debug_assert!(
        CPUS.as_ptr_range().contains(&(at as *const Cpu)),
        "GS does not point at a CPU record"
    );
    // SAFETY: `at` is the address of one of the `CPUS`, which are 'static
    // and only ever used through shared references.
    unsafe { &*(at as *const Cpu) }
}

/// The user's FS and GS bases for the thread about to run (or one that
/// changed its own): FS straight into its register, GS into
/// `IA32_KERNEL_GS_BASE`, where it waits for the `swapgs` on the way out.
/// A register that holds the value already is not written: user mode
/// cannot change either base by itself (the FSGSBASE instructions are off),
/// so what this CPU loaded last is what the registers hold.
pub fn set_user_bases(fs: u64, gs: u64) {
    let cpu = this_cpu();
    if cpu.user_fs.swap(fs, Ordering::Relaxed) != fs {
        FsBase::write(VirtAddr::new_truncate(fs));
    }
    if cpu.user_gs.swap(gs, Ordering::Relaxed) != gs {
        KernelGsBase::write(VirtAddr::new_truncate(gs));
    }
}

/// Whether user mode may read the time-stamp counter (`rdtsc`, `rdtscp`)
/// on this CPU: when not, CR4.TSD makes either instruction a general
/// protection fault in ring 3 (the thread gets SIGSEGV), as prctl's
/// PR_TSC_SIGSEGV asks. Ring 0 reads it either way. CR4 is written only
/// when the answer changes, as `set_user_bases` writes its MSRs.
pub fn set_user_tsc(allowed: bool) {
    let cpu = this_cpu();
    if cpu.user_tsc_off.swap(!allowed, Ordering::Relaxed) != !allowed {
        // SAFETY: TSD only makes rdtsc/rdtscp fault outside ring 0; the
        // kernel's own readings (the clock) run in ring 0.
        unsafe {
            Cr4::update(|f| f.set(Cr4Flags::TIMESTAMP_DISABLE, !allowed));
        }
    }
}

/// After an entry that may have come in with the user's GS base (an NMI or
/// a fault of `sysretq`/`iretq` in the window after the last `swapgs`):
/// makes GS the kernel's again. Only for the fatal reports, which must
/// take locks to print.
#[instrument_fn = "off"]
pub fn ensure_kernel_gs() {
    let base = GsBase::read().as_u64();
    if !CPUS
        .iter()
        .any(|c| c.this.load(Ordering::Relaxed) == base && base != 0)
    {
        // SAFETY: the GS base is not a CPU record, so the kernel's is in
        // IA32_KERNEL_GS_BASE (the entry came between a swapgs and the
        // return to user mode); swapping brings it back.
        unsafe { core::arch::asm!("swapgs", options(nostack, preserves_flags)) };
    }
}
