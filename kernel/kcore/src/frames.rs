//! Bookkeeping of physical frames: which are free, and how many users each
//! allocated frame has.
//!
//! The kernel hands this table two arrays carved out of physical memory at
//! boot: a reference count per frame and a stack of free frame numbers. Copy-
//! on-write fork shares a frame by raising its count; the frame returns to the
//! free stack when the last user lets go. The table knows nothing about
//! hardware, so the host tests check every rule here.

/// Refcount value of a frame the table does not manage (reserved memory,
/// the kernel image, MMIO holes).
const UNMANAGED: u16 = u16::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The frame number is outside the table, or never was free memory.
    NotManaged(u64),
    /// The frame is already free.
    AlreadyFree(u64),
    /// The frame has too many users to count.
    TooManyUsers(u64),
}

pub struct FrameTable<'a> {
    refcount: &'a mut [u16],
    free: &'a mut [u32],
    free_len: usize,
    total: usize,
}

impl<'a> FrameTable<'a> {
    /// A table for frames `0..refcount.len()`, with room for `free.len()`
    /// free frames. Every frame starts unmanaged; `add_free` brings them in.
    pub fn new(refcount: &'a mut [u16], free: &'a mut [u32]) -> Self {
        refcount.fill(UNMANAGED);
        FrameTable {
            refcount,
            free,
            free_len: 0,
            total: 0,
        }
    }

    /// Puts a frame of usable memory under management, free.
    pub fn add_free(&mut self, frame: u64) -> Result<(), FrameError> {
        let slot = self
            .refcount
            .get_mut(frame as usize)
            .ok_or(FrameError::NotManaged(frame))?;
        if *slot != UNMANAGED || self.free_len == self.free.len() {
            return Err(FrameError::NotManaged(frame));
        }
        *slot = 0;
        self.free[self.free_len] = frame as u32;
        self.free_len += 1;
        self.total += 1;
        Ok(())
    }

    /// Takes a free frame; its count becomes 1.
    pub fn alloc(&mut self) -> Option<u64> {
        self.free_len = self.free_len.checked_sub(1)?;
        let frame = self.free[self.free_len];
        self.refcount[frame as usize] = 1;
        Some(u64::from(frame))
    }

    fn slot(&mut self, frame: u64) -> Result<&mut u16, FrameError> {
        match self.refcount.get_mut(frame as usize) {
            Some(count) if *count == UNMANAGED => Err(FrameError::NotManaged(frame)),
            Some(0) => Err(FrameError::AlreadyFree(frame)),
            Some(count) => Ok(count),
            None => Err(FrameError::NotManaged(frame)),
        }
    }

    /// Adds a user to an allocated frame (a COW share).
    pub fn incref(&mut self, frame: u64) -> Result<(), FrameError> {
        let count = self.slot(frame)?;
        if *count == UNMANAGED - 1 {
            return Err(FrameError::TooManyUsers(frame));
        }
        *count += 1;
        Ok(())
    }

    /// Drops a user; returns true if that was the last one and the frame is free.
    pub fn decref(&mut self, frame: u64) -> Result<bool, FrameError> {
        let count = self.slot(frame)?;
        *count -= 1;
        if *count > 0 {
            return Ok(false);
        }
        self.free[self.free_len] = frame as u32;
        self.free_len += 1;
        Ok(true)
    }

    /// Users of `frame` (0 if free, None if unmanaged).
    pub fn refcount(&self, frame: u64) -> Option<u16> {
        match self.refcount.get(frame as usize) {
            Some(&UNMANAGED) | None => None,
            Some(&count) => Some(count),
        }
    }

    pub fn free_count(&self) -> usize {
        self.free_len
    }

    /// Checks the table's invariants: every frame on the free stack is
    /// managed, has no users and is there once; every managed frame without
    /// users is on the stack. (The free entries are marked with a count of
    /// 1 while checking and put back to 0.)
    pub fn check(&mut self) -> Result<(), &'static str> {
        let free = &self.free[..self.free_len];
        for &frame in free {
            match self.refcount.get(frame as usize) {
                Some(0) => {}
                Some(&UNMANAGED) | None => return Err("an unmanaged frame is on the free stack"),
                Some(_) => return Err("a frame on the free stack is in use"),
            }
        }
        // Every entry has a count of 0 now: mark each with 1 to find
        // duplicates and free frames missing from the stack, then unmark.
        let mut twice = false;
        for &frame in free {
            let count = &mut self.refcount[frame as usize];
            twice |= *count == 1;
            *count = 1;
        }
        let missing = self.refcount.contains(&0);
        for &frame in free {
            self.refcount[frame as usize] = 0;
        }
        let managed = self.refcount.iter().filter(|&&c| c != UNMANAGED).count();
        match () {
            _ if twice => Err("a frame is on the free stack twice"),
            _ if missing => Err("a free frame is missing from the free stack"),
            _ if managed != self.total => Err("the count of managed frames is wrong"),
            _ => Ok(()),
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(frames: usize) -> FrameTable<'static> {
        let refcount = vec![0u16; frames].leak();
        let free = vec![0u32; frames].leak();
        FrameTable::new(refcount, free)
    }

    #[test]
    fn alloc_until_empty_then_free_all() {
        let mut t = table(16);
        for f in 4..12 {
            t.add_free(f).unwrap();
        }
        assert_eq!((t.free_count(), t.total()), (8, 8));
        let mut got: Vec<u64> = (0..8).map(|_| t.alloc().unwrap()).collect();
        assert_eq!(t.alloc(), None);
        got.sort();
        assert_eq!(got, (4..12).collect::<Vec<_>>());
        for f in got {
            assert_eq!(t.refcount(f), Some(1));
            assert_eq!(t.decref(f), Ok(true));
        }
        assert_eq!(t.free_count(), 8);
    }

    #[test]
    fn shared_frame_is_freed_by_its_last_user() {
        let mut t = table(4);
        t.add_free(1).unwrap();
        let f = t.alloc().unwrap();
        t.incref(f).unwrap();
        t.incref(f).unwrap();
        assert_eq!(t.refcount(f), Some(3));
        assert_eq!(t.decref(f), Ok(false));
        assert_eq!(t.decref(f), Ok(false));
        assert_eq!(t.free_count(), 0);
        assert_eq!(t.decref(f), Ok(true));
        assert_eq!(t.free_count(), 1);
    }

    #[test]
    fn misuse_is_an_error_not_corruption() {
        let mut t = table(4);
        t.add_free(1).unwrap();
        assert_eq!(t.add_free(1), Err(FrameError::NotManaged(1)), "added twice");
        assert_eq!(
            t.add_free(9),
            Err(FrameError::NotManaged(9)),
            "out of range"
        );
        assert_eq!(t.decref(1), Err(FrameError::AlreadyFree(1)));
        assert_eq!(t.incref(2), Err(FrameError::NotManaged(2)));
        assert_eq!(t.decref(99), Err(FrameError::NotManaged(99)));
        assert_eq!(t.free_count(), 1);
    }

    #[test]
    fn refcount_cannot_overflow() {
        let mut t = table(2);
        t.add_free(0).unwrap();
        let f = t.alloc().unwrap();
        for _ in 1..(u16::MAX - 1) {
            t.incref(f).unwrap();
        }
        assert_eq!(t.incref(f), Err(FrameError::TooManyUsers(0)));
    }

    #[test]
    fn check_finds_broken_bookkeeping() {
        let mut refcount = [0u16; 8];
        let mut free = [0u32; 8];
        let mut t = FrameTable::new(&mut refcount, &mut free);
        for f in 0..6 {
            t.add_free(f).unwrap();
        }
        let a = t.alloc().unwrap();
        t.incref(a).unwrap();
        assert_eq!(t.check(), Ok(()));
        assert_eq!(t.refcount(a), Some(2), "check leaves counts alone");
        assert_eq!(t.check(), Ok(()), "and can run again");
        t.free[0] = a as u32; // a used frame slipped onto the free stack
        assert!(t.check().is_err());
    }
}
