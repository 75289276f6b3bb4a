//! Building: the kernel, the ramdisk, and the disk image that holds both.
//!
//! The kernel is a `x86_64-unknown-none` binary built by a nested cargo. The
//! ramdisk is a newc cpio archive (written with `kcore::cpio`, the same code
//! the kernel reads it with) holding `etc/boot.conf`, the boot options for
//! this boot. The `boot` crate then wraps kernel and ramdisk into a BIOS or
//! UEFI disk image under `target/images/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::options::Options;

pub const TARGET: &str = "x86_64-unknown-none";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Runs a command, turning failure into a one-line error.
pub fn run_checked(cmd: &mut Command, what: &str) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Builds the kernel and returns the path of its ELF.
pub fn kernel(opts: &Options) -> Result<PathBuf, String> {
    let mut cmd = cargo();
    cmd.args([
        "build",
        "--quiet",
        "--package",
        "kernel",
        "--target",
        TARGET,
    ]);
    if opts.release {
        cmd.arg("--release");
    }
    run_checked(&mut cmd, "building the kernel")?;
    let profile = if opts.release { "release" } else { "debug" };
    Ok(root()
        .join("target")
        .join(TARGET)
        .join(profile)
        .join("kernel"))
}

/// What one boot should do: its boot options, and a name for its files.
#[derive(Clone, Debug)]
pub struct Boot {
    pub name: String,
    pub conf: String,
}

impl Boot {
    fn with(opts: &Options, name: &str, extra: &str) -> Boot {
        let mut conf = format!("hz={}\ntick={}\n", opts.hz, opts.tick.name());
        if let Some((program, args)) = opts.program.split_first() {
            conf += &format!("init={program}\ninit_args={}\n", args.join(" "));
        }
        conf += extra;
        Boot {
            name: name.to_string(),
            conf,
        }
    }

    /// A normal boot with the user's options.
    pub fn normal(opts: &Options) -> Boot {
        Boot::with(opts, "run", "")
    }

    /// A test boot: the user's accelerator and firmware, with these options.
    pub fn test(opts: &Options, name: &str, extra: &str) -> Boot {
        Boot::with(opts, name, extra)
    }
}

/// The ramdisk archive for `boot`.
pub fn ramdisk(boot: &Boot) -> Vec<u8> {
    use kcore::cpio::{S_IFDIR, S_IFREG, write_entry, write_trailer};
    let mut out = Vec::new();
    write_entry(&mut out, 1, "etc", S_IFDIR | 0o755, &[]);
    write_entry(
        &mut out,
        2,
        "etc/boot.conf",
        S_IFREG | 0o644,
        boot.conf.as_bytes(),
    );
    write_trailer(&mut out);
    out
}

/// Builds kernel, ramdisk and disk image for `boot`; returns the image path.
pub fn image(opts: &Options, boot: &Boot) -> Result<PathBuf, String> {
    let kernel = kernel(opts)?;
    let dir = root().join("target").join("images");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let ramdisk_path = dir.join(format!("{}.cpio", boot.name));
    std::fs::write(&ramdisk_path, ramdisk(boot))
        .map_err(|e| format!("cannot write {}: {e}", ramdisk_path.display()))?;
    let (firmware, suffix) = if opts.uefi {
        (boot::Firmware::Uefi, "uefi")
    } else {
        (boot::Firmware::Bios, "bios")
    };
    let image = dir.join(format!("{}-{suffix}.img", boot.name));
    boot::build_image(firmware, &kernel, &ramdisk_path, &image)?;
    Ok(image)
}
