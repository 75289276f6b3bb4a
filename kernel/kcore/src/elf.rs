//! ELF64 executables: what exec needs to load a static or dynamic x86_64
//! program and its interpreter.
//!
//! `parse` checks the header (64-bit, little-endian, x86_64, ET_EXEC or
//! ET_DYN) and returns the entry point, the loadable segments and where the
//! file names its interpreter (`PT_INTERP`). Addresses come back as the file
//! gives them; `Executable::placed` moves a position-independent (ET_DYN)
//! image to the base the loader chose and checks every segment against user
//! space. Every offset and size is checked against the file, so a damaged or
//! hostile file is `ENOEXEC`, never an out-of-bounds read or a mapping in
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
pub(crate) const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;
pub(crate) const ET_EXEC: u16 = 2;
pub(crate) const ET_DYN: u16 = 3;
pub(crate) const EM_X86_64: u16 = 62;
/// The size of one program header (`e_phentsize`, as `AT_PHNUM` counts them).
pub const PHDR_SIZE: usize = 56;
pub const EHDR_SIZE: usize = 64;
pub const PAGE_SIZE: u64 = 4096;
/// Where a position-independent (`ET_DYN`) program is loaded, as Linux's
/// `ELF_ET_DYN_BASE` (two thirds of the user half, page-aligned): its
/// addresses start at 0, which must stay unmapped. Its interpreter goes
/// elsewhere, where mmap would put it.
pub const DYN_BASE: u64 = 0x0000_5555_5555_4000;
/// The longest `PT_INTERP` path, with its NUL (Linux's `PATH_MAX`).
pub const INTERP_MAX: u64 = 4096;
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
    /// ET_DYN: the addresses are offsets from a base the loader picks.
    pub relocatable: bool,
    /// Where the file names its interpreter (the first `PT_INTERP`).
    pub interp: Option<InterpName>,
}

/// Where a `PT_INTERP` segment's path lies in the file: `len` bytes at
/// `offset`, NUL included. Checked against the file's length only when
/// read (`interp_path`), as Linux's loader, which reads it with
/// `kernel_read` and gives EIO when the file is shorter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterpName {
    pub offset: u64,
    pub len: u64,
}

impl Executable {
    /// The pages the loadable segments cover, `[low, high)`, before
    /// `placed`: what a loader must find room for.
    pub fn span(&self) -> (u64, u64) {
        let low = self.segments.iter().map(|s| s.vaddr).min().unwrap_or(0);
        let high = self
            .segments
            .iter()
            .map(|s| s.vaddr + s.mem_size)
            .max()
            .unwrap_or(0);
        (low & !(PAGE_SIZE - 1), high.next_multiple_of(PAGE_SIZE))
    }

    /// The image moved by `bias` (0 for ET_EXEC, which has no choice; a
    /// multiple of the page size for ET_DYN), every segment checked to lie
    /// in `[MIN_ADDR, user_top)`. The addition wraps, as Linux's
    /// `load_bias` does: a loader that wants the first segment at `base`
    /// passes `base - span().0` whatever the file's addresses are.
    pub fn placed(&self, bias: u64, user_top: u64) -> Result<Executable, Errno> {
        let bad = Errno::ENOEXEC;
        if (!self.relocatable && bias != 0) || !bias.is_multiple_of(PAGE_SIZE) {
            return Err(Errno::EINVAL);
        }
        let mut segments = Segments::default();
        for seg in self.segments.iter() {
            let vaddr = seg.vaddr.wrapping_add(bias);
            let end = vaddr.checked_add(seg.mem_size).ok_or(bad)?;
            if vaddr < MIN_ADDR || end > user_top {
                return Err(bad);
            }
            segments.push(Segment { vaddr, ..*seg });
        }
        Ok(Executable {
            entry: self.entry.wrapping_add(bias),
            phdr_vaddr: self.phdr_vaddr.wrapping_add(bias),
            segments,
            ..self.clone()
        })
    }
}

/// The interpreter's path from the bytes of its `PT_INTERP` segment
/// (`read` of the `len` asked for, as `read_at` gives them): as Linux,
/// EIO if the file ended first, ENOEXEC unless the last byte is the NUL,
/// and the path is what comes before the first NUL. A path that is not
/// UTF-8 names no file here: ENOENT.
pub fn interp_path(bytes: &[u8], len: u64) -> Result<&str, Errno> {
    if (bytes.len() as u64) < len {
        return Err(Errno::EIO);
    }
    if bytes.last() != Some(&0) {
        return Err(Errno::ENOEXEC);
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    core::str::from_utf8(&bytes[..end]).map_err(|_| Errno::ENOENT)
}

/// A running program's load bias: how far its addresses lie from the ones
/// its file gives (0 for a fixed-address `ET_EXEC`, the base chosen for a
/// PIE), found as glibc's loader finds it: `at_phdr` (the aux vector's
/// `AT_PHDR`) is where the program headers are in memory, and the
/// `PT_PHDR` header among `headers` (their bytes, `AT_PHNUM` of them) says
/// where the file put them. A program without `PT_PHDR` is taken to run
/// where it was linked, as glibc takes it. A profiler needs this to write
/// the file's addresses, which are what gprof reads in the symbol table.
pub fn load_bias(at_phdr: u64, headers: &[u8]) -> u64 {
    headers
        .as_chunks::<PHDR_SIZE>()
        .0
        .iter()
        .find(|ph| u32_at(&ph[..], 0) == Some(PT_PHDR))
        .and_then(|ph| u64_at(&ph[..], 16))
        .map_or(0, |vaddr| at_phdr.wrapping_sub(vaddr))
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

/// The addresses of the executable segments (`PF_X` `PT_LOAD`) described
/// by `headers` (the ELF header and program headers, as `headers_end`
/// measures them): from the lowest start to the highest end. None for no
/// executable segment or headers that are not whole. The kernel's
/// profiler reads its own text this way.
pub fn text_span(headers: &[u8]) -> Option<(u64, u64)> {
    let end = headers_end(headers)?;
    if end > headers.len() || usize::from(u16_at(headers, 54)?) != PHDR_SIZE {
        return None;
    }
    let phoff = usize::try_from(u64_at(headers, 32)?).ok()?;
    let phnum = usize::from(u16_at(headers, 56)?);
    let mut span: Option<(u64, u64)> = None;
    for i in 0..phnum {
        let ph = &headers[phoff + i * PHDR_SIZE..phoff + (i + 1) * PHDR_SIZE];
        if u32_at(ph, 0)? != PT_LOAD || u32_at(ph, 4)? & PF_X == 0 {
            continue;
        }
        let start = u64_at(ph, 16)?;
        let end = start.checked_add(u64_at(ph, 40)?)?;
        span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
    }
    span.filter(|(s, e)| s < e)
}

/// Parses the executable whose headers are `file` (at least its first
/// `headers_end` bytes) and whose length is `file_len`. Its addresses are
/// the file's own: `Executable::placed` puts it somewhere.
pub fn parse(file: &[u8], file_len: u64) -> Result<Executable, Errno> {
    let bad = Errno::ENOEXEC;
    if file.len() < EHDR_SIZE || &file[..4] != b"\x7fELF" || file[4] != 2 || file[5] != 1 {
        return Err(bad);
    }
    let kind = u16_at(file, 16).ok_or(bad)?;
    if !(kind == ET_EXEC || kind == ET_DYN) || u16_at(file, 18) != Some(EM_X86_64) {
        return Err(bad);
    }
    let entry = u64_at(file, 24).ok_or(bad)?;
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
    let mut interp = None;
    for i in 0..phnum as usize {
        let ph = &file[phoff + i * PHDR_SIZE..phoff + (i + 1) * PHDR_SIZE];
        let p_type = u32_at(ph, 0).ok_or(bad)?;
        let seg = Segment {
            flags: u32_at(ph, 4).ok_or(bad)?,
            offset: u64_at(ph, 8).ok_or(bad)?,
            vaddr: u64_at(ph, 16).ok_or(bad)?,
            file_size: u64_at(ph, 32).ok_or(bad)?,
            mem_size: u64_at(ph, 40).ok_or(bad)?,
        };
        match p_type {
            // Linux reads the first and refuses a name that is absurdly
            // long or too short to hold one byte and its NUL.
            PT_INTERP if interp.is_none() => {
                if !(2..=INTERP_MAX).contains(&seg.file_size) {
                    return Err(bad);
                }
                interp = Some(InterpName {
                    offset: seg.offset,
                    len: seg.file_size,
                });
            }
            PT_PHDR => phdr_vaddr = Some(seg.vaddr),
            PT_LOAD => {
                let file_end = seg.offset.checked_add(seg.file_size).ok_or(bad)?;
                let mem_end = seg.vaddr.checked_add(seg.mem_size).ok_or(bad)?;
                if seg.file_size > seg.mem_size
                    || file_end > file_len
                    || mem_end.checked_add(PAGE_SIZE).is_none()
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
        relocatable: kind == ET_DYN,
        interp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: u64 = 1 << 47;

    /// What exec does with a program: parse it, and place it where Linux
    /// places it without randomisation.
    fn load(f: &[u8], len: u64) -> Result<Executable, Errno> {
        let exe = parse(f, len)?;
        exe.placed(if exe.relocatable { DYN_BASE } else { 0 }, TOP)
    }

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
    fn the_text_span_is_the_executable_segments() {
        let f = tiny_elf();
        assert_eq!(text_span(&f), Some((0x400000, 0x401000)));
        let mut data_only = f.clone();
        data_only[64 + 4..64 + 8].copy_from_slice(&PF_R.to_le_bytes());
        assert_eq!(text_span(&data_only), None);
        assert_eq!(text_span(&f[..100]), None, "headers cut short");
    }

    /// `tiny_elf` with a second program header, PT_INTERP, naming
    /// "/lib/ld.so" at offset 0xc0.
    fn dynamic_elf() -> Vec<u8> {
        let mut f = tiny_elf();
        f.resize(0x100, 0);
        f[56..58].copy_from_slice(&2u16.to_le_bytes());
        f[64 + 32..64 + 40].copy_from_slice(&0x100u64.to_le_bytes());
        let ph = 64 + 56;
        f[ph..ph + 4].copy_from_slice(&PT_INTERP.to_le_bytes());
        f[ph + 8..ph + 16].copy_from_slice(&0xc0u64.to_le_bytes());
        f[ph + 32..ph + 40].copy_from_slice(&11u64.to_le_bytes());
        f[0xc0..0xcb].copy_from_slice(b"/lib/ld.so\0");
        f
    }

    #[test]
    fn the_load_bias_is_where_the_headers_are_against_where_the_file_put_them() {
        let mut headers = vec![0u8; 2 * PHDR_SIZE];
        headers[..4].copy_from_slice(&PT_LOAD.to_le_bytes());
        assert_eq!(load_bias(0x400040, &headers), 0, "no PT_PHDR: as linked");
        let vaddr = PHDR_SIZE + 16..PHDR_SIZE + 24;
        headers[PHDR_SIZE..PHDR_SIZE + 4].copy_from_slice(&PT_PHDR.to_le_bytes());
        headers[vaddr.clone()].copy_from_slice(&0x40u64.to_le_bytes());
        assert_eq!(
            load_bias(0x5555_5555_4040, &headers),
            0x5555_5555_4000,
            "a PIE"
        );
        headers[vaddr].copy_from_slice(&0x400040u64.to_le_bytes());
        assert_eq!(load_bias(0x400040, &headers), 0, "ET_EXEC with PT_PHDR");
        assert_eq!(
            load_bias(0x400040, &headers[..PHDR_SIZE + 8]),
            0,
            "cut short"
        );
    }

    #[test]
    fn a_dynamic_program_names_its_interpreter() {
        let f = dynamic_elf();
        let exe = load(&f, f.len() as u64).unwrap();
        let name = exe.interp.unwrap();
        assert_eq!((name.offset, name.len), (0xc0, 11));
        assert_eq!(interp_path(&f[0xc0..0xcb], 11), Ok("/lib/ld.so"));
        // A static program has none.
        assert_eq!(load(&tiny_elf(), 0x80).unwrap().interp, None);
    }

    #[test]
    fn an_interpreter_name_is_checked_as_linux_checks_it() {
        // The file ended before the name did: Linux's kernel_read is short.
        assert_eq!(interp_path(b"/lib/ld", 11), Err(Errno::EIO));
        // No NUL at its end.
        assert_eq!(interp_path(b"/lib/ld.so!", 11), Err(Errno::ENOEXEC));
        // The path stops at the first NUL.
        assert_eq!(interp_path(b"/lib\0ld.so\0", 11), Ok("/lib"));
        assert_eq!(interp_path(b"\0", 1), Ok(""));
        assert_eq!(interp_path(b"/\xff\0", 3), Err(Errno::ENOENT));
        // A PT_INTERP of 1 byte or of more than PATH_MAX is no name at all.
        for len in [0u64, 1, INTERP_MAX + 1] {
            let mut f = dynamic_elf();
            f[64 + 56 + 32..64 + 56 + 40].copy_from_slice(&len.to_le_bytes());
            assert_eq!(load(&f, f.len() as u64), Err(Errno::ENOEXEC), "{len}");
        }
        // A name past the end of the file parses; reading it says EIO.
        let mut f = dynamic_elf();
        f[64 + 56 + 8..64 + 56 + 16].copy_from_slice(&0x1_0000u64.to_le_bytes());
        assert!(load(&f, f.len() as u64).is_ok());
    }

    #[test]
    fn only_a_position_independent_image_moves() {
        let f = tiny_elf();
        let exe = parse(&f, f.len() as u64).unwrap();
        assert_eq!(exe.span(), (0x400000, 0x401000));
        assert_eq!(exe.placed(0x1000, TOP), Err(Errno::EINVAL));
        let mut f = tiny_elf();
        f[16..18].copy_from_slice(&ET_DYN.to_le_bytes());
        f[24..32].copy_from_slice(&0x78u64.to_le_bytes());
        f[64 + 16..64 + 24].copy_from_slice(&0u64.to_le_bytes());
        let exe = parse(&f, f.len() as u64).unwrap();
        assert_eq!(exe.span(), (0, 0x1000));
        let at = exe.placed(0x7f00_0000_0000, TOP).unwrap();
        assert_eq!(at.entry, 0x7f00_0000_0078);
        assert_eq!(exe.placed(0x123, TOP), Err(Errno::EINVAL));
        // A position-independent file whose addresses start high still
        // lands where the loader wants its first segment.
        let mut f = f.clone();
        f[24..32].copy_from_slice(&0xffff_f000_0000_0078u64.to_le_bytes());
        f[64 + 16..64 + 24].copy_from_slice(&0xffff_f000_0000_0000u64.to_le_bytes());
        let high = parse(&f, f.len() as u64).unwrap();
        let at = high
            .placed(DYN_BASE.wrapping_sub(high.span().0), TOP)
            .unwrap();
        assert_eq!((at.span().0, at.entry), (DYN_BASE, DYN_BASE + 0x78));
        // Not at 0, nor past the top of user space.
        assert_eq!(exe.placed(0, TOP), Err(Errno::ENOEXEC));
        assert_eq!(exe.placed(TOP, TOP), Err(Errno::ENOEXEC));
    }

    /// The ELF fuzzer: headers of a static and a dynamic program, each
    /// byte of them damaged at random many times over. Parsing never
    /// panics, and whatever it accepts lies where it says, in user space.
    #[test]
    fn random_damage_never_panics_and_what_passes_is_in_user_space() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut dynamic_pie = dynamic_elf();
        dynamic_pie[16..18].copy_from_slice(&ET_DYN.to_le_bytes());
        let (mut accepted, mut named) = (0, 0);
        for good in [tiny_elf(), dynamic_elf(), dynamic_pie] {
            for _ in 0..20_000 {
                let mut f = good.clone();
                for _ in 0..1 + next() % 4 {
                    let at = (next() % f.len() as u64) as usize;
                    f[at] = next() as u8;
                }
                let len = if next() % 8 == 0 {
                    next() % 0x200
                } else {
                    f.len() as u64
                };
                let Ok(exe) = load(&f, len) else { continue };
                accepted += 1;
                for seg in exe.segments.iter() {
                    assert!(seg.vaddr >= MIN_ADDR && seg.vaddr + seg.mem_size <= TOP);
                    assert!(seg.offset + seg.file_size <= len);
                }
                if let Some(name) = exe.interp {
                    named += 1;
                    let start = (name.offset as usize).min(f.len());
                    let end = (name.offset.saturating_add(name.len) as usize).min(f.len());
                    let _ = interp_path(&f[start..end], name.len);
                }
            }
        }
        // The damage left enough programs whole for the check to mean something.
        assert!(
            accepted > 1000 && named > 500,
            "{accepted} accepted, {named} named"
        );
    }

    #[test]
    fn parses_a_minimal_executable() {
        let f = tiny_elf();
        assert_eq!(headers_end(&f), Some(64 + 56));
        let exe = load(&f, f.len() as u64).unwrap();
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
        let exe = load(&f, f.len() as u64).unwrap();
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
            (
                "an interpreter name of one byte",
                Box::new(|f| {
                    f[64] = 3;
                    f[64 + 32..64 + 40].copy_from_slice(&1u64.to_le_bytes());
                }),
            ),
            ("truncated", Box::new(|f| f.truncate(40))),
        ];
        for (what, hurt) in damage {
            let mut f = good.clone();
            hurt(&mut f);
            assert_eq!(load(&f, f.len() as u64), Err(Errno::ENOEXEC), "{what}");
        }
        assert_eq!(load(b"#!/bin/sh\n", 10), Err(Errno::ENOEXEC));
        assert_eq!(load(&[], 0), Err(Errno::ENOEXEC));
        assert_eq!(headers_end(b"#!/bin/sh\n"), None);
    }

    #[test]
    fn the_headers_alone_are_enough() {
        let f = tiny_elf();
        let end = headers_end(&f).unwrap();
        // The segment's bytes need not be there: only the file's length.
        let exe = load(&f[..end], f.len() as u64).unwrap();
        assert_eq!(exe, load(&f, f.len() as u64).unwrap());
        // But a segment past that length is still refused.
        assert_eq!(load(&f[..end], end as u64), Err(Errno::ENOEXEC));
    }
}
