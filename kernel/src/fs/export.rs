//! Bringing files home: the files named by the boot option
//! `export=PATH[,PATH...]` are written to the second serial port (COM2),
//! which xtask connects to a file on the host and unpacks into
//! `target/guest-out/`. This is how gmon.out leaves the guest. init asks
//! for it (`export(2)`) when its program has ended and before it unmounts
//! the root disk, since a file on the disk or in /tmp goes with the
//! unmount; power-off sends them if init never asked. Either way once.
//!
//! The stream is a header line per file, `EXPORT <path> <length>`, followed
//! by exactly that many bytes; `MISSING <path>` for a file that is not there;
//! and `END` last. A path that names a directory sends each regular file
//! directly in it, in name order (`cargo xtask prof` exports the directory
//! its program's processes write their `gmon.out.PID` files in).

use alloc::string::String;
use alloc::vec::Vec;
use spin::Once;

use super::ramfs::{self, Content, NodeRef};
use core::sync::atomic::{AtomicBool, Ordering};

static PATHS: Once<&'static str> = Once::new();
/// Set once the files are sent: the stream ends with one `END`.
static SENT: AtomicBool = AtomicBool::new(false);

/// Records the boot option's list of paths.
pub fn init(paths: &'static str) {
    PATHS.call_once(|| paths);
}

pub fn export_all() {
    let Some(paths) = PATHS.get().filter(|p| !p.is_empty()) else {
        return;
    };
    if SENT.swap(true, Ordering::Relaxed) {
        return;
    }
    let mut port = crate::arch::uart::com2();
    let mut send = |bytes: &[u8]| bytes.iter().for_each(|&b| port.send_raw(b));
    let named = paths.split(',').map(str::trim).filter(|p| !p.is_empty());
    for path in named.flat_map(files_of) {
        let path = path.as_str();
        let data = ramfs::lookup(path).ok().and_then(|node| contents(&node));
        match data {
            Some(bytes) => {
                send(alloc::format!("EXPORT {path} {}\n", bytes.len()).as_bytes());
                send(&bytes);
                crate::info!("export: {path} ({} bytes)", bytes.len());
            }
            None => {
                send(alloc::format!("MISSING {path}\n").as_bytes());
                crate::warn!("export: {path} does not exist");
            }
        }
    }
    send(b"END\n");
}

/// A regular file's bytes, in memory or on a disk; None for anything else.
fn contents(node: &NodeRef) -> Option<Vec<u8>> {
    let size = {
        let n = node.lock();
        match &n.content {
            Content::File(data) => return Some(data.to_vec()),
            Content::DiskFile => n.disk.as_ref()?.size,
            _ => return None,
        }
    };
    let mut bytes = alloc::vec![0; usize::try_from(size).ok()?];
    let mut at = 0;
    while at < bytes.len() {
        match super::ext2::read(node, at as u64, &mut bytes[at..]) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(_) => return None,
        }
    }
    bytes.truncate(at);
    Some(bytes)
}

/// The files a path stands for: the files directly in it if it is a
/// directory, else itself (present or not).
fn files_of(path: &str) -> Vec<String> {
    let dir = ramfs::lookup(path).ok().filter(|node| node.lock().is_dir());
    let Some(dir) = dir else {
        return alloc::vec![path.into()];
    };
    ramfs::list(&dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| u32::from(e.kind) << 12 == abi::types::S_IFREG)
        .map(|e| alloc::format!("{}/{}", path.trim_end_matches('/'), e.name))
        .collect()
}
