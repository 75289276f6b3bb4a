//! mount(2), umount2(2), sync(2) and syncfs(2): the mount table and the
//! disks' durability (fs/mount.rs, fs/ext2.rs).

use abi::types::AT_FDCWD;
use alloc::string::String;

use super::SysResult;
use super::fs::{fd_path, user_path};
use crate::fs::file::Kind;
use crate::fs::mount::{self, Request};
use crate::mm::uaccess;

/// The longest file system type or data string read (Linux reads a page).
const STRING_MAX: usize = 4095;

/// mount(source, target, type, flags, data).
pub fn mount(source: u64, target: u64, kind: u64, flags: u64, data: u64) -> SysResult {
    let target = user_path(AT_FDCWD, target)?;
    let kind = if kind == 0 {
        String::new()
    } else {
        uaccess::read_cstr(kind, STRING_MAX)?
    };
    // A bind's or a move's source is a path; a disk's is a device's path;
    // tmpfs and proc take any name (often none).
    let source = match source {
        0 => String::from("none"),
        p if flags & (abi::types::MS_BIND | abi::types::MS_MOVE) != 0
            || kind.starts_with("ext") =>
        {
            user_path(AT_FDCWD, p)?
        }
        p => uaccess::read_cstr(p, STRING_MAX)?,
    };
    let data = match data {
        0 => None,
        p => Some(uaccess::read_cstr(p, STRING_MAX)?),
    };
    mount::mount(Request {
        source: &source,
        target: &target,
        kind: &kind,
        flags,
        data: data.as_deref(),
    })?;
    Ok(0)
}

/// umount2(target, flags).
pub fn umount2(target: u64, flags: u32) -> SysResult {
    let target = user_path(AT_FDCWD, target)?;
    mount::umount(&target, flags)?;
    Ok(0)
}

/// sync(): every disk committed and flushed. Linux's sync cannot fail;
/// a disk that failed logs why, and the next fsync there reports it.
pub fn sync() -> SysResult {
    if let Err(e) = mount::sync_all() {
        crate::warn!("sync: a disk failed: {e:?}");
    }
    Ok(0)
}

/// syncfs(fd): the disk `fd`'s file is on committed and flushed.
pub fn syncfs(fd: i32) -> SysResult {
    if let Kind::Node(node) = &fd_path(fd)?.kind
        && let Some((vol, _)) = crate::fs::ext2::disk_of(node)
    {
        vol.sync()?;
    }
    Ok(0)
}
