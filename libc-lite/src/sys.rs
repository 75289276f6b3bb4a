//! System call wrappers for Rust programs: `Result<_, Errno>` instead of
//! -1 and errno, `&str` paths instead of C strings.

extern crate alloc;

use abi::Errno;
use abi::sys::*;
use abi::types::{KInfo, ProcInfo, Stat, TCGETS, TCSETS, Termios, Timespec, Utsname};
use alloc::vec::Vec;

use crate::syscall::syscall;

pub type Result<T> = core::result::Result<T, Errno>;

fn check(ret: isize) -> Result<usize> {
    Errno::from_return(ret)
}

/// Calls `f` with `s` as a NUL-terminated C string.
pub fn with_cstr<R>(s: &str, f: impl FnOnce(*const u8) -> R) -> Result<R> {
    let mut buf = [0u8; 4096];
    if s.len() >= buf.len() || s.as_bytes().contains(&0) {
        return Err(Errno::ENAMETOOLONG);
    }
    buf[..s.len()].copy_from_slice(s.as_bytes());
    Ok(f(buf.as_ptr()))
}

macro_rules! call {
    ($nr:expr $(, $arg:expr)*) => {
        // SAFETY: each wrapper passes pointers to live buffers of the sizes it
        // states, as the call's contract requires.
        check(unsafe { syscall($nr, &[$($arg as usize),*]) })
    };
}

pub fn read(fd: i32, buf: &mut [u8]) -> Result<usize> {
    call!(READ, fd, buf.as_mut_ptr(), buf.len())
}

pub fn write(fd: i32, buf: &[u8]) -> Result<usize> {
    call!(WRITE, fd, buf.as_ptr(), buf.len())
}

/// Writes all of `buf`, retrying short writes.
pub fn write_all(fd: i32, mut buf: &[u8]) -> Result<()> {
    while !buf.is_empty() {
        let n = write(fd, buf)?;
        buf = &buf[n..];
    }
    Ok(())
}

pub fn open(path: &str, flags: u32, mode: u32) -> Result<i32> {
    with_cstr(path, |p| call!(OPEN, p, flags, mode))?.map(|fd| fd as i32)
}

/// The whole file at `path`, read until end of file (a `/proc` file's
/// size says 0, so its length is not asked).
pub fn read_file(path: &str) -> Result<Vec<u8>> {
    let fd = open(path, abi::types::O_RDONLY, 0)?;
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let result = loop {
        match read(fd, &mut buf) {
            Ok(0) => break Ok(data),
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(e) => break Err(e),
        }
    };
    let _ = close(fd);
    result
}

pub fn close(fd: i32) -> Result<()> {
    call!(CLOSE, fd).map(drop)
}

pub fn lseek(fd: i32, offset: i64, whence: u32) -> Result<u64> {
    call!(LSEEK, fd, offset, whence).map(|o| o as u64)
}

pub fn stat(path: &str) -> Result<Stat> {
    let mut st = Stat::default();
    with_cstr(path, |p| call!(STAT, p, &mut st as *mut Stat))??;
    Ok(st)
}

/// stat of a symbolic link itself, not what it points to.
pub fn lstat(path: &str) -> Result<Stat> {
    let mut st = Stat::default();
    with_cstr(path, |p| call!(LSTAT, p, &mut st as *mut Stat))??;
    Ok(st)
}

/// The target of the symbolic link `path`, in `buf`.
pub fn readlink<'a>(path: &str, buf: &'a mut [u8]) -> Result<&'a str> {
    let n = with_cstr(path, |p| call!(READLINK, p, buf.as_mut_ptr(), buf.len()))??;
    core::str::from_utf8(&buf[..n]).map_err(|_| Errno::EINVAL)
}

pub fn fstat(fd: i32) -> Result<Stat> {
    let mut st = Stat::default();
    call!(FSTAT, fd, &mut st as *mut Stat)?;
    Ok(st)
}

pub fn getdents64(fd: i32, buf: &mut [u8]) -> Result<usize> {
    call!(GETDENTS64, fd, buf.as_mut_ptr(), buf.len())
}

pub fn mkdir(path: &str, mode: u32) -> Result<()> {
    with_cstr(path, |p| call!(MKDIR, p, mode))?.map(drop)
}

pub fn rmdir(path: &str) -> Result<()> {
    with_cstr(path, |p| call!(RMDIR, p))?.map(drop)
}

pub fn unlink(path: &str) -> Result<()> {
    with_cstr(path, |p| call!(UNLINK, p))?.map(drop)
}

pub fn rename(from: &str, to: &str) -> Result<()> {
    with_cstr(from, |f| with_cstr(to, |t| call!(RENAME, f, t)))??.map(drop)
}

pub fn dup(fd: i32) -> Result<i32> {
    call!(DUP, fd).map(|fd| fd as i32)
}

pub fn dup2(old: i32, new: i32) -> Result<i32> {
    call!(DUP2, old, new).map(|fd| fd as i32)
}

/// A close-on-exec copy of `fd` numbered `min` or above (F_DUPFD_CLOEXEC):
/// where a shell keeps a descriptor it redirects, out of the way.
pub fn dup_above(fd: i32, min: i32) -> Result<i32> {
    call!(FCNTL, fd, abi::types::F_DUPFD_CLOEXEC, min).map(|fd| fd as i32)
}

/// access(2): whether the caller may reach `path` as `mode` (`R_OK`
/// 4, `W_OK` 2, `X_OK` 1, `F_OK` 0).
pub fn access(path: &str, mode: u32) -> Result<()> {
    with_cstr(path, |p| call!(ACCESS, p, mode))?.map(drop)
}

/// Returns (read end, write end).
pub fn pipe() -> Result<(i32, i32)> {
    let mut fds = [0i32; 2];
    call!(PIPE, fds.as_mut_ptr())?;
    Ok((fds[0], fds[1]))
}

pub fn getcwd(buf: &mut [u8]) -> Result<&str> {
    let n = call!(GETCWD, buf.as_mut_ptr(), buf.len())?;
    core::str::from_utf8(&buf[..n.saturating_sub(1)]).map_err(|_| Errno::EINVAL)
}

pub fn chdir(path: &str) -> Result<()> {
    with_cstr(path, |p| call!(CHDIR, p))?.map(drop)
}

pub fn ftruncate(fd: i32, len: u64) -> Result<()> {
    call!(FTRUNCATE, fd, len).map(drop)
}

pub fn brk(addr: usize) -> usize {
    call!(BRK, addr).unwrap_or(0)
}

pub fn mmap_anon(len: usize, prot: u32) -> Result<*mut u8> {
    use abi::types::{MAP_ANONYMOUS, MAP_PRIVATE};
    call!(MMAP, 0, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1i64, 0).map(|a| a as *mut u8)
}

/// The terminal's local mode flags (termios `c_lflag`: ICANON, ECHO, ISIG),
/// or ENOTTY if `fd` is not a terminal.
pub fn terminal_flags(fd: i32) -> Result<u32> {
    Ok(termios(fd)?.c_lflag)
}

/// Sets the terminal's local mode flags (tcsetattr with only `c_lflag`
/// changed).
pub fn set_terminal_flags(fd: i32, lflag: u32) -> Result<()> {
    let mut t = termios(fd)?;
    t.c_lflag = lflag;
    call!(IOCTL, fd, TCSETS, &t as *const Termios).map(drop)
}

/// The terminal's settings (tcgetattr).
pub fn termios(fd: i32) -> Result<Termios> {
    let mut t = Termios::initial();
    call!(IOCTL, fd, TCGETS, &mut t as *mut Termios)?;
    Ok(t)
}

/// termios `c_lflag` bits.
pub use abi::types::{ECHO, ICANON, ISIG};

/// mremap(2); `may_move` is MREMAP_MAYMOVE.
pub fn mremap(addr: *mut u8, old_len: usize, new_len: usize, may_move: bool) -> Result<*mut u8> {
    let flags = if may_move {
        abi::types::MREMAP_MAYMOVE
    } else {
        0
    };
    call!(MREMAP, addr, old_len, new_len, flags).map(|a| a as *mut u8)
}

pub fn munmap(addr: *mut u8, len: usize) -> Result<()> {
    call!(MUNMAP, addr, len).map(drop)
}

pub fn mprotect(addr: *mut u8, len: usize, prot: u32) -> Result<()> {
    call!(MPROTECT, addr, len, prot).map(drop)
}

pub fn fork() -> Result<u32> {
    call!(FORK).map(|pid| pid as u32)
}

/// Runs `path` with `args` (argv[0] included) and the given environment;
/// returns only on failure.
pub fn execve(path: &str, args: &[&str], env: &[&str]) -> Errno {
    fn terminated(strings: &[&str]) -> (Vec<Vec<u8>>, Vec<*const u8>) {
        let owned: Vec<Vec<u8>> = strings
            .iter()
            .map(|s| s.bytes().chain(Some(0)).collect())
            .collect();
        let mut ptrs: Vec<*const u8> = owned.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(core::ptr::null());
        (owned, ptrs)
    }
    let (_argv_owned, argv) = terminated(args);
    let (_env_owned, envp) = terminated(env);
    match with_cstr(path, |p| call!(EXECVE, p, argv.as_ptr(), envp.as_ptr())) {
        Ok(Err(e)) | Err(e) => e,
        Ok(Ok(_)) => Errno::EINVAL, // execve does not return on success
    }
}

pub fn exit(status: i32) -> ! {
    // SAFETY: exit takes no pointers.
    unsafe { syscall(EXIT_GROUP, &[status as usize]) };
    unreachable!("exit returned")
}

/// Waits for a child (`pid` -1 for any); returns (pid, wait status).
pub fn wait4(pid: i32, options: u32) -> Result<(u32, i32)> {
    let mut status = 0i32;
    let got = call!(WAIT4, pid, &mut status as *mut i32, options, 0)?;
    Ok((got as u32, status))
}

pub fn waitpid(pid: i32) -> Result<i32> {
    wait4(pid, 0).map(|(_, status)| status)
}

pub fn kill(pid: i32, signal: u32) -> Result<()> {
    call!(KILL, pid, signal).map(drop)
}

/// The caller's soft and hard limit of `resource` (an `RLIMIT_*`).
pub fn getrlimit(resource: u32) -> Result<abi::types::Rlimit> {
    let mut limit = abi::types::Rlimit::default();
    call!(GETRLIMIT, resource, &mut limit as *mut abi::types::Rlimit).map(|_| limit)
}

/// Sets the caller's limit of `resource`.
pub fn setrlimit(resource: u32, limit: abi::types::Rlimit) -> Result<()> {
    call!(SETRLIMIT, resource, &limit as *const abi::types::Rlimit).map(drop)
}

pub fn getpid() -> u32 {
    call!(GETPID).unwrap_or(0) as u32
}

pub fn getppid() -> u32 {
    call!(GETPPID).unwrap_or(0) as u32
}

/// The CPU the calling thread runs on now (getcpu(2)).
pub fn getcpu() -> Result<u32> {
    let mut cpu = 0u32;
    call!(GETCPU, &mut cpu as *mut u32 as usize, 0, 0)?;
    Ok(cpu)
}

pub fn sched_yield() {
    let _ = call!(SCHED_YIELD);
}

pub fn nanosleep(nanos: u64) -> Result<()> {
    let ts = Timespec {
        tv_sec: (nanos / 1_000_000_000) as i64,
        tv_nsec: (nanos % 1_000_000_000) as i64,
    };
    call!(NANOSLEEP, &ts as *const Timespec, 0).map(drop)
}

pub fn clock_gettime(clock: u32) -> Result<Timespec> {
    let mut ts = Timespec::default();
    call!(CLOCK_GETTIME, clock, &mut ts as *mut Timespec)?;
    Ok(ts)
}

/// Monotonic nanoseconds.
pub fn monotonic_nanos() -> u64 {
    clock_gettime(1).map_or(0, |t| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

pub fn uname() -> Result<Utsname> {
    let mut u = Utsname {
        sysname: [0; 65],
        nodename: [0; 65],
        release: [0; 65],
        version: [0; 65],
        machine: [0; 65],
        domainname: [0; 65],
    };
    call!(UNAME, &mut u as *mut Utsname)?;
    Ok(u)
}

pub fn kinfo() -> Result<KInfo> {
    let mut info = KInfo::default();
    call!(KINFO, &mut info as *mut KInfo)?;
    Ok(info)
}

/// Fills `buf`; returns how many processes exist (may exceed `buf.len()`).
pub fn proclist(buf: &mut [ProcInfo]) -> Result<usize> {
    call!(PROCLIST, buf.as_mut_ptr(), buf.len())
}

/// init's: the files the boot option `export=` names go home now (once).
pub fn export_files() -> Result<()> {
    call!(EXPORT).map(drop)
}

pub fn poweroff(status: i32) -> Result<()> {
    call!(POWEROFF, status).map(drop)
}

/// Exit code of a wait status, if the process exited normally.
pub fn exited(status: i32) -> Option<i32> {
    abi::types::wait_exit_code(status)
}

/// Signal of a wait status, if the process was killed by one.
pub fn signaled(status: i32) -> Option<u32> {
    abi::types::wait_term_signal(status)
}

/// Reads the time-stamp counter.
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc is allowed in user mode (CR4.TSD is clear).
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// profil(2): `samples` gets the histogram; scale 0 turns profiling off.
pub fn profil(samples: &mut [u16], offset: u64, scale: u32) -> Result<()> {
    call!(
        PROFIL,
        samples.as_mut_ptr(),
        samples.len() * 2,
        offset,
        scale
    )
    .map(drop)
}

/// profil(2) with a raw buffer (any address, any size in bytes).
pub fn profil_raw(samples: usize, size: usize, offset: u64, scale: u32) -> Result<()> {
    call!(PROFIL, samples, size, offset, scale).map(drop)
}

/// The AIX multi-region form; `regions` must end with an entry whose
/// `p_high` is 0.
pub fn profil_regions(regions: &[abi::types::Prof]) -> Result<()> {
    call!(PROFIL, regions.as_ptr(), abi::types::PROFIL_MULTI, 0, 0).map(drop)
}

/// sprofil(3) from its C arguments: `profcnt` regions at `profp`
/// (0..=MAX_REGIONS), with `tvp` null and `flags` 0; else EINVAL.
///
/// # Safety
/// `profp` must point to `profcnt` regions (when the arguments are valid).
pub unsafe fn sprofil_from_c(
    profp: *const abi::types::Prof,
    profcnt: i32,
    tvp_is_null: bool,
    flags: u32,
) -> Result<()> {
    let count = usize::try_from(profcnt)
        .ok()
        .filter(|&n| n <= kcore::profil::MAX_REGIONS && tvp_is_null && flags == 0)
        .ok_or(Errno::EINVAL)?;
    // SAFETY: the caller's promise.
    sprofil(unsafe { core::slice::from_raw_parts(profp, count) })
}

/// sprofil(3)'s regions, as many as the kernel takes (EINVAL past
/// `MAX_REGIONS`), given to the multi-region form with its end marker.
pub fn sprofil(regions: &[abi::types::Prof]) -> Result<()> {
    if regions.len() > kcore::profil::MAX_REGIONS {
        return Err(Errno::EINVAL);
    }
    let mut terminated = [abi::types::Prof::default(); kcore::profil::MAX_REGIONS + 1];
    terminated[..regions.len()].copy_from_slice(regions);
    profil_regions(&terminated)
}

/// Profiling state and counters of `pid` (0 = this process).
pub fn profstat(pid: i32) -> Result<abi::types::ProfStat> {
    let mut stat = abi::types::ProfStat::default();
    call!(PROFSTAT, pid, &mut stat as *mut abi::types::ProfStat)?;
    Ok(stat)
}

/// The kernel's check of its own bookkeeping (frames, heap, process table):
/// Err(EIO) if something is off (the kernel says what on the console).
pub fn kcheck() -> Result<()> {
    call!(KCHECK).map(drop)
}

/// kgmon(2), the kernel's own profile: `op` is a `KGMON_*` that takes
/// no buffer, `arg` what it reads as its length (milliseconds for
/// `KGMON_SPIN`, a CPU for `KGMON_CPU_SAMPLES`). Its answer (a state, a
/// count).
pub fn kgmon(op: u32, arg: u64) -> Result<usize> {
    call!(KGMON, op, 0usize, arg)
}

/// `KGMON_EXTRACT`: the kernel's profile as a gmon.out into `buf` (empty:
/// only its length); its length.
pub fn kgmon_extract(buf: &mut [u8]) -> Result<usize> {
    kgmon_into(abi::types::KGMON_EXTRACT, buf)
}

/// A kgmon op that fills a buffer (`KGMON_EXTRACT`, `KGMON_IRQS_OFF`):
/// into `buf` (empty: only the length); the length.
pub fn kgmon_into(op: u32, buf: &mut [u8]) -> Result<usize> {
    call!(KGMON, op, buf.as_mut_ptr(), buf.len())
}

/// What the kernel's profil path costs, in TSC cycles.
pub fn profcost() -> Result<abi::types::ProfCost> {
    let mut cost = abi::types::ProfCost::default();
    call!(PROFCOST, &mut cost as *mut abi::types::ProfCost)?;
    Ok(cost)
}

/// Anonymous memory at exactly `addr` (MAP_FIXED).
pub fn mmap_fixed(addr: usize, len: usize, prot: u32) -> Result<*mut u8> {
    use abi::types::{MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE};
    call!(
        MMAP,
        addr,
        len,
        prot,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
        -1i64,
        0
    )
    .map(|a| a as *mut u8)
}

/// mount(2); `data` is the file system's option string, if any.
pub fn mount(source: &str, target: &str, kind: &str, flags: u64, data: Option<&str>) -> Result<()> {
    with_cstr(source, |s| {
        with_cstr(target, |t| {
            with_cstr(kind, |k| {
                with_cstr(data.unwrap_or(""), |d| {
                    let d = if data.is_some() { d as usize } else { 0 };
                    call!(MOUNT, s, t, k, flags, d)
                })
            })
        })
    })????
    .map(|_| ())
}

/// umount2(2).
pub fn umount2(target: &str, flags: u32) -> Result<()> {
    with_cstr(target, |t| call!(UMOUNT2, t, flags))?.map(|_| ())
}

pub fn fsync(fd: i32) -> Result<()> {
    call!(FSYNC, fd).map(|_| ())
}

pub fn sync() {
    let _ = call!(SYNC);
}
