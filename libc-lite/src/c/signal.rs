//! Signals and interval timers with C signatures (`<signal.h>`,
//! `<sys/time.h>`). `struct sigaction` is the kernel's own layout (handler,
//! flags, restorer, a 64-bit mask), so nothing is translated; code written
//! for glibc or musl that sets the fields by name compiles unchanged.

use core::ffi::{c_int, c_uint};

use super::errno::{ret, set};
use crate::signal::{self as sig, ItimerVal, SigAction, SigSet};
use abi::Errno;
use abi::signal::{NSIG, SIG_DFL, SIG_IGN};

/// A signal number as a bit, or EINVAL.
fn bit(signal: c_int) -> Option<SigSet> {
    (signal > 0 && (signal as u32) < NSIG).then(|| abi::signal::sig_bit(signal as u32))
}

/// sigaction(2).
///
/// # Safety
/// `act` and `old` must each be null or point to a `struct sigaction`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigaction(
    signal: c_int,
    act: *const SigAction,
    old: *mut SigAction,
) -> c_int {
    // SAFETY: the caller passes a valid pointer or null.
    let new = unsafe { act.as_ref() }.map(|a| match a.handler {
        SIG_DFL | SIG_IGN => *a,
        _ => sig::with_restorer(*a),
    });
    match sig::rt_sigaction(signal as u32, new.as_ref()) {
        Ok(previous) => {
            if !old.is_null() {
                // SAFETY: as above.
                unsafe { *old = previous };
            }
            0
        }
        Err(e) => ret::<i64>(Err(e)) as c_int,
    }
}

/// signal(3) with BSD semantics (the handler stays, interrupted calls
/// restart), as glibc gives it. Returns the old handler, or SIG_ERR (-1).
#[unsafe(no_mangle)]
pub extern "C" fn signal(signal: c_int, handler: usize) -> usize {
    let action = SigAction {
        handler: handler as u64,
        flags: abi::signal::SA_RESTART,
        ..SigAction::default()
    };
    // SAFETY: both pointers are to locals.
    let mut old = SigAction::default();
    match unsafe { sigaction(signal, &action, &mut old) } {
        0 => old.handler as usize,
        _ => usize::MAX,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn raise(signal: c_int) -> c_int {
    ret(sig::raise(signal as u32).map(|()| 0)) as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn alarm(seconds: c_uint) -> c_uint {
    sig::alarm(seconds)
}

#[unsafe(no_mangle)]
pub extern "C" fn pause() -> c_int {
    set(sig::pause());
    -1
}

/// # Safety
/// `set` and `old` must each be null or point to a `sigset_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigprocmask(how: c_int, new: *const SigSet, old: *mut SigSet) -> c_int {
    let result = match unsafe { new.as_ref() } {
        // SAFETY (both arms): pointers from the caller, valid or null.
        Some(set) => sig::sigprocmask(how as u32, *set),
        None => Ok(sig::blocked()),
    };
    match result {
        Ok(previous) => {
            if let Some(old) = unsafe { old.as_mut() } {
                *old = previous;
            }
            0
        }
        Err(e) => ret::<i64>(Err(e)) as c_int,
    }
}

/// # Safety
/// `mask` must point to a `sigset_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigsuspend(mask: *const SigSet) -> c_int {
    // SAFETY: the caller passes a valid mask.
    set(sig::sigsuspend(unsafe { *mask }));
    -1
}

/// # Safety
/// `set` must point to a `sigset_t` (for all five functions below).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigemptyset(set: *mut SigSet) -> c_int {
    // SAFETY: the caller passes a valid set.
    unsafe { *set = 0 };
    0
}

/// # Safety
/// As for sigemptyset.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigfillset(set: *mut SigSet) -> c_int {
    // SAFETY: the caller passes a valid set.
    unsafe { *set = SigSet::MAX };
    0
}

/// # Safety
/// As for sigemptyset.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigaddset(set: *mut SigSet, signal: c_int) -> c_int {
    let Some(b) = bit(signal) else {
        set_einval();
        return -1;
    };
    // SAFETY: the caller passes a valid set.
    unsafe { *set |= b };
    0
}

/// # Safety
/// As for sigemptyset.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigdelset(set: *mut SigSet, signal: c_int) -> c_int {
    let Some(b) = bit(signal) else {
        set_einval();
        return -1;
    };
    // SAFETY: the caller passes a valid set.
    unsafe { *set &= !b };
    0
}

/// # Safety
/// As for sigemptyset.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigismember(set: *const SigSet, signal: c_int) -> c_int {
    let Some(b) = bit(signal) else {
        set_einval();
        return -1;
    };
    // SAFETY: the caller passes a valid set.
    c_int::from(unsafe { *set } & b != 0)
}

fn set_einval() {
    set(Errno::EINVAL);
}

/// # Safety
/// `new` must point to a `struct itimerval`; `old` be null or point to one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn setitimer(
    which: c_int,
    new: *const ItimerVal,
    old: *mut ItimerVal,
) -> c_int {
    // SAFETY: pointers from the caller.
    let Some(new) = (unsafe { new.as_ref() }) else {
        set(Errno::EFAULT);
        return -1;
    };
    match sig::setitimer(which as u32, new) {
        Ok(previous) => {
            // SAFETY: pointers from the caller.
            if let Some(old) = unsafe { old.as_mut() } {
                *old = previous;
            }
            0
        }
        Err(e) => ret::<i64>(Err(e)) as c_int,
    }
}

/// # Safety
/// `out` must point to a `struct itimerval`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getitimer(which: c_int, out: *mut ItimerVal) -> c_int {
    match sig::getitimer(which as u32) {
        Ok(now) => {
            // SAFETY: the caller passes a valid pointer.
            unsafe { *out = now };
            0
        }
        Err(e) => ret::<i64>(Err(e)) as c_int,
    }
}

/// profil(2) emulated with setitimer(ITIMER_PROF) and SIGPROF, glibc's way;
/// same arguments and bins as `profil`.
///
/// # Safety
/// `samples` must stay valid for `size` bytes until profiling is off.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn profil_sigprof(
    samples: *mut u16,
    size: usize,
    offset: usize,
    scale: c_uint,
) -> c_int {
    // SAFETY: forwarded from the caller.
    ret(unsafe { crate::sigprof::profil_sigprof(samples, size, offset as u64, scale) }.map(|()| 0))
        as c_int
}
