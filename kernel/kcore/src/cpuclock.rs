//! The clock ids of a process's or a thread's CPU time, as Linux makes
//! them: what `clock_getcpuclockid(3)` and `pthread_getcpuclockid(3)`
//! return, and clock_gettime(2) and clock_getres(2) take.
//!
//! Such an id is negative: the id of the process or thread, complemented
//! and shifted left by 3, then a bit for "a thread" (4) and which time in
//! the low two bits: 0 user and system time (`PROF`), 1 user time alone
//! (`VIRT`), 2 time scheduled (`SCHED`, what the fixed ids
//! CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID give). 3 is
//! Linux's clock descriptor (`CLOCKFD`), which this kernel has none of. Id
//! 0 names the caller. Linux's `include/linux/posix-timers.h` defines the
//! layout; glibc and musl build the ids themselves from it.

/// Which of the times a CPU clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// User and system time.
    Prof,
    /// User time only.
    Virt,
    /// Time on a CPU.
    Sched,
}

/// Whose CPU time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A process (all its threads); 0 the caller's.
    Process(u32),
    /// One thread, which must be of the caller's process; 0 the caller.
    Thread(u32),
}

/// What a negative clock id names; None for a non-negative id (the fixed
/// clocks) and for a clock descriptor.
pub fn decode(clock_id: i32) -> Option<(Owner, Which)> {
    if clock_id >= 0 {
        return None;
    }
    let which = match clock_id & 3 {
        0 => Which::Prof,
        1 => Which::Virt,
        2 => Which::Sched,
        _ => return None,
    };
    let id = !(clock_id >> 3) as u32;
    let owner = if clock_id & 4 != 0 {
        Owner::Thread(id)
    } else {
        Owner::Process(id)
    };
    Some((owner, which))
}

/// The id of `owner`'s `which` clock (Linux's `MAKE_PROCESS_CPUCLOCK` and
/// `MAKE_THREAD_CPUCLOCK`).
pub fn encode(owner: Owner, which: Which) -> i32 {
    let (id, thread) = match owner {
        Owner::Process(pid) => (pid, 0),
        Owner::Thread(tid) => (tid, 4),
    };
    let which = match which {
        Which::Prof => 0,
        Which::Virt => 1,
        Which::Sched => 2,
    };
    (!(id as i32) << 3) | thread | which
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_linuxs() {
        // glibc's clock_getcpuclockid(1234) and pthread_getcpuclockid of
        // thread 1235: MAKE_PROCESS_CPUCLOCK(1234, CPUCLOCK_SCHED) and
        // MAKE_THREAD_CPUCLOCK(1235, CPUCLOCK_SCHED).
        assert_eq!(encode(Owner::Process(1234), Which::Sched), -9878);
        assert_eq!(encode(Owner::Thread(1235), Which::Sched), -9882);
        assert_eq!(decode(-9878), Some((Owner::Process(1234), Which::Sched)));
        assert_eq!(decode(-9882), Some((Owner::Thread(1235), Which::Sched)));
        // The caller's own: pid 0.
        assert_eq!(decode(-2), Some((Owner::Thread(0), Which::Sched)));
        assert_eq!(decode(-6), Some((Owner::Process(0), Which::Sched)));
        assert_eq!(decode(-8), Some((Owner::Process(0), Which::Prof)));
    }

    #[test]
    fn every_owner_and_which_goes_both_ways() {
        for id in [0, 1, 2, 4_194_303, i32::MAX as u32 >> 3] {
            for owner in [Owner::Process(id), Owner::Thread(id)] {
                for which in [Which::Prof, Which::Virt, Which::Sched] {
                    assert_eq!(decode(encode(owner, which)), Some((owner, which)));
                }
            }
        }
    }

    #[test]
    fn fixed_clocks_and_descriptors_are_not_cpu_clocks() {
        assert_eq!(decode(0), None);
        assert_eq!(decode(2), None);
        // A clock descriptor: (~fd << 3) | 3.
        assert_eq!(decode((!5 << 3) | 3), None);
    }
}
