//! eventfd(2)'s counter, the rules without the waiting (fs/eventfd.rs
//! waits and wakes).
//!
//! An eventfd is a 64-bit counter behind a descriptor, for one thread or
//! process to tell another "something happened, this many times" with
//! the cheapest file there is: a write adds its 8-byte value, a read takes
//! the whole count and leaves 0 (or, made with `EFD_SEMAPHORE`, takes 1).
//! A read of 0 waits, and so does a write that would carry the count past
//! `MAX`, one below the largest u64, which a write may never give (it is
//! `EINVAL`: Linux keeps it for a counter that overflowed). poll says
//! readable while the count is above 0 and writable while another 1 fits.

use abi::Errno;

/// The largest count: what a write may bring it to.
pub const MAX: u64 = u64::MAX - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    value: u64,
    semaphore: bool,
}

impl Counter {
    /// A counter at `initial` (eventfd's argument is an unsigned int);
    /// `semaphore`: reads take 1 at a time (`EFD_SEMAPHORE`).
    pub fn new(initial: u32, semaphore: bool) -> Counter {
        Counter {
            value: u64::from(initial),
            semaphore,
        }
    }

    pub fn value(&self) -> u64 {
        self.value
    }

    /// A read: what it returns, or None while the count is 0 (the reader
    /// waits, or gets EAGAIN).
    pub fn take(&mut self) -> Option<u64> {
        match self.value {
            0 => None,
            _ if self.semaphore => {
                self.value -= 1;
                Some(1)
            }
            all => {
                self.value = 0;
                Some(all)
            }
        }
    }

    /// A write of `n`: Ok(true) added; Ok(false) it does not fit yet (the
    /// writer waits, or gets EAGAIN); EINVAL for u64::MAX, which no write
    /// may give.
    pub fn add(&mut self, n: u64) -> Result<bool, Errno> {
        if n == u64::MAX {
            return Err(Errno::EINVAL);
        }
        if n > MAX - self.value {
            return Ok(false);
        }
        self.value += n;
        Ok(true)
    }

    /// Whether a read would return now.
    pub fn readable(&self) -> bool {
        self.value > 0
    }

    /// Whether a write of 1 would go in now.
    pub fn writable(&self) -> bool {
        self.value < MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_takes_the_whole_count_and_a_semaphore_one() {
        let mut c = Counter::new(3, false);
        assert_eq!(c.take(), Some(3));
        assert_eq!(c.take(), None);
        let mut s = Counter::new(2, true);
        assert_eq!((s.take(), s.take(), s.take()), (Some(1), Some(1), None));
    }

    #[test]
    fn writes_add_up_to_one_below_the_largest_u64() {
        let mut c = Counter::new(0, false);
        assert_eq!(c.add(5), Ok(true));
        assert_eq!(c.add(0), Ok(true));
        assert_eq!(c.value(), 5);
        assert_eq!(c.add(MAX - 5), Ok(true));
        assert!(!c.writable() && c.readable());
        assert_eq!(c.add(1), Ok(false), "past MAX waits");
        assert_eq!(c.add(0), Ok(true), "nothing added always fits");
        assert_eq!(c.add(u64::MAX), Err(Errno::EINVAL));
        assert_eq!(c.take(), Some(MAX));
        assert!(c.writable() && !c.readable());
    }
}
