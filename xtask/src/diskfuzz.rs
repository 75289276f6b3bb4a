//! The disk fuzz suites: damaged ext3 images mounted and used by the
//! kernel, which must answer with errors, never a panic or a hang.
//!
//! The host makes a small ext3 image from a tree of every kind of file,
//! leaves transactions in its journal (written with `kcore::ext2` and not
//! unmounted, so each mount replays them), and lists its metadata's byte
//! ranges in `/etc/diskfuzz-targets`: the first blocks (superblock,
//! descriptors, bitmaps, inode table), every directory and indirect
//! block, and the journal's first blocks. `/bin/diskfuzz` then damages
//! and uses one image per round (user/src/bin/diskfuzz.rs says what is
//! allowed). The suite passes when every boot ends with `diskfuzz: ok`,
//! and corruption was found and reported somewhere: EUCLEAN in the
//! guest's tally and the kernel's `ext2: vda:` lines on the console.
//!
//! `ext3-fuzz` (50 images) is in the default run; `fuzz-disk` (1000) is
//! slow and runs only when named.

use std::path::Path;
use std::time::Duration;

use kcore::ext2::Error;
use kcore::ext2::fs::{Fs, NewInode};
use kcore::ext2::layout::{GroupDesc, Time};

use crate::crashdisk::ImageFile;

use crate::build::{self, Boot};
use crate::checks::Tally;
use crate::options::Options;
use crate::qemu::{self, Ending};
use crate::suites::Suite;

/// Images one boot damages: a boot is bounded by the timeout.
const PER_BOOT: usize = 250;

/// Runs the fuzz suite `suite` over `images` damaged images.
pub fn run(opts: &Options, suite: &Suite, images: usize, tally: &mut Tally) -> Result<(), String> {
    let dir = build::root().join(format!("target/{}-work", suite.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let clean = dir.join("clean.img");
    let targets = make_image(&dir, &clean)?;
    let targets_file = dir.join("targets");
    std::fs::write(&targets_file, targets).map_err(|e| format!("{e}"))?;
    let mut boot_opts = suite.boot_options(opts);
    boot_opts.add.push((
        targets_file.display().to_string(),
        "/etc/diskfuzz-targets".into(),
    ));
    println!(
        "== {} ({images} damaged ext3 images, {PER_BOOT} per boot)",
        suite.name
    );
    let disk = dir.join("disk.img");
    let (mut reported, mut logged) = (false, false);
    let mut done = 0;
    let mut boot = 0;
    while done < images {
        let n = PER_BOOT.min(images - done);
        std::fs::copy(&clean, &disk).map_err(|e| format!("copy: {e}"))?;
        boot_opts.disks = vec![disk.clone()];
        let seed = 0x5eed_0000 + boot as u64;
        // The program's arguments are in the boot image: one per boot.
        boot_opts.program = vec!["/bin/diskfuzz".into(), n.to_string(), seed.to_string()];
        let image = build::image(&boot_opts, &Boot::test(&boot_opts, suite.name, suite.conf))?;
        let outcome = qemu::boot(
            &boot_opts,
            &image,
            Duration::from_secs(120 + 4 * n as u64),
            false,
            &[],
        )?;
        let last = outcome
            .lines
            .iter()
            .rev()
            .find(|l| l.starts_with("diskfuzz: "))
            .cloned()
            .unwrap_or_default();
        for line in outcome.lines.iter().filter(|l| l.starts_with("diskfuzz: ")) {
            if !line.contains("FAIL") {
                println!("   {line}");
            }
        }
        let ok = outcome.ending == Ending::Exited(0) && last == "diskfuzz: ok";
        if !ok {
            crate::checks::show_console(&outcome);
        }
        reported |= outcome
            .lines
            .iter()
            .any(|l| l.starts_with("diskfuzz: errors") && l.contains("EUCLEAN"));
        logged |= outcome.lines.iter().any(|l| l.contains("ext2: vda: "));
        tally.record(
            &format!(
                "{}/images_{done}_to_{}_seed_{seed:#x}",
                suite.name,
                done + n
            ),
            ok,
            &format!("{}; last line: {last}", outcome.ending.describe()),
        );
        done += n;
        boot += 1;
    }
    tally.record(
        &format!("{}/corruption_is_found_and_logged", suite.name),
        reported && logged,
        &format!("EUCLEAN seen: {reported}, the kernel's ext2 lines seen: {logged}"),
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The clean image, made at `image` from a tree of every kind of file,
/// with transactions left in its journal; answers its metadata's byte
/// ranges, one `START SPAN` per line.
fn make_image(dir: &Path, image: &Path) -> Result<String, String> {
    let tree = dir.join("tree");
    let write = |path: &Path, len: usize| {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    std::fs::create_dir_all(tree.join("deep/a/b/c")).map_err(|e| format!("{e}"))?;
    std::fs::create_dir_all(tree.join("names")).map_err(|e| format!("{e}"))?;
    write(&tree.join("hello"), 20)?;
    for size in [0, 1, 1023, 13 * 1024, 300_000] {
        write(&tree.join(format!("size-{size}")), size)?;
    }
    for len in (1..=255).step_by(9) {
        let name: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        write(&tree.join("names").join(name), len)?;
    }
    write(&tree.join("deep/a/b/c/leaf"), 5)?;
    let slow = "../".repeat(30) + "hello";
    std::os::unix::fs::symlink("hello", tree.join("fast-link")).map_err(|e| format!("{e}"))?;
    std::os::unix::fs::symlink(slow, tree.join("slow-link")).map_err(|e| format!("{e}"))?;
    std::fs::hard_link(tree.join("hello"), tree.join("hard-link")).map_err(|e| format!("{e}"))?;
    crate::setup::make_ext3(image, "4M", 1024, Some(&tree), &[])?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(image)
        .map_err(|e| format!("{e}"))?;
    let mut fs = Fs::mount(ImageFile(file), false).map_err(|e| format!("mount: {e:?}"))?;
    let e = |e: Error| format!("{e:?}");
    let root = fs.root();
    let bs = fs.block_size() as u64;
    let sb = fs.superblock().clone();
    let bytes = std::fs::read(image).map_err(|e| format!("{e}"))?;
    // The superblock, the descriptors, each group's bitmaps and the used
    // part of its inode table: the records every operation reads.
    let mut targets = vec![(1024, 1024)];
    let gdt = u64::from(sb.first_data_block + 1) * bs;
    let groups = sb.blocks_count.div_ceil(sb.blocks_per_group) as u64;
    targets.push((gdt, groups * GroupDesc::SIZE as u64));
    let used_inodes = u64::from(sb.inodes_count - sb.free_inodes_count) + 16;
    for g in 0..groups {
        let at = (gdt + g * GroupDesc::SIZE as u64) as usize;
        let gd = GroupDesc::decode(&bytes[at..at + GroupDesc::SIZE]);
        targets.push((u64::from(gd.block_bitmap) * bs, bs));
        targets.push((u64::from(gd.inode_bitmap) * bs, bs));
        let in_group = used_inodes
            .saturating_sub(g * u64::from(sb.inodes_per_group))
            .min(u64::from(sb.inodes_per_group));
        if in_group > 0 {
            targets.push((
                u64::from(gd.inode_table) * bs,
                in_group * u64::from(sb.inode_size),
            ));
        }
    }
    let journal = fs.inode(8).map_err(e)?;
    let first = fs.bmap(&journal, 0).map_err(e)?;
    targets.push((u64::from(first) * bs, 40 * bs));
    // Every directory's blocks and every indirect block.
    let mut pending = vec![root];
    while let Some(ino) = pending.pop() {
        let inode = fs.inode(ino).map_err(e)?;
        for &b in &inode.block[12..] {
            if b != 0 && !inode.is_symlink() {
                targets.push((u64::from(b) * bs, bs));
            }
        }
        if inode.is_dir() {
            for n in 0..inode.size / bs {
                let b = fs.bmap(&inode, n).map_err(e)?;
                targets.push((u64::from(b) * bs, bs));
            }
            let mut children = Vec::new();
            fs.read_dir(&inode, 0, |name, child, _, _| {
                if name != b"." && name != b".." {
                    children.push(child);
                }
                true
            })
            .map_err(e)?;
            pending.extend(children);
        }
    }
    let new = NewInode {
        mode: 0o100644,
        uid: 0,
        gid: 0,
        now: Time {
            secs: 1_700_000_000,
            nanos: 0,
        },
    };
    // Extended attributes on the sized files, in their inodes and in
    // blocks: the blocks are targets too (the inodes already are).
    for size in [1, 1023, 13 * 1024] {
        let ino = fs
            .lookup(root, format!("size-{size}").as_bytes())
            .map_err(e)?;
        let mut attrs = kcore::xattr::Attrs::default();
        for (name, len) in [("user.short", 3), ("user.long", 200)] {
            let value: Vec<u8> = (0..len).map(|i| (i + size) as u8).collect();
            attrs
                .set(name.as_bytes(), &value, 0)
                .map_err(|e| format!("{e:?}"))?;
        }
        fs.set_xattrs(ino, &attrs, new.now).map_err(e)?;
        let block = fs.inode(ino).map_err(e)?.file_acl;
        if block != 0 {
            targets.push((u64::from(block) * bs, bs));
        }
    }
    // Transactions to replay: files made and written, each committed,
    // and the image never unmounted.
    for i in 0..8 {
        let ino = fs
            .create(root, format!("logged-{i}").as_bytes(), new, 0)
            .map_err(e)?;
        fs.write(ino, 0, &vec![i as u8; 3000]).map_err(e)?;
        fs.commit().map_err(e)?;
    }
    drop(fs); // no unmount: the journal keeps its transactions
    Ok(targets
        .iter()
        .map(|(start, span)| format!("{start} {span}\n"))
        .collect())
}
