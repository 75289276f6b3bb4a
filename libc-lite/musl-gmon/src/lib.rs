//! libgmon.a and libgmon.so: gprof's runtime for C programs, with the
//! kernel's native profil(2).
//!
//! **libgmon.a, for musl.** musl has no profiling support: `musl-gcc -pg`
//! compiles a call to `mcount` into every function and then finds no
//! `mcount`, no `gcrt1.o` and nothing that writes gmon.out. This library is
//! that support, and it is libc-lite's own: `gmon.rs` (monstartup,
//! moncontrol, _mcleanup, mcount, the gmon.out encoding in `kcore::gmon`),
//! with libc-lite's system call wrappers and output beside it, compiled
//! here a second time from the same files. Only what libc-lite's start-up
//! code would give it comes from the C library instead: the environment
//! (`environ`), the aux vector (`getauxval`: the clock rate and where the
//! program was loaded), memory (`malloc`), and exit handlers (`atexit`).
//!
//! Link it with `musl-gcc -pg -static prog.c -L DIR -lgmon` (the README's
//! gprof section; `cargo xtask prof prog.c` does it for you). The linker
//! pulls this one object in for `mcount`, and with it a constructor
//! (`.init_array`) that, before `main`, turns profiling on over the
//! program's text (`__executable_start` to `etext`, as glibc's gcrt1.o
//! does) with the kernel's native profil(2), and registers `_mcleanup` to
//! write gmon.out when the program exits. `profil` and `sprofil` are here
//! too, for programs that call them themselves.
//!
//! **libgmon.so, for glibc** (feature `preload`, built as a shared object
//! for `x86_64-unknown-linux-gnu` by `build::gmon_preload`). glibc has its
//! own runtime, but its `profil()` emulates the call with SIGPROF, and its
//! `__monstartup` calls that emulation by an internal name no preload can
//! take over. So this library, named in `LD_PRELOAD`, replaces the whole
//! runtime: a `gcc -pg` program's `mcount`, and the `__monstartup` and
//! `_mcleanup` its gcrt1.o calls at start-up and registers for exit, all
//! bind to the first definition the loader finds, which is here. There is
//! no constructor: gcrt1.o starts profiling itself, over the program's own
//! text.

#![no_std]
#![allow(dead_code)] // libc-lite's wrappers: this library uses a few

extern crate alloc;

use core::ffi::{c_int, c_uint, c_ulong, c_void};

#[path = "../../src/syscall.rs"]
mod syscall;

#[path = "../../src/sys.rs"]
#[allow(unused_imports)]
mod sys;

#[path = "../../src/io.rs"]
#[macro_use]
mod io;

#[path = "../../src/gmon.rs"]
mod gmon;

/// What gmon.rs reads of the process's start-up state, from musl.
mod env {
    use core::ffi::{c_char, c_ulong};

    unsafe extern "C" {
        static environ: *const *const c_char;
        fn getauxval(key: c_ulong) -> c_ulong;
    }

    /// The environment, `NAME=value` strings.
    pub fn vars() -> impl Iterator<Item = &'static str> {
        // SAFETY: musl's environ is null or a NULL-terminated array of C
        // strings that outlives the program's exit handlers.
        let envp = unsafe { environ };
        let entry = move |i: usize| {
            // SAFETY: entries up to the terminating NULL are in the array.
            (!envp.is_null()).then(|| unsafe { *envp.add(i) })
        };
        (0..)
            .map_while(entry)
            .take_while(|p| !p.is_null())
            // SAFETY: each entry is a NUL-terminated string.
            .map(|p| unsafe { core::ffi::CStr::from_ptr(p) })
            .map(|s| s.to_str().unwrap_or(""))
    }

    /// The value of aux vector entry `key`, if the kernel gave one
    /// (getauxval's 0 is taken for none: no entry gmon.rs asks for is 0).
    pub fn auxv(key: u64) -> Option<u64> {
        // SAFETY: getauxval only reads the aux vector.
        let value = unsafe { getauxval(key as c_ulong) };
        (value != 0).then_some(value)
    }

    /// The kernel's clock rate (the aux vector's `AT_CLKTCK`).
    pub fn clock_ticks_per_second() -> u64 {
        // SAFETY: getauxval only reads the aux vector.
        let hz = unsafe { getauxval(abi::types::AT_CLKTCK as c_ulong) };
        if hz == 0 { 100 } else { hz }
    }
}

// The shared object says it needs libc (it is preloaded into programs that
// have it anyway); the static library leaves that to the link.
#[cfg_attr(feature = "preload", link(name = "c"))]
unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
    fn aligned_alloc(align: usize, size: usize) -> *mut c_void;
    fn __errno_location() -> *mut c_int;
}

// What only the static library's constructor uses: glibc's libc.so has no
// `atexit` (it is in libc_nonshared.a), and a shared object has no text
// bounds of the program's.
#[cfg(not(feature = "preload"))]
unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> c_int;
    static __executable_start: u8;
    static etext: u8;
}

/// The profile's buffers come from musl's malloc.
struct MuslHeap;

// SAFETY: musl's allocator returns memory suitably aligned (aligned_alloc
// for alignments above 16) or null, and free takes what it returned.
unsafe impl core::alloc::GlobalAlloc for MuslHeap {
    unsafe fn alloc(&self, layout: core::alloc::Layout) -> *mut u8 {
        // SAFETY: forwarded to musl.
        unsafe {
            if layout.align() <= 16 {
                malloc(layout.size()).cast()
            } else {
                aligned_alloc(layout.align(), layout.size()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: core::alloc::Layout) {
        // SAFETY: ptr came from alloc above.
        unsafe { free(ptr.cast()) }
    }
}

#[global_allocator]
static HEAP: MuslHeap = MuslHeap;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    eprintln!("gmon: {info}");
    sys::exit(127)
}

/// Before main: profiling on over the whole text, gmon.out at exit.
#[cfg(not(feature = "preload"))]
extern "C" fn start_profiling() {
    // The linker defines both symbols; only their addresses are used.
    let (low, high) = (
        &raw const __executable_start as usize,
        &raw const etext as usize,
    );
    gmon::monstartup(low, high);
    // SAFETY: _mcleanup is an ordinary function of no arguments.
    unsafe { atexit(gmon::_mcleanup) };
}

#[cfg(not(feature = "preload"))]
#[used]
#[unsafe(link_section = ".init_array")]
static START: extern "C" fn() = start_profiling;

// The shared object is built against Rust's core and alloc for
// x86_64-unknown-linux-gnu, which are compiled to unwind: their landing
// pads name the unwinder's `_Unwind_Resume` and the personality routine
// that Rust's std would define. This library aborts on panic, so neither
// can run; both are defined here as a trap, hidden, so that the library
// needs nothing but libc and takes no unwinder over from the program it is
// preloaded into (a C++ program's `_Unwind_Resume` stays its own).
#[cfg(feature = "preload")]
core::arch::global_asm!(
    ".globl _Unwind_Resume",
    ".hidden _Unwind_Resume",
    ".globl rust_eh_personality",
    ".hidden rust_eh_personality",
    "_Unwind_Resume:",
    "rust_eh_personality:",
    "ud2",
);

/// glibc's name for monstartup, which its gcrt1.o calls before `main` with
/// the program's text (`__executable_start` to `etext`).
#[cfg(feature = "preload")]
#[unsafe(no_mangle)]
pub extern "C" fn __monstartup(lowpc: usize, highpc: usize) {
    gmon::monstartup(lowpc, highpc)
}

/// C's answer: the value, or -1 with musl's errno set.
fn c_result(result: Result<(), abi::Errno>) -> c_int {
    match result {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: musl's errno of the calling thread.
            unsafe { *__errno_location() = e.0 as c_int };
            -1
        }
    }
}

/// profil(2), the kernel's native call: BSD's signature with `size_t` size;
/// `size == (size_t)-1` selects the AIX multi-region form.
#[unsafe(no_mangle)]
pub extern "C" fn profil(samples: *mut u16, size: usize, offset: c_ulong, scale: c_uint) -> c_int {
    c_result(sys::profil_raw(samples as usize, size, offset, scale))
}

/// sprofil(3): several regions at once (`struct prof`); `tvp` and `flags`
/// must be NULL and 0.
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
    c_result(unsafe { sys::sprofil_from_c(profp, profcnt, tvp.is_null(), flags) })
}
