//! Files, pipes and the terminal: reading and writing, errors as Linux
//! gives them, directories, the current directory, sparse files, running
//! out of descriptors and of the ramfs, termios and /dev/tty.

use super::*;

/// A thread in poll sleeps until one of *its* files changes: another pipe
/// busy beside it does not wake it (each pipe, socket and the terminal has
/// its own queue of pollers; with one queue for all, this poller woke and
/// looked again at every one of the 200 writes).
pub(super) fn poll_sleeps_through_other_pipes() -> Outcome {
    let (quiet, quiet_w) = sys::pipe().map_err(|e| e.message())?;
    let (busy, busy_w) = sys::pipe().map_err(|e| e.message())?;
    let (done, done_w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let mut fds = [PollFd {
            fd: quiet,
            events: POLLIN,
            revents: 0,
        }];
        let before = voluntary_switches();
        let ready = raw(nr::POLL, &[fds.as_mut_ptr() as usize, 1, 500]);
        let slept = voluntary_switches() - before;
        let _ = sys::write(done_w, &slept.to_ne_bytes());
        sys::exit(if ready == Ok(0) { 0 } else { 1 });
    }
    for _ in 0..200 {
        sys::write(busy_w, b"x").map_err(|e| e.message())?;
        sys::read(busy, &mut [0u8; 1]).map_err(|e| e.message())?;
        sys::sched_yield();
    }
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let mut slept = [0u8; 8];
    sys::read(done, &mut slept).map_err(|e| e.message())?;
    let slept = i64::from_ne_bytes(slept);
    for fd in [quiet, quiet_w, busy, busy_w, done, done_w] {
        let _ = sys::close(fd);
    }
    ensure!(
        sys::exited(status) == Some(0),
        "poll did not time out: {status:#x}"
    );
    ensure!(
        (1..10).contains(&slept),
        "the poller slept {slept} times (once, or a few with the timer, is right)"
    );
    Ok(())
}

pub(super) fn pipe_transfers_data_and_eof() -> Outcome {
    const LEN: usize = 100 * 1024;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let _ = sys::close(r);
        let data: Vec<u8> = (0..LEN).map(|i| (i * 7 % 251) as u8).collect();
        let ok = sys::write_all(w, &data).is_ok();
        sys::exit(if ok { 0 } else { 1 });
    }
    let _ = sys::close(w);
    let mut got = Vec::new();
    let mut buf = [0u8; 1000];
    loop {
        match sys::read(r, &mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return Err(format!("read: {}", e.message())),
        }
    }
    let _ = sys::close(r);
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    ensure!(sys::exited(status) == Some(0), "writer failed");
    ensure!(got.len() == LEN, "read {} bytes, want {LEN}", got.len());
    ensure!(
        got.iter()
            .enumerate()
            .all(|(i, &b)| b == (i * 7 % 251) as u8),
        "data corrupted"
    );
    Ok(())
}

pub(super) fn pipe_without_readers_is_epipe() -> Outcome {
    // Ignored, SIGPIPE leaves the EPIPE error (sigtests checks the signal).
    libc_lite::signal::sigaction(SIGPIPE, Handler::Ignore, 0, 0).map_err(|e| e.message())?;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let _ = sys::close(r);
    let result = expect_err(
        "write to a pipe with no reader",
        sys::write(w, b"x"),
        Errno::EPIPE,
    );
    let _ = sys::close(w);
    result?;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    expect_err("lseek on a pipe", sys::lseek(r, 0, SEEK_SET), Errno::ESPIPE)?;
    expect_err("write to a read end", sys::write(r, b"x"), Errno::EBADF)?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    Ok(())
}

pub(super) fn files_create_write_read_rename_unlink() -> Outcome {
    let _ = sys::mkdir("/ut", 0o755);
    let fd = sys::open("/ut/a", O_CREAT | O_RDWR | O_TRUNC, 0o644).map_err(|e| e.message())?;
    sys::write_all(fd, b"hello").map_err(|e| e.message())?;
    ensure!(sys::lseek(fd, 0, SEEK_SET) == Ok(0), "lseek");
    let mut buf = [0u8; 16];
    let n = sys::read(fd, &mut buf).map_err(|e| e.message())?;
    ensure!(&buf[..n] == b"hello", "read back {:?}", &buf[..n]);
    ensure!(sys::fstat(fd).map(|s| s.st_size) == Ok(5), "fstat size");
    ensure!(sys::lseek(fd, 10, SEEK_SET) == Ok(10), "lseek past end");
    sys::write_all(fd, b"!").map_err(|e| e.message())?;
    ensure!(
        sys::fstat(fd).map(|s| s.st_size) == Ok(11),
        "a write past the end extends the file"
    );
    sys::ftruncate(fd, 2).map_err(|e| e.message())?;
    ensure!(sys::stat("/ut/a").map(|s| s.st_size) == Ok(2), "ftruncate");
    let _ = sys::close(fd);
    let fd = sys::open("/ut/a", O_WRONLY | O_APPEND, 0).map_err(|e| e.message())?;
    sys::write_all(fd, b"yz").map_err(|e| e.message())?;
    let _ = sys::close(fd);
    let fd = sys::open("/ut/a", O_RDONLY, 0).map_err(|e| e.message())?;
    let n = sys::read(fd, &mut buf).map_err(|e| e.message())?;
    let _ = sys::close(fd);
    ensure!(&buf[..n] == b"heyz", "O_APPEND: read {:?}", &buf[..n]);
    sys::rename("/ut/a", "/ut/b").map_err(|e| e.message())?;
    expect_err("stat after rename", sys::stat("/ut/a"), Errno::ENOENT)?;
    ensure!(sys::stat("/ut/b").is_ok(), "renamed file missing");
    sys::unlink("/ut/b").map_err(|e| e.message())?;
    expect_err("stat after unlink", sys::stat("/ut/b"), Errno::ENOENT)?;
    sys::rmdir("/ut").map_err(|e| e.message().into())
}

pub(super) fn file_errors_match_linux() -> Outcome {
    expect_err(
        "open a missing file",
        sys::open("/no/such", O_RDONLY, 0),
        Errno::ENOENT,
    )?;
    expect_err(
        "mkdir an existing dir",
        sys::mkdir("/bin", 0o755),
        Errno::EEXIST,
    )?;
    expect_err(
        "O_CREAT|O_EXCL on an existing file",
        sys::open("/bin/true", O_CREAT | O_EXCL | O_WRONLY, 0),
        Errno::EEXIST,
    )?;
    expect_err(
        "a file used as a directory",
        sys::open("/bin/true/x", O_RDONLY, 0),
        Errno::ENOTDIR,
    )?;
    expect_err(
        "open a directory for writing",
        sys::open("/bin", O_WRONLY, 0),
        Errno::EISDIR,
    )?;
    expect_err("unlink a directory", sys::unlink("/bin"), Errno::EISDIR)?;
    expect_err(
        "rmdir a non-empty directory",
        sys::rmdir("/bin"),
        Errno::ENOTEMPTY,
    )?;
    expect_err("rmdir a file", sys::rmdir("/bin/true"), Errno::ENOTDIR)?;
    expect_err("close a bad fd", sys::close(99), Errno::EBADF)?;
    expect_err(
        "read a negative fd",
        sys::read(-1, &mut [0u8; 1]),
        Errno::EBADF,
    )?;
    expect_err("empty path", sys::open("", O_RDONLY, 0), Errno::ENOENT)?;
    let long = "x".repeat(300);
    expect_err(
        "name too long",
        sys::open(&long, O_RDONLY, 0),
        Errno::ENAMETOOLONG,
    )?;
    let fd = sys::open("/bin/true", O_RDONLY, 0).map_err(|e| e.message())?;
    let result = expect_err("write a read-only fd", sys::write(fd, b"x"), Errno::EBADF);
    let _ = sys::close(fd);
    result
}

pub(super) fn getdents_lists_a_directory() -> Outcome {
    let _ = sys::mkdir("/utd", 0o755);
    for name in ["one", "two", "three"] {
        let fd = sys::open(&format!("/utd/{name}"), O_CREAT | O_WRONLY, 0o644)
            .map_err(|e| e.message())?;
        let _ = sys::close(fd);
    }
    let fd = sys::open("/utd", O_RDONLY | O_DIRECTORY, 0).map_err(|e| e.message())?;
    let mut names = Vec::new();
    let mut buf = [0u8; 64]; // small on purpose: several calls needed
    loop {
        let n = sys::getdents64(fd, &mut buf).map_err(|e| e.message())?;
        if n == 0 {
            break;
        }
        let mut at = 0;
        while at < n {
            let reclen = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let name = &buf[at + DIRENT64_NAME_OFFSET..at + reclen];
            let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            names.push(String::from_utf8_lossy(&name[..len]).into_owned());
            at += reclen;
        }
    }
    let _ = sys::close(fd);
    for name in ["one", "two", "three"] {
        let _ = sys::unlink(&format!("/utd/{name}"));
    }
    let _ = sys::rmdir("/utd");
    names.sort();
    ensure!(
        names == [".", "..", "one", "three", "two"],
        "listed {names:?}"
    );
    Ok(())
}

pub(super) fn cwd_and_chdir() -> Outcome {
    sys::chdir("/bin").map_err(|e| e.message())?;
    let mut buf = [0u8; 64];
    ensure!(
        sys::getcwd(&mut buf) == Ok("/bin"),
        "getcwd after chdir /bin"
    );
    let fd =
        sys::open("true", O_RDONLY, 0).map_err(|e| format!("relative open: {}", e.message()))?;
    let _ = sys::close(fd);
    sys::chdir("..").map_err(|e| e.message())?;
    ensure!(sys::getcwd(&mut buf) == Ok("/"), "getcwd after chdir ..");
    expect_err("chdir to a file", sys::chdir("/bin/true"), Errno::ENOTDIR)?;
    expect_err(
        "getcwd into 1 byte",
        sys::getcwd(&mut [0u8; 1]).map(|_| ()),
        Errno::ERANGE,
    )
}

/// A file truncated up to the largest size has no blocks: st_blocks
/// counts the pages that have a frame (the fuzzer found fstat computing
/// the blocks from the size, which overflowed at i64::MAX and panicked).
pub(super) fn a_huge_sparse_file_has_no_blocks() -> Outcome {
    let path = "/tmp/huge-sparse";
    let fd = sys::open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600).map_err(|e| e.message())?;
    let result = (|| {
        sys::ftruncate(fd, i64::MAX as u64).map_err(|e| format!("ftruncate: {}", e.message()))?;
        let st = sys::fstat(fd).map_err(|e| e.message())?;
        ensure!(st.st_size == i64::MAX, "size {}", st.st_size);
        ensure!(st.st_blocks == 0, "{} blocks for a hole", st.st_blocks);
        sys::write(fd, b"x").map_err(|e| e.message())?;
        let st = sys::fstat(fd).map_err(|e| e.message())?;
        ensure!(st.st_blocks == 8, "{} blocks for one page", st.st_blocks);
        Ok(())
    })();
    let _ = sys::close(fd);
    let _ = sys::unlink(path);
    result
}

/// A write far past the end of memory (at 2^62, or one that fallocate asks
/// for up to there) is ENOSPC, and the file is left as it was: the page
/// list it would need is larger than the kernel's heap, and the heap's
/// growth once added that size to its top and panicked on the overflow
/// (the fuzzer's pwritev found it).
pub(super) fn a_write_far_past_memory_is_enospc() -> Outcome {
    let path = "/tmp/far-write";
    let fd = sys::open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600).map_err(|e| e.message())?;
    let result = (|| {
        let far = 1usize << 62;
        let buf = b"x";
        let wrote = raw(nr::PWRITE64, &[fd as usize, buf.as_ptr() as usize, 1, far]);
        ensure!(wrote == Err(Errno::ENOSPC), "pwrite at 2^62: {wrote:?}");
        let fallocated = raw(nr::FALLOCATE, &[fd as usize, 0, 0, far]);
        ensure!(
            fallocated == Err(Errno::ENOSPC),
            "fallocate of 2^62 bytes: {fallocated:?}"
        );
        let st = sys::fstat(fd).map_err(|e| e.message())?;
        ensure!(
            st.st_size == 0,
            "size {} after the failed writes",
            st.st_size
        );
        Ok(())
    })();
    let _ = sys::close(fd);
    let _ = sys::unlink(path);
    result
}

pub(super) fn fd_exhaustion_is_emfile() -> Outcome {
    let mut fds = Vec::new();
    let result = loop {
        match sys::dup(0) {
            Ok(fd) => fds.push(fd),
            Err(e) => break e,
        }
    };
    for fd in &fds {
        let _ = sys::close(*fd);
    }
    ensure!(result == Errno::EMFILE, "dup ended with {}", result.name());
    ensure!(fds.len() >= 32, "only {} descriptors", fds.len());
    Ok(())
}

/// TCGETS writes Linux's 36-byte kernel `struct termios` and not a byte
/// more (glibc's buffer is exactly that size: more smashed its stack), with
/// Linux's control characters; TCSETS keeps what it is given.
pub(super) fn termios_is_linux_sized() -> Outcome {
    const TCGETS_LEN: usize = 36;
    let mut buf = [0xaau8; 64];
    raw(nr::IOCTL, &[0, TCGETS as usize, buf.as_mut_ptr() as usize])
        .map_err(|e| format!("TCGETS: {}", e.message()))?;
    ensure!(
        buf[TCGETS_LEN..].iter().all(|&b| b == 0xaa),
        "TCGETS wrote past byte {TCGETS_LEN}: {:02x?}",
        &buf[TCGETS_LEN..]
    );
    let saved = sys::termios(0).map_err(|e| e.message())?;
    let cc = saved.c_cc;
    ensure!(
        [
            cc[VINTR], cc[VQUIT], cc[VERASE], cc[VKILL], cc[VEOF], cc[VMIN]
        ] == [0x03, 0x1c, 0x7f, 0x15, 0x04, 1],
        "control characters {cc:02x?}"
    );
    ensure!(
        saved.c_lflag & (ISIG | ICANON | ECHO) == ISIG | ICANON | ECHO,
        "c_lflag {:#o}",
        saved.c_lflag
    );
    // A round trip keeps every field, flags this console does not act on
    // (0o20 is ECHOE) included.
    let mut changed = saved;
    changed.c_lflag |= 0o20;
    changed.c_cc[VWERASE] = 0x01;
    raw(
        nr::IOCTL,
        &[0, TCSETS as usize, &changed as *const Termios as usize],
    )
    .map_err(|e| format!("TCSETS: {}", e.message()))?;
    let back = sys::termios(0).map_err(|e| e.message());
    raw(
        nr::IOCTL,
        &[0, TCSETS as usize, &saved as *const Termios as usize],
    )
    .map_err(|e| format!("TCSETS: {}", e.message()))?;
    ensure!(back? == changed, "TCSETS then TCGETS changed the settings");
    let mut winsize = [0xaau8; 16];
    raw(
        nr::IOCTL,
        &[0, TIOCGWINSZ as usize, winsize.as_mut_ptr() as usize],
    )
    .map_err(|e| format!("TIOCGWINSZ: {}", e.message()))?;
    ensure!(
        winsize[8..].iter().all(|&b| b == 0xaa),
        "TIOCGWINSZ wrote past its 8 bytes"
    );
    Ok(())
}

/// `/dev/tty` is the controlling terminal (the console, for a session
/// without a pseudo-terminal, as this test's), and
/// opening it or `/dev/console` with O_TRUNC, as a shell's `> /dev/tty`
/// does, leaves the terminal alone: that was EINVAL once.
pub(super) fn dev_tty_is_the_terminal() -> Outcome {
    for (path, rdev) in [("/dev/tty", 5 << 8), ("/dev/console", (5 << 8) | 1)] {
        let fd = sys::open(path, O_WRONLY | O_TRUNC, 0)
            .map_err(|e| format!("open {path} O_TRUNC: {}", e.message()))?;
        let wrote = sys::write(fd, b"");
        let termios = sys::termios(fd);
        let st = sys::fstat(fd);
        let seek = sys::lseek(fd, 0, SEEK_SET);
        sys::close(fd).ok();
        ensure!(wrote == Ok(0), "{path}: write {wrote:?}");
        ensure!(termios.is_ok(), "{path}: TCGETS {:?}", termios.err());
        let st = st.map_err(|e| e.message())?;
        ensure!(
            st.st_mode & S_IFMT == S_IFCHR && st.st_rdev == rdev,
            "{path}: mode {:#o} rdev {:#x}",
            st.st_mode,
            st.st_rdev
        );
        expect_err(&format!("lseek {path}"), seek, Errno::ESPIPE)?;
    }
    Ok(())
}

/// A read of the terminal through a descriptor opened with O_NONBLOCK,
/// with nothing typed, is EAGAIN, as on Linux; it used to sleep until a
/// line came (bash and readline open /dev/tty so). The same file read
/// without the flag is not asked here: nothing would ever be typed.
pub(super) fn a_nonblocking_terminal_read_with_nothing_typed_is_eagain() -> Outcome {
    use abi::types::{O_NONBLOCK, O_RDWR};
    for path in ["/dev/tty", "/dev/console"] {
        let fd = sys::open(path, O_RDWR | O_NONBLOCK, 0)
            .map_err(|e| format!("open {path}: {}", e.message()))?;
        let mut byte = [0u8; 1];
        let got = sys::read(fd, &mut byte);
        sys::close(fd).ok();
        expect_err(&format!("read {path}"), got, Errno::EAGAIN)?;
    }
    Ok(())
}

/// Writes a file until memory runs out: ENOSPC, and an earlier file keeps
/// every byte; deleting the big one gives its memory back.
pub(super) fn a_full_ramfs_is_enospc_and_loses_nothing() -> Outcome {
    let pattern: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
    let keep =
        sys::open("/keep.txt", O_CREAT | O_WRONLY | O_TRUNC, 0o644).map_err(|e| e.message())?;
    sys::write_all(keep, &pattern).map_err(|e| e.message())?;
    let _ = sys::close(keep);
    // This process's own buffers come first: its heap, which never
    // shrinks, must not grow between the two counts.
    let chunk = vec![0xa5u8; 1 << 20];
    let mut back = vec![0u8; pattern.len() + 1];
    let in_use_before = frames_in_use();
    let big =
        sys::open("/big.bin", O_CREAT | O_WRONLY | O_TRUNC, 0o644).map_err(|e| e.message())?;
    let mut total = 0u64;
    let error = loop {
        match sys::write(big, &chunk) {
            Ok(n) => total += n as u64,
            Err(e) => break e,
        }
        if total > 4 << 30 {
            break Errno::EFBIG; // memory cannot be that large: the limit failed
        }
    };
    let _ = sys::close(big);
    let _ = sys::unlink("/big.bin");
    let in_use_after = frames_in_use();
    let fd = sys::open("/keep.txt", O_RDONLY, 0).map_err(|e| e.message())?;
    let n = sys::read(fd, &mut back).map_err(|e| e.message())?;
    let _ = sys::close(fd);
    let _ = sys::unlink("/keep.txt");
    ensure!(
        error == Errno::ENOSPC,
        "the write that did not fit failed with {}",
        error.name()
    );
    ensure!(total >= 64 << 20, "only {} MiB fit", total >> 20);
    ensure!(
        n == pattern.len() && back[..n] == pattern[..],
        "the earlier file changed"
    );
    ensure!(
        in_use_after == in_use_before,
        "{} frames in use before the big file, {} after deleting it",
        in_use_before,
        in_use_after
    );
    Ok(())
}

/// Extended attributes: a file in memory keeps them, as tmpfs does
/// (tests/musl/xattr.c holds the details to Linux); a `/proc` file keeps
/// none, so the calls there are EOPNOTSUPP and the list empty; a pipe's
/// `user.` names are EPERM to set and ENODATA to get, as Linux's rules
/// say before any file system is asked. Before any answer, Linux's errors
/// in Linux's order: the file first, then the flags, the name (ERANGE
/// when empty or too long) and the value's size.
pub(super) fn extended_attributes_as_on_linux() -> Outcome {
    let path = c"/tmp/xattr.txt";
    let fd =
        sys::open("/tmp/xattr.txt", O_CREAT | O_RDWR | O_TRUNC, 0o644).map_err(|e| e.message())?;
    let p = path.as_ptr() as usize;
    let name = c"user.mime_type".as_ptr() as usize;
    let value = b"text/plain";
    let (v, len) = (value.as_ptr() as usize, value.len());
    let mut buf = [0u8; 64];
    let b = buf.as_mut_ptr() as usize;
    let result = (|| {
        let set = raw(nr::SETXATTR, &[p, name, v, len, XATTR_CREATE as usize]);
        ensure!(set == Ok(0), "setxattr: {set:?}");
        let got = raw(nr::FGETXATTR, &[fd as usize, name, b, 64]);
        ensure!(got == Ok(len), "fgetxattr: {got:?}");
        ensure!(
            buf[..len] == *value,
            "fgetxattr read back {:?}",
            &buf[..len]
        );
        let listed = raw(nr::LLISTXATTR, &[p, b, 64]);
        ensure!(
            listed == Ok(15) && buf[..15] == *b"user.mime_type\0",
            "llistxattr: {listed:?}"
        );
        expect_err(
            "XATTR_CREATE again",
            raw(nr::LSETXATTR, &[p, name, v, len, XATTR_CREATE as usize]),
            Errno::EEXIST,
        )?;
        let removed = raw(nr::FREMOVEXATTR, &[fd as usize, name]);
        ensure!(removed == Ok(0), "fremovexattr: {removed:?}");
        expect_err(
            "getxattr once removed",
            raw(nr::GETXATTR, &[p, name, b, 64]),
            Errno::ENODATA,
        )?;
        expect_err(
            "XATTR_REPLACE of a name not set",
            raw(
                nr::FSETXATTR,
                &[fd as usize, name, v, len, XATTR_REPLACE as usize],
            ),
            Errno::ENODATA,
        )?;
        // A file that keeps none, and a pipe.
        let status = c"/proc/self/status".as_ptr() as usize;
        expect_err(
            "setxattr of /proc",
            raw(nr::SETXATTR, &[status, name, v, len, 0]),
            Errno::EOPNOTSUPP,
        )?;
        expect_err(
            "getxattr of /proc",
            raw(nr::GETXATTR, &[status, name, b, 64]),
            Errno::EOPNOTSUPP,
        )?;
        let listed = raw(nr::LISTXATTR, &[status, b, 64]);
        ensure!(
            listed == Ok(0),
            "listxattr of /proc: {listed:?}, not an empty list"
        );
        let (r, w) = sys::pipe().map_err(|e| e.message())?;
        let on_pipe = (
            raw(nr::FSETXATTR, &[r as usize, name, v, len, 0]),
            raw(nr::FGETXATTR, &[r as usize, name, b, 64]),
        );
        let _ = (sys::close(r), sys::close(w));
        ensure!(
            on_pipe == (Err(Errno::EPERM), Err(Errno::ENODATA)),
            "a pipe's user. name: {on_pipe:?}"
        );
        let missing = c"/no/such/file".as_ptr() as usize;
        expect_err(
            "getxattr of no file",
            raw(nr::GETXATTR, &[missing, name, b, 64]),
            Errno::ENOENT,
        )?;
        expect_err(
            "listxattr of no file",
            raw(nr::LISTXATTR, &[missing, b, 64]),
            Errno::ENOENT,
        )?;
        expect_err(
            "fgetxattr of a closed fd",
            raw(nr::FGETXATTR, &[999, name, b, 64]),
            Errno::EBADF,
        )?;
        expect_err(
            "setxattr flag 4",
            raw(nr::SETXATTR, &[p, name, v, len, 4]),
            Errno::EINVAL,
        )?;
        let empty = c"".as_ptr() as usize;
        expect_err(
            "an empty name",
            raw(nr::GETXATTR, &[p, empty, b, 64]),
            Errno::ERANGE,
        )?;
        let long = [b'u'; XATTR_NAME_MAX + 2];
        let mut long = long.to_vec();
        *long.last_mut().unwrap() = 0;
        let long = long.as_ptr() as usize;
        expect_err(
            "a name of 256 bytes",
            raw(nr::SETXATTR, &[p, long, v, len, 0]),
            Errno::ERANGE,
        )?;
        let too_big = XATTR_SIZE_MAX + 1;
        expect_err(
            "a value past 64 KiB",
            raw(nr::SETXATTR, &[p, name, v, too_big, 0]),
            Errno::E2BIG,
        )?;
        expect_err(
            "an unreadable value",
            raw(nr::SETXATTR, &[p, name, 8, len, 0]),
            Errno::EFAULT,
        )?;
        expect_err(
            "an unreadable name",
            raw(nr::GETXATTR, &[p, 8, b, 64]),
            Errno::EFAULT,
        )
    })();
    let _ = sys::close(fd);
    let _ = sys::unlink("/tmp/xattr.txt");
    result
}
