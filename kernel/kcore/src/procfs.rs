//! The text of `/proc`'s files, in Linux's formats, and the load average.
//!
//! `kernel/src/fs/procfs.rs` gathers the figures (from the process table,
//! the frame allocator, the clock) into the plain structures below; this
//! file turns them into the exact lines Linux writes, so that programs which
//! parse `/proc` (busybox's `ps`, `top`, `free`; procps; a C library's
//! `get_nprocs`) read them unchanged. Each format names the Linux function
//! that writes it (in `fs/proc/`), where a reader can compare.
//!
//! Times are in clock ticks (`AT_CLKTCK`, which here is the tick rate), as
//! Linux's are in `USER_HZ`; memory sizes in KiB or pages as Linux says.

use abi::ipc::{MsqidDs, SemidDs, ShmidDs};
use abi::types::{PROT_EXEC, PROT_READ, PROT_WRITE};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::vma::{Kind, Range};

/// What `/proc/PID/stat` and `/proc/PID/status` report about a process.
#[derive(Clone, Debug, Default)]
pub struct ProcessInfo {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: u32,
    /// Its session (the pid of the session's leader).
    pub sid: u32,
    /// The name exec gave it (Linux's `comm`, at most 15 bytes shown).
    pub comm: String,
    /// `R`, `S`, `T` or `Z`.
    pub state: char,
    pub threads: u32,
    /// The nice of its first thread (setpriority(2)).
    pub nice: i32,
    pub user_ticks: u64,
    pub system_ticks: u64,
    pub children_user_ticks: u64,
    pub children_system_ticks: u64,
    /// Ticks since boot when the process was made.
    pub start_tick: u64,
    /// Bytes of address space in areas (VmSize), and frames present (RSS).
    pub vsize: u64,
    pub rss_pages: u64,
    /// Frames of its page tables (VmPTE).
    pub table_pages: u64,
    /// The controlling terminal's device number (`st_rdev`), 0 for none.
    pub tty: u64,
    /// The terminal's foreground process group, 0 for none.
    pub tty_pgrp: u32,
    pub umask: u32,
    pub sig_pending: u64,
    pub sig_blocked: u64,
    pub sig_ignored: u64,
    pub sig_caught: u64,
    pub exit_signal: u32,
    /// The CPU its leader thread runs on, or last ran on (field 39).
    pub processor: u32,
    /// Real, effective, saved and file-system user ids; the same for the
    /// group; the supplementary groups.
    pub uids: [u32; 4],
    pub gids: [u32; 4],
    pub groups: Vec<u32>,
}

/// Linux's name for a state letter (`task_state_array`).
pub fn state_name(state: char) -> &'static str {
    match state {
        'R' => "running",
        'S' => "sleeping",
        'T' => "stopped",
        'Z' => "zombie",
        'X' => "dead",
        _ => "unknown",
    }
}

/// `comm` as Linux keeps it: at most 15 bytes.
fn comm(p: &ProcessInfo) -> &str {
    let mut end = p.comm.len().min(15);
    while !p.comm.is_char_boundary(end) {
        end -= 1;
    }
    &p.comm[..end]
}

/// `/proc/PID/stat`: one line of 52 fields (`do_task_stat`). Fields this
/// kernel has no figure for (page-fault counts, code and stack addresses,
/// scheduling policy) are 0, as Linux shows them to other users.
pub fn stat(p: &ProcessInfo) -> String {
    let mut s = format!(
        "{} ({}) {} {} {} {} {} {} 0 0 0 0 0 {} {} {} {} {} {} {} 0 {} {} {} 18446744073709551615",
        p.pid,
        comm(p),
        p.state,
        p.ppid,
        p.pgid,
        p.sid,
        p.tty,
        if p.tty_pgrp == 0 {
            -1
        } else {
            i64::from(p.tty_pgrp)
        },
        p.user_ticks,
        p.system_ticks,
        p.children_user_ticks,
        p.children_system_ticks,
        // priority (20 + nice for a normal thread), nice
        20 + p.nice,
        p.nice,
        p.threads,
        p.start_tick,
        p.vsize,
        p.rss_pages,
    );
    // startcode endcode startstack kstkesp kstkeip (0: not shown)
    s.push_str(" 0 0 0 0 0");
    // signal blocked sigignore sigcatch: Linux prints these four as decimals.
    let _ = write!(
        s,
        " {} {} {} {}",
        p.sig_pending, p.sig_blocked, p.sig_ignored, p.sig_caught
    );
    // wchan nswap cnswap exit_signal processor rt_priority policy
    // delayacct_blkio_ticks guest_time cguest_time start_data end_data
    // start_brk arg_start arg_end env_start env_end exit_code
    let _ = writeln!(
        s,
        " 0 0 0 {} {} 0 0 0 0 0 0 0 0 0 0 0 0 0",
        p.exit_signal, p.processor
    );
    s
}

/// `/proc/PID/status` (`proc_pid_status`): the lines programs read most,
/// in Linux's order.
pub fn status(p: &ProcessInfo) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Name:\t{}", comm(p));
    let _ = writeln!(s, "Umask:\t{:04o}", p.umask);
    let _ = writeln!(s, "State:\t{} ({})", p.state, state_name(p.state));
    let _ = writeln!(s, "Tgid:\t{}", p.pid);
    let _ = writeln!(s, "Ngid:\t0");
    let _ = writeln!(s, "Pid:\t{}", p.pid);
    let _ = writeln!(s, "PPid:\t{}", p.ppid);
    let _ = writeln!(s, "TracerPid:\t0");
    let [r, e, saved, fs] = p.uids;
    let _ = writeln!(s, "Uid:\t{r}\t{e}\t{saved}\t{fs}");
    let [r, e, saved, fs] = p.gids;
    let _ = writeln!(s, "Gid:\t{r}\t{e}\t{saved}\t{fs}");
    // Linux ends each group with a space.
    let groups: String = p.groups.iter().map(|g| format!("{g} ")).collect();
    let _ = writeln!(s, "Groups:\t{groups}");
    if p.state != 'Z' {
        let _ = writeln!(s, "VmSize:\t{:8} kB", p.vsize / 1024);
        let _ = writeln!(s, "VmRSS:\t{:8} kB", p.rss_pages * 4);
        let _ = writeln!(s, "VmPTE:\t{:8} kB", p.table_pages * 4);
    }
    let _ = writeln!(s, "Threads:\t{}", p.threads);
    let _ = writeln!(s, "SigPnd:\t{:016x}", 0);
    let _ = writeln!(s, "ShdPnd:\t{:016x}", p.sig_pending);
    let _ = writeln!(s, "SigBlk:\t{:016x}", p.sig_blocked);
    let _ = writeln!(s, "SigIgn:\t{:016x}", p.sig_ignored);
    let _ = writeln!(s, "SigCgt:\t{:016x}", p.sig_caught);
    s
}

/// What `/proc/PID/maps` shows of a mapped file: its inode and its name
/// (Linux's path, with " (deleted)" once unlinked).
pub struct MappedName {
    pub ino: u64,
    pub name: String,
}

/// One line of `/proc/PID/maps` (`show_map_vma`): range, rights, shared or
/// private, offset, device, inode, and after padding to column 73 the name,
/// if any. A mapped file, the program's segments among them, shows all
/// four (`describe` names it).
pub fn maps_line<F>(range: &Range<F>, describe: impl Fn(&F) -> MappedName) -> String {
    let prot = range.area.prot;
    let (shared, offset, device, ino, name) = match &range.area.kind {
        Kind::Heap => (false, 0, "00:00", 0, String::from("[heap]")),
        Kind::Stack => (false, 0, "00:00", 0, String::from("[stack]")),
        Kind::Anonymous | Kind::GrowsDown { .. } => (false, 0, "00:00", 0, String::new()),
        Kind::File(map) => {
            let MappedName { ino, name } = describe(&map.file);
            // Inode 0: the kernel's own pages ([vdso], [vvar]), which
            // belong to no file system: device 00:00, as Linux shows them.
            let device = if ino == 0 { "00:00" } else { "00:01" };
            (map.shared, map.offset_of(range.start), device, ino, name)
        }
    };
    let mut line = format!(
        "{:08x}-{:08x} {}{}{}{} {:08x} {} {}",
        range.start,
        range.end,
        if prot & PROT_READ != 0 { 'r' } else { '-' },
        if prot & PROT_WRITE != 0 { 'w' } else { '-' },
        if prot & PROT_EXEC != 0 { 'x' } else { '-' },
        if shared { 's' } else { 'p' },
        offset,
        device,
        ino,
    );
    if !name.is_empty() {
        while line.len() < 72 {
            line.push(' ');
        }
        line.push(' ');
        line.push_str(&name);
    }
    line.push('\n');
    line
}

/// Memory figures for `/proc/meminfo`, in KiB.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemInfo {
    pub total: u64,
    pub free: u64,
    /// The kernel's heap (Linux's Slab).
    pub kernel_heap: u64,
    pub page_tables: u64,
}

/// `/proc/meminfo` (`meminfo_proc_show`): label padded to 16, value to 8.
/// No swap, no page cache apart from the ramfs (whose pages are counted as
/// used), so available is free.
pub fn meminfo(m: &MemInfo) -> String {
    let rows = [
        ("MemTotal:", m.total),
        ("MemFree:", m.free),
        ("MemAvailable:", m.free),
        ("Buffers:", 0),
        ("Cached:", 0),
        ("SwapCached:", 0),
        ("SwapTotal:", 0),
        ("SwapFree:", 0),
        ("Shmem:", 0),
        ("Slab:", m.kernel_heap),
        ("SReclaimable:", 0),
        ("SUnreclaim:", m.kernel_heap),
        ("PageTables:", m.page_tables),
    ];
    let mut s = String::new();
    for (label, kib) in rows {
        let _ = writeln!(s, "{label:<16}{kib:>8} kB");
    }
    s
}

/// Ticks as Linux's `seconds.hundredths`.
fn seconds(ticks: u64, hz: u64) -> String {
    let hundredths = ticks * 100 / hz.max(1);
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

/// `/proc/uptime`: seconds since boot and seconds the CPUs were idle.
pub fn uptime(up_ticks: u64, idle_ticks: u64, hz: u64) -> String {
    format!("{} {}\n", seconds(up_ticks, hz), seconds(idle_ticks, hz))
}

/// Time one CPU spent, in its own ticks (`/proc/stat`'s cpu lines).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuTicks {
    pub user: u64,
    pub system: u64,
    pub idle: u64,
}

impl CpuTicks {
    pub const ZERO: CpuTicks = CpuTicks {
        user: 0,
        system: 0,
        idle: 0,
    };

    /// The ticks of several CPUs added up.
    pub fn sum(cpus: &[CpuTicks]) -> CpuTicks {
        cpus.iter().fold(CpuTicks::ZERO, |all, c| CpuTicks {
            user: all.user + c.user,
            system: all.system + c.system,
            idle: all.idle + c.idle,
        })
    }
}

/// `/proc/stat` (`show_stat`): the line of all CPUs summed and one per
/// CPU (`cpus`, the running ones), boot time, processes made since boot,
/// threads running or runnable now.
pub fn stat_file(cpus: &[CpuTicks], boot_time: u64, forks: u64, running: u32) -> String {
    let line = |name: &str, cpu: &CpuTicks| {
        format!(
            "{name} {} 0 {} {} 0 0 0 0 0 0\n",
            cpu.user, cpu.system, cpu.idle
        )
    };
    let mut s = line("cpu ", &CpuTicks::sum(cpus));
    for (i, cpu) in cpus.iter().enumerate() {
        s.push_str(&line(&format!("cpu{i}"), cpu));
    }
    let _ = writeln!(s, "btime {boot_time}");
    let _ = writeln!(s, "processes {forks}");
    let _ = writeln!(s, "procs_running {running}");
    let _ = writeln!(s, "procs_blocked 0");
    s
}

/// Linux's load average: exponentially damped means of the number of
/// runnable threads over 1, 5 and 15 minutes, in fixed point with 11
/// fraction bits, sampled every 5 seconds (`kernel/sched/loadavg.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadAvg {
    pub avg: [u64; 3],
}

/// Fixed-point one.
pub const FIXED_1: u64 = 1 << 11;
/// `1 / exp(5 s / 1 min)`, `/ 5 min`, `/ 15 min` in fixed point.
const EXP: [u64; 3] = [1884, 2014, 2037];
/// Seconds between samples.
pub const LOAD_INTERVAL_SECS: u64 = 5;

impl LoadAvg {
    /// Folds in one sample: `active` threads running or runnable now.
    pub fn sample(&mut self, active: u64) {
        let active = active * FIXED_1;
        for (avg, exp) in self.avg.iter_mut().zip(EXP) {
            let mut next = *avg * exp + active * (FIXED_1 - exp);
            if active >= *avg {
                next += FIXED_1 - 1; // round up while rising, as Linux does
            }
            *avg = next / FIXED_1;
        }
    }

    /// The three averages as `sysinfo(2)` reports them (16 fraction bits).
    pub fn for_sysinfo(&self) -> [u64; 3] {
        self.avg.map(|a| a << (16 - 11))
    }
}

/// `/proc/loadavg` (`loadavg_proc_show`): the three averages with two
/// decimals, running/total threads, the last pid handed out.
pub fn loadavg(load: &LoadAvg, running: u32, threads: u32, last_pid: u32) -> String {
    let mut s = String::new();
    for a in load.avg {
        // Linux's LOAD_INT / LOAD_FRAC, with its rounding.
        let a = a + FIXED_1 / 200;
        let _ = write!(s, "{}.{:02} ", a >> 11, ((a & (FIXED_1 - 1)) * 100) >> 11);
    }
    let _ = writeln!(s, "{running}/{threads} {last_pid}");
    s
}

/// `/proc/sysvipc/shm` (`sysvipc_shm_proc_show`): a header, then one line
/// per segment: its record as shmctl(IPC_STAT) gives it, its id, and the
/// bytes of it in memory (`rss`; nothing is ever swapped here).
pub fn sysvipc_shm(segments: &[(i32, ShmidDs, u64)]) -> String {
    let mut s = String::from(
        "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  \
         cuid  cgid      atime      dtime      ctime                   rss                  swap\n",
    );
    for (id, d, rss) in segments {
        let p = &d.shm_perm;
        let _ = writeln!(
            s,
            "{:10} {:10}  {:4o} {:21} {:5} {:5}  {:5} {:5} {:5} {:5} {:5} {:10} {:10} {:10} {:21} {:21}",
            p.key,
            id,
            p.mode,
            d.shm_segsz,
            d.shm_cpid,
            d.shm_lpid,
            d.shm_nattch,
            p.uid,
            p.gid,
            p.cuid,
            p.cgid,
            d.shm_atime,
            d.shm_dtime,
            d.shm_ctime,
            rss,
            0
        );
    }
    s
}

/// `/proc/sysvipc/msg` (`sysvipc_msg_proc_show`): one line per queue.
pub fn sysvipc_msg(queues: &[(i32, MsqidDs)]) -> String {
    let mut s = String::from(
        "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  \
         cuid  cgid      stime      rtime      ctime\n",
    );
    for (id, d) in queues {
        let p = &d.msg_perm;
        let _ = writeln!(
            s,
            "{:10} {:10}  {:4o}  {:10} {:10} {:5} {:5} {:5} {:5} {:5} {:5} {:10} {:10} {:10}",
            p.key,
            id,
            p.mode,
            d.msg_cbytes,
            d.msg_qnum,
            d.msg_lspid,
            d.msg_lrpid,
            p.uid,
            p.gid,
            p.cuid,
            p.cgid,
            d.msg_stime,
            d.msg_rtime,
            d.msg_ctime
        );
    }
    s
}

/// `/proc/sysvipc/sem` (`sysvipc_sem_proc_show`): one line per set.
pub fn sysvipc_sem(sets: &[(i32, SemidDs)]) -> String {
    let mut s = String::from(
        "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n",
    );
    for (id, d) in sets {
        let p = &d.sem_perm;
        let _ = writeln!(
            s,
            "{:10} {:10}  {:4o} {:10} {:5} {:5} {:5} {:5} {:10} {:10}",
            p.key, id, p.mode, d.sem_nsems, p.uid, p.gid, p.cuid, p.cgid, d.sem_otime, d.sem_ctime
        );
    }
    s
}

/// What one disk has done since boot, as `/proc/diskstats` shows it.
/// Times are in nanoseconds here and milliseconds in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    pub reads: u64,
    pub sectors_read: u64,
    pub read_ns: u64,
    pub writes: u64,
    pub sectors_written: u64,
    pub write_ns: u64,
    pub flushes: u64,
    pub flush_ns: u64,
    /// Requests the device has now.
    pub in_flight: u32,
    /// Time the disk had at least one request (Linux's io_ticks).
    pub busy_ns: u64,
}

/// One request a disk finished: what it was and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskRequest {
    Read { sectors: u64 },
    Write { sectors: u64 },
    Flush,
}

impl DiskStats {
    /// Counts `request`, which took `ns`.
    pub fn record(&mut self, request: DiskRequest, ns: u64) {
        match request {
            DiskRequest::Read { sectors } => {
                self.reads += 1;
                self.sectors_read += sectors;
                self.read_ns += ns;
            }
            DiskRequest::Write { sectors } => {
                self.writes += 1;
                self.sectors_written += sectors;
                self.write_ns += ns;
            }
            DiskRequest::Flush => {
                self.flushes += 1;
                self.flush_ns += ns;
            }
        }
    }
}

/// One line of `/proc/diskstats` (Linux's `diskstats_show`, block/genhd.c,
/// 20 fields since 5.5): the numbers and name; reads completed, merged,
/// sectors, ms; the same for writes; requests in flight, ms busy, ms
/// weighted by requests (here the sum of the requests' times); discards
/// completed, merged, sectors, ms (none here); flushes completed, ms. This
/// driver merges nothing, so both merge counts are 0.
pub fn diskstats_line(major: u32, minor: u32, name: &str, d: &DiskStats) -> String {
    let ms = |ns: u64| ns / 1_000_000;
    format!(
        "{major:4} {minor:7} {name} {} 0 {} {} {} 0 {} {} {} {} {} 0 0 0 0 {} {}\n",
        d.reads,
        d.sectors_read,
        ms(d.read_ns),
        d.writes,
        d.sectors_written,
        ms(d.write_ns),
        d.in_flight,
        ms(d.busy_ns),
        ms(d.read_ns + d.write_ns + d.flush_ns),
        d.flushes,
        ms(d.flush_ns),
    )
}

/// The number a write to a /proc/sys setting gives, as Linux's
/// `proc_dointvec` reads it: optional spaces, a decimal integer with an
/// optional sign, optional spaces and newlines; None for anything else.
pub fn parse_setting(written: &[u8]) -> Option<i64> {
    let text = core::str::from_utf8(written).ok()?;
    let number = text.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\n');
    if number.is_empty() || number.contains(char::is_whitespace) {
        return None;
    }
    number.parse().ok()
}

#[cfg(test)]
mod tests {
    /// 1 MiB written in 4 KiB requests after one read, then a flush: each
    /// figure in the place Linux 6.1's `diskstats_show` prints it.
    #[test]
    fn a_diskstats_line_has_linuxs_twenty_figures() {
        use super::{DiskRequest, DiskStats, diskstats_line};
        let mut d = DiskStats::default();
        d.record(DiskRequest::Read { sectors: 8 }, 2_500_000);
        for _ in 0..256 {
            d.record(DiskRequest::Write { sectors: 8 }, 1_000_000);
        }
        d.record(DiskRequest::Flush, 3_000_000);
        d.busy_ns = 200_000_000;
        let line = diskstats_line(254, 16, "vdb", &d);
        assert_eq!(
            line,
            " 254      16 vdb 1 0 8 2 256 0 2048 256 0 200 261 0 0 0 0 1 3\n"
        );
        let fields: alloc::vec::Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 3 + 17, "major, minor, name and 17 figures");
    }

    /// The lines Linux 6.18 wrote for one segment, queue and set (made
    /// by a C program on the host, 2026-11-26).
    #[test]
    fn sysvipc_lines_are_linuxs() {
        use abi::ipc::IpcPerm;
        let perm = |key, mode| IpcPerm {
            key,
            mode,
            ..IpcPerm::default()
        };
        let shm = ShmidDs {
            shm_perm: perm(4660, 0o640),
            shm_segsz: 10000,
            shm_atime: 1795678725,
            shm_ctime: 1795678725,
            shm_cpid: 26996,
            shm_lpid: 26996,
            shm_nattch: 1,
            ..ShmidDs::default()
        };
        assert_eq!(
            sysvipc_shm(&[(32776, shm, 8192)]).lines().nth(1).unwrap(),
            "      4660      32776   640                 10000 26996 26996      1     0     0     \
             0     0 1795678725          0 1795678725                  8192                     0"
        );
        let msg = MsqidDs {
            msg_perm: perm(0, 0o600),
            msg_cbytes: 7,
            msg_qnum: 1,
            msg_lspid: 26996,
            msg_stime: 1795678725,
            msg_ctime: 1795678725,
            ..MsqidDs::default()
        };
        assert_eq!(
            sysvipc_msg(&[(98364, msg)]),
            "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  \
             cgid      stime      rtime      ctime\n         0      98364   600           7          \
             1 26996     0     0     0     0     0 1795678725          0 1795678725\n"
        );
        let sem = SemidDs {
            sem_perm: perm(0, 0o666),
            sem_nsems: 3,
            sem_ctime: 1795678725,
            ..SemidDs::default()
        };
        assert_eq!(
            sysvipc_sem(&[(32776, sem)]).lines().nth(1).unwrap(),
            "         0      32776   666          3     0     0     0     0          0 1795678725"
        );
    }

    use super::*;
    use crate::vma::Area;

    #[test]
    fn a_setting_is_one_decimal_number() {
        assert_eq!(parse_setting(b"2\n"), Some(2));
        assert_eq!(parse_setting(b" 0 "), Some(0));
        assert_eq!(parse_setting(b"-1"), Some(-1));
        for bad in [&b""[..], b"\n", b"two", b"1 2", b"0x1", b"\xff"] {
            assert_eq!(parse_setting(bad), None, "{bad:?}");
        }
    }

    fn sample() -> ProcessInfo {
        ProcessInfo {
            pid: 42,
            ppid: 1,
            pgid: 42,
            sid: 42,
            comm: "a name (odd) and long".into(),
            state: 'S',
            nice: 0,
            threads: 3,
            user_ticks: 7,
            system_ticks: 2,
            start_tick: 1234,
            vsize: 8 << 20,
            rss_pages: 100,
            table_pages: 3,
            tty: (5 << 8) | 1,
            tty_pgrp: 42,
            umask: 0o22,
            processor: 3,
            ..Default::default()
        }
    }

    #[test]
    fn stat_has_linux_52_fields_in_order() {
        let line = stat(&sample());
        assert!(line.ends_with('\n'));
        // The name may hold spaces and parentheses: readers split after the
        // last ')', as procps does.
        let (head, rest) = line.rsplit_once(')').unwrap();
        assert_eq!(head, "42 (a name (odd) an");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        assert_eq!(fields.len() + 2, 52);
        let field = |n: usize| fields[n - 3];
        assert_eq!(field(3), "S");
        assert_eq!(field(4), "1");
        assert_eq!((field(5), field(6)), ("42", "42"));
        assert_eq!(field(7), "1281");
        assert_eq!(field(8), "42");
        assert_eq!((field(14), field(15)), ("7", "2"));
        assert_eq!(field(20), "3");
        assert_eq!(field(22), "1234");
        assert_eq!(field(23), (8u64 << 20).to_string());
        assert_eq!(field(24), "100");
        assert_eq!(field(38), "0");
        assert_eq!(field(39), "3", "processor");
    }

    #[test]
    fn status_names_state_and_threads() {
        let text = status(&sample());
        assert!(text.starts_with("Name:\ta name (odd) an\nUmask:\t0022\nState:\tS (sleeping)\n"));
        assert!(text.contains("\nPid:\t42\nPPid:\t1\n"));
        assert!(text.contains("\nVmSize:\t    8192 kB\n"));
        assert!(text.contains("\nVmRSS:\t     400 kB\nVmPTE:\t      12 kB\n"));
        assert!(text.contains("\nThreads:\t3\n"));
    }

    #[test]
    fn maps_lines_pad_names_to_column_73() {
        let named = |_: &u32| MappedName {
            ino: 12,
            name: String::from("/tmp/f"),
        };
        let range = |start, end, prot, kind| Range::<u32> {
            start,
            end,
            area: Area::new(prot, kind),
        };
        let stack = maps_line(
            &range(
                0x7ffffffde000,
                0x7ffffffff000,
                PROT_READ | PROT_WRITE,
                Kind::Stack,
            ),
            named,
        );
        assert_eq!(
            stack,
            "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n"
        );
        assert_eq!(stack.find('['), Some(73));
        let program = Kind::File(crate::vma::FileMap::new(0, 0x400000, 0, false));
        let text = maps_line(
            &range(0x400000, 0x401000, PROT_READ | PROT_EXEC, program),
            named,
        );
        assert!(
            text.starts_with("00400000-00401000 r-xp 00000000 00:01 12"),
            "{text}"
        );
        assert!(text.ends_with(" /tmp/f\n"));
        let anon = maps_line(&range(0x10000, 0x20000, 0, Kind::Anonymous), named);
        assert_eq!(anon, "00010000-00020000 ---p 00000000 00:00 0\n");
        let shared = Kind::File(crate::vma::FileMap::new(0, 0x7f00_0000_0000, 0x3000, true));
        let file = maps_line(
            &range(0x7f00_0000_0000, 0x7f00_0000_2000, PROT_READ, shared),
            named,
        );
        assert_eq!(
            file,
            "7f0000000000-7f0000002000 r--s 00003000 00:01 12                         /tmp/f\n"
        );
    }

    #[test]
    fn meminfo_lines_are_aligned_as_linux() {
        let text = meminfo(&MemInfo {
            total: 16333736,
            free: 1234,
            ..Default::default()
        });
        assert!(text.starts_with("MemTotal:       16333736 kB\nMemFree:            1234 kB\n"));
        assert!(text.contains("\nMemAvailable:       1234 kB\n"));
    }

    #[test]
    fn uptime_and_stat_in_linux_units() {
        assert_eq!(uptime(123456, 100050, 1000), "123.45 100.05\n");
        let s = stat_file(
            &[CpuTicks {
                user: 5,
                system: 6,
                idle: 7,
            }],
            1700000000,
            9,
            1,
        );
        assert!(
            s.starts_with("cpu  5 0 6 7 0 0 0 0 0 0\ncpu0 5 0 6 7 0 0 0 0 0 0\nbtime"),
            "{s}"
        );
        assert!(s.contains("btime 1700000000\nprocesses 9\nprocs_running 1\n"));
    }

    #[test]
    fn stat_sums_the_cpus_and_lists_each() {
        let cpu = |user, system, idle| CpuTicks { user, system, idle };
        let s = stat_file(&[cpu(1, 2, 3), cpu(10, 20, 30)], 0, 0, 0);
        assert!(
            s.starts_with(
                "cpu  11 0 22 33 0 0 0 0 0 0\n\
                 cpu0 1 0 2 3 0 0 0 0 0 0\n\
                 cpu1 10 0 20 30 0 0 0 0 0 0\nbtime"
            ),
            "{s}"
        );
    }

    #[test]
    fn load_average_follows_linux() {
        let mut load = LoadAvg::default();
        assert_eq!(loadavg(&load, 1, 5, 77), "0.00 0.00 0.00 1/5 77\n");
        // One thread always runnable: after a minute (12 samples) the
        // one-minute mean is 1 - 1/e = 0.63, the others lower.
        for _ in 0..12 {
            load.sample(1);
        }
        let text = loadavg(&load, 1, 5, 77);
        assert!(text.starts_with("0.63 0.1"), "{text}");
        // Long enough, all three reach 1.00.
        for _ in 0..2000 {
            load.sample(1);
        }
        assert!(loadavg(&load, 1, 5, 77).starts_with("1.00 1.00 1.00 "));
        assert_eq!(load.for_sysinfo()[0] >> 16, 1);
        for _ in 0..2000 {
            load.sample(0);
        }
        assert!(loadavg(&load, 1, 5, 77).starts_with("0.00 0.00 0.00 "));
    }
}
