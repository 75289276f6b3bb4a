//! Copies the kernel makes between two descriptors, the bytes never
//! passing through the caller's memory: copy_file_range (file to file)
//! and splice (to or from a pipe). (sendfile, the oldest, is in fs.rs.)
//!
//! Linux moves page references for these; here both go through one
//! kernel buffer, `CHUNK` bytes at a time (`transfer`). What the caller
//! sees is Linux's all the same: which descriptors each call takes and
//! its errors in Linux's order, offsets given by pointer moved instead of
//! the file's, a short answer at the end of the input or when a pipe is
//! full or empty, never a wait for a pipe that already gave or took some.

use abi::Errno;
use abi::types::{O_APPEND, SPLICE_F_ALL};
use alloc::sync::Arc;
use alloc::vec;

use super::SysResult;
use super::fs::fd_file;
use crate::fs::file::{Kind, OpenFile};
use crate::fs::pipe::Pipe;
use crate::fs::ramfs::NodeRef;
use crate::mm::uaccess;

/// The most one buffer holds.
const CHUNK: usize = 64 * 1024;
/// The most one call moves (Linux's MAX_RW_COUNT).
const MAX_RW_COUNT: u64 = 0x7fff_f000;

/// One side of a copy: its open file, and where it is read or written.
struct End {
    file: Arc<OpenFile>,
    /// The offset the caller gave by pointer, which moves in its place
    /// and is written back; None: the file's own offset, which moves (a
    /// pipe has none).
    at: Option<u64>,
    /// The pipe, when this side is one: read or written directly, so that
    /// SPLICE_F_NONBLOCK can say not to wait.
    pipe: Option<Arc<Pipe>>,
}

impl End {
    fn read(&mut self, buf: &mut [u8], nonblock: bool) -> Result<usize, Errno> {
        match (&self.pipe, self.at) {
            (Some(pipe), _) => pipe.read(buf, nonblock),
            (None, Some(at)) => self.file.pread(buf, at),
            (None, None) => self.file.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8], nonblock: bool) -> Result<usize, Errno> {
        match (&self.pipe, self.at) {
            (Some(pipe), _) => pipe.write(buf, nonblock),
            (None, Some(at)) => self.file.pwrite(buf, at),
            (None, None) => self.file.write(buf),
        }
    }

    /// `n` bytes went through this side: its offset moves past them.
    fn advance(&mut self, n: usize) {
        if let Some(at) = &mut self.at {
            *at += n as u64;
        }
    }
}

/// Moves up to `count` bytes from `input` to `output`, a buffer at a
/// time: until the input ends, a write is short, or a pipe on either side
/// would make it wait after some bytes moved (a pipe waits only for the
/// first). An error after some bytes is dropped for their count, as
/// read and write do. Bytes read from a file but not written are given
/// back to its offset.
/// `nonblock`: whether a pipe on each side (input, output) says EAGAIN
/// rather than wait.
fn transfer(input: &mut End, output: &mut End, count: u64, nonblock: (bool, bool)) -> SysResult {
    let count = count.min(MAX_RW_COUNT) as usize;
    let mut buf = vec![0u8; count.min(CHUNK)];
    let mut done = 0;
    while done < count {
        let mut want = (count - done).min(CHUNK);
        // Never more than the output pipe has room for, once a first
        // piece went in: a full pipe ends the call rather than waiting.
        if let Some(pipe) = &output.pipe {
            let room = pipe.capacity().saturating_sub(pipe.buffered());
            if done > 0 && room == 0 {
                break;
            }
            want = want.min(room.max(1));
        }
        if done > 0 && input.pipe.as_ref().is_some_and(|p| p.buffered() == 0) {
            break;
        }
        let step = input.read(&mut buf[..want], nonblock.0).and_then(|got| {
            let wrote = match got {
                0 => 0,
                got => output.write(&buf[..got], nonblock.1)?,
            };
            Ok((got, wrote))
        });
        let (got, wrote) = match step {
            Ok(moved) => moved,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        input.advance(wrote);
        output.advance(wrote);
        if input.at.is_none() && input.pipe.is_none() && wrote < got {
            input
                .file
                .set_offset(input.file.offset().saturating_sub((got - wrote) as u64));
        }
        done += wrote;
        if got == 0 || wrote < got {
            break;
        }
    }
    Ok(done)
}

/// An offset the caller gives by pointer: None for a null pointer;
/// EFAULT, or EINVAL for a negative one.
fn offset_at(ptr: u64) -> Result<Option<u64>, Errno> {
    if ptr == 0 {
        return Ok(None);
    }
    let at: i64 = uaccess::read(ptr)?;
    u64::try_from(at).map(Some).map_err(|_| Errno::EINVAL)
}

/// Writes a moved offset back where the caller gave it.
fn give_back(ptr: u64, at: Option<u64>) -> Result<(), Errno> {
    match at {
        Some(at) if ptr != 0 => uaccess::write(ptr, &(at as i64)),
        _ => Ok(()),
    }
}

/// The node of a descriptor open on one.
fn node_of(file: &OpenFile) -> Option<NodeRef> {
    match &file.kind {
        Kind::Node(node) => Some(node.clone()),
        _ => None,
    }
}

/// Which file system a node is in, as far as a copy cares: a disk's
/// volume (its address), or 0 for memory.
fn file_system(node: &NodeRef) -> usize {
    crate::fs::ext2::disk_of(node).map_or(0, |(vol, _)| Arc::as_ptr(&vol) as usize)
}

/// copy_file_range(2): up to `len` bytes from one regular file to another,
/// in Linux 6.1's order of checks: flags (EINVAL), the descriptors
/// (EBADF), a directory on either side (EISDIR), anything else that is not
/// a regular file (EINVAL), either side not open for its direction or the
/// output O_APPEND (EBADF), the offsets (EFAULT; negative EINVAL), two
/// file systems (EXDEV), and overlapping ranges of one file (EINVAL). The
/// copy stops at the input's end.
pub fn copy_file_range(
    fd_in: i32,
    off_in: u64,
    fd_out: i32,
    off_out: u64,
    len: u64,
    flags: u32,
) -> SysResult {
    if flags != 0 {
        return Err(Errno::EINVAL);
    }
    let (input, output) = (fd_file(fd_in)?, fd_file(fd_out)?);
    let (Some(node_in), Some(node_out)) = (node_of(&input), node_of(&output)) else {
        return Err(Errno::EINVAL);
    };
    let (kind_in, kind_out) = {
        let kind = |n: &NodeRef| {
            let n = n.lock();
            (n.is_dir(), n.is_regular())
        };
        (kind(&node_in), kind(&node_out))
    };
    if kind_in.0 || kind_out.0 {
        return Err(Errno::EISDIR);
    }
    if !kind_in.1 || !kind_out.1 {
        return Err(Errno::EINVAL);
    }
    if !input.readable() || !output.writable() || *output.flags.lock() & O_APPEND != 0 {
        return Err(Errno::EBADF);
    }
    let at_in = offset_at(off_in)?;
    let at_out = offset_at(off_out)?;
    if file_system(&node_in) != file_system(&node_out) {
        return Err(Errno::EXDEV);
    }
    let pos_in = at_in.unwrap_or_else(|| input.offset());
    let pos_out = at_out.unwrap_or_else(|| output.offset());
    let size_in = crate::fs::file::stat_node(&node_in).st_size as u64;
    let len = len.min(size_in.saturating_sub(pos_in));
    if Arc::ptr_eq(&node_in, &node_out) && pos_out < pos_in + len && pos_in < pos_out + len {
        return Err(Errno::EINVAL);
    }
    let mut from = End {
        file: input,
        at: at_in,
        pipe: None,
    };
    let mut to = End {
        file: output,
        at: at_out,
        pipe: None,
    };
    let done = transfer(&mut from, &mut to, len, (false, false))?;
    give_back(off_in, from.at)?;
    give_back(off_out, to.at)?;
    Ok(done)
}

/// splice(2): up to `len` bytes from `fd_in` to `fd_out`, one of them a
/// pipe (or an open FIFO), in Linux's order of checks: the descriptors
/// (EBADF), unknown flags (EINVAL), a side not open for its direction
/// (EBADF), an output opened O_APPEND (EINVAL), neither side a pipe
/// (EINVAL), an offset given for a pipe (ESPIPE), the same pipe on both
/// sides (EINVAL). A pipe side waits as a read or write of it would, for
/// the first bytes only; SPLICE_F_NONBLOCK makes that EAGAIN, and the
/// other flags (MOVE, MORE, GIFT) are hints with nothing to do here.
pub fn splice(
    fd_in: i32,
    off_in: u64,
    fd_out: i32,
    off_out: u64,
    len: u64,
    flags: u32,
) -> SysResult {
    let (input, output) = (fd_file(fd_in)?, fd_file(fd_out)?);
    if flags & !SPLICE_F_ALL != 0 {
        return Err(Errno::EINVAL);
    }
    if !input.readable() || !output.writable() {
        return Err(Errno::EBADF);
    }
    if *output.flags.lock() & O_APPEND != 0 {
        return Err(Errno::EINVAL);
    }
    let (pipe_in, pipe_out) = (input.pipe(), output.pipe());
    if pipe_in.is_none() && pipe_out.is_none() {
        return Err(Errno::EINVAL);
    }
    if (pipe_in.is_some() && off_in != 0) || (pipe_out.is_some() && off_out != 0) {
        return Err(Errno::ESPIPE);
    }
    if let (Some(a), Some(b)) = (&pipe_in, &pipe_out)
        && Arc::ptr_eq(a, b)
    {
        return Err(Errno::EINVAL);
    }
    let at_in = offset_at(off_in)?;
    let at_out = offset_at(off_out)?;
    if len == 0 {
        return Ok(0);
    }
    // A pipe side waits as its own descriptor says, or not at all with
    // SPLICE_F_NONBLOCK.
    let nonblock = flags & abi::types::SPLICE_F_NONBLOCK != 0;
    let nonblock = (nonblock || input.nonblock(), nonblock || output.nonblock());
    let mut from = End {
        file: input,
        at: at_in,
        pipe: pipe_in,
    };
    let mut to = End {
        file: output,
        at: at_out,
        pipe: pipe_out,
    };
    let done = transfer(&mut from, &mut to, len, nonblock)?;
    give_back(off_in, from.at)?;
    give_back(off_out, to.at)?;
    Ok(done)
}
