//! System calls: one table from number to handler.
//!
//! Arguments arrive in rdi, rsi, rdx, r10, r8, r9 (Linux's order) and the
//! result goes back in rax, `-errno` on failure. The numbers are the ones in
//! `abi::sys` (Linux's, plus ours from 1000). The table calls only the
//! handlers of this directory, one file per group (cred, fs, fsmeta, poll,
//! mount, mem, process, signal, socket, xattr, ipc, info, profil, kbench); each handler turns the raw integers into the
//! types they stand for and calls the mechanism (`proc::lifecycle::fork`,
//! `profil::start`, ...), reaching user memory only through `mm::uaccess`.
//! An unknown number is `ENOSYS`, logged once per number.

mod copy;
mod cred;
mod fs;
mod fsmeta;
pub(crate) mod info;
mod ipc;
mod kbench;
mod kgmon;
mod mem;
mod mount;
mod pidfd;
mod policy;
mod poll;
mod priority;
mod process;
mod profil;
mod signal;
mod socket;
mod tty;
mod xattr;

use abi::{Errno, sys};
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::trap::TrapFrame;

pub type SysResult = Result<usize, Errno>;

/// Calls made since boot, by number (numbers past the table are not
/// counted), on every CPU.
static COUNTS: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];

/// /proc/sysstat: one line per call made since boot, `NUMBER COUNT`.
pub fn counts_text() -> alloc::string::String {
    use core::fmt::Write;
    let mut text = alloc::string::String::new();
    for (number, count) in COUNTS.iter().enumerate() {
        let count = count.load(Ordering::Relaxed);
        if count > 0 {
            let _ = writeln!(text, "{number} {count}");
        }
    }
    text
}

pub fn dispatch(tf: &mut TrapFrame) {
    if let Some(count) = COUNTS.get(tf.rax as usize) {
        count.fetch_add(1, Ordering::Relaxed);
    }
    let a = [tf.rdi, tf.rsi, tf.rdx, tf.r10, tf.r8, tf.r9];
    let result = match tf.rax as usize {
        sys::READ => fs::read(a[0] as i32, a[1], a[2]),
        sys::WRITE => fs::write(a[0] as i32, a[1], a[2]),
        sys::PREAD64 => fs::pread64(a[0] as i32, a[1], a[2], a[3] as i64),
        sys::SENDFILE => fs::sendfile(a[0] as i32, a[1] as i32, a[2], a[3]),
        sys::PWRITE64 => fs::pwrite64(a[0] as i32, a[1], a[2], a[3] as i64),
        sys::FSYNC | sys::FDATASYNC => fs::fsync(a[0] as i32),
        sys::SYNC => mount::sync(),
        sys::SYNCFS => mount::syncfs(a[0] as i32),
        sys::MOUNT => mount::mount(a[0], a[1], a[2], a[3], a[4]),
        sys::UMOUNT2 => mount::umount2(a[0], a[1] as u32),
        sys::TRUNCATE => fs::truncate(a[0], a[1] as i64),
        sys::CREAT => fs::openat(
            abi::types::AT_FDCWD,
            a[0],
            abi::types::O_CREAT | abi::types::O_WRONLY | abi::types::O_TRUNC,
            a[1] as u32,
        ),
        sys::READV => fs::readv(a[0] as i32, a[1], a[2]),
        sys::WRITEV => fs::writev(a[0] as i32, a[1], a[2]),
        sys::PREADV => fs::preadv(a[0] as i32, a[1], a[2], a[3] as i64),
        sys::PWRITEV => fs::pwritev(a[0] as i32, a[1], a[2], a[3] as i64),
        sys::PREADV2 => fs::preadv2(a[0] as i32, a[1], a[2], a[3] as i64, a[5] as u32),
        sys::PWRITEV2 => fs::pwritev2(a[0] as i32, a[1], a[2], a[3] as i64, a[5] as u32),
        sys::FALLOCATE => fs::fallocate(a[0] as i32, a[1] as u32, a[2] as i64, a[3] as i64),
        sys::CLOSE_RANGE => fs::close_range(a[0] as u32, a[1] as u32, a[2] as u32),
        sys::OPEN => fs::openat(abi::types::AT_FDCWD, a[0], a[1] as u32, a[2] as u32),
        sys::OPENAT => fs::openat(a[0] as i32, a[1], a[2] as u32, a[3] as u32),
        sys::CLOSE => fs::close(a[0] as i32),
        sys::LSEEK => fs::lseek(a[0] as i32, a[1] as i64, a[2] as u32),
        sys::STAT => fs::stat(abi::types::AT_FDCWD, a[0], a[1], 0),
        sys::LSTAT => fs::stat(
            abi::types::AT_FDCWD,
            a[0],
            a[1],
            abi::types::AT_SYMLINK_NOFOLLOW,
        ),
        sys::NEWFSTATAT => fs::stat(a[0] as i32, a[1], a[2], a[3] as u32),
        sys::FSTAT => fs::fstat(a[0] as i32, a[1]),
        sys::STATX => fs::statx(a[0] as i32, a[1], a[2] as u32, a[3] as u32, a[4]),
        sys::FADVISE64 => fs::fadvise64(a[0] as i32, a[1] as i64, a[2] as i64, a[3] as u32),
        sys::POLL => poll::poll(a[0], a[1], a[2] as i32),
        sys::PPOLL => poll::ppoll(a[0], a[1], a[2], a[3], a[4]),
        sys::SELECT => poll::select(a[0] as i32, a[1], a[2], a[3], a[4]),
        sys::PSELECT6 => poll::pselect6(a[0] as i32, a[1], a[2], a[3], a[4], a[5]),
        sys::EPOLL_CREATE => poll::epoll_create(a[0] as i32),
        sys::EPOLL_CREATE1 => poll::epoll_create1(a[0] as u32),
        // eventfd(2) is eventfd2 without flags.
        sys::EVENTFD => poll::eventfd2(a[0] as u32, 0),
        sys::EVENTFD2 => poll::eventfd2(a[0] as u32, a[1] as u32),
        sys::EPOLL_CTL => poll::epoll_ctl(a[0] as i32, a[1] as u32, a[2] as i32, a[3]),
        sys::EPOLL_WAIT => poll::epoll_wait(a[0] as i32, a[1], a[2] as i32, a[3] as i32),
        sys::EPOLL_PWAIT => {
            poll::epoll_pwait(a[0] as i32, a[1], a[2] as i32, a[3] as i32, a[4], a[5])
        }
        sys::EPOLL_PWAIT2 => poll::epoll_pwait2(a[0] as i32, a[1], a[2] as i32, a[3], a[4], a[5]),
        sys::GETDENTS64 => fs::getdents64(a[0] as i32, a[1], a[2]),
        sys::MKDIR => fs::mkdirat(abi::types::AT_FDCWD, a[0], a[1] as u32),
        sys::MKDIRAT => fs::mkdirat(a[0] as i32, a[1], a[2] as u32),
        sys::MKNOD => fsmeta::mknod(a[0], a[1] as u32, a[2]),
        sys::MKNODAT => fsmeta::mknodat(a[0] as i32, a[1], a[2] as u32, a[3]),
        sys::RMDIR => fs::unlinkat(abi::types::AT_FDCWD, a[0], abi::types::AT_REMOVEDIR),
        sys::UNLINK => fs::unlinkat(abi::types::AT_FDCWD, a[0], 0),
        sys::UNLINKAT => fs::unlinkat(a[0] as i32, a[1], a[2] as u32),
        sys::RENAME => fs::rename(a[0], a[1]),
        sys::RENAMEAT => fs::renameat2(a[0] as i32, a[1], a[2] as i32, a[3], 0),
        sys::RENAMEAT2 => fs::renameat2(a[0] as i32, a[1], a[2] as i32, a[3], a[4] as u32),
        sys::LINK => fsmeta::link(a[0], a[1]),
        sys::CHMOD => fsmeta::chmod(a[0], a[1] as u32),
        sys::FCHMOD => fsmeta::fchmod(a[0] as i32, a[1] as u32),
        sys::FCHMODAT => fsmeta::fchmodat(a[0] as i32, a[1], a[2] as u32, a[3] as u32),
        sys::CHOWN => fsmeta::chown(a[0], a[1] as u32, a[2] as u32),
        sys::LCHOWN => fsmeta::lchown(a[0], a[1] as u32, a[2] as u32),
        sys::FCHOWN => fsmeta::fchown(a[0] as i32, a[1] as u32, a[2] as u32),
        sys::FCHOWNAT => fsmeta::fchownat(a[0] as i32, a[1], a[2] as u32, a[3] as u32, a[4] as u32),
        sys::LINKAT => fsmeta::linkat(a[0] as i32, a[1], a[2] as i32, a[3], a[4] as u32),
        sys::SYMLINK => fsmeta::symlink(a[0], a[1]),
        sys::SYMLINKAT => fsmeta::symlinkat(a[0], a[1] as i32, a[2]),
        sys::UTIMENSAT => fsmeta::utimensat(a[0] as i32, a[1], a[2], a[3] as u32),
        sys::FUTIMESAT => fsmeta::futimesat(a[0] as i32, a[1], a[2]),
        sys::UTIMES => fsmeta::utimes(a[0], a[1]),
        sys::UTIME => fsmeta::utime(a[0], a[1]),
        sys::STATFS => fsmeta::statfs(a[0], a[1]),
        sys::FSTATFS => fsmeta::fstatfs(a[0] as i32, a[1]),
        sys::DUP => fs::dup(a[0] as i32),
        sys::DUP2 => fs::dup2(a[0] as i32, a[1] as i32),
        sys::DUP3 => fs::dup3(a[0] as i32, a[1] as i32, a[2] as u32),
        sys::PIPE => fs::pipe2(a[0], 0),
        sys::COPY_FILE_RANGE => {
            copy::copy_file_range(a[0] as i32, a[1], a[2] as i32, a[3], a[4], a[5] as u32)
        }
        sys::SPLICE => copy::splice(a[0] as i32, a[1], a[2] as i32, a[3], a[4], a[5] as u32),
        sys::PIDFD_OPEN => pidfd::pidfd_open(a[0] as i32, a[1] as u32),
        sys::PIDFD_SEND_SIGNAL => {
            pidfd::pidfd_send_signal(a[0] as i32, a[1] as u32, a[2], a[3] as u32)
        }
        sys::MEMFD_CREATE => fs::memfd_create(a[0], a[1] as u32),
        sys::PIPE2 => fs::pipe2(a[0], a[1] as u32),
        sys::GETCWD => fs::getcwd(a[0], a[1]),
        sys::CHDIR => fs::chdir(a[0]),
        sys::FCHDIR => fs::fchdir(a[0] as i32),
        sys::FTRUNCATE => fs::ftruncate(a[0] as i32, a[1] as i64),
        sys::FCNTL => fs::fcntl(a[0] as i32, a[1] as u32, a[2]),
        sys::FLOCK => fs::flock(a[0] as i32, a[1] as u32),
        sys::IOCTL => fs::ioctl(a[0] as i32, a[1] as u32, a[2]),
        sys::ACCESS => fs::access(abi::types::AT_FDCWD, a[0], a[1] as u32),
        // faccessat has three arguments; its flags came with faccessat2.
        sys::FACCESSAT => fs::faccessat(a[0] as i32, a[1], a[2] as u32, 0),
        sys::FACCESSAT2 => fs::faccessat(a[0] as i32, a[1], a[2] as u32, a[3] as u32),
        sys::SOCKET => socket::socket(a[0] as u32, a[1] as u32, a[2] as u32),
        sys::SOCKETPAIR => socket::socketpair(a[0] as u32, a[1] as u32, a[2] as u32, a[3]),
        sys::BIND => socket::bind(a[0] as i32, a[1], a[2] as u32),
        sys::LISTEN => socket::listen(a[0] as i32, a[1] as i32),
        sys::CONNECT => socket::connect(a[0] as i32, a[1], a[2] as u32),
        sys::ACCEPT => socket::accept4(a[0] as i32, a[1], a[2], 0),
        sys::ACCEPT4 => socket::accept4(a[0] as i32, a[1], a[2], a[3] as u32),
        sys::SENDTO => socket::sendto(a[0] as i32, a[1], a[2], a[3] as u32, a[4], a[5] as u32),
        sys::RECVFROM => socket::recvfrom(a[0] as i32, a[1], a[2], a[3] as u32, a[4], a[5]),
        sys::SENDMSG => socket::sendmsg(a[0] as i32, a[1], a[2] as u32),
        sys::RECVMSG => socket::recvmsg(a[0] as i32, a[1], a[2] as u32),
        sys::SENDMMSG => socket::sendmmsg(a[0] as i32, a[1], a[2], a[3] as u32),
        sys::RECVMMSG => socket::recvmmsg(a[0] as i32, a[1], a[2], a[3] as u32, a[4]),
        sys::SHUTDOWN => socket::shutdown(a[0] as i32, a[1] as u32),
        sys::GETSOCKNAME => socket::getsockname(a[0] as i32, a[1], a[2]),
        sys::GETPEERNAME => socket::getpeername(a[0] as i32, a[1], a[2]),
        sys::SETSOCKOPT => {
            socket::setsockopt(a[0] as i32, a[1] as i32, a[2] as i32, a[3], a[4] as u32)
        }
        sys::GETSOCKOPT => socket::getsockopt(a[0] as i32, a[1] as i32, a[2] as i32, a[3], a[4]),
        sys::MSGGET => ipc::msgget(a[0] as i32, a[1] as u32),
        sys::MSGSND => ipc::msgsnd(a[0] as i32, a[1], a[2], a[3] as u32),
        sys::MSGRCV => ipc::msgrcv(a[0] as i32, a[1], a[2], a[3] as i64, a[4] as u32),
        sys::MSGCTL => ipc::msgctl(a[0] as i32, a[1] as i32, a[2]),
        sys::SEMGET => ipc::semget(a[0] as i32, a[1] as i32, a[2] as u32),
        sys::SEMOP => ipc::semtimedop(a[0] as i32, a[1], a[2], 0),
        sys::SEMTIMEDOP => ipc::semtimedop(a[0] as i32, a[1], a[2], a[3]),
        sys::SEMCTL => ipc::semctl(a[0] as i32, a[1] as i32, a[2] as i32, a[3]),
        sys::SHMGET => ipc::shmget(a[0] as i32, a[1], a[2] as u32),
        sys::SHMAT => ipc::shmat(a[0] as i32, a[1], a[2] as u32),
        sys::SHMDT => ipc::shmdt(a[0]),
        sys::SHMCTL => ipc::shmctl(a[0] as i32, a[1] as i32, a[2]),
        sys::BRK => mem::brk(a[0]),
        sys::MMAP => mem::mmap(a[0], a[1], a[2] as u32, a[3] as u32, a[4] as i32, a[5]),
        sys::MSYNC => mem::msync(a[0], a[1], a[2] as u32),
        sys::MUNMAP => mem::munmap(a[0], a[1]),
        sys::MPROTECT => mem::mprotect(a[0], a[1], a[2] as u32),
        sys::MREMAP => mem::mremap(a[0], a[1], a[2], a[3] as u32, a[4]),
        sys::MADVISE => mem::madvise(a[0], a[1], a[2] as u32),
        sys::MLOCK => mem::mlock2(a[0], a[1], 0),
        sys::MLOCK2 => mem::mlock2(a[0], a[1], a[2] as u32),
        sys::MEMBARRIER => mem::membarrier(a[0] as u32, a[1] as u32),
        sys::MUNLOCK => mem::munlock(a[0], a[1]),
        sys::MLOCKALL => mem::mlockall(a[0] as u32),
        sys::MUNLOCKALL => Ok(0),
        sys::CLONE => process::clone(tf, a[0], a[1], a[2], a[3], a[4]),
        sys::FORK => process::fork(tf),
        sys::VFORK => process::vfork(tf),
        sys::EXECVE => process::execve(tf, a[0], a[1], a[2]),
        sys::EXECVEAT => process::execveat(tf, a[0] as i32, a[1], a[2], a[3], a[4] as u32),
        sys::EXIT => process::exit(a[0] as i32),
        sys::EXIT_GROUP => process::exit_group(a[0] as i32),
        sys::WAIT4 => process::wait4(a[0] as i32, a[1], a[2] as u32, a[3]),
        sys::WAITID => process::waitid(a[0] as u32, a[1] as i32, a[2], a[3] as u32, a[4]),
        sys::KILL => signal::kill(a[0] as i32, a[1] as u32),
        sys::TKILL => signal::tgkill(-1, a[0] as i32, a[1] as u32),
        sys::TGKILL => signal::tgkill(a[0] as i32, a[1] as i32, a[2] as u32),
        sys::RT_SIGACTION => signal::rt_sigaction(a[0] as u32, a[1], a[2], a[3]),
        sys::RT_SIGPROCMASK => signal::rt_sigprocmask(a[0] as u32, a[1], a[2], a[3]),
        sys::RT_SIGRETURN => signal::rt_sigreturn(tf),
        sys::RT_SIGPENDING => signal::rt_sigpending(a[0], a[1]),
        sys::RT_SIGSUSPEND => signal::rt_sigsuspend(a[0], a[1]),
        sys::RT_SIGTIMEDWAIT => signal::rt_sigtimedwait(a[0], a[1], a[2], a[3]),
        sys::RT_SIGQUEUEINFO => signal::rt_sigqueueinfo(a[0] as i32, a[1] as u32, a[2]),
        sys::RT_TGSIGQUEUEINFO => {
            signal::rt_tgsigqueueinfo(a[0] as i32, a[1] as i32, a[2] as u32, a[3])
        }
        sys::PAUSE => signal::pause(),
        sys::SIGALTSTACK => signal::sigaltstack(a[0], a[1]),
        sys::GETITIMER => signal::getitimer(a[0] as u32, a[1]),
        sys::SETITIMER => signal::setitimer(a[0] as u32, a[1], a[2]),
        sys::ALARM => signal::alarm(a[0] as u32),
        sys::SETPGID => process::setpgid(a[0] as i32, a[1] as i32),
        sys::GETPGID => process::getpgid(a[0] as i32),
        sys::GETPGRP => process::getpgid(0),
        sys::SETSID => process::setsid(),
        sys::PERSONALITY => process::personality(a[0] as u32),
        sys::GETSID => process::getsid(a[0] as i32),
        sys::GETPID => process::getpid(),
        sys::GETTID => process::gettid(),
        sys::SETXATTR => xattr::set(xattr::Target::Path(a[0]), a[1], a[2], a[3], a[4] as u32),
        sys::LSETXATTR => xattr::set(xattr::Target::Link(a[0]), a[1], a[2], a[3], a[4] as u32),
        sys::FSETXATTR => xattr::set(
            xattr::Target::Fd(a[0] as i32),
            a[1],
            a[2],
            a[3],
            a[4] as u32,
        ),
        sys::GETXATTR => xattr::get(xattr::Target::Path(a[0]), a[1], a[2], a[3]),
        sys::LGETXATTR => xattr::get(xattr::Target::Link(a[0]), a[1], a[2], a[3]),
        sys::FGETXATTR => xattr::get(xattr::Target::Fd(a[0] as i32), a[1], a[2], a[3]),
        sys::LISTXATTR => xattr::list(xattr::Target::Path(a[0]), a[1], a[2]),
        sys::LLISTXATTR => xattr::list(xattr::Target::Link(a[0]), a[1], a[2]),
        sys::FLISTXATTR => xattr::list(xattr::Target::Fd(a[0] as i32), a[1], a[2]),
        sys::REMOVEXATTR => xattr::remove(xattr::Target::Path(a[0]), a[1]),
        sys::LREMOVEXATTR => xattr::remove(xattr::Target::Link(a[0]), a[1]),
        sys::FREMOVEXATTR => xattr::remove(xattr::Target::Fd(a[0] as i32), a[1]),
        sys::SET_TID_ADDRESS => process::set_tid_address(a[0]),
        sys::FUTEX => process::futex(a[0], a[1] as u32, a[2] as u32, a[3], a[4], a[5] as u32),
        sys::SET_ROBUST_LIST => process::set_robust_list(a[0], a[1]),
        sys::FUTEX_WAITV => process::futex_waitv(a[0], a[1] as u32, a[2] as u32, a[3], a[4] as i32),
        sys::GET_ROBUST_LIST => process::get_robust_list(a[0] as i32, a[1], a[2]),
        // Not here, and said so without a log line: glibc and musl fall
        // back to clone when clone3 is ENOSYS, and glibc runs without rseq.
        sys::CLONE3 | sys::RSEQ => Err(Errno::ENOSYS),
        sys::GETPPID => process::getppid(),
        sys::GETUID => cred::getuid(),
        sys::GETGID => cred::getgid(),
        sys::GETEUID => cred::geteuid(),
        sys::GETEGID => cred::getegid(),
        sys::SETUID => cred::setuid(a[0] as u32),
        sys::SETGID => cred::setgid(a[0] as u32),
        sys::SETREUID => cred::setreuid(a[0] as u32, a[1] as u32),
        sys::SETREGID => cred::setregid(a[0] as u32, a[1] as u32),
        sys::SETRESUID => cred::setresuid(a[0] as u32, a[1] as u32, a[2] as u32),
        sys::SETRESGID => cred::setresgid(a[0] as u32, a[1] as u32, a[2] as u32),
        sys::GETRESUID => cred::getresuid(a[0], a[1], a[2]),
        sys::GETRESGID => cred::getresgid(a[0], a[1], a[2]),
        sys::SETFSUID => cred::setfsuid(a[0] as u32),
        sys::SETFSGID => cred::setfsgid(a[0] as u32),
        sys::GETGROUPS => cred::getgroups(a[0] as i32, a[1]),
        sys::CAPGET => cred::capget(a[0], a[1]),
        sys::CAPSET => cred::capset(a[0], a[1]),
        sys::SETGROUPS => cred::setgroups(a[0] as i32, a[1]),
        sys::SCHED_YIELD => process::sched_yield(),
        sys::GETPRIORITY => priority::getpriority(a[0] as u32, a[1] as u32),
        sys::SETPRIORITY => priority::setpriority(a[0] as u32, a[1] as u32, a[2] as i32 as i64),
        sys::NANOSLEEP => process::nanosleep(a[0], a[1]),
        sys::CLOCK_NANOSLEEP => process::clock_nanosleep(a[0] as u32, a[1] as u32, a[2], a[3]),
        sys::UMASK => process::umask(a[0] as u32),
        sys::SYSINFO => info::sysinfo(a[0]),
        sys::SYSLOG => info::syslog(a[0] as i32, a[1], a[2] as i32),
        sys::TIME => info::time(a[0]),
        sys::CLOCK_GETRES => info::clock_getres(a[0] as u32, a[1]),
        sys::TIMES => info::times(a[0]),
        sys::GETRUSAGE => info::getrusage(a[0] as i32, a[1]),
        sys::PRLIMIT64 => info::prlimit64(a[0] as i32, a[1] as u32, a[2], a[3]),
        sys::GETRLIMIT => info::getrlimit(a[0] as u32, a[1]),
        sys::SETRLIMIT => info::setrlimit(a[0] as u32, a[1]),
        sys::SETHOSTNAME => info::set_name(info::UtsField::Host, a[0], a[1]),
        sys::SETDOMAINNAME => info::set_name(info::UtsField::Domain, a[0], a[1]),
        sys::SCHED_SETAFFINITY => info::sched_setaffinity(a[0] as i32, a[1], a[2]),
        sys::SCHED_GETAFFINITY => info::sched_getaffinity(a[0] as i32, a[1], a[2]),
        sys::SCHED_SETPARAM => policy::sched_setparam(a[0] as i32, a[1]),
        sys::SCHED_GETPARAM => policy::sched_getparam(a[0] as i32, a[1]),
        sys::SCHED_SETSCHEDULER => policy::sched_setscheduler(a[0] as i32, a[1] as i32, a[2]),
        sys::SCHED_GETSCHEDULER => policy::sched_getscheduler(a[0] as i32),
        sys::SCHED_GET_PRIORITY_MAX => policy::sched_get_priority_max(a[0] as i32),
        sys::SCHED_GET_PRIORITY_MIN => policy::sched_get_priority_min(a[0] as i32),
        sys::SCHED_RR_GET_INTERVAL => policy::sched_rr_get_interval(a[0] as i32, a[1]),
        sys::GETCPU => info::getcpu(a[0], a[1]),
        sys::PRCTL => process::prctl(a[0] as u32, a[1]),
        sys::READLINK => fs::readlinkat(abi::types::AT_FDCWD, a[0], a[1], a[2]),
        sys::READLINKAT => fs::readlinkat(a[0] as i32, a[1], a[2], a[3]),
        sys::ARCH_PRCTL => process::arch_prctl(a[0] as u32, a[1]),
        sys::CLOCK_GETTIME => info::clock_gettime(a[0] as u32, a[1]),
        sys::GETTIMEOFDAY => info::gettimeofday(a[0], a[1]),
        sys::CLOCK_SETTIME => info::clock_settime(a[0] as u32, a[1]),
        sys::SETTIMEOFDAY => info::settimeofday(a[0], a[1]),
        sys::UNAME => info::uname(a[0]),
        sys::GETRANDOM => info::getrandom(a[0], a[1], a[2] as u32),
        sys::KINFO => info::kinfo(a[0]),
        sys::PROCLIST => info::proclist(a[0], a[1]),
        sys::POWEROFF => info::poweroff(a[0]),
        sys::EXPORT => info::export(),
        sys::PROFIL => profil::profil(a[0], a[1], a[2], a[3]),
        sys::PROFSTAT => profil::profstat(a[0] as i32, a[1]),
        sys::PROFCOST => profil::profcost(a[0]),
        sys::KBENCH => kbench::kbench(a[0] as u32, a[1] as u32, a[2]),
        sys::KGMON => kgmon::kgmon(a[0] as u32, a[1], a[2]),
        sys::KCHECK => info::kcheck(),
        nr => unknown(nr),
    };
    tf.rax = match result {
        Ok(value) => value as u64,
        Err(e) => e.as_return() as u64,
    };
}

/// Numbers already reported as unknown: one bit each below 1024, then one
/// bit for every larger number (only the first of those is reported).
static REPORTED: [AtomicU64; 17] = [const { AtomicU64::new(0) }; 17];

fn unknown(nr: usize) -> SysResult {
    let (word, bit) = if nr < 1024 {
        (nr / 64, nr % 64)
    } else {
        (16, 0)
    };
    let first_time = REPORTED[word].fetch_or(1 << bit, Ordering::Relaxed) & (1 << bit) == 0;
    if first_time {
        let (pid, name) = crate::proc::current(|p| (p.pid, p.name.clone()));
        crate::warn!("pid {pid} ({name}): unknown system call {nr}, returning ENOSYS");
    }
    Err(Errno::ENOSYS)
}
