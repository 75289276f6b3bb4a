//! System V IPC's rules: who may use an object, how a key or an id finds
//! it, what one semop call does to a set, which message msgrcv takes.
//!
//! The kernel keeps three tables of this `Ids` type (message queues,
//! semaphore sets, shared memory segments, `kernel/src/ipc/`); everything
//! here decides without sleeping or touching user memory, so the host runs
//! it. Permissions are checked with the caller's effective user id and its
//! groups (`crate::cred::Cred`), as Linux's `ipcperms`.
//!
//! An id names a slot and the generation of the slot (Linux's
//! `ipc_buildid`: `seq * 32768 + index`), so an id kept after its object
//! was removed does not reach the next object put in the same slot: it is
//! EINVAL, as on Linux.

use abi::Errno;
use abi::ipc::{IPC_CREAT, IPC_EXCL, IPC_NOWAIT, IPC_PRIVATE, IpcPerm, SEM_UNDO, SEMAEM, SEMVMX};
use abi::ipc::{MSG_COPY, MSG_EXCEPT, SemBuf};
use alloc::vec::Vec;

use crate::cred::Cred;

/// What an operation asks for, in `ipcperms`' terms: the read bits, the
/// write bits (`S_IRUGO`, `S_IWUGO`), or the flag word of a `*get` call,
/// whose permission bits say what the caller means to do.
pub const READ: u32 = 0o444;
pub const WRITE: u32 = 0o222;

/// The permission record of a new object with `key`, made by `cred`, with
/// the permission bits of `flags`.
pub fn new_perm(key: i32, cred: &Cred, flags: u32) -> IpcPerm {
    IpcPerm {
        key,
        uid: cred.euid,
        gid: cred.egid,
        cuid: cred.euid,
        cgid: cred.egid,
        mode: flags & 0o777,
        ..IpcPerm::default()
    }
}

/// Whether `cred` may do what `requested` asks of an object with `perm`
/// (Linux's `ipcperms`): the owner's or creator's bits for the owner, the
/// group's for a member of its group or its creator's (the file-system
/// group or a supplementary one, Linux's `in_group_p`), the others' for the
/// rest; root always may (Linux's `CAP_IPC_OWNER`).
pub fn permits(perm: &IpcPerm, cred: &Cred, requested: u32) -> bool {
    let requested = (requested >> 6 | requested >> 3 | requested) & 0o7;
    let granted = if cred.euid == perm.uid || cred.euid == perm.cuid {
        perm.mode >> 6
    } else if cred.in_fsgroup(perm.gid) || cred.in_fsgroup(perm.cgid) {
        perm.mode >> 3
    } else {
        perm.mode
    };
    requested & !granted == 0 || cred.is_root()
}

/// Whether `cred` may change (IPC_SET) or remove (IPC_RMID) an object:
/// its owner, its creator or root (Linux's `CAP_SYS_ADMIN`).
pub fn owns(perm: &IpcPerm, cred: &Cred) -> bool {
    cred.euid == perm.uid || cred.euid == perm.cuid || cred.is_root()
}

/// IPC_SET: the new owner, group and permission bits (the other mode
/// bits, SHM_DEST and SHM_LOCKED, are the kernel's).
pub fn set_owner(perm: &mut IpcPerm, from: &IpcPerm) {
    perm.uid = from.uid;
    perm.gid = from.gid;
    perm.mode = perm.mode & !0o777 | from.mode & 0o777;
}

/// Slots in a table: an id is `seq * SLOTS + index`.
const SLOTS: i32 = 32768;
/// Generations before the count starts again (ids stay positive `int`s).
const SEQ_LIMIT: u32 = (i32::MAX / SLOTS) as u32;

/// One object in a table: its permission record and what it is.
pub struct Entry<T> {
    pub perm: IpcPerm,
    pub obj: T,
}

/// The objects of one kind, by id and by key.
pub struct Ids<T> {
    slots: Vec<Option<Entry<T>>>,
    /// At most this many objects (Linux's `msgmni`, `semmni`, `shmmni`).
    max: usize,
    in_use: usize,
    /// The generation the next object gets.
    seq: u32,
}

/// How a `*ctl` status command names its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// IPC_STAT: by id, read permission needed.
    Id(i32),
    /// MSG_STAT, SEM_STAT, SHM_STAT (`check`: read permission needed) and
    /// their `_ANY` forms (not): by slot, as `ipcs` walks them.
    Index { index: i32, check: bool },
}

/// What a `*get` call found: an object to use, or none yet (make it).
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    Id(i32),
    Create,
}

impl<T> Ids<T> {
    pub const fn new(max: usize) -> Ids<T> {
        Ids {
            slots: Vec::new(),
            max,
            in_use: 0,
            seq: 0,
        }
    }

    fn index_of(&self, id: i32) -> Option<usize> {
        if id < 0 {
            return None;
        }
        let index = (id % SLOTS) as usize;
        let entry = self.slots.get(index)?.as_ref()?;
        (u32::from(entry.perm.seq) == (id / SLOTS) as u32).then_some(index)
    }

    /// The object `id` names, EINVAL if none does (never was, or was
    /// removed).
    pub fn get(&self, id: i32) -> Result<&Entry<T>, Errno> {
        let index = self.index_of(id).ok_or(Errno::EINVAL)?;
        Ok(self.slots[index].as_ref().expect("index_of found it"))
    }

    pub fn get_mut(&mut self, id: i32) -> Result<&mut Entry<T>, Errno> {
        let index = self.index_of(id).ok_or(Errno::EINVAL)?;
        Ok(self.slots[index].as_mut().expect("index_of found it"))
    }

    /// The object `id` names, for IPC_SET, IPC_RMID or SHM_LOCK: EINVAL if
    /// there is none, EPERM unless `cred` owns it (`owns`).
    pub fn owned_mut(&mut self, id: i32, cred: &Cred) -> Result<&mut Entry<T>, Errno> {
        let entry = self.get_mut(id)?;
        if owns(&entry.perm, cred) {
            Ok(entry)
        } else {
            Err(Errno::EPERM)
        }
    }

    fn id_at(&self, index: usize, entry: &Entry<T>) -> i32 {
        i32::from(entry.perm.seq) * SLOTS + index as i32
    }

    /// `*get`'s search (Linux's `ipcget`): IPC_PRIVATE always makes a new
    /// object; a key not found is ENOENT without IPC_CREAT; a key found is
    /// EEXIST with IPC_CREAT|IPC_EXCL, then `fits` may refuse it (a segment
    /// smaller than asked, a set with fewer semaphores: EINVAL), then the
    /// permission bits of `flags` are checked (EACCES).
    pub fn lookup(
        &self,
        key: i32,
        flags: u32,
        cred: &Cred,
        fits: impl FnOnce(&T) -> Result<(), Errno>,
    ) -> Result<Found, Errno> {
        if key == IPC_PRIVATE {
            return Ok(Found::Create);
        }
        let found = self.iter().find(|(_, e)| e.perm.key == key);
        match found {
            None if flags & IPC_CREAT != 0 => Ok(Found::Create),
            None => Err(Errno::ENOENT),
            Some(_) if flags & (IPC_CREAT | IPC_EXCL) == IPC_CREAT | IPC_EXCL => Err(Errno::EEXIST),
            Some((id, entry)) => {
                fits(&entry.obj)?;
                if permits(&entry.perm, cred, flags) {
                    Ok(Found::Id(id))
                } else {
                    Err(Errno::EACCES)
                }
            }
        }
    }

    /// Puts a new object in the lowest free slot and returns its id;
    /// ENOSPC when the table is full.
    pub fn insert(&mut self, mut perm: IpcPerm, obj: T) -> Result<i32, Errno> {
        if self.in_use >= self.max {
            return Err(Errno::ENOSPC);
        }
        let index = match self.slots.iter().position(Option::is_none) {
            Some(index) => index,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        perm.seq = self.seq as u16;
        self.seq = (self.seq + 1) % SEQ_LIMIT;
        let entry = Entry { perm, obj };
        let id = self.id_at(index, &entry);
        self.slots[index] = Some(entry);
        self.in_use += 1;
        Ok(id)
    }

    /// Takes object `id` out of the table.
    pub fn remove(&mut self, id: i32) -> Option<Entry<T>> {
        let index = self.index_of(id)?;
        let entry = self.slots[index].take();
        self.in_use -= 1;
        while self.slots.last().is_some_and(Option::is_none) {
            self.slots.pop();
        }
        entry
    }

    /// The objects, with their ids, lowest slot first.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &Entry<T>)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|e| (self.id_at(i, e), e)))
    }

    pub fn ids(&self) -> Vec<i32> {
        self.iter().map(|(id, _)| id).collect()
    }

    /// The object in slot `index` and its id (`MSG_STAT`, `SEM_STAT`,
    /// `SHM_STAT` walk the slots by index, as `ipcs` does).
    pub fn at_index(&self, index: i32) -> Result<(i32, &Entry<T>), Errno> {
        let entry = usize::try_from(index)
            .ok()
            .and_then(|i| self.slots.get(i)?.as_ref())
            .ok_or(Errno::EINVAL)?;
        Ok((self.id_at(index as usize, entry), entry))
    }

    /// The object a status command names, with its id: EINVAL if there is
    /// none, EACCES if `cred` may not read it and must.
    pub fn for_stat(&self, which: Which, cred: &Cred) -> Result<(i32, &Entry<T>), Errno> {
        let (id, entry, check) = match which {
            Which::Id(id) => (id, self.get(id)?, true),
            Which::Index { index, check } => {
                let (id, entry) = self.at_index(index)?;
                (id, entry, check)
            }
        };
        if check && !permits(&entry.perm, cred, READ) {
            return Err(Errno::EACCES);
        }
        Ok((id, entry))
    }

    /// The highest slot in use, 0 if none (what `*_INFO` returns).
    pub fn highest_index(&self) -> usize {
        self.slots.len().saturating_sub(1)
    }

    pub fn len(&self) -> usize {
        self.in_use
    }

    pub fn is_empty(&self) -> bool {
        self.in_use == 0
    }
}

/// One semaphore: its value and the last process that operated on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sem {
    pub val: i32,
    pub pid: i32,
}

/// Why a semop call cannot complete now: operation `index` would take its
/// semaphore below zero, or waits for zero and the value is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocked {
    pub sem_num: u16,
    pub for_zero: bool,
}

/// semop's result when it cannot complete: wait (`Blocked`), or an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemopError {
    Wait(Blocked),
    Fail(Errno),
}

/// Applies `ops` to `sems` all at once or not at all (Linux's
/// `perform_atomic_semop`). The operations run in order on a copy, each
/// seeing the ones before it: zero waits for the value to be zero, a
/// negative one for the value to be at least its size, a positive one
/// adds. Past `SEMVMX`, or an undo adjustment (`undo`, the caller's, one
/// per semaphore) past `SEMAEM`, is ERANGE; a wait is `Wait`, or EAGAIN if
/// that operation has IPC_NOWAIT. Only when every operation can go are the
/// values, the adjustments and each semaphore's last pid (`pid`) stored.
/// The caller checked that every `sem_num` is in the set.
pub fn semop(
    sems: &mut [Sem],
    undo: &mut [i32],
    ops: &[SemBuf],
    pid: i32,
) -> Result<(), SemopError> {
    let mut vals: Vec<i32> = sems.iter().map(|s| s.val).collect();
    let mut adjs = undo.to_vec();
    for op in ops {
        let num = usize::from(op.sem_num);
        let delta = i32::from(op.sem_op);
        let value = vals[num];
        let blocked = if delta == 0 {
            value != 0
        } else {
            value + delta < 0
        };
        if blocked {
            if op.sem_flg as u32 & IPC_NOWAIT != 0 {
                return Err(SemopError::Fail(Errno::EAGAIN));
            }
            return Err(SemopError::Wait(Blocked {
                sem_num: op.sem_num,
                for_zero: delta == 0,
            }));
        }
        if value + delta > SEMVMX {
            return Err(SemopError::Fail(Errno::ERANGE));
        }
        vals[num] = value + delta;
        if op.sem_flg & SEM_UNDO != 0 {
            let adj = adjs[num] - delta;
            if !(-SEMAEM - 1..=SEMAEM).contains(&adj) {
                return Err(SemopError::Fail(Errno::ERANGE));
            }
            adjs[num] = adj;
        }
    }
    for (sem, val) in sems.iter_mut().zip(vals) {
        sem.val = val;
    }
    undo.copy_from_slice(&adjs);
    for op in ops {
        sems[usize::from(op.sem_num)].pid = pid;
    }
    Ok(())
}

/// A process with adjustments `undo` on this set ended: each is added to
/// its semaphore, the value kept within 0..=SEMVMX (Linux's `exit_sem`),
/// and the semaphores it changed record `pid`.
pub fn apply_undo(sems: &mut [Sem], undo: &[i32], pid: i32) {
    for (sem, &adj) in sems.iter_mut().zip(undo) {
        if adj != 0 {
            sem.val = (sem.val + adj).clamp(0, SEMVMX);
            sem.pid = pid;
        }
    }
}

/// Which message msgrcv takes, from its `msgtyp` and flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The first message (msgtyp 0).
    First,
    /// The first of this type (msgtyp > 0).
    OfType(i64),
    /// The first of any other type (msgtyp > 0 with MSG_EXCEPT).
    NotOfType(i64),
    /// The first of the lowest type at most this (msgtyp < 0).
    LowestUpTo(i64),
    /// The message at this position, whatever its type (MSG_COPY).
    Nth(i64),
}

impl Pick {
    pub fn new(msgtyp: i64, flags: u32) -> Pick {
        if flags & MSG_COPY != 0 {
            Pick::Nth(msgtyp)
        } else if msgtyp == 0 {
            Pick::First
        } else if msgtyp < 0 {
            Pick::LowestUpTo(msgtyp.checked_neg().unwrap_or(i64::MAX))
        } else if flags & MSG_EXCEPT != 0 {
            Pick::NotOfType(msgtyp)
        } else {
            Pick::OfType(msgtyp)
        }
    }

    /// The position, in a queue whose messages have `types` in order, of
    /// the message to take.
    pub fn choose(self, types: impl IntoIterator<Item = i64>) -> Option<usize> {
        let mut types = types.into_iter().enumerate();
        match self {
            Pick::First => types.next().map(|(i, _)| i),
            Pick::OfType(t) => types.find(|&(_, ty)| ty == t).map(|(i, _)| i),
            Pick::NotOfType(t) => types.find(|&(_, ty)| ty != t).map(|(i, _)| i),
            Pick::LowestUpTo(most) => types
                .filter(|&(_, ty)| ty <= most)
                .min_by_key(|&(i, ty)| (ty, i))
                .map(|(i, _)| i),
            Pick::Nth(n) => usize::try_from(n)
                .ok()
                .and_then(|n| types.nth(n))
                .map(|(i, _)| i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: &Cred = &Cred::of(1000, 100);
    const BOB: &Cred = &Cred::of(1001, 100);
    const EVE: &Cred = &Cred::of(1002, 200);
    const ROOT: &Cred = &Cred::root();

    #[test]
    fn owner_group_and_others_get_their_own_bits() {
        let perm = new_perm(7, ALICE, 0o640 | IPC_CREAT);
        assert_eq!(perm.mode, 0o640);
        assert!(permits(&perm, ALICE, READ | WRITE));
        assert!(permits(&perm, BOB, READ));
        assert!(!permits(&perm, BOB, WRITE));
        assert!(!permits(&perm, EVE, READ));
        // A *get flag word asks for what its permission bits say.
        assert!(permits(&perm, BOB, 0o400));
        assert!(!permits(&perm, BOB, 0o600));
        assert!(permits(&perm, EVE, 0));
        // Root may do anything; so may the creator after a change of owner.
        assert!(permits(&perm, ROOT, READ | WRITE));
        let mut given = perm;
        set_owner(
            &mut given,
            &IpcPerm {
                uid: 1002,
                gid: 200,
                mode: 0o600,
                ..perm
            },
        );
        assert!(permits(&given, EVE, WRITE));
        assert!(
            permits(&given, ALICE, WRITE),
            "the creator keeps the owner's bits"
        );
        assert!(!permits(&given, BOB, READ));
    }

    #[test]
    fn a_supplementary_group_gets_the_group_bits() {
        let perm = new_perm(7, EVE, 0o640);
        assert!(!permits(&perm, ALICE, READ));
        let mut member = Cred::of(1000, 100);
        member.groups = alloc::vec![200];
        assert!(permits(&perm, &member, READ));
        assert!(!permits(&perm, &member, WRITE));
    }

    #[test]
    fn only_owner_creator_or_root_may_change_or_remove() {
        let mut perm = new_perm(7, ALICE, 0o666);
        assert!(owns(&perm, ALICE));
        assert!(!owns(&perm, BOB), "write permission is not ownership");
        assert!(owns(&perm, ROOT));
        perm.uid = BOB.euid;
        assert!(owns(&perm, BOB) && owns(&perm, ALICE));
    }

    #[test]
    fn changing_or_removing_needs_ownership() {
        let (mut ids, made) = table_with(&[5]);
        assert!(ids.owned_mut(made[0], ALICE).is_ok());
        assert!(ids.owned_mut(made[0], ROOT).is_ok());
        assert_eq!(ids.owned_mut(made[0], BOB).err(), Some(Errno::EPERM));
        assert_eq!(ids.owned_mut(made[0] + 1, ALICE).err(), Some(Errno::EINVAL));
    }

    #[test]
    fn set_owner_keeps_the_kernels_mode_bits() {
        let mut perm = new_perm(1, ALICE, 0o600);
        perm.mode |= abi::ipc::SHM_DEST;
        let asked = IpcPerm {
            mode: 0o7644,
            ..perm
        };
        set_owner(&mut perm, &asked);
        assert_eq!(perm.mode, abi::ipc::SHM_DEST | 0o644);
    }

    fn table_with(keys: &[i32]) -> (Ids<&'static str>, Vec<i32>) {
        let mut ids = Ids::new(3);
        let made = keys
            .iter()
            .map(|&k| ids.insert(new_perm(k, ALICE, 0o600), "obj").unwrap())
            .collect();
        (ids, made)
    }

    #[test]
    fn get_by_key_follows_linux_order_of_errors() {
        let (ids, made) = table_with(&[42]);
        let ok = |_: &&str| Ok(());
        assert_eq!(ids.lookup(42, 0, ALICE, ok), Ok(Found::Id(made[0])));
        assert_eq!(ids.lookup(43, 0, ALICE, ok), Err(Errno::ENOENT));
        assert_eq!(ids.lookup(43, IPC_CREAT, ALICE, ok), Ok(Found::Create));
        assert_eq!(ids.lookup(IPC_PRIVATE, 0, ALICE, ok), Ok(Found::Create));
        assert_eq!(
            ids.lookup(42, IPC_CREAT | IPC_EXCL, EVE, ok),
            Err(Errno::EEXIST),
            "EEXIST before any permission check"
        );
        let small = |_: &&str| Err(Errno::EINVAL);
        assert_eq!(ids.lookup(42, 0o600, EVE, small), Err(Errno::EINVAL));
        assert_eq!(ids.lookup(42, 0o600, EVE, ok), Err(Errno::EACCES));
        assert_eq!(
            ids.lookup(42, 0, EVE, ok),
            Ok(Found::Id(made[0])),
            "asks for nothing"
        );
        assert_eq!(ids.lookup(42, 0o600, ROOT, ok), Ok(Found::Id(made[0])));
    }

    #[test]
    fn a_removed_objects_id_does_not_reach_the_next_in_its_slot() {
        let (mut ids, made) = table_with(&[1, 2]);
        assert_eq!(made[1] % SLOTS, 1);
        assert!(ids.remove(made[0]).is_some());
        assert!(ids.get(made[0]).is_err());
        assert!(ids.remove(made[0]).is_none());
        let again = ids.insert(new_perm(3, ALICE, 0), "new").unwrap();
        assert_eq!(again % SLOTS, 0, "the lowest free slot");
        assert_ne!(again, made[0]);
        assert!(ids.get(made[0]).is_err());
        assert_eq!(ids.get(again).unwrap().obj, "new");
        assert!(ids.get(-1).is_err() && ids.get(5).is_err());
        assert_eq!(ids.len(), 2);
    }

    #[test]
    fn status_by_id_or_slot_checks_read_permission_unless_any() {
        let (ids, made) = table_with(&[1]);
        let by_id = Which::Id(made[0]);
        assert_eq!(ids.for_stat(by_id, ALICE).map(|(id, _)| id), Ok(made[0]));
        assert_eq!(ids.for_stat(by_id, EVE).err(), Some(Errno::EACCES));
        let slot = Which::Index {
            index: 0,
            check: true,
        };
        assert_eq!(ids.for_stat(slot, ALICE).map(|(id, _)| id), Ok(made[0]));
        assert_eq!(ids.for_stat(slot, EVE).err(), Some(Errno::EACCES));
        let any = Which::Index {
            index: 0,
            check: false,
        };
        assert_eq!(ids.for_stat(any, EVE).map(|(id, _)| id), Ok(made[0]));
        let empty = Which::Index {
            index: 1,
            check: false,
        };
        assert_eq!(ids.for_stat(empty, ALICE).err(), Some(Errno::EINVAL));
        assert_eq!(
            ids.for_stat(Which::Id(made[0] + 1), ALICE).err(),
            Some(Errno::EINVAL)
        );
    }

    #[test]
    fn a_full_table_is_enospc_and_info_reports_the_highest_slot() {
        let (mut ids, made) = table_with(&[1, 2, 3]);
        assert_eq!(ids.insert(new_perm(4, ALICE, 0), "x"), Err(Errno::ENOSPC));
        assert_eq!(ids.highest_index(), 2);
        ids.remove(made[2]);
        assert_eq!(ids.highest_index(), 1);
        assert_eq!(ids.at_index(1).unwrap().0, made[1]);
        assert_eq!(ids.at_index(2).err(), Some(Errno::EINVAL));
        assert_eq!(ids.at_index(-1).err(), Some(Errno::EINVAL));
        ids.remove(made[0]);
        ids.remove(made[1]);
        assert!(ids.is_empty());
        assert_eq!(ids.highest_index(), 0);
    }

    fn op(sem_num: u16, sem_op: i16, sem_flg: i16) -> SemBuf {
        SemBuf {
            sem_num,
            sem_op,
            sem_flg,
        }
    }

    fn set(vals: &[i32]) -> Vec<Sem> {
        vals.iter().map(|&val| Sem { val, pid: 0 }).collect()
    }

    #[test]
    fn semop_is_all_or_nothing() {
        let mut sems = set(&[1, 0]);
        let mut undo = [0, 0];
        let ops = [op(0, -1, 0), op(1, -1, 0)];
        assert_eq!(
            semop(&mut sems, &mut undo, &ops, 9),
            Err(SemopError::Wait(Blocked {
                sem_num: 1,
                for_zero: false
            }))
        );
        assert_eq!(sems, set(&[1, 0]), "the first operation was not kept");
        let nowait = [op(0, -1, 0), op(1, -1, IPC_NOWAIT as i16)];
        assert_eq!(
            semop(&mut sems, &mut undo, &nowait, 9),
            Err(SemopError::Fail(Errno::EAGAIN))
        );
        assert_eq!(
            semop(&mut sems, &mut undo, &[op(1, 2, 0), op(0, -1, 0)], 9),
            Ok(())
        );
        assert_eq!(sems, [Sem { val: 0, pid: 9 }, Sem { val: 2, pid: 9 }]);
    }

    #[test]
    fn later_operations_see_earlier_ones_and_zero_waits_for_zero() {
        let mut sems = set(&[0]);
        let mut undo = [0];
        assert_eq!(
            semop(&mut sems, &mut undo, &[op(0, 0, 0), op(0, 1, 0)], 3),
            Ok(())
        );
        let wait = semop(&mut sems, &mut undo, &[op(0, 0, 0)], 3);
        assert_eq!(
            wait,
            Err(SemopError::Wait(Blocked {
                sem_num: 0,
                for_zero: true
            }))
        );
        // Up then down in one call: fine; down then up: waits.
        assert_eq!(
            semop(&mut sems, &mut undo, &[op(0, 2, 0), op(0, -3, 0)], 3),
            Ok(())
        );
        assert_eq!(sems[0].val, 0);
        assert!(semop(&mut sems, &mut undo, &[op(0, -1, 0), op(0, 1, 0)], 3).is_err());
    }

    #[test]
    fn past_semvmx_or_semaem_is_erange() {
        let mut sems = set(&[SEMVMX - 1]);
        let mut undo = [0];
        assert_eq!(
            semop(&mut sems, &mut undo, &[op(0, 2, 0)], 1),
            Err(SemopError::Fail(Errno::ERANGE))
        );
        let mut sems = set(&[0]);
        let mut undo = [-SEMAEM];
        assert_eq!(
            semop(&mut sems, &mut undo, &[op(0, 1, SEM_UNDO)], 1),
            Ok(()),
            "-SEMAEM - 1 is still allowed"
        );
        assert_eq!(
            semop(&mut sems, &mut undo, &[op(0, 1, SEM_UNDO)], 1),
            Err(SemopError::Fail(Errno::ERANGE))
        );
        assert_eq!(undo, [-SEMAEM - 1]);
    }

    #[test]
    fn undo_records_the_opposite_and_exit_applies_it_clamped() {
        let mut sems = set(&[5, 0]);
        let mut undo = [0, 0];
        semop(
            &mut sems,
            &mut undo,
            &[op(0, -2, SEM_UNDO), op(1, 3, SEM_UNDO)],
            4,
        )
        .unwrap();
        semop(&mut sems, &mut undo, &[op(1, 1, 0)], 4).unwrap();
        assert_eq!(undo, [2, -3]);
        assert_eq!(sems.iter().map(|s| s.val).collect::<Vec<_>>(), [3, 4]);
        // Someone else took semaphore 1 down meanwhile: the undo stops at 0.
        sems[1].val = 2;
        apply_undo(&mut sems, &undo, 8);
        assert_eq!(sems, [Sem { val: 5, pid: 8 }, Sem { val: 0, pid: 8 }]);
        let mut full = set(&[SEMVMX]);
        apply_undo(&mut full, &[5], 8);
        assert_eq!(full[0].val, SEMVMX);
    }

    #[test]
    fn msgrcv_picks_as_linux() {
        let queue = [3, 1, 2, 1, 5];
        assert_eq!(Pick::new(0, 0).choose(queue), Some(0));
        assert_eq!(Pick::new(1, 0).choose(queue), Some(1));
        assert_eq!(Pick::new(4, 0).choose(queue), None);
        assert_eq!(Pick::new(3, MSG_EXCEPT).choose(queue), Some(1));
        assert_eq!(
            Pick::new(-2, 0).choose(queue),
            Some(1),
            "lowest type, first of it"
        );
        assert_eq!(Pick::new(-4, 0).choose([3, 2, 4]), Some(1));
        assert_eq!(Pick::new(-1, 0).choose([3, 2]), None);
        assert_eq!(Pick::new(i64::MIN, 0), Pick::LowestUpTo(i64::MAX));
        assert_eq!(Pick::new(0, MSG_EXCEPT), Pick::First);
        assert_eq!(Pick::new(1, 0).choose([]), None);
        assert_eq!(
            Pick::new(2, MSG_COPY).choose(queue),
            Some(2),
            "a position, not a type"
        );
        assert_eq!(Pick::new(5, MSG_COPY).choose(queue), None);
        assert_eq!(Pick::new(-1, MSG_COPY).choose(queue), None);
    }
}
