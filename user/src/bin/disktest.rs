//! /bin/disktest: the virtio disk, /dev/vda, checked from user space.
//!
//! xtask's `disk` suite boots with a fresh image holding
//! `kcore::virtio::disk_suite::host_byte` at every offset. These tests
//! read it back through requests of every shape, write `guest_byte` over
//! `GUEST_REGION` (aligned, unaligned, across request pieces, from several
//! processes at once, so that requests are in flight together), and
//! flush; after power-off xtask checks the image byte for byte.
//!
//! Each test runs in its own child and prints `disktest: ok NAME` or
//! `disktest: FAIL NAME: why`.

#![no_std]
#![no_main]

extern crate alloc;

use abi::sys as nr;
use abi::types::*;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use kcore::virtio::disk_suite::{GUEST_REGION, SIZE, guest_byte, host_byte};
use libc_lite::{Errno, println, sys};
use user::ensure;
use user::harness::{Outcome, Test};

libc_lite::entry!(run);

const DISK: &str = "/dev/vda";

fn call(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: every pointer passed is to a live buffer of the length given.
    Errno::from_return(unsafe { libc_lite::syscall::syscall(number, args) })
}

fn open_disk() -> Result<i32, alloc::string::String> {
    sys::open(DISK, O_RDWR, 0).map_err(|e| format!("open {DISK}: {}", e.message()))
}

fn pread(fd: i32, buf: &mut [u8], at: u64) -> Result<usize, Errno> {
    call(
        nr::PREAD64,
        &[
            fd as usize,
            buf.as_mut_ptr() as usize,
            buf.len(),
            at as usize,
        ],
    )
}

/// An ioctl that fills in `out`.
fn ioctl<T>(fd: i32, request: u32, out: &mut T) -> Result<usize, Errno> {
    call(
        nr::IOCTL,
        &[fd as usize, request as usize, out as *mut T as usize],
    )
}

/// pread until `buf` is full or the disk ends: a read returns at most
/// 64 KiB here (the kernel's copy buffer, syscall/fs.rs), as a careful
/// program expects of any read.
fn pread_full(fd: i32, buf: &mut [u8], at: u64) -> Result<usize, Errno> {
    let mut done = 0;
    while done < buf.len() {
        match pread(fd, &mut buf[done..], at + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

fn pwrite(fd: i32, buf: &[u8], at: u64) -> Result<usize, Errno> {
    call(
        nr::PWRITE64,
        &[fd as usize, buf.as_ptr() as usize, buf.len(), at as usize],
    )
}

/// Checks `buf`, read from `at`, against what `expected` says each byte is.
fn check(buf: &[u8], at: u64, expected: fn(u64) -> u8, what: &str) -> Outcome {
    match buf
        .iter()
        .enumerate()
        .find(|&(i, &b)| b != expected(at + i as u64))
    {
        None => Ok(()),
        Some((i, &b)) => Err(format!(
            "{what}: byte {:#x} is {b:#04x}, want {:#04x}",
            at + i as u64,
            expected(at + i as u64)
        )),
    }
}

/// `/dev/vda` is a block device of the image's size in 512-byte sectors,
/// as stat, BLKGETSIZE64, BLKSSZGET and lseek(SEEK_END) say.
fn the_disk_is_a_block_device_of_its_size() -> Outcome {
    let st = sys::stat(DISK).map_err(|e| e.message())?;
    ensure!(st.st_mode & S_IFMT == S_IFBLK, "mode {:o}", st.st_mode);
    ensure!(st.st_rdev == makedev(254, 0), "rdev {:#x}", st.st_rdev);
    let fd = open_disk()?;
    let mut size = 0u64;
    ioctl(fd, BLKGETSIZE64, &mut size).map_err(|e| format!("BLKGETSIZE64: {}", e.message()))?;
    ensure!(
        size == SIZE,
        "BLKGETSIZE64 says {size}, the image has {SIZE}"
    );
    let mut sector = 0i32;
    ioctl(fd, BLKSSZGET, &mut sector).map_err(|e| format!("BLKSSZGET: {}", e.message()))?;
    ensure!(sector == 512, "BLKSSZGET says {sector}");
    let end = sys::lseek(fd, 0, SEEK_END).map_err(|e| e.message())?;
    ensure!(end == SIZE, "SEEK_END at {end}");
    let _ = sys::close(fd);
    Ok(())
}

/// Reads of every shape find the host's bytes: sector-aligned and not,
/// inside one request's piece and across pieces, with read and pread.
fn reads_find_what_the_host_wrote() -> Outcome {
    let fd = open_disk()?;
    for (at, len) in [
        (0u64, 512usize),
        (511, 2),
        (4095, 4098),
        (12345, 70_000),
        (SIZE - 4096, 4096),
        (SIZE - 3, 3),
    ] {
        let mut buf = vec![0u8; len];
        let n =
            pread_full(fd, &mut buf, at).map_err(|e| format!("pread at {at}: {}", e.message()))?;
        ensure!(n == len, "pread at {at} of {len} gave {n}");
        check(&buf, at, host_byte, "pread")?;
    }
    sys::lseek(fd, 1000, SEEK_SET).map_err(|e| e.message())?;
    let mut buf = vec![0u8; 9000];
    let n = sys::read(fd, &mut buf).map_err(|e| e.message())?;
    ensure!(n == 9000, "read gave {n}");
    check(&buf, 1000, host_byte, "read")?;
    let after = sys::lseek(fd, 0, SEEK_CUR).map_err(|e| e.message())?;
    ensure!(after == 10_000, "the offset after read is {after}");
    let _ = sys::close(fd);
    Ok(())
}

/// At the end of the disk a read finds end of file, a write ENOSPC, and
/// a read across the end stops there.
fn the_end_of_the_disk_is_the_end() -> Outcome {
    let fd = open_disk()?;
    let mut buf = [0u8; 100];
    ensure!(pread(fd, &mut buf, SIZE) == Ok(0), "read at the end");
    ensure!(
        pread(fd, &mut buf, SIZE - 10) == Ok(10),
        "read across the end"
    );
    ensure!(
        pwrite(fd, &buf, SIZE) == Err(Errno::ENOSPC),
        "write at the end"
    );
    let _ = sys::close(fd);
    Ok(())
}

/// The guest's bytes over `GUEST_REGION`, written in pieces of awkward
/// sizes from several processes at once (each its own stripe), so several
/// requests are in flight together; then fsync, and each process reads
/// its stripe back.
fn writes_from_many_processes_land() -> Outcome {
    const WRITERS: u64 = 6;
    let start = GUEST_REGION.start;
    let len = GUEST_REGION.end - start;
    let stripe = len.div_ceil(WRITERS);
    let mut children = Vec::new();
    for w in 0..WRITERS {
        let pid = sys::fork().map_err(|e| e.message())?;
        if pid == 0 {
            let from = start + w * stripe;
            let to = (from + stripe).min(GUEST_REGION.end);
            let result = write_stripe(from, to);
            if let Err(why) = &result {
                println!("disktest: writer {w}: {why}");
            }
            sys::exit(i32::from(result.is_err()));
        }
        children.push(pid);
    }
    for pid in children {
        let status = sys::waitpid(pid as i32).map_err(|e| format!("wait: {}", e.message()))?;
        ensure!(status == 0, "a writer failed (status {status:#x})");
    }
    Ok(())
}

fn write_stripe(from: u64, to: u64) -> Outcome {
    let fd = open_disk()?;
    let mut at = from;
    let mut piece = 1usize;
    while at < to {
        // 1, 3, 9, ... bytes, up to a few requests' worth.
        let n = (piece as u64).min(to - at) as usize;
        let bytes: Vec<u8> = (0..n as u64).map(|i| guest_byte(at + i)).collect();
        let wrote =
            pwrite(fd, &bytes, at).map_err(|e| format!("pwrite at {at}: {}", e.message()))?;
        ensure!(wrote == n, "pwrite at {at} of {n} wrote {wrote}");
        at += n as u64;
        piece = if piece > 20_000 { 1 } else { piece * 3 };
    }
    call(nr::FSYNC, &[fd as usize]).map_err(|e| format!("fsync: {}", e.message()))?;
    let mut back = vec![0u8; (to - from) as usize];
    let n = pread_full(fd, &mut back, from).map_err(|e| e.message())?;
    ensure!(n == back.len(), "read back {n}");
    check(&back, from, guest_byte, "read back")?;
    let _ = sys::close(fd);
    Ok(())
}

/// Around the region the guest wrote, the host's bytes are untouched.
fn the_edges_of_the_writes_are_exact() -> Outcome {
    let fd = open_disk()?;
    let mut buf = vec![0u8; 8192];
    let before = GUEST_REGION.start - 4096;
    pread(fd, &mut buf, before).map_err(|e| e.message())?;
    check(&buf[..4096], before, host_byte, "before the region")?;
    check(
        &buf[4096..],
        GUEST_REGION.start,
        guest_byte,
        "the region's start",
    )?;
    let end = GUEST_REGION.end;
    pread(fd, &mut buf, end - 4096).map_err(|e| e.message())?;
    check(&buf[..4096], end - 4096, guest_byte, "the region's end")?;
    check(&buf[4096..], end, host_byte, "after the region")?;
    let _ = sys::close(fd);
    Ok(())
}

/// /proc/diskstats' counts for vda: reads completed, sectors read, writes
/// completed, sectors written.
fn disk_counts() -> Result<[u64; 4], alloc::string::String> {
    let table = sys::read_file("/proc/diskstats").map_err(|e| e.message())?;
    let table = alloc::string::String::from_utf8_lossy(&table).into_owned();
    let fields: Vec<u64> = table
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some("vda"))
        .ok_or_else(|| format!("no vda in /proc/diskstats:\n{table}"))?
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    // major, minor, (name), reads, merged, sectors, ms, writes, merged, sectors
    Ok([fields[2], fields[4], fields[6], fields[8]])
}

/// A large read goes to the disk in a few large requests, and an aligned
/// write of whole sectors is written as it is: no read of its
/// surroundings first, nothing more written than it holds.
fn requests_are_as_large_as_the_device_allows() -> Outcome {
    let fd = open_disk()?;
    let mut buf = vec![0u8; 1 << 20];
    let at = 16 << 20;
    let before = disk_counts()?;
    let n = pread_full(fd, &mut buf, at).map_err(|e| e.message())?;
    ensure!(n == buf.len(), "read {n}");
    check(&buf, at, host_byte, "the 1 MiB read")?;
    let after = disk_counts()?;
    let (reads, sectors) = (after[0] - before[0], after[1] - before[1]);
    ensure!(sectors == 2048, "1 MiB read {sectors} sectors");
    ensure!(
        reads <= 16,
        "1 MiB read in {reads} requests: at most 16 of 64 KiB"
    );
    let at = GUEST_REGION.start;
    let bytes: Vec<u8> = (0..4096).map(|i| guest_byte(at + i)).collect();
    let before = disk_counts()?;
    let wrote = pwrite(fd, &bytes, at).map_err(|e| e.message())?;
    ensure!(wrote == 4096, "wrote {wrote}");
    let after = disk_counts()?;
    let delta: Vec<u64> = (0..4).map(|i| after[i] - before[i]).collect();
    ensure!(
        delta == [0, 0, 1, 8],
        "an aligned 4 KiB write made {} reads of {} sectors and {} writes of {} sectors; want one write of 8",
        delta[0],
        delta[1],
        delta[2],
        delta[3]
    );
    let _ = sys::close(fd);
    Ok(())
}

const TESTS: &[Test] = user::tests![
    the_disk_is_a_block_device_of_its_size,
    reads_find_what_the_host_wrote,
    the_end_of_the_disk_is_the_end,
    writes_from_many_processes_land,
    the_edges_of_the_writes_are_exact,
    requests_are_as_large_as_the_device_allows,
];

fn run() -> i32 {
    let (passed, failed) = user::harness::run("disktest", TESTS);
    println!("disktest: {passed} passed, {failed} failed");
    i32::from(failed > 0)
}
