//! The PCI bus: the functions found at boot, with their BARs sized, for
//! drivers to claim and `/proc/bus/pci/devices` to list.
//!
//! `init` walks every bus, device and function number through the
//! configuration ports (`arch::pci`), once, on the boot CPU before the
//! others start, and keeps what it found in `FOUND`, which never changes
//! after: readers need no lock. What the configuration bytes mean is
//! `kcore::pci`'s, tested on the host.

use alloc::string::String;
use alloc::vec::Vec;
use kcore::pci::{Address, BAR0, Bar, COMMAND, COMMAND_IO, COMMAND_MEMORY, Function, NO_DEVICE};
use spin::Once;

use crate::arch::pci::{read32, write32};
use crate::info;

static FOUND: Once<Vec<Function>> = Once::new();

/// The 256 configuration bytes of `at` (on the boot CPU, at boot).
pub fn config(at: Address) -> [u8; 256] {
    let mut bytes = [0u8; 256];
    for (i, chunk) in bytes.chunks_mut(4).enumerate() {
        chunk.copy_from_slice(&read32(at, (i * 4) as u8).to_le_bytes());
    }
    bytes
}

/// Sizes the six BARs of a plain device: each is written with all ones
/// and read back (the bits that stay zero are the size), then restored,
/// with the device's decoding off meanwhile so that no half-written BAR
/// answers a CPU access.
fn size_bars(at: Address) -> [Bar; 6] {
    let command = read32(at, COMMAND as u8);
    write32(
        at,
        COMMAND as u8,
        command & !u32::from(COMMAND_IO | COMMAND_MEMORY),
    );
    let mut raw = [0u32; 6];
    let mut mask = [0u32; 6];
    for i in 0..6 {
        let offset = (BAR0 + 4 * i) as u8;
        raw[i] = read32(at, offset);
        write32(at, offset, u32::MAX);
        mask[i] = read32(at, offset);
        write32(at, offset, raw[i]);
    }
    write32(at, COMMAND as u8, command);
    let mut bars = [Bar::None; 6];
    let mut i = 0;
    while i < 6 {
        let wide = raw[i] & 1 == 0 && (raw[i] >> 1) & 3 == 2 && i < 5;
        let (high, mask_high) = if wide {
            (raw[i + 1], mask[i + 1])
        } else {
            (0, 0)
        };
        bars[i] = Bar::decode(raw[i], high, mask[i], mask_high);
        i += if wide { 2 } else { 1 };
    }
    bars
}

/// Finds every function on every bus, logs a line for each and keeps
/// them. Call once, on the boot CPU, before the other CPUs start.
pub fn init() {
    FOUND.call_once(|| {
        let mut found = Vec::new();
        for bus in 0..=255u8 {
            for device in 0..32u8 {
                let first = Address {
                    bus,
                    device,
                    function: 0,
                };
                if read32(first, 0) as u16 == NO_DEVICE {
                    continue;
                }
                let functions = if Function::is_multifunction(&config(first)) {
                    8
                } else {
                    1
                };
                for function in 0..functions {
                    let at = Address {
                        bus,
                        device,
                        function,
                    };
                    let bytes = config(at);
                    if u16::from_le_bytes([bytes[0], bytes[1]]) == NO_DEVICE {
                        continue;
                    }
                    let bars = if Function::header_type(&bytes) == 0 {
                        size_bars(at)
                    } else {
                        [Bar::None; 6]
                    };
                    found.push(Function::decode(at, &bytes, bars));
                }
            }
        }
        for f in &found {
            info!(
                "pci: {} {:04x}:{:04x} {}",
                f.address,
                f.vendor,
                f.device,
                kcore::pci::class_name(f.class)
            );
        }
        found
    });
}

/// The functions `init` found.
pub fn functions() -> &'static [Function] {
    FOUND.get().map_or(&[], |f| f.as_slice())
}

/// `/proc/bus/pci/devices`: one line per function, as Linux writes it.
pub fn proc_devices() -> String {
    functions().iter().map(|f| f.proc_line()).collect()
}
