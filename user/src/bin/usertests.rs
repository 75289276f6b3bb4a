//! /bin/usertests: the kernel checked from the outside, as xv6's usertests.
//!
//! Every test runs in its own child process, so a test that crashes fails
//! alone. Each prints one line, `usertest: ok NAME` or `usertest: FAIL NAME:
//! why`, which `cargo xtask test` counts. The last test compares free
//! physical frames (plus what the kernel heap holds) with the count before
//! the first: every frame a test used must have come back.
//!
//! `usertests NAME...` runs only the named tests.

#![no_std]
#![no_main]

extern crate alloc;

use abi::sys as nr;
use abi::types::*;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use libc_lite::signal::Handler;
use libc_lite::{Errno, println, sys};

libc_lite::entry!(run);

use user::ensure;
use user::harness::{Outcome, Test, child_status, expect_err};
use user::probe::{open_files, send_descriptor};

/// A system call with raw arguments, for handing the kernel bad pointers.
fn raw(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: these calls pass deliberately bad pointers; the kernel must
    // refuse them, which is what the tests check.
    Errno::from_return(unsafe { libc_lite::syscall::syscall(number, args) })
}

fn fork_exec_wait() -> Outcome {
    let ok = user::run("/bin/true", &["true"]).map_err(|e| e.message())?;
    ensure!(sys::exited(ok) == Some(0), "true gave status {ok:#x}");
    let bad = user::run("/bin/false", &["false"]).map_err(|e| e.message())?;
    ensure!(sys::exited(bad) == Some(1), "false gave status {bad:#x}");
    let echo = user::run("/bin/echo", &["echo", "-n", ""]).map_err(|e| e.message())?;
    ensure!(sys::exited(echo) == Some(0), "echo gave status {echo:#x}");
    Ok(())
}

fn exit_status_encoding() -> Outcome {
    let status = child_status(|| 42)?;
    ensure!(
        status == 42 << 8,
        "raw status {status:#x}, want {:#x}",
        42 << 8
    );
    ensure!(sys::exited(status) == Some(42), "exit code");
    let status = child_status(|| 256 + 7)?;
    ensure!(
        sys::exited(status) == Some(7),
        "exit code is taken modulo 256, got {status:#x}"
    );
    Ok(())
}

fn wait_nohang_and_echild() -> Outcome {
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let _ = sys::close(w);
        let mut b = [0u8; 1];
        let _ = sys::read(r, &mut b);
        sys::exit(3);
    }
    let _ = sys::close(r);
    let got = sys::wait4(pid as i32, WNOHANG).map_err(|e| e.message())?;
    ensure!(
        got.0 == 0,
        "WNOHANG returned {got:?} while the child was blocked"
    );
    let _ = sys::close(w);
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    ensure!(sys::exited(status) == Some(3), "status {status:#x}");
    expect_err("wait with no children", sys::wait4(-1, 0), Errno::ECHILD)?;
    expect_err("wait for a stranger", sys::wait4(1, 0), Errno::ECHILD)
}

fn orphan_reparented_to_init() -> Outcome {
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let status = child_status(|| {
        if sys::fork() == Ok(0) {
            for _ in 0..200 {
                if sys::getppid() == 1 {
                    let _ = sys::write(w, b"1");
                    sys::exit(0);
                }
                let _ = sys::nanosleep(10_000_000);
            }
            let _ = sys::write(w, b"0");
            sys::exit(1);
        }
        0
    })?;
    ensure!(
        sys::exited(status) == Some(0),
        "middle child status {status:#x}"
    );
    let _ = sys::close(w);
    let mut b = [0u8; 1];
    let n = sys::read(r, &mut b).map_err(|e| e.message())?;
    let _ = sys::close(r);
    ensure!(
        n == 1 && b[0] == b'1',
        "grandchild never saw init (pid 1) as its parent"
    );
    Ok(())
}

static mut GLOBAL: u64 = 1;

fn cow_isolation() -> Outcome {
    let mut heap = vec![7u8; 3 * 4096];
    let mut stack = [5u64; 64];
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        // The child writes everything, then tells the parent to look.
        // SAFETY: single-threaded; this is the child's own copy.
        unsafe { GLOBAL = 99 };
        heap.fill(9);
        stack[10] = 77;
        // SAFETY: as above.
        let ok = unsafe { GLOBAL } == 99 && heap.iter().all(|&b| b == 9) && stack[10] == 77;
        let _ = sys::write(w, b"x");
        sys::exit(if ok { 0 } else { 1 });
    }
    let mut b = [0u8; 1];
    let _ = sys::read(r, &mut b);
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    ensure!(
        sys::exited(status) == Some(0),
        "child did not see its own writes"
    );
    // SAFETY: single-threaded read of our copy.
    let global = unsafe { GLOBAL };
    ensure!(
        global == 1,
        "child's write to a global leaked into the parent ({global})"
    );
    ensure!(
        heap.iter().all(|&b| b == 7),
        "child's heap writes leaked into the parent"
    );
    ensure!(stack[10] == 5, "child's stack write leaked into the parent");
    // And the other way: the parent writes after fork, the child must not see it.
    let status = child_status(|| {
        let _ = sys::nanosleep(20_000_000);
        // SAFETY: single-threaded read.
        if unsafe { GLOBAL } == 1 { 0 } else { 1 }
    });
    // SAFETY: single-threaded write (the child has its own copy by now).
    unsafe { GLOBAL = 2 };
    ensure!(
        sys::exited(status?) == Some(0),
        "parent's write after fork leaked into the child"
    );
    Ok(())
}

/// The caller's voluntary context switches so far (getrusage's ru_nvcsw).
fn voluntary_switches() -> i64 {
    let mut usage = Rusage::default();
    let _ = raw(
        nr::GETRUSAGE,
        &[RUSAGE_SELF as usize, &mut usage as *mut Rusage as usize],
    );
    usage.counters[RU_NVCSW]
}

/// A thread in poll sleeps until one of *its* files changes: another pipe
/// busy beside it does not wake it (each pipe, socket and the terminal has
/// its own queue of pollers; with one queue for all, this poller woke and
/// looked again at every one of the 200 writes).
fn poll_sleeps_through_other_pipes() -> Outcome {
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

fn pipe_transfers_data_and_eof() -> Outcome {
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

fn pipe_without_readers_is_epipe() -> Outcome {
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

fn files_create_write_read_rename_unlink() -> Outcome {
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

fn file_errors_match_linux() -> Outcome {
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

fn getdents_lists_a_directory() -> Outcome {
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

fn cwd_and_chdir() -> Outcome {
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

/// Addresses no call may touch: NULL, the kernel half, unmapped user
/// memory, and a range running past the top of user space.
const BAD: [(usize, &str); 5] = [
    (0, "NULL"),
    (0xffff_8000_0000_0000, "kernel half"),
    (0xffff_ffff_8000_0000, "kernel text"),
    (0x0000_1000_0000_0000, "unmapped"),
    (0x0000_7fff_ffff_fff0, "wraps past user top"),
];

fn bad_pointers_are_efault() -> Outcome {
    let text = bad_pointers_are_efault as *const () as usize;
    let file = sys::open("/bin/true", O_RDONLY, 0).map_err(|e| e.message())?;
    let path = c"/bin/true".as_ptr() as usize;
    let mut checks: Vec<(String, Result<usize, Errno>)> = Vec::new();
    for (bad, what) in BAD {
        let mut check = |call: &str, r| checks.push((format!("{call}({what})"), r));
        check("read", raw(nr::READ, &[file as usize, bad, 64]));
        check("write", raw(nr::WRITE, &[1, bad, 64]));
        check("open", raw(nr::OPEN, &[bad, 0, 0]));
        check("stat path", raw(nr::STAT, &[bad, 0]));
        check("stat buf", raw(nr::STAT, &[path, bad]));
        check("fstat", raw(nr::FSTAT, &[file as usize, bad]));
        check("pipe", raw(nr::PIPE, &[bad]));
        check("execve", raw(nr::EXECVE, &[bad, 0, 0]));
        check("execve argv", raw(nr::EXECVE, &[path, bad, 0]));
        check("uname", raw(nr::UNAME, &[bad]));
        check("clock_gettime", raw(nr::CLOCK_GETTIME, &[1, bad]));
        check("nanosleep", raw(nr::NANOSLEEP, &[bad, 0]));
        check("getcwd", raw(nr::GETCWD, &[bad, 64]));
        check("mkdir", raw(nr::MKDIR, &[bad, 0]));
        check("chdir", raw(nr::CHDIR, &[bad]));
        check("kinfo", raw(nr::KINFO, &[bad]));
        check("proclist", raw(nr::PROCLIST, &[bad, 4]));
    }
    // Read into read-only memory (our own text) is EFAULT too.
    checks.push((
        "read(text)".into(),
        raw(nr::READ, &[file as usize, text, 16]),
    ));
    let _ = sys::close(file);
    for (what, result) in checks {
        ensure!(
            result == Err(Errno::EFAULT),
            "{what} gave {result:?}, want EFAULT"
        );
    }
    // A bad status pointer on wait4 must not lose the child.
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        sys::exit(5);
    }
    expect_err(
        "wait4(bad status)",
        raw(nr::WAIT4, &[pid as usize, 0xffff_8000_0000_0000, 0, 0]),
        Errno::EFAULT,
    )?;
    let status = sys::waitpid(pid as i32)
        .map_err(|e| format!("child lost after EFAULT: {}", e.message()))?;
    ensure!(sys::exited(status) == Some(5), "status {status:#x}");
    // A pipe's data survives a read into a bad buffer.
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    sys::write_all(w, b"kept").map_err(|e| e.message())?;
    expect_err(
        "read(pipe, bad)",
        raw(nr::READ, &[r as usize, 0, 4]),
        Errno::EFAULT,
    )?;
    let mut b = [0u8; 4];
    let n = sys::read(r, &mut b).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    ensure!(&b[..n] == b"kept", "pipe data lost after EFAULT");
    Ok(())
}

/// Sockets: only the Unix domain is here (AF_INET and AF_INET6 are
/// EAFNOSUPPORT: no network), every pointer a socket call takes is checked
/// (EFAULT), and a message a bad receive buffer refused is still there.
fn sockets_unix_only_and_bad_pointers() -> Outcome {
    use abi::socket::*;
    let stream = SOCK_STREAM as usize;
    for (family, what) in [(AF_INET, "AF_INET"), (AF_INET6, "AF_INET6")] {
        expect_err(
            &format!("socket({what})"),
            raw(nr::SOCKET, &[family as usize, stream, 0]),
            Errno::EAFNOSUPPORT,
        )?;
    }
    let mut sv = [0i32; 2];
    expect_err(
        "socketpair(AF_INET)",
        raw(
            nr::SOCKETPAIR,
            &[AF_INET as usize, stream, 0, sv.as_mut_ptr() as usize],
        ),
        Errno::EAFNOSUPPORT,
    )?;
    raw(
        nr::SOCKETPAIR,
        &[AF_UNIX as usize, stream, 0, sv.as_mut_ptr() as usize],
    )
    .map_err(|e| format!("socketpair: {}", e.message()))?;
    let (a, b) = (sv[0] as usize, sv[1] as usize);
    let mut len = 110u32;
    let len_ptr = &mut len as *mut u32 as usize;
    let mut checks: Vec<(String, Result<usize, Errno>)> = Vec::new();
    for (bad, what) in BAD {
        let mut check = |call: &str, r| checks.push((format!("{call}({what})"), r));
        check("socketpair", raw(nr::SOCKETPAIR, &[1, stream, 0, bad]));
        check("bind", raw(nr::BIND, &[a, bad, 110]));
        check("connect", raw(nr::CONNECT, &[a, bad, 110]));
        let nosignal = MSG_NOSIGNAL as usize;
        check("sendto", raw(nr::SENDTO, &[a, bad, 4, nosignal, 0, 0]));
        check("sendmsg", raw(nr::SENDMSG, &[a, bad, 0]));
        check("recvmsg", raw(nr::RECVMSG, &[b, bad, 0]));
        check("getsockname", raw(nr::GETSOCKNAME, &[a, bad, len_ptr]));
        check("getsockname len", raw(nr::GETSOCKNAME, &[a, len_ptr, bad]));
        let (level, name) = (SOL_SOCKET as usize, SO_TYPE as usize);
        check(
            "getsockopt",
            raw(nr::GETSOCKOPT, &[a, level, name, bad, len_ptr]),
        );
        check("setsockopt", raw(nr::SETSOCKOPT, &[a, level, name, bad, 4]));
    }
    // The message waits out a receive into a bad buffer.
    sys::write_all(sv[0], b"kept").map_err(|e| e.message())?;
    let iov = [0u64, 4];
    let msg = MsgHdr {
        msg_iov: iov.as_ptr() as u64,
        msg_iovlen: 1,
        ..MsgHdr::default()
    };
    checks.push((
        "recvmsg(iov NULL)".into(),
        raw(nr::RECVMSG, &[b, &msg as *const MsgHdr as usize, 0]),
    ));
    let mut got = [0u8; 4];
    let n = sys::read(sv[1], &mut got).map_err(|e| e.message())?;
    let _ = sys::close(sv[0]);
    let _ = sys::close(sv[1]);
    for (what, result) in checks {
        ensure!(
            result == Err(Errno::EFAULT),
            "{what} gave {result:?}, want EFAULT"
        );
    }
    ensure!(&got[..n] == b"kept", "the message was lost after EFAULT");
    Ok(())
}

/// Descriptors passed over a socket and never received close with the
/// socket that held them: a receiver that exits without reading them, and
/// a socket whose peer holds its descriptor. The system's count of
/// open files (`/proc/sys/fs/file-nr`) is back where it was.
fn descriptors_in_flight_are_closed() -> Outcome {
    use abi::socket::*;
    let before = open_files()?;
    let mut sv = [0i32; 2];
    let pair = |sv: &mut [i32; 2]| {
        let args = [
            AF_UNIX as usize,
            SOCK_DGRAM as usize,
            0,
            sv.as_mut_ptr() as usize,
        ];
        raw(nr::SOCKETPAIR, &args).map_err(|e| format!("socketpair: {}", e.message()))
    };
    pair(&mut sv)?;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        sys::exit(0); // never receives
    }
    for passed in [r, w, w] {
        send_descriptor(sv[0], passed).map_err(|e| format!("sendmsg: {}", e.message()))?;
    }
    sys::waitpid(pid as i32).map_err(|e| e.message())?;
    for fd in [r, w, sv[0], sv[1]] {
        let _ = sys::close(fd);
    }
    // A socket's own descriptor sent to its peer: closing the peer frees
    // it. (One sent into its own queue would keep itself alive: Linux
    // collects such rings, this kernel does not; see fs/socket.rs.)
    pair(&mut sv)?;
    send_descriptor(sv[0], sv[0]).map_err(|e| e.message())?;
    let _ = sys::close(sv[0]);
    let _ = sys::close(sv[1]);
    let after = open_files()?;
    ensure!(
        after == before,
        "open files: {before} before, {after} after"
    );
    Ok(())
}

/// System V IPC with bad pointers: EFAULT each time, and nothing lost: a
/// message whose receive buffer was bad stays queued (Linux drops it).
fn sysv_ipc_bad_pointers_lose_nothing() -> Outcome {
    use abi::ipc::*;
    const KERNEL: usize = 0xffff_8000_0000_0000;
    let q = raw(nr::MSGGET, &[IPC_PRIVATE as usize, 0o600]).map_err(|e| e.message())?;
    let mut msg = [0u8; 16];
    msg[..8].copy_from_slice(&7i64.to_ne_bytes());
    msg[8..13].copy_from_slice(b"hello");
    let good = msg.as_mut_ptr() as usize;
    raw(nr::MSGSND, &[q, good, 5, 0]).map_err(|e| e.message())?;
    let s = raw(nr::SEMGET, &[IPC_PRIVATE as usize, 2, 0o600]).map_err(|e| e.message())?;
    let m = raw(nr::SHMGET, &[IPC_PRIVATE as usize, 4096, 0o600]).map_err(|e| e.message())?;
    for bad in [8, KERNEL, usize::MAX - 4] {
        let calls: [(&str, usize, [usize; 5]); 9] = [
            ("msgsnd", nr::MSGSND, [q, bad, 5, 0, 0]),
            ("msgrcv", nr::MSGRCV, [q, bad, 16, 0, IPC_NOWAIT as usize]),
            (
                "msgctl IPC_STAT",
                nr::MSGCTL,
                [q, IPC_STAT as usize, bad, 0, 0],
            ),
            (
                "msgctl IPC_SET",
                nr::MSGCTL,
                [q, IPC_SET as usize, bad, 0, 0],
            ),
            ("semop", nr::SEMOP, [s, bad, 1, 0, 0]),
            ("semtimedop timeout", nr::SEMTIMEDOP, [s, good, 1, bad, 0]),
            ("semctl GETALL", nr::SEMCTL, [s, 0, GETALL as usize, bad, 0]),
            ("semctl SETALL", nr::SEMCTL, [s, 0, SETALL as usize, bad, 0]),
            (
                "shmctl IPC_STAT",
                nr::SHMCTL,
                [m, IPC_STAT as usize, bad, 0, 0],
            ),
        ];
        for (what, number, args) in calls {
            expect_err(
                &format!("{what}({bad:#x})"),
                raw(number, &args),
                Errno::EFAULT,
            )?;
        }
    }
    let mut ds = [0u8; 120];
    let stat = ds.as_mut_ptr() as usize;
    raw(nr::MSGCTL, &[q, IPC_STAT as usize, stat]).map_err(|e| e.message())?;
    let queued = u64::from_ne_bytes(ds[80..88].try_into().expect("8 bytes"));
    ensure!(
        queued == 1,
        "{queued} messages queued after the bad receives"
    );
    let mut out = [0u8; 16];
    let got = raw(nr::MSGRCV, &[q, out.as_mut_ptr() as usize, 8, 7, 0]).map_err(|e| e.message())?;
    ensure!(
        &out[8..8 + got] == b"hello",
        "received {:?}",
        &out[8..8 + got]
    );
    for (number, id) in [(nr::MSGCTL, q), (nr::SEMCTL, s), (nr::SHMCTL, m)] {
        let args = if number == nr::SEMCTL {
            [id, 0, IPC_RMID as usize]
        } else {
            [id, IPC_RMID as usize, 0]
        };
        raw(number, &args).map_err(|e| e.message())?;
    }
    Ok(())
}

/// A shared memory segment removed while attached keeps its pages for
/// its attachments (a forked child's too) and gives every frame back when
/// the last goes; a process killed while holding SEM_UNDO adjustments has
/// them applied.
fn sysv_memory_and_undo_go_at_the_end() -> Outcome {
    use abi::ipc::*;
    let before = frames_in_use();
    let pages = 64;
    let id =
        raw(nr::SHMGET, &[IPC_PRIVATE as usize, pages * 4096, 0o600]).map_err(|e| e.message())?;
    let at = raw(nr::SHMAT, &[id, 0, 0]).map_err(|e| e.message())?;
    for i in 0..pages {
        // SAFETY: inside the fresh attachment.
        unsafe { core::ptr::write_volatile((at + i * 4096) as *mut u8, i as u8) };
    }
    let used = frames_in_use().saturating_sub(before);
    ensure!(
        used >= pages as u64,
        "{used} frames for {pages} touched pages"
    );
    raw(nr::SHMCTL, &[id, IPC_RMID as usize, 0]).map_err(|e| e.message())?;
    let status = child_status(|| {
        // SAFETY: the child inherited the attachment.
        let seen = unsafe { core::ptr::read_volatile((at + 5 * 4096) as *const u8) };
        i32::from(seen)
    })?;
    ensure!(sys::exited(status) == Some(5), "the child read {status:#x}");
    raw(nr::SHMDT, &[at]).map_err(|e| e.message())?;
    expect_err(
        "IPC_STAT after the last shmdt",
        raw(nr::SHMCTL, &[id, IPC_STAT as usize, 0]),
        Errno::EINVAL,
    )?;
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 8, "{left} frames still in use after the last detach");

    let s = raw(nr::SEMGET, &[IPC_PRIVATE as usize, 1, 0o600]).map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let up = abi::ipc::SemBuf {
            sem_num: 0,
            sem_op: 2,
            sem_flg: SEM_UNDO,
        };
        let _ = raw(nr::SEMOP, &[s, &up as *const _ as usize, 1]);
        let _ = libc_lite::signal::pause();
        sys::exit(0);
    }
    let value = || raw(nr::SEMCTL, &[s, 0, GETVAL as usize]).unwrap_or(99);
    // Waited for by the clock, not by a count of yields: on several CPUs a
    // yield with nothing else to run on this CPU returns at once, and the
    // child may not have started yet on another.
    let start = sys::monotonic_nanos();
    while value() != 2 && sys::monotonic_nanos() - start < 10_000_000_000 {
        sys::sched_yield();
    }
    let raised = value();
    sys::kill(pid as i32, SIGKILL).map_err(|e| e.message())?;
    sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let after = value();
    raw(nr::SEMCTL, &[s, 0, IPC_RMID as usize]).map_err(|e| e.message())?;
    ensure!(raised == 2, "the child's semop gave {raised} in 10 s");
    ensure!(after == 0, "value {after} after the killed child's undo");
    Ok(())
}

/// A file truncated up to the largest size has no blocks: st_blocks
/// counts the pages that have a frame (the fuzzer found fstat computing
/// the blocks from the size, which overflowed at i64::MAX and panicked).
fn a_huge_sparse_file_has_no_blocks() -> Outcome {
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

fn fd_exhaustion_is_emfile() -> Outcome {
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

fn fork_until_eagain() -> Outcome {
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let mut children = Vec::new();
    let end = loop {
        match sys::fork() {
            Ok(0) => {
                let _ = sys::close(w);
                let mut b = [0u8; 1];
                let _ = sys::read(r, &mut b);
                sys::exit(0);
            }
            Ok(pid) => children.push(pid),
            Err(e) => break e,
        }
        if children.len() > 1000 {
            break Errno::EINVAL;
        }
    };
    let _ = sys::close(w);
    let _ = sys::close(r);
    for pid in &children {
        let _ = sys::waitpid(*pid as i32);
    }
    ensure!(
        end == Errno::EAGAIN,
        "fork ended with {} after {} children",
        end.name(),
        children.len()
    );
    ensure!(children.len() >= 20, "only {} children", children.len());
    Ok(())
}

fn brk_until_enomem() -> Outcome {
    let start = sys::brk(0);
    let step = 16 << 20;
    let mut top = start;
    loop {
        let want = top + step;
        let got = sys::brk(want);
        if got != want {
            ensure!(got == top, "a failed brk moved the break to {got:#x}");
            break;
        }
        // SAFETY: [top, want) was just given to us by brk.
        unsafe { core::ptr::write_volatile((want - 8) as *mut u64, 1) };
        top = want;
    }
    ensure!(
        top - start >= 64 << 20,
        "brk stopped after only {} MiB",
        (top - start) >> 20
    );
    ensure!(sys::brk(start) == start, "shrinking the break back");
    Ok(())
}

/// Runs `access` in a child, which must die of SIGSEGV; `what` names the
/// access in the failure.
fn dies_of_sigsegv(what: &str, access: impl FnOnce()) -> Outcome {
    let status = child_status(|| {
        access();
        0
    })?;
    ensure!(
        sys::signaled(status) == Some(SIGSEGV),
        "{what} gave status {status:#x}"
    );
    Ok(())
}

fn mmap_munmap_mprotect() -> Outcome {
    let len = 1 << 20;
    let p = sys::mmap_anon(len, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    // SAFETY: p..p+len is our fresh mapping.
    unsafe {
        for i in (0..len).step_by(4096) {
            ensure!(*p.add(i) == 0, "mmap memory not zeroed");
            *p.add(i) = i as u8 | 1;
        }
        ensure!(*p.add(4096) == 1, "read back");
    }
    sys::munmap(p, len).map_err(|e| e.message())?;
    dies_of_sigsegv("touching unmapped memory", || {
        // SAFETY: none: the page is gone and this must fault.
        unsafe { core::ptr::read_volatile(p) };
    })?;
    let q = sys::mmap_anon(8192, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    sys::mprotect(q, 8192, PROT_READ).map_err(|e| e.message())?;
    dies_of_sigsegv("writing read-only memory", || {
        // SAFETY: none: the page is read-only and this must fault.
        unsafe { core::ptr::write_volatile(q, 1) };
    })?;
    let _ = sys::munmap(q, 8192);
    expect_err(
        "mmap of length 0",
        sys::mmap_anon(0, PROT_READ),
        Errno::EINVAL,
    )?;
    expect_err(
        "munmap unaligned",
        sys::munmap(0x1001 as *mut u8, 4096),
        Errno::EINVAL,
    )
}

/// A mapping takes frames only as its pages are touched, by the program or
/// by the kernel copying into it.
fn mmap_pages_come_on_demand() -> Outcome {
    let before = frames_in_use();
    let len = 64 << 20;
    let p = sys::mmap_anon(len, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    let mapped = frames_in_use().saturating_sub(before);
    ensure!(mapped < 16, "64 MiB mapped took {mapped} frames");
    // SAFETY: p..p+len is our fresh mapping.
    unsafe {
        ensure!(*p.add(len / 2) == 0, "a page read first is not zero");
        *p.add(len - 1) = 7;
    }
    // The kernel's copy into a page not touched yet fills it too.
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    sys::write_all(w, b"on demand").map_err(|e| e.message())?;
    // SAFETY: 9 bytes inside the mapping, in a page nothing touched.
    let dst = unsafe { core::slice::from_raw_parts_mut(p.add(8192), 9) };
    let n = sys::read(r, dst).map_err(|e| e.message())?;
    ensure!(dst[..n] == *b"on demand", "read into a fresh page");
    let _ = (sys::close(r), sys::close(w));
    let used = frames_in_use().saturating_sub(before);
    ensure!(
        (3..16).contains(&used),
        "three pages touched took {used} frames"
    );
    sys::munmap(p, len).map_err(|e| e.message())?;
    // What stays are page tables, kept until the address space goes.
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 8, "{left} frames left after munmap");
    Ok(())
}

/// The kernel copies first and checks only where a copy stops
/// (mm/uaccess.rs): a stop at a page not there yet fills it, at a
/// copy-on-write page gives the writer its own copy, and anywhere the user
/// could not go is EFAULT. clock_gettime's and write's copies have no check
/// before them, so each case here goes through the fault and its fixup.
fn kernel_copies_fill_and_unshare_pages() -> Outcome {
    let err = |e: Errno| e.message();
    let clock = |at: *mut u8| raw(nr::CLOCK_GETTIME, &[CLOCK_MONOTONIC as usize, at as usize]);
    let p = sys::mmap_anon(6 * 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // Output into a page not touched yet, and across into the next one.
    clock(p.wrapping_add(4096 - 8)).map_err(err)?;
    // SAFETY: inside the mapping; the call just filled these bytes.
    let secs = unsafe { (p.add(4096 - 8) as *const u64).read_unaligned() };
    let nanos = unsafe { (p.add(4096) as *const u64).read_unaligned() };
    ensure!(secs > 0 || nanos > 0, "clock_gettime wrote nothing");
    // A word that straddles a present page and one not there yet (the
    // copy moves eight bytes at a time, so the fault is at the word).
    // SAFETY: inside the mapping.
    unsafe { p.add(4 * 4096).write(1) };
    clock(p.wrapping_add(5 * 4096 - 4)).map_err(err)?;
    // Input from a page not touched yet: zeros.
    let (r, w) = sys::pipe().map_err(err)?;
    let sent = raw(
        nr::WRITE,
        &[w as usize, p.wrapping_add(2 * 4096) as usize, 16],
    );
    let mut got = [1u8; 16];
    let n = sys::read(r, &mut got).map_err(err)?;
    let _ = (sys::close(r), sys::close(w));
    ensure!(
        sent == Ok(16) && n == 16,
        "write from a fresh page: {sent:?}, read {n}"
    );
    ensure!(got == [0; 16], "a fresh page read as {got:?}");
    // Output into a page shared copy-on-write with the parent.
    // SAFETY: inside the mapping.
    unsafe { p.add(3 * 4096).write_bytes(0x5a, 16) };
    let status = child_status(|| {
        if clock(p.wrapping_add(3 * 4096)).is_err() {
            return 1;
        }
        // SAFETY: inside the child's copy of the mapping.
        if unsafe { p.add(3 * 4096).read() } == 0x5a {
            2
        } else {
            0
        }
    })?;
    ensure!(
        sys::exited(status) == Some(0),
        "the child's copy-on-write page: status {status:#x}"
    );
    // SAFETY: inside the mapping.
    let kept = unsafe { p.add(3 * 4096).read() };
    ensure!(
        kept == 0x5a,
        "the child's clock_gettime reached the parent's page"
    );
    // Where the user may not write, the copy fails: read-only, and a
    // timespec whose second half is PROT_NONE.
    sys::mprotect(p, 4096, PROT_READ).map_err(err)?;
    expect_err(
        "clock_gettime into a read-only page",
        clock(p),
        Errno::EFAULT,
    )?;
    sys::mprotect(p.wrapping_add(4096), 4096, 0).map_err(err)?;
    expect_err(
        "clock_gettime half into a PROT_NONE page",
        clock(p.wrapping_add(2 * 4096 - 8)),
        Errno::EFAULT,
    )?;
    // A write to a file from a buffer that goes bad part way writes what
    // comes before the fault, to the byte, as Linux's does.
    let _ = sys::mkdir("/ut", 0o755);
    let f = sys::open("/ut/short", O_CREAT | O_RDWR | O_TRUNC, 0o644).map_err(err)?;
    let whole = raw(nr::WRITE, &[f as usize, p as usize, 2 * 4096]);
    let straddling = raw(
        nr::WRITE,
        &[f as usize, p.wrapping_add(4096 - 3) as usize, 16],
    );
    let size = sys::fstat(f).map(|s| s.st_size);
    let _ = (sys::close(f), sys::unlink("/ut/short"));
    ensure!(size == Ok(4099), "the file holds {size:?} bytes, not 4099");
    ensure!(
        whole == Ok(4096) && straddling == Ok(3),
        "writes up to a PROT_NONE page: {whole:?} and {straddling:?}, not 4096 and 3"
    );
    sys::munmap(p, 6 * 4096).map_err(|e| e.message().into())
}

/// A shared mapping of a file maps the file's own frames: a store is what
/// `pread` returns. Stores into the last page past the file's end are not
/// the file's: when the file grows over them it reads zeros (Linux leaves
/// them there on some file systems; POSIX says zeros). Once unmapped,
/// closed and unlinked, every frame of the file comes back.
fn mapped_file_stores_and_the_end_of_the_file() -> Outcome {
    let before = frames_in_use();
    let path = "/tmp/usertests-mapped";
    let fd = sys::open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644).map_err(|e| e.message())?;
    sys::write_all(fd, &[b'a'; 100]).map_err(|e| e.message())?;
    let page = 4096;
    let prot = (PROT_READ | PROT_WRITE) as usize;
    let p = raw(
        nr::MMAP,
        &[0, page, prot, MAP_SHARED as usize, fd as usize, 0],
    )
    .map_err(|e| e.message())? as *mut u8;
    // SAFETY: p..p+page is the fresh mapping of the file's first page.
    unsafe {
        *p.add(10) = b'M';
        *p.add(200) = b'X'; // past the end of the 100-byte file
    }
    let pread = |at: usize| -> Result<u8, String> {
        let mut byte = [0xffu8];
        let n = raw(
            nr::PREAD64,
            &[fd as usize, byte.as_mut_ptr() as usize, 1, at],
        )
        .map_err(|e| e.message())?;
        Ok(if n == 1 { byte[0] } else { 0xee })
    };
    ensure!(
        pread(10)? == b'M',
        "a store through the mapping is the file's"
    );
    ensure!(pread(200)? == 0xee, "the file has no byte 200 yet");
    sys::ftruncate(fd, 300).map_err(|e| e.message())?;
    let grown = pread(200)?;
    ensure!(
        grown == 0,
        "byte 200 after growing the file is {grown:#x}, not 0"
    );
    // SAFETY: still mapped.
    let seen = unsafe { *p.add(200) };
    ensure!(
        seen == 0,
        "the mapping sees {seen:#x} at byte 200, not the file's 0"
    );
    sys::munmap(p, page).map_err(|e| e.message())?;
    sys::close(fd).map_err(|e| e.message())?;
    sys::unlink(path).map_err(|e| e.message())?;
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 8, "{left} frames left after unmapping and deleting");
    Ok(())
}

/// Mappings may promise more than there is (each one alone fits); the
/// process that touches past the end dies of SIGKILL, and every frame it
/// had comes back.
fn out_of_memory_at_a_fault_kills_only_the_toucher() -> Outcome {
    let before = frames_in_use();
    let status = child_status(|| {
        // 2 GiB promised in all, four times the machine's memory.
        let chunk = 64 << 20;
        let mut chunks = Vec::new();
        for _ in 0..32 {
            match sys::mmap_anon(chunk, PROT_READ | PROT_WRITE) {
                Ok(p) => chunks.push(p),
                Err(_) => return 2,
            }
        }
        for p in chunks {
            for i in (0..chunk).step_by(4096) {
                // SAFETY: inside the fresh mapping.
                unsafe { core::ptr::write_volatile(p.add(i), 1) };
            }
        }
        3
    })?;
    ensure!(sys::signaled(status) == Some(SIGKILL), "status {status:#x}");
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 16, "{left} frames still in use after the child died");
    Ok(())
}

extern "C" fn spin_until_killed(_: usize) {
    loop {
        core::hint::spin_loop();
    }
}

/// When wait4 hands back a child, everything the child had is back: its
/// memory, and the kernel stacks of its threads, which on several CPUs
/// the threads' last CPUs free a moment after the child became a zombie.
/// Half the rounds reap with WNOHANG in a loop, as a SIGCHLD handler does.
fn a_reaped_child_has_given_back_every_frame() -> Outcome {
    let child = || {
        // A second thread still running when the process exits.
        match libc_lite::thread::spawn(spin_until_killed, 0) {
            Ok(thread) => core::mem::forget(thread),
            Err(_) => return 2,
        }
        sys::sched_yield();
        0
    };
    // The first round lets this process's own tables and heap settle.
    child_status(child)?;
    let before = frames_in_use();
    for round in 0..30 {
        let pid = sys::fork().map_err(|e| e.message())?;
        if pid == 0 {
            sys::exit(child());
        }
        let status = if round % 2 == 0 {
            sys::waitpid(pid as i32).map_err(|e| e.message())?
        } else {
            loop {
                match sys::wait4(pid as i32, WNOHANG).map_err(|e| e.message())? {
                    (0, _) => sys::sched_yield(),
                    (_, status) => break status,
                }
            }
        };
        ensure!(sys::exited(status) == Some(0), "status {status:#x}");
        let now = frames_in_use();
        ensure!(
            now == before,
            "round {round}: {before} frames in use before the child, {now} after reaping it"
        );
    }
    Ok(())
}

fn mremap_moves_grows_and_shrinks() -> Outcome {
    let p = sys::mmap_anon(3 * 4096, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    // SAFETY: p..p+3 pages is our fresh mapping.
    unsafe {
        for i in 0..3 {
            *p.add(i * 4096) = 10 + i as u8;
        }
    }
    expect_err(
        "growing without MREMAP_MAYMOVE",
        sys::mremap(p, 3 * 4096, 6 * 4096, false),
        Errno::ENOMEM,
    )?;
    let q = sys::mremap(p, 3 * 4096, 6 * 4096, true).map_err(|e| e.message())?;
    // SAFETY: q..q+6 pages is the moved mapping.
    unsafe {
        for i in 0..3 {
            ensure!(*q.add(i * 4096) == 10 + i as u8, "page {i} lost its data");
        }
        for i in 3..6 {
            ensure!(*q.add(i * 4096) == 0, "grown page {i} not zeroed");
            *q.add(i * 4096) = 1;
        }
    }
    if q != p {
        // SAFETY: write(1, p, 1) with p unmapped: the kernel must refuse it.
        let ret = unsafe { libc_lite::syscall::syscall(nr::WRITE, &[1, p as usize, 1]) };
        expect_err(
            "writing from the old range",
            Errno::from_return(ret),
            Errno::EFAULT,
        )?;
    }
    let r = sys::mremap(q, 6 * 4096, 4096, false).map_err(|e| e.message())?;
    ensure!(r == q, "shrinking moved the mapping");
    expect_err(
        "mremap of an unmapped range",
        sys::mremap(0x1000 as *mut u8, 4096, 8192, true),
        Errno::EFAULT,
    )?;
    expect_err(
        "mremap to length 0",
        sys::mremap(q, 4096, 0, true),
        Errno::EINVAL,
    )?;
    sys::munmap(q, 4096).map_err(|e| e.message().into())
}

/// A page of `.data` of its own, so mprotect on it touches nothing else.
#[repr(C, align(4096))]
struct DataPage([u8; 4096]);
static mut DATA_PAGE: DataPage = DataPage([1; 4096]);

/// Runs `child` in a forked child, which must exit 0, then checks that the
/// parent's byte at `p` is still `want`: whatever the child did to its
/// copy of the page, the parent's memory is its own.
fn parent_keeps(what: &str, p: *mut u8, want: u8, child: impl FnOnce() -> i32) -> Outcome {
    let status = child_status(child)?;
    ensure!(
        sys::exited(status) == Some(0),
        "{what}: child status {status:#x}"
    );
    // SAFETY: `p` is a mapped, readable page of the caller's.
    let seen = unsafe { p.read_volatile() };
    ensure!(
        seen == want,
        "{what}: the child's write reached the parent ({seen}, want {want})"
    );
    Ok(())
}

/// A child's write through `p` after mprotect(PROT_READ) and back to
/// `prot`: the page is still shared with the parent, so the write must get
/// its own copy (the copy-on-write rule in mm::paging::Space::protect).
fn write_after_reprotect(p: *mut u8, prot: u32) -> i32 {
    let reprotected = sys::mprotect(p, 4096, PROT_READ)
        .and_then(|()| sys::mprotect(p, 4096, prot))
        .is_ok();
    // SAFETY: the page is ours and was just made writable again.
    unsafe { p.write_volatile(2) };
    // SAFETY: as above.
    i32::from(!reprotected || unsafe { p.read_volatile() } != 2)
}

/// Process isolation through every path that changes a page's rights or
/// sharing after fork: mprotect R -> RW and R -> RWX of an anonymous and a
/// `.data` page, a page read-only at fork made writable later, a shared
/// page moved by mremap, and a profil buffer in such a page. The child
/// writes each time; the parent must never see it.
fn private_pages_stay_private_after_mprotect() -> Outcome {
    let err = |e: Errno| e.message();
    let anon = sys::mmap_anon(4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: a fresh page of ours.
    unsafe { anon.write_volatile(1) };
    let data = (&raw mut DATA_PAGE).cast::<u8>();
    for (what, p) in [("anonymous page", anon), (".data page", data)] {
        parent_keeps(&format!("{what}, R -> RW"), p, 1, || {
            write_after_reprotect(p, PROT_READ | PROT_WRITE)
        })?;
        parent_keeps(&format!("{what}, R -> RWX"), p, 1, || {
            write_after_reprotect(p, PROT_READ | PROT_WRITE | PROT_EXEC)
        })?;
    }
    // Read-only at fork (shared without the copy-on-write mark), made
    // writable in the child.
    sys::mprotect(anon, 4096, PROT_READ).map_err(err)?;
    parent_keeps("read-only at fork, RW in the child", anon, 1, || {
        if sys::mprotect(anon, 4096, PROT_READ | PROT_WRITE).is_err() {
            return 1;
        }
        // SAFETY: made writable just above.
        unsafe { anon.write_volatile(3) };
        0
    })?;
    sys::mprotect(anon, 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // Moved by mremap in the child, then written.
    parent_keeps("moved by mremap", anon, 1, || {
        match sys::mremap(anon, 4096, 3 * 4096, true) {
            Ok(moved) => {
                // SAFETY: the moved mapping's first page.
                unsafe { moved.write_volatile(4) };
                0
            }
            Err(_) => 1,
        }
    })?;
    // A profil buffer in a page shared with the parent: the child's bins
    // must land in the child's copy.
    let bins = sys::mmap_anon(4096, PROT_READ | PROT_WRITE).map_err(err)?;
    parent_keeps("profil buffer", bins, 0, || {
        if sys::mprotect(bins, 4096, PROT_READ)
            .and_then(|()| sys::mprotect(bins, 4096, PROT_READ | PROT_WRITE))
            .is_err()
        {
            return 1;
        }
        // SAFETY: 2048 bins in our own page, written only by the kernel
        // while profiling is on.
        let buffer = unsafe { core::slice::from_raw_parts_mut(bins.cast::<u16>(), 2048) };
        // Scale 1: every pc below 256 MiB counts into one of the first bins.
        if sys::profil(buffer, 0, 1).is_err() {
            return 1;
        }
        let start = sys::kinfo().map_or(0, |k| k.ticks);
        while sys::kinfo().map_or(u64::MAX, |k| k.ticks) < start + 20 {
            core::hint::spin_loop();
        }
        let _ = sys::profil(&mut [], 0, 0);
        // SAFETY: as above; profiling is off now.
        let counted: u64 = unsafe { core::slice::from_raw_parts(bins.cast::<u16>(), 2048) }
            .iter()
            .map(|&b| u64::from(b))
            .sum();
        i32::from(counted == 0)
    })?;
    // SAFETY: the parent's own buffer, never profiled into.
    let parent_bins = unsafe { core::slice::from_raw_parts(bins.cast::<u16>(), 2048) };
    ensure!(
        parent_bins.iter().all(|&b| b == 0),
        "profil: the child's samples reached the parent's buffer"
    );
    let _ = sys::munmap(anon, 4096);
    sys::munmap(bins, 4096).map_err(|e| e.message().into())
}

/// PROT_NONE: every access from user mode faults, every system call handed
/// the page fails with EFAULT, and the contents come back with the rights.
fn prot_none_pages_are_inaccessible() -> Outcome {
    let err = |e: Errno| e.message();
    let p = sys::mmap_anon(4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: a fresh page of ours.
    unsafe { p.write_volatile(7) };
    sys::mprotect(p, 4096, 0).map_err(err)?;
    dies_of_sigsegv("a read of a PROT_NONE page", || {
        // SAFETY: none: the page is PROT_NONE and this must fault.
        unsafe { core::ptr::read_volatile(p) };
    })?;
    dies_of_sigsegv("a write of a PROT_NONE page", || {
        // SAFETY: none: the page is PROT_NONE and this must fault.
        unsafe { p.write_volatile(1) };
    })?;
    expect_err(
        "write(2) from a PROT_NONE page",
        raw(nr::WRITE, &[1, p as usize, 1]),
        Errno::EFAULT,
    )?;
    let (r, w) = sys::pipe().map_err(err)?;
    let _ = sys::write(w, b"x");
    let into = raw(nr::READ, &[r as usize, p as usize, 1]);
    let _ = sys::close(r);
    let _ = sys::close(w);
    expect_err("read(2) into a PROT_NONE page", into, Errno::EFAULT)?;
    sys::mprotect(p, 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: readable again.
    let kept = unsafe { p.read_volatile() };
    ensure!(kept == 7, "the page came back holding {kept}, not 7");
    // mmap(PROT_NONE) reserves memory a later mprotect opens (as glibc
    // does for thread stacks).
    let q = sys::mmap_anon(2 * 4096, 0).map_err(err)?;
    dies_of_sigsegv("a read of mmap(PROT_NONE) memory", || {
        // SAFETY: none: PROT_NONE, this must fault.
        unsafe { core::ptr::read_volatile(q) };
    })?;
    sys::mprotect(q, 2 * 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: opened just above.
    unsafe {
        ensure!(q.add(4096).read_volatile() == 0, "not zeroed");
        q.add(4096).write_volatile(5);
    }
    let _ = sys::munmap(q, 2 * 4096);
    sys::munmap(p, 4096).map_err(|e| e.message().into())
}

/// munmap of the whole user half (its own text included) must end the
/// process quickly, not walk 2^35 empty pages with the kernel locked.
fn munmap_of_everything_is_quick() -> Outcome {
    let t0 = sys::monotonic_nanos();
    let status = child_status(|| {
        // SAFETY: none: the process unmaps its own code and must die of it.
        unsafe { libc_lite::syscall::syscall(nr::MUNMAP, &[0x1_0000, (1 << 47) - 0x2_0000]) };
        0
    })?;
    let took = (sys::monotonic_nanos() - t0) / 1_000_000;
    ensure!(sys::signaled(status) == Some(SIGSEGV), "status {status:#x}");
    ensure!(took < 10_000, "took {took} ms");
    let huge = sys::mmap_anon(1 << 40, PROT_READ | PROT_WRITE);
    expect_err("mmap of 1 TiB", huge, Errno::ENOMEM)
}

fn faults_kill_only_the_process() -> Outcome {
    for (kind, signal) in [
        ("null", SIGSEGV),
        ("kernel", SIGSEGV),
        ("divide", SIGFPE),
        ("opcode", SIGILL),
        ("privileged", SIGSEGV),
        ("write-text", SIGSEGV),
        ("exec-stack", SIGSEGV),
        ("stack-overflow", SIGSEGV),
    ] {
        let status = user::run("/bin/fault", &["fault", kind]).map_err(|e| e.message())?;
        ensure!(
            sys::signaled(status) == Some(signal),
            "fault {kind}: status {status:#x}, want {}",
            libc_lite::signal::name(signal)
        );
    }
    Ok(())
}

fn failed_exec_leaves_the_caller() -> Outcome {
    expect_err(
        "exec a missing file",
        Err::<(), _>(sys::execve("/nope", &["nope"], &[])),
        Errno::ENOENT,
    )?;
    expect_err(
        "exec a file without execute permission",
        Err::<(), _>(sys::execve("/etc/boot.conf", &["x"], &[])),
        Errno::EACCES,
    )?;
    let text = "/tmp/not-a-program";
    let fd = sys::open(text, O_CREAT | O_WRONLY | O_TRUNC, 0o755).map_err(|e| e.message())?;
    sys::write_all(fd, b"just text\n").map_err(|e| e.message())?;
    let _ = sys::close(fd);
    let not_elf = sys::execve(text, &["x"], &[]);
    let _ = sys::unlink(text);
    expect_err(
        "exec an executable text file",
        Err::<(), _>(not_elf),
        Errno::ENOEXEC,
    )?;
    expect_err(
        "exec a directory",
        Err::<(), _>(sys::execve("/bin", &["x"], &[])),
        Errno::EACCES,
    )?;
    let huge = "y".repeat(200 * 1024);
    expect_err(
        "exec with 200 KiB of arguments",
        Err::<(), _>(sys::execve("/bin/true", &["true", &huge], &[])),
        Errno::E2BIG,
    )?;
    // Still here, and still able to work.
    let status = user::run("/bin/true", &["true"]).map_err(|e| e.message())?;
    ensure!(sys::exited(status) == Some(0), "after failed execs");
    Ok(())
}

fn kill_ends_a_blocked_child() -> Outcome {
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let mut b = [0u8; 1];
        let _ = sys::read(r, &mut b);
        sys::exit(0);
    }
    let _ = sys::nanosleep(10_000_000);
    ensure!(sys::kill(pid as i32, 0).is_ok(), "kill 0 on a live child");
    sys::kill(pid as i32, SIGTERM).map_err(|e| e.message())?;
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    ensure!(sys::signaled(status) == Some(SIGTERM), "status {status:#x}");
    expect_err(
        "kill a missing pid",
        sys::kill(30000, SIGTERM),
        Errno::ESRCH,
    )?;
    expect_err(
        "kill with a bad signal",
        sys::kill(sys::getpid() as i32, 99),
        Errno::EINVAL,
    )
}

fn nanosleep_sleeps() -> Outcome {
    let t0 = sys::monotonic_nanos();
    sys::nanosleep(50_000_000).map_err(|e| e.message())?;
    let slept = sys::monotonic_nanos() - t0;
    ensure!(slept >= 45_000_000, "slept only {slept} ns of 50 ms");
    let bad = Timespec {
        tv_sec: 0,
        tv_nsec: 2_000_000_000,
    };
    expect_err(
        "nanosleep with tv_nsec >= 1e9",
        raw(nr::NANOSLEEP, &[&bad as *const Timespec as usize, 0]),
        Errno::EINVAL,
    )
}

fn preemption_lets_others_run() -> Outcome {
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        loop {
            core::hint::spin_loop();
        }
    }
    // Without preemption the spinning child would never give the CPU back.
    let t0 = sys::monotonic_nanos();
    let mut x = 0u64;
    while sys::monotonic_nanos() - t0 < 100_000_000 {
        x = core::hint::black_box(x + 1);
    }
    let mut rows = [ProcInfo::default(); 64];
    let n = sys::proclist(&mut rows).map_err(|e| e.message())?.min(64);
    let child_ticks = rows[..n]
        .iter()
        .find(|p| p.pid == pid)
        .map_or(0, |p| p.user_ticks);
    sys::kill(pid as i32, SIGKILL).map_err(|e| e.message())?;
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    ensure!(sys::signaled(status) == Some(SIGKILL), "status {status:#x}");
    ensure!(
        child_ticks > 0,
        "the spinning child was never charged a user tick"
    );
    Ok(())
}

/// The CPUs the kernel runs (sched_getaffinity's mask, which has them all).
fn running_cpus() -> Result<u32, String> {
    let mut mask = 0u64;
    raw(
        nr::SCHED_GETAFFINITY,
        &[0, 8, &mut mask as *mut u64 as usize],
    )
    .map_err(|e| e.message())?;
    Ok(mask.count_ones())
}

/// ps's CPU column (proclist's `cpu`, /proc/PID/stat's processor): the
/// caller's own row names the CPU getcpu says it runs on, an exited child
/// that is not yet reaped names none, and children spinning at once are
/// each on a CPU of their own (a thread runs on one CPU at a time, and
/// none is a CPU the machine lacks).
fn ps_shows_the_cpu_each_process_runs_on() -> Outcome {
    let cpus = running_cpus()?;
    let rows = || -> Result<alloc::vec::Vec<ProcInfo>, String> {
        let mut rows = [ProcInfo::default(); 64];
        let n = sys::proclist(&mut rows).map_err(|e| e.message())?.min(64);
        Ok(rows[..n].to_vec())
    };
    let me = sys::getpid();
    // The scheduler may move the caller between two looks; a look whose
    // getcpu before and after agree must agree with the row too.
    let mut agreed = false;
    for _ in 0..50 {
        let before = sys::getcpu().map_err(|e| e.message())?;
        let row = rows()?.into_iter().find(|p| p.pid == me).map(|p| p.cpu);
        let after = sys::getcpu().map_err(|e| e.message())?;
        if before == after {
            ensure!(
                row == Some(before),
                "getcpu says CPU {before}, ps's row says {row:?}"
            );
            agreed = true;
            break;
        }
    }
    ensure!(agreed, "getcpu never gave the same CPU twice in a row");
    expect_err(
        "getcpu with a bad pointer",
        raw(nr::GETCPU, &[16, 0, 0]),
        Errno::EFAULT,
    )?;

    let zombie = sys::fork().map_err(|e| e.message())?;
    if zombie == 0 {
        sys::exit(0);
    }
    // Spinners, one per CPU but this one's.
    let mut spinners = alloc::vec::Vec::new();
    for _ in 1..cpus {
        let pid = sys::fork().map_err(|e| e.message())?;
        if pid == 0 {
            loop {
                core::hint::spin_loop();
            }
        }
        spinners.push(pid);
    }
    let t0 = sys::monotonic_nanos();
    let mut zombie_row = None;
    let mut checked = 0;
    while sys::monotonic_nanos() - t0 < 300_000_000 {
        let rows = rows()?;
        zombie_row = rows.iter().find(|p| p.pid == zombie).copied();
        for p in rows.iter().filter(|p| p.state == PROC_RUNNING) {
            ensure!(
                p.cpu < cpus,
                "pid {} runs on CPU {}, of {cpus}",
                p.pid,
                p.cpu
            );
            // (A process of several threads shows its leader's CPU, which
            // another thread of it need not be on.)
            let twin = rows.iter().find(|q| {
                q.pid != p.pid
                    && q.state == PROC_RUNNING
                    && q.cpu == p.cpu
                    && p.threads == 1
                    && q.threads == 1
            });
            if let Some(q) = twin {
                return Err(format!(
                    "pids {} and {} both run on CPU {}",
                    p.pid, q.pid, p.cpu
                ));
            }
        }
        checked += 1;
    }
    for &pid in &spinners {
        sys::kill(pid as i32, SIGKILL).map_err(|e| e.message())?;
        sys::waitpid(pid as i32).map_err(|e| e.message())?;
    }
    sys::waitpid(zombie as i32).map_err(|e| e.message())?;
    ensure!(checked > 0, "ps was never read");
    let zombie_row = zombie_row.ok_or("the exited child had no row")?;
    ensure!(
        zombie_row.state == PROC_ZOMBIE && zombie_row.cpu == PROC_NO_CPU,
        "an exited child: state {}, cpu {}",
        zombie_row.state,
        zombie_row.cpu
    );
    Ok(())
}

/// kbench (call 1007): a lock measurement comes back ordered (first
/// quartile, median, third) and above zero; a shootdown needs a second CPU
/// (ENXIO on one); a bad kind, no rounds or too many are EINVAL, and a bad
/// pointer EFAULT, with nothing measured.
fn kbench_measures_and_refuses_bad_requests() -> Outcome {
    let mut out = KBench::default();
    let call =
        |what: u32, rounds: usize, out: usize| raw(nr::KBENCH, &[what as usize, rounds, out]);
    let at = &mut out as *mut KBench as usize;
    call(KBENCH_LOCK, 20, at).map_err(|e| format!("lock: {}", e.message()))?;
    ensure!(
        0 < out.q1_ps && out.q1_ps <= out.median_ps && out.median_ps <= out.q3_ps,
        "lock: {out:?}"
    );
    let shootdown = call(KBENCH_SHOOTDOWN, 5, at);
    if running_cpus()? > 1 {
        shootdown.map_err(|e| format!("shootdown: {}", e.message()))?;
        ensure!(out.median_ps > 0, "shootdown: {out:?}");
    } else {
        expect_err("a shootdown on one CPU", shootdown, Errno::ENXIO)?;
    }
    expect_err("kbench of kind 9", call(9, 5, at), Errno::EINVAL)?;
    expect_err(
        "kbench of 0 rounds",
        call(KBENCH_LOCK, 0, at),
        Errno::EINVAL,
    )?;
    expect_err(
        "kbench of too many rounds",
        call(KBENCH_LOCK, KBENCH_MAX_ROUNDS as usize + 1, at),
        Errno::EINVAL,
    )?;
    expect_err(
        "kbench into a bad pointer",
        call(KBENCH_LOCK, 5, 16),
        Errno::EFAULT,
    )
}

/// TCGETS writes Linux's 36-byte kernel `struct termios` and not a byte
/// more (glibc's buffer is exactly that size: more smashed its stack), with
/// Linux's control characters; TCSETS keeps what it is given.
fn termios_is_linux_sized() -> Outcome {
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

/// `/dev/tty` is the controlling terminal (here always the console), and
/// opening it or `/dev/console` with O_TRUNC, as a shell's `> /dev/tty`
/// does, leaves the terminal alone: that was EINVAL once.
fn dev_tty_is_the_terminal() -> Outcome {
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

/// `RLIMIT_NPROC` counts the tasks of the caller's real user and holds
/// for everyone but root, as on Linux: root forks past a limit of 1; a
/// child that became user 1000 (the only task of that user) is refused
/// (EAGAIN) until its limit is raised, and may not raise its hard limit
/// (EPERM), which root may.
fn nproc_limit_stops_fork() -> Outcome {
    let was = sys::getrlimit(RLIMIT_NPROC).map_err(|e| e.message())?;
    let one = Rlimit {
        cur: 1,
        max: was.max,
    };
    sys::setrlimit(RLIMIT_NPROC, one).map_err(|e| e.message())?;
    let status = child_status(|| 5)?;
    ensure!(
        sys::exited(status) == Some(5),
        "root's fork under a limit of 1: status {status:#x}"
    );
    let status = child_status(|| {
        let step = |code: i32, ok: bool| if ok { 0 } else { code };
        if raw(nr::SETUID, &[1000]).is_err() {
            return 10;
        }
        let one = Rlimit { cur: 1, max: 16 };
        if sys::setrlimit(RLIMIT_NPROC, one).is_err() {
            return 11;
        }
        let refused = sys::fork();
        if refused == Ok(0) {
            sys::exit(0);
        }
        if refused != Err(Errno::EAGAIN) {
            return 12;
        }
        let two = Rlimit { cur: 2, max: 16 };
        if sys::setrlimit(RLIMIT_NPROC, two).is_err() {
            return 13;
        }
        match child_status(|| 0) {
            Ok(0) => {}
            _ => return 14,
        }
        let higher = Rlimit { cur: 2, max: 17 };
        step(
            15,
            sys::setrlimit(RLIMIT_NPROC, higher) == Err(Errno::EPERM),
        )
    })?;
    ensure!(
        sys::exited(status) == Some(0),
        "user 1000 under a limit of 1: status {status:#x} (10 setuid, 11 setrlimit, 12 fork not EAGAIN, 13 raise, 14 fork after, 15 hard limit raised)"
    );
    sys::setrlimit(RLIMIT_NPROC, was).map_err(|e| e.message())?;
    let lower = Rlimit { cur: 10, max: 10 };
    sys::setrlimit(RLIMIT_NPROC, lower).map_err(|e| e.message())?;
    sys::setrlimit(RLIMIT_NPROC, was).map_err(|e| format!("root raising: {}", e.message()))?;
    let now = sys::getrlimit(RLIMIT_NPROC).map_err(|e| e.message())?;
    ensure!(now == was, "limit {now:?} after raising back to {was:?}");
    Ok(())
}

fn identity_and_time() -> Outcome {
    let u = sys::uname().map_err(|e| e.message())?;
    ensure!(u.sysname.starts_with(b"profkern\0"), "sysname");
    ensure!(u.machine.starts_with(b"x86_64\0"), "machine");
    ensure!(sys::getppid() >= 1, "getppid");
    let now = sys::clock_gettime(0).map_err(|e| e.message())?;
    ensure!(
        now.tv_sec > 1_600_000_000,
        "CLOCK_REALTIME says {}",
        now.tv_sec
    );
    expect_err(
        "clock_gettime(bad clock)",
        sys::clock_gettime(99),
        Errno::EINVAL,
    )?;
    sys::sched_yield();
    Ok(())
}

const TESTS: &[Test] = &[
    ("fork_exec_wait", fork_exec_wait),
    ("exit_status_encoding", exit_status_encoding),
    ("wait_nohang_and_echild", wait_nohang_and_echild),
    ("orphan_reparented_to_init", orphan_reparented_to_init),
    ("cow_isolation", cow_isolation),
    ("pipe_transfers_data_and_eof", pipe_transfers_data_and_eof),
    (
        "poll_sleeps_through_other_pipes",
        poll_sleeps_through_other_pipes,
    ),
    (
        "pipe_without_readers_is_epipe",
        pipe_without_readers_is_epipe,
    ),
    (
        "files_create_write_read_rename_unlink",
        files_create_write_read_rename_unlink,
    ),
    ("file_errors_match_linux", file_errors_match_linux),
    ("getdents_lists_a_directory", getdents_lists_a_directory),
    ("cwd_and_chdir", cwd_and_chdir),
    ("bad_pointers_are_efault", bad_pointers_are_efault),
    (
        "sockets_unix_only_and_bad_pointers",
        sockets_unix_only_and_bad_pointers,
    ),
    (
        "descriptors_in_flight_are_closed",
        descriptors_in_flight_are_closed,
    ),
    (
        "sysv_ipc_bad_pointers_lose_nothing",
        sysv_ipc_bad_pointers_lose_nothing,
    ),
    (
        "sysv_memory_and_undo_go_at_the_end",
        sysv_memory_and_undo_go_at_the_end,
    ),
    (
        "a_huge_sparse_file_has_no_blocks",
        a_huge_sparse_file_has_no_blocks,
    ),
    ("fd_exhaustion_is_emfile", fd_exhaustion_is_emfile),
    ("fork_until_eagain", fork_until_eagain),
    ("brk_until_enomem", brk_until_enomem),
    ("mmap_munmap_mprotect", mmap_munmap_mprotect),
    ("mmap_pages_come_on_demand", mmap_pages_come_on_demand),
    (
        "kernel_copies_fill_and_unshare_pages",
        kernel_copies_fill_and_unshare_pages,
    ),
    (
        "mapped_file_stores_and_the_end_of_the_file",
        mapped_file_stores_and_the_end_of_the_file,
    ),
    (
        "out_of_memory_at_a_fault_kills_only_the_toucher",
        out_of_memory_at_a_fault_kills_only_the_toucher,
    ),
    (
        "a_reaped_child_has_given_back_every_frame",
        a_reaped_child_has_given_back_every_frame,
    ),
    (
        "mremap_moves_grows_and_shrinks",
        mremap_moves_grows_and_shrinks,
    ),
    (
        "munmap_of_everything_is_quick",
        munmap_of_everything_is_quick,
    ),
    (
        "private_pages_stay_private_after_mprotect",
        private_pages_stay_private_after_mprotect,
    ),
    (
        "prot_none_pages_are_inaccessible",
        prot_none_pages_are_inaccessible,
    ),
    ("faults_kill_only_the_process", faults_kill_only_the_process),
    (
        "failed_exec_leaves_the_caller",
        failed_exec_leaves_the_caller,
    ),
    ("kill_ends_a_blocked_child", kill_ends_a_blocked_child),
    ("nanosleep_sleeps", nanosleep_sleeps),
    ("preemption_lets_others_run", preemption_lets_others_run),
    (
        "ps_shows_the_cpu_each_process_runs_on",
        ps_shows_the_cpu_each_process_runs_on,
    ),
    (
        "kbench_measures_and_refuses_bad_requests",
        kbench_measures_and_refuses_bad_requests,
    ),
    ("identity_and_time", identity_and_time),
    ("termios_is_linux_sized", termios_is_linux_sized),
    ("dev_tty_is_the_terminal", dev_tty_is_the_terminal),
    ("nproc_limit_stops_fork", nproc_limit_stops_fork),
    (
        "a_full_ramfs_is_enospc_and_loses_nothing",
        a_full_ramfs_is_enospc_and_loses_nothing,
    ),
    ("a_foreign_pointer_is_efault", a_foreign_pointer_is_efault),
];

/// Writes a file until memory runs out: ENOSPC, and an earlier file keeps
/// every byte; deleting the big one gives its memory back.
fn a_full_ramfs_is_enospc_and_loses_nothing() -> Outcome {
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

/// A pointer that is good in one process means nothing in another: the
/// other's system calls get EFAULT and a direct access faults.
fn a_foreign_pointer_is_efault() -> Outcome {
    const FOREIGN: usize = 0x3000_0000;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let check = move || -> i32 {
        // The parent maps FOREIGN after this fork; wait until it has.
        let mut go = [0u8; 1];
        if sys::read(r, &mut go) != Ok(1) {
            return 1;
        }
        // SAFETY: write(w, FOREIGN, 16): unmapped here, the kernel must refuse it.
        let ret = unsafe { libc_lite::syscall::syscall(nr::WRITE, &[w as usize, FOREIGN, 16]) };
        if Errno::from_return(ret) != Err(Errno::EFAULT) {
            return 2;
        }
        // SAFETY: read(r, FOREIGN, 1): as above.
        let ret = unsafe { libc_lite::syscall::syscall(nr::READ, &[r as usize, FOREIGN, 1]) };
        if Errno::from_return(ret) != Err(Errno::EFAULT) {
            return 3;
        }
        match child_status(|| {
            // SAFETY: none: FOREIGN is not mapped in this process; must fault.
            unsafe { core::ptr::read_volatile(FOREIGN as *const u8) as i32 }
        }) {
            Ok(s) if sys::signaled(s) == Some(SIGSEGV) => 0,
            _ => 4,
        }
    };
    let pid = match sys::fork().map_err(|e| e.message())? {
        0 => sys::exit(check()),
        pid => pid,
    };
    let mapped = sys::mmap_fixed(FOREIGN, 4096, PROT_READ | PROT_WRITE);
    if let Ok(p) = mapped {
        // SAFETY: just mapped.
        unsafe { p.write_bytes(0x42, 4096) };
    }
    let _ = sys::write(w, b"g");
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    mapped.map_err(|e| e.message())?;
    let _ = sys::munmap(FOREIGN as *mut u8, 4096);
    ensure!(
        sys::exited(status) == Some(0),
        "check {status:#x} failed (2 write, 3 read, 4 direct access)"
    );
    Ok(())
}

/// Frames in use by processes: everything but free frames and what the
/// kernel keeps for itself once grown (its heap and kernel page tables),
/// and not counting this process's own heap (its brk area grows as the
/// harness allocates, which is not a kernel leak).
fn frames_in_use() -> u64 {
    let own_heap = sys::brk(0).div_ceil(4096) as u64;
    sys::kinfo().map_or(0, |k| k.frames_in_use() - own_heap)
}

fn run() -> i32 {
    let before = frames_in_use();
    let (mut passed, mut failed) = user::harness::run("usertest", TESTS);
    let after = frames_in_use();
    let kept = if after == before {
        Ok(())
    } else {
        Err(format!("{before} frames in use before, {after} after"))
    };
    if kept.is_ok() {
        passed += 1;
    } else {
        failed += 1;
    }
    user::harness::verdict("usertest", "no_frames_lost", kept);
    let sound = sys::kcheck().map_err(|_| String::from("kcheck failed: see the console"));
    if sound.is_ok() {
        passed += 1;
    } else {
        failed += 1;
    }
    user::harness::verdict("usertest", "kernel_self_check", sound);
    println!("usertests: {passed} passed, {failed} failed");
    i32::from(failed > 0)
}
