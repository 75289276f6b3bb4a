//! ELF64 executables: just enough to load a static x86_64 program.
//!
//! `parse` checks the header (64-bit, little-endian, x86_64, ET_EXEC or
//! ET_DYN) and returns the entry point and the loadable segments. Every offset
//! and size is checked against the file and against user space, so a damaged
//! or hostile file is `ENOEXEC`, never an out-of-bounds read or a mapping in
//! the kernel half.
//!
//! It reads only the headers (`headers_end` says how many bytes they take),
//! since exec maps the segments from the file's own pages instead of
//! copying the file: so each segment's file offset and address must agree
//! within a page, as Linux's loader requires of them (it maps with mmap).

use abi::Errno;

pub const PF_X: u32 = 1;
pub const PF_W: u32 = 2;
pub const PF_R: u32 = 4;
pub(crate) const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
pub(crate) const EM_X86_64: u16 = 62;
pub(crate) const PHDR_SIZE: usize = 56;
pub(crate) const EHDR_SIZE: usize = 64;
pub(crate) const PAGE_SIZE: u64 = 4096;
/// Where a position-independent (`ET_DYN`) program is loaded, as Linux does
/// for static PIE: its addresses start at 0, which must stay unmapped.
pub const DYN_BASE: u64 = 0x0000_5555_5555_4000;
/// Lowest address a segment may use (Linux's default `vm.mmap_min_addr`), so
/// that a NULL pointer always faults.
pub const MIN_ADDR: u64 = 0x1_0000;

/// A `PT_LOAD` segment: `file_size` bytes from `offset` in the file go to
/// `vaddr`; the rest up to `mem_size` is zero (bss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub mem_size: u64,
    pub offset: u64,
    pub file_size: u64,
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executable {
    pub entry: u64,
    /// Where the program headers are in memory (for AT_PHDR).
    pub phdr_vaddr: u64,
    pub phnum: u16,
    pub segments: Segments,
}

/// Most loadable segments an executable may have.
pub const MAX_SEGMENTS: usize = 16;

/// A fixed-capacity list of segments, so parsing needs no allocator.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Segments {
    items: [Option<Segment>; MAX_SEGMENTS],
    len: usize,
}

impl Segments {
    /// Adds a segment; false when the list is full.
    fn push(&mut self, s: Segment) -> bool {
        let Some(slot) = self.items.get_mut(self.len) else {
            return false;
        };
        *slot = Some(s);
        self.len += 1;
        true
    }

    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.items[..self.len].iter().flatten()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// How many bytes from the start of the file hold the ELF header and the
/// program headers, from the first `EHDR_SIZE` bytes (`head`, at least 64 of
/// them); None if they are not an ELF header. What exec reads before
/// `parse`.
pub fn headers_end(head: &[u8]) -> Option<usize> {
    if head.len() < EHDR_SIZE || &head[..4] != b"\x7fELF" {
        return None;
    }
    let phoff = usize::try_from(u64_at(head, 32)?).ok()?;
    let phnum = usize::from(u16_at(head, 56)?);
    phoff
        .checked_add(PHDR_SIZE.checked_mul(phnum)?)?
        .max(EHDR_SIZE)
        .into()
}

/// Parses the executable whose headers are `file` (at least its first
/// `headers_end` bytes) and whose length is `file_len`; its segments must
/// lie below `user_top`.
pub fn parse(file: &[u8], file_len: u64, user_top: u64) -> Result<Executable, Errno> {
    let bad = Errno::ENOEXEC;
    if file.len() < EHDR_SIZE || &file[..4] != b"\x7fELF" || file[4] != 2 || file[5] != 1 {
        return Err(bad);
    }
    let kind = u16_at(file, 16).ok_or(bad)?;
    if !(kind == ET_EXEC || kind == ET_DYN) || u16_at(file, 18) != Some(EM_X86_64) {
        return Err(bad);
    }
    let bias = if kind == ET_DYN { DYN_BASE } else { 0 };
    let entry = u64_at(file, 24).ok_or(bad)?.checked_add(bias).ok_or(bad)?;
    let phoff = u64_at(file, 32).ok_or(bad)? as usize;
    let phentsize = u16_at(file, 54).ok_or(bad)? as usize;
    let phnum = u16_at(file, 56).ok_or(bad)?;
    if phentsize != PHDR_SIZE {
        return Err(bad);
    }
    let table_end = phoff.checked_add(PHDR_SIZE * phnum as usize).ok_or(bad)?;
    if table_end > file.len() {
        return Err(bad);
    }
    let mut segments = Segments::default();
    let mut phdr_vaddr = None;
    let mut first_load = None;
    for i in 0..phnum as usize {
        let ph = &file[phoff + i * PHDR_SIZE..phoff + (i + 1) * PHDR_SIZE];
        let p_type = u32_at(ph, 0).ok_or(bad)?;
        let seg = Segment {
            flags: u32_at(ph, 4).ok_or(bad)?,
            offset: u64_at(ph, 8).ok_or(bad)?,
            vaddr: u64_at(ph, 16).ok_or(bad)?.checked_add(bias).ok_or(bad)?,
            file_size: u64_at(ph, 32).ok_or(bad)?,
            mem_size: u64_at(ph, 40).ok_or(bad)?,
        };
        match p_type {
            PT_INTERP => return Err(bad), // dynamic linking is not supported
            PT_PHDR => phdr_vaddr = Some(seg.vaddr),
            PT_LOAD => {
                let file_end = seg.offset.checked_add(seg.file_size).ok_or(bad)?;
                let mem_end = seg.vaddr.checked_add(seg.mem_size).ok_or(bad)?;
                if seg.file_size > seg.mem_size
                    || file_end > file_len
                    || mem_end > user_top
                    || seg.vaddr < MIN_ADDR
                    || seg.offset % PAGE_SIZE != seg.vaddr % PAGE_SIZE
                {
                    return Err(bad);
                }
                if seg.mem_size == 0 {
                    continue;
                }
                if first_load.is_none() {
                    first_load = Some(seg);
                }
                if !segments.push(seg) {
                    return Err(bad);
                }
            }
            _ => {}
        }
    }
    let first = first_load.ok_or(bad)?;
    // Without PT_PHDR, the headers are where the first segment maps offset phoff.
    let phdr_vaddr = phdr_vaddr.unwrap_or(
        first
            .vaddr
            .wrapping_sub(first.offset)
            .wrapping_add(phoff as u64),
    );
    let entry_ok = segments
        .iter()
        .any(|s| s.flags & PF_X != 0 && (s.vaddr..s.vaddr + s.mem_size).contains(&entry));
    if !entry_ok {
        return Err(bad);
    }
    Ok(Executable {
        entry,
        phdr_vaddr,
        phnum,
        segments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF: header, one PT_LOAD covering the file, code at 0x400078.
    fn tiny_elf() -> Vec<u8> {
        let mut f = vec![0u8; 0x80];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[6] = 1;
        f[16..18].copy_from_slice(&ET_EXEC.to_le_bytes());
        f[18..20].copy_from_slice(&EM_X86_64.to_le_bytes());
        f[24..32].copy_from_slice(&0x400078u64.to_le_bytes());
        f[32..40].copy_from_slice(&64u64.to_le_bytes());
        f[54..56].copy_from_slice(&56u16.to_le_bytes());
        f[56..58].copy_from_slice(&1u16.to_le_bytes());
        let ph = 64;
        f[ph..ph + 4].copy_from_slice(&PT_LOAD.to_le_bytes());
        f[ph + 4..ph + 8].copy_from_slice(&(PF_R | PF_X).to_le_bytes());
        f[ph + 16..ph + 24].copy_from_slice(&0x400000u64.to_le_bytes());
        f[ph + 32..ph + 40].copy_from_slice(&0x80u64.to_le_bytes());
        f[ph + 40..ph + 48].copy_from_slice(&0x1000u64.to_le_bytes());
        f
    }

    #[test]
    fn parses_a_minimal_executable() {
        let f = tiny_elf();
        assert_eq!(headers_end(&f), Some(64 + 56));
        let exe = parse(&f, f.len() as u64, 1 << 47).unwrap();
        assert_eq!(exe.entry, 0x400078);
        assert_eq!(exe.phdr_vaddr, 0x400040);
        assert_eq!(exe.segments.len(), 1);
        let seg = exe.segments.iter().next().unwrap();
        assert_eq!(
            (seg.vaddr, seg.file_size, seg.mem_size),
            (0x400000, 0x80, 0x1000)
        );
    }

    #[test]
    fn position_independent_programs_load_at_dyn_base() {
        let mut f = tiny_elf();
        f[16..18].copy_from_slice(&ET_DYN.to_le_bytes());
        f[24..32].copy_from_slice(&0x78u64.to_le_bytes()); // entry
        f[64 + 16..64 + 24].copy_from_slice(&0u64.to_le_bytes()); // vaddr 0
        let exe = parse(&f, f.len() as u64, 1 << 47).unwrap();
        assert_eq!(exe.entry, DYN_BASE + 0x78);
        assert_eq!(exe.segments.iter().next().unwrap().vaddr, DYN_BASE);
        assert_eq!(exe.phdr_vaddr, DYN_BASE + 0x40);
    }

    #[test]
    fn rejects_every_kind_of_damage() {
        let good = tiny_elf();
        type Damage = (&'static str, Box<dyn Fn(&mut Vec<u8>)>);
        let damage: Vec<Damage> = vec![
            ("magic", Box::new(|f| f[1] = b'X')),
            ("32-bit", Box::new(|f| f[4] = 1)),
            ("big-endian", Box::new(|f| f[5] = 2)),
            ("not x86_64", Box::new(|f| f[18] = 3)),
            ("relocatable", Box::new(|f| f[16] = 1)),
            ("phentsize", Box::new(|f| f[54] = 32)),
            ("phoff past end", Box::new(|f| f[32] = 0x79)),
            ("segment past file", Box::new(|f| f[64 + 32] = 0x81)),
            (
                "offset and address disagree within a page",
                Box::new(|f| {
                    f[64 + 8] = 8; // offset 8 at 0x400000, the bytes still in the file
                    f[64 + 32] = 0x78;
                }),
            ),
            ("filesz > memsz", Box::new(|f| f[64 + 41] = 0)),
            ("kernel half", Box::new(|f| f[64 + 23] = 0xff)),
            (
                "maps page 0",
                Box::new(|f| {
                    f[64 + 16..64 + 24].copy_from_slice(&0u64.to_le_bytes());
                    f[24..32].copy_from_slice(&0x78u64.to_le_bytes()); // entry still inside
                }),
            ),
            (
                "vaddr wraps",
                Box::new(|f| f[64 + 16..64 + 24].copy_from_slice(&u64::MAX.to_le_bytes())),
            ),
            (
                "entry outside code",
                Box::new(|f| f[24..32].copy_from_slice(&0x900000u64.to_le_bytes())),
            ),
            ("interpreter", Box::new(|f| f[64] = 3)),
            ("truncated", Box::new(|f| f.truncate(40))),
        ];
        for (what, hurt) in damage {
            let mut f = good.clone();
            hurt(&mut f);
            assert_eq!(
                parse(&f, f.len() as u64, 1 << 47),
                Err(Errno::ENOEXEC),
                "{what}"
            );
        }
        assert_eq!(parse(b"#!/bin/sh\n", 10, 1 << 47), Err(Errno::ENOEXEC));
        assert_eq!(parse(&[], 0, 1 << 47), Err(Errno::ENOEXEC));
        assert_eq!(headers_end(b"#!/bin/sh\n"), None);
    }

    #[test]
    fn the_headers_alone_are_enough() {
        let f = tiny_elf();
        let end = headers_end(&f).unwrap();
        // The segment's bytes need not be there: only the file's length.
        let exe = parse(&f[..end], f.len() as u64, 1 << 47).unwrap();
        assert_eq!(exe, parse(&f, f.len() as u64, 1 << 47).unwrap());
        // But a segment past that length is still refused.
        assert_eq!(parse(&f[..end], end as u64, 1 << 47), Err(Errno::ENOEXEC));
    }
}
