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
