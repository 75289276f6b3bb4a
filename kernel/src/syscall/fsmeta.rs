//! Calls about files rather than their bytes: hard and symbolic links,
//! the three times, owner, group and mode, and the statistics of a file
//! system.
//!
//! Each turns its raw arguments into a node (by path or descriptor) and
//! times or names, then asks `fs::ramfs` to change the tree. The rules
//! are Linux's: a directory cannot have a second name (EPERM), /proc is
//! another file system (EXDEV), utimensat's `UTIME_NOW` and `UTIME_OMIT`,
//! and every change of times sets the change time too.

use abi::Errno;
use abi::signal::Timeval;
use abi::types::*;
use alloc::string::String;

use super::SysResult;
use super::fs::{fd_file, user_path};
use crate::fs::file::Kind;
use crate::fs::ramfs::{self, Content, NodeRef};
use crate::mm::uaccess;

/// link(2): a second name for a file; a symbolic link is linked itself.
pub fn link(old: u64, new: u64) -> SysResult {
    linkat(AT_FDCWD, old, AT_FDCWD, new, 0)
}

/// linkat(2): with `AT_SYMLINK_FOLLOW` a symbolic link as the old name is
/// followed; with `AT_EMPTY_PATH` and an empty old name, the file open as
/// `olddirfd` gets the new name.
pub fn linkat(olddirfd: i32, old: u64, newdirfd: i32, new: u64, flags: u32) -> SysResult {
    if flags & !(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let node = if flags & AT_EMPTY_PATH != 0 && uaccess::read::<u8>(old)? == 0 {
        node_of_fd(olddirfd)?
    } else {
        let old = user_path(olddirfd, old)?;
        if flags & AT_SYMLINK_FOLLOW != 0 {
            ramfs::lookup(&old)?
        } else {
            ramfs::lookup_nofollow(&old)?
        }
    };
    let new = user_path(newdirfd, new)?;
    ramfs::link(&node, &new).map(|()| 0)
}

/// symlink(2).
pub fn symlink(target: u64, path: u64) -> SysResult {
    symlinkat(target, AT_FDCWD, path)
}

/// symlinkat(2): the target is kept as given, not resolved.
pub fn symlinkat(target: u64, dirfd: i32, path: u64) -> SysResult {
    let target = uaccess::read_cstr(target, kcore::path::PATH_MAX)?;
    let path = user_path(dirfd, path)?;
    ramfs::symlink(&target, &path).map(|()| 0)
}

/// mknod(2).
pub fn mknod(path: u64, mode: u32, dev: u64) -> SysResult {
    mknodat(AT_FDCWD, path, mode, dev)
}

/// mknodat(2): a FIFO, a socket's name, an empty regular file (type 0
/// too) or a device node (root's: CAP_MKNOD) at `path`, with `mode`'s
/// permission bits less the umask. A directory is EPERM (mkdir makes
/// those), any other type EINVAL, both before the path is looked at, as
/// Linux's `may_mknod`. `dev` is the kernel's `dev_t` (major << 8 |
/// minor for the small numbers, as `st_rdev` says them).
pub fn mknodat(dirfd: i32, path: u64, mode: u32, dev: u64) -> SysResult {
    let kind = match mode & S_IFMT {
        0 => S_IFREG,
        kind @ (S_IFREG | S_IFCHR | S_IFBLK | S_IFIFO | S_IFSOCK) => kind,
        S_IFDIR => return Err(Errno::EPERM),
        _ => return Err(Errno::EINVAL),
    };
    let path = user_path(dirfd, path)?;
    let umask = crate::proc::current(|p| p.umask);
    ramfs::mknod(&path, mode & 0o7777 & !umask, kind, dev & 0xffff_ffff).map(|()| 0)
}

/// The node open as `fd`: EBADF for none; a pipe or socket has none here.
fn node_of_fd(fd: i32) -> Result<NodeRef, Errno> {
    match &fd_file(fd)?.kind {
        Kind::Node(node) => Ok(node.clone()),
        Kind::PipeRead(_)
        | Kind::PipeWrite(_)
        | Kind::Socket(_)
        | Kind::Epoll(_)
        | Kind::EventFd(_)
        | Kind::PidFd(_) => Err(Errno::EINVAL),
    }
}

/// What one of the two times becomes.
#[derive(Clone, Copy)]
enum SetTime {
    Now,
    Omit,
    At(Timespec),
}

impl SetTime {
    /// utimensat's form: `UTIME_NOW`, `UTIME_OMIT`, or a time whose
    /// nanoseconds are below a second (EINVAL otherwise).
    fn from_timespec(t: Timespec) -> Result<SetTime, Errno> {
        match t.tv_nsec {
            UTIME_NOW => Ok(SetTime::Now),
            UTIME_OMIT => Ok(SetTime::Omit),
            0..1_000_000_000 => Ok(SetTime::At(t)),
            _ => Err(Errno::EINVAL),
        }
    }

    /// utimes' and futimesat's form: microseconds below a second.
    fn from_timeval(t: Timeval) -> Result<SetTime, Errno> {
        if !(0..1_000_000).contains(&t.tv_usec) {
            return Err(Errno::EINVAL);
        }
        Ok(SetTime::At(Timespec {
            tv_sec: t.tv_sec,
            tv_nsec: t.tv_usec * 1000,
        }))
    }
}

/// chmod(2), fchmod(2), fchmodat(2): who may is `ramfs::chmod`'s rule.
pub fn chmod(path: u64, mode: u32) -> SysResult {
    fchmodat(AT_FDCWD, path, mode, 0)
}

pub fn fchmod(fd: i32, mode: u32) -> SysResult {
    chmod_target(Target::Fd(fd), mode)
}

/// fchmodat(2): Linux's system call has no flags argument (glibc's
/// AT_SYMLINK_NOFOLLOW is done in user space), so the fourth is ignored.
pub fn fchmodat(dirfd: i32, path: u64, mode: u32, _flags: u32) -> SysResult {
    chmod_target(Target::path(dirfd, path, true), mode)
}

fn chmod_target(target: Target, mode: u32) -> SysResult {
    match target.node()? {
        Some(node) => ramfs::chmod(&node, mode).map(|()| 0),
        None => Ok(0), // a pipe or socket: nothing kept to change
    }
}

/// chown(2) and its family; -1 leaves an id as it is. Who may is
/// `ramfs::chown`'s rule.
pub fn chown(path: u64, uid: u32, gid: u32) -> SysResult {
    chown_target(Target::path(AT_FDCWD, path, true), uid, gid)
}

pub fn lchown(path: u64, uid: u32, gid: u32) -> SysResult {
    chown_target(Target::path(AT_FDCWD, path, false), uid, gid)
}

pub fn fchown(fd: i32, uid: u32, gid: u32) -> SysResult {
    chown_target(Target::Fd(fd), uid, gid)
}

/// fchownat(2): `AT_SYMLINK_NOFOLLOW` changes a link itself,
/// `AT_EMPTY_PATH` with an empty path the file open as `dirfd`.
pub fn fchownat(dirfd: i32, path: u64, uid: u32, gid: u32, flags: u32) -> SysResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let target = if flags & AT_EMPTY_PATH != 0 && uaccess::read::<u8>(path)? == 0 {
        Target::Fd(dirfd)
    } else {
        Target::path(dirfd, path, flags & AT_SYMLINK_NOFOLLOW == 0)
    };
    chown_target(target, uid, gid)
}

fn chown_target(target: Target, uid: u32, gid: u32) -> SysResult {
    match target.node()? {
        Some(node) => ramfs::chown(&node, uid, gid).map(|()| 0),
        None => Ok(0),
    }
}

/// Where utimensat and friends find the file: a path, or with no path
/// a descriptor.
enum Target {
    Path { dirfd: i32, path: u64, follow: bool },
    Fd(i32),
}

impl Target {
    /// Linux: a null path with a real `dirfd` is the file open as `dirfd`.
    fn new(dirfd: i32, path: u64, follow: bool) -> Result<Target, Errno> {
        if path == 0 && dirfd != AT_FDCWD {
            return Ok(Target::Fd(dirfd));
        }
        Ok(Target::Path {
            dirfd,
            path,
            follow,
        })
    }

    /// A path, even a null one (EFAULT when read), as chmod and chown take.
    fn path(dirfd: i32, path: u64, follow: bool) -> Target {
        Target::Path {
            dirfd,
            path,
            follow,
        }
    }

    fn node(&self) -> Result<Option<NodeRef>, Errno> {
        match *self {
            Target::Fd(fd) => match &fd_file(fd)?.kind {
                Kind::Node(node) => Ok(Some(node.clone())),
                // A pipe or socket keeps no times here: nothing to set.
                Kind::PipeRead(_)
                | Kind::PipeWrite(_)
                | Kind::Socket(_)
                | Kind::Epoll(_)
                | Kind::EventFd(_)
                | Kind::PidFd(_) => Ok(None),
            },
            Target::Path {
                dirfd,
                path,
                follow,
            } => {
                let path = user_path(dirfd, path)?;
                let node = if follow {
                    ramfs::lookup(&path)?
                } else {
                    ramfs::lookup_nofollow(&path)?
                };
                Ok(Some(node))
            }
        }
    }
}

/// Sets the access and modification times of `target`; any change sets
/// the change time to now.
fn set_times(target: Target, access: SetTime, modify: SetTime) -> SysResult {
    let Some(node) = target.node()? else {
        return Ok(0);
    };
    if matches!((access, modify), (SetTime::Omit, SetTime::Omit)) {
        return Ok(0);
    }
    let now = ramfs::now();
    {
        let mut node = node.lock();
        crate::fs::ext2::check_writable(&node)?;
        let times = &mut node.times;
        for (set, time) in [(access, &mut times.atime), (modify, &mut times.mtime)] {
            match set {
                SetTime::Now => *time = now,
                SetTime::At(t) => *time = t,
                SetTime::Omit => {}
            }
        }
        node.times.ctime = now;
    }
    ramfs::store_if_on_disk(&node)?;
    Ok(0)
}

/// utimensat(2); a null `times` is "both now".
pub fn utimensat(dirfd: i32, path: u64, times: u64, flags: u32) -> SysResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let (access, modify) = if times == 0 {
        (SetTime::Now, SetTime::Now)
    } else {
        let [a, m]: [Timespec; 2] = uaccess::read(times)?;
        (SetTime::from_timespec(a)?, SetTime::from_timespec(m)?)
    };
    let target = if path != 0 && flags & AT_EMPTY_PATH != 0 && uaccess::read::<u8>(path)? == 0 {
        Target::Fd(dirfd)
    } else {
        if path == 0 && dirfd != AT_FDCWD && flags & AT_SYMLINK_NOFOLLOW != 0 {
            return Err(Errno::EINVAL); // as Linux: no path, no link to stop at
        }
        Target::new(dirfd, path, flags & AT_SYMLINK_NOFOLLOW == 0)?
    };
    set_times(target, access, modify)
}

/// futimesat(2): times in microseconds, a null `times` is now.
pub fn futimesat(dirfd: i32, path: u64, times: u64) -> SysResult {
    let (access, modify) = if times == 0 {
        (SetTime::Now, SetTime::Now)
    } else {
        let [a, m]: [Timeval; 2] = uaccess::read(times)?;
        (SetTime::from_timeval(a)?, SetTime::from_timeval(m)?)
    };
    set_times(Target::new(dirfd, path, true)?, access, modify)
}

/// utimes(2).
pub fn utimes(path: u64, times: u64) -> SysResult {
    futimesat(AT_FDCWD, path, times)
}

/// utime(2): whole seconds, a null `times` is now.
pub fn utime(path: u64, times: u64) -> SysResult {
    let (access, modify) = if times == 0 {
        (SetTime::Now, SetTime::Now)
    } else {
        let t: Utimbuf = uaccess::read(times)?;
        let at = |sec| {
            SetTime::At(Timespec {
                tv_sec: sec,
                tv_nsec: 0,
            })
        };
        (at(t.actime), at(t.modtime))
    };
    set_times(Target::new(AT_FDCWD, path, true)?, access, modify)
}

/// statfs(2) for the file system holding `path`.
pub fn statfs(path: u64, buf: u64) -> SysResult {
    let path: String = user_path(AT_FDCWD, path)?;
    let node = ramfs::lookup(&path)?;
    let st = statfs_of(Some(&node))?;
    uaccess::write(buf, &st)?;
    Ok(0)
}

/// fstatfs(2) for the file system of the file open as `fd`.
pub fn fstatfs(fd: i32, buf: u64) -> SysResult {
    let st = match &super::fs::fd_path(fd)?.kind {
        Kind::Node(node) => statfs_of(Some(node))?,
        Kind::PipeRead(_)
        | Kind::PipeWrite(_)
        | Kind::Socket(_)
        | Kind::Epoll(_)
        | Kind::EventFd(_)
        | Kind::PidFd(_) => statfs_of(None)?,
    };
    uaccess::write(buf, &st)?;
    Ok(0)
}

/// The figures of the file system `node` is on (None: a pipe's). The
/// ramfs lives in memory, so its blocks are the machine's page frames and
/// its free blocks the free ones, which is what `df` should see; it counts
/// no inodes (`f_files` 0, as Linux's ramfs). /proc has no blocks. A
/// mounted disk answers with its superblock's counts (fs/ext2.rs).
fn statfs_of(node: Option<&NodeRef>) -> Result<Statfs, Errno> {
    if let Some((vol, _)) = node.and_then(crate::fs::ext2::disk_of) {
        return vol.statfs();
    }
    let on_proc = node.is_some_and(|n| {
        let n = n.lock();
        n.on_proc() || matches!(n.content, Content::ProcDir(_))
    });
    let base = Statfs {
        f_bsize: crate::mm::PAGE_SIZE as i64,
        f_frsize: crate::mm::PAGE_SIZE as i64,
        f_namelen: NAME_MAX as i64,
        f_flags: ST_VALID | ST_RELATIME,
        ..Statfs::default()
    };
    Ok(match (node, on_proc) {
        (None, _) => Statfs {
            f_type: PIPEFS_MAGIC,
            ..base
        },
        (Some(_), true) => Statfs {
            f_type: PROC_SUPER_MAGIC,
            f_flags: base.f_flags | ST_NOSUID | ST_NODEV | ST_NOEXEC,
            ..base
        },
        (Some(_), false) => {
            let free = crate::mm::frames::free_count() as u64;
            let total = crate::mm::frames::total_count() as u64;
            // Inodes as tmpfs counts them: room for one per two pages of
            // memory (its default nr_inodes), less those that exist.
            let files = total / 2;
            Statfs {
                f_type: RAMFS_MAGIC,
                f_blocks: total,
                f_bfree: free,
                f_bavail: free,
                f_files: files,
                f_ffree: files.saturating_sub(crate::fs::ramfs::live_nodes()),
                f_fsid: [1, 0],
                ..base
            }
        }
    })
}
