//! ext3's journal: the JBD2 log format, its recovery, and a writer.
//!
//! The journal is a file (inode 8) used as a circular log. Its block 0 is
//! the journal superblock: how long the log is, where the oldest
//! transaction not yet written home starts (`start`, 0 when the log is
//! empty) and its sequence number. A transaction in the log is:
//!
//! ```text
//!   [revoke]* [descriptor: tags naming home blocks] [copies of them] ... [commit]
//! ```
//!
//! all stamped with the transaction's sequence number. Only a transaction
//! whose commit block made it to the disk counts: recovery replays the
//! copies of every complete transaction to their home blocks, oldest
//! first, and ignores the torn one at the end. A revoke record says "do
//! not replay this block from this transaction or an older one": a block
//! freed after it was logged as metadata may hold file data now.
//!
//! Every number in the journal is big-endian (JBD2 came from a kernel that
//! also ran on big-endian machines), unlike the rest of ext2.
//!
//! The writer here keeps the log simple: transactions are appended from
//! the log's first block, and when the next one would not fit before the
//! end, everything logged is checkpointed (the home copies written and
//! the device flushed, `BlockDevice::flush_all`) and the log starts again
//! empty. Until then the home copies are written as a cache finds it
//! convenient (`BlockDevice::write_logged`): a commit's flush does not
//! wait for the previous commits' blocks, as JBD2 leaves them to its
//! checkpoint. It never writes a
//! transaction across the end, but recovery reads logs that do, as Linux
//! and e2fsck write them.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;

use super::{BlockDevice, Error, Result};
use crate::bytes::{be32, put_be32};

/// The first four bytes of every journal block: superblock, descriptor,
/// commit and revoke blocks alike.
pub const MAGIC: u32 = 0xc03b_3998;

const DESCRIPTOR: u32 = 1;
const COMMIT: u32 = 2;
const SUPERBLOCK_V1: u32 = 3;
const SUPERBLOCK_V2: u32 = 4;
const REVOKE: u32 = 5;

/// Journal features (v2 superblock).
pub mod features {
    /// compat: v1 commit-block checksums.
    pub const COMPAT_CHECKSUM: u32 = 0x1;
    /// incompat: revoke records.
    pub const INCOMPAT_REVOKE: u32 = 0x1;
    /// incompat: 64-bit block numbers in tags and revoke records.
    pub const INCOMPAT_64BIT: u32 = 0x2;
    /// incompat: commit blocks written without waiting for the copies.
    pub const INCOMPAT_ASYNC_COMMIT: u32 = 0x4;
    /// What recovery here understands (checksums it does not).
    pub const INCOMPAT_SUPPORTED: u32 = INCOMPAT_REVOKE | INCOMPAT_64BIT | INCOMPAT_ASYNC_COMMIT;
}

/// Tag flags in a descriptor block.
const FLAG_ESCAPE: u32 = 1;
const FLAG_SAME_UUID: u32 = 2;
const FLAG_LAST_TAG: u32 = 8;

/// Every journal block starts with magic, type and sequence.
const HEADER: usize = 12;

fn header(b: &mut [u8], kind: u32, sequence: u32) {
    put_be32(b, 0, MAGIC);
    put_be32(b, 4, kind);
    put_be32(b, 8, sequence);
}

/// The journal superblock's fields that recovery and the writer use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalSuper {
    pub block_size: u32,
    /// Blocks in the journal, superblock included.
    pub maxlen: u32,
    /// The log's first block (1).
    pub first: u32,
    /// The sequence number of the transaction at `start`.
    pub sequence: u32,
    /// Where the log starts; 0: the log is empty.
    pub start: u32,
    pub feature_incompat: u32,
    pub feature_compat: u32,
    pub uuid: [u8; 16],
}

impl JournalSuper {
    pub fn decode(b: &[u8]) -> Result<JournalSuper> {
        if be32(b, 0) != MAGIC {
            return Err(Error::Corrupt("no magic number in the journal superblock"));
        }
        let kind = be32(b, 4);
        if kind != SUPERBLOCK_V1 && kind != SUPERBLOCK_V2 {
            return Err(Error::Corrupt("journal superblock of an unknown type"));
        }
        let v2 = kind == SUPERBLOCK_V2;
        let mut uuid = [0; 16];
        if v2 {
            uuid.copy_from_slice(&b[0x30..0x40]);
        }
        let sb = JournalSuper {
            block_size: be32(b, 0xc),
            maxlen: be32(b, 0x10),
            first: be32(b, 0x14),
            sequence: be32(b, 0x18),
            start: be32(b, 0x1c),
            feature_compat: if v2 { be32(b, 0x24) } else { 0 },
            feature_incompat: if v2 { be32(b, 0x28) } else { 0 },
            uuid,
        };
        if sb.first == 0
            || sb.first >= sb.maxlen
            || (sb.start != 0 && (sb.start < sb.first || sb.start >= sb.maxlen))
        {
            return Err(Error::Corrupt(
                "journal superblock's log bounds are impossible",
            ));
        }
        Ok(sb)
    }

    /// Writes `start` and `sequence` into the superblock as read.
    fn encode(&self, b: &mut [u8]) {
        put_be32(b, 0x18, self.sequence);
        put_be32(b, 0x1c, self.start);
    }

    fn tag_bytes(&self) -> usize {
        if self.feature_incompat & features::INCOMPAT_64BIT != 0 {
            12
        } else {
            8
        }
    }

    fn revoke_record_bytes(&self) -> usize {
        if self.feature_incompat & features::INCOMPAT_64BIT != 0 {
            8
        } else {
            4
        }
    }
}

/// One transaction found in the log: its sequence number and, for each
/// block it logged, where the copy is and where it belongs.
#[derive(Debug, Default)]
struct Found {
    sequence: u32,
    /// (log block holding the copy, home block, copy's first word escaped)
    blocks: Vec<(u32, u64, bool)>,
    revoked: Vec<u64>,
}

/// What recovery did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Complete transactions replayed.
    pub transactions: u32,
    /// Blocks written home.
    pub blocks: u32,
    /// Blocks a revoke record kept from being replayed.
    pub revoked: u32,
}

/// The journal of a mounted file system.
pub struct Journal {
    sb: JournalSuper,
    /// The superblock's block as read, so a write keeps what we do not know.
    sb_raw: Vec<u8>,
    /// Where each journal block is on the device (the journal inode's
    /// block map, read once).
    map: Vec<u32>,
    /// The next log block to write.
    head: u32,
    next_sequence: u32,
    /// Home blocks logged since the last checkpoint: freeing one needs a
    /// revoke record.
    logged: BTreeSet<u32>,
}

impl Journal {
    /// Opens the journal whose blocks are `map` (from the journal inode).
    pub fn open(dev: &mut impl BlockDevice, map: Vec<u32>, block_size: usize) -> Result<Journal> {
        let Some(&first_block) = map.first() else {
            return Err(Error::Corrupt("the journal inode has no blocks"));
        };
        let mut sb_raw = vec![0; block_size];
        dev.read(u64::from(first_block), &mut sb_raw)?;
        let sb = JournalSuper::decode(&sb_raw)?;
        if sb.block_size as usize != block_size || sb.maxlen as usize > map.len() {
            return Err(Error::Corrupt(
                "journal superblock does not match the journal inode",
            ));
        }
        if sb.feature_incompat & !features::INCOMPAT_SUPPORTED != 0
            || sb.feature_compat & features::COMPAT_CHECKSUM != 0
        {
            // Checksummed journals (ext4's) are not ours to replay.
            return Err(Error::Sys(abi::Errno::EINVAL));
        }
        let head = sb.first;
        let next_sequence = sb.sequence;
        Ok(Journal {
            sb,
            sb_raw,
            map,
            head,
            next_sequence,
            logged: BTreeSet::new(),
        })
    }

    pub fn superblock(&self) -> &JournalSuper {
        &self.sb
    }

    /// Whether the log holds transactions that may not be home yet.
    pub fn needs_recovery(&self) -> bool {
        self.sb.start != 0
    }

    fn block_size(&self) -> usize {
        self.sb_raw.len()
    }

    fn read_log(&self, dev: &mut impl BlockDevice, at: u32, buf: &mut [u8]) -> Result<()> {
        dev.read(u64::from(self.map[at as usize]), buf)
    }

    fn write_log(&self, dev: &mut impl BlockDevice, at: u32, buf: &[u8]) -> Result<()> {
        dev.write(u64::from(self.map[at as usize]), buf)
    }

    /// The log block after `at`, wrapping from the end to the first.
    fn next(&self, at: u32) -> u32 {
        if at + 1 >= self.sb.maxlen {
            self.sb.first
        } else {
            at + 1
        }
    }

    /// Reads the log from `start` and returns its complete transactions,
    /// oldest first. The walk ends at the first block that is not the
    /// next expected one (wrong magic or sequence): that is where the
    /// last commit left off, or where a crash tore a transaction.
    fn scan(&self, dev: &mut impl BlockDevice) -> Result<Vec<Found>> {
        let mut done = Vec::new();
        let mut at = self.sb.start;
        let mut current = Found {
            sequence: self.sb.sequence,
            ..Found::default()
        };
        let mut buf = vec![0; self.block_size()];
        let tag_bytes = self.sb.tag_bytes();
        // A log can hold no more blocks than it has; a loop past that is
        // a damaged log.
        let mut budget = self.sb.maxlen;
        loop {
            if budget == 0 {
                return Err(Error::Corrupt("journal log runs in a circle"));
            }
            budget -= 1;
            self.read_log(dev, at, &mut buf)?;
            if be32(&buf, 0) != MAGIC || be32(&buf, 8) != current.sequence {
                break;
            }
            match be32(&buf, 4) {
                DESCRIPTOR => {
                    let mut tag = HEADER;
                    loop {
                        if tag + tag_bytes > buf.len() {
                            break;
                        }
                        let mut home = u64::from(be32(&buf, tag));
                        let flags = be32(&buf, tag + 4) & 0xffff;
                        if tag_bytes == 12 {
                            home |= u64::from(be32(&buf, tag + 8)) << 32;
                        }
                        at = self.next(at);
                        budget = budget.checked_sub(1).ok_or(Error::Corrupt(
                            "journal descriptor names more blocks than the log has",
                        ))?;
                        current.blocks.push((at, home, flags & FLAG_ESCAPE != 0));
                        tag += tag_bytes;
                        if flags & FLAG_SAME_UUID == 0 {
                            tag += 16;
                        }
                        if flags & FLAG_LAST_TAG != 0 {
                            break;
                        }
                    }
                }
                COMMIT => {
                    let next = current.sequence.wrapping_add(1);
                    done.push(core::mem::replace(
                        &mut current,
                        Found {
                            sequence: next,
                            ..Found::default()
                        },
                    ));
                }
                REVOKE => {
                    let record = self.sb.revoke_record_bytes();
                    let count = (be32(&buf, HEADER) as usize).min(buf.len());
                    let mut r = HEADER + 4;
                    while r + record <= count {
                        let block = if record == 8 {
                            u64::from(be32(&buf, r)) << 32 | u64::from(be32(&buf, r + 4))
                        } else {
                            u64::from(be32(&buf, r))
                        };
                        current.revoked.push(block);
                        r += record;
                    }
                }
                _ => break,
            }
            at = self.next(at);
        }
        Ok(done)
    }

    /// Replays every complete transaction in the log to its home blocks,
    /// then marks the log empty. `blocks_count`: the file system's size,
    /// past which a tag's home block is damage, not a block to write.
    pub fn recover(&mut self, dev: &mut impl BlockDevice, blocks_count: u64) -> Result<Recovery> {
        let mut report = Recovery::default();
        if self.sb.start == 0 {
            return Ok(report);
        }
        let transactions = self.scan(dev)?;
        // A block is revoked for every transaction up to the newest one
        // that revoked it.
        let mut revoked: BTreeMap<u64, u32> = BTreeMap::new();
        for t in &transactions {
            for &b in &t.revoked {
                revoked.insert(b, t.sequence);
            }
        }
        let mut buf = vec![0; self.block_size()];
        for t in &transactions {
            for &(at, home, escaped) in &t.blocks {
                if revoked
                    .get(&home)
                    .is_some_and(|&seq| t.sequence.wrapping_sub(seq) as i32 <= 0)
                {
                    report.revoked += 1;
                    continue;
                }
                if home >= blocks_count {
                    return Err(Error::Corrupt(
                        "journal tag names a block outside the file system",
                    ));
                }
                self.read_log(dev, at, &mut buf)?;
                if escaped {
                    put_be32(&mut buf, 0, MAGIC);
                }
                dev.write(home, &buf)?;
                report.blocks += 1;
            }
            report.transactions += 1;
        }
        let last = transactions
            .last()
            .map_or(self.sb.sequence, |t| t.sequence.wrapping_add(1));
        self.next_sequence = last;
        dev.flush()?;
        self.mark_empty(dev)?;
        Ok(report)
    }

    /// Records on disk that the log is empty, starting over at its first
    /// block with the next sequence number. The caller flushed the home
    /// copies of everything logged.
    fn mark_empty(&mut self, dev: &mut impl BlockDevice) -> Result<()> {
        self.sb.start = 0;
        self.sb.sequence = self.next_sequence;
        self.sb.encode(&mut self.sb_raw);
        let raw = self.sb_raw.clone();
        self.write_log(dev, 0, &raw)?;
        dev.flush()?;
        self.head = self.sb.first;
        self.logged.clear();
        Ok(())
    }

    /// Makes everything logged durable at home and empties the log.
    pub fn checkpoint(&mut self, dev: &mut impl BlockDevice) -> Result<()> {
        dev.flush_all()?;
        self.mark_empty(dev)
    }

    /// The most blocks one transaction may log: a quarter of the log, as
    /// JBD2 allows, so a transaction never waits on more than a checkpoint.
    pub fn max_transaction(&self) -> usize {
        ((self.sb.maxlen - self.sb.first) / 4) as usize
    }

    /// Whether `home` was logged since the last checkpoint: freeing it
    /// then needs a revoke record.
    pub fn was_logged(&self, home: u32) -> bool {
        self.logged.contains(&home)
    }

    /// The log blocks a transaction of `blocks` copies and `revokes`
    /// records takes, commit block included.
    fn blocks_needed(&self, blocks: usize, revokes: usize) -> usize {
        let bs = self.block_size();
        let per_descriptor = (bs - HEADER - 16) / self.sb.tag_bytes();
        let per_revoke = (bs - HEADER - 4) / self.sb.revoke_record_bytes();
        blocks.div_ceil(per_descriptor) + blocks + revokes.div_ceil(per_revoke) + 1
    }

    /// Commits one transaction: the revoke records, then the copies of
    /// `blocks` under descriptors, a flush (so they and every data block
    /// written before are durable: ordered mode), the commit block and a
    /// flush. Then the copies go home. EFBIG if it is larger than
    /// [`Journal::max_transaction`] allows.
    pub fn commit(
        &mut self,
        dev: &mut impl BlockDevice,
        blocks: &BTreeMap<u32, Vec<u8>>,
        revokes: &[u32],
    ) -> Result<()> {
        if blocks.is_empty() && revokes.is_empty() {
            return Ok(());
        }
        let needed = self.blocks_needed(blocks.len(), revokes.len());
        if needed > self.max_transaction() + 2 {
            return Err(Error::Sys(abi::Errno::EFBIG));
        }
        if self.head as usize + needed > self.sb.maxlen as usize {
            self.checkpoint(dev)?;
        }
        let sequence = self.next_sequence;
        let bs = self.block_size();
        let start = self.head;
        let mut at = self.head;
        let mut buf = vec![0; bs];

        // Revoke records first: replay must know them before the copies.
        let record = self.sb.revoke_record_bytes();
        for chunk in revokes.chunks((bs - HEADER - 4) / record) {
            buf.fill(0);
            header(&mut buf, REVOKE, sequence);
            let mut r = HEADER + 4;
            for &b in chunk {
                if record == 8 {
                    put_be32(&mut buf, r, 0);
                    put_be32(&mut buf, r + 4, b);
                } else {
                    put_be32(&mut buf, r, b);
                }
                r += record;
            }
            put_be32(&mut buf, HEADER, r as u32);
            self.write_log(dev, at, &buf)?;
            at += 1;
        }

        // Descriptors, each followed by the copies its tags name.
        let tag_bytes = self.sb.tag_bytes();
        let all: Vec<(&u32, &Vec<u8>)> = blocks.iter().collect();
        let per_descriptor = (bs - HEADER - 16) / tag_bytes;
        for group in all.chunks(per_descriptor) {
            buf.fill(0);
            header(&mut buf, DESCRIPTOR, sequence);
            let mut tag = HEADER;
            for (i, &(&home, data)) in group.iter().enumerate() {
                let mut flags = if i == 0 { 0 } else { FLAG_SAME_UUID };
                if be32(data, 0) == MAGIC {
                    flags |= FLAG_ESCAPE;
                }
                if i + 1 == group.len() {
                    flags |= FLAG_LAST_TAG;
                }
                put_be32(&mut buf, tag, home);
                put_be32(&mut buf, tag + 4, flags);
                tag += tag_bytes;
                if i == 0 {
                    buf[tag..tag + 16].copy_from_slice(&self.sb.uuid);
                    tag += 16;
                }
            }
            self.write_log(dev, at, &buf)?;
            at += 1;
            for (_, data) in group {
                let mut copy = data.to_vec();
                if be32(&copy, 0) == MAGIC {
                    put_be32(&mut copy, 0, 0);
                }
                self.write_log(dev, at, &copy)?;
                at += 1;
            }
        }

        // An empty log starts here: say so before the commit can count.
        if self.sb.start == 0 {
            self.sb.start = start;
            self.sb.sequence = sequence;
            self.sb.encode(&mut self.sb_raw);
            let raw = self.sb_raw.clone();
            self.write_log(dev, 0, &raw)?;
        }
        dev.flush()?;
        buf.fill(0);
        header(&mut buf, COMMIT, sequence);
        self.write_log(dev, at, &buf)?;
        at += 1;
        dev.flush()?;

        self.head = at;
        self.next_sequence = sequence.wrapping_add(1);
        // Home, when the cache finds it convenient: the log holds them
        // until the checkpoint, which waits for them (`flush_all`).
        for (&home, data) in blocks {
            dev.write_logged(u64::from(home), data)?;
            self.logged.insert(home);
        }
        Ok(())
    }
}
