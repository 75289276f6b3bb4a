//! Host tools the commands need, installed on demand.
//!
//! A fresh Debian machine has no QEMU. When we are root and apt-get exists we
//! install the Debian package ourselves; otherwise we stop with the exact
//! command to run. Nothing is downloaded any other way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Finds `program` on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Makes sure `path_or_program` exists, installing Debian package `package`
/// if it does not. `path_or_program` is either a program name looked up on
/// PATH or an absolute file path.
pub fn ensure(path_or_program: &str, package: &str) -> Result<PathBuf, String> {
    let find = || {
        if path_or_program.starts_with('/') {
            Some(PathBuf::from(path_or_program)).filter(|p| p.exists())
        } else {
            which(path_or_program)
        }
    };
    if let Some(found) = find() {
        return Ok(found);
    }
    let manual =
        format!("{path_or_program} not found; install it with: sudo apt-get install {package}");
    if !is_root() || which("apt-get").is_none() {
        return Err(manual);
    }
    eprintln!("xtask: {path_or_program} not found; installing Debian package {package}");
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !(apt(&["update", "-q"]) && apt(&["install", "-y", "-q", package])) {
        return Err(format!("apt-get could not install {package}; {manual}"));
    }
    find().ok_or(manual)
}

pub fn qemu() -> Result<PathBuf, String> {
    ensure("qemu-system-x86_64", "qemu-system-x86")
}

/// The OVMF firmware image for UEFI boots.
pub fn ovmf() -> Result<PathBuf, String> {
    const CANDIDATES: [&str; 2] = ["/usr/share/ovmf/OVMF.fd", "/usr/share/qemu/OVMF.fd"];
    if let Some(found) = CANDIDATES.iter().map(Path::new).find(|p| p.exists()) {
        return Ok(found.to_path_buf());
    }
    ensure(CANDIDATES[0], "ovmf")
}
