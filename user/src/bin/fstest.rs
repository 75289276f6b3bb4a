//! /bin/fstest: an ext3 file system on the virtio disk, mounted and used
//! from user space (fs/mount.rs, fs/ext2.rs, kcore::ext2).
//!
//! xtask's `ext3` suite boots with an image that Debian's `mke2fs -t ext3
//! -d` made from the files `kcore::ext2::suite` names. These tests mount
//! it on /mnt, read the host's files, write files of every size class, a
//! sparse file, links, a FIFO and a device node, check the errors Linux
//! gives (EXDEV, EBUSY, EROFS, ENAMETOOLONG, ENOTEMPTY), mount it
//! read-only, and leave it unmounted. After power-off xtask runs the
//! host's `e2fsck -fn` on the image and reads the guest's files back with
//! `debugfs`.
//!
//! Each test runs in its own child, mounts the disk and unmounts it, and
//! prints `fstest: ok NAME` or `fstest: FAIL NAME: why`.
//!
//! `FSTEST_DISK=DEVICE fstest` tests the disk DEVICE instead of /dev/vda
//! (the arguments name tests, as for every suite): the `ext3-second-disk`
//! suite boots with / on vda and gives the test image as /dev/vdb, so
//! both disks are busy at once.

#![no_std]
#![no_main]

extern crate alloc;

use abi::sys as nr;
use abi::types::*;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use kcore::ext2::suite::{
    BLOCK_SIZE, GUEST_SIZES, GUEST_XATTR_FILE, HOST_FILES, HOST_LINK, HOST_XATTR, SPARSE_AT,
    SPARSE_LEN, SPARSE_SEED, WRITER_BYTES, WRITERS, byte, guest_xattrs, long_name, writer_seed,
};
use libc_lite::{Errno, println, sys};
use user::ensure;
use user::harness::{Outcome, Test, expect_err};

libc_lite::entry!(run);

const MNT: &str = "/mnt";

/// The disk under test: `$FSTEST_DISK`, or /dev/vda.
fn disk() -> &'static str {
    libc_lite::env::vars()
        .find_map(|v| v.strip_prefix("FSTEST_DISK="))
        .unwrap_or("/dev/vda")
}

fn call(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: every pointer passed is to a live buffer or NUL-terminated
    // string of the length the call expects.
    Errno::from_return(unsafe { libc_lite::syscall::syscall(number, args) })
}

fn why(what: &str) -> impl FnOnce(Errno) -> String + '_ {
    move |e| format!("{what}: {}", e.message())
}

/// A path's C string, for the calls libc-lite has no wrapper for.
fn cpath(path: &str) -> Vec<u8> {
    let mut c = Vec::from(path.as_bytes());
    c.push(0);
    c
}

fn symlink(target: &str, path: &str) -> Result<usize, Errno> {
    let (t, p) = (cpath(target), cpath(path));
    call(nr::SYMLINK, &[t.as_ptr() as usize, p.as_ptr() as usize])
}

fn link(from: &str, to: &str) -> Result<usize, Errno> {
    let (f, t) = (cpath(from), cpath(to));
    call(nr::LINK, &[f.as_ptr() as usize, t.as_ptr() as usize])
}

fn mknod(path: &str, mode: u32, dev: u64) -> Result<usize, Errno> {
    let p = cpath(path);
    call(
        nr::MKNOD,
        &[p.as_ptr() as usize, mode as usize, dev as usize],
    )
}

fn statfs(path: &str) -> Result<Statfs, Errno> {
    let p = cpath(path);
    let mut st = Statfs::default();
    call(
        nr::STATFS,
        &[p.as_ptr() as usize, &mut st as *mut Statfs as usize],
    )?;
    Ok(st)
}

fn pwrite(fd: i32, buf: &[u8], at: u64) -> Result<usize, Errno> {
    call(
        nr::PWRITE64,
        &[fd as usize, buf.as_ptr() as usize, buf.len(), at as usize],
    )
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

/// Mounts the disk on /mnt (`flags`), runs `f`, and unmounts whatever
/// `f` answered: every test starts and ends with the disk unmounted.
fn mounted(flags: u64, f: impl FnOnce() -> Outcome) -> Outcome {
    let _ = sys::mkdir(MNT, 0o755);
    let what = format!("mount {} {MNT}", disk());
    sys::mount(disk(), MNT, "ext3", flags, None).map_err(why(&what))?;
    let result = f();
    let unmounted = sys::umount2(MNT, 0).map_err(why("umount /mnt"));
    result.and(unmounted)
}

fn pattern(seed: u64, len: u64) -> Vec<u8> {
    (0..len).map(|at| byte(seed, at)).collect()
}

/// Writes `data` to `path` (made or cut to nothing) in pieces of
/// `piece` bytes, then fsyncs it.
fn write_file(path: &str, data: &[u8], piece: usize) -> Outcome {
    let fd = sys::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644).map_err(why(path))?;
    for chunk in data.chunks(piece.max(1)) {
        sys::write_all(fd, chunk).map_err(why("write"))?;
    }
    sys::fsync(fd).map_err(why("fsync"))?;
    sys::close(fd).map_err(why("close"))?;
    Ok(())
}

fn check_file(path: &str, want: &[u8]) -> Outcome {
    let got = sys::read_file(path).map_err(why(path))?;
    ensure!(
        got.len() == want.len(),
        "{path}: {} bytes, want {}",
        got.len(),
        want.len()
    );
    if let Some(at) = (0..got.len()).find(|&i| got[i] != want[i]) {
        return Err(format!(
            "{path}: byte {at} is {:#x}, want {:#x}",
            got[at], want[at]
        ));
    }
    Ok(())
}

fn the_host_files_read_back() -> Outcome {
    mounted(0, || {
        for &(name, size) in HOST_FILES {
            check_file(&format!("{MNT}/{name}"), &pattern(size, size))?;
        }
        let mut buf = [0u8; 64];
        let (link, target) = HOST_LINK;
        let got = sys::readlink(&format!("{MNT}/{link}"), &mut buf).map_err(why("readlink"))?;
        ensure!(got == target, "{link} -> {got}, want {target}");
        let st = sys::stat(&format!("{MNT}/{link}")).map_err(why("stat through the link"))?;
        ensure!(
            st.st_mode & S_IFMT == S_IFREG,
            "the link leads to mode {:o}",
            st.st_mode
        );
        let root = sys::stat(MNT).map_err(why("stat /mnt"))?;
        ensure!(
            root.st_ino == 2,
            "the root's inode is {}, want ext2's 2",
            root.st_ino
        );
        let device = sys::stat(disk()).map_err(why("stat the disk"))?;
        ensure!(
            device.st_mode & S_IFMT == S_IFBLK && device.st_rdev >> 8 == 254,
            "{} is not a virtio disk: mode {:o}, rdev {:#x}",
            disk(),
            device.st_mode,
            device.st_rdev
        );
        ensure!(
            root.st_dev == device.st_rdev,
            "st_dev {:#x}, want the disk's {:#x}",
            root.st_dev,
            device.st_rdev
        );
        Ok(())
    })
}

fn the_mount_shows_in_proc_mounts_and_statfs() -> Outcome {
    mounted(0, || {
        let mounts = sys::read_file("/proc/mounts").map_err(why("/proc/mounts"))?;
        let mounts = String::from_utf8_lossy(&mounts);
        ensure!(
            mounts
                .lines()
                .any(|l| l == format!("{} /mnt ext3 rw,noatime 0 0", disk())),
            "/proc/mounts has no line for /mnt:\n{mounts}"
        );
        let st = statfs(MNT).map_err(why("statfs"))?;
        ensure!(st.f_type == EXT2_SUPER_MAGIC, "f_type {:#x}", st.f_type);
        ensure!(st.f_bsize == BLOCK_SIZE as i64, "f_bsize {}", st.f_bsize);
        ensure!(
            st.f_bfree > 0 && st.f_bfree < st.f_blocks,
            "free {} of {}",
            st.f_bfree,
            st.f_blocks
        );
        ensure!(
            st.f_ffree > 0 && st.f_ffree < st.f_files,
            "free inodes {} of {}",
            st.f_ffree,
            st.f_files
        );
        let tmp = statfs("/tmp").map_err(why("statfs /tmp"))?;
        ensure!(
            tmp.f_type == RAMFS_MAGIC,
            "/tmp is still memory: {:#x}",
            tmp.f_type
        );
        Ok(())
    })?;
    let mounts = sys::read_file("/proc/mounts").map_err(why("/proc/mounts"))?;
    ensure!(
        !String::from_utf8_lossy(&mounts).contains("/mnt"),
        "/mnt is still listed after umount"
    );
    Ok(())
}

fn files_of_every_size_class() -> Outcome {
    mounted(0, || {
        let _ = sys::mkdir(&format!("{MNT}/out"), 0o755);
        for (i, &size) in GUEST_SIZES.iter().enumerate() {
            let path = format!("{MNT}/out/size-{size}");
            // Pieces of odd sizes, so writes straddle blocks.
            write_file(&path, &pattern(size, size), [1000, 4096, 777, 65536][i % 4])?;
            check_file(&path, &pattern(size, size))?;
            let st = sys::stat(&path).map_err(why("stat"))?;
            ensure!(st.st_size == size as i64, "{path}: st_size {}", st.st_size);
            // Data blocks plus the map's indirect blocks, in sectors.
            let data = size.div_ceil(BLOCK_SIZE) * 2;
            ensure!(
                st.st_blocks as u64 >= data && st.st_blocks as u64 <= data + data / 64 + 8,
                "{path}: st_blocks {} for {size} bytes",
                st.st_blocks
            );
        }
        Ok(())
    })?;
    // And again after a fresh mount: nothing lived only in memory.
    mounted(MS_RDONLY, || {
        for &size in GUEST_SIZES {
            check_file(&format!("{MNT}/out/size-{size}"), &pattern(size, size))?;
        }
        Ok(())
    })
}

fn a_sparse_file_reaches_the_triple_indirect_block() -> Outcome {
    mounted(0, || {
        let _ = sys::mkdir(&format!("{MNT}/out"), 0o755);
        let path = format!("{MNT}/out/sparse");
        let fd = sys::open(&path, O_RDWR | O_CREAT | O_TRUNC, 0o644).map_err(why(&path))?;
        let data = pattern(SPARSE_SEED, SPARSE_LEN);
        let n = pwrite(fd, &data, SPARSE_AT).map_err(why("pwrite"))?;
        ensure!(n == data.len(), "pwrite wrote {n}");
        let st = sys::fstat(fd).map_err(why("fstat"))?;
        ensure!(
            st.st_size as u64 == SPARSE_AT + SPARSE_LEN,
            "st_size {}",
            st.st_size
        );
        // Five data blocks and a block of each level of the map.
        ensure!(
            st.st_blocks <= 2 * 12,
            "st_blocks {} in a sparse file",
            st.st_blocks
        );
        let mut hole = vec![1u8; 4096];
        let n = pread(fd, &mut hole, SPARSE_AT / 2).map_err(why("pread in the hole"))?;
        ensure!(
            n == hole.len() && hole.iter().all(|&b| b == 0),
            "the hole is not zeros"
        );
        let mut back = vec![0u8; data.len()];
        let n = pread(fd, &mut back, SPARSE_AT).map_err(why("pread"))?;
        ensure!(
            n == back.len() && back == data,
            "the written block reads back wrong"
        );
        sys::fsync(fd).map_err(why("fsync"))?;
        sys::close(fd).map_err(why("close"))
    })
}

fn names_links_fifos_and_devices() -> Outcome {
    mounted(0, || {
        let dir = format!("{MNT}/out/names");
        let _ = sys::mkdir(&format!("{MNT}/out"), 0o755);
        sys::mkdir(&dir, 0o750).map_err(why("mkdir"))?;
        let long = format!("{dir}/{}", long_name());
        write_file(&long, b"longest name", 7)?;
        let too_long = format!("{dir}/{}x", long_name());
        expect_err(
            "a 256-byte name",
            sys::open(&too_long, O_WRONLY | O_CREAT, 0o644),
            Errno::ENAMETOOLONG,
        )?;
        write_file(&format!("{dir}/one"), b"one file, two names\n", 5)?;
        link(&format!("{dir}/one"), &format!("{dir}/two")).map_err(why("link"))?;
        let st = sys::stat(&format!("{dir}/two")).map_err(why("stat"))?;
        ensure!(st.st_nlink == 2, "st_nlink {} after link", st.st_nlink);
        // A fast link (in the inode) and a slow one (in a block).
        symlink("one", &format!("{dir}/fast")).map_err(why("symlink"))?;
        let slow: String = (0..100).map(|_| "../").collect::<String>() + "names/one";
        symlink(&slow, &format!("{dir}/slow")).map_err(why("slow symlink"))?;
        let mut buf = [0u8; 512];
        let got = sys::readlink(&format!("{dir}/slow"), &mut buf).map_err(why("readlink"))?;
        ensure!(got == slow, "the slow link reads {got}");
        check_file(&format!("{dir}/fast"), b"one file, two names\n")?;
        mknod(&format!("{dir}/fifo"), S_IFIFO | 0o644, 0).map_err(why("mkfifo"))?;
        mknod(&format!("{dir}/null"), S_IFCHR | 0o666, makedev(1, 3)).map_err(why("mknod"))?;
        let st = sys::stat(&format!("{dir}/null")).map_err(why("stat null"))?;
        ensure!(st.st_rdev == makedev(1, 3), "st_rdev {:#x}", st.st_rdev);
        let fd = sys::open(&format!("{dir}/null"), O_WRONLY, 0).map_err(why("open null"))?;
        ensure!(
            sys::write(fd, b"gone").ok() == Some(4),
            "a write to the disk's /dev/null node"
        );
        let _ = sys::close(fd);
        // rename over a file, and the directory's errors.
        write_file(&format!("{dir}/new"), b"replacement\n", 3)?;
        sys::rename(&format!("{dir}/new"), &format!("{dir}/one")).map_err(why("rename over"))?;
        check_file(&format!("{dir}/two"), b"one file, two names\n")?;
        check_file(&format!("{dir}/one"), b"replacement\n")?;
        expect_err(
            "rmdir of a full directory",
            sys::rmdir(&dir),
            Errno::ENOTEMPTY,
        )?;
        sys::mkdir(&format!("{dir}/empty"), 0o755).map_err(why("mkdir"))?;
        sys::rmdir(&format!("{dir}/empty")).map_err(why("rmdir"))?;
        let parent = sys::stat(&dir).map_err(why("stat dir"))?;
        ensure!(
            parent.st_nlink == 2,
            "the directory's st_nlink is {}",
            parent.st_nlink
        );
        let mut names = Vec::new();
        let fd = sys::open(&dir, O_RDONLY | O_DIRECTORY, 0).map_err(why("open dir"))?;
        let mut buf = vec![0u8; 4096];
        loop {
            let n = sys::getdents64(fd, &mut buf).map_err(why("getdents64"))?;
            if n == 0 {
                break;
            }
            names.extend(user::probe::dirent_names(&buf[..n]));
        }
        let _ = sys::close(fd);
        names.sort();
        let mut want: Vec<String> = [".", "..", "fast", "fifo", "null", "one", "slow", "two"]
            .iter()
            .map(|s| String::from(*s))
            .collect();
        want.push(long_name());
        want.sort();
        ensure!(names == want, "the directory lists {names:?}");
        Ok(())
    })
}

fn what_crosses_a_mount_is_refused() -> Outcome {
    mounted(0, || {
        let file = format!("{MNT}/cross");
        write_file(&file, b"x", 1)?;
        expect_err(
            "rename to /tmp",
            sys::rename(&file, "/tmp/cross"),
            Errno::EXDEV,
        )?;
        expect_err("link to /tmp", link(&file, "/tmp/cross"), Errno::EXDEV)?;
        expect_err("rmdir of the mount point", sys::rmdir(MNT), Errno::EBUSY)?;
        let fd = sys::open(&file, O_RDONLY, 0).map_err(why("open"))?;
        expect_err(
            "umount with a file open",
            sys::umount2(MNT, 0),
            Errno::EBUSY,
        )?;
        let _ = sys::close(fd);
        // A working directory holds its mount as an open file does, even
        // when it is the mount's own root (Linux: EBUSY).
        sys::chdir(MNT).map_err(why("chdir /mnt"))?;
        let busy = sys::umount2(MNT, 0);
        sys::chdir("/").map_err(why("chdir /"))?;
        expect_err(
            "umount of the working directory's mount",
            busy,
            Errno::EBUSY,
        )?;
        let dir = sys::open(MNT, O_RDONLY | O_DIRECTORY, 0).map_err(why("open /mnt"))?;
        let busy = sys::umount2(MNT, 0);
        let _ = sys::close(dir);
        expect_err("umount with its root directory open", busy, Errno::EBUSY)?;
        sys::unlink(&file).map_err(why("unlink"))?;
        expect_err(
            "mount it twice",
            sys::mount(disk(), "/tmp", "ext3", 0, None),
            Errno::EBUSY,
        )?;
        expect_err(
            "mount a character device",
            sys::mount("/dev/null", "/tmp", "ext3", 0, None),
            Errno::ENOTBLK,
        )?;
        expect_err(
            "an unknown type",
            sys::mount(disk(), "/tmp", "nosuchfs", 0, None),
            Errno::ENODEV,
        )?;
        Ok(())
    })?;
    expect_err(
        "umount of what is not mounted",
        sys::umount2(MNT, 0),
        Errno::EINVAL,
    )
}

fn an_unlinked_open_file_lives_until_closed() -> Outcome {
    mounted(0, || {
        let before = statfs(MNT).map_err(why("statfs"))?;
        let path = format!("{MNT}/doomed");
        let fd = sys::open(&path, O_RDWR | O_CREAT | O_TRUNC, 0o600).map_err(why("open"))?;
        let data = pattern(99, 50_000);
        sys::write_all(fd, &data).map_err(why("write"))?;
        sys::unlink(&path).map_err(why("unlink"))?;
        expect_err("stat after unlink", sys::stat(&path), Errno::ENOENT)?;
        let mut back = vec![0u8; data.len()];
        let n = pread(fd, &mut back, 0).map_err(why("pread"))?;
        ensure!(
            n == data.len() && back == data,
            "the open file lost its bytes"
        );
        let st = sys::fstat(fd).map_err(why("fstat"))?;
        ensure!(st.st_nlink == 0, "st_nlink {} after unlink", st.st_nlink);
        sys::close(fd).map_err(why("close"))?;
        // The next operation releases it: blocks and inode come back.
        sys::sync();
        let after = statfs(MNT).map_err(why("statfs"))?;
        ensure!(
            after.f_bfree == before.f_bfree && after.f_ffree == before.f_ffree,
            "free blocks {} -> {}, inodes {} -> {}",
            before.f_bfree,
            after.f_bfree,
            before.f_ffree,
            after.f_ffree
        );
        Ok(())
    })
}

fn several_writers_at_once() -> Outcome {
    mounted(0, || {
        let _ = sys::mkdir(&format!("{MNT}/out"), 0o755);
        let mut children = Vec::new();
        for w in 0..WRITERS {
            let pid = sys::fork().map_err(why("fork"))?;
            if pid == 0 {
                let path = format!("{MNT}/out/writer-{w}");
                let result = write_file(&path, &pattern(writer_seed(w), WRITER_BYTES), 3000);
                if let Err(why) = &result {
                    println!("fstest: writer {w}: {why}");
                }
                sys::exit(i32::from(result.is_err()));
            }
            children.push(pid);
        }
        for pid in children {
            let status = sys::waitpid(pid as i32).map_err(why("wait"))?;
            ensure!(status == 0, "a writer failed (status {status:#x})");
        }
        for w in 0..WRITERS {
            check_file(
                &format!("{MNT}/out/writer-{w}"),
                &pattern(writer_seed(w), WRITER_BYTES),
            )?;
        }
        Ok(())
    })
}

fn a_read_only_mount_refuses_changes() -> Outcome {
    mounted(MS_RDONLY, || {
        let mounts = sys::read_file("/proc/mounts").map_err(why("/proc/mounts"))?;
        ensure!(
            String::from_utf8_lossy(&mounts)
                .contains(&format!("{} /mnt ext3 ro,noatime 0 0", disk())),
            "/proc/mounts does not say ro"
        );
        let (name, size) = HOST_FILES[0];
        let path = format!("{MNT}/{name}");
        check_file(&path, &pattern(size, size))?;
        expect_err(
            "create",
            sys::open(&format!("{MNT}/new"), O_WRONLY | O_CREAT, 0o644),
            Errno::EROFS,
        )?;
        expect_err(
            "open for writing",
            sys::open(&path, O_WRONLY, 0),
            Errno::EROFS,
        )?;
        expect_err(
            "mkdir",
            sys::mkdir(&format!("{MNT}/d"), 0o755),
            Errno::EROFS,
        )?;
        expect_err("unlink", sys::unlink(&path), Errno::EROFS)?;
        expect_err(
            "mkdir of a name that exists",
            sys::mkdir(&path, 0o755),
            Errno::EEXIST,
        )?;
        let st = statfs(MNT).map_err(why("statfs"))?;
        ensure!(
            st.f_flags & ST_RDONLY != 0,
            "statfs f_flags {:#x}",
            st.f_flags
        );
        Ok(())
    })
}

fn a_tmpfs_mounts_and_unmounts() -> Outcome {
    let _ = sys::mkdir(MNT, 0o755);
    sys::mount("tmpfs", MNT, "tmpfs", 0, Some("mode=700")).map_err(why("mount tmpfs"))?;
    let st = sys::stat(MNT).map_err(why("stat"))?;
    ensure!(
        st.st_mode & 0o7777 == 0o700,
        "the tmpfs root's mode is {:o}",
        st.st_mode
    );
    write_file(&format!("{MNT}/in-memory"), b"gone at umount", 4)?;
    sys::umount2(MNT, 0).map_err(why("umount tmpfs"))?;
    expect_err(
        "the file after umount",
        sys::stat(&format!("{MNT}/in-memory")),
        Errno::ENOENT,
    )
}

/// mmap(2) of `len` bytes of `fd` from 0, `flags` MAP_SHARED or
/// MAP_PRIVATE, readable and writable.
fn map_file(fd: i32, len: usize, flags: u32) -> Result<&'static mut [u8], String> {
    let prot = (PROT_READ | PROT_WRITE) as usize;
    let addr =
        call(nr::MMAP, &[0, len, prot, flags as usize, fd as usize, 0]).map_err(why("mmap"))?;
    // SAFETY: the kernel mapped `len` bytes at `addr` for this process,
    // and nothing else refers to them until `unmap`.
    Ok(unsafe { core::slice::from_raw_parts_mut(addr as *mut u8, len) })
}

fn unmap(map: &mut [u8]) -> Outcome {
    sys::munmap(map.as_mut_ptr(), map.len()).map_err(why("munmap"))
}

/// A shared mapping of a disk file is the file (its page cache, fs/ext2.rs):
/// a store through it is what `read` returns at once, a `write` is what
/// it sees, a private mapping's store is its own, and the stores reach the
/// disk, by msync(MS_SYNC) for one file and, for another, by nobody's
/// asking (the file closed and unmapped, then the volume unmounted), as
/// the next mount reads. A mapped file keeps its volume busy.
fn a_shared_mapping_of_a_disk_file_is_the_file() -> Outcome {
    const LEN: usize = 3 * 4096 + 100;
    let synced = format!("{MNT}/mapped-synced");
    let unsynced = format!("{MNT}/mapped-unsynced");
    let mut want_synced = pattern(31, LEN as u64);
    let mut want_unsynced = pattern(32, LEN as u64);
    mounted(0, || {
        write_file(&synced, &want_synced, 4096)?;
        let fd = sys::open(&synced, O_RDWR, 0).map_err(why(&synced))?;
        let map = map_file(fd, LEN, MAP_SHARED)?;
        ensure!(
            *map == *want_synced,
            "the mapping does not hold the file's bytes"
        );
        let stored = b"stored through the mapping";
        map[4100..4100 + stored.len()].copy_from_slice(stored);
        want_synced[4100..4100 + stored.len()].copy_from_slice(stored);
        let mut back = vec![0u8; LEN];
        let n = pread(fd, &mut back, 0).map_err(why("pread"))?;
        ensure!(
            n == LEN && back == want_synced,
            "pread does not see the mapping's store"
        );
        let written = b"written by pwrite";
        pwrite(fd, written, 9000).map_err(why("pwrite"))?;
        want_synced[9000..9000 + written.len()].copy_from_slice(written);
        ensure!(
            map[9000..9000 + written.len()] == *written,
            "the mapping does not see pwrite's bytes"
        );
        check_file(&synced, &want_synced)?;
        // A private mapping's store stays in the mapping.
        let private = map_file(fd, LEN, MAP_PRIVATE)?;
        ensure!(
            *private == *want_synced,
            "a private mapping does not hold the file's bytes"
        );
        private[0] ^= 0xff;
        check_file(&synced, &want_synced)?;
        unmap(private)?;
        call(nr::MSYNC, &[map.as_ptr() as usize, LEN, MS_SYNC as usize]).map_err(why("msync"))?;
        sys::close(fd).map_err(why("close"))?;
        expect_err(
            "umount with a file mapped",
            sys::umount2(MNT, 0),
            Errno::EBUSY,
        )?;
        unmap(map)?;

        write_file(&unsynced, &want_unsynced, 4096)?;
        let fd = sys::open(&unsynced, O_RDWR, 0).map_err(why(&unsynced))?;
        let map = map_file(fd, 4 * 4096, MAP_SHARED)?;
        sys::close(fd).map_err(why("close"))?;
        for page in 0..4 {
            map[page * 4096 + 7] = b'!';
            want_unsynced[page * 4096 + 7] = b'!';
        }
        // The last page's bytes past the end are not the file's: they
        // must not reach it.
        map[LEN + 5] = b'?';
        unmap(map)?;
        check_file(&unsynced, &want_unsynced)
    })?;
    mounted(0, || {
        check_file(&synced, &want_synced)?;
        check_file(&unsynced, &want_unsynced)?;
        let st = sys::stat(&unsynced).map_err(why("stat"))?;
        ensure!(st.st_size == LEN as i64, "the size became {}", st.st_size);
        Ok(())
    })
}

/// A program run from the disk runs from its file's page cache, so the
/// file is busy for writers while it runs (ETXTBSY, as for a ramfs
/// file), and free again once it ended; its running keeps the volume
/// busy.
fn a_program_on_the_disk_is_busy_while_it_runs() -> Outcome {
    let prog = format!("{MNT}/sleep-copy");
    mounted(0, || {
        let bytes = sys::read_file("/bin/sleep").map_err(why("/bin/sleep"))?;
        write_file(&prog, &bytes, 64 * 1024)?;
        let c = cpath(&prog);
        call(nr::CHMOD, &[c.as_ptr() as usize, 0o755]).map_err(why("chmod"))?;
        let pid = sys::fork().map_err(why("fork"))? as i32;
        if pid == 0 {
            let e = sys::execve(&prog, &[&prog, "30"], &[]);
            println!("fstest: exec {prog}: {}", e.message());
            sys::exit(127);
        }
        // Until the child's program is the copy.
        let start = sys::monotonic_nanos();
        let mut buf = [0u8; 128];
        loop {
            let exe = sys::readlink(&format!("/proc/{pid}/exe"), &mut buf);
            if exe.is_ok_and(|exe| exe == prog) {
                break;
            }
            ensure!(
                sys::monotonic_nanos() - start < 10_000_000_000,
                "{prog} is not running 10 s after the fork"
            );
            sys::nanosleep(20_000_000).map_err(why("nanosleep"))?;
        }
        let busy = sys::open(&prog, O_WRONLY, 0);
        let truncated = call(nr::TRUNCATE, &[c.as_ptr() as usize, 0]);
        let unmounted = sys::umount2(MNT, 0);
        sys::kill(pid, abi::signal::SIGKILL).map_err(why("kill"))?;
        sys::waitpid(pid).map_err(why("waitpid"))?;
        expect_err("open for writing while it runs", busy, Errno::ETXTBSY)?;
        expect_err("truncate while it runs", truncated, Errno::ETXTBSY)?;
        expect_err("umount while it runs", unmounted, Errno::EBUSY)?;
        let fd = sys::open(&prog, O_WRONLY, 0).map_err(why("open for writing after"))?;
        sys::close(fd).map_err(why("close"))?;
        sys::unlink(&prog).map_err(why("unlink"))
    })
}

/// The pid of the process named `name` (its /proc/PID/comm), if any.
fn pid_named(name: &str) -> Result<Option<i32>, String> {
    for entry in user::probe::dir_names("/proc")? {
        let Ok(pid) = entry.parse::<i32>() else {
            continue;
        };
        // A process may end between the listing and the read.
        let comm = sys::read_file(&format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.strip_suffix(b"\n") == Some(name.as_bytes()) {
            return Ok(Some(pid));
        }
    }
    Ok(None)
}

/// Writes completed on the disk under test (/proc/diskstats' fifth field).
fn disk_writes() -> Result<u64, String> {
    let name = disk().trim_start_matches("/dev/");
    let table = sys::read_file("/proc/diskstats").map_err(why("/proc/diskstats"))?;
    let table = String::from_utf8_lossy(&table);
    table
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .and_then(|l| l.split_whitespace().nth(7))
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| format!("/proc/diskstats has no writes figure for {name}:\n{table}"))
}

/// A write nobody syncs reaches the disk anyway: the volume's flusher, a
/// kernel thread, commits the journal's open transaction once it is 5 s
/// old, with nothing else touching the volume (before the flusher, only
/// the next operation did). The flusher is a process to look at, but not
/// to signal, and it ends with the mount.
fn the_flusher_writes_what_nobody_synced() -> Outcome {
    let name = format!("flush-{}", disk().trim_start_matches("/dev/"));
    let mut flusher = 0;
    mounted(0, || {
        // Committed, flushed, and the commit's clock started again.
        sys::sync();
        let before = disk_writes()?;
        let path = format!("{MNT}/unsynced");
        let fd = sys::open(&path, O_WRONLY | O_CREAT | O_TRUNC, 0o644).map_err(why(&path))?;
        sys::write_all(fd, &pattern(7, 5000)).map_err(why("write"))?;
        sys::close(fd).map_err(why("close"))?;
        let start = sys::monotonic_nanos();
        while disk_writes()? == before {
            ensure!(
                sys::monotonic_nanos() - start < 30_000_000_000,
                "no write reached {} in 30 s after an unsynced write ({before} before)",
                disk()
            );
            sys::nanosleep(200_000_000).map_err(why("nanosleep"))?;
        }
        let pid = pid_named(&name)?.ok_or(format!("no process named {name} while mounted"))?;
        let stat = sys::read_file(&format!("/proc/{pid}/stat")).map_err(why("stat"))?;
        let stat = String::from_utf8_lossy(&stat);
        // After the name: state, ppid, group, session, terminal; a kernel
        // thread has none of the last four, as on Linux.
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
        ensure!(
            fields.get(1..5) == Some(&["0", "0", "0", "0"][..]),
            "{name}'s parent, group, session or terminal in {stat:?} is not 0"
        );
        expect_err(
            "readlink /proc/PID/exe of a kernel thread",
            sys::readlink(&format!("/proc/{pid}/exe"), &mut [0u8; 64]).map(|_| ()),
            Errno::ENOENT,
        )?;
        sys::kill(pid, abi::signal::SIGKILL).map_err(why("kill the flusher"))?;
        sys::nanosleep(100_000_000).map_err(why("nanosleep"))?;
        ensure!(
            pid_named(&name)? == Some(pid),
            "{name} (pid {pid}) did not outlive a SIGKILL"
        );
        flusher = pid;
        Ok(())
    })?;
    // It ends with the mount (woken by the unmount, not left for its next
    // round); 10 s leaves room for a busy host.
    let start = sys::monotonic_nanos();
    while sys::stat(&format!("/proc/{flusher}")).is_ok() {
        ensure!(
            sys::monotonic_nanos() - start < 10_000_000_000,
            "{name} (pid {flusher}) still there 10 s after umount"
        );
        sys::nanosleep(50_000_000).map_err(why("nanosleep"))?;
    }
    Ok(())
}

fn setxattr(path: &str, name: &str, value: &[u8], flags: u32) -> Result<usize, Errno> {
    let (path, name) = (cpath(path), cpath(name));
    call(
        nr::SETXATTR,
        &[
            path.as_ptr() as usize,
            name.as_ptr() as usize,
            value.as_ptr() as usize,
            value.len(),
            flags as usize,
        ],
    )
}

fn getxattr(path: &str, name: &str) -> Result<Vec<u8>, Errno> {
    let (path, name) = (cpath(path), cpath(name));
    let mut buf = vec![0u8; 4096];
    let args = [
        path.as_ptr() as usize,
        name.as_ptr() as usize,
        buf.as_mut_ptr() as usize,
        buf.len(),
    ];
    let n = call(nr::GETXATTR, &args)?;
    buf.truncate(n);
    Ok(buf)
}

/// listxattr's names, in its order.
fn listxattr(path: &str) -> Result<Vec<String>, Errno> {
    let path = cpath(path);
    let mut buf = vec![0u8; 4096];
    let args = [path.as_ptr() as usize, buf.as_mut_ptr() as usize, buf.len()];
    let n = call(nr::LISTXATTR, &args)?;
    Ok(buf[..n]
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect())
}

/// Extended attributes on the disk, kept where Linux keeps them (the
/// inode, then a block: kcore::ext2::xattr): the host's (debugfs set it)
/// read here; the guest's set, replaced, removed and listed, and left on
/// `out/attrs` for the host's debugfs to read after power-off; a value
/// no block holds is ENOSPC and changes nothing; the block counts in
/// st_blocks; a fresh read-only mount reads them all and refuses a change.
fn extended_attributes_in_the_inode_and_its_block() -> Outcome {
    let path = format!("{MNT}/out/{GUEST_XATTR_FILE}");
    let names = || {
        let mut names: Vec<String> = guest_xattrs().iter().map(|(n, _)| (*n).into()).collect();
        names.sort();
        names
    };
    mounted(0, || {
        let (file, name, value) = HOST_XATTR;
        let got = getxattr(&format!("{MNT}/{file}"), name).map_err(why("the host's"))?;
        ensure!(got == value.as_bytes(), "the host's {name}: {got:?}");
        let _ = sys::mkdir(&format!("{MNT}/out"), 0o755);
        write_file(&path, b"attributes\n", 100)?;
        for (name, value) in guest_xattrs() {
            setxattr(&path, name, &value, XATTR_CREATE).map_err(why(name))?;
        }
        setxattr(&path, "user.gone", b"soon", 0).map_err(why("user.gone"))?;
        setxattr(&path, "user.gone", b"replaced", XATTR_REPLACE).map_err(why("replace"))?;
        ensure!(
            getxattr(&path, "user.gone") == Ok(b"replaced".to_vec()),
            "user.gone not replaced"
        );
        call(
            nr::REMOVEXATTR,
            &[
                cpath(&path).as_ptr() as usize,
                cpath("user.gone").as_ptr() as usize,
            ],
        )
        .map_err(why("removexattr"))?;
        expect_err(
            "getxattr once removed",
            getxattr(&path, "user.gone"),
            Errno::ENODATA,
        )?;
        expect_err(
            "a value no block holds",
            setxattr(&path, "user.huge", &[7; 2 * BLOCK_SIZE as usize], 0),
            Errno::ENOSPC,
        )?;
        let mut listed = listxattr(&path).map_err(why("listxattr"))?;
        listed.sort();
        ensure!(listed == names(), "listed {listed:?}");
        // One data block and the attribute block, in sectors.
        let st = sys::stat(&path).map_err(why("stat"))?;
        ensure!(st.st_blocks == 4, "st_blocks {}, want 4", st.st_blocks);
        Ok(())
    })?;
    mounted(MS_RDONLY, || {
        for (name, value) in guest_xattrs() {
            let got = getxattr(&path, name).map_err(why(name))?;
            ensure!(got == value, "{name} read back as {} bytes", got.len());
        }
        expect_err(
            "setxattr on a read-only mount",
            setxattr(&path, "user.new", b"x", 0),
            Errno::EROFS,
        )?;
        Ok(())
    })
}

const TESTS: &[Test] = user::tests![
    the_host_files_read_back,
    the_mount_shows_in_proc_mounts_and_statfs,
    files_of_every_size_class,
    a_sparse_file_reaches_the_triple_indirect_block,
    names_links_fifos_and_devices,
    what_crosses_a_mount_is_refused,
    an_unlinked_open_file_lives_until_closed,
    several_writers_at_once,
    a_read_only_mount_refuses_changes,
    a_tmpfs_mounts_and_unmounts,
    the_flusher_writes_what_nobody_synced,
    a_shared_mapping_of_a_disk_file_is_the_file,
    a_program_on_the_disk_is_busy_while_it_runs,
    extended_attributes_in_the_inode_and_its_block,
];

fn run() -> i32 {
    let (passed, failed) = user::harness::run("fstest", TESTS);
    println!("fstest: {passed} passed, {failed} failed");
    i32::from(failed > 0)
}
