//! The vDSO: the kernel's code that runs in user mode.
//!
//! Every process gets this small shared object mapped by exec
//! (`kernel/src/vdso.rs`), and finds it through `AT_SYSINFO_EHDR` in its
//! auxiliary vector; musl and glibc look up `__vdso_clock_gettime` and the
//! others in its symbol table (version `LINUX_2.6`, as on Linux) and call
//! them instead of making the system call. What they answer comes from the
//! clock page, mapped read-only the page before this image: the state the
//! kernel's tick publishes under a sequence lock (`kcore::vdso`, which this
//! crate compiles in), plus the TSC, read here with RDTSC.
//!
//! The rules of a vDSO, which `kernel/build.rs` checks on the result: no
//! relocations (nobody would apply them: the image is mapped as it is, at
//! an address chosen per process), no data of its own (the image is
//! shared by every process), and no calls out (there is no library here).
//! A clock the page cannot answer, or a page the kernel has not filled
//! yet, goes to the system call, as Linux's vDSO falls back.

#![no_std]

use core::arch::asm;

use abi::signal::Timeval;
use abi::sys;
use abi::types::Timespec;

#[path = "../../kcore/src/vdso.rs"]
#[allow(dead_code)]
mod clock;

use clock::{Base, Clock, ClockPage, Time};

/// The clock page: the page before this image's first byte, where exec
/// maps it. `__ehdr_start` is the linker's name for that first byte (the
/// ELF header), so the address is the image's own, wherever it was put.
fn clock_page() -> &'static ClockPage {
    let image: usize;
    // SAFETY: an address computation, relative to the instruction.
    unsafe { asm!("lea {}, [rip + __ehdr_start]", out(reg) image, options(nomem, nostack, pure)) };
    // SAFETY: exec maps the kernel's clock page, read-only, at the page
    // before the image for as long as the image is mapped (a process that
    // unmaps one and not the other has broken its own vDSO, as on Linux);
    // `ClockPage` is all atomics, so the kernel's writes are no race.
    unsafe { &*((image - 4096) as *const ClockPage) }
}

/// The TSC, read after every load before it (LFENCE), as Linux's
/// `rdtsc_ordered`: a processor that ran RDTSC early, ahead of the clock
/// page's loads, could pair a state with a reading from before it.
fn rdtsc() -> u64 {
    let (low, high): (u32, u32);
    // SAFETY: RDTSC reads the time-stamp counter; the kernel leaves
    // CR4.TSD clear, so it is allowed in user mode.
    unsafe { asm!("lfence", "rdtsc", out("eax") low, out("edx") high, options(nomem, nostack)) };
    (u64::from(high) << 32) | u64::from(low)
}

/// The page's state, or None when the kernel says to ask it.
fn base() -> Option<Base> {
    let base = clock_page().read();
    base.user_tsc.then_some(base)
}

fn syscall2(number: usize, a: usize, b: usize) -> isize {
    let ret: isize;
    // SAFETY: the system call instruction; it clobbers rcx and r11, and
    // the kernel checks the pointers it is given.
    unsafe {
        asm!("syscall", inlateout("rax") number as isize => ret, in("rdi") a, in("rsi") b,
             lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ret
}

fn now(clock: Clock) -> Option<Time> {
    let base = base()?;
    Some(base.now(clock, rdtsc()))
}

/// clock_gettime(2): the clocks of `kcore::vdso::Clock` here, the others
/// by the system call. `ts` is the caller's, as with the system call; a
/// bad pointer faults in the caller (as on Linux, where the vDSO's store
/// gives SIGSEGV, not EFAULT).
///
/// # Safety
/// The pointers are the caller's, as for the system call: null where the
/// call allows it, or valid for the store.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __vdso_clock_gettime(id: u32, ts: *mut Timespec) -> isize {
    match Clock::from_id(id).and_then(now) {
        Some(time) => {
            // SAFETY: the caller passed `ts` for this store, as to the
            // system call.
            unsafe {
                ts.write(Timespec {
                    tv_sec: time.sec as i64,
                    tv_nsec: time.nsec as i64,
                })
            };
            0
        }
        None => syscall2(sys::CLOCK_GETTIME, id as usize, ts as usize),
    }
}

/// gettimeofday(2): the wall clock in microseconds; a timezone, when
/// asked for, is UTC's (zeros), as the system call gives.
///
/// # Safety
/// The pointers are the caller's, as for the system call: null where the
/// call allows it, or valid for the store.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __vdso_gettimeofday(tv: *mut Timeval, tz: *mut [i32; 2]) -> isize {
    let Some(time) = now(Clock::Realtime) else {
        return syscall2(sys::GETTIMEOFDAY, tv as usize, tz as usize);
    };
    if !tv.is_null() {
        // SAFETY: the caller's pointer, as above.
        unsafe {
            tv.write(Timeval {
                tv_sec: time.sec as i64,
                tv_usec: (time.nsec / 1000) as i64,
            })
        };
    }
    if !tz.is_null() {
        // SAFETY: the caller's pointer, as above.
        unsafe { tz.write([0, 0]) };
    }
    0
}

/// time(2): the wall clock's seconds as of the last tick, as Linux's
/// `time` answers (so it may be a second behind `clock_gettime` just after
/// a second begins, on Linux as here).
///
/// # Safety
/// The pointers are the caller's, as for the system call: null where the
/// call allows it, or valid for the store.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __vdso_time(out: *mut i64) -> i64 {
    let Some(time) = now(Clock::RealtimeCoarse) else {
        return syscall2(sys::TIME, out as usize, 0) as i64;
    };
    let seconds = time.sec as i64;
    if !out.is_null() {
        // SAFETY: the caller's pointer, as above.
        unsafe { out.write(seconds) };
    }
    seconds
}

/// getcpu(2): the CPU this thread runs on, from the limit of the GDT
/// descriptor each CPU has for it (`kcore::vdso::CPU_NUMBER_SELECTOR`),
/// read with LSL; the node is always 0. As with the system call, the
/// answer may be stale by the time the caller reads it.
///
/// # Safety
/// The pointers are the caller's, as for the system call: null where the
/// call allows it, or valid for the store.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __vdso_getcpu(cpu: *mut u32, node: *mut u32, _cache: usize) -> isize {
    let limit: u32;
    // SAFETY: LSL reads a descriptor's limit; the descriptor is a ring-3
    // data segment every CPU's GDT has at this selector.
    unsafe {
        asm!("lsl {0:e}, {1:e}", out(reg) limit, in(reg) u32::from(clock::CPU_NUMBER_SELECTOR),
             options(nomem, nostack));
    }
    if !cpu.is_null() {
        // SAFETY: the caller's pointer, as above.
        unsafe { cpu.write(limit) };
    }
    if !node.is_null() {
        // SAFETY: the caller's pointer, as above.
        unsafe { node.write(0) };
    }
    0
}

/// clock_getres(2) is the kernel's: the vDSO has it only so a program
/// that looks for it finds it, and passes it on.
#[unsafe(no_mangle)]
pub extern "C" fn __vdso_clock_getres(id: u32, res: *mut Timespec) -> isize {
    syscall2(sys::CLOCK_GETRES, id as usize, res as usize)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Nothing here panics (build.rs would find the panic machinery's
    // symbols undefined); should it, the process stops at once.
    // SAFETY: ud2 raises #UD, which the kernel turns into SIGILL.
    unsafe { asm!("ud2", options(nomem, nostack, noreturn)) }
}

// Linux's vDSO also answers to the plain names, as weak aliases.
core::arch::global_asm!(
    ".weak clock_gettime",
    ".set clock_gettime, __vdso_clock_gettime",
    ".weak gettimeofday",
    ".set gettimeofday, __vdso_gettimeofday",
    ".weak time",
    ".set time, __vdso_time",
    ".weak getcpu",
    ".set getcpu, __vdso_getcpu",
    ".weak clock_getres",
    ".set clock_getres, __vdso_clock_getres",
);
