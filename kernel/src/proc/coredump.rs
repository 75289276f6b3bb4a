//! Core dumps: the file a process leaves when a signal whose default
//! action is "core" kills it (SIGSEGV, SIGABRT, SIGQUIT, ...), which GDB
//! opens beside the program (`gdb PROGRAM core`) to show where it died.
//!
//! `write` runs in the dying thread, on its way out (signal.rs `deliver`),
//! after the other threads were told to exit, so the memory it copies is
//! the process's as it died. It gathers what the core's notes say (the
//! thread's registers from its trap frame, its floating-point registers,
//! the ids, times and signal masks, the name and arguments) and the areas
//! of the address space, asks `kcore::coredump::layout` where everything
//! goes, and writes the file: the headers and notes, then each readable
//! area's pages. A page the process never touched is not read (that would
//! fill it): it stays a hole in the file, which reads as the zeros it
//! would have held.
//!
//! Linux's rules, as far as they go here:
//! - the file is `core` in the process's working directory (the default
//!   `core_pattern`, which `/proc/sys/kernel/core_pattern` shows; no
//!   `%p`-style patterns, no pipes), replacing a file of that name, made
//!   with mode 0600 and the process's ids;
//! - nothing is written if `RLIMIT_CORE` is below one page (the default
//!   limit is 0: no core files unless a shell's `ulimit -c` asks), and
//!   the file stops at the limit;
//! - the wait status carries `WCOREFLAG` (0x80, what `WCOREDUMP` tests)
//!   once the file is made, even if the limit cut it short (Linux's
//!   `elf_core_dump` counts the dump as done before it writes).
//!
//! Only the thread that took the signal has an `NT_PRSTATUS` note (Linux
//! writes one per thread, after stopping them all); the other threads'
//! registers are not in the core. Set-user-id programs are dumped like the
//! rest (Linux refuses unless `suid_dumpable` says otherwise).

use abi::signal::SigInfo;
use abi::types::RLIMIT_CORE;
use alloc::vec::Vec;
use kcore::coredump::{Area, ProcessInfo, ThreadStatus, UserRegs};

use crate::arch::trap::TrapFrame;
use crate::fs::ramfs::{self, Content};
use crate::mm::paging::Space;
use crate::mm::{PAGE_SIZE, uaccess};

/// The name of the core file, in the working directory.
const CORE_NAME: &str = "core";

/// What the core's notes say, gathered under the table's lock.
struct Gathered {
    limit: u64,
    cwd: alloc::string::String,
    name: alloc::string::String,
    cmdline: Vec<u8>,
    thread: ThreadStatus,
    nice: i8,
    uid: u32,
    gid: u32,
    pid: u32,
    fxsave: [u8; 512],
    areas: Vec<Area>,
}

/// Writes the core file of the current process, which the signal `info`
/// describes (taken at the user state in `tf`) is killing. Returns whether a core file was
/// made (the wait status then carries WCOREFLAG).
pub fn write(tf: &TrapFrame, info: &SigInfo) -> bool {
    let g = gather(tf, info);
    if g.limit < PAGE_SIZE {
        return false;
    }
    let process = ProcessInfo {
        nice: g.nice,
        uid: g.uid,
        gid: g.gid,
        pid: g.pid,
        ppid: g.thread.ppid,
        pgrp: g.thread.pgrp,
        sid: g.thread.sid,
        name: &g.name,
        cmdline: &g.cmdline,
    };
    let layout = kcore::coredump::layout(&g.thread, &process, &g.fxsave, &g.areas);
    let Ok(path) = kcore::path::resolve(&g.cwd, CORE_NAME) else {
        return false;
    };
    // Linux unlinks an old core first and then makes the file exclusively,
    // so a link planted there cannot redirect the dump.
    let _ = ramfs::remove(&path, false);
    let Ok((node, _)) = ramfs::create(&path, 0o600, true) else {
        return false;
    };
    let data = match &node.lock().content {
        Content::File(data) => data.clone(),
        _ => return false,
    };
    fill(&data, &layout, g.limit);
    true
}

/// Writes the core file's bytes into `data`, up to `limit` bytes: the
/// headers and notes, then each area's pages that are there. Stops at the
/// limit or at the first write that fails (memory is short).
fn fill(data: &crate::fs::filedata::FileData, layout: &kcore::coredump::Layout, limit: u64) {
    let fits = |at: u64, len: u64| at.checked_add(len).is_some_and(|end| end <= limit);
    if !fits(0, layout.head.len() as u64) || data.write_at(0, &layout.head).is_err() {
        return;
    }
    let space = Space::current();
    let mut page = alloc::vec![0u8; PAGE_SIZE as usize];
    for area in layout.areas.iter().filter(|a| a.len > 0) {
        // Only the pages that are there: one never touched is a hole, not
        // a fault, and `next_mapped` skips empty tables whole, so a huge
        // untouched area costs nothing.
        let end = area.start + area.len;
        let mut from = area.start;
        while let Some(addr) = space.next_mapped(from, end) {
            from = addr + PAGE_SIZE;
            let at = area.file_offset + (addr - area.start);
            if !fits(at, PAGE_SIZE) {
                return;
            }
            // A page the process could not read (PROT_NONE inside a
            // readable area's range cannot happen, but a sibling's munmap
            // can) stays a hole too.
            if uaccess::copy_from_user(&mut page, addr).is_ok() && data.write_at(at, &page).is_err()
            {
                return;
            }
        }
    }
    // Trailing holes still count in the length.
    if fits(0, layout.len) {
        let _ = data.truncate(layout.len);
    }
}

/// The registers, ids and areas of the current thread and process.
fn gather(tf: &TrapFrame, info: &SigInfo) -> Gathered {
    let hz = u64::from(crate::clock::hz());
    let micros = |ticks: u64| ticks.saturating_mul(1_000_000) / hz;
    super::current_both(|t, p| {
        t.fpu.save();
        let in_syscall = tf.vector == crate::arch::syscall::SYSCALL_VECTOR
            && tf.error_code != crate::signal::NOT_A_SYSCALL;
        let regs = UserRegs {
            r15: tf.r15,
            r14: tf.r14,
            r13: tf.r13,
            r12: tf.r12,
            rbp: tf.rbp,
            rbx: tf.rbx,
            r11: tf.r11,
            r10: tf.r10,
            r9: tf.r9,
            r8: tf.r8,
            rax: tf.rax,
            rcx: tf.rcx,
            rdx: tf.rdx,
            rsi: tf.rsi,
            rdi: tf.rdi,
            orig_rax: if in_syscall { tf.error_code } else { u64::MAX },
            rip: tf.rip,
            cs: tf.cs,
            rflags: tf.rflags,
            rsp: tf.rsp,
            ss: tf.ss,
            fs_base: t.fs_base,
            gs_base: t.gs_base,
        };
        let areas = p.mem.as_ref().map_or_else(Vec::new, |mem| {
            mem.ranges()
                .iter()
                .map(|r| Area {
                    start: r.start,
                    end: r.end,
                    prot: r.area.prot,
                })
                .collect()
        });
        Gathered {
            limit: p.limits.cur(RLIMIT_CORE),
            cwd: p.cwd.clone(),
            name: p.name.clone(),
            cmdline: p.cmdline.clone(),
            thread: ThreadStatus {
                signal: info.signo as u32,
                code: info.code,
                addr: info.pid_or_addr,
                pending: t.sig.own.pending | p.sig.shared.pending,
                blocked: t.sig.blocked,
                tid: t.tid,
                ppid: p.ppid,
                pgrp: p.pgid,
                sid: p.sid,
                user_us: micros(t.user_ticks),
                system_us: micros(t.cpu_ticks.saturating_sub(t.user_ticks)),
                children_user_us: micros(p.children_ticks.0),
                children_system_us: micros(p.children_ticks.1),
                regs,
            },
            nice: t.nice as i8,
            uid: p.cred.ruid,
            gid: p.cred.rgid,
            pid: p.pid,
            fxsave: t.fpu.0,
            areas,
        }
    })
}
