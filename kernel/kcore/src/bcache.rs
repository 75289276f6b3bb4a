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
//! - [`BlockDevice::flush`] writes every dirty block, in block order and
//!   in runs handed to the disk together ([`BlockDevice::write_runs`]),
//!   and then flushes the device: when it returns, every write before it
//!   is durable. fsync, sync and the journal's commit rest on this. The one
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
//! [`BlockDevice::prefetch`] does not wait: it starts reads of the blocks
//! a reader will want after those ([`BlockDevice::start_read`]) and
//! returns, so the disk reads the next stretch of a file while the reader
//! copies this one. Such a read is *in flight*: its blocks count as kept
//! (`has_block`), and the first access that touches one of them lands
//! the read, waiting for it if the disk is not done, and keeps its
//! blocks. Landing one starts what the reader wanted next that the
//! device had no room to start before, so the disk always has the next
//! stretch to read while the reader is still going.
//!
//! Blocks are kept by their byte offset and length, since the file system
//! reads its superblock in 1 KiB before it knows its block size: an access
//! that overlaps kept blocks of another size writes those back and drops
//! them first, so no byte is ever kept twice.

use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::vec::Vec;

use crate::ext2::{BlockDevice, Result, Run};

/// The longest block kept: an access longer than this goes to the disk.
const MAX_BLOCK: u64 = 64 * 1024;
/// The most bytes one write-back or read-ahead moves at once.
const MAX_RUN: usize = 1024 * 1024;
/// The most bytes one prefetch read moves: one request of the disks this
/// kernel drives, so that each lands as soon as its own request is done.
const FLIGHT: usize = 64 * 1024;
/// The most bytes of dirty runs handed to the disk at once: enough to
/// keep every request slot of a disk busy.
const WRITE_BATCH: usize = 4 * MAX_RUN;

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

/// A read [`BlockDevice::prefetch`] started and nobody has landed yet:
/// `count` blocks of `block_len` bytes, the device's ticket, and when it
/// started.
struct Flight {
    block_len: usize,
    count: usize,
    ticket: u64,
    since: u64,
}

impl Flight {
    fn bytes(&self) -> u64 {
        (self.count * self.block_len) as u64
    }
}

/// Counts for `/proc` and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    /// Dirty blocks written to the disk, for any of the three reasons.
    pub written_back: u64,
    pub evicted: u64,
    /// Blocks read before anyone asked for them (`read_ahead`, and
    /// `prefetch` once landed).
    pub read_ahead: u64,
    /// Reads `prefetch` started (each lands later).
    pub prefetches: u64,
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
    /// The reads in flight, by the byte offset of their first block. They
    /// never overlap each other or a kept block.
    flights: BTreeMap<u64, Flight>,
    /// What `prefetch` was asked for and could not start yet: (first
    /// block, count, block length), oldest first, at most `capacity / 4`
    /// bytes.
    wanted: VecDeque<(u64, usize, usize)>,
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
            flights: BTreeMap::new(),
            wanted: VecDeque::new(),
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

    /// Writes back every block dirty for `age` or longer (since `now -
    /// age` or before: the flusher's pass), with the dirty blocks that
    /// follow each on the disk; how many blocks it wrote. Does not flush
    /// the device: nothing waits on these writes. Before `age` has passed
    /// since time 0, no block is that old.
    pub fn write_back_older_than(&mut self, age: u64) -> Result<usize> {
        let Some(limit) = self.now.checked_sub(age) else {
            return Ok(0);
        };
        let old: Vec<u64> = self
            .dirty
            .range(..(limit + 1, 0))
            .map(|&(_, at)| at)
            .collect();
        self.write_back_all(&old)
    }

    /// Lands the reads in flight started before `now - age`, and forgets
    /// what `prefetch` still wanted: a reader that stopped must not keep
    /// the disk's request slots (the flusher's pass). How many it landed.
    pub fn land_older_than(&mut self, age: u64) -> usize {
        let limit = self.now.saturating_sub(age);
        let stale: Vec<u64> = self
            .flights
            .iter()
            .filter(|(_, f)| f.since < limit)
            .map(|(&at, _)| at)
            .collect();
        if !stale.is_empty() {
            self.wanted.clear();
        }
        for &at in &stale {
            // Only a hint was lost if it fails; a reader reads again.
            let _ = self.land(at);
        }
        stale.len()
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
        self.land_all();
        let all: Vec<u64> = self.buffers.keys().copied().collect();
        self.write_back_all(&all)?;
        for at in all {
            self.drop_buffer(at);
        }
        Ok(())
    }

    /// The first read in flight with a byte in `at..at + len`, if any.
    fn flight_over(&self, at: u64, len: u64) -> Option<u64> {
        if self.flights.is_empty() {
            return None;
        }
        let reach = at.saturating_sub(FLIGHT as u64 - 1);
        self.flights
            .range(reach..at + len)
            .find(|&(&start, f)| start + f.bytes() > at)
            .map(|(&start, _)| start)
    }

    /// The first run of blocks of `block_len` bytes in `from..end` that
    /// the cache lacks (`has_block`), up to `max_bytes` long: its first
    /// block and how many blocks. None when it has them all.
    fn next_missing_run(
        &self,
        from: u64,
        end: u64,
        block_len: usize,
        max_bytes: usize,
    ) -> Option<(u64, u64)> {
        let missing = |block: u64| !self.has_block(block, block_len);
        let block = (from..end).find(|&b| missing(b))?;
        let mut n = 1;
        while block + n < end && (n as usize + 1) * block_len <= max_bytes && missing(block + n) {
            n += 1;
        }
        Some((block, n))
    }

    /// The buffer runs are read into, at least `len` bytes long, kept from
    /// one run to the next: the caller puts it back in `self.run`.
    fn take_run_buffer(&mut self, len: usize) -> Vec<u8> {
        let mut bytes = core::mem::take(&mut self.run);
        if bytes.len() < len {
            bytes.resize(len, 0);
        }
        bytes
    }

    /// Keeps `bytes`, read from the disk, as the blocks of `block_len`
    /// bytes from byte `at` on, while the cache has room; whether it kept
    /// them all.
    fn keep_run(&mut self, at: u64, block_len: usize, bytes: &[u8]) -> Result<bool> {
        for (i, data) in bytes.chunks(block_len).enumerate() {
            if !self.make_room(block_len)? {
                return Ok(false);
            }
            self.insert(at + (i * block_len) as u64, data.to_vec());
            self.stats.read_ahead += 1;
        }
        Ok(true)
    }

    /// Lands the read in flight at `start`: waits for it if the device is
    /// not done, keeps its blocks (those there is room for), and starts
    /// what `prefetch` still wants in the slot it leaves. An error loses
    /// only the read: its blocks stay missing, and whoever needs one reads
    /// it and reports the error then.
    fn land(&mut self, start: u64) -> Result<()> {
        let flight = self.flights.remove(&start).expect("a read in flight");
        let len = flight.bytes() as usize;
        let mut bytes = self.take_run_buffer(len);
        let landed = self.dev.finish_read(flight.ticket, &mut bytes[..len]);
        let landed = landed.and_then(|()| self.keep_run(start, flight.block_len, &bytes[..len]));
        self.run = bytes;
        self.start_wanted();
        landed.map(|_| ())
    }

    /// Lands every read in flight with a byte in `at..at + len`, so that
    /// what the caller does next there sees the disk's bytes kept.
    fn land_overlapping(&mut self, at: u64, len: u64) {
        while let Some(start) = self.flight_over(at, len) {
            // The read is gone either way; its error is reported by
            // whoever reads its blocks again.
            let _ = self.land(start);
        }
    }

    /// Lands every read in flight, and forgets what `prefetch` wanted.
    fn land_all(&mut self) {
        self.wanted.clear();
        while let Some((&start, _)) = self.flights.first_key_value() {
            let _ = self.land(start);
        }
    }

    /// Starts reads of what `prefetch` wanted, oldest first, in runs of
    /// missing blocks of up to `FLIGHT` bytes, until the device has no
    /// room for more (the rest waits for the next landing) or nothing is
    /// left.
    fn start_wanted(&mut self) {
        while let Some(&(first, count, block_len)) = self.wanted.front() {
            let end = first + count as u64;
            let Some((block, n)) = self.next_missing_run(first, end, block_len, FLIGHT) else {
                self.wanted.pop_front();
                continue;
            };
            let at = block * block_len as u64;
            let len = n as usize * block_len;
            // A kept block of another size there would be kept twice.
            if self.overlaps_other_size(at, len as u64) {
                self.wanted[0] = (block + n, (end - block - n) as usize, block_len);
                continue;
            }
            let Some(ticket) = self.dev.start_read(block, block_len, len) else {
                self.wanted[0] = (block, (end - block) as usize, block_len);
                return;
            };
            self.flights.insert(
                at,
                Flight {
                    block_len,
                    count: n as usize,
                    ticket,
                    since: self.now,
                },
            );
            self.stats.prefetches += 1;
            self.wanted[0] = (block + n, (end - block - n) as usize, block_len);
        }
    }

    /// Whether a kept block of a size other than `len`'s shares a byte
    /// with `at..at + len`.
    fn overlaps_other_size(&self, at: u64, len: u64) -> bool {
        self.buffers
            .range(at.saturating_sub(MAX_BLOCK - 1)..at + len)
            .any(|(&start, b)| start + b.data.len() as u64 > at && b.data.len() as u64 != len)
    }

    /// Writes block `at` to the disk if it is dirty, and with it the dirty
    /// blocks of its size that follow it on the disk, up to `MAX_RUN`
    /// bytes, in one write; how many blocks it wrote.
    fn write_back(&mut self, at: u64) -> Result<usize> {
        self.write_back_all(&[at])
    }

    /// Writes back the dirty ones of `blocks`, each with the dirty blocks
    /// of its size that follow it on the disk (`dirty_run`), handing the
    /// disk up to `WRITE_BATCH` bytes of runs at once (`write_runs`), so
    /// that runs apart on it are written together; how many blocks it
    /// wrote. A block stays dirty until the write of its batch succeeded.
    fn write_back_all(&mut self, blocks: &[u64]) -> Result<usize> {
        let mut written = 0;
        let mut batch: Vec<Vec<u64>> = Vec::new();
        let mut taken = BTreeSet::new();
        let mut batch_bytes = 0;
        for &at in blocks {
            if taken.contains(&at) {
                continue;
            }
            let run = self.dirty_run(at, &taken);
            if run.is_empty() {
                continue;
            }
            batch_bytes += run.len() * self.buffers[&at].data.len();
            taken.extend(run.iter().copied());
            batch.push(run);
            if batch_bytes >= WRITE_BATCH {
                written += self.write_batch(&batch)?;
                batch.clear();
                taken.clear();
                batch_bytes = 0;
            }
        }
        written += self.write_batch(&batch)?;
        Ok(written)
    }

    /// Block `at`, if it is dirty, and the dirty blocks of its size that
    /// follow it on the disk and are not in `taken`, up to `MAX_RUN`
    /// bytes: what one write moves. Empty if `at` is clean.
    fn dirty_run(&self, at: u64, taken: &BTreeSet<u64>) -> Vec<u64> {
        let buffer = self.buffers.get(&at).expect("a kept block");
        if buffer.dirty_since.is_none() {
            return Vec::new();
        }
        let len = buffer.data.len();
        let mut run = alloc::vec![at];
        while run.len() * len < MAX_RUN {
            let next = at + (run.len() * len) as u64;
            match self.buffers.get(&next) {
                Some(b)
                    if b.data.len() == len && b.dirty_since.is_some() && !taken.contains(&next) =>
                {
                    run.push(next);
                }
                _ => break,
            }
        }
        run
    }

    /// Writes `runs` (from `dirty_run`) with one `write_runs` and marks
    /// their blocks clean; how many blocks that was.
    fn write_batch(&mut self, runs: &[Vec<u64>]) -> Result<usize> {
        if runs.is_empty() {
            return Ok(0);
        }
        let bytes: Vec<(u64, usize, Vec<u8>)> = runs
            .iter()
            .map(|run| {
                let len = self.buffers[&run[0]].data.len();
                let mut bytes = Vec::with_capacity(run.len() * len);
                for at in run {
                    bytes.extend_from_slice(&self.buffers[at].data);
                }
                (run[0] / len as u64, len, bytes)
            })
            .collect();
        let disk_runs: Vec<Run> = bytes
            .iter()
            .map(|(first, block_len, data)| Run {
                first: *first,
                block_len: *block_len,
                data,
            })
            .collect();
        self.dev.write_runs(&disk_runs)?;
        let mut blocks = 0;
        for run in runs {
            for &at in run {
                self.mark_clean(at);
            }
            blocks += run.len();
        }
        self.stats.written_back += blocks as u64;
        self.stats.runs_written += runs.len() as u64;
        Ok(blocks)
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
        self.land_overlapping(at, len);
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
        self.land_overlapping(at, len);
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
        self.write_back_all(&dirty)?;
        self.dev.flush()
    }
}

impl<D: BlockDevice> BlockDevice for Cache<D> {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()> {
        let len = buf.len() as u64;
        let at = block * len;
        self.land_overlapping(at, len);
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

    /// True also for a block in flight: it is on its way in.
    fn has_block(&self, block: u64, block_len: usize) -> bool {
        let at = block * block_len as u64;
        self.buffers
            .get(&at)
            .is_some_and(|b| b.data.len() == block_len)
            || self
                .flight_over(at, block_len as u64)
                .is_some_and(|start| self.flights[&start].block_len == block_len)
    }

    /// Reads the missing blocks of `first..first + count` in runs of up to
    /// `MAX_RUN` bytes and keeps them. At most a quarter of the cache is
    /// read ahead at once, so a reader's next blocks never push out most
    /// of what others use.
    fn read_ahead(&mut self, first: u64, count: usize, block_len: usize) -> Result<()> {
        if block_len == 0 || block_len as u64 > MAX_BLOCK {
            return Ok(());
        }
        let end = first + count.min(self.capacity / 4 / block_len) as u64;
        let mut from = first;
        while let Some((block, n)) = self.next_missing_run(from, end, block_len, MAX_RUN) {
            let at = block * block_len as u64;
            self.drop_overlapping(at, n * block_len as u64)?;
            let len = n as usize * block_len;
            let mut bytes = self.take_run_buffer(len);
            let read = self.dev.read_run(block, block_len, &mut bytes[..len]);
            let kept = read.and_then(|()| self.keep_run(at, block_len, &bytes[..len]));
            self.run = bytes;
            if !kept? {
                return Ok(());
            }
            from = block + n;
        }
        Ok(())
    }

    /// Asks for `first..first + count` after what is wanted already,
    /// forgetting the oldest wishes past a quarter of the cache, and
    /// starts what the device has room for.
    fn prefetch(&mut self, first: u64, count: usize, block_len: usize) {
        if block_len == 0 || block_len as u64 > MAX_BLOCK || count == 0 {
            return;
        }
        self.wanted.push_back((first, count, block_len));
        let bytes =
            |w: &VecDeque<(u64, usize, usize)>| w.iter().map(|&(_, n, l)| n * l).sum::<usize>();
        while self.wanted.len() > 1 && bytes(&self.wanted) > self.capacity / 4 {
            self.wanted.pop_front();
        }
        self.start_wanted();
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

/// A cache that goes lands its reads in flight first: every read a
/// device started must be finished (a disk's slot is held until then).
impl<D: BlockDevice> Drop for Cache<D> {
    fn drop(&mut self) {
        self.land_all();
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
        /// How many runs each `write_runs` brought: the runs a disk
        /// would have in flight together.
        batches: Vec<usize>,
        flushes: usize,
        reads: usize,
        fail_writes: bool,
        /// How many reads `start_read` keeps in flight at once (0: none).
        slots: usize,
        /// The reads in flight by ticket: where, and what the disk held
        /// when each started (a disk reads at some moment before the
        /// finish; the start is the one a stale copy would show).
        started: BTreeMap<u64, (usize, Vec<u8>)>,
        next_ticket: u64,
    }

    impl Disk {
        fn new(len: usize) -> Disk {
            Disk {
                bytes: (0..len).map(|i| (i % 251) as u8).collect(),
                ..Disk::default()
            }
        }

        /// One that keeps up to `slots` reads in flight.
        fn starting(len: usize, slots: usize) -> Disk {
            Disk {
                slots,
                ..Disk::new(len)
            }
        }

        /// A real disk may do a write and a read of the same bytes in
        /// either order: the cache must never ask it to.
        fn check_no_read_in_flight(&self, at: usize, len: usize) {
            for (start, bytes) in self.started.values() {
                assert!(
                    at + len <= *start || start + bytes.len() <= at,
                    "a write over a read in flight"
                );
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
            self.check_no_read_in_flight(at, buf.len());
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
            self.check_no_read_in_flight(at, buf.len());
            self.bytes[at..at + buf.len()].copy_from_slice(buf);
            self.writes.push((at as u64, buf.len()));
            Ok(())
        }
        fn write_runs(&mut self, runs: &[Run]) -> Result<()> {
            self.batches.push(runs.len());
            for run in runs {
                self.write_run(run.first, run.block_len, run.data)?;
            }
            Ok(())
        }
        fn read_run(&mut self, first: u64, block_len: usize, buf: &mut [u8]) -> Result<()> {
            let at = first as usize * block_len;
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            self.reads += 1;
            Ok(())
        }
        fn start_read(&mut self, first: u64, block_len: usize, len: usize) -> Option<u64> {
            if self.started.len() >= self.slots {
                return None;
            }
            let at = first as usize * block_len;
            let ticket = self.next_ticket;
            self.next_ticket += 1;
            self.started
                .insert(ticket, (at, self.bytes[at..at + len].to_vec()));
            self.reads += 1;
            Some(ticket)
        }
        fn finish_read(&mut self, ticket: u64, buf: &mut [u8]) -> Result<()> {
            let (_, bytes) = self.started.remove(&ticket).expect("a started read");
            buf.copy_from_slice(&bytes);
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
    fn a_flush_hands_the_disk_its_runs_together_a_batch_at_a_time() {
        let mut c = Cache::new(Disk::new(8 << 20), 8 << 20);
        // Three runs apart on the disk (a file's data, the log, ...).
        for block in [2, 3, 40, 90] {
            c.write(block, &[block as u8; 1024]).unwrap();
        }
        c.flush().unwrap();
        assert_eq!(c.dev.batches, [3], "one batch of three runs");
        assert_eq!(
            c.dev.writes,
            [(2048, 2048), (40 * 1024, 1024), (90 * 1024, 1024)]
        );
        assert_eq!(c.dev.flushes, 1);
        // Five runs of MAX_RUN: the disk gets WRITE_BATCH bytes at once.
        let block = vec![5; 4096];
        for b in 0..5 * MAX_RUN as u64 / 4096 {
            c.write(b, &block).unwrap();
        }
        c.flush().unwrap();
        let per_batch = WRITE_BATCH / MAX_RUN;
        assert_eq!(c.dev.batches[1..], [per_batch, 5 - per_batch]);
        assert_eq!(c.held().1, 0);
    }

    #[test]
    fn a_batch_that_fails_leaves_its_blocks_dirty() {
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        c.write(2, &[7; 1024]).unwrap();
        c.write(9, &[8; 1024]).unwrap();
        c.dev.fail_writes = true;
        assert!(c.flush().is_err());
        assert_eq!(c.held().1, 2048, "both still dirty");
        c.dev.fail_writes = false;
        c.flush().unwrap();
        assert_eq!(c.dev.bytes[2048..3072], [7; 1024]);
        assert_eq!(c.dev.bytes[9 * 1024..10 * 1024], [8; 1024]);
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
    fn no_block_is_old_before_the_age_limit_has_passed_since_time_0() {
        // A kernel's clock starts at boot: in its first seconds, a block
        // dirtied at second 0 is young, not older than any limit.
        let mut c = Cache::new(Disk::new(64 * 1024), 64 * 1024);
        c.write(1, &[1; 1024]).unwrap();
        c.set_now(5);
        assert_eq!(c.write_back_older_than(30).unwrap(), 0);
        assert!(c.dev.writes.is_empty());
        c.set_now(30);
        assert_eq!(c.write_back_older_than(30).unwrap(), 1);
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

    #[test]
    fn a_prefetch_starts_what_the_disk_has_room_for_and_the_rest_as_reads_land() {
        let mut c = Cache::new(Disk::starting(1024 * 1024, 2), 512 * 1024);
        // 48 blocks of 4 KiB: three reads of 64 KiB, room for two at once.
        c.prefetch(0, 48, 4096);
        assert_eq!((c.dev.started.len(), c.stats.prefetches), (2, 2));
        assert!(c.has_block(31, 4096), "in flight counts as kept");
        assert!(!c.has_block(32, 4096), "not started yet");
        assert_eq!(c.held().0, 0, "nothing landed yet");
        let mut buf = vec![0; 4096];
        c.read(5, &mut buf).unwrap();
        assert_eq!(buf, c.dev.bytes[5 * 4096..6 * 4096]);
        assert_eq!(c.stats.prefetches, 3, "the landing started the third");
        assert_eq!(c.held().0, 16 * 4096, "the first read's blocks are kept");
        for block in 16..48 {
            c.read(block, &mut buf).unwrap();
        }
        assert_eq!(c.dev.reads, 3, "every block came with the three reads");
        assert!(c.dev.started.is_empty());
        assert_eq!((c.stats.misses, c.stats.read_ahead), (0, 48));
    }

    #[test]
    fn a_write_over_a_block_in_flight_waits_for_the_read_and_wins() {
        let mut c = Cache::new(Disk::starting(1024 * 1024, 4), 512 * 1024);
        c.prefetch(0, 16, 4096);
        c.write(3, &[7; 4096]).unwrap();
        assert!(c.dev.started.is_empty(), "the read landed first");
        let mut buf = vec![0; 4096];
        c.read(3, &mut buf).unwrap();
        assert_eq!(buf, [7; 4096]);
        c.prefetch(16, 16, 4096);
        c.invalidate().unwrap();
        assert!(c.dev.started.is_empty(), "invalidate lands every read");
    }

    #[test]
    fn reads_nobody_came_for_are_landed_by_the_flusher() {
        let mut c = Cache::new(Disk::starting(1024 * 1024, 1), 512 * 1024);
        c.set_now(10);
        c.prefetch(0, 32, 4096);
        assert_eq!(c.dev.started.len(), 1, "one read; the second wanted");
        c.set_now(11);
        assert_eq!(c.land_older_than(1), 0, "a second old: maybe still wanted");
        c.set_now(12);
        assert_eq!(c.land_older_than(1), 1);
        assert!(
            c.dev.started.is_empty(),
            "the slot is free, nothing started in it"
        );
        assert!(c.has_block(15, 4096) && !c.has_block(16, 4096));
    }

    #[test]
    fn a_landing_that_cannot_make_room_still_starts_the_next_read() {
        let mut c = Cache::new(Disk::starting(1024 * 1024, 1), 8 * 1024);
        c.write(0, &[1; 1024]).unwrap();
        c.dev.fail_writes = true; // block 0 cannot be evicted
        c.prefetch(10, 100, 1024);
        assert_eq!(c.flights.keys().copied().collect::<Vec<_>>(), [10 * 1024]);
        // Landing keeps 7 blocks, then eviction fails on block 0.
        let mut buf = vec![0; 1024];
        c.read(10, &mut buf).unwrap();
        assert_eq!(buf, c.dev.bytes[10 * 1024..11 * 1024]);
        assert_eq!(
            c.flights.keys().copied().collect::<Vec<_>>(),
            [74 * 1024],
            "the slot the landing freed reads what was wanted next"
        );
        assert_eq!(c.run.len(), FLIGHT, "the run buffer is kept");
        assert_consistent(&c);
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
        assert_eq!(
            c.flights.len(),
            c.dev.started.len(),
            "every read in flight is known"
        );
        let mut end = 0;
        for (&at, f) in &c.flights {
            assert!(at >= end, "reads in flight overlap");
            end = at + f.bytes();
            assert!(
                c.buffers
                    .range(..end)
                    .next_back()
                    .is_none_or(|(&b, buffer)| b + buffer.data.len() as u64 <= at || b >= end),
                "a read in flight over a kept block"
            );
        }
    }

    #[test]
    fn random_use_keeps_the_books_and_the_bytes_right() {
        let mut c = Cache::new(Disk::starting(256 * 1024, 3), 24 * 1024);
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
                4 if next(2) == 0 => c.read_ahead(block, next(40) as usize, 1024).unwrap(),
                4 => c.prefetch(block, next(120) as usize, 1024),
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
        assert!(c.stats.prefetches > 100, "reads went in flight");
    }
}
