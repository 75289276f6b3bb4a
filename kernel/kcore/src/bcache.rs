//! The buffer cache's bookkeeping: which disk blocks are in memory, which
//! of them hold writes the disk has not seen, and which to give up first.
//! Pure logic over any [`BlockDevice`], so `cargo test` checks it on the
//! host, and ext2's power-cut test runs through it (ext2/tests.rs).
//!
//! A [`Cache`] is itself a `BlockDevice`: the file system reads and writes
//! it as it would the disk. A read that misses reads the disk and keeps the
//! block; a write only changes the kept copy and marks it dirty, with the
//! time it first became dirty. Dirty blocks reach the disk in three ways:
//!
//! - [`BlockDevice::flush`] writes every dirty block, in block order, and
//!   then flushes the device: when it returns, every write before it is
//!   durable. fsync, sync and the journal's commit rest on this.
//! - [`Cache::write_back_older_than`]: the kernel's flusher thread writes
//!   the blocks dirty for longer than the age limit, so a crash loses at
//!   most that much of what nobody asked to be durable.
//! - Eviction: a cache at its capacity gives up its least recently used
//!   block for the new one, writing it first if it is dirty.
//!
//! [`Cache::shrink`] gives back clean blocks, least recently used first,
//! when memory is short: they cost only a read to get again.
//!
//! Why write-back is safe under ext3's journal: the journal never hands
//! a block to its home place before the commit that logs it is flushed
//! (ext2/journal.rs), so a dirty block written early, by eviction or the
//! flusher, is only ever a block the journal already promised.
//!
//! Blocks are kept by their byte offset and length, since the file system
//! reads its superblock in 1 KiB before it knows its block size: an access
//! that overlaps kept blocks of another size writes those back and drops
//! them first, so no byte is ever kept twice.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::ext2::{BlockDevice, Result};

/// The longest block kept: an access longer than this goes to the disk.
const MAX_BLOCK: u64 = 64 * 1024;

struct Buffer {
    data: Vec<u8>,
    /// When it first became dirty since it was last written back; None
    /// when the disk holds what it holds.
    dirty_since: Option<u64>,
    /// The use stamp of its last access (the key in `by_use`).
    used: u64,
}

/// Counts for `/proc` and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    /// Dirty blocks written to the disk, for any of the three reasons.
    pub written_back: u64,
    pub evicted: u64,
}

/// A write-back cache of up to `capacity` bytes of device `D`'s blocks.
pub struct Cache<D: BlockDevice> {
    pub dev: D,
    /// Kept blocks by byte offset.
    buffers: BTreeMap<u64, Buffer>,
    /// Byte offsets by use stamp, least recently used first.
    by_use: BTreeMap<u64, u64>,
    next_use: u64,
    held: usize,
    capacity: usize,
    /// The time the owner last told (`set_now`), in whatever unit it
    /// measures the age limit in.
    now: u64,
    pub stats: Stats,
}

impl<D: BlockDevice> Cache<D> {
    /// An empty cache over `dev` holding at most `capacity` bytes. A
    /// capacity smaller than one block keeps nothing: every write reaches
    /// the disk at once (write-through).
    pub fn new(dev: D, capacity: usize) -> Cache<D> {
        Cache {
            dev,
            buffers: BTreeMap::new(),
            by_use: BTreeMap::new(),
            next_use: 0,
            held: 0,
            capacity,
            now: 0,
            stats: Stats::default(),
        }
    }

    /// Tells the cache the time, which stamps the blocks dirtied after it.
    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// Bytes kept, and how many of them are dirty.
    pub fn held(&self) -> (usize, usize) {
        let dirty = self
            .buffers
            .values()
            .filter(|b| b.dirty_since.is_some())
            .map(|b| b.data.len())
            .sum();
        (self.held, dirty)
    }

    /// Writes back every block dirty since before `now - age` (the
    /// flusher's pass); how many it wrote. Does not flush the device:
    /// nothing waits on these writes.
    pub fn write_back_older_than(&mut self, age: u64) -> Result<usize> {
        let limit = self.now.saturating_sub(age);
        let old: Vec<u64> = self
            .buffers
            .iter()
            .filter(|(_, b)| b.dirty_since.is_some_and(|t| t <= limit))
            .map(|(&at, _)| at)
            .collect();
        for &at in &old {
            self.write_back(at)?;
        }
        Ok(old.len())
    }

    /// Gives back up to `bytes` bytes of clean blocks, least recently used
    /// first; how many bytes it gave back.
    pub fn shrink(&mut self, bytes: usize) -> usize {
        let clean: Vec<u64> = self
            .by_use
            .values()
            .copied()
            .filter(|at| self.buffers[at].dirty_since.is_none())
            .collect();
        let mut freed = 0;
        for at in clean {
            if freed >= bytes {
                break;
            }
            freed += self.drop_buffer(at);
        }
        freed
    }

    /// Writes back everything and forgets every block (a raw device write
    /// or an unmount must not leave copies that could go stale).
    pub fn invalidate(&mut self) -> Result<()> {
        let all: Vec<u64> = self.buffers.keys().copied().collect();
        for at in all {
            self.write_back(at)?;
            self.drop_buffer(at);
        }
        Ok(())
    }

    /// Writes block `at` to the disk if it is dirty.
    fn write_back(&mut self, at: u64) -> Result<()> {
        let buffer = self.buffers.get_mut(&at).expect("a kept block");
        if buffer.dirty_since.is_some() {
            let len = buffer.data.len() as u64;
            self.dev.write(at / len, &buffer.data)?;
            buffer.dirty_since = None;
            self.stats.written_back += 1;
        }
        Ok(())
    }

    /// Forgets block `at` (written back or clean); its size.
    fn drop_buffer(&mut self, at: u64) -> usize {
        let buffer = self.buffers.remove(&at).expect("a kept block");
        self.by_use.remove(&buffer.used);
        self.held -= buffer.data.len();
        buffer.data.len()
    }

    /// Marks block `at` used now.
    fn touch(&mut self, at: u64) {
        let stamp = self.next_use;
        self.next_use += 1;
        let buffer = self.buffers.get_mut(&at).expect("a kept block");
        self.by_use.remove(&buffer.used);
        buffer.used = stamp;
        self.by_use.insert(stamp, at);
    }

    /// Writes back and forgets kept blocks of another size that share a
    /// byte with `at..at + len`.
    fn drop_overlapping(&mut self, at: u64, len: u64) -> Result<()> {
        let overlapping: Vec<u64> = self
            .buffers
            .range(at.saturating_sub(MAX_BLOCK - 1)..at + len)
            .filter(|&(&start, b)| {
                start + b.data.len() as u64 > at && !(start == at && b.data.len() as u64 == len)
            })
            .map(|(&start, _)| start)
            .collect();
        for start in overlapping {
            self.write_back(start)?;
            self.drop_buffer(start);
        }
        Ok(())
    }

    /// Makes room for `len` more bytes, evicting the least recently used
    /// blocks (written back first if dirty). False when `len` cannot fit.
    fn make_room(&mut self, len: usize) -> Result<bool> {
        if len > self.capacity {
            return Ok(false);
        }
        while self.held + len > self.capacity {
            let (_, &oldest) = self.by_use.iter().next().expect("held bytes are in blocks");
            self.write_back(oldest)?;
            self.drop_buffer(oldest);
            self.stats.evicted += 1;
        }
        Ok(true)
    }

    /// Keeps `data` as block `at`.
    fn insert(&mut self, at: u64, data: Vec<u8>, dirty: bool) {
        self.held += data.len();
        let buffer = Buffer {
            data,
            dirty_since: dirty.then_some(self.now),
            used: u64::MAX,
        };
        self.buffers.insert(at, buffer);
        self.touch(at);
    }
}

impl<D: BlockDevice> BlockDevice for Cache<D> {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()> {
        let len = buf.len() as u64;
        let at = block * len;
        if let Some(buffer) = self.buffers.get(&at)
            && buffer.data.len() == buf.len()
        {
            buf.copy_from_slice(&buffer.data);
            self.stats.hits += 1;
            self.touch(at);
            return Ok(());
        }
        self.stats.misses += 1;
        self.drop_overlapping(at, len)?;
        self.dev.read(block, buf)?;
        if len <= MAX_BLOCK && self.make_room(buf.len())? {
            self.insert(at, buf.to_vec(), false);
        }
        Ok(())
    }

    fn write(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        let len = buf.len() as u64;
        let at = block * len;
        if let Some(buffer) = self.buffers.get_mut(&at)
            && buffer.data.len() == buf.len()
        {
            buffer.data.copy_from_slice(buf);
            if buffer.dirty_since.is_none() {
                buffer.dirty_since = Some(self.now);
            }
            self.touch(at);
            return Ok(());
        }
        self.drop_overlapping(at, len)?;
        if len <= MAX_BLOCK && self.make_room(buf.len())? {
            self.insert(at, buf.to_vec(), true);
            Ok(())
        } else {
            self.dev.write(block, buf)
        }
    }

    fn size(&self) -> Option<u64> {
        self.dev.size()
    }

    /// Writes every dirty block, in block order, then flushes the device.
    fn flush(&mut self) -> Result<()> {
        let dirty: Vec<u64> = self
            .buffers
            .iter()
            .filter(|(_, b)| b.dirty_since.is_some())
            .map(|(&at, _)| at)
            .collect();
        for at in dirty {
            self.write_back(at)?;
        }
        self.dev.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext2::Error;
    use abi::Errno;
    use std::vec;

    /// A disk in memory that records what reached it.
    #[derive(Default)]
    struct Disk {
        bytes: Vec<u8>,
        writes: Vec<(u64, usize)>,
        flushes: usize,
        reads: usize,
        fail_writes: bool,
    }

    impl Disk {
        fn new(len: usize) -> Disk {
            Disk {
                bytes: (0..len).map(|i| (i % 251) as u8).collect(),
                ..Disk::default()
            }
        }
    }

    impl BlockDevice for Disk {
        fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()> {
            let at = block as usize * buf.len();
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            self.reads += 1;
            Ok(())
        }
        fn write(&mut self, block: u64, buf: &[u8]) -> Result<()> {
            if self.fail_writes {
                return Err(Error::Sys(Errno::EIO));
            }
            let at = block as usize * buf.len();
            self.bytes[at..at + buf.len()].copy_from_slice(buf);
            self.writes.push((at as u64, buf.len()));
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            self.flushes += 1;
            Ok(())
        }
    }

    #[test]
    fn a_read_twice_reads_the_disk_once() {
        let mut c = Cache::new(Disk::new(64 * 1024), 16 * 1024);
        let mut a = vec![0; 1024];
        let mut b = vec![0; 1024];
        c.read(3, &mut a).unwrap();
        c.read(3, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c.dev.bytes[3072..4096]);
        assert_eq!(c.dev.reads, 1);
        assert_eq!((c.stats.hits, c.stats.misses), (1, 1));
    }

    #[test]
    fn a_write_waits_for_flush_and_then_is_on_the_disk() {
        let mut c = Cache::new(Disk::new(64 * 1024), 16 * 1024);
        c.write(2, &[7; 1024]).unwrap();
        assert!(c.dev.writes.is_empty(), "write-back, not write-through");
        let mut back = vec![0; 1024];
        c.read(2, &mut back).unwrap();
        assert_eq!(back, [7; 1024], "a read sees the write at once");
        assert_eq!(c.held(), (1024, 1024));
        c.flush().unwrap();
        assert_eq!(c.dev.writes, [(2048, 1024)]);
        assert_eq!(c.dev.flushes, 1);
        assert_eq!(&c.dev.bytes[2048..3072], &[7; 1024]);
        assert_eq!(c.held(), (1024, 0), "kept, clean");
        c.flush().unwrap();
        assert_eq!(c.dev.writes.len(), 1, "a clean block is not written again");
    }

    #[test]
    fn flush_writes_in_block_order_before_the_device_flush() {
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        for block in [9, 1, 5] {
            c.write(block, &[block as u8; 1024]).unwrap();
        }
        c.flush().unwrap();
        let order: Vec<u64> = c.dev.writes.iter().map(|w| w.0 / 1024).collect();
        assert_eq!(order, [1, 5, 9]);
    }

    #[test]
    fn the_least_recently_used_block_goes_first_and_dirty_ones_are_written() {
        let mut c = Cache::new(Disk::new(64 * 1024), 3 * 1024);
        let mut buf = vec![0; 1024];
        c.write(0, &[1; 1024]).unwrap();
        c.read(1, &mut buf).unwrap();
        c.read(2, &mut buf).unwrap();
        c.read(0, &mut buf).unwrap(); // 0 is now the most recent
        c.read(3, &mut buf).unwrap(); // evicts 1, the least recent
        assert_eq!(c.stats.evicted, 1);
        let reads = c.dev.reads;
        c.read(0, &mut buf).unwrap();
        assert_eq!(c.dev.reads, reads, "0 was kept");
        c.read(1, &mut buf).unwrap();
        assert_eq!(c.dev.reads, reads + 1, "1 was given up");
        // Reading 1 evicted 2; then 4 evicts 0, which is dirty: written.
        c.read(4, &mut buf).unwrap();
        c.read(5, &mut buf).unwrap();
        assert_eq!(c.dev.writes, [(0, 1024)]);
        assert_eq!(&c.dev.bytes[..1024], &[1; 1024]);
    }

    #[test]
    fn the_flusher_writes_only_blocks_older_than_the_limit() {
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        c.set_now(100);
        c.write(1, &[1; 1024]).unwrap();
        c.set_now(2900);
        c.write(2, &[2; 1024]).unwrap();
        c.write(1, &[3; 1024]).unwrap(); // still dirty since 100
        c.set_now(3100);
        assert_eq!(c.write_back_older_than(3000).unwrap(), 1);
        assert_eq!(c.dev.writes, [(1024, 1024)]);
        assert_eq!(&c.dev.bytes[1024..2048], &[3; 1024]);
        assert_eq!(c.dev.flushes, 0, "nobody waits on the flusher");
        c.set_now(6000);
        assert_eq!(c.write_back_older_than(3000).unwrap(), 1);
        assert_eq!(c.held(), (2048, 0));
    }

    #[test]
    fn shrink_gives_back_clean_blocks_only() {
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        let mut buf = vec![0; 1024];
        c.read(0, &mut buf).unwrap();
        c.write(1, &[9; 1024]).unwrap();
        c.read(2, &mut buf).unwrap();
        assert_eq!(c.shrink(usize::MAX), 2048);
        assert_eq!(c.held(), (1024, 1024), "the dirty block stays");
        assert!(c.dev.writes.is_empty());
    }

    #[test]
    fn blocks_of_two_sizes_never_keep_the_same_byte_twice() {
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        // The superblock read in 1 KiB (block 1), then its 4 KiB block 0
        // written: the 1 KiB copy must not answer the next read.
        let mut small = vec![0; 1024];
        c.read(1, &mut small).unwrap();
        c.write(0, &[4; 4096]).unwrap();
        c.read(1, &mut small).unwrap();
        assert_eq!(small, [4; 1024]);
        // And a dirty 1 KiB block reaches the disk before a 4 KiB read of
        // the block holding it.
        c.write(5, &[5; 1024]).unwrap();
        let mut big = vec![0; 4096];
        c.read(1, &mut big).unwrap();
        assert_eq!(&big[1024..2048], &[5; 1024]);
    }

    #[test]
    fn a_cache_too_small_for_a_block_writes_through() {
        let mut c = Cache::new(Disk::new(64 * 1024), 0);
        c.write(3, &[3; 1024]).unwrap();
        assert_eq!(c.dev.writes, [(3072, 1024)]);
        assert_eq!(c.held(), (0, 0));
    }

    #[test]
    fn a_failed_write_back_keeps_the_block_dirty() {
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        c.write(1, &[1; 1024]).unwrap();
        c.dev.fail_writes = true;
        assert_eq!(c.flush(), Err(Error::Sys(Errno::EIO)));
        assert_eq!(c.held(), (1024, 1024));
        c.dev.fail_writes = false;
        c.flush().unwrap();
        assert_eq!(&c.dev.bytes[1024..2048], &[1; 1024]);
    }
}
