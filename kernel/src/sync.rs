//! The kernel's one lock type, the order locks are taken in, and the rules
//! the scheduler checks.
//!
//! A lock guards against two things. Another CPU: a CPU that finds an
//! `IrqLock` held spins until it may take it, on real hardware in ticket
//! order (turns come in the order CPUs asked), under a hypervisor by
//! whoever finds it free first (`choose_discipline` says why). And an
//! interrupt handler on the same CPU:
//! a handler that takes a lock its CPU already holds would spin forever,
//! so `IrqLock` also turns interrupts off on its CPU for as long as it is
//! held (and restores the previous state afterwards). It is the only lock
//! in the kernel (console, PIC, files, ramfs nodes, pipes, the process
//! table, memory), so every one of them is safe to take from the timer
//! path.
//!
//! ## Lock order
//!
//! Sleep locks (`SleepLock`, below) come first, and are never taken
//! holding a spinlock: mount(2)'s and umount2(2)'s `fs::mount::MOUNTING`,
//! then a mounted disk's file system (`fs::ext2::Volume`), which its
//! operations hold across their disk reads and writes.
//!
//! A lock may be taken while holding only locks listed above it:
//!
//! 1. a ramfs node (`fs::ramfs::NodeRef`), then an open file's flags and
//!    offset (`fs::file::OpenFile`), in that order;
//! 2. `proc::TABLE`, the process table (`proc::current` takes it), then a
//!    process's descriptor table (`fs::file::Files`), then a poll wait queue (`proc::sched::PollQueue`, whose wake walks it inside
//!    the table);
//! 3. a pipe's buffer, a socket's state (`fs::socket`, one at a time),
//!    then the abstract socket names, an epoll instance's list
//!    (`fs::epoll`, never held while a watched file is asked), the console's input, the export list, the
//!    random generator (`random.rs`), the record locks (`fs::lock`), the
//!    System V tables (`ipc::msg`, `ipc::sem`, `ipc::shm`, one at a time;
//!    shm's reads the areas inside), the threads a PI futex sees exiting
//!    (`proc::futex`), the mount table and a disk volume's
//!    node table and pinned nodes (`fs::mount`, `fs::ext2`, one at a
//!    time), a sleep lock's flag, the disk's request slots
//!    (`virtio_blk.rs`, taken by its interrupt too, never held to sleep);
//! 4. profil's cost rings (taken inside the table by the timer path);
//! 5. memory: a file's pages (`fs::filedata`, reached by the page-fault
//!    path), the areas of the address spaces (`mm::areas`), then what a
//!    disk file's node leaves its volume when it goes (`fs::ext2`'s
//!    `Released`: the last mapping of a file may hold its last node, and
//!    mappings go inside the areas' lock), kernel-stack slots, the kernel
//!    heap (whose growth maps pages), one address space's page tables
//!    (`mm::paging`'s `TablesLock`), frames;
//! 6. the clock's state (`clock.rs`'s `TIMEKEEPING`, held by the tick and
//!    by clock_settime only to publish a new state; its readers take no
//!    lock), then the PIC, then the rate limit on lines user programs cause (`log`),
//!    then the kernel log's ring (`log`), then the serial port: anything
//!    may print.
//!
//! ## Rules, checked
//!
//! Every lock is made with its place in the order above (`Rank`, one per
//! kind of lock), and `IrqLock::lock` panics when a CPU takes a lock while
//! it holds one of a later rank ("lock order broken: a Table lock taken
//! while holding Frames"), naming where. So a wrong order fails the first
//! time its path runs, on one CPU, in any test; not only on the day two
//! CPUs happen to take the two locks at once and deadlock (Linux's lockdep
//! finds the same mistakes by learning the order the kernel uses; here it
//! is written down, and the kernel is held to it).
//!
//! A CPU that asks for a lock it holds already would wait for itself: the
//! lock keeps its holder's CPU and panics instead ("lock taken twice"). A
//! wait longer than `DEADLOCK_SECONDS` panics too, naming the holder's CPU
//! and where it took the lock. A lock held longer than `HELD_TOO_LONG_MS`
//! (its CPU's interrupts were off all that time) is warned about and
//! counted, or panics with `hold_panic=1`: a host that stops a virtual CPU
//! holding a lock makes such a hold too (`check_hold`). The test command
//! has a crash suite for each check.
//!
//! Nothing may sleep or switch while holding a lock: a lock held across a
//! switch would be held by a process that is not running, and the next
//! taker would spin forever (on one CPU, with interrupts off). So code
//! inside `proc::current(|p| ...)` must not sleep, and file locks are let go
//! before a read sleeps on the console or a pipe. `IrqLock` counts the locks
//! held (per CPU, in its record: arch/percpu.rs), and the scheduler's
//! switch panics if any is (`assert_none_held`), as xv6's `sched()` panics
//! when it is entered holding more than its lock.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::panic::Location;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use crate::arch::percpu::Cpu;
use x86_64::instructions::interrupts;

/// IrqLocks this CPU holds right now (its per-CPU count).
fn held() -> &'static AtomicU32 {
    crate::arch::percpu::this_cpu().locks_held()
}

/// How long a CPU may wait for one lock before the kernel calls it a
/// deadlock and panics, in seconds of the TSC. Generous: under emulation a
/// busy host can stop a virtual CPU for a while, and a false alarm would
/// fail a test that did nothing wrong.
const DEADLOCK_SECONDS: u64 = 20;

/// How long a lock may be held, in milliseconds of the TSC, before letting
/// it go panics. Every lock turns interrupts off, so a lock held this long
/// has kept its CPU deaf to the clock for a hundred ticks or more, and
/// every other CPU that wanted it has spun as long. The longest holds the
/// test suites make under emulation on a busy host are tens of
/// milliseconds (the host stops a virtual CPU that holds a lock), so this
/// is far above any honest hold.
const HELD_TOO_LONG_MS: u64 = 1000;

/// Whether locks are taken in ticket order (true) or by whoever finds them
/// free first; chosen once at boot by `choose_discipline`.
static FAIR: AtomicBool = AtomicBool::new(true);

/// Chooses how every lock waits, from the `lock=` boot option: ticket
/// order on real hardware, test-and-set under a hypervisor (`Auto`), or
/// either by name. Returns true for ticket order. Safe at any moment: a
/// test-and-set taker takes only a lock with no ticket outstanding, so the
/// two kinds of takers never pass each other.
///
/// Why two: a ticket lock is fair, which on real CPUs is what one wants
/// (no CPU is passed over forever). Under a hypervisor a virtual CPU can
/// be stopped at any moment by the host, which runs other work on its
/// core; when it is the next ticket holder, every CPU behind it waits for
/// the host to run it again, even with the lock free, and each CPU's tick
/// takes the process table's lock, so the queue rarely drains: under TCG,
/// four virtual CPUs on two host cores (beside a CPU hog) spent whole
/// minutes that way
/// (musl's thread test made 3 threads a second instead of hundreds, every
/// CPU spinning on the table). Whoever finds a test-and-set lock free
/// takes it, so a stopped waiter stops nobody (only a stopped holder
/// does). Linux makes the same choice: without paravirtual spinlocks its
/// guests fall back from queued locks to test-and-set (`virt_spin_lock`).
pub fn choose_discipline(kind: kcore::bootopts::LockKind) -> bool {
    use kcore::bootopts::LockKind;
    let fair = match kind {
        LockKind::Ticket => true,
        LockKind::TestAndSet => false,
        LockKind::Auto => !crate::arch::cpuid::under_hypervisor(),
    };
    FAIR.store(fair, Ordering::Relaxed);
    fair
}

/// A spinlock that also turns interrupts off on its own CPU: a ticket
/// lock, or on a virtual machine a test-and-set lock (`choose_discipline`).
///
/// A ticket taker draws a ticket (`next`) and waits until `serving` shows
/// it: CPUs get the lock in the order they asked, so none can be passed
/// over forever, as it could with a lock that whoever is quickest to see
/// it free takes (the `spin` crate's default). A test-and-set taker uses
/// the same two counters: the lock is free when they are equal, and it
/// draws a ticket only when that ticket would be served at once. The
/// owner's CPU is kept so that taking a lock twice on one CPU, which can
/// never end, panics at once instead of spinning.
///
/// While it waits, a CPU answers TLB shootdown requests
/// (`arch::smp::while_spinning`): its interrupts are off, so the IPI that
/// asks cannot reach it, and the CPU asking may be the one holding this lock.
pub struct IrqLock<T> {
    rank: Rank,
    next: AtomicU32,
    serving: AtomicU32,
    /// The holder's CPU index plus one; 0 while free.
    owner: AtomicU32,
    /// Where the holder took it (only ever a `&'static Location`) and the
    /// TSC then: what the deadlock and held-too-long panics report.
    taken_at: AtomicPtr<Location<'static>>,
    since: AtomicU64,
    value: UnsafeCell<T>,
}

// SAFETY: the ticket protocol gives one CPU at a time access to `value`
// (through a guard), so sharing the lock between CPUs shares `T` only as a
// `&mut` handed from one holder to the next: `T: Send` is what that needs.
unsafe impl<T: Send> Sync for IrqLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for IrqLock<T> {}

pub struct IrqGuard<'a, T> {
    lock: &'a IrqLock<T>,
    were_enabled: bool,
    /// When this lock turned interrupts off, while the kernel profiles
    /// itself (`kprof::interrupts_off_now`); 0 otherwise.
    off_since: u64,
}

impl<T> IrqLock<T> {
    /// A lock of rank `rank`: its place in the order (see `Rank`).
    pub const fn new(rank: Rank, value: T) -> Self {
        IrqLock {
            rank,
            next: AtomicU32::new(0),
            serving: AtomicU32::new(0),
            owner: AtomicU32::new(0),
            taken_at: AtomicPtr::new(core::ptr::null_mut()),
            since: AtomicU64::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, the lock gone: owning the lock means no one can hold it.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    /// Takes the lock, spinning while another CPU holds it, with this
    /// CPU's interrupts off until the guard is dropped. Panics if this CPU
    /// holds it already or if taking it now breaks the lock order.
    #[track_caller]
    pub fn lock(&self) -> IrqGuard<'_, T> {
        let were_enabled = interrupts::are_enabled();
        interrupts::disable();
        let off_since = if were_enabled {
            crate::kprof::interrupts_off_now()
        } else {
            0
        };
        let cpu = crate::arch::percpu::this_cpu();
        let me = cpu.index() + 1;
        if self.owner.load(Ordering::Relaxed) == me {
            panic!("lock taken twice on CPU {} (it would wait forever)", me - 1);
        }
        check_order(cpu, self.rank);
        if FAIR.load(Ordering::Relaxed) {
            let ticket = self.next.fetch_add(1, Ordering::Relaxed);
            if self.serving.load(Ordering::Acquire) != ticket {
                self.wait_until(|| self.serving.load(Ordering::Acquire) == ticket);
            }
        } else if !self.try_take() {
            // Spin on reads, trying only when it looks free: a failed
            // compare-exchange takes the line from the holder's CPU.
            self.wait_until(|| !self.is_locked() && self.try_take());
        }
        self.owner.store(me, Ordering::Relaxed);
        self.taken_at
            .store(Location::caller() as *const _ as *mut _, Ordering::Relaxed);
        self.since.store(crate::arch::rdtsc(), Ordering::Relaxed);
        cpu.locks_held().fetch_add(1, Ordering::Relaxed);
        note_rank(cpu, self.rank, true);
        IrqGuard {
            lock: self,
            were_enabled,
            off_since,
        }
    }

    /// Test-and-set: takes the lock if it is free, drawing the ticket
    /// being served (only while nobody holds or waits for one).
    fn try_take(&self) -> bool {
        let serving = self.serving.load(Ordering::Acquire);
        self.next
            .compare_exchange(
                serving,
                serving.wrapping_add(1),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// The slow path of `lock`: spins until `acquired` says the lock is
    /// this CPU's, answering shootdowns, and panics after
    /// `DEADLOCK_SECONDS`.
    #[cold]
    fn wait_until(&self, mut acquired: impl FnMut() -> bool) {
        let per_sec = crate::clock::tsc_per_sec();
        let start = crate::arch::rdtsc();
        let mut spins = 0u32;
        while !acquired() {
            crate::arch::smp::while_spinning();
            core::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1 << 16)
                && per_sec != 0
                && crate::arch::rdtsc().saturating_sub(start) > DEADLOCK_SECONDS * per_sec
            {
                panic!(
                    "a {:?} lock held by CPU {} (taken at {}) was waited for over {DEADLOCK_SECONDS} s (deadlock?)",
                    self.rank,
                    self.owner.load(Ordering::Relaxed).wrapping_sub(1),
                    self.holder_location()
                );
            }
        }
    }

    /// Where the holder took the lock, for a panic message.
    fn holder_location(&self) -> &'static Location<'static> {
        let at = self.taken_at.load(Ordering::Relaxed);
        // SAFETY: `taken_at` is only ever stored from a `&'static Location`
        // (`lock`), and such a location is never freed.
        unsafe { at.as_ref() }.unwrap_or(Location::caller())
    }

    /// Whether some CPU holds the lock now.
    pub fn is_locked(&self) -> bool {
        self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }

    /// Releases the lock whoever holds it, for the last words of a panic or
    /// a fault report, when the holder will never run again.
    ///
    /// # Safety
    /// The holder must never touch the protected value again: only for the
    /// way to power-off, with interrupts off (and the other CPUs stopped,
    /// or waiting on this lock, which they will now never get).
    pub unsafe fn force_unlock(&self) {
        if self.is_locked() {
            let mine =
                self.owner.load(Ordering::Relaxed) == crate::arch::percpu::this_cpu().index() + 1;
            self.owner.store(0, Ordering::Relaxed);
            self.serving
                .store(self.next.load(Ordering::Relaxed), Ordering::Release);
            if mine {
                held().fetch_sub(1, Ordering::Relaxed);
                note_rank(crate::arch::percpu::this_cpu(), self.rank, false);
            }
        }
    }
}

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this CPU holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only use.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for IrqGuard<'_, T> {
    fn drop(&mut self) {
        let lock = self.lock;
        let held_for = crate::arch::rdtsc().saturating_sub(lock.since.load(Ordering::Relaxed));
        let taken_at = lock.holder_location();
        lock.owner.store(0, Ordering::Relaxed);
        lock.serving.fetch_add(1, Ordering::Release);
        held().fetch_sub(1, Ordering::Relaxed);
        note_rank(crate::arch::percpu::this_cpu(), lock.rank, false);
        check_hold(lock.rank, held_for, taken_at);
        LONGEST_HOLD[lock.rank as usize].fetch_max(held_for, Ordering::Relaxed);
        if self.were_enabled {
            if self.off_since != 0 {
                crate::kprof::interrupts_were_off(lock.rank, self.off_since);
            }
            interrupts::enable();
        }
    }
}

/// Panics if any lock is held: called where the CPU leaves the current
/// thread of control (the scheduler's switches).
pub fn assert_none_held(at: &str) {
    let held = held().load(Ordering::Relaxed);
    if held != 0 {
        panic!("{at}: switching with {held} lock(s) held (nothing may sleep holding a lock)");
    }
}

/// A lock's place in the order at the top of this file, one rank per
/// kind of lock (every pipe's buffer has the rank `Channel`). A CPU may
/// take a lock only while every lock it holds has a lower rank, or the
/// same rank where the order lets several be held at once (`nests`).
/// `IrqLock::lock` checks it and panics on a lock taken out of order, so a
/// wrong order shows the first time the code path runs, not only on the
/// day two CPUs happen to deadlock on it. (Linux's lockdep learns the
/// order from what the kernel does; here it is written down and the
/// kernel is held to it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Rank {
    /// A ramfs or /proc node (rename and link hold two).
    Node,
    /// An open file's flags, then its offset.
    OpenFile,
    /// The process table.
    Table,
    /// A process's descriptor table (`fs::file::Files`).
    Files,
    /// A poll wait queue.
    PollQueue,
    /// A pipe's buffer, a socket's state.
    Channel,
    /// The abstract socket names, an epoll instance's list, the console's
    /// input, the random generator, the record locks, a System V table,
    /// the mount table, a disk volume's tables, a sleep lock's flag.
    Service,
    /// The disk's request slots and rings (`virtio_blk.rs`).
    Disk,
    /// profil's cost rings.
    ProfilCosts,
    /// A file's pages.
    FileData,
    /// The areas of the address spaces.
    Areas,
    /// What a disk node leaves its volume when it goes (a mapping's drop,
    /// inside the areas, may be a node's last).
    Released,
    /// The kernel-stack slots.
    StackSlots,
    /// The kernel heap.
    Heap,
    /// The page tables.
    PageTables,
    /// The frame allocator.
    Frames,
    /// The clock's state, for its writers (clock.rs).
    Clock,
    /// The PIC and its mask.
    Pic,
    /// The console's rate limit for user-caused lines.
    LogLimit,
    /// The kernel log's ring (`/dev/klog`).
    LogRing,
    /// The serial port.
    Serial,
}

impl Rank {
    /// Every rank, lowest first (`Rank::ALL[r as usize] == r`).
    pub const ALL: &[Rank] = &[
        Rank::Node,
        Rank::OpenFile,
        Rank::Table,
        Rank::Files,
        Rank::PollQueue,
        Rank::Channel,
        Rank::Service,
        Rank::Disk,
        Rank::ProfilCosts,
        Rank::FileData,
        Rank::Areas,
        Rank::Released,
        Rank::StackSlots,
        Rank::Heap,
        Rank::PageTables,
        Rank::Frames,
        Rank::Clock,
        Rank::Pic,
        Rank::LogLimit,
        Rank::LogRing,
        Rank::Serial,
    ];

    /// Whether several locks of this rank may be held at once: two nodes
    /// (rename), an open file's flags then its offset, the two PICs.
    fn nests(self) -> bool {
        matches!(self, Rank::Node | Rank::OpenFile | Rank::Pic)
    }
}

/// How many ranks there are (the per-CPU record keeps a count of each).
pub const RANKS: usize = Rank::ALL.len();

/// The longest hold of a lock of each rank since boot, in TSC cycles.
static LONGEST_HOLD: [AtomicU64; RANKS] = [const { AtomicU64::new(0) }; RANKS];

/// /proc/lock_stat: one line per rank, `NAME LONGEST_HOLD_NS`.
pub fn longest_holds_text() -> alloc::string::String {
    use core::fmt::Write;
    let mut text = alloc::string::String::new();
    for &rank in Rank::ALL {
        let ns = crate::clock::tsc_to_ns(LONGEST_HOLD[rank as usize].load(Ordering::Relaxed));
        let _ = writeln!(text, "{rank:?} {ns}");
    }
    text
}

/// Set on the way to power-off (`last_words`): from then on the checks
/// below stand aside, so that the panic message itself, which takes the
/// serial port's lock whatever the panicking CPU holds, cannot panic again.
static LAST_WORDS: AtomicBool = AtomicBool::new(false);

/// Turns the order and hold-time checks off for good: called by the panic
/// handler and the fatal-fault report before they print.
pub fn last_words() {
    LAST_WORDS.store(true, Ordering::Relaxed);
}

/// Panics if a lock of rank `rank` may not be taken now, by a CPU holding
/// the ranks `cpu.ranks_held()`.
#[track_caller]
fn check_order(cpu: &Cpu, rank: Rank) {
    let held = cpu.ranks_held().load(Ordering::Relaxed);
    let bit = 1u32 << rank as u32;
    let above = held & !(bit | (bit - 1));
    let again = held & bit != 0 && !rank.nests();
    if (above != 0 || again) && !LAST_WORDS.load(Ordering::Relaxed) {
        order_broken(rank, held);
    }
}

#[cold]
#[track_caller]
fn order_broken(rank: Rank, held: u32) -> ! {
    struct Ranks(u32);
    impl core::fmt::Display for Ranks {
        fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
            let mut first = true;
            for r in Rank::ALL.iter().filter(|r| self.0 & 1 << **r as u32 != 0) {
                write!(f, "{}{r:?}", if first { "" } else { ", " })?;
                first = false;
            }
            Ok(())
        }
    }
    panic!(
        "lock order broken: a {rank:?} lock taken while holding {} (sync.rs lists the order)",
        Ranks(held)
    );
}

/// Whether a hold longer than `HELD_TOO_LONG_MS` panics (the boot option
/// `hold_panic=1`) or is warned about and counted.
static HOLD_PANIC: AtomicBool = AtomicBool::new(false);

/// Holds longer than `HELD_TOO_LONG_MS` since boot.
static LONG_HOLDS: AtomicU64 = AtomicU64::new(0);

/// The boot option `hold_panic`: see `check_hold`.
pub fn set_hold_panic(on: bool) {
    HOLD_PANIC.store(on, Ordering::Relaxed);
}

/// Holds longer than `HELD_TOO_LONG_MS` since boot.
pub fn long_holds() -> u64 {
    LONG_HOLDS.load(Ordering::Relaxed)
}

/// Reports a lock of rank `rank`, taken at `taken_at`, held for `tsc`
/// cycles, more than `HELD_TOO_LONG_MS`. Called after the lock is let
/// go, so the report's own printing does not wait on it.
///
/// The TSC cannot tell a kernel that kept its CPU deaf for a second from
/// a host that stopped the virtual CPU while it held a lock (under TCG on
/// a busy host, for seconds: the PageTables lock of a fork was once seen
/// "held" 1419 ms). So, as Linux's soft-lockup detector, the kernel warns
/// and counts (`long_holds`), and panics only when told to
/// (`hold_panic=1`, which the crash suite uses to check the report).
fn check_hold(rank: Rank, tsc: u64, taken_at: &Location) {
    let per_ms = crate::clock::tsc_per_sec() / 1000;
    if per_ms == 0 || tsc <= HELD_TOO_LONG_MS * per_ms || LAST_WORDS.load(Ordering::Relaxed) {
        return;
    }
    let ms = tsc / per_ms;
    if HOLD_PANIC.load(Ordering::Relaxed) {
        panic!(
            "a {rank:?} lock taken at {taken_at} was held for {ms} ms, over {HELD_TOO_LONG_MS} ms (interrupts off all that time)"
        );
    }
    let count = LONG_HOLDS.fetch_add(1, Ordering::Relaxed) + 1;
    crate::warn!(
        "a {rank:?} lock taken at {taken_at} was held for {ms} ms, over {HELD_TOO_LONG_MS} ms (interrupts off all that time, or a host that stopped this virtual CPU; {count} since boot)"
    );
}

/// Counts a lock of rank `rank` taken (`taken`) or let go by this CPU, and
/// keeps the rank's bit set while any is held.
fn note_rank(cpu: &Cpu, rank: Rank, taken: bool) {
    let count = cpu.rank_count(rank as usize);
    let n = count.load(Ordering::Relaxed);
    let n = if taken { n + 1 } else { n.saturating_sub(1) };
    count.store(n, Ordering::Relaxed);
    let bit = 1u32 << rank as u32;
    let held = cpu.ranks_held().load(Ordering::Relaxed);
    let held = if n == 0 { held & !bit } else { held | bit };
    cpu.ranks_held().store(held, Ordering::Relaxed);
}

/// A lock a thread may hold while it sleeps: the file system holds one per
/// mounted disk across the disk reads and writes an operation needs, as
/// xv6's `sleeplock` guards a buffer across its disk I/O. A thread that
/// finds it taken sleeps until it is let go, instead of spinning: the
/// holder may be asleep itself, waiting for the disk.
///
/// The rule, checked: it may not be taken while an `IrqLock` is held (that
/// would be a sleep holding a spinlock: panics, naming the caller).
/// `IrqLock`s may be taken inside it. Sleep locks have their own order
/// (at the top of this file): mount's lock, then one disk's; no operation
/// holds two disks' (one that spans two disks is EXDEV before either is
/// taken).
pub struct SleepLock<T> {
    /// Whether some thread holds it; an `IrqLock` held only for a moment
    /// to test and set.
    busy: IrqLock<bool>,
    value: UnsafeCell<T>,
}

// SAFETY: `busy` gives one thread at a time access to `value` (through a
// guard), so sharing the lock shares `T` only as a `&mut` handed from one
// holder to the next, possibly on another CPU: `T: Send` is what that
// needs.
unsafe impl<T: Send> Sync for SleepLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SleepLock<T> {}

pub struct SleepGuard<'a, T> {
    lock: &'a SleepLock<T>,
}

impl<T> SleepLock<T> {
    pub const fn new(value: T) -> Self {
        SleepLock {
            busy: IrqLock::new(Rank::Service, false),
            value: UnsafeCell::new(value),
        }
    }

    /// What sleepers on this lock wait for: its address.
    fn chan(&self) -> crate::proc::sched::Chan {
        crate::proc::sched::Chan::SleepLock(self as *const Self as usize)
    }

    /// Takes the lock, sleeping (uninterruptibly, as Linux's file system
    /// locks) while another thread holds it. Panics if the caller holds a
    /// spinlock.
    #[track_caller]
    pub fn lock(&self) -> SleepGuard<'_, T> {
        let held = held().load(Ordering::Relaxed);
        if held != 0 {
            panic!(
                "a sleep lock taken at {} while holding {held} spinlock(s)",
                Location::caller()
            );
        }
        crate::proc::sched::wait_uninterruptible(self.chan(), || {
            let mut busy = self.busy.lock();
            let free = !*busy;
            *busy = true;
            free
        });
        SleepGuard { lock: self }
    }
}

impl<T> Deref for SleepGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while `busy` says its lock is held,
        // and only one guard exists then (`lock`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SleepGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` keeps this the only reference.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SleepGuard<'_, T> {
    fn drop(&mut self) {
        *self.lock.busy.lock() = false;
        crate::proc::sched::wakeup(self.lock.chan());
    }
}
