//! The kernel's one lock type.
//!
//! A single CPU needs locks only against interrupt handlers: a spin lock that
//! an interrupt handler also takes would deadlock if the interrupt arrived
//! while the lock was held. `IrqLock` therefore turns interrupts off for as
//! long as it is held (and restores the previous state afterwards), and is
//! used for every structure the timer path can touch.

use core::ops::{Deref, DerefMut};
use spin::{Mutex, MutexGuard};
use x86_64::instructions::interrupts;

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
        IrqGuard {
            guard: Some(self.inner.lock()),
            were_enabled,
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
        if self.were_enabled {
            interrupts::enable();
        }
    }
}
