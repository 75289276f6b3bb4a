//! The `newc` cpio format (the one Linux initramfs uses), read and written.
//!
//! The ramdisk is a newc archive that xtask writes and the kernel reads to fill
//! its ramfs. Each entry is a 110-byte ASCII-hex header, the NUL-terminated
//! name padded to 4 bytes, then the data padded to 4 bytes; the archive ends
//! with an entry named `TRAILER!!!`. Reading never trusts the archive: every
//! length is checked against the bytes that are there.

const MAGIC: &[u8; 6] = b"070701";
const HEADER_LEN: usize = 110;
const TRAILER: &str = "TRAILER!!!";

/// File type bits of `mode`, as in `stat`.
pub const S_IFMT: u32 = 0o170000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFREG: u32 = 0o100000;

/// One archive member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Path inside the archive, without a leading `./` or `/`.
    pub name: &'a str,
    pub mode: u32,
    pub data: &'a [u8],
}

impl Entry<'_> {
    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }
    pub fn is_file(&self) -> bool {
        self.mode & S_IFMT == S_IFREG
    }
}

/// Why an archive could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpioError {
    BadMagic { offset: usize },
    BadHeader { offset: usize },
    Truncated { offset: usize },
    BadName { offset: usize },
}

/// Iterates over the entries of a newc archive, stopping at the trailer.
pub struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
    done: bool,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            offset: 0,
            done: false,
        }
    }

    fn field(&self, header: &[u8], index: usize) -> Result<u32, CpioError> {
        let start = 6 + index * 8;
        let text =
            core::str::from_utf8(&header[start..start + 8]).map_err(|_| CpioError::BadHeader {
                offset: self.offset,
            })?;
        u32::from_str_radix(text, 16).map_err(|_| CpioError::BadHeader {
            offset: self.offset,
        })
    }

    fn next_entry(&mut self) -> Result<Option<Entry<'a>>, CpioError> {
        let at = self.offset;
        let truncated = CpioError::Truncated { offset: at };
        let header = self.bytes.get(at..at + HEADER_LEN).ok_or(truncated)?;
        if &header[..6] != MAGIC {
            return Err(CpioError::BadMagic { offset: at });
        }
        let mode = self.field(header, 1)?;
        let file_size = self.field(header, 6)? as usize;
        let name_size = self.field(header, 11)? as usize;
        let name_start = at + HEADER_LEN;
        let name_end = name_start.checked_add(name_size).ok_or(truncated)?;
        let raw_name = self.bytes.get(name_start..name_end).ok_or(truncated)?;
        let name = raw_name
            .strip_suffix(&[0])
            .and_then(|n| core::str::from_utf8(n).ok())
            .ok_or(CpioError::BadName { offset: at })?;
        let data_start = align4(name_end);
        let data_end = data_start.checked_add(file_size).ok_or(truncated)?;
        let data = self.bytes.get(data_start..data_end).ok_or(truncated)?;
        self.offset = align4(data_end);
        if name == TRAILER {
            return Ok(None);
        }
        let name = name.trim_start_matches("./").trim_start_matches('/');
        Ok(Some(Entry { name, mode, data }))
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<Entry<'a>, CpioError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_entry();
        if !matches!(item, Ok(Some(_))) {
            self.done = true;
        }
        item.transpose()
    }
}

/// Finds the file `name` in `archive`.
pub fn find<'a>(archive: &'a [u8], name: &str) -> Option<&'a [u8]> {
    Reader::new(archive)
        .map_while(Result::ok)
        .find(|e| e.name == name && e.is_file())
        .map(|e| e.data)
}

const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Appends one newc entry to `out` (used by xtask to build the ramdisk).
pub fn write_entry(out: &mut impl Extend<u8>, ino: u32, name: &str, mode: u32, data: &[u8]) {
    let fields = [
        ino,
        mode,
        0,
        0,
        1,
        0,
        data.len() as u32,
        0,
        0,
        0,
        0,
        name.len() as u32 + 1,
        0,
    ];
    let mut header = [0u8; HEADER_LEN];
    header[..6].copy_from_slice(MAGIC);
    for (i, value) in fields.iter().enumerate() {
        write_hex8(&mut header[6 + i * 8..14 + i * 8], *value);
    }
    out.extend(header.iter().copied());
    out.extend(name.bytes().chain(core::iter::once(0)));
    out.extend(core::iter::repeat_n(0, pad4(HEADER_LEN + name.len() + 1)));
    out.extend(data.iter().copied());
    out.extend(core::iter::repeat_n(0, pad4(data.len())));
}

/// Appends the trailer that ends an archive.
pub fn write_trailer(out: &mut impl Extend<u8>) {
    write_entry(out, 0, TRAILER, 0, &[]);
}

const fn pad4(n: usize) -> usize {
    align4(n) - n
}

fn write_hex8(out: &mut [u8], value: u32) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = DIGITS[((value >> (28 - 4 * i)) & 0xf) as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(entries: &[(&str, u32, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, (name, mode, data)) in entries.iter().enumerate() {
            write_entry(&mut out, i as u32 + 1, name, *mode, data);
        }
        write_trailer(&mut out);
        out
    }

    #[test]
    fn round_trip() {
        let bytes = archive(&[
            ("bin", S_IFDIR | 0o755, b""),
            ("bin/init", S_IFREG | 0o755, b"\x7fELF..."),
            ("etc/boot.conf", S_IFREG | 0o644, b"hz=100\n"),
        ]);
        assert_eq!(bytes.len() % 4, 0);
        let entries: Vec<_> = Reader::new(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(entries.len(), 3);
        assert!(entries[0].is_dir());
        assert_eq!(entries[1].name, "bin/init");
        assert_eq!(entries[1].data, b"\x7fELF...");
        assert_eq!(find(&bytes, "etc/boot.conf"), Some(&b"hz=100\n"[..]));
        assert_eq!(find(&bytes, "bin"), None, "directories are not files");
        assert_eq!(find(&bytes, "missing"), None);
    }

    #[test]
    fn leading_dot_slash_is_dropped() {
        let bytes = archive(&[("./a/b", S_IFREG, b"x")]);
        assert_eq!(find(&bytes, "a/b"), Some(&b"x"[..]));
    }

    #[test]
    fn matches_gnu_cpio_header_layout() {
        let bytes = archive(&[("a", S_IFREG | 0o644, b"hi")]);
        let header = core::str::from_utf8(&bytes[..HEADER_LEN]).unwrap();
        assert_eq!(
            header,
            "07070100000001000081A40000000000000000000000010000000000000002000000000000000000000000000000000000000200000000"
        );
        // name "a\0" at 110..112, padded to 112; data "hi" at 112..114, padded to 116.
        assert_eq!(&bytes[110..116], b"a\0hi\0\0");
    }

    #[test]
    fn damaged_archives_are_errors_not_panics() {
        let good = archive(&[("file", S_IFREG, b"0123456789")]);
        for cut in 0..good.len() - 1 {
            let results: Vec<_> = Reader::new(&good[..cut]).collect();
            assert!(
                results.iter().any(Result::is_err),
                "cut at {cut} went unnoticed"
            );
        }
        let mut bad = good.clone();
        bad[0] = b'X';
        assert_eq!(
            Reader::new(&bad).next(),
            Some(Err(CpioError::BadMagic { offset: 0 }))
        );
        let mut bad = good.clone();
        bad[60] = b'G';
        assert!(matches!(
            Reader::new(&bad).next(),
            Some(Err(CpioError::BadHeader { .. }))
        ));
    }
}
