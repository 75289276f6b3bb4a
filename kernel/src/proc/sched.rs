//! The scheduler: round-robin over runnable threads, xv6 style, on every
//! CPU.
//!
//! Each CPU runs its own scheduler loop (`run`) on its own stack (the boot
//! CPU on the boot stack, the others on stacks arch/smp.rs gave them), and
//! all of them pick from the one process table: one shared run queue,
//! which is the table's threads in tid order, each CPU starting after the
//! last thread it ran. One queue needs no balancing between CPUs and no
//! migration code, and a lookup over at most `MAX_THREADS` threads under
//! the table's lock is short next to a switch; per-CPU queues pay off with
//! more CPUs than this kernel drives. A loop picks the next thread that is
//! runnable and not on a CPU (`on_cpu`: a thread that just gave up its CPU
//! is still on it until that CPU's scheduler is back on its own stack),
//! switches to its kernel stack and address space, and gets control back
//! when the thread gives up the CPU: because its time slice ran out
//! (preemption, on the way back to user mode), it went to sleep on a wait
//! channel, or it exited. A thread that exited is freed here, on the
//! scheduler's stack, since it cannot free the stack it runs on, and only
//! then may its parent reap the process (`freed`), so every frame it had
//! is back when wait4 returns. With nothing runnable a CPU halts until an
//! interrupt: the wake IPI a CPU that makes a thread runnable sends to an
//! idle one (`kick_idle_cpu`, the thread's last CPU first), or, on the
//! boot CPU alone, its tick (the others stop theirs while idle: clock.rs).
//!
//! Sleeping is `wait_event(chan, poll)`: the thread marks itself asleep on
//! `chan`, then `poll` checks the condition; if it holds, the thread is
//! running again, otherwise it switches away until someone calls
//! `wakeup(chan)`. Marking first is what keeps a wakeup from being lost:
//! a waker on another CPU that changes the condition after the check
//! finds the thread asleep and makes it runnable, and the switch comes
//! straight back (interrupts are off throughout, for the same reason on
//! this CPU). `wait_event_until` adds a deadline on the monotonic clock
//! (nanoseconds since boot, what CLOCK_MONOTONIC reads), which the boot
//! CPU's `on_tick` enforces by waking the sleeper at the first tick at or
//! after it: never before the time the user's clocks show, up to one tick
//! after. (Counting ticks instead would end early when the virtual PIT
//! catches up on ticks a busy host delayed.)

use abi::Errno;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use x86_64::instructions::interrupts;

use super::{Pid, State, TABLE, Tid, current_thread};
use crate::arch::{gdt, percpu};
use crate::mm::kstack;
use crate::sync::{IrqLock, Rank};

/// What a sleeping thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chan {
    /// A child of this pid to change state (wait4).
    Child(Pid),
    /// A thread of this process to exit (exec waits for the others).
    ThreadExit(Pid),
    /// The vfork child with this pid to exec or exit.
    Vfork(Pid),
    /// A futex wake (proc/futex.rs; the waiter's own `Thread::futex` says
    /// which word).
    Futex,
    /// Data or room in the pipe at this address.
    Pipe(usize),
    /// A message, room or a connection at the socket at this address
    /// (fs/socket.rs).
    Socket(usize),
    /// A count, or room for one, in the eventfd at this address
    /// (fs/eventfd.rs).
    EventFd(usize),
    /// The process with this pid to end: what its pidfds say (fs/pidfd.rs;
    /// their pollers are woken through the pidfds' own queue).
    ProcessEnd(Pid),
    /// A line of console input.
    Console,
    /// Input, output or room at pseudo-terminal N, for its master's side
    /// (`true`) or its slave's (fs/pty.rs).
    Pty(u32, bool),
    /// Only its deadline (nanosleep).
    Timer,
    /// Only a signal (pause, sigsuspend).
    Signal,
    /// One of the objects poll, select or epoll looked at to change: the
    /// thread is on each one's `PollQueue`, which wakes it.
    Poll,
    /// A record lock of the file with this inode number to go (fs/lock.rs).
    FileLock(u64),
    /// The leases an open of the file with this inode number broke to go
    /// (fs/lease.rs).
    Lease(u64),
    /// A message or room in the System V queue with this id (ipc/msg.rs).
    MsgQueue(i32),
    /// A change of a value in the System V semaphore set with this id
    /// (ipc/sem.rs).
    SemSet(i32),
    /// The request in this slot of this disk (its index) to complete
    /// (virtio_blk.rs).
    Disk(usize, usize),
    /// A request slot of this disk to come free.
    DiskSlot(usize),
    /// The `sync::SleepLock` at this address to be let go.
    SleepLock(usize),
    /// The flusher of this disk (its index) to look at once: its volume
    /// was unmounted (fs/ext2.rs).
    Flusher(usize),
}

/// The time slice in milliseconds (the boot option `slice_ms`).
static SLICE_MS: AtomicU32 = AtomicU32::new(10);

/// Sets the time slice; called once at boot.
pub fn set_slice_ms(ms: u32) {
    SLICE_MS.store(ms, Ordering::Relaxed);
}

/// Ticks in a time slice: `slice_ms`, at least one tick.
pub fn time_slice() -> u32 {
    (crate::clock::hz() * SLICE_MS.load(Ordering::Relaxed) / 1000).max(1)
}

/// CPUs halted in the scheduler's idle loop, one bit each (by index).
static IDLE: AtomicU32 = AtomicU32::new(0);

/// Whether thread `t` may be picked: runnable, and its context not live
/// on some CPU (it may still be on its way out of one).
fn can_run(t: &super::Thread) -> bool {
    t.state == State::Runnable && !t.on_cpu
}

/// Whether CPU `cpu` may pick `t` now: runnable, and allowed there.
fn can_run_on(t: &super::Thread, cpu: u32) -> bool {
    can_run(t) && t.may_run_on(cpu)
}

/// The scheduler loop of one CPU; never returns. Every CPU runs one, on
/// its own stack (the boot stack, or the stack arch/smp.rs gave an AP),
/// and all of them pick from the one table: a thread runs on whichever
/// CPU looks first.
///
/// The thread that just gave the CPU back is put back and the next one
/// picked under one hold of the table's lock: a thread whose time slice
/// ended, with nothing else to run, goes on on the same CPU instead of
/// being taken by another CPU that happened to look in between (a move
/// that costs its caches, and shifts its samples to another clock's
/// phase).
pub fn run() -> ! {
    let cpu = percpu::this_cpu();
    let mut last: Tid = 0;
    let mut ran: Option<Tid> = None;
    loop {
        interrupts::disable();
        let (dead, next) = {
            let mut table = TABLE.lock();
            let dead = ran.take().and_then(|tid| put_back(&mut table, tid));
            (dead, pick(&mut table, last, cpu))
        };
        // Its kernel stack is freed outside the table's lock.
        if let Some(thread) = dead {
            freed(thread);
        }
        match next {
            Some((tid, stack)) => {
                last = tid;
                crate::sync::assert_none_held("scheduler");
                // Runs the thread until it gives up the CPU.
                kstack::resume(stack);
                // Its tid now: a thread that exec'd may have taken its
                // process's (proc/exec.rs), and says so in this record.
                ran = Some(cpu.tid().unwrap_or(tid));
                cpu.set_running(None);
            }
            None => idle(cpu),
        }
    }
}

/// Thread `tid` has switched back to this CPU's scheduler: its context is
/// saved, so another CPU may resume it now; a dead one leaves the table
/// and is returned, to be freed. Caller holds the table's lock.
fn put_back(table: &mut super::Table, tid: Tid) -> Option<alloc::boxed::Box<super::Thread>> {
    let t = table
        .threads
        .get_mut(&tid)
        .expect("a thread leaves the table only here");
    t.on_cpu = false;
    if t.state == State::Runnable && !t.may_run_on(percpu::this_cpu().index()) {
        // Its mask changed while it ran here (sched_setaffinity): an idle
        // CPU it may use would not look at the table on its own.
        kick_idle_cpu(t.cpu, t.allowed_cpus);
    }
    if t.state == State::Dead {
        table.threads.remove(&tid)
    } else {
        None
    }
}

/// Picks the next thread for CPU `cpu` (round robin from after `last`)
/// and makes it this CPU's: its address space, kernel stack, user bases.
/// Returns its tid and stack, None when nothing can run. Caller holds the
/// table's lock, with interrupts off.
fn pick(table: &mut super::Table, last: Tid, cpu: &percpu::Cpu) -> Option<(Tid, kstack::StackId)> {
    let here = cpu.index();
    let runnable = |(_, t): &(&Tid, &alloc::boxed::Box<super::Thread>)| can_run_on(t, here);
    let tid = table
        .threads
        .range(last + 1..)
        .find(runnable)
        .or_else(|| table.threads.range(..=last).find(runnable))
        .map(|(tid, _)| *tid)?;
    let super::Table { procs, threads, .. } = table;
    let t = threads.get_mut(&tid).expect("picked from the table");
    t.state = State::Running;
    t.on_cpu = true;
    t.cpu = cpu.index();
    t.slice_left = t.scheduling.policy.slice_ticks(time_slice(), t.nice);
    t.fpu.restore();
    // A thread with no address space (a kernel thread, or one whose
    // process let go of its memory on the way out) runs on the kernel's
    // own table, never on the last one loaded, which may be freed under it.
    match procs.get(&t.pid).and_then(|p| p.mem.as_ref()) {
        Some(mem) => mem.space.activate(),
        None => crate::mm::paging::activate_kernel_if_not(),
    }
    cpu.set_running(Some((tid, t.pid)));
    cpu.set_entry_top(t.kstack.entry_top());
    gdt::set_kernel_stack(x86_64::VirtAddr::new(t.kstack.entry_top()));
    load_user_registers(t);
    Some((tid, t.kstack.id()))
}

/// Frees dead `thread` (its kernel stack, outside the table's lock) and
/// then says so: its process counts one stack fewer, a zombie with none
/// left can be reaped (wait4 waits on `Chan::Child`), and an exec waiting
/// for the old leader's tid to be free looks again (`Chan::ThreadExit`).
fn freed(thread: alloc::boxed::Box<super::Thread>) {
    let pid = thread.pid;
    drop(thread);
    let parent = {
        let mut table = TABLE.lock();
        let reapable = table.procs.get_mut(&pid).and_then(|p| {
            p.unfreed_threads -= 1;
            (p.unfreed_threads == 0 && p.is_zombie()).then_some((p.ppid, p.autoreap))
        });
        // Nobody waits for a child whose parent ignores SIGCHLD: it goes
        // now, and a parent blocked in wait4 looks again (and may find
        // no children left: ECHILD).
        if let Some((_, true)) = reapable {
            table.procs.remove(&pid);
        }
        reapable.map(|(ppid, _)| ppid)
    };
    wakeup(Chan::ThreadExit(pid));
    if let Some(ppid) = parent {
        wakeup(Chan::Child(ppid));
    }
}

/// Nothing to run: halts until an interrupt, having said so in `IDLE` so
/// that a CPU making a thread runnable sends the wake IPI. The table is
/// looked at once more after the bit is set: a thread made runnable
/// before the waker could see the bit is found here, one made runnable
/// after gets the IPI, which `idle_halt` (sti; hlt, with no gap an
/// interrupt could fall into) does not miss. Called with interrupts off.
/// An idle CPU other than the boot CPU has no tick (clock.rs): the IPI is
/// all that wakes it.
///
/// An idle CPU leaves the last address space it ran for the kernel's own
/// table, so that no shootdown of that address space need wait for it.
fn idle(cpu: &percpu::Cpu) {
    crate::mm::paging::activate_kernel_if_not();
    let bit = 1 << cpu.index();
    IDLE.fetch_or(bit, Ordering::SeqCst);
    let found = TABLE
        .lock()
        .threads
        .values()
        .any(|t| can_run_on(t, cpu.index()));
    if !found {
        crate::clock::idle_halt();
    }
    IDLE.fetch_and(!bit, Ordering::SeqCst);
}

/// A thread became runnable: if a CPU other than this one is idle and the
/// thread may run there (`allowed`, its affinity mask), claims it and
/// sends it the wake IPI, the thread's last CPU (`last_cpu`) first if that
/// one idles (its caches still hold the thread's data). Several threads
/// made runnable at once claim several CPUs.
pub fn kick_idle_cpu(last_cpu: u32, allowed: u64) {
    let me = 1u32 << percpu::this_cpu().index();
    // (IDLE has a bit for each of at most 32 CPUs.)
    let allowed = allowed as u32;
    let claim = |bit: u32| IDLE.fetch_and(!bit, Ordering::SeqCst) & bit != 0;
    let preferred = 1u32.checked_shl(last_cpu).unwrap_or(0) & !me & allowed;
    if preferred != 0 && claim(preferred) {
        crate::arch::smp::wake(last_cpu as usize);
        return;
    }
    let mut idle = IDLE.load(Ordering::SeqCst) & !me & allowed;
    while idle != 0 {
        let bit = idle.isolate_lowest_one();
        if claim(bit) {
            crate::arch::smp::wake(bit.trailing_zeros() as usize);
            return;
        }
        idle = IDLE.load(Ordering::SeqCst) & !me & allowed;
    }
}

/// Loads what thread `t`, about to run (or just exec'd, or changing its
/// own), keeps in this CPU's registers for user mode: its FS and GS bases
/// and whether it may read the time-stamp counter (prctl's PR_SET_TSC).
/// They take effect when it returns to user mode.
pub fn load_user_registers(t: &super::Thread) {
    percpu::set_user_bases(t.fs_base, t.gs_base);
    percpu::set_user_tsc(!t.tsc_faults);
}

/// Switches from the current thread to the scheduler. Interrupts must be
/// off and the thread's state already changed from Running.
pub fn switch_to_scheduler() {
    assert!(
        !interrupts::are_enabled(),
        "switch_to_scheduler with interrupts on"
    );
    let stack = {
        let mut table = TABLE.lock();
        // As Linux counts them: a thread that is still runnable had the
        // CPU taken (a time slice ended, sched_yield); any other gave it up.
        if let Some((t, p)) = table.current_both() {
            if t.state == State::Runnable {
                p.switches.involuntary += 1;
                t.switches.involuntary += 1;
            } else {
                p.switches.voluntary += 1;
                t.switches.voluntary += 1;
            }
        }
        drop(table);
        current_thread(|t| {
            t.fpu.save();
            t.kstack.id()
        })
    };
    crate::sync::assert_none_held("switch_to_scheduler");
    kstack::suspend(stack);
}

/// Gives up the CPU but stays runnable.
pub fn yield_now() {
    let were_enabled = interrupts::are_enabled();
    interrupts::disable();
    current_thread(|t| t.state = State::Runnable);
    switch_to_scheduler();
    if were_enabled {
        interrupts::enable();
    }
}

/// Gives up the CPU if the running thread's time slice is over, staying
/// runnable (Linux's `cond_resched`). Preemption happens only on the way
/// back to user mode, so long work in the kernel that need not sleep (a
/// kernel thread writing back many blocks to a disk that answers before
/// the request's waiter sleeps) calls this between its steps to let
/// others run. Caller holds no spinlock.
pub fn cond_resched() {
    if current_thread(|t| t.slice_left == 0) {
        yield_now();
    }
}

/// Sleeps on `chan` until `poll` returns Some. A signal that is not blocked
/// ends the wait with `ERESTARTSYS`, which the way back to user mode turns
/// into a restart of the call or `EINTR` (signal.rs).
pub fn wait_event<R>(chan: Chan, poll: impl FnMut() -> Option<R>) -> Result<R, Errno> {
    wait_event_until(chan, None, poll)
}

/// Says the current thread sleeps on `chan` (until `deadline`), before it
/// looks whether it must: a waker on another CPU that changes the
/// condition after the look finds the thread asleep and makes it runnable,
/// so the switch that follows comes straight back instead of sleeping
/// through the change (the lost wake-up). Interrupts are off.
fn prepare_to_sleep(chan: Chan, deadline: Option<u64>) {
    current_thread(|t| {
        t.state = State::Sleeping(chan);
        t.wake_at = deadline;
        if let Some(at) = deadline {
            EARLIEST_WAKE.lower(at);
        }
    });
}

/// The earliest `wake_at` of any sleeping thread: lowered by
/// `prepare_to_sleep` and walked by `wake_sleepers_due`, both with the
/// process table locked.
static EARLIEST_WAKE: kcore::time::Earliest = kcore::time::Earliest::new();

/// The boot CPU's tick at `now`: threads asleep whose deadline has passed
/// become runnable. The threads are walked only once the earliest deadline
/// has come, not on every tick. Caller holds the table's lock.
pub fn wake_sleepers_due(table: &mut super::Table, now: u64) {
    if !EARLIEST_WAKE.due(now) {
        return;
    }
    for t in table.threads.values_mut() {
        let State::Sleeping(_) = t.state else {
            continue;
        };
        match t.wake_at {
            Some(at) if at <= now => t.make_runnable(),
            Some(at) => EARLIEST_WAKE.lower(at),
            None => {}
        }
    }
}

/// The look found the thread need not sleep after all: running again.
fn cancel_sleep() {
    current_thread(|t| {
        t.state = State::Running;
        t.wake_at = None;
    });
}

/// `wait_event` with a deadline: once the monotonic clock reaches
/// `deadline` (nanoseconds since boot) the wait ends with `ETIMEDOUT`
/// (unless `poll` holds by then).
pub fn wait_event_until<R>(
    chan: Chan,
    deadline: Option<u64>,
    mut poll: impl FnMut() -> Option<R>,
) -> Result<R, Errno> {
    let were_enabled = interrupts::are_enabled();
    let result = loop {
        interrupts::disable();
        prepare_to_sleep(chan, deadline);
        let done = if let Some(r) = poll() {
            Some(Ok(r))
        } else if deadline.is_some_and(|at| crate::clock::nanos_since_boot() >= at) {
            Some(Err(Errno::ETIMEDOUT))
        } else if super::current_both(|t, p| crate::signal::interrupts(t, p)) {
            Some(Err(crate::signal::ERESTARTSYS))
        } else {
            None
        };
        if let Some(result) = done {
            cancel_sleep();
            break result;
        }
        switch_to_scheduler();
        current_thread(|t| t.wake_at = None);
    };
    if were_enabled {
        interrupts::enable();
    }
    result
}

/// Sleeps on `chan` until `poll` returns Some, whatever signals arrive
/// (a vfork parent waiting for its child). Only for waits that the other
/// side is bound to end.
pub fn wait_uninterruptible(chan: Chan, mut poll: impl FnMut() -> bool) {
    let were_enabled = interrupts::are_enabled();
    loop {
        interrupts::disable();
        prepare_to_sleep(chan, None);
        if poll() {
            cancel_sleep();
            break;
        }
        switch_to_scheduler();
    }
    if were_enabled {
        interrupts::enable();
    }
}

/// Makes every thread sleeping on `chan` runnable.
pub fn wakeup(chan: Chan) {
    wakeup_locked(&mut TABLE.lock(), chan);
}

/// `wakeup`, with the table locked by the caller.
pub fn wakeup_locked(table: &mut super::Table, chan: Chan) {
    for t in table.threads.values_mut() {
        if t.state == State::Sleeping(chan) {
            t.make_runnable();
        }
    }
}

/// The threads in poll, select or epoll_wait that looked at one object (a
/// pipe, a socket, the terminal) and found it not ready: the object's wait
/// queue for its poll hook (Linux's `poll_wait`). A change of the object
/// wakes these threads and no others; each takes itself off every queue
/// it joined when its wait ends (`syscall/poll.rs`, `PollTable`).
///
/// Lock order: the queue's lock is taken inside the process table's (level
/// 2 then 3 in sync.rs), so `wake` needs no copy of the list.
pub struct PollQueue(IrqLock<Vec<Tid>>);

impl PollQueue {
    pub const fn new() -> PollQueue {
        PollQueue(IrqLock::new(Rank::PollQueue, Vec::new()))
    }

    /// Puts thread `tid` on the queue (once, however often it is asked).
    pub fn add(&self, tid: Tid) {
        let mut waiters = self.0.lock();
        if !waiters.contains(&tid) {
            waiters.push(tid);
        }
    }

    pub fn remove(&self, tid: Tid) {
        self.0.lock().retain(|&t| t != tid);
    }

    /// The object changed: the threads on the queue that sleep in a poll
    /// wait run again and look.
    pub fn wake(&self) {
        let mut table = TABLE.lock();
        for tid in self.0.lock().iter() {
            if let Some(t) = table.threads.get_mut(tid)
                && t.state == State::Sleeping(Chan::Poll)
            {
                t.make_runnable();
            }
        }
    }
}

impl Default for PollQueue {
    fn default() -> PollQueue {
        PollQueue::new()
    }
}

/// What an object others wait on keeps (a pipe, a socket, the terminal):
/// how many times it changed (data in or out, an end closed; what an
/// edge-triggered epoll compares), the pollers that looked at it, and how
/// many of its files have O_ASYNC set (fs/sigio.rs).
pub struct Readiness {
    changes: core::sync::atomic::AtomicU64,
    pub pollers: PollQueue,
    async_watches: core::sync::atomic::AtomicU32,
}

impl Readiness {
    pub const fn new() -> Readiness {
        Readiness {
            changes: core::sync::atomic::AtomicU64::new(0),
            pollers: PollQueue::new(),
            async_watches: core::sync::atomic::AtomicU32::new(0),
        }
    }

    /// The object changed: the threads waiting on its channel `chan` and
    /// its pollers run again and look.
    pub fn changed(&self, chan: Chan) {
        self.changed_for(chan, Readiness::ANY);
    }

    /// Every event `changed_for` may report: what a change of any kind
    /// can make possible.
    pub const ANY: i16 =
        abi::types::POLLIN | abi::types::POLLOUT | abi::types::POLLERR | abi::types::POLLHUP;

    /// `changed`, by a change that can make only `band` possible (POLLIN:
    /// data came; POLLOUT: room came; POLLHUP, POLLERR: a side went): the
    /// O_ASYNC files on the object that are now ready for it signal their
    /// owners (fs/sigio.rs). The caller holds no lock of the object.
    pub fn changed_for(&self, chan: Chan, band: i16) {
        use core::sync::atomic::Ordering::Relaxed;
        self.changes.fetch_add(1, Relaxed);
        wakeup(chan);
        self.pollers.wake();
        if self.async_watches.load(Relaxed) != 0 {
            crate::fs::sigio::changed(self, band);
        }
    }

    /// A file of this object set (`on`) or cleared O_ASYNC.
    pub fn async_watch(&self, on: bool) {
        use core::sync::atomic::Ordering::Relaxed;
        if on {
            self.async_watches.fetch_add(1, Relaxed);
        } else {
            self.async_watches.fetch_sub(1, Relaxed);
        }
    }

    pub fn changes(&self) -> u64 {
        self.changes.load(core::sync::atomic::Ordering::Relaxed)
    }
}

impl Default for Readiness {
    fn default() -> Readiness {
        Readiness::new()
    }
}

/// Sleeps until the monotonic clock reads `deadline` (nanoseconds since
/// boot).
pub fn sleep_until(deadline: u64) -> Result<(), Errno> {
    match wait_event_until(Chan::Timer, Some(deadline), || None::<()>) {
        Err(Errno::ETIMEDOUT) => Ok(()),
        other => other,
    }
}
