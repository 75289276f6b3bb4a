//! Processes: fork, exec, exit and wait, orphans, faults that kill one
//! process, signals that end a blocked one, sleeping and preemption, the
//! process limits, identity and time.

use super::*;

pub(super) fn fork_exec_wait() -> Outcome {
    let ok = user::run("/bin/true", &["true"]).map_err(|e| e.message())?;
    ensure!(sys::exited(ok) == Some(0), "true gave status {ok:#x}");
    let bad = user::run("/bin/false", &["false"]).map_err(|e| e.message())?;
    ensure!(sys::exited(bad) == Some(1), "false gave status {bad:#x}");
    let echo = user::run("/bin/echo", &["echo", "-n", ""]).map_err(|e| e.message())?;
    ensure!(sys::exited(echo) == Some(0), "echo gave status {echo:#x}");
    Ok(())
}

pub(super) fn exit_status_encoding() -> Outcome {
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

pub(super) fn wait_nohang_and_echild() -> Outcome {
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

pub(super) fn orphan_reparented_to_init() -> Outcome {
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

/// The caller's voluntary context switches so far (getrusage's ru_nvcsw).
pub(super) fn voluntary_switches() -> i64 {
    let mut usage = Rusage::default();
    let _ = raw(
        nr::GETRUSAGE,
        &[RUSAGE_SELF as usize, &mut usage as *mut Rusage as usize],
    );
    usage.counters[RU_NVCSW]
}

/// The first figure of a /proc file (figures end at a tab or a newline).
fn proc_number(path: &str) -> Result<u64, String> {
    let text = sys::read_file(path).map_err(|e| format!("{path}: {}", e.message()))?;
    let text = core::str::from_utf8(&text).map_err(|_| format!("{path} is not text"))?;
    let first = text.split(['\t', '\n']).next().unwrap_or("");
    first.parse().map_err(|_| format!("{path}: {text:?}"))
}

/// Forks children that wait on a pipe until fork says EAGAIN, which must
/// come at /proc/sys/kernel/threads-max tasks: the children and the few
/// tasks that were there before (init, this program).
pub(super) fn fork_until_eagain() -> Outcome {
    let threads_max = proc_number("/proc/sys/kernel/threads-max")? as usize;
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
        if children.len() >= threads_max {
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
    ensure!(
        threads_max - children.len() <= 16,
        "EAGAIN after {} children, but threads-max is {threads_max}",
        children.len()
    );
    Ok(())
}

pub(super) fn faults_kill_only_the_process() -> Outcome {
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

pub(super) fn failed_exec_leaves_the_caller() -> Outcome {
    expect_err(
        "exec a missing file",
        Err::<(), _>(sys::execve("/nope", &["nope"], &[])),
        Errno::ENOENT,
    )?;
    let plain = "/tmp/not-executable";
    let fd = sys::open(plain, O_CREAT | O_WRONLY | O_TRUNC, 0o644).map_err(|e| e.message())?;
    let _ = sys::close(fd);
    let refused = sys::execve(plain, &["x"], &[]);
    let _ = sys::unlink(plain);
    expect_err(
        "exec a file without execute permission",
        Err::<(), _>(refused),
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

pub(super) fn kill_ends_a_blocked_child() -> Outcome {
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

pub(super) fn nanosleep_sleeps() -> Outcome {
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

pub(super) fn preemption_lets_others_run() -> Outcome {
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

/// `RLIMIT_NPROC` counts the tasks of the caller's real user and holds
/// for everyone but root, as on Linux: root forks past a limit of 1; a
/// child that became user 1000 (the only task of that user) is refused
/// (EAGAIN) until its limit is raised, and may not raise its hard limit
/// (EPERM), which root may.
pub(super) fn nproc_limit_stops_fork() -> Outcome {
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

pub(super) fn identity_and_time() -> Outcome {
    let u = sys::uname().map_err(|e| e.message())?;
    ensure!(u.sysname.starts_with(b"Linux\0"), "sysname");
    ensure!(
        u.release.windows(9).any(|w| w == b"-profkern"),
        "the release names the kernel"
    );
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

/// /proc/bus/pci/devices lists the PCI functions of QEMU's PC in Linux's
/// columns: bus and devfn, vendor and device, IRQ, seven starts, seven
/// sizes, driver. The i440FX host bridge (8086:1237) is always at 00:00.0
/// and has no BARs; the PIIX IDE controller's BAR 4 is 16 I/O ports.
pub(super) fn proc_bus_pci_lists_the_machine() -> Outcome {
    let text = sys::read_file("/proc/bus/pci/devices").map_err(|e| e.message())?;
    let text = String::from_utf8_lossy(&text);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    ensure!(rows.len() >= 3, "{} functions:\n{text}", rows.len());
    for row in &rows {
        ensure!(row.len() == 18, "{} columns in {row:?}", row.len());
        ensure!(
            row[1].len() == 8 && u32::from_str_radix(row[1], 16).is_ok(),
            "ids {:?}",
            row[1]
        );
    }
    ensure!(
        rows[0][0] == "0000" && rows[0][1] == "80861237",
        "the first function is not the host bridge: {:?}",
        rows[0]
    );
    ensure!(
        rows[0][3..17].iter().all(|c| c.trim() == "0"),
        "the host bridge has BARs: {:?}",
        rows[0]
    );
    let ide = rows
        .iter()
        .find(|r| r[1] == "80867010")
        .ok_or("no PIIX3 IDE controller (8086:7010)")?;
    ensure!(
        ide[7].trim().ends_with('1') && ide[14].trim() == "10",
        "the IDE controller's BAR 4 is not 16 I/O ports: {ide:?}"
    );
    let listing = user::probe::dir_names("/proc/bus/pci")?;
    ensure!(listing == ["devices"], "/proc/bus/pci holds {listing:?}");
    Ok(())
}

/// The /proc/sys files programs read to learn the kernel's limits say
/// what the kernel does: pids stay below pid_max, threads-max threads can
/// be had but not one more (checked through fork_until_eagain's limit
/// elsewhere), pipe-max-size is the largest pipe a user may ask for, and
/// printk's first figure is the console level syslog sets.
pub(super) fn proc_sys_says_what_the_kernel_does() -> Outcome {
    let pid_max = proc_number("/proc/sys/kernel/pid_max")?;
    ensure!(
        u64::from(sys::getpid()) < pid_max,
        "pid {} at or above pid_max {pid_max}",
        sys::getpid()
    );
    ensure!(
        proc_number("/proc/sys/kernel/threads-max")? >= 256,
        "threads-max"
    );
    ensure!(proc_number("/proc/sys/kernel/tainted")? == 0, "tainted");
    let max_pipe = proc_number("/proc/sys/fs/pipe-max-size")?;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let set = |size: u64| {
        raw(
            nr::FCNTL,
            &[w as usize, F_SETPIPE_SZ as usize, size as usize],
        )
    };
    let got =
        set(max_pipe).map_err(|e| format!("F_SETPIPE_SZ to pipe-max-size: {}", e.message()))?;
    ensure!(
        got as u64 == max_pipe,
        "a pipe of pipe-max-size has {got} bytes"
    );
    let _ = sys::close(r);
    let _ = sys::close(w);
    let ostype = sys::read_file("/proc/sys/kernel/ostype").map_err(|e| e.message())?;
    ensure!(
        ostype == b"Linux\n",
        "ostype {:?}",
        String::from_utf8_lossy(&ostype)
    );
    // The console level, as syslog(2) sets and reads it.
    let level = proc_number("/proc/sys/kernel/printk")?;
    let set_level = |n: usize| raw(nr::SYSLOG, &[SYSLOG_ACTION_CONSOLE_LEVEL as usize, 0, n]);
    set_level(5).map_err(|e| format!("syslog CONSOLE_LEVEL: {}", e.message()))?;
    let now = proc_number("/proc/sys/kernel/printk")?;
    set_level(level as usize).map_err(|e| e.message())?;
    ensure!(now == 5, "printk says {now} after CONSOLE_LEVEL 5");
    Ok(())
}

/// The machine's node name from uname(2), after sethostname(2) (likewise
/// the domain name) changed it.
fn node_name(domain: bool) -> Result<String, String> {
    let name = sys::uname().map_err(|e| e.message())?;
    let field = if domain {
        name.domainname
    } else {
        name.nodename
    };
    let end = field.iter().position(|&b| b == 0).unwrap_or(65);
    Ok(String::from_utf8_lossy(&field[..end]).into())
}

/// Root renames the machine (sethostname, setdomainname): uname and
/// /proc/sys/kernel/hostname say the new name; 65 bytes is EINVAL, a bad
/// pointer EFAULT, a user who is not root EPERM, and none of those
/// changes the name.
pub(super) fn root_names_the_machine() -> Outcome {
    let set = |number, name: &[u8]| raw(number, &[name.as_ptr() as usize, name.len()]);
    let was = node_name(false)?;
    set(nr::SETHOSTNAME, b"student-box").map_err(|e| e.message())?;
    let now = node_name(false)?;
    let proc_says = sys::read_file("/proc/sys/kernel/hostname").map_err(|e| e.message())?;
    let long = set(nr::SETHOSTNAME, &[b'x'; 65]);
    let bad = raw(nr::SETHOSTNAME, &[0, 4]);
    let user_status = child_status(|| {
        if raw(nr::SETUID, &[1000]).is_err() {
            return 2;
        }
        match set(nr::SETHOSTNAME, b"mine") {
            Err(Errno::EPERM) => 0,
            _ => 1,
        }
    })?;
    let after = node_name(false)?;
    set(nr::SETDOMAINNAME, b"lab.example").map_err(|e| e.message())?;
    let domain = node_name(true)?;
    set(nr::SETHOSTNAME, was.as_bytes()).map_err(|e| e.message())?;
    ensure!(now == "student-box", "uname says {now:?} after sethostname");
    ensure!(
        proc_says == b"student-box\n",
        "/proc/sys/kernel/hostname says {:?}",
        String::from_utf8_lossy(&proc_says)
    );
    ensure!(long == Err(Errno::EINVAL), "65 bytes gave {long:?}");
    ensure!(bad == Err(Errno::EFAULT), "a NULL name gave {bad:?}");
    ensure!(user_status == 0, "a user's sethostname was not EPERM");
    ensure!(
        after == "student-box",
        "refused calls changed the name to {after:?}"
    );
    ensure!(domain == "lab.example", "domain name {domain:?}");
    Ok(())
}

/// The `[stack]` line of /proc/self/maps of `/bin/cat` run by a child
/// (after `personality(persona)` when `persona` is not 0): where exec put
/// a new program's stack.
fn stack_of_a_new_program(persona: usize) -> Result<String, String> {
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        if persona != 0 && raw(nr::PERSONALITY, &[persona]).is_err() {
            sys::exit(3);
        }
        let _ = sys::dup2(w, 1);
        sys::execve("/bin/cat", &["cat", "/proc/self/maps"], &[]);
        sys::exit(2);
    }
    let _ = sys::close(w);
    let mut text = Vec::new();
    let mut buf = [0u8; 512];
    while let Ok(n @ 1..) = sys::read(r, &mut buf) {
        text.extend_from_slice(&buf[..n]);
    }
    let _ = sys::close(r);
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    ensure!(
        sys::exited(status) == Some(0),
        "cat gave status {status:#x}"
    );
    let text = String::from_utf8_lossy(&text).into_owned();
    text.lines()
        .find(|line| line.ends_with("[stack]"))
        .map(String::from)
        .ok_or_else(|| format!("no [stack] line in\n{text}"))
}

/// Sets /proc/sys/kernel/randomize_va_space by a write, as `echo N >` does.
fn set_randomize_va_space(text: &str) -> Result<(), Errno> {
    let fd = sys::open("/proc/sys/kernel/randomize_va_space", O_WRONLY | O_TRUNC, 0)?;
    let written = sys::write_all(fd, text.as_bytes());
    let _ = sys::close(fd);
    written
}

/// Address-space layout randomisation: with it on, three new programs'
/// stacks are not all in one place; written off (root only, 0 to 2), or
/// turned off by `personality(ADDR_NO_RANDOMIZE)`, two are, at the top of
/// user space.
pub(super) fn randomize_va_space_moves_stacks_and_root_may_stop_it() -> Outcome {
    const ADDR_NO_RANDOMIZE: usize = 0x0004_0000;
    let level = proc_number("/proc/sys/kernel/randomize_va_space")?;
    let restore = |outcome: Outcome| {
        let back = set_randomize_va_space(&format!("{level}\n"));
        outcome?;
        back.map_err(|e| format!("setting it back to {level}: {}", e.message()))
    };
    restore((|| {
        set_randomize_va_space("2\n").map_err(|e| format!("root writes 2: {}", e.message()))?;
        ensure!(
            proc_number("/proc/sys/kernel/randomize_va_space")? == 2,
            "reads back"
        );
        let moved: Vec<String> = (0..3)
            .map(|_| stack_of_a_new_program(0))
            .collect::<Result<_, _>>()?;
        ensure!(
            moved.iter().any(|s| *s != moved[0]),
            "three stacks in one place at level 2: {}",
            moved[0]
        );
        let pinned = [
            stack_of_a_new_program(ADDR_NO_RANDOMIZE)?,
            stack_of_a_new_program(ADDR_NO_RANDOMIZE)?,
        ];
        ensure!(
            pinned[0] == pinned[1] && pinned[0].contains("-7ffffffff000 "),
            "ADDR_NO_RANDOMIZE: {pinned:?}"
        );
        set_randomize_va_space("0").map_err(|e| format!("root writes 0: {}", e.message()))?;
        let fixed = [stack_of_a_new_program(0)?, stack_of_a_new_program(0)?];
        ensure!(fixed == pinned, "level 0: {fixed:?}, not {pinned:?}");
        for bad in ["3\n", "-1", "two", "1 2"] {
            expect_err(
                &format!("writing {bad:?}"),
                set_randomize_va_space(bad),
                Errno::EINVAL,
            )?;
        }
        let status = child_status(|| {
            if raw(nr::SETUID, &[1000]).is_err() {
                return 10;
            }
            match set_randomize_va_space("2") {
                Err(Errno::EACCES) => 0,
                _ => 11,
            }
        })?;
        ensure!(
            sys::exited(status) == Some(0),
            "a user's write: status {status:#x}"
        );
        Ok(())
    })())
}
