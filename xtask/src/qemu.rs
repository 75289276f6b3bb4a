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
    /// QEMU was killed on purpose (`boot_until`: a power cut).
    Killed,
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
            Ending::Killed => "QEMU was killed on purpose (a power cut)".into(),
            Ending::QemuEnded(Some(c)) => {
                format!(
                    "QEMU ended with code {c} without a guest exit status (a triple fault, or QEMU could not start: its message is above)"
                )
            }
            Ending::QemuEnded(None) => "QEMU was killed by a signal".into(),
        }
    }
}

/// How the kernel's first console line (its banner) begins.
pub const KERNEL_FIRST_LINE: &str = "profkern ";

/// Whether a console line is OVMF's, not the bootloader's or the kernel's:
/// under UEFI the firmware's boot manager says which disk it boots, after
/// clearing the screen with escape sequences, and nothing can quiet it.
pub fn from_firmware(line: &str) -> bool {
    let mut text = line;
    // ESC [ parameters final-letter, as many as there are.
    while let Some(rest) = text.strip_prefix("\u{1b}[") {
        let end = rest
            .find(|c: char| c.is_ascii_alphabetic())
            .map_or(rest.len(), |i| i + 1);
        text = &rest[end..];
    }
    text.starts_with("BdsDxe: ")
}

/// What one scripted boot printed and how it ended.
pub struct Outcome {
    pub ending: Ending,
    pub lines: Vec<String>,
    /// From QEMU's start to the kernel's banner.
    pub first_line_after: Option<Duration>,
    pub qemu_stderr: String,
}

/// Where COM2 (the export stream) goes during a boot.
fn export_stream(opts: &Options) -> std::path::PathBuf {
    guest_out(opts).join(".com2")
}

/// Where exported guest files go (`Options::guest_out`).
pub fn guest_out(opts: &Options) -> std::path::PathBuf {
    opts.guest_out
        .clone()
        .unwrap_or_else(|| build::root().join("target/guest-out"))
}

/// Where COM1, the kernel's console, goes.
pub enum Console<'a> {
    /// The terminal, with QEMU's monitor on Ctrl-A (interactive runs).
    Terminal,
    /// QEMU's stdout, read by the runner.
    Pipe,
    /// A file (while gdb has the terminal).
    File(&'a Path),
}

/// `max` gives TCG every feature it emulates. Under nested KVM, `max` and
/// `host` make QEMU set IA32_ARCH_CAPABILITIES, which the outer hypervisor
/// refuses (QEMU aborts), so KVM gets the host model without that MSR.
pub fn cpu_model(accel: Accel) -> &'static str {
    if accel == Accel::Kvm {
        "host,-arch-capabilities"
    } else {
        "max"
    }
}

/// QEMU's name for the accelerator.
pub fn accel_name(accel: Accel) -> &'static str {
    match accel {
        Accel::Kvm => "kvm",
        Accel::Tcg => "tcg",
    }
}

/// A virtio disk's options, the same for this kernel and for Linux: a
/// modern-only virtio device (no legacy I/O BAR), as the kernel's driver
/// speaks virtio 1.x alone. `index` 0 is `/dev/vda`: QEMU puts the
/// devices on the bus in the order of their options, and both kernels
/// name disks in bus order.
pub fn disk_args(cmd: &mut Command, index: usize, disk: &Path) {
    let id = kcore::virtio::disk_name(index).expect("no more disks than MAX_DISKS");
    cmd.arg("-drive").arg(format!(
        "if=none,id={id},format=raw,file={}",
        disk.display()
    ));
    cmd.args([
        "-device",
        &format!("virtio-blk-pci,drive={id},disable-legacy=on"),
    ]);
}

pub fn command(opts: &Options, image: &Path, console: Console) -> Result<Command, String> {
    let mut cmd = Command::new(setup::qemu()?);
    cmd.arg("-drive")
        .arg(format!("format=raw,file={}", image.display()));
    cmd.args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
    cmd.args(["-m", "512M", "-no-reboot", "-display", "none"]);
    cmd.args(["-cpu", cpu_model(opts.accel)]);
    cmd.args(["-smp", &opts.cpus.to_string()]);
    match console {
        Console::Terminal => cmd.args(["-serial", "mon:stdio"]),
        Console::Pipe => cmd.args(["-serial", "stdio"]),
        Console::File(path) => cmd.arg("-serial").arg(format!("file:{}", path.display())),
    };
    if !opts.export.is_empty() {
        let stream = export_stream(opts);
        let dir = stream.parent().expect("has a parent");
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let _ = std::fs::remove_file(&stream);
        cmd.arg("-serial").arg(format!("file:{}", stream.display()));
    }
    for (index, disk) in opts.disks.iter().enumerate() {
        disk_args(&mut cmd, index, disk);
    }
    cmd.args(["-accel", accel_name(opts.accel)]);
    if opts.uefi {
        cmd.arg("-bios").arg(setup::ovmf()?);
    }
    Ok(cmd)
}

/// Keys typed at the console once a console line contains a text: how a test
/// presses Ctrl-C at the right moment. An empty text types the keys as
/// QEMU starts, while the machine boots (typed-ahead input).
pub type Typing<'a> = &'a [(&'a str, &'a str)];

/// Boots `image` and collects its console until it ends or `timeout` passes.
/// With `echo`, each line is also printed as it arrives. `typing` is typed
/// in order, each entry once its trigger text has appeared.
pub fn boot(
    opts: &Options,
    image: &Path,
    timeout: Duration,
    echo: bool,
    typing: Typing,
) -> Result<Outcome, String> {
    boot_until(opts, image, timeout, echo, typing, None)
}

/// `boot`, killing QEMU `delay` after a console line first contains
/// `trigger` (`kill`): a power cut from outside, for the crash suites.
/// Such a boot ends `Ending::Killed`.
pub fn boot_until(
    opts: &Options,
    image: &Path,
    timeout: Duration,
    echo: bool,
    typing: Typing,
    kill: Option<(&str, Duration)>,
) -> Result<Outcome, String> {
    let mut cmd = command(opts, image, Console::Pipe)?;
    cmd.stdin(if typing.is_empty() {
        Stdio::null()
    } else {
        Stdio::piped()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("cannot start QEMU: {e}"))?;
    let mut keyboard = child.stdin.take();
    let mut to_type = typing.iter().peekable();
    while let (Some(&&("", keys)), Some(stdin)) = (to_type.peek(), keyboard.as_mut()) {
        use std::io::Write;
        let _ = stdin
            .write_all(keys.as_bytes())
            .and_then(|()| stdin.flush());
        to_type.next();
    }
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
    let mut killed = false;
    let mut kill_at: Option<Duration> = None;
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        let left = match kill_at {
            Some(at) => left.min(at.saturating_sub(start.elapsed())),
            None => left,
        };
        match rx.recv_timeout(left) {
            Ok((line, at)) => {
                if let Some((trigger, delay)) = kill
                    && kill_at.is_none()
                    && line.contains(trigger)
                {
                    kill_at = Some(at + delay);
                }
                if first_line_after.is_none() && line.starts_with(KERNEL_FIRST_LINE) {
                    first_line_after = Some(at);
                }
                if echo {
                    println!("{line}");
                }
                if let (Some(&&(trigger, keys)), Some(stdin)) = (to_type.peek(), keyboard.as_mut())
                    && line.contains(trigger)
                {
                    use std::io::Write;
                    let _ = stdin
                        .write_all(keys.as_bytes())
                        .and_then(|()| stdin.flush());
                    to_type.next();
                }
                lines.push(line);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout)
                if kill_at.is_some_and(|at| start.elapsed() >= at) =>
            {
                killed = true;
                let _ = child.kill();
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for QEMU: {e}"))?;
    let qemu_stderr = err_thread.join().unwrap_or_default();
    let ending = match Ending::from_qemu(status.code()) {
        _ if killed => Ending::Killed,
        _ if timed_out => Ending::TimedOut(timeout.as_secs()),
        // Only the kernel powers off through the exit device, so a status
        // before its banner is QEMU's own failure (exit code 1: an image
        // another QEMU holds locked, a bad option), not a guest's 0.
        Ending::Exited(_) if first_line_after.is_none() => Ending::QemuEnded(status.code()),
        ending => ending,
    };
    Ok(Outcome {
        ending,
        lines,
        first_line_after,
        qemu_stderr,
    })
}

/// How `run` and `gdb` boot: the root file system is a disk, /dev/vda
/// (`root`, made by `build::root_image_at` on first use or with
/// `--fresh`; init mounts it: user/src/bin/init.rs), and the user's
/// `--disk`s follow it; unless files go in the ramdisk (`--add`), which
/// the disk's root would hide. `name` names the boot's image.
pub fn root_disk_boot(opts: &mut Options, name: &str, root: &Path) -> Result<Boot, String> {
    if opts.add.is_empty() {
        if opts.disks.len() == kcore::virtio::MAX_DISKS {
            return Err(format!(
                "--disk is given at most {} times with the root disk: it is /dev/vda",
                kcore::virtio::MAX_DISKS - 1
            ));
        }
        let image = match opts.debian_root {
            true => crate::rootfs::image(opts.fresh)?,
            false => build::root_image_at(opts, root, opts.fresh)?,
        };
        opts.disks.insert(0, image);
        Ok(Boot::test(opts, name, "root=/dev/vda\n"))
    } else {
        if opts.fresh {
            return Err("--fresh makes the root disk, which --add leaves out".into());
        }
        if opts.debian_root {
            return Err("--root debian boots on a disk, which --add leaves out".into());
        }
        eprintln!("xtask: booting on the ramdisk (--add given)");
        Ok(Boot::normal(opts))
    }
}

/// `cargo xtask run`.
pub fn run(opts: &Options) -> Result<ExitCode, String> {
    let mut opts = opts.clone();
    let boot_kind = root_disk_boot(&mut opts, "run", &build::root_image_path())?;
    let opts = &opts;
    let image = build::image(opts, &boot_kind)?;
    // At a terminal (and with no time limit) QEMU gets it: the shell, or a
    // program given with `--`, can be typed at. Otherwise (scripts, CI) the
    // console is captured line by line and input is closed.
    let interactive = opts.timeout.is_none()
        && (opts.program.is_empty() || std::io::IsTerminal::is_terminal(&std::io::stdin()));
    if interactive {
        eprintln!("xtask: booting {} (Ctrl-A X quits QEMU)", image.display());
        let status = command(opts, &image, Console::Terminal)?
            .status()
            .map_err(|e| format!("cannot start QEMU: {e}"))?;
        let ending = Ending::from_qemu(status.code());
        eprintln!("xtask: {}", ending.describe());
        unpack_exports(opts)?;
        return Ok(exit_code(ending));
    }
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(600));
    let outcome = boot(opts, &image, timeout, true, &[])?;
    if !outcome.qemu_stderr.trim().is_empty() && !matches!(outcome.ending, Ending::Exited(_)) {
        eprint!("{}", outcome.qemu_stderr);
    }
    eprintln!("xtask: {}", outcome.ending.describe());
    unpack_exports(opts)?;
    Ok(exit_code(outcome.ending))
}

/// Unpacks the COM2 stream (see kernel/src/fs/export.rs) into
/// `target/guest-out/` (or `Options::guest_out`); returns the files
/// written.
pub fn unpack_exports(opts: &Options) -> Result<Vec<std::path::PathBuf>, String> {
    if opts.export.is_empty() {
        return Ok(Vec::new());
    }
    let stream = std::fs::read(export_stream(opts)).unwrap_or_default();
    let files = parse_exports(&stream);
    let dir = guest_out(opts);
    let mut written = Vec::new();
    for want in &opts.export {
        // A directory comes as the files in it.
        let inside = format!("{}/", want.trim_end_matches('/'));
        let sent: Vec<_> = files
            .iter()
            .filter(|(path, _)| path == want || path.starts_with(&inside))
            .collect();
        if sent.is_empty() {
            eprintln!("xtask: export: {want} was not sent (the guest did not power off cleanly?)");
        }
        for (path, data) in sent {
            let Some(data) = data else {
                eprintln!("xtask: export: {path} did not exist in the guest");
                continue;
            };
            let name = path.trim_start_matches('/').replace('/', "_");
            let out = dir.join(name);
            std::fs::write(&out, data)
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            eprintln!(
                "xtask: exported {path} ({} bytes) -> {}",
                data.len(),
                out.display()
            );
            written.push(out);
        }
    }
    Ok(written)
}

/// Decodes `EXPORT <path> <len>\n<bytes>` / `MISSING <path>\n` records up to `END`.
/// Lines before the first record are skipped: OVMF writes its own console
/// to every serial port, COM2 too, before the kernel starts.
fn parse_exports(mut stream: &[u8]) -> Vec<(String, Option<Vec<u8>>)> {
    let mut files = Vec::new();
    while !stream.starts_with(b"EXPORT ") && !stream.starts_with(b"MISSING ") {
        match stream.iter().position(|&b| b == b'\n') {
            Some(nl) => stream = &stream[nl + 1..],
            None => return files,
        }
    }
    while let Some(nl) = stream.iter().position(|&b| b == b'\n') {
        let header = String::from_utf8_lossy(&stream[..nl]).to_string();
        stream = &stream[nl + 1..];
        let words: Vec<&str> = header.split(' ').collect();
        match words.as_slice() {
            ["EXPORT", path, len] => {
                let Ok(len) = len.parse::<usize>() else { break };
                if stream.len() < len {
                    break;
                }
                files.push((path.to_string(), Some(stream[..len].to_vec())));
                stream = &stream[len..];
            }
            ["MISSING", path] => files.push((path.to_string(), None)),
            _ => break,
        }
    }
    files
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
    fn ovmf_lines_are_told_from_the_bootloaders() {
        assert!(from_firmware(
            "\u{1b}[2J\u{1b}[01;01H\u{1b}[=3h\u{1b}[2JBdsDxe: failed to load Boot0001"
        ));
        assert!(from_firmware("BdsDxe: starting Boot0002"));
        assert!(!from_firmware("INFO : Loading kernel"));
        assert!(!from_firmware("\u{1b}[2J"));
    }

    #[test]
    fn what_the_firmware_wrote_on_com2_is_skipped() {
        let stream =
            b"\x1b[2JBdsDxe: loading Boot0002\r\nBdsDxe: starting\r\nEXPORT /g 2\nhi\nEND\n";
        assert_eq!(
            parse_exports(stream),
            vec![("/g".to_string(), Some(b"hi".to_vec()))]
        );
        assert_eq!(parse_exports(b"only the firmware\r\n"), Vec::new());
    }

    #[test]
    fn export_stream_round_trip() {
        let stream = b"EXPORT /gmon.out 3\nab\nMISSING /x\nEXPORT /y 0\nEND\n";
        let files = parse_exports(stream);
        assert_eq!(
            files,
            vec![
                ("/gmon.out".to_string(), Some(b"ab\n".to_vec())),
                ("/x".to_string(), None),
                ("/y".to_string(), Some(Vec::new())),
            ]
        );
        assert!(
            parse_exports(b"EXPORT /a 10\nshort").is_empty(),
            "a truncated file is not returned"
        );
    }

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
