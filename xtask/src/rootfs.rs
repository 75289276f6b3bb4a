//! `cargo xtask rootfs`, and `run --root debian`: a Debian root file
//! system on a disk, made from Debian's own packages.
//!
//! The packages are fetched with `apt-get download` (the package
//! registries are the only network these machines have), unpacked with
//! `dpkg-deb` into a tree laid out as Debian 12 lays out a system (merged
//! /usr: /bin, /sbin, /lib and /lib64 are links into /usr), given the few
//! files a package's installation scripts would have made (/etc/passwd,
//! /etc/group, root's dot files), and made into an ext3 image with
//! `mke2fs -d`. Everything is kept in target/debian-root/: the packages, the
//! tree, and the image, which is made again only when the recipe here
//! changes (or with `run --root debian --fresh`), so a file written in one
//! boot is there in the next, as with target/root.img.
//!
//! Nothing runs a package's scripts: the tree is what the packages hold.
//! What the scripts would have made and a user expects is written here
//! (`ETC_FILES`). Before the image is made, every ELF file's libraries
//! (its DT_NEEDED entries) are looked for in the tree, so a package
//! missing from `PACKAGES` is a clear error here, not a program that
//! fails in the guest.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build;

/// Debian 12's packages the root holds: the C library, bash, the core
/// utilities, grep, sed, find, ps, and Python with its standard library
/// and its own tests; then each one's libraries (the check below finds
/// any left out).
pub const PACKAGES: &[&str] = &[
    // The system's frame: /etc/profile, /etc/os-release, the C library.
    "base-files",
    "libc6",
    "libgcc-s1",
    "gcc-12-base",
    // The shell and the tools a user types.
    "bash",
    "libtinfo6",
    // /bin/sh, which scripts name.
    "dash",
    "coreutils",
    "libacl1",
    "libattr1",
    "libselinux1",
    "libpcre2-8-0",
    "libgmp10",
    "grep",
    "sed",
    "findutils",
    "procps",
    "libproc2-0",
    "libncursesw6",
    "libsystemd0",
    "libcap2",
    "libgcrypt20",
    "libgpg-error0",
    "liblz4-1",
    "liblzma5",
    "libzstd1",
    // Python 3.11, its standard library, and its regression tests.
    "python3",
    "python3-minimal",
    "python3.11",
    "python3.11-minimal",
    "libpython3-stdlib",
    "libpython3.11-minimal",
    "libpython3.11-stdlib",
    "libpython3.11-testsuite",
    "media-types",
    "libexpat1",
    "zlib1g",
    "libffi8",
    "libssl3",
    "libbz2-1.0",
    "libsqlite3-0",
    "libreadline8",
    "readline-common",
    "libuuid1",
    "libdb5.3",
    "libgdbm6",
    "libgdbm-compat4",
    "libcrypt1",
    "libnsl2",
    "libtirpc3",
    "libtirpc-common",
    "libgssapi-krb5-2",
    "libkrb5-3",
    "libk5crypto3",
    "libkrb5support0",
    "libcom-err2",
    "libkeyutils1",
];

/// What the packages' installation scripts (and an installer) would have
/// written: who the users are, how names are looked up, the machine's
/// name, and root's dot files (copied from where Debian keeps them).
const ETC_FILES: &[(&str, &str)] = &[
    (
        "etc/passwd",
        "root:x:0:0:root:/root:/bin/bash\n\
         daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n\
         bin:x:2:2:bin:/bin:/usr/sbin/nologin\n\
         sys:x:3:3:sys:/dev:/usr/sbin/nologin\n\
         student:x:1000:1000:A student,,,:/home/student:/bin/bash\n\
         nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    ),
    (
        "etc/group",
        "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\n\
         users:x:100:\nstudent:x:1000:\nnogroup:x:65534:\n",
    ),
    (
        "etc/shadow",
        "root:*:19000:0:99999:7:::\nstudent:*:19000:0:99999:7:::\n",
    ),
    (
        "etc/nsswitch.conf",
        "passwd: files\ngroup: files\nshadow: files\nhosts: files\n\
         networks: files\nprotocols: files\nservices: files\n",
    ),
    ("etc/hostname", "profkern\n"),
    ("etc/hosts", "127.0.0.1\tlocalhost\n127.0.1.1\tprofkern\n"),
    (
        "etc/motd",
        "\nDebian 12's programs on profkern, a teaching kernel with native \
         profil(2).\nThey are the files Debian ships, dynamically linked, \
         unchanged.\n\n",
    ),
];

/// The project's own files on the root, each run on both kernels: Python's
/// regression tests' driver (`cargo xtask pytests`, pytests.rs) and the
/// script of the suite debian-script (debscript.rs).
const PROJECT_FILES: &[(&str, &str)] = &[
    (
        "usr/local/lib/pyregr.py",
        include_str!("../../tests/debian/pyregr.py"),
    ),
    (
        "usr/local/lib/script.sh",
        include_str!("../../tests/debian/script.sh"),
    ),
];

/// Files the installation copies from where the packages keep them:
/// base-files' script puts /etc/profile in place, Debian's installer gives
/// root its dot files (all kept in /usr/share/base-files) and a new user
/// /etc/skel's.
const COPIES: &[(&str, &str)] = &[
    ("usr/share/base-files/profile", "etc/profile"),
    ("usr/share/base-files/dot.profile", "root/.profile"),
    ("usr/share/base-files/dot.bashrc", "root/.bashrc"),
    ("etc/skel/.profile", "home/student/.profile"),
    ("etc/skel/.bashrc", "home/student/.bashrc"),
    ("etc/skel/.bash_logout", "home/student/.bash_logout"),
];

/// The directory everything is kept in.
fn dir() -> PathBuf {
    build::root().join("target/debian-root")
}

/// The image `run --root debian` boots on.
pub fn image_path() -> PathBuf {
    dir().join("root.img")
}

/// A fingerprint of the recipe (the packages, the files written, the
/// files copied): the image is made again when it changes.
fn recipe() -> String {
    let mut text = PACKAGES.join(" ");
    for (path, content) in ETC_FILES.iter().chain(COPIES).chain(PROJECT_FILES) {
        text.push_str(&format!("\n{path}\n{content}"));
    }
    format!("{:016x}\n", fnv1a(text.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The Debian root image: made if missing, if the recipe changed, or if
/// `fresh`; otherwise kept as the last boot left it.
pub fn image(fresh: bool) -> Result<PathBuf, String> {
    let image = image_path();
    let stamp = dir().join("root.recipe");
    let current = std::fs::read_to_string(&stamp).unwrap_or_default();
    if image.exists() && !fresh && current == recipe() {
        return Ok(image);
    }
    let debs = fetch()?;
    let tree = dir().join("tree");
    unpack(&debs, &tree)?;
    finish_tree(&tree)?;
    check_libraries(&tree)?;
    println!(
        "xtask: making {} (ext3, 1 GiB) from {} Debian packages",
        image.display(),
        PACKAGES.len()
    );
    crate::setup::make_ext3(&image, "1G", 4096, Some(&tree), &["-L", "debian"])?;
    std::fs::write(&stamp, recipe()).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(image)
}

/// `cargo xtask rootfs`: makes (or finds) the image and says where it is.
pub fn run() -> Result<std::process::ExitCode, String> {
    let image = image(false)?;
    println!("{}", image.display());
    Ok(std::process::ExitCode::SUCCESS)
}

/// The packages' .deb files, fetched once into target/debian-root/debs.
fn fetch() -> Result<Vec<PathBuf>, String> {
    let debs = dir().join("debs");
    std::fs::create_dir_all(&debs).map_err(|e| format!("{}: {e}", debs.display()))?;
    let find = |package: &str| -> Option<PathBuf> {
        std::fs::read_dir(&debs)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".deb") && n.split('_').next() == Some(package))
            })
    };
    let missing: Vec<&str> = PACKAGES
        .iter()
        .copied()
        .filter(|p| find(p).is_none())
        .collect();
    if !missing.is_empty() {
        println!(
            "xtask: fetching {} Debian packages (once) into {}",
            missing.len(),
            debs.display()
        );
        let out = Command::new("apt-get")
            .args(["download", "-q"])
            .args(&missing)
            .current_dir(&debs)
            .output()
            .map_err(|e| format!("apt-get: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "apt-get download failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    PACKAGES
        .iter()
        .map(|p| find(p).ok_or_else(|| format!("apt-get download {p} left no .deb")))
        .collect()
}

/// Unpacks every package into a fresh `tree`, merged-/usr as Debian 12:
/// /bin, /sbin, /lib and /lib64 are links into /usr, and tar keeps them
/// links when a package writes through them.
fn unpack(debs: &[PathBuf], tree: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(tree);
    for sub in ["usr/bin", "usr/sbin", "usr/lib", "usr/lib64"] {
        std::fs::create_dir_all(tree.join(sub)).map_err(|e| format!("{}: {e}", tree.display()))?;
    }
    for link in ["bin", "sbin", "lib", "lib64"] {
        std::os::unix::fs::symlink(format!("usr/{link}"), tree.join(link))
            .map_err(|e| format!("{}: {e}", tree.display()))?;
    }
    println!("xtask: unpacking the packages into {}", tree.display());
    for deb in debs {
        let script = format!(
            "dpkg-deb --fsys-tarfile '{}' | tar -x --keep-directory-symlink -C '{}'",
            deb.display(),
            tree.display()
        );
        let out = Command::new("sh")
            .args(["-c", &script])
            .output()
            .map_err(|e| format!("dpkg-deb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "unpacking {}: {}",
                deb.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    Ok(())
}

/// What the installation would have added: the files of `ETC_FILES`, the
/// directories a system has, and root's and the student's dot files.
fn finish_tree(tree: &Path) -> Result<(), String> {
    let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
    use std::os::unix::fs::PermissionsExt;
    for (dir, mode) in [
        ("dev", 0o755),
        ("proc", 0o555),
        ("sys", 0o555),
        ("tmp", 0o1777),
        ("run", 0o755),
        ("var/tmp", 0o1777),
        ("var/log", 0o755),
        ("root", 0o700),
        ("home/student", 0o755),
        ("mnt", 0o755),
    ] {
        let path = tree.join(dir);
        std::fs::create_dir_all(&path).map_err(|e| io(&path, e))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| io(&path, e))?;
    }
    for (path, content) in ETC_FILES.iter().chain(PROJECT_FILES) {
        let path = tree.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        std::fs::write(&path, content).map_err(|e| io(&path, e))?;
    }
    let shadow = tree.join("etc/shadow");
    std::fs::set_permissions(&shadow, std::fs::Permissions::from_mode(0o640))
        .map_err(|e| io(&shadow, e))?;
    for (from, to) in COPIES {
        let (from, to) = (tree.join(from), tree.join(to));
        std::fs::copy(&from, &to).map_err(|e| io(&from, e))?;
    }
    // The student owns their home (mke2fs -d keeps the tree's owners).
    let chown = Command::new("chown")
        .args(["-R", "1000:1000"])
        .arg(tree.join("home/student"))
        .status()
        .map_err(|e| format!("chown: {e}"))?;
    if !chown.success() {
        return Err("chown of /home/student failed".into());
    }
    Ok(())
}

/// Every ELF file's DT_NEEDED libraries must be in the tree's library
/// directories: a package left out of `PACKAGES` shows here by name.
fn check_libraries(tree: &Path) -> Result<(), String> {
    let lib_dirs = ["usr/lib/x86_64-linux-gnu", "usr/lib", "usr/lib64"];
    let mut missing: BTreeSet<String> = BTreeSet::new();
    let mut elves = 0;
    let mut stack = vec![tree.join("usr")];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| e.to_string())?;
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let Some(Dynamic { needed, runpath }) = dynamic_section(&bytes) else {
                continue;
            };
            elves += 1;
            // A RUNPATH of $ORIGIN: the file's own directory (glibc's
            // gconv modules find their tables so).
            let own_dir = path.parent().unwrap_or(tree).to_path_buf();
            let searched: Vec<PathBuf> = runpath
                .iter()
                .map(|dir| match dir.strip_prefix("$ORIGIN") {
                    Some(rest) => own_dir.join(rest.trim_start_matches('/')),
                    None => tree.join(dir.trim_start_matches('/')),
                })
                .chain(lib_dirs.iter().map(|d| tree.join(d)))
                .collect();
            for name in needed {
                if !searched.iter().any(|d| d.join(&name).exists()) {
                    let user = path
                        .strip_prefix(tree)
                        .unwrap_or(&path)
                        .display()
                        .to_string();
                    missing.insert(format!("{name} (for /{user})"));
                }
            }
        }
    }
    if missing.is_empty() {
        println!("xtask: every library of the {elves} ELF files is there");
        return Ok(());
    }
    let list: Vec<String> = missing.into_iter().take(12).collect();
    Err(format!(
        "the Debian root lacks libraries (add their packages to rootfs::PACKAGES): {}",
        list.join(", ")
    ))
}

/// What a dynamic ELF file asks of the loader: its libraries (DT_NEEDED)
/// and where it says to look first (DT_RUNPATH, DT_RPATH).
struct Dynamic {
    needed: Vec<String>,
    runpath: Vec<String>,
}

/// The dynamic section of a 64-bit little-endian ELF file; None for
/// anything else.
fn dynamic_section(bytes: &[u8]) -> Option<Dynamic> {
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return None;
    }
    let word = |at: usize, len: usize| -> Option<u64> {
        let field = bytes.get(at..at.checked_add(len)?)?;
        let mut out = [0u8; 8];
        out[..len].copy_from_slice(field);
        Some(u64::from_le_bytes(out))
    };
    let (phoff, phnum) = (word(0x20, 8)? as usize, word(0x38, 2)? as usize);
    let headers: Vec<(u64, u64, u64, u64)> = (0..phnum)
        .filter_map(|i| {
            let at = phoff + i * 56;
            // (type, offset, vaddr, file size)
            Some((
                word(at, 4)?,
                word(at + 8, 8)?,
                word(at + 16, 8)?,
                word(at + 32, 8)?,
            ))
        })
        .collect();
    let to_offset = |vaddr: u64| {
        headers
            .iter()
            .find(|&&(kind, _, start, size)| kind == 1 && vaddr >= start && vaddr < start + size)
            .map(|&(_, offset, start, _)| (vaddr - start + offset) as usize)
    };
    let &(_, dynamic, _, dyn_size) = headers.iter().find(|h| h.0 == 2)?;
    let entries: Vec<(u64, u64)> = (0..dyn_size as usize / 16)
        .map_while(|i| {
            let at = dynamic as usize + i * 16;
            Some((word(at, 8)?, word(at + 8, 8)?))
        })
        .take_while(|&(tag, _)| tag != 0)
        .collect();
    let strtab = to_offset(entries.iter().find(|e| e.0 == 5)?.1)?;
    let string = |at: u64| -> Option<String> {
        let start = strtab.checked_add(at as usize)?;
        let end = start + bytes.get(start..)?.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&bytes[start..end]).into_owned())
    };
    const DT_NEEDED: u64 = 1;
    const DT_RPATH: u64 = 15;
    const DT_RUNPATH: u64 = 29;
    let of = |tag: u64| {
        entries
            .iter()
            .filter(move |e| e.0 == tag)
            .filter_map(|e| string(e.1))
    };
    Some(Dynamic {
        needed: of(DT_NEEDED).collect(),
        runpath: of(DT_RUNPATH)
            .chain(of(DT_RPATH))
            .flat_map(|p| p.split(':').map(String::from).collect::<Vec<_>>())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_libraries_of_an_elf_are_its_needed_entries() {
        // The host's own /bin/sh is dynamic and needs the C library.
        let sh = std::fs::read("/bin/sh").unwrap();
        let needed = dynamic_section(&sh).unwrap().needed;
        assert!(needed.iter().any(|n| n == "libc.so.6"), "{needed:?}");
        assert!(dynamic_section(b"#!/bin/sh\n").is_none());
    }

    #[test]
    fn the_recipe_changes_with_a_package() {
        assert_eq!(recipe(), recipe());
        assert_ne!(fnv1a(b"bash"), fnv1a(b"bash "));
    }
}
