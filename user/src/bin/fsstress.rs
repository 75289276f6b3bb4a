//! /bin/fsstress: a write workload on the ext3 disk, for xtask's crash
//! suites (`ext3-kills`, and `crash-disk` with 100 kills), which kill
//! QEMU at a random moment while it runs.
//!
//! It mounts /dev/vda on /mnt and starts `WORKERS` processes. Each one, in
//! its directory `/mnt/dW`, over and over:
//!
//! - writes a new file `keep-I` (a pattern from its seed, of a length the
//!   seed picks), fsyncs it, closes it, and only then prints
//!   `fsstress: durable /dW/keep-I LEN SEED`: a promise the disk must keep
//!   whatever happens next. A kept file is never touched again.
//! - churns: makes `tmp-I`, appends to it, renames it over `cur`, cuts
//!   `cur` shorter, and every third round makes a directory, a file in
//!   it, and removes both.
//!
//! After a kill, the host replays the journal (e2fsck's, then this
//! kernel's own `kcore::ext2`) and checks every promised file byte for
//! byte. A worker that meets an error says so and stops; when all have
//! stopped (or `ROUNDS` are done) the disk is unmounted and the program
//! says `fsstress: finished`.

#![no_std]
#![no_main]

extern crate alloc;

use abi::types::*;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use kcore::ext2::suite::byte;
use libc_lite::{Errno, println, sys};

libc_lite::entry!(run);

const WORKERS: u64 = 3;
const ROUNDS: u64 = 100_000;

/// The seed of worker `w`'s kept file `i`; its length follows from it.
fn seed_of(w: u64, i: u64) -> u64 {
    w * 1_000_000 + i
}

fn len_of(seed: u64) -> u64 {
    seed.wrapping_mul(7919) % 12_000
}

fn why(what: &str) -> impl FnOnce(Errno) -> String + '_ {
    move |e| format!("{what}: {}", e.message())
}

fn write_pattern(path: &str, seed: u64, len: u64, flags: u32) -> Result<i32, String> {
    let fd = sys::open(path, O_WRONLY | O_CREAT | flags, 0o644).map_err(why(path))?;
    let data: Vec<u8> = (0..len).map(|at| byte(seed, at)).collect();
    for piece in data.chunks(3000) {
        sys::write_all(fd, piece).map_err(why("write"))?;
    }
    Ok(fd)
}

fn worker(w: u64) -> Result<(), String> {
    let dir = format!("/mnt/d{w}");
    for i in 0..ROUNDS {
        let seed = seed_of(w, i);
        let len = len_of(seed);
        let keep = format!("{dir}/keep-{i}");
        let fd = write_pattern(&keep, seed, len, O_TRUNC)?;
        sys::fsync(fd).map_err(why("fsync"))?;
        sys::close(fd).map_err(why("close"))?;
        println!("fsstress: durable /d{w}/keep-{i} {len} {seed}");

        let tmp = format!("{dir}/tmp-{i}");
        let fd = write_pattern(&tmp, seed + 1, len / 2, O_TRUNC)?;
        sys::close(fd).map_err(why("close"))?;
        let fd = write_pattern(&tmp, seed + 2, 500, O_APPEND)?;
        sys::close(fd).map_err(why("close"))?;
        sys::rename(&tmp, &format!("{dir}/cur")).map_err(why("rename over"))?;
        let fd = sys::open(&format!("{dir}/cur"), O_WRONLY, 0).map_err(why("open cur"))?;
        sys::ftruncate(fd, len / 3).map_err(why("ftruncate"))?;
        sys::close(fd).map_err(why("close"))?;
        if i % 3 == 0 {
            let sub = format!("{dir}/sub-{i}");
            sys::mkdir(&sub, 0o755).map_err(why("mkdir"))?;
            let inner = format!("{sub}/x");
            let fd = write_pattern(&inner, seed + 3, 2000, O_TRUNC)?;
            sys::close(fd).map_err(why("close"))?;
            sys::unlink(&inner).map_err(why("unlink"))?;
            sys::rmdir(&sub).map_err(why("rmdir"))?;
        }
    }
    Ok(())
}

fn run() -> i32 {
    let _ = sys::mkdir("/mnt", 0o755);
    if let Err(e) = sys::mount("/dev/vda", "/mnt", "ext3", 0, None) {
        println!("fsstress: mount: {}", e.message());
        return 1;
    }
    for w in 0..WORKERS {
        let _ = sys::mkdir(&format!("/mnt/d{w}"), 0o755);
    }
    sys::sync();
    println!("fsstress: mounted");
    let mut children = Vec::new();
    for w in 0..WORKERS {
        match sys::fork() {
            Ok(0) => {
                let status = match worker(w) {
                    Ok(()) => 0,
                    Err(e) => {
                        println!("fsstress: worker {w} stopped: {e}");
                        1
                    }
                };
                sys::exit(status);
            }
            Ok(pid) => children.push(pid),
            Err(e) => {
                println!("fsstress: fork: {}", e.message());
                return 1;
            }
        }
    }
    for pid in children {
        let _ = sys::waitpid(pid as i32);
    }
    match sys::umount2("/mnt", 0) {
        Ok(()) => {
            println!("fsstress: finished");
            0
        }
        Err(e) => {
            println!("fsstress: umount: {}", e.message());
            1
        }
    }
}
