//! Resource limits: the sixteen soft/hard pairs of getrlimit(2), the rules
//! for changing them, and the text of `/proc/PID/limits`.
//!
//! Every process has its own set, copied at fork and kept across exec, so
//! a shell's `ulimit` reaches the programs it starts. The kernel enforces
//! a limit where Linux does: `RLIMIT_NOFILE` when a descriptor is made,
//! `RLIMIT_AS` and `RLIMIT_DATA` when memory is mapped or the break moves,
//! `RLIMIT_STACK` when exec sizes the stack, `RLIMIT_NPROC` at fork and
//! clone, `RLIMIT_FSIZE` when a file grows, `RLIMIT_CPU` at each clock
//! tick (`Limits::cpu_time_check`). The others are kept and reported. The checks live beside the
//! mechanisms (fs/file.rs, proc/vm.rs, proc/exec.rs, proc/lifecycle.rs);
//! this file holds only what needs no hardware: the values and the rules.
//!
//! The rules of setrlimit, as Linux's `do_prlimit`: the soft limit may
//! not exceed the hard one (EINVAL); the soft limit moves freely below the
//! hard one; the hard limit may always be lowered, and raised only by a
//! privileged process (EPERM). `RLIMIT_NOFILE` never goes above
//! `NR_OPEN`, the most descriptors a table can hold, not even for root
//! (EPERM, Linux's `sysctl_nr_open`).

use abi::Errno;
use abi::types::*;
use alloc::string::String;
use core::fmt::Write;

/// The most descriptors one process may have: the ceiling of
/// `RLIMIT_NOFILE` (Linux's `fs.nr_open` is 1048576; a table of 65536
/// slots is 1 MiB of kernel heap, which this kernel can afford).
pub const NR_OPEN: u64 = 65536;

/// The stack a program gets when nobody lowered or raised it (Linux's
/// `_STK_LIM`).
pub const STACK_DEFAULT: u64 = 8 << 20;

/// Linux's boot values (`INIT_RLIMITS`): 8 MiB of stack, no core files,
/// 1024 descriptors (4096 hard), 8 MiB of locked memory, POSIX message
/// queues of 800 KiB; no limit for the rest. `RLIMIT_NPROC` and
/// `RLIMIT_SIGPENDING` Linux derives from memory; here the process
/// count is `tasks`, the most threads the kernel holds.
pub fn defaults(tasks: u64) -> Limits {
    let mut limits = Limits {
        pairs: [unlimited(); RLIMIT_NLIMITS as usize],
    };
    let mut set = |resource: u32, cur: u64, max: u64| {
        limits.pairs[resource as usize] = Rlimit { cur, max };
    };
    set(RLIMIT_STACK, STACK_DEFAULT, RLIM_INFINITY);
    set(RLIMIT_CORE, 0, RLIM_INFINITY);
    set(RLIMIT_NPROC, tasks, tasks);
    set(RLIMIT_NOFILE, 1024, 4096);
    set(RLIMIT_MEMLOCK, 8 << 20, 8 << 20);
    set(RLIMIT_SIGPENDING, tasks, tasks);
    set(RLIMIT_MSGQUEUE, 819_200, 819_200);
    set(RLIMIT_NICE, 0, 0);
    set(RLIMIT_RTPRIO, 0, 0);
    limits
}

const fn unlimited() -> Rlimit {
    Rlimit {
        cur: RLIM_INFINITY,
        max: RLIM_INFINITY,
    }
}

/// One process's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pairs: [Rlimit; RLIMIT_NLIMITS as usize],
}

impl Limits {
    /// The pair of `resource`; EINVAL for a resource that does not exist.
    pub fn get(&self, resource: u32) -> Result<Rlimit, Errno> {
        self.pairs
            .get(resource as usize)
            .copied()
            .ok_or(Errno::EINVAL)
    }

    /// The soft limit of `resource`, which must exist (an `RLIMIT_*`).
    pub fn cur(&self, resource: u32) -> u64 {
        self.pairs[resource as usize].cur
    }

    /// setrlimit's rules (see the top of the file); `privileged` is
    /// Linux's `CAP_SYS_RESOURCE`.
    pub fn set(&mut self, resource: u32, new: Rlimit, privileged: bool) -> Result<(), Errno> {
        let old = self.get(resource)?;
        if new.cur > new.max {
            return Err(Errno::EINVAL);
        }
        if new.max > old.max && !privileged {
            return Err(Errno::EPERM);
        }
        if resource == RLIMIT_NOFILE && new.max > NR_OPEN {
            return Err(Errno::EPERM);
        }
        self.pairs[resource as usize] = new;
        Ok(())
    }

    /// Whether `used + more` stays within the soft limit of `resource`.
    pub fn allows(&self, resource: u32, used: u64, more: u64) -> bool {
        used.checked_add(more)
            .is_some_and(|total| total <= self.cur(resource))
    }

    /// RLIMIT_CPU, checked at each tick charged to a process that has
    /// now used `used_ticks` of CPU time (all its threads, user and
    /// system) at `hz` ticks a second: the signal it gets, if any. At the
    /// hard limit, SIGKILL. At the soft limit, SIGXCPU, and the soft limit
    /// moves a second on, so another comes each second of CPU time after
    /// (a program that catches it sees the new value in getrlimit). This
    /// is Linux's `check_process_timers`; the limits are in seconds.
    pub fn cpu_time_check(&mut self, used_ticks: u64, hz: u64) -> Option<u32> {
        let Rlimit { cur, max } = self.pairs[RLIMIT_CPU as usize];
        let reached = |limit: u64| used_ticks >= limit.saturating_mul(hz);
        if cur == RLIM_INFINITY {
            return None;
        }
        if max != RLIM_INFINITY && reached(max) {
            return Some(abi::signal::SIGKILL);
        }
        if reached(cur) {
            self.pairs[RLIMIT_CPU as usize].cur = cur + 1;
            return Some(abi::signal::SIGXCPU);
        }
        None
    }

    /// `/proc/PID/limits`, in Linux's columns (fs/proc/base.c).
    pub fn proc_text(&self) -> String {
        const NAMES: [(&str, &str); RLIMIT_NLIMITS as usize] = [
            ("Max cpu time", "seconds"),
            ("Max file size", "bytes"),
            ("Max data size", "bytes"),
            ("Max stack size", "bytes"),
            ("Max core file size", "bytes"),
            ("Max resident set", "bytes"),
            ("Max processes", "processes"),
            ("Max open files", "files"),
            ("Max locked memory", "bytes"),
            ("Max address space", "bytes"),
            ("Max file locks", "locks"),
            ("Max pending signals", "signals"),
            ("Max msgqueue size", "bytes"),
            ("Max nice priority", ""),
            ("Max realtime priority", ""),
            ("Max realtime timeout", "us"),
        ];
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<25} {:<20} {:<20} {:<10}",
            "Limit", "Soft Limit", "Hard Limit", "Units"
        );
        for ((name, unit), pair) in NAMES.iter().zip(&self.pairs) {
            let _ = write!(out, "{name:<25} ");
            for value in [pair.cur, pair.max] {
                if value == RLIM_INFINITY {
                    let _ = write!(out, "{:<20} ", "unlimited");
                } else {
                    let _ = write!(out, "{value:<20} ");
                }
            }
            if !unit.is_empty() {
                let _ = write!(out, "{unit:<10}");
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(cur: u64, max: u64) -> Rlimit {
        Rlimit { cur, max }
    }

    #[test]
    fn cpu_time_gives_sigxcpu_each_second_then_sigkill() {
        use abi::signal::{SIGKILL, SIGXCPU};
        let hz = 100;
        let mut l = defaults(1024);
        assert_eq!(l.cpu_time_check(u64::MAX, hz), None, "unlimited");
        l.set(RLIMIT_CPU, pair(1, 3), false).unwrap();
        let mut got = alloc::vec::Vec::new();
        for tick in 1..=400 {
            if let Some(sig) = l.cpu_time_check(tick, hz) {
                got.push((tick, sig));
            }
        }
        // At 1 s and 2 s, SIGXCPU; at 3 s and every tick after, SIGKILL.
        assert_eq!(got[..3], [(100, SIGXCPU), (200, SIGXCPU), (300, SIGKILL)]);
        assert!(got[3..].iter().all(|&(_, sig)| sig == SIGKILL));
        assert_eq!(l.cur(RLIMIT_CPU), 3, "the soft limit moved on");
        // A soft limit with no hard one: SIGXCPU for ever, once a second.
        l.set(RLIMIT_CPU, pair(2, RLIM_INFINITY), true).unwrap();
        let count = (1..=1000)
            .filter(|&t| l.cpu_time_check(t, hz).is_some())
            .count();
        assert_eq!(count, 9, "at 2, 3, ... 10 s");
        // A huge limit does not overflow.
        l.set(RLIMIT_CPU, pair(u64::MAX - 1, u64::MAX - 1), true)
            .unwrap();
        assert_eq!(l.cpu_time_check(u64::MAX - 1, hz), None);
    }

    #[test]
    fn soft_moves_freely_below_hard() {
        let mut l = defaults(256);
        l.set(RLIMIT_NOFILE, pair(42, 4096), false).unwrap();
        assert_eq!(l.cur(RLIMIT_NOFILE), 42);
        l.set(RLIMIT_NOFILE, pair(4096, 4096), false).unwrap();
        assert_eq!(l.get(RLIMIT_NOFILE), Ok(pair(4096, 4096)));
    }

    #[test]
    fn soft_above_hard_is_einval() {
        let mut l = defaults(256);
        assert_eq!(
            l.set(RLIMIT_NOFILE, pair(5000, 4096), false),
            Err(Errno::EINVAL)
        );
        assert_eq!(
            l.set(RLIMIT_NOFILE, pair(5000, 4096), true),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn hard_goes_up_only_with_privilege() {
        let mut l = defaults(256);
        l.set(RLIMIT_AS, pair(1 << 30, 1 << 30), false).unwrap();
        assert_eq!(
            l.set(RLIMIT_AS, pair(1 << 30, 2 << 30), false),
            Err(Errno::EPERM)
        );
        l.set(RLIMIT_AS, pair(1 << 30, RLIM_INFINITY), true)
            .unwrap();
        assert_eq!(l.get(RLIMIT_AS), Ok(pair(1 << 30, RLIM_INFINITY)));
    }

    #[test]
    fn nofile_never_passes_nr_open() {
        let mut l = defaults(256);
        assert_eq!(
            l.set(RLIMIT_NOFILE, pair(1024, NR_OPEN + 1), true),
            Err(Errno::EPERM)
        );
        l.set(RLIMIT_NOFILE, pair(NR_OPEN, NR_OPEN), true).unwrap();
    }

    #[test]
    fn unknown_resource_is_einval() {
        let mut l = defaults(256);
        assert_eq!(l.get(RLIMIT_NLIMITS), Err(Errno::EINVAL));
        assert_eq!(l.set(99, pair(1, 1), true), Err(Errno::EINVAL));
    }

    #[test]
    fn allows_counts_to_the_soft_limit_and_never_overflows() {
        let mut l = defaults(256);
        l.set(RLIMIT_AS, pair(8192, RLIM_INFINITY), false).unwrap();
        assert!(l.allows(RLIMIT_AS, 4096, 4096));
        assert!(!l.allows(RLIMIT_AS, 4096, 4097));
        assert!(l.allows(RLIMIT_DATA, u64::MAX - 1, 1));
        assert!(!l.allows(RLIMIT_DATA, u64::MAX, 1));
    }

    #[test]
    fn proc_text_has_linux_columns() {
        let text = defaults(256).proc_text();
        let lines: alloc::vec::Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 17);
        assert_eq!(
            lines[0],
            "Limit                     Soft Limit           Hard Limit           Units     "
        );
        assert_eq!(
            lines[4],
            "Max stack size            8388608              unlimited            bytes     "
        );
        assert_eq!(
            lines[14],
            "Max nice priority         0                    0                    "
        );
    }
}
