//! Helpers shared by the user programs.

#![no_std]

use libc_lite::sys;

/// A signal's name, as the shell and the tests print it.
pub fn signal_name(signal: u32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        17 => "SIGCHLD",
        _ => "signal",
    }
}

/// A signal number from a name ("TERM", "SIGTERM") or a number ("15").
pub fn parse_signal(text: &str) -> Option<u32> {
    if let Ok(n) = text.parse() {
        return Some(n);
    }
    let name = text.strip_prefix("SIG").unwrap_or(text);
    (1..32).find(|&s| signal_name(s).strip_prefix("SIG") == Some(name))
}

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

/// Spin loops whose code addresses are known, for profiling tests and demos.
pub mod spin {
    use libc_lite::sys;

    /// Spins for `cycles` TSC cycles without a system call, in a loop whose
    /// instructions all lie in the returned `[start, end)`: every tick that
    /// interrupts it is charged to a pc in that range.
    #[inline(never)]
    pub fn loop_a(cycles: u64) -> (u64, u64) {
        let (start, end): (u64, u64);
        // SAFETY: reads the TSC and compares; touches no memory.
        unsafe {
            core::arch::asm!(
                "lea {s}, [rip + 2f]",
                "lea {e}, [rip + 3f]",
                "rdtsc", "shl rdx, 32", "or rax, rdx", "add rax, {c}", "mov {d}, rax",
                "2:",
                "rdtsc", "shl rdx, 32", "or rax, rdx", "cmp rax, {d}", "jb 2b",
                "3:",
                s = out(reg) start, e = out(reg) end, c = in(reg) cycles, d = out(reg) _,
                out("rax") _, out("rdx") _, options(nomem, nostack),
            );
        }
        (start, end)
    }

    /// A second loop like `loop_a`, at other addresses.
    #[inline(never)]
    pub fn loop_b(cycles: u64) -> (u64, u64) {
        let (start, end): (u64, u64);
        // SAFETY: as in loop_a.
        unsafe {
            core::arch::asm!(
                "lea {s}, [rip + 2f]",
                "lea {e}, [rip + 3f]",
                "rdtsc", "shl rdx, 32", "or rax, rdx", "add rax, {c}", "mov {d}, rax",
                "2:",
                "pause",
                "rdtsc", "shl rdx, 32", "or rax, rdx", "cmp rax, {d}", "jb 2b",
                "3:",
                s = out(reg) start, e = out(reg) end, c = in(reg) cycles, d = out(reg) _,
                out("rax") _, out("rdx") _, options(nomem, nostack),
            );
        }
        (start, end)
    }

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
}
