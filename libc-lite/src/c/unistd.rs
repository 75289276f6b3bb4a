//! Process and file calls with C signatures (`<unistd.h>`, `<fcntl.h>`,
//! `<sys/wait.h>`, `<sys/gmon.h>`' profil).

use core::ffi::{c_char, c_int, c_long, c_uint, c_void};

use super::errno::{ret, set};
use crate::syscall::syscall as raw_syscall;
use abi::{Errno, sys as nr};

fn raw(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: the C caller vouches for its pointers, as with any libc.
    Errno::from_return(unsafe { raw_syscall(number, args) })
}

/// `open(path, flags, ...)`: the mode is read only with O_CREAT.
///
/// # Safety
/// `path` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mut args: ...) -> c_int {
    let mode = if flags as u32 & abi::types::O_CREAT != 0 {
        // SAFETY: with O_CREAT the caller passes a mode.
        unsafe { args.next_arg::<c_uint>() }
    } else {
        0
    };
    ret(raw(
        nr::OPEN,
        &[path as usize, flags as usize, mode as usize],
    )) as c_int
}

/// C functions that are one system call each: the arguments go to the
/// kernel as they are (pointers too: the C caller vouches for them, and the
/// kernel checks them), and the answer is C's, the value or -1 with errno.
macro_rules! c_syscalls {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $nr:ident;)*) => {
        $(
            $(#[$doc])*
            #[unsafe(no_mangle)]
            pub extern "C" fn $name($($arg: $ty),*) -> $ret {
                ret(raw(nr::$nr, &[$($arg as usize),*])) as $ret
            }
        )*
    };
}

c_syscalls! {
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize = READ;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize = WRITE;
    fn close(fd: c_int) -> c_int = CLOSE;
    fn lseek(fd: c_int, offset: i64, whence: c_int) -> i64 = LSEEK;
    fn fork() -> c_int = FORK;
    fn execve(path: *const c_char, argv: *const *const c_char, envp: *const *const c_char) -> c_int = EXECVE;
    fn kill(pid: c_int, signal: c_int) -> c_int = KILL;
    fn pipe(fds: *mut c_int) -> c_int = PIPE;
    fn dup(fd: c_int) -> c_int = DUP;
    fn dup2(old: c_int, new: c_int) -> c_int = DUP2;
    fn unlink(path: *const c_char) -> c_int = UNLINK;
    fn mkdir(path: *const c_char, mode: c_uint) -> c_int = MKDIR;
    fn rmdir(path: *const c_char) -> c_int = RMDIR;
    fn chdir(path: *const c_char) -> c_int = CHDIR;
    fn stat(path: *const c_char, st: *mut abi::types::Stat) -> c_int = STAT;
    fn fstat(fd: c_int, st: *mut abi::types::Stat) -> c_int = FSTAT;
    fn rename(from: *const c_char, to: *const c_char) -> c_int = RENAME;
    fn munmap(addr: *mut c_void, len: usize) -> c_int = MUNMAP;
    fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int = MPROTECT;
    fn clock_gettime(clock: c_int, ts: *mut abi::types::Timespec) -> c_int = CLOCK_GETTIME;
    fn nanosleep(req: *const abi::types::Timespec, rem: *mut abi::types::Timespec) -> c_int = NANOSLEEP;
    fn uname(buf: *mut abi::types::Utsname) -> c_int = UNAME;
    /// profil(2), BSD's signature with `size_t` size; `size == (size_t)-1`
    /// selects the AIX multi-region form (`samples` is then a `struct prof *`).
    fn profil(samples: *mut u16, size: usize, offset: usize, scale: c_uint) -> c_int = PROFIL;
}

#[unsafe(no_mangle)]
pub extern "C" fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int {
    ret(raw(
        nr::WAIT4,
        &[pid as usize, status as usize, options as usize, 0],
    )) as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn wait(status: *mut c_int) -> c_int {
    waitpid(-1, status, 0)
}

#[unsafe(no_mangle)]
pub extern "C" fn _exit(status: c_int) -> ! {
    crate::sys::exit(status)
}

#[unsafe(no_mangle)]
pub extern "C" fn getpid() -> c_int {
    crate::sys::getpid() as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn getppid() -> c_int {
    crate::sys::getppid() as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn getcwd(buf: *mut c_char, size: usize) -> *mut c_char {
    match raw(nr::GETCWD, &[buf as usize, size]) {
        Ok(_) => buf,
        Err(e) => {
            set(e);
            core::ptr::null_mut()
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn usleep(micros: c_uint) -> c_int {
    ret(crate::sys::nanosleep(u64::from(micros) * 1000).map(|()| 0)) as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn sleep(seconds: c_uint) -> c_uint {
    match crate::sys::nanosleep(u64::from(seconds) * 1_000_000_000) {
        Ok(()) => 0,
        Err(_) => seconds,
    }
}

/// sbrk(2): moves the break by `increment`; returns the old break.
#[unsafe(no_mangle)]
pub extern "C" fn sbrk(increment: isize) -> *mut c_void {
    let old = crate::sys::brk(0);
    let want = old.wrapping_add_signed(increment);
    if increment != 0 && crate::sys::brk(want) != want {
        set(Errno::ENOMEM);
        return usize::MAX as *mut c_void;
    }
    old as *mut c_void
}

/// sprofil(3) as in glibc and HP-UX: several regions at once, each a
/// `struct prof` (`p_low`, `p_high`, `p_buff`, `p_bufsize`, `p_scale`);
/// `tvp` and `flags` are not supported (must be NULL and 0).
///
/// # Safety
/// `profp` must point to `profcnt` regions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sprofil(
    profp: *const abi::types::Prof,
    profcnt: c_int,
    tvp: *mut c_void,
    flags: c_uint,
) -> c_int {
    // SAFETY: the caller passes `profcnt` regions.
    let result = unsafe { crate::sys::sprofil_from_c(profp, profcnt, tvp.is_null(), flags) };
    ret(result.map(|()| 0)) as c_int
}

/// The number of clock ticks per second (sysconf(_SC_CLK_TCK)).
#[unsafe(no_mangle)]
pub extern "C" fn profkern_hz() -> c_long {
    crate::env::clock_ticks_per_second() as c_long
}

/// syscall(2): any system call by number, for everything without its own
/// wrapper (numbers in `abi::sys`, i.e. Linux's plus ours from 1000).
///
/// # Safety
/// The arguments must suit that call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn syscall(number: c_long, mut args: ...) -> c_long {
    let mut a = [0usize; 6];
    for slot in &mut a {
        // SAFETY: extra variadic reads past the caller's arguments only see
        // unused argument registers/stack slots (as glibc's syscall does).
        *slot = unsafe { args.next_arg::<usize>() };
    }
    ret(raw(number as usize, &a)) as c_long
}

#[unsafe(no_mangle)]
pub extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
) -> *mut c_void {
    match raw(
        nr::MMAP,
        &[
            addr as usize,
            len,
            prot as usize,
            flags as usize,
            fd as usize,
            off as usize,
        ],
    ) {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            set(e);
            usize::MAX as *mut c_void // MAP_FAILED
        }
    }
}
