//! The kernel's one lock type, the order locks are taken in, and the rules
//! the scheduler checks.
//!
//! A single CPU needs locks only against interrupt handlers: a spin lock that
//! an interrupt handler also takes would deadlock if the interrupt arrived
//! while the lock was held. `IrqLock` therefore turns interrupts off for as
//! long as it is held (and restores the previous state afterwards). It is the
//! only lock in the kernel (console, PIC, files, ramfs nodes, pipes, the
//! process table, memory), so every one of them is safe to take from the
//! timer path, and the SMP work has one type to turn into a real spin lock.
//!
//! ## Lock order
//!
//! A lock may be taken while holding only locks listed above it:
//!
//! 1. a ramfs node (`fs::ramfs::NodeRef`), then an open file's flags and
//!    offset (`fs::file::OpenFile`), in that order;
//! 2. `proc::TABLE`, the process table (`proc::current` takes it), then a
//!    poll wait queue (`proc::sched::PollQueue`, whose wake walks it inside
//!    the table);
//! 3. a pipe's buffer, a socket's state (`fs::socket`, one at a time),
//!    then the abstract socket names, an epoll instance's list
//!    (`fs::epoll`, never held while a watched file is asked), the console's input, the export list, the
//!    random generator (`random.rs`), the record locks (`fs::lock`), the
//!    System V tables (`ipc::msg`, `ipc::sem`, `ipc::shm`, one at a time;
//!    shm's reads the areas inside);
//! 4. profil's cost rings (taken inside the table by the timer path);
//! 5. memory: a file's pages (`fs::filedata`, reached by the page-fault
//!    path), the areas of the address spaces (`mm::areas`), kernel-stack
//!    slots, frames, the kernel heap;
//! 6. the PIC, then the serial port (`log`): anything may print.
//!
//! ## Rules, checked
//!
//! Nothing may sleep or switch while holding a lock: a lock held across a
//! switch would be held by a process that is not running, and the next
//! taker would spin forever (on one CPU, with interrupts off). So code
//! inside `proc::current(|p| ...)` must not sleep, and file locks are let go
//! before a read sleeps on the console or a pipe. `IrqLock` counts the locks
//! held (per CPU, in its record: arch/percpu.rs), and the scheduler's
//! switch panics if any is (`assert_none_held`), as xv6's `sched()` panics
//! when it is entered holding more than its lock.

use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicU32, Ordering};
use spin::{Mutex, MutexGuard};
use x86_64::instructions::interrupts;

/// IrqLocks this CPU holds right now (its per-CPU count).
fn held() -> &'static AtomicU32 {
    crate::arch::percpu::this_cpu().locks_held()
}

pub struct IrqLock<T> {
    inner: Mutex<T>,
}

pub struct IrqGuard<'a, T> {
    guard: Option<MutexGuard<'a, T>>,
    were_enabled: bool,
}

impl<T> IrqLock<T> {
    pub const fn new(value: T) -> Self {
        IrqLock {
            inner: Mutex::new(value),
        }
    }

    pub fn lock(&self) -> IrqGuard<'_, T> {
        let were_enabled = interrupts::are_enabled();
        interrupts::disable();
        let guard = self.inner.lock();
        held().fetch_add(1, Ordering::Relaxed);
        IrqGuard {
            guard: Some(guard),
            were_enabled,
        }
    }

    /// Releases the lock whoever holds it, for the last words of a panic or
    /// a fault report, when the holder will never run again.
    ///
    /// # Safety
    /// The holder must never touch the protected value again: only for the
    /// way to power-off, with interrupts off.
    pub unsafe fn force_unlock(&self) {
        if self.inner.is_locked() {
            // SAFETY: the caller's promise.
            unsafe { self.inner.force_unlock() };
            held().fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("guard is present until drop")
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("guard is present until drop")
    }
}

impl<T> Drop for IrqGuard<'_, T> {
    fn drop(&mut self) {
        drop(self.guard.take());
        held().fetch_sub(1, Ordering::Relaxed);
        if self.were_enabled {
            interrupts::enable();
        }
    }
}

/// Panics if any lock is held: called where the CPU leaves the current
/// thread of control (the scheduler's switches).
pub fn assert_none_held(at: &str) {
    let held = held().load(Ordering::Relaxed);
    if held != 0 {
        panic!("{at}: switching with {held} lock(s) held (nothing may sleep holding a lock)");
    }
}
