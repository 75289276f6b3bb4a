//! System V IPC: message queues (msg.rs), semaphore sets (sem.rs) and
//! shared memory segments (shm.rs).
//!
//! Each kind is one table (`kcore::ipc::Ids`, whose rules for keys, ids
//! and permissions the host tests) behind its own lock. An object is found
//! by its id on every call and after every sleep, never kept by reference,
//! so a call that slept while its object was removed (IPC_RMID) finds the
//! id gone and says EIDRM, as on Linux. Waiters sleep on a channel of the
//! object (`Chan::MsgQueue`, `Chan::SemSet`) and look again when woken;
//! a signal ends the wait with EINTR (these calls are never restarted,
//! signal(7)). Nothing here touches user memory: `syscall/ipc.rs` copies
//! in before and out after, and msgrcv takes a message off its queue only
//! once it reached the caller.
//!
//! Everyone is root here (the dispatch table's getuid), so the permission
//! bits are kept and reported but every check passes; `kcore::ipc` shows
//! them refusing other users.
//!
//! The tables sit at level 3 of the lock order in sync.rs: taken with no
//! other lock held, and nothing but memory's locks taken inside (shm.rs
//! counts attachments in the areas).

pub mod msg;
pub mod sem;
pub mod shm;

use abi::Errno;
use alloc::sync::Arc;
use kcore::cred::Cred;

use crate::proc::sched::{self, Chan};

/// Who the caller is to the permission checks: its credentials, asked
/// before a table is locked (the process table comes first in the order).
pub fn caller() -> Arc<Cred> {
    crate::proc::cred()
}

/// The caller's process id (`msg_lspid`, `sempid`, `shm_lpid`), asked
/// while a System V table is held, so from the CPU's record and not the
/// process table (which comes before the System V tables in the order).
fn caller_pid() -> i32 {
    crate::proc::current_pid()
}

/// Seconds since the epoch (the `*_time` fields).
fn now() -> i64 {
    (crate::clock::realtime_nanos() / 1_000_000_000) as i64
}

/// Sleeps on `chan` until `ready` holds (Ok), `deadline` passes
/// (ETIMEDOUT) or a signal comes (EINTR).
fn wait(chan: Chan, deadline: Option<u64>, mut ready: impl FnMut() -> bool) -> Result<(), Errno> {
    match sched::wait_event_until(chan, deadline, || ready().then_some(())) {
        Err(crate::signal::ERESTARTSYS) => Err(Errno::EINTR),
        other => other,
    }
}

/// A process ended: its semaphore adjustments are applied (SEM_UNDO).
pub fn process_exited(pid: u32) {
    sem::apply_undo(pid as i32);
}
