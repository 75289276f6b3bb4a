//! Directory blocks: a chain of variable-length entries.
//!
//! An ext2 directory is a file whose blocks each hold a chain of entries:
//! the inode number (0 for an unused entry), the entry's length in bytes
//! (`rec_len`, which reaches the next entry), the name's length, the file
//! type (with the `filetype` feature) and the name, not NUL-terminated.
//! The entries of a block always cover it exactly, so deleting an entry
//! means adding its length to the one before it, and a new entry goes into
//! the room an entry has past its own name. No entry crosses a block.
//!
//! A dir_index (htree) directory is this too: its index blocks look like
//! one unused entry covering the block, so reading linearly sees only the
//! real entries, which is why an implementation without htree may read
//! such a directory (and, clearing the index flag, write it).

use super::layout::{le16, le32, put16, put32};
use super::{Error, Result};
use abi::types::{S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG, S_IFSOCK};

/// The fixed part of an entry, before the name.
const HEADER: usize = 8;
/// The longest name an entry holds.
pub const NAME_MAX: usize = 255;

/// The room an entry with a name of `name_len` bytes needs: the header
/// and the name, rounded up to 4 bytes.
pub const fn rec_len_for(name_len: usize) -> usize {
    (HEADER + name_len + 3) & !3
}

/// ext2's file type byte for a mode (0, "unknown", for none).
pub fn file_type_of(mode: u32) -> u8 {
    match mode & S_IFMT {
        S_IFREG => 1,
        S_IFDIR => 2,
        S_IFCHR => 3,
        S_IFBLK => 4,
        S_IFIFO => 5,
        S_IFSOCK => 6,
        S_IFLNK => 7,
        _ => 0,
    }
}

/// `getdents64`'s `d_type` for ext2's file type byte.
pub fn dt_of(file_type: u8) -> u8 {
    use abi::types::*;
    match file_type {
        1 => DT_REG,
        2 => DT_DIR,
        3 => DT_CHR,
        4 => DT_BLK,
        5 => DT_FIFO,
        6 => DT_SOCK,
        7 => DT_LNK,
        _ => DT_UNKNOWN,
    }
}

/// One entry as found in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Where the entry starts in its block.
    pub offset: usize,
    /// 0: an unused entry, only room.
    pub ino: u32,
    pub rec_len: usize,
    pub name: &'a [u8],
    /// ext2's file type byte (0 without the `filetype` feature).
    pub file_type: u8,
}

/// `rec_len` as stored: 64 KiB blocks need 65,536, which 16 bits cannot
/// hold, so Linux writes it as 65,535 (and reads 0 as it too).
fn decode_rec_len(raw: u16, block_len: usize) -> usize {
    match raw {
        u16::MAX | 0 if block_len == 1 << 16 => 1 << 16,
        raw => usize::from(raw),
    }
}

fn encode_rec_len(len: usize) -> u16 {
    if len >= 1 << 16 { u16::MAX } else { len as u16 }
}

/// The entries of a directory block, in order, each checked: a length
/// that is not a multiple of 4, too short for its name, or past the
/// block's end is corruption, and ends the walk with that error.
pub struct Entries<'a> {
    block: &'a [u8],
    at: usize,
    filetype: bool,
    failed: bool,
}

/// Walks `block`'s entries. `filetype`: the file system has the feature,
/// so byte 7 is the type (otherwise it is the name length's high byte).
pub fn entries(block: &[u8], filetype: bool) -> Entries<'_> {
    Entries {
        block,
        at: 0,
        filetype,
        failed: false,
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.block.len() {
            return None;
        }
        let b = self.block;
        let at = self.at;
        let bad = |why| Some(Err(Error::Corrupt(why)));
        if at + HEADER > b.len() {
            self.failed = true;
            return bad("directory entry header past the block's end");
        }
        let ino = le32(b, at);
        let rec_len = decode_rec_len(le16(b, at + 4), b.len());
        let name_len = if self.filetype {
            usize::from(b[at + 6])
        } else {
            usize::from(le16(b, at + 6))
        };
        if rec_len < rec_len_for(1) {
            self.failed = true;
            return bad("directory entry shorter than an entry can be");
        }
        if !rec_len.is_multiple_of(4) || at + rec_len > b.len() {
            self.failed = true;
            return bad("directory entry length not a multiple of 4 or past the block");
        }
        if HEADER + name_len > rec_len || name_len > NAME_MAX {
            self.failed = true;
            return bad("directory entry's name longer than the entry");
        }
        self.at += rec_len;
        Some(Ok(Entry {
            offset: at,
            ino,
            rec_len,
            name: &b[at + HEADER..at + HEADER + name_len],
            file_type: if self.filetype { b[at + 7] } else { 0 },
        }))
    }
}

fn write_entry(
    b: &mut [u8],
    at: usize,
    ino: u32,
    rec_len: usize,
    name: &[u8],
    file_type: u8,
    filetype: bool,
) {
    put32(b, at, ino);
    put16(b, at + 4, encode_rec_len(rec_len));
    if filetype {
        b[at + 6] = name.len() as u8;
        b[at + 7] = file_type;
    } else {
        put16(b, at + 6, name.len() as u16);
    }
    b[at + HEADER..at + HEADER + name.len()].copy_from_slice(name);
}

/// Makes `block` one unused entry covering it all: a fresh directory
/// block, ready for [`insert`].
pub fn init_empty(block: &mut [u8]) {
    block.fill(0);
    let len = block.len();
    write_entry(block, 0, 0, len, b"", 0, false);
}

/// Makes `block` the first block of a new directory: "." naming `ino`
/// and ".." naming `parent`, which covers the rest of the block.
pub fn init_first(block: &mut [u8], ino: u32, parent: u32, filetype: bool) {
    block.fill(0);
    let dot = rec_len_for(1);
    write_entry(block, 0, ino, dot, b".", 2, filetype);
    let len = block.len();
    write_entry(block, dot, parent, len - dot, b"..", 2, filetype);
}

/// Puts an entry for `name` into `block` if it has room: in an unused
/// entry long enough, or in the slack past a used entry's name, which is
/// split off. Returns whether it went in. The caller has checked the name
/// is not there already and is 1 to 255 bytes.
pub fn insert(
    block: &mut [u8],
    name: &[u8],
    ino: u32,
    file_type: u8,
    filetype: bool,
) -> Result<bool> {
    let need = rec_len_for(name.len());
    // (entry offset, its length, the length it keeps for itself)
    let mut place = None;
    for entry in entries(block, filetype) {
        let e = entry?;
        if e.ino == 0 && e.rec_len >= need {
            place = Some((e.offset, e.rec_len, 0));
            break;
        }
        let used = rec_len_for(e.name.len());
        if e.ino != 0 && e.rec_len >= used + need {
            place = Some((e.offset, e.rec_len, used));
            break;
        }
    }
    let Some((found, found_len, kept)) = place else {
        return Ok(false);
    };
    if kept > 0 {
        // Shorten the entry to its own need; the new one takes the rest.
        put16(block, found + 4, encode_rec_len(kept));
    }
    let (at, rec_len) = (found + kept, found_len - kept);
    block[at..at + rec_len].fill(0);
    write_entry(block, at, ino, rec_len, name, file_type, filetype);
    Ok(true)
}

/// Removes the entry at `offset`: its room joins the entry before it, or,
/// for a block's first entry, it stays as an unused entry.
pub fn remove(block: &mut [u8], offset: usize, filetype: bool) -> Result<()> {
    let mut previous = None;
    for entry in entries(block, filetype) {
        let e = entry?;
        if e.offset == offset {
            match previous {
                Some(prev_at) => {
                    let prev_len = decode_rec_len(le16(block, prev_at + 4), block.len());
                    put16(block, prev_at + 4, encode_rec_len(prev_len + e.rec_len));
                }
                None => put32(block, offset, 0),
            }
            return Ok(());
        }
        previous = Some(e.offset);
    }
    Err(Error::Corrupt("no directory entry at the offset to remove"))
}

/// Points the entry at `offset` at another inode (rename over a name, or
/// ".." of a moved directory).
pub fn retarget(block: &mut [u8], offset: usize, ino: u32, file_type: u8, filetype: bool) {
    put32(block, offset, ino);
    if filetype {
        block[offset + 7] = file_type;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(block: &[u8]) -> Vec<(Vec<u8>, u32)> {
        entries(block, true)
            .map(|e| e.unwrap())
            .filter(|e| e.ino != 0)
            .map(|e| (e.name.to_vec(), e.ino))
            .collect()
    }

    #[test]
    fn a_new_directory_has_dot_and_dotdot_covering_the_block() {
        let mut b = vec![0xaa; 1024];
        init_first(&mut b, 12, 2, true);
        let all: Vec<_> = entries(&b, true).map(|e| e.unwrap()).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(
            (all[0].name, all[0].ino, all[0].rec_len),
            (&b"."[..], 12, 12)
        );
        assert_eq!(
            (all[1].name, all[1].ino, all[1].rec_len),
            (&b".."[..], 2, 1012)
        );
        assert_eq!(all[1].file_type, 2);
    }

    #[test]
    fn inserts_split_slack_and_removals_give_it_back() {
        let mut b = vec![0; 1024];
        init_first(&mut b, 12, 2, true);
        assert!(insert(&mut b, b"hello", 13, 1, true).unwrap());
        assert!(insert(&mut b, b"world.txt", 14, 1, true).unwrap());
        assert_eq!(names(&b).len(), 4);
        let hello = entries(&b, true)
            .map(|e| e.unwrap())
            .find(|e| e.name == b"hello")
            .unwrap()
            .offset;
        remove(&mut b, hello, true).unwrap();
        assert_eq!(
            names(&b),
            vec![
                (b".".to_vec(), 12),
                (b"..".to_vec(), 2),
                (b"world.txt".to_vec(), 14)
            ]
        );
        // The lengths still cover the block exactly.
        let total: usize = entries(&b, true).map(|e| e.unwrap().rec_len).sum();
        assert_eq!(total, 1024);
        // The freed room is used again.
        assert!(insert(&mut b, b"again", 15, 1, true).unwrap());
        assert_eq!(names(&b).len(), 4);
    }

    #[test]
    fn a_full_block_says_so() {
        let mut b = vec![0; 1024];
        init_empty(&mut b);
        let name = [b'x'; 255];
        let mut n = 0;
        while insert(&mut b, &name[..], 20 + n, 1, true).unwrap() {
            n += 1;
        }
        assert_eq!(n, 1024 / rec_len_for(255) as u32);
        assert!(
            insert(&mut b, b"a", 99, 1, true).unwrap(),
            "the slack still fits a short name"
        );
    }

    #[test]
    fn removing_a_blocks_first_entry_leaves_it_unused() {
        let mut b = vec![0; 1024];
        init_empty(&mut b);
        insert(&mut b, b"only", 30, 1, true).unwrap();
        remove(&mut b, 0, true).unwrap();
        assert!(names(&b).is_empty());
        assert!(insert(&mut b, b"next", 31, 1, true).unwrap());
        assert_eq!(names(&b), vec![(b"next".to_vec(), 31)]);
    }

    #[test]
    fn corrupt_chains_are_errors_not_panics() {
        let mut b = vec![0; 1024];
        init_first(&mut b, 12, 2, true);
        // ".."'s length runs past the block.
        put16(&mut b, 12 + 4, 2000);
        assert!(entries(&b, true).any(|e| e.is_err()));
        // A length of zero would loop for ever.
        put16(&mut b, 12 + 4, 0);
        assert!(entries(&b, true).any(|e| e.is_err()));
        // A name longer than its entry.
        init_first(&mut b, 12, 2, true);
        b[6] = 200;
        assert!(entries(&b, true).next().unwrap().is_err());
        assert!(insert(&mut b, b"x", 5, 1, true).is_err());
    }

    #[test]
    fn sixty_four_kib_blocks_store_their_length_as_65535() {
        let mut b = vec![0; 1 << 16];
        init_empty(&mut b);
        assert_eq!(le16(&b, 4), u16::MAX);
        assert_eq!(entries(&b, true).next().unwrap().unwrap().rec_len, 1 << 16);
    }
}
