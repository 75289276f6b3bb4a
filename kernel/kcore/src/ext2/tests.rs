//! ext2 against Linux's own tools: images Debian's `mke2fs -d` made are
//! read here and must match the tree they were made from; images written
//! here must pass `e2fsck -fn` and read back, through `debugfs`, as what
//! was written. e2fsprogs must be installed (`cargo xtask test` installs
//! it on a Debian machine; by hand: `apt-get install e2fsprogs`).

use super::fs::{Fs, NewInode};
use super::layout::Time;
use super::{BlockDevice, Error, Result};
use crate::bcache::Cache;
use crate::xattr::Attrs;
use abi::Errno;
use abi::types::XATTR_REPLACE;
use std::collections::BTreeMap;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A disk image file as the device.
struct ImageFile(std::fs::File);

impl BlockDevice for ImageFile {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()> {
        self.0
            .read_exact_at(buf, block * buf.len() as u64)
            .map_err(|_| Error::Sys(Errno::EIO))
    }

    fn write(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        self.0
            .write_all_at(buf, block * buf.len() as u64)
            .map_err(|_| Error::Sys(Errno::EIO))
    }

    /// Nothing to wait for: a crash here is the test's own (`CrashDisk`).
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn size(&self) -> Option<u64> {
        self.0.metadata().ok().map(|m| m.len())
    }
}

#[test]
fn a_file_system_larger_than_its_device_is_refused() {
    let scratch = Scratch::new("short");
    let image = scratch.0.join("disk.img");
    mkfs("ext2", 1024, &image, "8M", None, &[]);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&image)
        .unwrap();
    file.set_len(4 << 20).unwrap();
    assert_eq!(
        Fs::mount(ImageFile(file), false).err(),
        Some(Error::Sys(Errno::EINVAL))
    );
}

/// An e2fsprogs program, wherever Debian put it.
fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        let path = Path::new(dir).join(name);
        if path.exists() {
            return path;
        }
    }
    panic!("{name} not found: these tests need e2fsprogs (apt-get install e2fsprogs)");
}

fn run(program: &str, args: &[&str]) -> std::process::Output {
    Command::new(tool(program))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

fn run_ok(program: &str, args: &[&str]) {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes a `kind` (ext2, ext3) file system of `size` (mke2fs's units, as
/// "16M") with `block_size` blocks in `image`, holding the tree `from` if
/// given; `extra` are more mke2fs options.
fn mkfs(
    kind: &str,
    block_size: usize,
    image: &Path,
    size: &str,
    from: Option<&Path>,
    extra: &[&str],
) {
    let bs = block_size.to_string();
    let mut args = vec!["-q", "-F", "-t", kind, "-b", &bs];
    args.extend_from_slice(extra);
    let from = from.map(|p| p.to_str().unwrap().to_string());
    if let Some(from) = &from {
        args.extend_from_slice(&["-d", from]);
    }
    args.extend_from_slice(&[image.to_str().unwrap(), size]);
    run_ok("mke2fs", &args);
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("kcore-ext2-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes that differ from block to block, so a block read from the wrong
/// place shows.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn mount(image: &Path) -> Fs<ImageFile> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(image)
        .unwrap();
    Fs::mount(ImageFile(file), false).unwrap_or_else(|e| panic!("mount {}: {e:?}", image.display()))
}

/// What one name holds, as both sides can describe it.
#[derive(Debug, PartialEq, Eq)]
enum Thing {
    File {
        mode: u32,
        uid: u32,
        gid: u32,
        nlink: u32,
        mtime: i64,
        data: Vec<u8>,
    },
    Dir {
        mode: u32,
        uid: u32,
        gid: u32,
        nlink: u32,
    },
    Link(Vec<u8>),
    Other {
        mode: u32,
        rdev: u64,
    },
}

/// Everything under `ino`, by path, as this file system reads it.
fn walk_image(fs: &mut Fs<ImageFile>, ino: u32, prefix: &str, out: &mut BTreeMap<String, Thing>) {
    let dir = fs.inode(ino).unwrap();
    let mut names = Vec::new();
    fs.read_dir(&dir, 0, |name, child, _, _| {
        if name != b"." && name != b".." {
            names.push((String::from_utf8_lossy(name).into_owned(), child));
        }
        true
    })
    .unwrap();
    for (name, child) in names {
        let path = format!("{prefix}/{name}");
        let inode = fs.inode(child).unwrap();
        let mode = u32::from(inode.mode) & 0o7777;
        let thing = if inode.is_dir() {
            walk_image(fs, child, &path, out);
            Thing::Dir {
                mode,
                uid: inode.uid,
                gid: inode.gid,
                nlink: u32::from(inode.links_count),
            }
        } else if inode.is_symlink() {
            Thing::Link(fs.read_link(&inode).unwrap())
        } else if inode.is_regular() {
            let mut data = vec![0; inode.size as usize];
            assert_eq!(fs.read(&inode, 0, &mut data).unwrap(), data.len());
            Thing::File {
                mode,
                uid: inode.uid,
                gid: inode.gid,
                nlink: u32::from(inode.links_count),
                mtime: inode.mtime.secs,
                data,
            }
        } else {
            Thing::Other {
                mode: u32::from(inode.mode),
                rdev: inode.rdev(),
            }
        };
        out.insert(path, thing);
    }
}

/// The same description of a host directory tree. Sparse files larger
/// than `big` are compared by their non-zero bytes' positions instead of
/// whole, to keep memory small.
fn walk_host(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Thing>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let path = format!("{prefix}/{name}");
        let meta = entry.path().symlink_metadata().unwrap();
        let mode = meta.mode() & 0o7777;
        let thing = if meta.is_dir() {
            walk_host(&entry.path(), &path, out);
            Thing::Dir {
                mode,
                uid: meta.uid(),
                gid: meta.gid(),
                nlink: meta.nlink() as u32,
            }
        } else if meta.file_type().is_symlink() {
            Thing::Link(
                std::fs::read_link(entry.path())
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else if meta.is_file() {
            Thing::File {
                mode,
                uid: meta.uid(),
                gid: meta.gid(),
                nlink: meta.nlink() as u32,
                mtime: meta.mtime(),
                data: std::fs::read(entry.path()).unwrap(),
            }
        } else {
            Thing::Other {
                mode: meta.mode(),
                rdev: meta.rdev(),
            }
        };
        out.insert(path, thing);
    }
}

/// `got` names the same paths as `want`, each holding the same thing.
fn assert_same_tree(got: &BTreeMap<String, Thing>, want: &BTreeMap<String, Thing>, context: &str) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{context}"
    );
    for (path, thing) in want {
        assert!(got.get(path) == Some(thing), "{context}: {path} differs");
    }
}

/// A tree with a file of every size class (direct, single, double
/// indirect, and sparse ones reaching the triple-indirect block), names of
/// every length, symbolic links fast and slow, hard links, a FIFO, a big
/// directory and odd modes.
fn make_tree(root: &Path, block_size: usize) {
    let per = block_size / 4;
    let sizes = [
        0,
        1,
        block_size - 1,
        block_size,
        12 * block_size,
        12 * block_size + 1,
        (12 + per) * block_size,
        (12 + per) * block_size + 7,
    ];
    for (i, size) in sizes.iter().enumerate() {
        std::fs::write(root.join(format!("size-{size}")), pattern(*size, i as u64)).unwrap();
    }
    // Holes between data, and with 1 KiB blocks a piece past the
    // double-indirect block's reach (64 MiB on); with 4 KiB blocks that
    // is 4 GiB on, more than these tests should read back.
    let far = if block_size == 1024 {
        ((12 + per + per * per) * block_size) as u64 + 12_345
    } else {
        ((12 + per + 7 * per + 3) * block_size) as u64
    };
    let sparse = std::fs::File::create(root.join("sparse")).unwrap();
    for (k, at) in [0, 3 * block_size as u64 + 5, 7_000 * block_size as u64, far]
        .iter()
        .enumerate()
    {
        sparse
            .write_all_at(&pattern(block_size + 3, 100 + k as u64), *at)
            .unwrap();
    }
    drop(sparse);
    std::fs::create_dir(root.join("names")).unwrap();
    for len in 1..=255 {
        let name: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        std::fs::write(root.join("names").join(name), len.to_string()).unwrap();
    }
    std::fs::create_dir_all(root.join("deep/a/b/c/d")).unwrap();
    std::fs::write(root.join("deep/a/b/c/d/leaf"), b"leaf\n").unwrap();
    std::os::unix::fs::symlink("size-1", root.join("fast-link")).unwrap();
    std::os::unix::fs::symlink("x".repeat(59), root.join("fast-link-59")).unwrap();
    std::os::unix::fs::symlink("y".repeat(60), root.join("slow-link-60")).unwrap();
    std::os::unix::fs::symlink("z/".repeat(250), root.join("slow-link-500")).unwrap();
    std::fs::hard_link(root.join("size-1"), root.join("hard-1")).unwrap();
    let modes = root.join("modes");
    std::fs::create_dir(&modes).unwrap();
    for mode in [0o4755, 0o2711, 0o1777, 0o600, 0o000] {
        let p = modes.join(format!("m{mode:o}"));
        std::fs::write(&p, b"m").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let fifo = root.join("fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
}

#[test]
fn reads_what_mke2fs_wrote() {
    for (kind, block_size) in [("ext2", 1024), ("ext2", 4096), ("ext3", 1024)] {
        let scratch = Scratch::new(&format!("read-{kind}-{block_size}"));
        let src = scratch.0.join("src");
        std::fs::create_dir(&src).unwrap();
        make_tree(&src, block_size);
        let image = scratch.0.join("disk.img");
        let image_s = image.to_str().unwrap();
        mkfs(kind, block_size, &image, "24M", Some(&src), &[]);
        // A device node, made by debugfs since mknod on the host needs root.
        run_ok("debugfs", &["-w", "-R", "mknod tty9 c 4 9", image_s]);
        run_ok("debugfs", &["-w", "-R", "mknod bigdev b 259 300", image_s]);

        let mut fs = mount(&image);
        let mut seen = BTreeMap::new();
        let root = fs.root();
        walk_image(&mut fs, root, "", &mut seen);
        assert_eq!(
            seen.remove("/tty9"),
            Some(Thing::Other {
                mode: 0o20000,
                rdev: abi::types::makedev(4, 9)
            }),
            "{kind} {block_size}"
        );
        assert_eq!(
            seen.remove("/bigdev"),
            Some(Thing::Other {
                mode: 0o60000,
                rdev: abi::types::makedev(259, 300)
            })
        );
        assert!(seen.remove("/lost+found").is_some());
        let mut want = BTreeMap::new();
        walk_host(&src, "", &mut want);
        assert_same_tree(&seen, &want, &format!("{kind} {block_size}"));
    }
}

/// An image file that counts the reads that reach it, a run being one.
struct CountingReads {
    image: ImageFile,
    reads: std::rc::Rc<std::cell::Cell<usize>>,
}

impl BlockDevice for CountingReads {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()> {
        self.reads.set(self.reads.get() + 1);
        self.image.read(block, buf)
    }
    fn write(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        self.image.write(block, buf)
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn read_run(&mut self, first: u64, block_len: usize, buf: &mut [u8]) -> Result<()> {
        self.reads.set(self.reads.get() + 1);
        self.image
            .0
            .read_exact_at(buf, first * block_len as u64)
            .map_err(|_| Error::Sys(Errno::EIO))
    }
}

#[test]
fn a_file_read_in_order_comes_in_a_few_large_reads() {
    let scratch = Scratch::new("read-ahead");
    let src = scratch.0.join("src");
    std::fs::create_dir(&src).unwrap();
    let data = pattern(3 << 20, 7);
    std::fs::write(src.join("big"), &data).unwrap();
    let image = scratch.0.join("disk.img");
    mkfs("ext2", 4096, &image, "16M", Some(&src), &[]);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&image)
        .unwrap();
    let reads = std::rc::Rc::new(std::cell::Cell::new(0));
    let disk = CountingReads {
        image: ImageFile(file),
        reads: reads.clone(),
    };
    let mut fs = Fs::mount(Cache::new(disk, 16 << 20), false).unwrap();
    let root = fs.root();
    let ino = fs.lookup(root, b"big").unwrap();
    let inode = fs.inode(ino).unwrap();
    let before = reads.get();
    // As cat reads: 128 KiB at a time, in order.
    let mut got = Vec::new();
    let mut buf = vec![0; 128 * 1024];
    loop {
        let n = fs.read(&inode, got.len() as u64, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert!(got == data, "the file reads back as written");
    let reads = reads.get() - before;
    // 768 blocks and their indirect blocks: one read each without runs;
    // runs of up to 256 KiB make it a few dozen.
    assert!(reads <= 40, "{reads} reads of the device for 3 MiB");
}

/// A file system written here, described as the model the test keeps.
struct Written {
    fs: Fs<ImageFile>,
    model: BTreeMap<String, Thing>,
}

const NOW: Time = Time {
    secs: 1_700_000_000,
    nanos: 123_456_789,
};

fn new_file(mode: u32) -> NewInode {
    NewInode {
        mode,
        uid: 1000,
        gid: 100,
        now: NOW,
    }
}

impl Written {
    /// The inode of directory `path` ("" for the root).
    fn dir(&mut self, path: &str) -> u32 {
        let mut ino = self.fs.root();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            ino = self.fs.lookup(ino, part.as_bytes()).unwrap();
        }
        ino
    }

    fn split(path: &str) -> (&str, &str) {
        path.rsplit_once('/').unwrap()
    }

    fn write_file(&mut self, path: &str, chunks: &[(u64, Vec<u8>)]) {
        let (parent, name) = Self::split(path);
        let dir = self.dir(parent);
        let ino = self
            .fs
            .create(dir, name.as_bytes(), new_file(0o100644), 0)
            .unwrap();
        let mut data = Vec::new();
        for (at, bytes) in chunks {
            assert_eq!(self.fs.write(ino, *at, bytes).unwrap(), bytes.len());
            let end = *at as usize + bytes.len();
            if data.len() < end {
                data.resize(end, 0);
            }
            data[*at as usize..end].copy_from_slice(bytes);
        }
        self.model.insert(
            path.into(),
            Thing::File {
                mode: 0o644,
                uid: 1000,
                gid: 100,
                nlink: 1,
                mtime: NOW.secs,
                data,
            },
        );
    }
}

/// Files as debugfs's `rdump` extracts them from an image (the root's
/// entries land in `into` itself).
fn dump_image(image: &Path, into: &Path) -> BTreeMap<String, Thing> {
    std::fs::create_dir_all(into).unwrap();
    run_ok(
        "debugfs",
        &[
            "-R",
            &format!("rdump / {}", into.display()),
            image.to_str().unwrap(),
        ],
    );
    let mut found = BTreeMap::new();
    walk_host(into, "", &mut found);
    found
}

#[test]
fn e2fsck_finds_what_we_wrote_clean_and_debugfs_reads_it_back() {
    for (kind, block_size) in [("ext2", 1024), ("ext2", 4096), ("ext3", 1024)] {
        let scratch = Scratch::new(&format!("write-{kind}-{block_size}"));
        let image = scratch.0.join("disk.img");
        let image_s = image.to_str().unwrap();
        mkfs(kind, block_size, &image, "48M", None, &[]);
        let mut w = Written {
            fs: mount(&image),
            model: BTreeMap::new(),
        };
        let bs = block_size as u64;
        let per = bs / 4;
        let root = w.fs.root();

        // Every size class, written in pieces that straddle blocks.
        for (i, size) in [
            0,
            1,
            bs - 1,
            bs,
            12 * bs + 1,
            (12 + per) * bs + 9,
            300 * bs + 5,
        ]
        .iter()
        .enumerate()
        {
            let data = pattern(*size as usize, i as u64);
            let chunks: Vec<(u64, Vec<u8>)> = data
                .chunks(777)
                .enumerate()
                .map(|(k, c)| (k as u64 * 777, c.to_vec()))
                .collect();
            w.write_file(&format!("/size-{size}"), &chunks);
        }
        // Sparse: holes between data, which with 1 KiB blocks reaches the
        // triple-indirect range (with 4 KiB blocks that starts at 4 GiB:
        // the double-indirect range must do).
        let far = if block_size == 1024 {
            (12 + per + per * per) * bs
        } else {
            (12 + per + 5 * per) * bs
        };
        w.write_file(
            "/sparse",
            &[
                (5, b"head".to_vec()),
                (far + 3 * bs + 1, pattern(2 * block_size, 9)),
            ],
        );
        // Directories deep and wide: more entries than one block holds.
        w.fs.mkdir(root, b"dir", new_file(0o40755)).unwrap();
        let d = w.dir("/dir");
        w.fs.mkdir(d, b"sub", new_file(0o40700)).unwrap();
        for i in 0..200 {
            w.write_file(
                &format!("/dir/sub/entry-with-a-longish-name-{i:04}"),
                &[(0, vec![i as u8; i])],
            );
        }
        let name255 = "n".repeat(255);
        w.write_file(&format!("/dir/{name255}"), &[(0, b"255".to_vec())]);
        assert_eq!(
            w.fs.create(d, "n".repeat(256).as_bytes(), new_file(0o100644), 0),
            Err(Error::Sys(Errno::ENAMETOOLONG))
        );
        assert_eq!(
            w.fs.create(d, b"sub", new_file(0o100644), 0),
            Err(Error::Sys(Errno::EEXIST))
        );
        // Symbolic links, fast and slow; a hard link; special files.
        for (name, target) in [
            ("fast", "size-1".to_string()),
            ("edge59", "e".repeat(59)),
            ("slow", "s/".repeat(300)),
        ] {
            w.fs.symlink(root, name.as_bytes(), target.as_bytes(), new_file(0))
                .unwrap();
            w.model
                .insert(format!("/{name}"), Thing::Link(target.into_bytes()));
        }
        let one = w.fs.lookup(root, b"size-1").unwrap();
        w.fs.link(d, b"hard", one, NOW).unwrap();
        if let Some(Thing::File { nlink, .. }) = w.model.get_mut("/size-1") {
            *nlink = 2;
        }
        let copy = match &w.model["/size-1"] {
            Thing::File { data, .. } => Thing::File {
                mode: 0o644,
                uid: 1000,
                gid: 100,
                nlink: 2,
                mtime: NOW.secs,
                data: data.clone(),
            },
            _ => unreachable!(),
        };
        w.model.insert("/dir/hard".into(), copy);
        w.fs.create(root, b"fifo", new_file(0o10644), 0).unwrap();
        w.fs.create(root, b"tty", new_file(0o20620), abi::types::makedev(4, 1))
            .unwrap();

        // Unlink, rmdir, rename over a file and over an empty directory,
        // truncate down (freeing indirect blocks) and up (a hole).
        let (gone, last) =
            w.fs.unlink(root, format!("size-{}", 12 * bs + 1).as_bytes(), NOW)
                .unwrap();
        assert!(last);
        w.fs.release(gone).unwrap();
        w.model.remove(&format!("/size-{}", 12 * bs + 1));
        assert_eq!(
            w.fs.rmdir(root, b"dir", NOW),
            Err(Error::Sys(Errno::ENOTEMPTY))
        );
        w.fs.mkdir(root, b"empty", new_file(0o40755)).unwrap();
        w.fs.mkdir(d, b"victim", new_file(0o40755)).unwrap();
        let sub = w.dir("/dir/sub");
        let replaced = w.fs.rename(d, b"sub", root, b"empty", NOW).unwrap();
        w.fs.release(replaced.expect("the empty directory had no links left"))
            .unwrap();
        let moved: Vec<String> = w
            .model
            .keys()
            .filter(|k| k.starts_with("/dir/sub/"))
            .cloned()
            .collect();
        for k in moved {
            let thing = w.model.remove(&k).unwrap();
            w.model.insert(k.replacen("/dir/sub/", "/empty/", 1), thing);
        }
        assert_eq!(
            w.fs.lookup(sub, b"..").unwrap(),
            root,
            "the moved directory's .. follows it"
        );
        let victim = w.fs.rmdir(d, b"victim", NOW).unwrap();
        w.fs.release(victim).unwrap();
        let over = w.fs.rename(root, b"size-0", root, b"size-1", NOW).unwrap();
        assert_eq!(over, None, "size-1 still has its hard link");
        let renamed = w.model.remove("/size-0").unwrap();
        w.model.insert("/size-1".into(), renamed);
        if let Some(Thing::File { nlink, .. }) = w.model.get_mut("/dir/hard") {
            *nlink = 1;
        }
        let big = format!("/size-{}", 300 * bs + 5);
        let big_ino = w.fs.lookup(root, &big.as_bytes()[1..]).unwrap();
        w.fs.truncate(big_ino, 13 * bs + 10).unwrap();
        w.fs.truncate(big_ino, 20 * bs).unwrap();
        if let Some(Thing::File { data, .. }) = w.model.get_mut(&big) {
            data.truncate((13 * bs + 10) as usize);
            data.resize((20 * bs) as usize, 0);
        }

        let Written { fs, model } = w;
        fs.unmount().unwrap();
        let out = run("e2fsck", &["-fn", image_s]);
        assert!(
            out.status.success(),
            "{kind} {block_size}: e2fsck -fn found problems:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let dumped = dump_image(&image, &scratch.0.join("dump"));
        // rdump restores neither owners nor (without root) special files'
        // details: compare what it restores, the special files by debugfs.
        let mut found = BTreeMap::new();
        for (path, thing) in dumped {
            let thing = match thing {
                Thing::File {
                    mode, mtime, data, ..
                } => Thing::File {
                    mode,
                    uid: 1000,
                    gid: 100,
                    nlink: 0,
                    mtime,
                    data,
                },
                other => other,
            };
            found.insert(path, thing);
        }
        let mut want = BTreeMap::new();
        for (path, thing) in &model {
            let thing = match thing {
                Thing::File { mode, data, .. } => Thing::File {
                    mode: *mode,
                    uid: 1000,
                    gid: 100,
                    nlink: 0,
                    mtime: NOW.secs,
                    data: data.clone(),
                },
                Thing::Link(t) => Thing::Link(t.clone()),
                _ => continue,
            };
            want.insert(path.clone(), thing);
        }
        found.retain(|p, t| {
            want.contains_key(p) || !matches!(t, Thing::Dir { .. } | Thing::Other { .. })
        });
        found.remove("/lost+found");
        assert_same_tree(
            &found,
            &want,
            &format!("{kind} {block_size}, after debugfs rdump"),
        );
        let stat = run("debugfs", &["-R", "stat /tty", image_s]);
        let text = String::from_utf8_lossy(&stat.stdout);
        assert!(
            text.contains("Type: character special")
                && text.contains("Device major/minor number: 04:01"),
            "{text}"
        );
    }
}

/// On ext3, blocks freed in the open transaction wait for its commit
/// before they are handed out again; a disk filled and emptied must not
/// stay ENOSPC until something else commits.
#[test]
fn space_freed_on_a_full_journaled_disk_can_be_used_again() {
    let scratch = Scratch::new("refill");
    let image = scratch.0.join("disk.img");
    mkfs("ext3", 1024, &image, "4M", None, &["-m", "0"]);
    let mut fs = mount(&image);
    let root = fs.root();
    let chunk = pattern(64 * 1024, 9);
    let filler = fs.create(root, b"filler", new_file(0o100644), 0).unwrap();
    let mut at = 0;
    while fs.write(filler, at, &chunk).is_ok() {
        at += chunk.len() as u64;
    }
    let (ino, last) = fs.unlink(root, b"filler", NOW).unwrap();
    assert!(last);
    fs.release_after(ino).unwrap();
    let again = fs.create(root, b"again", new_file(0o100644), 0).unwrap();
    assert_eq!(fs.write(again, 0, &chunk).unwrap(), chunk.len());
    fs.unmount().unwrap();
}

/// On ext3 a block freed in the open transaction is not handed out
/// before the commit (after a crash it would still be the old file's),
/// while a block that transaction both allocated and freed may go again
/// at once: no committed file ever had it.
#[test]
fn a_freed_block_waits_for_the_commit_unless_the_transaction_made_it() {
    let scratch = Scratch::new("committed-data");
    let image = scratch.0.join("disk.img");
    mkfs("ext3", 1024, &image, "4M", None, &[]);
    let mut fs = mount(&image);
    let root = fs.root();
    let data = pattern(1024, 3);
    let first_block = |fs: &mut Fs<ImageFile>, ino| {
        let inode = fs.inode(ino).unwrap();
        fs.bmap(&inode, 0).unwrap()
    };
    let old = fs.create(root, b"old", new_file(0o100644), 0).unwrap();
    fs.write(old, 0, &data).unwrap();
    let old_block = first_block(&mut fs, old);
    fs.commit().unwrap();
    let (ino, _) = fs.unlink(root, b"old", NOW).unwrap();
    fs.release_after(ino).unwrap();
    // Made and removed within this transaction: its block may go again.
    let brief = fs.create(root, b"brief", new_file(0o100644), 0).unwrap();
    fs.write(brief, 0, &data).unwrap();
    let brief_block = first_block(&mut fs, brief);
    let (ino, _) = fs.unlink(root, b"brief", NOW).unwrap();
    fs.release_after(ino).unwrap();
    let new = fs.create(root, b"new", new_file(0o100644), 0).unwrap();
    fs.write(new, 0, &data).unwrap();
    let new_block = first_block(&mut fs, new);
    assert_ne!(
        new_block, old_block,
        "the old file's block went before the commit"
    );
    assert_eq!(
        new_block, brief_block,
        "a block no commit saw was kept back"
    );
    // After the commit the old file's block is free like any other.
    fs.commit().unwrap();
    let after = fs.create(root, b"after", new_file(0o100644), 0).unwrap();
    fs.write(after, 0, &data).unwrap();
    assert_eq!(first_block(&mut fs, after), old_block);
    fs.unmount().unwrap();
}

#[test]
fn only_a_journal_with_changes_has_a_transaction_to_commit() {
    let scratch = Scratch::new("open-transaction");
    for (kind, journaled) in [("ext3", true), ("ext2", false)] {
        let image = scratch.0.join(format!("{kind}.img"));
        mkfs(kind, 1024, &image, "4M", None, &[]);
        let mut fs = mount(&image);
        fs.commit().unwrap();
        assert!(!fs.transaction_is_open(), "{kind}: open after a commit");
        let root = fs.root();
        fs.create(root, b"new", new_file(0o100644), 0).unwrap();
        assert_eq!(fs.transaction_is_open(), journaled, "{kind} after a create");
        fs.commit().unwrap();
        assert!(!fs.transaction_is_open(), "{kind}: open after a commit");
        fs.unmount().unwrap();
    }
}

#[test]
fn a_full_disk_is_enospc_and_keeps_what_was_there() {
    let scratch = Scratch::new("full");
    let image = scratch.0.join("disk.img");
    let image_s = image.to_str().unwrap();
    mkfs("ext2", 1024, &image, "2M", None, &["-m", "0"]);
    let mut fs = mount(&image);
    let root = fs.root();
    let keep = pattern(50_000, 7);
    let kept = fs.create(root, b"keep", new_file(0o100644), 0).unwrap();
    assert_eq!(fs.write(kept, 0, &keep).unwrap(), keep.len());
    let filler = fs.create(root, b"filler", new_file(0o100644), 0).unwrap();
    let chunk = pattern(64 * 1024, 8);
    let mut at = 0;
    let error = loop {
        match fs.write(filler, at, &chunk) {
            Ok(n) => at += n as u64,
            Err(e) => break e,
        }
    };
    assert_eq!(error, Error::Sys(Errno::ENOSPC));
    assert_eq!(fs.free_counts().0, 0);
    assert!(at > 1_500_000, "the disk took only {at} bytes");
    assert_eq!(
        fs.mkdir(root, b"nodir", new_file(0o40755)),
        Err(Error::Sys(Errno::ENOSPC))
    );
    let inode = fs.inode(kept).unwrap();
    let mut back = vec![0; keep.len()];
    fs.read(&inode, 0, &mut back).unwrap();
    assert!(back == keep);
    fs.unmount().unwrap();
    let out = run("e2fsck", &["-fn", image_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn damaged_images_give_errors_never_panics() {
    damage("ext2", 200);
    damage("ext3", 200);
}

/// Flips bits in `count` copies of an image made from a tree (for ext3,
/// with transactions left in its journal) and uses each: mount, read
/// everything, write. Anything but a panic or a hang is a pass.
fn damage(kind: &str, count: usize) {
    let scratch = Scratch::new(&format!("damaged-{kind}"));
    let src = scratch.0.join("src");
    std::fs::create_dir(&src).unwrap();
    make_tree(&src, 1024);
    let clean = scratch.0.join("clean.img");
    let clean_s = clean.to_str().unwrap();
    mkfs(kind, 1024, &clean, "4M", Some(&src), &[]);
    // Extended attributes on the root's entries, in their inodes and in
    // blocks, for the damage to reach.
    {
        let mut fs = mount(&clean);
        let root = fs.root();
        let mut entries = Vec::new();
        let dir = fs.inode(root).unwrap();
        fs.read_dir(&dir, 0, |name, ino, _, _| {
            entries.push((name.to_vec(), ino));
            true
        })
        .unwrap();
        for (i, (name, ino)) in entries.into_iter().enumerate() {
            if name != b".." {
                let long = pattern(40 * (i % 8), i as u64);
                let attrs = attrs_of(&[("user.short", b"s".to_vec()), ("user.long", long)]);
                fs.set_xattrs(ino, &attrs, NOW).unwrap();
            }
        }
        fs.unmount().unwrap();
    }
    // The metadata lives in the first blocks (superblock, descriptors,
    // bitmaps, inode table) and in the directory and indirect blocks
    // mke2fs put near them; and in the journal's first blocks.
    let mut targets = vec![(1024u64, 600 * 1024u64)];
    if kind == "ext3" {
        let mut fs = mount(&clean);
        let root = fs.root();
        for i in 0..20 {
            let ino = fs
                .create(
                    root,
                    format!("logged-{i}").as_bytes(),
                    new_file(0o100644),
                    0,
                )
                .unwrap();
            fs.write(ino, 0, &pattern(3000, i)).unwrap();
            fs.commit().unwrap();
        }
        // No unmount: the log stays for the next mount to replay.
        drop(fs);
        let out = run("debugfs", &["-R", "bmap <8> 0", clean_s]);
        let first: u64 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("journal's first block");
        targets.push((first * 1024, 80 * 1024));
    }
    let original = std::fs::read(&clean).unwrap();
    let mut rng = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let image = scratch.0.join("damaged.img");
    let mut outcomes = BTreeMap::new();
    for _ in 0..count {
        let mut bytes = original.clone();
        for _ in 0..1 + next() % 8 {
            let (start, span) = targets[(next() % targets.len() as u64) as usize];
            let at = (start + next() % span) as usize;
            bytes[at] ^= 1 << (next() % 8);
        }
        std::fs::write(&image, &bytes).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&image)
            .unwrap();
        let outcome = match Fs::mount(ImageFile(file), false) {
            Err(e) => format!("mount: {:?}", e.errno()),
            Ok(mut fs) => {
                let mut errors = 0;
                let root = fs.root();
                walk_checked(&mut fs, root, 0, &mut errors);
                // Writes over damage must fail cleanly too.
                let _ = fs
                    .create(root, b"new-file", new_file(0o100644), 0)
                    .and_then(|ino| fs.write(ino, 0, &[1; 5000]));
                let _ = fs.unlink(root, b"size-1", NOW);
                let _ = fs.unmount();
                format!("walked, {} errors", if errors > 0 { "some" } else { "no" })
            }
        };
        *outcomes.entry(outcome).or_insert(0) += 1;
    }
    assert!(
        outcomes
            .keys()
            .any(|k| k.contains("some errors") || k.starts_with("mount")),
        "{kind}: {outcomes:?}"
    );
}

/// Reads everything under `ino`, counting errors; gives up below a depth
/// a damaged image's directory loop could otherwise reach.
fn walk_checked(fs: &mut Fs<ImageFile>, ino: u32, depth: usize, errors: &mut usize) {
    if depth > 12 {
        return;
    }
    let Ok(dir) = fs.inode(ino) else {
        *errors += 1;
        return;
    };
    let mut children = Vec::new();
    if fs
        .read_dir(&dir, 0, |name, child, _, _| {
            if name != b"." && name != b".." {
                children.push(child);
            }
            true
        })
        .is_err()
    {
        *errors += 1;
    }
    for child in children {
        // Attributes too: read, and written back over whatever is there.
        match fs.xattrs(child) {
            Err(_) => *errors += 1,
            Ok(mut attrs) => {
                let _ = attrs.set(b"user.added", b"1", 0);
                *errors += usize::from(fs.set_xattrs(child, &attrs, NOW).is_err());
            }
        }
        match fs.inode(child) {
            Err(_) => *errors += 1,
            Ok(inode) if inode.is_dir() => walk_checked(fs, child, depth + 1, errors),
            Ok(inode) if inode.is_symlink() => {
                *errors += usize::from(fs.read_link(&inode).is_err())
            }
            Ok(inode) => {
                let mut buf = vec![0; inode.size.min(1 << 20) as usize];
                *errors += usize::from(fs.read(&inode, 0, &mut buf).is_err());
            }
        }
    }
}

#[test]
fn replays_a_journal_debugfs_wrote_as_e2fsck_does() {
    let scratch = Scratch::new("replay");
    let image = scratch.0.join("disk.img");
    let image_s = image.to_str().unwrap();
    mkfs("ext3", 1024, &image, "16M", None, &[]);
    let blocks = pattern(3 * 1024, 42);
    let data = scratch.0.join("blocks");
    std::fs::write(&data, &blocks).unwrap();
    // Transaction 1 logs three blocks; transaction 2 revokes the middle one.
    let script = format!(
        "jo\njw -b 5000,5001,5002 {}\njc\njo\njw -r 5001\njc\n",
        data.display()
    );
    let out = Command::new(tool("debugfs"))
        .args(["-w", "-f", "-", image_s])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(script.as_bytes())?;
            child.wait()
        })
        .unwrap();
    assert!(out.success());
    let theirs = scratch.0.join("theirs.img");
    std::fs::copy(&image, &theirs).unwrap();

    let fs = mount(&image);
    let report = fs.recovery().expect("the journal needed recovery");
    assert_eq!(
        (report.transactions, report.blocks, report.revoked),
        (2, 2, 1)
    );
    let dev = fs.unmount().unwrap();
    let mut block = vec![0; 1024];
    for (n, want) in [
        (5000, &blocks[..1024]),
        (5001, &[0u8; 1024][..]),
        (5002, &blocks[2048..]),
    ] {
        let mut d = ImageFile(dev.0.try_clone().unwrap());
        d.read(n, &mut block).unwrap();
        assert!(block == want, "block {n} after replay");
    }
    let out = run("e2fsck", &["-fn", image_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // e2fsck replays the same log to the same blocks.
    let out = run("e2fsck", &["-fy", theirs.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (ours, theirs) = (
        std::fs::read(&image).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    let differ: Vec<usize> = (0..ours.len() / 1024)
        .filter(|&b| ours[b * 1024..(b + 1) * 1024] != theirs[b * 1024..(b + 1) * 1024])
        .collect();
    // Only the superblock (mount count, times, e2fsck's check stamp) and
    // the journal's superblock (its next sequence number) may differ.
    assert!(
        differ.len() <= 2 && differ.contains(&1) || differ.len() <= 1,
        "blocks differ: {differ:?}"
    );
}

/// A disk with a volatile write cache, as a real one has: writes since
/// the last flush may reach the platter in any order, or not at all, when
/// the power goes. It records every write and flush, so a test can cut
/// the power after any of them afterwards.
struct CrashDisk {
    image: Vec<u8>,
    events: std::rc::Rc<std::cell::RefCell<Vec<Event>>>,
}

#[derive(Clone)]
enum Event {
    Write(u64, Vec<u8>),
    Flush,
}

impl BlockDevice for CrashDisk {
    fn read(&mut self, block: u64, buf: &mut [u8]) -> Result<()> {
        let at = (block * buf.len() as u64) as usize;
        buf.copy_from_slice(&self.image[at..at + buf.len()]);
        Ok(())
    }

    fn write(&mut self, block: u64, buf: &[u8]) -> Result<()> {
        let at = block * buf.len() as u64;
        self.image[at as usize..at as usize + buf.len()].copy_from_slice(buf);
        self.events
            .borrow_mut()
            .push(Event::Write(at, buf.to_vec()));
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.events.borrow_mut().push(Event::Flush);
        Ok(())
    }
}

/// The disk as the power cut after `cut` events left it: every write
/// before the last flush, and of the writes after it, those `keep` picks.
fn after_power_cut(
    start: &[u8],
    events: &[Event],
    cut: usize,
    mut keep: impl FnMut() -> bool,
) -> Vec<u8> {
    let mut disk = start.to_vec();
    let last_flush = events[..cut]
        .iter()
        .rposition(|e| matches!(e, Event::Flush))
        .map_or(0, |i| i + 1);
    for (i, event) in events[..cut].iter().enumerate() {
        if let Event::Write(at, data) = event
            && (i < last_flush || keep())
        {
            disk[*at as usize..*at as usize + data.len()].copy_from_slice(data);
        }
    }
    disk
}

/// Everything under the root, by path: a file's bytes or a directory.
fn contents<D: BlockDevice>(fs: &mut Fs<D>) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk<D: BlockDevice>(
        fs: &mut Fs<D>,
        ino: u32,
        prefix: &str,
        out: &mut BTreeMap<String, Option<Vec<u8>>>,
    ) {
        let dir = fs.inode(ino).unwrap();
        let mut names = Vec::new();
        fs.read_dir(&dir, 0, |name, child, _, _| {
            if name != b"." && name != b".." && name != b"lost+found" {
                names.push((String::from_utf8(name.to_vec()).unwrap(), child));
            }
            true
        })
        .unwrap();
        for (name, child) in names {
            let path = format!("{prefix}/{name}");
            let inode = fs.inode(child).unwrap();
            if inode.is_dir() {
                out.insert(path.clone(), None);
                walk(fs, child, &path, out);
            } else {
                let mut data = vec![0; inode.size as usize];
                fs.read(&inode, 0, &mut data).unwrap();
                out.insert(path, Some(data));
            }
        }
    }
    let mut out = BTreeMap::new();
    let root = fs.root();
    walk(fs, root, "", &mut out);
    out
}

/// What differs between two listings, in a line.
fn differences(
    want: &BTreeMap<String, Option<Vec<u8>>>,
    got: &BTreeMap<String, Option<Vec<u8>>>,
) -> String {
    let mut out = Vec::new();
    for (path, thing) in want {
        match got.get(path) {
            None => out.push(format!("{path} missing")),
            Some(g) if g != thing => out.push(format!(
                "{path} differs ({} bytes, want {})",
                g.as_ref().map_or(0, |d| d.len()),
                thing.as_ref().map_or(0, |d| d.len())
            )),
            _ => {}
        }
    }
    out.extend(
        got.keys()
            .filter(|p| !want.contains_key(*p))
            .map(|p| format!("{p} extra")),
    );
    out.join(", ")
}

/// fsync after an overwrite that changed no metadata (the file system
/// leaves the times to its caller) has nothing to log, and must still
/// make the bytes durable: the commit of an empty transaction flushes.
#[test]
fn a_commit_with_nothing_to_log_still_makes_written_data_durable() {
    let scratch = Scratch::new("empty-commit");
    let image = scratch.0.join("disk.img");
    mkfs("ext3", 1024, &image, "4M", None, &[]);
    let start = std::fs::read(&image).unwrap();
    let events = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let disk = CrashDisk {
        image: start.clone(),
        events: events.clone(),
    };
    let mut fs = Fs::mount(Cache::new(disk, 1 << 20), false).unwrap();
    let root = fs.root();
    let ino = fs.create(root, b"f", new_file(0o100644), 0).unwrap();
    fs.write(ino, 0, &pattern(4096, 1)).unwrap();
    fs.commit().unwrap();
    let again = pattern(4096, 2);
    fs.write(ino, 0, &again).unwrap();
    assert!(!fs.transaction_is_open(), "the overwrite logged something");
    fs.commit().unwrap();
    let events = events.borrow().clone();
    let disk = after_power_cut(&start, &events, events.len(), || false);
    let crashed = scratch.0.join("cut.img");
    std::fs::write(&crashed, &disk).unwrap();
    // Read-write: the mount replays the journal.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&crashed)
        .unwrap();
    let mut after = Fs::mount(ImageFile(file), true).unwrap();
    let found = contents(&mut after);
    assert_eq!(found["/f"].as_deref(), Some(&again[..]));
}

#[test]
fn a_power_cut_at_any_write_loses_nothing_a_commit_promised() {
    power_cuts(0x5eed, 1024, 16, 0);
    power_cuts(0xbeef, 4096, 16, 0);
}

/// The same through the kernel's write-back buffer cache (kcore::bcache):
/// one so small that dirty blocks are evicted, written early, all the
/// time, and one that holds everything until the journal flushes.
#[test]
fn a_power_cut_through_the_buffer_cache_loses_nothing_a_commit_promised() {
    power_cuts(0xcafe, 1024, 16, 8 * 1024);
    power_cuts(0xf00d, 4096, 16, 16 * 1024 * 1024);
}

/// Runs a seeded workload on a fresh ext3 image of `block_size` blocks,
/// through a buffer cache of `cache` bytes (0: none, every write goes to
/// the disk at once), then cuts the power at `cuts` random moments of it.
fn power_cuts(seed: u64, block_size: usize, cuts: usize, cache: usize) {
    let scratch = Scratch::new(&format!("crash-{seed}"));
    let image = scratch.0.join("disk.img");
    mkfs("ext3", block_size, &image, "16M", None, &[]);
    let start = std::fs::read(&image).unwrap();
    let events = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let disk = CrashDisk {
        image: start.clone(),
        events: events.clone(),
    };
    let mut fs = Fs::mount(Cache::new(disk, cache), false).unwrap();

    // A workload of creates, appends, renames over, unlinks, mkdirs,
    // rmdirs and truncates, with a commit (fsync) every few steps. After
    // each commit the model is what a crash must keep.
    let mut rng = seed;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut model: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let mut promised = vec![(events.borrow().len(), model.clone())];
    let root = fs.root();
    for step in 0..160 {
        let files: Vec<String> = model
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        let dirs: Vec<String> = model
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        let dir_of = |fs: &mut Fs<Cache<CrashDisk>>, path: &str| -> u32 {
            let mut ino = root;
            for part in path.split('/').filter(|p| !p.is_empty()) {
                ino = fs.lookup(ino, part.as_bytes()).unwrap();
            }
            ino
        };
        let parent = if dirs.is_empty() || next(3) == 0 {
            String::new()
        } else {
            dirs[next(dirs.len() as u64) as usize].clone()
        };
        match next(8) {
            0 | 1 => {
                let path = format!("{parent}/f{step}");
                let p = dir_of(&mut fs, &parent);
                let ino = fs
                    .create(p, format!("f{step}").as_bytes(), new_file(0o100644), 0)
                    .unwrap();
                let data = pattern(next(30_000) as usize, step);
                fs.write(ino, 0, &data).unwrap();
                model.insert(path, Some(data));
            }
            2 if !files.is_empty() => {
                let path = &files[next(files.len() as u64) as usize];
                let (dir, name) = path.rsplit_once('/').unwrap();
                let p = dir_of(&mut fs, dir);
                let ino = fs.lookup(p, name.as_bytes()).unwrap();
                let extra = pattern(next(5000) as usize, step + 1000);
                let Some(Some(data)) = model.get_mut(path) else {
                    unreachable!()
                };
                fs.write(ino, data.len() as u64, &extra).unwrap();
                data.extend_from_slice(&extra);
            }
            3 if files.len() >= 2 => {
                let from = files[next(files.len() as u64) as usize].clone();
                let to = files[next(files.len() as u64) as usize].clone();
                let (fd, fname) = from.rsplit_once('/').unwrap();
                let (td, tname) = to.rsplit_once('/').unwrap();
                let (fp, tp) = (dir_of(&mut fs, fd), dir_of(&mut fs, td));
                if let Some(gone) = fs
                    .rename(fp, fname.as_bytes(), tp, tname.as_bytes(), NOW)
                    .unwrap()
                {
                    fs.release_after(gone).unwrap();
                }
                let data = model.remove(&from).unwrap();
                model.insert(to, data);
            }
            4 if !files.is_empty() => {
                let path = files[next(files.len() as u64) as usize].clone();
                let (dir, name) = path.rsplit_once('/').unwrap();
                let p = dir_of(&mut fs, dir);
                let (ino, last) = fs.unlink(p, name.as_bytes(), NOW).unwrap();
                assert!(last);
                fs.release_after(ino).unwrap();
                model.remove(&path);
            }
            5 => {
                let p = dir_of(&mut fs, &parent);
                fs.mkdir(p, format!("d{step}").as_bytes(), new_file(0o40755))
                    .unwrap();
                model.insert(format!("{parent}/d{step}"), None);
            }
            6 if !files.is_empty() => {
                let path = &files[next(files.len() as u64) as usize];
                let (dir, name) = path.rsplit_once('/').unwrap();
                let p = dir_of(&mut fs, dir);
                let ino = fs.lookup(p, name.as_bytes()).unwrap();
                let Some(Some(data)) = model.get_mut(path) else {
                    unreachable!()
                };
                let size = next(data.len() as u64 + 1) as usize;
                fs.truncate(ino, size as u64).unwrap();
                data.truncate(size);
                // A later append rewrites the last block in place: on
                // any file system without data journaling that is a
                // torn overwrite of what the last commit holds (the old,
                // longer file). Commit the truncate first so the check
                // stays exact.
                fs.commit().unwrap();
                promised.push((events.borrow().len(), model.clone()));
            }
            7 => {
                let empty: Vec<&String> = dirs
                    .iter()
                    .filter(|d| !model.keys().any(|k| k.starts_with(&format!("{d}/"))))
                    .collect();
                if let Some(d) = empty.first() {
                    let (dir, name) = d.rsplit_once('/').unwrap();
                    let p = dir_of(&mut fs, dir);
                    let ino = fs.rmdir(p, name.as_bytes(), NOW).unwrap();
                    fs.release_after(ino).unwrap();
                    model.remove(&d.to_string());
                }
            }
            _ => {}
        }
        if next(4) == 0 {
            fs.commit().unwrap();
            promised.push((events.borrow().len(), model.clone()));
        }
    }
    assert_eq!(
        contents(&mut fs),
        model,
        "the workload reads back before any crash"
    );
    let events = events.borrow().clone();
    let commits = promised.len();
    assert!(commits > 20, "only {commits} commits");

    let mut cut_rng = seed ^ 0xc0ffee;
    let mut coin = move || {
        cut_rng ^= cut_rng << 13;
        cut_rng ^= cut_rng >> 7;
        cut_rng ^= cut_rng << 17;
        cut_rng
    };
    for round in 0..cuts {
        let cut = (coin() % events.len() as u64) as usize + 1;
        let disk = after_power_cut(&start, &events, cut, || coin() % 2 == 0);
        // The state after the last commit that finished before the cut,
        // or the one after (its commit block may have reached the disk).
        let done = promised.iter().rposition(|(at, _)| *at <= cut).unwrap();
        let allowed: Vec<&BTreeMap<String, Option<Vec<u8>>>> = promised
            [done..(done + 2).min(commits)]
            .iter()
            .map(|(_, m)| m)
            .collect();

        // Linux's e2fsck replays the journal and finds nothing else.
        let crashed = scratch.0.join(format!("cut-{round}.img"));
        std::fs::write(&crashed, &disk).unwrap();
        let out = run("e2fsck", &["-fy", crashed.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "cut after event {cut} of {}: e2fsck found more than a journal to replay:\n{}",
            events.len(),
            String::from_utf8_lossy(&out.stdout)
        );
        let file = std::fs::File::open(&crashed).unwrap();
        let mut theirs = Fs::mount(ImageFile(file), true).unwrap();
        let found = contents(&mut theirs);
        assert!(
            allowed.contains(&&found),
            "cut after event {cut}: after e2fsck the files are not what commit {done} promised: {}",
            differences(allowed[0], &found)
        );

        // This file system's own recovery gives the same, and leaves a
        // file system e2fsck finds clean.
        std::fs::write(&crashed, &disk).unwrap();
        let mut ours = mount(&crashed);
        assert!(
            allowed.contains(&&contents(&mut ours)),
            "cut after event {cut}: after our recovery the files are not what commit {done} promised"
        );
        ours.unmount().unwrap();
        let out = run("e2fsck", &["-fn", crashed.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "cut after event {cut}: after our recovery:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        std::fs::remove_file(&crashed).unwrap();
    }
}

// ---- extended attributes ----

/// `e2fsck -fn` on `image` finds nothing to fix.
fn assert_e2fsck_clean(image: &Path, context: &str) {
    let out = run("e2fsck", &["-fn", image.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{context}: e2fsck -fn found problems:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn sorted(attrs: &Attrs) -> Pairs {
    let mut pairs: Pairs = attrs
        .iter()
        .map(|(n, v)| (n.to_vec(), v.to_vec()))
        .collect();
    pairs.sort();
    pairs
}

/// The attributes debugfs reads on `path` in `image`, sorted: names from
/// `ea_list`, each value by `ea_get -f` (ea_list shows long ones by size).
fn debugfs_xattrs(image: &Path, path: &str, scratch: &Path) -> Pairs {
    let image = image.to_str().unwrap();
    let out = run("debugfs", &["-R", &format!("ea_list {path}"), image]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let value_file = scratch.join("value");
    let mut pairs = Vec::new();
    for line in text.lines().filter_map(|l| l.strip_prefix("  ")) {
        let name = line.split(" (").next().unwrap();
        let _ = std::fs::remove_file(&value_file);
        let get = format!("ea_get -f {} {path} {name}", value_file.display());
        run_ok("debugfs", &["-R", &get, image]);
        pairs.push((
            name.as_bytes().to_vec(),
            std::fs::read(&value_file).unwrap(),
        ));
    }
    pairs.sort();
    pairs
}

fn attrs_of(pairs: &[(&str, Vec<u8>)]) -> Attrs {
    let mut attrs = Attrs::default();
    for (name, value) in pairs {
        attrs.set(name.as_bytes(), value, 0).unwrap();
    }
    attrs
}

#[test]
fn extended_attributes_written_here_are_what_e2fsck_and_debugfs_read() {
    for (kind, block_size, inode_size) in [("ext3", 1024, "256"), ("ext2", 4096, "128")] {
        let context = format!("{kind} {block_size} {inode_size}");
        let scratch = Scratch::new(&format!("xattr-{kind}-{block_size}"));
        let image = scratch.0.join("disk.img");
        mkfs(kind, block_size, &image, "16M", None, &["-I", inode_size]);
        let mut fs = mount(&image);
        let root = fs.root();
        let small = fs.create(root, b"small", new_file(0o100644), 0).unwrap();
        let many = fs.create(root, b"many", new_file(0o100644), 0).unwrap();
        let dir = fs.mkdir(root, b"dir", new_file(0o40755)).unwrap();
        let emptied = fs.create(root, b"emptied", new_file(0o100644), 0).unwrap();
        let (free_before, _) = fs.free_counts();

        // Short ones: in the inode where it has room.
        let small_attrs = attrs_of(&[
            ("user.mime_type", b"text/plain".to_vec()),
            ("trusted.t", Vec::new()),
        ]);
        fs.set_xattrs(small, &small_attrs, NOW).unwrap();
        // More than an inode holds: the rest in a block.
        let many_attrs = attrs_of(
            &(0..12)
                .map(|i| (&*format!("user.n{i}").leak(), pattern(5 * i, i as u64)))
                .collect::<Vec<_>>(),
        );
        fs.set_xattrs(many, &many_attrs, NOW).unwrap();
        fs.set_xattrs(dir, &attrs_of(&[("security.label", b"x".to_vec())]), NOW)
            .unwrap();
        // A block given up again when its attributes go.
        let big = attrs_of(&[("user.big", vec![7; block_size / 2])]);
        fs.set_xattrs(emptied, &big, NOW).unwrap();
        assert_eq!(fs.inode(emptied).unwrap().blocks, (block_size / 512) as u32);
        fs.set_xattrs(emptied, &Attrs::default(), NOW).unwrap();
        let inode = fs.inode(emptied).unwrap();
        assert_eq!((inode.file_acl, inode.blocks), (0, 0), "{context}");
        // A value no block can hold: ENOSPC, and nothing changed.
        let mut too_big = many_attrs.clone();
        too_big.set(b"user.huge", &vec![1; block_size], 0).unwrap();
        assert_eq!(
            fs.set_xattrs(many, &too_big, NOW),
            Err(Error::Sys(Errno::ENOSPC))
        );
        assert_eq!(sorted(&fs.xattrs(many).unwrap()), sorted(&many_attrs));
        let (free_after, _) = fs.free_counts();
        // With 128-byte inodes every file needs a block; with 256 only
        // the one with many.
        let held = if inode_size == "128" { 3 } else { 1 };
        assert_eq!(
            free_before - free_after,
            held,
            "{context}: blocks the attributes took"
        );
        fs.unmount().unwrap();

        assert_e2fsck_clean(&image, &context);
        for (path, attrs) in [
            ("small", &small_attrs),
            ("many", &many_attrs),
            ("dir", &attrs_of(&[("security.label", b"x".to_vec())])),
            ("emptied", &Attrs::default()),
        ] {
            assert_eq!(
                debugfs_xattrs(&image, path, &scratch.0),
                sorted(attrs),
                "{context}: {path} as debugfs reads it"
            );
        }
        let mut fs = mount(&image);
        assert_eq!(sorted(&fs.xattrs(small).unwrap()), sorted(&small_attrs));
        assert_eq!(sorted(&fs.xattrs(many).unwrap()), sorted(&many_attrs));
    }
}

#[test]
fn extended_attributes_debugfs_wrote_are_read_and_changed_here() {
    let scratch = Scratch::new("xattr-debugfs");
    let image = scratch.0.join("disk.img");
    mkfs("ext3", 1024, &image, "8M", None, &[]);
    let image_s = image.to_str().unwrap();
    std::fs::write(scratch.0.join("content"), b"hi\n").unwrap();
    let value = scratch.0.join("long");
    std::fs::write(&value, vec![b'v'; 300]).unwrap();
    for request in [
        format!("write {} f", scratch.0.join("content").display()),
        "ea_set f user.a hello".into(),
        "ea_set f trusted.b world".into(),
        format!("ea_set -f {} f user.long", value.display()),
    ] {
        run_ok("debugfs", &["-w", "-R", &request, image_s]);
    }
    let mut fs = mount(&image);
    let f = fs.lookup(fs.root(), b"f").unwrap();
    let mut attrs = fs.xattrs(f).unwrap();
    assert_eq!(
        sorted(&attrs),
        sorted(&attrs_of(&[
            ("trusted.b", b"world".to_vec()),
            ("user.a", b"hello".to_vec()),
            ("user.long", vec![b'v'; 300]),
        ]))
    );
    attrs.remove(b"user.a").unwrap();
    attrs
        .set(b"user.long", b"short now", XATTR_REPLACE)
        .unwrap();
    fs.set_xattrs(f, &attrs, NOW).unwrap();
    fs.unmount().unwrap();
    assert_e2fsck_clean(&image, "changed after debugfs");
    assert_eq!(debugfs_xattrs(&image, "f", &scratch.0), sorted(&attrs));
}

#[test]
fn a_shared_attribute_block_is_copied_before_it_changes() {
    let scratch = Scratch::new("xattr-shared");
    let image = scratch.0.join("disk.img");
    mkfs("ext2", 1024, &image, "8M", None, &["-I", "128"]);
    let mut fs = mount(&image);
    let root = fs.root();
    let a = fs.create(root, b"a", new_file(0o100644), 0).unwrap();
    let b = fs.create(root, b"b", new_file(0o100644), 0).unwrap();
    let same = attrs_of(&[("user.same", b"value".to_vec())]);
    fs.set_xattrs(a, &same, NOW).unwrap();
    // Make b share a's block, as Linux's block cache of attributes does.
    let block = fs.inode(a).unwrap().file_acl;
    let mut inode = fs.inode(b).unwrap();
    inode.file_acl = block;
    inode.blocks += 2;
    fs.write_inode(b, &inode).unwrap();
    fs.unmount().unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&image)
        .unwrap();
    file.write_all_at(&2u32.to_le_bytes(), u64::from(block) * 1024 + 4)
        .unwrap();
    drop(file);
    assert_e2fsck_clean(&image, "shared by hand");

    let mut fs = mount(&image);
    let changed = attrs_of(&[("user.same", b"other".to_vec())]);
    fs.set_xattrs(b, &changed, NOW).unwrap();
    assert_ne!(
        fs.inode(b).unwrap().file_acl,
        block,
        "b has a block of its own"
    );
    assert_eq!(
        sorted(&fs.xattrs(a).unwrap()),
        sorted(&same),
        "a keeps its own"
    );
    // And a, the last to hold the old block, frees it with its inode.
    let (free, _) = fs.free_counts();
    fs.unlink(root, b"a", NOW).unwrap();
    fs.release(a).unwrap();
    assert_eq!(fs.free_counts().0, free + 1);
    fs.unmount().unwrap();
    assert_e2fsck_clean(&image, "after the copy");
    assert_eq!(debugfs_xattrs(&image, "b", &scratch.0), sorted(&changed));
}
