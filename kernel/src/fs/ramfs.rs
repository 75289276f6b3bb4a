//! The ramfs: a tree of directories and files kept in kernel memory.
//!
//! Every node is an `Arc<IrqLock<Node>>`; a directory maps names to child nodes,
//! a file owns its bytes. Open files hold an `Arc` to their node, so a file
//! unlinked while open lives on until the last close, as on Unix. The tree is
//! filled at boot from the ramdisk's cpio archive (`load_cpio`) and changed at
//! run time by the file system calls. Paths reaching this file are absolute
//! and normal (`kcore::path::resolve`).

use abi::Errno;
use abi::types::{S_IFCHR, S_IFDIR, S_IFMT, S_IFREG};
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use kcore::path::split_last;
use spin::Once;

use crate::sync::IrqLock;

pub type NodeRef = Arc<IrqLock<Node>>;

pub enum Content {
    /// A regular file's bytes (fs/filedata.rs: one frame per page).
    File(super::filedata::FileData),
    Dir(BTreeMap<String, NodeRef>),
    /// A character device of `/dev` (fs/dev.rs).
    Device(super::dev::Device),
}

pub struct Node {
    pub ino: u64,
    /// Permission bits (the type bits come from `content`).
    pub perm: u32,
    pub content: Content,
}

impl Node {
    pub fn mode(&self) -> u32 {
        let kind = match self.content {
            Content::File(_) => S_IFREG,
            Content::Dir(_) => S_IFDIR,
            Content::Device(_) => S_IFCHR,
        };
        kind | (self.perm & 0o7777)
    }

    /// The device this node is, if it is one.
    pub fn device(&self) -> Option<super::dev::Device> {
        match self.content {
            Content::Device(device) => Some(device),
            _ => None,
        }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self.content, Content::Dir(_))
    }

    pub fn size(&self) -> u64 {
        match &self.content {
            Content::File(data) => data.len(),
            Content::Dir(entries) => entries.len() as u64,
            Content::Device(_) => 0,
        }
    }
}

static NEXT_INO: AtomicU64 = AtomicU64::new(1);
static ROOT: Once<NodeRef> = Once::new();

fn new_node(perm: u32, content: Content) -> NodeRef {
    Arc::new(IrqLock::new(Node {
        ino: NEXT_INO.fetch_add(1, Ordering::Relaxed),
        perm,
        content,
    }))
}

fn root() -> &'static NodeRef {
    ROOT.call_once(|| new_node(0o755, Content::Dir(BTreeMap::new())))
}

/// The node at `path`.
pub fn lookup(path: &str) -> Result<NodeRef, Errno> {
    let mut node = root().clone();
    for name in path.split('/').filter(|n| !n.is_empty()) {
        let next = match &node.lock().content {
            Content::Dir(entries) => entries.get(name).cloned().ok_or(Errno::ENOENT)?,
            _ => return Err(Errno::ENOTDIR),
        };
        node = next;
    }
    Ok(node)
}

/// The directory that would hold `path`, and the last name. The root has
/// none: each operation says which error that is (`at_root`).
fn parent_of(path: &str, at_root: Errno) -> Result<(NodeRef, &str), Errno> {
    let (dir, name) = split_last(path).ok_or(at_root)?;
    let parent = lookup(dir)?;
    if !parent.lock().is_dir() {
        return Err(Errno::ENOTDIR);
    }
    Ok((parent, name))
}

fn with_entries<R>(
    dir: &NodeRef,
    f: impl FnOnce(&mut BTreeMap<String, NodeRef>) -> R,
) -> Result<R, Errno> {
    match &mut dir.lock().content {
        Content::Dir(entries) => Ok(f(entries)),
        _ => Err(Errno::ENOTDIR),
    }
}

/// Opens or creates the regular file `path` (O_CREAT semantics); with
/// `exclusive`, an existing file is EEXIST.
pub fn create(path: &str, perm: u32, exclusive: bool) -> Result<NodeRef, Errno> {
    let (parent, name) = parent_of(path, Errno::EISDIR)?;
    with_entries(&parent, |entries| match entries.get(name) {
        Some(_) if exclusive => Err(Errno::EEXIST),
        Some(node) => Ok(node.clone()),
        None => {
            let node = new_node(perm, Content::File(Default::default()));
            entries.insert(name.to_string(), node.clone());
            Ok(node)
        }
    })?
}

pub fn mkdir(path: &str, perm: u32) -> Result<(), Errno> {
    let (parent, name) = parent_of(path, Errno::EEXIST)?;
    with_entries(&parent, |entries| {
        if entries.contains_key(name) {
            return Err(Errno::EEXIST);
        }
        entries.insert(
            name.to_string(),
            new_node(perm, Content::Dir(BTreeMap::new())),
        );
        Ok(())
    })?
}

/// Removes a file (`unlink`) or an empty directory (`rmdir`).
pub fn remove(path: &str, want_dir: bool) -> Result<(), Errno> {
    let (parent, name) = parent_of(path, Errno::EBUSY)?;
    with_entries(&parent, |entries| {
        let node = entries.get(name).ok_or(Errno::ENOENT)?;
        {
            let node = node.lock();
            match (&node.content, want_dir) {
                (Content::Dir(_), false) => return Err(Errno::EISDIR),
                (Content::Dir(children), true) if !children.is_empty() => {
                    return Err(Errno::ENOTEMPTY);
                }
                (Content::Dir(_), true) => {}
                (_, true) => return Err(Errno::ENOTDIR),
                (_, false) => {}
            }
        }
        entries.remove(name);
        Ok(())
    })?
}

/// Renames `from` to `to`, replacing a file (or empty directory) at `to`.
pub fn rename(from: &str, to: &str) -> Result<(), Errno> {
    if from == to {
        return lookup(from).map(|_| ());
    }
    if to.starts_with(from) && to.as_bytes().get(from.len()) == Some(&b'/') {
        return Err(Errno::EINVAL); // a directory into itself
    }
    let (from_dir, from_name) = parent_of(from, Errno::EBUSY)?;
    let (to_dir, to_name) = parent_of(to, Errno::EBUSY)?;
    let node = with_entries(&from_dir, |e| e.get(from_name).cloned())?.ok_or(Errno::ENOENT)?;
    let moving_dir = node.lock().is_dir();
    if let Some(existing) = with_entries(&to_dir, |e| e.get(to_name).cloned())? {
        let existing = existing.lock();
        match (&existing.content, moving_dir) {
            (Content::Dir(c), true) if !c.is_empty() => return Err(Errno::ENOTEMPTY),
            (Content::Dir(_), false) => return Err(Errno::EISDIR),
            (_, true) if !existing.is_dir() => return Err(Errno::ENOTDIR),
            _ => {}
        }
    }
    with_entries(&from_dir, |e| e.remove(from_name))?;
    with_entries(&to_dir, |e| e.insert(to_name.to_string(), node))?;
    Ok(())
}

/// Names and nodes of the directory `dir`, in name order.
pub fn list(dir: &NodeRef) -> Result<Vec<(String, NodeRef)>, Errno> {
    with_entries(dir, |e| {
        e.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    })
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
    mkdir("/dev/shm", 0o1777).ok();
    mkdir("/tmp", 0o1777).ok();
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
            && let Ok(node) = create(&path, perm, false)
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
