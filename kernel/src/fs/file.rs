//! Open files and file-descriptor tables.
//!
//! An `OpenFile` is what `open` or `pipe` creates: the thing read from and
//! written to, its access mode and its offset. Descriptors are `Arc`s to open
//! files, so `dup` and `fork` share one offset, as on Unix. A process's
//! `FdTable` maps small integers to them, with a close-on-exec flag each.
//! The table grows as descriptors are made, up to the process's
//! `RLIMIT_NOFILE` (the `limit` every call that makes one is given): past
//! it `open`, `dup`, `pipe` are EMFILE and `dup2` to a larger number is
//! EBADF, as on Linux. Lowering the limit closes nothing.

use abi::Errno;
use abi::types::{
    O_ACCMODE, O_APPEND, O_ASYNC, O_DIRECT, O_NONBLOCK, O_PATH, O_RDONLY, O_WRONLY, S_IFIFO,
    SEEK_CUR, SEEK_DATA, SEEK_END, SEEK_HOLE, SEEK_SET, Stat,
};
use alloc::sync::Arc;

use super::pipe::Pipe;
use super::ramfs::{Content, Node, NodeRef, Times};
use super::socket::Socket;
use crate::proc::sched::{PollQueue, Readiness};
use crate::sync::{IrqLock, Rank};

pub enum Kind {
    Node(NodeRef),
    PipeRead(Arc<Pipe>),
    PipeWrite(Arc<Pipe>),
    /// A Unix-domain socket (fs/socket.rs); this open file is its only
    /// one, so its drop is the socket's close.
    Socket(Arc<Socket>),
    /// An epoll instance (fs/epoll.rs).
    Epoll(Arc<super::epoll::Epoll>),
    /// An eventfd's counter (fs/eventfd.rs).
    EventFd(Arc<super::eventfd::EventFd>),
    /// A pidfd: one process, by what it shares with its other pidfds
    /// (fs/pidfd.rs).
    PidFd(Arc<super::pidfd::Watch>),
}

pub struct OpenFile {
    pub kind: Kind,
    /// Names this open file description (the owner of its OFD locks).
    pub id: u64,
    /// `O_ACCMODE`, `O_APPEND`, `O_NONBLOCK`, `O_PATH`, `O_DIRECT` and
    /// `O_ASYNC` bits of the open flags (O_ASYNC from open(2) only shows:
    /// as on Linux, F_SETFL is what turns signal-driven I/O on).
    pub flags: IrqLock<u32>,
    offset: IrqLock<u64>,
    /// The path it was opened by (none for a pipe): what
    /// `/proc/PID/maps` names a mapping of it by.
    pub path: Option<alloc::string::String>,
    /// Who signal-driven I/O signals, and with what (fs/sigio.rs).
    pub owner: IrqLock<super::sigio::FileOwner>,
    /// For a directory: the names getdents has given since the read began
    /// (`kcore::dirread`), so entries removed meanwhile make it skip none.
    pub dir_read: IrqLock<Option<kcore::dirread::DirRead>>,
}

/// Open file descriptions in the system now (`/proc/sys/fs/file-nr`): what
/// shows that a descriptor lost in flight, or any other, was closed.
static OPEN_COUNT: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

pub fn open_count() -> usize {
    OPEN_COUNT.load(core::sync::atomic::Ordering::Relaxed)
}

/// An open file's `Readiness`: its own object's, or the pipe its FIFO
/// node holds (kept alive here, since the node's lock cannot be).
pub enum ReadinessOf<'a> {
    Borrowed(&'a Readiness),
    Fifo(Arc<Pipe>),
    /// A pseudo-terminal's master's side (`true`) or its slave's.
    Pty(Arc<super::pty::Pty>, bool),
}

impl core::ops::Deref for ReadinessOf<'_> {
    type Target = Readiness;
    fn deref(&self) -> &Readiness {
        match self {
            ReadinessOf::Borrowed(ready) => ready,
            ReadinessOf::Fifo(pipe) => &pipe.ready,
            ReadinessOf::Pty(pty, true) => &pty.master_ready,
            ReadinessOf::Pty(pty, false) => &pty.slave_ready,
        }
    }
}

/// The pseudo-terminal a device node is an end of, and whether it is the
/// master.
fn pty_end(device: super::dev::Device) -> Option<(Arc<super::pty::Pty>, bool)> {
    use super::dev::Device;
    match device {
        Device::PtyMaster(n) => Some((super::pty::get(n)?, true)),
        Device::PtySlave(n) => Some((super::pty::get(n)?, false)),
        _ => None,
    }
}

impl OpenFile {
    pub fn new(kind: Kind, flags: u32, path: Option<&str>) -> Arc<OpenFile> {
        static NEXT_ID: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);
        OPEN_COUNT.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        let file = Arc::new(OpenFile {
            kind,
            id: NEXT_ID.fetch_add(1, core::sync::atomic::Ordering::Relaxed),
            flags: IrqLock::new(
                Rank::OpenFile,
                flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_PATH | O_DIRECT | O_ASYNC),
            ),
            offset: IrqLock::new(Rank::OpenFile, 0),
            path: path.map(alloc::string::String::from),
            owner: IrqLock::new(Rank::OpenFile, Default::default()),
            dir_read: IrqLock::new(Rank::OpenFile, None),
        });
        super::lease::opened(&file);
        file
    }

    /// The changes of the object it reads or writes (a pipe's, an open
    /// FIFO's, a socket's, the terminal's); None for a file that is always
    /// ready.
    pub fn readiness(&self) -> Option<ReadinessOf<'_>> {
        match &self.kind {
            Kind::PipeRead(pipe) | Kind::PipeWrite(pipe) => {
                Some(ReadinessOf::Borrowed(&pipe.ready))
            }
            Kind::Socket(socket) => Some(ReadinessOf::Borrowed(&socket.ready)),
            Kind::EventFd(counter) => Some(ReadinessOf::Borrowed(&counter.ready)),
            Kind::PidFd(watch) => Some(ReadinessOf::Borrowed(&watch.ready)),
            Kind::Epoll(_) => None,
            Kind::Node(_) if let Some(fifo) = self.fifo() => Some(ReadinessOf::Fifo(fifo)),
            Kind::Node(node) => {
                let device = node.lock().device()?;
                if let Some((pty, master)) = pty_end(device) {
                    return Some(ReadinessOf::Pty(pty, master));
                }
                device
                    .is_terminal()
                    .then_some(ReadinessOf::Borrowed(&super::console::READY))
            }
        }
    }

    /// The pipe it reads or writes: a pipe's end, or an open FIFO's.
    pub fn pipe(&self) -> Option<Arc<Pipe>> {
        match &self.kind {
            Kind::PipeRead(pipe) | Kind::PipeWrite(pipe) => Some(pipe.clone()),
            _ => self.fifo(),
        }
    }

    /// The pipe of the FIFO it is open on, if it is one.
    fn fifo(&self) -> Option<Arc<Pipe>> {
        match &self.kind {
            Kind::Node(node) => match &node.lock().content {
                Content::Fifo(pipe) => Some(pipe.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The inode number of the file it is open on (none for a pipe).
    pub fn ino(&self) -> Option<u64> {
        match &self.kind {
            Kind::Node(node) => Some(node.lock().ino),
            Kind::PipeRead(_)
            | Kind::PipeWrite(_)
            | Kind::Socket(_)
            | Kind::Epoll(_)
            | Kind::EventFd(_)
            | Kind::PidFd(_) => None,
        }
    }

    /// Whether it was opened for reading (a read lock needs that) ...
    pub fn readable(&self) -> bool {
        let flags = *self.flags.lock();
        flags & O_ACCMODE != O_WRONLY && flags & O_PATH == 0
    }

    /// ... or for writing (a write lock needs that).
    pub fn writable(&self) -> bool {
        let flags = *self.flags.lock();
        flags & O_ACCMODE != O_RDONLY && flags & O_PATH == 0
    }

    /// Opened with O_PATH: it names a file, for the calls that take such a
    /// descriptor (`syscall::fs::fd_path`), and does no I/O.
    pub fn is_path_only(&self) -> bool {
        *self.flags.lock() & O_PATH != 0
    }

    /// Opened (or set) O_NONBLOCK: a read or write that would wait is
    /// EAGAIN.
    pub fn nonblock(&self) -> bool {
        *self.flags.lock() & O_NONBLOCK != 0
    }

    pub fn read(&self, buf: &mut [u8]) -> Result<usize, Errno> {
        if !self.readable() {
            return Err(Errno::EBADF);
        }
        match &self.kind {
            Kind::PipeRead(pipe) => pipe.read(buf, self.nonblock()),
            Kind::PipeWrite(_) => Err(Errno::EBADF),
            Kind::Socket(socket) => socket
                .recv(buf, false, false, self.nonblock())
                .map(|got| got.len),
            Kind::Epoll(_) => Err(Errno::EINVAL),
            Kind::EventFd(counter) => counter.read(buf, self.nonblock()),
            Kind::PidFd(_) => Err(Errno::EINVAL),
            Kind::Node(_) if let Some(fifo) = self.fifo() => fifo.read(buf, self.nonblock()),
            Kind::Node(node) if is_disk_file(node) => {
                // The disk sleeps: no lock held. Two readers of one
                // description may read the same bytes, as on Linux.
                let at = self.offset();
                let n = super::ext2::read(node, at, buf)?;
                self.set_offset(at + n as u64);
                Ok(n)
            }
            Kind::Node(node) => {
                let device = node.lock().device();
                if let Some(device) = device {
                    // A terminal sleeps: no lock held. A device with a
                    // position (/dev/kmsg, /dev/klog) moves the file's
                    // offset.
                    let before = self.offset();
                    let mut at = before;
                    let n = device.read(buf, &mut at, self.nonblock())?;
                    if at != before {
                        self.set_offset(at);
                    }
                    return Ok(n);
                }
                let mut node = node.lock();
                let mut offset = self.offset.lock();
                let n = read_at(&mut node, *offset, buf)?;
                *offset += n as u64;
                Ok(n)
            }
        }
    }

    pub fn write(&self, buf: &[u8]) -> Result<usize, Errno> {
        if !self.writable() {
            return Err(Errno::EBADF);
        }
        match &self.kind {
            Kind::PipeWrite(pipe) => pipe.write(buf, self.nonblock()),
            Kind::PipeRead(_) => Err(Errno::EBADF),
            Kind::Socket(socket) => {
                let out = super::socket::Outgoing::bytes(buf);
                socket.send(out, self.nonblock(), true)
            }
            Kind::Epoll(_) => Err(Errno::EINVAL),
            Kind::EventFd(counter) => counter.write(buf, self.nonblock()),
            Kind::PidFd(_) => Err(Errno::EINVAL),
            Kind::Node(_) if let Some(fifo) = self.fifo() => fifo.write(buf, self.nonblock()),
            Kind::Node(node) if is_disk_file(node) => {
                let append = *self.flags.lock() & O_APPEND != 0;
                let at = self.offset();
                let (start, n) = super::ext2::write(node, at, buf, append)?;
                self.set_offset(start + n as u64);
                Ok(n)
            }
            Kind::Node(node) => {
                let device = node.lock().device();
                if let Some(device) = device {
                    // As read: a disk sleeps and moves the offset.
                    let before = self.offset();
                    let mut at = before;
                    let n = device.write(buf, &mut at, self.nonblock())?;
                    if at != before {
                        self.set_offset(at);
                    }
                    return Ok(n);
                }
                let limit = file_size_limit();
                let mut node = node.lock();
                let append = *self.flags.lock() & O_APPEND != 0;
                let mut offset = self.offset.lock();
                if append {
                    *offset = node.size();
                }
                let buf = within_limit(&node, limit, *offset, buf)?;
                *offset = write_at(&mut node, *offset, buf)?;
                Ok(buf.len())
            }
        }
    }

    /// poll(2): which of POLLIN and POLLOUT (and POLLHUP, POLLERR) hold for
    /// this open file now. Files and devices other than the terminal are
    /// always ready, as on Linux.
    pub fn poll(&self) -> i16 {
        use abi::types::{POLLIN, POLLOUT};
        let mut ready = match &self.kind {
            Kind::PipeRead(pipe) => pipe.poll(true),
            Kind::PipeWrite(pipe) => pipe.poll(false),
            Kind::Socket(socket) => socket.poll(),
            Kind::Epoll(epoll) => return epoll.poll(),
            Kind::EventFd(counter) => counter.poll(),
            Kind::PidFd(watch) => watch.poll(),
            // Each side's view, kept to the sides it was opened for below.
            Kind::Node(_) if let Some(fifo) = self.fifo() => fifo.poll(true) | fifo.poll(false),
            Kind::Node(node) => match node.lock().device() {
                Some(device) => device.poll(),
                None => POLLIN | POLLOUT,
            },
        };
        if !self.readable() {
            ready &= !POLLIN;
        }
        if !self.writable() {
            ready &= !POLLOUT;
        }
        ready
    }

    /// The wait queues a poller of this file joins (`PollQueue`): the
    /// pipe's, the socket's, the terminal's; for an epoll instance, those of
    /// the files it watches (it becomes ready when one of them does). Other
    /// files are always ready and have none.
    pub fn poll_queues(&self, f: &mut dyn FnMut(&PollQueue)) {
        match &self.kind {
            Kind::Epoll(epoll) => {
                for file in epoll.files() {
                    file.poll_queues(f);
                }
            }
            _ => {
                if let Some(ready) = self.readiness() {
                    f(&ready.pollers);
                }
            }
        }
    }

    /// `poll` with POLLRDNORM beside POLLIN and POLLWRNORM beside POLLOUT,
    /// as poll(2), select(2) and epoll report them.
    pub fn poll_normal(&self) -> i16 {
        use abi::types::{POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
        let mut now = self.poll();
        if now & POLLIN != 0 {
            now |= POLLRDNORM;
        }
        if now & POLLOUT != 0 {
            now |= POLLWRNORM;
        }
        now
    }

    /// How many times what it is open on has changed (data in or out, an
    /// end closed): an edge-triggered epoll reports a descriptor again only
    /// when this moved. Files and devices other than the terminal never
    /// change readiness (always ready), so they say 0.
    pub fn changes(&self) -> u64 {
        match &self.kind {
            Kind::PipeRead(pipe) | Kind::PipeWrite(pipe) => pipe.ready.changes(),
            Kind::Socket(socket) => socket.ready.changes(),
            Kind::Epoll(epoll) => epoll.changes(),
            Kind::EventFd(counter) => counter.ready.changes(),
            Kind::PidFd(watch) => watch.ready.changes(),
            Kind::Node(_) if let Some(fifo) = self.fifo() => fifo.ready.changes(),
            Kind::Node(node) => match node.lock().device() {
                Some(device) if let Some((pty, master)) = pty_end(device) => {
                    ReadinessOf::Pty(pty, master).changes()
                }
                Some(device) if device.is_terminal() => super::console::READY.changes(),
                _ => 0,
            },
        }
    }

    /// The disk this file is open on, if it is a block device.
    pub fn block_device(&self) -> Option<crate::virtio_blk::DiskId> {
        match &self.kind {
            Kind::Node(node) => match node.lock().device() {
                Some(super::dev::Device::Disk(id)) => Some(id),
                _ => None,
            },
            _ => None,
        }
    }

    /// pread(2): a file read at `at`, leaving the offset alone.
    pub fn pread(&self, buf: &mut [u8], at: u64) -> Result<usize, Errno> {
        if !self.readable() {
            return Err(Errno::EBADF);
        }
        match &self.kind {
            Kind::Node(node) if is_disk_file(node) => super::ext2::read(node, at, buf),
            Kind::Node(node) => {
                // A disk sleeps: served without the node's lock.
                let device = node.lock().device();
                match device {
                    Some(d) if d.is_block() => d.read(buf, &mut at.clone(), false),
                    _ => read_at(&mut node.lock(), at, buf),
                }
            }
            _ => Err(Errno::ESPIPE),
        }
    }

    /// pwrite(2): a file written at `at`, leaving the offset alone. With
    /// O_APPEND the bytes go to the end whatever `at` says: Linux's
    /// behaviour, which its manual page lists as a bug against POSIX, and
    /// the one programs written for Linux meet.
    pub fn pwrite(&self, buf: &[u8], at: u64) -> Result<usize, Errno> {
        if !self.writable() {
            return Err(Errno::EBADF);
        }
        let append = *self.flags.lock() & O_APPEND != 0;
        match &self.kind {
            Kind::Node(node) if is_disk_file(node) => {
                super::ext2::write(node, at, buf, append).map(|(_, n)| n)
            }
            Kind::Node(node) => {
                let device = node.lock().device();
                if let Some(d) = device.filter(|d| d.is_block()) {
                    return d.write(buf, &mut at.clone(), self.nonblock());
                }
                let limit = file_size_limit();
                let mut node = node.lock();
                let at = if append { node.size() } else { at };
                let buf = within_limit(&node, limit, at, buf)?;
                write_at(&mut node, at, buf).map(|_| buf.len())
            }
            _ => Err(Errno::ESPIPE),
        }
    }

    /// lseek(2): moves the offset and answers it (SEEK_DATA and
    /// SEEK_HOLE: `kcore::holes`).
    pub fn seek(&self, offset: i64, whence: u32) -> Result<u64, Errno> {
        // Linux's ksys_lseek: an unknown whence before what the file is.
        if whence > SEEK_HOLE {
            return Err(Errno::EINVAL);
        }
        let Kind::Node(node) = &self.kind else {
            return Err(Errno::ESPIPE);
        };
        if self.fifo().is_some() {
            return Err(Errno::ESPIPE);
        }
        let node = node.lock();
        // A block device seeks as a file as long as the disk (stat says
        // its size is 0, as Linux's does).
        let end = match node.device() {
            Some(super::dev::Device::Disk(id)) => crate::virtio_blk::size_bytes(id),
            _ => node.size(),
        };
        match node.device() {
            Some(d) if d.is_terminal() => return Err(Errno::ESPIPE),
            Some(d) if d.is_block() => {}
            // Linux's null_lseek: the other devices have no positions, and
            // every seek lands at 0.
            Some(_) => {
                *self.offset.lock() = 0;
                return Ok(0);
            }
            None => {}
        }
        let mut current = self.offset.lock();
        if whence == SEEK_DATA || whence == SEEK_HOLE {
            use kcore::holes::{Seek, all_data, seek};
            let want = if whence == SEEK_DATA {
                Seek::Data
            } else {
                Seek::Hole
            };
            let page = crate::mm::PAGE_SIZE;
            let found = match &node.content {
                // A file in memory knows its holes: pages never written.
                Content::File(pages) => {
                    seek(offset, end, page, |n, data| pages.next_page(n, data), want)?
                }
                // A directory has no data to seek to (tmpfs's answer).
                Content::Dir(_) | Content::ProcDir(_) => return Err(Errno::EINVAL),
                // A disk file, or a disk: all data, as Linux's generic
                // answer for a file system that does not say.
                _ => seek(offset, end, page, all_data, want)?,
            };
            *current = found;
            return Ok(found);
        }
        let base = match whence {
            SEEK_SET => 0,
            SEEK_CUR => *current as i64,
            SEEK_END => end as i64,
            _ => return Err(Errno::EINVAL),
        };
        let new = base
            .checked_add(offset)
            .filter(|&n| n >= 0)
            .ok_or(Errno::EINVAL)?;
        *current = new as u64;
        Ok(new as u64)
    }

    /// Sets the directory-listing position (getdents64 keeps it in the offset).
    pub fn offset(&self) -> u64 {
        *self.offset.lock()
    }

    pub fn set_offset(&self, at: u64) {
        *self.offset.lock() = at;
    }

    pub fn truncate(&self, len: u64) -> Result<(), Errno> {
        if !self.writable() {
            return Err(Errno::EINVAL);
        }
        match &self.kind {
            Kind::Node(node) => truncate_node(node, len),
            _ => Err(Errno::EINVAL),
        }
    }
}

/// The caller's RLIMIT_FSIZE, read before any node's lock (the process
/// table comes first in the lock order).
pub fn file_size_limit() -> u64 {
    crate::proc::current(|p| p.limits.cur(abi::types::RLIMIT_FSIZE))
}

/// What a write of `buf` at `at` into `node` may put there under the file
/// size `limit`, as Linux's `generic_write_check_limits`: the bytes that
/// fit, or, when none do, SIGXFSZ to the caller and EFBIG. Only regular
/// files have the limit. (The signal takes the process table, which may be
/// taken inside a node's lock.)
pub fn within_limit<'a>(
    node: &Node,
    limit: u64,
    at: u64,
    buf: &'a [u8],
) -> Result<&'a [u8], Errno> {
    if !matches!(node.content, Content::File(_)) || buf.is_empty() {
        return Ok(buf);
    }
    let room = limit.saturating_sub(at);
    if room == 0 {
        return Err(file_too_big());
    }
    Ok(&buf[..buf.len().min(usize::try_from(room).unwrap_or(usize::MAX))])
}

/// A change that would take a file past RLIMIT_FSIZE: SIGXFSZ to the
/// caller (which kills it unless caught or ignored), and EFBIG.
pub fn file_too_big() -> Errno {
    crate::signal::send_to_current(abi::signal::SIGXFSZ, crate::signal::Origin::kernel());
    Errno::EFBIG
}

impl OpenFile {
    pub fn stat(&self) -> Stat {
        match &self.kind {
            Kind::Node(node) => stat_node(node),
            Kind::PipeRead(p) | Kind::PipeWrite(p) => Stat {
                st_mode: S_IFIFO | 0o600,
                st_nlink: 1,
                st_size: p.buffered() as i64,
                st_blksize: 4096,
                ..Stat::default()
            },
            // An anonymous inode, as Linux's epoll, eventfd and pidfd: no
            // type bits.
            Kind::Epoll(_) | Kind::EventFd(_) | Kind::PidFd(_) => Stat {
                st_mode: 0o600,
                st_nlink: 1,
                st_blksize: 4096,
                ..Stat::default()
            },
            Kind::Socket(_) => Stat {
                st_mode: abi::types::S_IFSOCK | 0o777,
                st_nlink: 1,
                st_blksize: 4096,
                ..Stat::default()
            },
        }
    }
}

/// Copies file bytes from `at` into `buf`; how many there were. A device
/// has no offsets: pread reads it as read does, except a terminal (ESPIPE).
fn read_at(node: &mut Node, at: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    match &node.content {
        Content::File(data) => {
            let n = data.read_at(at, buf);
            node.accessed();
            Ok(n)
        }
        Content::ProcFile(text) => Ok(read_text(text, at, buf)),
        Content::ProcPagemap(pid) => super::procfs::pagemap_read(*pid, at, buf),
        Content::ProcSetting(setting) => Ok(read_text(setting.text().as_bytes(), at, buf)),
        Content::Dir(_) | Content::ProcDir(_) | Content::DiskDir => Err(Errno::EISDIR),
        // A disk file sleeps: its callers serve it without the lock.
        Content::DiskFile => Err(Errno::EINVAL),
        // open never hands out a link itself (it follows it).
        Content::Symlink(_) => Err(Errno::EINVAL),
        // Nor a socket's name or a device no driver serves (ENXIO).
        Content::Socket(_) | Content::Special { .. } => Err(Errno::ENXIO),
        Content::Device(d) if d.is_terminal() => Err(Errno::ESPIPE),
        Content::Fifo(_) => Err(Errno::ESPIPE),
        // The disk sleeps, so its callers serve it without the node's
        // lock (`read`, `pread`); one that did not would panic asleep.
        Content::Device(d) if d.is_block() => Err(Errno::EINVAL),
        Content::Device(d) => d.read(buf, &mut at.clone(), false),
    }
}

/// Copies the bytes of a /proc text from `at` into `buf`; how many there
/// were (none past its end).
fn read_text(text: &[u8], at: u64, buf: &mut [u8]) -> usize {
    let from = usize::try_from(at).unwrap_or(usize::MAX).min(text.len());
    let n = buf.len().min(text.len() - from);
    buf[..n].copy_from_slice(&text[from..from + n]);
    n
}

/// Writes `buf` into the file at `at`, growing it as needed; returns the
/// offset just past what was written.
fn write_at(node: &mut Node, at: u64, buf: &[u8]) -> Result<u64, Errno> {
    match &mut node.content {
        Content::File(data) => {
            data.write_at(at, buf)?;
            if !buf.is_empty() {
                node.modified();
            }
            Ok(at + buf.len() as u64)
        }
        Content::Dir(_) | Content::ProcDir(_) | Content::DiskDir => Err(Errno::EISDIR),
        Content::DiskFile => Err(Errno::EINVAL),
        Content::Device(d) if d.is_terminal() => Err(Errno::ESPIPE),
        // As in `read_at`: served without the node's lock.
        Content::Device(d) if d.is_block() => Err(Errno::EINVAL),
        Content::Device(d) => d.write(buf, &mut at.clone(), false).map(|n| at + n as u64),
        // /proc's files take no writes (Linux's answer to root, who may
        // open them for writing).
        Content::ProcFile(_) | Content::ProcPagemap(_) => Err(Errno::EIO),
        // A setting takes the whole value in one write, as Linux's
        // sysctls do; writing nothing changes nothing.
        Content::ProcSetting(_) if buf.is_empty() => Ok(at),
        Content::ProcSetting(setting) => {
            setting.set(buf)?;
            Ok(at + buf.len() as u64)
        }
        Content::Symlink(_) => Err(Errno::EINVAL),
        Content::Socket(_) | Content::Special { .. } => Err(Errno::ENXIO),
        Content::Fifo(_) => Err(Errno::ESPIPE),
    }
}

/// Sets a regular file's size; the times move when the size does.
/// Truncates (or extends) the file to `len`; EFBIG past the caller's
/// RLIMIT_FSIZE, as a write there would be.
pub fn truncate_node(node: &NodeRef, len: u64) -> Result<(), Errno> {
    if is_disk_file(node) {
        return super::ext2::truncate(node, len);
    }
    if len > file_size_limit() && matches!(node.lock().content, Content::File(_)) {
        return Err(file_too_big());
    }
    let mut node = node.lock();
    match &mut node.content {
        Content::File(data) => {
            let was = data.len();
            data.truncate(len)?;
            if was != len {
                node.modified();
            }
            Ok(())
        }
        Content::Dir(_) | Content::ProcDir(_) | Content::DiskDir => Err(Errno::EISDIR),
        Content::DiskFile => unreachable!("served above"),
        // Linux's answer to truncating anything but a regular file (open's
        // O_TRUNC leaves devices alone before it gets here).
        Content::Device(_)
        | Content::Symlink(_)
        | Content::Socket(_)
        | Content::Fifo(_)
        | Content::Special { .. } => Err(Errno::EINVAL),
        // Nothing to cut (Linux lets root truncate them, to no effect).
        Content::ProcFile(_) | Content::ProcPagemap(_) | Content::ProcSetting(_) => Ok(()),
    }
}

/// Whether `node` is a regular file of a mounted disk, whose reads and
/// writes sleep on the disk (fs/ext2.rs) and so are served with no lock.
pub fn is_disk_file(node: &NodeRef) -> bool {
    matches!(node.lock().content, Content::DiskFile)
}

pub fn stat_node(node: &NodeRef) -> Stat {
    let node = node.lock();
    let size = node.size() as i64;
    // A disk's file answers with the disk's numbers: its device and its
    // inode, as Linux's tools (and e2fsck, debugfs) name it.
    let (dev, ino) = match &node.disk {
        Some(d) => (d.vol.dev, u64::from(d.ino)),
        None => (1, node.ino),
    };
    let Times {
        atime,
        mtime,
        ctime,
    } = node.times;
    Stat {
        st_dev: dev,
        st_ino: ino,
        st_nlink: super::ramfs::nlink(&node),
        st_mode: node.mode(),
        st_uid: node.uid,
        st_gid: node.gid,
        st_rdev: match node.content {
            Content::Special { rdev, .. } => rdev,
            _ => node.device().map_or(0, |d| d.rdev()),
        },
        st_size: size,
        st_blksize: 4096,
        st_blocks: node.blocks() as i64,
        st_atime: atime.tv_sec,
        st_atime_nsec: atime.tv_nsec,
        st_mtime: mtime.tv_sec,
        st_mtime_nsec: mtime.tv_nsec,
        st_ctime: ctime.tv_sec,
        st_ctime_nsec: ctime.tv_nsec,
        ..Stat::default()
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        OPEN_COUNT.fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
        if *self.flags.lock() & O_ASYNC != 0 {
            super::sigio::unwatch(self);
        }
        match &self.kind {
            Kind::PipeRead(p) => p.close_reader(),
            Kind::PipeWrite(p) => p.close_writer(),
            Kind::Socket(socket) => socket.release(),
            Kind::Epoll(_) | Kind::EventFd(_) | Kind::PidFd(_) => {}
            Kind::Node(node) => {
                let (ino, device) = {
                    let node = node.lock();
                    (node.ino, node.device())
                };
                super::lock::description_closed(self.id, ino);
                super::lease::closed(self);
                // An O_PATH descriptor never opened the end.
                if *self.flags.lock() & O_PATH == 0
                    && let Some((pty, master)) = device.and_then(pty_end)
                {
                    if master {
                        pty.close_master();
                    } else {
                        pty.close_slave();
                    }
                }
                if let Some(fifo) = self.fifo() {
                    if self.readable() {
                        fifo.close_reader();
                    }
                    if self.writable() {
                        fifo.close_writer();
                    }
                }
            }
        }
    }
}

/// Process `pid` closed a descriptor of `file`: its POSIX record locks on
/// that file go (Linux's `filp_close`), then the reference is dropped.
/// Called outside the process-table lock.
pub fn close_by(pid: u32, file: Arc<OpenFile>) {
    if let Some(ino) = file.ino() {
        super::lock::closed(pid, ino);
    }
    let socket = matches!(file.kind, Kind::Socket(_));
    drop(file);
    // The last descriptor of a socket sent into a queue may leave a ring
    // that keeps itself alive (fs/socket.rs).
    if socket {
        super::socket::collect_rings();
    }
}

#[derive(Clone)]
struct Slot {
    file: Arc<OpenFile>,
    cloexec: bool,
}

/// A process's descriptors: slot `fd` holds descriptor `fd`; the vector is
/// as long as the highest descriptor ever made needed.
#[derive(Clone, Default)]
pub struct FdTable {
    slots: alloc::vec::Vec<Option<Slot>>,
}

impl FdTable {
    /// The slot of `fd`, or EBADF when `fd` is negative or beyond the
    /// table (no such descriptor was ever made).
    fn slot(&self, fd: i32) -> Result<&Option<Slot>, Errno> {
        usize::try_from(fd)
            .ok()
            .and_then(|i| self.slots.get(i))
            .ok_or(Errno::EBADF)
    }

    fn slot_mut(&mut self, fd: i32) -> Result<&mut Option<Slot>, Errno> {
        usize::try_from(fd)
            .ok()
            .and_then(|i| self.slots.get_mut(i))
            .ok_or(Errno::EBADF)
    }

    /// Every open descriptor with its file, lowest first (/proc/PID/fd).
    pub fn open(&self) -> alloc::vec::Vec<(i32, Arc<OpenFile>)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(fd, slot)| Some((fd as i32, slot.as_ref()?.file.clone())))
            .collect()
    }

    pub fn get(&self, fd: i32) -> Result<Arc<OpenFile>, Errno> {
        self.slot(fd)?
            .as_ref()
            .map(|s| s.file.clone())
            .ok_or(Errno::EBADF)
    }

    /// Installs `file` at the lowest free descriptor at or above `from`
    /// and below `limit` (EMFILE if there is none). The table takes its own
    /// reference: a file refused stays the caller's, to be dropped outside
    /// the process-table lock (closing a pipe end wakes sleepers, which
    /// takes that lock).
    pub fn install_from(
        &mut self,
        from: usize,
        file: &Arc<OpenFile>,
        cloexec: bool,
        limit: usize,
    ) -> Result<i32, Errno> {
        let fd = (from..limit)
            .find(|&i| self.slots.get(i).is_none_or(Option::is_none))
            .ok_or(Errno::EMFILE)?;
        if fd >= self.slots.len() {
            self.slots.resize(fd + 1, None);
        }
        self.slots[fd] = Some(Slot {
            file: file.clone(),
            cloexec,
        });
        Ok(fd as i32)
    }

    /// Installs `file` at the lowest free descriptor below `limit`.
    pub fn install(
        &mut self,
        file: &Arc<OpenFile>,
        cloexec: bool,
        limit: usize,
    ) -> Result<i32, Errno> {
        self.install_from(0, file, cloexec, limit)
    }

    /// Puts `file` at exactly `fd`, which must be below `limit` (EBADF),
    /// returning what was there (to be dropped by the caller, outside any
    /// lock).
    pub fn replace(
        &mut self,
        fd: i32,
        file: Arc<OpenFile>,
        cloexec: bool,
        limit: usize,
    ) -> Result<Option<Arc<OpenFile>>, Errno> {
        let index = usize::try_from(fd)
            .ok()
            .filter(|&i| i < limit)
            .ok_or(Errno::EBADF)?;
        if index >= self.slots.len() {
            self.slots.resize(index + 1, None);
        }
        let slot = self.slot_mut(fd)?;
        Ok(slot.replace(Slot { file, cloexec }).map(|s| s.file))
    }

    /// Removes `fd`, returning the file (to be dropped outside any lock).
    pub fn remove(&mut self, fd: i32) -> Result<Arc<OpenFile>, Errno> {
        let slot = self.slot_mut(fd)?;
        slot.take().map(|s| s.file).ok_or(Errno::EBADF)
    }

    pub fn cloexec(&self, fd: i32) -> Result<bool, Errno> {
        let slot = self.slot(fd)?;
        slot.as_ref().map(|s| s.cloexec).ok_or(Errno::EBADF)
    }

    pub fn set_cloexec(&mut self, fd: i32, on: bool) -> Result<(), Errno> {
        let slot = self.slot_mut(fd)?;
        slot.as_mut().map(|s| s.cloexec = on).ok_or(Errno::EBADF)
    }

    /// Takes every close-on-exec descriptor out (exec drops them).
    pub fn take_cloexec(&mut self) -> alloc::vec::Vec<Arc<OpenFile>> {
        self.slots
            .iter_mut()
            .filter(|s| s.as_ref().is_some_and(|s| s.cloexec))
            .filter_map(|s| s.take().map(|s| s.file))
            .collect()
    }

    /// close_range(2): the descriptors from `first` to `last` that are
    /// open, taken out (to be dropped outside any lock), or with `cloexec`
    /// marked close-on-exec and left (nothing returned).
    pub fn close_range(
        &mut self,
        first: u32,
        last: u32,
        cloexec: bool,
    ) -> alloc::vec::Vec<Arc<OpenFile>> {
        let end = (last as usize).saturating_add(1).min(self.slots.len());
        let mut closed = alloc::vec::Vec::new();
        for slot in self.slots.iter_mut().take(end).skip(first as usize) {
            if cloexec {
                if let Some(slot) = slot {
                    slot.cloexec = true;
                }
            } else if let Some(slot) = slot.take() {
                closed.push(slot.file);
            }
        }
        closed
    }

    /// Takes every descriptor out (exit drops them).
    pub fn take_all(&mut self) -> alloc::vec::Vec<Arc<OpenFile>> {
        self.slots
            .iter_mut()
            .filter_map(|s| s.take().map(|s| s.file))
            .collect()
    }
}

/// A process's descriptor table as the process holds it: shared by its
/// threads, and by the processes `clone(CLONE_FILES)` made (a descriptor
/// one of them opens or closes is opened or closed for all), a copy of its
/// own after fork. The table is behind a lock of its own, taken inside the
/// process table's (every call here comes from `proc::current`'s closure),
/// so two processes that share it may change it at once.
pub struct Files(Arc<IrqLock<FdTable>>);

impl Files {
    pub fn new(table: FdTable) -> Files {
        Files(Arc::new(IrqLock::new(Rank::Files, table)))
    }

    /// fork: a table of the child's own, with the same open files.
    pub fn copy(&self) -> Files {
        Files::new(self.0.lock().clone())
    }

    /// clone(CLONE_FILES): the same table.
    pub fn share(&self) -> Files {
        Files(self.0.clone())
    }

    /// exec: a table of its own if others share this one (Linux's
    /// `unshare_files`), so that closing the close-on-exec descriptors
    /// does not close them for the others. Caller holds the process table,
    /// which keeps another holder from letting go meanwhile: the table
    /// dropped here is never the last one's, and no file closes inside
    /// the lock.
    pub fn unshare(&mut self) {
        if Arc::strong_count(&self.0) > 1 {
            *self = self.copy();
        }
    }

    /// exit: lets go of the table; if this was its last holder, every file
    /// in it, to be closed by the caller outside the process table's lock.
    /// Caller holds the process table, as for `unshare`.
    pub fn release(&mut self) -> alloc::vec::Vec<Arc<OpenFile>> {
        let mine = core::mem::replace(self, Files::new(FdTable::default()));
        match Arc::try_unwrap(mine.0) {
            Ok(table) => table.into_inner().take_all(),
            Err(_shared) => alloc::vec::Vec::new(),
        }
    }

    pub fn open(&self) -> alloc::vec::Vec<(i32, Arc<OpenFile>)> {
        self.0.lock().open()
    }

    pub fn get(&self, fd: i32) -> Result<Arc<OpenFile>, Errno> {
        self.0.lock().get(fd)
    }

    pub fn install_from(
        &self,
        from: usize,
        file: &Arc<OpenFile>,
        cloexec: bool,
        limit: usize,
    ) -> Result<i32, Errno> {
        self.0.lock().install_from(from, file, cloexec, limit)
    }

    pub fn install(&self, file: &Arc<OpenFile>, cloexec: bool, limit: usize) -> Result<i32, Errno> {
        self.0.lock().install(file, cloexec, limit)
    }

    pub fn replace(
        &self,
        fd: i32,
        file: Arc<OpenFile>,
        cloexec: bool,
        limit: usize,
    ) -> Result<Option<Arc<OpenFile>>, Errno> {
        self.0.lock().replace(fd, file, cloexec, limit)
    }

    pub fn remove(&self, fd: i32) -> Result<Arc<OpenFile>, Errno> {
        self.0.lock().remove(fd)
    }

    pub fn cloexec(&self, fd: i32) -> Result<bool, Errno> {
        self.0.lock().cloexec(fd)
    }

    pub fn set_cloexec(&self, fd: i32, on: bool) -> Result<(), Errno> {
        self.0.lock().set_cloexec(fd, on)
    }

    pub fn close_range(
        &self,
        first: u32,
        last: u32,
        cloexec: bool,
    ) -> alloc::vec::Vec<Arc<OpenFile>> {
        self.0.lock().close_range(first, last, cloexec)
    }

    pub fn take_cloexec(&self) -> alloc::vec::Vec<Arc<OpenFile>> {
        self.0.lock().take_cloexec()
    }
}
