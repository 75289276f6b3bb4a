//! /bin/diskfuzz ROUNDS SEED: damaged ext3 images, mounted and used, for
//! xtask's `ext3-fuzz` suite (50 images) and the slow `fuzz-disk` (1000).
//!
//! The disk holds a small ext3 image the host made, with transactions
//! left in its journal. /etc/diskfuzz-targets lists its metadata as
//! `START SPAN` byte ranges (superblock, descriptors, bitmaps, inode
//! table, directory and indirect blocks, the journal's first blocks).
//! Each round writes the whole clean image back to /dev/vda, flips one to
//! eight bits inside those ranges, and then: mount (the journal replays),
//! walk everything (list, stat, list the extended attributes, read,
//! readlink), try a create, a write and an unlink, and unmount.
//!
//! What may happen: the mount is refused (EINVAL, EUCLEAN, EIO), or
//! calls fail with EUCLEAN or EIO (corruption found, logged by the
//! kernel), or with an error the damaged tree honestly gives (ENOENT for
//! a name whose inode is gone, ENOTDIR, ELOOP ...). What may not: a
//! panic, a hang (the host's timeout), an unmount that fails, or an error
//! that says the kernel lost track (EFAULT, ENOMEM, EBADF ...). The last
//! line is `diskfuzz: ok` or `diskfuzz: FAIL why`.

#![no_std]
#![no_main]

extern crate alloc;

use abi::types::*;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use libc_lite::{Errno, println, sys};

libc_lite::entry!(run);

const DISK: &str = "/dev/vda";
const MNT: &str = "/mnt";
/// How deep the walk goes: a damaged directory can hold itself.
const MAX_DEPTH: usize = 10;
/// How many names one walk visits at most.
const MAX_NAMES: usize = 3000;

/// Errors a damaged file system may honestly give.
const HONEST: &[Errno] = &[
    Errno::EUCLEAN,
    Errno::EIO,
    Errno::EINVAL,
    Errno::ENOENT,
    Errno::ENOTDIR,
    Errno::EISDIR,
    Errno::ELOOP,
    Errno::ENOSPC,
    Errno::EEXIST,
    Errno::EFBIG,
    Errno::EMLINK,
    Errno::ENXIO,
    Errno::ENAMETOOLONG,
    Errno::ENOTEMPTY,
];

struct Tally {
    /// Errors seen, by name and call.
    errors: BTreeMap<String, usize>,
    /// Errors no damaged disk explains: the run fails.
    wrong: Vec<String>,
}

impl Tally {
    fn saw(&mut self, call: &str, e: Errno) {
        *self
            .errors
            .entry(format!("{call} {}", e.name()))
            .or_insert(0) += 1;
        if !HONEST.contains(&e) {
            self.wrong.push(format!("{call}: {}", e.message()));
        }
    }
}

fn call(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: every pointer passed is to a live buffer of the length given.
    Errno::from_return(unsafe { libc_lite::syscall::syscall(number, args) })
}

fn pwrite(fd: i32, buf: &[u8], at: u64) -> Result<usize, Errno> {
    call(
        abi::sys::PWRITE64,
        &[fd as usize, buf.as_ptr() as usize, buf.len(), at as usize],
    )
}

/// Lists, stats and reads everything under `dir`.
fn walk(dir: &str, depth: usize, names: &mut usize, t: &mut Tally) {
    let fd = match sys::open(dir, O_RDONLY | O_DIRECTORY, 0) {
        Ok(fd) => fd,
        Err(e) => return t.saw("open dir", e),
    };
    let mut found = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        let n = match sys::getdents64(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                t.saw("getdents64", e);
                break;
            }
        };
        found.extend(
            user::probe::dirent_names(&buf[..n])
                .into_iter()
                .filter(|name| name != "." && name != ".."),
        );
    }
    let _ = sys::close(fd);
    for name in found {
        *names += 1;
        if *names > MAX_NAMES {
            return;
        }
        let path = format!("{dir}/{name}");
        let st = match sys::lstat(&path) {
            Ok(st) => st,
            Err(e) => {
                t.saw("lstat", e);
                continue;
            }
        };
        // Its extended attributes' names (in the inode and its block).
        let mut names_buf = [0u8; 1024];
        let cpath = [path.as_bytes(), b"\0"].concat();
        let listed = call(
            abi::sys::LLISTXATTR,
            &[
                cpath.as_ptr() as usize,
                names_buf.as_mut_ptr() as usize,
                names_buf.len(),
            ],
        );
        if let Err(e) = listed {
            t.saw("llistxattr", e);
        }
        match st.st_mode & S_IFMT {
            S_IFDIR if depth < MAX_DEPTH => walk(&path, depth + 1, names, t),
            S_IFREG => match sys::open(&path, O_RDONLY, 0) {
                Ok(fd) => {
                    let mut data = vec![0u8; 65536];
                    for _ in 0..16 {
                        match sys::read(fd, &mut data) {
                            Ok(0) => break,
                            Ok(_) => {}
                            Err(e) => {
                                t.saw("read", e);
                                break;
                            }
                        }
                    }
                    let _ = sys::close(fd);
                }
                Err(e) => t.saw("open", e),
            },
            S_IFLNK => {
                let mut target = [0u8; 4096];
                if let Err(e) = sys::readlink(&path, &mut target) {
                    t.saw("readlink", e);
                }
            }
            _ => {}
        }
    }
}

/// One damaged image, mounted, used and unmounted. Err: what went wrong
/// that no damage explains (an unmount that fails).
fn use_image(t: &mut Tally) -> Result<&'static str, String> {
    if let Err(e) = sys::mount(DISK, MNT, "ext3", 0, None) {
        t.saw("mount", e);
        return Ok("refused at mount");
    }
    let mut names = 0;
    walk(MNT, 0, &mut names, t);
    // Writes over damage must fail cleanly too.
    match sys::open(&format!("{MNT}/new-file"), O_WRONLY | O_CREAT, 0o644) {
        Ok(fd) => {
            if let Err(e) = sys::write_all(fd, &[1; 5000]) {
                t.saw("write", e);
            }
            let _ = sys::close(fd);
        }
        Err(e) => t.saw("create", e),
    }
    if let Err(e) = sys::mkdir(&format!("{MNT}/new-dir"), 0o755) {
        t.saw("mkdir", e);
    }
    if let Err(e) = sys::unlink(&format!("{MNT}/hello")) {
        t.saw("unlink", e);
    }
    sys::umount2(MNT, 0).map_err(|e| format!("umount: {}", e.message()))?;
    Ok("mounted and walked")
}

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let (Some(rounds), Some(seed)) = (
        args.first().and_then(|a| a.parse::<u64>().ok()),
        args.get(1).and_then(|a| a.parse::<u64>().ok()),
    ) else {
        println!("usage: diskfuzz ROUNDS SEED");
        return 2;
    };
    let clean = match sys::read_file(DISK) {
        Ok(bytes) => bytes,
        Err(e) => {
            println!("diskfuzz: FAIL reading {DISK}: {}", e.message());
            return 1;
        }
    };
    let targets: Vec<(u64, u64)> = match sys::read_file("/etc/diskfuzz-targets") {
        Ok(text) => String::from_utf8_lossy(&text)
            .lines()
            .filter_map(|l| {
                let (a, b) = l.split_once(' ')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .filter(|&(start, span)| span > 0 && start + span <= clean.len() as u64)
            .collect(),
        Err(e) => {
            println!("diskfuzz: FAIL /etc/diskfuzz-targets: {}", e.message());
            return 1;
        }
    };
    if targets.is_empty() {
        println!("diskfuzz: FAIL no metadata ranges to damage");
        return 1;
    }
    let _ = sys::mkdir(MNT, 0o755);
    let fd = match sys::open(DISK, O_RDWR, 0) {
        Ok(fd) => fd,
        Err(e) => {
            println!("diskfuzz: FAIL open {DISK}: {}", e.message());
            return 1;
        }
    };
    // Mixed first: `seed | 1` alone made seeds 2k and 2k+1 the same run.
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut t = Tally {
        errors: BTreeMap::new(),
        wrong: Vec::new(),
    };
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    for round in 0..rounds {
        for (i, piece) in clean.chunks(65536).enumerate() {
            if let Err(e) = pwrite(fd, piece, i as u64 * 65536) {
                println!("diskfuzz: FAIL restoring the image: {}", e.message());
                return 1;
            }
        }
        for _ in 0..1 + next() % 8 {
            let (start, span) = targets[(next() % targets.len() as u64) as usize];
            let at = start + next() % span;
            let flipped = [clean[at as usize] ^ (1 << (next() % 8))];
            if let Err(e) = pwrite(fd, &flipped, at) {
                println!("diskfuzz: FAIL damaging byte {at}: {}", e.message());
                return 1;
            }
        }
        match use_image(&mut t) {
            Ok(outcome) => *outcomes.entry(outcome).or_insert(0) += 1,
            Err(why) => {
                println!("diskfuzz: FAIL image {round}: {why}");
                return 1;
            }
        }
    }
    let _ = sys::close(fd);
    println!("diskfuzz: {rounds} images: {outcomes:?}");
    println!("diskfuzz: errors {:?}", t.errors);
    if !t.wrong.is_empty() {
        println!("diskfuzz: FAIL errors no damage explains: {:?}", t.wrong);
        return 1;
    }
    println!("diskfuzz: ok");
    0
}
