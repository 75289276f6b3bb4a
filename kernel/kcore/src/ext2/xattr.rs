//! Extended attributes as ext2 and ext3 keep them on the disk, in the
//! layout Linux's ext4 driver and e2fsprogs use (`fs/ext4/xattr.h`,
//! `lib/ext2fs/ext_attr.c`): pure encoding and decoding, so the host
//! tests run it; `fs::Fs::xattrs` and `set_xattrs` read and write it.
//!
//! An inode's attributes live in two places:
//!
//! ```text
//!  in the inode, past i_extra_isize      a block the inode's i_file_acl names
//!  +-------+----------------------+      +--------+------------+--- ... ---+
//!  | magic | entries ... | values |      | header | entries ...|    values |
//!  +-------+----------------------+      +--------+------------+--- ... ---+
//!           offsets count from the        32 bytes: magic, refcount, hash;
//!           first entry                   offsets count from the block start
//! ```
//!
//! An entry is 16 bytes and its name (without its namespace prefix, which
//! is a one-byte index), padded to 4 bytes. Entries run forward from the
//! start and end with a zero word; values, each padded to 4 bytes, are
//! packed backward from the end. Each entry carries a hash of its name and
//! value, and a block's header a hash of its entries: `e2fsck` checks both.
//! Linux puts an attribute in the inode when it fits and in the block
//! otherwise, and keeps a block's entries sorted; so does `place`.
//!
//! A block may be shared by inodes with the same attributes (its header
//! counts them); this file system never makes a shared block, but one it
//! finds (`mke2fs -d` and Linux make them) is copied before it is changed.

use alloc::vec;
use alloc::vec::Vec;

use super::{Error, Result};
use crate::bytes::{le16, le32, put16, put32};
use abi::Errno;

/// The first word of an attribute block and of an inode's attribute area.
pub const MAGIC: u32 = 0xea02_0000;
/// An attribute block's header: magic, refcount, blocks (1), hash,
/// checksum, and reserved words.
const HEADER: usize = 32;
/// An entry's fixed part: name length, name index, value offset, value
/// inode, value size, hash.
const ENTRY: usize = 16;

/// The name indexes: which namespace prefix a stored name goes after.
/// Indexes 2, 3 and 8 stand for a whole name (their stored name is
/// empty); Linux writes the first three and reads them all.
const PREFIXES: [(u8, &[u8]); 7] = [
    (2, b"system.posix_acl_access"),
    (3, b"system.posix_acl_default"),
    (8, b"system.richacl"),
    (1, b"user."),
    (4, b"trusted."),
    (6, b"security."),
    (7, b"system."),
];

fn padded(len: usize) -> usize {
    (len + 3) & !3
}

/// One attribute as stored: its name index, its name after the prefix,
/// its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub index: u8,
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

impl Entry {
    /// The stored form of attribute `name` (a full name, `user.x`);
    /// EOPNOTSUPP for a name no index stands for.
    pub fn new(name: &[u8], value: &[u8]) -> Result<Entry> {
        let (index, rest) = PREFIXES
            .iter()
            .find_map(|&(index, prefix)| {
                let rest = name.strip_prefix(prefix)?;
                // A whole-name index takes its name alone.
                (![2, 3, 8].contains(&index) || rest.is_empty()).then_some((index, rest))
            })
            .ok_or(Error::Sys(Errno::EOPNOTSUPP))?;
        if rest.len() > 255 {
            return Err(Error::Sys(Errno::ERANGE));
        }
        Ok(Entry {
            index,
            name: rest.to_vec(),
            value: value.to_vec(),
        })
    }

    /// The full name, prefix and all.
    pub fn full_name(&self) -> Vec<u8> {
        let prefix = PREFIXES
            .iter()
            .find(|(index, _)| *index == self.index)
            .map_or(&b""[..], |(_, prefix)| prefix);
        [prefix, &self.name[..]].concat()
    }

    /// Bytes the entry takes in the entry table, and its value in the
    /// value area.
    fn entry_len(&self) -> usize {
        ENTRY + padded(self.name.len())
    }

    fn value_len(&self) -> usize {
        padded(self.value.len())
    }

    /// The entry's hash: its stored name, then its value as little-endian
    /// words, zero-padded (`ext2fs_ext_attr_hash_entry`).
    pub fn hash(&self) -> u32 {
        let mut hash: u32 = 0;
        for &c in &self.name {
            hash = (hash << 5) ^ (hash >> 27) ^ u32::from(c);
        }
        let mut value = self.value.clone();
        value.resize(self.value_len(), 0);
        for word in value.as_chunks::<4>().0 {
            hash = (hash << 16) ^ (hash >> 16) ^ u32::from_le_bytes(*word);
        }
        hash
    }
}

/// Reads the entries of a table that starts at `first` in `area`, value
/// offsets counting from the start of `area`.
fn decode_entries(area: &[u8], first: usize) -> Result<Vec<Entry>> {
    let corrupt = |what| Err(Error::Corrupt(what));
    let mut out = Vec::new();
    let mut at = first;
    loop {
        // An inode's area may be filled to its end with no zero word.
        if at == area.len() && first == 0 {
            return Ok(out);
        }
        if at + 4 > area.len() {
            return corrupt("extended attribute entries run past their area");
        }
        if le32(area, at) == 0 {
            return Ok(out);
        }
        if at + ENTRY > area.len() {
            return corrupt("extended attribute entries run past their area");
        }
        let name_len = usize::from(area[at]);
        let index = area[at + 1];
        let offset = usize::from(le16(area, at + 2));
        let value_inode = le32(area, at + 4);
        let size = le32(area, at + 8) as usize;
        if value_inode != 0 {
            return corrupt("extended attribute value in an inode (ea_inode, ext4)");
        }
        if at + ENTRY + name_len > area.len() || offset.saturating_add(size) > area.len() {
            return corrupt("extended attribute entry runs past its area");
        }
        if size != 0 && offset < at + ENTRY + name_len {
            return corrupt("extended attribute value overlaps its entries");
        }
        if !PREFIXES.iter().any(|(i, _)| *i == index) {
            return corrupt("extended attribute of an unknown name index");
        }
        out.push(Entry {
            index,
            name: area[at + ENTRY..at + ENTRY + name_len].to_vec(),
            value: area[offset..offset + size].to_vec(),
        });
        at += ENTRY + padded(name_len);
    }
}

/// The attributes in an inode's area (the bytes past `i_extra_isize`):
/// none when it does not begin with the magic number.
pub fn decode_in_inode(area: &[u8]) -> Result<Vec<Entry>> {
    if area.len() < 4 || le32(area, 0) != MAGIC {
        return Ok(Vec::new());
    }
    decode_entries(&area[4..], 0)
}

/// The attributes in attribute block `block`, and its reference count.
pub fn decode_block(block: &[u8]) -> Result<(Vec<Entry>, u32)> {
    if block.len() < HEADER || le32(block, 0) != MAGIC {
        return Err(Error::Corrupt(
            "extended attribute block without its magic number",
        ));
    }
    if le32(block, 8) != 1 {
        return Err(Error::Corrupt(
            "extended attribute block that says it is several blocks",
        ));
    }
    Ok((decode_entries(block, HEADER)?, le32(block, 4)))
}

/// Writes `entries` into `area` as a table starting at `first`, values
/// from the end; false, with `area` unchanged, if they do not fit.
fn encode_entries(entries: &[&Entry], area: &mut [u8], first: usize) -> bool {
    let need: usize = entries.iter().map(|e| e.entry_len() + e.value_len()).sum();
    if first + need + 4 > area.len() {
        return false;
    }
    let mut at = first;
    let mut end = area.len();
    for e in entries {
        let offset = if e.value.is_empty() {
            0
        } else {
            end -= e.value_len();
            area[end..end + e.value.len()].copy_from_slice(&e.value);
            end
        };
        area[at] = e.name.len() as u8;
        area[at + 1] = e.index;
        put16(area, at + 2, offset as u16);
        put32(area, at + 4, 0);
        put32(area, at + 8, e.value.len() as u32);
        put32(area, at + 12, e.hash());
        area[at + ENTRY..at + ENTRY + e.name.len()].copy_from_slice(&e.name);
        at += e.entry_len();
    }
    true
}

/// Where an inode's attributes go: the bytes of its area (all of it: zero
/// when nothing is there), and the bytes of its block if it needs one.
#[derive(Debug)]
pub struct Placement {
    pub in_inode: Vec<u8>,
    pub block: Option<Vec<u8>>,
}

/// Lays `entries` out as Linux would: each in the inode's area of
/// `room` bytes (0: the inode has none) while it fits, the rest in a
/// block of `block_size` bytes, sorted by index, name length and name as
/// ext4 keeps them. ENOSPC when the block cannot hold them, as on an ext4
/// without `ea_inode`.
pub fn place(entries: &[Entry], room: usize, block_size: usize) -> Result<Placement> {
    let mut in_inode = Vec::new();
    let mut in_block = Vec::new();
    // The magic word and the zero word that ends the table.
    let mut free = room.saturating_sub(8);
    for e in entries {
        let len = e.entry_len() + e.value_len();
        if len <= free {
            free -= len;
            in_inode.push(e);
        } else {
            in_block.push(e);
        }
    }
    let mut area = vec![0; room];
    if !in_inode.is_empty() {
        put32(&mut area, 0, MAGIC);
        let fitted = encode_entries(&in_inode, &mut area[4..], 0);
        debug_assert!(fitted);
    }
    if in_block.is_empty() {
        return Ok(Placement {
            in_inode: area,
            block: None,
        });
    }
    in_block
        .sort_by(|a, b| (a.index, a.name.len(), &a.name).cmp(&(b.index, b.name.len(), &b.name)));
    let mut block = vec![0; block_size];
    if !encode_entries(&in_block, &mut block, HEADER) {
        return Err(Error::Sys(Errno::ENOSPC));
    }
    put32(&mut block, 0, MAGIC);
    put32(&mut block, 4, 1);
    put32(&mut block, 8, 1);
    // The block's hash folds its entries' (`ext4_xattr_rehash`).
    let hash = in_block
        .iter()
        .fold(0u32, |hash, e| (hash << 16) ^ (hash >> 16) ^ e.hash());
    put32(&mut block, 12, hash);
    Ok(Placement {
        in_inode: area,
        block: Some(block),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, value: &str) -> Entry {
        Entry::new(name.as_bytes(), value.as_bytes()).unwrap()
    }

    #[test]
    fn names_split_into_an_index_and_the_rest() {
        let e = entry("user.mime_type", "text/plain");
        assert_eq!((e.index, &e.name[..]), (1, &b"mime_type"[..]));
        assert_eq!(e.full_name(), b"user.mime_type");
        let acl = entry("system.posix_acl_access", "");
        assert_eq!((acl.index, acl.name.len()), (2, 0));
        assert_eq!(entry("system.posix_acl_accessx", "").index, 7);
        assert_eq!(entry("security.selinux", "").index, 6);
        assert_eq!(
            Entry::new(b"os2.x", b""),
            Err(Error::Sys(Errno::EOPNOTSUPP))
        );
    }

    #[test]
    fn the_hash_is_e2fsprogs_one() {
        // Worked by hand from ext2fs_ext_attr_hash_entry: "ab" gives
        // ((0 ^ 'a') << 5) ^ 'b' = 0xc22, then the value word "x\0\0\0".
        let e = entry("user.ab", "x");
        let name = (0x61u32 << 5) ^ 0x62;
        assert_eq!(e.hash(), (name << 16) ^ (name >> 16) ^ 0x78);
        assert_eq!(entry("user.ab", "").hash(), name);
    }

    #[test]
    fn what_fits_goes_in_the_inode_and_the_rest_in_a_sorted_block() {
        let entries = [
            entry("user.zz", &"v".repeat(60)),
            entry("user.b", "1"),
            entry("user.a", "2"),
        ];
        // 92 bytes past an extra size of 32 in a 256-byte inode.
        let placed = place(&entries, 96, 1024).unwrap();
        let inode = decode_in_inode(&placed.in_inode).unwrap();
        assert_eq!(inode, [entries[0].clone()]);
        let (block, refs) = decode_block(placed.block.as_ref().unwrap()).unwrap();
        assert_eq!(refs, 1);
        assert_eq!(block, [entries[2].clone(), entries[1].clone()]);
    }

    #[test]
    fn a_block_that_cannot_hold_them_is_enospc() {
        let big = [entry("user.big", &"x".repeat(1000))];
        assert_eq!(place(&big, 0, 1024).err(), Some(Error::Sys(Errno::ENOSPC)));
        assert!(place(&big, 0, 4096).is_ok());
    }

    #[test]
    fn nothing_to_keep_leaves_the_area_zero_and_no_block() {
        let placed = place(&[], 96, 1024).unwrap();
        assert!(placed.in_inode.iter().all(|&b| b == 0));
        assert!(placed.block.is_none());
    }

    #[test]
    fn damaged_tables_are_refused_not_read_past() {
        let placed = place(&[entry("user.a", "hello")], 0, 1024).unwrap();
        let mut block = placed.block.unwrap();
        let mut past = block.clone();
        put16(&mut past, HEADER + 2, 1022);
        assert!(decode_block(&past).is_err());
        put16(&mut block, HEADER + 2, (HEADER + 4) as u16);
        assert!(decode_block(&block).is_err(), "a value over its entry");
        let mut unknown = place(&[entry("user.a", "")], 0, 1024)
            .unwrap()
            .block
            .unwrap();
        unknown[HEADER + 1] = 99;
        assert!(decode_block(&unknown).is_err());
        assert!(decode_block(&[0; 1024]).is_err());
    }
}
