//! /bin/sysfuzz [--seconds N] [--seed S] [--workers W]: a system-call fuzzer.
//!
//! W worker processes issue system calls with random and adversarial
//! arguments (kernel addresses, unmapped, read-only and non-canonical ones,
//! huge and negative sizes, odd alignments, wrapped ranges, bad
//! descriptors, profil with every kind of bad buffer and region array) as
//! fast as they can. The parent keeps them running: it kills one with SIGKILL
//! now and then (in the middle of whatever call it is in), replaces workers
//! that die of their own calls (a munmap of their own stack, a handler at a
//! bad address, a garbage sigreturn), and reads their call counts from a
//! pipe. At the end it removes every file and System V object the workers
//! made, then checks that no physical frame was lost, that no open file
//! description outlived its holders (`/proc/sys/fs/file-nr`) and that the
//! kernel's own bookkeeping is sound (`kcheck`). Everything follows from the seed, which a failure prints so
//! the run can be replayed (`cargo xtask fuzz --seed S`).
//!
//! Some calls are steered away from what would end the experiment rather
//! than test the kernel: kill only reaches the worker itself (never -1 or
//! the parent), setpgid keeps the worker in its own group, a forked child
//! exits at once, and the workers' files stay inside their own directory
//! (paths are built from lowercase letters only). A worker may give up
//! root (setuid and its family) and meet the permission checks from then
//! on; the parent stays root and removes everything at the end.

#![no_std]
#![no_main]

extern crate alloc;

use abi::sys::*;
use abi::types::{O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, WNOHANG};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use libc_lite::{println, sys};

libc_lite::entry!(run);

/// The descriptor a worker reports its call count on (never fuzzed).
const REPORT_FD: i32 = 63;
/// Calls between two reports.
const REPORT_EVERY: u64 = 16;
const SCRATCH: &str = "/fuzz";

/// xorshift64*: small, fast, and the same sequence for the same seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The calls fuzzed, with a weight each (how often they are picked).
const CALLS: &[(usize, u64)] = &[
    (READ, 6),
    (WRITE, 6),
    (OPEN, 4),
    (OPENAT, 3),
    (CLOSE, 4),
    (STAT, 2),
    (FSTAT, 2),
    (LSTAT, 1),
    (LSEEK, 3),
    (MMAP, 6),
    (MPROTECT, 4),
    (MUNMAP, 4),
    (BRK, 3),
    (RT_SIGACTION, 4),
    (RT_SIGPROCMASK, 3),
    (RT_SIGRETURN, 1),
    (IOCTL, 3),
    (PREAD64, 2),
    (PWRITE64, 2),
    (READV, 3),
    (WRITEV, 3),
    (ACCESS, 2),
    (PIPE, 2),
    (SELECT, 2),
    (PSELECT6, 2),
    (PPOLL, 2),
    (SCHED_YIELD, 1),
    (MREMAP, 5),
    (MSYNC, 2),
    (MADVISE, 1),
    (DUP, 2),
    (DUP2, 2),
    (PAUSE, 1),
    (NANOSLEEP, 1),
    (GETITIMER, 2),
    (ALARM, 1),
    (SETITIMER, 3),
    (GETPID, 1),
    (FORK, 1),
    (EXECVE, 2),
    (EXECVEAT, 1),
    (FLOCK, 1),
    (WAIT4, 2),
    (WAITID, 2),
    (SENDFILE, 2),
    (FCHDIR, 1),
    (SETSID, 1),
    (GETSID, 1),
    (MKNOD, 1),
    (MKNODAT, 1),
    (PERSONALITY, 1),
    (SYSLOG, 1),
    (MLOCK, 1),
    (MUNLOCK, 1),
    (MLOCK2, 1),
    (MEMBARRIER, 1),
    (MLOCKALL, 1),
    (MUNLOCKALL, 1),
    (KILL, 2),
    (UNAME, 2),
    (FCNTL, 3),
    (FSYNC, 1),
    (TRUNCATE, 2),
    (FTRUNCATE, 2),
    (GETCWD, 2),
    (CHDIR, 1),
    (RENAME, 2),
    (LINK, 2),
    (LINKAT, 2),
    (SYMLINK, 2),
    (SYMLINKAT, 1),
    (UTIMENSAT, 2),
    (FUTIMESAT, 1),
    (UTIMES, 1),
    (UTIME, 1),
    (STATFS, 2),
    (FSTATFS, 2),
    (MKDIR, 2),
    (RMDIR, 2),
    (CREAT, 2),
    (UNLINK, 2),
    (UMASK, 1),
    (CHMOD, 1),
    (FCHMOD, 1),
    (FCHMODAT, 1),
    (CHOWN, 1),
    (FCHOWN, 1),
    (LCHOWN, 1),
    (FCHOWNAT, 1),
    (SETUID, 1),
    (SETGID, 1),
    (SETREUID, 1),
    (SETREGID, 1),
    (SETRESUID, 1),
    (SETRESGID, 1),
    (GETRESUID, 1),
    (GETRESGID, 1),
    (SETFSUID, 1),
    (SETFSGID, 1),
    (GETGROUPS, 1),
    (SETGROUPS, 1),
    (GETTIMEOFDAY, 2),
    (GETRLIMIT, 2),
    (SETRLIMIT, 2),
    (GETRUSAGE, 2),
    (SYSINFO, 2),
    (TIMES, 2),
    (GETPPID, 1),
    (SETPGID, 1),
    (GETPGRP, 1),
    (GETPGID, 1),
    (RT_SIGPENDING, 2),
    (RT_SIGSUSPEND, 1),
    (RT_SIGTIMEDWAIT, 1),
    (RT_SIGQUEUEINFO, 1),
    (RT_TGSIGQUEUEINFO, 1),
    (PREADV, 2),
    (PWRITEV, 2),
    (PREADV2, 1),
    (PWRITEV2, 1),
    (FALLOCATE, 2),
    (CLOSE_RANGE, 1),
    (SIGALTSTACK, 3),
    (ARCH_PRCTL, 2),
    (PRCTL, 2),
    (FUTEX, 3),
    (FUTEX_WAITV, 2),
    (GETTID, 1),
    (TKILL, 1),
    (TIME, 2),
    (SCHED_GETAFFINITY, 2),
    (SCHED_SETAFFINITY, 1),
    (SCHED_SETPARAM, 1),
    (SCHED_GETPARAM, 1),
    (SCHED_SETSCHEDULER, 1),
    (SCHED_GETSCHEDULER, 1),
    (SCHED_GET_PRIORITY_MAX, 1),
    (SCHED_GET_PRIORITY_MIN, 1),
    (SCHED_RR_GET_INTERVAL, 1),
    (STATX, 2),
    (SETXATTR, 1),
    (LSETXATTR, 1),
    (FSETXATTR, 1),
    (GETXATTR, 1),
    (LGETXATTR, 1),
    (FGETXATTR, 1),
    (LISTXATTR, 1),
    (LLISTXATTR, 1),
    (FLISTXATTR, 1),
    (REMOVEXATTR, 1),
    (LREMOVEXATTR, 1),
    (FREMOVEXATTR, 1),
    (FADVISE64, 1),
    (CLOCK_SETTIME, 1),
    (SETTIMEOFDAY, 1),
    (GETDENTS64, 3),
    (SET_TID_ADDRESS, 1),
    (CLOCK_GETTIME, 2),
    (CLOCK_GETRES, 2),
    (CLOCK_NANOSLEEP, 1),
    (TGKILL, 1),
    (MKDIRAT, 1),
    (NEWFSTATAT, 2),
    (UNLINKAT, 2),
    (FACCESSAT, 1),
    (FACCESSAT2, 1),
    (RENAMEAT, 1),
    (RENAMEAT2, 1),
    (GETPRIORITY, 1),
    (CAPGET, 1),
    (CAPSET, 1),
    (SETPRIORITY, 1),
    (DUP3, 2),
    (PIPE2, 2),
    (PRLIMIT64, 2),
    (GETRANDOM, 2),
    (EPOLL_CREATE, 1),
    (EPOLL_CREATE1, 2),
    (EPOLL_CTL, 3),
    (EPOLL_WAIT, 2),
    (EPOLL_PWAIT, 1),
    (EPOLL_PWAIT2, 1),
    (EVENTFD, 1),
    (EVENTFD2, 2),
    (MEMFD_CREATE, 1),
    (SPLICE, 1),
    (COPY_FILE_RANGE, 1),
    (PIDFD_OPEN, 1),
    (PIDFD_SEND_SIGNAL, 1),
    (SOCKET, 2),
    (SOCKETPAIR, 2),
    (BIND, 1),
    (LISTEN, 1),
    (CONNECT, 1),
    (ACCEPT, 1),
    (ACCEPT4, 1),
    (SENDTO, 2),
    (RECVFROM, 2),
    (SENDMSG, 2),
    (RECVMSG, 2),
    (SHUTDOWN, 1),
    (GETSOCKNAME, 1),
    (GETPEERNAME, 1),
    (SETSOCKOPT, 1),
    (GETSOCKOPT, 1),
    (MSGGET, 2),
    (MSGSND, 2),
    (MSGRCV, 2),
    (MSGCTL, 2),
    (SEMGET, 2),
    (SEMOP, 2),
    (SEMTIMEDOP, 1),
    (SEMCTL, 2),
    (SHMGET, 2),
    (SHMAT, 2),
    (SHMDT, 2),
    (SHMCTL, 2),
    (PROFIL, 8),
    (KINFO, 2),
    (POWEROFF, 1),
    (PROCLIST, 2),
    (PROFSTAT, 2),
    (PROFCOST, 1),
    (KGMON, 2),
    (EXPORT, 1),
    (999, 1),
    (5000, 1),
];

/// Addresses every kind of pointer check must refuse or survive.
const BAD_POINTERS: &[u64] = &[
    0,
    1,
    8,
    0xfff,
    0x1000,
    0x1_0000,
    0x7fff_ffff_f000,
    0x7fff_ffff_ffff,
    0x0000_8000_0000_0000, // the first non-canonical address
    0xffff_8000_0000_0000, // the kernel half
    0xffff_c000_0000_0000, // the kernel heap
    0xffff_ffff_8000_0000, // kernel text
    0xffff_ffff_ffff_f000,
    u64::MAX,
    u64::MAX - 7,
];

const SIZES: &[u64] = &[
    0,
    1,
    2,
    7,
    8,
    15,
    16,
    24,
    64,
    4095,
    4096,
    4097,
    65536,
    1 << 20,
    1 << 31,
    1 << 40,
    u64::MAX,
    u64::MAX / 2,
    i64::MAX as u64,
    u32::MAX as u64,
];

/// Where a worker's good pointers point.
struct Memory {
    buffer: u64,
    buffer_len: u64,
    stack: u64,
    text: u64,
    /// A mapping of its own for mmap/munmap/mprotect/mremap to play with.
    arena: u64,
}

const ARENA_LEN: u64 = 64 * 4096;

fn argument(rng: &mut Rng, memory: &Memory) -> u64 {
    match rng.below(10) {
        0 | 1 => rng.pick(BAD_POINTERS),
        2 => memory.buffer + rng.below(memory.buffer_len),
        3 => memory.buffer + rng.pick(&[0, 1, 3, 4095, 4096]),
        4 => rng.pick(&[memory.stack, memory.text, memory.text + 1]),
        5 => rng.pick(SIZES),
        6 => rng.below(64),
        7 => (-(rng.below(5) as i64) - 1) as u64,
        8 => 1 << rng.below(64),
        _ => rng.next(),
    }
}

/// A descriptor: mostly small (the worker's own), never the report pipe.
fn descriptor(rng: &mut Rng) -> u64 {
    let fd = match rng.below(8) {
        0 => -1i64,
        1 => -100, // AT_FDCWD
        2 => 64,
        3 => 1000,
        4 => i32::MIN as i64,
        _ => rng.below(20) as i64,
    };
    fd as u64
}

/// Fills the buffer: lowercase letters with NULs now and then, so that
/// paths made from it stay inside the worker's directory.
fn fill(rng: &mut Rng, memory: &Memory) {
    // SAFETY: the buffer is this worker's own allocation of buffer_len bytes.
    let bytes = unsafe {
        core::slice::from_raw_parts_mut(memory.buffer as *mut u8, memory.buffer_len as usize)
    };
    for b in bytes.iter_mut() {
        *b = match rng.below(12) {
            0 => 0,
            n => b'a' + (n as u8 % 26),
        };
    }
}

/// A signal for kill: mostly harmless ones (0, ignored by default, or
/// stopping-and-continuing), sometimes anything up to 69 (invalid above 64).
fn signal_number(rng: &mut Rng) -> u64 {
    if rng.below(4) == 0 {
        rng.below(70)
    } else {
        rng.pick(&[0, 17, 18, 23, 28])
    }
}

/// A System V id: mostly the last one this worker's `*get` calls
/// returned for the kind (`ids`: queue, set, segment), else random.
fn ipc_id(rng: &mut Rng, ids: &[u64; 3], kind: usize) -> u64 {
    match rng.below(4) {
        0 => rng.pick(&[0, 1, u64::MAX, 32768]),
        _ => ids[kind],
    }
}

/// Arguments for call `nr`: random, with the steering described above.
fn arguments(nr: usize, rng: &mut Rng, memory: &Memory, me: u64, ids: &[u64; 3]) -> [u64; 6] {
    let mut a = [0u64; 6];
    for slot in &mut a {
        *slot = argument(rng, memory);
    }
    match nr {
        READ | WRITE | CLOSE | FSTAT | LSEEK | IOCTL | PREAD64 | PWRITE64 | READV | WRITEV
        | PREADV | PWRITEV | PREADV2 | PWRITEV2 | DUP | FSYNC | FTRUNCATE | GETDENTS64 | FCHDIR
        | EXECVEAT | FSETXATTR | FGETXATTR | FLISTXATTR | FREMOVEXATTR => a[0] = descriptor(rng),
        // Mostly without waiting: two opens of one file in one worker
        // would wait for each other for good (as on Linux).
        FLOCK => {
            a[0] = descriptor(rng);
            a[1] = rng.pick(&[5, 6, 8, 1, 2, 32, a[1]]);
        }
        // Lengths a worker's memory can afford, at offsets near the start.
        FALLOCATE => {
            a[0] = descriptor(rng);
            a[1] = rng.pick(&[0, 1, 3, 2, 0x10, 0x1000]);
            a[2] = rng.pick(&[0, 1, 4096, 1 << 20, u64::MAX]);
            a[3] = rng.pick(&[0, 1, 4096, 65536, 1 << 20, u64::MAX]);
        }
        // A range below the report descriptor, which must stay open.
        CLOSE_RANGE => {
            a[0] = rng.below(REPORT_FD as u64);
            a[1] = (a[0] + rng.below(8)).min(REPORT_FD as u64 - 1);
            a[2] = rng.pick(&[0, 2, 4, 6, 1]);
        }
        // The commands, mostly; an owner for signal-driven I/O only among
        // the worker itself (any other process could die of the SIGIO).
        FCNTL => {
            use abi::types::*;
            a[0] = descriptor(rng);
            if rng.below(4) != 0 {
                a[1] = u64::from(rng.pick(&[
                    F_GETFL,
                    F_SETFL,
                    F_GETFD,
                    F_SETFD,
                    F_DUPFD,
                    F_GETOWN,
                    F_SETOWN,
                    F_GETOWN_EX,
                    F_GETSIG,
                    F_SETSIG,
                    F_GETLK,
                    F_SETLK,
                    F_GETPIPE_SZ,
                    F_SETPIPE_SZ,
                    F_SETLEASE,
                    F_GETLEASE,
                ]));
            }
            match a[1] as u32 {
                F_SETOWN | F_SETOWN_EX => a[2] = rng.pick(&[0, me, me.wrapping_neg()]),
                F_SETFL => a[2] = u64::from(rng.pick(&[O_ASYNC, O_NONBLOCK, O_APPEND, 0])),
                _ => {}
            }
        }
        RT_SIGQUEUEINFO | RT_TGSIGQUEUEINFO => {
            a[0] = rng.pick(&[me, 0, 99_999]);
            let signal = signal_number(rng);
            if nr == RT_SIGQUEUEINFO {
                a[1] = signal;
            } else {
                a[1] = rng.pick(&[me, 99_999]);
                a[2] = signal;
            }
        }
        SENDFILE => {
            a[0] = descriptor(rng);
            a[1] = descriptor(rng);
        }
        // Every kind of node, in the worker's directory (the path is
        // letters). Device numbers no driver has, or none: a node of the
        // console would leave the worker reading the terminal.
        MKNOD | MKNODAT => {
            use abi::types::{S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFREG, S_IFSOCK};
            let at = if nr == MKNODAT {
                a[0] = descriptor(rng);
                1
            } else {
                0
            };
            if rng.below(4) != 0 {
                let kind = rng.pick(&[S_IFIFO, S_IFREG, S_IFSOCK, S_IFCHR, S_IFBLK, S_IFDIR, 0]);
                a[at + 1] = u64::from(kind | 0o600);
            }
            a[at + 2] = rng.pick(&[0, 240 << 8, (240 << 8) | 7]);
        }
        // Locking fills pages: mostly the arena, mostly small.
        MLOCK | MUNLOCK | MLOCK2 if rng.below(4) != 0 => {
            a[0] = memory.arena + 4096 * rng.below(ARENA_LEN / 4096);
            a[1] = 4096 * rng.below(8);
        }
        DUP2 | DUP3 => {
            a[0] = descriptor(rng);
            a[1] = descriptor(rng);
        }
        OPENAT | MKDIRAT | NEWFSTATAT | UNLINKAT | FACCESSAT | FACCESSAT2 | FCHMODAT | FCHOWNAT => {
            a[0] = descriptor(rng)
        }
        RENAMEAT | RENAMEAT2 => {
            a[0] = descriptor(rng);
            a[2] = descriptor(rng);
        }
        FCHMOD | FCHOWN => a[0] = descriptor(rng),
        KILL | TKILL => {
            a[0] = rng.pick(&[0, me, me.wrapping_neg(), 99_999, 99_999u64.wrapping_neg()]);
            a[1] = signal_number(rng);
        }
        // A pidfd of the worker alone (99 999: no such process), and
        // signals through whatever descriptor (a pidfd the worker made
        // names itself).
        PIDFD_OPEN => {
            a[0] = rng.pick(&[me, 0, 99_999, u64::MAX]);
            a[1] = rng.pick(&[0, u64::from(abi::types::O_NONBLOCK), 1]);
        }
        PIDFD_SEND_SIGNAL => {
            a[0] = descriptor(rng);
            a[1] = signal_number(rng);
            a[2] = rng.pick(&[0, a[2]]);
            a[3] = rng.pick(&[0, 0, 1]);
        }
        TGKILL => {
            a[0] = rng.pick(&[me, u64::MAX]);
            a[1] = rng.pick(&[me, 99_999]);
            a[2] = signal_number(rng);
        }
        // The worker itself, mostly, with a policy worth asking for (the
        // real-time ones, the flag, and nonsense).
        SCHED_SETAFFINITY
        | SCHED_SETPARAM
        | SCHED_GETPARAM
        | SCHED_SETSCHEDULER
        | SCHED_GETSCHEDULER
        | SCHED_RR_GET_INTERVAL => {
            a[0] = rng.pick(&[0, me, u64::MAX, 99_999]);
            if nr == SCHED_SETSCHEDULER {
                a[1] = rng.pick(&[0, 1, 2, 3, 5, 6, 7, 0x4000_0003, u64::MAX]);
            }
        }
        SETPGID => a = [0; 6],
        // The kernel's profile: every request, but a short test workload
        // (a long one would hold the worker past its SIGKILL).
        KGMON => {
            a[0] = rng.below(8);
            if a[0] == u64::from(abi::types::KGMON_SPIN) {
                a[2] = rng.below(20);
            }
        }
        // Mostly the arena, so that workers do not unmap themselves at
        // every turn (they still do, now and then).
        MMAP | MUNMAP | MPROTECT | MREMAP | MSYNC if rng.below(5) != 0 => {
            a[0] = memory.arena + 4096 * rng.below(ARENA_LEN / 4096);
            a[1] = 4096 * rng.below(8);
            if nr == MREMAP {
                a[4] = memory.arena + 4096 * rng.below(ARENA_LEN / 4096);
            }
            if nr == MMAP {
                a[3] |= u64::from(abi::types::MAP_FIXED);
                // Half the time a file's pages, shared or private.
                if rng.below(2) == 0 {
                    a[3] &= !u64::from(abi::types::MAP_ANONYMOUS);
                    a[4] = descriptor(rng);
                    a[5] = 4096 * rng.below(4);
                }
            }
        }
        // Sockets: mostly the Unix domain and real types, so that there
        // are sockets to connect, send on and pass around.
        SOCKET | SOCKETPAIR if rng.below(4) != 0 => {
            use abi::socket::*;
            a[0] = u64::from(AF_UNIX);
            a[1] = u64::from(rng.pick(&[SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET]))
                | rng.pick(&[0, u64::from(SOCK_NONBLOCK), u64::from(SOCK_CLOEXEC)]);
            a[2] = 0;
        }
        // A Unix address in the buffer half the time: its path is letters,
        // so the names stay in the worker's directory.
        BIND | CONNECT | SENDTO => {
            a[0] = descriptor(rng);
            let at = if nr == SENDTO { 4 } else { 1 };
            if rng.below(2) == 0 {
                // SAFETY: the buffer is this worker's own, 16 KiB long.
                unsafe { (memory.buffer as *mut u16).write(abi::socket::AF_UNIX) };
                a[at] = memory.buffer;
                a[at + 1] = 2 + rng.below(110);
            }
            if nr == SENDTO {
                a[3] |= u64::from(abi::socket::MSG_DONTWAIT);
            }
        }
        // Receives and accepts mostly do not wait, so workers keep calling.
        RECVFROM | RECVMSG | SENDMSG | ACCEPT4 => {
            a[0] = descriptor(rng);
            if rng.below(4) != 0 {
                let flag = match nr {
                    ACCEPT4 => abi::socket::SOCK_NONBLOCK,
                    _ => abi::socket::MSG_DONTWAIT,
                };
                a[if nr == SENDMSG || nr == RECVMSG { 2 } else { 3 }] = u64::from(flag);
            }
        }
        LISTEN | SHUTDOWN | GETSOCKNAME | GETPEERNAME | SETSOCKOPT | GETSOCKOPT | ACCEPT => {
            a[0] = descriptor(rng);
            if nr == SETSOCKOPT || nr == GETSOCKOPT {
                a[1] = 1; // SOL_SOCKET
                a[2] = rng.below(40);
            }
        }
        // epoll on the worker's own descriptors, mostly without waiting.
        EPOLL_CTL => {
            a[0] = descriptor(rng);
            a[1] = rng.below(5);
            a[2] = descriptor(rng);
        }
        EPOLL_WAIT | EPOLL_PWAIT | EPOLL_PWAIT2 => {
            a[0] = descriptor(rng);
            a[2] = rng.below(10);
            // 0 ms: no wait (for epoll_pwait2 a null timeout waits for
            // ever, so its random pointer stays).
            if nr != EPOLL_PWAIT2 && rng.below(4) != 0 {
                a[3] = 0;
            }
        }
        // System V IPC: a few keys, so workers meet on the same objects;
        // small segments in the arena; mostly no waiting.
        MSGGET | SEMGET | SHMGET => {
            use abi::ipc::{IPC_CREAT, IPC_EXCL};
            a[0] = rng.pick(&[0, 1, 2, 3]);
            a[2] = 0o600 | rng.pick(&[0, u64::from(IPC_CREAT), u64::from(IPC_CREAT | IPC_EXCL)]);
            match nr {
                SEMGET if rng.below(4) != 0 => a[1] = rng.below(8),
                SHMGET if rng.below(4) != 0 => {
                    a[2] = 0o600 | u64::from(IPC_CREAT);
                    a[1] = 1 + rng.below(4 * 4096);
                }
                SHMGET => a[1] = 1 + rng.below(4 * 4096),
                _ => {}
            }
        }
        MSGSND | MSGRCV | MSGCTL => {
            a[0] = ipc_id(rng, ids, 0);
            if nr != MSGCTL {
                a[2] = rng.below(64);
                if rng.below(4) != 0 {
                    a[1] = memory.buffer;
                    a[if nr == MSGSND { 3 } else { 4 }] |= u64::from(abi::ipc::IPC_NOWAIT);
                }
            } else {
                a[1] = rng.below(16);
            }
        }
        SEMOP | SEMTIMEDOP | SEMCTL => {
            a[0] = ipc_id(rng, ids, 1);
            if nr == SEMCTL {
                a[1] = rng.below(8);
                a[2] = rng.below(21);
            } else if rng.below(4) != 0 {
                // One operation from the buffer, made not to wait.
                let op = abi::ipc::SemBuf {
                    sem_num: rng.below(8) as u16,
                    sem_op: rng.pick(&[0, 1, 2, u64::MAX, 32767]) as i16,
                    sem_flg: (abi::ipc::IPC_NOWAIT as i16) | rng.pick(&[0, 0x1000]) as i16,
                };
                // SAFETY: the buffer is this worker's own, 16 KiB long.
                unsafe { (memory.buffer as *mut abi::ipc::SemBuf).write_unaligned(op) };
                a[1] = memory.buffer;
                a[2] = 1;
            }
        }
        SHMAT | SHMDT | SHMCTL => {
            a[0] = ipc_id(rng, ids, 2);
            if nr == SHMCTL {
                a[1] = rng.below(16);
            } else if rng.below(5) != 0 {
                let in_arena = memory.arena + 4096 * rng.below(ARENA_LEN / 4096);
                let at = rng.pick(&[0, in_arena]);
                a[if nr == SHMAT { 1 } else { 0 }] = at;
            }
        }
        WAITID => {
            // An id type, mostly a real one, and mostly no waiting.
            a[0] = rng.below(5);
            if rng.below(4) != 0 {
                a[3] |= u64::from(abi::types::WNOHANG);
            }
        }
        // Mostly real actions; never CONSOLE_OFF or a low console level,
        // which would silence the kernel's reports for the rest of the run.
        SYSLOG => {
            a[0] = rng.pick(&[0, 1, 2, 3, 4, 5, 9, 10, 11, u64::MAX]);
            if rng.below(2) == 0 {
                a[1] = memory.buffer;
                a[2] = rng.below(memory.buffer_len);
            }
        }
        ALARM => a[0] = rng.below(3),
        // Every operation, on words the worker owns most of the time (a
        // priority-inheritance lock there is the worker's to take); a
        // wait that blocks for good ends when the parent kills the worker.
        FUTEX => {
            use abi::types::*;
            if rng.below(4) != 0 {
                a[0] = memory.arena + 4 * rng.below(ARENA_LEN / 4);
            }
            if rng.below(4) != 0 {
                let op = rng.pick(&[
                    FUTEX_WAIT,
                    FUTEX_WAKE,
                    FUTEX_REQUEUE,
                    FUTEX_CMP_REQUEUE,
                    FUTEX_WAKE_OP,
                    FUTEX_LOCK_PI,
                    FUTEX_UNLOCK_PI,
                    FUTEX_TRYLOCK_PI,
                    FUTEX_WAIT_BITSET,
                    FUTEX_WAKE_BITSET,
                    FUTEX_LOCK_PI2,
                ]);
                let flags = rng.pick(&[0, FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME]);
                a[1] = u64::from(op | flags);
            }
            a[2] = rng.pick(&[0, 1, 2, me, u64::from(u32::MAX)]);
            if rng.below(3) != 0 {
                a[3] = 0; // no timeout, or a requeue count of 0
            }
        }
        // A few entries, mostly without a timeout (a wait on words that
        // hold their values ends when the parent kills the worker), on
        // either clock or another.
        FUTEX_WAITV => {
            if rng.below(2) == 0 {
                a[0] = memory.arena + 24 * rng.below(ARENA_LEN / 24);
            }
            a[1] = rng.pick(&[0, 1, 2, 128, 129, u64::MAX]);
            if rng.below(4) != 0 {
                a[2] = 0;
            }
            if rng.below(2) == 0 {
                a[3] = 0;
            }
            a[4] = rng.pick(&[0, 1, 7, u64::MAX]);
        }
        // The options there are, with any argument.
        PRCTL => {
            use abi::types::*;
            if rng.below(4) != 0 {
                a[0] = u64::from(rng.pick(&[
                    PR_SET_PDEATHSIG,
                    PR_GET_PDEATHSIG,
                    PR_SET_NAME,
                    PR_GET_NAME,
                    PR_SET_TIMERSLACK,
                    PR_GET_TIMERSLACK,
                    PR_SET_TSC,
                    PR_GET_TSC,
                ]));
            }
            if a[0] == u64::from(PR_SET_TSC) || a[0] == u64::from(PR_SET_PDEATHSIG) {
                a[1] = rng.below(4);
            }
        }
        NANOSLEEP | CLOCK_NANOSLEEP | PAUSE | RT_SIGSUSPEND | RT_SIGTIMEDWAIT | WAIT4 => {
            // Blocking calls: rarely, so workers mostly keep calling.
            if rng.below(4) != 0 {
                a[0] = 0;
            }
        }
        PROFIL => {
            if rng.below(3) == 0 {
                a[1] = u64::MAX; // the multi-region form
            }
            a[3] = rng.pick(&[0, 1, 0x8000, 0x1_0000, 0x1_0001, 0xffff_ffff, u64::MAX]);
        }
        _ => {}
    }
    a
}

/// A worker: fuzzes until it dies or is killed.
fn worker(index: usize, seed: u64, report: i32) -> ! {
    let _ = sys::dup2(report, REPORT_FD);
    for fd in 0..REPORT_FD {
        let _ = sys::close(fd);
    }
    let dir = format!("{SCRATCH}/w{index}");
    let _ = sys::mkdir(&dir, 0o755);
    let _ = sys::chdir(&dir);
    let _ = libc_lite::signal::setpgid(0, 0);
    let mut rng = Rng::new(seed);
    let buffer = alloc::vec![0u8; 16384];
    let stack_marker = 0u8;
    let memory = Memory {
        buffer: buffer.as_ptr() as u64,
        buffer_len: buffer.len() as u64,
        stack: &stack_marker as *const u8 as u64,
        text: worker as *const () as u64,
        arena: sys::mmap_anon(ARENA_LEN as usize, 3).map_or(0x1000, |p| p as u64),
    };
    // Timer signals would end most workers at once; ignored, they only end
    // those that install a bad handler for them.
    for signal in [
        abi::signal::SIGALRM,
        abi::signal::SIGVTALRM,
        abi::signal::SIGPROF,
    ] {
        let _ = libc_lite::signal::sigaction(signal, libc_lite::signal::Handler::Ignore, 0, 0);
    }
    let me = u64::from(sys::getpid());
    let total: u64 = CALLS.iter().map(|c| c.1).sum();
    let mut calls = 0u64;
    let mut ids = [0u64; 3];
    loop {
        if calls.is_multiple_of(64) {
            fill(&mut rng, &memory);
        }
        let mut ticket = rng.below(total);
        let nr = CALLS
            .iter()
            .find(|&&(_, weight)| {
                let hit = ticket < weight;
                ticket = ticket.saturating_sub(weight);
                hit
            })
            .map_or(GETPID, |c| c.0);
        let a = arguments(nr, &mut rng, &memory, me, &ids);
        // SAFETY: none, on purpose: the kernel must survive whatever this
        // does to the worker (which the parent replaces if it dies).
        let ret = unsafe {
            libc_lite::syscall::syscall6(
                nr,
                a[0] as usize,
                a[1] as usize,
                a[2] as usize,
                a[3] as usize,
                a[4] as usize,
                a[5] as usize,
            )
        };
        if let (Some(kind), false) = (
            [MSGGET, SEMGET, SHMGET].iter().position(|&n| n == nr),
            (ret as isize) < 0,
        ) {
            ids[kind] = ret as u64;
        }
        if (nr == FORK) && ret == 0 {
            sys::exit(0); // a fuzzed fork's child leaves at once
        }
        calls += 1;
        if calls.is_multiple_of(REPORT_EVERY) {
            let _ = sys::write(REPORT_FD, &calls.to_le_bytes());
        }
    }
}

struct Worker {
    pid: u32,
    pipe: i32,
    calls: u64,
}

struct Tally {
    calls: u64,
    killed_by_us: u64,
    died: u64,
    died_by_signal: [u64; 65],
    spawned: u64,
}

fn spawn(index: usize, seed: u64, tally: &mut Tally) -> Option<Worker> {
    let (r, w) = match sys::pipe() {
        Ok(p) => p,
        Err(_) => return None,
    };
    // SAFETY: fcntl(r, F_SETFL, O_NONBLOCK) takes no pointer.
    let _ = unsafe { libc_lite::syscall::syscall(FCNTL, &[r as usize, 4, O_NONBLOCK as usize]) };
    match sys::fork() {
        Ok(0) => {
            let _ = sys::close(r);
            worker(index, seed, w)
        }
        Ok(pid) => {
            let _ = sys::close(w);
            tally.spawned += 1;
            Some(Worker {
                pid,
                pipe: r,
                calls: 0,
            })
        }
        Err(_) => {
            let _ = sys::close(r);
            let _ = sys::close(w);
            None
        }
    }
}

fn drain(worker: &mut Worker) {
    let mut buf = [0u8; 512];
    while let Ok(n) = sys::read(worker.pipe, &mut buf) {
        if n < 8 {
            break;
        }
        let last = &buf[n - n % 8 - 8..n - n % 8];
        worker.calls = u64::from_le_bytes(last.try_into().unwrap_or([0; 8]));
    }
}

fn retire(worker: &mut Worker, tally: &mut Tally) {
    drain(worker);
    tally.calls += worker.calls;
    let _ = sys::close(worker.pipe);
}

/// Removes the workers' files in a child process: the walk needs memory
/// for the names of a whole tree, and this process's heap never shrinks, so
/// done here it would count as frames lost. The child's memory goes back
/// when it exits and the count compares what the kernel holds, like with
/// like.
fn clean_up_in_child() {
    match sys::fork() {
        Ok(0) => {
            remove_tree(SCRATCH);
            sys::exit(0)
        }
        Ok(pid) => {
            let _ = sys::waitpid(pid as i32);
        }
        Err(e) => {
            println!("sysfuzz: fork for the clean-up: {e:?}; removing here");
            remove_tree(SCRATCH);
        }
    }
    if sys::lstat(SCRATCH).is_ok() {
        println!("sysfuzz: {SCRATCH} could not be removed whole; what is left counts as lost");
    }
}

/// Removes every System V object the workers left: each table walked by
/// slot (`*_STAT_ANY`, as `ipcs` does) up to the highest in use.
fn remove_ipc_objects() -> [usize; 3] {
    use abi::ipc::*;
    let mut answer = [0u64; 16];
    let buf = answer.as_mut_ptr() as usize;
    let mut removed = [0; 3];
    for (kind, (nr, stat_any)) in [
        (MSGCTL, MSG_STAT_ANY),
        (SEMCTL, SEM_STAT_ANY),
        (SHMCTL, SHM_STAT_ANY),
    ]
    .into_iter()
    .enumerate()
    {
        let ctl = |id: usize, cmd: i32, out: usize| {
            let args = if nr == SEMCTL {
                [id, 0, cmd as usize, out]
            } else {
                [id, cmd as usize, out, 0]
            };
            // SAFETY: `answer` holds any *_INFO or *_STAT answer (at most
            // 120 bytes).
            unsafe { libc_lite::syscall::syscall(nr, &args) as isize }
        };
        let highest = ctl(0, IPC_INFO, buf);
        for index in 0..=highest.max(0) as usize {
            let id = ctl(index, stat_any, buf);
            if id >= 0 && ctl(id as usize, IPC_RMID, 0) == 0 {
                removed[kind] += 1;
            }
        }
    }
    removed
}

/// Open file descriptions in the system (`/proc/sys/fs/file-nr`'s first
/// number): a description kept alive by nothing a process holds is a leak.
fn open_files() -> String {
    sys::read_file("/proc/sys/fs/file-nr")
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

/// Removes `path` and everything under it, as `rm -r` does: a symbolic
/// link is removed, never followed. A worker may make a link to its own
/// directory (a target written into its buffer by getcwd), and following
/// it would walk the same directory again at every level until the path
/// reaches PATH_MAX.
fn remove_tree(path: &str) {
    if let Ok(fd) = sys::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0) {
        let mut names = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = sys::getdents64(fd, &mut buf) {
            if n == 0 {
                break;
            }
            let mut at = 0;
            while at + 19 < n {
                let len = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
                let name = &buf[at + 19..at + len];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                if let Ok(name) = core::str::from_utf8(name)
                    && name != "."
                    && name != ".."
                {
                    names.push(format!("{path}/{name}"));
                }
                at += len.max(1);
            }
        }
        let _ = sys::close(fd);
        for name in names {
            remove_tree(&name);
        }
        let _ = sys::rmdir(path);
    } else {
        let _ = sys::unlink(path);
    }
}

/// The command line: how long, from which seed, with how many workers.
struct Options {
    seconds: u64,
    seed: u64,
    workers: usize,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        seconds: 30,
        seed: sys::rdtsc() % 1_000_000,
        workers: 4,
    };
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).and_then(|v| v.parse::<u64>().ok());
        match (pair[0], value) {
            ("--seconds", Some(v)) => o.seconds = v,
            ("--seed", Some(v)) => o.seed = v,
            ("--workers", Some(v)) if (1..=16).contains(&v) => o.workers = v as usize,
            _ => {
                return Err(format!(
                    "usage: sysfuzz [--seconds N] [--seed S] [--workers 1..16] (at '{}')",
                    pair[0]
                ));
            }
        }
    }
    Ok(o)
}

fn run() -> i32 {
    let o = match options() {
        Ok(o) => o,
        Err(why) => {
            println!("{why}");
            return 2;
        }
    };
    let _ = libc_lite::signal::setpgid(0, 0);
    let before = sys::kinfo().map(|k| k.frames_in_use() as i64).unwrap_or(0);
    let files_before = open_files();
    println!(
        "sysfuzz: seed {}, {} workers, {} s (replay: cargo xtask fuzz --seed {} --minutes N)",
        o.seed, o.workers, o.seconds, o.seed
    );
    let _ = sys::mkdir(SCRATCH, 0o755);
    let mut tally = Tally {
        calls: 0,
        killed_by_us: 0,
        died: 0,
        died_by_signal: [0; 65],
        spawned: 0,
    };
    let mut rng = Rng::new(o.seed);
    let next_seed = |rng: &mut Rng| {
        o.seed
            .wrapping_mul(1_000_003)
            .wrapping_add(rng.next() % 1_000_000)
    };
    let mut workers: Vec<Option<Worker>> = (0..o.workers).map(|_| None).collect();
    let start = sys::monotonic_nanos();
    let mut last_kill = start;
    let mut last_beat = start;
    while sys::monotonic_nanos() - start < o.seconds * 1_000_000_000 {
        for (i, slot) in workers.iter_mut().enumerate() {
            if slot.is_none() {
                let seed = next_seed(&mut rng);
                *slot = spawn(i, seed, &mut tally);
            }
            if let Some(w) = slot.as_mut() {
                drain(w);
            }
        }
        // Reap workers that died of their own calls (and strays: the
        // children of fuzzed forks, which exit at once).
        while let Ok((pid, status)) = sys::wait4(-1, WNOHANG) {
            if pid == 0 {
                break;
            }
            if let Some(slot) = workers
                .iter_mut()
                .find(|s| s.as_ref().is_some_and(|w| w.pid == pid))
            {
                let mut w = slot.take().expect("found");
                retire(&mut w, &mut tally);
                match sys::signaled(status) {
                    Some(abi::signal::SIGKILL) => {} // ours
                    Some(signal) => {
                        tally.died += 1;
                        tally.died_by_signal[signal as usize % 65] += 1;
                    }
                    None => tally.died += 1,
                }
            }
        }
        let now = sys::monotonic_nanos();
        if now - last_beat > 10_000_000_000 {
            last_beat = now;
            let running: u64 = workers.iter().flatten().map(|w| w.calls).sum();
            let processes = sys::kinfo().map_or(0, |k| k.processes);
            println!(
                "sysfuzz: {} s: {} calls, {} workers started, {processes} processes",
                (now - start) / 1_000_000_000,
                tally.calls + running,
                tally.spawned
            );
        }
        if now - last_kill > 100_000_000 {
            last_kill = now;
            let i = rng.below(o.workers as u64) as usize;
            if let Some(w) = &workers[i] {
                let _ = sys::kill(w.pid as i32, abi::signal::SIGKILL);
                tally.killed_by_us += 1;
            }
        }
        let _ = sys::nanosleep(10_000_000);
    }
    for slot in workers.iter_mut() {
        if let Some(mut w) = slot.take() {
            let _ = sys::kill(w.pid as i32, abi::signal::SIGKILL);
            let _ = sys::waitpid(w.pid as i32);
            retire(&mut w, &mut tally);
        }
    }
    while sys::wait4(-1, 0).is_ok() {}
    clean_up_in_child();
    let removed = remove_ipc_objects();
    let _ = sys::profil_raw(0, 0, 0, 0);
    let after = sys::kinfo().map(|k| k.frames_in_use() as i64).unwrap_or(0);
    let lost = after - before;
    let check = sys::kcheck();
    let mut causes = String::new();
    for (signal, &count) in tally
        .died_by_signal
        .iter()
        .enumerate()
        .take(32)
        .filter(|(_, c)| **c > 0)
    {
        causes.push_str(&format!(
            " {count} {}",
            libc_lite::signal::name(signal as u32)
        ));
    }
    let realtime: u64 = tally.died_by_signal[32..].iter().sum();
    if realtime > 0 {
        causes.push_str(&format!(" {realtime} real-time signals"));
    }
    println!(
        "sysfuzz: {} system calls in {} s ({} per second) by {} workers; {} killed mid-call by SIGKILL; {} died of their own calls:{}",
        tally.calls,
        o.seconds,
        tally.calls / o.seconds.max(1),
        tally.spawned,
        tally.killed_by_us,
        tally.died,
        causes,
    );
    let files_after = open_files();
    println!(
        "sysfuzz: open files before {files_before}, after {files_after}; System V objects the workers left: {} queues, {} sets, {} segments (removed)",
        removed[0], removed[1], removed[2]
    );
    println!(
        "sysfuzz: frames in use before {before}, after {after} (lost {lost}); kernel self-check: {}",
        match check {
            Ok(()) => "sound",
            Err(_) => "FAILED (see the kcheck lines)",
        }
    );
    if lost == 0 && files_after == files_before && check.is_ok() && tally.calls > 0 {
        println!("sysfuzz: ok");
        0
    } else {
        println!(
            "sysfuzz: FAIL (seed {}): lost {lost} frames, open files {files_before} -> {files_after}, kcheck {check:?}, {} calls",
            o.seed, tally.calls
        );
        1
    }
}
