//! The ELF core file a process leaves when a signal whose default action
//! is "core" kills it (core(5)): what GDB opens with `gdb PROGRAM core`.
//!
//! A core file is an ELF file of type `ET_CORE` with no sections. Its
//! program headers say where everything is:
//!
//! - one `PT_NOTE` segment, a list of notes named "CORE": `NT_PRSTATUS`
//!   (the signal, the ids, the times and the registers of the thread that
//!   took the signal, Linux's `struct elf_prstatus`), `NT_PRPSINFO` (the
//!   process's name and arguments, `struct elf_prpsinfo`) and
//!   `NT_SIGINFO` (the signal's `siginfo_t`, GDB's `$_siginfo`: for a
//!   fault, the address) and `NT_FPREGSET` (the floating-point registers
//!   as `fxsave` left them);
//! - one `PT_LOAD` segment per area of the address space, at the area's
//!   address and size (`p_memsz`), whose bytes follow in the file
//!   (`p_filesz`; 0 for an area that cannot be read, as Linux leaves
//!   `PROT_NONE` areas). Pages never touched are holes in the file.
//!
//! This file lays the headers and notes out (`layout`); the kernel reads
//! the registers and copies the pages (kernel/src/coredump.rs). The
//! structure layouts are Linux's x86_64 ones, as `linux/elfcore.h` and
//! `sys/user.h` give them; the host tests check their sizes and offsets.

use alloc::vec::Vec;

use crate::elf::{EHDR_SIZE, EM_X86_64, PAGE_SIZE as PAGE, PF_R, PF_W, PF_X, PHDR_SIZE, PT_LOAD};

const ET_CORE: u16 = 4;
const PT_NOTE: u32 = 4;
pub const NT_PRSTATUS: u32 = 1;
pub const NT_FPREGSET: u32 = 2;
pub const NT_PRPSINFO: u32 = 3;
/// "SIGI".
pub const NT_SIGINFO: u32 = 0x5349_4749;
/// `sizeof(struct elf_prstatus)` and `sizeof(struct elf_prpsinfo)` on
/// x86_64.
pub const PRSTATUS_SIZE: usize = 336;
pub const PRPSINFO_SIZE: usize = 136;

/// The user registers in `struct user_regs_struct`'s order, which is
/// `elf_gregset_t`'s (`NT_PRSTATUS`'s `pr_reg`) and GDB's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserRegs {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub rbp: u64,
    pub rbx: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rax: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    /// The system call number if the thread was in one, else -1.
    pub orig_rax: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
    pub fs_base: u64,
    pub gs_base: u64,
}

impl UserRegs {
    /// The 27 words of `elf_gregset_t` (ds, es, fs and gs are 0 in 64-bit
    /// mode).
    fn words(&self) -> [u64; 27] {
        [
            self.r15,
            self.r14,
            self.r13,
            self.r12,
            self.rbp,
            self.rbx,
            self.r11,
            self.r10,
            self.r9,
            self.r8,
            self.rax,
            self.rcx,
            self.rdx,
            self.rsi,
            self.rdi,
            self.orig_rax,
            self.rip,
            self.cs,
            self.rflags,
            self.rsp,
            self.ss,
            self.fs_base,
            self.gs_base,
            0,
            0,
            0,
            0,
        ]
    }
}

/// The thread that took the signal: `NT_PRSTATUS`.
#[derive(Clone, Debug, Default)]
pub struct ThreadStatus {
    pub signal: u32,
    /// The signal's `si_code`, and the word after siginfo's header: the
    /// faulting address, or the sender's pid and uid.
    pub code: i32,
    pub addr: u64,
    /// Signals pending and blocked, as bit masks (bit n-1 for signal n).
    pub pending: u64,
    pub blocked: u64,
    pub tid: u32,
    pub ppid: u32,
    pub pgrp: u32,
    pub sid: u32,
    /// CPU time, user and system, of the thread and of the process's
    /// waited-for children, in microseconds.
    pub user_us: u64,
    pub system_us: u64,
    pub children_user_us: u64,
    pub children_system_us: u64,
    pub regs: UserRegs,
}

/// The process: `NT_PRPSINFO`.
#[derive(Clone, Debug, Default)]
pub struct ProcessInfo<'a> {
    pub nice: i8,
    pub uid: u32,
    pub gid: u32,
    pub pid: u32,
    pub ppid: u32,
    pub pgrp: u32,
    pub sid: u32,
    /// Its name (at most 15 bytes are kept).
    pub name: &'a str,
    /// Its arguments, NUL-separated as /proc/PID/cmdline holds them (the
    /// first 79 bytes are kept, with spaces between).
    pub cmdline: &'a [u8],
}

/// One area of the address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub start: u64,
    pub end: u64,
    /// `PROT_*` bits.
    pub prot: u32,
}

/// Where one area's bytes go in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub start: u64,
    /// How many bytes from `start` are in the file (0 or the whole area).
    pub len: u64,
    pub file_offset: u64,
}

/// A core file's plan: the bytes that open it (ELF header, program headers,
/// notes), where each area's bytes go after them, and the file's length.
#[derive(Clone, Debug)]
pub struct Layout {
    pub head: Vec<u8>,
    pub areas: Vec<Placed>,
    pub len: u64,
}

/// The core file of a process with `areas` whose thread `thread` took the
/// signal, with floating-point registers `fxsave` (512 bytes). The areas'
/// bytes start at the first page boundary after the notes, each area's
/// page-aligned after the last, as Linux lays them out.
pub fn layout(
    thread: &ThreadStatus,
    process: &ProcessInfo,
    fxsave: &[u8; 512],
    areas: &[Area],
) -> Layout {
    let mut notes = Vec::new();
    note(&mut notes, NT_PRSTATUS, &prstatus(thread));
    note(&mut notes, NT_PRPSINFO, &prpsinfo(process));
    note(&mut notes, NT_SIGINFO, &siginfo(thread));
    note(&mut notes, NT_FPREGSET, fxsave);
    let headers = EHDR_SIZE + PHDR_SIZE * (1 + areas.len());
    let notes_at = headers as u64;
    let mut at = (notes_at + notes.len() as u64).next_multiple_of(PAGE);
    let mut placed = Vec::with_capacity(areas.len());
    for a in areas {
        let len = if a.prot & abi::types::PROT_READ != 0 {
            a.end - a.start
        } else {
            0
        };
        placed.push(Placed {
            start: a.start,
            len,
            file_offset: at,
        });
        at += len;
    }
    let mut head = Vec::with_capacity(headers + notes.len());
    ehdr(&mut head, 1 + areas.len() as u16);
    phdr(&mut head, PT_NOTE, 0, notes_at, 0, notes.len() as u64, 0, 4);
    for (a, p) in areas.iter().zip(&placed) {
        let flags = [
            (abi::types::PROT_READ, PF_R),
            (abi::types::PROT_WRITE, PF_W),
            (abi::types::PROT_EXEC, PF_X),
        ]
        .iter()
        .filter(|(prot, _)| a.prot & prot != 0)
        .fold(0, |f, (_, pf)| f | pf);
        phdr(
            &mut head,
            PT_LOAD,
            flags,
            p.file_offset,
            a.start,
            p.len,
            a.end - a.start,
            PAGE,
        );
    }
    head.extend_from_slice(&notes);
    Layout {
        head,
        areas: placed,
        len: at,
    }
}

fn ehdr(out: &mut Vec<u8>, phnum: u16) {
    out.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&ET_CORE.to_le_bytes());
    out.extend_from_slice(&EM_X86_64.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes()); // e_version
    out.extend_from_slice(&0u64.to_le_bytes()); // e_entry
    out.extend_from_slice(&(EHDR_SIZE as u64).to_le_bytes()); // e_phoff
    out.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    out.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    out.extend_from_slice(&(EHDR_SIZE as u16).to_le_bytes());
    out.extend_from_slice(&(PHDR_SIZE as u16).to_le_bytes());
    out.extend_from_slice(&phnum.to_le_bytes());
    out.extend_from_slice(&64u16.to_le_bytes()); // e_shentsize, as Linux
    out.extend_from_slice(&[0; 4]); // e_shnum, e_shstrndx
}

#[allow(clippy::too_many_arguments)]
fn phdr(
    out: &mut Vec<u8>,
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
) {
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    for word in [offset, vaddr, 0, filesz, memsz, align] {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

/// Appends a note named "CORE" of type `kind`, each part padded to 4 bytes.
fn note(out: &mut Vec<u8>, kind: u32, desc: &[u8]) {
    out.extend_from_slice(&5u32.to_le_bytes());
    out.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(b"CORE\0\0\0\0");
    out.extend_from_slice(desc);
    out.resize(out.len().next_multiple_of(4), 0);
}

/// `struct elf_prstatus`.
fn prstatus(t: &ThreadStatus) -> Vec<u8> {
    let mut s = Vec::with_capacity(PRSTATUS_SIZE);
    // pr_info (si_signo, si_code, si_errno), pr_cursig and its padding.
    s.extend_from_slice(&t.signal.to_le_bytes());
    s.extend_from_slice(&[0; 8]);
    s.extend_from_slice(&(t.signal as u16).to_le_bytes());
    s.extend_from_slice(&[0; 2]);
    s.extend_from_slice(&t.pending.to_le_bytes());
    s.extend_from_slice(&t.blocked.to_le_bytes());
    for id in [t.tid, t.ppid, t.pgrp, t.sid] {
        s.extend_from_slice(&id.to_le_bytes());
    }
    for us in [
        t.user_us,
        t.system_us,
        t.children_user_us,
        t.children_system_us,
    ] {
        s.extend_from_slice(&(us / 1_000_000).to_le_bytes());
        s.extend_from_slice(&(us % 1_000_000).to_le_bytes());
    }
    for word in t.regs.words() {
        s.extend_from_slice(&word.to_le_bytes());
    }
    s.extend_from_slice(&1u32.to_le_bytes()); // pr_fpvalid: NT_FPREGSET follows
    s.resize(PRSTATUS_SIZE, 0);
    s
}

/// `siginfo_t` (128 bytes): signo, errno, code, then the union, whose first
/// word is si_addr for a fault.
fn siginfo(t: &ThreadStatus) -> Vec<u8> {
    let mut s = Vec::with_capacity(128);
    s.extend_from_slice(&t.signal.to_le_bytes());
    s.extend_from_slice(&0i32.to_le_bytes());
    s.extend_from_slice(&t.code.to_le_bytes());
    s.extend_from_slice(&[0; 4]);
    s.extend_from_slice(&t.addr.to_le_bytes());
    s.resize(128, 0);
    s
}

/// `struct elf_prpsinfo`.
fn prpsinfo(p: &ProcessInfo) -> Vec<u8> {
    let mut s = Vec::with_capacity(PRPSINFO_SIZE);
    // pr_state (0: running), pr_sname, pr_zomb, pr_nice, padding, pr_flag.
    s.extend_from_slice(&[0, b'R', 0, p.nice as u8, 0, 0, 0, 0]);
    s.extend_from_slice(&0u64.to_le_bytes());
    for id in [p.uid, p.gid, p.pid, p.ppid, p.pgrp, p.sid] {
        s.extend_from_slice(&id.to_le_bytes());
    }
    let mut fname = [0u8; 16];
    let name = p.name.as_bytes();
    let n = name.len().min(15);
    fname[..n].copy_from_slice(&name[..n]);
    s.extend_from_slice(&fname);
    let mut args = [0u8; 80];
    let line = p.cmdline.strip_suffix(&[0]).unwrap_or(p.cmdline);
    for (to, &from) in args[..79].iter_mut().zip(line) {
        *to = if from == 0 { b' ' } else { from };
    }
    s.extend_from_slice(&args);
    debug_assert_eq!(s.len(), PRPSINFO_SIZE);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
    }
    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    #[test]
    fn the_structures_have_linuxs_sizes_and_offsets() {
        let t = ThreadStatus {
            signal: 11,
            tid: 42,
            ppid: 1,
            user_us: 2_500_000,
            regs: UserRegs {
                r15: 15,
                rip: 0x401000,
                rsp: 0x7fff_0000,
                gs_base: 7,
                ..UserRegs::default()
            },
            ..ThreadStatus::default()
        };
        let s = prstatus(&t);
        assert_eq!(s.len(), PRSTATUS_SIZE);
        assert_eq!(u32_at(&s, 0), 11, "pr_info.si_signo");
        assert_eq!(u16_at(&s, 12), 11, "pr_cursig");
        assert_eq!(u32_at(&s, 32), 42, "pr_pid");
        assert_eq!(u32_at(&s, 36), 1, "pr_ppid");
        assert_eq!((u64_at(&s, 48), u64_at(&s, 56)), (2, 500_000), "pr_utime");
        // pr_reg at 112: r15 first, rip the 17th word, rsp the 20th.
        assert_eq!(u64_at(&s, 112), 15);
        assert_eq!(u64_at(&s, 112 + 16 * 8), 0x401000);
        assert_eq!(u64_at(&s, 112 + 19 * 8), 0x7fff_0000);
        assert_eq!(u64_at(&s, 112 + 22 * 8), 7, "gs_base");
        assert_eq!(u32_at(&s, 328), 1, "pr_fpvalid");
        let info = siginfo(&ThreadStatus {
            signal: 11,
            code: 1,
            addr: 0xdead,
            ..ThreadStatus::default()
        });
        assert_eq!(
            (info.len(), u32_at(&info, 0), u32_at(&info, 8)),
            (128, 11, 1)
        );
        assert_eq!(u64_at(&info, 16), 0xdead, "si_addr");

        let cmdline = b"prog\0-x\0file\0";
        let p = ProcessInfo {
            pid: 42,
            name: "a-very-long-program-name",
            cmdline,
            ..ProcessInfo::default()
        };
        let i = prpsinfo(&p);
        assert_eq!(i.len(), PRPSINFO_SIZE);
        assert_eq!(u32_at(&i, 24), 42, "pr_pid");
        assert_eq!(&i[40..56], b"a-very-long-pro\0", "pr_fname");
        assert_eq!(&i[56..68], b"prog -x file");
        assert_eq!(i[68], 0);
    }

    #[test]
    fn the_layout_places_notes_then_page_aligned_areas() {
        let areas = [
            Area {
                start: 0x40_0000,
                end: 0x40_2000,
                prot: 5,
            },
            Area {
                start: 0x50_0000,
                end: 0x60_0000,
                prot: 0,
            },
            Area {
                start: 0x7fff_0000,
                end: 0x7fff_1000,
                prot: 3,
            },
        ];
        let l = layout(
            &ThreadStatus::default(),
            &ProcessInfo::default(),
            &[0; 512],
            &areas,
        );
        let h = &l.head;
        assert_eq!(&h[..4], b"\x7fELF");
        assert_eq!(u16_at(h, 16), ET_CORE);
        assert_eq!(u16_at(h, 18), EM_X86_64);
        assert_eq!(u16_at(h, 56), 4, "e_phnum: the notes and three areas");
        // The notes' header, then the notes themselves right after the
        // program headers.
        let notes_at = EHDR_SIZE + 4 * PHDR_SIZE;
        assert_eq!(u32_at(h, 64), PT_NOTE);
        assert_eq!(u64_at(h, 64 + 8), notes_at as u64);
        let notes_len = u64_at(h, 64 + 32) as usize;
        assert_eq!(h.len(), notes_at + notes_len);
        assert_eq!(u32_at(h, notes_at + 8), NT_PRSTATUS);
        assert_eq!(&h[notes_at + 12..notes_at + 17], b"CORE\0");
        assert_eq!(u32_at(h, notes_at + 4), PRSTATUS_SIZE as u32);
        // The areas: the first at the page after the notes, the PROT_NONE
        // one with nothing in the file, the last right after the first.
        let first = (notes_at + notes_len).next_multiple_of(4096) as u64;
        assert_eq!(
            l.areas,
            [
                Placed {
                    start: 0x40_0000,
                    len: 0x2000,
                    file_offset: first
                },
                Placed {
                    start: 0x50_0000,
                    len: 0,
                    file_offset: first + 0x2000
                },
                Placed {
                    start: 0x7fff_0000,
                    len: 0x1000,
                    file_offset: first + 0x2000
                },
            ]
        );
        assert_eq!(l.len, first + 0x3000);
        let load = |i: usize| EHDR_SIZE + (1 + i) * PHDR_SIZE;
        assert_eq!(u32_at(h, load(0)), PT_LOAD);
        assert_eq!(u32_at(h, load(0) + 4), PF_R | PF_X);
        assert_eq!(u64_at(h, load(1) + 32), 0, "p_filesz of PROT_NONE");
        assert_eq!(u64_at(h, load(1) + 40), 0x10_0000, "p_memsz");
        assert_eq!(u32_at(h, load(2) + 4), PF_R | PF_W);
    }
}
