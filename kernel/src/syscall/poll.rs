//! Waiting on many descriptors: poll, ppoll, select, pselect6 and epoll.
//!
//! All of them are one loop, `wait_for`: ask each open file which of
//! POLLIN, POLLOUT, POLLHUP, POLLERR hold now (`OpenFile::poll`, the one
//! readiness hook every kind of file answers) and join its wait queue
//! (`OpenFile::poll_queues`: the pipe's, the socket's, the terminal's
//! `PollQueue`, kept in a `PollTable` for the length of the wait); if
//! nothing the caller asks for holds, sleep until one of those objects
//! changes (it wakes its queue and no other), the deadline passes or a
//! signal comes. select's bit sets are turned into poll entries on the way in and
//! back into bits on the way out, as Linux's `do_select` reads the same
//! `poll` hooks. ppoll and pselect6 swap in a signal mask for the wait
//! (`suspend_with`, as sigsuspend), restored on the way back to user mode,
//! after a handler if one ran; a wait a signal ends is EINTR, never
//! restarted (Linux's ERESTARTNOHAND for these calls). Those two and
//! select write the time left back to the caller's timeout, as Linux does.
//! epoll keeps its list of descriptors in the kernel (`fs/epoll.rs`) and
//! asks the same hook of each; epoll_pwait and epoll_pwait2 take a mask
//! as ppoll does. eventfd's counter, a file made to be waited on, is
//! made here too.

use abi::Errno;
use abi::signal::{SigSet, Timeval};
use abi::types::{
    EFD_CLOEXEC, EFD_NONBLOCK, EFD_SEMAPHORE, EPOLL_CLOEXEC, EPOLL_CTL_ADD, EPOLL_CTL_DEL,
    EPOLL_CTL_MOD, EPOLLEXCLUSIVE, EPOLLONESHOT, EpollEvent, O_RDWR, POLLERR, POLLHUP, POLLIN,
    POLLNVAL, POLLOUT, POLLPRI, PollFd, Timespec,
};
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::SysResult;
use super::fs::fd_file;
use crate::fs::epoll::Epoll;
use crate::fs::eventfd::EventFd;
use crate::fs::file::{Kind, OpenFile};
use crate::mm::uaccess;
use crate::proc::sched::{self, Chan};
use crate::proc::{current, current_thread};

/// The files one wait looked at, by address: the thread is on each one's
/// wait queues until the wait ends and the table is dropped. (An epoll
/// instance's list may change meanwhile; a queue of a file taken off it is
/// left with the thread's id, which costs a wakeup that finds nothing.)
struct PollTable {
    tid: u32,
    files: BTreeMap<usize, Arc<OpenFile>>,
}

impl PollTable {
    fn new() -> PollTable {
        PollTable {
            tid: current_thread(|t| t.tid),
            files: BTreeMap::new(),
        }
    }

    /// Joins `file`'s wait queues, once per wait.
    fn watch(&mut self, file: &Arc<OpenFile>) {
        let key = Arc::as_ptr(file) as usize;
        if self.files.contains_key(&key) {
            return;
        }
        let tid = self.tid;
        file.poll_queues(&mut |queue| queue.add(tid));
        self.files.insert(key, file.clone());
    }
}

impl Drop for PollTable {
    fn drop(&mut self) {
        let tid = self.tid;
        for file in self.files.values() {
            file.poll_queues(&mut |queue| queue.remove(tid));
        }
    }
}

/// Fills each entry's `revents` from what its file can do now, and puts
/// the caller on each file's wait queues. A descriptor that is not open is
/// POLLNVAL.
fn scan(entries: &mut [PollFd], table: &mut PollTable) {
    for e in entries.iter_mut() {
        e.revents = 0;
        if e.fd < 0 {
            continue; // ignored, as poll(2) says
        }
        let Ok(file) = fd_file(e.fd) else {
            e.revents = POLLNVAL;
            continue;
        };
        table.watch(&file);
        e.revents = file.poll_normal() & (e.events | POLLHUP | POLLERR);
    }
}

/// poll's count: the entries with anything to report.
fn entries_ready(entries: &[PollFd]) -> usize {
    entries.iter().filter(|e| e.revents != 0).count()
}

/// Which of select's read, write and exceptional sets an entry belongs in
/// after a scan, as Linux's POLLIN_SET, POLLOUT_SET and POLLEX_SET say: a
/// hang-up or an error counts as readable, an error as writable.
fn select_sets(e: &PollFd) -> [bool; 3] {
    let got = e.revents;
    [
        e.events & POLLIN != 0 && got & (POLLIN | POLLHUP | POLLERR) != 0,
        e.events & POLLOUT != 0 && got & (POLLOUT | POLLERR) != 0,
        e.events & POLLPRI != 0 && got & POLLPRI != 0,
    ]
}

/// select's count: the bits it will set.
fn bits_ready(entries: &[PollFd]) -> usize {
    entries
        .iter()
        .map(|e| select_sets(e).iter().filter(|&&b| b).count())
        .sum()
}

/// The one wait of poll, select and epoll: until `ready` finds something
/// (Some), `deadline` (nanoseconds since boot; None: no limit; already
/// past: just look once) or a signal (EINTR). `ready` puts the thread on
/// the wait queue of each file it looks at (`PollTable::watch`), which is
/// what wakes it. `nothing` is the answer when the time runs out.
fn wait_for<R>(
    deadline: Option<u64>,
    mut ready: impl FnMut(&mut PollTable) -> Option<R>,
    nothing: impl Fn() -> R,
) -> Result<R, Errno> {
    let look_only = deadline.is_some_and(|at| at <= crate::clock::nanos_since_boot());
    let mut table = PollTable::new();
    let waited = sched::wait_event_until(Chan::Poll, deadline, || {
        ready(&mut table).or_else(|| look_only.then(&nothing))
    });
    drop(table);
    match waited {
        Ok(r) => Ok(r),
        Err(Errno::ETIMEDOUT) => Ok(nothing()),
        Err(_) => Err(Errno::EINTR),
    }
}

/// poll's and select's wait: scans the entries until `count` finds
/// something (poll counts entries, select bits). Returns the count.
fn wait_ready(
    entries: &mut [PollFd],
    deadline: Option<u64>,
    count: impl Fn(&[PollFd]) -> usize,
) -> Result<usize, Errno> {
    wait_for(
        deadline,
        |table| {
            scan(entries, table);
            let ready = count(entries);
            (ready > 0).then_some(ready)
        },
        || 0,
    )
}

/// Nanoseconds since boot `timeout` from now; EINVAL for a negative or
/// unnormalised time.
pub(super) fn deadline_after(timeout: Timespec) -> Result<u64, Errno> {
    if timeout.tv_sec < 0 || !(0..1_000_000_000).contains(&timeout.tv_nsec) {
        return Err(Errno::EINVAL);
    }
    let nanos = (timeout.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(timeout.tv_nsec as u64);
    Ok(crate::clock::nanos_since_boot().saturating_add(nanos))
}

/// The time left until `deadline`, for the caller's timeout.
pub(super) fn left_until(deadline: u64) -> Timespec {
    let left = deadline.saturating_sub(crate::clock::nanos_since_boot());
    Timespec {
        tv_sec: (left / 1_000_000_000) as i64,
        tv_nsec: (left % 1_000_000_000) as i64,
    }
}

/// Reads `nfds` poll entries (EINVAL past `RLIMIT_NOFILE`, as Linux) and
/// checks that their `revents` can be written back.
fn read_entries(fds: u64, nfds: u64) -> Result<Vec<PollFd>, Errno> {
    if nfds > current(|p| p.fd_limit()) as u64 {
        return Err(Errno::EINVAL);
    }
    let size = size_of::<PollFd>() as u64;
    let entries = (0..nfds)
        .map(|i| uaccess::read::<PollFd>(fds + i * size))
        .collect::<Result<_, _>>()?;
    uaccess::check_range(fds, (nfds * size) as usize, true)?;
    Ok(entries)
}

fn write_revents(fds: u64, entries: &[PollFd]) -> Result<(), Errno> {
    let size = size_of::<PollFd>() as u64;
    for (i, e) in entries.iter().enumerate() {
        uaccess::write(fds + i as u64 * size + 6, &(e.revents as u16))?;
    }
    Ok(())
}

/// For ppoll and pselect6: the mask to wait under, if one is given
/// (its size must be 8 bytes, EINVAL otherwise).
fn read_mask(mask: u64, size: u64) -> Result<Option<SigSet>, Errno> {
    if mask == 0 {
        return Ok(None);
    }
    if size != super::signal::SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    uaccess::read(mask).map(Some)
}

/// Waits under `mask` (until the way back to user mode restores the
/// caller's, as sigsuspend does).
fn with_mask<R>(mask: Option<SigSet>, wait: impl FnOnce() -> R) -> R {
    if let Some(mask) = mask {
        current_thread(|t| crate::signal::suspend_with(t, mask));
    }
    wait()
}

/// poll(2): `timeout_ms` in milliseconds, negative for none.
pub fn poll(fds: u64, nfds: u64, timeout_ms: i32) -> SysResult {
    let mut entries = read_entries(fds, nfds)?;
    let deadline =
        (timeout_ms >= 0).then(|| crate::clock::nanos_since_boot() + timeout_ms as u64 * 1_000_000);
    let ready = wait_ready(&mut entries, deadline, entries_ready)?;
    write_revents(fds, &entries)?;
    Ok(ready)
}

/// ppoll(2): a timespec timeout (null: none) and a signal mask for the
/// wait.
pub fn ppoll(fds: u64, nfds: u64, timeout: u64, mask: u64, mask_size: u64) -> SysResult {
    let mut entries = read_entries(fds, nfds)?;
    let deadline = if timeout != 0 {
        Some(deadline_after(uaccess::read(timeout)?)?)
    } else {
        None
    };
    let mask = read_mask(mask, mask_size)?;
    let ready = with_mask(mask, || wait_ready(&mut entries, deadline, entries_ready))?;
    write_revents(fds, &entries)?;
    if let Some(deadline) = deadline {
        uaccess::write(timeout, &left_until(deadline))?;
    }
    Ok(ready)
}

/// select's three sets, read from the caller: one bit per descriptor
/// below `nfds`, in 64-bit words.
struct FdSets {
    nfds: usize,
    read: Vec<u64>,
    write: Vec<u64>,
    except: Vec<u64>,
}

impl FdSets {
    fn words(nfds: usize) -> usize {
        nfds.div_ceil(64)
    }

    fn read_set(addr: u64, nfds: usize) -> Result<Vec<u64>, Errno> {
        let words = Self::words(nfds);
        if addr == 0 {
            return Ok(alloc::vec![0; words]);
        }
        let mut set: Vec<u64> = (0..words)
            .map(|i| uaccess::read::<u64>(addr + 8 * i as u64))
            .collect::<Result<_, _>>()?;
        // Bits at or past nfds are not looked at.
        if !nfds.is_multiple_of(64)
            && let Some(last) = set.last_mut()
        {
            *last &= (1u64 << (nfds % 64)) - 1;
        }
        Ok(set)
    }

    fn read(nfds: i32, r: u64, w: u64, e: u64) -> Result<FdSets, Errno> {
        let nfds = usize::try_from(nfds).map_err(|_| Errno::EINVAL)?;
        // Linux looks no further than the descriptors the process has.
        let nfds = nfds.min(current(|p| p.fd_limit()));
        Ok(FdSets {
            nfds,
            read: Self::read_set(r, nfds)?,
            write: Self::read_set(w, nfds)?,
            except: Self::read_set(e, nfds)?,
        })
    }

    fn has(set: &[u64], fd: usize) -> bool {
        set[fd / 64] & (1 << (fd % 64)) != 0
    }

    /// One poll entry per descriptor in any set; a descriptor in a set
    /// that is not open is EBADF.
    fn entries(&self) -> Result<Vec<PollFd>, Errno> {
        let mut entries = Vec::new();
        for fd in 0..self.nfds {
            let mut events = 0;
            if Self::has(&self.read, fd) {
                events |= POLLIN;
            }
            if Self::has(&self.write, fd) {
                events |= POLLOUT;
            }
            if Self::has(&self.except, fd) {
                events |= POLLPRI;
            }
            if events != 0 {
                fd_file(fd as i32)?;
                entries.push(PollFd {
                    fd: fd as i32,
                    events,
                    revents: 0,
                });
            }
        }
        Ok(entries)
    }

    /// Writes back the sets with only the ready bits (`select_sets`).
    fn write_back(&self, entries: &[PollFd], r: u64, w: u64, e: u64) -> Result<(), Errno> {
        let words = Self::words(self.nfds);
        let mut sets = [(); 3].map(|()| alloc::vec![0u64; words]);
        for entry in entries {
            let fd = entry.fd as usize;
            for (set, ready) in sets.iter_mut().zip(select_sets(entry)) {
                if ready {
                    set[fd / 64] |= 1 << (fd % 64);
                }
            }
        }
        for (addr, set) in [r, w, e].into_iter().zip(&sets) {
            if addr != 0 {
                for (i, word) in set.iter().enumerate() {
                    uaccess::write(addr + 8 * i as u64, word)?;
                }
            }
        }
        Ok(())
    }
}

/// select and pselect6 after their timeouts are read.
fn select_until(
    nfds: i32,
    r: u64,
    w: u64,
    e: u64,
    deadline: Option<u64>,
    mask: Option<SigSet>,
) -> SysResult {
    let sets = FdSets::read(nfds, r, w, e)?;
    let mut entries = sets.entries()?;
    // A timeout leaves the last scan, in which no select bit was ready.
    let ready = with_mask(mask, || wait_ready(&mut entries, deadline, bits_ready))?;
    sets.write_back(&entries, r, w, e)?;
    Ok(ready)
}

/// select(2): a timeval timeout (null: none), written back with the time
/// left.
pub fn select(nfds: i32, r: u64, w: u64, e: u64, timeout: u64) -> SysResult {
    let deadline = if timeout != 0 {
        // Linux carries whole seconds of microseconds over; what is still
        // negative after that is EINVAL.
        let tv: Timeval = uaccess::read(timeout)?;
        Some(deadline_after(Timespec {
            tv_sec: tv.tv_sec.saturating_add(tv.tv_usec / 1_000_000),
            tv_nsec: tv.tv_usec % 1_000_000 * 1000,
        })?)
    } else {
        None
    };
    let n = select_until(nfds, r, w, e, deadline, None)?;
    if let Some(deadline) = deadline {
        let left = left_until(deadline);
        let tv = Timeval {
            tv_sec: left.tv_sec,
            tv_usec: left.tv_nsec / 1000,
        };
        uaccess::write(timeout, &tv)?;
    }
    Ok(n)
}

/// pselect6(2): a timespec timeout and, at `sig`, a pointer to the mask
/// and its size (the kernel's sixth argument packs the two).
pub fn pselect6(nfds: i32, r: u64, w: u64, e: u64, timeout: u64, sig: u64) -> SysResult {
    let deadline = if timeout != 0 {
        Some(deadline_after(uaccess::read(timeout)?)?)
    } else {
        None
    };
    let mask = if sig != 0 {
        let [mask, size]: [u64; 2] = uaccess::read(sig)?;
        read_mask(mask, size)?
    } else {
        None
    };
    let n = select_until(nfds, r, w, e, deadline, mask)?;
    if let Some(deadline) = deadline {
        uaccess::write(timeout, &left_until(deadline))?;
    }
    Ok(n)
}

/// epoll_create(2): `size` must be positive (and is otherwise unused, as
/// on Linux since 2.6.8).
pub fn epoll_create(size: i32) -> SysResult {
    if size <= 0 {
        return Err(Errno::EINVAL);
    }
    epoll_create1(0)
}

/// epoll_create1(2): EPOLL_CLOEXEC is the one flag.
pub fn epoll_create1(flags: u32) -> SysResult {
    if flags & !EPOLL_CLOEXEC != 0 {
        return Err(Errno::EINVAL);
    }
    let file = OpenFile::new(Kind::Epoll(Epoll::new()), O_RDWR, None);
    current(|p| {
        p.files
            .install(&file, flags & EPOLL_CLOEXEC != 0, p.fd_limit())
    })
    .map(|fd| fd as usize)
}

/// eventfd2(2): a counter (fs/eventfd.rs) at `initial`, read and written
/// as a descriptor. EFD_SEMAPHORE, EFD_NONBLOCK and EFD_CLOEXEC, each
/// other bit EINVAL.
pub fn eventfd2(initial: u32, flags: u32) -> SysResult {
    if flags & !(EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let counter = EventFd::new(initial, flags & EFD_SEMAPHORE != 0);
    let file = OpenFile::new(
        Kind::EventFd(counter),
        O_RDWR | (flags & EFD_NONBLOCK),
        None,
    );
    current(|p| {
        p.files
            .install(&file, flags & EFD_CLOEXEC != 0, p.fd_limit())
    })
    .map(|fd| fd as usize)
}

/// The epoll instance open as `epfd` (EBADF; EINVAL for another file).
fn epoll_of(epfd: i32) -> Result<Arc<Epoll>, Errno> {
    match &fd_file(epfd)?.kind {
        Kind::Epoll(epoll) => Ok(epoll.clone()),
        _ => Err(Errno::EINVAL),
    }
}

/// epoll_ctl(2), with Linux's checks in Linux's order: the event read
/// (EFAULT; not for EPOLL_CTL_DEL), both descriptors (EBADF), a file that
/// cannot be polled (a regular file, a directory, a device other than the
/// terminal: EPERM; a FIFO can), the epoll instance itself or a file that is not one
/// (EINVAL), EPOLLEXCLUSIVE with EPOLL_CTL_MOD or with EPOLLONESHOT
/// (EINVAL), then the operation (EEXIST, ENOENT, ELOOP; EINVAL for an
/// unknown one).
pub fn epoll_ctl(epfd: i32, op: u32, fd: i32, event: u64) -> SysResult {
    let wanted = if op != EPOLL_CTL_DEL {
        uaccess::read::<EpollEvent>(event)?
    } else {
        EpollEvent::default()
    };
    let ep_file = fd_file(epfd)?;
    let target = fd_file(fd)?;
    let pollable = match &target.kind {
        Kind::Node(_) if target.pipe().is_some() => true, // a FIFO
        Kind::Node(node) => node.lock().device().is_some_and(|d| d.is_terminal()),
        _ => true,
    };
    if !pollable {
        return Err(Errno::EPERM);
    }
    let Kind::Epoll(epoll) = &ep_file.kind else {
        return Err(Errno::EINVAL);
    };
    if Arc::ptr_eq(&ep_file, &target) {
        return Err(Errno::EINVAL);
    }
    let (events, data) = (wanted.events, wanted.data);
    if events & EPOLLEXCLUSIVE != 0 && (op == EPOLL_CTL_MOD || events & EPOLLONESHOT != 0) {
        return Err(Errno::EINVAL);
    }
    match op {
        EPOLL_CTL_ADD => epoll.add(fd, &target, events, data),
        EPOLL_CTL_MOD => epoll.modify(fd, &target, events, data),
        EPOLL_CTL_DEL => epoll.remove(fd, &target),
        _ => Err(Errno::EINVAL),
    }
    .map(|()| 0)
}

/// The wait of the epoll_wait family: `max` events at most (EINVAL unless
/// positive; a buffer outside user space EFAULT), until `deadline`.
fn epoll_wait_until(
    epfd: i32,
    events: u64,
    max: i32,
    deadline: Option<u64>,
    mask: Option<SigSet>,
) -> SysResult {
    let size = size_of::<EpollEvent>();
    let max = usize::try_from(max)
        .ok()
        .filter(|&m| m > 0 && m <= i32::MAX as usize / size)
        .ok_or(Errno::EINVAL)?;
    // Only that the buffer is in user space, as Linux's access_ok: a
    // wait that finds nothing writes nothing, and a bad page is EFAULT
    // when an event is copied to it.
    let end = events.checked_add((max * size) as u64);
    if end.is_none_or(|end| end > crate::mm::USER_TOP) {
        return Err(Errno::EFAULT);
    }
    let epoll = epoll_of(epfd)?;
    let ready = with_mask(mask, || {
        wait_for(
            deadline,
            |table| {
                for file in epoll.files() {
                    table.watch(&file);
                }
                let ready = epoll.collect(max, true);
                (!ready.is_empty()).then_some(ready)
            },
            alloc::vec::Vec::new,
        )
    })?;
    for (i, event) in ready.iter().enumerate() {
        uaccess::write(events + (i * size) as u64, event)?;
    }
    Ok(ready.len())
}

/// epoll_wait(2): `timeout_ms` in milliseconds, negative for none.
pub fn epoll_wait(epfd: i32, events: u64, max: i32, timeout_ms: i32) -> SysResult {
    let deadline =
        (timeout_ms >= 0).then(|| crate::clock::nanos_since_boot() + timeout_ms as u64 * 1_000_000);
    epoll_wait_until(epfd, events, max, deadline, None)
}

/// epoll_pwait(2): epoll_wait with a signal mask for the wait.
pub fn epoll_pwait(
    epfd: i32,
    events: u64,
    max: i32,
    timeout_ms: i32,
    mask: u64,
    size: u64,
) -> SysResult {
    let deadline =
        (timeout_ms >= 0).then(|| crate::clock::nanos_since_boot() + timeout_ms as u64 * 1_000_000);
    let mask = read_mask(mask, size)?;
    epoll_wait_until(epfd, events, max, deadline, mask)
}

/// epoll_pwait2(2): a timespec timeout (null: none) instead of
/// milliseconds; it is not written back.
pub fn epoll_pwait2(
    epfd: i32,
    events: u64,
    max: i32,
    timeout: u64,
    mask: u64,
    size: u64,
) -> SysResult {
    let deadline = if timeout != 0 {
        Some(deadline_after(uaccess::read(timeout)?)?)
    } else {
        None
    };
    let mask = read_mask(mask, size)?;
    epoll_wait_until(epfd, events, max, deadline, mask)
}
