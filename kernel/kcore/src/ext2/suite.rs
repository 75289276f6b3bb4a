//! What xtask's `ext3` suite and `/bin/fstest` agree on: the files the
//! host puts in the image with `mke2fs -d`, the files the guest writes,
//! and the bytes of each, so either side can check the other's.
//!
//! The image has 1 KiB blocks, so the size classes of a block map are
//! small: 12 KiB are direct, the next 256 KiB single-indirect, the next
//! 64 MiB double-indirect, and beyond that triple-indirect.

/// The image's size and block size.
pub const IMAGE_BYTES: u64 = 64 << 20;
pub const BLOCK_SIZE: u64 = 1024;

/// Byte `at` of the file whose pattern is `seed`.
pub fn byte(seed: u64, at: u64) -> u8 {
    let x = at
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(seed.wrapping_mul(0x85eb_ca6b));
    (x ^ (x >> 13) ^ (at >> 10)) as u8
}

/// The host's files: name, size; the pattern's seed is the size.
pub const HOST_FILES: &[(&str, u64)] = &[("hello", 20), ("big", 300_000)];
/// The host's symbolic link and its target.
pub const HOST_LINK: (&str, &str) = ("link", "hello");

/// The extended attribute the host puts on its first file (`debugfs
/// ea_set`, after `mke2fs -d`): file, name, value.
pub const HOST_XATTR: (&str, &str, &str) = ("hello", "user.origin", "host");

/// The file the guest leaves its extended attributes on (`out/NAME`).
pub const GUEST_XATTR_FILE: &str = "attrs";

/// The guest's extended attributes: a short one and a root one, which
/// fit in a 256-byte inode, and one that needs the attribute block.
pub fn guest_xattrs() -> alloc::vec::Vec<(&'static str, alloc::vec::Vec<u8>)> {
    alloc::vec![
        ("user.mime_type", b"text/plain".to_vec()),
        ("trusted.guest", b"root".to_vec()),
        ("user.long", (0..600).map(|at| byte(9, at)).collect()),
    ]
}

/// The sizes the guest writes, one file each (`out/size-N`): empty, one
/// byte, each edge of the direct, single- and double-indirect ranges.
pub const GUEST_SIZES: &[u64] = &[
    0,
    1,
    1023,
    1024,
    12 * 1024,
    12 * 1024 + 1,
    (12 + 256) * 1024,
    (12 + 256) * 1024 + 1,
    3 << 20,
];

/// Where the guest's sparse file (`out/sparse`) has its one written
/// block: past the double-indirect range, so a triple-indirect block
/// holds it; and how many bytes are written there.
pub const SPARSE_AT: u64 = 70 << 20;
pub const SPARSE_LEN: u64 = 5000;
/// The seed of the sparse file's bytes.
pub const SPARSE_SEED: u64 = 7;

/// The guest's longest name: 255 bytes, the most a directory entry holds.
pub fn long_name() -> alloc::string::String {
    (0..255).map(|i| (b'a' + (i % 26) as u8) as char).collect()
}

/// How a guest file's bytes are made.
#[derive(Clone, Copy, Debug)]
pub enum Fill {
    /// `byte(seed, at)` everywhere.
    Pattern(u64),
    /// Zeros up to `SPARSE_AT`, then `byte(SPARSE_SEED, at - SPARSE_AT)`.
    Sparse,
}

impl Fill {
    pub fn byte(self, at: u64) -> u8 {
        match self {
            Fill::Pattern(seed) => byte(seed, at),
            Fill::Sparse if at < SPARSE_AT => 0,
            Fill::Sparse => byte(SPARSE_SEED, at - SPARSE_AT),
        }
    }
}

/// The seed of writer `w`'s file (`out/writer-W`, `WRITER_BYTES` long):
/// several processes write these at once.
pub fn writer_seed(w: u64) -> u64 {
    100 + w
}
pub const WRITERS: u64 = 4;
pub const WRITER_BYTES: u64 = 200_000;

/// Every file the guest leaves under `out/`: its name, size and bytes.
pub fn guest_files() -> alloc::vec::Vec<(alloc::string::String, u64, Fill)> {
    use alloc::format;
    let mut files: alloc::vec::Vec<_> = GUEST_SIZES
        .iter()
        .map(|&size| (format!("size-{size}"), size, Fill::Pattern(size)))
        .collect();
    for w in 0..WRITERS {
        files.push((
            format!("writer-{w}"),
            WRITER_BYTES,
            Fill::Pattern(writer_seed(w)),
        ));
    }
    files.push((
        alloc::string::String::from("sparse"),
        SPARSE_AT + SPARSE_LEN,
        Fill::Sparse,
    ));
    files
}
