//! Extended attributes (setxattr, getxattr, listxattr, removexattr, each
//! by path, by path without following a last symbolic link, and by
//! descriptor): named values beside a file's bytes, `user.mime_type` and
//! the like.
//!
//! A file in memory keeps them in its node (`ramfs::Node::xattrs`, a
//! `kcore::xattr::Attrs`), as tmpfs does; a file on an ext2 or ext3 disk
//! in its inode and its attribute block, as Linux's ext4 lays them out
//! (`kcore::ext2::xattr`), read into the same `Attrs` and written back
//! whole by each change (`fs::ext2::change_xattrs`). Either way: `user.`
//! names on regular files and directories, `trusted.` ones for root,
//! `security.` ones, under the VFS's rules (`kcore::xattr::check`). A
//! `/proc` file and a descriptor with no file behind it (a pipe, a socket)
//! keep none: the VFS's rules still answer first (a `user.` name on a pipe
//! is EPERM to set and ENODATA to get, as on Linux), then getting, setting
//! or removing is EOPNOTSUPP and the list is empty, as Linux answers on a
//! file system without them. What comes before is Linux's, in its order
//! (`fs/xattr.c`): the file is looked up first (ENOENT, ENOTDIR, EBADF),
//! then the flags (EINVAL), the name (ERANGE when empty or past
//! `XATTR_NAME_MAX`) and the value (E2BIG past `XATTR_SIZE_MAX`, EFAULT
//! if it cannot be read).

use abi::Errno;
use abi::types::{
    AT_FDCWD, CAP_FOWNER, CAP_SYS_ADMIN, S_ISVTX, XATTR_CREATE, XATTR_NAME_MAX, XATTR_REPLACE,
    XATTR_SIZE_MAX,
};
use alloc::vec;
use alloc::vec::Vec;
use kcore::cred::{MAY_READ, MAY_WRITE};
use kcore::xattr::{Access, Attrs, FileKind};

use super::SysResult;
use super::fs::{fd_file, user_path};
use crate::fs::ext2;
use crate::fs::file::Kind;
use crate::fs::ramfs::{self, Content, Node, NodeRef};
use crate::mm::uaccess;

/// Which file a call is about, before it is looked up.
#[derive(Clone, Copy)]
pub enum Target {
    /// A path; a symbolic link as its last part is followed.
    Path(u64),
    /// A path; a symbolic link as its last part is the file (`l*xattr`).
    Link(u64),
    /// An open descriptor (`f*xattr`); O_PATH ones are EBADF, as on Linux.
    Fd(i32),
}

/// What a call found, once the file is looked up (its errors first).
enum Found {
    /// A file in memory, which keeps attributes in its node.
    Memory(NodeRef),
    /// A file on a disk, which keeps them in its inode.
    Disk(NodeRef),
    /// A file that keeps none: in /proc.
    Keepless(NodeRef),
    /// A descriptor with no file behind it: a pipe, a socket, an epoll
    /// instance, an eventfd, a pidfd.
    Nothing,
}

fn find(target: Target) -> Result<Found, Errno> {
    let node = match target {
        Target::Path(path) => ramfs::lookup(&user_path(AT_FDCWD, path)?)?,
        Target::Link(path) => ramfs::lookup_nofollow(&user_path(AT_FDCWD, path)?)?,
        Target::Fd(fd) => match &fd_file(fd)?.kind {
            Kind::Node(node) => node.clone(),
            _ => return Ok(Found::Nothing),
        },
    };
    let (on_disk, in_proc) = {
        let n = node.lock();
        (
            n.disk.is_some(),
            matches!(
                n.content,
                Content::ProcDir(_)
                    | Content::ProcFile(_)
                    | Content::ProcPagemap(_)
                    | Content::ProcSetting(_)
            ),
        )
    };
    Ok(match (on_disk, in_proc) {
        (true, _) => Found::Disk(node),
        (false, true) => Found::Keepless(node),
        (false, false) => Found::Memory(node),
    })
}

/// Reads an attribute's name: ERANGE if it is empty or too long, as
/// Linux's `strncpy_from_user` into a buffer of `XATTR_NAME_MAX + 1`.
fn read_name(name: u64) -> Result<Vec<u8>, Errno> {
    match uaccess::read_cbytes(name, XATTR_NAME_MAX) {
        Ok(name) if name.is_empty() => Err(Errno::ERANGE),
        Ok(name) => Ok(name),
        Err(Errno::ENAMETOOLONG) => Err(Errno::ERANGE),
        Err(e) => Err(e),
    }
}

/// The VFS's rules for `access` to attribute `name` of `node` (None: a
/// descriptor with no file, an anonymous inode its caller owns), for the
/// caller (`kcore::xattr::check`); the namespace first (EOPNOTSUPP for
/// one not kept, EINVAL for a bare prefix).
fn allowed(node: Option<&Node>, name: &[u8], access: Access) -> Result<(), Errno> {
    let namespace = kcore::xattr::namespace(name)?;
    let cred = crate::proc::cred();
    let want = match access {
        Access::Read => MAY_READ,
        Access::Write => MAY_WRITE,
    };
    let (kind, owner, permitted) = match node {
        Some(node) => (
            match &node.content {
                Content::File(_) | Content::DiskFile | Content::ProcFile(_) => FileKind::Regular,
                Content::Dir(_) | Content::DiskDir | Content::ProcDir(_) => FileKind::Directory {
                    sticky: node.perm & S_ISVTX != 0,
                },
                _ => FileKind::Other,
            },
            cred.fsuid == node.uid || cred.capable(CAP_FOWNER),
            node.permits(&cred, want),
        ),
        None => (FileKind::Other, true, true),
    };
    kcore::xattr::check(
        namespace,
        kind,
        access,
        cred.capable(CAP_SYS_ADMIN),
        owner,
        permitted,
    )
}

/// The rules for a file that keeps no attributes, then EOPNOTSUPP (what
/// Linux answers when no handler of the file system takes the name).
fn keeps_none(found: &Found, name: &[u8], access: Access) -> Errno {
    let verdict = match found {
        Found::Keepless(node) => allowed(Some(&node.lock()), name, access),
        _ => allowed(None, name, access),
    };
    verdict.err().unwrap_or(Errno::EOPNOTSUPP)
}

/// Copies `bytes` out to a caller's buffer of `size` bytes, as getxattr
/// and listxattr answer: a size of 0 asks only the length; a buffer too
/// small is ERANGE.
fn answer(bytes: &[u8], buf: u64, size: u64) -> SysResult {
    if size == 0 {
        return Ok(bytes.len());
    }
    if (size.min(XATTR_SIZE_MAX as u64) as usize) < bytes.len() {
        return Err(Errno::ERANGE);
    }
    uaccess::copy_to_user(buf, bytes)?;
    Ok(bytes.len())
}

/// setxattr(2), lsetxattr(2), fsetxattr(2).
pub fn set(target: Target, name: u64, value: u64, size: u64, flags: u32) -> SysResult {
    let found = find(target)?;
    if flags & !(XATTR_CREATE | XATTR_REPLACE) != 0 {
        return Err(Errno::EINVAL);
    }
    let name = read_name(name)?;
    if size > XATTR_SIZE_MAX as u64 {
        return Err(Errno::E2BIG);
    }
    // Linux copies the value in before it asks the file system.
    let mut bytes = vec![0u8; size as usize];
    uaccess::copy_from_user(&mut bytes, value)?;
    change(found, &name, |attrs| attrs.set(&name, &bytes, flags))
}

/// A change to a file's attributes (set or remove), after the rules for
/// writing `name`.
fn change(
    found: Found,
    name: &[u8],
    change: impl FnOnce(&mut Attrs) -> Result<(), Errno>,
) -> SysResult {
    match found {
        Found::Memory(node) => {
            let mut node = node.lock();
            allowed(Some(&node), name, Access::Write)?;
            change(&mut node.xattrs)?;
            node.changed();
        }
        Found::Disk(node) => {
            {
                let n = node.lock();
                ext2::check_writable(&n)?;
                allowed(Some(&n), name, Access::Write)?;
            }
            ext2::change_xattrs(&node, change)?;
        }
        _ => return Err(keeps_none(&found, name, Access::Write)),
    }
    Ok(0)
}

/// `f` of the attributes of a file that keeps them: its node's, read
/// under the node's lock, or those its disk holds; None for a file that
/// keeps none.
fn with_attrs<R>(found: &Found, f: impl FnOnce(&Attrs) -> R) -> Result<Option<R>, Errno> {
    match found {
        Found::Memory(node) => Ok(Some(f(&node.lock().xattrs))),
        Found::Disk(node) => Ok(Some(f(&ext2::xattrs(node)?))),
        _ => Ok(None),
    }
}

/// getxattr(2), lgetxattr(2), fgetxattr(2): the value into `value`, at
/// most `size` bytes (0: its length only); ENODATA for a name not set.
pub fn get(target: Target, name: u64, value: u64, size: u64) -> SysResult {
    let found = find(target)?;
    let name = read_name(name)?;
    let (Found::Memory(node) | Found::Disk(node)) = &found else {
        return Err(keeps_none(&found, &name, Access::Read));
    };
    allowed(Some(&node.lock()), &name, Access::Read)?;
    let bytes = with_attrs(&found, |attrs| attrs.get(&name).map(<[u8]>::to_vec))?.flatten();
    answer(&bytes.ok_or(Errno::ENODATA)?, value, size)
}

/// listxattr(2), llistxattr(2), flistxattr(2): the names, each ending in
/// NUL, into `list`, at most `size` bytes (0: the length only); no
/// permission is asked, and `trusted.` names show to root alone.
pub fn list(target: Target, list: u64, size: u64) -> SysResult {
    let privileged = crate::proc::cred().capable(CAP_SYS_ADMIN);
    let Some(names) = with_attrs(&find(target)?, |attrs| attrs.list(privileged))? else {
        return Ok(0);
    };
    answer(&names, list, size)
}

/// removexattr(2), lremovexattr(2), fremovexattr(2): ENODATA for a name
/// not set.
pub fn remove(target: Target, name: u64) -> SysResult {
    let found = find(target)?;
    let name = read_name(name)?;
    change(found, &name, |attrs| attrs.remove(&name))
}
