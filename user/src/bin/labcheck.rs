//! /bin/labcheck: the checks of the book's labs that run inside the guest.
//!
//! `labcheck ID` runs the check of lab ID (`cargo xtask lab ID` boots the
//! kernel with it) and prints `labcheck: ok ID` or `labcheck: FAIL ID: why`.
//! Each check is written against the interface its exercise fixes (a file,
//! a call number, a behaviour), never against the solution's code, so it
//! compiles on the tree as shipped and fails there, saying what is missing.
//! Where an exercise adds a system call or a constant, the check names it
//! by the number the exercise gives: the student adds it to `abi`.

#![no_std]
#![no_main]

extern crate alloc;

use abi::sys as nr;
use abi::types::*;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use libc_lite::signal::Handler;
use libc_lite::{Errno, sys};

libc_lite::entry!(run);

use user::ensure;
use user::harness::{Outcome, Test};
use user::probe::{dir_names, open_files, send_descriptor};

fn raw(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: the arguments are integers and pointers into this program's
    // own live buffers, as each call documents.
    Errno::from_return(unsafe { libc_lite::syscall::syscall(number, args) })
}

fn text(path: &str) -> Result<String, String> {
    sys::read_file(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("{path}: {}", e.message()))
}

/// MemFree from /proc/meminfo, in KiB.
fn mem_free_kib() -> Result<u64, String> {
    let info = text("/proc/meminfo")?;
    info.lines()
        .find_map(|l| l.strip_prefix("MemFree:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| String::from("/proc/meminfo has no MemFree line"))
}

/// Lab 3.2: the time slice is the boot option `slice_ms`. Two spinners
/// share the one CPU, each writing its number into a shared page whenever
/// it finds the other's there: that moment is a switch, and the time from
/// one switch to the next is how long a spinner ran. The median run is the
/// slice. (A gap in the clock is not a switch: the host may pause the
/// virtual CPU in the middle of a slice, and a check that took such a gap
/// for a switch failed under load.) xtask boots this check once with
/// `slice_ms=1` and once with `slice_ms=100` and passes the value it gave
/// as the second argument.
fn slice_is_a_boot_option() -> Outcome {
    use core::sync::atomic::{AtomicU64, Ordering::SeqCst};
    let want_ms: u64 = libc_lite::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| String::from("usage: labcheck 3.2 SLICE_MS"))?;
    const MAX_RUNS: usize = 9;
    // [who ran last, switches seen, then each switch's time]
    let shared = raw(
        nr::MMAP,
        &[
            0,
            4096,
            (PROT_READ | PROT_WRITE) as usize,
            (MAP_SHARED | MAP_ANONYMOUS) as usize,
            usize::MAX,
            0,
        ],
    )
    .map_err(|e| format!("mmap shared: {}", e.message()))?;
    // SAFETY: a fresh, zeroed, page-aligned shared page of 4096 bytes
    // holds 2 + MAX_RUNS words; both processes only touch it atomically.
    let words = unsafe { core::slice::from_raw_parts(shared as *const AtomicU64, 2 + MAX_RUNS) };
    let spin = |me: u64| {
        let start = sys::monotonic_nanos();
        while sys::monotonic_nanos() - start < 4_000_000_000 {
            if words[0].load(SeqCst) != me {
                words[0].store(me, SeqCst);
                let n = words[1].fetch_add(1, SeqCst) as usize;
                if n >= MAX_RUNS {
                    break;
                }
                words[2 + n].store(sys::monotonic_nanos(), SeqCst);
            }
        }
    };
    let other = sys::fork().map_err(|e| e.message())?;
    if other == 0 {
        spin(2);
        sys::exit(0);
    }
    spin(1);
    sys::kill(other as i32, abi::signal::SIGKILL).map_err(|e| e.message())?;
    sys::waitpid(other as i32).map_err(|e| e.message())?;
    let switches = (words[1].load(SeqCst) as usize).min(MAX_RUNS);
    let times: Vec<u64> = (0..switches).map(|i| words[2 + i].load(SeqCst)).collect();
    ensure!(
        switches >= 6,
        "only {switches} switches between two spinners in 4 s"
    );
    // The first switch is the first spinner starting, not a switch.
    let mut runs: Vec<u64> = times[1..]
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect();
    runs.sort_unstable();
    let median_ms = runs[runs.len() / 2] / 1_000_000;
    let (low, high) = (want_ms / 2, want_ms * 3 / 2 + 2);
    ensure!(
        (low..=high).contains(&median_ms),
        "with slice_ms={want_ms} a spinner ran {median_ms} ms between switches (median of {}), want {low} to {high}",
        runs.len()
    );
    Ok(())
}

/// Lab 4.1: the heap on demand. Moving the break up by 64 MiB may not
/// take 64 MiB of frames; the pages come when touched.
fn brk_is_on_demand() -> Outcome {
    const GROW: usize = 64 << 20;
    let start = sys::brk(0);
    let before = mem_free_kib()?;
    let end = sys::brk(start + GROW);
    ensure!(
        end == start + GROW,
        "brk did not grow by 64 MiB (break {start:#x} -> {end:#x})"
    );
    let after = mem_free_kib()?;
    // One page touched comes on demand and reads back.
    let last = (end - 4096) as *mut u8;
    // SAFETY: inside the heap just grown.
    unsafe { last.write_volatile(7) };
    // SAFETY: as above.
    let seen = unsafe { last.read_volatile() };
    sys::brk(start);
    ensure!(seen == 7, "the touched page read back {seen}");
    let used = before.saturating_sub(after);
    ensure!(
        used < 1024,
        "growing the heap by 64 MiB took {used} KiB at once (MemFree {before} -> {after} KiB): brk mapped every page"
    );
    Ok(())
}

/// Lab 5.1: nice. Two spinners on the one CPU, one at nice 10
/// (setpriority, call 141), for one second: the nice 0 one must get at
/// least twice the user ticks.
fn nice_gives_less_cpu() -> Outcome {
    const SETPRIORITY: usize = 141;
    const PRIO_PROCESS: usize = 0;
    let spin = || -> ! {
        loop {
            core::hint::spin_loop();
        }
    };
    let keen = sys::fork().map_err(|e| e.message())?;
    if keen == 0 {
        spin();
    }
    let nice = sys::fork().map_err(|e| e.message())?;
    if nice == 0 {
        spin();
    }
    let set = raw(SETPRIORITY, &[PRIO_PROCESS, nice as usize, 10]);
    if set.is_ok() {
        sys::nanosleep(1_000_000_000).map_err(|e| e.message())?;
    }
    let mut rows = [ProcInfo::default(); 64];
    let n = sys::proclist(&mut rows).map_err(|e| e.message())?.min(64);
    let ticks = |pid: u32| {
        rows[..n]
            .iter()
            .find(|p| p.pid == pid)
            .map_or(0, |p| p.user_ticks)
    };
    let (keen_ticks, nice_ticks) = (ticks(keen as u32), ticks(nice as u32));
    for pid in [keen, nice] {
        let _ = sys::kill(pid as i32, abi::signal::SIGKILL);
        let _ = sys::waitpid(pid as i32);
    }
    set.map_err(|e| format!("setpriority(PRIO_PROCESS, pid, 10): {}", e.message()))?;
    ensure!(
        keen_ticks >= 2 * nice_ticks.max(1),
        "in one second the nice 0 spinner got {keen_ticks} user ticks and the nice 10 one {nice_ticks}: want at least twice as many"
    );
    Ok(())
}

/// Lab 4.3: one shared zero frame. Reading every page of a fresh 64 MiB
/// mapping may not take 64 MiB of frames.
fn reads_share_one_zero_page() -> Outcome {
    const LEN: usize = 64 << 20;
    let before = mem_free_kib()?;
    let p = sys::mmap_anon(LEN, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    let mut sum = 0u64;
    for page in (0..LEN).step_by(4096) {
        // SAFETY: `page` is inside the mapping just made.
        sum += u64::from(unsafe { p.add(page).read_volatile() });
    }
    let after = mem_free_kib()?;
    sys::munmap(p, LEN).map_err(|e| e.message())?;
    ensure!(sum == 0, "a fresh mapping read non-zero bytes");
    let used = before.saturating_sub(after);
    ensure!(
        used < 1024,
        "reading 64 MiB of never-written pages took {used} KiB of memory (MemFree {before} -> {after} KiB): each read mapped a frame of its own"
    );
    Ok(())
}

/// Lab 5.3: RLIMIT_FSIZE. A write past the limit writes what fits; one that
/// can write nothing is EFBIG (SIGXFSZ ignored here).
fn file_size_limit() -> Outcome {
    libc_lite::signal::sigaction(abi::signal::SIGXFSZ, Handler::Ignore, 0, 0)
        .map_err(|e| e.message())?;
    let limit = Rlimit {
        cur: 10,
        max: RLIM_INFINITY,
    };
    sys::setrlimit(RLIMIT_FSIZE, limit).map_err(|e| e.message())?;
    let path = "/tmp/labcheck-fsize";
    let fd = sys::open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600).map_err(|e| e.message())?;
    let first = sys::write(fd, b"0123456789abcdef");
    let second = sys::write(fd, b"x");
    sys::close(fd).map_err(|e| e.message())?;
    let _ = sys::unlink(path);
    ensure!(
        first == Ok(10),
        "write of 16 bytes under a 10-byte limit gave {first:?}, want Ok(10)"
    );
    ensure!(
        second == Err(Errno::EFBIG),
        "a write at the limit gave {second:?}, want EFBIG"
    );
    Ok(())
}

/// Lab 9.1: profhz, a profiling rate below the clock's. profil on over
/// the first 8 MiB (scale 1: 128 KiB of text a bin), then one second of
/// spinning; xtask boots with hz=1000 and profhz=100 and passes 100.
fn profhz_samples_less_often() -> Outcome {
    let profhz: u64 = libc_lite::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| String::from("usage: labcheck 9.1 PROFHZ"))?;
    let mut bins = [0u16; 64];
    sys::profil(&mut bins, 0, 1).map_err(|e| e.message())?;
    let start = sys::monotonic_nanos();
    let mut x = 0u64;
    while sys::monotonic_nanos() - start < 1_000_000_000 {
        x = core::hint::black_box(x + 1);
    }
    let stat = sys::profstat(0).map_err(|e| e.message())?;
    sys::profil(&mut [], 0, 0).map_err(|e| e.message())?;
    let (low, high) = (profhz * 6 / 10, profhz * 14 / 10);
    ensure!(
        (low..=high).contains(&stat.samples),
        "one second of spinning took {} samples with profhz={profhz}, want {low} to {high}",
        stat.samples
    );
    Ok(())
}

/// The count of system call `number` in /proc/sysstat (lab 6.1's file:
/// one line per call made since boot, `NUMBER COUNT`).
fn syscall_count(number: usize) -> Result<u64, String> {
    let table = text("/proc/sysstat")?;
    Ok(table
        .lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(n, _)| n.trim().parse() == Ok(number))
        .and_then(|(_, c)| c.trim().parse().ok())
        .unwrap_or(0))
}

/// Lab 6.1: system calls counted per number.
fn syscalls_are_counted() -> Outcome {
    let before = syscall_count(nr::GETPPID)?;
    for _ in 0..100 {
        sys::getppid();
    }
    let after = syscall_count(nr::GETPPID)?;
    ensure!(
        after >= before + 100,
        "/proc/sysstat counted getppid ({}) {before} then {after} times around 100 calls",
        nr::GETPPID
    );
    Ok(())
}

/// Lab 7.1: openat with a real directory descriptor.
fn openat_takes_a_directory() -> Outcome {
    let dir = sys::open("/tmp", O_RDONLY | O_DIRECTORY, 0).map_err(|e| e.message())?;
    let name = b"labcheck-openat\0";
    let fd = raw(
        nr::OPENAT,
        &[
            dir as usize,
            name.as_ptr() as usize,
            (O_CREAT | O_WRONLY) as usize,
            0o600,
        ],
    );
    sys::close(dir).map_err(|e| e.message())?;
    let fd = fd.map_err(|e| {
        format!(
            "openat(/tmp's fd, \"labcheck-openat\", O_CREAT): {}",
            e.message()
        )
    })?;
    sys::close(fd as i32).map_err(|e| e.message())?;
    let made = sys::stat("/tmp/labcheck-openat");
    let _ = sys::unlink("/tmp/labcheck-openat");
    let _ = sys::unlink("/labcheck-openat");
    ensure!(made.is_ok(), "openat made no /tmp/labcheck-openat");
    Ok(())
}

/// Lab 7.2: capabilities. Root without CAP_DAC_OVERRIDE and
/// CAP_DAC_READ_SEARCH (capset, call 126) may not open another user's
/// 0600 file; capget (125) reads the sets back. In a child, so the
/// capabilities it drops are its own.
fn capabilities_bound_root() -> Outcome {
    const CAPGET: usize = 125;
    const CAPSET: usize = 126;
    const VERSION_3: u32 = 0x2008_0522;
    const CAP_DAC_OVERRIDE: u32 = 1;
    const CAP_DAC_READ_SEARCH: u32 = 2;
    let path = "/tmp/labcheck-cap";
    let fd = sys::open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600).map_err(|e| e.message())?;
    sys::close(fd).map_err(|e| e.message())?;
    let cpath = b"/tmp/labcheck-cap\0";
    raw(nr::CHOWN, &[cpath.as_ptr() as usize, 1000, 1000])
        .map_err(|e| format!("chown: {}", e.message()))?;
    let status = user::harness::child_status(|| {
        // struct __user_cap_header_struct, then two __user_cap_data_struct
        // (effective, permitted, inheritable: 32 bits each, low then high).
        let header = [VERSION_3, 0];
        let mut data = [0u32; 6];
        if raw(
            CAPGET,
            &[header.as_ptr() as usize, data.as_mut_ptr() as usize],
        )
        .is_err()
        {
            return 10;
        }
        if data[0] & (1 << CAP_DAC_OVERRIDE) == 0 {
            return 11;
        }
        data[0] &= !((1 << CAP_DAC_OVERRIDE) | (1 << CAP_DAC_READ_SEARCH));
        if raw(CAPSET, &[header.as_ptr() as usize, data.as_ptr() as usize]).is_err() {
            return 12;
        }
        match sys::open("/tmp/labcheck-cap", O_RDONLY, 0) {
            Err(Errno::EACCES) => 0,
            Err(_) => 13,
            Ok(_) => 14,
        }
    });
    let _ = sys::unlink(path);
    let code = sys::exited(status?);
    ensure!(
        code != Some(10),
        "capget (125) failed: the kernel has no capability sets yet"
    );
    ensure!(
        code != Some(11),
        "root's effective set lacks CAP_DAC_OVERRIDE"
    );
    ensure!(
        code != Some(12),
        "capset (126) would not drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH"
    );
    ensure!(
        code != Some(14),
        "root without CAP_DAC_OVERRIDE still opened another user's 0600 file"
    );
    ensure!(
        code == Some(0),
        "the child ended with {code:?} (13: open failed, but not with EACCES)"
    );
    Ok(())
}

/// Lab 7.3: a pipe's capacity, F_GETPIPE_SZ (1032) and F_SETPIPE_SZ (1031).
fn pipe_capacity_can_change() -> Outcome {
    const F_SETPIPE_SZ: usize = 1031;
    const F_GETPIPE_SZ: usize = 1032;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let checks = || -> Outcome {
        let size = raw(nr::FCNTL, &[w as usize, F_GETPIPE_SZ, 0])
            .map_err(|e| format!("F_GETPIPE_SZ: {}", e.message()))?;
        ensure!(
            size == 65536,
            "a new pipe holds {size} bytes, want 65536 (Linux)"
        );
        let set = raw(nr::FCNTL, &[w as usize, F_SETPIPE_SZ, 5000])
            .map_err(|e| format!("F_SETPIPE_SZ 5000: {}", e.message()))?;
        ensure!(
            set == 8192,
            "F_SETPIPE_SZ 5000 gave {set}, want 8192 (two pages)"
        );
        let filled = (0..10_000)
            .take_while(|_| sys::write(w, &[0u8; 1024]).is_ok())
            .count();
        ensure!(
            filled == 8,
            "a pipe of 8192 bytes took {filled} KiB before blocking"
        );
        Ok(())
    };
    // The writes above must fail rather than block once the pipe is full.
    let flags = raw(nr::FCNTL, &[w as usize, F_GETFL as usize, 0]).map_err(|e| e.message())?;
    raw(
        nr::FCNTL,
        &[w as usize, F_SETFL as usize, flags | O_NONBLOCK as usize],
    )
    .map_err(|e| e.message())?;
    let outcome = checks();
    let _ = sys::close(r);
    let _ = sys::close(w);
    outcome
}

/// Lab 7.4: /proc/self/fd lists the open descriptors.
fn proc_self_fd_lists_descriptors() -> Outcome {
    // A descriptor held open while the directory is read must be in it.
    let dir = sys::open("/proc/self", O_RDONLY | O_DIRECTORY, 0).map_err(|e| e.message())?;
    let names = dir_names("/proc/self/fd");
    sys::close(dir).map_err(|e| e.message())?;
    let names = names?;
    for want in ["0", "1", "2", &format!("{dir}")] {
        ensure!(
            names.iter().any(|n| n == want),
            "/proc/self/fd lists {names:?}, without {want}"
        );
    }
    Ok(())
}

/// Lab 7.5: a socket sent into its own queue, then closed, is collected:
/// the system's count of open files comes back.
fn socket_rings_are_collected() -> Outcome {
    use abi::socket::*;
    let before = open_files()?;
    let mut sv = [0i32; 2];
    let args = [
        AF_UNIX as usize,
        SOCK_DGRAM as usize,
        0,
        sv.as_mut_ptr() as usize,
    ];
    raw(nr::SOCKETPAIR, &args).map_err(|e| format!("socketpair: {}", e.message()))?;
    // sv[1] travels to sv[1]'s own queue (sent on sv[0], received at
    // sv[1]): once both descriptors close, only the queue holds it.
    send_descriptor(sv[0], sv[1]).map_err(|e| format!("sendmsg: {}", e.message()))?;
    let _ = sys::close(sv[0]);
    let _ = sys::close(sv[1]);
    // Collection may be deferred a little, as Linux's is.
    let mut after = open_files()?;
    for _ in 0..50 {
        if after == before {
            break;
        }
        sys::nanosleep(10_000_000).map_err(|e| e.message())?;
        after = open_files()?;
    }
    ensure!(
        after == before,
        "open files: {before} before, {after} after a socket sent into its own queue was closed: the ring keeps itself alive"
    );
    Ok(())
}

/// Lab 7.6: /dev/klog holds the kernel's log so far.
fn dev_klog_has_the_boot_log() -> Outcome {
    let log = text("/dev/klog")?;
    ensure!(
        log.contains("random: ChaCha20 generator seeded from"),
        "/dev/klog ({} bytes) has no 'random: ChaCha20 generator seeded from' line",
        log.len()
    );
    Ok(())
}

static RT_RUNS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

extern "C" fn count_rt(_: i32) {
    RT_RUNS.fetch_add(1, core::sync::atomic::Ordering::SeqCst);
}

/// Lab 8.1: real-time signals are queued, not merged.
fn realtime_signals_queue() -> Outcome {
    const SIGRTMIN: u32 = 34;
    libc_lite::signal::sigaction(SIGRTMIN, Handler::Simple(count_rt), 0, 0)
        .map_err(|e| e.message())?;
    let bit = 1u64 << (SIGRTMIN - 1);
    libc_lite::signal::sigprocmask(abi::signal::SIG_BLOCK, bit).map_err(|e| e.message())?;
    for _ in 0..3 {
        libc_lite::signal::raise(SIGRTMIN).map_err(|e| e.message())?;
    }
    libc_lite::signal::sigprocmask(abi::signal::SIG_UNBLOCK, bit).map_err(|e| e.message())?;
    let runs = RT_RUNS.load(core::sync::atomic::Ordering::SeqCst);
    ensure!(
        runs == 3,
        "SIGRTMIN raised 3 times while blocked ran its handler {runs} times"
    );
    Ok(())
}

/// Lab 8.3: a parent that ignores SIGCHLD leaves no zombies.
fn ignored_sigchld_reaps() -> Outcome {
    libc_lite::signal::sigaction(abi::signal::SIGCHLD, Handler::Ignore, 0, 0)
        .map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        sys::exit(0);
    }
    sys::nanosleep(50_000_000).map_err(|e| e.message())?;
    let alive = sys::kill(pid as i32, 0);
    ensure!(
        alive == Err(Errno::ESRCH),
        "child {pid} is still a zombie 50 ms after it exited (kill(pid, 0) gave {alive:?}): nothing reaped it"
    );
    let waited = sys::wait4(-1, 0);
    ensure!(
        waited.is_err_and(|e| e == Errno::ECHILD),
        "wait4 after the child was reaped gave {waited:?}, want ECHILD"
    );
    Ok(())
}

static TASK_STOP: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
static TASK_TIDS: [core::sync::atomic::AtomicU32; 3] =
    [const { core::sync::atomic::AtomicU32::new(0) }; 3];

/// A thread of lab 11.1: notes its tid, then waits to be let go.
extern "C" fn task_thread(index: usize) {
    use core::sync::atomic::Ordering::SeqCst;
    let tid = raw(nr::GETTID, &[]).unwrap_or(0) as u32;
    TASK_TIDS[index].store(tid, SeqCst);
    while TASK_STOP.load(SeqCst) == 0 {
        let _ = sys::nanosleep(1_000_000);
    }
}

/// Lab 11.1: /proc/PID/task lists the process's threads, by tid.
fn proc_task_lists_threads() -> Outcome {
    use core::sync::atomic::Ordering::SeqCst;
    let threads: Vec<_> = (0..3)
        .map(|i| libc_lite::thread::spawn(task_thread, i))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("spawn: {}", e.message()))?;
    while TASK_TIDS.iter().any(|t| t.load(SeqCst) == 0) {
        let _ = sys::nanosleep(1_000_000);
    }
    let listed = dir_names("/proc/self/task");
    TASK_STOP.store(1, SeqCst);
    for t in threads {
        t.join();
    }
    let listed = listed?;
    let mut want: Vec<String> = TASK_TIDS
        .iter()
        .map(|t| format!("{}", t.load(SeqCst)))
        .collect();
    want.push(format!("{}", sys::getpid()));
    for tid in &want {
        ensure!(
            listed.contains(tid),
            "/proc/self/task lists {listed:?}, without thread {tid}"
        );
    }
    ensure!(
        listed.len() == 4,
        "/proc/self/task lists {listed:?}: want the 4 threads {want:?}"
    );
    Ok(())
}

static REQUEUE_FROM: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
static REQUEUE_TO: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
static REQUEUE_DONE: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// A waiter of lab 11.2: sleeps on REQUEUE_FROM if it holds 0, then counts
/// itself done.
extern "C" fn requeue_waiter(_: usize) {
    use core::sync::atomic::Ordering::SeqCst;
    let word = REQUEUE_FROM.as_ptr() as usize;
    // One wait: woken (or moved, then woken), or the word is 1 already.
    let _ = raw(nr::FUTEX, &[word, FUTEX_WAIT as usize, 0, 0, 0, 0]);
    REQUEUE_DONE.fetch_add(1, SeqCst);
}

/// Lab 11.2: FUTEX_CMP_REQUEUE wakes some waiters and moves the rest to
/// another word, where a later wake finds them.
fn futex_requeue_moves_waiters() -> Outcome {
    use core::sync::atomic::Ordering::SeqCst;
    let threads: Vec<_> = (0..8)
        .map(|_| libc_lite::thread::spawn(requeue_waiter, 0))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("spawn: {}", e.message()))?;
    // Every waiter runs until it sleeps on the word: one CPU, 200 ms.
    sys::nanosleep(200_000_000).map_err(|e| e.message())?;
    let from = REQUEUE_FROM.as_ptr() as usize;
    let to = REQUEUE_TO.as_ptr() as usize;
    let moved = raw(nr::FUTEX, &[from, FUTEX_CMP_REQUEUE as usize, 1, 7, to, 0]);
    let outcome = (|| -> Outcome {
        let moved = moved.map_err(|e| format!("FUTEX_CMP_REQUEUE: {}", e.message()))?;
        ensure!(
            moved == 8,
            "FUTEX_CMP_REQUEUE(wake 1, requeue 7) of 8 waiters returned {moved}, want 8"
        );
        sys::nanosleep(100_000_000).map_err(|e| e.message())?;
        let done = REQUEUE_DONE.load(SeqCst);
        ensure!(done == 1, "{done} waiters ran after waking 1 and moving 7");
        let woken = raw(nr::FUTEX, &[to, FUTEX_WAKE as usize, 100, 0, 0, 0])
            .map_err(|e| format!("FUTEX_WAKE on the second word: {}", e.message()))?;
        ensure!(
            woken == 7,
            "a wake on the second word woke {woken} waiters, want the 7 moved"
        );
        Ok(())
    })();
    // Whatever happened, let every waiter go before joining it.
    REQUEUE_FROM.store(1, SeqCst);
    let _ = raw(nr::FUTEX, &[from, FUTEX_WAKE as usize, 100, 0, 0, 0]);
    let _ = raw(nr::FUTEX, &[to, FUTEX_WAKE as usize, 100, 0, 0, 0]);
    for t in threads {
        t.join();
    }
    outcome
}

/// Lab 11.3: clone(CLONE_FILES) without CLONE_VM shares the table.
fn clone_files_shares_descriptors() -> Outcome {
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let flags = CLONE_FILES as usize | abi::signal::SIGCHLD as usize;
    let pid = raw(nr::CLONE, &[flags, 0, 0, 0, 0])
        .map_err(|e| format!("clone(CLONE_FILES | SIGCHLD): {}", e.message()))?;
    if pid == 0 {
        let _ = sys::close(w);
        sys::exit(0);
    }
    sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let still = sys::close(w);
    let _ = sys::close(r);
    ensure!(
        still == Err(Errno::EBADF),
        "the child closed the write end, but the parent's close of it gave {still:?}, want EBADF"
    );
    Ok(())
}

/// Lab 12.3: /proc/lock_stat shows each lock rank's longest hold.
fn proc_locks_shows_holds() -> Outcome {
    let table = text("/proc/lock_stat")?;
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some("Table"))
        .ok_or_else(|| format!("/proc/lock_stat has no Table line:\n{table}"))?;
    let held: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no number after Table in '{line}'"))?;
    ensure!(held > 0, "the Table lock's longest hold is 0 in '{line}'");
    Ok(())
}

/// Labs whose check runs here, by id.
/// A disk's line of /proc/diskstats, its figures after the name.
fn disk_figures(name: &str) -> Result<Vec<u64>, String> {
    let table = text("/proc/diskstats")?;
    let line = table
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .ok_or_else(|| format!("/proc/diskstats has no line for {name}:\n{table}"))?;
    let figures: Vec<u64> = line
        .split_whitespace()
        .skip(3)
        .map(|f| {
            f.parse()
                .map_err(|_| format!("'{f}' in '{line}' is not a number"))
        })
        .collect::<Result<_, _>>()?;
    ensure!(
        figures.len() >= 11,
        "'{line}' has {} figures after the name, want at least Linux's first 11",
        figures.len()
    );
    Ok(figures)
}

/// Lab 13.1: /proc/diskstats counts each disk's requests. xtask boots
/// this check with a scratch disk as /dev/vda; 1 MiB written to it in
/// whole 4 KiB pieces is 256 requests, 2048 sectors.
fn disk_requests_are_counted() -> Outcome {
    // Linux's order: reads, merged, sectors read, ms; writes, merged,
    // sectors written, ms; ...
    const WRITES: usize = 4;
    const SECTORS_WRITTEN: usize = 6;
    let before = disk_figures("vda")?;
    let fd =
        sys::open("/dev/vda", O_WRONLY, 0).map_err(|e| format!("/dev/vda: {}", e.message()))?;
    let page = [0x5au8; 4096];
    for _ in 0..256 {
        sys::write_all(fd, &page).map_err(|e| format!("write /dev/vda: {}", e.message()))?;
    }
    sys::fsync(fd).map_err(|e| format!("fsync /dev/vda: {}", e.message()))?;
    sys::close(fd).map_err(|e| e.message())?;
    let after = disk_figures("vda")?;
    ensure!(
        after[WRITES] >= before[WRITES] + 256,
        "writes completed went from {} to {} around 256 writes of 4 KiB",
        before[WRITES],
        after[WRITES]
    );
    ensure!(
        after[SECTORS_WRITTEN] >= before[SECTORS_WRITTEN] + 2048,
        "sectors written went from {} to {} around 1 MiB",
        before[SECTORS_WRITTEN],
        after[SECTORS_WRITTEN]
    );
    Ok(())
}

/// Lab 15.6: a file that starts with `#!` runs the interpreter it names,
/// with the line's argument, the script's path and the caller's
/// arguments after the first (Linux's binfmt_script).
fn scripts_run_their_interpreter() -> Outcome {
    const SCRIPT: &str = "/tmp/lab-script";
    let fd = sys::open(SCRIPT, O_CREAT | O_WRONLY | O_TRUNC, 0o755).map_err(|e| e.message())?;
    let written = sys::write_all(fd, b"#!/bin/echo from the script\n");
    let _ = sys::close(fd);
    written.map_err(|e| e.message())?;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let _ = sys::dup2(w, 1);
        let e = sys::execve(SCRIPT, &["lab-script", "an-argument"], &[]);
        let _ = sys::write_all(1, format!("exec failed: {}\n", e.message()).as_bytes());
        sys::exit(127);
    }
    let _ = sys::close(w);
    let mut out = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n @ 1..) = sys::read(r, &mut buf) {
        out.extend_from_slice(&buf[..n]);
    }
    let _ = sys::close(r);
    let _ = sys::waitpid(pid as i32);
    let _ = sys::unlink(SCRIPT);
    let out = String::from_utf8_lossy(&out);
    let want = "from the script /tmp/lab-script an-argument\n";
    ensure!(
        out == want,
        "running a #!/bin/echo script printed {out:?}, not {want:?}"
    );
    Ok(())
}

const CHECKS: &[Test] = &[
    ("3.2", slice_is_a_boot_option),
    ("4.1", brk_is_on_demand),
    ("4.3", reads_share_one_zero_page),
    ("5.1", nice_gives_less_cpu),
    ("5.3", file_size_limit),
    ("6.1", syscalls_are_counted),
    ("7.1", openat_takes_a_directory),
    ("7.2", capabilities_bound_root),
    ("7.3", pipe_capacity_can_change),
    ("7.4", proc_self_fd_lists_descriptors),
    ("7.5", socket_rings_are_collected),
    ("7.6", dev_klog_has_the_boot_log),
    ("8.1", realtime_signals_queue),
    ("8.3", ignored_sigchld_reaps),
    ("9.1", profhz_samples_less_often),
    ("11.1", proc_task_lists_threads),
    ("11.2", futex_requeue_moves_waiters),
    ("11.3", clone_files_shares_descriptors),
    ("12.3", proc_locks_shows_holds),
    ("13.1", disk_requests_are_counted),
    ("15.6", scripts_run_their_interpreter),
];

fn run() -> i32 {
    let args: Vec<String> = libc_lite::env::args().map(String::from).collect();
    let Some(id) = args.get(1) else {
        libc_lite::println!("usage: labcheck ID [ARG]");
        return 2;
    };
    // One check per id: a second one of the same name would never run.
    if CHECKS.iter().filter(|(name, _)| name == id).count() > 1 {
        user::harness::verdict("labcheck", id, Err(String::from("two checks have this id")));
        return 1;
    }
    match CHECKS.iter().find(|(name, _)| name == id) {
        Some((name, check)) => {
            let outcome = check();
            let failed = outcome.is_err();
            user::harness::verdict("labcheck", name, outcome);
            i32::from(failed)
        }
        None => {
            user::harness::verdict("labcheck", id, Err(String::from("no such lab check")));
            1
        }
    }
}
