//! The program's arguments, environment and aux vector.

use core::sync::atomic::Ordering;

use crate::start::{ARGC, ARGV, AUXV, ENVP};

/// Reads the NUL-terminated string at `ptr`.
///
/// # Safety
/// `ptr` must point to a NUL-terminated string that lives forever.
pub unsafe fn cstr(ptr: *const u8) -> &'static str {
    // SAFETY: forwarded from the caller.
    unsafe {
        let mut len = 0;
        while *ptr.add(len) != 0 {
            len += 1;
        }
        core::str::from_utf8(core::slice::from_raw_parts(ptr, len)).unwrap_or("?")
    }
}

/// The arguments, program name first.
pub fn args() -> impl ExactSizeIterator<Item = &'static str> + Clone {
    let argv = ARGV.load(Ordering::Relaxed);
    // SAFETY: start_main stored argc pointers to strings the kernel put on the
    // stack, which lives as long as the program.
    (0..ARGC.load(Ordering::Relaxed)).map(move |i| unsafe { cstr(*argv.add(i)) })
}

/// The environment, as `NAME=value` strings.
pub fn vars() -> impl Iterator<Item = &'static str> {
    let envp = ENVP.load(Ordering::Relaxed);
    (0..)
        // SAFETY: envp is a NULL-terminated array the kernel built.
        .map(move |i| unsafe { *envp.add(i) })
        .take_while(|p| !p.is_null())
        // SAFETY: each entry is a string on the initial stack.
        .map(|p| unsafe { cstr(p) })
}

/// The value of aux vector entry `key`.
pub fn auxv(key: u64) -> Option<u64> {
    let mut at = AUXV.load(Ordering::Relaxed);
    if at.is_null() {
        return None;
    }
    loop {
        // SAFETY: the aux vector is (key, value) pairs ending with AT_NULL.
        let (k, v) = unsafe { (*at, *at.add(1)) };
        if k == abi::types::AT_NULL {
            return None;
        }
        if k == key {
            return Some(v);
        }
        // SAFETY: not yet at AT_NULL, so the next pair exists.
        at = unsafe { at.add(2) };
    }
}

/// Clock ticks per second, as the kernel's aux vector says (AT_CLKTCK, the
/// boot option hz); 100, the traditional value, if it says nothing.
pub fn clock_ticks_per_second() -> u64 {
    auxv(abi::types::AT_CLKTCK).unwrap_or(100).max(1)
}

/// The program's name (the last part of argv[0]).
pub fn program_name() -> &'static str {
    args()
        .next()
        .map(|a| a.rsplit('/').next().unwrap_or(a))
        .unwrap_or("?")
}
