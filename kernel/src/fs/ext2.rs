//! A mounted ext2 or ext3 file system: the disk's files as nodes of the
//! tree, so every system call that works on the ramfs works here.
//!
//! ## The layers, from a system call down
//!
//! ```text
//!   read(2), open(2), rename(2) ...       syscall/, fs/file.rs, fs/ramfs.rs
//!   a Node whose content is DiskFile or DiskDir, and its DiskRef
//!   Volume::fs: SleepLock<Fs<Cache<VirtioDisk>>>        (this file)
//!   kcore::ext2::Fs: inodes, block maps, directories, the journal
//!   kcore::bcache::Cache: the buffer cache (LRU, write-back)
//!   VirtioDisk(id) -> virtio_blk::transfer: a few requests, asleep until done
//! ```
//!
//! The disk's inode is the truth. A node is a copy of its attributes
//! (mode, owner, links, times, size) made when a path walk first reaches
//! the inode, and refreshed after every change this file makes to it. The
//! volume keeps a table of the nodes it made (`Volume::nodes`, weak: a
//! node lives while an open file, a walk or a mapping holds it), so one
//! inode is one node however many names and walks reach it, and the lock
//! a record lock or a lease keys on is the same for everyone.
//!
//! ## Locks and sleeping
//!
//! Every operation on the disk's structures holds the volume's
//! `SleepLock` for its whole length: it reads and writes through the
//! buffer cache, and a miss sleeps on the disk. So a function here is
//! called with no spinlock held (the sleep lock checks), takes node locks
//! only for the moment it copies attributes, and copies to or from user
//! memory never: callers pass kernel buffers.
//!
//! ## When changes reach the disk
//!
//! Each operation changes blocks in the buffer cache; with ext3's journal
//! the metadata it changed joins the open transaction. `fsync`, `sync`,
//! `syncfs` and unmounting commit (`Fs::commit`: the journal's commit
//! record, or on ext2 the cache's dirty blocks, then the disk's flush
//! command), so what they promise is durable when they return. Between
//! them, the open transaction is committed once it is older than
//! `COMMIT_SECONDS`, and blocks dirty for longer than `DIRTY_SECONDS` are
//! written back, as Linux's journal thread and flusher do on their timers.
//! Here both are the work of the volume's flusher, a kernel thread
//! (proc/kthread.rs) named `flush-vda` (for vda) that wakes every
//! `FLUSH_EVERY_SECONDS` (`flusher`); every operation also looks first
//! (`housekeeping`), so a busy volume does not wait for the flusher's
//! next round. The flusher ends when the volume is unmounted.
//!
//! ## An inode with no names
//!
//! unlink removes a name; the inode and its blocks go when the last name
//! is gone and no node is left of it (a file unlinked while open lives on
//! until its last close, as on Unix). A node dropped with no links puts its
//! inode on the volume's `orphans` (in `Released`), which the next
//! operation releases: dropping happens in places that may not sleep.
//!
//! ## Mapped files: the page cache
//!
//! mmap and exec map frames, and a disk file's bytes are in the buffer
//! cache's blocks, which are neither page-sized nor the file's own. So a
//! file that is mapped or run gets a page cache, a `FileData` as a ramfs
//! file has (`pages`), read whole from the disk when it is first needed,
//! kept in its node's `DiskRef` for as long as the node lives. A mapping
//! holds the node (mm's `MappedFile::disk_node`), so the page cache lives
//! at least as long as its mappings and one running program's pages are
//! the next one's. While it exists the file has one copy of each page
//! for everyone: `read` comes from it, `write` and `truncate` change it as
//! well as the disk, and a store through a shared mapping is there at
//! once. Such a store reaches the disk when the page is written back
//! (`write_back`): at `msync(MS_SYNC)`, `fsync`, `sync`, by the flusher
//! every few seconds, and when the node goes (`Released::unwritten`). A
//! private mapping's stores copy the page and never reach the file.
//!
//! Linux keeps every file's pages in its page cache, mapped or not, and
//! lets memory pressure take them back. This kernel keeps the buffer
//! cache for `read` and `write`, and makes a page cache only for files
//! that are mapped, so an unmapped file is never held twice.

use abi::Errno;
use abi::types::{
    S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG, S_IFSOCK, Timespec,
};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use kcore::bcache::Cache;
use kcore::cred::{Cred, MAY_EXEC, MAY_WRITE};
use kcore::ext2::fs::{Fs, NewInode};
use kcore::ext2::layout::{Inode, Time};
use kcore::ext2::{BlockDevice, Error, Run};
use kcore::xattr::Attrs;

use super::filedata::FileData;
use super::ramfs::{Content, DirEntry, Node, NodeRef, Times};
use crate::sync::{IrqLock, Rank, SleepLock};
use crate::virtio_blk::{self, DiskId, Op};

const PAGE: usize = crate::mm::PAGE_SIZE as usize;

/// The most the buffer cache keeps of one disk.
const CACHE_BYTES: usize = 16 << 20;
/// How long after the last commit an open transaction is committed, by
/// the flusher or the next operation (Linux's ext3 `commit=` default).
const COMMIT_SECONDS: u64 = 5;
/// How long a block may stay dirty in the cache before it is written
/// back (Linux's `dirty_expire_centisecs`, 30 s).
const DIRTY_SECONDS: u64 = 30;
/// How long a read the cache started ahead of a reader may wait for it
/// before the flusher lands it anyway, so that a reader that stopped
/// does not keep the disk's request slots.
const UNWANTED_READ_SECONDS: u64 = 1;
/// How often the flusher looks at its volume (Linux's
/// `dirty_writeback_centisecs`, 5 s).
const FLUSH_EVERY_SECONDS: u64 = 5;

/// A virtio disk as the file system sees it: blocks of any size, a run of
/// them in as few requests as the driver can make, the caller asleep until
/// they are done.
pub struct VirtioDisk(DiskId);

impl VirtioDisk {
    /// The first sector of block `block`, blocks being `block_len` bytes.
    fn sector(block: u64, block_len: usize) -> u64 {
        block * block_len as u64 / kcore::virtio::SECTOR
    }
}

impl BlockDevice for VirtioDisk {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> kcore::ext2::Result<()> {
        self.read_run(block, buf.len(), buf)
    }

    fn write(&mut self, block: u64, buf: &[u8]) -> kcore::ext2::Result<()> {
        self.write_run(block, buf.len(), buf)
    }

    fn read_run(
        &mut self,
        first: u64,
        block_len: usize,
        buf: &mut [u8],
    ) -> kcore::ext2::Result<()> {
        let sector = Self::sector(first, block_len);
        virtio_blk::transfer(self.0, sector, Op::Read(buf)).map_err(Error::Sys)
    }

    fn write_run(&mut self, first: u64, block_len: usize, buf: &[u8]) -> kcore::ext2::Result<()> {
        let sector = Self::sector(first, block_len);
        virtio_blk::transfer(self.0, sector, Op::Write(buf)).map_err(Error::Sys)
    }

    fn write_runs(&mut self, runs: &[Run]) -> kcore::ext2::Result<()> {
        let writes: Vec<(u64, &[u8])> = runs
            .iter()
            .map(|run| (Self::sector(run.first, run.block_len), run.data))
            .collect();
        virtio_blk::write_each(self.0, &writes).map_err(Error::Sys)
    }

    fn flush(&mut self) -> kcore::ext2::Result<()> {
        virtio_blk::flush(self.0).map_err(Error::Sys)
    }

    fn start_read(&mut self, first: u64, block_len: usize, len: usize) -> Option<u64> {
        let sector = Self::sector(first, block_len);
        virtio_blk::start_read(self.0, sector, len).map(virtio_blk::Started::to_ticket)
    }

    fn finish_read(&mut self, ticket: u64, buf: &mut [u8]) -> kcore::ext2::Result<()> {
        let started = virtio_blk::Started::from_ticket(ticket);
        virtio_blk::finish_read(self.0, started, buf).map_err(Error::Sys)
    }

    fn size(&self) -> Option<u64> {
        Some(virtio_blk::size_bytes(self.0))
    }
}

type DiskFs = Fs<Cache<VirtioDisk>>;

/// One mounted ext2 or ext3 file system.
pub struct Volume {
    /// The file system; None once unmounted.
    fs: SleepLock<Option<DiskFs>>,
    /// The nodes made of its inodes, by inode number.
    nodes: IrqLock<BTreeMap<u32, Weak<IrqLock<Node>>>>,
    /// What nodes left when they went, for the next operation.
    released: IrqLock<Released>,
    /// Nodes kept while the volume is mounted: a socket's name, whose
    /// node is the only thing tying the name to the bound socket.
    pinned: IrqLock<Vec<NodeRef>>,
    pub read_only: bool,
    /// The disk it is on.
    pub disk: DiskId,
    /// `st_dev` of its files: the disk's device number.
    pub dev: u64,
    /// "ext2" or "ext3", for /proc/mounts.
    pub kind: &'static str,
    /// When it last committed, in nanoseconds since boot.
    last_commit: core::sync::atomic::AtomicU64,
    /// Set by `unmount`: the flusher ends.
    unmounted: core::sync::atomic::AtomicBool,
}

/// What a node leaves for the volume's next operation when it goes
/// (`node_dropped`: a drop may happen where sleeping is not allowed, even
/// inside the areas' lock when a mapping goes, hence a lock of its own
/// rank).
#[derive(Default)]
struct Released {
    /// Inodes with no names whose last node went: released.
    orphans: Vec<u32>,
    /// The page caches of files whose last node went, with what a shared
    /// mapping stored and was not yet written back: written back.
    unwritten: Vec<(u32, FileData)>,
}

/// Where a node lives on a disk, and what of the inode the node does not
/// keep in its own fields.
pub struct DiskRef {
    pub vol: Arc<Volume>,
    pub ino: u32,
    pub size: u64,
    /// 512-byte sectors held (`st_blocks`).
    pub sectors: u64,
    /// A regular file's page cache, made when it is first mapped or run
    /// (`pages`), gone with the node. While there is one, it is the
    /// file's bytes for `read` too, and `write` and `truncate` change it
    /// along with the disk.
    pub pages: Option<FileData>,
}

/// The errno for a file system error on `disk`; corruption is logged
/// first.
fn errno(disk: DiskId, e: Error) -> Errno {
    if let Error::Corrupt(what) = e {
        crate::warn!("ext2: {}: {what}", disk.name());
    }
    e.errno()
}

fn to_time(t: Timespec) -> Time {
    Time {
        secs: t.tv_sec,
        nanos: t.tv_nsec as u32,
    }
}

fn from_time(t: Time) -> Timespec {
    Timespec {
        tv_sec: t.secs,
        tv_nsec: i64::from(t.nanos),
    }
}

fn now() -> Time {
    to_time(super::ramfs::now())
}

/// Mounts the file system on `disk`; `read_only` asked. EINVAL for a
/// disk that holds no ext2 this kernel can use, as Linux answers.
pub fn mount(disk: DiskId, read_only: bool) -> Result<(Arc<Volume>, NodeRef), Errno> {
    let cache = Cache::new(VirtioDisk(disk), CACHE_BYTES);
    let read_only = read_only || virtio_blk::read_only(disk);
    let fs = Fs::mount(cache, read_only).map_err(|e| match e {
        Error::Corrupt(what) => {
            crate::warn!("ext2: {}: cannot mount: {what}", disk.name());
            Errno::EINVAL
        }
        Error::Sys(e) => e,
    })?;
    if let Some(r) = fs.recovery() {
        crate::info!("ext3: {}: journal replayed: {r:?}", disk.name());
    }
    let kind = if fs.superblock().feature_compat & kcore::ext2::layout::compat::HAS_JOURNAL != 0 {
        "ext3"
    } else {
        "ext2"
    };
    let vol = Arc::new(Volume {
        read_only: fs.is_read_only(),
        fs: SleepLock::new(Some(fs)),
        nodes: IrqLock::new(Rank::Service, BTreeMap::new()),
        released: IrqLock::new(Rank::Released, Released::default()),
        pinned: IrqLock::new(Rank::Service, Vec::new()),
        disk,
        dev: super::dev::Device::Disk(disk).rdev(),
        kind,
        last_commit: core::sync::atomic::AtomicU64::new(crate::clock::nanos_since_boot()),
        unmounted: core::sync::atomic::AtomicBool::new(false),
    });
    let root = {
        let mut guard = vol.fs.lock();
        let fs = guard.as_mut().expect("just mounted");
        let ino = fs.root();
        vol.node(fs, ino).map_err(|e| errno(disk, e))?
    };
    if !vol.read_only {
        let name = alloc::format!("flush-{}", disk.name());
        let weak = Arc::downgrade(&vol);
        if let Err(e) = crate::proc::kthread::spawn(&name, move || flusher(weak)) {
            // Still usable: every operation does the flusher's work too.
            crate::warn!("ext2: {}: no flusher: {e:?}", disk.name());
        }
    }
    Ok((vol, root))
}

/// A volume's flusher (a kernel thread, started by `mount`): every
/// `FLUSH_EVERY_SECONDS` it commits a transaction that has grown old,
/// writes back blocks dirty for too long (`Volume::housekeeping`) and
/// what shared mappings stored into page caches, so that
/// what was written reaches the disk even when nothing else touches the
/// volume. It holds the volume only while it works: it ends once the
/// volume is unmounted or gone, woken early by `unmount`.
fn flusher(vol: Weak<Volume>) {
    let over = |vol: &Weak<Volume>| {
        vol.upgrade()
            .is_none_or(|v| v.unmounted.load(core::sync::atomic::Ordering::Acquire))
    };
    let Some(disk) = vol.upgrade().map(|v| v.disk) else {
        return;
    };
    let chan = crate::proc::sched::Chan::Flusher(disk.index());
    loop {
        let deadline = crate::clock::nanos_since_boot() + FLUSH_EVERY_SECONDS * 1_000_000_000;
        // Only a deadline or the unmount ends the sleep (a kernel thread
        // takes no signal).
        let _ =
            crate::proc::sched::wait_event_until(chan, Some(deadline), || over(&vol).then_some(()));
        let Some(v) = vol.upgrade() else {
            return;
        };
        // An error ends the flusher once the volume is gone; otherwise
        // `with` has logged what was wrong with the disk, and the next
        // round tries again.
        if v.with(|fs| v.write_back_mapped(fs)).is_err() && over(&vol) {
            return;
        }
    }
}

impl Volume {
    /// Runs `f` on the file system, holding its lock: first the work that
    /// waits for the next operation (orphans, an old transaction, old
    /// dirty blocks). EIO once unmounted.
    fn with<R>(&self, f: impl FnOnce(&mut DiskFs) -> kcore::ext2::Result<R>) -> Result<R, Errno> {
        let mut guard = self.fs.lock();
        let fs = guard.as_mut().ok_or(Errno::EIO)?;
        self.housekeeping(fs).map_err(|e| errno(self.disk, e))?;
        f(fs).map_err(|e| errno(self.disk, e))
    }

    /// `with`, for an operation that changes the disk: EROFS on a
    /// read-only mount.
    fn changing<R>(
        &self,
        f: impl FnOnce(&mut DiskFs) -> kcore::ext2::Result<R>,
    ) -> Result<R, Errno> {
        if self.read_only {
            return Err(Errno::EROFS);
        }
        self.with(f)
    }

    fn housekeeping(&self, fs: &mut DiskFs) -> kcore::ext2::Result<()> {
        let Released { orphans, unwritten } = core::mem::take(&mut *self.released.lock());
        // A failed write-back is the lost stores' alone (Linux too drops
        // them, and tells the next fsync): the operation that happened to
        // come next goes on, and so do the other files.
        for (ino, pages) in unwritten {
            if let Err(e) = write_back(fs, ino, &pages) {
                crate::warn!(
                    "ext2: {}: inode {ino}: stores through a mapping lost: {:?}",
                    self.disk.name(),
                    errno(self.disk, e)
                );
            }
        }
        for ino in orphans {
            fs.release(ino)?;
        }
        let now = crate::clock::nanos_since_boot();
        fs.dev.set_now(now / 1_000_000_000);
        fs.dev.land_older_than(UNWANTED_READ_SECONDS);
        if self.read_only {
            return Ok(());
        }
        fs.dev.write_back_older_than(DIRTY_SECONDS)?;
        // Only ext3's journal commits on a timer, and only a transaction
        // with something in it: an idle disk gets no requests. (On ext2
        // the old dirty blocks above are all a timer writes, as Linux's
        // flusher does; `sync` and `fsync` flush the rest.)
        let last = self.last_commit.load(core::sync::atomic::Ordering::Relaxed);
        if fs.transaction_is_open() && now.saturating_sub(last) > COMMIT_SECONDS * 1_000_000_000 {
            self.commit(fs)?;
        }
        Ok(())
    }

    fn commit(&self, fs: &mut DiskFs) -> kcore::ext2::Result<()> {
        fs.commit()?;
        self.last_commit.store(
            crate::clock::nanos_since_boot(),
            core::sync::atomic::Ordering::Relaxed,
        );
        Ok(())
    }

    /// The node of inode `ino`: the one that exists, or a new one read
    /// from the disk. Called holding the file system's lock, so two walks
    /// cannot make two nodes of one inode.
    fn node(self: &Arc<Self>, fs: &mut DiskFs, ino: u32) -> kcore::ext2::Result<NodeRef> {
        if let Some(node) = self.nodes.lock().get(&ino).and_then(Weak::upgrade) {
            return Ok(node);
        }
        let inode = fs.inode(ino)?;
        if inode.links_count == 0 && ino != fs.root() {
            return Err(Error::Corrupt("directory entry names a free inode"));
        }
        let content = match u32::from(inode.mode) & S_IFMT {
            S_IFREG => Content::DiskFile,
            S_IFDIR => Content::DiskDir,
            S_IFLNK => {
                let target = fs.read_link(&inode)?;
                Content::Symlink(String::from_utf8_lossy(&target).into_owned())
            }
            S_IFIFO => Content::Fifo(super::pipe::Pipe::unopened()),
            S_IFSOCK => Content::Socket(Weak::new()),
            kind @ (S_IFCHR | S_IFBLK) => super::dev::content_for(kind, inode.rdev()),
            _ => return Err(Error::Corrupt("inode of no known type")),
        };
        let mut node = Node::new(super::ramfs::new_ino(), 0, content);
        node.disk = Some(DiskRef {
            vol: self.clone(),
            ino,
            size: 0,
            sectors: 0,
            pages: None,
        });
        copy_attributes(&mut node, &inode);
        let node = Arc::new(IrqLock::new(Rank::Node, node));
        let mut nodes = self.nodes.lock();
        nodes.retain(|_, n| n.strong_count() > 0);
        nodes.insert(ino, Arc::downgrade(&node));
        Ok(node)
    }

    /// Copies inode `ino`'s attributes into its node, if it has one.
    fn refresh(&self, fs: &mut DiskFs, ino: u32) -> kcore::ext2::Result<()> {
        let node = self.nodes.lock().get(&ino).and_then(Weak::upgrade);
        if let Some(node) = node {
            let inode = fs.inode(ino)?;
            copy_attributes(&mut node.lock(), &inode);
        }
        Ok(())
    }

    /// The inode's last name went (`unlink`, `rmdir`, a rename over it):
    /// release it now, in that operation's transaction, if no node holds
    /// it, else when its last node goes.
    fn last_name_gone(&self, fs: &mut DiskFs, ino: u32) -> kcore::ext2::Result<()> {
        let node = self.nodes.lock().get(&ino).and_then(Weak::upgrade);
        match node {
            Some(node) => {
                node.lock().links = 0;
                Ok(())
            }
            None => fs.release_after(ino),
        }
    }

    /// Nodes of this volume that something holds, beside its root: a
    /// volume with any is busy (umount's EBUSY).
    pub fn busy(&self, root: &NodeRef) -> bool {
        let root_ino = disk_of(root).map(|(_, ino)| ino);
        self.nodes
            .lock()
            .iter()
            .any(|(&ino, n)| n.strong_count() > 0 && Some(ino) != root_ino)
    }

    /// Writes back what shared mappings stored into the page caches of
    /// the volume's live nodes (`write_back`).
    fn write_back_mapped(&self, fs: &mut DiskFs) -> kcore::ext2::Result<()> {
        let live: Vec<(u32, NodeRef)> = self
            .nodes
            .lock()
            .iter()
            .filter_map(|(&ino, n)| Some((ino, n.upgrade()?)))
            .collect();
        for (ino, node) in live {
            if let Some(pages) = cached_pages(&node)
                && write_back(fs, ino, &pages)?
            {
                self.refresh(fs, ino)?;
            }
        }
        Ok(())
    }

    /// Commits and flushes: `sync`, `syncfs`, and `fsync` of any file on
    /// it (one journal holds every file's changes), after writing back
    /// what shared mappings stored.
    pub fn sync(&self) -> Result<(), Errno> {
        if self.read_only {
            return Ok(());
        }
        // The commit's flush writes the file data before its commit
        // block (ordered mode), and flushes even when nothing is logged.
        self.with(|fs| {
            self.write_back_mapped(fs)?;
            self.commit(fs)
        })
    }

    /// Unmounts: releases the orphans, commits, checkpoints the journal,
    /// marks the file system clean, and forgets every cached block.
    pub fn unmount(&self) -> Result<(), Errno> {
        let pinned = core::mem::take(&mut *self.pinned.lock());
        drop(pinned); // outside the lock: a node's drop may take `released`
        let mut guard = self.fs.lock();
        let mut fs = guard.take().ok_or(Errno::EINVAL)?;
        self.unmounted
            .store(true, core::sync::atomic::Ordering::Release);
        crate::proc::sched::wakeup(crate::proc::sched::Chan::Flusher(self.disk.index()));
        let result = self
            .housekeeping(&mut fs)
            .and_then(|()| fs.unmount())
            .and_then(|mut cache| cache.invalidate().and_then(|()| cache.flush()));
        result.map_err(|e| errno(self.disk, e))
    }

    /// statfs(2)'s figures: block size, blocks, free blocks, blocks free
    /// to users, inodes, free inodes.
    pub fn statfs(&self) -> Result<abi::types::Statfs, Errno> {
        self.with(|fs| {
            let sb = fs.superblock();
            let (free_blocks, free_inodes) = fs.free_counts();
            let bsize = fs.block_size() as i64;
            let mut flags = abi::types::ST_VALID | abi::types::ST_NOATIME;
            if self.read_only {
                flags |= abi::types::ST_RDONLY;
            }
            Ok(abi::types::Statfs {
                f_type: abi::types::EXT2_SUPER_MAGIC,
                f_bsize: bsize,
                f_frsize: bsize,
                f_blocks: u64::from(sb.blocks_count - sb.first_data_block),
                f_bfree: u64::from(free_blocks),
                f_bavail: u64::from(free_blocks.saturating_sub(sb.r_blocks_count)),
                f_files: u64::from(sb.inodes_count),
                f_ffree: u64::from(free_inodes),
                f_fsid: [self.dev as i32, 0],
                f_namelen: abi::types::NAME_MAX as i64,
                f_flags: flags,
                ..abi::types::Statfs::default()
            })
        })
    }
}

/// A disk node's volume and inode number; None for any other node.
#[track_caller]
pub fn disk_of(node: &NodeRef) -> Option<(Arc<Volume>, u32)> {
    node.lock().disk.as_ref().map(|d| (d.vol.clone(), d.ino))
}

/// Copies an inode's attributes into its node.
fn copy_attributes(node: &mut Node, inode: &Inode) {
    node.perm = u32::from(inode.mode) & 0o7777;
    node.uid = inode.uid;
    node.gid = inode.gid;
    node.links = u32::from(inode.links_count);
    node.times = Times {
        atime: from_time(inode.atime),
        mtime: from_time(inode.mtime),
        ctime: from_time(inode.ctime),
    };
    if let Some(disk) = &mut node.disk {
        disk.size = inode.size;
        disk.sectors = u64::from(inode.blocks);
    }
}

/// Called when a disk node goes: an inode with no names left is released
/// by the volume's next operation, and stores a shared mapping made in
/// its page cache are written back then (this may run where sleeping is
/// not allowed). A file with no names has nowhere its stores could be
/// read again, so they go with it.
pub fn node_dropped(disk: &DiskRef, links: u32) {
    // Whether the pages hold stores is not asked here: a node may go
    // inside the areas' lock, after which a file's pages may not be
    // locked. `write_back` finds out, and a page cache with none costs it
    // nothing.
    let mut released = disk.vol.released.lock();
    if links == 0 {
        released.orphans.push(disk.ino);
    } else if let Some(pages) = &disk.pages {
        released.unwritten.push((disk.ino, pages.clone()));
    }
}

/// The node's page cache, if it has one.
fn cached_pages(node: &NodeRef) -> Option<FileData> {
    node.lock().disk.as_ref()?.pages.clone()
}

/// The page cache of disk file `node`: the one it has, or one made now
/// from the file's bytes, for mmap and exec, which map its frames. The
/// whole file is read at once (a page fault cannot wait for the disk: its
/// path may hold the process table), except that a run of zeros stays a
/// hole, so a sparse file costs only the frames of what it holds. ENOMEM
/// when memory cannot hold it.
pub fn pages(node: &NodeRef) -> Result<FileData, Errno> {
    if let Some(pages) = cached_pages(node) {
        return Ok(pages);
    }
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    vol.with(|fs| {
        // Another thread may have made it while this one waited.
        if let Some(pages) = cached_pages(node) {
            return Ok(pages);
        }
        let inode = fs.inode(ino)?;
        let out_of_memory = |_| Error::Sys(Errno::ENOMEM);
        let data = FileData::sized(inode.size).map_err(out_of_memory)?;
        let mut buf = alloc::vec![0u8; 64 * 1024];
        let mut at = 0u64;
        while at < inode.size {
            let n = fs.read(&inode, at, &mut buf)?;
            if n == 0 {
                break;
            }
            if buf[..n].iter().any(|&b| b != 0) {
                data.write_at(at, &buf[..n]).map_err(out_of_memory)?;
            }
            at += n as u64;
        }
        if let Some(disk) = node.lock().disk.as_mut() {
            disk.pages = Some(data.clone());
        }
        Ok(data)
    })
}

/// Writes the pages of `ino`'s page cache that a shared mapping may have
/// stored into to the file, each page that differs from the file's
/// bytes: called holding the volume, so no `write` comes between the
/// look and the write. Whether it wrote any (the inode changed).
fn write_back(fs: &mut DiskFs, ino: u32, pages: &FileData) -> kcore::ext2::Result<bool> {
    let stored = pages.stored_pages();
    if stored.is_empty() {
        return Ok(false); // most page caches: programs and private mappings
    }
    let mut page_bytes = alloc::vec![0u8; PAGE];
    let mut on_disk = alloc::vec![0u8; PAGE];
    let mut inode = fs.inode(ino)?;
    let mut wrote = false;
    for page in stored {
        let at = page * PAGE as u64;
        let n = pages.read_at(at, &mut page_bytes);
        let held = fs.read(&inode, at, &mut on_disk[..n])?;
        if held != n || page_bytes[..n] != on_disk[..n] {
            fs.write(ino, at, &page_bytes[..n])?;
            inode = fs.inode(ino)?; // its block map may have grown
            wrote = true;
        }
        pages.written_back(page);
    }
    Ok(wrote)
}

/// The disk node `dir` and its inode: ENOTDIR for a node of another kind.
#[track_caller]
fn dir_of(dir: &NodeRef) -> Result<(Arc<Volume>, u32), Errno> {
    disk_of(dir).ok_or(Errno::ENOTDIR)
}

/// The child `name` of the disk directory `dir` (the caller checked the
/// search permission).
pub fn lookup(dir: &NodeRef, name: &str) -> Result<NodeRef, Errno> {
    let (vol, ino) = dir_of(dir)?;
    vol.with(|fs| {
        let child = fs.lookup(ino, name.as_bytes())?;
        vol.node(fs, child)
    })
}

/// The entries of disk directory `dir` in on-disk order, without "."
/// and ".." (getdents64 gives those for every directory).
pub fn list(dir: &NodeRef) -> Result<Vec<DirEntry>, Errno> {
    let (vol, ino) = dir_of(dir)?;
    vol.with(|fs| {
        let inode = fs.inode(ino)?;
        let mut out = Vec::new();
        fs.read_dir(&inode, 0, |name, ino, file_type, _| {
            if name == b"." || name == b".." {
                return true;
            }
            out.push(DirEntry {
                name: String::from_utf8_lossy(name).into_owned(),
                ino: u64::from(ino),
                kind: kcore::ext2::dir::dt_of(file_type),
            });
            true
        })?;
        Ok(out)
    })
}

/// Reads file bytes from `at` into `buf`; how many there were. A file
/// with a page cache is read from it (it holds what shared mappings
/// stored, not yet on the disk).
pub fn read(node: &NodeRef, at: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    if let Some(pages) = cached_pages(node) {
        return Ok(pages.read_at(at, buf));
    }
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    vol.with(|fs| {
        let inode = fs.inode(ino)?;
        fs.read(&inode, at, buf)
    })
}

/// Writes `buf` at `at` (at the end with `append`): where the bytes went
/// and how many (fewer than asked past RLIMIT_FSIZE).
pub fn write(node: &NodeRef, at: u64, buf: &[u8], append: bool) -> Result<(u64, usize), Errno> {
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    let limit = super::file::file_size_limit();
    vol.changing(|fs| {
        let at = if append { fs.inode(ino)?.size } else { at };
        if buf.is_empty() {
            return Ok((at, 0));
        }
        if at >= limit {
            return Err(Error::Sys(super::file::file_too_big()));
        }
        let buf = &buf[..buf
            .len()
            .min(usize::try_from(limit - at).unwrap_or(usize::MAX))];
        // The page cache, if there is one, takes the bytes too: its
        // frames are got first, so that copy cannot fail after the disk's.
        let pages = cached_pages(node);
        if let Some(pages) = &pages {
            let end = at.saturating_add(buf.len() as u64);
            pages.allocate(at, end, true).map_err(Error::Sys)?;
        }
        let n = fs.write(ino, at, buf)?;
        if let Some(pages) = &pages {
            pages.write_at(at, &buf[..n]).map_err(Error::Sys)?;
        }
        vol.refresh(fs, ino)?;
        Ok((at, n))
    })
}

/// Sets the file's size.
pub fn truncate(node: &NodeRef, len: u64) -> Result<(), Errno> {
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    if len > super::file::file_size_limit() {
        return Err(super::file::file_too_big());
    }
    vol.changing(|fs| {
        fs.truncate(ino, len)?;
        if let Some(pages) = cached_pages(node) {
            pages.truncate(len).map_err(Error::Sys)?;
        }
        vol.refresh(fs, ino)
    })
}

/// Writes the node's mode, owner and times to its inode (chmod, chown,
/// utimensat changed them in the node).
pub fn store_attributes(node: &NodeRef) -> Result<(), Errno> {
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    let (perm, uid, gid, times) = {
        let n = node.lock();
        (n.perm, n.uid, n.gid, n.times)
    };
    vol.changing(|fs| {
        let mut inode = fs.inode(ino)?;
        inode.mode = ((u32::from(inode.mode) & S_IFMT) | (perm & 0o7777)) as u16;
        inode.uid = uid;
        inode.gid = gid;
        inode.atime = to_time(times.atime);
        inode.mtime = to_time(times.mtime);
        inode.ctime = to_time(times.ctime);
        fs.write_inode(ino, &inode)
    })
}

/// The extended attributes of disk file `node`, as its inode and its
/// attribute block hold them (`kcore::ext2::xattr`).
pub fn xattrs(node: &NodeRef) -> Result<Attrs, Errno> {
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    vol.with(|fs| fs.xattrs(ino))
}

/// Changes the extended attributes of disk file `node` with `change`
/// (`Attrs::set`, `Attrs::remove`: their errors come back as they are)
/// and writes them back, the change time now; ENOSPC when they no longer
/// fit, with nothing changed.
pub fn change_xattrs(
    node: &NodeRef,
    change: impl FnOnce(&mut Attrs) -> Result<(), Errno>,
) -> Result<(), Errno> {
    let (vol, ino) = disk_of(node).ok_or(Errno::EINVAL)?;
    vol.changing(|fs| {
        let mut attrs = fs.xattrs(ino)?;
        change(&mut attrs).map_err(Error::Sys)?;
        fs.set_xattrs(ino, &attrs, now())?;
        vol.refresh(fs, ino)
    })
}

/// EROFS if `node` is on a read-only mount (a change to its attributes
/// is refused before it is made).
pub fn check_writable(node: &Node) -> Result<(), Errno> {
    match &node.disk {
        Some(d) if d.vol.read_only => Err(Errno::EROFS),
        _ => Ok(()),
    }
}

/// What a new name in a directory is for (`ramfs::add`'s callers).
pub enum Making<'a> {
    Dir,
    Symlink(&'a str),
    /// mknod's: a FIFO, a socket's name, a regular file or a device node.
    Special {
        kind: u32,
        rdev: u64,
    },
    Socket(Weak<super::socket::Socket>),
    /// Another name for an existing node (link).
    Link(&'a NodeRef),
}

/// The new inode's owner and group, as `ramfs::owned_under` picks them.
fn new_inode(mode: u32, dir: &Node, cred: &Cred) -> NewInode {
    let inherit = dir.perm & abi::types::S_ISGID != 0;
    let mut mode = mode;
    if inherit && mode & S_IFMT == S_IFDIR {
        mode |= abi::types::S_ISGID;
    }
    NewInode {
        mode,
        uid: cred.fsuid,
        gid: if inherit { dir.gid } else { cred.fsgid },
        now: now(),
    }
}

/// Adds `name` to disk directory `dir` for `making`, with the checks of
/// `ramfs::add` in Linux's order: EEXIST, then write and search on the
/// directory, then (mknod) the privilege.
pub fn add(dir: &NodeRef, name: &str, perm: u32, making: Making, cred: &Cred) -> Result<(), Errno> {
    let (vol, dir_ino) = dir_of(dir)?;
    if let Making::Link(node) = &making {
        match disk_of(node) {
            Some((other, _)) if Arc::ptr_eq(&other, &vol) => {}
            _ => return Err(Errno::EXDEV),
        }
    }
    vol.with(|fs| {
        if fs.lookup(dir_ino, name.as_bytes()).is_ok() {
            return Err(Error::Sys(Errno::EEXIST));
        }
        if vol.read_only {
            return Err(Error::Sys(Errno::EROFS));
        }
        if !dir.lock().permits(cred, MAY_WRITE | MAY_EXEC) {
            return Err(Error::Sys(Errno::EACCES));
        }
        let template = |kind: u32| new_inode(kind | (perm & 0o7777), &dir.lock(), cred);
        let name = name.as_bytes();
        match making {
            Making::Dir => {
                fs.mkdir(dir_ino, name, template(S_IFDIR))?;
            }
            Making::Symlink(target) => {
                fs.symlink(dir_ino, name, target.as_bytes(), template(S_IFLNK))?;
            }
            Making::Special { kind, rdev } => {
                if matches!(kind, S_IFCHR | S_IFBLK) && !cred.capable(abi::types::CAP_MKNOD) {
                    return Err(Error::Sys(Errno::EPERM));
                }
                fs.create(dir_ino, name, template(kind), rdev)?;
            }
            Making::Socket(socket) => {
                let ino = fs.create(dir_ino, name, template(S_IFSOCK), 0)?;
                let node = vol.node(fs, ino)?;
                node.lock().content = Content::Socket(socket);
                vol.pinned.lock().push(node);
            }
            Making::Link(node) => {
                let (_, ino) = disk_of(node).expect("checked above");
                fs.link(dir_ino, name, ino, now())?;
                vol.refresh(fs, ino)?;
            }
        }
        vol.refresh(fs, dir_ino)
    })
}

/// Opens or creates regular file `name` in disk directory `dir`
/// (`ramfs::create`'s rules); the node and whether this call made it.
pub fn create(
    dir: &NodeRef,
    name: &str,
    perm: u32,
    exclusive: bool,
    cred: &Cred,
) -> Result<(NodeRef, bool), Errno> {
    let (vol, dir_ino) = dir_of(dir)?;
    vol.with(|fs| {
        match fs.lookup(dir_ino, name.as_bytes()) {
            Ok(_) if exclusive => return Err(Error::Sys(Errno::EEXIST)),
            Ok(ino) => return Ok((vol.node(fs, ino)?, false)),
            Err(Error::Sys(Errno::ENOENT)) => {}
            Err(e) => return Err(e),
        }
        if !dir.lock().permits(cred, MAY_WRITE | MAY_EXEC) {
            return Err(Error::Sys(Errno::EACCES));
        }
        if vol.read_only {
            return Err(Error::Sys(Errno::EROFS));
        }
        let template = new_inode(S_IFREG | (perm & 0o7777), &dir.lock(), cred);
        let ino = fs.create(dir_ino, name.as_bytes(), template, 0)?;
        vol.refresh(fs, dir_ino)?;
        Ok((vol.node(fs, ino)?, true))
    })
}

/// Removes `name` from disk directory `dir`: a file (unlink) or an empty
/// directory (rmdir), with `ramfs::remove`'s checks.
pub fn remove(dir: &NodeRef, name: &str, want_dir: bool, cred: &Cred) -> Result<(), Errno> {
    let (vol, dir_ino) = dir_of(dir)?;
    vol.changing(|fs| {
        let ino = fs.lookup(dir_ino, name.as_bytes())?;
        let child = vol.node(fs, ino)?;
        {
            let c = child.lock();
            dir.lock().may_unlink(&c, cred).map_err(Error::Sys)?;
            if c.mounted.is_some() {
                return Err(Error::Sys(Errno::EBUSY));
            }
            match (c.is_dir(), want_dir) {
                (true, false) => return Err(Error::Sys(Errno::EISDIR)),
                (false, true) => return Err(Error::Sys(Errno::ENOTDIR)),
                _ => {}
            }
        }
        drop(child);
        let now = now();
        if want_dir {
            let gone = fs.rmdir(dir_ino, name.as_bytes(), now)?;
            vol.last_name_gone(fs, gone)?;
        } else {
            let (ino, last) = fs.unlink(dir_ino, name.as_bytes(), now)?;
            vol.refresh(fs, ino)?;
            if last {
                vol.last_name_gone(fs, ino)?;
            }
        }
        vol.refresh(fs, dir_ino)
    })
}

/// Renames within one disk (the caller made sure both directories are on
/// `from_dir`'s volume), with `ramfs::rename`'s checks.
pub fn rename(
    from_dir: &NodeRef,
    from_name: &str,
    to_dir: &NodeRef,
    to_name: &str,
    noreplace: bool,
    cred: &Cred,
) -> Result<(), Errno> {
    let (vol, from_ino) = dir_of(from_dir)?;
    let (_, to_ino) = dir_of(to_dir)?;
    vol.changing(|fs| {
        let ino = fs.lookup(from_ino, from_name.as_bytes())?;
        let node = vol.node(fs, ino)?;
        let moving_dir = node.lock().is_dir();
        if moving_dir && from_ino != to_ino && below(fs, to_ino, ino)? {
            return Err(Error::Sys(Errno::EINVAL));
        }
        let existing = match fs.lookup(to_ino, to_name.as_bytes()) {
            Ok(e) => Some(vol.node(fs, e)?),
            Err(Error::Sys(Errno::ENOENT)) => None,
            Err(e) => return Err(e),
        };
        if noreplace && existing.is_some() {
            return Err(Error::Sys(Errno::EEXIST));
        }
        let sys = Error::Sys;
        super::ramfs::may_rename(from_dir, &node, to_dir, existing.as_ref(), cred).map_err(sys)?;
        if let Some(existing) = &existing {
            if Arc::ptr_eq(existing, &node) {
                return Ok(());
            }
            match (existing.lock().is_dir(), moving_dir) {
                (true, false) => return Err(sys(Errno::EISDIR)),
                (false, true) => return Err(sys(Errno::ENOTDIR)),
                _ => {}
            }
        }
        let replaced_ino = existing.as_ref().and_then(|e| disk_of(e)).map(|(_, i)| i);
        drop(existing);
        if let Some(gone) = fs.rename(
            from_ino,
            from_name.as_bytes(),
            to_ino,
            to_name.as_bytes(),
            now(),
        )? {
            vol.last_name_gone(fs, gone)?;
        } else if let Some(replaced) = replaced_ino {
            vol.refresh(fs, replaced)?;
        }
        vol.refresh(fs, ino)?;
        vol.refresh(fs, from_ino)?;
        vol.refresh(fs, to_ino)
    })
}

/// Whether directory `dir` is `ancestor` or lies below it: walks up by
/// "..", which every ext2 directory has.
fn below(fs: &mut DiskFs, dir: u32, ancestor: u32) -> kcore::ext2::Result<bool> {
    let mut at = dir;
    for _ in 0..4096 {
        if at == ancestor {
            return Ok(true);
        }
        if at == fs.root() {
            return Ok(false);
        }
        at = fs.lookup(at, b"..")?;
    }
    Err(Error::Corrupt("a directory's \"..\" chain has no end"))
}

/// fsync(2) and fdatasync(2) of a disk file, and msync(2) with MS_SYNC of
/// a mapping of one: what shared mappings stored is written back, and the
/// whole journal commits (ext3 logs every file's metadata in one
/// transaction, as Linux's ext3).
pub fn fsync(node: &NodeRef) -> Result<(), Errno> {
    let (vol, _) = disk_of(node).ok_or(Errno::EINVAL)?;
    vol.sync()
}
