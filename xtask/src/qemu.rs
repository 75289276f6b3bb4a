//! Booting an image in QEMU and turning what happens into a result.
//!
//! The kernel's console is COM1, which QEMU puts on its stdout. Interactive
//! runs hand the terminal to QEMU (`mon:stdio`, so Ctrl-A X quits); scripted
//! runs and tests read the console line by line, with a timeout that kills
//! QEMU and says so. The exit status comes from the `isa-debug-exit` device:
//! QEMU exits with `(value << 1) | 1`, and value 127 means the kernel itself
//! failed (see kernel/src/arch/power.rs).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::build::{self, Boot};
use crate::options::{Accel, Options};
use crate::setup;

/// Status value meaning "the kernel stopped on a panic or exception".
pub const KERNEL_FAILURE: u8 = 127;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The guest powered off with this status.
    Exited(u8),
    /// The kernel panicked or hit an exception.
    KernelFailure,
    /// QEMU was killed after the timeout.
    TimedOut(u64),
    /// QEMU ended without the guest asking (closed, triple fault, error).
    QemuEnded(Option<i32>),
}

impl Ending {
    fn from_qemu(code: Option<i32>) -> Ending {
        match code {
            Some(c) if c & 1 == 1 && (c >> 1) as u8 == KERNEL_FAILURE => Ending::KernelFailure,
            Some(c) if c & 1 == 1 => Ending::Exited((c >> 1) as u8),
            other => Ending::QemuEnded(other),
        }
    }

    pub fn describe(self) -> String {
        match self {
            Ending::Exited(s) => format!("guest powered off with status {s}"),
            Ending::KernelFailure => {
                "the kernel stopped with a failure (panic or exception report above)".into()
            }
            Ending::TimedOut(s) => format!("QEMU timed out after {s} s and was killed"),
            Ending::QemuEnded(Some(c)) => {
                format!("QEMU ended with code {c} without a guest exit status (triple fault?)")
            }
            Ending::QemuEnded(None) => "QEMU was killed by a signal".into(),
        }
    }
}

/// How the kernel's first console line (its banner) begins.
pub const KERNEL_FIRST_LINE: &str = "profkern ";

/// What one scripted boot printed and how it ended.
pub struct Outcome {
    pub ending: Ending,
    pub lines: Vec<String>,
    /// From QEMU's start to the kernel's banner.
    pub first_line_after: Option<Duration>,
    pub qemu_stderr: String,
}

fn command(opts: &Options, image: &Path, interactive: bool) -> Result<Command, String> {
    let mut cmd = Command::new(setup::qemu()?);
    cmd.arg("-drive")
        .arg(format!("format=raw,file={}", image.display()));
    cmd.args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
    cmd.args([
        "-m",
        "512M",
        "-no-reboot",
        "-display",
        "none",
        "-cpu",
        "max",
    ]);
    cmd.args(["-serial", if interactive { "mon:stdio" } else { "stdio" }]);
    cmd.args([
        "-accel",
        if opts.accel == Accel::Kvm {
            "kvm"
        } else {
            "tcg"
        },
    ]);
    if opts.uefi {
        cmd.arg("-bios").arg(setup::ovmf()?);
    }
    Ok(cmd)
}

/// Boots `image` and collects its console until it ends or `timeout` passes.
/// With `echo`, each line is also printed as it arrives.
pub fn boot(
    opts: &Options,
    image: &Path,
    timeout: Duration,
    echo: bool,
) -> Result<Outcome, String> {
    let mut cmd = command(opts, image, false)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("cannot start QEMU: {e}"))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_string();
            if tx.send((text, start.elapsed())).is_err() {
                break;
            }
        }
    });
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut lines = Vec::new();
    let mut first_line_after = None;
    let mut timed_out = false;
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok((line, at)) => {
                if first_line_after.is_none() && line.starts_with(KERNEL_FIRST_LINE) {
                    first_line_after = Some(at);
                }
                if echo {
                    println!("{line}");
                }
                lines.push(line);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for QEMU: {e}"))?;
    let qemu_stderr = err_thread.join().unwrap_or_default();
    let ending = if timed_out {
        Ending::TimedOut(timeout.as_secs())
    } else {
        Ending::from_qemu(status.code())
    };
    Ok(Outcome {
        ending,
        lines,
        first_line_after,
        qemu_stderr,
    })
}

/// `cargo xtask run`.
pub fn run(opts: &Options) -> Result<ExitCode, String> {
    let image = build::image(opts, &Boot::normal(opts))?;
    if opts.program.is_empty() && opts.timeout.is_none() {
        eprintln!("xtask: booting {} (Ctrl-A X quits QEMU)", image.display());
        let status = command(opts, &image, true)?
            .status()
            .map_err(|e| format!("cannot start QEMU: {e}"))?;
        let ending = Ending::from_qemu(status.code());
        eprintln!("xtask: {}", ending.describe());
        return Ok(exit_code(ending));
    }
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(600));
    let outcome = boot(opts, &image, timeout, true)?;
    if !outcome.qemu_stderr.trim().is_empty() && !matches!(outcome.ending, Ending::Exited(_)) {
        eprint!("{}", outcome.qemu_stderr);
    }
    eprintln!("xtask: {}", outcome.ending.describe());
    Ok(exit_code(outcome.ending))
}

fn exit_code(ending: Ending) -> ExitCode {
    match ending {
        Ending::Exited(s) => ExitCode::from(s),
        Ending::QemuEnded(Some(0)) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_exit_codes_map_back_to_guest_status() {
        assert_eq!(Ending::from_qemu(Some(1)), Ending::Exited(0));
        assert_eq!(Ending::from_qemu(Some(3)), Ending::Exited(1));
        assert_eq!(Ending::from_qemu(Some(85)), Ending::Exited(42));
        assert_eq!(Ending::from_qemu(Some(255)), Ending::KernelFailure);
        assert_eq!(Ending::from_qemu(Some(0)), Ending::QemuEnded(Some(0)));
        assert_eq!(Ending::from_qemu(None), Ending::QemuEnded(None));
    }
}
