//! Signal-driven I/O: a file with O_ASYNC set (fcntl F_SETFL) sends its
//! owner a signal when it becomes ready, instead of the owner polling.
//!
//! The owner is the open file description's (`OpenFile::owner`): a
//! process (F_SETOWN with a pid), a process group (F_SETOWN with minus
//! its id) or one thread (F_SETOWN_EX with F_OWNER_TID). The signal is
//! SIGIO with no details, or the one F_SETSIG chose, with si_code
//! POLL_IN, POLL_OUT, POLL_ERR or POLL_HUP, si_band and si_fd, so a
//! program with many files can tell which one it was (a real-time signal
//! queues one per event).
//!
//! How it is found: setting O_ASYNC records the file here beside the
//! `Readiness` of the object it reads (a pipe, a socket, the terminal),
//! and counts itself in that `Readiness`. An object that changes calls
//! `Readiness::changed_for` with what the change can make possible
//! (`POLLIN` when data came, `POLLOUT` when room came, `POLLHUP` when
//! the other side went); when its count is not 0, `changed` asks each
//! file recorded beside it whether it is now ready for that, and signals
//! the owner of each that is. So a pipe's writer is not signalled for its
//! own writes, a reader is signalled for each write (as Linux's
//! `kill_fasync` in `pipe_write` does), and an object nobody watches pays
//! one atomic load. Files with no such object (regular files) accept
//! O_ASYNC and, as on Linux, never signal.
//!
//! Not done: Linux checks that the process that set the owner may signal
//! it (`sigio_perm`); here any owner is signalled.
//!
//! Lock order: `WATCHES` is a service lock (level 3 in sync.rs), taken
//! with nothing else held; the files are asked and the owners signalled
//! after it is let go.

use abi::signal::SIGIO;
use abi::types::*;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use super::file::OpenFile;
use crate::proc::sched::Readiness;
use crate::proc::{Pid, TABLE};
use crate::signal::{self, Origin};
use crate::sync::{IrqLock, Rank};

/// Who gets a file's signal and which signal: F_SETOWN, F_SETOWN_EX and
/// F_SETSIG's state, kept in the open file description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileOwner {
    /// F_OWNER_TID, F_OWNER_PID or F_OWNER_PGRP (Linux's default, for a
    /// file nobody set, is F_OWNER_TID with id 0).
    pub kind: i32,
    /// The thread, process or group; 0 for nobody.
    pub id: u32,
    /// F_SETSIG's signal; 0 for a plain SIGIO.
    pub signal: u32,
}

impl FileOwner {
    /// F_GETOWN's answer: a pid or thread id, or minus a group's.
    pub fn getown(&self) -> i32 {
        if self.kind == F_OWNER_PGRP {
            -(self.id as i32)
        } else {
            self.id as i32
        }
    }
}

/// F_SETOWN's and F_SETOWN_EX's owner, checked: EINVAL for an unknown
/// kind, ESRCH when no such thread, process or group is there (id 0 is
/// nobody, and always accepted).
pub fn owner(kind: i32, id: u32, signal: u32) -> Result<FileOwner, abi::Errno> {
    let table = TABLE.lock();
    let exists = match kind {
        F_OWNER_TID => table.threads.contains_key(&id),
        F_OWNER_PID => table.procs.get(&id).is_some_and(|p| !p.is_zombie()),
        F_OWNER_PGRP => table.procs.values().any(|p| p.pgid == id),
        _ => return Err(abi::Errno::EINVAL),
    };
    if id != 0 && !exists {
        return Err(abi::Errno::ESRCH);
    }
    Ok(FileOwner { kind, id, signal })
}

/// A file with O_ASYNC set, beside the object whose changes it follows.
struct Watch {
    /// The `Readiness` it follows (its address: only compared).
    object: usize,
    /// Which open file description (to forget it by).
    id: u64,
    file: Weak<OpenFile>,
    /// The descriptor that set O_ASYNC: the signal's si_fd.
    fd: i32,
}

static WATCHES: IrqLock<Vec<Watch>> = IrqLock::new(Rank::Service, Vec::new());

fn object_of(ready: &Readiness) -> usize {
    ready as *const Readiness as usize
}

/// O_ASYNC was set on `file` (through descriptor `fd`): from now on its
/// object's changes may signal its owner.
pub fn watch(file: &Arc<OpenFile>, fd: i32) {
    let Some(ready) = file.readiness() else {
        return; // a regular file: nothing ever becomes ready
    };
    WATCHES.lock().push(Watch {
        object: object_of(&ready),
        id: file.id,
        file: Arc::downgrade(file),
        fd,
    });
    ready.async_watch(true);
}

/// O_ASYNC was cleared on `file`, or it is being closed.
pub fn unwatch(file: &OpenFile) {
    let Some(ready) = file.readiness() else {
        return;
    };
    let mut watches = WATCHES.lock();
    let before = watches.len();
    watches.retain(|w| w.id != file.id);
    let gone = before - watches.len();
    drop(watches);
    for _ in 0..gone {
        ready.async_watch(false);
    }
}

/// The object `ready` changed in a way that can make `band` (POLLIN,
/// POLLOUT, POLLHUP, POLLERR bits) possible: signals the owner of every
/// O_ASYNC file on it that is now ready for some of that. Called with no
/// lock held (the object's own is let go first).
pub fn changed(ready: &Readiness, band: i16) {
    let object = object_of(ready);
    let files: Vec<(Arc<OpenFile>, i32)> = WATCHES
        .lock()
        .iter()
        .filter(|w| w.object == object)
        .filter_map(|w| Some((w.file.upgrade()?, w.fd)))
        .collect();
    for (file, fd) in files {
        let now = file.poll() & band;
        if now == 0 {
            continue;
        }
        // The event names the signal's si_code: data came (POLL_IN, also
        // when the writers went, as on Linux), room came (POLL_OUT, also
        // when the readers went); a change of any kind says what is ready.
        let event = if band == Readiness::ANY { now } else { band };
        let owner = *file.owner.lock();
        if owner.id != 0 {
            send(owner, event, fd);
        }
    }
}

/// Tells the owner of `file` (reached through descriptor `fd`) that its
/// lease is being broken (fs/lease.rs): SIGIO, or F_SETSIG's signal with
/// si_code POLL_MSG, as Linux's `lease_break_callback`.
pub fn lease_broken(file: &OpenFile, fd: i32) {
    let owner = *file.owner.lock();
    if owner.id == 0 {
        return;
    }
    let (signal, origin) = if owner.signal == 0 {
        (SIGIO, Origin::kernel())
    } else {
        let band = POLLIN | POLLRDNORM | abi::types::POLLMSG;
        (owner.signal, Origin::poll(abi::types::POLL_MSG, band, fd))
    };
    deliver(owner, signal, origin);
}

/// Sends `owner` its signal for a file descriptor `fd` on which `event`
/// happened.
fn send(owner: FileOwner, event: i16, fd: i32) {
    let (signal, origin) = if owner.signal == 0 {
        (SIGIO, Origin::kernel())
    } else {
        // Linux's band_table: what each si_code says is possible.
        let (code, band) = if event & POLLIN != 0 {
            (POLL_IN, POLLIN | POLLRDNORM)
        } else if event & POLLOUT != 0 {
            (POLL_OUT, POLLOUT | POLLWRNORM | POLLWRBAND)
        } else if event & POLLERR != 0 {
            (POLL_ERR, POLLERR)
        } else {
            (POLL_HUP, POLLHUP | POLLERR)
        };
        (owner.signal, Origin::poll(code, band, fd))
    };
    deliver(owner, signal, origin);
}

/// Sends `signal` to the thread, process or group `owner` names.
fn deliver(owner: FileOwner, signal: u32, origin: Origin) {
    match owner.kind {
        F_OWNER_PGRP => {
            signal::send_to_group(owner.id, signal, origin);
        }
        F_OWNER_TID => signal::send_to_thread(&mut TABLE.lock(), owner.id, signal, origin),
        _ => signal::send(&mut TABLE.lock(), owner.id as Pid, signal, origin),
    }
}
