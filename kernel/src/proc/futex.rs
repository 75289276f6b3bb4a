//! Futexes: sleeping on a user word until another thread says it changed,
//! the primitive under every pthread mutex, condition variable and join.
//!
//! A waiter names its word by a key. In private memory the key is
//! (address space, user address): two threads of one process share an
//! address space, so they meet on the same key; a vfork child running in
//! its parent's memory meets the parent. In a `MAP_SHARED` page (a mapped
//! file, shared anonymous memory, a `sem_open` semaphore) the key is the
//! word's physical address, so processes that map the page at different
//! addresses meet (Linux keys it by the file and the offset; the frame is
//! the same thing here, since a mapped file's pages are its frames and stay
//! while mapped). FUTEX_PRIVATE_FLAG is a promise the kernel does not need:
//! a private futex in shared memory is keyed as a shared one, which can only
//! add a spurious wake-up, which futex users must expect anyway.
//!
//! The waiter records its key and bitset in its own `Thread::futex` and
//! sleeps on `Chan::Futex`; a wake walks the threads, clears the records
//! that match and makes those threads runnable. A wake must not fall
//! between the waiter's look at the word and its sleep (the lost wake-up
//! futexes exist to prevent), and on several CPUs the waker's store and
//! wake can come at any moment. So the waiter records itself *before* it
//! reads the word, as sleeping marks a thread asleep before it looks
//! (sched.rs): a waker that changed the word before the read is seen by
//! the read, one that changes it after finds the record. Linux gets the
//! same order from its hash bucket's lock, held across the read and the
//! queueing (`futex_wait_setup`); here the read cannot be under a lock, as
//! it may fault.
//!
//! Robust lists are here too: a thread that dies holding a robust mutex
//! marks it FUTEX_OWNER_DIED and wakes one waiter, so the next locker gets
//! EOWNERDEAD instead of waiting forever.
//!
//! So are priority-inheritance locks (`lock_pi`, `unlock_pi`), whose word
//! the kernel reads and writes itself: it names the owner, and an unlock
//! hands the lock straight to the first waiter. Their waiters record the
//! owner they wait for, so that the owner's exit (`owner_gone`) wakes
//! them to take the lock over.

use abi::Errno;
use abi::types::{FUTEX_BITSET_MATCH_ANY, FUTEX_TID_MASK, FUTEX_WAITERS, RobustListHead};
use alloc::collections::BTreeSet;
use core::sync::atomic::{AtomicU64, Ordering};
use kcore::thread::{ROBUST_LIST_LIMIT, owner_died, pi_taken};

use super::sched::{self, Chan};
use super::{State, TABLE, Table, Tid, current_thread};
use crate::mm::paging::{SHARED, Space};
use crate::mm::uaccess;
use crate::sync::{IrqLock, Rank};

/// What a sleeping futex waiter waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    key: Key,
    bitset: u32,
    /// A priority-inheritance lock's waiter: the owner it waits for. Its
    /// record goes only when an unlock gives it the lock (`unlock_pi`).
    pi_owner: Option<Tid>,
    /// Set when a PI waiter must look at the word again without having
    /// been given the lock: its owner exited (`owner_gone`).
    retry: bool,
    /// A PI waiter that came when its owner had begun to exit: it only
    /// waits for the exit to end, and then, as on Linux, the lock the dead
    /// owner left is not its to take (ESRCH).
    owner_exiting: bool,
    /// When it began to wait: an unlock gives the lock to the first.
    since: u64,
}

impl Waiter {
    fn new(key: Key, bitset: u32) -> Waiter {
        Waiter {
            key,
            bitset,
            pi_owner: None,
            retry: false,
            owner_exiting: false,
            since: WAITS.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// A futex_waitv(2) caller: woken by a wake of any of its words.
#[derive(Clone, Debug)]
pub struct ManyWaiter {
    keys: alloc::vec::Vec<Key>,
    /// Which word a wake came by: set once, by the first wake.
    woken: Option<usize>,
}

/// Numbers the waits, so PI locks go to their waiters in arrival order.
static WAITS: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    /// A word of private memory: (address space, user address).
    Private { space: u64, addr: u64 },
    /// A word of a shared page: its physical address.
    Shared { phys: u64 },
}

/// The key of the word at `addr` in the current address space (its page is
/// filled if it was not there yet, to see whether it is shared). EINVAL if
/// it is not 4-byte aligned, EFAULT if it cannot be read.
fn key(addr: u64) -> Result<Key, Errno> {
    if !addr.is_multiple_of(4) {
        return Err(Errno::EINVAL);
    }
    if addr
        .checked_add(4)
        .is_none_or(|end| end > crate::mm::USER_TOP)
    {
        return Err(Errno::EFAULT);
    }
    let space = Space::current();
    let at = x86_64::VirtAddr::new(addr);
    // Filled first if it is not there yet (to see whether it is shared).
    if space.translate(at).is_none() {
        uaccess::check_range(addr, 4, false)?;
    }
    match space.translate(at) {
        Some((phys, flags)) if flags.contains(SHARED) => Ok(Key::Shared {
            phys: phys.as_u64(),
        }),
        _ => Ok(Key::Private {
            space: space.id(),
            addr,
        }),
    }
}

/// FUTEX_WAIT(_BITSET): sleeps while the word at `addr` holds `expected`,
/// until a wake whose bitset meets `bitset`, `deadline` on the monotonic
/// clock (ETIMEDOUT) or a signal. EAGAIN at once if the word holds something else.
///
/// A signal restarts a wait without a deadline (after a handler with
/// SA_RESTART, as on Linux) and ends one with a deadline in EINTR.
pub fn wait(addr: u64, expected: u32, bitset: u32, deadline: Option<u64>) -> Result<usize, Errno> {
    let key = key(addr)?;
    current_thread(|t| t.futex = Some(Waiter::new(key, bitset)));
    let now = uaccess::read::<u32>(addr);
    if now != Ok(expected) {
        // Off the queue again, unless a wake already took this waiter: it
        // counted it among those it woke, so it is woken (return 0, which
        // a futex user must take as "look again"), or another waiter that
        // sleeps would lose that wake.
        let taken_by_a_wake = current_thread(|t| t.futex.take().is_none());
        return match now {
            _ if taken_by_a_wake => Ok(0),
            Err(e) => Err(e),
            Ok(_) => Err(Errno::EAGAIN),
        };
    }
    let woken = sched::wait_event_until(Chan::Futex, deadline, || {
        current_thread(|t| t.futex.is_none()).then_some(())
    });
    // Timed out or interrupted: off the queue.
    current_thread(|t| t.futex = None);
    match woken {
        Ok(()) => Ok(0),
        Err(crate::signal::ERESTARTSYS) if deadline.is_some() => Err(Errno::EINTR),
        Err(e) => Err(e),
    }
}

/// FUTEX_WAKE(_BITSET): wakes up to `count` waiters on the word at `addr`
/// whose bitset meets `bitset`; returns how many. A word that is not
/// aligned is EINVAL, one the caller cannot read EFAULT, as Linux's
/// `get_futex_key` answers (a wake names its word as a wait does).
pub fn wake(addr: u64, count: usize, bitset: u32) -> Result<usize, Errno> {
    let key = key(addr)?;
    let mut woken = 0;
    let mut table = TABLE.lock();
    if has_pi_waiters(&table, key) {
        return Err(Errno::EINVAL); // Linux: a PI lock's word is not woken
    }
    for t in table.threads.values_mut() {
        if woken == count {
            break;
        }
        if t.futex
            .is_some_and(|w| w.key == key && w.bitset & bitset != 0)
        {
            t.futex = None;
        } else if let Some(many) = t.futex_waitv.as_mut().filter(|m| m.woken.is_none())
            && let Some(index) = many.keys.iter().position(|&k| k == key)
        {
            many.woken = Some(index);
        } else {
            continue;
        }
        if t.state == State::Sleeping(Chan::Futex) {
            t.make_runnable();
        }
        woken += 1;
    }
    Ok(woken)
}

/// FUTEX_REQUEUE and FUTEX_CMP_REQUEUE: wakes up to `wake` waiters on the
/// word at `addr` and moves up to `requeue` more to the word at `addr2`
/// (they sleep on, now waiting for a wake there); with `compare`, EAGAIN
/// unless the word at `addr` still holds it. Returns (woken, moved).
///
/// The compare is made before the table is locked, so a waiter may arrive
/// in between; a condition variable's users re-check their word, as with
/// any futex wake, so that is harmless (Linux holds its hash bucket's lock
/// across both for the same reason a waiter checks after queueing).
pub fn requeue(
    addr: u64,
    wake: usize,
    requeue: usize,
    addr2: u64,
    compare: Option<u32>,
) -> Result<(usize, usize), Errno> {
    let from = key(addr)?;
    let to = key(addr2)?;
    if let Some(expected) = compare
        && uaccess::read::<u32>(addr)? != expected
    {
        return Err(Errno::EAGAIN);
    }
    let (mut woken, mut moved) = (0, 0);
    let mut table = TABLE.lock();
    if has_pi_waiters(&table, from) || has_pi_waiters(&table, to) {
        return Err(Errno::EINVAL);
    }
    for t in table.threads.values_mut() {
        let Some(waiter) = t.futex.as_mut().filter(|w| w.key == from) else {
            continue;
        };
        if woken < wake {
            t.futex = None;
            if t.state == State::Sleeping(Chan::Futex) {
                t.make_runnable();
            }
            woken += 1;
        } else if moved < requeue {
            waiter.key = to;
            moved += 1;
        } else {
            break;
        }
    }
    Ok((woken, moved))
}

/// futex_waitv(2): sleeps while each word holds its value, until a wake
/// of any of them (returns its index), `deadline` (ETIMEDOUT) or a signal
/// (restarted after an SA_RESTART handler: the deadline is absolute).
/// EAGAIN at once if a word holds something else. As `wait`, the caller is
/// recorded on every word before it reads them, so no wake falls between.
/// The words come checked (`syscall/process.rs`): aligned, 32 bits.
/// A requeue does not move these waiters (Linux's would).
pub fn wait_many(words: &[(u64, u64)], deadline: Option<u64>) -> Result<usize, Errno> {
    let keys = words
        .iter()
        .map(|&(addr, _)| key(addr))
        .collect::<Result<alloc::vec::Vec<Key>, Errno>>()?;
    current_thread(|t| t.futex_waitv = Some(ManyWaiter { keys, woken: None }));
    let off_queue = || current_thread(|t| t.futex_waitv.take().and_then(|m| m.woken));
    for &(addr, expected) in words {
        // A value past 32 bits never matches (Linux 6.1's comparison).
        let now = uaccess::read::<u32>(addr);
        if now.map(u64::from) != Ok(expected) {
            // As in `wait`: a wake that already counted this waiter is
            // not lost.
            return match (off_queue(), now) {
                (Some(index), _) => Ok(index),
                (None, Err(e)) => Err(e),
                (None, Ok(_)) => Err(Errno::EAGAIN),
            };
        }
    }
    let slept = sched::wait_event_until(Chan::Futex, deadline, || {
        current_thread(|t| t.futex_waitv.as_ref().and_then(|m| m.woken))
    });
    match (off_queue(), slept) {
        (Some(index), _) => Ok(index),
        (None, Err(e)) => Err(e),
        (None, Ok(index)) => Ok(index),
    }
}

/// Whether a priority-inheritance lock's waiter waits on `key`.
fn has_pi_waiters(table: &Table, key: Key) -> bool {
    table.threads.values().any(|t| {
        t.futex
            .is_some_and(|w| w.key == key && w.pi_owner.is_some())
    })
}

/// What one look at a PI lock's word, under the table's lock, decided.
enum Look {
    /// The caller owns the lock now.
    Taken,
    /// The caller is recorded as a waiter: sleep.
    Wait,
    /// The word's page could not be written without a fault, or the word
    /// changed under the compare: look again after `check_range`.
    Again,
    Failed(Errno),
}

/// FUTEX_LOCK_PI, FUTEX_LOCK_PI2 and FUTEX_TRYLOCK_PI: takes the lock
/// whose word is at `addr` for the calling thread, or waits for it.
///
/// The word is user space's: 0 when free, else the owner's tid, with
/// FUTEX_WAITERS when the owner must unlock through the kernel and
/// FUTEX_OWNER_DIED when the last owner died holding it. User space takes
/// and frees an uncontended lock with its own atomics; it calls here when
/// the word names another owner. Every look at the word and every change
/// to it is made with the table locked (`uaccess::try_cmpxchg_u32`, which
/// never sleeps; the page is made ready first, with the lock let go), so a
/// waiter's record and FUTEX_WAITERS appear together for `unlock_pi`, and
/// an owner's exit (`owner_gone`) finds every waiter that saw it alive.
///
/// EDEADLK if the caller owns it; ESRCH if the word names a thread that
/// does not exist; EAGAIN (EWOULDBLOCK) for a trylock that would wait;
/// ETIMEDOUT at `deadline` (monotonic nanoseconds); EFAULT if the word is
/// not writable memory. A signal restarts the call (Linux's
/// ERESTARTNOINTR). "Priority inheritance" itself, the owner running at
/// its highest waiter's priority, has nothing to do here: every thread
/// runs under the one policy, where nice only weights time slices.
pub fn lock_pi(addr: u64, deadline: Option<u64>, try_only: bool) -> Result<usize, Errno> {
    let key = key(addr)?;
    let mut retried = None;
    loop {
        uaccess::check_range(addr, 4, true)?;
        let look = {
            let mut table = TABLE.lock();
            look_pi(&mut table, addr, key, try_only, retried)
        };
        match look {
            Look::Taken => return Ok(0),
            Look::Failed(e) => return Err(e),
            Look::Again => continue,
            Look::Wait => {}
        }
        let woken = sched::wait_event_until(Chan::Futex, deadline, || {
            current_thread(|t| t.futex.is_none_or(|w| w.retry)).then_some(())
        });
        // Off the queue: no record left means an unlock gave this thread
        // the lock (even if the deadline or a signal came too).
        match current_thread(|t| t.futex.take()) {
            None => return Ok(0),
            Some(w) if w.retry => retried = Some(w.owner_exiting),
            Some(_) => {
                return Err(match woken {
                    Err(crate::signal::ERESTARTSYS) => crate::signal::ERESTARTNOINTR,
                    Err(e) => e,
                    Ok(()) => continue,
                });
            }
        }
    }
}

/// One look at the PI word at `addr` for the current thread (`lock_pi`).
/// Caller holds the table. `retried`: the caller was woken because the
/// owner it waited for exited, so a dead owner's lock is to be taken;
/// `Some(true)` if that owner was already exiting when the caller came,
/// which on Linux finds the dead owner's word ESRCH (`handle_exit_race`)
/// unless another waiter was there before the exit.
fn look_pi(table: &mut Table, addr: u64, key: Key, try_only: bool, retried: Option<bool>) -> Look {
    let Some(me) = table.current_both().map(|(t, _)| t.tid) else {
        return Look::Failed(Errno::ESRCH);
    };
    // A compare with 0 that stores 0 reads the word, atomically.
    let Some(word) = uaccess::try_cmpxchg_u32(addr, 0, 0) else {
        return Look::Again;
    };
    let owner = word & FUTEX_TID_MASK;
    if owner == me {
        return Look::Failed(Errno::EDEADLK);
    }
    let alive = |t: &Table, tid: Tid| t.threads.get(&tid).is_some_and(|t| t.state != State::Dead);
    if retried == Some(true) && owner != 0 && !alive(table, owner) && !has_pi_waiters(table, key) {
        return Look::Failed(Errno::ESRCH);
    }
    if owner == 0 || retried.is_some() && !alive(table, owner) {
        // Linux's fix-up after a dead owner always sets FUTEX_WAITERS.
        let others = owner != 0 || has_pi_waiters(table, key);
        let taken = pi_taken(word, me, others);
        return match uaccess::try_cmpxchg_u32(addr, word, taken) {
            Some(found) if found == word => Look::Taken,
            _ => Look::Again,
        };
    }
    // As Linux, the word is marked before the owner is looked for, so a
    // trylock or a word naming nobody leaves FUTEX_WAITERS set.
    if word & FUTEX_WAITERS == 0
        && uaccess::try_cmpxchg_u32(addr, word, word | FUTEX_WAITERS) != Some(word)
    {
        return Look::Again;
    }
    if !alive(table, owner) {
        return Look::Failed(Errno::ESRCH);
    }
    if try_only {
        return Look::Failed(Errno::EAGAIN);
    }
    let owner_exiting = EXITING.lock().contains(&owner);
    let t = table.threads.get_mut(&me).expect("the caller is a thread");
    t.futex = Some(Waiter {
        pi_owner: Some(owner),
        owner_exiting,
        ..Waiter::new(key, FUTEX_BITSET_MATCH_ANY)
    });
    Look::Wait
}

/// FUTEX_UNLOCK_PI: the calling thread, which owns the lock at `addr`
/// (EPERM otherwise), gives it to the waiter that came first, writing that
/// thread's tid and FUTEX_WAITERS into the word and waking it, or frees it
/// (the word becomes 0) if nobody waits. Under the table's lock, as
/// `lock_pi`'s looks are.
pub fn unlock_pi(addr: u64) -> Result<usize, Errno> {
    let key = key(addr)?;
    loop {
        uaccess::check_range(addr, 4, true)?;
        let mut table = TABLE.lock();
        let me = table
            .current_both()
            .map(|(t, _)| t.tid)
            .ok_or(Errno::ESRCH)?;
        let Some(word) = uaccess::try_cmpxchg_u32(addr, 0, 0) else {
            continue;
        };
        if word & FUTEX_TID_MASK != me {
            return Err(Errno::EPERM);
        }
        let first = table
            .threads
            .values()
            .filter_map(|t| {
                t.futex
                    .filter(|w| w.key == key && w.pi_owner.is_some())
                    .map(|w| (w.since, t.tid))
            })
            .min()
            .map(|(_, tid)| tid);
        let new = first.map_or(0, |tid| tid | FUTEX_WAITERS);
        if uaccess::try_cmpxchg_u32(addr, word, new) != Some(word) {
            continue;
        }
        if let Some(tid) = first {
            let t = table.threads.get_mut(&tid).expect("found above");
            t.futex = None;
            if t.state == State::Sleeping(Chan::Futex) {
                t.make_runnable();
            }
        }
        return Ok(0);
    }
}

/// Threads that have begun to exit (Linux's FUTEX_STATE_EXITING), by tid:
/// a PI lock such a thread holds is no longer its to give, and a locker
/// that comes now gets ESRCH once it is gone (`look_pi`). From the start
/// of `exit_thread` to `owner_gone`.
static EXITING: IrqLock<BTreeSet<Tid>> = IrqLock::new(Rank::Service, BTreeSet::new());

/// Thread `tid` begins to exit (caller holds the table).
pub fn exiting(tid: Tid) {
    EXITING.lock().insert(tid);
}

/// Thread `tid` is gone (the caller holds the table, in the same hold that
/// marked it Dead): every PI waiter that waits for it looks at its word
/// again, and takes the lock, which its owner can no longer give, with
/// FUTEX_OWNER_DIED (Linux's `exit_pi_state_list`).
pub fn owner_gone(table: &mut Table, tid: Tid) {
    EXITING.lock().remove(&tid);
    for t in table.threads.values_mut() {
        if let Some(w) = t.futex.as_mut().filter(|w| w.pi_owner == Some(tid)) {
            w.retry = true;
            if t.state == State::Sleeping(Chan::Futex) {
                t.make_runnable();
            }
        }
    }
}

/// At the exit of thread `tid`: every robust mutex on its list (at `head`)
/// that it still owns is marked FUTEX_OWNER_DIED and one waiter woken.
/// The list is user memory and may be anything: an unreadable entry ends
/// the walk, and at most ROBUST_LIST_LIMIT entries are visited.
pub fn release_robust_list(head: u64, tid: Tid) {
    let Ok(list) = uaccess::read::<RobustListHead>(head) else {
        return;
    };
    // Bit 0 of an entry pointer marks a priority-inheritance mutex.
    let pending = list.list_op_pending & !1;
    let mut entry = list.next & !1;
    for _ in 0..ROBUST_LIST_LIMIT {
        if entry == head || entry == 0 {
            break;
        }
        // Read on first: releasing may let another thread free the entry.
        let Ok(next) = uaccess::read::<u64>(entry) else {
            break;
        };
        if entry != pending {
            release_one(entry, list.futex_offset, tid);
        }
        entry = next & !1;
    }
    if pending != 0 {
        release_one(pending, list.futex_offset, tid);
    }
}

fn release_one(entry: u64, futex_offset: i64, tid: Tid) {
    let word_at = entry.wrapping_add(futex_offset as u64);
    let Ok(word) = uaccess::read::<u32>(word_at) else {
        return;
    };
    if let Some(died) = owner_died(word, tid)
        && uaccess::write(word_at, &died).is_ok()
        && word & FUTEX_WAITERS != 0
    {
        // A misaligned word is the list's fault: nobody waits on it.
        let _ = wake(word_at, 1, FUTEX_BITSET_MATCH_ANY);
    }
}

/// set_robust_list(2): `len` must be the size of the head.
pub fn set_robust_list(head: u64, len: u64) -> Result<usize, Errno> {
    if len != size_of::<RobustListHead>() as u64 {
        return Err(Errno::EINVAL);
    }
    current_thread(|t| t.robust_list = head);
    Ok(0)
}

/// get_robust_list(2) of thread `tid` (0: the caller).
pub fn get_robust_list(tid: Tid, head_ptr: u64, len_ptr: u64) -> Result<usize, Errno> {
    let head = if tid == 0 {
        current_thread(|t| t.robust_list)
    } else {
        let table = TABLE.lock();
        let t = table.threads.get(&tid).filter(|t| t.state != State::Dead);
        t.ok_or(Errno::ESRCH)?.robust_list
    };
    uaccess::write(head_ptr, &head)?;
    uaccess::write(len_ptr, &(size_of::<RobustListHead>() as u64))?;
    Ok(0)
}
