//! The C interface: what a C program compiled with
//! `gcc -ffreestanding -nostdlib -static` and linked with `liblibc_lite.a`
//! finds, declared by the headers in `libc-lite/include/`.
//!
//! Each function is a thin layer over the Rust side: the system call
//! wrappers in `sys.rs`, the heap, the exit handlers, the profiling runtime.
//! Failures set `errno` and return -1 (or NULL), as C expects.
//! `memcpy`, `memmove`, `memset` and `memcmp` come from Rust's
//! compiler_builtins, which the static library already contains.

pub mod errno;
pub mod signal;
pub mod stdio;
pub mod stdlib;
pub mod string;
pub mod unistd;

use core::ffi::c_char;

/// The bytes of the NUL-terminated C string at `s`.
///
/// # Safety
/// `s` must point to a NUL-terminated string.
pub unsafe fn cbytes<'a>(s: *const c_char) -> &'a [u8] {
    // SAFETY: forwarded from the caller.
    unsafe { core::ffi::CStr::from_ptr(s).to_bytes() }
}

/// `s` as UTF-8 (paths and names are passed on as they are; invalid UTF-8
/// is refused with EINVAL by the callers).
///
/// # Safety
/// `s` must point to a NUL-terminated string.
pub unsafe fn cstr<'a>(s: *const c_char) -> Option<&'a str> {
    // SAFETY: forwarded from the caller.
    core::str::from_utf8(unsafe { cbytes(s) }).ok()
}
