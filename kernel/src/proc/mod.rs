//! Processes and threads: the table, the current thread, and what happens
//! on the way back to user mode.
//!
//! A *process* (a thread group) owns what its threads share: the address
//! space, open files, cwd, umask, signal handlers and process-directed
//! pending signals, interval timers, the profil buffer and its counters,
//! resource limits, and its place among processes (parent, group, wait
//! status). A *thread*
//! owns what runs: its tid, kernel stack, state for the scheduler,
//! FPU/SSE registers, FS base (its TLS), signal mask, thread-directed
//! pending signals and alternate stack, the profil ticks it earned and not
//! yet applied, and its clear-child-tid and robust-list addresses. A
//! process's pid is the tid of its first thread; getpid answers the pid,
//! gettid the tid. docs/architecture.md ("Threads") says why each item sits
//! where it does.
//!
//! Both live in one table behind one `IrqLock` (the timer interrupt reads
//! it to charge ticks): processes by pid, threads by tid. Code running for
//! the current thread reaches its process with `current(|p| ...)`, itself
//! with `current_thread(|t| ...)`, or both with `current_both`; nothing
//! may sleep or switch inside those closures, so files, address spaces and
//! the like are cloned or taken out before blocking work.
//!
//! Files in this directory: `sched.rs` (switching, sleeping, waking),
//! `vm.rs` (user memory: brk, mmap, copy-on-write), `exec.rs` (loading ELF
//! programs), `lifecycle.rs` (clone/fork, exit, wait), `kthread.rs` (kernel
//! threads), `futex.rs` (futexes and robust lists), `fault.rs` (user
//! faults). Signals are in `../signal.rs`.

pub mod coredump;
pub mod exec;
pub mod fault;
pub mod futex;
pub mod kthread;
pub mod lifecycle;
pub mod sched;
pub mod vm;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;

use crate::fs::file::Files;
use crate::mm::kstack::KernelStack;
use crate::sync::{IrqLock, Rank};
use sched::Chan;
use vm::UserMemory;

/// A process id: the tid of the process's first thread.
pub type Pid = u32;
/// A thread id; pids and tids are drawn from one space, as on Linux.
pub type Tid = u32;

/// Ids are below this (/proc/sys/kernel/pid_max): they wrap to 2 after
/// `PID_MAX - 1`, as Linux's do with its default of 32768.
pub const PID_MAX: u32 = 32768;
/// The process the kernel starts first and that adopts orphans.
pub const INIT_PID: Pid = 1;
/// Most threads at once, over all processes; clone beyond this is EAGAIN.
/// Each has a 64 KiB kernel stack: 64 MiB at the limit, of the 512 MiB
/// the test machines have. A well-known suite's requeue test parks a
/// thousand processes on one futex, so it takes this many.
pub const MAX_THREADS: usize = 1024;
/// Most processes at once, zombies included; fork beyond this is EAGAIN.
/// Each live process has a thread, so this bounds only the zombies more.
pub const MAX_PROCS: usize = MAX_THREADS;

/// A thread's state, for the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Being made by clone: not runnable until its ids are written.
    New,
    Runnable,
    Running,
    Sleeping(Chan),
    /// Parked while its process is stopped by a signal, until SIGCONT.
    Stopped,
    /// Exited; the scheduler frees it (its kernel stack) once it has
    /// switched away from it for the last time.
    Dead,
}

pub struct Process {
    pub pid: Pid,
    pub ppid: Pid,
    /// Process group (kill(-pgid), the console's foreground for Ctrl-C).
    pub pgid: Pid,
    /// Session (setsid(2)): the pid of the session's leader, inherited
    /// at fork. A group never spans two sessions (setpgid keeps it so).
    pub sid: Pid,
    pub name: String,
    /// The program's path and its argv, NUL-terminated strings (at most
    /// `CMDLINE_MAX` bytes), as exec got them: /proc/PID/exe and cmdline.
    pub exe: String,
    pub cmdline: alloc::vec::Vec<u8>,
    /// Ticks since boot when fork made it (/proc/PID/stat's starttime).
    pub start_tick: u64,
    /// None once the process has exited, and while a vfork child borrows it
    /// (`lent`).
    pub mem: Option<UserMemory>,
    /// This vfork child runs in its parent's memory (`mem` is the parent's)
    /// and gives it back at exec or exit.
    pub borrowed_from: Option<Pid>,
    /// The parent of a vfork child waits until this is cleared (at the
    /// child's exec or exit).
    pub vfork_parent: Option<Pid>,
    pub files: Files,
    pub cwd: String,
    /// Its execution domain and flags (personality(2)): kept across fork
    /// and exec. Only PER_LINUX exists here, and no flag changes what the
    /// kernel does (there is no address randomization to turn off), but a
    /// program reads back what it set, as on Linux.
    pub personality: u32,
    /// The file mode creation mask (kept for umask(2); modes are not enforced).
    pub umask: u32,
    /// Resource limits (getrlimit(2)): copied at fork, kept across exec.
    pub limits: kcore::rlimit::Limits,
    /// Who the process is (user and group ids, kcore/src/cred.rs): shared
    /// with the parent at fork until one of them changes its own (a new
    /// `Arc`, as Linux's `prepare_creds`/`commit_creds`), so a caller may
    /// keep a clone after letting the table go.
    pub cred: Arc<kcore::cred::Cred>,
    /// CPU time of all its threads, dead ones included.
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// User and system ticks of reaped children (and theirs), for times(2)
    /// and getrusage(RUSAGE_CHILDREN).
    pub children_ticks: (u64, u64),
    /// Times its threads gave up the CPU by sleeping, and had it taken
    /// while still runnable (getrusage's `ru_nvcsw`, `ru_nivcsw`); and the
    /// same of reaped children.
    pub switches: Switches,
    pub children_switches: Switches,
    /// Handlers, process-directed pending signals, interval timers.
    pub sig: crate::signal::Signals,
    /// profil(2) state: regions and counters (the ticks waiting to be
    /// applied are each thread's).
    pub prof: crate::profil::Profile,
    /// Threads that have not exited.
    pub live_threads: u32,
    /// Threads whose entry and kernel stack the scheduler has not yet
    /// freed, exited ones included: a thread's last CPU frees them after
    /// its final switch, which on several CPUs may come after its parent
    /// was told. wait4 reaps a zombie only once this is 0, so every frame
    /// the child had is back when its parent learns it ended.
    pub unfreed_threads: u32,
    /// Stopped by a signal: its threads park on their way to user mode.
    pub stopped: bool,
    /// Its last stop or continue, until the parent's wait reports it
    /// (WUNTRACED, WCONTINUED): `signal::child_changed` sets it.
    pub change: Option<kcore::wait::Change>,
    /// exit_group or a fatal signal is ending every thread; the wait status.
    pub group_exit: Option<i32>,
    /// Set when the last thread exited: the wait status, kept until the
    /// parent reaps it.
    pub zombie: Option<i32>,
    /// Its parent ignored SIGCHLD (SIG_IGN or SA_NOCLDWAIT) when it
    /// exited: nobody will wait for it, so the scheduler removes the
    /// zombie once its last stack is freed (POSIX's automatic reaping).
    pub autoreap: bool,
    /// The signal the parent gets when this process ends (clone's low
    /// byte; SIGCHLD for fork), 0 for none.
    pub exit_signal: u32,
    /// The signal this process gets when its parent ends, 0 for none
    /// (prctl's PR_SET_PDEATHSIG; not passed on by fork). Linux sends it
    /// when the parent *thread* that forked it ends; here, when the parent
    /// process does, which is what programs that use it wait for.
    pub pdeath_signal: u32,
    /// What its pidfds share (fs/pidfd.rs): made by the first
    /// pidfd_open, told when the process ends.
    pub watch: Option<Arc<crate::fs::pidfd::Watch>>,
}

impl Process {
    pub fn is_zombie(&self) -> bool {
        self.zombie.is_some()
    }

    /// How many descriptors it may have: its `RLIMIT_NOFILE`.
    pub fn fd_limit(&self) -> usize {
        let limit = self.limits.cur(abi::types::RLIMIT_NOFILE);
        limit.min(kcore::rlimit::NR_OPEN) as usize
    }
}

pub struct Thread {
    pub tid: Tid,
    /// The process it belongs to.
    pub pid: Pid,
    pub state: State,
    /// Its kernel stack, which also keeps its saved context while it is
    /// switched out (mm/kstack.rs).
    pub kstack: KernelStack,
    /// Ticks left in the current time slice.
    pub slice_left: u32,
    /// Its nice, -20 to 19 (setpriority(2)): how long its slices are
    /// against a nice 0 thread's (`kcore::nice`).
    pub nice: i32,
    /// Its policy (sched_setscheduler(2)), which with its nice sets the
    /// length of its slices (`kcore::policy`).
    pub scheduling: kcore::policy::Scheduling,
    /// Ticks it ran, user and system (CLOCK_THREAD_CPUTIME_ID), and of
    /// those the ones in user mode (getrusage's RUSAGE_THREAD).
    pub cpu_ticks: u64,
    pub user_ticks: u64,
    /// Its context switches, as its process's `switches` counts them.
    pub switches: Switches,
    /// How late its timed sleeps may end, in nanoseconds (prctl's
    /// PR_SET_TIMERSLACK; kept and reported: this kernel's sleeps end at
    /// the first tick past their deadline whatever it says).
    pub timer_slack: u64,
    /// When a sleep ends (nanosleep, a futex timeout, poll), if it has a
    /// deadline: nanoseconds since boot on the monotonic clock.
    pub wake_at: Option<u64>,
    /// Whether `rdtsc` in user mode faults (SIGSEGV) for this thread:
    /// prctl's PR_SET_TSC, PR_TSC_SIGSEGV. Copied by fork and clone, kept
    /// across exec, as on Linux.
    pub tsc_faults: bool,
    /// The CPUs it may run on, one bit each (sched_setaffinity(2)); every
    /// CPU at first. Copied by fork and clone, kept across exec.
    pub allowed_cpus: u64,
    /// The user's FS base (thread pointer), set by arch_prctl or clone.
    pub fs_base: u64,
    /// The user's GS base, set by arch_prctl(ARCH_SET_GS).
    pub gs_base: u64,
    /// The user's FPU/SSE registers while the thread is switched out.
    pub fpu: crate::arch::fpu::FpuState,
    /// Mask, thread-directed pending signals, alternate stack.
    pub sig: crate::signal::ThreadSignals,
    /// profil ticks this thread earned, applied on its return to user mode.
    pub prof: crate::profil::PendingTicks,
    /// set_tid_address / CLONE_CHILD_CLEARTID: at exit, 0 is written here
    /// and one futex waiter woken.
    pub clear_child_tid: u64,
    /// set_robust_list: the head of its robust mutex list, or 0.
    pub robust_list: u64,
    /// The futex this thread sleeps on, until a wake clears it.
    pub futex: Option<futex::Waiter>,
    /// The futexes a futex_waitv(2) call sleeps on, until a wake of one
    /// of them says which.
    pub futex_waitv: Option<futex::ManyWaiter>,
    /// Its context is live on a CPU: from the moment a scheduler picks it
    /// until that scheduler is back on its own stack. Its state may say
    /// Runnable or Sleeping before then (it is on its way out, or a wakeup
    /// came first), and no other CPU may resume it until this clears.
    pub on_cpu: bool,
    /// The CPU it runs on, or last ran on (/proc/PID/stat's processor).
    pub cpu: u32,
}

impl Thread {
    /// The user pc at which the thread last entered the kernel, as
    /// recorded at entry (mm/kstack.rs: the entry record).
    pub fn user_pc_at_entry(&self) -> u64 {
        self.kstack.entry_pc()
    }

    /// The user stack pointer at the same entry.
    pub fn user_sp_at_entry(&self) -> u64 {
        self.kstack.user_frame().rsp
    }

    /// Tells the thread that `work` may be due before its next return to
    /// user mode (`return_to_user` looks). Safe to call for any thread,
    /// from any context: it only sets bits in its work-due word.
    pub fn note_work(&self, work: Work) {
        self.kstack
            .work_due()
            .fetch_or(work as u64, core::sync::atomic::Ordering::SeqCst);
        // Running on another CPU: interrupt it, so the work is looked at
        // now and not at that CPU's next tick.
        if self.on_cpu && self.cpu != crate::arch::percpu::this_cpu().index() {
            crate::arch::smp::wake(self.cpu as usize);
        }
    }

    /// Makes a sleeping, stopped or new thread runnable, and wakes an idle
    /// CPU to run it (sched.rs). The table is locked by the caller.
    pub fn make_runnable(&mut self) {
        self.state = State::Runnable;
        sched::kick_idle_cpu(self.cpu, self.allowed_cpus);
    }

    /// Whether it may run on CPU `cpu` (sched_setaffinity).
    pub fn may_run_on(&self, cpu: u32) -> bool {
        self.allowed_cpus & 1u64.checked_shl(cpu).unwrap_or(0) != 0
    }

    /// A thread of process `pid` that enters user mode through the frame
    /// on `kstack`.
    pub fn new(tid: Tid, pid: Pid, kstack: KernelStack) -> Thread {
        Thread {
            tid,
            pid,
            state: State::New,
            kstack,
            slice_left: 0,
            nice: 0,
            scheduling: kcore::policy::Scheduling::default(),
            cpu_ticks: 0,
            user_ticks: 0,
            switches: Switches::default(),
            timer_slack: abi::types::DEFAULT_TIMER_SLACK_NS,
            tsc_faults: false,
            allowed_cpus: u64::MAX,
            wake_at: None,
            fs_base: 0,
            gs_base: 0,
            fpu: crate::arch::fpu::FpuState::initial(),
            sig: crate::signal::ThreadSignals::default(),
            prof: crate::profil::PendingTicks::default(),
            clear_child_tid: 0,
            robust_list: 0,
            futex: None,
            futex_waitv: None,
            on_cpu: false,
            cpu: 0,
        }
    }
}

pub struct Table {
    pub procs: BTreeMap<Pid, Box<Process>>,
    pub threads: BTreeMap<Tid, Box<Thread>>,
    next_id: u32,
    /// Where each CPU's ticks went (/proc/stat, /proc/uptime's idle time),
    /// by CPU index.
    pub cpu: [kcore::procfs::CpuTicks; crate::arch::percpu::MAX_CPUS],
    /// Threads running or runnable, averaged (/proc/loadavg, sysinfo).
    pub load: kcore::procfs::LoadAvg,
    /// Processes made since boot (/proc/stat), and the last pid given out.
    pub forks: u64,
    pub last_pid: u32,
}

impl Table {
    /// A process's state as `ps` shows it (`abi::types::PROC_*`): its
    /// threads' best, running if one runs, runnable if one may, else
    /// sleeping; stopped or zombie as the process is.
    /// The CPU a process runs on, or last ran on: its leader's, or once the
    /// leader has exited, that of a thread still running (or any left);
    /// None when no thread is left (a zombie).
    pub fn process_cpu(&self, p: &Process) -> Option<u32> {
        if let Some(leader) = self.threads.get(&p.pid) {
            return Some(leader.cpu);
        }
        let mut threads = self.threads.values().filter(|t| t.pid == p.pid);
        let first = threads.clone().next()?;
        Some(
            threads
                .find(|t| t.state == State::Running)
                .unwrap_or(first)
                .cpu,
        )
    }

    pub fn process_state(&self, p: &Process) -> u32 {
        use abi::types::{PROC_RUNNABLE, PROC_RUNNING, PROC_SLEEPING, PROC_STOPPED, PROC_ZOMBIE};
        let states = || {
            self.threads
                .values()
                .filter(|t| t.pid == p.pid)
                .map(|t| t.state)
        };
        if p.is_zombie() {
            PROC_ZOMBIE
        } else if p.stopped {
            PROC_STOPPED
        } else if states().any(|s| s == State::Running) {
            PROC_RUNNING
        } else if states().any(|s| s == State::Runnable) {
            PROC_RUNNABLE
        } else {
            PROC_SLEEPING
        }
    }

    /// A fresh id for a new process, counted for /proc/stat and
    /// /proc/loadavg (a thread's id comes from `alloc_id` alone).
    pub fn alloc_pid(&mut self) -> Pid {
        let pid = self.alloc_id();
        self.forks += 1;
        self.last_pid = pid;
        pid
    }

    /// Tasks of real user `uid`, as `RLIMIT_NPROC` counts them (Linux
    /// counts every task of the user): threads, and processes that wait to
    /// be reaped.
    pub fn tasks_of(&self, uid: u32) -> u64 {
        let of_user = |pid: &Pid| self.procs.get(pid).is_some_and(|p| p.cred.ruid == uid);
        let threads = self.threads.values().filter(|t| of_user(&t.pid)).count();
        let zombies = self
            .procs
            .values()
            .filter(|p| p.is_zombie() && p.cred.ruid == uid)
            .count();
        (threads + zombies) as u64
    }

    /// Whether the current process may make one more task: below
    /// `MAX_THREADS`, and below its `RLIMIT_NPROC` in tasks of its real
    /// user, unless it is root (EAGAIN if not). Linux exempts a real user
    /// id of 0 and a process with the capabilities root has.
    pub fn may_add_task(&self) -> Result<(), abi::Errno> {
        if self.threads.len() >= MAX_THREADS {
            return Err(abi::Errno::EAGAIN);
        }
        let Some(p) = self
            .current_tid()
            .and_then(|tid| self.threads.get(&tid))
            .and_then(|t| self.procs.get(&t.pid))
        else {
            return Ok(());
        };
        let exempt = p.cred.ruid == 0 || p.cred.is_root();
        if !exempt && self.tasks_of(p.cred.ruid) >= p.limits.cur(abi::types::RLIMIT_NPROC) {
            return Err(abi::Errno::EAGAIN);
        }
        Ok(())
    }

    /// `may_add_task` for a task that is a new process: also below
    /// `MAX_PROCS` (EAGAIN if not).
    pub fn may_add_process(&self) -> Result<(), abi::Errno> {
        if self.procs.len() >= MAX_PROCS {
            return Err(abi::Errno::EAGAIN);
        }
        self.may_add_task()
    }

    /// Threads running or runnable now (the load average's sample).
    pub fn active_threads(&self) -> u32 {
        self.threads
            .values()
            .filter(|t| matches!(t.state, State::Running | State::Runnable))
            .count() as u32
    }

    /// A fresh id for a process or thread: used by neither, nor by a
    /// process whose first thread is gone.
    pub fn alloc_id(&mut self) -> u32 {
        loop {
            let id = self.next_id;
            self.next_id = if self.next_id >= PID_MAX - 1 {
                2
            } else {
                self.next_id + 1
            };
            if !self.procs.contains_key(&id) && !self.threads.contains_key(&id) {
                return id;
            }
        }
    }

    /// The thread this CPU runs (its per-CPU record says which).
    pub fn current_tid(&self) -> Option<Tid> {
        crate::arch::percpu::this_cpu().tid()
    }

    pub fn current_thread(&mut self) -> Option<&mut Thread> {
        let tid = self.current_tid()?;
        self.threads.get_mut(&tid).map(|t| &mut **t)
    }

    /// The current thread's process.
    pub fn current_mut(&mut self) -> Option<&mut Process> {
        self.current_both().map(|(_, p)| p)
    }

    pub fn current_both(&mut self) -> Option<(&mut Thread, &mut Process)> {
        let tid = self.current_tid()?;
        let thread = self.threads.get_mut(&tid)?;
        let process = self.procs.get_mut(&thread.pid)?;
        Some((&mut **thread, &mut **process))
    }

    /// The threads of process `pid` and the process, borrowed together.
    pub fn process_and_threads(
        &mut self,
        pid: Pid,
    ) -> Option<(&mut Process, impl Iterator<Item = &mut Thread>)> {
        let process = self.procs.get_mut(&pid)?;
        let threads = self
            .threads
            .values_mut()
            .filter(move |t| t.pid == pid)
            .map(|t| &mut **t);
        Some((&mut **process, threads))
    }
}

pub static TABLE: IrqLock<Table> = IrqLock::new(
    Rank::Table,
    Table {
        procs: BTreeMap::new(),
        threads: BTreeMap::new(),
        next_id: 1,
        cpu: [kcore::procfs::CpuTicks::ZERO; crate::arch::percpu::MAX_CPUS],
        load: kcore::procfs::LoadAvg { avg: [0; 3] },
        forks: 0,
        last_pid: 0,
    },
);

/// Most bytes of argv kept for /proc/PID/cmdline (Linux shows them all; a
/// page is what `ps` needs).
pub const CMDLINE_MAX: usize = 4096;

/// Prints every thread: tid, process, state (and what it sleeps on), the
/// CPU it runs on or last ran on and whether it is on it now, the futex it
/// waits on. Ctrl-P on the console (xv6's procdump), for a hang. Takes the
/// table; the caller must hold no lock after it in the order.
pub fn dump_threads() {
    let table = TABLE.lock();
    crate::info!(
        "threads: {} (tick {}, {} CPUs)",
        table.threads.len(),
        crate::clock::ticks(),
        crate::arch::percpu::online()
    );
    for t in table.threads.values() {
        let name = table.procs.get(&t.pid).map_or("?", |p| p.name.as_str());
        let futex = t
            .futex
            .map_or(alloc::string::String::new(), |w| alloc::format!(" {w:?}"));
        // Where in user code it last entered the kernel: for a program
        // spinning in user mode, where it spins (look the address up in
        // /proc/PID/maps).
        crate::info!(
            "  tid {:>4} pid {:>4} {:<12} {:?} cpu {}{}{futex} user pc {:#x}",
            t.tid,
            t.pid,
            name,
            t.state,
            t.cpu,
            if t.on_cpu { " (on it)" } else { "" },
            t.user_pc_at_entry(),
        );
    }
}

/// Runs `f` on the current thread's process. Panics if there is none: only
/// code running on behalf of a thread calls this.
#[track_caller]
pub fn current<R>(f: impl FnOnce(&mut Process) -> R) -> R {
    let mut table = TABLE.lock();
    f(table.current_mut().expect("no current process"))
}

/// The current process's id, from this CPU's record: takes no lock, so
/// code holding locks below the table in the order may ask it.
pub fn current_pid() -> i32 {
    crate::arch::percpu::this_cpu()
        .pid()
        .expect("no current process") as i32
}

/// The caller's credentials (Linux's `current_cred()`), or root's when no
/// process runs (the kernel at boot). Takes the table, so it is asked
/// before any lock below it in the order is held.
#[track_caller]
pub fn cred() -> Arc<kcore::cred::Cred> {
    let mut table = TABLE.lock();
    match table.current_mut() {
        Some(p) => p.cred.clone(),
        None => Arc::new(kcore::cred::Cred::root()),
    }
}

/// Runs `f` on the current thread.
#[track_caller]
pub fn current_thread<R>(f: impl FnOnce(&mut Thread) -> R) -> R {
    let mut table = TABLE.lock();
    f(table.current_thread().expect("no current thread"))
}

/// Runs `f` on the current thread and its process.
#[track_caller]
pub fn current_both<R>(f: impl FnOnce(&mut Thread, &mut Process) -> R) -> R {
    let mut table = TABLE.lock();
    let (t, p) = table.current_both().expect("no current thread");
    f(t, p)
}

/// Context switches of a process, as getrusage counts them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Switches {
    pub voluntary: u64,
    pub involuntary: u64,
}

impl Switches {
    pub fn add(&mut self, other: Switches) {
        self.voluntary += other.voluntary;
        self.involuntary += other.involuntary;
    }
}

/// The table's invariants, for the kernel self-check (kcheck): no more
/// threads running than CPUs, each where its CPU's record says, every
/// thread's process present, live threads counted right, every parent
/// present (orphans went to init), memory held exactly by the living (or
/// lent to a vfork child), bounded sizes. A kernel thread's process
/// (kthread.rs) has no parent, no memory and no group.
pub fn check() -> Result<(), &'static str> {
    let table = TABLE.lock();
    if table.procs.len() > MAX_PROCS || table.threads.len() > MAX_THREADS {
        return Err("proc: more processes or threads than allowed");
    }
    let on_cpus = table.threads.values().filter(|t| t.on_cpu).count();
    let running = table
        .threads
        .values()
        .filter(|t| t.state == State::Running)
        .count();
    if on_cpus > crate::arch::percpu::online() || running > on_cpus {
        return Err("proc: more threads running than CPUs");
    }
    for cpu in crate::arch::percpu::all() {
        if let Some(tid) = cpu.tid()
            && !table
                .threads
                .get(&tid)
                .is_some_and(|t| t.on_cpu && t.cpu == cpu.index())
        {
            return Err("proc: a CPU runs a thread the table does not place there");
        }
    }
    for t in table.threads.values() {
        if t.state != State::Dead && !table.procs.contains_key(&t.pid) {
            return Err("proc: a live thread without its process");
        }
    }
    for p in table.procs.values() {
        let kernel = p.is_kernel();
        if kernel && (p.mem.is_some() || p.pgid != 0) {
            return Err("proc: a kernel thread's process with memory or a group");
        }
        if p.pid != INIT_PID && !kernel && !table.procs.contains_key(&p.ppid) {
            return Err("proc: a parent is gone and its child was not given to init");
        }
        let live = table
            .threads
            .values()
            .filter(|t| t.pid == p.pid && t.state != State::Dead)
            .count();
        if live != p.live_threads as usize || (live == 0) != p.is_zombie() {
            return Err("proc: live threads miscounted, or a zombie with threads");
        }
        let entries = table.threads.values().filter(|t| t.pid == p.pid).count();
        if entries > p.unfreed_threads as usize || p.live_threads > p.unfreed_threads {
            return Err("proc: a thread's stack not counted in its process");
        }
        let lent = table.procs.values().any(|c| c.borrowed_from == Some(p.pid));
        if !kernel && p.is_zombie() == (p.mem.is_some() || lent) {
            return Err("proc: memory held by a zombie, or missing from a live process");
        }
        if p.pgid == 0 && !kernel {
            return Err("proc: a process without a group");
        }
    }
    Ok(())
}

/// Kinds of work a thread may have to do before it returns to user mode:
/// bits of its work-due word (mm/kstack.rs), which whoever makes the work
/// sets with `Thread::note_work` and `return_to_user` clears. A bit says
/// "look", not what to do: the look is made under the table's lock, so a
/// bit set for nothing costs one slow return and no harm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Work {
    /// A tick left profil ticks pending (it could not add them to the
    /// buffer in the interrupt): proc::on_tick.
    Profil = 1 << 0,
    /// The time slice is over: proc::on_tick.
    Resched = 1 << 1,
    /// A signal was sent to the thread or its process, its mask changed,
    /// or its process is stopping: signal.rs.
    Signal = 1 << 2,
}

/// Work due before a return to user mode, in the thread's own context:
/// profil's pending ticks, giving up the CPU at the end of a time slice,
/// parking while the process is stopped, then signals (which may rewrite
/// `tf` to enter a handler, or end the thread).
///
/// The common case, nothing due, costs one look at the thread's work-due
/// word, with no lock (and the frame's result, for a system call a signal
/// interrupted). Otherwise the word is cleared first, so that work noted
/// while this looks is looked at again on the next return rather than
/// lost, and one look at the thread under the table's lock decides what
/// is due.
pub fn return_to_user(tf: &mut crate::arch::trap::TrapFrame) {
    let due = crate::mm::kstack::running_work_due();
    if due.load(core::sync::atomic::Ordering::Relaxed) == 0 && !crate::signal::restart_pending(tf) {
        return;
    }
    due.store(0, core::sync::atomic::Ordering::Relaxed);
    let (profil, resched, stopped, signals) = match TABLE.lock().current_both() {
        Some((t, p)) => (
            t.prof.has_pending(),
            // The slice is over, or its CPU mask no longer has this CPU
            // (sched_setaffinity): either way it gives up the CPU.
            t.slice_left == 0 || !t.may_run_on(crate::arch::percpu::this_cpu().index()),
            p.stopped,
            crate::signal::need_attention(t, p),
        ),
        None => return,
    };
    if profil {
        crate::profil::apply_pending();
    }
    if resched {
        sched::yield_now();
    }
    if stopped {
        crate::signal::park_while_stopped();
    }
    // Signals can arrive while this thread waited for the CPU, so after a
    // yield they are looked at again.
    if signals || resched || stopped || crate::signal::restart_pending(tf) {
        crate::signal::deliver(tf);
    }
}

/// Counts `ticks` this CPU spent halted without its tick (clock.rs's
/// `idle_halt`) as idle, as if they had come.
pub fn count_idle_ticks(ticks: u64) {
    TABLE.lock().cpu[crate::arch::percpu::this_cpu().index() as usize].idle += ticks;
}

/// Called on every tick of every CPU: charge it to the thread this CPU
/// was running and its process (user or system time, the profile at the
/// user pc the tick belongs to, ITIMER_VIRTUAL and ITIMER_PROF). The boot
/// CPU's tick (`keeps_time`) also does what happens once per tick of the
/// clock, whatever the CPU count: the load average's sample, every
/// ITIMER_REAL, and waking sleepers whose time has come.
pub fn on_tick(tf: &crate::arch::trap::TrapFrame, keeps_time: bool) {
    let now = crate::clock::nanos_since_boot();
    let mut table = TABLE.lock();
    let from_user = tf.is_from_user();
    let cpu = crate::arch::percpu::this_cpu();
    let spent = &mut table.cpu[cpu.index() as usize];
    match (cpu.tid().is_some(), from_user) {
        (false, _) => spent.idle += 1,
        (true, true) => spent.user += 1,
        (true, false) => spent.system += 1,
    }
    let running = table.current_both().map(|(t, p)| {
        let pc = if from_user {
            p.user_ticks += 1;
            t.user_ticks += 1;
            tf.rip
        } else {
            p.system_ticks += 1;
            t.user_pc_at_entry()
        };
        t.cpu_ticks += 1;
        p.prof.on_tick(pc, &mut t.prof, from_user);
        if t.prof.has_pending() {
            t.note_work(Work::Profil);
        }
        t.slice_left = t.slice_left.saturating_sub(1);
        if t.slice_left == 0 {
            t.note_work(Work::Resched);
        }
        p.pid
    });
    if let Some(pid) = running {
        crate::signal::on_tick_cpu(&mut table, pid, from_user);
    }
    if !keeps_time {
        return;
    }
    let ticks = crate::clock::ticks();
    let hz = u64::from(crate::clock::hz());
    if ticks.is_multiple_of(kcore::procfs::LOAD_INTERVAL_SECS * hz) {
        let active = table.active_threads();
        table.load.sample(u64::from(active));
    }
    crate::signal::on_tick_real(&mut table, now);
    sched::wake_sleepers_due(&mut table, now);
}
