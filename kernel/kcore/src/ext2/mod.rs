//! ext2, the second extended file system, as Linux and e2fsprogs lay it
//! out: read and written here without hardware, over any [`BlockDevice`],
//! so `cargo test` checks it against images Debian's `mke2fs` made and
//! `e2fsck` judges what it wrote.
//!
//! The disk is cut into block groups. Each group has a bitmap of its
//! blocks, a bitmap of its inodes and a table of inodes; the superblock
//! (block 1 with 1 KiB blocks, else inside block 0) and the table of group
//! descriptors after it say where those are. An inode holds a file's
//! type, owner, mode, times and the 15 block pointers that lead to its
//! data (`blockmap`); a directory is a file of name-to-inode entries
//! (`dir`). `layout` decodes and encodes each record; `fs` does the work:
//! mount, find, read, allocate, write, link, unlink, truncate. On ext3,
//! `journal` makes groups of changes atomic: recovery after a crash
//! replays what committed and drops what did not.
//!
//! The kernel gives [`fs::Fs`] its buffer cache as the device; the host
//! tests give it a file.

pub mod blockmap;
pub mod dir;
pub mod fs;
pub mod journal;
pub mod layout;
pub mod suite;
#[cfg(test)]
mod tests;
pub mod xattr;

use abi::Errno;

/// Why an operation failed: an error a system call returns as it is, or
/// corruption found on the disk, with what was wrong (the kernel logs it
/// and returns EUCLEAN, as Linux's ext2 does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    Sys(Errno),
    Corrupt(&'static str),
}

impl Error {
    /// The errno a system call returns for this error.
    pub fn errno(self) -> Errno {
        match self {
            Error::Sys(e) => e,
            Error::Corrupt(_) => Errno::EUCLEAN,
        }
    }
}

impl From<Errno> for Error {
    fn from(e: Errno) -> Error {
        Error::Sys(e)
    }
}

pub type Result<T> = core::result::Result<T, Error>;

/// Where the blocks come from. Block `n` of a read of `buf.len()` bytes
/// is the bytes at `n * buf.len()`: the file system reads its superblock
/// with a 1 KiB buffer (block 1) before it knows its block size, and uses
/// whole file system blocks after that.
///
/// A write may sit in a cache until [`BlockDevice::flush`], which returns
/// only when every write before it is durable (the disk's flush command):
/// the journal's ordering rests on it.
///
/// A run of consecutive blocks can move at once ([`BlockDevice::read_run`],
/// [`BlockDevice::write_run`]): a disk does that in a few large requests,
/// which is most of what makes it fast.
/// Consecutive blocks to write, for [`BlockDevice::write_runs`]: the
/// `data.len() / block_len` blocks of `block_len` bytes from block
/// `first` on.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    pub first: u64,
    pub block_len: usize,
    pub data: &'a [u8],
}

pub trait BlockDevice {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()>;
    fn write(&mut self, block: u64, buf: &[u8]) -> Result<()>;
    fn flush(&mut self) -> Result<()>;

    /// Writes a block whose contents the journal already holds durable:
    /// a committed transaction's copy going to its home place. Recovery
    /// would write it again after a crash, so [`BlockDevice::flush`] need
    /// not wait for it, only [`BlockDevice::flush_all`]. By default a
    /// plain write.
    fn write_logged(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        self.write(block, buf)
    }

    /// As [`BlockDevice::flush`], with the blocks written by
    /// [`BlockDevice::write_logged`]: what a checkpoint waits for before
    /// it lets the log forget them. By default a flush.
    fn flush_all(&mut self) -> Result<()> {
        self.flush()
    }

    /// Reads the `buf.len() / block_len` blocks of `block_len` bytes from
    /// block `first` on. By default one block at a time.
    fn read_run(&mut self, first: u64, block_len: usize, buf: &mut [u8]) -> Result<()> {
        for (i, block) in buf.chunks_mut(block_len).enumerate() {
            self.read(first + i as u64, block)?;
        }
        Ok(())
    }

    /// Writes `buf` as consecutive blocks of `block_len` bytes from block
    /// `first` on. By default one block at a time.
    fn write_run(&mut self, first: u64, block_len: usize, buf: &[u8]) -> Result<()> {
        for (i, block) in buf.chunks(block_len).enumerate() {
            self.write(first + i as u64, block)?;
        }
        Ok(())
    }

    /// Writes each of `runs`, as [`BlockDevice::write_run`] would one
    /// after another. A disk offers all their requests before it waits
    /// for any, so runs apart on it (a file's data, the journal's log)
    /// cost one round trip, not one each. By default one after another.
    fn write_runs(&mut self, runs: &[Run]) -> Result<()> {
        for run in runs {
            self.write_run(run.first, run.block_len, run.data)?;
        }
        Ok(())
    }

    /// A hint that blocks `first..first + count` (of `block_len` bytes)
    /// are about to be read: a cache reads those it lacks now, in as few
    /// requests as it can. By default nothing.
    fn read_ahead(&mut self, first: u64, count: usize, block_len: usize) -> Result<()> {
        let _ = (first, count, block_len);
        Ok(())
    }

    /// A hint that blocks `first..first + count` (of `block_len` bytes)
    /// will be read after the ones being read now: a cache starts reading
    /// those it lacks and returns without waiting for them, so that the
    /// disk works while the reader copies what it has. By default nothing.
    fn prefetch(&mut self, first: u64, count: usize, block_len: usize) {
        let _ = (first, count, block_len);
    }

    /// Starts reading the `len` bytes of blocks of `block_len` bytes from
    /// block `first` on and returns without waiting: a ticket for
    /// [`BlockDevice::finish_read`], which must come for it exactly once.
    /// None, and nothing started, when the device cannot start that read
    /// now (longer than it starts at once, or too many started already),
    /// and always by default: a device that reads only when asked.
    fn start_read(&mut self, first: u64, block_len: usize, len: usize) -> Option<u64> {
        let _ = (first, block_len, len);
        None
    }

    /// Waits for the read `ticket` from [`BlockDevice::start_read`] and
    /// copies its bytes into `buf`, as long as the read.
    fn finish_read(&mut self, ticket: u64, buf: &mut [u8]) -> Result<()> {
        let _ = (ticket, buf);
        unreachable!("finish_read of a ticket start_read never gave")
    }

    /// Whether a read of `block` (of `block_len` bytes) would be answered
    /// from memory: a cache's history, which the file system reads to
    /// tell a reader going through a file in order. By default false.
    fn has_block(&self, block: u64, block_len: usize) -> bool {
        let _ = (block, block_len);
        false
    }
    /// The device's size in bytes, when it knows it: a file system that
    /// says it is larger is refused at mount (EINVAL, Linux's "block count
    /// exceeds size of device").
    fn size(&self) -> Option<u64> {
        None
    }
}
