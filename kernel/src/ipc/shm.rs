//! System V shared memory: shmget, shmat, shmdt, shmctl.
//!
//! A segment is a file with no name (`FileData`, the pages every mapping
//! of a file shares, fs/filedata.rs), as shared anonymous memory is: shmat
//! maps it `MAP_SHARED` like mmap of a file, so fork shares it, exec and
//! exit drop it, and /proc/PID/maps shows it as Linux does
//! (`/SYSV0000002a (deleted)`, the inode number being the id). Pages come
//! at the first touch.
//!
//! Attachments are not counted as they happen: `shm_nattch` is the number
//! of areas that map the segment's pages right now (`areas::mappings_of`),
//! so no path that drops a mapping (munmap, mremap, exec, exit, a failed
//! fork) has to tell this file. IPC_RMID of a segment still attached
//! keeps only a weak handle (`WeakFileData`) and marks it SHM_DEST with
//! key IPC_PRIVATE, as Linux: the last mapping to go frees the pages, and
//! the next look at the table (`lock`) drops the entry.
//!
//! Lock order: the table is taken with no other lock held and is let go
//! before the caller's memory is changed (which takes the process table);
//! inside it only the areas are read.

use abi::Errno;
use abi::ipc::{
    IPC_PRIVATE, SHM_DEST, SHM_EXEC, SHM_LOCKED, SHM_RDONLY, SHM_REMAP, SHM_RND, SHMALL, SHMLBA,
    SHMMAX, SHMMIN, SHMMNI, ShmInfo64, ShmUsage, ShmidDs,
};
use abi::types::{MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_SHARED, PROT_EXEC, PROT_READ, PROT_WRITE};
use alloc::format;
use alloc::sync::Arc;
use kcore::ipc::{self as rules, Entry, Found, Ids, READ, WRITE, Which};
use kcore::vma::Kind;

use super::{caller, caller_pid, now};
use crate::fs::filedata::{FileData, WeakFileData};
use crate::mm::areas::{self, MappedFile};
use crate::mm::{PAGE_SIZE, page_up};
use crate::sync::{IrqGuard, IrqLock, Rank};

enum Pages {
    Kept(FileData),
    /// Removed while attached: only the mappings keep the pages.
    Removed(WeakFileData),
}

struct Segment {
    pages: Pages,
    size: u64,
    /// What /proc/PID/maps calls an attachment.
    name: Arc<str>,
    atime: i64,
    dtime: i64,
    ctime: i64,
    cpid: i32,
    lpid: i32,
}

impl Segment {
    fn data(&self) -> Option<FileData> {
        match &self.pages {
            Pages::Kept(data) => Some(data.clone()),
            Pages::Removed(weak) => weak.upgrade(),
        }
    }

    fn attachments(&self) -> usize {
        self.data().map_or(0, |data| areas::mappings_of(&data))
    }

    fn pages(&self) -> u64 {
        self.size.div_ceil(PAGE_SIZE)
    }
}

struct Segments {
    ids: Ids<Segment>,
    /// Pages in all segments (at most SHMALL).
    pages: u64,
}

static SEGMENTS: IrqLock<Segments> = IrqLock::new(
    Rank::Service,
    Segments {
        ids: Ids::new(SHMMNI),
        pages: 0,
    },
);

/// The table, without the segments removed earlier whose last attachment
/// has gone since.
fn lock() -> IrqGuard<'static, Segments> {
    let mut segments = SEGMENTS.lock();
    let gone: alloc::vec::Vec<i32> = segments
        .ids
        .iter()
        .filter(|(_, e)| matches!(e.obj.pages, Pages::Removed(_)) && e.obj.attachments() == 0)
        .map(|(id, _)| id)
        .collect();
    for id in gone {
        let segment = segments.ids.remove(id).expect("listed");
        segments.pages -= segment.obj.pages();
    }
    segments
}

/// shmget(2): the segment with `key`, made `size` bytes long if need be.
/// EINVAL for a size past SHMMAX (or zero) and for an existing segment
/// smaller than asked; ENOSPC past SHMALL.
pub fn get(key: i32, size: u64, flags: u32) -> Result<i32, Errno> {
    let cred = caller();
    let mut segments = lock();
    let found = segments.ids.lookup(key, flags, &cred, |segment| {
        if size > segment.size {
            Err(Errno::EINVAL)
        } else {
            Ok(())
        }
    })?;
    if let Found::Id(id) = found {
        return Ok(id);
    }
    if !(SHMMIN..=SHMMAX).contains(&size) {
        return Err(Errno::EINVAL);
    }
    let pages = size.div_ceil(PAGE_SIZE);
    if segments.pages + pages > SHMALL {
        return Err(Errno::ENOSPC);
    }
    let segment = Segment {
        pages: Pages::Kept(FileData::sized(size)?),
        size,
        name: Arc::from(format!("/SYSV{:08x} (deleted)", key as u32)),
        atime: 0,
        dtime: 0,
        ctime: now(),
        cpid: caller_pid(),
        lpid: 0,
    };
    let id = segments
        .ids
        .insert(rules::new_perm(key, &cred, flags), segment)?;
    segments.pages += pages;
    Ok(id)
}

/// shmat(2): maps segment `id` at `addr` (rounded down with SHM_RND, else
/// EINVAL unless aligned; over what is there only with SHM_REMAP, else
/// EINVAL) or where mmap would put it; read-only with SHM_RDONLY (and
/// mprotect cannot make it writable, as on Linux).
pub fn attach(id: i32, addr: u64, flags: u32) -> Result<u64, Errno> {
    let cred = caller();
    let mut addr = addr;
    if addr != 0 && !addr.is_multiple_of(SHMLBA) {
        if flags & SHM_RND == 0 {
            return Err(Errno::EINVAL);
        }
        addr -= addr % SHMLBA;
    } else if addr == 0 && flags & SHM_REMAP != 0 {
        return Err(Errno::EINVAL);
    }
    let read_only = flags & SHM_RDONLY != 0;
    let (mut prot, mut wanted) = (PROT_READ, READ);
    if !read_only {
        prot |= PROT_WRITE;
        wanted |= WRITE;
    }
    if flags & SHM_EXEC != 0 {
        prot |= PROT_EXEC;
        wanted |= 0o111;
    }
    let (file, size) = {
        let segments = lock();
        let entry = segments.ids.get(id)?;
        if !rules::permits(&entry.perm, &cred, wanted) {
            return Err(Errno::EACCES);
        }
        let segment = &entry.obj;
        let data = segment.data().ok_or(Errno::EIDRM)?;
        let file = MappedFile {
            data,
            ino: id as u64,
            name: segment.name.clone(),
            may_write: !read_only,
            disk_node: None,
        };
        (file, page_up(segment.size).ok_or(Errno::EINVAL)?)
    };
    // At an address: over what is there only with SHM_REMAP; mmap's
    // MAP_FIXED_NOREPLACE refuses the rest, EEXIST there, EINVAL here.
    let placed = match (addr, flags & SHM_REMAP != 0) {
        (0, _) => 0,
        (_, true) => MAP_FIXED,
        (_, false) => MAP_FIXED_NOREPLACE,
    };
    let start = crate::proc::current(|p| {
        let mem = p.mem.as_mut().expect("a running process has memory");
        let flags = MAP_SHARED | placed;
        mem.mmap(addr, size, prot, flags, Some((file, 0)), &p.limits)
    })
    .map_err(|e| if e == Errno::EEXIST { Errno::EINVAL } else { e })?;
    if let Ok(entry) = lock().ids.get_mut(id) {
        entry.obj.atime = now();
        entry.obj.lpid = caller_pid();
    }
    Ok(start)
}

/// shmdt(2): unmaps the attachment at `addr` (the first area at or above
/// it that maps a segment from its start, and the rest of that segment's
/// areas within its size, as Linux); EINVAL if there is none.
pub fn detach(addr: u64) -> Result<(), Errno> {
    if !addr.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    let ranges = crate::proc::current(|p| p.mem.as_ref().expect("memory").ranges());
    // Areas that map a file from the byte `addr` would be, had the whole
    // file been mapped there.
    let from_addr = ranges.into_iter().filter(|r| {
        r.end > addr
            && matches!(&r.area.kind, Kind::File(map) if map.offset_of(r.start) == r.start.wrapping_sub(addr))
    });
    let mut segment: Option<(i32, FileData, u64)> = None;
    let mut unmap = alloc::vec::Vec::new();
    for range in from_addr {
        let Kind::File(map) = &range.area.kind else {
            unreachable!("filtered above");
        };
        match &segment {
            None => {
                let segments = lock();
                let owner = segments
                    .ids
                    .iter()
                    .find(|(_, e)| e.obj.data().as_ref() == Some(&map.file.data));
                if let Some((id, entry)) = owner {
                    let size = page_up(entry.obj.size).unwrap_or(u64::MAX);
                    segment = Some((id, map.file.data.clone(), size));
                    unmap.push((range.start, range.end));
                }
            }
            Some((_, data, size)) => {
                if range.end - addr > *size {
                    break;
                }
                if map.file.data == *data {
                    unmap.push((range.start, range.end));
                }
            }
        }
    }
    let Some((id, _, _)) = segment else {
        return Err(Errno::EINVAL);
    };
    crate::proc::current(|p| {
        let mem = p.mem.as_mut().expect("a running process has memory");
        for (start, end) in unmap {
            mem.munmap(start, end - start).expect("an area's own range");
        }
    });
    if let Ok(entry) = lock().ids.get_mut(id) {
        entry.obj.dtime = now();
        entry.obj.lpid = caller_pid();
    }
    Ok(())
}

/// shmctl IPC_STAT, SHM_STAT, SHM_STAT_ANY.
pub fn stat(which: Which) -> Result<(i32, ShmidDs), Errno> {
    let cred = caller();
    let segments = lock();
    let (id, entry) = segments.ids.for_stat(which, &cred)?;
    Ok((id, record(entry)))
}

/// `/proc/sysvipc/shm`: every segment, whoever may read it (as on
/// Linux), with the bytes of it in memory.
pub fn proc_text() -> alloc::string::String {
    let segments = lock();
    let rows: alloc::vec::Vec<_> = segments
        .ids
        .iter()
        .map(|(id, entry)| {
            let resident = entry.obj.data().map_or(0, |data| data.resident_pages());
            (id, record(entry), resident as u64 * PAGE_SIZE)
        })
        .collect();
    drop(segments);
    kcore::procfs::sysvipc_shm(&rows)
}

/// What IPC_STAT reports of a segment.
fn record(entry: &Entry<Segment>) -> ShmidDs {
    let s = &entry.obj;
    ShmidDs {
        shm_perm: entry.perm,
        shm_segsz: s.size,
        shm_atime: s.atime,
        shm_dtime: s.dtime,
        shm_ctime: s.ctime,
        shm_cpid: s.cpid,
        shm_lpid: s.lpid,
        shm_nattch: s.attachments() as u64,
        ..ShmidDs::default()
    }
}

/// shmctl IPC_SET: owner, group and permission bits (EPERM unless the
/// owner, the creator or root).
pub fn set(id: i32, from: &ShmidDs) -> Result<(), Errno> {
    let cred = caller();
    let mut segments = lock();
    let entry = segments.ids.owned_mut(id, &cred)?;
    rules::set_owner(&mut entry.perm, &from.shm_perm);
    entry.obj.ctime = now();
    Ok(())
}

/// shmctl SHM_LOCK and SHM_UNLOCK: nothing is ever swapped here, so only
/// the SHM_LOCKED bit changes (EPERM unless the owner, creator or root).
pub fn lock_in_memory(id: i32, locked: bool) -> Result<(), Errno> {
    let cred = caller();
    let mut segments = lock();
    let entry = segments.ids.owned_mut(id, &cred)?;
    if locked {
        entry.perm.mode |= SHM_LOCKED;
    } else {
        entry.perm.mode &= !SHM_LOCKED;
    }
    Ok(())
}

/// shmctl IPC_RMID: a segment nobody has attached goes now; one still
/// attached goes with its last attachment (SHM_DEST).
pub fn remove(id: i32) -> Result<(), Errno> {
    let cred = caller();
    let mut segments = lock();
    let entry = segments.ids.owned_mut(id, &cred)?;
    if entry.obj.attachments() > 0 {
        if let Pages::Kept(data) = &entry.obj.pages {
            entry.obj.pages = Pages::Removed(data.downgrade());
        }
        entry.perm.mode |= SHM_DEST;
        entry.perm.key = IPC_PRIVATE;
        return Ok(());
    }
    let gone = segments.ids.remove(id).expect("found above");
    segments.pages -= gone.obj.pages();
    drop(segments);
    drop(gone); // the pages, outside the table's lock
    Ok(())
}

/// shmctl IPC_INFO: the limits, and the highest slot in use.
pub fn info() -> (ShmInfo64, usize) {
    let info = ShmInfo64 {
        shmmax: SHMMAX,
        shmmin: SHMMIN,
        shmmni: SHMMNI as u64,
        shmseg: SHMMNI as u64,
        shmall: SHMALL,
        unused: [0; 4],
    };
    (info, lock().ids.highest_index())
}

/// shmctl SHM_INFO: segments, pages promised and pages filled, and the
/// highest slot in use.
pub fn usage() -> (ShmUsage, usize) {
    let segments = lock();
    let resident = segments
        .ids
        .iter()
        .filter_map(|(_, e)| e.obj.data())
        .map(|data| data.resident_pages() as u64)
        .sum();
    let usage = ShmUsage {
        used_ids: segments.ids.len() as i32,
        shm_tot: segments.pages,
        shm_rss: resident,
        ..ShmUsage::default()
    };
    (usage, segments.ids.highest_index())
}
