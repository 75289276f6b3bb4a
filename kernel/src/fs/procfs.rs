//! `/proc`: files made from the kernel's state at the moment they are
//! looked up, in Linux's formats (`kcore::procfs` writes the text).
//!
//! Nothing under `/proc` is stored. `/proc` itself is a ramfs node whose
//! content is `Content::ProcDir(Dir::Root)`; when a path walk reaches it,
//! `ramfs` asks [`lookup`] for the next name, and `getdents` asks [`list`].
//! A file's node is made on lookup with its whole text in it
//! (`Content::ProcFile`), so one `open` reads one consistent snapshot, as
//! Linux's `seq_file` gives one per read from offset 0. Files are read-only
//! (`open` for writing is EACCES) and report size 0, as on Linux; the
//! settings of /proc/sys that root may change (`Setting`) are read and
//! written where they live.
//!
//! | path | what |
//! |---|---|
//! | `/proc/self` | a symbolic link to the caller's `/proc/PID` |
//! | `/proc/PID/stat`, `status` | the process as `ps` and `top` read it |
//! | `/proc/PID/cmdline`, `comm` | its argv (NUL-separated), its name |
//! | `/proc/PID/maps` | its areas (`kcore::vma`), one line each |
//! | `/proc/PID/pagemap` | eight bytes per page of its address space: present, shared, mapped once, the frame (`pagemap_read`) |
//! | `/proc/PID/exe` | a symbolic link to the program's path |
//! | `/proc/PID/limits` | its resource limits (getrlimit(2)) |
//! | `/proc/PID/profil` | its profil(2) state: regions, scale, ticks counted and dropped (not in Linux) |
//! | `/proc/PID/fd/N` | a symbolic link per open descriptor: the path it was opened by, or `pipe:[N]`, `socket:[N]`, `anon_inode:[eventpoll]` |
//! | `/proc/PID/task/TID` | a directory per thread, with its `comm`, `stat` and `status` |
//! | `/proc/meminfo`, `uptime`, `loadavg`, `stat` | memory, time since boot and idle, load, CPU time |
//! | `/proc/cpuinfo`, `mounts`, `version` | the CPU (from CPUID), what is mounted, the kernel |
//! | `/proc/sys/fs/file-nr` | open file descriptions in the system (`fs::file::open_count`), 0 free, no maximum |
//! | `/proc/sys/fs/file-max`, `nr_open`, `pipe-max-size` | the limits on open files, descriptors and a pipe's size |
//! | `/proc/sys/fs/lease-break-time` | the seconds a lease's holder has to give it up (fs/lease.rs) |
//! | `/proc/sys/kernel/pid_max`, `threads-max` | the limits on ids and threads |
//! | `/proc/sys/kernel/ostype`, `osrelease` | uname's system name and release |
//! | `/proc/sys/kernel/hostname`, `domainname` | uname's node and domain names (sethostname(2), setdomainname(2)) |
//! | `/proc/sys/kernel/printk`, `dmesg_restrict` | the console's log level, who may read the log |
//! | `/proc/sys/kernel/tainted`, `core_pattern` | 0 (nothing taints this kernel), where a core dump goes |
//! | `/proc/sys/kernel/randomize_va_space` | how much exec randomises an address space, 0 to 2 (`kcore::aslr`): the one file root may write (`Setting`) |
//! | `/proc/sysvipc/shm`, `msg`, `sem` | the System V IPC objects (`ipc/`), a line each, as ipcs(1) reads them |
//! | `/proc/diskstats` | each disk's requests, sectors and times since boot, in Linux's 20 fields (`virtio_blk.rs`) |
//! | `/proc/bus/pci/devices` | the PCI functions found at boot (`pci.rs`): address, ids, IRQ, BARs and their sizes, driver |
//!
//! Inode numbers are made from the pid and the file, so they stay the same
//! from one lookup to the next.

use abi::Errno;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;
use kcore::procfs::{self as text, MemInfo, ProcessInfo};

use super::ramfs::{Content, DirEntry, Node, NodeRef};
use crate::proc::{Pid, Process, TABLE, Table, Tid};
use crate::sync::{IrqLock, Rank};
use crate::{clock, mm};

/// A directory of `/proc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Root,
    Process(Pid),
    /// `/proc/PID/fd`: one link per open descriptor.
    Fds(Pid),
    /// `/proc/PID/task`: one directory per thread, ...
    Tasks(Pid),
    /// ... `/proc/PID/task/TID`, with the thread's own files.
    Task(Pid, Tid),
    /// `/proc/sys`, holding `fs` and `kernel` (`SYS_DIRS`).
    Sys,
    SysFs,
    SysKernel,
    /// `/proc/sysvipc`: the System V IPC objects, one table per kind.
    SysVipc,
    /// `/proc/bus`, holding `pci`, which holds `devices`.
    Bus,
    BusPci,
}

/// The directories of `/proc/sys`, and the files of each: read-only here
/// (Linux lets root write most; these show the kernel's fixed values),
/// but for the `Setting`s.
const SYS_DIRS: &[(&str, Dir)] = &[("fs", Dir::SysFs), ("kernel", Dir::SysKernel)];
const SYS_FS_FILES: &[&str] = &[
    "file-max",
    "file-nr",
    "lease-break-time",
    "nr_open",
    "pipe-max-size",
];
const SYSVIPC_FILES: &[&str] = &["msg", "sem", "shm"];
const SYS_KERNEL_FILES: &[&str] = &[
    "core_pattern",
    "dmesg_restrict",
    "domainname",
    "hostname",
    "osrelease",
    "ostype",
    "pid_max",
    "printk",
    "randomize_va_space",
    "tainted",
    "threads-max",
];

/// The /proc/sys files root may write, each a kernel setting: read where
/// it lives at every read, set by a write of its new value (as Linux's
/// sysctls: one decimal number, EINVAL for anything else or out of range).
/// Mode 0644, so no one else may open one for writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `/proc/sys/kernel/randomize_va_space`: how much exec randomises a
    /// new address space (proc/exec.rs, `kcore::aslr`).
    RandomizeVaSpace,
}

impl Setting {
    fn of(name: &str) -> Option<Setting> {
        match name {
            "randomize_va_space" => Some(Setting::RandomizeVaSpace),
            _ => None,
        }
    }

    /// The file's text: the value now.
    pub fn text(self) -> String {
        match self {
            Setting::RandomizeVaSpace => format!("{}\n", crate::proc::exec::randomize_va_space()),
        }
    }

    /// A write of `written` (the caller may write files of mode 0644
    /// only as root: open checked).
    pub fn set(self, written: &[u8]) -> Result<(), Errno> {
        let value = kcore::procfs::parse_setting(written).ok_or(Errno::EINVAL)?;
        match self {
            Setting::RandomizeVaSpace => {
                let level = u32::try_from(value).map_err(|_| Errno::EINVAL)?;
                crate::proc::exec::set_randomize_va_space(level)
            }
        }
    }
}

/// The boot options on one line (`/proc/cmdline`), set once at boot.
static CMDLINE: spin::Once<String> = spin::Once::new();

/// Keeps the boot options for `/proc/cmdline`.
pub fn set_cmdline(text: String) {
    CMDLINE.call_once(|| text);
}

/// The files of `/proc` itself, and of each `/proc/PID`, in listing order.
const ROOT_FILES: &[&str] = &[
    "cmdline",
    "cpuinfo",
    "diskstats",
    "loadavg",
    "lock_stat",
    "meminfo",
    "mounts",
    "self",
    "stat",
    "sysstat",
    "uptime",
    "version",
];
const PROCESS_FILES: &[&str] = &[
    "cmdline", "comm", "exe", "limits", "maps", "pagemap", "profil", "stat", "status",
];
/// The directories of `/proc` that belong to no process, after its files.
const ROOT_DIRS: &[(&str, Dir)] = &[
    ("bus", Dir::Bus),
    ("sys", Dir::Sys),
    ("sysvipc", Dir::SysVipc),
];
/// `/proc/bus/pci`'s one file: the functions `pci::init` found.
const BUS_PCI_FILES: &[&str] = &["devices"];
/// The files of each `/proc/PID/task/TID`.
const TASK_FILES: &[&str] = &["comm", "stat", "status"];
/// The directories of each `/proc/PID`, after its files.
const PROCESS_DIRS: &[&str] = &[
    "fd",   // lab 7.4
    "task", // lab 11.1
];

/// The directory `name` of `/proc/PID`.
fn process_dir(pid: Pid, name: &str) -> Option<Dir> {
    match name {
        "fd" => Some(Dir::Fds(pid)),
        "task" => Some(Dir::Tasks(pid)),
        _ => None,
    }
}

/// Where /proc's inode numbers start, far above the ramfs's.
pub const INO_BASE: u64 = 1 << 40;

/// Each process has 32 numbers from `INO_BASE` (its directory, its files,
/// and its `fd` and `task` directories at the top of that room); a
/// descriptor's link takes one of 65536 per process above `FD_INO`, and a
/// thread's directory 32 per thread above `TASK_INO`. The directories that
/// belong to no process (`/proc/sys`, `/proc/sysvipc`, `/proc/bus` and below) have 64
/// numbers each above `FIXED_INO`: the directory, then its entries.
fn ino(dir: Dir, index: Option<usize>) -> u64 {
    const FIXED_INO: u64 = INO_BASE + (1 << 37);
    const FD_INO: u64 = INO_BASE + (1 << 38);
    const TASK_INO: u64 = INO_BASE + (1 << 39);
    let fixed = |room: u64| FIXED_INO + (room << 6) + index.map_or(0, |i| i as u64 + 1);
    let entry = index.map_or(0, |i| i as u64 + 1);
    match dir {
        Dir::Root => INO_BASE + entry,
        Dir::Process(pid) => INO_BASE + (u64::from(pid) << 5) + entry,
        Dir::Fds(pid) if index.is_none() => INO_BASE + (u64::from(pid) << 5) + 30,
        Dir::Fds(pid) => FD_INO + (u64::from(pid) << 16) + entry,
        Dir::Tasks(pid) => INO_BASE + (u64::from(pid) << 5) + 31,
        Dir::Task(_, tid) => TASK_INO + (u64::from(tid) << 5) + entry,
        Dir::Sys => fixed(0),
        Dir::SysFs => fixed(1),
        Dir::SysKernel => fixed(2),
        Dir::SysVipc => fixed(3),
        Dir::Bus => fixed(4),
        Dir::BusPci => fixed(5),
    }
}

fn node(ino: u64, perm: u32, content: Content) -> NodeRef {
    Arc::new(IrqLock::new(Rank::Node, Node::new(ino, perm, content)))
}

/// The `/proc` directory, for the ramfs's root.
pub fn root_node() -> NodeRef {
    node(ino(Dir::Root, None), 0o555, Content::ProcDir(Dir::Root))
}

/// The entry `name` of the directory `dir`.
pub fn lookup(dir: Dir, name: &str) -> Result<NodeRef, Errno> {
    match dir {
        Dir::Root => {
            if let Some(index) = ROOT_FILES.iter().position(|&f| f == name) {
                return root_file(index);
            }
            if let Some(&(_, sub)) = ROOT_DIRS.iter().find(|(n, _)| *n == name) {
                return Ok(dir_node(sub, 0o555));
            }
            let pid: Pid = name.parse().map_err(|_| Errno::ENOENT)?;
            if name != pid.to_string() || !TABLE.lock().procs.contains_key(&pid) {
                return Err(Errno::ENOENT);
            }
            Ok(node(
                ino(Dir::Process(pid), None),
                0o555,
                Content::ProcDir(Dir::Process(pid)),
            ))
        }
        Dir::Process(pid) => {
            // Linux makes /proc/PID/fd 0500, owned by the process's user;
            // /proc's nodes here are root's, so 0555 lets every process
            // list its own.
            if let Some(sub) = process_dir(pid, name) {
                return Ok(dir_node(sub, 0o555));
            }
            let index = PROCESS_FILES
                .iter()
                .position(|&f| f == name)
                .ok_or(Errno::ENOENT)?;
            process_file(pid, index)
        }
        Dir::Fds(pid) => {
            let fd: i32 = name.parse().map_err(|_| Errno::ENOENT)?;
            if name != fd.to_string() {
                return Err(Errno::ENOENT);
            }
            let (_, target, file) = descriptors(pid)?
                .into_iter()
                .find(|(n, ..)| *n == fd)
                .ok_or(Errno::ENOENT)?;
            let link = link(Dir::Fds(pid), fd as usize, target);
            link.lock().leads_to = file;
            Ok(link)
        }
        Dir::Tasks(pid) => {
            let tid: Tid = name.parse().map_err(|_| Errno::ENOENT)?;
            if name != tid.to_string() || !thread_ids(pid)?.contains(&tid) {
                return Err(Errno::ENOENT);
            }
            Ok(dir_node(Dir::Task(pid, tid), 0o555))
        }
        Dir::Task(pid, tid) => {
            let index = TASK_FILES
                .iter()
                .position(|&f| f == name)
                .ok_or(Errno::ENOENT)?;
            task_file(pid, tid, index)
        }
        Dir::Sys => SYS_DIRS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, sub)| dir_node(sub, 0o555))
            .ok_or(Errno::ENOENT),
        Dir::SysFs | Dir::SysKernel => {
            let names = if dir == Dir::SysFs {
                SYS_FS_FILES
            } else {
                SYS_KERNEL_FILES
            };
            let index = names.iter().position(|&f| f == name).ok_or(Errno::ENOENT)?;
            if let Some(setting) = Setting::of(name) {
                let ino = ino(dir, Some(index));
                return Ok(node(ino, 0o644, Content::ProcSetting(setting)));
            }
            Ok(file(dir, index, sys_file(name).into_bytes()))
        }
        Dir::SysVipc => {
            let index = SYSVIPC_FILES
                .iter()
                .position(|&f| f == name)
                .ok_or(Errno::ENOENT)?;
            let text = match name {
                "msg" => crate::ipc::msg::proc_text(),
                "sem" => crate::ipc::sem::proc_text(),
                _ => crate::ipc::shm::proc_text(),
            };
            Ok(file(dir, index, text.into_bytes()))
        }
        Dir::Bus => match name {
            "pci" => Ok(dir_node(Dir::BusPci, 0o555)),
            _ => Err(Errno::ENOENT),
        },
        Dir::BusPci => {
            let index = BUS_PCI_FILES
                .iter()
                .position(|&f| f == name)
                .ok_or(Errno::ENOENT)?;
            Ok(file(dir, index, crate::pci::proc_devices().into_bytes()))
        }
    }
}

/// The text of the /proc/sys file `name` (its directory's names are all
/// different).
fn sys_file(name: &str) -> String {
    match name {
        // Linux's three figures: allocated, free (always 0 since 2.6),
        // and fs.file-max, which is unlimited here.
        "file-nr" => format!("{}\t0\t{}\n", super::file::open_count(), i64::MAX),
        "file-max" => format!("{}\n", i64::MAX),
        "nr_open" => format!("{}\n", kcore::rlimit::NR_OPEN),
        "lease-break-time" => format!("{}\n", super::lease::BREAK_SECS),
        "pipe-max-size" => format!("{}\n", super::pipe::MAX_CAPACITY),
        "pid_max" => format!("{}\n", crate::proc::PID_MAX),
        "threads-max" => format!("{}\n", crate::proc::MAX_THREADS),
        "ostype" => format!("{}\n", crate::syscall::info::SYSNAME),
        "hostname" | "domainname" => {
            use crate::syscall::info::{UtsField, name_of};
            let which = if name == "hostname" {
                UtsField::Host
            } else {
                UtsField::Domain
            };
            let bytes = name_of(which);
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            format!("{}\n", String::from_utf8_lossy(&bytes[..end]))
        }
        "osrelease" => format!("{}\n", crate::syscall::info::RELEASE),
        // The console level, the default level of a message, the lowest
        // console level allowed, the default console level.
        "printk" => format!(
            "{}\t{}\t1\t{}\n",
            crate::log::console_level(),
            kcore::kmsg::LEVEL_WARNING,
            kcore::kmsg::DEFAULT_CONSOLE_LEVEL
        ),
        // syslog(2)'s READ_ALL is anyone's (syscall/info.rs).
        "dmesg_restrict" => String::from("0\n"),
        "tainted" => String::from("0\n"),
        // Linux's default, the one pattern there is: `core` in the dying
        // process's working directory (proc/coredump.rs).
        "core_pattern" => String::from("core\n"),
        other => unreachable!("no /proc/sys file {other}"),
    }
}

/// The entries of `dir`, in order: for the root, its files and then one
/// directory per process.
pub fn list(dir: Dir) -> Vec<DirEntry> {
    match dir {
        Dir::Root => {
            let mut entries = files(dir, ROOT_FILES);
            entries.extend(ROOT_DIRS.iter().map(|&(name, sub)| DirEntry {
                name: name.to_string(),
                ino: ino(sub, None),
                kind: abi::types::DT_DIR,
            }));
            let pids: Vec<Pid> = TABLE.lock().procs.keys().copied().collect();
            entries.extend(pids.into_iter().map(|pid| DirEntry {
                name: pid.to_string(),
                ino: ino(Dir::Process(pid), None),
                kind: abi::types::DT_DIR,
            }));
            entries
        }
        Dir::Process(pid) => {
            let mut entries = files(dir, PROCESS_FILES);
            entries.extend(PROCESS_DIRS.iter().filter_map(|&name| {
                Some(DirEntry {
                    name: name.to_string(),
                    ino: ino(process_dir(pid, name)?, None),
                    kind: abi::types::DT_DIR,
                })
            }));
            entries
        }
        // A process gone since its directory was opened lists nothing.
        Dir::Fds(pid) => descriptors(pid)
            .unwrap_or_default()
            .into_iter()
            .map(|(fd, ..)| DirEntry {
                name: fd.to_string(),
                ino: ino(dir, Some(fd as usize)),
                kind: abi::types::DT_LNK,
            })
            .collect(),
        Dir::Tasks(pid) => thread_ids(pid)
            .unwrap_or_default()
            .into_iter()
            .map(|tid| DirEntry {
                name: tid.to_string(),
                ino: ino(Dir::Task(pid, tid), None),
                kind: abi::types::DT_DIR,
            })
            .collect(),
        Dir::Task(..) => files(dir, TASK_FILES),
        Dir::Sys => SYS_DIRS
            .iter()
            .map(|&(name, sub)| DirEntry {
                name: name.to_string(),
                ino: ino(sub, None),
                kind: abi::types::DT_DIR,
            })
            .collect(),
        Dir::SysFs => files(dir, SYS_FS_FILES),
        Dir::SysKernel => files(dir, SYS_KERNEL_FILES),
        Dir::SysVipc => files(dir, SYSVIPC_FILES),
        Dir::Bus => alloc::vec![DirEntry {
            name: "pci".to_string(),
            ino: ino(Dir::BusPci, None),
            kind: abi::types::DT_DIR,
        }],
        Dir::BusPci => files(dir, BUS_PCI_FILES),
    }
}

/// The entries for the files `names` of `dir`.
fn files(dir: Dir, names: &[&str]) -> Vec<DirEntry> {
    use abi::types::{DT_LNK, DT_REG};
    names
        .iter()
        .enumerate()
        .map(|(i, &name)| DirEntry {
            name: name.to_string(),
            ino: ino(dir, Some(i)),
            kind: if matches!(name, "self" | "exe") {
                DT_LNK
            } else {
                DT_REG
            },
        })
        .collect()
}

fn dir_node(dir: Dir, perm: u32) -> NodeRef {
    node(ino(dir, None), perm, Content::ProcDir(dir))
}

/// Each open descriptor of `pid` with what its link names and the node
/// it is open on, if any (where following the link leads), in order.
/// The open files are taken under the table's lock and named after it is
/// let go (naming one may take its node's lock, which comes first).
fn descriptors(pid: Pid) -> Result<Vec<(i32, String, Option<NodeRef>)>, Errno> {
    use super::file::Kind;
    let open = {
        let table = TABLE.lock();
        let p = table.procs.get(&pid).ok_or(Errno::ENOENT)?;
        p.files.open()
    };
    Ok(open
        .into_iter()
        .map(|(fd, file)| {
            let target = match &file.kind {
                Kind::Node(_) => file.path.clone().unwrap_or_else(|| String::from("/")),
                Kind::PipeRead(pipe) | Kind::PipeWrite(pipe) => format!("pipe:[{}]", pipe.id),
                Kind::Socket(_) => format!("socket:[{}]", file.id),
                Kind::Epoll(_) => String::from("anon_inode:[eventpoll]"),
                Kind::EventFd(_) => String::from("anon_inode:[eventfd]"),
                Kind::PidFd(_) => String::from("anon_inode:[pidfd]"),
            };
            let node = match &file.kind {
                Kind::Node(node) => Some(node.clone()),
                _ => None,
            };
            (fd, target, node)
        })
        .collect())
}

/// The threads of `pid` that have not exited, by tid.
fn thread_ids(pid: Pid) -> Result<Vec<Tid>, Errno> {
    let table = TABLE.lock();
    if !table.procs.contains_key(&pid) {
        return Err(Errno::ENOENT);
    }
    Ok(table
        .threads
        .values()
        .filter(|t| t.pid == pid && t.state != crate::proc::State::Dead)
        .map(|t| t.tid)
        .collect())
}

/// `/proc/PID/task/TID/FILE`: the process's files as the thread sees
/// them, with its own tid where Linux puts it (stat's first field,
/// status's Pid line) and its own state (R, S or T: a program waits for
/// one of its threads to sleep by reading it).
fn task_file(pid: Pid, tid: Tid, index: usize) -> Result<NodeRef, Errno> {
    use crate::proc::State;
    let table = TABLE.lock();
    let p = table.procs.get(&pid).ok_or(Errno::ENOENT)?;
    let thread = table.threads.get(&tid).filter(|t| t.pid == pid);
    let state = thread.ok_or(Errno::ENOENT)?.state;
    let mut info = info(&table, p);
    info.pid = tid;
    info.state = match state {
        _ if p.stopped => 'T',
        State::Sleeping(_) => 'S',
        State::Stopped => 'T',
        State::Dead => 'X',
        State::New | State::Runnable | State::Running => 'R',
    };
    let text = match TASK_FILES[index] {
        "comm" => format!("{}\n", p.name),
        "stat" => text::stat(&info),
        "status" => text::status(&info),
        other => unreachable!("no /proc/PID/task/TID/{other}"),
    };
    Ok(file(Dir::Task(pid, tid), index, text.into_bytes()))
}

fn file(dir: Dir, index: usize, text: Vec<u8>) -> NodeRef {
    node(ino(dir, Some(index)), 0o444, Content::ProcFile(text))
}

fn link(dir: Dir, index: usize, target: String) -> NodeRef {
    node(ino(dir, Some(index)), 0o777, Content::Symlink(target))
}

fn root_file(index: usize) -> Result<NodeRef, Errno> {
    let hz = u64::from(clock::hz());
    let text = match ROOT_FILES[index] {
        "self" => {
            let pid = crate::proc::current(|p| p.pid);
            return Ok(link(Dir::Root, index, pid.to_string()));
        }
        "meminfo" => {
            let kib = |frames: u64| frames * (mm::PAGE_SIZE / 1024);
            let (_, heap_bytes) = mm::heap::usage();
            text::meminfo(&MemInfo {
                total: kib(mm::frames::total_count() as u64),
                free: kib(mm::frames::free_count() as u64),
                kernel_heap: heap_bytes as u64 / 1024,
                page_tables: kib(mm::paging::kernel_table_frames()),
            })
        }
        "lock_stat" => crate::sync::longest_holds_text(),
        "cmdline" => CMDLINE.get().cloned().unwrap_or_default(),
        "sysstat" => crate::syscall::counts_text(),
        "uptime" => {
            let idle = text::CpuTicks::sum(&TABLE.lock().cpu).idle;
            text::uptime(clock::ticks(), idle, hz)
        }
        "loadavg" => {
            let table = TABLE.lock();
            text::loadavg(
                &table.load,
                table.active_threads(),
                table.threads.len() as u32,
                table.last_pid,
            )
        }
        "stat" => {
            let table = TABLE.lock();
            let boot_time = crate::arch::rtc::unix_time() - clock::ticks() / hz;
            let cpus = &table.cpu[..crate::arch::percpu::online()];
            text::stat_file(cpus, boot_time, table.forks, table.active_threads())
        }
        "cpuinfo" => cpuinfo(),
        "diskstats" => crate::virtio_blk::stats_text(),
        "mounts" => super::mount::proc_mounts(),
        "version" => format!(
            "{} version {} {}\n",
            crate::syscall::info::SYSNAME,
            crate::syscall::info::RELEASE,
            crate::syscall::info::VERSION
        ),
        other => unreachable!("no /proc/{other}"),
    };
    Ok(file(Dir::Root, index, text.into_bytes()))
}

fn process_file(pid: Pid, index: usize) -> Result<NodeRef, Errno> {
    let dir = Dir::Process(pid);
    let table = TABLE.lock();
    let p = table.procs.get(&pid).ok_or(Errno::ENOENT)?;
    let text = match PROCESS_FILES[index] {
        "stat" => text::stat(&info(&table, p)).into_bytes(),
        "status" => text::status(&info(&table, p)).into_bytes(),
        "cmdline" if p.is_zombie() => Vec::new(),
        "cmdline" => p.cmdline.clone(),
        "comm" => format!("{}\n", p.name).into_bytes(),
        "limits" => p.limits.proc_text().into_bytes(),
        "maps" => maps(p).into_bytes(),
        "profil" => profil(p).into_bytes(),
        // Made read by read (`pagemap_read`), which asks who reads.
        "pagemap" => {
            return Ok(node(
                ino(dir, Some(index)),
                0o444,
                Content::ProcPagemap(pid),
            ));
        }
        // A zombie's program is gone: Linux's readlink says ENOENT.
        "exe" if p.is_zombie() || p.is_kernel() => return Err(Errno::ENOENT),
        "exe" => return Ok(link(dir, index, p.exe.clone())),
        other => unreachable!("no /proc/PID/{other}"),
    };
    Ok(file(dir, index, text))
}

/// What stat and status report. Caller holds the table.
fn info(table: &Table, p: &Process) -> ProcessInfo {
    use abi::types::{PROC_STOPPED, PROC_ZOMBIE};
    let state = match table.process_state(p) {
        PROC_ZOMBIE => 'Z',
        PROC_STOPPED => 'T',
        abi::types::PROC_SLEEPING => 'S',
        _ => 'R',
    };
    let (vsize, rss_pages) = p.mem.as_ref().map_or((0, 0), |mem| mem.sizes());
    let table_pages = p.mem.as_ref().map_or(0, |mem| mem.space.table_frames());
    let (sig_ignored, sig_caught) = p.sig.dispositions();
    // The leader's mask stands for the process's, as on Linux.
    let sig_blocked = table.threads.get(&p.pid).map_or(0, |t| t.sig.blocked);
    // Every process has the console as its terminal (no sessions yet),
    // but a kernel thread, which has none, as on Linux.
    let (tty, tty_pgrp) = if p.is_kernel() {
        (0, 0)
    } else {
        (
            super::dev::Device::Console.rdev(),
            super::console::foreground(),
        )
    };
    ProcessInfo {
        pid: p.pid,
        ppid: p.ppid,
        pgid: p.pgid,
        sid: p.sid,
        comm: p.name.clone(),
        state,
        threads: p.live_threads,
        nice: table.threads.get(&p.pid).map_or(0, |t| t.nice),
        user_ticks: p.user_ticks,
        system_ticks: p.system_ticks,
        children_user_ticks: p.children_ticks.0,
        children_system_ticks: p.children_ticks.1,
        start_tick: p.start_tick,
        vsize,
        rss_pages,
        table_pages,
        tty,
        tty_pgrp,
        umask: p.umask,
        sig_pending: p.sig.shared.pending,
        sig_blocked,
        sig_ignored,
        sig_caught,
        exit_signal: p.exit_signal,
        processor: table.process_cpu(p).unwrap_or(0),
        uids: [p.cred.ruid, p.cred.euid, p.cred.suid, p.cred.fsuid],
        gids: [p.cred.rgid, p.cred.egid, p.cred.sgid, p.cred.fsgid],
        groups: p.cred.groups.clone(),
    }
}

fn maps(p: &Process) -> String {
    let Some(mem) = &p.mem else {
        return String::new();
    };
    mem.ranges()
        .iter()
        .map(|r| {
            text::maps_line(r, |file| text::MappedName {
                ino: file.ino,
                name: String::from(&*file.name),
            })
        })
        .collect()
}

/// `/proc/PID/pagemap` (Linux's `pagemap_read`): eight bytes for each
/// page of the user address space, the page at `index * 4096` read at
/// byte `index * 8`: bit 63 set if a frame is there, bit 61 if it is a
/// shared page (a `MAP_SHARED` mapping of a file or of shared memory),
/// bit 56 if this process alone maps an anonymous page, and bits 0-54 the
/// frame number, for root only (others read 0 there, as since Linux 4.2).
/// Reads must start and end on entries (EINVAL); past the address space is
/// the end of the file. Only root and the process's own user may read it
/// (EACCES; Linux asks the ptrace rules). Left at 0: soft-dirty (bit 55) and swapped (62;
/// nothing is); a private file page not yet copied is not told from an
/// anonymous one.
pub fn pagemap_read(pid: Pid, at: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    const ENTRY: usize = 8;
    if !at.is_multiple_of(ENTRY as u64) || !buf.len().is_multiple_of(ENTRY) {
        return Err(Errno::EINVAL);
    }
    let pages = mm::USER_TOP / mm::PAGE_SIZE;
    let first = at / ENTRY as u64;
    if first >= pages {
        return Ok(0);
    }
    let count = ((pages - first) as usize).min(buf.len() / ENTRY);
    let cred = crate::proc::cred();
    let show_frame = cred.capable(abi::types::CAP_SYS_ADMIN);
    let table = TABLE.lock();
    let Some(p) = table.procs.get(&pid) else {
        return Ok(0); // gone
    };
    if !cred.is_root() && cred.euid != p.cred.euid {
        return Err(Errno::EACCES);
    }
    let Some(mem) = p.mem.as_ref() else {
        return Ok(0); // a zombie: no memory left
    };
    for (i, entry) in buf
        .as_chunks_mut::<ENTRY>()
        .0
        .iter_mut()
        .take(count)
        .enumerate()
    {
        let addr = (first + i as u64) * mm::PAGE_SIZE;
        let word = mem
            .space
            .translate(x86_64::VirtAddr::new(addr))
            .map_or(0, |(phys, flags)| {
                let frame = x86_64::structures::paging::PhysFrame::containing_address(phys);
                let shared = flags.contains(mm::paging::SHARED);
                let mut word = 1u64 << 63;
                if shared {
                    word |= 1 << 61;
                } else if mm::frames::users(frame) == 1 {
                    word |= 1 << 56;
                }
                if show_frame {
                    word |= (phys.as_u64() >> 12) & ((1 << 55) - 1);
                }
                word
            });
        entry.copy_from_slice(&word.to_le_bytes());
    }
    Ok(count * ENTRY)
}

/// `/proc/PID/profil`: what profil(2) is doing for this process, in words.
fn profil(p: &Process) -> String {
    use abi::types::*;
    let stat = p.prof.stat();
    let state = match stat.stopped_by {
        PROF_NEVER_STARTED => "never started",
        PROF_RUNNING => "on",
        PROF_STOPPED_BY_CALL => "off (turned off by profil)",
        PROF_STOPPED_BY_EXEC => "off (exec ended it)",
        PROF_STOPPED_BY_FAULT => "off (a bin could not be written: the buffer faulted)",
        PROF_STOPPED_BY_BAD_CALL => "off (a profil call with bad arguments ended it)",
        PROF_STOPPED_BY_EXIT => "off (the process exited)",
        _ => "off",
    };
    let mut s = String::new();
    let _ = writeln!(s, "state:    {state}");
    let _ = writeln!(s, "rate:     {} Hz", clock::hz());
    let _ = writeln!(s, "regions:  {}", stat.regions);
    for (i, r) in p.prof.regions().iter().enumerate() {
        let _ = write!(
            s,
            "region {i}: buffer {:#x}, {} bins of 2 bytes, offset {:#x}, scale {:#x}",
            r.buffer,
            r.size / 2,
            r.offset,
            r.scale
        );
        if r.high != u64::MAX {
            let _ = write!(s, ", below {:#x}", r.high);
        }
        s.push('\n');
    }
    let _ = writeln!(s, "samples:  {}", stat.samples);
    let _ = writeln!(s, "dropped:  {}", stat.dropped);
    let _ = writeln!(s, "applied:  {}", stat.applied);
    s
}

/// `/proc/cpuinfo`: one paragraph per running CPU, from CPUID
/// (`show_cpuinfo`'s lines). The CPUs are alike (QEMU gives each the same
/// model), so CPUID is read once, on whichever CPU asks.
fn cpuinfo() -> String {
    let cpu = crate::arch::cpuid::describe();
    let count = crate::arch::percpu::online();
    let mut s = String::new();
    for (index, record) in crate::arch::percpu::all().iter().enumerate() {
        let _ = writeln!(s, "processor\t: {index}");
        let _ = writeln!(s, "vendor_id\t: {}", cpu.vendor);
        let _ = writeln!(s, "cpu family\t: {}", cpu.family);
        let _ = writeln!(s, "model\t\t: {}", cpu.model);
        let _ = writeln!(s, "model name\t: {}", cpu.brand);
        let _ = writeln!(s, "stepping\t: {}", cpu.stepping);
        let mhz = clock::tsc_per_sec() / 1000;
        let _ = writeln!(s, "cpu MHz\t\t: {}.{:03}", mhz / 1000, mhz % 1000);
        let _ = writeln!(s, "physical id\t: 0");
        let _ = writeln!(s, "siblings\t: {count}");
        let _ = writeln!(s, "core id\t\t: {index}");
        let _ = writeln!(s, "cpu cores\t: {count}");
        let _ = writeln!(s, "apicid\t\t: {}", record.apic_id());
        let _ = writeln!(s, "fpu\t\t: yes");
        let _ = writeln!(s, "flags\t\t: {}", cpu.flags.join(" "));
        s.push('\n');
    }
    s
}
