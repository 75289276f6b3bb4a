//! Kernel threads: threads that run kernel code only, for work that no
//! system call is there to do (a disk's flusher, fs/ext2.rs).
//!
//! A kernel thread is the one thread of a process of its own, as on Linux,
//! so it shows in /proc and `ps` under its name, and the clock charges its
//! ticks to it as system time. What sets it apart:
//!
//! - no memory (`mem` is None): the scheduler runs it on the kernel's own
//!   page table, which every address space shares the upper half of;
//! - no open files, no command line (/proc/PID/cmdline is empty and
//!   /proc/PID/exe names nothing, as for Linux's kernel threads);
//! - no parent: its ppid is 0, which only init shares (`is_kernel`), its
//!   process group and session are 0, nobody waits for it (it is reaped
//!   as soon as it ends) and its end signals nobody;
//! - it takes no signal (signal.rs drops every one sent to it), so nothing
//!   a user does can stop it, kill it or end one of its sleeps early.
//!
//! Its stack is prepared by `KernelStack::for_kernel_thread`, whose first
//! switch calls `start`. `start` takes the thread's work from `WORK` (kept
//! by tid, so nothing but the stack's layout passes through the switch),
//! turns interrupts on, runs the work and exits. Nothing preempts a kernel
//! thread: preemption happens on the way back to user mode, which it never
//! takes. So its work must sleep (`sched::wait_event_until`) to let others
//! run, as the flusher does between rounds, or give up the CPU when its
//! time slice is over (`sched::cond_resched`), as every disk request does
//! when it ends (a disk may answer before its requester sleeps).

use abi::Errno;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use x86_64::instructions::interrupts;

use super::{INIT_PID, Pid, Process, TABLE, Thread, Tid, current_thread};
use crate::fs::file::{FdTable, Files};
use crate::mm::kstack::KernelStack;
use crate::sync::{IrqLock, Rank};

/// What a kernel thread runs.
type Work = Box<dyn FnOnce() + Send>;

/// The work of kernel threads that have not started yet, by tid: `spawn`
/// puts it here, `start` takes it out.
static WORK: IrqLock<BTreeMap<Tid, Work>> = IrqLock::new(Rank::Service, BTreeMap::new());

impl Process {
    /// Whether the kernel made this process for a kernel thread: a process
    /// with no parent that is not init.
    pub fn is_kernel(&self) -> bool {
        self.ppid == 0 && self.pid != INIT_PID
    }
}

/// Starts a kernel thread named `name` (at most 15 bytes show, as in
/// Linux's `comm`) that runs `work` and then ends. Returns its pid. EAGAIN
/// when the process table is full, ENOMEM when no stack can be had.
pub fn spawn(name: &str, work: impl FnOnce() + Send + 'static) -> Result<Pid, Errno> {
    let kstack = KernelStack::for_kernel_thread(start).ok_or(Errno::ENOMEM)?;
    let mut table = TABLE.lock();
    table.may_add_process()?;
    let pid = table.alloc_pid();
    let files = Files::new(FdTable::default());
    let mut process = super::lifecycle::new_process(pid, 0, String::from(name), files, "/".into());
    process.pgid = 0;
    process.sid = 0;
    process.exit_signal = 0;
    process.autoreap = true;
    table.procs.insert(pid, Box::new(process));
    WORK.lock().insert(pid, Box::new(work));
    let mut thread = Thread::new(pid, pid, kstack);
    thread.make_runnable();
    table.threads.insert(pid, Box::new(thread));
    Ok(pid)
}

/// Where a kernel thread's first switch lands, on its own stack with
/// interrupts off (as the scheduler resumes every thread) and no lock
/// held.
extern "C" fn start() -> ! {
    let tid = current_thread(|t| t.tid);
    let work = WORK
        .lock()
        .remove(&tid)
        .expect("spawn leaves a kernel thread's work before it can run");
    interrupts::enable();
    work();
    super::lifecycle::exit_thread(0)
}
