//! Processes: the table, the current process, and what happens on the way
//! back to user mode.
//!
//! Every process is a `Box<Process>` in one table behind an `IrqLock` (the
//! timer interrupt reads it to charge ticks). Code running for the current
//! process reaches it with `current(|p| ...)`; nothing may sleep or switch
//! while inside that closure, so files, address spaces and the like are cloned
//! or taken out before blocking work.
//!
//! Files in this directory: `sched.rs` (switching, sleeping, waking),
//! `vm.rs` (user memory: brk, mmap, copy-on-write), `exec.rs` (loading ELF
//! programs), `lifecycle.rs` (fork, exit, wait), `fault.rs` (user faults). Signals are
//! in `../signal.rs`.

pub mod exec;
pub mod fault;
pub mod lifecycle;
pub mod sched;
pub mod vm;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;

use crate::fs::file::FdTable;
use crate::mm::kstack::KernelStack;
use crate::sync::IrqLock;
use sched::Chan;
use vm::UserMemory;

pub type Pid = u32;

/// The process the kernel starts first and that adopts orphans.
pub const INIT_PID: Pid = 1;
/// Most processes at once; fork beyond this is EAGAIN.
pub const MAX_PROCS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Runnable,
    Running,
    Sleeping(Chan),
    /// Stopped by a signal until SIGCONT.
    Stopped,
    /// Exited; `status` is the wait status, kept until the parent reaps it.
    Zombie {
        status: i32,
    },
}

pub struct Process {
    pub pid: Pid,
    pub ppid: Pid,
    /// Process group (kill(-pgid), the console's foreground for Ctrl-C).
    pub pgid: Pid,
    pub name: String,
    pub state: State,
    /// None once the process has exited.
    pub mem: Option<UserMemory>,
    /// Its kernel stack, which also keeps its saved context while it is
    /// switched out (mm/kstack.rs).
    pub kstack: KernelStack,
    pub files: FdTable,
    pub cwd: String,
    /// The file mode creation mask (kept for umask(2); modes are not enforced).
    pub umask: u32,
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// User and system ticks of reaped children (and theirs), for times(2)
    /// and getrusage(RUSAGE_CHILDREN).
    pub children_ticks: (u64, u64),
    /// Ticks left in the current time slice.
    pub slice_left: u32,
    /// Handlers, pending and blocked signals, interval timers.
    pub sig: crate::signal::Signals,
    /// Tick at which a nanosleep ends.
    pub wake_at: u64,
    /// The user's FS base (thread pointer), set by arch_prctl.
    pub fs_base: u64,
    /// profil(2) state: regions, pending ticks, counters.
    pub prof: crate::profil::Profile,
    /// The user's FPU/SSE registers while the process is switched out.
    pub fpu: crate::arch::fpu::FpuState,
}

impl Process {
    /// The user pc at which the process last entered the kernel, as
    /// recorded at entry (mm/kstack.rs: the entry record).
    pub fn user_pc_at_entry(&self) -> u64 {
        self.kstack.entry_pc()
    }

    /// The user stack pointer at the same entry.
    pub fn user_sp_at_entry(&self) -> u64 {
        self.kstack.user_frame().rsp
    }
}

pub struct Table {
    pub procs: BTreeMap<Pid, Box<Process>>,
    pub current: Option<Pid>,
    next_pid: Pid,
}

impl Table {
    pub fn alloc_pid(&mut self) -> Pid {
        loop {
            let pid = self.next_pid;
            self.next_pid = if self.next_pid >= 32767 {
                2
            } else {
                self.next_pid + 1
            };
            if !self.procs.contains_key(&pid) {
                return pid;
            }
        }
    }

    pub fn current_mut(&mut self) -> Option<&mut Process> {
        let pid = self.current?;
        self.procs.get_mut(&pid).map(|p| &mut **p)
    }
}

pub static TABLE: IrqLock<Table> = IrqLock::new(Table {
    procs: BTreeMap::new(),
    current: None,
    next_pid: 1,
});

/// Runs `f` on the current process. Panics if there is none: only code
/// running on behalf of a process calls this.
pub fn current<R>(f: impl FnOnce(&mut Process) -> R) -> R {
    let mut table = TABLE.lock();
    f(table.current_mut().expect("no current process"))
}

/// The process table's invariants, for the kernel self-check (kcheck):
/// at most one process running, every parent present (orphans went to
/// init), memory held exactly by the living, at most MAX_PROCS entries.
pub fn check() -> Result<(), &'static str> {
    let table = TABLE.lock();
    if table.procs.len() > MAX_PROCS {
        return Err("proc: more processes than MAX_PROCS");
    }
    if table
        .procs
        .values()
        .filter(|p| p.state == State::Running)
        .count()
        > 1
    {
        return Err("proc: two processes running on one CPU");
    }
    for p in table.procs.values() {
        if p.pid != INIT_PID && !table.procs.contains_key(&p.ppid) {
            return Err("proc: a parent is gone and its child was not given to init");
        }
        let zombie = matches!(p.state, State::Zombie { .. });
        if zombie == p.mem.is_some() {
            return Err("proc: memory held by a zombie, or missing from a live process");
        }
        if p.pgid == 0 {
            return Err("proc: a process without a group");
        }
    }
    Ok(())
}

/// Work due before a return to user mode, in the process's own context:
/// profil's pending ticks, giving up the CPU at the end of a time slice,
/// then signals (which may rewrite `tf` to enter a handler, or end the
/// process).
///
/// One look at the process decides what is due, so the common case (nothing)
/// costs a single lock.
pub fn return_to_user(tf: &mut crate::arch::trap::TrapFrame) {
    let (profil, resched, signals) = match TABLE.lock().current_mut() {
        Some(p) => (
            p.prof.has_pending(),
            p.slice_left == 0,
            p.sig.need_attention(),
        ),
        None => return,
    };
    if profil {
        crate::profil::apply_pending();
    }
    if resched {
        sched::yield_now();
    }
    // Signals can arrive while this process waited for the CPU, so after a
    // yield they are looked at again.
    if signals || resched || crate::signal::restart_pending(tf) {
        crate::signal::deliver(tf);
    }
}

/// Called on every tick: charge it to the running process (its user or
/// system time, its profile at the user pc the tick belongs to, its
/// ITIMER_VIRTUAL and ITIMER_PROF), count down every ITIMER_REAL, and wake
/// sleepers whose time has come.
pub fn on_tick(tf: &crate::arch::trap::TrapFrame) {
    let now = crate::clock::ticks();
    let mut table = TABLE.lock();
    let running = table.current;
    if let Some(p) = table.current_mut() {
        let pc = if tf.is_from_user() {
            p.user_ticks += 1;
            tf.rip
        } else {
            p.system_ticks += 1;
            p.user_pc_at_entry()
        };
        p.prof.on_tick(pc);
        p.slice_left = p.slice_left.saturating_sub(1);
    }
    for p in table.procs.values_mut() {
        crate::signal::on_tick(p, Some(p.pid) == running, tf.is_from_user());
        if p.state == State::Sleeping(Chan::Timer) && p.wake_at <= now {
            p.state = State::Runnable;
        }
    }
}
