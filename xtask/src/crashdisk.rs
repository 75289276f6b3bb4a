//! The crash suites: QEMU killed while `/bin/fsstress` writes to an ext3
//! disk, then the disk judged.
//!
//! Each kill boots a fresh image, waits for `fsstress: mounted`, lets the
//! workload run for a random time and kills QEMU (`qemu::boot_until`): the
//! disk holds what the kernel had written, nothing more. The console says
//! which files were promised (`fsstress: durable PATH LEN SEED`, printed
//! after their fsync returned). Then, on copies of the image:
//!
//! 1. Linux's way: `e2fsck -fy` must replay the journal and find nothing
//!    else wrong (exit 0), and `debugfs` must read every promised file
//!    back byte for byte.
//! 2. This kernel's way: `kcore::ext2::fs::Fs::mount`, the code the kernel
//!    mounts with, replays the journal; every promised file must read
//!    back through it, and after it unmounts `e2fsck -fn` must find the
//!    image clean.
//!
//! `ext3-kills` (5 kills) is in the default run; `crash-disk` (100) is
//! slow and runs only when asked for by name.

use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kcore::ext2::fs::Fs;
use kcore::ext2::{BlockDevice, Error, suite::byte};

use crate::build::{self, Boot};
use crate::checks::Tally;
use crate::options::Options;
use crate::qemu::{self, Ending};
use crate::suites::{Disk, Suite};

/// The shortest and longest time the workload runs before the kill.
const SHORTEST: Duration = Duration::from_millis(200);
const LONGEST: Duration = Duration::from_millis(8000);

/// An image file as `kcore::ext2` reads it (here and in diskfuzz.rs).
pub(crate) struct ImageFile(pub std::fs::File);

impl BlockDevice for ImageFile {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> kcore::ext2::Result<()> {
        self.0
            .read_exact_at(buf, block * buf.len() as u64)
            .map_err(|_| Error::Sys(abi::Errno::EIO))
    }
    fn write(&mut self, block: u64, buf: &[u8]) -> kcore::ext2::Result<()> {
        self.0
            .write_all_at(buf, block * buf.len() as u64)
            .map_err(|_| Error::Sys(abi::Errno::EIO))
    }
    fn flush(&mut self) -> kcore::ext2::Result<()> {
        self.0.sync_data().map_err(|_| Error::Sys(abi::Errno::EIO))
    }
}

/// A file the workload promised: its path in the file system, and its
/// length and pattern seed.
struct Promise {
    path: String,
    len: u64,
    seed: u64,
}

fn promises(lines: &[String]) -> Vec<Promise> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("fsstress: durable "))
        .filter_map(|rest| {
            let mut words = rest.split(' ');
            Some(Promise {
                path: words.next()?.to_string(),
                len: words.next()?.parse().ok()?,
                seed: words.next()?.parse().ok()?,
            })
        })
        .collect()
}

/// Runs the crash suite `suite`: `kills` boots, each killed.
pub fn run(opts: &Options, suite: &Suite, kills: usize, tally: &mut Tally) -> Result<(), String> {
    let mut boot_opts = suite.boot_options(opts);
    let image = build::image(&boot_opts, &Boot::test(&boot_opts, suite.name, suite.conf))?;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    println!(
        "== {} ({kills} kills of QEMU during /bin/fsstress, {} CPUs; delays from seed {seed:#x})",
        suite.name, boot_opts.cpus
    );
    let mut rng = seed;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let scratch = build::root().join(format!("target/{}-scratch", suite.name));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let (mut promised_total, mut replayed) = (0, 0);
    let started = Instant::now();
    for kill in 0..kills {
        let span = (LONGEST - SHORTEST).as_millis() as u64;
        let delay = SHORTEST + Duration::from_millis(next() % span);
        let disk = crate::checks::fresh_disk_image(suite.name, Disk::Ext3)?;
        boot_opts.disks = vec![disk.clone()];
        let outcome = qemu::boot_until(
            &boot_opts,
            &image,
            Duration::from_secs(300),
            false,
            &[],
            Some(("fsstress: mounted", delay)),
        )?;
        let name = format!("{}/kill_{kill}", suite.name);
        let judged = judge(&outcome, &disk, &scratch);
        match &judged {
            Ok(j) => {
                promised_total += j.promised;
                replayed += usize::from(j.replayed);
                println!(
                    "   kill {kill}: after {} ms: {} files promised and kept, journal {}",
                    delay.as_millis(),
                    j.promised,
                    if j.replayed { "replayed" } else { "clean" }
                );
            }
            Err(_) => crate::checks::show_console(&outcome),
        }
        tally.record(
            &name,
            judged.is_ok(),
            judged.as_ref().err().map_or("", |s| s),
        );
    }
    println!(
        "   {kills} kills in {:.0} s: {promised_total} promised files checked, {replayed} journals replayed",
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

struct Judged {
    promised: usize,
    replayed: bool,
}

/// The checks after one kill (see the top of the file).
fn judge(outcome: &qemu::Outcome, disk: &Path, scratch: &Path) -> Result<Judged, String> {
    match outcome.ending {
        Ending::Killed => {}
        // The workload ended first (a full disk): the image must be clean
        // all the same, and every promise kept.
        Ending::Exited(0) if outcome.lines.iter().any(|l| l == "fsstress: finished") => {}
        ref other => return Err(format!("the boot was not killed: {}", other.describe())),
    }
    if let Some(line) = outcome
        .lines
        .iter()
        .find(|l| l.contains("stopped:") && !l.contains("No space left"))
    {
        return Err(format!("the workload failed: {line}"));
    }
    if !outcome.lines.iter().any(|l| l == "fsstress: mounted") {
        return Err("the workload never mounted the disk".into());
    }
    let promised = promises(&outcome.lines);

    // 1. Linux's replay and reading.
    let theirs = scratch.join("theirs.img");
    std::fs::copy(disk, &theirs).map_err(|e| format!("copy: {e}"))?;
    let fsck = Command::new(crate::setup::e2fs_tool("e2fsck")?)
        .arg("-fy")
        .arg(&theirs)
        .output()
        .map_err(|e| format!("cannot run e2fsck: {e}"))?;
    if !fsck.status.success() {
        return Err(format!(
            "e2fsck -fy found more than a journal to replay (exit {:?}):\n{}",
            fsck.status.code(),
            String::from_utf8_lossy(&fsck.stdout)
        ));
    }
    let replayed = String::from_utf8_lossy(&fsck.stdout).contains("recovering journal");
    let dump = scratch.join("dump");
    let _ = std::fs::remove_dir_all(&dump);
    std::fs::create_dir_all(&dump).map_err(|e| format!("{e}"))?;
    let out = Command::new(crate::setup::e2fs_tool("debugfs")?)
        .arg("-R")
        .arg(format!("rdump /d0 /d1 /d2 {}", dump.display()))
        .arg(&theirs)
        .output()
        .map_err(|e| format!("cannot run debugfs: {e}"))?;
    if !out.status.success() {
        return Err(format!("debugfs: {}", String::from_utf8_lossy(&out.stderr)));
    }
    for p in &promised {
        let got = std::fs::read(dump.join(p.path.trim_start_matches('/')))
            .map_err(|e| format!("after e2fsck, {} is gone: {e}", p.path))?;
        check_bytes(p, &got).map_err(|e| format!("after e2fsck, {e}"))?;
    }

    // 2. This kernel's replay (kcore::ext2, as the kernel mounts).
    let ours = scratch.join("ours.img");
    std::fs::copy(disk, &ours).map_err(|e| format!("copy: {e}"))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&ours)
        .map_err(|e| format!("{e}"))?;
    let mut fs =
        Fs::mount(ImageFile(file), false).map_err(|e| format!("our mount failed: {e:?}"))?;
    let mut cache: BTreeMap<String, u32> = BTreeMap::new();
    for p in &promised {
        let got = read_path(&mut fs, &p.path, &mut cache)
            .map_err(|e| format!("after our replay, {}: {e:?}", p.path))?;
        check_bytes(p, &got).map_err(|e| format!("after our replay, {e}"))?;
    }
    fs.unmount()
        .map_err(|e| format!("our unmount failed: {e:?}"))?;
    crate::setup::e2fsck_clean(&ours).map_err(|e| format!("after our replay, {e}"))?;
    Ok(Judged {
        promised: promised.len(),
        replayed,
    })
}

fn check_bytes(p: &Promise, got: &[u8]) -> Result<(), String> {
    if got.len() as u64 != p.len {
        return Err(format!(
            "{} has {} bytes, {} were promised",
            p.path,
            got.len(),
            p.len
        ));
    }
    match (0..p.len).find(|&at| got[at as usize] != byte(p.seed, at)) {
        Some(at) => Err(format!(
            "{}: byte {at} differs from what was promised",
            p.path
        )),
        None => Ok(()),
    }
}

/// The bytes of the file at `path` (absolute, no links), read through
/// `kcore::ext2`; `dirs` remembers the directories found.
fn read_path(
    fs: &mut Fs<ImageFile>,
    path: &str,
    dirs: &mut BTreeMap<String, u32>,
) -> kcore::ext2::Result<Vec<u8>> {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let dir_ino = match dirs.get(dir) {
        Some(&ino) => ino,
        None => {
            let mut ino = fs.root();
            for part in dir.split('/').filter(|p| !p.is_empty()) {
                ino = fs.lookup(ino, part.as_bytes())?;
            }
            dirs.insert(dir.to_string(), ino);
            ino
        }
    };
    let ino = fs.lookup(dir_ino, name.as_bytes())?;
    let inode = fs.inode(ino)?;
    let mut data = vec![0; inode.size as usize];
    let n = fs.read(&inode, 0, &mut data)?;
    data.truncate(n);
    Ok(data)
}
