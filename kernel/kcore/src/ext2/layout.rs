//! ext2's on-disk records, decoded into typed values and encoded back.
//!
//! Everything on an ext2 disk is little-endian and sits at a fixed byte
//! offset inside its record; the offsets here are those of Linux's
//! `fs/ext2/ext2.h` (and e2fsprogs' `ext2_fs.h`, which also names the ext3
//! and ext4 fields we must recognise to refuse what we cannot handle).
//!
//! Decoding never trusts the disk: a record whose numbers cannot be right
//! (a block size of 1 MiB, zero inodes per group) is refused as corrupt, so
//! the code above may use the numbers for arithmetic without checking again.
//! Encoding writes only the fields this module knows into the bytes that
//! were read, so the fields it does not know (checksums of other features,
//! the OS-dependent words) survive a write unchanged.

use super::{Error, Result};
pub(super) use crate::bytes::{le16, le32, put16, put32};

/// `s_magic`: the two bytes that say "this is ext2, ext3 or ext4".
pub const MAGIC: u16 = 0xef53;
/// The superblock always starts 1024 bytes into the device and is 1024
/// bytes long, whatever the block size.
pub const SUPERBLOCK_OFFSET: u64 = 1024;
pub const SUPERBLOCK_SIZE: usize = 1024;

/// The inode numbers ext2 reserves. Inode 1 lists bad blocks; 2 is the
/// root directory; 7 holds the blocks kept for growing the group
/// descriptor table; 8 is ext3's journal; 11 is usually `lost+found`, the
/// first ordinary inode (`s_first_ino` says so on revision 1).
pub const ROOT_INO: u32 = 2;
pub const RESIZE_INO: u32 = 7;
pub const JOURNAL_INO: u32 = 8;

/// The 15 block pointers of an inode: 12 direct, then one single, one
/// double and one triple indirect block.
pub const N_DIRECT: usize = 12;
pub const IND_BLOCK: usize = 12;
pub const DIND_BLOCK: usize = 13;
pub const TIND_BLOCK: usize = 14;
pub const N_BLOCKS: usize = 15;

/// `s_state`: unmounted cleanly, or errors were found.
pub const STATE_VALID: u16 = 1;
pub const STATE_ERRORS: u16 = 2;

/// Compatible features: an implementation that does not know them may
/// still read and write the file system.
pub mod compat {
    pub const DIR_PREALLOC: u32 = 0x1;
    pub const HAS_JOURNAL: u32 = 0x4;
    pub const EXT_ATTR: u32 = 0x8;
    pub const RESIZE_INODE: u32 = 0x10;
    pub const DIR_INDEX: u32 = 0x20;
}

/// Incompatible features: an implementation that does not know one must
/// not mount the file system at all.
pub mod incompat {
    pub const COMPRESSION: u32 = 0x1;
    pub const FILETYPE: u32 = 0x2;
    /// The journal holds transactions not yet written home (ext3).
    pub const RECOVER: u32 = 0x4;
    pub const JOURNAL_DEV: u32 = 0x8;
    pub const META_BG: u32 = 0x10;
    pub const EXTENTS: u32 = 0x40;
    pub const BIT64: u32 = 0x80;
    pub const FLEX_BG: u32 = 0x200;
    /// What this implementation knows how to read and write.
    pub const SUPPORTED: u32 = FILETYPE | RECOVER;
}

/// Read-only compatible features: one not known means mount read-only.
pub mod ro_compat {
    pub const SPARSE_SUPER: u32 = 0x1;
    pub const LARGE_FILE: u32 = 0x2;
    pub const BTREE_DIR: u32 = 0x4;
    pub const HUGE_FILE: u32 = 0x8;
    pub const GDT_CSUM: u32 = 0x10;
    pub const DIR_NLINK: u32 = 0x20;
    pub const EXTRA_ISIZE: u32 = 0x40;
    pub const METADATA_CSUM: u32 = 0x400;
    pub const SUPPORTED: u32 = SPARSE_SUPER | LARGE_FILE;
}

/// Inode flags (`i_flags`) this implementation acts on.
pub mod flags {
    /// The directory has an htree index (dir_index). We read such a
    /// directory as the linear list it also is, and clear the flag when we
    /// change it, which is how ext2 allows an old implementation to write.
    pub const INDEX: u32 = 0x1000;
    /// Extents instead of block pointers (ext4): we cannot read those.
    pub const EXTENTS: u32 = 0x80000;
    pub const INLINE_DATA: u32 = 0x1000_0000;
}

/// The superblock: the file system's geometry, counters and features.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub inodes_count: u32,
    pub blocks_count: u32,
    pub r_blocks_count: u32,
    pub free_blocks_count: u32,
    pub free_inodes_count: u32,
    /// 1 with 1 KiB blocks (block 0 holds the boot sector), else 0.
    pub first_data_block: u32,
    /// The block size is `1024 << log_block_size`.
    pub log_block_size: u32,
    pub blocks_per_group: u32,
    pub inodes_per_group: u32,
    pub mtime: u32,
    pub wtime: u32,
    pub mnt_count: u16,
    pub max_mnt_count: u16,
    pub state: u16,
    pub errors: u16,
    pub rev_level: u32,
    pub first_ino: u32,
    pub inode_size: u16,
    pub feature_compat: u32,
    pub feature_incompat: u32,
    pub feature_ro_compat: u32,
    pub uuid: [u8; 16],
    pub volume_name: [u8; 16],
    pub journal_inum: u32,
    pub last_orphan: u32,
    /// `s_hash_seed`, `s_def_hash_version`: how dir_index hashes names.
    pub hash_seed: [u32; 4],
    pub def_hash_version: u8,
}

impl Superblock {
    /// Decodes the 1024 bytes at [`SUPERBLOCK_OFFSET`]. Refuses a
    /// superblock that is not ext2's or whose geometry cannot be right.
    pub fn decode(b: &[u8]) -> Result<Superblock> {
        if b.len() < SUPERBLOCK_SIZE || le16(b, 56) != MAGIC {
            return Err(Error::Corrupt("no ext2 magic number in the superblock"));
        }
        let rev_level = le32(b, 76);
        let (first_ino, inode_size) = if rev_level == 0 {
            (11, 128)
        } else {
            (le32(b, 84), le16(b, 88))
        };
        let mut uuid = [0; 16];
        uuid.copy_from_slice(&b[104..120]);
        let mut volume_name = [0; 16];
        volume_name.copy_from_slice(&b[120..136]);
        let sb = Superblock {
            inodes_count: le32(b, 0),
            blocks_count: le32(b, 4),
            r_blocks_count: le32(b, 8),
            free_blocks_count: le32(b, 12),
            free_inodes_count: le32(b, 16),
            first_data_block: le32(b, 20),
            log_block_size: le32(b, 24),
            blocks_per_group: le32(b, 32),
            inodes_per_group: le32(b, 40),
            mtime: le32(b, 44),
            wtime: le32(b, 48),
            mnt_count: le16(b, 52),
            max_mnt_count: le16(b, 54),
            state: le16(b, 58),
            errors: le16(b, 60),
            rev_level,
            first_ino,
            inode_size,
            feature_compat: if rev_level == 0 { 0 } else { le32(b, 92) },
            feature_incompat: if rev_level == 0 { 0 } else { le32(b, 96) },
            feature_ro_compat: if rev_level == 0 { 0 } else { le32(b, 100) },
            uuid,
            volume_name,
            journal_inum: le32(b, 224),
            last_orphan: le32(b, 232),
            hash_seed: [le32(b, 236), le32(b, 240), le32(b, 244), le32(b, 248)],
            def_hash_version: b[252],
        };
        sb.check()?;
        Ok(sb)
    }

    /// The geometry checks every later computation relies on.
    fn check(&self) -> Result<()> {
        // Linux allows 1 KiB to 64 KiB blocks.
        if self.log_block_size > 6 {
            return Err(Error::Corrupt("block size over 64 KiB"));
        }
        let block_size = self.block_size() as u32;
        if self.first_data_block != u32::from(block_size == 1024) {
            return Err(Error::Corrupt(
                "first data block does not match the block size",
            ));
        }
        if self.blocks_per_group == 0
            || self.blocks_per_group > 8 * block_size
            || self.inodes_per_group == 0
            || self.inodes_per_group > 8 * block_size
        {
            return Err(Error::Corrupt("group size does not fit one bitmap block"));
        }
        let size = u32::from(self.inode_size);
        if size < 128 || size > block_size || !size.is_power_of_two() {
            return Err(Error::Corrupt(
                "inode size is not a power of two from 128 to the block size",
            ));
        }
        if self.blocks_count <= self.first_data_block {
            return Err(Error::Corrupt("no blocks after the first data block"));
        }
        let groups = self.group_count();
        if u64::from(self.inodes_per_group) * u64::from(groups) != u64::from(self.inodes_count) {
            return Err(Error::Corrupt(
                "inode count is not inodes per group times groups",
            ));
        }
        if self.first_ino < 11 || self.first_ino > self.inodes_count {
            return Err(Error::Corrupt("first ordinary inode out of range"));
        }
        if self.free_blocks_count > self.blocks_count || self.free_inodes_count > self.inodes_count
        {
            return Err(Error::Corrupt("more free blocks or inodes than there are"));
        }
        Ok(())
    }

    /// Encodes the fields above into `b`, which holds the superblock as it
    /// was read (so fields we do not know keep their values).
    pub fn encode(&self, b: &mut [u8]) {
        put32(b, 0, self.inodes_count);
        put32(b, 4, self.blocks_count);
        put32(b, 8, self.r_blocks_count);
        put32(b, 12, self.free_blocks_count);
        put32(b, 16, self.free_inodes_count);
        put32(b, 44, self.mtime);
        put32(b, 48, self.wtime);
        put16(b, 52, self.mnt_count);
        put16(b, 58, self.state);
        if self.rev_level >= 1 {
            put32(b, 96, self.feature_incompat);
            put32(b, 92, self.feature_compat);
            put32(b, 100, self.feature_ro_compat);
        }
        put32(b, 232, self.last_orphan);
    }

    pub fn block_size(&self) -> usize {
        1024 << self.log_block_size
    }

    pub fn group_count(&self) -> u32 {
        (self.blocks_count - self.first_data_block).div_ceil(self.blocks_per_group)
    }

    /// Which incompatible features are set that we cannot handle.
    pub fn unknown_incompat(&self) -> u32 {
        self.feature_incompat & !incompat::SUPPORTED
    }

    /// Which read-only compatible features we cannot keep true on write.
    pub fn unknown_ro_compat(&self) -> u32 {
        self.feature_ro_compat & !ro_compat::SUPPORTED
    }

    pub fn has_filetype(&self) -> bool {
        self.feature_incompat & incompat::FILETYPE != 0
    }

    /// Whether group `g` holds a backup of the superblock and group
    /// descriptors: every group without sparse_super; with it, groups 0
    /// and 1 and the powers of 3, 5 and 7.
    pub fn group_has_super(&self, g: u32) -> bool {
        if self.feature_ro_compat & ro_compat::SPARSE_SUPER == 0 || g <= 1 {
            return true;
        }
        let power_of = |base: u32| {
            let mut n = base;
            while n < g {
                n = n.saturating_mul(base);
            }
            n == g
        };
        g % 2 == 1 && (power_of(3) || power_of(5) || power_of(7))
    }
}

/// One group descriptor: where the group's bitmaps and inode table are,
/// and its free counts. 32 bytes each, in the blocks after the superblock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupDesc {
    pub block_bitmap: u32,
    pub inode_bitmap: u32,
    pub inode_table: u32,
    pub free_blocks_count: u16,
    pub free_inodes_count: u16,
    pub used_dirs_count: u16,
}

impl GroupDesc {
    pub const SIZE: usize = 32;

    pub fn decode(b: &[u8]) -> GroupDesc {
        GroupDesc {
            block_bitmap: le32(b, 0),
            inode_bitmap: le32(b, 4),
            inode_table: le32(b, 8),
            free_blocks_count: le16(b, 12),
            free_inodes_count: le16(b, 14),
            used_dirs_count: le16(b, 16),
        }
    }

    pub fn encode(&self, b: &mut [u8]) {
        put32(b, 0, self.block_bitmap);
        put32(b, 4, self.inode_bitmap);
        put32(b, 8, self.inode_table);
        put16(b, 12, self.free_blocks_count);
        put16(b, 14, self.free_inodes_count);
        put16(b, 16, self.used_dirs_count);
    }
}

/// A time stamp: seconds since 1970 and, in an inode with room for the
/// extra fields, nanoseconds (ext4's `*_extra`: two epoch bits that extend
/// the seconds past 2038, then 30 bits of nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Time {
    pub secs: i64,
    pub nanos: u32,
}

impl Time {
    fn decode(secs: u32, extra: Option<u32>) -> Time {
        let base = i64::from(secs as i32);
        match extra {
            Some(x) => Time {
                secs: base + (i64::from(x & 3) << 32),
                nanos: x >> 2,
            },
            None => Time {
                secs: base,
                nanos: 0,
            },
        }
    }

    fn encode(self) -> (u32, u32) {
        let low = self.secs as u32;
        let epoch = ((self.secs - i64::from(low as i32)) >> 32) as u32 & 3;
        (low, (self.nanos.min(999_999_999) << 2) | epoch)
    }
}

/// The fixed part of an on-disk inode every revision has.
const GOOD_OLD_INODE_SIZE: usize = 128;
/// The `i_extra_isize` this implementation writes into new inodes: room
/// for the nanoseconds of the three times and the creation time, as
/// mke2fs asks for by default.
pub const NEW_EXTRA_ISIZE: u16 = 32;

/// An inode, decoded. `block` holds the 15 block pointers, or for a fast
/// symbolic link its target, or for a device its number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inode {
    pub mode: u16,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub atime: Time,
    pub ctime: Time,
    pub mtime: Time,
    pub crtime: Time,
    pub dtime: u32,
    pub links_count: u16,
    /// 512-byte sectors held, counting indirect blocks: `st_blocks`.
    pub blocks: u32,
    pub flags: u32,
    pub block: [u32; N_BLOCKS],
    pub generation: u32,
    pub file_acl: u32,
    /// Bytes past the first 128 this inode uses (0 on a 128-byte inode).
    pub extra_isize: u16,
}

impl Inode {
    /// An all-zero inode (a free slot reads as this).
    pub fn empty() -> Inode {
        Inode {
            mode: 0,
            uid: 0,
            gid: 0,
            size: 0,
            atime: Time::default(),
            ctime: Time::default(),
            mtime: Time::default(),
            crtime: Time::default(),
            dtime: 0,
            links_count: 0,
            blocks: 0,
            flags: 0,
            block: [0; N_BLOCKS],
            generation: 0,
            file_acl: 0,
            extra_isize: 0,
        }
    }

    /// Decodes one on-disk inode of `b.len()` bytes (the superblock's
    /// inode size).
    pub fn decode(b: &[u8]) -> Result<Inode> {
        let extra_isize = if b.len() > GOOD_OLD_INODE_SIZE {
            le16(b, 128)
        } else {
            0
        };
        if extra_isize % 4 != 0 || GOOD_OLD_INODE_SIZE + usize::from(extra_isize) > b.len() {
            return Err(Error::Corrupt("inode's extra size does not fit the inode"));
        }
        // An extra field is there when the extra size reaches past its end.
        let extra = |at: usize| {
            (GOOD_OLD_INODE_SIZE + usize::from(extra_isize) >= at + 4).then(|| le32(b, at))
        };
        let mode = le16(b, 0);
        let mut block = [0; N_BLOCKS];
        for (i, p) in block.iter_mut().enumerate() {
            *p = le32(b, 40 + 4 * i);
        }
        let size_high = if u32::from(mode) & abi::types::S_IFMT == abi::types::S_IFREG {
            le32(b, 108)
        } else {
            0
        };
        Ok(Inode {
            mode,
            uid: u32::from(le16(b, 2)) | u32::from(le16(b, 120)) << 16,
            gid: u32::from(le16(b, 24)) | u32::from(le16(b, 122)) << 16,
            size: u64::from(le32(b, 4)) | u64::from(size_high) << 32,
            atime: Time::decode(le32(b, 8), extra(140)),
            ctime: Time::decode(le32(b, 12), extra(132)),
            mtime: Time::decode(le32(b, 16), extra(136)),
            crtime: match extra(144) {
                Some(secs) => Time::decode(secs, extra(148)),
                None => Time::default(),
            },
            dtime: le32(b, 20),
            links_count: le16(b, 26),
            blocks: le32(b, 28),
            flags: le32(b, 32),
            block,
            generation: le32(b, 100),
            file_acl: le32(b, 104),
            extra_isize,
        })
    }

    /// Encodes the inode into `b`, which holds the on-disk inode as it was
    /// read: fields this module does not know keep their bytes.
    pub fn encode(&self, b: &mut [u8]) {
        put16(b, 0, self.mode);
        put16(b, 2, self.uid as u16);
        put32(b, 4, self.size as u32);
        put16(b, 24, self.gid as u16);
        put16(b, 26, self.links_count);
        put32(b, 20, self.dtime);
        put32(b, 28, self.blocks);
        put32(b, 32, self.flags);
        for (i, p) in self.block.iter().enumerate() {
            put32(b, 40 + 4 * i, *p);
        }
        put32(b, 100, self.generation);
        put32(b, 104, self.file_acl);
        let regular = u32::from(self.mode) & abi::types::S_IFMT == abi::types::S_IFREG;
        put32(b, 108, if regular { (self.size >> 32) as u32 } else { 0 });
        put16(b, 120, (self.uid >> 16) as u16);
        put16(b, 122, (self.gid >> 16) as u16);
        let extra_isize = if b.len() > GOOD_OLD_INODE_SIZE {
            self.extra_isize
        } else {
            0
        };
        if b.len() > GOOD_OLD_INODE_SIZE {
            put16(b, 128, extra_isize);
        }
        let room = GOOD_OLD_INODE_SIZE + usize::from(extra_isize);
        for (base, extra_at, time) in [
            (8, 140, self.atime),
            (12, 132, self.ctime),
            (16, 136, self.mtime),
        ] {
            let (secs, extra) = time.encode();
            put32(b, base, secs);
            if room >= extra_at + 4 {
                put32(b, extra_at, extra);
            }
        }
        if room >= 152 {
            let (secs, extra) = self.crtime.encode();
            put32(b, 144, secs);
            put32(b, 148, extra);
        }
    }

    pub fn file_type(&self) -> u32 {
        u32::from(self.mode) & abi::types::S_IFMT
    }

    pub fn is_dir(&self) -> bool {
        self.file_type() == abi::types::S_IFDIR
    }

    pub fn is_regular(&self) -> bool {
        self.file_type() == abi::types::S_IFREG
    }

    pub fn is_symlink(&self) -> bool {
        self.file_type() == abi::types::S_IFLNK
    }

    /// A device node's number, as `st_rdev` gives it (`makedev`). ext2
    /// keeps an old 16-bit number in the first block pointer, or a 0 there
    /// and the new 32-bit encoding in the second.
    pub fn rdev(&self) -> u64 {
        let (major, minor) = if self.block[0] != 0 {
            let old = self.block[0];
            ((old >> 8) & 0xff, old & 0xff)
        } else {
            let new = self.block[1];
            ((new & 0xfff00) >> 8, (new & 0xff) | ((new >> 12) & 0xfff00))
        };
        abi::types::makedev(major, minor)
    }

    /// Stores a device number ([`abi::types::makedev`]'s encoding) the
    /// way Linux does: the old encoding when both halves fit it, the new
    /// one otherwise.
    pub fn set_rdev(&mut self, dev: u64) {
        let (major, minor) = (abi::types::dev_major(dev), abi::types::dev_minor(dev));
        self.block = [0; N_BLOCKS];
        if major < 256 && minor < 256 {
            self.block[0] = (major << 8) | minor;
        } else {
            self.block[1] = (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12);
        }
    }
}
