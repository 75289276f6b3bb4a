//! `<string.h>` (the mem* functions come from compiler_builtins).

use core::ffi::{c_char, c_int};

macro_rules! c_fns {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block)*) => {
        $(
            $(#[$doc])*
            /// # Safety
            /// Pointer arguments must be valid NUL-terminated strings or
            /// buffers of the sizes C's contract for this function states.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                // SAFETY: forwarded from the caller.
                unsafe { $body }
            }
        )*
    };
}

c_fns! {
    fn strlen(s: *const c_char) -> usize {
        let mut n = 0;
        while *s.add(n) != 0 {
            n += 1;
        }
        n
    }

    fn strnlen(s: *const c_char, max: usize) -> usize {
        let mut n = 0;
        while n < max && *s.add(n) != 0 {
            n += 1;
        }
        n
    }

    fn strcmp(a: *const c_char, b: *const c_char) -> c_int {
        strncmp(a, b, usize::MAX)
    }

    fn strncmp(a: *const c_char, b: *const c_char, n: usize) -> c_int {
        let mut i = 0;
        while i < n {
            let (x, y) = (*a.add(i) as u8, *b.add(i) as u8);
            if x != y || x == 0 {
                return c_int::from(x) - c_int::from(y);
            }
            i += 1;
        }
        0
    }

    fn strcpy(dst: *mut c_char, src: *const c_char) -> *mut c_char {
        let n = strlen(src);
        core::ptr::copy_nonoverlapping(src, dst, n + 1);
        dst
    }

    fn strncpy(dst: *mut c_char, src: *const c_char, n: usize) -> *mut c_char {
        let len = strnlen(src, n);
        core::ptr::copy_nonoverlapping(src, dst, len);
        core::ptr::write_bytes(dst.add(len), 0, n - len);
        dst
    }

    fn strcat(dst: *mut c_char, src: *const c_char) -> *mut c_char {
        strcpy(dst.add(strlen(dst)), src);
        dst
    }

    fn strchr(s: *const c_char, c: c_int) -> *mut c_char {
        let mut p = s;
        loop {
            if *p as u8 == c as u8 {
                return p.cast_mut();
            }
            if *p == 0 {
                return core::ptr::null_mut();
            }
            p = p.add(1);
        }
    }

    fn strrchr(s: *const c_char, c: c_int) -> *mut c_char {
        let mut found = core::ptr::null_mut();
        let mut p = s;
        loop {
            if *p as u8 == c as u8 {
                found = p.cast_mut();
            }
            if *p == 0 {
                return found;
            }
            p = p.add(1);
        }
    }

    fn strstr(hay: *const c_char, needle: *const c_char) -> *mut c_char {
        let n = strlen(needle);
        let mut p = hay;
        loop {
            if strncmp(p, needle, n) == 0 {
                return p.cast_mut();
            }
            if *p == 0 {
                return core::ptr::null_mut();
            }
            p = p.add(1);
        }
    }

    fn strdup(s: *const c_char) -> *mut c_char {
        let n = strlen(s) + 1;
        let p = super::stdlib::malloc(n).cast::<c_char>();
        if !p.is_null() {
            core::ptr::copy_nonoverlapping(s, p, n);
        }
        p
    }
}

/// The message for error number `e`, from the one errno table (`abi`).
#[unsafe(no_mangle)]
pub extern "C" fn strerror(e: c_int) -> *const c_char {
    struct Buffer(core::cell::UnsafeCell<[u8; 64]>);
    // SAFETY: programs here are single-threaded; like C's strerror, the
    // string is valid until the next call.
    unsafe impl Sync for Buffer {}
    static MESSAGE: Buffer = Buffer(core::cell::UnsafeCell::new([0; 64]));
    let text = if e == 0 {
        "Success"
    } else {
        abi::Errno(e).message()
    };
    // SAFETY: see Buffer.
    let buf = unsafe { &mut *MESSAGE.0.get() };
    let n = text.len().min(buf.len() - 1);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    buf[n] = 0;
    buf.as_ptr().cast()
}
