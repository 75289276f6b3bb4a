//! System V message queues: msgget, msgsnd, msgrcv, msgctl.
//!
//! A queue is a list of typed messages and a byte budget (`msg_qbytes`,
//! 16 KiB unless IPC_SET changes it). A sender whose message does not fit
//! (the bytes, or one message more than the budget has bytes: Linux's
//! `msg_fits_inqueue`) waits on the queue's channel, or is EAGAIN with
//! IPC_NOWAIT; a receiver that finds no message of the type it asks for
//! (`kcore::ipc::Pick`) waits there too, or is ENOMSG. Every change wakes
//! both sides and each looks again.
//!
//! A receive copies the message to the caller before taking it off the
//! queue (`receive`'s `deliver`), so a bad buffer is EFAULT and the message
//! stays for the next receiver; Linux loses it.

use abi::Errno;
use abi::ipc::{IPC_NOWAIT, MSG_COPY, MSG_NOERROR, MSGMAX, MSGMNB, MSGMNI, MsgInfo, MsqidDs};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use kcore::ipc::{self as rules, Entry, Found, Ids, Pick, READ, WRITE, Which};

use super::{caller, caller_pid, now, wait};
use crate::proc::sched::{self, Chan};
use crate::sync::{IrqLock, Rank};

struct Message {
    mtype: i64,
    text: Vec<u8>,
    /// Unique over all queues: names the message between the copy out and
    /// the taking.
    serial: u64,
}

struct Queue {
    messages: VecDeque<Message>,
    /// Bytes of text queued (`msg_cbytes`), and the most there may be.
    bytes: usize,
    qbytes: usize,
    stime: i64,
    rtime: i64,
    ctime: i64,
    lspid: i32,
    lrpid: i32,
}

impl Queue {
    /// Whether a message of `len` bytes may go in now: the bytes fit the
    /// budget, and there is one message fewer than the budget has bytes
    /// (Linux's `msg_fits_inqueue`).
    fn fits(&self, len: usize) -> bool {
        self.bytes + len <= self.qbytes && self.messages.len() < self.qbytes
    }

    /// The message `pick` chooses, if there is one.
    fn find(&self, pick: Pick) -> Option<&Message> {
        let at = pick.choose(self.messages.iter().map(|m| m.mtype))?;
        Some(&self.messages[at])
    }
}

static QUEUES: IrqLock<Ids<Queue>> = IrqLock::new(Rank::Service, Ids::new(MSGMNI));
static SERIAL: AtomicU64 = AtomicU64::new(0);

fn chan(id: i32) -> Chan {
    Chan::MsgQueue(id)
}

/// msgget(2): the queue with `key`, made if need be (see `Ids::lookup`).
pub fn get(key: i32, flags: u32) -> Result<i32, Errno> {
    let cred = caller();
    let mut queues = QUEUES.lock();
    match queues.lookup(key, flags, &cred, |_| Ok(()))? {
        Found::Id(id) => Ok(id),
        Found::Create => {
            let queue = Queue {
                messages: VecDeque::new(),
                bytes: 0,
                qbytes: MSGMNB,
                stime: 0,
                rtime: 0,
                ctime: now(),
                lspid: 0,
                lrpid: 0,
            };
            queues.insert(rules::new_perm(key, &cred, flags), queue)
        }
    }
}

/// msgsnd(2) of a message already copied in: waits for room unless
/// IPC_NOWAIT (EAGAIN); EIDRM if the queue goes meanwhile.
pub fn send(id: i32, mtype: i64, text: Vec<u8>, flags: u32) -> Result<(), Errno> {
    let cred = caller();
    let mut missing = Errno::EINVAL;
    loop {
        {
            let mut queues = QUEUES.lock();
            let entry = queues.get_mut(id).map_err(|_| missing)?;
            if !rules::permits(&entry.perm, &cred, WRITE) {
                return Err(Errno::EACCES);
            }
            let queue = &mut entry.obj;
            if queue.fits(text.len()) {
                queue.bytes += text.len();
                queue.messages.push_back(Message {
                    mtype,
                    text,
                    serial: SERIAL.fetch_add(1, Ordering::Relaxed),
                });
                queue.lspid = caller_pid();
                queue.stime = now();
                drop(queues);
                sched::wakeup(chan(id));
                return Ok(());
            }
            if flags & IPC_NOWAIT != 0 {
                return Err(Errno::EAGAIN);
            }
        }
        missing = Errno::EIDRM;
        wait(chan(id), None, || {
            QUEUES
                .lock()
                .get(id)
                .map_or(true, |e| e.obj.fits(text.len()))
        })?;
    }
}

/// msgrcv(2): the message `pick` chooses, at most `size` bytes of text
/// (a longer one is E2BIG and stays, unless MSG_NOERROR cuts it). Waits
/// for one unless IPC_NOWAIT (ENOMSG). `deliver` gets the type and text
/// and copies them out; only if it succeeds is the message taken (never,
/// with MSG_COPY). Returns the length of text delivered.
pub fn receive(
    id: i32,
    size: usize,
    pick: Pick,
    flags: u32,
    mut deliver: impl FnMut(i64, &[u8]) -> Result<(), Errno>,
) -> Result<usize, Errno> {
    let cred = caller();
    let mut missing = Errno::EINVAL;
    loop {
        let chosen = {
            let queues = QUEUES.lock();
            let entry = queues.get(id).map_err(|_| missing)?;
            if !rules::permits(&entry.perm, &cred, READ) {
                return Err(Errno::EACCES);
            }
            entry
                .obj
                .find(pick)
                .map(|m| {
                    if m.text.len() > size && flags & MSG_NOERROR == 0 {
                        return Err(Errno::E2BIG);
                    }
                    let len = m.text.len().min(size);
                    Ok((m.serial, m.mtype, m.text[..len].to_vec()))
                })
                .transpose()?
        };
        if let Some((serial, mtype, text)) = chosen {
            deliver(mtype, &text)?;
            if flags & MSG_COPY != 0 || take(id, serial) {
                return Ok(text.len());
            }
            continue; // another receiver took it first
        }
        if flags & IPC_NOWAIT != 0 {
            return Err(Errno::ENOMSG);
        }
        missing = Errno::EIDRM;
        wait(chan(id), None, || {
            QUEUES
                .lock()
                .get(id)
                .map_or(true, |e| e.obj.find(pick).is_some())
        })?;
    }
}

/// Takes the message `serial` off queue `id`, if it is still there.
fn take(id: i32, serial: u64) -> bool {
    let mut queues = QUEUES.lock();
    let Ok(entry) = queues.get_mut(id) else {
        return false;
    };
    let queue = &mut entry.obj;
    let Some(at) = queue.messages.iter().position(|m| m.serial == serial) else {
        return false;
    };
    let message = queue.messages.remove(at).expect("found above");
    queue.bytes -= message.text.len();
    queue.lrpid = caller_pid();
    queue.rtime = now();
    drop(queues);
    sched::wakeup(chan(id));
    true
}

/// msgctl's IPC_STAT, MSG_STAT, MSG_STAT_ANY: the queue's record and id.
pub fn stat(which: Which) -> Result<(i32, MsqidDs), Errno> {
    let cred = caller();
    let queues = QUEUES.lock();
    let (id, entry) = queues.for_stat(which, &cred)?;
    Ok((id, record(entry)))
}

/// `/proc/sysvipc/msg`: every queue, whoever may read it (as on Linux).
pub fn proc_text() -> alloc::string::String {
    let rows: Vec<_> = QUEUES
        .lock()
        .iter()
        .map(|(id, entry)| (id, record(entry)))
        .collect();
    kcore::procfs::sysvipc_msg(&rows)
}

/// What IPC_STAT reports of a queue.
fn record(entry: &Entry<Queue>) -> MsqidDs {
    let q = &entry.obj;
    MsqidDs {
        msg_perm: entry.perm,
        msg_stime: q.stime,
        msg_rtime: q.rtime,
        msg_ctime: q.ctime,
        msg_cbytes: q.bytes as u64,
        msg_qnum: q.messages.len() as u64,
        msg_qbytes: q.qbytes as u64,
        msg_lspid: q.lspid,
        msg_lrpid: q.lrpid,
        ..MsqidDs::default()
    }
}

/// msgctl IPC_SET: owner, group, permission bits and byte budget, by the
/// owner, the creator or root (EPERM). A budget past MSGMNB needs root
/// (EPERM), as Linux's `CAP_SYS_RESOURCE`.
pub fn set(id: i32, from: &MsqidDs) -> Result<(), Errno> {
    let cred = caller();
    let mut queues = QUEUES.lock();
    let entry = queues.owned_mut(id, &cred)?;
    if from.msg_qbytes > MSGMNB as u64 && !cred.is_root() {
        return Err(Errno::EPERM);
    }
    rules::set_owner(&mut entry.perm, &from.msg_perm);
    entry.obj.qbytes = usize::try_from(from.msg_qbytes).unwrap_or(usize::MAX);
    entry.obj.ctime = now();
    drop(queues);
    sched::wakeup(chan(id)); // a larger budget may let senders in
    Ok(())
}

/// msgctl IPC_RMID: the queue and its messages go at once; its waiters
/// wake to EIDRM.
pub fn remove(id: i32) -> Result<(), Errno> {
    let cred = caller();
    let mut queues = QUEUES.lock();
    queues.owned_mut(id, &cred)?;
    let gone = queues.remove(id);
    drop(queues);
    drop(gone);
    sched::wakeup(chan(id));
    Ok(())
}

/// msgctl IPC_INFO (the limits) or MSG_INFO (`usage`: queues, messages and
/// bytes in use in place of three of them), and the highest slot in use.
pub fn info(usage: bool) -> (MsgInfo, usize) {
    let queues = QUEUES.lock();
    let mut info = MsgInfo {
        msgpool: (MSGMNI * MSGMNB / 1024) as i32,
        msgmap: MSGMNB as i32,
        msgmax: MSGMAX as i32,
        msgmnb: MSGMNB as i32,
        msgmni: MSGMNI as i32,
        msgssz: 16,
        msgtql: MSGMNB as i32,
        msgseg: 0xffff,
        pad: 0,
    };
    if usage {
        let (mut messages, mut bytes) = (0, 0);
        for (_, entry) in queues.iter() {
            messages += entry.obj.messages.len();
            bytes += entry.obj.bytes;
        }
        info.msgpool = queues.len() as i32;
        info.msgmap = messages as i32;
        info.msgtql = bytes as i32;
    }
    (info, queues.highest_index())
}
