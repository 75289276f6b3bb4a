//! `<stdlib.h>`: the C heap on top of the Rust allocator, number parsing,
//! getenv, abort.

use core::alloc::Layout;
use core::ffi::{c_char, c_int, c_long, c_void};

use super::errno::set;
use abi::Errno;

/// Each block starts with a 16-byte header holding its size, so `free`
/// can rebuild the layout; blocks are 16-byte aligned, as C expects.
const HEADER: usize = 16;

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, 16).ok()
}

#[unsafe(no_mangle)]
pub extern "C" fn malloc(size: usize) -> *mut c_void {
    let Some(layout) = layout(size) else {
        set(Errno::ENOMEM);
        return core::ptr::null_mut();
    };
    // SAFETY: the layout has a non-zero size (the header).
    let base = unsafe { alloc::alloc::alloc(layout) };
    if base.is_null() {
        set(Errno::ENOMEM);
        return core::ptr::null_mut();
    }
    // SAFETY: the block is at least HEADER bytes and 16-byte aligned.
    unsafe {
        base.cast::<usize>().write(size);
        base.add(HEADER).cast()
    }
}

/// # Safety
/// `p` must be NULL or a live pointer from malloc/calloc/realloc.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: p came from malloc, so its header is HEADER bytes before it.
    unsafe {
        let base = p.cast::<u8>().sub(HEADER);
        let size = base.cast::<usize>().read();
        alloc::alloc::dealloc(base, layout(size).expect("the layout was valid at malloc"));
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    let Some(total) = count.checked_mul(size) else {
        set(Errno::ENOMEM);
        return core::ptr::null_mut();
    };
    let p = malloc(total);
    if !p.is_null() {
        // SAFETY: p has `total` bytes.
        unsafe { core::ptr::write_bytes(p.cast::<u8>(), 0, total) };
    }
    p
}

/// # Safety
/// As for `free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() {
        return malloc(size);
    }
    let new = malloc(size);
    if !new.is_null() {
        // SAFETY: both blocks are live; the old size is in its header.
        unsafe {
            let old = p.cast::<u8>().sub(HEADER).cast::<usize>().read();
            core::ptr::copy_nonoverlapping(p.cast::<u8>(), new.cast::<u8>(), old.min(size));
            free(p);
        }
    }
    new
}

/// strtol with bases 0 (prefix decides), 8, 10, 16.
///
/// # Safety
/// `s` must be a NUL-terminated string; `end` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn strtol(s: *const c_char, end: *mut *mut c_char, base: c_int) -> c_long {
    // SAFETY: forwarded from the caller.
    let bytes = unsafe { super::cbytes(s) };
    let mut i = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let negative = bytes.get(i) == Some(&b'-');
    if matches!(bytes.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut base = base as u32;
    let hex_prefix = bytes.get(i) == Some(&b'0') && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
    if (base == 0 || base == 16) && hex_prefix {
        base = 16;
        i += 2;
    } else if base == 0 {
        base = if bytes.get(i) == Some(&b'0') { 8 } else { 10 };
    }
    let mut value: i64 = 0;
    while let Some(d) = bytes.get(i).and_then(|&b| (b as char).to_digit(base)) {
        value = value.saturating_mul(base as i64).saturating_add(d as i64);
        i += 1;
    }
    if !end.is_null() {
        // SAFETY: `end` is writable; the result points into `s`.
        unsafe { *end = s.add(i).cast_mut() };
    }
    if negative { -value } else { value }
}

/// # Safety
/// `s` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn atoi(s: *const c_char) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { strtol(s, core::ptr::null_mut(), 10) as c_int }
}

/// # Safety
/// `s` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn atol(s: *const c_char) -> c_long {
    // SAFETY: forwarded from the caller.
    unsafe { strtol(s, core::ptr::null_mut(), 10) }
}

#[unsafe(no_mangle)]
pub extern "C" fn abs(n: c_int) -> c_int {
    n.wrapping_abs()
}

/// # Safety
/// `name` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getenv(name: *const c_char) -> *const c_char {
    // SAFETY: forwarded from the caller.
    let Some(name) = (unsafe { super::cstr(name) }) else {
        return core::ptr::null();
    };
    crate::env::vars()
        .find_map(|v| v.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
        .map_or(core::ptr::null(), |value| value.as_ptr().cast())
}

/// Ends the process with SIGABRT.
#[unsafe(no_mangle)]
pub extern "C" fn abort() -> ! {
    let _ = crate::sys::kill(crate::sys::getpid() as i32, abi::types::SIGABRT);
    crate::sys::exit(134)
}
