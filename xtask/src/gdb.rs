//! `cargo xtask gdb`: the kernel under GDB, booted with address-space
//! layout randomisation off (`randomize_va_space=0`), so user addresses
//! are the same in every session, as under GDB on Linux.
//!
//! The machine is the one `cargo xtask run` boots (its root file system on
//! target/root.img, `qemu::root_disk_boot`). QEMU starts paused with its
//! gdb stub on a free local port and the kernel's
//! console in `target/gdb-console.log` (the terminal belongs to gdb); gdb
//! starts with the kernel's symbols (the unstripped ELF), the helpers in
//! `xtask/gdb/profkern.gdb` (`tick`, `sample`, `cow`, `user NAME`) and the
//! connection made. `--batch FILE` runs gdb commands from FILE without a
//! terminal, which is how the test command runs the walk-throughs of
//! `docs/gdb.md` as the page writes them (gdbdoc.rs).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::build;
use crate::options::Options;
use crate::qemu::{self, Console};
use crate::setup;

/// Runs gdb against a paused kernel booted as `cargo xtask run` boots,
/// its root disk at `root` (made there if missing or `--fresh`); returns
/// gdb's output in batch mode.
pub fn session(
    opts: &Options,
    batch: Option<&Path>,
    root: &Path,
) -> Result<(bool, String), String> {
    let gdb = setup::ensure("gdb", "gdb")?;
    let kernel = build::kernel(opts)?;
    let mut opts = opts.clone();
    // Fixed addresses, as GDB gives every program it starts on Linux
    // (its disable-randomization setting); a --boot randomize_va_space
    // line, which comes after this one, still wins.
    opts.boot.insert(0, "randomize_va_space=0".to_string());
    let boot = qemu::root_disk_boot(&mut opts, "gdb", root)?;
    let opts = &opts;
    let image = build::image(opts, &boot)?;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free local port for the gdb stub: {e}"))?
        .port();
    let console = build::root().join("target/gdb-console.log");
    let mut qemu = qemu::command(opts, &image, Console::File(&console))?;
    qemu.args(["-S", "-gdb"])
        .arg(format!("tcp:127.0.0.1:{port}"));
    qemu.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut qemu = qemu
        .spawn()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    eprintln!(
        "xtask: QEMU paused with its gdb stub on port {port}; console in {}",
        console.display()
    );
    let mut cmd = Command::new(gdb);
    cmd.current_dir(build::root())
        .arg("-q")
        .arg("-ex")
        .arg(format!("file {}", kernel.display()));
    cmd.arg("-x")
        .arg(build::root().join("xtask/gdb/profkern.gdb"));
    cmd.arg("-ex")
        .arg(format!("target remote 127.0.0.1:{port}"));
    let result = match batch {
        Some(file) => {
            cmd.args(["-batch", "-ex", "set pagination off", "-x"])
                .arg(file);
            cmd.output().map(|out| {
                let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&out.stderr));
                (out.status.success(), text)
            })
        }
        None => cmd.status().map(|s| (s.success(), String::new())),
    };
    let _ = qemu.kill();
    let _ = qemu.wait();
    result.map_err(|e| format!("cannot run gdb: {e}"))
}

pub fn run(opts: &Options, batch: Option<&PathBuf>) -> Result<ExitCode, String> {
    let root = build::root_image_path();
    let (ok, output) = session(opts, batch.map(PathBuf::as_path), &root)?;
    print!("{output}");
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
