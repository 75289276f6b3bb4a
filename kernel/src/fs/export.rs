//! Bringing files home: at power-off, the files named by the boot option
//! `export=PATH[,PATH...]` are written to the second serial port (COM2),
//! which xtask connects to a file on the host and unpacks into
//! `target/guest-out/`. This is how gmon.out leaves the guest.
//!
//! The stream is a header line per file, `EXPORT <path> <length>`, followed
//! by exactly that many bytes; `MISSING <path>` for a file that is not there;
//! and `END` last.

use spin::Once;

use super::ramfs::{self, Content};

static PATHS: Once<&'static str> = Once::new();

/// Records the boot option's list of paths.
pub fn init(paths: &'static str) {
    PATHS.call_once(|| paths);
}

pub fn export_all() {
    let Some(paths) = PATHS.get().filter(|p| !p.is_empty()) else {
        return;
    };
    let mut port = crate::arch::uart::com2();
    let mut send = |bytes: &[u8]| bytes.iter().for_each(|&b| port.send_raw(b));
    for path in paths.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let data = ramfs::lookup(path)
            .ok()
            .and_then(|node| match &node.lock().content {
                Content::File(data) => Some(data.to_vec()),
                _ => None,
            });
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
