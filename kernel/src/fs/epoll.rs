//! epoll: a list of descriptors to watch that the kernel keeps, so a wait
//! need not be told again what to wait for.
//!
//! Readiness is the one hook poll and select read (`OpenFile::poll`), and
//! the wait is theirs (`syscall::poll`): an epoll instance only remembers
//! the interest list and says, each time a waiter looks, which entries are
//! ready. Entries hold their open file weakly and are known by (descriptor,
//! open file), as on Linux: when every descriptor of an open file is closed
//! its entry goes; closing one of two `dup`s leaves it. Reading the
//! readiness happens outside the list's lock (a watched file may be another
//! epoll instance, which reads its own list).
//!
//! - Level-triggered (the default): reported as long as it is ready.
//! - `EPOLLET`: reported when ready and its object has changed since the
//!   last report (`OpenFile::changes`, a count every pipe, socket and the
//!   console keep), so a reader that drains to EAGAIN hears of new data,
//!   and one that does not drain is not told again of the same data.
//! - `EPOLLONESHOT`: one report, then nothing until `EPOLL_CTL_MOD`.
//!
//! Entries are looked at in the order they were added, and one reported
//! goes to the back, so a wait with room for fewer events than are ready
//! sees each in turn (Linux's ready list rotates the same way).

use abi::Errno;
use abi::types::{EPOLLET, EPOLLONESHOT, EpollEvent, POLLERR, POLLHUP, POLLIN};
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use super::file::{Kind, OpenFile};
use crate::sync::{IrqLock, Rank};

/// Deepest nesting of epoll instances in each other (Linux's
/// EPOLL_MAX_NESTS).
const MAX_NESTING: u32 = 4;

pub struct Epoll {
    interest: IrqLock<Vec<Interest>>,
}

struct Interest {
    fd: i32,
    file: Weak<OpenFile>,
    /// What the caller asked for, with EPOLLET and EPOLLONESHOT.
    events: u32,
    data: u64,
    /// The file's `changes()` at the last report (EPOLLET).
    reported_at: Option<u64>,
    /// EPOLLONESHOT has fired: nothing until EPOLL_CTL_MOD.
    disarmed: bool,
}

impl Interest {
    fn is(&self, fd: i32, file: &Arc<OpenFile>) -> bool {
        self.fd == fd && core::ptr::eq(self.file.as_ptr(), Arc::as_ptr(file))
    }
}

impl Epoll {
    pub fn new() -> Arc<Epoll> {
        Arc::new(Epoll {
            interest: IrqLock::new(Rank::Service, Vec::new()),
        })
    }

    /// EPOLL_CTL_ADD: EEXIST if (`fd`, `file`) is on the list already;
    /// ELOOP for an epoll instance that holds this one, or nesting deeper
    /// than `MAX_NESTING`.
    pub fn add(&self, fd: i32, file: &Arc<OpenFile>, events: u32, data: u64) -> Result<(), Errno> {
        if let Kind::Epoll(inner) = &file.kind
            && inner.reaches(self, 1)
        {
            return Err(Errno::ELOOP);
        }
        let mut list = self.interest.lock();
        if list.iter().any(|i| i.is(fd, file)) {
            return Err(Errno::EEXIST);
        }
        list.push(Interest {
            fd,
            file: Arc::downgrade(file),
            events,
            data,
            reported_at: None,
            disarmed: false,
        });
        Ok(())
    }

    /// EPOLL_CTL_MOD: new events and data, re-armed (ENOENT if absent).
    pub fn modify(
        &self,
        fd: i32,
        file: &Arc<OpenFile>,
        events: u32,
        data: u64,
    ) -> Result<(), Errno> {
        let mut list = self.interest.lock();
        let entry = list
            .iter_mut()
            .find(|i| i.is(fd, file))
            .ok_or(Errno::ENOENT)?;
        entry.events = events;
        entry.data = data;
        entry.reported_at = None;
        entry.disarmed = false;
        Ok(())
    }

    /// EPOLL_CTL_DEL (ENOENT if absent).
    pub fn remove(&self, fd: i32, file: &Arc<OpenFile>) -> Result<(), Errno> {
        let mut list = self.interest.lock();
        let at = list
            .iter()
            .position(|i| i.is(fd, file))
            .ok_or(Errno::ENOENT)?;
        list.remove(at);
        Ok(())
    }

    /// Whether `target` is this instance or is reached through the epoll
    /// instances on its list, `depth` levels down (too deep counts as
    /// reached).
    fn reaches(&self, target: &Epoll, depth: u32) -> bool {
        if core::ptr::eq(self, target) || depth > MAX_NESTING {
            return true;
        }
        self.files().iter().any(|f| match &f.kind {
            Kind::Epoll(e) => e.reaches(target, depth + 1),
            _ => false,
        })
    }

    /// The files on the list that are still open (each taken out of the
    /// list's lock, so that asking them never happens inside it).
    pub fn files(&self) -> Vec<Arc<OpenFile>> {
        let list = self.interest.lock();
        list.iter().filter_map(|i| i.file.upgrade()).collect()
    }

    /// Up to `max` events ready now. With `take`, the reported entries are
    /// marked (EPOLLET, EPOLLONESHOT) and go to the back of the list; a
    /// look without it changes nothing (poll of the epoll descriptor).
    /// Entries whose file is gone are dropped from the list here.
    pub fn collect(&self, max: usize, take: bool) -> Vec<EpollEvent> {
        /// An armed entry, copied out of the list to be looked at.
        struct Watched {
            fd: i32,
            file: Arc<OpenFile>,
            events: u32,
            data: u64,
            reported_at: Option<u64>,
        }
        let watched: Vec<Watched> = {
            let mut list = self.interest.lock();
            list.retain(|i| i.file.strong_count() > 0);
            list.iter()
                .filter(|i| !i.disarmed)
                .filter_map(|i| {
                    Some(Watched {
                        fd: i.fd,
                        file: i.file.upgrade()?,
                        events: i.events,
                        data: i.data,
                        reported_at: i.reported_at,
                    })
                })
                .collect()
        };
        // (entry, what it reports, the file's changes now)
        let mut ready: Vec<(&Watched, u32, u64)> = Vec::new();
        for w in &watched {
            if ready.len() == max {
                break;
            }
            // epoll's low bits are poll's.
            let now = u32::from(w.file.poll_normal() as u16)
                & (w.events | POLLERR as u32 | POLLHUP as u32);
            if now == 0 {
                continue;
            }
            let changes = w.file.changes();
            if w.events & EPOLLET != 0 && w.reported_at == Some(changes) {
                continue;
            }
            ready.push((w, now, changes));
        }
        if take {
            let mut list = self.interest.lock();
            for (w, _, changes) in &ready {
                if let Some(at) = list.iter().position(|i| i.is(w.fd, &w.file)) {
                    let mut entry = list.remove(at);
                    entry.reported_at = Some(*changes);
                    entry.disarmed = entry.events & EPOLLONESHOT != 0;
                    list.push(entry);
                }
            }
        }
        let events = ready
            .iter()
            .map(|(w, events, _)| EpollEvent {
                events: *events,
                data: w.data,
            })
            .collect();
        // The files (our references) go outside the list's lock.
        drop(ready);
        drop(watched);
        events
    }

    /// poll(2) of the epoll descriptor itself: readable when a wait would
    /// report something.
    pub fn poll(&self) -> i16 {
        if self.collect(1, false).is_empty() {
            0
        } else {
            POLLIN
        }
    }

    /// The sum of the watched files' changes (for an epoll instance watched
    /// with EPOLLET by another).
    pub fn changes(&self) -> u64 {
        self.files()
            .iter()
            .fold(0u64, |sum, f| sum.wrapping_add(f.changes()))
    }
}
