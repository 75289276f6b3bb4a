//! The devices of `/dev`: the character devices, made at boot before the
//! ramdisk is read, and the disks, made when their driver finds them.
//!
//! | name | does | Linux's numbers |
//! |---|---|---|
//! | `console` | the serial console (`fs/console.rs`) | 5, 1 |
//! | `tty` | the process's controlling terminal: its session's pseudo-terminal if it has one (`fs/pty.rs`), else the console | 5, 0 |
//! | `null` | reads find end of file, writes vanish | 1, 3 |
//! | `zero` | reads find zero bytes, writes vanish | 1, 5 |
//! | `full` | reads find zero bytes, writes fail with ENOSPC (a disk that is full, for testing error paths) | 1, 7 |
//! | `random`, `urandom` | the kernel's generator (`random.rs`); writes are mixed into it | 1, 8 and 1, 9 |
//! | `klog` | the kernel's log as it was printed, read as a file | 1, 250 |
//! | `kmsg` | the kernel's log one record a read, as Linux's (`level,seq,usec,-;text`); a write logs its text (`<N>` first: at level N) | 1, 11 |
//! | `ptmx` | a new pseudo-terminal at each open: the opener gets its master, `/dev/pts/N` its slave (`fs/pty.rs`) | 5, 2 |
//! | `pts/N` | pseudo-terminal N's slave, a terminal, there while its master is open | 136, N |
//! | `vda`, `vdb`... | the virtio disks, block devices, one for each QEMU gives (`virtio_blk.rs`): reads and writes at any offset, fsync flushes its write cache, BLKGETSIZE64 and BLKSSZGET | 254, 0 and 254, 16... |
//!
//! `random` and `urandom` are the same, as on Linux since 5.6: the generator
//! is seeded before the first process runs, so neither ever blocks.
//!
//! A device is a `ramfs::Content::Device` node, so `stat`, `ls` and `open`
//! treat it like any other name; what reading and writing do is here.

use abi::Errno;

use super::console;
use crate::virtio_blk::DiskId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Console,
    Tty,
    Null,
    Zero,
    Full,
    Random,
    Urandom,
    /// The kernel's log so far (`log::read_ring`), read from the open
    /// file's offset.
    Klog,
    /// The kernel's log as Linux's /dev/kmsg gives it: one record a read,
    /// from the open file's position (kcore::kmsg).
    Kmsg,
    /// Opened, a new pseudo-terminal's master (`fs/pty.rs`); the node
    /// itself is never read or written.
    Ptmx,
    /// Pseudo-terminal N's master: the node an open of `/dev/ptmx` makes.
    PtyMaster(u32),
    /// Pseudo-terminal N's slave, `/dev/pts/N`.
    PtySlave(u32),
    /// A virtio disk (`virtio_blk.rs`), a block device: `/dev/vda`,
    /// `/dev/vdb`..., made by `add_disk` for each the driver found.
    Disk(DiskId),
}

/// Every device, its name in `/dev` and its permission bits.
pub const ALL: [(&str, Device, u32); 10] = [
    ("console", Device::Console, 0o620),
    ("tty", Device::Tty, 0o666),
    ("null", Device::Null, 0o666),
    ("zero", Device::Zero, 0o666),
    ("full", Device::Full, 0o666),
    ("random", Device::Random, 0o666),
    ("urandom", Device::Urandom, 0o666),
    ("klog", Device::Klog, 0o444),
    ("kmsg", Device::Kmsg, 0o644),
    ("ptmx", Device::Ptmx, 0o666),
];

/// What a device node of type `kind` (S_IFCHR or S_IFBLK) and number
/// `rdev` is, made by mknod or found on a disk: the device with that
/// number, or a node no driver serves (`Content::Special`: opening it is
/// ENXIO).
pub fn content_for(kind: u32, rdev: u64) -> super::ramfs::Content {
    let block = kind == abi::types::S_IFBLK;
    let known = ALL
        .iter()
        .map(|&(_, device, _)| device)
        .chain(DiskId::all().map(Device::Disk))
        .find(|device| device.is_block() == block && device.rdev() == rdev);
    match known {
        Some(device) => super::ramfs::Content::Device(device),
        None => super::ramfs::Content::Special { kind, rdev },
    }
}

impl Device {
    /// A terminal: reads sleep for typed input; ioctl speaks termios.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Device::Console | Device::Tty | Device::PtyMaster(_) | Device::PtySlave(_)
        )
    }

    /// `st_rdev`: Linux's major and minor numbers, encoded as glibc's and
    /// musl's `makedev` do for numbers this small.
    pub fn rdev(self) -> u64 {
        let (major, minor) = match self {
            Device::Console => (5, 1),
            Device::Tty => (5, 0),
            Device::Null => (1, 3),
            Device::Zero => (1, 5),
            Device::Full => (1, 7),
            Device::Random => (1, 8),
            Device::Urandom => (1, 9),
            // Linux's /dev/kmsg is (1, 11); klog reads as a plain file
            // rather than record by record, so it takes a minor of its own.
            Device::Klog => (1, 250),
            Device::Kmsg => (1, 11),
            Device::Ptmx | Device::PtyMaster(_) => (5, 2),
            Device::PtySlave(n) => (super::pty::SLAVE_MAJOR, u64::from(n)),
            Device::Disk(id) => (u64::from(crate::virtio_blk::MAJOR), u64::from(id.minor())),
        };
        (major << 8) | minor
    }

    /// Whether it is a block device (S_IFBLK) rather than a character one.
    pub fn is_block(self) -> bool {
        matches!(self, Device::Disk(_))
    }

    /// Reads into `buf`. A terminal or a disk read may sleep, so the
    /// caller holds no lock. A device with a position (`/dev/kmsg`,
    /// `/dev/klog`, the disk) reads from `*at` and moves it; the others
    /// leave it alone. `nonblock`: the file's O_NONBLOCK.
    pub fn read(self, buf: &mut [u8], at: &mut u64, nonblock: bool) -> Result<usize, Errno> {
        match self {
            Device::Disk(id) => disk_io(id, DiskIo::Read(buf), at),
            Device::Kmsg => read_kmsg(buf, at, nonblock),
            Device::Klog => {
                let (n, next) = crate::log::read_ring(*at, buf);
                *at = next;
                Ok(n)
            }
            Device::Console | Device::Tty => console::read(buf, nonblock),
            Device::PtySlave(n) => pair(n)?.slave_read(buf, nonblock),
            Device::PtyMaster(n) => pair(n)?.master_read(buf, nonblock),
            Device::Ptmx => Err(Errno::EIO),
            Device::Null => Ok(0),
            Device::Zero | Device::Full => {
                buf.fill(0);
                Ok(buf.len())
            }
            Device::Random | Device::Urandom => {
                crate::random::fill(buf);
                Ok(buf.len())
            }
        }
    }

    /// Writes `buf`; as `read`, the disk writes at `*at` and moves it.
    pub fn write(self, buf: &[u8], at: &mut u64, nonblock: bool) -> Result<usize, Errno> {
        match self {
            Device::PtySlave(n) => pair(n)?.slave_write(buf, nonblock),
            Device::PtyMaster(n) => pair(n)?.master_write(buf),
            Device::Ptmx => Err(Errno::EIO),
            Device::Disk(id) => disk_io(id, DiskIo::Write(buf), at),
            Device::Klog => Err(Errno::EINVAL),
            Device::Kmsg => {
                crate::log::log_written(&alloc::string::String::from_utf8_lossy(buf));
                Ok(buf.len())
            }
            Device::Console | Device::Tty => Ok(console::write(buf)),
            Device::Null | Device::Zero => Ok(buf.len()),
            Device::Full => Err(Errno::ENOSPC),
            Device::Random | Device::Urandom => {
                crate::random::mix(buf);
                Ok(buf.len())
            }
        }
    }

    /// poll(2): a terminal is readable when a line (or, raw, a byte) is
    /// waiting; every other device always is, and is always writable.
    pub fn poll(self) -> i16 {
        use abi::types::{POLLERR, POLLHUP, POLLIN, POLLOUT};
        match self {
            Device::PtySlave(n) => {
                return pair(n).map_or(POLLIN | POLLHUP | POLLERR, |pty| pty.slave_poll());
            }
            Device::PtyMaster(n) => {
                return pair(n).map_or(POLLIN | POLLHUP | POLLERR, |pty| pty.master_poll());
            }
            _ => {}
        }
        if self.is_terminal() && !console::readable() {
            POLLOUT
        } else {
            POLLIN | POLLOUT
        }
    }
}

/// Pseudo-terminal N; EIO once the pair is gone (a slave node kept open
/// past its master's close).
pub fn pair(n: u32) -> Result<alloc::sync::Arc<super::pty::Pty>, Errno> {
    super::pty::get(n).ok_or(Errno::EIO)
}

/// What `disk_io` moves: into the caller's buffer, or out of it.
enum DiskIo<'a> {
    Read(&'a mut [u8]),
    Write(&'a [u8]),
}

/// Reads or writes at byte `*at` of the disk: the whole sectors in one
/// transfer straight from or to `io`'s buffer (the driver cuts it into
/// requests), and a sector the range covers only part of by reading it
/// and, for a write, writing it back changed. Stops at the disk's end: a
/// read there finds end of file, a write ENOSPC (as Linux's block
/// devices).
fn disk_io(id: DiskId, mut io: DiskIo, at: &mut u64) -> Result<usize, Errno> {
    use crate::virtio_blk::{Op, size_bytes, transfer};
    const SECTOR: u64 = kcore::virtio::SECTOR;
    let size = size_bytes(id);
    let asked = match &io {
        DiskIo::Read(buf) => buf.len(),
        DiskIo::Write(buf) => buf.len(),
    };
    if *at >= size {
        return match io {
            DiskIo::Write(_) if asked > 0 => Err(Errno::ENOSPC),
            _ => Ok(0),
        };
    }
    let len = asked.min((size - *at) as usize);
    let mut done = 0;
    while done < len {
        let pos = *at + done as u64;
        let within = (pos % SECTOR) as usize;
        let left = len - done;
        if within == 0 && left as u64 >= SECTOR {
            let n = left - left % SECTOR as usize;
            let bytes = done..done + n;
            match &mut io {
                DiskIo::Read(buf) => transfer(id, pos / SECTOR, Op::Read(&mut buf[bytes]))?,
                DiskIo::Write(buf) => transfer(id, pos / SECTOR, Op::Write(&buf[bytes]))?,
            }
            done += n;
            continue;
        }
        let n = (SECTOR as usize - within).min(left);
        let mut sector = [0u8; SECTOR as usize];
        transfer(id, pos / SECTOR, Op::Read(&mut sector))?;
        match &mut io {
            DiskIo::Read(buf) => buf[done..done + n].copy_from_slice(&sector[within..within + n]),
            DiskIo::Write(buf) => {
                sector[within..within + n].copy_from_slice(&buf[done..done + n]);
                transfer(id, pos / SECTOR, Op::Write(&sector))?;
            }
        }
        done += n;
    }
    *at += len as u64;
    Ok(len)
}

/// Makes `/dev/vda` (or vdb...) for a disk `virtio_blk::init` found.
pub fn add_disk(id: DiskId) {
    super::ramfs::add_device(id.name(), Device::Disk(id), 0o660);
}

/// One read of /dev/kmsg: the first record at or after `*at` (a byte
/// position of the log, which moves past it), as `level,seq,usec,-;text`
/// with the record's position for its sequence number (rising, as
/// Linux's, though not by one). EINVAL if `buf` cannot hold the record.
/// At the end: EAGAIN with O_NONBLOCK (what `dmesg` reads until); else end
/// of file, where Linux waits for the next message (a wait would need the
/// logger to wake a reader, and the kernel logs holding any lock).
fn read_kmsg(buf: &mut [u8], at: &mut u64, nonblock: bool) -> Result<usize, Errno> {
    let hz = crate::clock::hz();
    let mut next = None;
    crate::log::each_record(*at, |span, record| {
        if next.is_none() {
            next = Some((span.end, kcore::kmsg::kmsg_record(&record, span.start, hz)));
        }
    });
    let Some((after, text)) = next else {
        return if nonblock { Err(Errno::EAGAIN) } else { Ok(0) };
    };
    if text.len() > buf.len() {
        return Err(Errno::EINVAL);
    }
    buf[..text.len()].copy_from_slice(text.as_bytes());
    *at = after;
    Ok(text.len())
}
