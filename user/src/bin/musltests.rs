//! /bin/musltests NAME... [--case NAME PROGRAM ARG... --]...: runs the
//! static musl programs `/bin/musl-NAME` (built by xtask from
//! `tests/musl/NAME.c`), and the `--case` command lines (Debian's
//! glibc-static shells running a script), one after another and prints what
//! each wrote to stdout, framed so that `cargo xtask test` can compare it
//! with the same binary's output on the host's Linux:
//!
//! ```text
//! musl: begin NAME
//! musl| a line the program printed
//! musl: end NAME exit 0          (or: signal 11)
//! musl: NAME took 1.25 s
//! ```
//!
//! The `took` line (guest time, from fork to wait) is not compared; it is
//! there to find the program that makes a suite slow.
//!
//! A program still running after `LIMIT_SECONDS` is killed (an alarm, whose
//! handler sends SIGKILL), so one that hangs fails alone.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use libc_lite::signal::{self, Handler};
use libc_lite::{Errno, eprintln, println, sys};

libc_lite::entry!(run);

/// A guard against a hang, not a measure of speed: requeue's thousand
/// processes took 134 s of guest time on one CPU beside a CI run on the
/// host, and were killed at 240 s in a CI run; mmap's million blocks of
/// 1 MiB took over 60 s on 4 virtual CPUs with four CPU hogs.
const LIMIT_SECONDS: u32 = 480;

/// The child being run, for the alarm handler.
static CHILD: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_alarm(_signal: i32) {
    let _ = sys::kill(CHILD.load(Ordering::Relaxed) as i32, abi::signal::SIGKILL);
}

/// Runs `argv` with stdout on a pipe, in an empty directory of its own
/// (`/run-NAME`: the programs write files with relative names, as on the
/// host); returns its output and wait status.
fn run_one(name: &str, argv: &[&str]) -> Result<(Vec<u8>, i32), Errno> {
    let path = argv[0];
    let dir = alloc::format!("/run-{name}");
    sys::mkdir(&dir, 0o755)?;
    let (r, w) = sys::pipe()?;
    let pid = sys::fork()?;
    if pid == 0 {
        let _ = sys::chdir(&dir);
        let _ = sys::dup2(w, 1);
        let _ = sys::close(r);
        let _ = sys::close(w);
        let e = sys::execve(path, argv, &["PATH=/bin", "HOME=/"]);
        eprintln!("musltests: {path}: {}", e.message());
        sys::exit(127);
    }
    let _ = sys::close(w);
    CHILD.store(pid, Ordering::Relaxed);
    signal::alarm(LIMIT_SECONDS);
    let mut output = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match sys::read(r, &mut buf) {
            Ok(0) => break,
            Ok(n) => output.extend_from_slice(&buf[..n]),
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e),
        }
    }
    let _ = sys::close(r);
    let status = sys::waitpid(pid as i32);
    signal::alarm(0);
    Ok((output, status?))
}

fn run() -> i32 {
    let _ = signal::sigaction(abi::signal::SIGALRM, Handler::Simple(on_alarm), 0, 0);
    let mut failed = 0;
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let mut rest = &args[..];
    while let [first, more @ ..] = rest {
        let musl_path;
        let (name, argv, after): (&str, Vec<&str>, &[&str]) = match (*first, more) {
            ("--case", [name, tail @ ..]) => {
                let end = tail.iter().position(|a| *a == "--").unwrap_or(tail.len());
                (
                    name,
                    tail[..end].to_vec(),
                    &tail[(end + 1).min(tail.len())..],
                )
            }
            (name, _) => {
                musl_path = alloc::format!("/bin/musl-{name}");
                (name, alloc::vec![musl_path.as_str()], more)
            }
        };
        rest = after;
        if argv.is_empty() {
            println!("musl: end {name} error no command line");
            failed += 1;
            continue;
        }
        println!("musl: begin {name}");
        let started = sys::monotonic_nanos();
        let ran = run_one(name, &argv);
        let millis = (sys::monotonic_nanos() - started) / 1_000_000;
        match ran {
            Ok((output, status)) => {
                for line in output.split(|&b| b == b'\n') {
                    println!("musl| {}", alloc::string::String::from_utf8_lossy(line));
                }
                match (sys::exited(status), sys::signaled(status)) {
                    (Some(code), _) => println!("musl: end {name} exit {code}"),
                    (_, Some(signal)) => println!("musl: end {name} signal {signal}"),
                    _ => println!("musl: end {name} status {status:#x}"),
                }
            }
            Err(e) => {
                failed += 1;
                println!("musl: end {name} error {}", e.message());
            }
        }
        println!(
            "musl: {name} took {}.{:02} s",
            millis / 1000,
            millis % 1000 / 10
        );
    }
    i32::from(failed > 0)
}
