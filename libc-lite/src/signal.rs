//! Signals and interval timers for Rust programs: handlers, masks, timers,
//! process groups.
//!
//! Every handler is installed with `SA_RESTORER` pointing at `__restore_rt`,
//! the two instructions that call `rt_sigreturn` when a handler returns (the
//! kernel puts its address where the handler's `ret` finds it). The name is
//! the one glibc and musl use, so GDB recognises signal frames in backtraces.

use abi::Errno;
use abi::signal::*;
use abi::sys::*;

use crate::sys::Result;
use crate::syscall::syscall;

pub use abi::signal::{ItimerVal, SigAction, SigInfo, SigSet, Timeval, UContext};

core::arch::global_asm!(
    ".globl __restore_rt",
    ".type __restore_rt, @function",
    "__restore_rt:",
    "mov eax, {nr}",
    "syscall",
    "ud2",
    ".size __restore_rt, . - __restore_rt",
    nr = const RT_SIGRETURN,
);

unsafe extern "C" {
    fn __restore_rt();
}

macro_rules! call {
    ($nr:expr $(, $arg:expr)*) => {
        // SAFETY: each wrapper passes pointers to live values of the sizes
        // the call expects.
        Errno::from_return(unsafe { syscall($nr, &[$($arg as usize),*]) })
    };
}

/// A simple handler: gets the signal number.
pub type SimpleHandler = extern "C" fn(i32);
/// An `SA_SIGINFO` handler: also gets the siginfo and the interrupted context.
pub type InfoHandler = extern "C" fn(i32, *mut SigInfo, *mut UContext);

/// What a signal should do.
#[derive(Clone, Copy)]
pub enum Handler {
    Default,
    Ignore,
    Simple(SimpleHandler),
    Info(InfoHandler),
}

/// rt_sigaction with the kernel's structure: the new action (if any) and
/// the old one.
pub fn rt_sigaction(signal: u32, new: Option<&SigAction>) -> Result<SigAction> {
    let mut old = SigAction::default();
    let new_ptr = new.map_or(core::ptr::null(), |a| a as *const SigAction);
    call!(RT_SIGACTION, signal, new_ptr, &mut old as *mut SigAction, 8)?;
    Ok(old)
}

/// Installs `handler` for `signal` with `flags` (SA_RESTART, SA_NODEFER, ...)
/// and `mask` blocked while it runs; returns the previous action.
pub fn sigaction(signal: u32, handler: Handler, flags: u64, mask: SigSet) -> Result<SigAction> {
    let (address, extra) = match handler {
        Handler::Default => (SIG_DFL, 0),
        Handler::Ignore => (SIG_IGN, 0),
        Handler::Simple(f) => (f as usize as u64, 0),
        Handler::Info(f) => (f as usize as u64, SA_SIGINFO),
    };
    rt_sigaction(
        signal,
        Some(&with_restorer(SigAction {
            handler: address,
            flags: flags | extra,
            restorer: 0,
            mask,
        })),
    )
}

/// `action` with this library's restorer filled in.
pub fn with_restorer(action: SigAction) -> SigAction {
    SigAction {
        flags: action.flags | SA_RESTORER,
        restorer: __restore_rt as *const () as u64,
        ..action
    }
}

/// The action now in place for `signal`.
pub fn action_of(signal: u32) -> Result<SigAction> {
    rt_sigaction(signal, None)
}

/// rt_sigprocmask; returns the previous mask.
pub fn sigprocmask(how: u32, set: SigSet) -> Result<SigSet> {
    let mut old: SigSet = 0;
    call!(
        RT_SIGPROCMASK,
        how,
        &set as *const SigSet,
        &mut old as *mut SigSet,
        8
    )?;
    Ok(old)
}

/// The signals blocked now.
pub fn blocked() -> SigSet {
    let mut old: SigSet = 0;
    let _ = call!(RT_SIGPROCMASK, SIG_BLOCK, 0, &mut old as *mut SigSet, 8);
    old
}

/// Signals pending while blocked.
pub fn sigpending() -> Result<SigSet> {
    let mut set: SigSet = 0;
    call!(RT_SIGPENDING, &mut set as *mut SigSet, 8)?;
    Ok(set)
}

/// Waits for a signal with `mask` blocked meanwhile; returns after its
/// handler ran (the result is always EINTR).
pub fn sigsuspend(mask: SigSet) -> Errno {
    call!(RT_SIGSUSPEND, &mask as *const SigSet, 8)
        .err()
        .unwrap_or(Errno::EINTR)
}

/// Waits for any signal that runs a handler.
pub fn pause() -> Errno {
    call!(PAUSE).err().unwrap_or(Errno::EINTR)
}

/// Sends `signal` to this process.
pub fn raise(signal: u32) -> Result<()> {
    crate::sys::kill(crate::sys::getpid() as i32, signal)
}

/// alarm(2): SIGALRM in `seconds`; returns the seconds the last one had left.
pub fn alarm(seconds: u32) -> u32 {
    call!(ALARM, seconds).unwrap_or(0) as u32
}

/// setitimer(2); returns the old value.
pub fn setitimer(which: u32, value: &ItimerVal) -> Result<ItimerVal> {
    let mut old = ItimerVal::default();
    call!(
        SETITIMER,
        which,
        value as *const ItimerVal,
        &mut old as *mut ItimerVal
    )?;
    Ok(old)
}

pub fn getitimer(which: u32) -> Result<ItimerVal> {
    let mut now = ItimerVal::default();
    call!(GETITIMER, which, &mut now as *mut ItimerVal)?;
    Ok(now)
}

/// An itimerval firing every `interval_us` microseconds, first after `value_us`.
pub fn itimerval(value_us: u64, interval_us: u64) -> ItimerVal {
    let tv = |us: u64| Timeval {
        tv_sec: (us / 1_000_000) as i64,
        tv_usec: (us % 1_000_000) as i64,
    };
    ItimerVal {
        interval: tv(interval_us),
        value: tv(value_us),
    }
}

/// sigaltstack(2): `sp..sp+size` becomes the stack for SA_ONSTACK handlers
/// (`None` turns it off); returns the old one.
pub fn sigaltstack(stack: Option<(u64, u64)>) -> Result<StackT> {
    let new = match stack {
        Some((sp, size)) => StackT::new(sp, 0, size),
        None => StackT::new(0, SS_DISABLE, 0),
    };
    let mut old = StackT::default();
    call!(SIGALTSTACK, &new as *const StackT, &mut old as *mut StackT)?;
    Ok(old)
}

pub fn setpgid(pid: i32, pgid: i32) -> Result<()> {
    call!(SETPGID, pid, pgid).map(drop)
}

pub fn getpgid(pid: i32) -> Result<u32> {
    call!(GETPGID, pid).map(|g| g as u32)
}

/// Makes `pgid` the terminal's foreground group (the one Ctrl-C signals).
pub fn tcsetpgrp(fd: i32, pgid: u32) -> Result<()> {
    let pgid = pgid as i32;
    call!(IOCTL, fd, abi::types::TIOCSPGRP, &pgid as *const i32).map(drop)
}

/// A signal's name ("SIGINT"), or "signal" for one without a name.
pub fn name(signal: u32) -> &'static str {
    SIGNAL_NAMES
        .get((signal as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("signal")
}

/// A signal number from a name ("TERM", "SIGTERM") or a number ("15").
pub fn parse(text: &str) -> Option<u32> {
    if let Ok(n) = text.parse::<u32>() {
        return (n < NSIG).then_some(n);
    }
    let bare = text.strip_prefix("SIG").unwrap_or(text);
    SIGNAL_NAMES
        .iter()
        .position(|n| n.strip_prefix("SIG") == Some(bare))
        .map(|i| i as u32 + 1)
}
