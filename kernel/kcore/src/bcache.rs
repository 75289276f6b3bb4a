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
//!   durable. fsync, sync and the journal's commit rest on this. The one
//!   exception is a block dirty only with a committed transaction's home
//!   copy ([`BlockDevice::write_logged`]): the log holds it durable
//!   already, so it waits for the journal's checkpoint
//!   ([`BlockDevice::flush_all`]), the flusher or eviction, and an fsync
//!   does not write the blocks of every commit before it again.
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
//! Blocks move to and from the disk in runs: a write-back takes the dirty
//! blocks that follow the one it writes along with it, and
//! [`BlockDevice::read_ahead`] reads the blocks a reader will want next
//! that are missing, in as few requests as the disk allows. A disk's cost
//! is mostly per request, not per byte.
//!
//! Blocks are kept by their byte offset and length, since the file system
//! reads its superblock in 1 KiB before it knows its block size: an access
//! that overlaps kept blocks of another size writes those back and drops
//! them first, so no byte is ever kept twice.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use crate::ext2::{BlockDevice, Result};

/// The longest block kept: an access longer than this goes to the disk.
const MAX_BLOCK: u64 = 64 * 1024;
/// The most bytes one write-back or read-ahead moves at once.
const MAX_RUN: usize = 1024 * 1024;

struct Buffer {
    data: Vec<u8>,
    /// When it first became dirty since it was last written back; None
    /// when the disk holds what it holds.
    dirty_since: Option<u64>,
    /// The use stamp of its last access (the key in `by_use`).
    used: u64,
    /// Dirty only with what the journal holds durable
    /// ([`BlockDevice::write_logged`]): `flush` may leave it.
    logged: bool,
}

/// Counts for `/proc` and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    /// Dirty blocks written to the disk, for any of the three reasons.
    pub written_back: u64,
    pub evicted: u64,
    /// Blocks read before anyone asked for them (`read_ahead`).
    pub read_ahead: u64,
    /// Writes to the disk (each a run of one block or more).
    pub runs_written: u64,
}

/// A write-back cache of up to `capacity` bytes of device `D`'s blocks.
pub struct Cache<D: BlockDevice> {
    pub dev: D,
    /// Kept blocks by byte offset.
    buffers: BTreeMap<u64, Buffer>,
    /// Byte offsets by use stamp, least recently used first.
    by_use: BTreeMap<u64, u64>,
    /// The dirty blocks, oldest first: (dirty since, byte offset). The
    /// flusher's pass, made at every operation, looks only at the old end
    /// of it rather than at every kept block.
    dirty: BTreeSet<(u64, u64)>,
    next_use: u64,
    /// Where a read-ahead's run lands before its blocks are kept: kept
    /// from one run to the next (up to `MAX_RUN` bytes), since a fresh
    /// zeroed megabyte for each was a tenth of a long read's time.
    run: Vec<u8>,
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
            dirty: BTreeSet::new(),
            next_use: 0,
            run: Vec::new(),
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
    /// flusher's pass), with the dirty blocks that follow each on the disk;
    /// how many blocks it wrote. Does not flush the device: nothing waits
    /// on these writes.
    pub fn write_back_older_than(&mut self, age: u64) -> Result<usize> {
        let limit = self.now.saturating_sub(age);
        let old: Vec<u64> = self
            .dirty
            .range(..(limit + 1, 0))
            .map(|&(_, at)| at)
            .collect();
        let mut written = 0;
        for &at in &old {
            written += self.write_back(at)?;
        }
        Ok(written)
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

    /// Writes block `at` to the disk if it is dirty, and with it the dirty
    /// blocks of its size that follow it on the disk, up to `MAX_RUN`
    /// bytes, in one write; how many blocks it wrote.
    fn write_back(&mut self, at: u64) -> Result<usize> {
        let buffer = self.buffers.get(&at).expect("a kept block");
        if buffer.dirty_since.is_none() {
            return Ok(0);
        }
        let len = buffer.data.len();
        let mut run = alloc::vec![at];
        while run.len() * len < MAX_RUN {
            let next = at + (run.len() * len) as u64;
            match self.buffers.get(&next) {
                Some(b) if b.data.len() == len && b.dirty_since.is_some() => run.push(next),
                _ => break,
            }
        }
        let first = at / len as u64;
        if let [only] = run[..] {
            self.dev.write(first, &self.buffers[&only].data)?;
        } else {
            let mut bytes = Vec::with_capacity(run.len() * len);
            for at in &run {
                bytes.extend_from_slice(&self.buffers[at].data);
            }
            self.dev.write_run(first, len, &bytes)?;
        }
        for &at in &run {
            self.mark_clean(at);
        }
        self.stats.written_back += run.len() as u64;
        self.stats.runs_written += 1;
        Ok(run.len())
    }

    /// Marks block `at` dirty as of now, if it was clean.
    /// A `logged` change is one the journal holds durable: the block
    /// stays one `flush` may leave only while every change since it was
    /// last written is.
    fn mark_dirty(&mut self, at: u64, logged: bool) {
        let buffer = self.buffers.get_mut(&at).expect("a kept block");
        if buffer.dirty_since.is_none() {
            buffer.dirty_since = Some(self.now);
            buffer.logged = logged;
            self.dirty.insert((self.now, at));
        } else {
            buffer.logged &= logged;
        }
    }

    /// Marks block `at` clean: the disk holds what it holds.
    fn mark_clean(&mut self, at: u64) {
        let buffer = self.buffers.get_mut(&at).expect("a kept block");
        if let Some(since) = buffer.dirty_since.take() {
            self.dirty.remove(&(since, at));
        }
        buffer.logged = false;
    }

    /// Forgets block `at` (written back or clean); its size.
    fn drop_buffer(&mut self, at: u64) -> usize {
        let buffer = self.buffers.remove(&at).expect("a kept block");
        if let Some(since) = buffer.dirty_since {
            self.dirty.remove(&(since, at));
        }
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

    /// Keeps `data` as block `at`, clean.
    fn insert(&mut self, at: u64, data: Vec<u8>) {
        self.held += data.len();
        let buffer = Buffer {
            data,
            dirty_since: None,
            used: u64::MAX,
            logged: false,
        };
        self.buffers.insert(at, buffer);
        self.touch(at);
    }

    /// `write` and `write_logged`: keeps the block dirty, or writes it
    /// through when it cannot be kept.
    fn write_kept(&mut self, block: u64, buf: &[u8], logged: bool) -> Result<()> {
        let len = buf.len() as u64;
        let at = block * len;
        if let Some(buffer) = self.buffers.get_mut(&at)
            && buffer.data.len() == buf.len()
        {
            buffer.data.copy_from_slice(buf);
            self.mark_dirty(at, logged);
            self.touch(at);
            return Ok(());
        }
        self.drop_overlapping(at, len)?;
        if len <= MAX_BLOCK && self.make_room(buf.len())? {
            self.insert(at, buf.to_vec());
            self.mark_dirty(at, logged);
            Ok(())
        } else {
            self.dev.write(block, buf)
        }
    }

    /// Writes every dirty block `flush` must (`all`: the logged ones
    /// too), in block order, then flushes the device.
    fn flush_dirty(&mut self, all: bool) -> Result<()> {
        let mut dirty: Vec<u64> = self
            .dirty
            .iter()
            .map(|&(_, at)| at)
            .filter(|at| all || !self.buffers[at].logged)
            .collect();
        dirty.sort_unstable();
        for at in dirty {
            self.write_back(at)?;
        }
        self.dev.flush()
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
            self.insert(at, buf.to_vec());
        }
        Ok(())
    }

    fn write(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        self.write_kept(block, buf, false)
    }

    fn write_logged(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        self.write_kept(block, buf, true)
    }

    fn size(&self) -> Option<u64> {
        self.dev.size()
    }

    fn has_block(&self, block: u64, block_len: usize) -> bool {
        self.buffers
            .get(&(block * block_len as u64))
            .is_some_and(|b| b.data.len() == block_len)
    }

    /// Reads the missing blocks of `first..first + count` in runs of up to
    /// `MAX_RUN` bytes and keeps them. At most a quarter of the cache is
    /// read ahead at once, so a reader's next blocks never push out most
    /// of what others use.
    fn read_ahead(&mut self, first: u64, count: usize, block_len: usize) -> Result<()> {
        if block_len == 0 || block_len as u64 > MAX_BLOCK {
            return Ok(());
        }
        let count = count.min(self.capacity / 4 / block_len) as u64;
        let missing = |cache: &Self, block: u64| !cache.has_block(block, block_len);
        let mut block = first;
        while block < first + count {
            if !missing(self, block) {
                block += 1;
                continue;
            }
            let mut n = 1;
            while block + n < first + count
                && (n as usize + 1) * block_len <= MAX_RUN
                && missing(self, block + n)
            {
                n += 1;
            }
            let at = block * block_len as u64;
            self.drop_overlapping(at, n * block_len as u64)?;
            let len = n as usize * block_len;
            let mut bytes = core::mem::take(&mut self.run);
            if bytes.len() < len {
                bytes.resize(len, 0);
            }
            self.dev.read_run(block, block_len, &mut bytes[..len])?;
            for (i, data) in bytes[..len].chunks(block_len).enumerate() {
                if !self.make_room(block_len)? {
                    return Ok(());
                }
                self.insert(at + (i * block_len) as u64, data.to_vec());
                self.stats.read_ahead += 1;
            }
            self.run = bytes;
            block += n;
        }
        Ok(())
    }

    /// Writes every dirty block but those only the journal's checkpoint
    /// waits for, in block order, then flushes the device.
    fn flush(&mut self) -> Result<()> {
        self.flush_dirty(false)
    }

    /// Writes every dirty block, in block order, then flushes the device.
    fn flush_all(&mut self) -> Result<()> {
        self.flush_dirty(true)
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
        /// A run is one write (one entry in `writes`), as a disk's request.
        fn write_run(&mut self, first: u64, block_len: usize, buf: &[u8]) -> Result<()> {
            if self.fail_writes {
                return Err(Error::Sys(Errno::EIO));
            }
            let at = first as usize * block_len;
            self.bytes[at..at + buf.len()].copy_from_slice(buf);
            self.writes.push((at as u64, buf.len()));
            Ok(())
        }
        fn read_run(&mut self, first: u64, block_len: usize, buf: &mut [u8]) -> Result<()> {
            let at = first as usize * block_len;
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            self.reads += 1;
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
    fn a_logged_block_waits_for_flush_all_unless_written_plainly_since() {
        let mut c = Cache::new(Disk::new(64 * 1024), 16 * 1024);
        c.write_logged(2, &[7; 1024]).unwrap();
        c.write(5, &[8; 1024]).unwrap();
        c.flush().unwrap();
        assert_eq!(c.dev.writes, [(5 * 1024, 1024)], "only the plain write");
        assert_eq!(c.held().1, 1024, "the logged block is still dirty");
        // A plain write over a logged one must reach the disk at a flush.
        c.write_logged(3, &[9; 1024]).unwrap();
        c.write(3, &[10; 1024]).unwrap();
        c.flush().unwrap();
        assert_eq!(c.dev.writes[1..], [(3 * 1024, 1024)]);
        c.flush_all().unwrap();
        assert_eq!(c.dev.writes[2..], [(2 * 1024, 1024)]);
        assert_eq!(c.dev.bytes[2048..3072], [7; 1024]);
        assert_eq!(c.held().1, 0);
        assert_eq!(c.dev.flushes, 3);
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
        c.write(3, &[2; 1024]).unwrap();
        c.write(1, &[3; 1024]).unwrap(); // still dirty since 100
        c.set_now(3100);
        assert_eq!(c.write_back_older_than(3000).unwrap(), 1);
        assert_eq!(c.dev.writes, [(1024, 1024)]);
        assert_eq!(&c.dev.bytes[1024..2048], &[3; 1024]);
        assert_eq!(c.dev.flushes, 0, "nobody waits on the flusher");
        c.set_now(6000);
        assert_eq!(c.write_back_older_than(3000).unwrap(), 1);
        assert_eq!(c.held(), (2048, 0));
        // A young block right after an old one goes along in its write.
        c.write(5, &[5; 1024]).unwrap();
        c.set_now(9000);
        c.write(6, &[6; 1024]).unwrap();
        assert_eq!(c.write_back_older_than(3000).unwrap(), 2);
        assert_eq!(c.dev.writes.last(), Some(&(5 * 1024, 2048)));
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

    #[test]
    fn dirty_neighbours_go_to_the_disk_as_one_write() {
        let mut c = Cache::new(Disk::new(2 << 20), 2 << 20);
        for block in [4, 2, 3, 7, 5] {
            c.write(block, &[block as u8; 1024]).unwrap();
        }
        c.flush().unwrap();
        assert_eq!(
            c.dev.writes,
            [(2048, 4 * 1024), (7168, 1024)],
            "blocks 2 to 5 in one write, 7 alone"
        );
        assert_eq!(&c.dev.bytes[5120..6144], &[5; 1024]);
        assert_eq!((c.stats.written_back, c.stats.runs_written), (5, 2));
        // A run stops at MAX_RUN bytes.
        for block in 0..1100 {
            c.write(block, &[1; 1024]).unwrap();
        }
        c.dev.writes.clear();
        c.flush().unwrap();
        assert_eq!(
            c.dev.writes,
            [(0, MAX_RUN), (MAX_RUN as u64, 1100 * 1024 - MAX_RUN)]
        );
    }

    #[test]
    fn read_ahead_reads_only_the_missing_blocks_in_runs() {
        let mut c = Cache::new(Disk::new(512 * 1024), 256 * 1024);
        let mut buf = vec![0; 1024];
        c.read(3, &mut buf).unwrap();
        c.write(5, &[9; 1024]).unwrap();
        c.dev.reads = 0;
        c.read_ahead(0, 8, 1024).unwrap();
        assert_eq!(c.dev.reads, 3, "0-2, 4 and 6-7: three runs around 3 and 5");
        assert_eq!(c.stats.read_ahead, 6);
        for block in 0..8 {
            assert!(c.has_block(block, 1024));
            c.read(block, &mut buf).unwrap();
            let expect: Vec<u8> = if block == 5 {
                vec![9; 1024]
            } else {
                (block as usize * 1024..(block as usize + 1) * 1024)
                    .map(|i| (i % 251) as u8)
                    .collect()
            };
            assert_eq!(buf, expect, "block {block}");
        }
        assert_eq!(c.dev.reads, 3, "every read after it hit");
        assert!(!c.has_block(8, 1024));
        assert!(!c.has_block(0, 4096), "kept in 1 KiB blocks, not 4 KiB");
        // Never more than a quarter of the cache at once.
        c.read_ahead(100, 1000, 1024).unwrap();
        assert_eq!(c.stats.read_ahead, 6 + 64);
    }

    /// The cache's own bookkeeping agrees with its blocks.
    fn assert_consistent(c: &Cache<Disk>) {
        let dirty: BTreeSet<(u64, u64)> = c
            .buffers
            .iter()
            .filter_map(|(&at, b)| b.dirty_since.map(|t| (t, at)))
            .collect();
        assert_eq!(c.dirty, dirty, "the dirty set is the dirty blocks");
        let held: usize = c.buffers.values().map(|b| b.data.len()).sum();
        assert_eq!(c.held, held);
        assert!(c.held <= c.capacity);
        assert_eq!(c.by_use.len(), c.buffers.len());
    }

    #[test]
    fn random_use_keeps_the_books_and_the_bytes_right() {
        let mut c = Cache::new(Disk::new(256 * 1024), 24 * 1024);
        let mut model = c.dev.bytes.clone();
        let mut x: u64 = 0x1234_5678;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for step in 0..4000u64 {
            c.set_now(step / 10);
            let block = next(64);
            let mut buf = vec![0; 1024];
            match next(7) {
                0 | 1 => {
                    c.read(block, &mut buf).unwrap();
                    let at = block as usize * 1024;
                    assert_eq!(buf, model[at..at + 1024], "step {step}");
                }
                2 | 3 => {
                    let byte = step as u8;
                    c.write(block, &[byte; 1024]).unwrap();
                    let at = block as usize * 1024;
                    model[at..at + 1024].fill(byte);
                }
                4 => c.read_ahead(block, next(40) as usize, 1024).unwrap(),
                5 => {
                    c.write_back_older_than(next(20)).unwrap();
                }
                _ => match next(3) {
                    0 => c.flush().unwrap(),
                    1 => {
                        c.shrink(next(8 * 1024) as usize);
                    }
                    _ => c.invalidate().unwrap(),
                },
            }
            assert_consistent(&c);
        }
        c.flush().unwrap();
        assert!(c.dev.bytes == model, "the disk holds every write");
    }
}
