//! File leases: fcntl's F_SETLEASE and F_GETLEASE (fcntl(2), "Leases").
//!
//! A lease lets a process with a file open learn, by a signal, that
//! another open of the file is coming, and finish with the file first (a
//! file server's cache, Samba's oplocks). A read lease is broken by an
//! open for writing (or a truncate), a write lease by any open. The opener
//! waits until the holder gives the lease up (F_SETLEASE F_UNLCK), or
//! downgrades it to a read lease when that is enough, or until
//! `BREAK_SECS` pass (Linux's `/proc/sys/fs/lease-break-time`), when the
//! kernel does it for the holder; with O_NONBLOCK the open fails at once
//! with EWOULDBLOCK, and the break goes on. The holder gets SIGIO, or
//! F_SETSIG's signal with si_code POLL_MSG and si_fd (`sigio::lease_broken`):
//! setting a lease makes the caller the file's owner, as on Linux.
//!
//! F_SETLEASE's rules, Linux's `generic_setlease`: only the file's owner
//! or a process with CAP_LEASE (EACCES); only a regular file (EINVAL); a
//! read lease not while the file is open for writing anywhere, this
//! descriptor included, and a write lease only when this open file
//! description is the file's only one (EAGAIN, Linux's
//! `check_conflicting_open`); no write lease while another description
//! holds one, and no new lease while another is being broken (EAGAIN).
//! While its break is pending, F_GETLEASE answers what the lease must
//! become. A lease is its open file description's, and goes when that
//! closes.
//!
//! So the table also counts each regular file's open file descriptions,
//! read-only ones and writable ones (Linux's `i_readcount` and
//! `i_writecount`), as `OpenFile::new` and its drop tell it. It is a
//! service lock (level 3 in sync.rs), taken with nothing else held or
//! inside the process table (a file dropped there); signals go after it
//! is let go. A waiting opener sleeps on `Chan::Lease(ino)`.

use abi::Errno;
use abi::types::{CAP_LEASE, F_OWNER_PID, F_RDLCK, F_UNLCK, F_WRLCK};
use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use super::file::{Kind, OpenFile};
use crate::proc::sched::{self, Chan};
use crate::sync::{IrqLock, Rank};

/// How long a lease's holder has to give it up (Linux's default).
pub const BREAK_SECS: u64 = 45;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    Read,
    Write,
}

impl Type {
    fn fcntl(kind: Option<Type>) -> u32 {
        (match kind {
            Some(Type::Read) => F_RDLCK,
            Some(Type::Write) => F_WRLCK,
            None => F_UNLCK,
        }) as u32
    }
}

struct Lease {
    ino: u64,
    /// The open file description holding it.
    id: u64,
    file: Weak<OpenFile>,
    /// The descriptor it was set through: the signal's si_fd.
    fd: i32,
    kind: Type,
    /// Being broken: what it must come down to (None: nothing) and by
    /// when (monotonic nanoseconds).
    breaking: Option<(Option<Type>, u64)>,
}

struct Table {
    leases: Vec<Lease>,
    /// Inode number -> open file descriptions of the file: (read-only,
    /// writable).
    opens: BTreeMap<u64, (u32, u32)>,
}

static LEASES: IrqLock<Table> = IrqLock::new(
    Rank::Service,
    Table {
        leases: Vec::new(),
        opens: BTreeMap::new(),
    },
);

/// Whether `file` counts as an open of a regular file (not an O_PATH
/// one): its inode number, and whether it is open for writing. Asked
/// before the table is locked (the file's and the node's locks come
/// first in the order).
fn counted(file: &OpenFile) -> Option<(u64, bool)> {
    let Kind::Node(node) = &file.kind else {
        return None;
    };
    let (readable, writable) = (file.readable(), file.writable());
    let node = node.lock();
    ((readable || writable) && node.is_regular()).then_some((node.ino, writable))
}

/// `file` was opened: counted for the rules of F_SETLEASE.
pub fn opened(file: &OpenFile) {
    if let Some((ino, for_writing)) = counted(file) {
        let mut table = LEASES.lock();
        let (read_only, writable) = table.opens.entry(ino).or_default();
        if for_writing {
            *writable += 1;
        } else {
            *read_only += 1;
        }
    }
}

/// `file`'s last descriptor closed: it no longer counts, and its lease, if
/// any, goes (an opener waiting for it looks again).
pub fn closed(file: &OpenFile) {
    let Some((ino, for_writing)) = counted(file) else {
        return;
    };
    let mut table = LEASES.lock();
    if let Some(counts) = table.opens.get_mut(&ino) {
        if for_writing {
            counts.1 -= 1;
        } else {
            counts.0 -= 1;
        }
        if *counts == (0, 0) {
            table.opens.remove(&ino);
        }
    }
    give_up(table, file.id, ino);
}

/// Drops the lease of open file description `id`, on the file `ino`, if
/// it holds one, and lets the table go; an opener waiting for it looks
/// again.
fn give_up(mut table: crate::sync::IrqGuard<'_, Table>, id: u64, ino: u64) {
    let before = table.leases.len();
    table.leases.retain(|l| l.id != id);
    let gone = table.leases.len() != before;
    drop(table);
    if gone {
        sched::wakeup(Chan::Lease(ino));
    }
}

/// Carries out the breaks whose time is up: each such lease becomes what
/// it had to (Linux's `time_out_leases`). Caller holds the table.
fn time_out(table: &mut Table) {
    let now = crate::clock::nanos_since_boot();
    table.leases.retain_mut(|l| match l.breaking {
        Some((target, by)) if by <= now => match target {
            Some(kind) => {
                l.kind = kind;
                l.breaking = None;
                true
            }
            None => false,
        },
        _ => true,
    });
}

/// F_SETLEASE on `file`, reached through descriptor `fd`: `arg` is
/// F_RDLCK, F_WRLCK or F_UNLCK (the rules atop this file).
pub fn set(file: &Arc<OpenFile>, fd: i32, arg: u64) -> Result<(), Errno> {
    let kind = match u32::try_from(arg).ok().and_then(|a| i16::try_from(a).ok()) {
        Some(F_RDLCK) => Some(Type::Read),
        Some(F_WRLCK) => Some(Type::Write),
        Some(F_UNLCK) => None,
        _ => return Err(Errno::EINVAL),
    };
    let Kind::Node(node) = &file.kind else {
        return Err(Errno::EINVAL);
    };
    let (ino, owner, regular) = {
        let node = node.lock();
        (node.ino, node.uid, node.is_regular())
    };
    let cred = crate::proc::cred();
    if cred.fsuid != owner && !cred.capable(CAP_LEASE) {
        return Err(Errno::EACCES);
    }
    if !regular {
        return Err(Errno::EINVAL);
    }
    let mine = if file.writable() { (0, 1) } else { (1, 0) };
    let mut table = LEASES.lock();
    time_out(&mut table);
    let Some(kind) = kind else {
        give_up(table, file.id, ino);
        return Ok(());
    };
    let (read_only, writable) = table.opens.get(&ino).copied().unwrap_or_default();
    let conflicting_open = match kind {
        Type::Read => writable > 0,
        Type::Write => (read_only, writable) != mine,
    };
    if conflicting_open {
        return Err(Errno::EAGAIN);
    }
    let others = table
        .leases
        .iter()
        .filter(|l| l.ino == ino && l.id != file.id);
    for other in others {
        let unlock_pending = matches!(other.breaking, Some((None, _)));
        if kind == Type::Write || unlock_pending {
            return Err(Errno::EAGAIN);
        }
    }
    let new = if let Some(mine) = table.leases.iter_mut().find(|l| l.id == file.id) {
        // Linux's lease_modify: a downgrade to a read lease settles a
        // pending downgrade, not a pending unlock.
        mine.kind = kind;
        mine.fd = fd;
        if kind == Type::Read && matches!(mine.breaking, Some((Some(Type::Read), _))) {
            mine.breaking = None;
        }
        false
    } else {
        table.leases.push(Lease {
            ino,
            id: file.id,
            file: Arc::downgrade(file),
            fd,
            kind,
            breaking: None,
        });
        true
    };
    drop(table);
    sched::wakeup(Chan::Lease(ino));
    if new {
        let pid = crate::proc::current_pid();
        let mut owner = file.owner.lock();
        owner.kind = F_OWNER_PID;
        owner.id = pid as u32;
    }
    Ok(())
}

/// F_GETLEASE on `file`: the lease it holds, or what it must become while
/// a break is pending; F_UNLCK for none.
pub fn get(file: &OpenFile) -> u32 {
    let mut table = LEASES.lock();
    time_out(&mut table);
    match table.leases.iter().find(|l| l.id == file.id) {
        None => Type::fcntl(None),
        Some(Lease {
            breaking: Some((target, _)),
            ..
        }) => Type::fcntl(*target),
        Some(l) => Type::fcntl(Some(l.kind)),
    }
}

/// An open of the regular file `ino` (for writing if `for_writing`, which
/// a truncate is too): breaks the leases it conflicts with and waits until
/// they are gone (Linux's `__break_lease`). EWOULDBLOCK at once with
/// `nonblock`; a signal ends the wait (ERESTARTSYS).
pub fn break_for(ino: u64, for_writing: bool, nonblock: bool) -> Result<(), Errno> {
    let conflicts = |l: &Lease| l.ino == ino && (for_writing || l.kind == Type::Write);
    loop {
        let (told, deadline) = {
            let mut table = LEASES.lock();
            time_out(&mut table);
            if !table.leases.iter().any(conflicts) {
                return Ok(());
            }
            let by = crate::clock::nanos_since_boot() + BREAK_SECS * 1_000_000_000;
            let target = if for_writing { None } else { Some(Type::Read) };
            let mut told: Vec<(Weak<OpenFile>, i32)> = Vec::new();
            for l in table.leases.iter_mut().filter(|l| conflicts(l)) {
                let already = match l.breaking {
                    // An unlock pending already says all; a downgrade
                    // pending is enough for a reader.
                    Some((None, _)) => true,
                    Some(_) => !for_writing,
                    None => false,
                };
                if !already {
                    l.breaking = Some((target, by));
                    told.push((l.file.clone(), l.fd));
                }
            }
            let deadline = table
                .leases
                .iter()
                .filter(|l| conflicts(l))
                .filter_map(|l| l.breaking.map(|(_, by)| by))
                .min()
                .unwrap_or(by);
            (told, deadline)
        };
        for (file, fd) in told {
            if let Some(file) = file.upgrade() {
                super::sigio::lease_broken(&file, fd);
            }
        }
        if nonblock {
            return Err(Errno::EAGAIN);
        }
        // Until the conflicting leases are gone, or the first deadline
        // (then `time_out` carries that break out); a lease set meanwhile
        // is broken in turn on the next round.
        let waited = sched::wait_event_until(Chan::Lease(ino), Some(deadline), || {
            let mut table = LEASES.lock();
            time_out(&mut table);
            (!table.leases.iter().any(conflicts)).then_some(())
        });
        match waited {
            Ok(()) => return Ok(()),
            Err(Errno::ETIMEDOUT) => {}
            Err(e) => return Err(e),
        }
    }
}
