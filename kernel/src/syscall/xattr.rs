//! Extended attributes (setxattr, getxattr, listxattr, removexattr, each
//! by path, by path without following a last symbolic link, and by
//! descriptor): named values beside a file's bytes, `user.mime_type` and
//! the like.
//!
//! No file system of this kernel stores them: the ramfs has no place for
//! them and the ext2 driver reads no attribute blocks. So every call
//! answers as Linux answers on a file system without them: the list is
//! empty, and getting, setting or removing one is EOPNOTSUPP. What comes
//! before that answer is Linux's too, in its order (`fs/xattr.c`): the
//! file is looked up first (ENOENT, ENOTDIR, EBADF), then the flags
//! (EINVAL), the name (ERANGE when empty or past `XATTR_NAME_MAX`) and the
//! value (E2BIG past `XATTR_SIZE_MAX`, EFAULT if it cannot be read). That
//! is what programs test for: Python's `test_os` and `shutil.copystat`
//! skip or carry on at EOPNOTSUPP, and fail at ENOSYS.

use abi::Errno;
use abi::types::{AT_FDCWD, XATTR_CREATE, XATTR_NAME_MAX, XATTR_REPLACE, XATTR_SIZE_MAX};
use alloc::vec;

use super::SysResult;
use super::fs::{fd_file, user_path};
use crate::fs::ramfs;
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

/// Looks the file up, for its errors only: there is nothing to read from
/// it once found.
fn find(target: Target) -> Result<(), Errno> {
    match target {
        Target::Path(path) => ramfs::lookup(&user_path(AT_FDCWD, path)?).map(drop),
        Target::Link(path) => ramfs::lookup_nofollow(&user_path(AT_FDCWD, path)?).map(drop),
        Target::Fd(fd) => fd_file(fd).map(drop),
    }
}

/// Reads an attribute's name: ERANGE if it is empty or too long, as
/// Linux's `strncpy_from_user` into a buffer of `XATTR_NAME_MAX + 1`.
fn read_name(name: u64) -> Result<(), Errno> {
    match uaccess::read_cbytes(name, XATTR_NAME_MAX) {
        Ok(name) if name.is_empty() => Err(Errno::ERANGE),
        Ok(_) => Ok(()),
        Err(Errno::ENAMETOOLONG) => Err(Errno::ERANGE),
        Err(e) => Err(e),
    }
}

/// setxattr(2), lsetxattr(2), fsetxattr(2).
pub fn set(target: Target, name: u64, value: u64, size: u64, flags: u32) -> SysResult {
    find(target)?;
    if flags & !(XATTR_CREATE | XATTR_REPLACE) != 0 {
        return Err(Errno::EINVAL);
    }
    read_name(name)?;
    if size > XATTR_SIZE_MAX as u64 {
        return Err(Errno::E2BIG);
    }
    // Linux copies the value in before it asks the file system.
    let mut bytes = vec![0u8; size as usize];
    uaccess::copy_from_user(&mut bytes, value)?;
    Err(Errno::EOPNOTSUPP)
}

/// getxattr(2), lgetxattr(2), fgetxattr(2): with no attributes stored,
/// no name is found.
pub fn get(target: Target, name: u64) -> SysResult {
    find(target)?;
    read_name(name)?;
    Err(Errno::EOPNOTSUPP)
}

/// listxattr(2), llistxattr(2), flistxattr(2): the names, each ending in
/// NUL; none here, so the length is 0 whatever the buffer.
pub fn list(target: Target) -> SysResult {
    find(target)?;
    Ok(0)
}

/// removexattr(2), lremovexattr(2), fremovexattr(2).
pub fn remove(target: Target, name: u64) -> SysResult {
    find(target)?;
    read_name(name)?;
    Err(Errno::EOPNOTSUPP)
}
