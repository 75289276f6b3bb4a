//! Signals: how they are sent, and how a handler runs and returns.
//!
//! A signal goes to a process (kill, timers, the console: any of its threads
//! that does not block it may take it) or to one thread (tgkill, a fault,
//! SIGPIPE); handlers are the process's, masks each thread's. Sending only
//! marks the signal pending (`send`, `send_to_thread`, with the table
//! locked; the timer interrupt sends too) and wakes one thread that can take
//! it if it sleeps, so its system call ends with `ERESTARTSYS`. A fatal
//! signal ends every thread (exit_group); a stop parks them all. Everything
//! else happens in the taking thread's own context on its way back to user
//! mode
//! (`deliver`, called by proc::return_to_user), where user memory can be
//! written safely, as with profil's pending ticks:
//!
//!     pending & !blocked -> kcore::signal::next picks one
//!         ignored              -> dropped
//!         default action       -> exit (terminate), stop, or nothing
//!         handler              -> an interrupted system call is restarted
//!                                 (SA_RESTART) or fails with EINTR; the
//!                                 trap frame and the FPU/SSE registers are
//!                                 saved in a Linux rt_sigframe on the user
//!                                 stack, and the trap frame is rewritten so
//!                                 that iretq enters the handler
//!     handler returns -> its restorer calls rt_sigreturn -> `sigreturn`
//!                        copies the saved frame back (checked), and the
//!                        interrupted code continues with every register as
//!                        it was
//!
//! The rules (default actions, the order of pending signals, frame placement,
//! which flags a handler may set, timer arithmetic) are in kcore::signal,
//! tested on the host; this file is the mechanism.

use abi::Errno;
use abi::signal::*;
use kcore::signal::{self as rules, DefaultAction, RealTimer, Timer};
use kcore::wait::{Change, Report};

use crate::arch::fpu::FpuState;
use crate::arch::syscall::SYSCALL_VECTOR;
use crate::arch::trap::TrapFrame;
use crate::mm::{USER_TOP, uaccess};
use crate::proc::sched::{self, Chan};
use crate::proc::{
    INIT_PID, Pid, Process, State, Table, Thread, Tid, Work, current, current_both, current_thread,
    lifecycle,
};

/// A system call a signal interrupted: the way back to user mode restarts
/// it, or (for a handler without SA_RESTART) makes it fail with EINTR.
/// Kernel-internal, like Linux's 512: user space never sees it, so it is
/// not in abi's table.
pub const ERESTARTSYS: Errno = Errno(512);
/// Like ERESTARTSYS, but always restarted, handler or not (Linux's 513):
/// for a call that has not started its work, such as a fork that found a
/// signal pending.
pub const ERESTARTNOINTR: Errno = Errno(513);

/// `TrapFrame::error_code` of a system call holds its number (Linux's
/// orig_rax), which a restart needs; this value there means "not a system
/// call any more", so nothing restarts a frame sigreturn restored.
pub const NOT_A_SYSCALL: u64 = u64::MAX;

/// The most stack a handler's frame (`deliver`) takes on an alternate
/// stack: what exec tells programs in AT_MINSIGSTKSZ.
pub const MIN_STACK_FOR_FRAME: u64 = rules::frame_stack_bytes(size_of::<SigFrame>() as u64);

/// Length of the `syscall` instruction: a restart backs rip up by this.
const SYSCALL_INSN_LEN: u64 = 2;

/// Who sent a pending signal and why: what its siginfo will say.
#[derive(Clone, Copy, Debug, Default)]
pub struct Origin {
    code: i32,
    pid_or_addr: u64,
    /// si_status, si_fd or si_value (`SigInfo::value`).
    word: u64,
}

impl Origin {
    /// kill(2) from process `pid`.
    pub fn user(pid: u32) -> Origin {
        Origin {
            code: SI_USER,
            pid_or_addr: u64::from(pid),
            word: 0,
        }
    }

    /// tgkill(2) or tkill(2) from process `pid`.
    pub fn tkill(pid: u32) -> Origin {
        Origin {
            code: SI_TKILL,
            pid_or_addr: u64::from(pid),
            word: 0,
        }
    }

    /// rt_sigqueueinfo and rt_tgsigqueueinfo: the sender's own siginfo
    /// (its code, pid and uid, and value).
    pub fn queued(info: &SigInfo) -> Origin {
        Origin {
            code: info.code,
            pid_or_addr: info.pid_or_addr,
            word: info.value(),
        }
    }

    /// The kernel itself (timers, SIGPIPE, the console's Ctrl-C).
    pub fn kernel() -> Origin {
        Origin {
            code: SI_KERNEL,
            ..Origin::default()
        }
    }

    /// A faulting instruction at data address `addr`.
    pub fn fault(code: i32, addr: u64) -> Origin {
        Origin {
            code,
            pid_or_addr: addr,
            word: 0,
        }
    }

    /// Signal-driven I/O (fs/sigio.rs): descriptor `fd` became ready, as
    /// si_code `code` (POLL_IN...) and si_band `band` say.
    pub fn poll(code: i32, band: i16, fd: i32) -> Origin {
        Origin {
            code,
            pid_or_addr: band as u64,
            word: fd as u32 as u64,
        }
    }

    /// Child `pid` ended with wait status `wait_status`.
    pub fn child(pid: u32, wait_status: i32) -> Origin {
        let (code, status) = match abi::types::wait_term_signal(wait_status) {
            Some(signal) => (CLD_KILLED, signal as i32),
            None => (
                CLD_EXITED,
                abi::types::wait_exit_code(wait_status).unwrap_or(0),
            ),
        };
        Origin {
            code,
            pid_or_addr: u64::from(pid),
            word: status as u32 as u64,
        }
    }

    /// The siginfo of `signal` sent so.
    pub fn info(&self, signal: u32) -> SigInfo {
        let mut info = SigInfo::new(signal, self.code);
        info.pid_or_addr = self.pid_or_addr;
        info.set_value(self.word);
        info
    }
}

/// Real-time signals queued behind the one pending of each number, per
/// queue; more are dropped (Linux's RLIMIT_SIGPENDING, counted per user,
/// makes sigqueue fail with EAGAIN instead).
const MAX_QUEUED: usize = 1024;

/// Pending signals and who sent each. A standard signal sent while it is
/// pending is the same one; each real-time signal sent is kept, in order,
/// and delivered (signal(7)).
#[derive(Clone)]
pub struct SigQueue {
    pub pending: SigSet,
    /// Indexed by signal number - 1: the origin of the one pending.
    origins: [Origin; 64],
    /// Further real-time signals of numbers already pending, oldest first.
    queued: alloc::collections::VecDeque<(u32, Origin)>,
}

impl Default for SigQueue {
    fn default() -> SigQueue {
        SigQueue {
            pending: 0,
            origins: [Origin::default(); 64],
            queued: alloc::collections::VecDeque::new(),
        }
    }
}

impl SigQueue {
    fn pend(&mut self, signal: u32, origin: Origin) {
        let bit = sig_bit(signal);
        if self.pending & bit != 0 {
            if signal >= SIGRTMIN && self.queued.len() < MAX_QUEUED {
                self.queued.push_back((signal, origin));
            }
            return;
        }
        self.pending |= bit;
        self.origins[signal as usize - 1] = origin;
    }

    /// Takes `signal` off the queue if it is there, with its origin; a
    /// real-time signal queued behind it becomes the pending one.
    fn take(&mut self, signal: u32) -> Option<Origin> {
        let bit = sig_bit(signal);
        if self.pending & bit == 0 {
            return None;
        }
        let origin = self.origins[signal as usize - 1];
        match self.queued.iter().position(|&(s, _)| s == signal) {
            Some(next) => {
                let (_, behind) = self.queued.remove(next).expect("found above");
                self.origins[signal as usize - 1] = behind;
            }
            None => self.pending &= !bit,
        }
        Some(origin)
    }

    /// Drops every pending `signal` (it became ignored).
    pub fn discard(&mut self, signal: u32) {
        self.pending &= !sig_bit(signal);
        self.queued.retain(|&(s, _)| s != signal);
    }
}

/// A process's signal state: what all its threads share.
#[derive(Clone)]
pub struct Signals {
    /// Indexed by signal number - 1.
    actions: [SigAction; 64],
    /// Process-directed signals (kill, timers, the console), taken by
    /// whichever thread gets to them first.
    pub shared: SigQueue,
    /// ITIMER_REAL, on the monotonic clock.
    pub real_timer: RealTimer,
    /// ITIMER_VIRTUAL and ITIMER_PROF (index `which - 1`): counting the
    /// CPU time of all threads, in ticks.
    pub cpu_timers: [Timer; 2],
    /// While a thread of this process is in fork: the signals sent to a
    /// group of processes it belongs to (see `send_to_many`), which the new
    /// child gets too once it is in the table.
    forking: Option<SigSet>,
}

impl Default for Signals {
    fn default() -> Signals {
        Signals {
            actions: [SigAction::default(); 64],
            shared: SigQueue::default(),
            real_timer: RealTimer::default(),
            cpu_timers: [Timer::OFF; 2],
            forking: None,
        }
    }
}

/// A thread's own signal state.
#[derive(Clone)]
pub struct ThreadSignals {
    pub blocked: SigSet,
    /// Thread-directed signals (tgkill, faults, SIGPIPE).
    pub own: SigQueue,
    /// The mask to go back to after the handler that ends a sigsuspend.
    saved_mask: Option<SigSet>,
    altstack: StackT,
}

impl Default for ThreadSignals {
    fn default() -> ThreadSignals {
        ThreadSignals {
            blocked: 0,
            own: SigQueue::default(),
            saved_mask: None,
            altstack: StackT::new(0, SS_DISABLE, 0),
        }
    }
}

impl ThreadSignals {
    /// A new thread's, or a fork child's: the creator's mask (and, for a
    /// fork child, its alternate stack); nothing pending (POSIX).
    pub fn for_child(&self, keep_altstack: bool) -> ThreadSignals {
        ThreadSignals {
            blocked: self.blocked,
            altstack: if keep_altstack {
                self.altstack
            } else {
                StackT::new(0, SS_DISABLE, 0)
            },
            ..ThreadSignals::default()
        }
    }

    /// Replaces the mask until the next handler returns (sigsuspend).
    pub fn suspend_with(&mut self, mask: SigSet) {
        self.saved_mask = Some(self.blocked);
        self.blocked = rules::sanitize_mask(mask);
    }

    pub fn altstack(&self) -> StackT {
        self.altstack
    }

    pub fn set_altstack(&mut self, stack: StackT) {
        self.altstack = stack;
    }

    /// After exec: the alternate stack is gone with the old memory; the
    /// mask and pending signals stay.
    pub fn exec(&mut self) {
        self.altstack = StackT::new(0, SS_DISABLE, 0);
    }
}

impl Signals {
    /// A fork child's: the same handlers; nothing pending and no timers
    /// (POSIX).
    pub fn for_child(&self) -> Signals {
        Signals {
            actions: self.actions,
            ..Signals::default()
        }
    }

    /// After exec: handlers back to the default (the code they pointed to
    /// is gone), ignored signals stay ignored; pending signals and timers
    /// stay.
    pub fn exec(&mut self) {
        for action in &mut self.actions {
            let handler = if action.handler == SIG_IGN {
                SIG_IGN
            } else {
                SIG_DFL
            };
            *action = SigAction {
                handler,
                ..SigAction::default()
            };
        }
    }

    /// The signals set to be ignored and those with a handler, as masks
    /// (bit n-1 for signal n): /proc/PID/status's SigIgn and SigCgt.
    pub fn dispositions(&self) -> (SigSet, SigSet) {
        let mut ignored = 0;
        let mut caught = 0;
        for (i, action) in self.actions.iter().enumerate() {
            match action.handler {
                abi::signal::SIG_DFL => {}
                abi::signal::SIG_IGN => ignored |= 1 << i,
                _ => caught |= 1 << i,
            }
        }
        (ignored, caught)
    }

    pub fn action(&self, signal: u32) -> SigAction {
        self.actions[signal as usize - 1]
    }

    /// Sets the action of `signal`. Setting SIG_IGN (or a default of ignore)
    /// discards one pending for the process; the caller discards it from
    /// each thread (`discard_ignored`).
    pub fn set_action(&mut self, signal: u32, action: SigAction) {
        self.actions[signal as usize - 1] = action;
        if is_ignored(&action, signal) {
            self.shared.discard(signal);
        }
    }

    /// Fork begins: from now on, signals sent to this process's group are
    /// kept for the child as well (`send_to_many`).
    pub fn fork_begins(&mut self) {
        self.forking = Some(0);
    }

    /// Fork is over (the child is in the table, or the fork failed): the
    /// group signals that arrived meanwhile, with their origins.
    pub fn fork_ends(&mut self) -> impl Iterator<Item = (u32, Origin)> + use<> {
        let sent = self.forking.take().unwrap_or(0);
        let origins = self.shared.origins;
        (1..NSIG)
            .filter(move |&s| sent & sig_bit(s) != 0)
            .map(move |s| (s, origins[s as usize - 1]))
    }
}

/// Whether a signal is waiting for thread `t` (of `p`) that should end a
/// sleep.
pub fn interrupts(t: &Thread, p: &Process) -> bool {
    rules::next(t.sig.own.pending | p.sig.shared.pending, t.sig.blocked).is_some()
}

/// Whether `deliver` has anything to do for `t`: a signal to act on, or a
/// mask that sigsuspend set aside.
pub fn need_attention(t: &Thread, p: &Process) -> bool {
    interrupts(t, p) || t.sig.saved_mask.is_some()
}

/// Replaces thread `t`'s mask (sigprocmask, sigreturn); a signal it
/// unblocks is taken on the way back to user mode.
pub fn set_mask(t: &mut Thread, mask: SigSet) {
    t.sig.blocked = rules::sanitize_mask(mask);
    t.note_work(Work::Signal);
}

/// Puts `mask` in place until the next handler returns, or until the way
/// back to user mode if none runs (sigsuspend, ppoll, pselect).
pub fn suspend_with(t: &mut Thread, mask: SigSet) {
    t.sig.suspend_with(mask);
    t.note_work(Work::Signal);
}

/// sigtimedwait's take: the first of `set` pending for `t` (its own before
/// its process's, each in delivery order), off its queue, with its origin.
pub fn take_waited(t: &mut Thread, p: &mut Process, set: SigSet) -> Option<(u32, Origin)> {
    if let Some(signal) = rules::next(t.sig.own.pending & set, 0) {
        return t.sig.own.take(signal).map(|origin| (signal, origin));
    }
    let signal = rules::next(p.sig.shared.pending & set, 0)?;
    p.sig.shared.take(signal).map(|origin| (signal, origin))
}

/// Signals pending for `t`: its own and its process's.
pub fn pending_for(t: &Thread, p: &Process) -> SigSet {
    t.sig.own.pending | p.sig.shared.pending
}

/// Whether `action` for `signal` throws it away (SIG_IGN, or a default
/// of ignore).
pub fn is_ignored(action: &SigAction, signal: u32) -> bool {
    action.handler == SIG_IGN
        || (action.handler == SIG_DFL && rules::default_action(signal) == DefaultAction::Ignore)
}

/// Whether `sp` lies on the alternate signal stack `stack`.
pub fn on_stack(stack: &StackT, sp: u64) -> bool {
    stack.flags & SS_DISABLE == 0 && sp > stack.sp && sp - stack.sp <= stack.size
}

/// Where a signal goes: to the process (any thread that does not block it
/// takes it) or to one thread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Process,
    Thread(Tid),
}

/// Sends `signal` to process `pid` (the table is locked by the caller): it
/// waits in the process's queue, and one thread that does not block it is
/// woken to take it, the current one if it can.
pub fn send(table: &mut Table, pid: Pid, signal: u32, origin: Origin) {
    send_to(table, pid, Target::Process, signal, origin);
}

/// Sends `signal` to thread `tid` alone (tgkill; the table is locked by the
/// caller).
pub fn send_to_thread(table: &mut Table, tid: Tid, signal: u32, origin: Origin) {
    if let Some(pid) = table
        .threads
        .get(&tid)
        .filter(|t| t.state != State::Dead)
        .map(|t| t.pid)
    {
        send_to(table, pid, Target::Thread(tid), signal, origin);
    }
}

fn send_to(table: &mut Table, pid: Pid, target: Target, signal: u32, origin: Origin) {
    if signal == SIGCONT {
        resume(table, pid);
    }
    let current = table.current_tid();
    let Table { procs, threads, .. } = table;
    // A kernel thread's process takes no signal (proc/kthread.rs): the
    // sender succeeds, as on Linux, and the signal is dropped.
    let Some(p) = procs
        .get_mut(&pid)
        .filter(|p| !p.is_zombie() && !p.is_kernel())
    else {
        return;
    };
    // The process's live threads, walked afresh each time (no allocation:
    // the timer interrupt sends too).
    macro_rules! threads_of_p {
        () => {
            threads
                .values_mut()
                .map(|t| &mut **t)
                .filter(|t| t.pid == pid && t.state != State::Dead)
        };
    }
    let bit = sig_bit(signal);
    let action = p.sig.action(signal);
    if bit & rules::STOP_SIGNALS != 0 {
        p.sig.shared.pending &= !sig_bit(SIGCONT);
        for t in threads_of_p!() {
            t.sig.own.pending &= !sig_bit(SIGCONT);
        }
    }
    // Init gets only the signals it has handlers for, so a stray kill (or
    // Ctrl-C) cannot take the system down.
    if p.pid == INIT_PID && action.handler == SIG_DFL {
        return;
    }
    // Blocked signals are kept even if ignored: the action may change
    // before they are unblocked.
    let blocked_by = |t: &Thread| t.sig.blocked & bit != 0;
    let blocked = match target {
        Target::Thread(tid) => threads_of_p!().any(|t| t.tid == tid && blocked_by(t)),
        Target::Process => threads_of_p!().all(|t| blocked_by(t)),
    };
    if is_ignored(&action, signal) && !blocked {
        return;
    }
    if signal == SIGKILL {
        // Nothing stops a kill: a stopped process goes on to die.
        continue_process(p, threads_of_p!());
    }
    let taker = match target {
        Target::Thread(tid) => {
            let Some(t) = threads_of_p!().find(|t| t.tid == tid) else {
                return;
            };
            t.sig.own.pend(signal, origin);
            Some(tid)
        }
        Target::Process => {
            p.sig.shared.pend(signal, origin);
            // The current thread takes it on its way out if it can; else
            // the first that does not block it.
            let here = threads_of_p!()
                .find(|t| Some(t.tid) == current && !blocked_by(t))
                .map(|t| t.tid);
            here.or_else(|| threads_of_p!().find(|t| !blocked_by(t)).map(|t| t.tid))
        }
    };
    // Any thread of the process may take a process-directed signal, so
    // each looks on its way out.
    for t in threads_of_p!().filter(|t| target == Target::Process || Some(t.tid) == taker) {
        t.note_work(Work::Signal);
    }
    if let Some(t) = threads_of_p!().find(|t| Some(t.tid) == taker)
        && let State::Sleeping(_) = t.state
    {
        t.make_runnable();
    }
}

/// Ends thread `tid` (exit_group, exec): SIGKILL pending for it alone,
/// which no mask or handler can stop, and it is woken from any sleep or
/// stop. The table is locked by the caller.
pub fn kill_thread(table: &mut Table, tid: Tid) {
    if let Some(t) = table.threads.get_mut(&tid) {
        t.sig.own.pend(SIGKILL, Origin::kernel());
        t.note_work(Work::Signal);
        if matches!(t.state, State::Sleeping(_) | State::Stopped) {
            t.make_runnable();
        }
    }
}

/// Ends every thread of process `pid` but `me` (exit_group, exec): each
/// gets SIGKILL for itself (`kill_thread`). The table is locked by the
/// caller.
pub fn kill_other_threads(table: &mut Table, pid: Pid, me: Tid) {
    let mut next = 0;
    while let Some(tid) = table
        .threads
        .range(next..)
        .find(|(_, t)| t.pid == pid && t.tid != me && t.state != State::Dead)
        .map(|(&tid, _)| tid)
    {
        kill_thread(table, tid);
        next = tid + 1;
    }
}

/// SIGCONT's work, done when it is sent, whatever its action and mask
/// (POSIX): stop signals pending for process `pid` are dropped, and a
/// stopped process runs on, its parent told (`child_changed`). The table
/// is locked by the caller.
fn resume(table: &mut Table, pid: Pid) {
    let Some((p, threads)) = table.process_and_threads(pid) else {
        return;
    };
    if p.is_zombie() {
        return;
    }
    p.sig.shared.pending &= !rules::STOP_SIGNALS;
    let was_stopped = p.stopped;
    for t in threads {
        t.sig.own.pending &= !rules::STOP_SIGNALS;
    }
    let (p, threads) = table.process_and_threads(pid).expect("looked up above");
    continue_process(p, threads);
    if was_stopped {
        child_changed(table, pid, Change::Continued);
    }
}

/// Ends a stop of process `p`: it runs on, its parked `threads` with it.
fn continue_process<'a>(p: &mut Process, threads: impl Iterator<Item = &'a mut Thread>) {
    p.stopped = false;
    for t in threads.filter(|t| t.state == State::Stopped) {
        t.make_runnable();
    }
}

/// Process `pid` was stopped or continued: its parent's wait may report
/// that once (WUNTRACED, WCONTINUED; a newer change replaces an older one
/// not yet reported), and the parent gets SIGCHLD with CLD_STOPPED or
/// CLD_CONTINUED unless its SIGCHLD action has SA_NOCLDSTOP. The table is
/// locked by the caller.
fn child_changed(table: &mut Table, pid: Pid, change: Change) {
    let Some(p) = table.procs.get_mut(&pid) else {
        return;
    };
    p.change = Some(change);
    let ppid = p.ppid;
    let quiet = table
        .procs
        .get(&ppid)
        .is_some_and(|parent| parent.sig.action(SIGCHLD).flags & SA_NOCLDSTOP != 0);
    if !quiet {
        let (code, status) = Report::Changed(change).code_and_status();
        let origin = Origin {
            code,
            pid_or_addr: u64::from(pid),
            word: status as u32 as u64,
        };
        send(table, ppid, SIGCHLD, origin);
    }
    sched::wakeup_locked(table, Chan::Child(ppid));
}

/// Sends the signal a faulting instruction raises to the thread that
/// raised it: if the thread blocks or ignores it, it gets the default
/// action (death), as on Linux, since returning to the instruction would
/// only fault again.
pub fn force(t: &mut Thread, p: &mut Process, signal: u32, origin: Origin) {
    let mut action = p.sig.action(signal);
    if action.handler == SIG_IGN || t.sig.blocked & sig_bit(signal) != 0 {
        action.handler = SIG_DFL;
        p.sig.set_action(signal, action);
        t.sig.blocked &= !sig_bit(signal);
    }
    t.sig.own.pend(signal, origin);
    t.note_work(Work::Signal);
}

/// Whether a fault signal sent now would run a handler (else it kills, and
/// the caller prints why).
pub fn will_catch(t: &Thread, p: &Process, signal: u32) -> bool {
    let handler = p.sig.action(signal).handler;
    handler != SIG_DFL && handler != SIG_IGN && t.sig.blocked & sig_bit(signal) == 0
}

/// Sends `signal` to process `pid` as one of several processes (a process
/// group, or every process): a signal sent to a group must reach every
/// member, including a child that `pid` is forking right now and that is
/// not in the table yet, so a forking process keeps it for that child
/// (`Signals::fork_ends`). Linux does the same (its "multiprocess" signals
/// in copy_process), rather than restarting the fork, which a busy SIGPROF
/// could repeat forever. The table is locked by the caller.
pub fn send_to_many(table: &mut Table, pid: Pid, signal: u32, origin: Origin) {
    if let Some(sent) = table
        .procs
        .get_mut(&pid)
        .and_then(|p| p.sig.forking.as_mut())
    {
        *sent |= sig_bit(signal);
    }
    send(table, pid, signal, origin);
}

/// The pids of the processes `wanted` picks, for sending to each (the
/// table cannot be walked while each send borrows it).
pub fn pids_where(table: &Table, wanted: impl Fn(&Process) -> bool) -> alloc::vec::Vec<Pid> {
    table
        .procs
        .values()
        .filter(|p| wanted(p))
        .map(|p| p.pid)
        .collect()
}

/// Sends `signal` to every process in group `pgid`; false if there is none.
pub fn send_to_group(pgid: u32, signal: u32, origin: Origin) -> bool {
    let mut table = crate::proc::TABLE.lock();
    let members = pids_where(&table, |p| p.pgid == pgid);
    for &pid in &members {
        send_to_many(&mut table, pid, signal, origin);
    }
    !members.is_empty()
}

/// Sends `signal` to the current thread (SIGPIPE: the writer gets it).
pub fn send_to_current(signal: u32, origin: Origin) {
    let mut table = crate::proc::TABLE.lock();
    if let Some(tid) = table.current_tid() {
        send_to_thread(&mut table, tid, signal, origin);
    }
}

/// The earliest deadline of any process's ITIMER_REAL. Read and lowered
/// with the process table locked.
static EARLIEST_REAL: kcore::time::Earliest = kcore::time::Earliest::new();

/// Sets `p`'s ITIMER_REAL to `timer`, returning the one it replaces.
/// Caller holds the process table's lock.
pub fn set_real_timer(p: &mut Process, timer: RealTimer) -> RealTimer {
    if let Some(at) = timer.deadline {
        EARLIEST_REAL.lower(at);
    }
    core::mem::replace(&mut p.sig.real_timer, timer)
}

/// The boot CPU's tick at `now` for every process's ITIMER_REAL: SIGALRM
/// for each that expired. The processes are walked only once the earliest
/// deadline has come (`EARLIEST_REAL`), not on every tick.
pub fn on_tick_real(table: &mut Table, now: u64) {
    if !EARLIEST_REAL.due(now) {
        return;
    }
    // Walked by key, not by iterator: a timer that fires sends its signal
    // through the table (to pick the thread that takes it).
    let mut next = 0;
    while let Some(pid) = table.procs.range(next..).next().map(|(&pid, _)| pid) {
        next = pid + 1;
        let p = table.procs.get_mut(&pid).expect("just found");
        if p.is_zombie() {
            continue;
        }
        let expired = p.sig.real_timer.expired(now);
        if let Some(at) = p.sig.real_timer.deadline {
            EARLIEST_REAL.lower(at);
        }
        if expired {
            send(table, pid, SIGALRM, Origin::kernel());
        }
    }
}

/// A tick charged to process `pid`, which one of its threads was running
/// on the CPU that ticked (in user mode if `user_mode`): ITIMER_VIRTUAL
/// counts user time, ITIMER_PROF all of it, and RLIMIT_CPU is checked
/// against all of it (`Limits::cpu_time_check`: SIGXCPU at the soft
/// limit, SIGKILL at the hard one). Each CPU's tick charges its own
/// thread, so a process running on two CPUs spends its timers twice as
/// fast, as its CPU time grows.
pub fn on_tick_cpu(table: &mut Table, pid: Pid, user_mode: bool) {
    let Some(p) = table.procs.get_mut(&pid) else {
        return;
    };
    if p.is_zombie() {
        return;
    }
    let used = p.user_ticks + p.system_ticks;
    let over_limit = p.limits.cpu_time_check(used, u64::from(crate::clock::hz()));
    let [virtual_time, cpu_time] = &mut p.sig.cpu_timers;
    let fire_virtual = user_mode && virtual_time.tick();
    let fire_prof = cpu_time.tick();
    if let Some(signal) = over_limit {
        send(table, pid, signal, Origin::kernel());
    }
    if fire_virtual {
        send(table, pid, SIGVTALRM, Origin::kernel());
    }
    if fire_prof {
        send(table, pid, SIGPROF, Origin::kernel());
    }
}

/// What the next pending signal asks for.
enum Step {
    Nothing,
    Next,
    Terminate(u32, Origin),
    Stop(u32),
    Handle(u32, SigAction, Origin),
}

fn next_step(t: &mut Thread, p: &mut Process) -> Step {
    let Some(signal) = rules::next(pending_for(t, p), t.sig.blocked) else {
        return Step::Nothing;
    };
    // The thread's own first, as Linux dequeues them.
    let origin = t
        .sig
        .own
        .take(signal)
        .or_else(|| p.sig.shared.take(signal))
        .unwrap_or_default();
    let action = p.sig.action(signal);
    match action.handler {
        SIG_IGN => Step::Next,
        SIG_DFL => match rules::default_action(signal) {
            DefaultAction::Terminate | DefaultAction::Core => Step::Terminate(signal, origin),
            DefaultAction::Stop => Step::Stop(signal),
            DefaultAction::Ignore | DefaultAction::Continue => Step::Next,
        },
        _ => Step::Handle(signal, action, origin),
    }
}

/// On the way back to user mode: park while the process is stopped, then
/// act on pending signals, at most one handler per return (its own mask
/// keeps the others waiting until it returns, and the next return delivers
/// them). A signal it leaves deliverable sets the thread's `Work::Signal`,
/// so that the next return looks.
pub fn deliver(tf: &mut TrapFrame) {
    loop {
        park_while_stopped();
        match current_both(next_step) {
            Step::Nothing => {
                settle_interrupted_call(tf, None);
                current_both(|t, p| {
                    if let Some(mask) = t.sig.saved_mask.take() {
                        t.sig.blocked = mask;
                        // The mask put back may let a pending signal in:
                        // the next return takes it.
                        if interrupts(t, p) {
                            t.note_work(Work::Signal);
                        }
                    }
                });
                return;
            }
            Step::Next => {}
            Step::Terminate(signal, origin) => die_of(tf, signal, &origin),
            Step::Stop(signal) => stop(signal),
            Step::Handle(signal, action, origin) => {
                settle_interrupted_call(tf, Some(action.flags));
                enter_handler(tf, signal, &action, origin);
                return;
            }
        }
    }
}

/// The default action of `signal` kills the process: for the signals
/// whose action is "core", the other threads are told to exit and the
/// core file is written first (proc/coredump.rs), and the wait status says
/// whether it was (WCOREFLAG).
fn die_of(tf: &TrapFrame, signal: u32, origin: &Origin) -> ! {
    use abi::types::{WCOREFLAG, wait_status_signaled};
    let status = wait_status_signaled(signal);
    if rules::default_action(signal) == DefaultAction::Core
        && lifecycle::start_group_exit(status)
        && crate::proc::coredump::write(tf, &origin.info(signal))
    {
        current(|p| p.group_exit = Some(status | WCOREFLAG));
    }
    lifecycle::exit_group(status)
}

/// Whether the trap frame holds a system call's ERESTARTSYS or
/// ERESTARTNOINTR, which `deliver` must turn into a restart or EINTR.
pub fn restart_pending(tf: &TrapFrame) -> bool {
    tf.vector == SYSCALL_VECTOR
        && tf.error_code != NOT_A_SYSCALL
        && [ERESTARTSYS, ERESTARTNOINTR]
            .iter()
            .any(|e| tf.rax == e.as_return() as u64)
}

/// A system call that a signal interrupted (it returned ERESTARTSYS) is
/// restarted, unless a handler without SA_RESTART runs: then it fails with
/// EINTR. ERESTARTNOINTR is restarted in every case.
fn settle_interrupted_call(tf: &mut TrapFrame, handler_flags: Option<u64>) {
    if !restart_pending(tf) {
        return;
    }
    let always = tf.rax == ERESTARTNOINTR.as_return() as u64;
    match handler_flags {
        Some(flags) if flags & SA_RESTART == 0 && !always => {
            tf.rax = Errno::EINTR.as_return() as u64
        }
        _ => {
            tf.rax = tf.error_code;
            tf.rip -= SYSCALL_INSN_LEN;
        }
    }
}

/// Stops the current process, by `signal`, until SIGCONT (or SIGKILL)
/// arrives: its runnable threads park now, the others as they reach user
/// mode, and its parent is told.
fn stop(signal: u32) {
    let mut table = crate::proc::TABLE.lock();
    let Some(pid) = table.current_mut().map(|p| p.pid) else {
        return;
    };
    let (p, threads) = table.process_and_threads(pid).expect("current process");
    p.stopped = true;
    for t in threads {
        if t.state == State::Runnable {
            t.state = State::Stopped;
        }
        t.note_work(Work::Signal);
    }
    child_changed(&mut table, pid, Change::Stopped(signal));
}

/// Parks the current thread for as long as its process is stopped.
pub fn park_while_stopped() {
    loop {
        let were_enabled = x86_64::instructions::interrupts::are_enabled();
        x86_64::instructions::interrupts::disable();
        let park = current_both(|t, p| {
            let park = p.stopped;
            if park {
                t.state = State::Stopped;
            }
            park
        });
        if park {
            sched::switch_to_scheduler();
        }
        if were_enabled {
            x86_64::instructions::interrupts::enable();
        }
        if !park {
            return;
        }
    }
}

/// Saves the interrupted state in a signal frame on the user stack and
/// points the trap frame at the handler.
fn enter_handler(tf: &mut TrapFrame, signal: u32, action: &SigAction, origin: Origin) {
    let (altstack, mask) = current_thread(|t| {
        let mask = t.sig.saved_mask.take().unwrap_or(t.sig.blocked);
        (t.sig.altstack, mask)
    });
    let switch_stack = action.flags & SA_ONSTACK != 0
        && altstack.flags & SS_DISABLE == 0
        && !on_stack(&altstack, tf.rsp);
    let top = if switch_stack {
        altstack.sp + altstack.size
    } else {
        tf.rsp
    };
    let Some((at, fpu_at)) = rules::frame_layout(top, size_of::<SigFrame>() as u64, !switch_stack)
        .filter(|_| action.flags & SA_RESTORER != 0 && action.handler < USER_TOP)
    else {
        bad_frame("cannot deliver", signal, tf.rsp);
    };
    let mut fpu = FpuState::initial();
    fpu.save();
    let mut uc = UContext::zeroed();
    uc.stack = altstack;
    uc.mcontext.gregs = saved_registers(tf);
    uc.mcontext.fpstate = fpu_at;
    uc.sigmask = mask;
    let frame = SigFrame {
        restorer: action.restorer,
        uc,
        info: origin.info(signal),
    };
    if uaccess::write(fpu_at, &fpu.0)
        .and_then(|()| uaccess::write(at, &frame))
        .is_err()
    {
        bad_frame("cannot deliver", signal, tf.rsp);
    }
    // The handler starts with a clean FPU, as on Linux.
    FpuState::initial().restore();
    tf.rip = action.handler;
    tf.rsp = at;
    tf.rdi = u64::from(signal);
    tf.rsi = at + core::mem::offset_of!(SigFrame, info) as u64;
    tf.rdx = at + core::mem::offset_of!(SigFrame, uc) as u64;
    tf.rax = 0;
    tf.rflags &= !(EFL_TF | EFL_DF | EFL_RF); // the ABI's start state
    current_both(|t, p| {
        let mut blocked = mask | action.mask;
        if action.flags & SA_NODEFER == 0 {
            blocked |= sig_bit(signal);
        }
        t.sig.blocked = rules::sanitize_mask(blocked);
        // SA_RESETHAND: the handler goes back to SIG_DFL, its flags and
        // mask stay (Linux's SA_ONESHOT sets only the handler, so a
        // sigaction read afterwards still shows SA_SIGINFO).
        if action.flags & SA_RESETHAND != 0 {
            let mut reset = p.sig.action(signal);
            reset.handler = SIG_DFL;
            p.sig.set_action(signal, reset);
        }
        // One handler per return: another signal the handler's mask lets
        // in is taken on the next return (inside the handler, as Linux
        // would nest it).
        if interrupts(t, p) {
            t.note_work(Work::Signal);
        }
    });
}

fn saved_registers(tf: &TrapFrame) -> [u64; 23] {
    let mut g = [0u64; 23];
    let regs = [
        tf.r8, tf.r9, tf.r10, tf.r11, tf.r12, tf.r13, tf.r14, tf.r15, tf.rdi, tf.rsi, tf.rbp,
        tf.rbx, tf.rdx, tf.rax, tf.rcx, tf.rsp, tf.rip, tf.rflags,
    ];
    g[..regs.len()].copy_from_slice(&regs);
    g[REG_CSGSFS] = tf.cs & 0xffff;
    g[REG_ERR] = if tf.vector == SYSCALL_VECTOR {
        0
    } else {
        tf.error_code
    };
    g[REG_TRAPNO] = tf.vector;
    if tf.vector == crate::arch::trap::PAGE_FAULT {
        g[REG_CR2] = x86_64::registers::control::Cr2::read_raw();
    }
    g
}

/// rt_sigreturn(2): back to the state saved in the frame whose ucontext
/// starts at the user's rsp (the handler's `ret` popped the restorer).
pub fn sigreturn(tf: &mut TrapFrame) -> Result<usize, Errno> {
    let Ok(uc) = uaccess::read::<UContext>(tf.rsp) else {
        bad_frame("unreadable signal frame", 0, tf.rsp);
    };
    let g = &uc.mcontext.gregs;
    if g[REG_RIP] >= USER_TOP || g[REG_RSP] >= USER_TOP {
        bad_frame("corrupt signal frame", 0, tf.rsp);
    }
    [
        tf.r8, tf.r9, tf.r10, tf.r11, tf.r12, tf.r13, tf.r14, tf.r15, tf.rdi, tf.rsi, tf.rbp,
        tf.rbx, tf.rdx, tf.rax, tf.rcx, tf.rsp, tf.rip,
    ] = core::array::from_fn(|i| g[i]);
    tf.rflags = rules::restored_flags(tf.rflags, g[REG_EFL]);
    tf.error_code = NOT_A_SYSCALL;
    match uc.mcontext.fpstate {
        0 => FpuState::initial().restore(),
        at => match uaccess::read::<[u8; 512]>(at) {
            Ok(bytes) => FpuState::sanitized(bytes).restore(),
            Err(_) => bad_frame("unreadable FPU state in the signal frame", 0, tf.rsp),
        },
    }
    current_thread(|t| set_mask(t, uc.sigmask));
    Ok(tf.rax as usize)
}

/// A signal frame that cannot be written or read back: the process dies of
/// SIGSEGV (all its threads), with one line on the console saying why.
fn bad_frame(what: &str, signal: u32, sp: u64) -> ! {
    let (pid, name) = current(|p| (p.pid, p.name.clone()));
    if signal != 0 {
        crate::log::user_line(format_args!(
            "pid {pid} ({name}): {what} signal {signal} (stack {sp:#x}); killed"
        ));
    } else {
        crate::log::user_line(format_args!(
            "pid {pid} ({name}): {what} at {sp:#x}; killed"
        ));
    }
    lifecycle::exit_group(abi::types::wait_status_signaled(SIGSEGV))
}
