//! The `ext3-linux` suite: this kernel and Debian's Linux, in the same
//! QEMU, each read the ext3 disk the other wrote, and agree on every name,
//! type, mode, owner, link count, size, device number, link target and
//! file hash.
//!
//! One static musl program, `tests/disk/fstree.c`, writes the tree and
//! lists it on both (here as `/bin/fstree --mount`, on Linux as the
//! `/init` of an initramfs with the virtio and ext4 modules of Debian's
//! kernel package, which it loads itself). Two rounds:
//!
//! 1. this kernel writes a fresh image and lists it (a second boot, so
//!    the listing comes from the disk); the host's `e2fsck -fn` finds the
//!    image clean; Linux lists it; the listings must be the same;
//! 2. Linux writes a fresh image and lists it; `e2fsck -fn`; this kernel
//!    lists it; the same again.
//!
//! Linux's kernel and modules are fetched once from the package
//! registry into `target/bench/linux/` (as `cargo xtask bench` does).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::build::{self, Boot};
use crate::checks::Tally;
use crate::options::Options;
use crate::qemu::{self, Ending};
use crate::suites::{Disk, Suite};

/// The modules the disk needs on Debian's kernel: the virtio PCI
/// transport, the block driver, and ext4 (which mounts ext3). Their own
/// dependencies are read from each module's `depends=`.
const MODULES: &[&str] = &["virtio_pci", "virtio_blk", "ext4", "crc32c_generic"];

pub fn run(opts: &Options, suite: &Suite, tally: &mut Tally) -> Result<(), String> {
    println!(
        "== {} (this kernel and Linux read each other's ext3)",
        suite.name
    );
    let work = build::root().join(format!("target/{}-work", suite.name));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let (kernel, initrd, fstree) = linux_with_init("tests/disk/fstree.c", &work)?;
    let linux = Linux {
        kernel: &kernel,
        initrd: &initrd,
        opts,
    };
    let ours = Ours {
        opts,
        suite,
        fstree: &fstree,
    };

    // 1. Ours writes, Linux reads.
    let image = crate::checks::fresh_disk_image(suite.name, Disk::Ext3)?;
    let round = (|| -> Result<(), String> {
        ours.run("write", &image)?;
        let mine = ours.run("list", &image)?;
        crate::setup::e2fsck_clean(&image)?;
        let theirs = linux.run("list", &image)?;
        same(&mine, &theirs, "this kernel wrote", "Linux reads")
    })();
    tally.record(
        &format!("{}/linux_reads_what_this_kernel_wrote", suite.name),
        round.is_ok(),
        round.as_ref().err().map_or("", |s| s),
    );

    // 2. Linux writes, ours reads.
    let image = crate::checks::fresh_disk_image(suite.name, Disk::Ext3)?;
    let round = (|| -> Result<(), String> {
        linux.run("write", &image)?;
        let theirs = linux.run("list", &image)?;
        crate::setup::e2fsck_clean(&image)?;
        let mine = ours.run("list", &image)?;
        same(&theirs, &mine, "Linux wrote", "this kernel reads")
    })();
    tally.record(
        &format!("{}/this_kernel_reads_what_linux_wrote", suite.name),
        round.is_ok(),
        round.as_ref().err().map_or("", |s| s),
    );
    Ok(())
}

/// The listing lines (`fstree: PATH ...`) of a run that ended `done`.
fn listing(lines: &[String], who: &str) -> Result<Vec<String>, String> {
    if let Some(fail) = lines.iter().find(|l| l.starts_with("fstree: FAIL")) {
        return Err(format!("{who}: {fail}"));
    }
    if !lines.iter().any(|l| l.starts_with("fstree: done")) {
        return Err(format!("{who}: fstree did not finish"));
    }
    Ok(lines
        .iter()
        .filter(|l| l.starts_with("fstree: /"))
        .cloned()
        .collect())
}

fn same(a: &[String], b: &[String], a_name: &str, b_name: &str) -> Result<(), String> {
    if a.len() < 250 {
        return Err(format!("{a_name}: only {} names listed", a.len()));
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return Err(format!(
                "{a_name} / {b_name} differ first at:\n  {x}\n  {y}"
            ));
        }
    }
    if a.len() != b.len() {
        return Err(format!(
            "{a_name}: {} names, {b_name}: {}",
            a.len(),
            b.len()
        ));
    }
    println!("   {a_name}, {b_name}: {} names, the same", a.len());
    Ok(())
}

struct Ours<'a> {
    opts: &'a Options,
    suite: &'a Suite,
    fstree: &'a Path,
}

impl Ours<'_> {
    /// `fstree --mount ACTION /mnt` on this kernel, `image` its disk.
    fn run(&self, action: &str, image: &Path) -> Result<Vec<String>, String> {
        let mut boot_opts = self.suite.boot_options(self.opts);
        boot_opts.add = vec![(self.fstree.display().to_string(), "/bin/fstree".into())];
        boot_opts.program = ["/bin/fstree", "--mount", action, "/mnt"]
            .map(String::from)
            .to_vec();
        boot_opts.disks = vec![image.to_path_buf()];
        let boot = Boot::test(&boot_opts, self.suite.name, self.suite.conf);
        let kernel_image = build::image(&boot_opts, &boot)?;
        let outcome = qemu::boot(
            &boot_opts,
            &kernel_image,
            Duration::from_secs(600),
            false,
            &[],
        )?;
        if outcome.ending != Ending::Exited(0) {
            crate::checks::show_console(&outcome);
            return Err(format!(
                "this kernel, fstree {action}: {}",
                outcome.ending.describe()
            ));
        }
        listing(&outcome.lines, &format!("this kernel, fstree {action}"))
    }
}

struct Linux<'a> {
    kernel: &'a Path,
    initrd: &'a Path,
    opts: &'a Options,
}

impl Linux<'_> {
    /// `fstree --init ACTION /mnt` as Linux's /init, `image` its disk.
    fn run(&self, action: &str, image: &Path) -> Result<Vec<String>, String> {
        let lines = crate::bench::boot_linux(
            self.opts,
            (self.kernel, self.initrd),
            image,
            &format!("--init {action} /mnt"),
            Duration::from_secs(600),
        )?;
        listing(&lines, &format!("Linux, fstree {action}")).map_err(|e| {
            let tail: Vec<&String> = lines.iter().rev().take(15).collect();
            format!(
                "{e}; Linux's console ended:\n{}",
                tail.iter()
                    .rev()
                    .map(|l| format!("  {l}\n"))
                    .collect::<String>()
            )
        })
    }
}

/// How Linux boots for a suite that compares it with this kernel:
/// Debian's kernel (fetched once), and an initramfs (in `work`) whose
/// /init is the C program `source`, built static with musl into `work`
/// (its path is the third: this kernel may run it too).
pub(crate) fn linux_with_init(
    source: &str,
    work: &Path,
) -> Result<(PathBuf, PathBuf, PathBuf), String> {
    let cc = crate::setup::ensure("musl-gcc", "musl-tools")?;
    let name = Path::new(source).file_stem().unwrap_or_default();
    let init = work.join(name);
    build::run_checked(
        Command::new(cc)
            .args(["-static", "-O2", "-w", "-o"])
            .arg(&init)
            .arg(build::root().join(source)),
        &format!("compiling {source}"),
    )?;
    let linux_dir = build::root().join("target/bench/linux");
    let kernel = crate::bench::linux_kernel(&linux_dir)?;
    let initrd = initramfs(&linux_dir, &init, work)?;
    Ok((kernel, initrd, init))
}

/// An initramfs for Debian's kernel: `init` as /init, and in /modules the
/// modules the disk needs, with their load order in /modules/order (the
/// bench's initramfs too).
pub(crate) fn initramfs(linux_dir: &Path, init: &Path, work: &Path) -> Result<PathBuf, String> {
    let modules = modules(linux_dir)?;
    let mut cpio = Vec::new();
    let init = std::fs::read(init).map_err(|e| e.to_string())?;
    kcore::cpio::write_entry(&mut cpio, 1, "init", 0o100_755, &init);
    kcore::cpio::write_entry(&mut cpio, 2, "modules", 0o040_755, &[]);
    let mut order = String::new();
    for (i, (name, path)) in modules.iter().enumerate() {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = format!("{name}.ko");
        kcore::cpio::write_entry(
            &mut cpio,
            3 + i as u32,
            &format!("modules/{file}"),
            0o100_644,
            &data,
        );
        order.push_str(&file);
        order.push('\n');
    }
    kcore::cpio::write_entry(&mut cpio, 100, "modules/order", 0o100_644, order.as_bytes());
    kcore::cpio::write_trailer(&mut cpio);
    let path = work.join("initramfs.cpio");
    std::fs::write(&path, cpio).map_err(|e| e.to_string())?;
    Ok(path)
}

/// `MODULES` and what they depend on, dependencies first: (name, file).
fn modules(linux_dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let mut found = find_modules(linux_dir);
    if MODULES.iter().any(|m| !found.iter().any(|(n, _)| n == m)) {
        fetch_modules(linux_dir)?;
        found = find_modules(linux_dir);
    }
    let mut order: Vec<(String, PathBuf)> = Vec::new();
    fn visit(
        name: &str,
        found: &[(String, PathBuf)],
        order: &mut Vec<(String, PathBuf)>,
    ) -> Result<(), String> {
        if order.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let (_, path) = found
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| format!("Debian's kernel package has no module {name}"))?;
        let data = std::fs::read(path).map_err(|e| e.to_string())?;
        for dep in depends(&data) {
            visit(&dep, found, order)?;
        }
        order.push((name.to_string(), path.clone()));
        Ok(())
    }
    for m in MODULES {
        visit(m, &found, &mut order)?;
    }
    Ok(order)
}

/// A module's `depends=` (its .modinfo section), split at commas.
fn depends(module: &[u8]) -> Vec<String> {
    let key = b"depends=";
    module
        .windows(key.len())
        .position(|w| w == key)
        .map(|at| {
            let rest = &module[at + key.len()..];
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            String::from_utf8_lossy(&rest[..end])
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.replace('-', "_"))
                .collect()
        })
        .unwrap_or_default()
}

/// Every module unpacked under `linux_dir/lib/modules`, by name.
fn find_modules(linux_dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut pending = vec![linux_dir.join("lib/modules")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".ko"))
            {
                out.push((name.replace('-', "_"), path.clone()));
            }
        }
    }
    out
}

/// Unpacks the module directories the disk needs from Debian's kernel
/// package (fetched once, as the kernel image is).
fn fetch_modules(linux_dir: &Path) -> Result<(), String> {
    let package = crate::bench::linux_package()?;
    println!(
        "xtask: fetching {package}'s modules (once) into {}",
        linux_dir.display()
    );
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(())
    };
    run(
        Command::new("apt-get")
            .args(["download", "-q", &package])
            .current_dir(linux_dir),
        &format!("apt-get download {package}"),
    )?;
    let deb = std::fs::read_dir(linux_dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .ok_or("apt-get download left no .deb")?;
    let members = [
        "./lib/modules/*/kernel/drivers/virtio/*",
        "./lib/modules/*/kernel/drivers/block/virtio_blk.ko",
        "./lib/modules/*/kernel/fs/ext4/*",
        "./lib/modules/*/kernel/fs/jbd2/*",
        "./lib/modules/*/kernel/fs/mbcache.ko",
        "./lib/modules/*/kernel/lib/crc16.ko",
        "./lib/modules/*/kernel/crypto/crc32c_generic.ko",
    ];
    let unpack = format!(
        "dpkg-deb --fsys-tarfile '{}' | tar -x -C '{}' --wildcards {}",
        deb.display(),
        linux_dir.display(),
        members.map(|m| format!("'{m}'")).join(" ")
    );
    let result = run(
        Command::new("sh").args(["-c", &unpack]),
        "unpacking the modules",
    );
    let _ = std::fs::remove_file(&deb);
    result
}
