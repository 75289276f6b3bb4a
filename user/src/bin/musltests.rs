//! /bin/musltests NAME...: runs the static musl programs `/bin/musl-NAME`
//! (built by xtask from `tests/musl/NAME.c`) one after another and prints
//! what each wrote to stdout, framed so that `cargo xtask test` can compare
//! it with the same binary's output on the host's Linux:
//!
//! ```text
//! musl: begin NAME
//! musl| a line the program printed
//! musl: end NAME exit 0          (or: signal 11)
//! ```
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

const LIMIT_SECONDS: u32 = 60;

/// The child being run, for the alarm handler.
static CHILD: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_alarm(_signal: i32) {
    let _ = sys::kill(CHILD.load(Ordering::Relaxed) as i32, abi::signal::SIGKILL);
}

/// Runs `/bin/musl-NAME` with stdout on a pipe; returns its output and wait status.
fn run_one(name: &str) -> Result<(Vec<u8>, i32), Errno> {
    let path = alloc::format!("/bin/musl-{name}");
    let (r, w) = sys::pipe()?;
    let pid = sys::fork()?;
    if pid == 0 {
        let _ = sys::dup2(w, 1);
        let _ = sys::close(r);
        let _ = sys::close(w);
        let e = sys::execve(&path, &[&path], &["PATH=/bin", "HOME=/"]);
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
    for name in libc_lite::env::args().skip(1) {
        println!("musl: begin {name}");
        match run_one(name) {
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
    }
    i32::from(failed > 0)
}
