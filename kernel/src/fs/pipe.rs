//! Pipes: a bounded byte queue between a reading and a writing end.
//!
//! A reader sleeps while the pipe is empty and a writer remains; it reads 0
//! (end of file) once every writer has closed. A writer sleeps while the pipe
//! is full, and gets `EPIPE` (and SIGPIPE) once every reader has closed. Each side wakes the
//! other through the pipe's wait channel. The ends count themselves: dropping
//! the last `OpenFile` of an end (close, exit) closes it.
//!
//! As on Linux a pipe holds 64 KiB unless `fcntl(F_SETPIPE_SZ)` changes it
//! (to a power of two pages, at most `MAX_CAPACITY` for an unprivileged
//! caller), and a write of at most `PIPE_BUF` bytes
//! is atomic: it waits (or is EAGAIN) until there is room for all of it, so
//! two writers' short messages never interleave. A longer write goes in
//! pieces as room appears. The queue's memory grows with what is in it and
//! goes back to a page's worth whenever the pipe empties, so an idle pipe
//! costs little.
//!
//! A pipe made with `pipe2(O_DIRECT)` works in packets, as Linux's does:
//! each write is a packet (one longer than `PIPE_BUF` is cut into packets
//! of `PIPE_BUF`), a read takes one packet and drops whatever of it did
//! not fit the reader's buffer, and each packet takes a page of the
//! pipe's room however short it is (Linux gives each its own buffer of
//! the pipe's ring): a 64 KiB pipe holds 16 packets.
//!
//! A FIFO (mkfifo, mknod S_IFIFO) is a pipe that a node of the file system
//! holds, with no ends until they are opened (`open_fifo`): opening one
//! side waits for the other, as POSIX says, and what is left in it when
//! the last end closes is dropped.

use abi::Errno;
use abi::types::PIPE_BUF;
use alloc::collections::VecDeque;
use alloc::sync::Arc;

use crate::proc::sched::{self, Chan, Readiness};
use crate::sync::{IrqLock, Rank};

/// Bytes a pipe holds before writers wait (Linux's default pipe size,
/// 16 pages).
pub const CAPACITY: usize = 16 * 4096;

/// The largest capacity an unprivileged `F_SETPIPE_SZ` may ask for
/// (Linux's /proc/sys/fs/pipe-max-size, 1 MiB).
pub const MAX_CAPACITY: usize = 1 << 20;

/// The queue's memory kept when the pipe empties.
const KEPT: usize = 4096;

pub struct Pipe {
    /// Names the pipe in `/proc/PID/fd` (`pipe:[ID]`): both ends show the
    /// same number, as Linux's show the pipe's inode.
    pub id: u64,
    state: IrqLock<Buffer>,
    /// Its changes and its pollers.
    pub ready: Readiness,
}

/// What a pipe holds: the bytes in flight and who has it open.
struct Buffer {
    bytes: VecDeque<u8>,
    /// In packet mode (`pipe2(O_DIRECT)`), the length of each packet in
    /// `bytes`, oldest first; None for a byte stream.
    packets: Option<VecDeque<usize>>,
    /// Bytes it holds before writers wait.
    capacity: usize,
    readers: usize,
    writers: usize,
    /// Ends ever opened of each kind: a FIFO's opener waits until one of
    /// the other kind has come, even if it has gone again since.
    readers_opened: u64,
    writers_opened: u64,
}

impl Pipe {
    /// A pipe with one reader and one writer, in packets if `packets`.
    pub fn new(packets: bool) -> Arc<Pipe> {
        Pipe::with_ends(1, packets)
    }

    /// A FIFO's pipe: no end open yet.
    pub fn unopened() -> Arc<Pipe> {
        Pipe::with_ends(0, false)
    }

    fn with_ends(ends: usize, packets: bool) -> Arc<Pipe> {
        static NEXT_ID: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);
        Arc::new(Pipe {
            id: NEXT_ID.fetch_add(1, core::sync::atomic::Ordering::Relaxed),
            state: IrqLock::new(
                Rank::Channel,
                Buffer {
                    bytes: VecDeque::new(),
                    packets: packets.then(VecDeque::new),
                    capacity: CAPACITY,
                    readers: ends,
                    writers: ends,
                    readers_opened: ends as u64,
                    writers_opened: ends as u64,
                },
            ),
            ready: Readiness::new(),
        })
    }

    /// Opens an end of a FIFO: for reading, writing or both (O_RDWR,
    /// which never waits: it is its own other side). Without `nonblock` a
    /// reader waits for a writer and a writer for a reader; with it, a
    /// reader goes on at once and a writer with no reader is ENXIO, as
    /// POSIX says. A signal ends the wait (ERESTARTSYS) with the end
    /// closed again.
    pub fn open_fifo(&self, read: bool, write: bool, nonblock: bool) -> Result<(), Errno> {
        let (readers_seen, writers_seen) = {
            let mut s = self.state.lock();
            if write && !read && nonblock && s.readers == 0 {
                return Err(Errno::ENXIO);
            }
            if read {
                s.readers += 1;
                s.readers_opened += 1;
            }
            if write {
                s.writers += 1;
                s.writers_opened += 1;
            }
            (s.readers_opened, s.writers_opened)
        };
        self.wake(); // an opener of the other side waiting for this one
        if nonblock || read && write {
            return Ok(());
        }
        let waited = sched::wait_event(self.chan(), || {
            let s = self.state.lock();
            let peer = if read {
                s.writers > 0 || s.writers_opened != writers_seen
            } else {
                s.readers > 0 || s.readers_opened != readers_seen
            };
            peer.then_some(())
        });
        if waited.is_err() {
            if read {
                self.close_reader();
            } else {
                self.close_writer();
            }
        }
        waited
    }

    fn chan(&self) -> Chan {
        Chan::Pipe(self as *const Pipe as usize)
    }

    /// Something changed: wakes the other side (and pollers).
    fn wake(&self) {
        self.ready.changed(self.chan());
    }

    /// A change that can make only `band` possible (data came: POLLIN,
    /// room came: POLLOUT, a side went): wakes as `wake`, and signals
    /// only the O_ASYNC ends it concerns (fs/sigio.rs).
    fn wake_for(&self, band: i16) {
        self.ready.changed_for(self.chan(), band);
    }

    pub fn read(&self, buf: &mut [u8], nonblock: bool) -> Result<usize, Errno> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = sched::wait_event(self.chan(), || {
            let mut s = self.state.lock();
            if !s.bytes.is_empty() {
                Some(Ok(s.take(buf)))
            } else if s.writers == 0 {
                Some(Ok(0))
            } else if nonblock {
                Some(Err(Errno::EAGAIN))
            } else {
                None
            }
        })??;
        self.wake_for(abi::types::POLLOUT);
        Ok(n)
    }

    /// Writes all of `buf` (sleeping as needed) unless the readers go away;
    /// at most `PIPE_BUF` bytes go in at once or not at all.
    pub fn write(&self, buf: &[u8], nonblock: bool) -> Result<usize, Errno> {
        let atomic = buf.len() <= PIPE_BUF;
        let mut done = 0;
        while done < buf.len() {
            let step = sched::wait_event(self.chan(), || {
                let mut s = self.state.lock();
                let room = s.room();
                if s.readers == 0 {
                    Some(Err(Errno::EPIPE))
                } else if room >= buf.len() - done || room > 0 && !atomic {
                    Some(Ok(s.put(&buf[done..], room)))
                } else if nonblock {
                    Some(Err(Errno::EAGAIN))
                } else {
                    None
                }
            });
            if let Ok(Err(Errno::EPIPE)) = step {
                let origin = crate::signal::Origin::kernel();
                crate::signal::send_to_current(abi::signal::SIGPIPE, origin);
            }
            match step {
                Ok(Ok(n)) => {
                    done += n;
                    self.wake_for(abi::types::POLLIN);
                }
                Ok(Err(e)) | Err(e) if done == 0 => return Err(e),
                _ => break,
            }
        }
        Ok(done)
    }

    /// poll(2)'s view of this pipe from a reading end (`reader`) or a
    /// writing one: POLLIN with bytes to read, POLLHUP once the writers are
    /// gone; POLLOUT with room for a `PIPE_BUF` write (which then cannot
    /// block, as on Linux), POLLERR once the readers are gone.
    pub fn poll(&self, reader: bool) -> i16 {
        use abi::types::{POLLERR, POLLHUP, POLLIN, POLLOUT};
        let s = self.state.lock();
        let mut ready = 0;
        if reader {
            if !s.bytes.is_empty() {
                ready |= POLLIN;
            }
            if s.writers == 0 {
                ready |= POLLHUP;
            }
        } else if s.readers == 0 {
            ready |= POLLERR;
        } else if s.room() >= PIPE_BUF {
            ready |= POLLOUT;
        }
        ready
    }

    /// F_GETPIPE_SZ: the bytes it holds before writers wait.
    pub fn capacity(&self) -> usize {
        self.state.lock().capacity
    }

    /// F_SETPIPE_SZ: makes the pipe hold `wanted` bytes, rounded up as
    /// Linux rounds (`round_pipe_size`: at least a page, then a power of
    /// two); returns the capacity it now has. EPERM past `MAX_CAPACITY`
    /// unless `privileged`; EBUSY if more than that is in it now.
    pub fn set_capacity(&self, wanted: u64, privileged: bool) -> Result<usize, Errno> {
        let wanted = usize::try_from(wanted).map_err(|_| Errno::EINVAL)?;
        if wanted > 1 << 31 {
            return Err(Errno::EINVAL);
        }
        let capacity = wanted.max(4096).next_power_of_two();
        if capacity > MAX_CAPACITY && !privileged {
            return Err(Errno::EPERM);
        }
        {
            let mut s = self.state.lock();
            if s.used() > capacity {
                return Err(Errno::EBUSY);
            }
            s.capacity = capacity;
        }
        self.wake(); // a writer waiting for room may have it now
        Ok(capacity)
    }

    pub fn buffered(&self) -> usize {
        self.state.lock().bytes.len()
    }

    pub fn close_reader(&self) {
        self.state.lock().readers -= 1;
        self.closed_one(abi::types::POLLOUT | abi::types::POLLERR);
    }

    pub fn close_writer(&self) {
        self.state.lock().writers -= 1;
        self.closed_one(abi::types::POLLIN | abi::types::POLLHUP);
    }

    /// An end closed (the other side now sees `band`): the other side is
    /// woken; once no end is left, what is in the pipe goes (a FIFO opened
    /// again starts empty).
    fn closed_one(&self, band: i16) {
        {
            let mut s = self.state.lock();
            if s.readers == 0 && s.writers == 0 {
                s.bytes = VecDeque::new();
                if let Some(packets) = &mut s.packets {
                    packets.clear();
                }
            }
        }
        self.wake_for(band);
    }
}

impl Buffer {
    /// The room it takes: its bytes, or a page for each packet.
    fn used(&self) -> usize {
        match &self.packets {
            Some(packets) => packets.len() * PIPE_BUF,
            None => self.bytes.len(),
        }
    }

    /// The room left for a write.
    fn room(&self) -> usize {
        self.capacity.saturating_sub(self.used())
    }

    /// Appends what of `bytes` fits in `room` (a packet at most, in
    /// packet mode); returns how many went in.
    fn put(&mut self, bytes: &[u8], room: usize) -> usize {
        let n = match &mut self.packets {
            Some(packets) => {
                let n = bytes.len().min(PIPE_BUF);
                packets.push_back(n);
                n
            }
            None => room.min(bytes.len()),
        };
        self.bytes.extend(&bytes[..n]);
        n
    }

    /// Reads into `buf` from the front: as much as there is, or in packet
    /// mode the first packet, whose bytes past `buf`'s length are dropped.
    /// There is something to read.
    fn take(&mut self, buf: &mut [u8]) -> usize {
        let (n, consumed) = match &mut self.packets {
            Some(packets) => {
                let packet = packets.pop_front().expect("a packet to read");
                (buf.len().min(packet), packet)
            }
            None => {
                let n = buf.len().min(self.bytes.len());
                (n, n)
            }
        };
        let (front, back) = self.bytes.as_slices();
        let from_front = n.min(front.len());
        buf[..from_front].copy_from_slice(&front[..from_front]);
        buf[from_front..n].copy_from_slice(&back[..n - from_front]);
        self.bytes.drain(..consumed);
        if self.bytes.is_empty() && self.bytes.capacity() > KEPT {
            self.bytes.shrink_to(KEPT);
        }
        n
    }
}
