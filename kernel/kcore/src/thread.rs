//! The rules of threads that need no hardware: which clone(2) flag sets
//! the kernel makes (and which are EINVAL), how a futex(2) operation word
//! decodes, and what a dying thread leaves in a robust mutex's futex word.
//!
//! The kernel has two kinds of children: a new *process* (a copy of the
//! caller's memory, or, for vfork, the caller's memory lent until the child
//! execs or exits) and a new *thread* of the caller's process, sharing
//! everything a process owns. Linux can share any subset (files without
//! memory, handlers without a thread group); this kernel does not, so those
//! combinations are refused here, before anything is made.

use abi::Errno;
use abi::types::*;

/// What a clone(2) call asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneRequest {
    pub kind: CloneKind,
    /// CLONE_SETTLS: the new thread's FS base is the `tls` argument.
    pub set_tls: bool,
    /// CLONE_PARENT_SETTID: the new tid is written at `parent_tid` (in the
    /// caller's memory) before clone returns.
    pub parent_settid: bool,
    /// CLONE_CHILD_SETTID: the new tid is written at `child_tid` in the
    /// child's memory.
    pub child_settid: bool,
    /// CLONE_CHILD_CLEARTID: at the child's exit, 0 is written at
    /// `child_tid` and a futex waiter there is woken (pthread_join).
    pub child_cleartid: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneKind {
    /// A thread of the caller's process.
    Thread,
    /// A new process. `vfork`: the caller waits until the child execs or
    /// exits; `share_memory` (CLONE_VM, only with CLONE_VFORK): the child
    /// runs in the caller's memory meanwhile; `share_files` (CLONE_FILES):
    /// the two use one descriptor table, so a descriptor one opens or
    /// closes is opened or closed for both. `exit_signal`: what the parent
    /// gets when it ends (0 for nothing).
    Process {
        exit_signal: u32,
        vfork: bool,
        share_memory: bool,
        share_files: bool,
    },
}

/// Flags this kernel accepts and ignores: CLONE_SYSVSEM (no System V
/// semaphores to undo yet), CLONE_DETACHED and CLONE_UNTRACED (Linux
/// ignores them too), CLONE_PTRACE (nothing traces here).
const IGNORED: u64 = CLONE_SYSVSEM | CLONE_DETACHED | CLONE_UNTRACED | CLONE_PTRACE;
/// What a thread shares with its process: all of it or nothing.
const THREAD_SHARES: u64 = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
const ID_FLAGS: u64 =
    CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;

/// Decodes clone(2)'s `flags`. EINVAL for anything else than the fork
/// form (with or without CLONE_FILES), the vfork form and the thread form
/// glibc and musl use; never a half-made child.
pub fn classify_clone(flags: u64) -> Result<CloneRequest, Errno> {
    let signal = (flags & CSIGNAL) as u32;
    let sharing = flags & !(CSIGNAL | IGNORED | ID_FLAGS);
    let kind = if flags & CLONE_THREAD != 0 {
        // Linux: a thread has no exit signal of its own.
        if sharing != THREAD_SHARES || signal != 0 {
            return Err(Errno::EINVAL);
        }
        CloneKind::Thread
    } else {
        let vfork = sharing & CLONE_VFORK != 0;
        let share_memory = sharing & CLONE_VM != 0;
        let share_files = sharing & CLONE_FILES != 0;
        let allowed = CLONE_FILES | if vfork { CLONE_VFORK | CLONE_VM } else { 0 };
        if sharing & !allowed != 0 || signal >= abi::signal::NSIG {
            return Err(Errno::EINVAL);
        }
        CloneKind::Process {
            exit_signal: signal,
            vfork,
            share_memory,
            share_files,
        }
    };
    Ok(CloneRequest {
        kind,
        // Mostly for threads (a process inherits the caller's TLS), but
        // Linux honours it in every form, and so does this kernel.
        set_tls: flags & CLONE_SETTLS != 0,
        parent_settid: flags & CLONE_PARENT_SETTID != 0,
        child_settid: flags & CLONE_CHILD_SETTID != 0,
        child_cleartid: flags & CLONE_CHILD_CLEARTID != 0,
    })
}

/// A decoded futex(2) call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FutexOp {
    /// Sleep if the word still holds `val`, until woken by a wake whose
    /// bitset meets `bitset`. `absolute`: the timeout is a deadline on
    /// `realtime` (CLOCK_REALTIME) or CLOCK_MONOTONIC, else a duration.
    Wait {
        bitset: u32,
        absolute: bool,
        realtime: bool,
    },
    /// Wake up to `val` waiters whose bitset meets `bitset`.
    Wake { bitset: u32 },
    /// Wake up to `val` waiters, move up to `val2` more to the word at
    /// `addr2`; with `compare`, only if the word still holds it (EAGAIN).
    Requeue { compare: Option<u32> },
    /// Take the priority-inheritance lock whose word is at `addr`, waiting
    /// for its owner unless `try_only` (FUTEX_TRYLOCK_PI). The timeout, if
    /// any, is a deadline on CLOCK_REALTIME if `realtime`, else on
    /// CLOCK_MONOTONIC.
    LockPi { try_only: bool, realtime: bool },
    /// Give the priority-inheritance lock to its first waiter, or free it.
    UnlockPi,
}

/// Decodes futex(2)'s `op` (with `val3`, the bitset of the _BITSET forms).
/// ENOSYS for the operations this kernel does not have (wake-op and the
/// requeues onto priority-inheritance locks): glibc and musl fall back to
/// plain wakes.
pub fn decode_futex(op: u32, val3: u32) -> Result<FutexOp, Errno> {
    let realtime = op & FUTEX_CLOCK_REALTIME != 0;
    let cmd = op & FUTEX_CMD_MASK;
    if realtime && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT && cmd != FUTEX_LOCK_PI2 {
        return Err(Errno::ENOSYS); // Linux: only the waits take a clock
    }
    let checked = |bitset: u32| {
        if bitset == 0 {
            Err(Errno::EINVAL)
        } else {
            Ok(bitset)
        }
    };
    match cmd {
        FUTEX_WAIT => Ok(FutexOp::Wait {
            bitset: FUTEX_BITSET_MATCH_ANY,
            absolute: false,
            realtime: false,
        }),
        FUTEX_WAIT_BITSET => Ok(FutexOp::Wait {
            bitset: checked(val3)?,
            absolute: true,
            realtime,
        }),
        FUTEX_WAKE => Ok(FutexOp::Wake {
            bitset: FUTEX_BITSET_MATCH_ANY,
        }),
        FUTEX_WAKE_BITSET => Ok(FutexOp::Wake {
            bitset: checked(val3)?,
        }),
        FUTEX_REQUEUE => Ok(FutexOp::Requeue { compare: None }),
        FUTEX_CMP_REQUEUE => Ok(FutexOp::Requeue {
            compare: Some(val3),
        }),
        FUTEX_LOCK_PI => Ok(FutexOp::LockPi {
            try_only: false,
            realtime: true,
        }),
        FUTEX_LOCK_PI2 => Ok(FutexOp::LockPi {
            try_only: false,
            realtime,
        }),
        FUTEX_TRYLOCK_PI => Ok(FutexOp::LockPi {
            try_only: true,
            realtime: true,
        }),
        FUTEX_UNLOCK_PI => Ok(FutexOp::UnlockPi),
        _ => Err(Errno::ENOSYS),
    }
}

/// The word of a priority-inheritance futex once thread `me` takes it,
/// from `word`, which names no owner or one that has exited: `me` as the
/// owner, FUTEX_OWNER_DIED if the last owner died holding it (the mark a
/// robust list's release left, or a dead owner's tid still there), and
/// FUTEX_WAITERS if others wait, so that `me`'s unlock comes to the kernel.
pub fn pi_taken(word: u32, me: u32, others_wait: bool) -> u32 {
    let died = if word & FUTEX_TID_MASK != 0 {
        FUTEX_OWNER_DIED
    } else {
        word & FUTEX_OWNER_DIED
    };
    let waiters = if others_wait { FUTEX_WAITERS } else { 0 };
    me | died | waiters
}

/// The futex word of a robust mutex after its owner `tid` died holding it:
/// the waiters bit kept, the owner gone, FUTEX_OWNER_DIED set, so the next
/// locker gets EOWNERDEAD. None if `tid` does not own it (nothing to do).
pub fn owner_died(word: u32, tid: u32) -> Option<u32> {
    (word & FUTEX_TID_MASK == tid).then_some((word & FUTEX_WAITERS) | FUTEX_OWNER_DIED)
}

/// Most entries a robust list walk visits (Linux's ROBUST_LIST_LIMIT): a
/// list made circular by a bug or on purpose ends the walk, not the kernel.
pub const ROBUST_LIST_LIMIT: usize = 2048;

#[cfg(test)]
mod tests {
    use super::*;

    const GLIBC_THREAD: u64 = CLONE_VM
        | CLONE_FS
        | CLONE_FILES
        | CLONE_SIGHAND
        | CLONE_THREAD
        | CLONE_SYSVSEM
        | CLONE_SETTLS
        | CLONE_PARENT_SETTID
        | CLONE_CHILD_CLEARTID;

    #[test]
    fn the_forms_glibc_and_musl_use_are_accepted() {
        let t = classify_clone(GLIBC_THREAD).unwrap();
        assert_eq!(t.kind, CloneKind::Thread);
        assert!(t.set_tls && t.parent_settid && t.child_cleartid && !t.child_settid);
        // glibc's fork.
        let f = classify_clone(CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | 17).unwrap();
        assert_eq!(
            f.kind,
            CloneKind::Process {
                exit_signal: 17,
                vfork: false,
                share_memory: false,
                share_files: false
            }
        );
        assert!(f.child_settid && f.child_cleartid);
        // posix_spawn's and vfork's.
        let v = classify_clone(CLONE_VM | CLONE_VFORK | 17).unwrap();
        assert_eq!(
            v.kind,
            CloneKind::Process {
                exit_signal: 17,
                vfork: true,
                share_memory: true,
                share_files: false
            }
        );
        assert!(classify_clone(0).is_ok());
        // A process that shares the descriptor table (lab 11.3).
        let c = classify_clone(CLONE_FILES | 17).unwrap();
        assert!(matches!(
            c.kind,
            CloneKind::Process {
                share_files: true,
                share_memory: false,
                ..
            }
        ));
    }

    #[test]
    fn partial_sharing_is_refused() {
        for flags in [
            CLONE_VM | 17,                 // memory without vfork
            CLONE_SIGHAND | CLONE_VM | 17, // handlers without a group
            GLIBC_THREAD & !CLONE_FILES,   // a thread without the files
            GLIBC_THREAD | 17,             // a thread with an exit signal
            CLONE_THREAD,                  // nothing shared
            CLONE_NEWNS | 17,              // namespaces
            CLONE_PARENT | 17,             // a sibling
            CLONE_PIDFD | 17,              // pidfds
            GLIBC_THREAD | CLONE_VFORK,    // a vfork thread
            65,                            // no such signal
        ] {
            assert_eq!(classify_clone(flags), Err(Errno::EINVAL), "{flags:#x}");
        }
    }

    #[test]
    fn futex_operations_decode() {
        assert_eq!(
            decode_futex(FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0),
            Ok(FutexOp::Wait {
                bitset: u32::MAX,
                absolute: false,
                realtime: false
            })
        );
        assert_eq!(
            decode_futex(FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 4),
            Ok(FutexOp::Wait {
                bitset: 4,
                absolute: true,
                realtime: true
            })
        );
        assert_eq!(decode_futex(FUTEX_WAKE_BITSET, 0), Err(Errno::EINVAL));
        assert_eq!(
            decode_futex(FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 0),
            Ok(FutexOp::Wake { bitset: u32::MAX })
        );
        assert_eq!(
            decode_futex(FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 0),
            Err(Errno::ENOSYS)
        );
        assert_eq!(
            decode_futex(FUTEX_CMP_REQUEUE, 5),
            Ok(FutexOp::Requeue { compare: Some(5) })
        );
        assert_eq!(
            decode_futex(FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0),
            Ok(FutexOp::LockPi {
                try_only: false,
                realtime: true
            })
        );
        assert_eq!(
            decode_futex(FUTEX_LOCK_PI | FUTEX_CLOCK_REALTIME, 0),
            Err(Errno::ENOSYS)
        );
        assert_eq!(
            decode_futex(FUTEX_LOCK_PI2, 0),
            Ok(FutexOp::LockPi {
                try_only: false,
                realtime: false
            })
        );
        assert_eq!(decode_futex(FUTEX_UNLOCK_PI, 0), Ok(FutexOp::UnlockPi));
        assert_eq!(decode_futex(FUTEX_WAKE_OP, 0), Err(Errno::ENOSYS));
    }

    #[test]
    fn a_pi_lock_taken_says_who_and_what_happened() {
        assert_eq!(pi_taken(0, 7, false), 7);
        assert_eq!(pi_taken(0, 7, true), 7 | FUTEX_WAITERS);
        // A robust list's release left the mark, and no owner.
        assert_eq!(
            pi_taken(FUTEX_OWNER_DIED | FUTEX_WAITERS, 7, false),
            7 | FUTEX_OWNER_DIED
        );
        // The owner exited without a robust list: its tid is still there.
        assert_eq!(
            pi_taken(42 | FUTEX_WAITERS, 7, true),
            7 | FUTEX_OWNER_DIED | FUTEX_WAITERS
        );
    }

    #[test]
    fn a_dead_owner_leaves_its_mark() {
        assert_eq!(owner_died(42, 42), Some(FUTEX_OWNER_DIED));
        assert_eq!(
            owner_died(42 | FUTEX_WAITERS, 42),
            Some(FUTEX_OWNER_DIED | FUTEX_WAITERS)
        );
        assert_eq!(owner_died(43, 42), None);
        assert_eq!(owner_died(0, 42), None);
    }
}
