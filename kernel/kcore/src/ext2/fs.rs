//! A mounted ext2 file system: finding, reading, allocating and writing.
//!
//! [`Fs`] keeps the superblock and the group descriptors in memory and
//! reads everything else from its device when it needs it, so it holds no
//! cache of its own: in the kernel the device is the buffer cache, and
//! repeated reads of a bitmap or an indirect block cost a copy, not a disk
//! request.
//!
//! On ext2 every change is written through before the operation returns,
//! in an order that keeps a crash's damage to what e2fsck repairs without
//! losing data that was there before: a new block or inode is marked in
//! its bitmap before anything points at it, and a freed one is unmarked
//! only after nothing does.
//!
//! On ext3 (a file system with a journal) metadata changes wait in the
//! open transaction (`pending`) until [`Fs::commit`], which logs them and
//! only then lets them go home: a crash loses the transaction that did not
//! commit, whole, and nothing else. File data is not logged; it is written
//! in place before the commit that makes it part of a file (ordered
//! mode), so a file never shows blocks that were never written.
//!
//! The caller serialises operations: `&mut self` is the file system's
//! lock. Inodes are passed by number and read afresh, so two operations
//! never work on two stale copies of one inode.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use super::blockmap::{self, Route};
use super::dir;
use super::journal::{Journal, Recovery};
use super::layout::{
    self, GroupDesc, Inode, ROOT_INO, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE, Superblock, Time, flags,
    incompat, le32, put32,
};
use super::xattr;
use super::{BlockDevice, Error, Result};
use crate::xattr::Attrs;
use abi::Errno;
use abi::types::{S_IFDIR, S_IFLNK, S_IFMT};

/// The longest symbolic link target kept in the inode's block pointers
/// ("fast"): 60 bytes, less the NUL Linux keeps after it.
const FAST_SYMLINK_MAX: usize = 59;
/// Linux's ext2 link limit (`EXT2_LINK_MAX`): EMLINK past it.
pub const LINK_MAX: u16 = 32000;
/// How far past a read in file order the blocks are read ahead: Linux's
/// default `read_ahead_kb`.
const READ_AHEAD: u64 = 128 * 1024;
/// The most blocks a read maps and asks for at once: a long read goes in
/// chunks of this many, and a cache keeps no more than a part of itself
/// for blocks read ahead anyway.
const MAX_READ_AHEAD_BLOCKS: u64 = 1024;

/// What a new inode starts with.
#[derive(Clone, Copy, Debug)]
pub struct NewInode {
    /// Type and permission bits.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub now: Time,
}

/// A mounted ext2 file system over device `D`.
pub struct Fs<D: BlockDevice> {
    pub dev: D,
    sb: Superblock,
    /// The superblock's 1024 bytes as read, so a write keeps the fields
    /// [`Superblock`] does not decode.
    sb_raw: Vec<u8>,
    groups: Vec<GroupDesc>,
    /// The descriptor table's blocks as read, for the same reason.
    gdt_raw: Vec<u8>,
    block_size: usize,
    read_only: bool,
    /// ext3's journal, when the file system has one and is mounted
    /// read-write.
    journal: Option<Journal>,
    /// Metadata blocks changed since the last commit, by block number:
    /// reads see these, the disk does not yet.
    pending: BTreeMap<u32, Vec<u8>>,
    /// Blocks freed since the last commit that the log holds copies of.
    revokes: Vec<u32>,
    /// The block bitmaps as they were before the open transaction first
    /// freed a block in them, by bitmap block. A block freed since the
    /// last commit still belongs to its old file as far as a crash is
    /// concerned, so it is not handed out again until the commit: file
    /// data written into it would land in the old file after a crash
    /// (JBD's "committed data" rule, and its `b_committed_data` copy). A
    /// block is free to allocate when it is clear here as well as in the
    /// bitmap, which costs the search one more byte per byte, not a
    /// look-up per freed block.
    committed: BTreeMap<u32, Vec<u8>>,
    /// How many blocks the bitmaps show free that `committed` keeps
    /// back until the commit.
    waiting: u64,
    /// What recovery did at mount, if the journal needed it.
    recovery: Option<Recovery>,
}

impl<D: BlockDevice> Fs<D> {
    /// Reads the superblock and group descriptors and checks they describe
    /// a file system we can use: an unknown incompatible feature refuses
    /// the mount (EINVAL, as Linux), an unknown read-only one makes it
    /// read-only. `read_only`: the caller asked for a read-only mount.
    ///
    /// With a journal, a log left by a crash is replayed first (on a
    /// read-only mount too, as Linux does), and a read-write mount then
    /// logs its changes. Without one, a read-write mount marks the file
    /// system not clean until [`Fs::unmount`], so e2fsck checks it after a
    /// crash.
    pub fn mount(dev: D, read_only: bool) -> Result<Fs<D>> {
        let mut fs = Fs::read_geometry(dev, read_only)?;
        let has_journal = fs.sb.feature_compat & layout::compat::HAS_JOURNAL != 0;
        if has_journal {
            let mut journal = fs.open_journal()?;
            if journal.needs_recovery() || fs.sb.feature_incompat & incompat::RECOVER != 0 {
                let blocks = u64::from(fs.sb.blocks_count);
                let report = journal.recover(&mut fs.dev, blocks)?;
                // Replay may have rewritten the superblock and the
                // descriptors: read them again.
                fs = Fs::read_geometry(fs.dev, read_only)?;
                fs.sb.feature_incompat &= !incompat::RECOVER;
                fs.recovery = Some(report);
                fs.write_superblock_now()?;
            }
            if !fs.read_only {
                fs.journal = Some(journal);
                fs.sb.feature_incompat |= incompat::RECOVER;
            }
        } else if fs.sb.feature_incompat & incompat::RECOVER != 0 {
            return Err(Error::Corrupt("needs journal recovery but has no journal"));
        } else if !fs.read_only {
            fs.sb.state &= !layout::STATE_VALID;
        }
        if !fs.read_only {
            fs.sb.mnt_count = fs.sb.mnt_count.wrapping_add(1);
            fs.write_superblock_now()?;
        }
        Ok(fs)
    }

    /// Reads and checks the superblock and group descriptors.
    fn read_geometry(mut dev: D, read_only: bool) -> Result<Fs<D>> {
        let mut sb_raw = vec![0; SUPERBLOCK_SIZE];
        dev.read(SUPERBLOCK_OFFSET / SUPERBLOCK_SIZE as u64, &mut sb_raw)?;
        let sb = Superblock::decode(&sb_raw)?;
        if sb.unknown_incompat() != 0 {
            return Err(Error::Sys(Errno::EINVAL));
        }
        let block_size = sb.block_size();
        if dev
            .size()
            .is_some_and(|size| u64::from(sb.blocks_count) * block_size as u64 > size)
        {
            return Err(Error::Sys(Errno::EINVAL));
        }
        let count = sb.group_count() as usize;
        let gdt_blocks = (count * GroupDesc::SIZE).div_ceil(block_size);
        let mut gdt_raw = vec![0; gdt_blocks * block_size];
        for (i, chunk) in gdt_raw.chunks_mut(block_size).enumerate() {
            dev.read(u64::from(sb.first_data_block) + 1 + i as u64, chunk)?;
        }
        let groups: Vec<GroupDesc> = (0..count)
            .map(|g| GroupDesc::decode(&gdt_raw[g * GroupDesc::SIZE..]))
            .collect();
        let read_only = read_only || sb.unknown_ro_compat() != 0;
        let fs = Fs {
            dev,
            sb,
            sb_raw,
            groups,
            gdt_raw,
            block_size,
            read_only,
            journal: None,
            pending: BTreeMap::new(),
            revokes: Vec::new(),
            committed: BTreeMap::new(),
            waiting: 0,
            recovery: None,
        };
        fs.check_groups()?;
        Ok(fs)
    }

    /// Opens the journal: its inode's block map, then its superblock.
    fn open_journal(&mut self) -> Result<Journal> {
        let ino = self.sb.journal_inum;
        if ino == 0 {
            return Err(Error::Sys(Errno::EINVAL));
        }
        let inode = self.inode(ino)?;
        let blocks = inode.size / self.block_size as u64;
        // JBD2 makes journals of 1024 blocks at least (JBD2_MIN_JOURNAL_BLOCKS).
        if !inode.is_regular() || !(1024..=1 << 22).contains(&blocks) {
            return Err(Error::Corrupt("journal inode is not a journal"));
        }
        let mut map = Vec::with_capacity(blocks as usize);
        for n in 0..blocks {
            match self.bmap(&inode, n)? {
                0 => return Err(Error::Corrupt("hole in the journal")),
                b => map.push(b),
            }
        }
        Journal::open(&mut self.dev, map, self.block_size)
    }

    /// What journal recovery did when this file system was mounted.
    pub fn recovery(&self) -> Option<Recovery> {
        self.recovery
    }

    /// Whether the journal's open transaction holds a change: what a
    /// commit that is not asked for (the flusher's, every few seconds)
    /// looks at first. False without a journal, where only `commit` (a
    /// flush) makes changes durable.
    pub fn transaction_is_open(&self) -> bool {
        self.journal.is_some() && !(self.pending.is_empty() && self.revokes.is_empty())
    }

    /// Commits the open transaction (with a journal) or flushes the
    /// device (without): after this, every change made so far survives a
    /// crash. fsync and sync end here.
    pub fn commit(&mut self) -> Result<()> {
        let open = self.transaction_is_open();
        match &mut self.journal {
            // Nothing to log, but file data written since may be waiting.
            Some(_) if !open => self.dev.flush(),
            Some(journal) => {
                let pending = core::mem::take(&mut self.pending);
                let revokes = core::mem::take(&mut self.revokes);
                self.committed.clear();
                self.waiting = 0;
                journal.commit(&mut self.dev, &pending, &revokes)
            }
            None => self.dev.flush(),
        }
    }

    /// Commits and, with a journal, checkpoints it and marks it empty;
    /// then records a clean unmount. Gives the device back.
    pub fn unmount(mut self) -> Result<D> {
        if !self.read_only {
            self.commit()?;
            if let Some(journal) = &mut self.journal {
                journal.checkpoint(&mut self.dev)?;
            }
            self.sb.feature_incompat &= !incompat::RECOVER;
            if self.journal.is_none() {
                self.sb.state |= layout::STATE_VALID;
            }
            self.write_superblock_now()?;
        }
        Ok(self.dev)
    }

    /// Each group's bitmaps and inode table lie inside the file system.
    fn check_groups(&self) -> Result<()> {
        let table_blocks = self.inode_table_blocks();
        for gd in &self.groups {
            let last_table = u64::from(gd.inode_table) + table_blocks - 1;
            if !self.in_range(gd.block_bitmap)
                || !self.in_range(gd.inode_bitmap)
                || !self.in_range(gd.inode_table)
                || last_table >= u64::from(self.sb.blocks_count)
            {
                return Err(Error::Corrupt(
                    "group descriptor points outside the file system",
                ));
            }
        }
        Ok(())
    }

    pub fn superblock(&self) -> &Superblock {
        &self.sb
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn inode_table_blocks(&self) -> u64 {
        (u64::from(self.sb.inodes_per_group) * u64::from(self.sb.inode_size))
            .div_ceil(self.block_size as u64)
    }

    fn in_range(&self, block: u32) -> bool {
        block >= self.sb.first_data_block && block < self.sb.blocks_count
    }

    /// Block numbers in an indirect block.
    fn per_block(&self) -> u64 {
        self.block_size as u64 / 4
    }

    fn read_block(&mut self, block: u32, buf: &mut [u8]) -> Result<()> {
        // Block 0 is outside the file system's blocks with 1 KiB blocks
        // (the boot sector), but with larger ones holds the superblock.
        if !self.in_range(block) && block != 0 {
            return Err(Error::Corrupt("block number outside the file system"));
        }
        if let Some(changed) = self.pending.get(&block) {
            buf.copy_from_slice(changed);
            return Ok(());
        }
        self.dev.read(u64::from(block), buf)
    }

    /// Writes a block of metadata: a bitmap, an inode table block, an
    /// indirect block, a directory block, the superblock's block. With a
    /// journal it joins the open transaction.
    fn write_meta(&mut self, block: u32, buf: &[u8]) -> Result<()> {
        if self.journal.is_some() {
            // A block changed again in the same transaction (a bitmap, an
            // indirect block being filled) is copied over its pending
            // copy rather than allocated anew.
            match self.pending.get_mut(&block) {
                Some(kept) if kept.len() == buf.len() => kept.copy_from_slice(buf),
                _ => {
                    self.pending.insert(block, buf.to_vec());
                }
            }
            Ok(())
        } else {
            self.dev.write(u64::from(block), buf)
        }
    }

    /// Runs `f` on metadata block `block` as the file system sees it: the
    /// open transaction's copy, when it has one, read where it lies.
    fn peek_meta<R>(&mut self, block: u32, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        if let Some(kept) = self.pending.get(&block) {
            return Ok(f(kept));
        }
        let mut buf = vec![0; self.block_size];
        self.read_block(block, &mut buf)?;
        Ok(f(&buf))
    }

    /// Changes metadata block `block` with `f`, as `write_meta` would
    /// write it. With a journal the open transaction's copy is changed
    /// where it lies: a change of a few bytes (a bit, an inode, a
    /// counter) costs no copy of the block. `f` checks before it changes
    /// anything: an error from it leaves the block as it was.
    fn change_meta<R>(&mut self, block: u32, f: impl FnOnce(&mut [u8]) -> Result<R>) -> Result<R> {
        self.meta_in_place(block, |buf| f(buf).map(|out| (out, true)))
    }

    /// As `change_meta`, for a change `f` may find it cannot make: it
    /// returns false having changed nothing, and nothing is written.
    fn change_meta_if(
        &mut self,
        block: u32,
        f: impl FnOnce(&mut [u8]) -> Result<bool>,
    ) -> Result<bool> {
        self.meta_in_place(block, |buf| f(buf).map(|changed| (changed, changed)))
    }

    /// `change_meta`'s work: `f` says what it returns and whether it
    /// changed the block.
    fn meta_in_place<R>(
        &mut self,
        block: u32,
        f: impl FnOnce(&mut [u8]) -> Result<(R, bool)>,
    ) -> Result<R> {
        if self.journal.is_some()
            && let Some(kept) = self.pending.get_mut(&block)
        {
            return f(kept).map(|(out, _)| out);
        }
        let mut buf = vec![0; self.block_size];
        self.read_block(block, &mut buf)?;
        let (out, changed) = f(&mut buf)?;
        match (changed, self.journal.is_some()) {
            (false, _) => {}
            (true, true) => {
                self.pending.insert(block, buf);
            }
            (true, false) => self.dev.write(u64::from(block), &buf)?,
        }
        Ok(out)
    }

    /// Whether the open transaction has grown enough to commit in the
    /// middle of a long operation (at a point where what it changed is
    /// consistent), leaving room for one more block's changes.
    fn transaction_full(&self) -> bool {
        self.journal.as_ref().is_some_and(|j| {
            self.pending.len() + self.revokes.len() / 64 + 16 >= j.max_transaction()
        })
    }

    /// Writes a block of a regular file's data.
    fn write_data(&mut self, block: u32, buf: &[u8]) -> Result<()> {
        debug_assert!(self.in_range(block));
        self.dev.write(u64::from(block), buf)
    }

    fn writable(&self) -> Result<()> {
        if self.read_only {
            Err(Error::Sys(Errno::EROFS))
        } else {
            Ok(())
        }
    }

    /// Starts an operation that changes the file system: EROFS on a
    /// read-only mount; and, the previous operation being whole, the
    /// moment to commit a transaction that has grown large.
    fn begin(&mut self) -> Result<()> {
        self.writable()?;
        if self.transaction_full() || self.free_space_waits_on_commit() {
            self.commit()?;
        }
        Ok(())
    }

    /// Whether most of the free blocks are ones freed in the open
    /// transaction, which cannot be handed out before it commits (see
    /// `committed`): a disk filled and then emptied would be ENOSPC until the
    /// next commit. Committing at the operation's start makes them usable
    /// (JBD2 commits for the same reason when an allocation fails, ext4's
    /// `ext4_should_retry_alloc`).
    fn free_space_waits_on_commit(&self) -> bool {
        self.waiting > 0 && 2 * self.waiting >= u64::from(self.sb.free_blocks_count)
    }

    // ---- inodes ----

    /// Where inode `ino` lives: its inode-table block and byte offset.
    fn inode_place(&self, ino: u32) -> Result<(u32, usize)> {
        if ino == 0 || ino > self.sb.inodes_count {
            return Err(Error::Corrupt("inode number out of range"));
        }
        let index = (ino - 1) as usize;
        let ipg = self.sb.inodes_per_group as usize;
        let gd = &self.groups[index / ipg];
        let byte = (index % ipg) * usize::from(self.sb.inode_size);
        Ok((
            gd.inode_table + (byte / self.block_size) as u32,
            byte % self.block_size,
        ))
    }

    /// Reads inode `ino`, refusing one whose contents cannot be used.
    pub fn inode(&mut self, ino: u32) -> Result<Inode> {
        let (block, at) = self.inode_place(ino)?;
        let size = usize::from(self.sb.inode_size);
        let inode = self.peek_meta(block, |buf| Inode::decode(&buf[at..at + size]))??;
        if inode.flags & (flags::EXTENTS | flags::INLINE_DATA) != 0 {
            return Err(Error::Corrupt("inode uses extents or inline data (ext4)"));
        }
        Ok(inode)
    }

    /// Writes inode `ino` back.
    pub fn write_inode(&mut self, ino: u32, inode: &Inode) -> Result<()> {
        self.writable()?;
        let (block, at) = self.inode_place(ino)?;
        let size = usize::from(self.sb.inode_size);
        self.change_meta(block, |buf| {
            inode.encode(&mut buf[at..at + size]);
            Ok(())
        })
    }

    // ---- the block map ----

    /// The disk block holding logical block `n` of `inode`; 0 for a hole.
    pub fn bmap(&mut self, inode: &Inode, n: u64) -> Result<u32> {
        Ok(self.bmap_range(inode, n, 1)?[0])
    }

    /// Like [`Fs::bmap`], but allocating the block, and every indirect
    /// block on the way, where there is none. Returns the block and
    /// whether it is new (its old contents are not the file's).
    fn bmap_alloc(&mut self, ino: u32, inode: &mut Inode, n: u64) -> Result<(u32, bool)> {
        let route: Route = blockmap::route(n, self.per_block())?;
        let goal = self.group_of_inode(ino);
        let mut fresh = false;
        let mut block = inode.block[route.slot];
        if block == 0 {
            block = self.alloc_block(goal)?;
            inode.block[route.slot] = block;
            inode.blocks += (self.block_size / 512) as u32;
            fresh = true;
            if route.depth > 0 {
                self.zero_block(block)?;
            }
        }
        let mut buf = vec![0; self.block_size];
        for (level, &i) in route.indexes().iter().enumerate() {
            self.read_block(block, &mut buf)?;
            let mut next = le32(&buf, 4 * i);
            fresh = false;
            if next == 0 {
                next = self.alloc_block(goal)?;
                inode.blocks += (self.block_size / 512) as u32;
                fresh = true;
                if level + 1 < route.depth {
                    self.zero_block(next)?;
                }
                put32(&mut buf, 4 * i, next);
                self.write_meta(block, &buf)?;
            }
            block = next;
        }
        Ok((block, fresh))
    }

    fn zero_block(&mut self, block: u32) -> Result<()> {
        let zeros = vec![0; self.block_size];
        self.write_meta(block, &zeros)
    }

    // ---- allocation ----

    fn group_of_inode(&self, ino: u32) -> usize {
        ((ino.max(1) - 1) / self.sb.inodes_per_group) as usize
    }

    /// Blocks in group `g` (the last group may be short).
    fn blocks_in_group(&self, g: usize) -> u32 {
        let first = self.sb.first_data_block + g as u32 * self.sb.blocks_per_group;
        (self.sb.blocks_count - first).min(self.sb.blocks_per_group)
    }

    /// Writes group `g`'s descriptor and the superblock's counters.
    fn write_counters(&mut self, g: usize) -> Result<()> {
        let at = g * GroupDesc::SIZE;
        let gd = self.groups[g];
        gd.encode(&mut self.gdt_raw[at..at + GroupDesc::SIZE]);
        // The table's block holds what gdt_raw holds (every change to a
        // descriptor comes here): only this one's bytes change.
        let block = self.sb.first_data_block + 1 + (at / self.block_size) as u32;
        let within = at % self.block_size;
        self.change_meta(block, |buf| {
            gd.encode(&mut buf[within..within + GroupDesc::SIZE]);
            Ok(())
        })?;
        self.write_superblock()
    }

    /// The block holding the superblock, and the superblock's offset in it.
    fn superblock_place(&self) -> (u32, usize) {
        let at = SUPERBLOCK_OFFSET as usize;
        ((at / self.block_size) as u32, at % self.block_size)
    }

    /// The superblock's block with the in-memory superblock encoded in.
    fn superblock_block(&mut self) -> Result<(u32, Vec<u8>)> {
        self.sb.encode(&mut self.sb_raw);
        let (block, at) = self.superblock_place();
        let mut buf = vec![0; self.block_size];
        self.read_block(block, &mut buf)?;
        buf[at..at + SUPERBLOCK_SIZE].copy_from_slice(&self.sb_raw);
        Ok((block, buf))
    }

    /// Writes the superblock as metadata (with a journal: in the open
    /// transaction).
    fn write_superblock(&mut self) -> Result<()> {
        self.sb.encode(&mut self.sb_raw);
        let (block, at) = self.superblock_place();
        let raw = core::mem::take(&mut self.sb_raw);
        let written = self.change_meta(block, |buf| {
            buf[at..at + SUPERBLOCK_SIZE].copy_from_slice(&raw);
            Ok(())
        });
        self.sb_raw = raw;
        written
    }

    /// Writes the superblock in place and flushes, outside any
    /// transaction: the mount and unmount marks (needs_recovery, the
    /// clean state) must be on the disk before what they guard.
    fn write_superblock_now(&mut self) -> Result<()> {
        let (block, buf) = self.superblock_block()?;
        if self.pending.contains_key(&block) {
            self.pending.insert(block, buf.clone());
        }
        self.dev.write(u64::from(block), &buf)?;
        self.dev.flush()
    }

    /// Allocates a block, trying group `goal` first: marks it in its
    /// bitmap and counts it. ENOSPC when every group is full.
    pub fn alloc_block(&mut self, goal: usize) -> Result<u32> {
        self.writable()?;
        if self.sb.free_blocks_count == 0 {
            return Err(Error::Sys(Errno::ENOSPC));
        }
        let count = self.groups.len();
        for g in (0..count).map(|k| (goal + k) % count) {
            if self.groups[g].free_blocks_count == 0 {
                continue;
            }
            let bitmap_block = self.groups[g].block_bitmap;
            let limit = self.blocks_in_group(g) as usize;
            // Out of the map while the search borrows it, and back before
            // anything can return.
            let kept_back = self.committed.remove(&bitmap_block);
            let found = self.peek_meta(bitmap_block, |bitmap| {
                find_clear(bitmap, kept_back.as_deref(), 0, limit)
            });
            if let Some(kept_back) = kept_back {
                self.committed.insert(bitmap_block, kept_back);
            }
            let Some(bit) = found? else {
                // The descriptor said there was room and the bitmap says
                // not: trust neither and try the other groups.
                continue;
            };
            self.set_bit(bitmap_block, bit)?;
            self.groups[g].free_blocks_count -= 1;
            self.sb.free_blocks_count -= 1;
            self.write_counters(g)?;
            return Ok(self.sb.first_data_block + g as u32 * self.sb.blocks_per_group + bit as u32);
        }
        Err(Error::Sys(Errno::ENOSPC))
    }

    /// Frees block `block`: clears its bit and counts it free.
    pub fn free_block(&mut self, block: u32) -> Result<()> {
        if !self.in_range(block) {
            return Err(Error::Corrupt("freeing a block outside the file system"));
        }
        let rel = block - self.sb.first_data_block;
        let g = (rel / self.sb.blocks_per_group) as usize;
        let bit = (rel % self.sb.blocks_per_group) as usize;
        let bitmap_block = self.groups[g].block_bitmap;
        if self.journal.is_some() && !self.committed.contains_key(&bitmap_block) {
            let before = self.peek_meta(bitmap_block, <[u8]>::to_vec)?;
            self.committed.insert(bitmap_block, before);
        }
        self.clear_bit(bitmap_block, bit, "freeing a block that is already free")?;
        // What the open transaction held for it is moot now, and a copy in
        // the log must not be replayed over what the block holds next.
        self.pending.remove(&block);
        if let Some(journal) = &self.journal
            && journal.was_logged(block)
        {
            self.revokes.push(block);
        }
        // A block the transaction allocated after the copy was made was
        // never the old file's: it may go again at once.
        if self
            .committed
            .get(&bitmap_block)
            .is_some_and(|before| before[bit / 8] & (1 << (bit % 8)) != 0)
        {
            self.waiting += 1;
        }
        self.groups[g].free_blocks_count += 1;
        self.sb.free_blocks_count += 1;
        self.write_counters(g)
    }

    /// Allocates an inode: a directory goes to the group with the most
    /// free inodes among those with free blocks (spreading directories, as
    /// ext2's simpler policy did before Orlov), anything else near its
    /// parent directory's inode.
    fn alloc_inode(&mut self, parent: u32, is_dir: bool) -> Result<u32> {
        self.writable()?;
        if self.sb.free_inodes_count == 0 {
            return Err(Error::Sys(Errno::ENOSPC));
        }
        let count = self.groups.len();
        let start = if is_dir {
            (0..count)
                .max_by_key(|&g| {
                    let gd = &self.groups[g];
                    (
                        gd.free_blocks_count > 0,
                        gd.free_inodes_count,
                        core::cmp::Reverse(g),
                    )
                })
                .unwrap_or(0)
        } else {
            self.group_of_inode(parent)
        };
        let ipg = self.sb.inodes_per_group as usize;
        for g in (0..count).map(|k| (start + k) % count) {
            if self.groups[g].free_inodes_count == 0 {
                continue;
            }
            let bitmap_block = self.groups[g].inode_bitmap;
            // The reserved inodes (1 to first_ino - 1) are never handed out.
            let from = if g == 0 {
                self.sb.first_ino as usize - 1
            } else {
                0
            };
            let found =
                self.peek_meta(bitmap_block, |bitmap| find_clear(bitmap, None, from, ipg))?;
            let Some(bit) = found else {
                continue;
            };
            self.set_bit(bitmap_block, bit)?;
            self.groups[g].free_inodes_count -= 1;
            if is_dir {
                self.groups[g].used_dirs_count += 1;
            }
            self.sb.free_inodes_count -= 1;
            self.write_counters(g)?;
            return Ok((g * ipg + bit + 1) as u32);
        }
        Err(Error::Sys(Errno::ENOSPC))
    }

    /// Sets bit `bit` of the bitmap in block `bitmap_block`: the search
    /// just found it clear.
    fn set_bit(&mut self, bitmap_block: u32, bit: usize) -> Result<()> {
        self.change_meta(bitmap_block, |bitmap| {
            bitmap[bit / 8] |= 1 << (bit % 8);
            Ok(())
        })
    }

    /// Clears bit `bit` of the bitmap in block `bitmap_block`; a bit
    /// already clear is corruption (`why`): something was freed twice.
    fn clear_bit(&mut self, bitmap_block: u32, bit: usize, why: &'static str) -> Result<()> {
        self.change_meta(bitmap_block, |bitmap| {
            if bitmap[bit / 8] & (1 << (bit % 8)) == 0 {
                return Err(Error::Corrupt(why));
            }
            bitmap[bit / 8] &= !(1 << (bit % 8));
            Ok(())
        })
    }

    fn free_inode(&mut self, ino: u32, was_dir: bool) -> Result<()> {
        let g = self.group_of_inode(ino);
        let bit = ((ino - 1) % self.sb.inodes_per_group) as usize;
        self.clear_bit(
            self.groups[g].inode_bitmap,
            bit,
            "freeing an inode that is already free",
        )?;
        self.groups[g].free_inodes_count += 1;
        if was_dir {
            self.groups[g].used_dirs_count = self.groups[g].used_dirs_count.saturating_sub(1);
        }
        self.sb.free_inodes_count += 1;
        self.write_counters(g)
    }

    // ---- file data ----

    /// Reads up to `buf.len()` bytes of `inode`'s data from `offset`;
    /// holes read as zeros. Returns the count (0 at or past the end).
    ///
    /// It goes a chunk of blocks at a time: map the chunk's blocks (each
    /// indirect block read once, [`Fs::bmap_range`]), ask the device to
    /// bring the missing ones in together ([`Fs::read_ahead`]), then copy;
    /// a whole block goes straight into `buf`.
    pub fn read(&mut self, inode: &Inode, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if offset >= inode.size {
            return Ok(0);
        }
        let len = buf.len().min((inode.size - offset) as usize);
        let bs = self.block_size as u64;
        let mut block = vec![0; self.block_size];
        let mut done = 0;
        while done < len {
            let at = offset + done as u64;
            let first = at / bs;
            let count = (at + (len - done) as u64)
                .div_ceil(bs)
                .saturating_sub(first)
                .min(MAX_READ_AHEAD_BLOCKS) as usize;
            let blocks = self.bmap_range(inode, first, count)?;
            self.read_ahead(inode, first, &blocks);
            for b in blocks {
                let at = offset + done as u64;
                let within = (at % bs) as usize;
                let n = (self.block_size - within).min(len - done);
                let out = &mut buf[done..done + n];
                match b {
                    0 => out.fill(0),
                    b if n == self.block_size => self.read_block(b, out)?,
                    b => {
                        self.read_block(b, &mut block)?;
                        out.copy_from_slice(&block[within..within + n]);
                    }
                }
                done += n;
            }
        }
        Ok(len)
    }

    /// The disk blocks of file blocks `first..first + count` of `inode` (0
    /// for a hole), each indirect block on the way read once for all the
    /// blocks it maps, not once per block.
    pub fn bmap_range(&mut self, inode: &Inode, first: u64, count: usize) -> Result<Vec<u32>> {
        let per = self.per_block();
        // The indirect block last read at each level, and its contents.
        let mut seen: [Option<(u32, Vec<u8>)>; 3] = [None, None, None];
        let mut out = Vec::with_capacity(count);
        for n in first..first + count as u64 {
            let route = blockmap::route(n, per)?;
            let mut block = inode.block[route.slot];
            for (level, &i) in route.indexes().iter().enumerate() {
                if block == 0 {
                    break;
                }
                let kept = match &mut seen[level] {
                    Some((at, data)) if *at == block => data,
                    slot => {
                        let mut data = slot
                            .take()
                            .map_or_else(|| vec![0; self.block_size], |s| s.1);
                        self.read_block(block, &mut data)?;
                        &mut slot.insert((block, data)).1
                    }
                };
                block = le32(kept, 4 * i);
            }
            if block != 0 && !self.in_range(block) {
                return Err(Error::Corrupt("block pointer outside the file system"));
            }
            out.push(block);
        }
        Ok(out)
    }

    /// Tells the device that the disk blocks `blocks` (file blocks from
    /// `first` on, 0 for a hole) are about to be read, as runs of
    /// consecutive blocks, so that a cache brings the missing ones in with
    /// a few large requests rather than one per block. When the reader
    /// seems to go through the file in order (it starts at the beginning,
    /// or the block before is still in memory), the device is also asked
    /// to start on the `READ_AHEAD` bytes after them without waiting
    /// ([`BlockDevice::prefetch`]), so the disk reads them while the
    /// reader copies these, and its next read finds them there.
    ///
    /// Only a hint: an error here is not the read's (a block past the read
    /// has nothing to do with it), so it stops the hint and the read
    /// itself reads, and reports, what it must.
    fn read_ahead(&mut self, inode: &Inode, first: u64, blocks: &[u32]) {
        let bs = self.block_size as u64;
        let in_order = first == 0
            || self
                .bmap(inode, first - 1)
                .is_ok_and(|b| b != 0 && self.dev.has_block(u64::from(b), self.block_size));
        for (start, count) in self.disk_runs(blocks) {
            if self.dev.read_ahead(start, count, self.block_size).is_err() {
                return;
            }
        }
        let next = first + blocks.len() as u64;
        let ahead = if in_order {
            (READ_AHEAD / bs).min(inode.size.div_ceil(bs).saturating_sub(next))
        } else {
            0
        };
        let beyond = self
            .bmap_range(inode, next, ahead as usize)
            .unwrap_or_default();
        for (start, count) in self.disk_runs(&beyond) {
            self.dev.prefetch(start, count, self.block_size);
        }
    }

    /// The runs of consecutive disk blocks in `blocks`, as (first block,
    /// count), leaving out holes (0) and blocks the open transaction has
    /// changed (its copy is the one to read, not the disk's).
    fn disk_runs(&self, blocks: &[u32]) -> Vec<(u64, usize)> {
        let mut runs: Vec<(u64, usize)> = Vec::new();
        // Whether the next block may extend the last run: not across a
        // block left out, even when the one after it follows on the disk.
        let mut joinable = false;
        for &b in blocks {
            if b == 0 || self.pending.contains_key(&b) {
                joinable = false;
                continue;
            }
            let b = u64::from(b);
            match runs.last_mut() {
                Some((start, count)) if joinable && b == *start + *count as u64 => *count += 1,
                _ => runs.push((b, 1)),
            }
            joinable = true;
        }
        runs
    }

    /// Writes `data` into file `ino` at `offset`, allocating blocks as it
    /// goes, and grows the size past the end of what was written. Returns
    /// the bytes written: fewer than asked when the disk fills after the
    /// first block (ENOSPC only when nothing could be written). The caller
    /// sets the times.
    pub fn write(&mut self, ino: u32, offset: u64, data: &[u8]) -> Result<usize> {
        self.begin()?;
        self.write_within(ino, offset, data)
    }

    /// [`Fs::write`] as a step of a larger operation.
    fn write_within(&mut self, ino: u32, offset: u64, data: &[u8]) -> Result<usize> {
        let mut inode = self.inode(ino)?;
        let before = inode.clone();
        if offset > inode.size {
            self.zero_tail(&inode)?;
        }
        let max = blockmap::max_file_size(self.block_size as u64);
        if offset >= max && !data.is_empty() {
            return Err(Error::Sys(Errno::EFBIG));
        }
        let len = data.len().min((max - offset) as usize);
        let mut done = 0;
        let failure = self
            .write_blocks(ino, &mut inode, offset, &data[..len], &mut done)
            .err();
        // The inode is written even after a failure: blocks allocated on
        // the way are already its own. An overwrite within the file's
        // blocks changes nothing in it, and logs nothing.
        if inode != before {
            self.write_inode(ino, &inode)?;
        }
        match failure {
            Some(e) if done == 0 => Err(e),
            _ => Ok(done),
        }
    }

    /// [`Fs::write`]'s loop: block by block, counting in `done` what
    /// landed, so a failure part way still reports it.
    fn write_blocks(
        &mut self,
        ino: u32,
        inode: &mut Inode,
        offset: u64,
        data: &[u8],
        done: &mut usize,
    ) -> Result<()> {
        let bs = self.block_size as u64;
        let mut block = vec![0; self.block_size];
        while *done < data.len() {
            let at = offset + *done as u64;
            let within = (at % bs) as usize;
            let n = (self.block_size - within).min(data.len() - *done);
            let (b, fresh) = self.bmap_alloc(ino, inode, at / bs)?;
            if n < self.block_size {
                if fresh {
                    block.fill(0);
                } else {
                    self.read_block(b, &mut block)?;
                }
            }
            block[within..within + n].copy_from_slice(&data[*done..*done + n]);
            self.write_data(b, &block)?;
            *done += n;
            inode.size = inode.size.max(offset + *done as u64);
            if self.transaction_full() {
                self.write_inode(ino, inode)?;
                self.commit()?;
            }
        }
        Ok(())
    }

    /// Sets file `ino`'s size: blocks past the new end are freed (and any
    /// indirect block left empty), and a larger size leaves a hole.
    ///
    /// Shrinking leaves the bytes past the new end in the last block as
    /// they were: they are not the file's, and zeroing them in place would
    /// change what the file holds on disk before the new size commits (a
    /// crash would then show the old size with zeros in it). Growing the
    /// file later zeroes them first ([`Fs::zero_tail`]).
    pub fn truncate(&mut self, ino: u32, size: u64) -> Result<()> {
        self.begin()?;
        let mut inode = self.inode(ino)?;
        if size > blockmap::max_file_size(self.block_size as u64) {
            return Err(Error::Sys(Errno::EFBIG));
        }
        let bs = self.block_size as u64;
        if size > inode.size {
            self.zero_tail(&inode)?;
        }
        let keep = size.div_ceil(bs);
        if !(inode.is_symlink() && self.is_fast_symlink(&inode)) {
            self.free_from(&mut inode, keep)?;
        }
        inode.size = size;
        self.write_inode(ino, &inode)
    }

    /// Zeroes the bytes of `inode`'s last block past its end, which a
    /// shrinking truncate left, before the file grows over them.
    fn zero_tail(&mut self, inode: &Inode) -> Result<()> {
        let bs = self.block_size as u64;
        let within = (inode.size % bs) as usize;
        if within == 0 {
            return Ok(());
        }
        let last = self.bmap(inode, inode.size / bs)?;
        if last != 0 {
            let mut block = vec![0; self.block_size];
            self.read_block(last, &mut block)?;
            if block[within..].iter().any(|&b| b != 0) {
                block[within..].fill(0);
                self.write_data(last, &block)?;
            }
        }
        Ok(())
    }

    /// Frees every block of `inode` from logical block `keep` on.
    fn free_from(&mut self, inode: &mut Inode, keep: u64) -> Result<()> {
        let per = self.per_block();
        let mut first = 0u64;
        for slot in 0..layout::N_BLOCKS {
            let level = slot.saturating_sub(layout::N_DIRECT - 1);
            let span = blockmap::span(level, per);
            let ptr = inode.block[slot];
            if ptr != 0 && first + span > keep {
                let from = keep.saturating_sub(first);
                if self.free_tree(inode, ptr, level, from)? {
                    inode.block[slot] = 0;
                }
            }
            first += span;
        }
        Ok(())
    }

    /// Frees the blocks under pointer `ptr` at `level` (0: a data block)
    /// from the subtree's logical block `from` on. Returns whether `ptr`
    /// itself was freed (everything under it went).
    fn free_tree(&mut self, inode: &mut Inode, ptr: u32, level: usize, from: u64) -> Result<bool> {
        let sectors = (self.block_size / 512) as u32;
        if level == 0 {
            self.free_block(ptr)?;
            inode.blocks = inode.blocks.saturating_sub(sectors);
            return Ok(true);
        }
        let per = self.per_block();
        let span = blockmap::span(level - 1, per);
        let mut buf = vec![0; self.block_size];
        self.read_block(ptr, &mut buf)?;
        let mut changed = false;
        for i in (from / span) as usize..per as usize {
            let child = le32(&buf, 4 * i);
            if child == 0 {
                continue;
            }
            let child_from = from.saturating_sub(i as u64 * span);
            if self.free_tree(inode, child, level - 1, child_from)? {
                put32(&mut buf, 4 * i, 0);
                changed = true;
            }
        }
        if (0..per as usize).all(|i| le32(&buf, 4 * i) == 0) {
            self.free_block(ptr)?;
            inode.blocks = inode.blocks.saturating_sub(sectors);
            return Ok(true);
        }
        if changed {
            self.write_meta(ptr, &buf)?;
        }
        Ok(false)
    }

    // ---- symbolic links and devices ----

    /// A fast symbolic link keeps its target in the block pointers; Linux
    /// tells one by its holding no blocks beyond an extended-attribute
    /// block (`ext2_inode_is_fast_symlink`).
    pub fn is_fast_symlink(&self, inode: &Inode) -> bool {
        let acl_sectors = if inode.file_acl != 0 {
            (self.block_size / 512) as u32
        } else {
            0
        };
        inode.is_symlink() && inode.blocks == acl_sectors
    }

    /// A symbolic link's target.
    pub fn read_link(&mut self, inode: &Inode) -> Result<Vec<u8>> {
        if !inode.is_symlink() {
            return Err(Error::Sys(Errno::EINVAL));
        }
        let len = inode.size as usize;
        if self.is_fast_symlink(inode) {
            if len > FAST_SYMLINK_MAX + 1 {
                return Err(Error::Corrupt("fast symbolic link longer than its room"));
            }
            let mut raw = [0u8; 60];
            for (i, p) in inode.block.iter().enumerate() {
                raw[4 * i..4 * i + 4].copy_from_slice(&p.to_le_bytes());
            }
            return Ok(raw[..len].to_vec());
        }
        if len >= self.block_size {
            return Err(Error::Corrupt("symbolic link longer than a block"));
        }
        let mut target = vec![0; len];
        self.read(inode, 0, &mut target)?;
        Ok(target)
    }

    // ---- directories ----

    fn dir_blocks(&self, dir: &Inode) -> Result<u64> {
        if !dir.is_dir() {
            return Err(Error::Sys(Errno::ENOTDIR));
        }
        if !dir.size.is_multiple_of(self.block_size as u64) {
            return Err(Error::Corrupt(
                "directory size not a whole number of blocks",
            ));
        }
        Ok(dir.size / self.block_size as u64)
    }

    /// Reads directory block `n` of `dir`; a hole is corruption.
    fn dir_block(&mut self, dir: &Inode, n: u64, buf: &mut [u8]) -> Result<u32> {
        let b = self.dir_block_place(dir, n)?;
        self.read_block(b, buf)?;
        Ok(b)
    }

    /// The disk block of directory block `n` of `dir`; a hole is
    /// corruption.
    fn dir_block_place(&mut self, dir: &Inode, n: u64) -> Result<u32> {
        match self.bmap(dir, n)? {
            0 => Err(Error::Corrupt("hole in a directory")),
            b => Ok(b),
        }
    }

    /// Calls `each(name, ino, file_type, next)` for every entry of
    /// directory `dir`, "." and ".." included, in on-disk order; `each`
    /// returns false to stop. Positions are byte offsets in the directory
    /// file: `next` is where the entry after this one starts, and `from`
    /// (0 for the start) resumes a listing there, as getdents' offset.
    pub fn read_dir(
        &mut self,
        dir: &Inode,
        from: u64,
        mut each: impl FnMut(&[u8], u32, u8, u64) -> bool,
    ) -> Result<()> {
        let filetype = self.sb.has_filetype();
        let bs = self.block_size as u64;
        let mut buf = vec![0; self.block_size];
        for n in from / bs..self.dir_blocks(dir)? {
            self.dir_block(dir, n, &mut buf)?;
            for entry in dir::entries(&buf, filetype) {
                let e = entry?;
                let pos = n * bs + e.offset as u64;
                if pos < from || e.ino == 0 {
                    continue;
                }
                if e.ino > self.sb.inodes_count {
                    return Err(Error::Corrupt(
                        "directory entry names an inode out of range",
                    ));
                }
                let next = pos + e.rec_len as u64;
                if !each(e.name, e.ino, e.file_type, next) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Finds `name` in directory `dir`: its block index, the entry's
    /// offset there, its inode and file type.
    fn find(&mut self, dir: &Inode, name: &[u8]) -> Result<Option<(u64, usize, u32, u8)>> {
        let filetype = self.sb.has_filetype();
        let inodes = self.sb.inodes_count;
        for n in 0..self.dir_blocks(dir)? {
            let b = self.dir_block_place(dir, n)?;
            let found = self.peek_meta(b, |buf| -> Result<_> {
                for entry in dir::entries(buf, filetype) {
                    let e = entry?;
                    if e.ino != 0 && e.name == name {
                        if e.ino > inodes {
                            return Err(Error::Corrupt(
                                "directory entry names an inode out of range",
                            ));
                        }
                        return Ok(Some((n, e.offset, e.ino, e.file_type)));
                    }
                }
                Ok(None)
            })??;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// The inode `name` names in directory `dir_ino`; ENOENT for none.
    pub fn lookup(&mut self, dir_ino: u32, name: &[u8]) -> Result<u32> {
        let dir = self.inode(dir_ino)?;
        match self.find(&dir, name)? {
            Some((_, _, ino, _)) => Ok(ino),
            None => Err(Error::Sys(Errno::ENOENT)),
        }
    }

    /// Adds the entry `name` -> `ino` to directory `dir_ino`, growing it by
    /// a block when no block has room. The caller checked the name is new.
    fn add_entry(&mut self, dir_ino: u32, name: &[u8], ino: u32, mode: u32) -> Result<()> {
        if name.is_empty() || name.len() > dir::NAME_MAX {
            return Err(Error::Sys(if name.is_empty() {
                Errno::ENOENT
            } else {
                Errno::ENAMETOOLONG
            }));
        }
        let filetype = self.sb.has_filetype();
        let ftype = if filetype { dir::file_type_of(mode) } else { 0 };
        let mut d = self.inode(dir_ino)?;
        for n in 0..self.dir_blocks(&d)? {
            let b = self.dir_block_place(&d, n)?;
            if self.change_meta_if(b, |buf| dir::insert(buf, name, ino, ftype, filetype))? {
                return self.dir_changed(dir_ino, &mut d);
            }
        }
        let n = d.size / self.block_size as u64;
        let (b, _) = self.bmap_alloc(dir_ino, &mut d, n)?;
        let mut buf = vec![0; self.block_size];
        dir::init_empty(&mut buf);
        dir::insert(&mut buf, name, ino, ftype, filetype)?;
        self.write_meta(b, &buf)?;
        d.size += self.block_size as u64;
        self.dir_changed(dir_ino, &mut d)
    }

    /// A directory's entries changed: an htree index no longer matches
    /// them, so the index flag goes (the directory stays a valid linear
    /// one, and e2fsck -D can index it again).
    fn dir_changed(&mut self, dir_ino: u32, d: &mut Inode) -> Result<()> {
        d.flags &= !flags::INDEX;
        self.write_inode(dir_ino, d)
    }

    /// Removes `name` from directory `dir_ino`; returns the inode it named.
    fn remove_entry(&mut self, dir_ino: u32, name: &[u8]) -> Result<u32> {
        let mut d = self.inode(dir_ino)?;
        let Some((n, offset, ino, _)) = self.find(&d, name)? else {
            return Err(Error::Sys(Errno::ENOENT));
        };
        let b = self.dir_block_place(&d, n)?;
        let filetype = self.sb.has_filetype();
        self.change_meta(b, |buf| dir::remove(buf, offset, filetype))?;
        self.dir_changed(dir_ino, &mut d)?;
        Ok(ino)
    }

    /// Points the existing entry `name` of `dir_ino` at `ino`.
    fn retarget_entry(&mut self, dir_ino: u32, name: &[u8], ino: u32, mode: u32) -> Result<()> {
        let mut d = self.inode(dir_ino)?;
        let Some((n, offset, _, _)) = self.find(&d, name)? else {
            return Err(Error::Sys(Errno::ENOENT));
        };
        let b = self.dir_block_place(&d, n)?;
        let filetype = self.sb.has_filetype();
        self.change_meta(b, |buf| {
            dir::retarget(buf, offset, ino, dir::file_type_of(mode), filetype);
            Ok(())
        })?;
        self.dir_changed(dir_ino, &mut d)
    }

    /// Whether directory `dir` holds nothing but "." and "..".
    pub fn dir_is_empty(&mut self, dir: &Inode) -> Result<bool> {
        let mut empty = true;
        self.read_dir(dir, 0, |name, _, _, _| {
            empty = name == b"." || name == b"..";
            empty
        })?;
        Ok(empty)
    }

    // ---- making and removing names ----

    /// Makes a new inode (not yet named anywhere) with one link.
    fn new_inode(&mut self, parent: u32, new: NewInode) -> Result<(u32, Inode)> {
        let is_dir = new.mode & S_IFMT == S_IFDIR;
        let ino = self.alloc_inode(parent, is_dir)?;
        let mut inode = Inode::empty();
        inode.mode = new.mode as u16;
        inode.uid = new.uid;
        inode.gid = new.gid;
        inode.atime = new.now;
        inode.ctime = new.now;
        inode.mtime = new.now;
        inode.crtime = new.now;
        inode.links_count = 1;
        if self.sb.inode_size > 128 {
            inode.extra_isize = layout::NEW_EXTRA_ISIZE;
        }
        // A slot freed earlier keeps its old bytes; start from zeros.
        let (block, at) = self.inode_place(ino)?;
        let mut buf = vec![0; self.block_size];
        self.read_block(block, &mut buf)?;
        let size = usize::from(self.sb.inode_size);
        inode.generation = le32(&buf, at + 100).wrapping_add(1);
        buf[at..at + size].fill(0);
        inode.encode(&mut buf[at..at + size]);
        self.write_meta(block, &buf)?;
        Ok((ino, inode))
    }

    /// Checks `name` can be made in `parent`: a directory, the name not
    /// there yet (EEXIST), of a length ext2 allows.
    fn check_new_name(&mut self, parent: u32, name: &[u8]) -> Result<Inode> {
        self.begin()?;
        if name.len() > dir::NAME_MAX {
            return Err(Error::Sys(Errno::ENAMETOOLONG));
        }
        let dir = self.inode(parent)?;
        if !dir.is_dir() {
            return Err(Error::Sys(Errno::ENOTDIR));
        }
        if self.find(&dir, name)?.is_some() {
            return Err(Error::Sys(Errno::EEXIST));
        }
        Ok(dir)
    }

    /// Creates a file of any type but a directory or symbolic link (a
    /// regular file, FIFO, socket or device node with `rdev`) named `name`
    /// in `parent`. Returns its inode number.
    pub fn create(&mut self, parent: u32, name: &[u8], new: NewInode, rdev: u64) -> Result<u32> {
        self.check_new_name(parent, name)?;
        let (ino, mut inode) = self.new_inode(parent, new)?;
        let kind = new.mode & S_IFMT;
        if kind == abi::types::S_IFCHR || kind == abi::types::S_IFBLK {
            inode.set_rdev(rdev);
            self.write_inode(ino, &inode)?;
        }
        self.name_new_inode(parent, name, ino, inode)
    }

    /// Enters a just-made inode under `name`, or frees it again if the
    /// directory cannot take the name (a full disk).
    fn name_new_inode(&mut self, parent: u32, name: &[u8], ino: u32, inode: Inode) -> Result<u32> {
        if let Err(e) = self.add_entry(parent, name, ino, u32::from(inode.mode)) {
            self.release_within(ino)?;
            return Err(e);
        }
        Ok(ino)
    }

    /// Makes directory `name` in `parent`, with "." and "..".
    pub fn mkdir(&mut self, parent: u32, name: &[u8], new: NewInode) -> Result<u32> {
        let mut p = self.check_new_name(parent, name)?;
        if p.links_count >= LINK_MAX {
            return Err(Error::Sys(Errno::EMLINK));
        }
        let new = NewInode {
            mode: (new.mode & !S_IFMT) | S_IFDIR,
            ..new
        };
        let (ino, mut inode) = self.new_inode(parent, new)?;
        let mut buf = vec![0; self.block_size];
        dir::init_first(&mut buf, ino, parent, self.sb.has_filetype());
        let block = match self.bmap_alloc(ino, &mut inode, 0) {
            Ok((b, _)) => b,
            Err(e) => {
                self.write_inode(ino, &inode)?;
                self.release_within(ino)?;
                return Err(e);
            }
        };
        self.write_meta(block, &buf)?;
        inode.size = self.block_size as u64;
        inode.links_count = 2;
        self.write_inode(ino, &inode)?;
        p.links_count += 1;
        self.write_inode(parent, &p)?;
        if let Err(e) = self.add_entry(parent, name, ino, u32::from(inode.mode)) {
            let mut p = self.inode(parent)?;
            p.links_count -= 1;
            self.write_inode(parent, &p)?;
            self.release_within(ino)?;
            return Err(e);
        }
        Ok(ino)
    }

    /// Makes symbolic link `name` in `parent` pointing at `target`: in
    /// the inode when it fits, else in a block of its own.
    pub fn symlink(
        &mut self,
        parent: u32,
        name: &[u8],
        target: &[u8],
        new: NewInode,
    ) -> Result<u32> {
        if target.is_empty() {
            return Err(Error::Sys(Errno::ENOENT));
        }
        if target.len() >= self.block_size {
            return Err(Error::Sys(Errno::ENAMETOOLONG));
        }
        self.check_new_name(parent, name)?;
        let new = NewInode {
            mode: S_IFLNK | 0o777,
            ..new
        };
        let (ino, mut inode) = self.new_inode(parent, new)?;
        if target.len() <= FAST_SYMLINK_MAX {
            let mut raw = [0u8; 60];
            raw[..target.len()].copy_from_slice(target);
            for (i, p) in inode.block.iter_mut().enumerate() {
                *p = le32(&raw, 4 * i);
            }
            inode.size = target.len() as u64;
            self.write_inode(ino, &inode)?;
        } else if let Err(e) = self.write_within(ino, 0, target) {
            self.release_within(ino)?;
            return Err(e);
        } else {
            inode = self.inode(ino)?;
        }
        self.name_new_inode(parent, name, ino, inode)
    }

    /// Adds the name `name` in `parent` for the existing inode `ino` (not
    /// a directory: the caller refuses those with EPERM).
    pub fn link(&mut self, parent: u32, name: &[u8], ino: u32, now: Time) -> Result<()> {
        self.check_new_name(parent, name)?;
        let mut inode = self.inode(ino)?;
        if inode.links_count >= LINK_MAX {
            return Err(Error::Sys(Errno::EMLINK));
        }
        self.add_entry(parent, name, ino, u32::from(inode.mode))?;
        inode.links_count += 1;
        inode.ctime = now;
        self.write_inode(ino, &inode)
    }

    /// Removes the name `name` (not a directory's) from `parent` and
    /// drops a link. Returns the inode and whether it has no links left:
    /// then the caller calls [`Fs::release`] once no file has it open.
    pub fn unlink(&mut self, parent: u32, name: &[u8], now: Time) -> Result<(u32, bool)> {
        self.begin()?;
        let dir = self.inode(parent)?;
        let Some((_, _, ino, _)) = self.find(&dir, name)? else {
            return Err(Error::Sys(Errno::ENOENT));
        };
        let mut inode = self.inode(ino)?;
        if inode.is_dir() {
            return Err(Error::Sys(Errno::EISDIR));
        }
        self.remove_entry(parent, name)?;
        inode.links_count = inode.links_count.saturating_sub(1);
        inode.ctime = now;
        self.write_inode(ino, &inode)?;
        Ok((ino, inode.links_count == 0))
    }

    /// Removes the empty directory `name` from `parent` (ENOTEMPTY if it
    /// is not empty). Returns its inode, which the caller releases once
    /// no file has it open.
    pub fn rmdir(&mut self, parent: u32, name: &[u8], now: Time) -> Result<u32> {
        self.begin()?;
        if name == b"." {
            return Err(Error::Sys(Errno::EINVAL));
        }
        if name == b".." {
            return Err(Error::Sys(Errno::ENOTEMPTY));
        }
        let ino = self.lookup(parent, name)?;
        let mut inode = self.inode(ino)?;
        if !inode.is_dir() {
            return Err(Error::Sys(Errno::ENOTDIR));
        }
        if !self.dir_is_empty(&inode)? {
            return Err(Error::Sys(Errno::ENOTEMPTY));
        }
        self.remove_entry(parent, name)?;
        inode.links_count = 0;
        inode.ctime = now;
        self.write_inode(ino, &inode)?;
        let mut p = self.inode(parent)?;
        p.links_count = p.links_count.saturating_sub(1);
        p.ctime = now;
        p.mtime = now;
        self.write_inode(parent, &p)?;
        Ok(ino)
    }

    /// Moves `old_name` in `old_parent` to `new_name` in `new_parent`,
    /// replacing what is there (a file by a file, an empty directory by a
    /// directory). Returns the inode it replaced with no links left, for
    /// the caller to release. The caller has checked a directory is not
    /// moved under itself.
    pub fn rename(
        &mut self,
        old_parent: u32,
        old_name: &[u8],
        new_parent: u32,
        new_name: &[u8],
        now: Time,
    ) -> Result<Option<u32>> {
        self.begin()?;
        if new_name.len() > dir::NAME_MAX {
            return Err(Error::Sys(Errno::ENAMETOOLONG));
        }
        let ino = self.lookup(old_parent, old_name)?;
        let mut moving = self.inode(ino)?;
        let is_dir = moving.is_dir();
        let target = self.inode(new_parent)?;
        let existing = self.find(&target, new_name)?.map(|(_, _, t, _)| t);
        if existing == Some(ino) {
            return Ok(None);
        }
        let mut replaced = None;
        if let Some(victim_ino) = existing {
            let mut victim = self.inode(victim_ino)?;
            match (is_dir, victim.is_dir()) {
                (true, false) => return Err(Error::Sys(Errno::ENOTDIR)),
                (false, true) => return Err(Error::Sys(Errno::EISDIR)),
                (true, true) if !self.dir_is_empty(&victim)? => {
                    return Err(Error::Sys(Errno::ENOTEMPTY));
                }
                _ => {}
            }
            self.retarget_entry(new_parent, new_name, ino, u32::from(moving.mode))?;
            victim.links_count = if victim.is_dir() {
                0
            } else {
                victim.links_count.saturating_sub(1)
            };
            victim.ctime = now;
            self.write_inode(victim_ino, &victim)?;
            if victim.is_dir() {
                // Its ".." no longer counts against the new parent.
                let mut p = self.inode(new_parent)?;
                p.links_count = p.links_count.saturating_sub(1);
                self.write_inode(new_parent, &p)?;
            }
            if victim.links_count == 0 {
                replaced = Some(victim_ino);
            }
        } else {
            if is_dir && old_parent != new_parent && target.links_count >= LINK_MAX {
                return Err(Error::Sys(Errno::EMLINK));
            }
            self.add_entry(new_parent, new_name, ino, u32::from(moving.mode))?;
        }
        self.remove_entry(old_parent, old_name)?;
        if is_dir && old_parent != new_parent {
            // The moved directory's ".." now counts against its new parent.
            let mut p = self.inode(new_parent)?;
            p.links_count += 1;
            self.write_inode(new_parent, &p)?;
            self.retarget_entry(ino, b"..", new_parent, S_IFDIR)?;
            let mut p = self.inode(old_parent)?;
            p.links_count = p.links_count.saturating_sub(1);
            self.write_inode(old_parent, &p)?;
            moving = self.inode(ino)?;
        }
        moving.ctime = now;
        self.write_inode(ino, &moving)?;
        for dir_ino in [old_parent, new_parent] {
            let mut d = self.inode(dir_ino)?;
            d.mtime = now;
            d.ctime = now;
            self.write_inode(dir_ino, &d)?;
        }
        Ok(replaced)
    }

    /// Frees inode `ino`, which has no links left and is open nowhere:
    /// its blocks, then the inode itself (dtime set, as e2fsck expects of
    /// a deleted inode).
    pub fn release(&mut self, ino: u32) -> Result<()> {
        self.begin()?;
        self.release_within(ino)
    }

    /// [`Fs::release`] in the transaction of the operation just done
    /// (the unlink, rmdir or rename that took the inode's last name), so
    /// a crash never finds the name gone and the inode still held. The
    /// caller calls it right after that operation, with nothing between.
    pub fn release_after(&mut self, ino: u32) -> Result<()> {
        self.writable()?;
        self.release_within(ino)
    }

    /// [`Fs::release`] as a step of a larger operation (undoing a
    /// creation that failed part way).
    fn release_within(&mut self, ino: u32) -> Result<()> {
        let mut inode = self.inode(ino)?;
        let was_dir = inode.is_dir();
        let has_blocks = !(inode.is_symlink() && self.is_fast_symlink(&inode))
            && inode.file_type() != abi::types::S_IFCHR
            && inode.file_type() != abi::types::S_IFBLK;
        if has_blocks {
            self.free_from(&mut inode, 0)?;
        }
        if inode.file_acl != 0 {
            self.drop_xattr_block(inode.file_acl)?;
            inode.file_acl = 0;
        }
        inode.size = 0;
        inode.links_count = 0;
        inode.block = [0; layout::N_BLOCKS];
        inode.dtime = inode.ctime.secs.max(1) as u32;
        self.write_inode(ino, &inode)?;
        self.free_inode(ino, was_dir)
    }

    // ---- extended attributes (layout in `xattr`) ----

    /// Bytes past `i_extra_isize` where inode `inode` may keep attributes
    /// (0: a 128-byte inode, or one with no extra size to start from).
    fn xattr_room(&self, inode: &Inode) -> usize {
        let size = usize::from(self.sb.inode_size);
        let start = 128 + usize::from(inode.extra_isize);
        if inode.extra_isize == 0 || start >= size {
            0
        } else {
            size - start
        }
    }

    /// EUCLEAN for an attribute block number outside the file system.
    fn xattr_block_in_range(&self, block: u32) -> Result<()> {
        if self.in_range(block) {
            Ok(())
        } else {
            Err(Error::Corrupt(
                "extended attribute block outside the file system",
            ))
        }
    }

    /// Reads attribute block `block`: its entries and reference count.
    fn xattr_block(&mut self, block: u32) -> Result<(Vec<xattr::Entry>, u32)> {
        self.xattr_block_in_range(block)?;
        self.peek_meta(block, xattr::decode_block)?
    }

    /// How many inodes share attribute block `block`, from its header
    /// alone: a damaged table must not keep its inode from being released
    /// or given a new block.
    fn xattr_block_refs(&mut self, block: u32) -> Result<u32> {
        self.xattr_block_in_range(block)?;
        let (magic, refs) = self.peek_meta(block, |buf| (le32(buf, 0), le32(buf, 4)))?;
        if magic != xattr::MAGIC {
            return Err(Error::Corrupt(
                "extended attribute block without its magic number",
            ));
        }
        Ok(refs)
    }

    /// Inode `ino`'s extended attributes: those in the inode, then those
    /// in its block, the order Linux lists them in.
    pub fn xattrs(&mut self, ino: u32) -> Result<Attrs> {
        let inode = self.inode(ino)?;
        let room = self.xattr_room(&inode);
        let mut entries = Vec::new();
        if room > 0 {
            let (block, at) = self.inode_place(ino)?;
            let end = at + usize::from(self.sb.inode_size);
            entries =
                self.peek_meta(block, |buf| xattr::decode_in_inode(&buf[end - room..end]))??;
        }
        if inode.file_acl != 0 {
            entries.extend(self.xattr_block(inode.file_acl)?.0);
        }
        Ok(Attrs::from_pairs(
            entries
                .into_iter()
                .map(|e| (e.full_name(), e.value))
                .collect(),
        ))
    }

    /// Makes `attrs` inode `ino`'s extended attributes, laid out as Linux
    /// lays them (`xattr::place`), and its change time `now`. A block
    /// shared with other inodes is left to them and a new one made; a
    /// block of its own is rewritten where it is. ENOSPC when they do not
    /// fit one block, with nothing changed.
    pub fn set_xattrs(&mut self, ino: u32, attrs: &Attrs, now: Time) -> Result<()> {
        self.begin()?;
        let mut inode = self.inode(ino)?;
        let entries = attrs
            .iter()
            .map(|(name, value)| xattr::Entry::new(name, value))
            .collect::<Result<Vec<_>>>()?;
        let room = self.xattr_room(&inode);
        let placed = xattr::place(&entries, room, self.block_size)?;
        let sectors = (self.block_size / 512) as u32;
        let old = inode.file_acl;
        match placed.block {
            Some(bytes) => {
                let own = old != 0 && self.xattr_block_refs(old)? == 1;
                if own {
                    self.write_meta(old, &bytes)?;
                } else {
                    let new = self.alloc_block(self.group_of_inode(ino))?;
                    self.write_meta(new, &bytes)?;
                    if old != 0 {
                        self.drop_xattr_block(old)?;
                    } else {
                        inode.blocks += sectors;
                    }
                    inode.file_acl = new;
                }
            }
            None if old != 0 => {
                self.drop_xattr_block(old)?;
                inode.file_acl = 0;
                inode.blocks = inode.blocks.saturating_sub(sectors);
            }
            None => {}
        }
        inode.ctime = now;
        let (block, at) = self.inode_place(ino)?;
        let end = at + usize::from(self.sb.inode_size);
        self.change_meta(block, |buf| {
            inode.encode(&mut buf[at..end]);
            buf[end - room..end].copy_from_slice(&placed.in_inode);
            Ok(())
        })?;
        // Linux marks a file system that holds attributes as it writes the
        // first (`ext4_xattr_update_super_block`).
        if self.sb.feature_compat & layout::compat::EXT_ATTR == 0 {
            self.sb.feature_compat |= layout::compat::EXT_ATTR;
            self.write_superblock()?;
        }
        Ok(())
    }

    /// Drops one reference to an extended-attribute block (shared between
    /// inodes with the same attributes: a count at byte 4), freeing it
    /// with the last.
    fn drop_xattr_block(&mut self, block: u32) -> Result<()> {
        let refs = self.xattr_block_refs(block)?;
        if refs <= 1 {
            return self.free_block(block);
        }
        self.change_meta(block, |buf| {
            put32(buf, 4, refs - 1);
            Ok(())
        })
    }

    /// The root directory's inode number.
    pub fn root(&self) -> u32 {
        ROOT_INO
    }

    /// Free blocks and inodes, for statfs.
    pub fn free_counts(&self) -> (u32, u32) {
        (self.sb.free_blocks_count, self.sb.free_inodes_count)
    }
}

/// Finds a bit among the first `limit` of `bitmap`, from `from` on,
/// that is clear there and in `kept_back` (when given: the bitmap as the
/// last commit left it). Full words are passed over whole: a group's
/// bitmap is mostly full in front of its free space, and every
/// allocation looks from the start.
fn find_clear(bitmap: &[u8], kept_back: Option<&[u8]>, from: usize, limit: usize) -> Option<usize> {
    let busy = |byte: usize| bitmap[byte] | kept_back.map_or(0, |k| k[byte]);
    let mut i = from;
    while i < limit {
        if i.is_multiple_of(64) && i + 64 <= limit && (i / 8..i / 8 + 8).all(|b| busy(b) == 0xff) {
            i += 64;
        } else if i.is_multiple_of(8) && busy(i / 8) == 0xff {
            i += 8;
        } else if busy(i / 8) & (1 << (i % 8)) == 0 {
            return Some(i);
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_clear;
    use std::vec::Vec;

    /// The bit-by-bit search `find_clear` must agree with.
    fn one_by_one(bitmap: &[u8], kept_back: &[u8], from: usize, limit: usize) -> Option<usize> {
        let clear = |map: &[u8], i: usize| map[i / 8] & (1 << (i % 8)) == 0;
        (from..limit).find(|&i| clear(bitmap, i) && clear(kept_back, i))
    }

    #[test]
    fn find_clear_skips_full_words_and_finds_what_one_by_one_finds() {
        let mut x: u64 = 99;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let len = 1 + (next() % 64) as usize;
            // Mostly full bytes, with a few clear bits here and there.
            let mut map = || -> Vec<u8> {
                (0..len)
                    .map(|_| if next() % 4 == 0 { next() as u8 } else { 0xff })
                    .collect()
            };
            let bitmap = map();
            // Mostly clear: the few blocks the transaction freed.
            let kept_back: Vec<u8> = map().iter().map(|b| !b).collect();
            let limit = (next() % (8 * len as u64 + 1)) as usize;
            let from = (next() % (limit as u64 + 1)) as usize;
            let none = vec![0; len];
            assert_eq!(
                find_clear(&bitmap, Some(&kept_back), from, limit),
                one_by_one(&bitmap, &kept_back, from, limit),
                "{bitmap:x?} {kept_back:x?} from {from} limit {limit}"
            );
            assert_eq!(
                find_clear(&bitmap, None, from, limit),
                one_by_one(&bitmap, &none, from, limit),
                "{bitmap:x?} from {from} limit {limit}"
            );
        }
    }
}
