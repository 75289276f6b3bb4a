//! Every structure the kernel writes to (or reads from) user memory,
//! checked against Linux's own layout: size and the offset of each field.
//!
//! The reference numbers were printed by a C program that includes only
//! Linux's uapi headers (Debian's `linux-libc-dev` 6.1, x86_64) and prints
//! `sizeof` and `offsetof`; the header each comes from is named beside it.
//! A layout that differs from Linux's breaks every C library that trusts the
//! kernel (glibc's 36-byte `struct termios` buffer was overrun by a 60-byte
//! TCGETS answer, and every glibc program died of "stack smashing").

use core::mem::{offset_of, size_of};

use crate::types::*;

/// `linux/stat.h`: `struct statx`.
#[test]
fn statx() {
    assert_eq!(size_of::<Statx>(), 256);
    assert_eq!(size_of::<StatxTimestamp>(), 16);
    assert_eq!(offset_of!(Statx, stx_blksize), 4);
    assert_eq!(offset_of!(Statx, stx_attributes), 8);
    assert_eq!(offset_of!(Statx, stx_nlink), 16);
    assert_eq!(offset_of!(Statx, stx_uid), 20);
    assert_eq!(offset_of!(Statx, stx_gid), 24);
    assert_eq!(offset_of!(Statx, stx_mode), 28);
    assert_eq!(offset_of!(Statx, stx_ino), 32);
    assert_eq!(offset_of!(Statx, stx_size), 40);
    assert_eq!(offset_of!(Statx, stx_blocks), 48);
    assert_eq!(offset_of!(Statx, stx_attributes_mask), 56);
    assert_eq!(offset_of!(Statx, stx_atime), 64);
    assert_eq!(offset_of!(Statx, stx_btime), 80);
    assert_eq!(offset_of!(Statx, stx_ctime), 96);
    assert_eq!(offset_of!(Statx, stx_mtime), 112);
    assert_eq!(offset_of!(Statx, stx_rdev_major), 128);
    assert_eq!(offset_of!(Statx, stx_rdev_minor), 132);
    assert_eq!(offset_of!(Statx, stx_dev_major), 136);
    assert_eq!(offset_of!(Statx, stx_dev_minor), 140);
    assert_eq!(offset_of!(Statx, stx_mnt_id), 144);
    assert_eq!(offset_of!(Statx, stx_dio_mem_align), 152);
    assert_eq!(
        (STATX_BASIC_STATS, STATX_MNT_ID, STATX_RESERVED),
        (0x7ff, 0x1000, 0x8000_0000)
    );
}

/// `asm/stat.h`: `struct stat`.
#[test]
fn stat() {
    assert_eq!(size_of::<Stat>(), 144);
    assert_eq!(offset_of!(Stat, st_ino), 8);
    assert_eq!(offset_of!(Stat, st_nlink), 16);
    assert_eq!(offset_of!(Stat, st_mode), 24);
    assert_eq!(offset_of!(Stat, st_uid), 28);
    assert_eq!(offset_of!(Stat, st_gid), 32);
    assert_eq!(offset_of!(Stat, st_rdev), 40);
    assert_eq!(offset_of!(Stat, st_size), 48);
    assert_eq!(offset_of!(Stat, st_blksize), 56);
    assert_eq!(offset_of!(Stat, st_blocks), 64);
    assert_eq!(offset_of!(Stat, st_atime), 72);
    assert_eq!(offset_of!(Stat, st_atime_nsec), 80);
    assert_eq!(offset_of!(Stat, st_mtime), 88);
    assert_eq!(offset_of!(Stat, st_ctime), 104);
    assert_eq!(offset_of!(Stat, st_ctime_nsec), 112);
}

/// `linux/sysinfo.h`: `struct sysinfo`.
#[test]
fn sysinfo() {
    assert_eq!(size_of::<SysInfo>(), 112);
    assert_eq!(offset_of!(SysInfo, loads), 8);
    assert_eq!(offset_of!(SysInfo, totalram), 32);
    assert_eq!(offset_of!(SysInfo, freeram), 40);
    assert_eq!(offset_of!(SysInfo, procs), 80);
    assert_eq!(offset_of!(SysInfo, totalhigh), 88);
    assert_eq!(offset_of!(SysInfo, mem_unit), 104);
}

/// `linux/resource.h`: `struct rusage` and `struct rlimit`.
#[test]
fn rusage_and_rlimit() {
    assert_eq!(size_of::<Rusage>(), 144);
    assert_eq!(offset_of!(Rusage, stime), 16);
    assert_eq!(offset_of!(Rusage, counters), 32, "ru_maxrss");
    assert_eq!(offset_of!(Rusage, counters) + 13 * 8, 136, "ru_nivcsw");
    assert_eq!(size_of::<Rlimit>(), 16);
    assert_eq!(offset_of!(Rlimit, max), 8);
}

/// `linux/times.h`: `struct tms`.
#[test]
fn tms() {
    assert_eq!(size_of::<Tms>(), 32);
    assert_eq!(offset_of!(Tms, stime), 8);
    assert_eq!(offset_of!(Tms, cutime), 16);
    assert_eq!(offset_of!(Tms, cstime), 24);
}

/// `linux/utsname.h`: `struct new_utsname`.
#[test]
fn utsname() {
    assert_eq!(size_of::<Utsname>(), 390);
    assert_eq!(offset_of!(Utsname, nodename), 65);
    assert_eq!(offset_of!(Utsname, machine), 260);
    assert_eq!(offset_of!(Utsname, domainname), 325);
}

/// `asm-generic/termbits.h`: the kernel's `struct termios`, its flag bits and
/// control-character indices; `asm-generic/ioctls.h`: the requests;
/// `asm-generic/termios.h`: `struct winsize`.
#[test]
fn termios_and_winsize() {
    assert_eq!(size_of::<Termios>(), 36);
    assert_eq!(offset_of!(Termios, c_oflag), 4);
    assert_eq!(offset_of!(Termios, c_cflag), 8);
    assert_eq!(offset_of!(Termios, c_lflag), 12);
    assert_eq!(offset_of!(Termios, c_line), 16);
    assert_eq!(offset_of!(Termios, c_cc), 17);
    assert_eq!(NCCS, 19);
    assert_eq!(
        [VINTR, VQUIT, VERASE, VKILL, VEOF, VTIME, VMIN],
        [0, 1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        [VSTART, VSTOP, VSUSP, VREPRINT, VDISCARD, VWERASE, VLNEXT],
        [8, 9, 10, 12, 13, 14, 15]
    );
    assert_eq!(
        [ISIG, ICANON, ECHO, ICRNL, OPOST, ONLCR],
        [0o1, 0o2, 0o10, 0o400, 0o1, 0o4]
    );
    assert_eq!([B38400, CS8, CREAD], [0o17, 0o60, 0o200]);
    assert_eq!(
        [TCGETS, TCSETS, TCSETSW, TCSETSF],
        [0x5401, 0x5402, 0x5403, 0x5404]
    );
    assert_eq!([TIOCGWINSZ, TIOCGPGRP, TIOCSPGRP], [0x5413, 0x540f, 0x5410]);
    assert_eq!(size_of::<Winsize>(), 8);
    assert_eq!(offset_of!(Winsize, ws_col), 2);
    assert_eq!(offset_of!(Winsize, ws_xpixel), 4);
    assert_eq!(offset_of!(Winsize, ws_ypixel), 6);
    // Linux's INIT_C_CC (include/linux/tty.h): ^C ^\ DEL ^U ^D, VMIN 1.
    let cc = Termios::initial().c_cc;
    assert_eq!(&cc[..7], &[0x03, 0x1c, 0x7f, 0x15, 0x04, 0, 1]);
}

/// The kernel's `struct linux_dirent64` (not in uapi; `include/linux/dirent.h`
/// in the kernel tree): `d_ino`, `d_off`, `d_reclen`, `d_type`, `d_name`.
#[test]
fn linux_dirent64() {
    assert_eq!(offset_of!(Dirent64Header, d_off), 8);
    assert_eq!(offset_of!(Dirent64Header, d_reclen), 16);
    assert_eq!(offset_of!(Dirent64Header, d_type), 18);
    assert_eq!(DIRENT64_NAME_OFFSET, 19);
}

/// `asm/signal.h`: the kernel's `struct sigaction` and `stack_t`;
/// `asm-generic/siginfo.h`: `siginfo_t`.
#[test]
fn sigaction_stack_and_siginfo() {
    assert_eq!(size_of::<SigAction>(), 32);
    assert_eq!(offset_of!(SigAction, flags), 8);
    assert_eq!(offset_of!(SigAction, restorer), 16);
    assert_eq!(offset_of!(SigAction, mask), 24);
    assert_eq!(size_of::<StackT>(), 24);
    assert_eq!(offset_of!(StackT, flags), 8);
    assert_eq!(offset_of!(StackT, size), 16);
    assert_eq!(size_of::<SigInfo>(), 128);
    assert_eq!(offset_of!(SigInfo, errno), 4);
    assert_eq!(offset_of!(SigInfo, code), 8);
    assert_eq!(offset_of!(SigInfo, pid_or_addr), 16, "si_pid, si_addr");
    assert_eq!(offset_of!(SigInfo, status), 24);
    assert_eq!(offset_of!(SigInfo, utime), 32);
    assert_eq!(offset_of!(SigInfo, stime), 40);
}

/// `asm/ucontext.h` and `asm/sigcontext.h`: `struct ucontext` and the
/// register order of `struct sigcontext` (`mcontext_t`).
#[test]
fn ucontext_and_sigcontext() {
    assert_eq!(size_of::<UContext>(), 304);
    assert_eq!(offset_of!(UContext, link), 8);
    assert_eq!(offset_of!(UContext, stack), 16);
    assert_eq!(offset_of!(UContext, mcontext), 40);
    assert_eq!(offset_of!(UContext, sigmask), 296);
    assert_eq!(size_of::<MContext>(), 256);
    let at = |reg: usize| reg * 8;
    assert_eq!(at(REG_R8), 0);
    assert_eq!(at(REG_RIP), 128);
    assert_eq!(at(REG_EFL), 136);
    assert_eq!(at(REG_CSGSFS), 144);
    assert_eq!(at(REG_ERR), 152);
    assert_eq!(at(REG_TRAPNO), 160);
    assert_eq!(at(REG_OLDMASK), 168);
    assert_eq!(at(REG_CR2), 176);
    assert_eq!(offset_of!(MContext, fpstate), 184);
}

/// `linux/time_types.h`: `__kernel_timespec`, `__kernel_old_timeval`,
/// `__kernel_old_itimerval`.
#[test]
fn time_structures() {
    assert_eq!(size_of::<Timespec>(), 16);
    assert_eq!(offset_of!(Timespec, tv_nsec), 8);
    assert_eq!(size_of::<Timeval>(), 16);
    assert_eq!(offset_of!(Timeval, tv_usec), 8);
    assert_eq!(size_of::<ItimerVal>(), 32);
    assert_eq!(offset_of!(ItimerVal, value), 16);
}

/// `linux/futex.h`: `struct robust_list_head` and the futex word's bits.
#[test]
fn robust_list_head_and_futex_bits() {
    assert_eq!(size_of::<RobustListHead>(), 24);
    assert_eq!(offset_of!(RobustListHead, next), 0);
    assert_eq!(offset_of!(RobustListHead, futex_offset), 8);
    assert_eq!(offset_of!(RobustListHead, list_op_pending), 16);
    assert_eq!(
        (FUTEX_WAITERS, FUTEX_OWNER_DIED, FUTEX_TID_MASK),
        (0x8000_0000, 0x4000_0000, 0x3fff_ffff)
    );
    assert_eq!((FUTEX_WAIT_BITSET, FUTEX_CLOCK_REALTIME), (9, 256));
}

/// `linux/sched.h`: clone flags.
#[test]
fn clone_flags() {
    assert_eq!(
        (CLONE_THREAD, CLONE_SETTLS, CLONE_CHILD_SETTID, CLONE_PIDFD),
        (0x10000, 0x80000, 0x100_0000, 0x1000)
    );
}

/// `asm-generic/poll.h`: `struct pollfd` and the event bits.
#[test]
fn pollfd() {
    assert_eq!(size_of::<PollFd>(), 8);
    assert_eq!(offset_of!(PollFd, events), 4);
    assert_eq!(offset_of!(PollFd, revents), 6);
    assert_eq!(
        (POLLIN, POLLOUT, POLLHUP, POLLNVAL, POLLRDNORM, POLLWRNORM),
        (1, 4, 16, 32, 64, 256)
    );
}

/// `asm-generic/statfs.h` (x86_64's 64-bit `struct statfs`) and
/// `linux/utime.h`.
#[test]
fn statfs_and_utimbuf() {
    assert_eq!(size_of::<Statfs>(), 120);
    assert_eq!(offset_of!(Statfs, f_blocks), 16);
    assert_eq!(offset_of!(Statfs, f_fsid), 56);
    assert_eq!(offset_of!(Statfs, f_namelen), 64);
    assert_eq!(offset_of!(Statfs, f_flags), 80);
    assert_eq!(size_of::<Utimbuf>(), 16);
}

/// `asm-generic/fcntl.h`: `struct flock` on x86_64.
#[test]
fn flock() {
    assert_eq!(size_of::<Flock>(), 32);
    assert_eq!(offset_of!(Flock, l_whence), 2);
    assert_eq!(offset_of!(Flock, l_start), 8);
    assert_eq!(offset_of!(Flock, l_len), 16);
    assert_eq!(offset_of!(Flock, l_pid), 24);
}

/// `linux/un.h`: `struct sockaddr_un`.
#[test]
fn sockaddr_un() {
    use crate::socket::*;
    assert_eq!(size_of::<SockaddrUn>(), 110);
    assert_eq!(offset_of!(SockaddrUn, sun_path), SUN_PATH_OFFSET);
}

/// `linux/socket.h`: `struct msghdr` (the user one), `struct cmsghdr` and
/// `struct ucred`.
#[test]
fn msghdr_cmsghdr_ucred() {
    use crate::socket::*;
    assert_eq!(size_of::<MsgHdr>(), 56);
    assert_eq!(offset_of!(MsgHdr, msg_namelen), 8);
    assert_eq!(offset_of!(MsgHdr, msg_iov), 16);
    assert_eq!(offset_of!(MsgHdr, msg_iovlen), 24);
    assert_eq!(offset_of!(MsgHdr, msg_control), 32);
    assert_eq!(offset_of!(MsgHdr, msg_controllen), 40);
    assert_eq!(offset_of!(MsgHdr, msg_flags), 48);
    assert_eq!(size_of::<CmsgHdr>(), 16);
    assert_eq!(offset_of!(CmsgHdr, cmsg_level), 8);
    assert_eq!(offset_of!(CmsgHdr, cmsg_type), 12);
    assert_eq!(size_of::<Ucred>(), 12);
    assert_eq!(offset_of!(Ucred, uid), 4);
    assert_eq!(offset_of!(Ucred, gid), 8);
}

/// `linux/eventpoll.h`: `struct epoll_event`, packed on x86_64.
#[test]
fn epoll_event() {
    assert_eq!(size_of::<EpollEvent>(), 12);
    assert_eq!(offset_of!(EpollEvent, data), 4);
}

/// `linux/ipc.h`, `linux/msg.h`, `linux/sem.h`, `linux/shm.h` (and the
/// `asm/*buf.h` they include): System V IPC.
#[test]
fn sysv_ipc() {
    use crate::ipc::*;
    assert_eq!(size_of::<IpcPerm>(), 48);
    assert_eq!(offset_of!(IpcPerm, mode), 20);
    assert_eq!(offset_of!(IpcPerm, seq), 24);
    assert_eq!(offset_of!(IpcPerm, unused1), 32);
    assert_eq!(size_of::<MsqidDs>(), 120);
    assert_eq!(offset_of!(MsqidDs, msg_stime), 48);
    assert_eq!(offset_of!(MsqidDs, msg_cbytes), 72);
    assert_eq!(offset_of!(MsqidDs, msg_qbytes), 88);
    assert_eq!(offset_of!(MsqidDs, msg_lspid), 96);
    assert_eq!(offset_of!(MsqidDs, msg_lrpid), 100);
    assert_eq!(size_of::<SemidDs>(), 104);
    assert_eq!(offset_of!(SemidDs, sem_otime), 48);
    assert_eq!(offset_of!(SemidDs, sem_ctime), 64);
    assert_eq!(offset_of!(SemidDs, sem_nsems), 80);
    assert_eq!(size_of::<ShmidDs>(), 112);
    assert_eq!(offset_of!(ShmidDs, shm_segsz), 48);
    assert_eq!(offset_of!(ShmidDs, shm_atime), 56);
    assert_eq!(offset_of!(ShmidDs, shm_ctime), 72);
    assert_eq!(offset_of!(ShmidDs, shm_cpid), 80);
    assert_eq!(offset_of!(ShmidDs, shm_lpid), 84);
    assert_eq!(offset_of!(ShmidDs, shm_nattch), 88);
    assert_eq!(size_of::<SemBuf>(), 6);
    assert_eq!(size_of::<MsgInfo>(), 32);
    assert_eq!(offset_of!(MsgInfo, msgtql), 24);
    assert_eq!(offset_of!(MsgInfo, msgseg), 28);
    assert_eq!(size_of::<SemInfo>(), 40);
    assert_eq!(offset_of!(SemInfo, semaem), 36);
    assert_eq!(size_of::<ShmInfo64>(), 72);
    assert_eq!(offset_of!(ShmInfo64, shmall), 32);
    assert_eq!(size_of::<ShmUsage>(), 48);
    assert_eq!(offset_of!(ShmUsage, shm_tot), 8);
    assert_eq!(offset_of!(ShmUsage, swap_successes), 40);
}
