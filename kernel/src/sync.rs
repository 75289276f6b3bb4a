//! The kernel's one lock type, the order locks are taken in, and the rules
//! the scheduler checks.
//!
//! A lock guards against two things. Another CPU: `IrqLock` is a ticket
//! lock, so a CPU that finds it held spins until its turn comes, and turns
//! come in the order CPUs asked. And an interrupt handler on the same CPU:
//! a handler that takes a lock its CPU already holds would spin forever,
//! so `IrqLock` also turns interrupts off on its CPU for as long as it is
//! held (and restores the previous state afterwards). It is the only lock
//! in the kernel (console, PIC, files, ramfs nodes, pipes, the process
//! table, memory), so every one of them is safe to take from the timer
//! path.
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
//!    slots, the kernel heap (whose growth maps pages), the page tables
//!    (`mm::paging`'s `PAGE_TABLES`), frames;
//! 6. the PIC, then the serial port (`log`): anything may print.
//!
//! ## Rules, checked
//!
//! A CPU that asks for a lock it holds already would wait for itself: the
//! lock keeps its holder's CPU and panics instead ("lock taken twice"). A
//! wait longer than `DEADLOCK_SECONDS` panics too, naming the holder's CPU.
//! The order above is not checked by the lock yet; the two checks catch the
//! deadlocks a wrong order makes, when they happen.
//!
//! Nothing may sleep or switch while holding a lock: a lock held across a
//! switch would be held by a process that is not running, and the next
//! taker would spin forever (on one CPU, with interrupts off). So code
//! inside `proc::current(|p| ...)` must not sleep, and file locks are let go
//! before a read sleeps on the console or a pipe. `IrqLock` counts the locks
//! held (per CPU, in its record: arch/percpu.rs), and the scheduler's
//! switch panics if any is (`assert_none_held`), as xv6's `sched()` panics
//! when it is entered holding more than its lock.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicU32, Ordering};
use x86_64::instructions::interrupts;

/// IrqLocks this CPU holds right now (its per-CPU count).
fn held() -> &'static AtomicU32 {
    crate::arch::percpu::this_cpu().locks_held()
}

/// How long a CPU may wait for one lock before the kernel calls it a
/// deadlock and panics, in seconds of the TSC. Generous: under emulation a
/// busy host can stop a virtual CPU for a while, and a false alarm would
/// fail a test that did nothing wrong.
const DEADLOCK_SECONDS: u64 = 20;

/// A ticket lock that also turns interrupts off on its own CPU.
///
/// Each taker draws a ticket (`next`) and waits until `serving` shows it:
/// CPUs get the lock in the order they asked, so none can be passed over
/// forever, as it could with a lock that whoever is quickest to see it
/// free takes (the `spin` crate's default). The owner's CPU is kept so that
/// taking a lock twice on one CPU, which can never end, panics at once
/// instead of spinning.
///
/// While it waits, a CPU answers TLB shootdown requests
/// (`arch::smp::while_spinning`): its interrupts are off, so the IPI that
/// asks cannot reach it, and the CPU asking may be the one holding this lock.
pub struct IrqLock<T> {
    next: AtomicU32,
    serving: AtomicU32,
    /// The holder's CPU index plus one; 0 while free.
    owner: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: the ticket protocol gives one CPU at a time access to `value`
// (through a guard), so sharing the lock between CPUs shares `T` only as a
// `&mut` handed from one holder to the next: `T: Send` is what that needs.
unsafe impl<T: Send> Sync for IrqLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for IrqLock<T> {}

pub struct IrqGuard<'a, T> {
    lock: &'a IrqLock<T>,
    were_enabled: bool,
}

impl<T> IrqLock<T> {
    pub const fn new(value: T) -> Self {
        IrqLock {
            next: AtomicU32::new(0),
            serving: AtomicU32::new(0),
            owner: AtomicU32::new(0),
            value: UnsafeCell::new(value),
        }
    }

    pub fn lock(&self) -> IrqGuard<'_, T> {
        let were_enabled = interrupts::are_enabled();
        interrupts::disable();
        let cpu = crate::arch::percpu::this_cpu();
        let me = cpu.index() + 1;
        if self.owner.load(Ordering::Relaxed) == me {
            panic!("lock taken twice on CPU {} (it would wait forever)", me - 1);
        }
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        if self.serving.load(Ordering::Acquire) != ticket {
            self.wait_for(ticket);
        }
        self.owner.store(me, Ordering::Relaxed);
        cpu.locks_held().fetch_add(1, Ordering::Relaxed);
        IrqGuard {
            lock: self,
            were_enabled,
        }
    }

    /// The slow path of `lock`: spins until `ticket` is served, answering
    /// shootdowns, and panics after `DEADLOCK_SECONDS`.
    #[cold]
    fn wait_for(&self, ticket: u32) {
        let per_sec = crate::clock::tsc_per_sec();
        let start = crate::arch::rdtsc();
        let mut spins = 0u32;
        while self.serving.load(Ordering::Acquire) != ticket {
            crate::arch::smp::while_spinning();
            core::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1 << 16)
                && per_sec != 0
                && crate::arch::rdtsc().saturating_sub(start) > DEADLOCK_SECONDS * per_sec
            {
                panic!(
                    "a lock held by CPU {} was waited for over {DEADLOCK_SECONDS} s (deadlock?)",
                    self.owner.load(Ordering::Relaxed).wrapping_sub(1)
                );
            }
        }
    }

    /// Whether some CPU holds the lock now.
    pub fn is_locked(&self) -> bool {
        self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }

    /// Releases the lock whoever holds it, for the last words of a panic or
    /// a fault report, when the holder will never run again.
    ///
    /// # Safety
    /// The holder must never touch the protected value again: only for the
    /// way to power-off, with interrupts off (and the other CPUs stopped,
    /// or waiting on this lock, which they will now never get).
    pub unsafe fn force_unlock(&self) {
        if self.is_locked() {
            let mine =
                self.owner.load(Ordering::Relaxed) == crate::arch::percpu::this_cpu().index() + 1;
            self.owner.store(0, Ordering::Relaxed);
            self.serving
                .store(self.next.load(Ordering::Relaxed), Ordering::Release);
            if mine {
                held().fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this CPU holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only use.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for IrqGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.owner.store(0, Ordering::Relaxed);
        self.lock.serving.fetch_add(1, Ordering::Release);
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
