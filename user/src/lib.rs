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
