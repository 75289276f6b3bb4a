//! Mounts: a file system's root put in the place of a directory, so a
//! path walk that reaches the directory goes on in the mounted tree
//! (`ramfs::mounted_over`).
//!
//! The tree starts as the ramfs with /proc in it. mount(2) adds:
//!
//! | type | what is mounted |
//! |---|---|
//! | `ext2`, `ext3`, `ext4` | the file system on a block device (`fs/ext2.rs`): a virtio disk, `/dev/vda`, `/dev/vdb`...; an image with its journal is ext3, whatever type was asked, since one driver reads both |
//! | `tmpfs`, `ramfs` | a new, empty tree in memory (`mode=` in the data sets its root's bits) |
//! | `proc` | another view of /proc |
//! | any, with `MS_BIND` | a directory that already exists, seen at a second place |
//!
//! A mount is recorded on the directory it covers (`Node::mounted`) and in
//! the table here, which /proc/mounts lists and umount2 searches. Mounting
//! on a directory that is already a mount point stacks: the walk enters
//! the newest mount, and unmounting it shows the one below again.
//!
//! `MS_RDONLY` is kept by the disk's file system: every change there is
//! EROFS. The other flags (`nosuid`, `nodev`, `noexec`) are recorded and
//! shown in /proc/mounts but not yet obeyed. A mount in use is busy:
//! umount2 says EBUSY, even with MNT_DETACH, which this kernel does not
//! do lazily. In use means a process works in it (a working directory is
//! a path here, so the paths are compared), something is mounted inside
//! it, or, on a disk, any of its nodes is held (an open file or
//! directory, its root's too, a mapping).
//!
//! mount and umount2 take `MOUNTING` for their whole length (a sleep lock:
//! mounting reads the disk), so two of them never interleave; the table's
//! own lock is taken only for moments inside it.

use abi::Errno;
use abi::types::{
    MNT_DETACH, MNT_EXPIRE, MNT_FORCE, MS_BIND, MS_MGC_MSK, MS_MGC_VAL, MS_MOVE, MS_NODEV,
    MS_NOEXEC, MS_NOSUID, MS_RDONLY, MS_REMOUNT, MS_SILENT, UMOUNT_NOFOLLOW,
};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::ext2::Volume;
use super::ramfs::{self, NodeRef};
use crate::sync::{IrqLock, Rank, SleepLock};

struct Mount {
    /// What /proc/mounts shows as its device ("/dev/vda", "tmpfs").
    source: String,
    /// The path it was mounted on.
    target: String,
    /// Its type as /proc/mounts shows it.
    kind: String,
    flags: u64,
    root: NodeRef,
    covered: NodeRef,
    /// The disk's file system, when this mount owns it (not a bind).
    vol: Option<Arc<Volume>>,
}

static MOUNTS: IrqLock<Vec<Mount>> = IrqLock::new(Rank::Service, Vec::new());
static MOUNTING: SleepLock<()> = SleepLock::new(());

/// What mount(2) was given, its strings read from the caller.
pub struct Request<'a> {
    pub source: &'a str,
    pub target: &'a str,
    pub kind: &'a str,
    pub flags: u64,
    /// The data string, for the file systems that take one (tmpfs).
    pub data: Option<&'a str>,
}

/// mount(2): root only (CAP_SYS_ADMIN, EPERM).
pub fn mount(req: Request) -> Result<(), Errno> {
    let cred = crate::proc::cred();
    if !cred.capable(abi::types::CAP_SYS_ADMIN) {
        return Err(Errno::EPERM);
    }
    let mut flags = req.flags;
    if flags & MS_MGC_MSK == MS_MGC_VAL {
        flags &= !MS_MGC_MSK; // the old magic number, as Linux drops it
    }
    flags &= !MS_SILENT;
    let _serial = MOUNTING.lock();
    let covered = ramfs::lookup(req.target)?;
    if !covered.lock().is_dir() {
        return Err(Errno::ENOTDIR);
    }
    if flags & MS_REMOUNT != 0 {
        return remount(&covered, flags);
    }
    if flags & MS_MOVE != 0 {
        return move_mount(req.source, covered, req.target);
    }
    let (root, vol, source, kind) = if flags & MS_BIND != 0 {
        let root = ramfs::lookup(req.source)?;
        (root, None, String::from(req.source), String::from("bind"))
    } else {
        match req.kind {
            "ext2" | "ext3" | "ext4" => {
                let (vol, root) = mount_disk(req.source, flags & MS_RDONLY != 0)?;
                let kind = String::from(vol.kind);
                (root, Some(vol), String::from(req.source), kind)
            }
            "tmpfs" | "ramfs" | "proc" if flags & MS_RDONLY != 0 => {
                // Not kept in memory's trees: refused rather than shown
                // and not obeyed.
                return Err(Errno::EINVAL);
            }
            "tmpfs" | "ramfs" => {
                let default = if req.kind == "tmpfs" { 0o1777 } else { 0o755 };
                let mode = data_mode(req.data)?.unwrap_or(default);
                let root = ramfs::new_tree(mode);
                (root, None, String::from(req.kind), String::from(req.kind))
            }
            "proc" => (
                super::procfs::root_node(),
                None,
                String::from("proc"),
                String::from("proc"),
            ),
            "" => return Err(Errno::EINVAL),
            _ => return Err(Errno::ENODEV),
        }
    };
    if flags & MS_BIND != 0 && !root.lock().is_dir() {
        return Err(Errno::ENOTDIR); // only directories, here
    }
    {
        let mut c = covered.lock();
        if c.mounted.is_some() {
            return Err(Errno::EBUSY); // a mount made there meanwhile
        }
        c.mounted = Some(root.clone());
    }
    let target = kcore::path::resolve("/", req.target)?;
    MOUNTS.lock().push(Mount {
        source,
        target,
        kind,
        flags,
        root,
        covered,
        vol,
    });
    Ok(())
}

/// The disk at `source` (a block device node) mounted. EBUSY if its
/// file system is mounted already: one volume per disk, so two mounts
/// never cache the same blocks apart (a second place is a bind mount).
fn mount_disk(source: &str, read_only: bool) -> Result<(Arc<Volume>, NodeRef), Errno> {
    let device = ramfs::lookup(source)?;
    let device = device.lock().device();
    let Some(super::dev::Device::Disk(disk)) = device else {
        return Err(Errno::ENOTBLK);
    };
    if !crate::virtio_blk::present(disk) {
        return Err(Errno::ENXIO);
    }
    if MOUNTS
        .lock()
        .iter()
        .any(|m| m.vol.as_ref().is_some_and(|v| v.disk == disk))
    {
        return Err(Errno::EBUSY);
    }
    super::ext2::mount(disk, read_only)
}

/// `mode=` in a tmpfs's data string: octal permission bits.
fn data_mode(data: Option<&str>) -> Result<Option<u32>, Errno> {
    let Some(data) = data else { return Ok(None) };
    for option in data.split(',') {
        if let Some(mode) = option.strip_prefix("mode=") {
            let mode = u32::from_str_radix(mode, 8).map_err(|_| Errno::EINVAL)?;
            return Ok(Some(mode & 0o7777));
        }
    }
    Ok(None)
}

/// MS_MOVE: the mount whose root `source` names goes to the directory
/// `to` (at path `target`), with every mount inside it, as an
/// initramfs's init moves the real root onto `/` (user/src/bin/init.rs).
/// EINVAL for a source that is not a mount's root or a place inside the
/// mount itself, EBUSY for a place something is mounted on.
fn move_mount(source: &str, to: NodeRef, target: &str) -> Result<(), Errno> {
    let root = ramfs::lookup(source)?;
    let (from, old_target, vol) = {
        let mounts = MOUNTS.lock();
        let m = mounts
            .iter()
            .find(|m| Arc::ptr_eq(&m.root, &root))
            .ok_or(Errno::EINVAL)?;
        (m.covered.clone(), m.target.clone(), m.vol.clone())
    };
    if Arc::ptr_eq(&to, &root) || is_within(&to, &root, vol.as_ref()) {
        return Err(Errno::EINVAL);
    }
    {
        let mut t = to.lock();
        if t.mounted.is_some() {
            return Err(Errno::EBUSY);
        }
        t.mounted = Some(root.clone());
    }
    from.lock().mounted = None;
    let new_target = kcore::path::resolve("/", target)?;
    let mut mounts = MOUNTS.lock();
    for m in mounts.iter_mut() {
        if Arc::ptr_eq(&m.root, &root) {
            m.covered = to.clone();
        }
        // This mount's path and those of the mounts inside it.
        if let Some(rest) = kcore::path::below(&m.target, &old_target) {
            let joined = alloc::format!("{}/{rest}", new_target.trim_end_matches('/'));
            m.target = kcore::path::resolve("/", &joined)?;
        }
    }
    drop(mounts);
    drop(from); // outside the table's lock: a node's drop may lock
    Ok(())
}

/// MS_REMOUNT: new flags for the mount whose root `root` is. Making a
/// disk read-only or writable again is not done yet (EINVAL).
fn remount(root: &NodeRef, flags: u64) -> Result<(), Errno> {
    let mut mounts = MOUNTS.lock();
    let m = mounts
        .iter_mut()
        .find(|m| Arc::ptr_eq(&m.root, root))
        .ok_or(Errno::EINVAL)?;
    if (m.flags ^ flags) & MS_RDONLY != 0 {
        return Err(Errno::EINVAL);
    }
    m.flags = flags & !MS_REMOUNT;
    Ok(())
}

/// umount2(2): root only (EPERM); EINVAL for a path that is not the root
/// of a mount, EBUSY for a mount in use (the top of this file).
pub fn umount(target: &str, flags: u32) -> Result<(), Errno> {
    let cred = crate::proc::cred();
    if !cred.capable(abi::types::CAP_SYS_ADMIN) {
        return Err(Errno::EPERM);
    }
    let known = MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW;
    if flags & !known != 0 || (flags & MNT_EXPIRE != 0 && flags & (MNT_FORCE | MNT_DETACH) != 0) {
        return Err(Errno::EINVAL);
    }
    let _serial = MOUNTING.lock();
    let root = if flags & UMOUNT_NOFOLLOW != 0 {
        ramfs::lookup_nofollow(target)?
    } else {
        ramfs::lookup(target)?
    };
    // Copied out of the table: asking whether a node lies in the mount
    // takes node locks, which come before the table's in the lock order.
    let (covered, vol, others, mount_holds, at) = {
        let mounts = MOUNTS.lock();
        let m = mounts
            .iter()
            .find(|m| Arc::ptr_eq(&m.root, &root))
            .ok_or(Errno::EINVAL)?;
        // Each mount of this root holds it twice: its entry here and
        // its covered node's `mounted`.
        let mount_holds = 2 * mounts
            .iter()
            .filter(|m| Arc::ptr_eq(&m.root, &root))
            .count();
        let others: Vec<NodeRef> = mounts
            .iter()
            .filter(|other| !Arc::ptr_eq(&other.root, &root))
            .map(|other| other.covered.clone())
            .collect();
        let at = m.target.clone();
        (m.covered.clone(), m.vol.clone(), others, mount_holds, at)
    };
    if others.iter().any(|c| is_within(c, &root, vol.as_ref())) {
        return Err(Errno::EBUSY); // a mount inside this one
    }
    // A disk's root is held only by its mounts (the volume's table of
    // nodes is weak), so any other hold is a user: an open descriptor of
    // the directory, say (`root` here is this call's own). A bind mount's
    // root is also its parent directory's entry, so it is not counted.
    if vol.is_some() && Arc::strong_count(&root) > mount_holds + 1 {
        return Err(Errno::EBUSY);
    }
    if some_cwd_within(&at) {
        return Err(Errno::EBUSY);
    }
    if let Some(vol) = &vol
        && vol.busy(&root)
    {
        return Err(Errno::EBUSY);
    }
    let gone = {
        let mut mounts = MOUNTS.lock();
        let at = mounts.iter().position(|m| Arc::ptr_eq(&m.root, &root));
        at.map(|at| mounts.remove(at))
    };
    drop(gone); // its nodes go outside the table's lock (a node's drop may lock)
    covered.lock().mounted = None;
    drop(root);
    match vol {
        Some(vol) => vol.unmount(),
        None => Ok(()),
    }
}

/// Whether a process works in the mount at `target` (its working
/// directory, a path here, is `target` or below it): that process uses
/// the mount as an open file does. Never for `/`, where every working
/// directory is: there only held nodes count, so init can unmount the
/// root disk last and leave it clean (user/src/bin/init.rs).
fn some_cwd_within(target: &str) -> bool {
    if target == "/" {
        return false;
    }
    let table = crate::proc::TABLE.lock();
    table
        .procs
        .values()
        .any(|p| !p.is_zombie() && kcore::path::below(&p.cwd, target).is_some())
}

/// Whether `node` lies in the tree of the mount whose root is `root`
/// (`vol`: its disk, if it is one).
fn is_within(node: &NodeRef, root: &NodeRef, vol: Option<&Arc<Volume>>) -> bool {
    match (vol, super::ext2::disk_of(node)) {
        (Some(vol), Some((other, _))) => Arc::ptr_eq(vol, &other),
        (Some(_), None) | (None, Some(_)) => false,
        (None, None) => ramfs::holds(root, node),
    }
}

/// /proc/mounts: the boot's ramfs and /proc, then each mount in the order
/// made.
pub fn proc_mounts() -> String {
    let mut out = String::from("ramfs / ramfs rw 0 0\n");
    // The boot's /proc is a directory of the ramfs: shown while the ramfs
    // is the root a walk starts from.
    if !ramfs::root_is_covered() {
        out.push_str("proc /proc proc rw,nosuid,nodev,noexec 0 0\n");
    }
    for m in MOUNTS.lock().iter() {
        let mut options = String::from(if m.flags & MS_RDONLY != 0 { "ro" } else { "rw" });
        for (bit, name) in [
            (MS_NOSUID, ",nosuid"),
            (MS_NODEV, ",nodev"),
            (MS_NOEXEC, ",noexec"),
        ] {
            if m.flags & bit != 0 {
                options.push_str(name);
            }
        }
        if let Some(vol) = &m.vol {
            if vol.read_only && m.flags & MS_RDONLY == 0 {
                options.replace_range(..2, "ro"); // the disk refused writes
            }
            options.push_str(",noatime");
        }
        out.push_str(&alloc::format!(
            "{} {} {} {options} 0 0\n",
            m.source,
            escape(&m.target),
            m.kind
        ));
    }
    out
}

/// A path as /proc/mounts writes it: space, tab, newline and backslash as
/// octal escapes, as Linux's `mangle`.
fn escape(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        match c {
            ' ' | '\t' | '\n' | '\\' => out.push_str(&alloc::format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// sync(2): every disk's journal committed and its cache flushed.
pub fn sync_all() -> Result<(), Errno> {
    let volumes: Vec<Arc<Volume>> = MOUNTS.lock().iter().filter_map(|m| m.vol.clone()).collect();
    for vol in volumes {
        vol.sync()?;
    }
    Ok(())
}
