//! Scheduling policies: the rules of sched_setscheduler(2) and its family,
//! and what each policy this kernel runs buys a thread.
//!
//! Linux has two kinds of policy. The normal ones share the CPU by weight:
//! SCHED_OTHER weighs a thread by its nice (`kcore::nice`), SCHED_BATCH
//! likewise but never preempts on a wakeup, and SCHED_IDLE gives the
//! thread a weight of 3, below nice 19's 15, so it runs when nothing else
//! wants to. The real-time ones (SCHED_FIFO and SCHED_RR, priority 1 to
//! 99, and SCHED_DEADLINE above them) always run before any normal thread.
//!
//! The round-robin scheduler here has only the normal kind. OTHER and
//! BATCH slice by nice alike (a round robin never preempts on a wakeup, so
//! BATCH's one difference is already the rule), and IDLE slices by Linux's
//! idle weight. A real-time request is checked as Linux checks it (the
//! priority in range, else EINVAL; the caller's right, else EPERM) and then
//! refused with EPERM, the answer Linux itself gives a task whose group has
//! no real-time runtime (`cpu.rt_runtime_us` 0). So a program that asks for
//! real time learns that it did not get it, rather than believing it did.

use abi::Errno;
use abi::types::{
    SCHED_BATCH, SCHED_DEADLINE, SCHED_FIFO, SCHED_IDLE, SCHED_OTHER, SCHED_RESET_ON_FORK, SCHED_RR,
};

/// The highest real-time priority (Linux's MAX_RT_PRIO - 1).
pub const MAX_RT_PRIORITY: u32 = 99;

/// Linux's weight for a SCHED_IDLE thread (WEIGHT_IDLEPRIO), against nice
/// 0's 1024.
const IDLE_WEIGHT: u32 = 3;

/// A policy a thread here can have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    #[default]
    Other,
    Batch,
    Idle,
}

impl Policy {
    /// Its number, as sched_getscheduler returns it.
    pub fn raw(self) -> u32 {
        match self {
            Policy::Other => SCHED_OTHER,
            Policy::Batch => SCHED_BATCH,
            Policy::Idle => SCHED_IDLE,
        }
    }

    /// Ticks in the time slice of a thread with this policy and `nice`,
    /// when a nice 0 SCHED_OTHER thread's is `base`: at least one.
    pub fn slice_ticks(self, base: u32, nice: i32) -> u32 {
        match self {
            Policy::Other | Policy::Batch => crate::nice::slice_ticks(base, nice),
            Policy::Idle => {
                let scaled =
                    u64::from(base) * u64::from(IDLE_WEIGHT) / u64::from(crate::nice::weight(0));
                u32::try_from(scaled).unwrap_or(u32::MAX).max(1)
            }
        }
    }
}

/// What a policy number names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Normal(Policy),
    RealTime,
    Deadline,
}

/// The policy number `raw` (without SCHED_RESET_ON_FORK); EINVAL for one
/// Linux does not have.
fn kind(raw: u32) -> Result<Kind, Errno> {
    match raw {
        SCHED_OTHER => Ok(Kind::Normal(Policy::Other)),
        SCHED_BATCH => Ok(Kind::Normal(Policy::Batch)),
        SCHED_IDLE => Ok(Kind::Normal(Policy::Idle)),
        SCHED_FIFO | SCHED_RR => Ok(Kind::RealTime),
        SCHED_DEADLINE => Ok(Kind::Deadline),
        _ => Err(Errno::EINVAL),
    }
}

/// sched_get_priority_max(2): 99 for the real-time policies, 0 for the
/// others; EINVAL for a number that is no policy.
pub fn priority_max(raw: i32) -> Result<u32, Errno> {
    let raw = u32::try_from(raw).map_err(|_| Errno::EINVAL)?;
    Ok(match kind(raw)? {
        Kind::RealTime => MAX_RT_PRIORITY,
        Kind::Normal(_) | Kind::Deadline => 0,
    })
}

/// sched_get_priority_min(2): 1 for the real-time policies, 0 for the
/// others; EINVAL for a number that is no policy.
pub fn priority_min(raw: i32) -> Result<u32, Errno> {
    let raw = u32::try_from(raw).map_err(|_| Errno::EINVAL)?;
    Ok(match kind(raw)? {
        Kind::RealTime => 1,
        Kind::Normal(_) | Kind::Deadline => 0,
    })
}

/// A thread's scheduling, as sched_setscheduler sets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scheduling {
    pub policy: Policy,
    /// SCHED_RESET_ON_FORK: children start without a negative nice.
    pub reset_on_fork: bool,
}

impl Scheduling {
    /// What sched_getscheduler returns: the policy, with
    /// SCHED_RESET_ON_FORK or'ed in when it is set.
    pub fn raw(self) -> u32 {
        self.policy.raw()
            | if self.reset_on_fork {
                SCHED_RESET_ON_FORK
            } else {
                0
            }
    }

    /// A new thread's scheduling, from its creator's, as Linux's
    /// `sched_fork` makes it: the flag is not passed on (with it, a
    /// real-time policy would go back to SCHED_OTHER; there is none here).
    pub fn for_child(self) -> Scheduling {
        Scheduling {
            policy: self.policy,
            reset_on_fork: false,
        }
    }

    /// A new thread's nice, from its creator's `nice`: with the flag, a
    /// negative one goes back to 0.
    pub fn child_nice(self, nice: i32) -> i32 {
        if self.reset_on_fork {
            nice.max(0)
        } else {
            nice
        }
    }
}

/// What the caller asks, from sched_setscheduler's `policy` or, for
/// sched_setparam, `None` (keep the policy).
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub policy: Option<u32>,
    /// `sched_param.sched_priority`, taken as Linux takes it: unsigned, so
    /// a negative one is out of range.
    pub priority: i32,
}

/// Who is asking about whom.
#[derive(Clone, Copy, Debug)]
pub struct Asker {
    /// Holds CAP_SYS_NICE.
    pub privileged: bool,
    /// Its effective uid is the target's real or effective uid.
    pub same_owner: bool,
    /// The target's RLIMIT_NICE, which lets an unprivileged thread leave
    /// SCHED_IDLE if it would allow the thread's nice.
    pub nice_limit: u64,
}

/// The scheduling `target` (now at `nice`) gets from `request`, or the
/// error Linux would give, in Linux's order (`__sched_setscheduler`): an
/// unknown policy or a priority wrong for it is EINVAL, then a caller
/// without the right is EPERM, then a real-time policy is EPERM (see the
/// top of the file).
pub fn set(
    target: Scheduling,
    nice: i32,
    request: Request,
    asker: Asker,
) -> Result<Scheduling, Errno> {
    let (raw, reset_on_fork) = match request.policy {
        None => (target.policy.raw(), target.reset_on_fork),
        Some(raw) => (raw & !SCHED_RESET_ON_FORK, raw & SCHED_RESET_ON_FORK != 0),
    };
    let kind = kind(raw)?;
    let priority = request.priority as u32;
    if priority > MAX_RT_PRIORITY {
        return Err(Errno::EINVAL);
    }
    match kind {
        // A deadline needs the runtime and period only sched_setattr gives.
        Kind::Deadline => return Err(Errno::EINVAL),
        Kind::RealTime if priority == 0 => return Err(Errno::EINVAL),
        Kind::Normal(_) if priority != 0 => return Err(Errno::EINVAL),
        _ => {}
    }
    if !asker.privileged {
        let leaving_idle = target.policy == Policy::Idle && kind != Kind::Normal(Policy::Idle);
        // Linux's can_nice: the nice, as 20 - nice, within RLIMIT_NICE.
        if leaving_idle && (20 - i64::from(nice)) as u64 > asker.nice_limit {
            return Err(Errno::EPERM);
        }
        if !asker.same_owner || (target.reset_on_fork && !reset_on_fork) {
            return Err(Errno::EPERM);
        }
    }
    match kind {
        Kind::Normal(policy) => Ok(Scheduling {
            policy,
            reset_on_fork,
        }),
        Kind::RealTime | Kind::Deadline => Err(Errno::EPERM),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: Asker = Asker {
        privileged: false,
        same_owner: true,
        nice_limit: 0,
    };
    const STRANGER: Asker = Asker {
        privileged: false,
        same_owner: false,
        nice_limit: 0,
    };
    const ROOT: Asker = Asker {
        privileged: true,
        same_owner: false,
        nice_limit: 0,
    };

    fn ask(policy: u32, priority: i32) -> Request {
        Request {
            policy: Some(policy),
            priority,
        }
    }

    #[test]
    fn priority_ranges_are_linuxs() {
        assert_eq!(priority_max(SCHED_FIFO as i32), Ok(99));
        assert_eq!(priority_min(SCHED_RR as i32), Ok(1));
        assert_eq!(priority_max(SCHED_OTHER as i32), Ok(0));
        assert_eq!(priority_min(SCHED_DEADLINE as i32), Ok(0));
        assert_eq!(priority_max(4), Err(Errno::EINVAL));
        assert_eq!(priority_min(-23), Err(Errno::EINVAL));
    }

    #[test]
    fn the_normal_policies_are_set_and_read_back() {
        let now = Scheduling::default();
        let batch = set(now, 0, ask(SCHED_BATCH, 0), OWNER).unwrap();
        assert_eq!(batch.raw(), SCHED_BATCH);
        let idle = set(batch, 0, ask(SCHED_IDLE | SCHED_RESET_ON_FORK, 0), OWNER).unwrap();
        assert_eq!(idle.raw(), SCHED_IDLE | SCHED_RESET_ON_FORK);
        // sched_setparam keeps the policy and the flag.
        let same = set(
            idle,
            0,
            Request {
                policy: None,
                priority: 0,
            },
            OWNER,
        )
        .unwrap();
        assert_eq!(same, idle);
    }

    #[test]
    fn errors_come_in_linuxs_order() {
        let now = Scheduling::default();
        assert_eq!(set(now, 0, ask(4, 0), STRANGER), Err(Errno::EINVAL));
        assert_eq!(
            set(now, 0, ask(SCHED_OTHER, 1), STRANGER),
            Err(Errno::EINVAL)
        );
        assert_eq!(set(now, 0, ask(SCHED_OTHER, -1), OWNER), Err(Errno::EINVAL));
        assert_eq!(set(now, 0, ask(SCHED_FIFO, 0), ROOT), Err(Errno::EINVAL));
        assert_eq!(set(now, 0, ask(SCHED_RR, 100), ROOT), Err(Errno::EINVAL));
        assert_eq!(
            set(now, 0, ask(SCHED_DEADLINE, 0), ROOT),
            Err(Errno::EINVAL)
        );
        assert_eq!(
            set(now, 0, ask(SCHED_OTHER, 0), STRANGER),
            Err(Errno::EPERM)
        );
        assert_eq!(set(now, 0, ask(SCHED_OTHER, 0), ROOT), Ok(now));
    }

    #[test]
    fn real_time_is_refused_even_to_root() {
        let now = Scheduling::default();
        assert_eq!(set(now, 0, ask(SCHED_FIFO, 10), ROOT), Err(Errno::EPERM));
        assert_eq!(set(now, 0, ask(SCHED_RR, 99), OWNER), Err(Errno::EPERM));
    }

    #[test]
    fn leaving_idle_or_reset_on_fork_needs_privilege() {
        let idle = Scheduling {
            policy: Policy::Idle,
            reset_on_fork: false,
        };
        assert_eq!(set(idle, 0, ask(SCHED_OTHER, 0), OWNER), Err(Errno::EPERM));
        assert_eq!(set(idle, 0, ask(SCHED_IDLE, 0), OWNER), Ok(idle));
        let generous = Asker {
            nice_limit: 20,
            ..OWNER
        };
        assert!(set(idle, 0, ask(SCHED_OTHER, 0), generous).is_ok());
        assert!(set(idle, 0, ask(SCHED_OTHER, 0), ROOT).is_ok());
        let sticky = Scheduling {
            policy: Policy::Other,
            reset_on_fork: true,
        };
        assert_eq!(
            set(sticky, 0, ask(SCHED_OTHER, 0), OWNER),
            Err(Errno::EPERM)
        );
        assert!(set(sticky, 0, ask(SCHED_OTHER | SCHED_RESET_ON_FORK, 0), OWNER).is_ok());
    }

    #[test]
    fn children_of_reset_on_fork_start_plain() {
        let sticky = Scheduling {
            policy: Policy::Batch,
            reset_on_fork: true,
        };
        let child = sticky.for_child();
        assert_eq!(
            child,
            Scheduling {
                policy: Policy::Batch,
                reset_on_fork: false
            }
        );
        assert_eq!(sticky.child_nice(-5), 0);
        assert_eq!(sticky.child_nice(7), 7);
        let plain = Scheduling::default();
        assert_eq!(plain.for_child(), plain);
        assert_eq!(plain.child_nice(-5), -5);
    }

    #[test]
    fn idle_threads_get_the_shortest_slice() {
        assert_eq!(Policy::Other.slice_ticks(100, 0), 100);
        assert_eq!(Policy::Batch.slice_ticks(100, 10), 10);
        // 1000 * 3 / 1024, below nice 19's 1000 * 15 / 1024.
        assert_eq!(Policy::Idle.slice_ticks(1000, 0), 2);
        assert_eq!(Policy::Idle.slice_ticks(10, -20), 1);
    }
}
