//! The rules of signals and interval timers, apart from the mechanism that
//! applies them (kernel/src/signal.rs): what a signal does by default, which
//! pending signal goes first, where the signal frame goes on the user stack,
//! which flags a handler may set, and tick arithmetic for setitimer.

use abi::signal::*;

/// What a signal does to a process that has no handler for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultAction {
    Terminate,
    /// Terminate with a core dump (kernel/src/proc/coredump.rs), if
    /// RLIMIT_CORE allows one; the wait status then carries WCOREFLAG.
    Core,
    Ignore,
    Stop,
    Continue,
}

/// The default action of `signal` (signal(7)).
pub fn default_action(signal: u32) -> DefaultAction {
    match signal {
        SIGCHLD | SIGURG | SIGWINCH => DefaultAction::Ignore,
        SIGCONT => DefaultAction::Continue,
        SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => DefaultAction::Stop,
        SIGQUIT | SIGILL | SIGTRAP | SIGABRT | SIGBUS | SIGFPE | SIGSEGV | SIGXCPU | SIGXFSZ
        | SIGSYS => DefaultAction::Core,
        _ => DefaultAction::Terminate,
    }
}

/// Signals no process can catch, block or ignore.
pub const UNCATCHABLE: SigSet = sig_bit(SIGKILL) | sig_bit(SIGSTOP);

/// Signals whose default action stops the process.
pub const STOP_SIGNALS: SigSet =
    sig_bit(SIGSTOP) | sig_bit(SIGTSTP) | sig_bit(SIGTTIN) | sig_bit(SIGTTOU);

/// Signals the CPU raises for a faulting instruction; they go first, so a
/// handler sees the fault before anything else that is pending.
pub const SYNCHRONOUS: SigSet = sig_bit(SIGSEGV)
    | sig_bit(SIGBUS)
    | sig_bit(SIGILL)
    | sig_bit(SIGTRAP)
    | sig_bit(SIGFPE)
    | sig_bit(SIGSYS);

/// All valid signals.
pub const ALL: SigSet = u64::MAX;

/// Whether `signal` is a signal number (1..=64).
pub fn valid(signal: u32) -> bool {
    (1..NSIG).contains(&signal)
}

/// The signal to deliver next from `pending` while `blocked` are blocked:
/// synchronous (fault) signals first, then the lowest number, as Linux does.
pub fn next(pending: SigSet, blocked: SigSet) -> Option<u32> {
    let ready = pending & !(blocked & !UNCATCHABLE);
    let first = if ready & SYNCHRONOUS != 0 {
        ready & SYNCHRONOUS
    } else {
        ready
    };
    (first != 0).then(|| first.trailing_zeros() + 1)
}

/// What a mask a process asks for may contain.
pub fn sanitize_mask(mask: SigSet) -> SigSet {
    mask & !UNCATCHABLE
}

/// The new blocked set for rt_sigprocmask's `how`, or None if `how` is invalid.
pub fn apply_mask(old: SigSet, how: u32, set: SigSet) -> Option<SigSet> {
    let new = match how {
        SIG_BLOCK => old | set,
        SIG_UNBLOCK => old & !set,
        SIG_SETMASK => set,
        _ => return None,
    };
    Some(sanitize_mask(new))
}

/// Bytes below the user's stack pointer that the System V ABI lets leaf
/// functions use without moving rsp; a signal frame must not overwrite them.
pub const RED_ZONE: u64 = 128;

/// Bytes of the FXSAVE image a signal frame carries.
pub const FPU_STATE_SIZE: u64 = 512;

/// Where a signal frame of `size` bytes and the FPU image under it start,
/// for a stack whose pointer was `sp` (or the top of the alternate stack,
/// with no red zone to skip), as Linux lays them out: the FPU image below
/// the red zone, 64-byte aligned; the frame below it, aligned so that
/// rsp + 8 is a multiple of 16 when the handler starts, as after a `call`.
/// Returns (frame, fpu image), or None if the stack would wrap below 0.
pub fn frame_layout(sp: u64, size: u64, skip_red_zone: bool) -> Option<(u64, u64)> {
    let below = if skip_red_zone { RED_ZONE } else { 0 };
    let fpu = sp.checked_sub(below)?.checked_sub(FPU_STATE_SIZE)? & !63;
    let frame = (fpu.checked_sub(size)? & !15).checked_sub(8)?;
    Some((frame, fpu))
}

/// The most stack `frame_layout` takes below `sp` for a frame of `size`
/// bytes on an alternate stack (no red zone to skip): what exec tells a
/// program in `AT_MINSIGSTKSZ`, so that it can size a `sigaltstack` that
/// always holds a handler's frame.
pub const fn frame_stack_bytes(size: u64) -> u64 {
    // The FPU area's 64-byte alignment, the frame's 16 and the return
    // address slot, each at its worst.
    FPU_STATE_SIZE + 63 + size + 15 + 8
}

/// The rflags bits a handler's context may change on the way back
/// (CF, PF, AF, ZF, SF, TF, DF, OF, RF, AC: Linux's FIX_EFLAGS); the rest
/// (IF, IOPL, VM, ...) stay what the kernel says.
pub const USER_FLAGS: u64 =
    EFL_CF | EFL_PF | EFL_AF | EFL_ZF | EFL_SF | EFL_TF | EFL_DF | EFL_OF | EFL_RF | EFL_AC;

/// rflags after sigreturn: the user's choice of `USER_FLAGS`, the rest from `current`.
pub fn restored_flags(current: u64, from_user: u64) -> u64 {
    (current & !USER_FLAGS) | (from_user & USER_FLAGS)
}

/// Ticks a `Timeval` lasts at `hz`, rounded up: a timer never fires early,
/// and any nonzero time is at least one tick. None if the value is invalid.
pub fn ticks_from_timeval(tv: Timeval, hz: u64) -> Option<u64> {
    if tv.tv_sec < 0 || !(0..1_000_000).contains(&tv.tv_usec) {
        return None;
    }
    let micros = tv.tv_sec as u128 * 1_000_000 + tv.tv_usec as u128;
    let ticks = (micros * hz as u128).div_ceil(1_000_000);
    Some(ticks.min(u64::MAX as u128) as u64)
}

/// The time `ticks` last at `hz`.
pub fn timeval_from_ticks(ticks: u64, hz: u64) -> Timeval {
    let micros = ticks as u128 * 1_000_000 / hz.max(1) as u128;
    Timeval {
        tv_sec: (micros / 1_000_000) as i64,
        tv_usec: (micros % 1_000_000) as i64,
    }
}

/// One interval timer, counted in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    /// Ticks to the next expiry; 0 = disarmed.
    pub value: u64,
    /// Reload value after an expiry; 0 = one-shot.
    pub interval: u64,
}

impl Timer {
    pub const OFF: Timer = Timer {
        value: 0,
        interval: 0,
    };

    /// A timer set now to expire after `value` ticks, then every `interval`.
    ///
    /// The tick in progress when it is set is already partly over, so
    /// counting it as a whole one would fire the timer up to a tick early:
    /// the first expiry counts one tick more (as Linux's jiffies timers
    /// do), and the timer never fires before `value` full ticks have passed.
    /// Reloads happen on a tick, so the interval needs no such tick.
    pub fn armed(value: u64, interval: u64) -> Timer {
        Timer {
            value: if value == 0 {
                0
            } else {
                value.saturating_add(1)
            },
            interval,
        }
    }

    /// Whole ticks left before the next expiry, for getitimer and alarm:
    /// the partial tick in progress is not counted, but an armed timer
    /// always has some time left (0 means disarmed).
    pub fn ticks_left(&self) -> u64 {
        match self.value {
            0 => 0,
            1 => 1,
            v => v - 1,
        }
    }

    /// Counts one tick; true if the timer expired on it (and then reloads).
    pub fn tick(&mut self) -> bool {
        if self.value == 0 {
            return false;
        }
        self.value -= 1;
        if self.value == 0 {
            self.value = self.interval;
            return true;
        }
        false
    }
}

/// ITIMER_REAL: wall-clock time, on the monotonic clock (nanoseconds since
/// boot), not counted in ticks. The clock interrupt asks it at every tick
/// whether its time has come, so it fires at the first tick at or after
/// the deadline: never early, even when a host too busy to run the machine
/// lets the timer hardware deliver missed ticks in a burst (counting them
/// fired a 50 ms timer after 28 ms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RealTimer {
    /// When it next fires; None: disarmed.
    pub deadline: Option<u64>,
    /// Nanoseconds between expiries; 0: one-shot.
    pub interval: u64,
}

impl RealTimer {
    /// Set at `now` to fire `value` ns later (0: disarmed), then every
    /// `interval` ns.
    pub fn armed(now: u64, value: u64, interval: u64) -> RealTimer {
        RealTimer {
            deadline: (value != 0).then(|| now.saturating_add(value)),
            interval,
        }
    }

    /// At a tick at `now`: true if the timer expired, and then it reloads
    /// (past `now`: expiries a late tick missed are folded into this one,
    /// as Linux's hrtimer_forward does) or disarms.
    pub fn expired(&mut self, now: u64) -> bool {
        let Some(at) = self.deadline else {
            return false;
        };
        if now < at {
            return false;
        }
        self.deadline = (self.interval != 0).then(|| {
            let missed = (now - at) / self.interval + 1;
            at.saturating_add(missed.saturating_mul(self.interval))
        });
        true
    }

    /// Nanoseconds left at `now`: at least 1 µs while armed (Linux's
    /// getitimer never says 0 for a timer that has not fired yet).
    pub fn left(&self, now: u64) -> u64 {
        self.deadline
            .map_or(0, |at| at.saturating_sub(now).max(1000))
    }
}

/// The nanoseconds a timeval says; None if it is not normalised.
pub fn nanos_from_timeval(tv: Timeval) -> Option<u64> {
    if tv.tv_sec < 0 || !(0..1_000_000).contains(&tv.tv_usec) {
        return None;
    }
    let nanos = tv.tv_sec as u128 * 1_000_000_000 + tv.tv_usec as u128 * 1000;
    Some(nanos.min(u64::MAX as u128) as u64)
}

/// The timeval of `nanos`, rounded up to whole microseconds (so an armed
/// timer never reads as 0).
pub fn timeval_from_nanos(nanos: u64) -> Timeval {
    let micros = nanos.div_ceil(1000);
    Timeval {
        tv_sec: (micros / 1_000_000) as i64,
        tv_usec: (micros % 1_000_000) as i64,
    }
}

/// alarm(2)'s answer for `nanos` left: whole seconds, rounded to the
/// nearest, but at least 1 while any time is left (Linux's rule).
pub fn alarm_seconds_from_nanos(nanos: u64) -> u64 {
    if nanos == 0 {
        return 0;
    }
    ((nanos + 500_000_000) / 1_000_000_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_never_takes_more_than_frame_stack_bytes() {
        let size = 440;
        for sp in (0x7000_0000u64..0x7000_0100).chain([0x7fff_ffff_f000]) {
            let (frame, _) = frame_layout(sp, size, false).unwrap();
            assert!(sp - frame <= frame_stack_bytes(size), "sp {sp:#x}");
        }
    }

    #[test]
    fn a_real_timer_fires_at_its_deadline_and_not_before() {
        let mut t = RealTimer::armed(1_000, 50_000_000, 0);
        // A burst of ticks at nearly the same time does not fire it.
        for now in [1_000, 2_000, 27_626_199, 50_000_999] {
            assert!(!t.expired(now), "fired at {now}");
        }
        assert!(t.expired(50_001_000));
        assert_eq!(t.deadline, None);
        assert!(!t.expired(60_000_000));
    }

    #[test]
    fn a_periodic_real_timer_folds_missed_expiries_into_one() {
        let mut t = RealTimer::armed(0, 10, 10);
        assert!(t.expired(10));
        assert_eq!(t.deadline, Some(20));
        // A tick late by three periods: one expiry, the next in the future.
        assert!(t.expired(45));
        assert_eq!(t.deadline, Some(50));
        assert_eq!(t.left(45), 1000);
        assert_eq!(RealTimer::armed(0, 0, 10).deadline, None);
    }

    #[test]
    fn timevals_and_alarm_seconds() {
        let tv = |s, us| Timeval {
            tv_sec: s,
            tv_usec: us,
        };
        assert_eq!(nanos_from_timeval(tv(1, 500)), Some(1_000_500_000));
        assert_eq!(nanos_from_timeval(tv(0, 1_000_000)), None);
        assert_eq!(nanos_from_timeval(tv(-1, 0)), None);
        assert_eq!(timeval_from_nanos(1), tv(0, 1));
        assert_eq!(timeval_from_nanos(2_000_000_001), tv(2, 1));
        assert_eq!(alarm_seconds_from_nanos(0), 0);
        assert_eq!(alarm_seconds_from_nanos(1), 1);
        assert_eq!(alarm_seconds_from_nanos(4_499_999_999), 4);
        assert_eq!(alarm_seconds_from_nanos(4_500_000_000), 5);
    }

    #[test]
    fn defaults_follow_signal_7() {
        assert_eq!(default_action(SIGCHLD), DefaultAction::Ignore);
        assert_eq!(default_action(SIGSEGV), DefaultAction::Core);
        assert_eq!(default_action(SIGTERM), DefaultAction::Terminate);
        assert_eq!(default_action(SIGPROF), DefaultAction::Terminate);
        assert_eq!(default_action(SIGTSTP), DefaultAction::Stop);
        assert_eq!(default_action(SIGCONT), DefaultAction::Continue);
        assert_eq!(default_action(40), DefaultAction::Terminate);
    }

    #[test]
    fn next_prefers_faults_then_lowest_and_respects_blocking() {
        let p = sig_bit(SIGUSR1) | sig_bit(SIGTERM) | sig_bit(SIGSEGV) | sig_bit(SIGINT);
        assert_eq!(next(p, 0), Some(SIGSEGV));
        assert_eq!(next(p, sig_bit(SIGSEGV)), Some(SIGINT));
        assert_eq!(next(p, sig_bit(SIGSEGV) | sig_bit(SIGINT)), Some(SIGUSR1));
        assert_eq!(next(p, ALL), None);
        assert_eq!(
            next(sig_bit(SIGKILL), ALL),
            Some(SIGKILL),
            "SIGKILL cannot be blocked"
        );
        assert_eq!(next(sig_bit(64), 0), Some(64));
        assert_eq!(next(0, 0), None);
    }

    #[test]
    fn masks_never_hold_kill_or_stop() {
        assert_eq!(apply_mask(0, SIG_BLOCK, ALL), Some(ALL & !UNCATCHABLE));
        assert_eq!(apply_mask(0b110, SIG_UNBLOCK, 0b10), Some(0b100));
        assert_eq!(apply_mask(0b110, SIG_SETMASK, 0b1), Some(0b1));
        assert_eq!(apply_mask(0, 3, 1), None);
    }

    #[test]
    fn frame_is_below_the_red_zone_and_aligned_like_a_call() {
        let sp = 0x7fff_1234;
        let (f, fpu) = frame_layout(sp, 440, true).unwrap();
        assert!(fpu + FPU_STATE_SIZE <= sp - RED_ZONE && fpu.is_multiple_of(64));
        assert!(sp - RED_ZONE - (fpu + FPU_STATE_SIZE) < 64);
        assert!(f + 440 <= fpu);
        assert!((f + 8).is_multiple_of(16));
        assert!(fpu - (f + 440) < 32);
        let (f, fpu) = frame_layout(0x1000, 440, false).unwrap();
        assert!(fpu + FPU_STATE_SIZE <= 0x1000 && (f + 8).is_multiple_of(16) && f + 440 <= fpu);
        assert_eq!(frame_layout(1000, 440, true), None, "no wrap below 0");
    }

    #[test]
    fn flags_a_handler_cannot_change() {
        let kernel = 0x202; // IF
        assert_eq!(restored_flags(kernel, 0), 0x202, "IF stays on");
        assert_eq!(restored_flags(kernel, 0x3000), 0x202, "IOPL stays 0");
        assert_eq!(restored_flags(kernel, 0x8d5), 0x202 | 0x8d5);
    }

    #[test]
    fn timeval_ticks_round_trip_and_round_up() {
        let tv = |s, u| Timeval {
            tv_sec: s,
            tv_usec: u,
        };
        assert_eq!(ticks_from_timeval(tv(0, 0), 1000), Some(0));
        assert_eq!(ticks_from_timeval(tv(0, 1), 1000), Some(1));
        assert_eq!(ticks_from_timeval(tv(0, 1000), 1000), Some(1));
        assert_eq!(ticks_from_timeval(tv(0, 1001), 1000), Some(2));
        assert_eq!(ticks_from_timeval(tv(2, 500_000), 100), Some(250));
        assert_eq!(ticks_from_timeval(tv(-1, 0), 100), None);
        assert_eq!(ticks_from_timeval(tv(0, 1_000_000), 100), None);
        assert_eq!(timeval_from_ticks(250, 100), tv(2, 500_000));
        assert_eq!(timeval_from_ticks(1, 1000), tv(0, 1000));
    }

    /// A timer set for N ticks never fires before N whole ticks: the tick
    /// it was set in counts only as the part that is left.
    #[test]
    fn a_timer_never_fires_early() {
        for n in [1u64, 2, 50] {
            let mut t = Timer::armed(n, 0);
            assert_eq!(t.ticks_left(), n, "getitimer right after setting {n}");
            for i in 1..=n {
                assert!(!t.tick(), "set for {n} ticks, fired on tick {i}");
            }
            assert!(t.tick(), "set for {n} ticks, not fired on tick {}", n + 1);
        }
        let mut periodic = Timer::armed(2, 5);
        assert!(!periodic.tick() && !periodic.tick() && periodic.tick());
        for _ in 0..4 {
            assert!(!periodic.tick(), "the interval is counted from a tick");
        }
        assert!(periodic.tick());
        assert_eq!(
            Timer::armed(0, 7),
            Timer {
                value: 0,
                interval: 7
            }
        );
        assert_eq!(Timer::armed(0, 0).ticks_left(), 0);
    }

    #[test]
    fn timers_reload_or_stop() {
        let mut t = Timer {
            value: 2,
            interval: 3,
        };
        assert!(!t.tick());
        assert!(t.tick());
        assert_eq!(t.value, 3);
        let mut once = Timer {
            value: 1,
            interval: 0,
        };
        assert!(once.tick());
        assert!(!once.tick());
        assert_eq!(once, Timer::OFF);
        let mut off = Timer::OFF;
        assert!(!off.tick());
    }
}
