//! eventfd: a counter behind a descriptor (`kcore::eventfd` has its rules).
//!
//! A read that finds 0 sleeps on the counter's channel, and a write that
//! does not fit sleeps on the same one; each side wakes the other, and the
//! pollers, through the counter's `Readiness`, as a pipe's ends do. So
//! poll, select and epoll (edge-triggered too) watch an eventfd with no
//! code of their own, and what a library's event loop writes to wake
//! itself up is what it reads.

use abi::Errno;
use abi::types::{POLLIN, POLLOUT};
use alloc::sync::Arc;
use kcore::eventfd::Counter;

use crate::proc::sched::{self, Chan, Readiness};
use crate::sync::{IrqLock, Rank};

/// What a read returns and a write gives: one u64.
const VALUE: usize = core::mem::size_of::<u64>();

pub struct EventFd {
    counter: IrqLock<Counter>,
    /// Its changes and its pollers.
    pub ready: Readiness,
}

impl EventFd {
    pub fn new(initial: u32, semaphore: bool) -> Arc<EventFd> {
        Arc::new(EventFd {
            counter: IrqLock::new(Rank::Channel, Counter::new(initial, semaphore)),
            ready: Readiness::new(),
        })
    }

    fn chan(&self) -> Chan {
        Chan::EventFd(self as *const EventFd as usize)
    }

    /// Takes the count (or 1) into the first 8 bytes of `buf`, waiting
    /// while it is 0 (EAGAIN with `nonblock`). EINVAL for a buffer of
    /// under 8 bytes.
    pub fn read(&self, buf: &mut [u8], nonblock: bool) -> Result<usize, Errno> {
        if buf.len() < VALUE {
            return Err(Errno::EINVAL);
        }
        let value = sched::wait_event(self.chan(), || match self.counter.lock().take() {
            Some(value) => Some(Ok(value)),
            None if nonblock => Some(Err(Errno::EAGAIN)),
            None => None,
        })??;
        buf[..VALUE].copy_from_slice(&value.to_ne_bytes());
        self.ready.changed_for(self.chan(), POLLOUT);
        Ok(VALUE)
    }

    /// Adds the u64 in the first 8 bytes of `buf`, waiting until it fits
    /// (EAGAIN with `nonblock`). EINVAL for under 8 bytes or u64::MAX.
    pub fn write(&self, buf: &[u8], nonblock: bool) -> Result<usize, Errno> {
        let Some(bytes) = buf.first_chunk::<VALUE>() else {
            return Err(Errno::EINVAL);
        };
        let n = u64::from_ne_bytes(*bytes);
        sched::wait_event(self.chan(), || match self.counter.lock().add(n) {
            Ok(true) => Some(Ok(())),
            Ok(false) if nonblock => Some(Err(Errno::EAGAIN)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        })??;
        self.ready.changed_for(self.chan(), POLLIN);
        Ok(VALUE)
    }

    /// POLLIN while the count is above 0, POLLOUT while 1 more fits.
    pub fn poll(&self) -> i16 {
        let counter = self.counter.lock();
        let mut ready = 0;
        if counter.readable() {
            ready |= POLLIN;
        }
        if counter.writable() {
            ready |= POLLOUT;
        }
        ready
    }
}
