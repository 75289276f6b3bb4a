//! The ramfs: a tree of directories and files kept in kernel memory.
//!
//! Every node is an `Arc<IrqLock<Node>>`; a directory maps names to child nodes,
//! a file owns its bytes. Open files hold an `Arc` to their node, so a file
//! unlinked while open lives on until the last close, as on Unix. The tree is
//! filled at boot from the ramdisk's cpio archive (`load_cpio`) and changed at
//! run time by the file system calls. Paths reaching this file are absolute
//! and normal (`kcore::path::resolve`).
//!
//! A node keeps what `stat` reports about it beyond its bytes: how many
//! names it has (`links`: hard links share one node, and the node lives
//! while a name or an open file holds it) and its three times. The times
//! follow Linux: a write or a size change sets the modification and change
//! times, a change of names or attributes the change time, a new or
//! removed entry both of its directory; a read sets the access time only
//! when it is older than the last modification or change or than a day
//! (`relatime`, Linux's default mount option).
//!
//! A node has an owner and a group, and the permission bits mean what they
//! mean on Unix: every operation here asks the caller's credentials
//! (`crate::proc::cred()`, Linux's `current_cred()`; root when the kernel
//! itself runs, at boot) as Linux's VFS does: search (x) on every directory
//! a walk passes, write and search on a directory whose entries change, and
//! in a sticky directory (`/tmp`) only the owner of the file or of the
//! directory, or root, removes or renames a name. A new node belongs to
//! the caller's file-system user, and to its file-system group unless its
//! directory is set-group-ID (then to the directory's group; a new
//! directory inherits the bit). Opening checks the file's own bits
//! (`syscall/fs.rs`), exec the execute bit (`proc/exec.rs`).

use abi::Errno;
use abi::types::{
    S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG, S_IFSOCK, S_ISGID, S_ISUID,
    S_ISVTX, S_IXGRP, Timespec,
};
use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use kcore::cred::{Cred, MAY_EXEC, MAY_WRITE};
use kcore::path::split_last;
use spin::Once;

pub use super::ext2::Making;

use crate::sync::{IrqLock, Rank};

pub type NodeRef = Arc<IrqLock<Node>>;

pub enum Content {
    /// A regular file's bytes (fs/filedata.rs: one frame per page).
    File(super::filedata::FileData),
    Dir(BTreeMap<String, NodeRef>),
    /// A character device of `/dev` (fs/dev.rs).
    Device(super::dev::Device),
    /// A directory of `/proc`, whose entries are made when looked up
    /// (fs/procfs.rs).
    ProcDir(super::procfs::Dir),
    /// A file of `/proc`: its text, made when its name was looked up.
    ProcFile(Vec<u8>),
    /// `/proc/PID/pagemap` of this process: too large to make whole, so
    /// each read makes the entries it asks for (fs/procfs.rs).
    ProcPagemap(u32),
    /// A /proc/sys file root may write: a kernel setting, read and set
    /// where it lives at each read and write (fs/procfs.rs).
    ProcSetting(super::procfs::Setting),
    /// A symbolic link: the path it points to, followed by path walks (only
    /// `/proc` makes them so far).
    Symlink(String),
    /// The name a Unix-domain socket was bound to (fs/socket.rs); it stays
    /// when the socket closes, naming nothing.
    Socket(alloc::sync::Weak<super::socket::Socket>),
    /// A FIFO (named pipe): its pipe, opened end by end (fs/pipe.rs).
    Fifo(Arc<super::pipe::Pipe>),
    /// A device node mknod made for numbers no driver here has (`kind`
    /// S_IFCHR or S_IFBLK): it names the device, and opening it is ENXIO,
    /// as Linux answers for a device nobody registered.
    Special {
        kind: u32,
        rdev: u64,
    },
    /// A regular file of a mounted disk: its bytes are on the disk, read
    /// and written through the buffer cache (fs/ext2.rs), its size in the
    /// node's `disk`.
    DiskFile,
    /// A directory of a mounted disk: its entries are on the disk, looked
    /// up each time (through the buffer cache).
    DiskDir,
}

/// One name of a directory listing (getdents64).
pub struct DirEntry {
    pub name: String,
    pub ino: u64,
    /// `DT_*`.
    pub kind: u8,
}

/// Links followed in one path walk before it is ELOOP (Linux's limit).
const MAX_LINKS: u32 = 40;

pub struct Node {
    pub ino: u64,
    /// Permission bits (the type bits come from `content`).
    pub perm: u32,
    /// The owner and group (`st_uid`, `st_gid`).
    pub uid: u32,
    pub gid: u32,
    pub content: Content,
    /// Names in directories that lead here (a directory's `st_nlink` is
    /// counted from its subdirectories instead).
    pub links: u32,
    pub times: Times,
    /// Where it lives on a mounted disk, for a node of one (fs/ext2.rs);
    /// None in memory.
    pub disk: Option<super::ext2::DiskRef>,
    /// The root of the file system mounted on this directory, which a
    /// path walk enters in its place (fs/mount.rs).
    pub mounted: Option<NodeRef>,
    /// For a `/proc/PID/fd/N` link: the file open there, which following
    /// the link (as the last name of a path) reaches itself, not by the
    /// name the link shows, as Linux's "magic" links do: a deleted file
    /// or a memfd, which no name reaches, opens too.
    pub leads_to: Option<NodeRef>,
    /// Its extended attributes (syscall/xattr.rs; a disk's nodes keep
    /// none here).
    pub xattrs: kcore::xattr::Attrs,
}

/// A node's access, modification and change times.
#[derive(Clone, Copy, Debug)]
pub struct Times {
    pub atime: Timespec,
    pub mtime: Timespec,
    pub ctime: Timespec,
}

/// The time now, for a file's times.
pub fn now() -> Timespec {
    let nanos = crate::clock::realtime_nanos();
    Timespec {
        tv_sec: (nanos / 1_000_000_000) as i64,
        tv_nsec: (nanos % 1_000_000_000) as i64,
    }
}

/// Nodes that exist now, named or not (statfs's used inodes).
static LIVE_NODES: AtomicU64 = AtomicU64::new(0);

pub fn live_nodes() -> u64 {
    LIVE_NODES.load(Ordering::Relaxed)
}

impl Drop for Node {
    fn drop(&mut self) {
        LIVE_NODES.fetch_sub(1, Ordering::Relaxed);
        if let Some(disk) = &self.disk {
            super::ext2::node_dropped(disk, self.links);
        }
    }
}

impl Node {
    /// Whether some process runs this file as its program, so that
    /// writing it is ETXTBSY: its pages are the program's text (a ramfs
    /// file's own, a disk file's page cache).
    pub fn is_running(&self) -> bool {
        match &self.content {
            Content::File(data) => data.is_running(),
            Content::DiskFile => self
                .disk
                .as_ref()
                .and_then(|d| d.pages.as_ref())
                .is_some_and(|pages| pages.is_running()),
            _ => false,
        }
    }

    /// A node with one name, made now.
    pub fn new(ino: u64, perm: u32, content: Content) -> Node {
        LIVE_NODES.fetch_add(1, Ordering::Relaxed);
        let t = now();
        Node {
            ino,
            perm,
            uid: 0,
            gid: 0,
            content,
            links: 1,
            times: Times {
                atime: t,
                mtime: t,
                ctime: t,
            },
            disk: None,
            mounted: None,
            leads_to: None,
            xattrs: Default::default(),
        }
    }

    /// Its contents changed (write, truncate, a directory's entries).
    pub fn modified(&mut self) {
        let t = now();
        self.times.mtime = t;
        self.times.ctime = t;
    }

    /// Its names or attributes changed (link, unlink, rename, utimes).
    pub fn changed(&mut self) {
        self.times.ctime = now();
    }

    /// One of its names went (unlink, or a rename over it).
    pub fn lost_a_name(&mut self) {
        self.links = self.links.saturating_sub(1);
        self.changed();
    }

    /// It was read: the access time moves if it is older than the last
    /// modification or change, or than a day (Linux's `relatime`).
    pub fn accessed(&mut self) {
        if self.disk.is_some() {
            return; // disks are mounted noatime (fs/mount.rs)
        }
        let t = now();
        let Times {
            atime,
            mtime,
            ctime,
        } = self.times;
        let older = |a: Timespec, b: Timespec| (a.tv_sec, a.tv_nsec) <= (b.tv_sec, b.tv_nsec);
        if older(atime, mtime) || older(atime, ctime) || t.tv_sec - atime.tv_sec >= 24 * 3600 {
            self.times.atime = t;
        }
    }

    /// Whether it belongs to /proc (a file system of its own: no hard
    /// links into or out of it).
    pub fn on_proc(&self) -> bool {
        self.ino >= super::procfs::INO_BASE
    }

    pub fn mode(&self) -> u32 {
        let kind = match self.content {
            Content::File(_)
            | Content::ProcFile(_)
            | Content::ProcPagemap(_)
            | Content::ProcSetting(_)
            | Content::DiskFile => S_IFREG,
            Content::Dir(_) | Content::ProcDir(_) | Content::DiskDir => S_IFDIR,
            Content::Device(d) if d.is_block() => S_IFBLK,
            Content::Device(_) => S_IFCHR,
            Content::Symlink(_) => S_IFLNK,
            Content::Socket(_) => S_IFSOCK,
            Content::Fifo(_) => S_IFIFO,
            Content::Special { kind, .. } => kind,
        };
        kind | (self.perm & 0o7777)
    }

    /// Whether `cred` may do `want` (`kcore::cred::MAY_*`) to this node.
    pub fn permits(&self, cred: &Cred, want: u32) -> bool {
        cred.may(want, self.mode(), self.uid, self.gid)
    }

    /// Whether `cred` may remove or rename the name of `child` in this
    /// directory: write and search on it (EACCES), and if it is sticky,
    /// ownership of the child or of the directory (EPERM), as Linux's
    /// `may_delete`.
    pub(super) fn may_unlink(&self, child: &Node, cred: &Cred) -> Result<(), Errno> {
        if !self.permits(cred, MAY_WRITE | MAY_EXEC) {
            return Err(Errno::EACCES);
        }
        if self.perm & S_ISVTX != 0 && !cred.owns(child.uid) && !cred.owns(self.uid) {
            return Err(Errno::EPERM);
        }
        Ok(())
    }

    /// The device this node is, if it is one.
    pub fn device(&self) -> Option<super::dev::Device> {
        match self.content {
            Content::Device(device) => Some(device),
            _ => None,
        }
    }

    /// A regular file, in memory or on a disk.
    pub fn is_regular(&self) -> bool {
        matches!(self.content, Content::File(_) | Content::DiskFile)
    }

    pub fn is_dir(&self) -> bool {
        matches!(
            self.content,
            Content::Dir(_) | Content::ProcDir(_) | Content::DiskDir
        )
    }

    /// `st_size`: /proc's files say 0, as on Linux (their text is made on
    /// lookup; read until end of file).
    pub fn size(&self) -> u64 {
        match &self.content {
            Content::File(data) => data.len(),
            Content::Dir(entries) => entries.len() as u64,
            Content::Device(_)
            | Content::ProcDir(_)
            | Content::ProcFile(_)
            | Content::ProcPagemap(_)
            | Content::ProcSetting(_)
            | Content::Socket(_)
            | Content::Fifo(_)
            | Content::Special { .. } => 0,
            Content::Symlink(target) => target.len() as u64,
            Content::DiskFile | Content::DiskDir => self.disk.as_ref().map_or(0, |d| d.size),
        }
    }

    /// `st_blocks`: 512-byte blocks the node takes. A file's are its pages
    /// that have a frame (a hole takes none, so a file truncated up to
    /// `i64::MAX` bytes reports 0, as on Linux's tmpfs); anything else
    /// counts its size.
    pub fn blocks(&self) -> u64 {
        match &self.content {
            Content::File(data) => data.resident_pages() as u64 * (crate::mm::PAGE_SIZE / 512),
            _ if let Some(disk) = &self.disk => disk.sectors,
            _ => self.size().div_ceil(512),
        }
    }

    /// `getdents64`'s `d_type`: the type bits of the mode, shifted as
    /// Linux's `IFTODT` does (so DT_DIR, DT_REG, DT_CHR, DT_LNK).
    pub fn dir_entry_kind(&self) -> u8 {
        ((self.mode() & S_IFMT) >> 12) as u8
    }
}

static NEXT_INO: AtomicU64 = AtomicU64::new(1);
static ROOT: Once<NodeRef> = Once::new();

/// A fresh inode number (also for files with no name: shared anonymous
/// memory).
pub fn new_ino() -> u64 {
    NEXT_INO.fetch_add(1, Ordering::Relaxed)
}

fn new_node(perm: u32, content: Content) -> NodeRef {
    let ino = new_ino();
    Arc::new(IrqLock::new(Rank::Node, Node::new(ino, perm, content)))
}

/// A node made by `cred` in the directory `parent`: the caller's
/// file-system user owns it; the group is the caller's, or the
/// directory's when that is set-group-ID (and a new directory keeps the
/// bit, so the rule holds below it).
fn new_owned(perm: u32, content: Content, parent: &Node, cred: &Cred) -> NodeRef {
    owned_under(perm, content, (parent.perm, parent.gid), cred)
}

/// `new_owned` with the directory's permission bits and group.
fn owned_under(perm: u32, content: Content, parent: (u32, u32), cred: &Cred) -> NodeRef {
    let (parent_perm, parent_gid) = parent;
    let inherit = parent_perm & S_ISGID != 0;
    let is_dir = matches!(content, Content::Dir(_));
    let mut node = Node::new(new_ino(), perm, content);
    node.uid = cred.fsuid;
    node.gid = if inherit { parent_gid } else { cred.fsgid };
    if inherit && is_dir {
        node.perm |= S_ISGID;
    }
    Arc::new(IrqLock::new(Rank::Node, node))
}

/// A regular file in memory that no directory names (memfd_create),
/// with permission bits `perm`, owned by the caller; it lives as long as
/// a descriptor or a mapping holds it. Its link count is 0, as Linux's
/// memfd's.
pub fn nameless_file(perm: u32) -> NodeRef {
    let node = owned_under(perm, Content::File(Default::default()), (0, 0), &caller());
    node.lock().links = 0;
    node
}

/// A node of `device` that no directory names, owned by the caller: a
/// pseudo-terminal's master (fs/pty.rs).
pub fn nameless_device(device: super::dev::Device, perm: u32) -> NodeRef {
    let node = owned_under(perm, Content::Device(device), (0, 0), &caller());
    node.lock().links = 0;
    node
}

/// Whether a file system is mounted over the ramfs's root (the disk init
/// moved there: then the boot's /proc is out of sight).
pub fn root_is_covered() -> bool {
    root().lock().mounted.is_some()
}

/// The root of a new, empty tree in memory (a tmpfs mount), with
/// permission bits `perm`.
pub fn new_tree(perm: u32) -> NodeRef {
    new_node(perm, Content::Dir(BTreeMap::new()))
}

/// The caller's credentials (see the top of the file).
fn caller() -> Arc<Cred> {
    crate::proc::cred()
}

fn root() -> &'static NodeRef {
    ROOT.call_once(|| new_node(0o755, Content::Dir(BTreeMap::new())))
}

/// The node at `path`, following symbolic links.
pub fn lookup(path: &str) -> Result<NodeRef, Errno> {
    walk(path, true, 0, &caller())
}

/// The node at `path` and the path that names it with no symbolic link
/// on the way (what chdir keeps, so getcwd answers it as Linux does).
pub fn lookup_real(path: &str) -> Result<(NodeRef, String), Errno> {
    let (node, real) = walk_real(path, true, 0, &caller())?;
    Ok((node, real.into_owned()))
}

/// The node at `path` as `cred` finds it (access(2) walks with the real
/// ids).
pub fn lookup_as(path: &str, cred: &Cred) -> Result<NodeRef, Errno> {
    walk(path, true, 0, cred)
}

/// The node at `path`; a symbolic link as the last name is the link itself
/// (lstat, readlink).
pub fn lookup_nofollow(path: &str) -> Result<NodeRef, Errno> {
    walk(path, false, 0, &caller())
}

/// The child `name` of the directory `dir`, which `cred` must be allowed
/// to search (EACCES).
fn child(dir: &NodeRef, name: &str, cred: &Cred) -> Result<NodeRef, Errno> {
    let proc_dir = {
        let dir = dir.lock();
        if dir.is_dir() && !dir.permits(cred, MAY_EXEC) {
            return Err(Errno::EACCES);
        }
        match &dir.content {
            Content::Dir(entries) => return entries.get(name).cloned().ok_or(Errno::ENOENT),
            Content::ProcDir(d) => Some(*d),
            Content::DiskDir => None,
            _ => return Err(Errno::ENOTDIR),
        }
    };
    // Both take more locks (the table; the disk, asleep): no node lock held.
    match proc_dir {
        Some(proc_dir) => super::procfs::lookup(proc_dir, name),
        None => super::ext2::lookup(dir, name),
    }
}

/// What a walk that reached `node` enters: the root of the file system
/// mounted on it, if any (the last of several stacked there).
fn mounted_over(mut node: NodeRef) -> NodeRef {
    loop {
        let over = node.lock().mounted.clone();
        match over {
            Some(root) => node = root,
            None => return node,
        }
    }
}

/// Walks `path` (absolute, normal) name by name from the root. A symbolic
/// link met on the way (or last, with `follow_last`) is replaced by its
/// target, read relative to the link's directory, and the walk starts
/// again on the result; after `MAX_LINKS` links it is ELOOP.
fn walk(path: &str, follow_last: bool, links: u32, cred: &Cred) -> Result<NodeRef, Errno> {
    walk_real(path, follow_last, links, cred).map(|(node, _)| node)
}

/// `walk`, which also answers the path it ended on: `path` itself when no
/// link was met (no copy made), else the path with the links replaced.
fn walk_real<'a>(
    path: &'a str,
    follow_last: bool,
    links: u32,
    cred: &Cred,
) -> Result<(NodeRef, Cow<'a, str>), Errno> {
    let mut node = mounted_over(root().clone());
    let mut rest = path.trim_start_matches('/');
    while !rest.is_empty() {
        let (name, after) = rest.split_once('/').unwrap_or((rest, ""));
        let after = after.trim_start_matches('/');
        let next = mounted_over(child(&node, name, cred)?);
        let (target, leads_to) = match &*next.lock() {
            Node {
                content: Content::Symlink(target),
                leads_to,
                ..
            } if follow_last || !after.is_empty() => (Some(target.clone()), leads_to.clone()),
            _ => (None, None),
        };
        // A /proc/PID/fd link as the last name is the file itself. (With
        // more names after it, the file is a directory that its path
        // reaches as well, and the walk goes on from there as for any
        // link.)
        if let (Some(file), Some(target), true) = (leads_to, &target, after.is_empty()) {
            return Ok((file, Cow::Owned(target.clone())));
        }
        if let Some(target) = target {
            if links >= MAX_LINKS {
                return Err(Errno::ELOOP);
            }
            let link_dir = &path[..path.len() - rest.len()];
            let joined = alloc::format!("{target}/{after}");
            let resolved =
                kcore::path::resolve(if link_dir.is_empty() { "/" } else { link_dir }, &joined)?;
            let (node, real) = walk_real(&resolved, follow_last, links + 1, cred)?;
            return Ok((node, Cow::Owned(real.into_owned())));
        }
        node = next;
        rest = after;
    }
    Ok((node, Cow::Borrowed(path)))
}

/// The directory that would hold `path`, and the last name. The root has
/// none: each operation says which error that is (`at_root`).
fn parent_of<'a>(path: &'a str, at_root: Errno, cred: &Cred) -> Result<(NodeRef, &'a str), Errno> {
    let (dir, name) = split_last(path).ok_or(at_root)?;
    let parent = walk(dir, true, 0, cred)?;
    if !parent.lock().is_dir() {
        return Err(Errno::ENOTDIR);
    }
    Ok((parent, name))
}

/// Runs `f` on the directory `dir` (its other fields) and its entries.
fn with_entries_of<R>(
    dir: &NodeRef,
    f: impl FnOnce(&Node, &mut BTreeMap<String, NodeRef>) -> R,
) -> Result<R, Errno> {
    let mut dir = dir.lock();
    let mut entries = match &mut dir.content {
        Content::Dir(entries) => core::mem::take(entries),
        Content::ProcDir(_) => return Err(Errno::ENOENT),
        _ => return Err(Errno::ENOTDIR),
    };
    let result = f(&dir, &mut entries);
    dir.content = Content::Dir(entries);
    Ok(result)
}

/// Runs `f` on the entries of the directory `dir`, to read or change them.
/// /proc's directories cannot be changed: a name to be made there is
/// ENOENT, as Linux tells root.
fn with_entries<R>(
    dir: &NodeRef,
    f: impl FnOnce(&mut BTreeMap<String, NodeRef>) -> R,
) -> Result<R, Errno> {
    match &mut dir.lock().content {
        Content::Dir(entries) => Ok(f(entries)),
        Content::ProcDir(_) => Err(Errno::ENOENT),
        _ => Err(Errno::ENOTDIR),
    }
}

/// Opens or creates the regular file `path` (O_CREAT semantics); with
/// `exclusive`, an existing file is EEXIST. A symbolic link as the last
/// name is followed, so a link to a file not there yet makes that file
/// (but with `exclusive` the link itself exists: EEXIST, as Linux).
/// Making the file needs write and search on its directory (EACCES).
/// Answers the node and whether this call made it (open checks the
/// permission bits of a file it did not make).
pub fn create(path: &str, perm: u32, exclusive: bool) -> Result<(NodeRef, bool), Errno> {
    create_following(path, perm, exclusive, 0, &caller())
}

fn create_following(
    path: &str,
    perm: u32,
    exclusive: bool,
    links: u32,
    cred: &Cred,
) -> Result<(NodeRef, bool), Errno> {
    let last = walk(path, false, 0, cred).ok();
    // O_CREAT on a /proc/PID/fd link opens the file it leads to.
    if !exclusive && let Some(file) = last.as_ref().and_then(|l| l.lock().leads_to.clone()) {
        return Ok((file, false));
    }
    let link_target = |node: NodeRef| match &node.lock().content {
        Content::Symlink(target) => Some(target.clone()),
        _ => None,
    };
    if !exclusive && let Some(target) = last.and_then(link_target) {
        if links >= MAX_LINKS {
            return Err(Errno::ELOOP);
        }
        let dir = split_last(path).map_or("/", |(dir, _)| dir);
        let resolved = kcore::path::resolve(dir, &target)?;
        return create_following(&resolved, perm, exclusive, links + 1, cred);
    }
    let (parent, name) = parent_of(path, Errno::EISDIR, cred)?;
    check_name(name)?;
    if is_on_disk(&parent) {
        return super::ext2::create(&parent, name, perm, exclusive, cred);
    }
    let mut dir = parent.lock();
    let may_create = dir.permits(cred, MAY_WRITE | MAY_EXEC);
    let owner = (dir.perm, dir.gid);
    let entries = match &mut dir.content {
        Content::Dir(entries) => entries,
        Content::ProcDir(_) => return Err(Errno::ENOENT),
        _ => return Err(Errno::ENOTDIR),
    };
    match entries.get(name) {
        Some(_) if exclusive => Err(Errno::EEXIST),
        Some(node) => Ok((node.clone(), false)),
        None if !may_create => Err(Errno::EACCES),
        None => {
            let node = owned_under(perm, Content::File(Default::default()), owner, cred);
            entries.insert(name.to_string(), node.clone());
            dir.modified();
            Ok((node, true))
        }
    }
}

/// ENAMETOOLONG for a name longer than a directory holds.
fn check_name(name: &str) -> Result<(), Errno> {
    if name.len() > abi::types::NAME_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(())
}

/// Whether `node` is a directory of a mounted disk (fs/ext2.rs does the
/// work there).
fn is_on_disk(node: &NodeRef) -> bool {
    node.lock().disk.is_some()
}

/// Adds a node for `making` as `path`, which must not exist (EEXIST), in
/// a directory the caller may write and search (EACCES, checked after
/// EEXIST as Linux's `may_create`). mknod's privilege check comes last,
/// as on Linux.
fn add(path: &str, perm: u32, making: Making) -> Result<(), Errno> {
    let cred = caller();
    let (parent, name) = parent_of(path, Errno::EEXIST, &cred)?;
    check_name(name)?;
    if is_on_disk(&parent) {
        return super::ext2::add(&parent, name, perm, making, &cred);
    }
    let mut dir = parent.lock();
    let exists = match &dir.content {
        Content::Dir(entries) => entries.contains_key(name),
        Content::ProcDir(_) => return Err(Errno::ENOENT),
        _ => return Err(Errno::ENOTDIR),
    };
    if exists {
        return Err(Errno::EEXIST);
    }
    if !dir.permits(&cred, MAY_WRITE | MAY_EXEC) {
        return Err(Errno::EACCES);
    }
    let node = in_memory(making, perm, &dir, &cred)?;
    if let Content::Dir(entries) = &mut dir.content {
        entries.insert(name.to_string(), node);
    }
    dir.modified();
    Ok(())
}

/// The node `making` asks for with permission bits `perm`, in memory,
/// made in `dir` by `cred`.
fn in_memory(making: Making, perm: u32, dir: &Node, cred: &Cred) -> Result<NodeRef, Errno> {
    let content = match making {
        Making::Dir => Content::Dir(BTreeMap::new()),
        Making::Symlink(target) => Content::Symlink(target.to_string()),
        Making::Special { kind, rdev } => {
            if matches!(kind, S_IFCHR | S_IFBLK) && !cred.capable(abi::types::CAP_MKNOD) {
                return Err(Errno::EPERM);
            }
            match kind {
                S_IFIFO => Content::Fifo(super::pipe::Pipe::unopened()),
                S_IFSOCK => Content::Socket(alloc::sync::Weak::new()),
                S_IFREG => Content::File(Default::default()),
                _ => super::dev::content_for(kind, rdev),
            }
        }
        Making::Socket(socket) => Content::Socket(socket),
        // A disk's file has no name in memory: another file system.
        Making::Link(node) if node.lock().disk.is_some() => return Err(Errno::EXDEV),
        Making::Link(node) => return Ok(node.clone()),
    };
    Ok(new_owned(perm, content, dir, cred))
}

/// Makes the node that names a socket bound to `path` (EEXIST if the name
/// is taken).
pub fn make_socket(
    path: &str,
    perm: u32,
    socket: alloc::sync::Weak<super::socket::Socket>,
) -> Result<(), Errno> {
    add(path, perm, Making::Socket(socket))
}

/// The socket `path` names: None for a node that is not a socket's.
/// Connecting or sending to it needs write permission on the name
/// (EACCES), as Linux's `unix_find_bsd`.
pub fn socket_at(path: &str) -> Result<Option<alloc::sync::Weak<super::socket::Socket>>, Errno> {
    let cred = caller();
    let node = walk(path, true, 0, &cred)?;
    let node = node.lock();
    match &node.content {
        Content::Socket(_) if !node.permits(&cred, MAY_WRITE) => Err(Errno::EACCES),
        Content::Socket(socket) => Ok(Some(socket.clone())),
        _ => Ok(None),
    }
}

/// mknod(2): a node of type `kind` at `path` (EEXIST if the name is
/// taken): a FIFO, a socket's name that names no socket, an empty regular
/// file, or a device node: one of `/dev`'s devices when `rdev` is its
/// number, else a node no driver serves (`Content::Special`). A device
/// node needs CAP_MKNOD (EPERM, after the name and the directory were
/// checked, as Linux's `vfs_mknod`).
pub fn mknod(path: &str, perm: u32, kind: u32, rdev: u64) -> Result<(), Errno> {
    if !matches!(kind, S_IFIFO | S_IFSOCK | S_IFREG | S_IFCHR | S_IFBLK) {
        return Err(Errno::EINVAL);
    }
    add(path, perm, Making::Special { kind, rdev })
}

pub fn mkdir(path: &str, perm: u32) -> Result<(), Errno> {
    add(path, perm, Making::Dir)
}

/// symlink(2): a new link at `path` to `target`, which need not exist.
pub fn symlink(target: &str, path: &str) -> Result<(), Errno> {
    if target.is_empty() {
        return Err(Errno::ENOENT); // as Linux
    }
    add(path, 0o777, Making::Symlink(target))
}

/// link(2): a second name `new` for `node`. Directories cannot be linked
/// (EPERM); a file of /proc, another file system, is EXDEV (and a name
/// in /proc is ENOENT, as for every name made there).
pub fn link(node: &NodeRef, new: &str) -> Result<(), Errno> {
    {
        let n = node.lock();
        if n.on_proc() {
            return Err(Errno::EXDEV);
        }
        if n.is_dir() {
            return Err(Errno::EPERM);
        }
    }
    let on_disk = is_on_disk(node);
    add(new, 0, Making::Link(node))?;
    if on_disk {
        return Ok(()); // the disk counted the link (fs/ext2.rs)
    }
    let mut n = node.lock();
    n.links += 1;
    n.changed();
    Ok(())
}

/// chmod(2): the owner or root only (EPERM; /proc's files too). A caller
/// that is not root and not in the file's group cannot set S_ISGID: the
/// bit is dropped without an error, as Linux does.
pub fn chmod(node: &NodeRef, mode: u32) -> Result<(), Errno> {
    let cred = caller();
    let mut n = node.lock();
    if n.on_proc() || !cred.owns(n.uid) {
        return Err(Errno::EPERM);
    }
    super::ext2::check_writable(&n)?;
    let mut mode = mode & 0o7777;
    if cred.fsuid != 0 && !cred.in_fsgroup(n.gid) {
        mode &= !S_ISGID;
    }
    n.perm = mode;
    n.changed();
    drop(n);
    store_if_on_disk(node)
}

/// chown(2), `u32::MAX` leaving an id as it is: root may give a file to
/// anyone; its owner may only change its group, to one of its own groups
/// (EPERM otherwise, as Linux's `chown_ok` and `chgrp_ok`). A file that is
/// not a directory loses S_ISUID, and S_ISGID with group execute, whoever
/// changes it: a program must not stay set-user-ID for a new owner.
pub fn chown(node: &NodeRef, uid: u32, gid: u32) -> Result<(), Errno> {
    let cred = caller();
    let mut n = node.lock();
    if n.on_proc() {
        return Err(Errno::EPERM);
    }
    let root = cred.may_chown();
    let owner = cred.fsuid == n.uid;
    let uid_ok = uid == u32::MAX || root || owner && uid == n.uid;
    let gid_ok = gid == u32::MAX || root || owner && (gid == n.gid || cred.in_fsgroup(gid));
    if !uid_ok || !gid_ok {
        return Err(Errno::EPERM);
    }
    if uid != u32::MAX {
        n.uid = uid;
    }
    if gid != u32::MAX {
        n.gid = gid;
    }
    super::ext2::check_writable(&n)?;
    if !n.is_dir() {
        n.perm &= !S_ISUID;
        if n.perm & S_IXGRP != 0 {
            n.perm &= !S_ISGID;
        }
    }
    n.changed();
    drop(n);
    store_if_on_disk(node)
}

/// Writes a disk node's attributes, changed in the node, to its inode.
pub fn store_if_on_disk(node: &NodeRef) -> Result<(), Errno> {
    if is_on_disk(node) {
        super::ext2::store_attributes(node)?;
    }
    Ok(())
}

/// Removes a file (`unlink`) or an empty directory (`rmdir`).
pub fn remove(path: &str, want_dir: bool) -> Result<(), Errno> {
    let cred = caller();
    let (parent, name) = parent_of(path, Errno::EBUSY, &cred)?;
    if matches!(parent.lock().content, Content::ProcDir(_)) {
        return Err(Errno::EPERM); // as Linux tells root
    }
    if is_on_disk(&parent) {
        return super::ext2::remove(&parent, name, want_dir, &cred);
    }
    let removed = with_entries_of(&parent, |dir, entries| {
        let node = entries.get(name).ok_or(Errno::ENOENT)?;
        {
            let node = node.lock();
            dir.may_unlink(&node, &cred)?;
            if node.mounted.is_some() {
                return Err(Errno::EBUSY); // a mount point
            }
            match (&node.content, want_dir) {
                // /proc is a file system of its own: a mount point is busy.
                (Content::ProcDir(_), true) => return Err(Errno::EBUSY),
                (Content::Dir(_) | Content::ProcDir(_), false) => return Err(Errno::EISDIR),
                (Content::Dir(children), true) if !children.is_empty() => {
                    return Err(Errno::ENOTEMPTY);
                }
                (Content::Dir(_), true) => {}
                (_, true) => return Err(Errno::ENOTDIR),
                (_, false) => {}
            }
        }
        Ok(entries.remove(name))
    })??;
    parent.lock().modified();
    if let Some(node) = removed {
        node.lock().lost_a_name();
    }
    Ok(())
}

/// Renames `from` to `to`, replacing a file (or empty directory) at `to`.
pub fn rename(from: &str, to: &str, noreplace: bool) -> Result<(), Errno> {
    if from == to {
        let found = lookup(from).map(|_| ());
        return if noreplace && found.is_ok() {
            Err(Errno::EEXIST)
        } else {
            found
        };
    }
    let cred = caller();
    let (from_dir, from_name) = parent_of(from, Errno::EBUSY, &cred)?;
    let (to_dir, to_name) = parent_of(to, Errno::EBUSY, &cred)?;
    check_name(to_name)?;
    match (
        super::ext2::disk_of(&from_dir),
        super::ext2::disk_of(&to_dir),
    ) {
        (Some((a, _)), Some((b, _))) if Arc::ptr_eq(&a, &b) => {
            return super::ext2::rename(&from_dir, from_name, &to_dir, to_name, noreplace, &cred);
        }
        (None, None) => {}
        _ => return Err(Errno::EXDEV),
    }
    let node = with_entries(&from_dir, |e| e.get(from_name).cloned())?.ok_or(Errno::ENOENT)?;
    let moving_dir = node.lock().is_dir();
    // Asked of the nodes, not the path strings: a path through a symbolic
    // link can lead inside the directory by another name.
    if moving_dir && !Arc::ptr_eq(&from_dir, &to_dir) && holds(&node, &to_dir) {
        return Err(Errno::EINVAL); // a directory into itself
    }
    let existing = with_entries(&to_dir, |e| e.get(to_name).cloned())?;
    if noreplace && existing.is_some() {
        return Err(Errno::EEXIST); // renameat2's RENAME_NOREPLACE
    }
    may_rename(&from_dir, &node, &to_dir, existing.as_ref(), &cred)?;
    if let Some(existing) = &existing {
        if Arc::ptr_eq(existing, &node) {
            return Ok(()); // two names of one file: POSIX says do nothing
        }
        let existing = existing.lock();
        match (&existing.content, moving_dir) {
            (Content::Dir(c), true) if !c.is_empty() => return Err(Errno::ENOTEMPTY),
            (Content::Dir(_), false) => return Err(Errno::EISDIR),
            (_, true) if !existing.is_dir() => return Err(Errno::ENOTDIR),
            _ => {}
        }
    }
    with_entries(&from_dir, |e| e.remove(from_name))?;
    with_entries(&to_dir, |e| e.insert(to_name.to_string(), node.clone()))?;
    from_dir.lock().modified();
    if !Arc::ptr_eq(&from_dir, &to_dir) {
        to_dir.lock().modified();
    }
    node.lock().changed();
    if let Some(replaced) = existing {
        replaced.lock().lost_a_name();
    }
    Ok(())
}

/// Whether `cred` may move `node` from `from_dir` to `to_dir`, over
/// `existing` if a name is there, in Linux's order: may the name go from
/// its directory, may the new one be made (or the one it replaces go), and
/// a directory that changes parent must be writable itself (its `..`
/// changes); a mount point does not move (EBUSY). Both file systems ask
/// this (fs/ext2.rs too), before their own checks of the replaced node.
pub(super) fn may_rename(
    from_dir: &NodeRef,
    node: &NodeRef,
    to_dir: &NodeRef,
    existing: Option<&NodeRef>,
    cred: &Cred,
) -> Result<(), Errno> {
    from_dir.lock().may_unlink(&node.lock(), cred)?;
    match existing {
        Some(old) if !Arc::ptr_eq(old, node) => to_dir.lock().may_unlink(&old.lock(), cred)?,
        Some(_) => {}
        None if !to_dir.lock().permits(cred, MAY_WRITE | MAY_EXEC) => {
            return Err(Errno::EACCES);
        }
        None => {}
    }
    let moving_dir = node.lock().is_dir();
    if moving_dir && !Arc::ptr_eq(from_dir, to_dir) && !node.lock().permits(cred, MAY_WRITE) {
        return Err(Errno::EACCES);
    }
    if node.lock().mounted.is_some() || existing.is_some_and(|e| e.lock().mounted.is_some()) {
        return Err(Errno::EBUSY); // a mount point
    }
    Ok(())
}

/// Whether `node` is the directory `dir` or lies below it. Nodes know no
/// parent, so this walks `dir`'s subtree (directories only, one lock at a
/// time, parent before child as a path walk takes them); renames of whole
/// directories across parents are rare enough to pay for it.
pub(super) fn holds(dir: &NodeRef, node: &NodeRef) -> bool {
    let mut pending = alloc::vec![dir.clone()];
    while let Some(next) = pending.pop() {
        if Arc::ptr_eq(&next, node) {
            return true;
        }
        if let Content::Dir(entries) = &next.lock().content {
            pending.extend(entries.values().filter(|n| n.lock().is_dir()).cloned());
        }
    }
    false
}

/// How many names a node has, as `st_nlink` says: a directory has its
/// own, its entry in its parent's, and each subdirectory's `..`.
pub fn nlink(node: &Node) -> u64 {
    match &node.content {
        Content::Dir(entries) => {
            let subdirs = entries.values().filter(|n| n.lock().is_dir()).count();
            2 + subdirs as u64
        }
        Content::ProcDir(_) => 2,
        // A disk directory's count is the disk's, kept the same way.
        _ => u64::from(node.links),
    }
}

/// The entries of the directory `dir`: in name order, or /proc's order.
pub fn list(dir: &NodeRef) -> Result<Vec<DirEntry>, Errno> {
    if matches!(dir.lock().content, Content::DiskDir) {
        return super::ext2::list(dir); // sleeps: no lock held
    }
    let proc_dir = match &dir.lock().content {
        Content::Dir(entries) => {
            return Ok(entries
                .iter()
                .map(|(name, node)| {
                    let node = node.lock();
                    DirEntry {
                        name: name.clone(),
                        ino: node.ino,
                        kind: node.dir_entry_kind(),
                    }
                })
                .collect());
        }
        Content::ProcDir(d) => *d,
        _ => return Err(Errno::ENOTDIR),
    };
    Ok(super::procfs::list(proc_dir))
}

/// Makes what every Unix has before any file is read: `/dev` with its
/// devices (fs/dev.rs), and `/tmp` and `/dev/shm`, where anyone may create
/// files (mode 1777: sticky, so only a file's owner would remove it once
/// there are users).
pub fn make_standard_dirs() {
    mkdir("/dev", 0o755).ok();
    with_entries(&lookup("/dev").expect("just made"), |e| {
        for (name, device, perm) in super::dev::ALL {
            e.insert(name.to_string(), new_node(perm, Content::Device(device)));
        }
    })
    .expect("/dev is a directory");
    // Where pseudo-terminals' slaves appear (fs/pty.rs), as devpts.
    mkdir("/dev/pts", 0o755).ok();
    mkdir("/dev/shm", 0o1777).ok();
    mkdir("/tmp", 0o1777).ok();
    with_entries(root(), |e| {
        e.insert("proc".to_string(), super::procfs::root_node())
    })
    .expect("the root is a directory");
}

/// Adds device `device` to `/dev` as `name`, after boot's standard
/// devices (a driver that found its hardware).
pub fn add_device(name: &str, device: super::dev::Device, perm: u32) {
    with_entries(&lookup("/dev").expect("made at boot"), |e| {
        e.insert(name.to_string(), new_node(perm, Content::Device(device)));
    })
    .expect("/dev is a directory");
}

/// Makes `path` (its directory must exist) a node of `device` owned by
/// `uid` and `gid`: a pseudo-terminal's slave in `/dev/pts`. EEXIST if
/// the name is taken.
pub fn make_device_node(
    path: &str,
    device: super::dev::Device,
    perm: u32,
    uid: u32,
    gid: u32,
) -> Result<(), Errno> {
    let (dir, name) = kcore::path::split_last(path).ok_or(Errno::EINVAL)?;
    let mut node = Node::new(new_ino(), perm, Content::Device(device));
    node.uid = uid;
    node.gid = gid;
    let node = Arc::new(IrqLock::new(Rank::Node, node));
    with_entries(&lookup(dir)?, |e| {
        if e.contains_key(name) {
            return Err(Errno::EEXIST);
        }
        e.insert(name.to_string(), node);
        Ok(())
    })?
}

/// Takes the device node `path` away (a pseudo-terminal's slave when its
/// master closes); descriptors open on it keep the node.
pub fn remove_device_node(path: &str) -> Result<(), Errno> {
    let (dir, name) = kcore::path::split_last(path).ok_or(Errno::EINVAL)?;
    with_entries(&lookup(dir)?, |e| {
        let is_device = e
            .get(name)
            .is_some_and(|n| matches!(n.lock().content, Content::Device(_)));
        if !is_device {
            return Err(Errno::ENOENT);
        }
        e.remove(name);
        Ok(())
    })?
}

/// Fills the tree from a newc cpio archive; returns the number of files.
pub fn load_cpio(archive: &[u8]) -> Result<usize, kcore::cpio::CpioError> {
    let mut files = 0;
    for entry in kcore::cpio::Reader::new(archive) {
        let entry = entry?;
        let path = alloc::format!("/{}", entry.name);
        if path == "/" || path == "/." {
            continue;
        }
        ensure_parents(&path);
        let perm = entry.mode & !S_IFMT;
        if entry.is_dir() {
            mkdir(&path, perm).ok();
        } else if entry.is_file()
            && let Ok((node, _)) = create(&path, perm, false)
        {
            match super::filedata::FileData::from_bytes(entry.data) {
                Ok(data) => {
                    node.lock().content = Content::File(data);
                    files += 1;
                }
                Err(_) => crate::warn!("ramfs: no memory for {path}"),
            }
        }
    }
    Ok(files)
}

fn ensure_parents(path: &str) {
    let mut at = 0;
    while let Some(next) = path[at + 1..].find('/') {
        at += next + 1;
        mkdir(&path[..at], 0o755).ok();
    }
}
