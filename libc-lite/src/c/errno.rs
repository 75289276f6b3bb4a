//! errno: one per process (programs here have one thread).

use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, Ordering};

static ERRNO: AtomicI32 = AtomicI32::new(0);

/// What `errno` expands to in `<errno.h>`.
#[unsafe(no_mangle)]
pub extern "C" fn __errno_location() -> *mut c_int {
    ERRNO.as_ptr()
}

pub fn set(e: abi::Errno) {
    ERRNO.store(e.0, Ordering::Relaxed);
}

/// The C convention: the value, or -1 with errno set.
pub fn ret<T: TryInto<i64>>(r: Result<T, abi::Errno>) -> i64 {
    match r {
        Ok(v) => v.try_into().unwrap_or(i64::MAX),
        Err(e) => {
            set(e);
            -1
        }
    }
}
