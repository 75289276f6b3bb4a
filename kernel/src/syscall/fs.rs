//! File system calls: argument parsing over `fs/`.
//!
//! Data moves through kernel buffers of at most `CHUNK` bytes. A buffer to
//! read into is checked in full before anything is consumed, so a bad
//! pointer on `read` is `EFAULT` without losing pipe or console data. A
//! buffer to write from needs no check first: its bytes are copied before
//! they go anywhere, and a fault part way is a short write of the bytes
//! before it (EFAULT if there are none), as on Linux.

use abi::Errno;
use abi::types::*;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use kcore::cred::{MAY_EXEC, MAY_READ, MAY_WRITE};
use kcore::dirread::{DirRead, Next};

use super::SysResult;
use crate::fs::file::{self, Kind, OpenFile};
use crate::fs::pipe::Pipe;
use crate::fs::ramfs::{self, Content};
use crate::mm::uaccess;
use crate::proc::current;

const CHUNK: usize = 64 * 1024;

/// The most one read, write or sendfile moves (Linux's MAX_RW_COUNT: the
/// largest int, rounded down to a page).
const MAX_RW_COUNT: u64 = 0x7fff_f000;

/// The file open as `fd`, for a call that does something with it: EBADF
/// for none, and for an O_PATH descriptor, which only names a file (as
/// Linux's `fdget` refuses one).
pub(super) fn fd_file(fd: i32) -> Result<Arc<OpenFile>, Errno> {
    let file = fd_path(fd)?;
    if file.is_path_only() {
        return Err(Errno::EBADF);
    }
    Ok(file)
}

/// The file open as `fd`, O_PATH descriptors too: for the calls that only
/// need to know which file (fstat, fstatfs, fchdir, a directory for the
/// *at calls, dup and fcntl's descriptor flags), Linux's `fdget_raw`.
pub(super) fn fd_path(fd: i32) -> Result<Arc<OpenFile>, Errno> {
    current(|p| p.files.get(fd))
}

/// Reads a path argument and resolves it: an absolute path as it is, a
/// relative one against the current directory (`AT_FDCWD`) or against the
/// directory open as `dirfd`, which knows the path it was opened by.
pub(super) fn user_path(dirfd: i32, ptr: u64) -> Result<String, Errno> {
    resolve_at(dirfd, &uaccess::read_cstr(ptr, kcore::path::PATH_MAX)?)
}

/// `path` resolved as `user_path` resolves the one it reads.
pub(super) fn resolve_at(dirfd: i32, path: &str) -> Result<String, Errno> {
    if dirfd != AT_FDCWD && !path.starts_with('/') {
        let dir = fd_path(dirfd)?;
        return kcore::path::resolve(dir_path(&dir)?, path);
    }
    kcore::path::resolve(&current(|p| p.cwd.clone()), path)
}

/// The path the directory open as `dir` was opened by; ENOTDIR if it is
/// not a directory.
fn dir_path(dir: &OpenFile) -> Result<&str, Errno> {
    let is_dir = matches!(&dir.kind, Kind::Node(node) if node.lock().is_dir());
    dir.path.as_deref().filter(|_| is_dir).ok_or(Errno::ENOTDIR)
}

/// Buffers up to this size live on the kernel stack: most reads and writes
/// are small (a line, a byte through a pipe), and the heap's lock costs a
/// small call a measurable share under TCG.
const SMALL: usize = 256;

/// Runs `f` with a zeroed kernel buffer of `len` bytes: on the stack when
/// small, else on the heap.
fn with_buffer<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    if len <= SMALL {
        f(&mut [0u8; SMALL][..len])
    } else {
        f(&mut vec![0u8; len])
    }
}

pub fn read(fd: i32, buf: u64, count: u64) -> SysResult {
    let file = fd_file(fd)?;
    let count = (count as usize).min(CHUNK);
    uaccess::check_range(buf, count, true)?;
    with_buffer(count, |kbuf| {
        let n = file.read(kbuf)?;
        uaccess::copy_to_user(buf, &kbuf[..n])?;
        Ok(n)
    })
}

pub fn write(fd: i32, buf: u64, count: u64) -> SysResult {
    let file = fd_file(fd)?;
    let mut done = 0usize;
    while done < count as usize {
        let n = (count as usize - done).min(CHUNK);
        let before = done;
        // A buffer that goes bad part way: what came before the fault is
        // written, and the call returns that count (EFAULT if it is none).
        let (wrote, faulted) = with_buffer(n, |kbuf| {
            let (copied, faulted) =
                match uaccess::copy_from_user_until_fault(kbuf, buf + done as u64) {
                    Ok(()) => (n, None),
                    Err((e, copied)) => (copied, Some(e)),
                };
            let wrote = match (copied, faulted) {
                (0, Some(e)) => Err(e),
                _ => file.write(&kbuf[..copied]),
            };
            (wrote, faulted.is_some())
        });
        match wrote {
            Ok(written) => done += written,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
        // A short write (the file size limit, a non-blocking pipe that
        // filled) ends the call with what was written, as on Linux: the
        // next chunk would only fail, or signal, for nothing.
        if faulted || done - before < n {
            break;
        }
    }
    Ok(done)
}

pub fn pread64(fd: i32, buf: u64, count: u64, at: i64) -> SysResult {
    let file = fd_file(fd)?;
    let at = u64::try_from(at).map_err(|_| Errno::EINVAL)?;
    let count = (count as usize).min(CHUNK);
    uaccess::check_range(buf, count, true)?;
    with_buffer(count, |kbuf| {
        let n = file.pread(kbuf, at)?;
        uaccess::copy_to_user(buf, &kbuf[..n])?;
        Ok(n)
    })
}

pub fn pwrite64(fd: i32, buf: u64, count: u64, at: i64) -> SysResult {
    let file = fd_file(fd)?;
    let at = u64::try_from(at).map_err(|_| Errno::EINVAL)?;
    let count = (count as usize).min(CHUNK);
    with_buffer(count, |kbuf| {
        uaccess::copy_from_user(kbuf, buf)?;
        file.pwrite(kbuf, at)
    })
}

/// sendfile(2): up to `count` bytes from `in_fd`, a file, to `out_fd`,
/// anything open for writing, copied by the kernel with no user buffer.
/// The bytes are read at `*offset` when `offset` is given (which then
/// moves past them, the file's own offset untouched), else at the file's
/// offset, which moves. A short write ends the call, and the input is
/// left just past what was written. Linux's errors: EBADF for a
/// descriptor not open for its side, EINVAL for an input that is not a
/// file, an output opened O_APPEND or a negative offset.
pub fn sendfile(out_fd: i32, in_fd: i32, offset: u64, count: u64) -> SysResult {
    let input = fd_file(in_fd)?;
    let output = fd_file(out_fd)?;
    if !input.readable() || !output.writable() {
        return Err(Errno::EBADF);
    }
    let is_file = matches!(&input.kind, Kind::Node(node)
        if matches!(node.lock().content, Content::File(_) | Content::DiskFile | Content::Device(_) | Content::ProcFile(_)));
    if !is_file || *output.flags.lock() & O_APPEND != 0 {
        return Err(Errno::EINVAL);
    }
    let mut at = match offset {
        0 => None,
        ptr => Some(u64::try_from(uaccess::read::<i64>(ptr)?).map_err(|_| Errno::EINVAL)?),
    };
    let count = count.min(MAX_RW_COUNT) as usize;
    let mut done = 0usize;
    let mut failed = None;
    while done < count {
        let n = (count - done).min(CHUNK);
        let sent = with_buffer(n, |kbuf| {
            let got = match at {
                Some(at) => input.pread(kbuf, at),
                None => input.read(kbuf),
            }?;
            let wrote = match got {
                0 => Ok(0),
                got => output.write(&kbuf[..got]),
            };
            Ok((got, wrote))
        });
        let (got, wrote) = match sent {
            Ok((got, Ok(wrote))) => (got, wrote),
            Ok((got, Err(e))) => {
                failed = Some(e);
                (got, 0)
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        };
        done += wrote;
        match &mut at {
            Some(at) => *at += wrote as u64,
            // What was read but not written goes back.
            None => input.set_offset(input.offset().saturating_sub((got - wrote) as u64)),
        }
        if failed.is_some() || got == 0 || wrote < got {
            break;
        }
    }
    if let Some(at) = at {
        uaccess::write(offset, &(at as i64))?;
    }
    match failed {
        Some(e) if done == 0 => Err(e),
        _ => Ok(done),
    }
}

/// fsync, fdatasync: the ramfs is memory, so there is nothing to flush
/// for its files; the disk's write cache is flushed (the device's FLUSH
/// command) for /dev/vda, so what was written survives a power cut; a
/// file on a mounted disk commits the disk's journal (fs/ext2.rs).
pub fn fsync(fd: i32) -> SysResult {
    let file = fd_file(fd)?;
    if let Some(disk) = file.block_device() {
        crate::virtio_blk::flush(disk)?;
    }
    if let Kind::Node(node) = &file.kind
        && crate::fs::ext2::disk_of(node).is_some()
    {
        crate::fs::ext2::fsync(node)?;
    }
    Ok(0)
}

/// truncate(2) by path.
pub fn truncate(path: u64, len: i64) -> SysResult {
    let len = u64::try_from(len).map_err(|_| Errno::EINVAL)?;
    let node = ramfs::lookup(&user_path(AT_FDCWD, path)?)?;
    {
        // Linux's order: a directory EISDIR, anything else not a file
        // EINVAL (truncate_node), then the write permission.
        let node = node.lock();
        if node.is_dir() {
            return Err(Errno::EISDIR);
        }
        if node.is_regular() {
            if !node.permits(&crate::proc::cred(), MAY_WRITE) {
                return Err(Errno::EACCES);
            }
            crate::fs::ext2::check_writable(&node)?;
            if node.is_running() {
                return Err(Errno::ETXTBSY);
            }
        }
    }
    // A truncate breaks leases as an open for writing does.
    if node.lock().is_regular() {
        let ino = node.lock().ino;
        crate::fs::lease::break_for(ino, true, false)?;
    }
    file::truncate_node(&node, len).map(|()| 0)
}

/// An array of `count` iovecs at `iov`, checked before any byte moves as
/// Linux's `import_iovec` checks it: more than IOV_MAX (1024) EINVAL; each
/// in order, a length that is negative as an ssize_t EINVAL, a buffer
/// that reaches past user space EFAULT; the lengths cut so that the
/// whole is at most MAX_RW_COUNT. (A buffer inside user space that is not
/// mapped faults when it is reached, after the ones before it moved.)
pub(super) fn iovecs(iov: u64, count: u64) -> Result<Vec<(u64, u64)>, Errno> {
    if count > 1024 {
        return Err(Errno::EINVAL);
    }
    let mut room = MAX_RW_COUNT;
    (0..count)
        .map(|i| {
            let base = uaccess::read::<u64>(iov + 16 * i)?;
            let len = uaccess::read::<u64>(iov + 16 * i + 8)?;
            if (len as i64) < 0 {
                return Err(Errno::EINVAL);
            }
            if base
                .checked_add(len)
                .is_none_or(|end| end > crate::mm::USER_TOP)
            {
                return Err(Errno::EFAULT);
            }
            let len = len.min(room);
            room -= len;
            Ok((base, len))
        })
        .collect()
}

pub fn readv(fd: i32, iov: u64, count: u64) -> SysResult {
    vectored(iov, count, |base, len| read(fd, base, len))
}

pub fn writev(fd: i32, iov: u64, count: u64) -> SysResult {
    vectored(iov, count, |base, len| write(fd, base, len))
}

/// preadv(2): readv at file offset `at`, which the file's own offset
/// does not follow (pread64 for each buffer, in turn).
pub fn preadv(fd: i32, iov: u64, count: u64, at: i64) -> SysResult {
    positioned(iov, count, at, |base, len, at| pread64(fd, base, len, at))
}

/// pwritev(2): writev at file offset `at`.
pub fn pwritev(fd: i32, iov: u64, count: u64, at: i64) -> SysResult {
    positioned(iov, count, at, |base, len, at| pwrite64(fd, base, len, at))
}

/// preadv2(2): preadv, or readv at the file's offset when `at` is -1;
/// `flags` may ask RWF_HIPRI, RWF_DSYNC and RWF_SYNC, which a file in
/// memory meets as it is; any other flag is EOPNOTSUPP.
pub fn preadv2(fd: i32, iov: u64, count: u64, at: i64, flags: u32) -> SysResult {
    rwf_flags(flags)?;
    if at == -1 {
        readv(fd, iov, count)
    } else {
        preadv(fd, iov, count, at)
    }
}

/// pwritev2(2): pwritev, or writev at the file's offset when `at` is -1.
pub fn pwritev2(fd: i32, iov: u64, count: u64, at: i64, flags: u32) -> SysResult {
    rwf_flags(flags)?;
    if at == -1 {
        writev(fd, iov, count)
    } else {
        pwritev(fd, iov, count, at)
    }
}

/// The RWF_* flags of preadv2 and pwritev2 this kernel takes.
fn rwf_flags(flags: u32) -> Result<(), Errno> {
    if flags & !(RWF_HIPRI | RWF_DSYNC | RWF_SYNC) != 0 {
        return Err(Errno::EOPNOTSUPP);
    }
    Ok(())
}

/// preadv and pwritev: `vectored` from offset `at` on (EINVAL if it is
/// negative), each buffer at the offset the ones before it reached.
fn positioned(iov: u64, count: u64, at: i64, io: impl Fn(u64, u64, i64) -> SysResult) -> SysResult {
    if at < 0 {
        return Err(Errno::EINVAL);
    }
    let done = core::cell::Cell::new(0i64);
    vectored(iov, count, |base, len| {
        let n = io(base, len, at.saturating_add(done.get()))?;
        done.set(done.get() + n as i64);
        Ok(n)
    })
}

/// readv and writev: the buffers of the iovec array, checked first
/// (`iovecs`), go through `io` in order; a short transfer ends the call,
/// and an error after some bytes moved answers those bytes.
fn vectored(iov: u64, count: u64, io: impl Fn(u64, u64) -> SysResult) -> SysResult {
    let mut total = 0;
    for (base, len) in iovecs(iov, count)? {
        let n = match io(base, len) {
            Ok(n) => n,
            Err(_) if total > 0 => break,
            Err(e) => return Err(e),
        };
        total += n;
        if n < len as usize {
            break;
        }
    }
    Ok(total)
}

/// openat(2). With O_PATH the descriptor only names the file: every flag
/// but O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC is dropped (as Linux's
/// `build_open_flags` drops them), no permission on the file itself is
/// needed, nothing is opened (a FIFO does not wait, a socket's name or a
/// device no driver has is fine), and with O_NOFOLLOW a symbolic link is
/// named itself.
pub fn openat(dirfd: i32, path: u64, flags: u32, mode: u32) -> SysResult {
    let given = uaccess::read_cstr(path, kcore::path::PATH_MAX)?;
    let path = resolve_at(dirfd, &given)?;
    let path_only = flags & O_PATH != 0;
    let flags = if path_only {
        flags & (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
    } else {
        flags
    };
    // A path ending in '/' names a directory, which open never makes: with
    // O_CREAT it is EISDIR once the directory it would go in is found,
    // whatever the name is, as Linux's `open_last_lookups` decides before
    // it looks the name up (resolving drops the slash, so it is seen here).
    if flags & O_CREAT != 0 && given.ends_with('/') {
        let parent = kcore::path::split_last(&path).map_or("/", |(dir, _)| dir);
        if !ramfs::lookup(parent)?.lock().is_dir() {
            return Err(Errno::ENOTDIR);
        }
        return Err(Errno::EISDIR);
    }
    // Without O_CREAT the slash asks for a directory, as O_DIRECTORY does
    // (ENOTDIR for anything else; the flag is not kept in the file).
    let flags = if given.ends_with('/') {
        flags | O_DIRECTORY
    } else {
        flags
    };
    let install = |node: ramfs::NodeRef| {
        let file = OpenFile::new(Kind::Node(node), flags, Some(&path));
        current(|p| p.files.install(&file, flags & O_CLOEXEC != 0, p.fd_limit()))
            .map(|fd| fd as usize)
    };
    if flags & O_NOFOLLOW != 0
        && let Ok(node) = ramfs::lookup_nofollow(&path)
        && matches!(node.lock().content, Content::Symlink(_))
    {
        if path_only && flags & O_DIRECTORY == 0 {
            return install(node);
        }
        return Err(Errno::ELOOP);
    }
    let (node, made) = if flags & O_CREAT != 0 {
        let umask = current(|p| p.umask);
        let (node, made) = ramfs::create(&path, mode & 0o7777 & !umask, flags & O_EXCL != 0)?;
        // O_CREAT found a directory: EISDIR even to read it, as Linux's
        // `do_open`, since open with O_CREAT is for files.
        if node.lock().is_dir() {
            return Err(Errno::EISDIR);
        }
        (node, made)
    } else {
        (ramfs::lookup(&path)?, false)
    };
    if path_only {
        if flags & O_DIRECTORY != 0 && !node.lock().is_dir() {
            return Err(Errno::ENOTDIR);
        }
        return install(node);
    }
    let (is_dir, is_file, permitted, busy, fifo, owned) = {
        let node = node.lock();
        // A socket's name is for connect(2), not open, and a device node
        // no driver serves opens nothing (Linux's ENXIO for both).
        if matches!(node.content, Content::Socket(_) | Content::Special { .. }) {
            return Err(Errno::ENXIO);
        }
        // The file's own bits, unless this call made it (Linux lets
        // open(O_CREAT | O_RDWR, 0444) have the file it just made).
        let mut want = match flags & O_ACCMODE {
            O_RDONLY => MAY_READ,
            O_WRONLY => MAY_WRITE,
            _ => MAY_READ | MAY_WRITE,
        };
        if flags & O_TRUNC != 0 {
            want |= MAY_WRITE;
        }
        let cred = crate::proc::cred();
        let permitted = made || node.permits(&cred, want);
        // O_NOATIME is for the file's owner (or CAP_FOWNER).
        let owned = cred.owns(node.uid);
        // A program some process runs is not to be written (ETXTBSY):
        // its text is the file's pages (fs/filedata.rs).
        let busy = want & MAY_WRITE != 0 && node.is_running();
        // Nothing on a read-only disk opens for writing (Linux checks it
        // after the permission bits).
        if permitted && want & MAY_WRITE != 0 && !node.is_dir() && node.is_regular() {
            crate::fs::ext2::check_writable(&node)?;
        }
        let fifo = match &node.content {
            Content::Fifo(pipe) => Some(pipe.clone()),
            _ => None,
        };
        (
            node.is_dir(),
            node.is_regular(),
            permitted,
            busy,
            fifo,
            owned,
        )
    };
    if flags & O_DIRECTORY != 0 && !is_dir {
        return Err(Errno::ENOTDIR);
    }
    if is_dir && flags & O_ACCMODE != O_RDONLY {
        return Err(Errno::EISDIR);
    }
    if !permitted {
        return Err(Errno::EACCES);
    }
    // Linux's may_open: the access first, then O_NOATIME's owner.
    if flags & O_NOATIME != 0 && !owned {
        return Err(Errno::EPERM);
    }
    if busy {
        return Err(Errno::ETXTBSY);
    }
    // Leases other processes hold are broken first (fs/lease.rs).
    if is_file {
        let ino = node.lock().ino;
        let for_writing = flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0;
        crate::fs::lease::break_for(ino, for_writing, flags & O_NONBLOCK != 0)?;
    }
    // O_TRUNC empties regular files only; on a device it does nothing
    // (`> /dev/null`, `> /dev/tty`), as on Linux.
    if flags & O_TRUNC != 0 && flags & O_ACCMODE != O_RDONLY && is_file {
        file::truncate_node(&node, 0)?;
    }
    // A FIFO's end is open (and its peer met) before the descriptor is
    // made, so a wait a signal ends leaves nothing behind.
    if let Some(pipe) = fifo {
        let mode = flags & O_ACCMODE;
        pipe.open_fifo(mode != O_WRONLY, mode != O_RDONLY, flags & O_NONBLOCK != 0)?;
    }
    let device = node.lock().device();
    install(open_pty_end(node, device, flags)?)
}

/// What an open of a pseudo-terminal's node opens (fs/pty.rs): `/dev/ptmx`
/// makes a new pair and opens its master; a slave counts one more open
/// (EIO while locked), and becomes the controlling terminal of a session
/// leader that has none, unless O_NOCTTY; a master's node opened again
/// (through /proc/PID/fd) counts one more open; `/dev/tty` opens the
/// slave that is the session's controlling terminal, if one is. Any other
/// node is opened as it is.
fn open_pty_end(
    node: ramfs::NodeRef,
    device: Option<crate::fs::dev::Device>,
    flags: u32,
) -> Result<ramfs::NodeRef, Errno> {
    use crate::fs::dev::{Device, pair};
    use crate::fs::pty;
    match device {
        Some(Device::Ptmx) => {
            let cred = crate::proc::cred();
            // devpts gives the slave to the opener, group tty (5).
            let (_, master) = pty::open_master(cred.fsuid, pty::TTY_GROUP)?;
            Ok(master)
        }
        Some(Device::PtySlave(n)) => {
            pty::open_slave_end(&pair(n)?, flags & O_NOCTTY != 0)?;
            Ok(node)
        }
        Some(Device::PtyMaster(n)) => {
            pair(n)?.reopen_master()?;
            Ok(node)
        }
        // /dev/tty is the caller's controlling terminal: its session's
        // pseudo-terminal if it has one, else the console.
        Some(Device::Tty) => {
            let sid = current(|p| p.sid);
            let Some(pty) = pty::of_session(sid) else {
                return Ok(node);
            };
            let slave = ramfs::lookup(&pty::slave_path(pty.index))?;
            pty.open_slave()?;
            Ok(slave)
        }
        _ => Ok(node),
    }
}

pub fn close(fd: i32) -> SysResult {
    let (pid, file) = current(|p| p.files.remove(fd).map(|f| (p.pid, f)))?;
    // Outside the table lock: closing a pipe end wakes its peer.
    file::close_by(pid, file);
    Ok(0)
}

/// close_range(2): closes the descriptors from `first` to `last` that are
/// open, or with CLOSE_RANGE_CLOEXEC marks them close-on-exec instead;
/// CLOSE_RANGE_UNSHARE first gives the caller a table of its own if it
/// shares one (clone's CLONE_FILES). EINVAL for `first` past `last` or an
/// unknown flag.
pub fn close_range(first: u32, last: u32, flags: u32) -> SysResult {
    if first > last || flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let (pid, closed) = current(|p| {
        if flags & CLOSE_RANGE_UNSHARE != 0 {
            p.files.unshare();
        }
        let closed = p
            .files
            .close_range(first, last, flags & CLOSE_RANGE_CLOEXEC != 0);
        (p.pid, closed)
    });
    // Outside the table lock, as close(2) does.
    for file in closed {
        file::close_by(pid, file);
    }
    Ok(0)
}

pub fn lseek(fd: i32, offset: i64, whence: u32) -> SysResult {
    fd_file(fd)?.seek(offset, whence).map(|o| o as usize)
}

pub fn stat(dirfd: i32, path: u64, buf: u64, flags: u32) -> SysResult {
    if flags & abi::types::AT_EMPTY_PATH != 0 && uaccess::read::<u8>(path)? == 0 {
        return fstat(dirfd, buf);
    }
    let path = user_path(dirfd, path)?;
    let node = if flags & AT_SYMLINK_NOFOLLOW != 0 {
        ramfs::lookup_nofollow(&path)?
    } else {
        ramfs::lookup(&path)?
    };
    uaccess::write(buf, &file::stat_node(&node))?;
    Ok(0)
}

/// statx(2): what stat gives, in `struct statx`, for `path` relative to
/// `dirfd` (or the descriptor itself, with `AT_EMPTY_PATH` and an empty
/// path). Every basic field is given whatever `mask` asks (Linux gives
/// more than asked too); `STATX_RESERVED` in the mask, an unknown flag,
/// or both sync flags at once are EINVAL, as on Linux.
pub fn statx(dirfd: i32, path: u64, flags: u32, mask: u32, buf: u64) -> SysResult {
    use abi::types::{AT_EMPTY_PATH, AT_NO_AUTOMOUNT, AT_STATX_SYNC_TYPE, STATX_RESERVED, Statx};
    let known = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE;
    if flags & !known != 0
        || flags & AT_STATX_SYNC_TYPE == AT_STATX_SYNC_TYPE
        || mask & STATX_RESERVED != 0
    {
        return Err(Errno::EINVAL);
    }
    let st = if flags & AT_EMPTY_PATH != 0 && uaccess::read::<u8>(path)? == 0 {
        fd_path(dirfd)?.stat()
    } else {
        let path = user_path(dirfd, path)?;
        let node = if flags & AT_SYMLINK_NOFOLLOW != 0 {
            ramfs::lookup_nofollow(&path)?
        } else {
            ramfs::lookup(&path)?
        };
        file::stat_node(&node)
    };
    uaccess::write(buf, &Statx::from_stat(&st))?;
    Ok(0)
}

/// fadvise64(2), posix_fadvise: how the caller will read a file. The
/// advice is checked (EINVAL for an unknown one or a negative length,
/// ESPIPE for a pipe or a socket, EBADF for no file) and then not acted
/// on: a ramfs file is in memory already, and a disk file's pages come as
/// they are read. Advice is a hint, and Linux too may ignore it.
pub fn fadvise64(fd: i32, _offset: i64, len: i64, advice: u32) -> SysResult {
    let file = fd_file(fd)?;
    if matches!(
        file.kind,
        Kind::PipeRead(_) | Kind::PipeWrite(_) | Kind::Socket(_)
    ) {
        return Err(Errno::ESPIPE);
    }
    if advice > abi::types::POSIX_FADV_NOREUSE || len < 0 {
        return Err(Errno::EINVAL);
    }
    Ok(0)
}

pub fn fstat(fd: i32, buf: u64) -> SysResult {
    let st = fd_path(fd)?.stat();
    uaccess::write(buf, &st)?;
    Ok(0)
}

/// getdents64(2): "." and "..", then the names the read has not given yet,
/// in the directory's order, as many as fit (EINVAL if not even one). The
/// file offset counts the entries given, and each record's `d_off` is the
/// offset after it; entries removed meanwhile skip nothing (`kcore::dirread`).
pub fn getdents64(fd: i32, buf: u64, count: u64) -> SysResult {
    let file = fd_file(fd)?;
    let Kind::Node(node) = &file.kind else {
        return Err(Errno::ENOTDIR);
    };
    // The inode number stat gives (a disk's file has the disk's).
    let ino = file::stat_node(node).st_ino;
    let entries = ramfs::list(node)?;
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    // The entries this read has not given yet (kcore::dirread: removing
    // what was given, as `rm -r` does, must not make it skip any).
    let saved = file.dir_read.lock().take();
    let mut read = DirRead::resume(saved, file.offset(), &names);
    let pending: Vec<Next> = read.pending(&names).collect();
    let mut out: Vec<u8> = Vec::new();
    for &next in &pending {
        let (name, d_ino, d_type) = match next {
            Next::Dot => (".", ino, DT_DIR),
            Next::DotDot => ("..", ino, DT_DIR),
            Next::Entry(i) => (names[i], entries[i].ino, entries[i].kind),
        };
        let reclen = (DIRENT64_NAME_OFFSET + name.len() + 1).next_multiple_of(8);
        if out.len() + reclen > count as usize {
            break;
        }
        let d_off = read.gave(next, &names);
        let start = out.len();
        out.resize(start + reclen, 0);
        let rec = &mut out[start..];
        rec[0..8].copy_from_slice(&d_ino.to_le_bytes());
        rec[8..16].copy_from_slice(&(d_off as i64).to_le_bytes());
        rec[16..18].copy_from_slice(&(reclen as u16).to_le_bytes());
        rec[18] = d_type;
        rec[DIRENT64_NAME_OFFSET..DIRENT64_NAME_OFFSET + name.len()]
            .copy_from_slice(name.as_bytes());
    }
    if out.is_empty() && !pending.is_empty() {
        return Err(Errno::EINVAL); // buffer too small for one entry
    }
    uaccess::copy_to_user(buf, &out)?;
    file.set_offset(read.offset());
    *file.dir_read.lock() = Some(read);
    Ok(out.len())
}

pub fn mkdirat(dirfd: i32, path: u64, mode: u32) -> SysResult {
    let path = user_path(dirfd, path)?;
    // Linux keeps only the permission and sticky bits, less the umask.
    let umask = current(|p| p.umask);
    ramfs::mkdir(&path, mode & 0o1777 & !umask).map(|()| 0)
}

pub fn unlinkat(dirfd: i32, path: u64, flags: u32) -> SysResult {
    if flags & !AT_REMOVEDIR != 0 {
        return Err(Errno::EINVAL);
    }
    ramfs::remove(&user_path(dirfd, path)?, flags & AT_REMOVEDIR != 0).map(|()| 0)
}

pub fn rename(from: u64, to: u64) -> SysResult {
    renameat2(AT_FDCWD, from, AT_FDCWD, to, 0)
}

/// renameat(2) and renameat2: each path relative to its own directory
/// descriptor. Of renameat2's flags, `RENAME_NOREPLACE` (EEXIST when the
/// new name is taken); `RENAME_EXCHANGE` and `RENAME_WHITEOUT` are EINVAL,
/// as on a Linux file system that does not support them.
pub fn renameat2(from_dir: i32, from: u64, to_dir: i32, to: u64, flags: u32) -> SysResult {
    if flags & !RENAME_NOREPLACE != 0 {
        return Err(Errno::EINVAL);
    }
    let from = user_path(from_dir, from)?;
    let to = user_path(to_dir, to)?;
    ramfs::rename(&from, &to, flags & RENAME_NOREPLACE != 0).map(|()| 0)
}

pub fn dup(fd: i32) -> SysResult {
    current(|p| {
        let file = p.files.get(fd)?;
        p.files.install(&file, false, p.fd_limit())
    })
    .map(|fd| fd as usize)
}

pub fn dup2(old: i32, new: i32) -> SysResult {
    if old == new {
        return fd_path(old).map(|_| new as usize);
    }
    dup3(old, new, 0)
}

pub fn dup3(old: i32, new: i32, flags: u32) -> SysResult {
    if old == new || flags & !O_CLOEXEC != 0 {
        return Err(Errno::EINVAL);
    }
    let (pid, replaced) = current(|p| {
        let file = p.files.get(old)?;
        p.files
            .replace(new, file, flags & O_CLOEXEC != 0, p.fd_limit())
            .map(|replaced| (p.pid, replaced))
    })?;
    if let Some(replaced) = replaced {
        file::close_by(pid, replaced);
    }
    Ok(new as usize)
}

/// pipe2(2): a pipe's two ends at `fds`, with O_CLOEXEC, O_NONBLOCK, and
/// O_DIRECT for packet mode (fs/pipe.rs).
pub fn pipe2(fds: u64, flags: u32) -> SysResult {
    if flags & !(O_CLOEXEC | O_NONBLOCK | O_DIRECT) != 0 {
        return Err(Errno::EINVAL);
    }
    uaccess::check_range(fds, 8, true)?;
    let pipe = Pipe::new(flags & O_DIRECT != 0);
    // As Linux's: O_DIRECT shows on the writing end alone (the packets are
    // the pipe's, so both ends work in them).
    let nonblock = flags & O_NONBLOCK;
    let reader = OpenFile::new(Kind::PipeRead(pipe.clone()), O_RDONLY | nonblock, None);
    let writer = OpenFile::new(
        Kind::PipeWrite(pipe),
        O_WRONLY | nonblock | (flags & O_DIRECT),
        None,
    );
    let cloexec = flags & O_CLOEXEC != 0;
    let pair = current(|p| {
        let limit = p.fd_limit();
        let r = p.files.install(&reader, cloexec, limit)?;
        match p.files.install(&writer, cloexec, limit) {
            Ok(w) => Ok([r, w]),
            Err(e) => {
                let _ = p.files.remove(r);
                Err(e)
            }
        }
    })?;
    if let Err(e) = uaccess::write(fds, &pair) {
        let files: Vec<_> = current(|p| {
            pair.iter()
                .filter_map(|&fd| p.files.remove(fd).ok())
                .collect()
        });
        drop(files);
        return Err(e);
    }
    Ok(0)
}

pub fn getcwd(buf: u64, size: u64) -> SysResult {
    let cwd = current(|p| p.cwd.clone());
    if (size as usize) < cwd.len() + 1 {
        return Err(Errno::ERANGE);
    }
    let mut bytes = cwd.into_bytes();
    bytes.push(0);
    uaccess::copy_to_user(buf, &bytes)?;
    Ok(bytes.len())
}

pub fn chdir(path: u64) -> SysResult {
    change_dir(&user_path(AT_FDCWD, path)?)
}

/// fchdir(2): to the directory open as `fd` (an O_PATH descriptor does),
/// by the path it was opened by.
pub fn fchdir(fd: i32) -> SysResult {
    let dir = fd_path(fd)?;
    change_dir(dir_path(&dir)?)
}

/// Makes the directory at `path` the caller's current one, kept by its
/// path with no symbolic link in it (getcwd answers that, as on Linux).
/// It must be a directory the caller may search.
fn change_dir(path: &str) -> SysResult {
    let (node, real) = ramfs::lookup_real(path)?;
    {
        let node = node.lock();
        if !node.is_dir() {
            return Err(Errno::ENOTDIR);
        }
        if !node.permits(&crate::proc::cred(), MAY_EXEC) {
            return Err(Errno::EACCES);
        }
    }
    current(|p| p.cwd = real);
    Ok(0)
}

/// fallocate(2) as Linux's tmpfs answers it: mode 0 gives every page of
/// `[offset, offset + len)` its memory now and grows the file to cover it;
/// FALLOC_FL_KEEP_SIZE allocates without growing; FALLOC_FL_PUNCH_HOLE
/// (with KEEP_SIZE) makes the range read as zeros and gives its whole
/// pages back. Linux's checks, in its order: EINVAL for a negative offset
/// or a length not above 0; EOPNOTSUPP for an unknown mode bit or a hole
/// without KEEP_SIZE; EBADF unless open for writing; ESPIPE for a pipe or
/// FIFO, EISDIR for a directory, ENODEV for anything else not a file;
/// EFBIG past the largest size; EOPNOTSUPP for the modes tmpfs does not
/// do (zero, collapse, insert, unshare range); ENOSPC when memory is
/// short; past RLIMIT_FSIZE, SIGXFSZ and EFBIG.
pub fn fallocate(fd: i32, mode: u32, offset: i64, len: i64) -> SysResult {
    if offset < 0 || len <= 0 {
        return Err(Errno::EINVAL);
    }
    let known = FALLOC_FL_KEEP_SIZE
        | FALLOC_FL_PUNCH_HOLE
        | FALLOC_FL_NO_HIDE_STALE
        | FALLOC_FL_COLLAPSE_RANGE
        | FALLOC_FL_ZERO_RANGE
        | FALLOC_FL_INSERT_RANGE
        | FALLOC_FL_UNSHARE_RANGE;
    let hole = mode & FALLOC_FL_PUNCH_HOLE != 0;
    if mode & !known != 0 || hole && mode & FALLOC_FL_KEEP_SIZE == 0 {
        return Err(Errno::EOPNOTSUPP);
    }
    let file = fd_file(fd)?;
    if !file.writable() {
        return Err(Errno::EBADF);
    }
    let Kind::Node(node) = &file.kind else {
        return Err(match file.kind {
            Kind::PipeRead(_) | Kind::PipeWrite(_) => Errno::ESPIPE,
            _ => Errno::ENODEV,
        });
    };
    let data = match &node.lock().content {
        Content::File(data) => data.clone(),
        Content::Fifo(_) => return Err(Errno::ESPIPE),
        Content::Dir(_) | Content::ProcDir(_) | Content::DiskDir => return Err(Errno::EISDIR),
        // As Linux's ext2, which has no fallocate.
        Content::DiskFile => return Err(Errno::EOPNOTSUPP),
        _ => return Err(Errno::ENODEV),
    };
    let end = offset.checked_add(len).ok_or(Errno::EFBIG)? as u64;
    if mode & !(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE) != 0 {
        return Err(Errno::EOPNOTSUPP);
    }
    let keep_size = mode & FALLOC_FL_KEEP_SIZE != 0;
    if hole {
        data.punch(offset as u64, end);
    } else {
        // As tmpfs: the limit holds even for KEEP_SIZE.
        if end > data.len() && end > file::file_size_limit() {
            return Err(file::file_too_big());
        }
        let was = data.len();
        data.allocate(offset as u64, end, keep_size)?;
        if data.len() == was {
            return Ok(0);
        }
    }
    node.lock().modified();
    Ok(0)
}

pub fn ftruncate(fd: i32, len: i64) -> SysResult {
    if len < 0 {
        return Err(Errno::EINVAL);
    }
    fd_file(fd)?.truncate(len as u64).map(|()| 0)
}

/// Sets the status flags of `file` (open as `fd`) that `which` selects to
/// their values in `bits` (F_SETFL, FIONBIO, FIOASYNC); O_ASYNC turned on
/// or off starts or stops signal-driven I/O (fs/sigio.rs).
fn set_status_flags(file: &Arc<OpenFile>, fd: i32, which: u32, bits: u32) {
    let was_async = {
        let mut flags = file.flags.lock();
        let was = *flags & O_ASYNC != 0;
        *flags = (*flags & !which) | (bits & which);
        was
    };
    let now_async = *file.flags.lock() & O_ASYNC != 0;
    match (was_async, now_async) {
        (false, true) => crate::fs::sigio::watch(file, fd),
        (true, false) => crate::fs::sigio::unwatch(file),
        _ => {}
    }
}

pub fn fcntl(fd: i32, cmd: u32, arg: u64) -> SysResult {
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC => current(|p| {
            let file = p.files.get(fd)?;
            // Linux: a starting number at or past the limit is EINVAL.
            let limit = p.fd_limit();
            let from = usize::try_from(arg)
                .ok()
                .filter(|&from| from < limit)
                .ok_or(Errno::EINVAL)?;
            p.files
                .install_from(from, &file, cmd == F_DUPFD_CLOEXEC, limit)
        })
        .map(|fd| fd as usize),
        F_GETFD => current(|p| p.files.cloexec(fd)).map(usize::from),
        F_SETFD => current(|p| p.files.set_cloexec(fd, arg & FD_CLOEXEC != 0)).map(|()| 0),
        F_GETFL => Ok(*fd_path(fd)?.flags.lock() as usize),
        F_SETFL => {
            let settable = O_APPEND | O_NONBLOCK | O_ASYNC;
            set_status_flags(&fd_file(fd)?, fd, settable, arg as u32);
            Ok(0)
        }
        F_GETOWN => Ok(fd_file(fd)?.owner.lock().getown() as isize as usize),
        F_SETOWN => {
            let file = fd_file(fd)?;
            let who = arg as i32;
            if who == i32::MIN {
                return Err(Errno::EINVAL);
            }
            let (kind, id) = if who < 0 {
                (F_OWNER_PGRP, who.unsigned_abs())
            } else {
                (F_OWNER_PID, who as u32)
            };
            let mut owner = file.owner.lock();
            *owner = crate::fs::sigio::owner(kind, id, owner.signal)?;
            Ok(0)
        }
        F_GETOWN_EX => {
            let owner = *fd_file(fd)?.owner.lock();
            let ex = FOwnerEx {
                kind: owner.kind,
                pid: owner.id as i32,
            };
            uaccess::write(arg, &ex)?;
            Ok(0)
        }
        F_SETOWN_EX => {
            let file = fd_file(fd)?;
            let ex: FOwnerEx = uaccess::read(arg)?;
            let id = u32::try_from(ex.pid).map_err(|_| Errno::EINVAL)?;
            let mut owner = file.owner.lock();
            *owner = crate::fs::sigio::owner(ex.kind, id, owner.signal)?;
            Ok(0)
        }
        F_GETSIG => Ok(fd_file(fd)?.owner.lock().signal as usize),
        F_SETLEASE => crate::fs::lease::set(&fd_file(fd)?, fd, arg).map(|()| 0),
        F_GETLEASE => Ok(crate::fs::lease::get(&*fd_file(fd)?) as usize),
        F_SETSIG => {
            let file = fd_file(fd)?;
            let signal = u32::try_from(arg)
                .ok()
                .filter(|&s| s < abi::signal::NSIG)
                .ok_or(Errno::EINVAL)?;
            file.owner.lock().signal = signal;
            Ok(0)
        }
        F_ADD_SEALS | F_GET_SEALS => seals(&*fd_file(fd)?, cmd, arg),
        F_GETLK | F_SETLK | F_SETLKW | F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW => {
            record_lock(fd, cmd, arg)
        }
        F_GETPIPE_SZ | F_SETPIPE_SZ => {
            let Some(pipe) = fd_file(fd)?.pipe() else {
                return Err(Errno::EBADF); // Linux: not a pipe
            };
            if cmd == F_GETPIPE_SZ {
                return Ok(pipe.capacity());
            }
            let privileged = current(|p| p.cred.euid == 0);
            pipe.set_capacity(arg, privileged)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// fcntl's seals, in Linux's order of checks. A file in memory (ramfs,
/// tmpfs, a memfd) can be sealed on Linux and says F_SEAL_SEAL until a
/// memfd made to take seals changes that; here none is (memfd_create
/// refuses MFD_ALLOW_SEALING), so each says F_SEAL_SEAL and adding is
/// EPERM. Any other file cannot be sealed: EINVAL.
fn seals(file: &OpenFile, cmd: u32, arg: u64) -> SysResult {
    let sealable = match &file.kind {
        Kind::Node(node) => {
            let node = node.lock();
            node.disk.is_none() && matches!(node.content, Content::File(_))
        }
        _ => false,
    };
    if cmd == F_GET_SEALS {
        return if sealable {
            Ok(F_SEAL_SEAL as usize)
        } else {
            Err(Errno::EINVAL)
        };
    }
    if arg > u64::from(u32::MAX) {
        return Err(Errno::EINVAL);
    }
    if !file.writable() {
        return Err(Errno::EPERM);
    }
    if arg as u32 & !F_ALL_SEALS != 0 || !sealable {
        return Err(Errno::EINVAL);
    }
    Err(Errno::EPERM) // F_SEAL_SEAL is set
}

/// memfd_create(2): a file in memory with no name in any directory
/// (`ramfs::nameless_file`), open for reading and writing; `/proc/PID/fd`
/// and `/proc/PID/maps` call it `/memfd:NAME (deleted)`, as Linux does.
/// MFD_CLOEXEC; MFD_ALLOW_SEALING is EINVAL (no seals here: `seals`), as
/// is any other flag (MFD_HUGETLB: no huge pages); EFAULT for a name that
/// cannot be read, EINVAL for one over 249 bytes.
pub fn memfd_create(name: u64, flags: u32) -> SysResult {
    if flags & !MFD_CLOEXEC != 0 {
        return Err(Errno::EINVAL);
    }
    let name = match uaccess::read_cbytes(name, MFD_NAME_MAX) {
        Err(Errno::ENAMETOOLONG) => return Err(Errno::EINVAL),
        other => other?,
    };
    let name = String::from_utf8_lossy(&name);
    let node = ramfs::nameless_file(0o777);
    let path = alloc::format!("/memfd:{name} (deleted)");
    let file = OpenFile::new(Kind::Node(node), O_RDWR, Some(&path));
    current(|p| {
        p.files
            .install(&file, flags & MFD_CLOEXEC != 0, p.fd_limit())
    })
    .map(|fd| fd as usize)
}

/// fcntl's record locks (fs/lock.rs): `arg` is a `struct flock`.
fn record_lock(fd: i32, cmd: u32, arg: u64) -> SysResult {
    use kcore::flock::{Kind as LockKind, Owner};
    let file = fd_file(fd)?;
    let mut fl: Flock = uaccess::read(arg)?;
    let ofd = matches!(cmd, F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW);
    if ofd && fl.l_pid != 0 {
        return Err(Errno::EINVAL); // as Linux: OFD requests carry no pid
    }
    let Some(ino) = file.ino() else {
        return Err(Errno::EINVAL); // pipes take no record locks here
    };
    let kind = match fl.l_type {
        F_RDLCK => Some(LockKind::Read),
        F_WRLCK => Some(LockKind::Write),
        F_UNLCK => None,
        _ => return Err(Errno::EINVAL),
    };
    let base = match u32::from(fl.l_whence as u16) {
        SEEK_SET => 0,
        SEEK_CUR => file.offset() as i64,
        SEEK_END => file.stat().st_size,
        _ => return Err(Errno::EINVAL),
    };
    let start = base.checked_add(fl.l_start).ok_or(Errno::EOVERFLOW)?;
    let (start, end) = kcore::flock::range(start, fl.l_len)?;
    let owner = if ofd {
        Owner::Description(file.id)
    } else {
        Owner::Process(current(|p| p.pid))
    };
    if matches!(cmd, F_GETLK | F_OFD_GETLK) {
        let kind = kind.ok_or(Errno::EINVAL)?;
        match crate::fs::lock::conflict(ino, owner, kind, start, end) {
            Some(held) => {
                fl.l_type = if held.kind == LockKind::Write {
                    F_WRLCK
                } else {
                    F_RDLCK
                };
                fl.l_whence = SEEK_SET as i16;
                fl.l_start = held.start as i64;
                fl.l_len = if held.end == u64::MAX {
                    0
                } else {
                    (held.end - held.start) as i64
                };
                fl.l_pid = match held.owner {
                    Owner::Process(pid) => pid as i32,
                    Owner::Description(_) => -1,
                };
            }
            None => fl.l_type = F_UNLCK,
        }
        uaccess::write(arg, &fl)?;
        return Ok(0);
    }
    match kind {
        Some(LockKind::Read) if !file.readable() => return Err(Errno::EBADF),
        Some(LockKind::Write) if !file.writable() => return Err(Errno::EBADF),
        _ => {}
    }
    let wait = matches!(cmd, F_SETLKW | F_OFD_SETLKW);
    crate::fs::lock::set(ino, owner, kind, start, end, wait).map(|()| 0)
}

/// flock(2): a shared (`LOCK_SH`) or exclusive (`LOCK_EX`) lock on the
/// whole file open as `fd`, or none (`LOCK_UN`), held by its open file
/// description (fs/lock.rs: apart from record locks, given up at the
/// description's last close). With `LOCK_NB` a conflict is EWOULDBLOCK,
/// else the caller waits. Linux's order: `LOCK_MAND` is accepted and
/// ignored, another operation is EINVAL, then a bad or O_PATH descriptor
/// EBADF. Any open mode may take either kind.
pub fn flock(fd: i32, operation: u32) -> SysResult {
    use kcore::flock::Kind as LockKind;
    if operation & LOCK_MAND != 0 {
        return Ok(0);
    }
    let kind = match operation & !LOCK_NB {
        LOCK_SH => Some(LockKind::Read),
        LOCK_EX => Some(LockKind::Write),
        LOCK_UN => None,
        _ => return Err(Errno::EINVAL),
    };
    let file = fd_file(fd)?;
    let Some(ino) = file.ino() else {
        return Err(Errno::EINVAL); // pipes and sockets take no locks here
    };
    let wait = operation & LOCK_NB == 0;
    crate::fs::lock::flock(ino, file.id, kind, wait).map(|()| 0)
}

/// The block device requests programs such as mke2fs and blockdev ask
/// of /dev/vda (the disk `disk`).
fn block_ioctl(disk: crate::virtio_blk::DiskId, request: u32, arg: u64) -> SysResult {
    match request {
        BLKGETSIZE64 => uaccess::write(arg, &crate::virtio_blk::size_bytes(disk)).map(|()| 0),
        BLKSSZGET => uaccess::write(arg, &512i32).map(|()| 0),
        BLKFLSBUF => {
            crate::virtio_blk::flush(disk)?;
            Ok(0)
        }
        _ => Err(Errno::ENOTTY),
    }
}

/// ioctl(2): the requests of any descriptor first, then a pipe's or a
/// socket's (FIONREAD), a disk's, and the terminal's; anything else is
/// ENOTTY, as Linux says for a request the file does not know.
pub fn ioctl(fd: i32, request: u32, arg: u64) -> SysResult {
    let file = fd_file(fd)?;
    // What every descriptor takes, before the file's own requests, as
    // Linux's `do_vfs_ioctl` answers them.
    match request {
        FIOCLEX | FIONCLEX => {
            return current(|p| p.files.set_cloexec(fd, request == FIOCLEX)).map(|()| 0);
        }
        FIONBIO => {
            let on = uaccess::read::<i32>(arg)? != 0;
            set_status_flags(&file, fd, O_NONBLOCK, if on { O_NONBLOCK } else { 0 });
            return Ok(0);
        }
        FIOASYNC => {
            let on = uaccess::read::<i32>(arg)? != 0;
            // Only a file that can signal (a pipe, a socket, the terminal)
            // has O_ASYNC turned on or off here: Linux's `ioctl_fioasync`
            // is ENOTTY without the file's `fasync` (F_SETFL sets the flag
            // on any file).
            let changes = (*file.flags.lock() & O_ASYNC != 0) != on;
            if changes && file.readiness().is_none() {
                return Err(Errno::ENOTTY);
            }
            set_status_flags(&file, fd, O_ASYNC, if on { O_ASYNC } else { 0 });
            return Ok(0);
        }
        _ => {}
    }
    let waiting = match &file.kind {
        Kind::Socket(socket) => Some(socket.readable_bytes()),
        Kind::PipeWrite(_) => None,
        _ => file.pipe().map(|pipe| pipe.buffered()),
    };
    if let Some(bytes) = waiting {
        return match request {
            FIONREAD => uaccess::write(arg, &(bytes as i32)).map(|()| 0),
            _ => Err(Errno::ENOTTY),
        };
    }
    if let Some(disk) = file.block_device() {
        return block_ioctl(disk, request, arg);
    }
    let terminal = match &file.kind {
        Kind::Node(n) => n.lock().device().filter(|d| d.is_terminal()),
        _ => None,
    };
    match terminal {
        Some(device) => super::tty::ioctl(device, request, arg),
        None => Err(Errno::ENOTTY),
    }
}

/// faccessat2(2) (and faccessat, whose system call has no flags: 0): as
/// access, relative to `dirfd`, with the effective ids for `AT_EACCESS`.
pub fn faccessat(dirfd: i32, path: u64, mode: u32, flags: u32) -> SysResult {
    if mode & !7 != 0 || flags & !(AT_EACCESS | abi::types::AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    check_access(dirfd, path, mode, flags & AT_EACCESS != 0)
}

/// access(2): whether the caller's real user may do what `mode` asks
/// (`R_OK`, `W_OK`, `X_OK`; 0 asks only whether the file is there).
pub fn access(dirfd: i32, path: u64, mode: u32) -> SysResult {
    if mode & !7 != 0 {
        return Err(Errno::EINVAL);
    }
    check_access(dirfd, path, mode, false)
}

/// The check of access and faccessat: with the real ids (the path walk
/// too), or with the effective ones for `AT_EACCESS`.
fn check_access(dirfd: i32, path: u64, mode: u32, effective: bool) -> SysResult {
    let path = user_path(dirfd, path)?;
    let cred = crate::proc::cred();
    let cred = if effective {
        cred
    } else {
        Arc::new(cred.for_access())
    };
    let node = ramfs::lookup_as(&path, &cred)?;
    if mode != 0 && !node.lock().permits(&cred, mode) {
        return Err(Errno::EACCES);
    }
    Ok(0)
}

/// readlink(2) and readlinkat: the target of a symbolic link (only /proc
/// has them), cut to `size` bytes and not NUL-terminated; EINVAL for a
/// path that is not a link, as Linux.
pub fn readlinkat(dirfd: i32, path: u64, buf: u64, size: u64) -> SysResult {
    if size as i64 <= 0 {
        return Err(Errno::EINVAL);
    }
    let node = ramfs::lookup_nofollow(&user_path(dirfd, path)?)?;
    let target = match &node.lock().content {
        Content::Symlink(target) => target.clone(),
        _ => return Err(Errno::EINVAL),
    };
    let n = target.len().min(size as usize);
    uaccess::copy_to_user(buf, &target.as_bytes()[..n])?;
    Ok(n)
}
