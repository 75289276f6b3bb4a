//! execve: replacing a process's program.
//!
//! The new image is built completely in a fresh address space (segments from
//! the ELF file, a stack holding argc, argv, envp and the aux vector exactly as
//! Linux lays them out) before anything of the caller changes. Only when all
//! of that succeeded does the process switch to it, drop the old memory and
//! its close-on-exec descriptors, and have its trap frame rewritten so the
//! return to user mode lands at the new entry point. A failed exec therefore
//! returns an error to an unchanged caller.
//!
//! In a process with several threads, the others are ended first (once the
//! image is built, so a failing exec leaves them running), and the caller
//! takes the process's pid as its tid, as on Linux: after exec the process
//! is one thread again, whose tid is its pid. A vfork child gives the
//! memory it borrowed back to its parent here, and releases the parent.

use abi::Errno;
use abi::types::*;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use kcore::aslr;
use kcore::cred::{Cred, MAY_EXEC};
use kcore::elf::{self, Executable, PF_W, PF_X};
use kcore::script;
use kcore::vma::{FileMap, Kind};
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::sched::{self, Chan};
use super::vm::{MMAP_TOP, STACK_MAX, STACK_TOP, UserMemory};
use super::{TABLE, current, current_both};
use crate::arch::trap::TrapFrame;
use crate::fs::filedata::{ExecHold, FileData};
use crate::fs::ramfs::{self, Content};
use crate::mm::areas::{self, MappedFile};
use crate::mm::paging::AddressSpace;
use crate::mm::{PAGE_SIZE, USER_TOP, uaccess};
use crate::mm::{page_down, page_up};

/// Most argv + envp strings, in bytes (Linux allows more; we keep it small).
pub const ARG_MAX: usize = 128 * 1024;
const MAX_ARGS: usize = 4096;

/// A loaded program, ready to run.
pub struct Image {
    pub mem: UserMemory,
    pub entry: u64,
    pub stack_pointer: u64,
    /// Who the program runs as: the caller, unless the file is
    /// set-user-ID or set-group-ID (`kcore::cred::Cred::exec`).
    pub cred: Cred,
}

/// execve(2) with user pointers: the program at `path`, from the
/// working directory.
pub fn execve(tf: &mut TrapFrame, path: u64, argv: u64, envp: u64) -> Result<usize, Errno> {
    let path = uaccess::read_cstr(path, kcore::path::PATH_MAX)?;
    let full = kcore::path::resolve(&current(|p| p.cwd.clone()), &path)?;
    exec(tf, full, argv, envp)
}

/// Replaces the caller's program with the one at `full`, an absolute path
/// (what `/proc/PID/exe` then names), given the user's `argv` and `envp`
/// arrays. The file is opened before the arrays are read, as Linux opens
/// it first (since 6.8): a missing file is ENOENT even with a bad array.
pub fn exec(tf: &mut TrapFrame, full: String, argv: u64, envp: u64) -> Result<usize, Errno> {
    let cred = crate::proc::cred();
    let program = open_program(&full, &cred)?;
    let argv = read_strings(argv)?;
    let envp = read_strings(envp)?;
    let (program, exe, argv) = follow_scripts(program, &full, argv, &cred)?;
    if argv.iter().chain(&envp).map(|s| s.len() + 1).sum::<usize>() > ARG_MAX {
        return Err(Errno::E2BIG);
    }
    let stack_limit = current(|p| p.limits.cur(abi::types::RLIMIT_STACK));
    let image = load_program(program, &full, &argv, &envp, stack_limit, &cred)?;
    // The name `ps` shows is the script's, /proc/PID/exe its interpreter,
    // as on Linux.
    let name = program_name(&full);
    let cmdline = cmdline(&argv);
    end_other_threads();
    let (pid, old, closed) = current_both(|t, p| {
        p.name = name;
        p.exe = exe;
        p.cmdline = cmdline;
        if image.cred.secure() {
            // Linux's PER_CLEAR_ON_SETID: no layout the caller chose.
            p.personality &= !aslr::PER_CLEAR_ON_SETID;
        }
        if *p.cred != image.cred {
            p.cred = Arc::new(image.cred);
        }
        t.fs_base = 0;
        t.gs_base = 0;
        sched::load_user_registers(t);
        t.clear_child_tid = 0;
        t.robust_list = 0;
        p.prof.stop(PROF_STOPPED_BY_EXEC);
        p.sig.exec();
        t.sig.exec();
        p.files.unshare();
        (p.pid, p.mem.replace(image.mem), p.files.take_cloexec())
    });
    current(|p| p.mem.as_ref().expect("just set").space.activate());
    x86_64::registers::model_specific::FsBase::write(VirtAddr::zero());
    crate::arch::fpu::FpuState::initial().restore();
    drop(super::lifecycle::give_back_borrowed(pid, old));
    super::lifecycle::release_vfork_parent(pid);
    for file in closed {
        crate::fs::file::close_by(pid, file);
    }
    *tf = user_entry_frame(image.entry, image.stack_pointer);
    Ok(0)
}

/// A `#!` script runs its interpreter (`kcore::script`): while `program`
/// (opened from `path`) begins with `#!`, the interpreter it names is
/// opened instead, with the script's path spliced into the arguments.
/// The program to load, its path (/proc/PID/exe), and the arguments.
/// ENOEXEC for a line that names no interpreter, the interpreter's own
/// errors (ENOENT, EACCES), ELOOP for more than `MAX_DEPTH` scripts in a
/// row.
fn follow_scripts(
    mut program: ProgramFile,
    path: &str,
    mut argv: Vec<Vec<u8>>,
    cred: &Cred,
) -> Result<(ProgramFile, String, Vec<Vec<u8>>), Errno> {
    let mut exe = String::from(path);
    for scripts in 0.. {
        let mut head = [0u8; script::LINE_MAX];
        let got = program.file.data.read_at(0, &mut head);
        let Some(line) = script::parse(&head[..got]) else {
            return Ok((program, exe, argv));
        };
        if scripts == script::MAX_DEPTH {
            return Err(Errno::ELOOP);
        }
        let line = line?;
        // This kernel's files have UTF-8 names: no other name is found.
        let name = core::str::from_utf8(line.interpreter).map_err(|_| Errno::ENOENT)?;
        let cwd = TABLE.lock().current_mut().map(|p| p.cwd.clone());
        let interpreter = kcore::path::resolve(cwd.as_deref().unwrap_or("/"), name)?;
        argv = script::argv(&line, exe.as_bytes(), &argv);
        program = open_program(&interpreter, cred)?;
        exe = interpreter;
    }
    unreachable!("the loop returns")
}

/// Ends every other thread of the current process and waits until they
/// are gone; then the caller becomes the thread whose tid is the pid.
fn end_other_threads() {
    let (me, pid) = {
        let mut table = TABLE.lock();
        let (t, p) = table.current_both().expect("exec runs in a thread");
        let (me, pid) = (t.tid, p.pid);
        if p.live_threads == 1 && me == pid {
            return;
        }
        // exit_group's mark: the others end without telling anyone else.
        p.group_exit.get_or_insert(0);
        crate::signal::kill_other_threads(&mut table, pid, me);
        (me, pid)
    };
    // Not interruptible: past this point exec cannot fail, and the others
    // cannot refuse a SIGKILL.
    sched::wait_uninterruptible(Chan::ThreadExit(pid), || {
        let table = TABLE.lock();
        let alone = table.procs.get(&pid).is_some_and(|p| p.live_threads == 1);
        // The old leader's entry is gone once the scheduler freed it.
        alone && (me == pid || !table.threads.contains_key(&pid))
    });
    let mut table = TABLE.lock();
    if me != pid {
        let mut thread = table.threads.remove(&me).expect("the current thread");
        thread.tid = pid;
        table.threads.insert(pid, thread);
        crate::arch::percpu::this_cpu().set_running(Some((pid, pid)));
    }
    if let Some(p) = table.procs.get_mut(&pid) {
        p.group_exit = None;
    }
}

/// The trap frame that starts a program: entry point, stack, interrupts on.
pub fn user_entry_frame(entry: u64, stack_pointer: u64) -> TrapFrame {
    let sel = crate::arch::gdt::selectors();
    TrapFrame {
        rip: entry,
        rsp: stack_pointer,
        rflags: 0x202,
        cs: u64::from(sel.user_code.0),
        ss: u64::from(sel.user_data.0),
        ..TrapFrame::default()
    }
}

/// argv as /proc/PID/cmdline shows it: each string NUL-terminated, cut at
/// `CMDLINE_MAX` bytes.
pub fn cmdline(argv: &[Vec<u8>]) -> Vec<u8> {
    let mut out: Vec<u8> = argv
        .iter()
        .flat_map(|a| a.iter().copied().chain(core::iter::once(0)))
        .take(super::CMDLINE_MAX)
        .collect();
    out.shrink_to_fit();
    out
}

pub fn program_name(path: &str) -> String {
    String::from(path.rsplit('/').next().unwrap_or(path))
}

/// argv or envp: the strings as bytes, whatever they hold (Linux passes
/// on bytes that are no UTF-8, and Python's tests pass them).
fn read_strings(array: u64) -> Result<Vec<Vec<u8>>, Errno> {
    let ptrs = uaccess::read_ptr_array(array, MAX_ARGS)?;
    let mut total = 0;
    let mut out = Vec::with_capacity(ptrs.len());
    for ptr in ptrs {
        let s = uaccess::read_cbytes(ptr, ARG_MAX).map_err(|e| {
            if e == Errno::ENAMETOOLONG {
                Errno::E2BIG
            } else {
                e
            }
        })?;
        total += s.len() + 1;
        if total > ARG_MAX {
            return Err(Errno::E2BIG);
        }
        out.push(s);
    }
    Ok(out)
}

/// Loads the program at absolute `path` into a new address space, with a
/// stack of `stack_limit` bytes (the caller's `RLIMIT_STACK`), for a caller
/// with credentials `cred`: EACCES unless the file is a regular file it may
/// execute. A set-user-ID file runs as its owner, a set-group-ID one (with
/// group execute) as its group.
///
/// A dynamically linked program (one with `PT_INTERP`) gets its
/// interpreter, the dynamic loader, mapped beside it (`load_interpreter`),
/// and starts there: the loader finds the program through the auxiliary
/// vector (AT_PHDR, AT_ENTRY), maps its libraries with mmap, and jumps to
/// the program's entry.
pub fn load(
    path: &str,
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
    stack_limit: u64,
    cred: &Cred,
) -> Result<Image, Errno> {
    load_program(
        open_program(path, cred)?,
        path,
        argv,
        envp,
        stack_limit,
        cred,
    )
}

/// `load` of a program already opened from `path`.
fn load_program(
    program: ProgramFile,
    path: &str,
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
    stack_limit: u64,
    cred: &Cred,
) -> Result<Image, Errno> {
    let mut new_cred = cred.clone();
    new_cred.exec(program.set_uid, program.set_gid);
    let file = program.file;
    let exe = parse_headers(&file.data)?;
    // A program that runs as someone else is always randomised: its
    // caller's personality must not make it easier to attack.
    let moved = layout_offsets(new_cred.secure());
    // A position-independent program goes where Linux puts it, moved up
    // when randomisation is on.
    // (Its first segment lands there whatever address the file gave it:
    // the bias wraps, as Linux's `load_bias` does.)
    let bias = if exe.relocatable {
        (elf::DYN_BASE + moved.pie).wrapping_sub(exe.span().0)
    } else {
        0
    };
    let exe = exe.placed(bias, USER_TOP)?;
    let (_, image_end) = exe.span();
    let mut mem = UserMemory::new(
        AddressSpace::new().ok_or(Errno::ENOMEM)?,
        image_end + moved.brk,
        MMAP_TOP - moved.mmap,
    );
    load_segments(&mut mem, &exe, &file)?;
    let interp = match exe.interp {
        Some(name) => Some(load_interpreter(&mut mem, &file, name, cred)?),
        None => None,
    };
    let vdso = crate::vdso::map(&mut mem)?;
    mem.program = Some(ExecHold::new(&file.data));
    let stack_top = STACK_TOP - moved.stack;
    let stack_bottom = stack_top - stack_size(stack_limit, path, argv, envp);
    mem.record(stack_bottom, stack_top, PROT_READ | PROT_WRITE, Kind::Stack);
    // The top of the stack, where every program starts, is mapped now (a
    // fault per page of it would be pure cost); the rest comes on demand.
    let eager = stack_top - (stack_top - stack_bottom).min(STACK_EAGER);
    let stack_flags = Flags::PRESENT | Flags::WRITABLE | Flags::NO_EXECUTE;
    mem.map_zeroed(eager, stack_top, stack_flags)?;
    let start = Start {
        exe: &exe,
        interp_base: interp.as_ref().map_or(0, |(base, _)| *base),
        vdso,
        path,
        argv,
        envp,
    };
    let stack = (stack_bottom, stack_top, moved.stack_sp);
    let stack_pointer = build_stack(&mem, &start, stack, &new_cred)?;
    Ok(Image {
        mem,
        entry: interp.map_or(exe.entry, |(_, entry)| entry),
        stack_pointer,
        cred: new_cred,
    })
}

/// A file exec may map, and whom it makes the program run as.
struct ProgramFile {
    file: MappedFile,
    set_uid: Option<u32>,
    set_gid: Option<u32>,
}

/// Opens `path` for exec by a caller with credentials `cred`: EACCES
/// unless it is a regular file the caller may execute. Its name, as
/// /proc/PID/maps shows it, is the path with no symbolic link in it, as
/// Linux shows the file itself.
fn open_program(path: &str, cred: &Cred) -> Result<ProgramFile, Errno> {
    let (node_ref, real) = ramfs::lookup_real(path)?;
    // A file this caller may not run is refused before anything is read.
    if !node_ref.lock().permits(cred, MAY_EXEC) {
        return Err(Errno::EACCES);
    }
    // A program on a disk runs from its file's page cache, as any mapping
    // of it (fs/ext2.rs), made before the node's lock is taken: the disk
    // sleeps.
    let disk_pages = if crate::fs::file::is_disk_file(&node_ref) {
        Some(crate::fs::ext2::pages(&node_ref)?)
    } else {
        None
    };
    let node = node_ref.lock();
    let data = match (&node.content, &disk_pages) {
        (Content::File(data), _) => data,
        (Content::DiskFile, Some(pages)) => pages,
        _ => return Err(Errno::EACCES),
    };
    Ok(ProgramFile {
        file: MappedFile {
            data: data.clone(),
            ino: node.ino,
            name: Arc::from(real.as_str()),
            may_write: false,
            disk_node: disk_pages.is_some().then(|| node_ref.clone()),
        },
        set_uid: (node.perm & S_ISUID != 0).then_some(node.uid),
        set_gid: (node.perm & (S_ISGID | S_IXGRP) == S_ISGID | S_IXGRP).then_some(node.gid),
    })
}

/// Maps the interpreter that `program` names at `name` into `mem`, where
/// mmap would put a mapping its size (the top of the mmap region), and
/// returns its base (AT_BASE) and entry point. The errors are Linux's: the
/// name's own faults are the program's (`elf::interp_path`), a missing or
/// unrunnable file is ENOENT or EACCES, one shorter than an ELF header is
/// EIO, and one that is not a loadable x86_64 ELF is ELIBBAD ("accessing
/// a corrupted shared library"). The interpreter's own set-ID bits and
/// `PT_INTERP` mean nothing.
fn load_interpreter(
    mem: &mut UserMemory,
    program: &MappedFile,
    name: elf::InterpName,
    cred: &Cred,
) -> Result<(u64, u64), Errno> {
    let mut bytes = alloc::vec![0u8; name.len as usize];
    let got = program.data.read_at(name.offset, &mut bytes);
    let path = elf::interp_path(&bytes[..got], name.len)?;
    // A relative name is the caller's working directory's, as on Linux
    // (which only a program built for one machine's layout would use).
    let path = if path.starts_with('/') {
        String::from(path)
    } else {
        // (init's exec at boot has no caller: "/".)
        let cwd = TABLE.lock().current_mut().map(|p| p.cwd.clone());
        kcore::path::resolve(cwd.as_deref().unwrap_or("/"), path)?
    };
    let interp = open_program(&path, cred)?.file;
    // Linux reads the ELF header whole first: a shorter file is EIO.
    if interp.data.len() < elf::EHDR_SIZE as u64 {
        return Err(Errno::EIO);
    }
    let exe = parse_headers(&interp.data).map_err(|_| Errno::ELIBBAD)?;
    let bias = if exe.relocatable {
        let (low, high) = exe.span();
        mem.room_for(high - low)?.wrapping_sub(low)
    } else {
        0
    };
    let exe = exe.placed(bias, USER_TOP).map_err(|_| Errno::ELIBBAD)?;
    load_segments(mem, &exe, &interp)?;
    Ok((bias, exe.entry))
}

/// The level of randomisation exec applies
/// (`/proc/sys/kernel/randomize_va_space`, `kcore::aslr`): the boot
/// option `randomize_va_space` sets it, root may change it at any time.
static RANDOMIZE_VA_SPACE: AtomicU32 = AtomicU32::new(aslr::LEVEL_DEFAULT);

/// The setting, as /proc/sys/kernel/randomize_va_space shows it.
pub fn randomize_va_space() -> u32 {
    RANDOMIZE_VA_SPACE.load(Ordering::Relaxed)
}

/// Sets it: EINVAL past `aslr::LEVEL_MAX`, as Linux's sysctl refuses.
pub fn set_randomize_va_space(level: u32) -> Result<(), Errno> {
    if level > aslr::LEVEL_MAX {
        return Err(Errno::EINVAL);
    }
    RANDOMIZE_VA_SPACE.store(level, Ordering::Relaxed);
    Ok(())
}

/// How far this exec moves each part of the address space, for the
/// caller's personality (`ADDR_NO_RANDOMIZE` turns it off, unless the
/// program is `secure`: set-user-ID or set-group-ID) and the setting.
fn layout_offsets(secure: bool) -> aslr::Offsets {
    // At boot no process runs (init's exec): it gets the setting.
    let personality = match secure {
        true => 0,
        false => TABLE.lock().current_mut().map_or(0, |p| p.personality),
    };
    let level = aslr::level(randomize_va_space(), personality);
    aslr::offsets(level, || {
        let mut word = [0u8; 8];
        crate::random::fill(&mut word);
        u64::from_le_bytes(word)
    })
}

/// The ELF headers of the program in `file`, parsed: only the header and
/// the program headers are read, not the whole file.
fn parse_headers(file: &FileData) -> Result<Executable, Errno> {
    let mut head = [0u8; 64];
    file.read_at(0, &mut head);
    let end = elf::headers_end(&head).ok_or(Errno::ENOEXEC)?;
    if end > HEADERS_MAX {
        return Err(Errno::ENOEXEC);
    }
    let mut headers = alloc::vec![0u8; end];
    let got = file.read_at(0, &mut headers);
    elf::parse(&headers[..got], file.len())
}

/// Most bytes the ELF header and program headers may take (Linux reads up
/// to 64 KiB of program headers).
const HEADERS_MAX: usize = 64 * 1024;

/// Maps the program's segments as Linux's ELF loader does. A segment's
/// bytes from the file are a private mapping of the file itself: its pages
/// are the file's own frames, mapped now, read-only, and copied only when
/// the program stores into one (copy-on-write, as for any private file
/// mapping). What lies past them up to the segment's memory size is zeros
/// (.bss), on demand; the page where the file's bytes end is the program's
/// own copy, its tail cleared (Linux's `padzero`).
///
/// Why not copy the file, as this kernel once did: a copy costs a frame and
/// a write per page at every exec, and an emulator like QEMU translates a
/// program's code anew for every new frame it lands in; sharing the file's
/// frames keeps both (fork+exec+wait measured 1.2x Linux with copies; see
/// docs/performance.md). The price is that the file must not change under
/// a running program: `ExecHold` makes writers get ETXTBSY.
///
/// Segments may share a page (one ends where the next begins): each
/// segment's area replaces what an earlier one recorded there, and the
/// pages are mapped after all areas are, so a shared page has the later
/// segment's rights, as on Linux, whose loader maps each over the last.
/// A union would make a text page that shares a page with data writable
/// and executable at once.
fn load_segments(mem: &mut UserMemory, exe: &Executable, file: &MappedFile) -> Result<(), Errno> {
    let areas_of = |seg: &elf::Segment| {
        let mut prot = PROT_READ;
        if seg.flags & PF_W != 0 {
            prot |= PROT_WRITE;
        }
        if seg.flags & PF_X != 0 {
            prot |= PROT_EXEC;
        }
        let start = page_down(seg.vaddr);
        let file_end = page_up(seg.vaddr + seg.file_size).ok_or(Errno::ENOEXEC)?;
        let end = page_up(seg.vaddr + seg.mem_size).ok_or(Errno::ENOEXEC)?;
        Ok::<_, Errno>((prot, start, file_end.max(start), end))
    };
    for seg in exe.segments.iter() {
        let (prot, start, file_end, end) = areas_of(seg)?;
        if seg.file_size > 0 {
            let map = FileMap::new(file.clone(), start, page_down(seg.offset), false);
            mem.record(start, file_end, prot, Kind::File(map));
        }
        if file_end < end {
            mem.record(file_end, end, prot, Kind::Anonymous);
        }
    }
    for seg in exe.segments.iter().filter(|s| s.file_size > 0) {
        let (_, start, file_end, _) = areas_of(seg)?;
        for page in (start..file_end).step_by(PAGE_SIZE as usize) {
            if mem.space.translate(VirtAddr::new(page)).is_none() {
                areas::fault_in(&mem.space, page, false).map_err(Errno::from)?;
            }
        }
        let bytes_end = seg.vaddr + seg.file_size;
        let tail = (file_end - bytes_end) as usize;
        if seg.mem_size > seg.file_size && tail > 0 {
            mem.space.write_user(bytes_end, &ZEROS[..tail])?;
        }
    }
    Ok(())
}

static ZEROS: [u8; PAGE_SIZE as usize] = [0; PAGE_SIZE as usize];

/// 16 bytes for AT_RANDOM (libc's stack canary and pointer guard), from
/// the kernel's generator.
fn random_bytes() -> [u8; 16] {
    let mut out = [0u8; 16];
    crate::random::fill(&mut out);
    out
}

/// How much of the stack exec maps at once: what every program had before
/// the stack grew on demand.
const STACK_EAGER: u64 = 256 * 1024;

/// The auxiliary vector's entries (`build_stack`), with its AT_NULL.
const AUXV_ENTRIES: u64 = 21;

/// AT_PLATFORM's string: where glibc's loader once looked for libraries
/// built for this processor.
const PLATFORM: &str = "x86_64";

/// How large the stack area is: `RLIMIT_STACK` (at most `STACK_MAX`), but
/// never too small for the arguments, which Linux also places whatever the
/// limit. Below its top `STACK_EAGER` bytes the area is only reserved:
/// those pages come at the first touch (mm/areas.rs), so an 8 MiB stack
/// costs what the program uses, and a
/// program that recurses past its limit faults below the area (SIGSEGV),
/// as on Linux.
fn stack_size(limit: u64, path: &str, argv: &[Vec<u8>], envp: &[Vec<u8>]) -> u64 {
    let strings: u64 = [path.as_bytes(), PLATFORM.as_bytes()]
        .into_iter()
        .chain(argv.iter().map(Vec::as_slice))
        .chain(envp.iter().map(Vec::as_slice))
        .map(|s| s.len() as u64 + 1)
        .sum();
    // argc, the two pointer arrays with their NULLs, the auxv pairs, the
    // AT_RANDOM bytes and two 16-byte alignments.
    let words = 1 + argv.len() as u64 + 1 + envp.len() as u64 + 1 + 2 * AUXV_ENTRIES;
    let needed = strings + 8 * words + 16 + 32;
    let wanted = limit.min(STACK_MAX).max(needed);
    page_up(wanted).unwrap_or(STACK_MAX)
}

/// What a program starts with, besides its memory: its image, its
/// interpreter's base (0 for none), the vDSO's address, and the strings
/// exec was given.
struct Start<'a> {
    exe: &'a Executable,
    interp_base: u64,
    vdso: u64,
    path: &'a str,
    argv: &'a [Vec<u8>],
    envp: &'a [Vec<u8>],
}

/// Lays out the initial stack as the Linux x86_64 ABI does, in `stack`
/// (bottom, top, and how far below the top the strings start); returns
/// rsp.
fn build_stack(
    mem: &UserMemory,
    start: &Start,
    stack: (u64, u64, u64),
    cred: &Cred,
) -> Result<u64, Errno> {
    let (bottom, top, below_top) = stack;
    let Start {
        exe,
        interp_base,
        vdso,
        path,
        argv,
        envp,
    } = *start;
    let space = &mem.space;
    let mut sp = top - below_top;
    let mut push = |bytes: &[u8]| -> Result<u64, Errno> {
        sp -= bytes.len() as u64;
        if sp < bottom {
            return Err(Errno::E2BIG);
        }
        space.write_user(sp, bytes).map_err(|_| Errno::E2BIG)?;
        Ok(sp)
    };
    let mut cstr = |s: &[u8]| -> Result<u64, Errno> {
        let mut bytes = Vec::with_capacity(s.len() + 1);
        bytes.extend_from_slice(s);
        bytes.push(0);
        push(&bytes)
    };
    let execfn = cstr(path.as_bytes())?;
    let platform = cstr(PLATFORM.as_bytes())?;
    let env_ptrs: Vec<u64> = envp
        .iter()
        .rev()
        .map(|s| cstr(s))
        .collect::<Result<Vec<_>, _>>()?;
    let arg_ptrs: Vec<u64> = argv
        .iter()
        .rev()
        .map(|s| cstr(s))
        .collect::<Result<Vec<_>, _>>()?;
    let random = push(&random_bytes())?;
    let auxv: [(u64, u64); AUXV_ENTRIES as usize] = [
        // Where libc finds the vDSO (vdso.rs).
        (AT_SYSINFO_EHDR, vdso),
        (AT_MINSIGSTKSZ, crate::signal::MIN_STACK_FOR_FRAME),
        (AT_HWCAP, crate::arch::cpuid::hwcap()),
        (AT_PAGESZ, 4096),
        (AT_CLKTCK, u64::from(crate::clock::hz())),
        (AT_PHDR, exe.phdr_vaddr),
        (AT_PHENT, 56),
        (AT_PHNUM, u64::from(exe.phnum)),
        (AT_BASE, interp_base),
        (AT_FLAGS, 0),
        (AT_ENTRY, exe.entry),
        (AT_UID, u64::from(cred.ruid)),
        (AT_EUID, u64::from(cred.euid)),
        (AT_GID, u64::from(cred.rgid)),
        (AT_EGID, u64::from(cred.egid)),
        // A program running as someone else: libc must not trust the
        // environment (LD_PRELOAD, MALLOC_* ...).
        (AT_SECURE, u64::from(cred.secure())),
        (AT_RANDOM, random),
        // No FSGSBASE or ring-3 MWAIT for user code here.
        (AT_HWCAP2, 0),
        (AT_EXECFN, execfn),
        (AT_PLATFORM, platform),
        (AT_NULL, 0),
    ];
    let mut words: Vec<u64> = Vec::new();
    words.push(argv.len() as u64);
    words.extend(arg_ptrs.iter().rev());
    words.push(0);
    words.extend(env_ptrs.iter().rev());
    words.push(0);
    for (key, value) in auxv {
        words.push(key);
        words.push(value);
    }
    let mut sp = (random & !15) - (words.len() as u64 * 8);
    sp &= !15;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    if sp < bottom {
        return Err(Errno::E2BIG);
    }
    space.write_user(sp, &bytes).map_err(|_| Errno::E2BIG)?;
    Ok(sp)
}
