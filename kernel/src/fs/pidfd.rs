//! pidfds: a descriptor that names one process for as long as it is held.
//!
//! A process id names whatever process has it now: after the process is
//! reaped, a new one may get its number, and `kill(pid)` would reach the
//! stranger. A pidfd names the process itself. The first `pidfd_open` of
//! a process gives it a `Watch` (`Process::watch`) that every pidfd of it
//! shares; a signal sent through a pidfd goes to the process in the table
//! with that pid only if that process holds the same `Watch`, so once it
//! is reaped the answer is ESRCH, whoever has the number since.
//!
//! The `Watch` is also what a poller waits on: it becomes readable when
//! the process ends (`exited`, called by the exit path), so poll, select
//! and epoll wait for a process that is not one's child, as Linux's
//! pidfds let them.

use abi::types::POLLIN;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::proc::Pid;
use crate::proc::sched::{Chan, Readiness};

pub struct Watch {
    pub pid: Pid,
    /// Set once, when the process becomes a zombie (under the process
    /// table's lock).
    ended: AtomicBool,
    /// Its pollers: woken when the process ends.
    pub ready: Readiness,
}

impl Watch {
    pub fn new(pid: Pid) -> Arc<Watch> {
        Arc::new(Watch {
            pid,
            ended: AtomicBool::new(false),
            ready: Readiness::new(),
        })
    }

    /// The process ended: every poller of its pidfds looks again. Called
    /// by the exit path, holding no lock.
    pub fn ended(&self) {
        self.ended.store(true, Ordering::Release);
        self.ready.changed_for(Chan::ProcessEnd(self.pid), POLLIN);
    }

    /// POLLIN once the process has ended; nothing before.
    pub fn poll(&self) -> i16 {
        if self.ended.load(Ordering::Acquire) {
            POLLIN
        } else {
            0
        }
    }
}
