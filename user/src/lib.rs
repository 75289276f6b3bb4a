//! Helpers shared by the user programs.

#![no_std]

use libc_lite::sys;

pub mod lineedit;

/// Runs `path` with `args` in a child and returns its wait status.
pub fn run(path: &str, args: &[&str]) -> Result<i32, libc_lite::Errno> {
    let pid = sys::fork()?;
    if pid == 0 {
        let e = sys::execve(path, args, &["PATH=/bin"]);
        libc_lite::eprintln!("{}: {}", path, e.message());
        sys::exit(127);
    }
    sys::waitpid(pid as i32)
}

/// The kernel's `kinfo()` for a program that cannot go on without it: on
/// failure it says so on stderr (`PROGRAM: why`) and gives the exit status 1.
pub fn kinfo_or_report() -> Result<abi::types::KInfo, i32> {
    sys::kinfo().map_err(|e| {
        libc_lite::eprintln!("{}: {}", libc_lite::env::program_name(), e.message());
        1
    })
}

/// Spin loops whose code addresses are known, for profiling tests and demos.
pub mod spin {
    use libc_lite::sys;

    /// Defines a spin loop at its own code address. Each spins for `cycles`
    /// TSC cycles without a system call, in a loop whose instructions all
    /// lie in the returned `[start, end)`: every tick that interrupts it is
    /// charged to a pc in that range. `$extra` makes the bodies differ, so
    /// the linker cannot merge the two functions into one.
    macro_rules! spin_loop {
        ($(#[$doc:meta])* $name:ident, $extra:literal) => {
            $(#[$doc])*
            #[inline(never)]
            pub fn $name(cycles: u64) -> (u64, u64) {
                let (start, end): (u64, u64);
                // SAFETY: reads the TSC and compares; touches no memory.
                unsafe {
                    core::arch::asm!(
                        "lea {s}, [rip + 2f]",
                        "lea {e}, [rip + 3f]",
                        "rdtsc", "shl rdx, 32", "or rax, rdx", "add rax, {c}", "mov {d}, rax",
                        "2:",
                        $extra,
                        "rdtsc", "shl rdx, 32", "or rax, rdx", "cmp rax, {d}", "jb 2b",
                        "3:",
                        s = out(reg) start, e = out(reg) end, c = in(reg) cycles, d = out(reg) _,
                        out("rax") _, out("rdx") _, options(nomem, nostack),
                    );
                }
                (start, end)
            }
        };
    }

    spin_loop!(
        /// The first loop.
        loop_a,
        "nop"
    );
    spin_loop!(
        /// A second loop like `loop_a`, at other addresses.
        loop_b,
        "nop; nop"
    );

    /// The code range of `loop_a` / `loop_b` (spinning for no time).
    pub fn range_a() -> (u64, u64) {
        loop_a(0)
    }

    pub fn range_b() -> (u64, u64) {
        loop_b(0)
    }

    /// TSC cycles per clock tick.
    pub fn cycles_per_tick() -> u64 {
        let k = sys::kinfo().expect("kinfo");
        k.tsc_per_sec / k.hz.max(1)
    }

    /// Spins in `spin` until the kernel has counted `ticks` clock
    /// interrupts, for tests that need that many samples whatever the host
    /// does: a host too busy to run QEMU lets TSC time pass without ticks
    /// (they come late, in a burst), so a spin measured in cycles alone can
    /// see half of them. It spins the cycles first and asks the kernel
    /// (kinfo) only then, again for the ticks still missing, so almost no
    /// tick lands in the asking.
    pub fn for_ticks(spin: fn(u64) -> (u64, u64), ticks: u64) {
        let counted = || sys::kinfo().map_or(0, |k| k.ticks);
        let per = cycles_per_tick();
        let start = counted();
        loop {
            let done = counted().saturating_sub(start);
            if done >= ticks {
                break;
            }
            spin((ticks - done) * per);
        }
    }

    /// Ticks this thread has run (CLOCK_THREAD_CPUTIME_ID, which the kernel
    /// counts in ticks: each one that came while it ran).
    pub fn thread_ticks(hz: u64) -> u64 {
        let ran = sys::clock_gettime(abi::types::CLOCK_THREAD_CPUTIME_ID)
            .map_or(0, |t| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64);
        ran * hz / 1_000_000_000
    }

    /// Spins in `spin` until this thread has run `ticks` more ticks: as
    /// many ticks as a profile of it can have samples, whatever the host
    /// does. A host too busy to run every virtual CPU lets TSC time pass
    /// on a CPU that gets no ticks meanwhile (four CPU hogs beside four
    /// virtual CPUs: 7 ticks in 40 ticks' worth of cycles), so a spin
    /// measured in cycles, or in the clock's ticks, which another CPU
    /// keeps, can see a fraction of them. It spins the cycles first and
    /// asks only then, again for the ticks still missing, so almost no
    /// tick lands in the asking. Returns how many spins it took beyond the
    /// first: a tick that a stopped virtual CPU gets late can land in the
    /// asking between two of them, outside `spin`.
    pub fn for_cpu_ticks(spin: fn(u64) -> (u64, u64), ticks: u64) -> u64 {
        let hz = sys::kinfo().map_or(1000, |k| k.hz);
        let per = cycles_per_tick();
        let start = thread_ticks(hz);
        let mut spins = 0u64;
        loop {
            let done = thread_ticks(hz).saturating_sub(start);
            if done >= ticks {
                break;
            }
            spin((ticks - done) * per);
            spins += 1;
        }
        spins.saturating_sub(1)
    }
}

/// The test harness shared by `usertests` and `proftests`: each test runs in
/// a child process, so one that crashes fails alone, and prints one verdict
/// line, `PREFIX: ok NAME` or `PREFIX: FAIL NAME: why`, that `cargo xtask test`
/// counts.
pub mod harness {
    extern crate alloc;
    use alloc::format;
    use alloc::string::String;
    use libc_lite::{Errno, eprintln, println, sys};

    /// What a test returns: Err says why it failed.
    pub type Outcome = Result<(), String>;
    pub type Test = (&'static str, fn() -> Outcome);

    /// A table of tests, each named once, by its function:
    /// `tests![a, b]` is `&[("a", a), ("b", b)]`.
    #[macro_export]
    macro_rules! tests {
        ($($name:ident),* $(,)?) => {
            &[$((stringify!($name), $name as fn() -> $crate::harness::Outcome)),*]
        };
    }

    /// Fails the test with a formatted reason unless `cond` holds.
    #[macro_export]
    macro_rules! ensure {
        ($cond:expr, $($why:tt)*) => {
            if !$cond {
                return Err(alloc::format!($($why)*));
            }
        };
    }

    /// Checks that `got` is the error `want`.
    pub fn expect_err<T: core::fmt::Debug>(
        what: &str,
        got: Result<T, Errno>,
        want: Errno,
    ) -> Outcome {
        match got {
            Err(e) if e == want => Ok(()),
            other => Err(format!("{what}: expected {}, got {other:?}", want.name())),
        }
    }

    /// Runs `f` in a child process and returns its wait status.
    pub fn child_status(f: impl FnOnce() -> i32) -> Result<i32, String> {
        match sys::fork().map_err(|e| format!("fork: {}", e.message()))? {
            0 => sys::exit(f()),
            pid => sys::waitpid(pid as i32).map_err(|e| format!("wait: {}", e.message())),
        }
    }

    /// Prints one verdict line.
    pub fn verdict(prefix: &str, name: &str, outcome: Outcome) {
        match outcome {
            Ok(()) => println!("{prefix}: ok {name}"),
            Err(why) => println!("{prefix}: FAIL {name}: {why}"),
        }
    }

    /// Runs the tests named on the command line (all without names), but
    /// not those named with a leading `-`, each in its own child; returns
    /// (passed, failed).
    pub fn run(prefix: &str, tests: &[Test]) -> (usize, usize) {
        let args: alloc::vec::Vec<&str> = libc_lite::env::args().skip(1).collect();
        let skip: alloc::vec::Vec<&str> = args.iter().filter_map(|a| a.strip_prefix('-')).collect();
        let only: alloc::vec::Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .collect();
        let (mut passed, mut failed) = (0, 0);
        for unknown in only
            .iter()
            .chain(&skip)
            .filter(|n| !tests.iter().any(|(t, _)| t == *n))
        {
            failed += 1;
            verdict(prefix, unknown, Err(String::from("no test of that name")));
        }
        for (name, test) in tests
            .iter()
            .filter(|(n, _)| (only.is_empty() || only.contains(n)) && !skip.contains(n))
        {
            let status = child_status(|| match test() {
                Ok(()) => 0,
                Err(why) => {
                    eprintln!("{prefix}s: {name}: {why}");
                    1
                }
            });
            let outcome = match status {
                Ok(0) => Ok(()),
                Ok(s) => Err(match sys::signaled(s) {
                    Some(sig) => format!("killed by {}", libc_lite::signal::name(sig)),
                    None => String::from("see the line above"),
                }),
                Err(why) => Err(why),
            };
            if outcome.is_ok() {
                passed += 1;
            } else {
                failed += 1;
            }
            verdict(prefix, name, outcome);
        }
        (passed, failed)
    }
}

/// Small probes of the kernel's state that several test programs read.
pub mod probe {
    extern crate alloc;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;
    use libc_lite::{Errno, sys};

    /// Open file descriptions in the system: the first field of
    /// `/proc/sys/fs/file-nr`.
    pub fn open_files() -> Result<u64, String> {
        let text = sys::read_file("/proc/sys/fs/file-nr").map_err(|e| e.message())?;
        let text = core::str::from_utf8(&text).map_err(|_| "file-nr is not text")?;
        let first = text.split('\t').next().unwrap_or("");
        first
            .trim()
            .parse()
            .map_err(|_| format!("file-nr: {text:?}"))
    }

    /// Sends one byte on socket `fd` with `passed` as SCM_RIGHTS.
    pub fn send_descriptor(fd: i32, passed: i32) -> Result<usize, Errno> {
        use abi::socket::*;
        let byte = *b"F";
        let iov = [byte.as_ptr() as u64, 1];
        let cmsg_len = (size_of::<CmsgHdr>() + 4) as u64;
        let control: [u64; 3] = [
            cmsg_len,
            (SCM_RIGHTS as u64) << 32 | SOL_SOCKET as u64,
            passed as u64,
        ];
        let msg = MsgHdr {
            msg_iov: iov.as_ptr() as u64,
            msg_iovlen: 1,
            msg_control: control.as_ptr() as u64,
            msg_controllen: cmsg_align(cmsg_len as usize) as u64,
            ..MsgHdr::default()
        };
        let args = [fd as usize, &msg as *const MsgHdr as usize, 0];
        // SAFETY: the message and everything it points at live until the
        // call returns.
        Errno::from_return(unsafe { libc_lite::syscall::syscall(abi::sys::SENDMSG, &args) })
    }

    /// The names in directory `path` (one getdents64 of 4 KiB), without
    /// `.` and `..`.
    pub fn dir_names(path: &str) -> Result<Vec<String>, String> {
        use abi::types::{O_DIRECTORY, O_RDONLY};
        let dir = sys::open(path, O_RDONLY | O_DIRECTORY, 0)
            .map_err(|e| format!("{path}: {}", e.message()))?;
        let mut buf = [0u8; 4096];
        let n = sys::getdents64(dir, &mut buf).map_err(|e| e.message());
        sys::close(dir).map_err(|e| e.message())?;
        let n = n?;
        Ok(dirent_names(&buf[..n])
            .into_iter()
            .filter(|name| name != "." && name != "..")
            .collect())
    }

    /// The names in `records`, what one getdents64 filled in (`linux_dirent64`
    /// records: inode, offset, length at 16, type at 18, the name from 19),
    /// `.` and `..` included.
    pub fn dirent_names(records: &[u8]) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = 0;
        while at + 19 < records.len() {
            let len = u16::from_ne_bytes([records[at + 16], records[at + 17]]) as usize;
            let name = &records[at + 19..(at + len).min(records.len())];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            names.push(String::from_utf8_lossy(&name[..end]).into_owned());
            at += len.max(1);
        }
        names
    }
}
