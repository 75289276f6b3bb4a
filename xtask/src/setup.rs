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

/// e2fsprogs (mke2fs, e2fsck, debugfs): kcore's ext2 tests make images
/// with it and judge what the kernel's ext2 wrote.
pub fn e2fsprogs() -> Result<PathBuf, String> {
    ensure("/sbin/mke2fs", "e2fsprogs")
}

/// Another program of e2fsprogs (`e2fsck`, `debugfs`, `dumpe2fs`), beside
/// mke2fs; the package installed first if it is missing.
pub fn e2fs_tool(name: &str) -> Result<PathBuf, String> {
    Ok(e2fsprogs()?.with_file_name(name))
}

/// `e2fsck -fn`: Ok when it finds the file system at `image` clean, else
/// what it printed.
pub fn e2fsck_clean(image: &Path) -> Result<(), String> {
    let out = Command::new(e2fs_tool("e2fsck")?)
        .arg("-fn")
        .arg(image)
        .output()
        .map_err(|e| format!("cannot run e2fsck: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "e2fsck -fn finds {} unclean (exit {:?}):\n{}",
            image.display(),
            out.status.code(),
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    Ok(())
}

/// A fresh ext3 image at `image`: `size` as mke2fs reads it (`512M`),
/// blocks of `block_size` bytes, the root directory root's, and with
/// `tree` the files of that host directory in it (`mke2fs -d`); `extra`
/// are more mke2fs options (`-L NAME`). Whatever was at `image` is gone.
pub fn make_ext3(
    image: &Path,
    size: &str,
    block_size: u32,
    tree: Option<&Path>,
    extra: &[&str],
) -> Result<(), String> {
    let mut cmd = Command::new(e2fsprogs()?);
    cmd.args(["-q", "-F", "-t", "ext3", "-b", &block_size.to_string()])
        .args(["-E", "root_owner=0:0"])
        .args(extra);
    if let Some(tree) = tree {
        cmd.arg("-d").arg(tree);
    }
    let _ = std::fs::remove_file(image);
    let out = cmd
        .arg(image)
        .arg(size)
        .output()
        .map_err(|e| format!("cannot run mke2fs: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "mke2fs {}: {}",
            image.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
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

/// A file from a Debian package, fetched once: `apt-get download PACKAGE`
/// into `dir`, then `member` (a path inside the package, shell wildcards
/// allowed, such as `./boot/vmlinuz-*`) unpacked with dpkg-deb and the .deb
/// removed. Later calls find the file in `dir` and fetch nothing. The
/// package registries are the only network these machines have.
pub fn debian_file(dir: &Path, package: &str, member: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if let Some(found) = unpacked(dir, member) {
        return Ok(found);
    }
    let output = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(())
    };
    println!("xtask: fetching {package} (once) into {}", dir.display());
    output(
        Command::new("apt-get")
            .args(["download", "-q", package])
            .current_dir(dir),
        &format!("apt-get download {package}"),
    )?;
    let deb = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "deb")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(package))
        })
        .ok_or_else(|| format!("apt-get download {package} left no .deb"))?;
    let unpack = format!(
        "dpkg-deb --fsys-tarfile '{}' | tar -x -C '{}' --wildcards '{member}'",
        deb.display(),
        dir.display()
    );
    let unpacked = output(
        Command::new("sh").args(["-c", &unpack]),
        &format!("unpacking {member} from {package}"),
    );
    let _ = std::fs::remove_file(&deb);
    unpacked?;
    self::unpacked(dir, member).ok_or_else(|| format!("{package} holds no {member}"))
}

/// The file `member` (as `debian_file` names it) if it is unpacked in `dir`.
pub fn unpacked(dir: &Path, member: &str) -> Option<PathBuf> {
    let (parent, pattern) = member.rsplit_once('/').unwrap_or((".", member));
    let prefix = pattern.trim_end_matches('*');
    std::fs::read_dir(dir.join(parent))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                if pattern.ends_with('*') {
                    n.starts_with(prefix)
                } else {
                    n == pattern
                }
            })
        })
}
