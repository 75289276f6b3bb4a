//! PCI configuration space, read: what a device is, where its registers
//! are, what it can do, and the line `/proc/bus/pci/devices` gives for it.
//!
//! Every PCI function has 256 bytes of configuration space, found by bus,
//! device (slot) and function number. The first 64 bytes are a standard
//! header: vendor and device ids, the class, six base address registers
//! (BARs) naming the memory or I/O ranges its registers live in, the
//! legacy interrupt line, and a pointer to a linked list of capabilities
//! (MSI-X, power management, and vendor-specific ones such as virtio's,
//! which say in which BAR each virtio structure sits).
//!
//! The kernel reads the bytes (through the 0xCF8/0xCFC ports) and sizes
//! each BAR by writing all ones to it and reading back which bits stuck;
//! what those bytes and read-backs mean is decided here.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::bytes::{le16, le32};

/// Header offsets.
pub const VENDOR_ID: usize = 0x00;
pub const DEVICE_ID: usize = 0x02;
pub const COMMAND: usize = 0x04;
pub const STATUS: usize = 0x06;
pub const REVISION: usize = 0x08;
pub const HEADER_TYPE: usize = 0x0e;
pub const BAR0: usize = 0x10;
pub const SUBSYSTEM_ID: usize = 0x2e;
pub const CAPABILITIES: usize = 0x34;
pub const INTERRUPT_LINE: usize = 0x3c;
pub const INTERRUPT_PIN: usize = 0x3d;

/// Command register bits: respond to I/O and memory accesses, act as a bus
/// master (needed for DMA), and keep the legacy interrupt line quiet.
pub const COMMAND_IO: u16 = 1 << 0;
pub const COMMAND_MEMORY: u16 = 1 << 1;
pub const COMMAND_BUS_MASTER: u16 = 1 << 2;
pub const COMMAND_INTX_DISABLE: u16 = 1 << 10;
/// Status register: the capability list is there.
const STATUS_CAPABILITIES: u16 = 1 << 4;

/// Capability ids.
pub const CAP_MSIX: u8 = 0x11;
pub const CAP_VENDOR: u8 = 0x09;

/// A vendor id that reads as all ones means no function answers there.
pub const NO_DEVICE: u16 = 0xffff;

/// Where a function is: bus, device (0-31), function (0-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Address {
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl Address {
    /// Linux's `devfn`: device and function in one byte.
    pub fn devfn(self) -> u8 {
        (self.device << 3) | self.function
    }

    /// The value the 0xCF8 port takes to select dword `offset` of this
    /// function's configuration space (configuration mechanism #1).
    pub fn config_address(self, offset: u8) -> u32 {
        0x8000_0000
            | u32::from(self.bus) << 16
            | u32::from(self.device) << 11
            | u32::from(self.function) << 8
            | u32::from(offset & 0xfc)
    }
}

impl core::fmt::Display for Address {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        write!(f, "{:02x}:{:02x}.{}", self.bus, self.device, self.function)
    }
}

/// What a base address register names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bar {
    None,
    Io {
        port: u32,
        size: u32,
    },
    Memory {
        address: u64,
        size: u64,
        prefetchable: bool,
        wide: bool,
    },
}

impl Bar {
    /// Decodes BAR `raw` (and, for a 64-bit one, the next register,
    /// `high`), with the read-backs after writing all ones to each
    /// (`mask`, `mask_high`), which give its size: the bits that stayed
    /// zero are the offset within the range.
    pub fn decode(raw: u32, high: u32, mask: u32, mask_high: u32) -> Bar {
        if raw & 1 == 1 {
            let size_mask = mask & !0x3;
            if size_mask == 0 {
                return Bar::None;
            }
            // I/O BARs decode 16 bits of port on x86.
            let size = (!size_mask & 0xffff).wrapping_add(1);
            return Bar::Io {
                port: raw & !0x3,
                size,
            };
        }
        let wide = (raw >> 1) & 0x3 == 0x2;
        let prefetchable = raw & 0x8 != 0;
        let (address, size_mask) = if wide {
            (
                u64::from(raw & !0xf) | u64::from(high) << 32,
                u64::from(mask & !0xf) | u64::from(mask_high) << 32,
            )
        } else {
            (
                u64::from(raw & !0xf),
                u64::from(mask & !0xf) | 0xffff_ffff_0000_0000,
            )
        };
        if size_mask & 0xffff_ffff_ffff_fff0 == 0 || size_mask == 0xffff_ffff_0000_0000 {
            return Bar::None;
        }
        Bar::Memory {
            address,
            size: (!size_mask).wrapping_add(1),
            prefetchable,
            wide,
        }
    }

    /// The BAR's flag bits as Linux prints them in `/proc/bus/pci/devices`
    /// after the start address (`PCI_REGION_FLAG_MASK`: the low four bits
    /// of the register).
    fn flag_bits(self) -> u64 {
        match self {
            Bar::None => 0,
            Bar::Io { .. } => 1,
            Bar::Memory {
                prefetchable, wide, ..
            } => (if wide { 0x4 } else { 0 }) | (if prefetchable { 0x8 } else { 0 }),
        }
    }

    fn start(self) -> u64 {
        match self {
            Bar::None => 0,
            Bar::Io { port, .. } => u64::from(port),
            Bar::Memory { address, .. } => address,
        }
    }

    pub fn size(self) -> u64 {
        match self {
            Bar::None => 0,
            Bar::Io { size, .. } => u64::from(size),
            Bar::Memory { size, .. } => size,
        }
    }
}

/// One function found on the bus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub address: Address,
    pub vendor: u16,
    pub device: u16,
    /// Class, subclass, programming interface (the 24-bit class code).
    pub class: u32,
    pub revision: u8,
    pub subsystem: u16,
    pub bars: [Bar; 6],
    /// The legacy interrupt line the firmware routed (0xff: none).
    pub irq: u8,
    /// The capabilities: (offset in configuration space, id).
    pub capabilities: Vec<(u8, u8)>,
    /// The driver bound to it, for `/proc/bus/pci/devices`.
    pub driver: Option<&'static str>,
}

impl Function {
    /// Decodes a function from its 256 configuration bytes and the BARs as
    /// sized (`bars`, decoded with [`Bar::decode`]).
    pub fn decode(address: Address, config: &[u8; 256], bars: [Bar; 6]) -> Function {
        Function {
            address,
            vendor: le16(config, VENDOR_ID),
            device: le16(config, DEVICE_ID),
            class: le32(config, REVISION) >> 8,
            revision: config[REVISION],
            subsystem: le16(config, SUBSYSTEM_ID),
            bars,
            irq: config[INTERRUPT_LINE],
            capabilities: capabilities(config),
            driver: None,
        }
    }

    /// Whether the header is a plain device's (type 0), which has six
    /// BARs; bridges (type 1) have two.
    pub fn header_type(config: &[u8; 256]) -> u8 {
        config[HEADER_TYPE] & 0x7f
    }

    /// Whether function 0 says the device has functions 1-7 too.
    pub fn is_multifunction(config: &[u8; 256]) -> bool {
        config[HEADER_TYPE] & 0x80 != 0
    }

    /// The first capability with id `id`, as its configuration offset.
    pub fn capability(&self, id: u8) -> Option<u8> {
        self.capabilities
            .iter()
            .find(|&&(_, c)| c == id)
            .map(|&(at, _)| at)
    }

    /// This function's line in `/proc/bus/pci/devices`, as Linux's
    /// `show_device` writes it: bus and devfn, vendor and device, the IRQ,
    /// the seven resources' starts (with their flag bits) and sizes (the
    /// six BARs and the ROM, which we do not size), and the driver.
    pub fn proc_line(&self) -> String {
        let mut line = String::new();
        let irq = if self.irq == 0xff { 0 } else { self.irq };
        let _ = write!(
            line,
            "{:02x}{:02x}\t{:04x}{:04x}\t{:x}",
            self.address.bus,
            self.address.devfn(),
            self.vendor,
            self.device,
            irq
        );
        for bar in self.bars.iter().chain(core::iter::once(&Bar::None)) {
            let _ = write!(line, "\t{:16x}", bar.start() | bar.flag_bits());
        }
        for bar in self.bars.iter().chain(core::iter::once(&Bar::None)) {
            let _ = write!(line, "\t{:16x}", bar.size());
        }
        line.push('\t');
        if let Some(driver) = self.driver {
            line.push_str(driver);
        }
        line.push('\n');
        line
    }
}

/// The capability list: (offset, id) of each entry, in list order. The
/// list is followed at most 48 times (the most 4-byte entries the 192
/// bytes after the header hold), so a looping list ends.
pub fn capabilities(config: &[u8; 256]) -> Vec<(u8, u8)> {
    let mut found = Vec::new();
    if le16(config, STATUS) & STATUS_CAPABILITIES == 0 {
        return found;
    }
    let mut at = config[CAPABILITIES] & 0xfc;
    while at >= 0x40 && found.len() < 48 {
        found.push((at, config[usize::from(at)]));
        at = config[usize::from(at) + 1] & 0xfc;
    }
    found
}

/// A name for the class code, as `lspci` prints the common ones.
pub fn class_name(class: u32) -> &'static str {
    match class >> 8 {
        0x0100 => "SCSI storage controller",
        0x0101 => "IDE interface",
        0x0106 => "SATA controller",
        0x0180 => "Mass storage controller",
        0x0200 => "Ethernet controller",
        0x0300 => "VGA compatible controller",
        0x0600 => "Host bridge",
        0x0601 => "ISA bridge",
        0x0680 => "Bridge",
        0x0780 => "Communication controller",
        0x0c03 => "USB controller",
        0x0c05 => "SMBus",
        0x00ff | 0x0000 => "Unclassified device",
        _ => "Device",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_decode_io_memory_and_64_bit_with_their_sizes() {
        // An I/O BAR at 0xc040 of 64 ports.
        assert_eq!(
            Bar::decode(0xc041, 0, 0xffff_ffc1, 0),
            Bar::Io {
                port: 0xc040,
                size: 64
            }
        );
        // A 32-bit BAR at 0xfebd1000 of 4 KiB.
        assert_eq!(
            Bar::decode(0xfebd_1000, 0, 0xffff_f000, 0),
            Bar::Memory {
                address: 0xfebd_1000,
                size: 4096,
                prefetchable: false,
                wide: false
            }
        );
        // A 64-bit prefetchable BAR of 16 KiB (virtio's modern BAR 4).
        assert_eq!(
            Bar::decode(0xfe00_000c, 0, 0xffff_c00c, 0xffff_ffff),
            Bar::Memory {
                address: 0xfe00_0000,
                size: 16384,
                prefetchable: true,
                wide: true
            }
        );
        assert_eq!(
            Bar::decode(0x0000_000c, 0x80, 0xffff_c00c, 0xffff_ffff),
            Bar::Memory {
                address: 0x80_0000_0000,
                size: 16384,
                prefetchable: true,
                wide: true
            }
        );
        // An unimplemented BAR reads back zero.
        assert_eq!(Bar::decode(0, 0, 0, 0), Bar::None);
    }

    fn config_with_caps() -> [u8; 256] {
        let mut c = [0u8; 256];
        c[0..2].copy_from_slice(&0x1af4u16.to_le_bytes());
        c[2..4].copy_from_slice(&0x1042u16.to_le_bytes());
        c[STATUS] = STATUS_CAPABILITIES as u8;
        c[0x08] = 0x01; // revision
        c[0x0b] = 0x01; // class: mass storage
        c[0x0a] = 0x00; // SCSI
        c[CAPABILITIES] = 0x98;
        // 0x98: MSI-X -> 0x84: vendor -> 0x70: vendor -> end
        c[0x98] = CAP_MSIX;
        c[0x99] = 0x84;
        c[0x84] = CAP_VENDOR;
        c[0x85] = 0x70;
        c[0x70] = CAP_VENDOR;
        c[0x71] = 0x00;
        c[INTERRUPT_LINE] = 11;
        c
    }

    #[test]
    fn the_capability_list_is_followed_and_a_loop_ends() {
        let mut c = config_with_caps();
        assert_eq!(
            capabilities(&c),
            vec![(0x98, CAP_MSIX), (0x84, CAP_VENDOR), (0x70, CAP_VENDOR)]
        );
        c[0x71] = 0x98; // back to the start
        assert_eq!(capabilities(&c).len(), 48);
        c[STATUS] = 0;
        assert!(capabilities(&c).is_empty());
    }

    #[test]
    fn the_proc_line_has_linux_s_columns() {
        let c = config_with_caps();
        let mut bars = [Bar::None; 6];
        bars[1] = Bar::Memory {
            address: 0xfebd_1000,
            size: 4096,
            prefetchable: false,
            wide: false,
        };
        bars[4] = Bar::Memory {
            address: 0xfe00_0000,
            size: 16384,
            prefetchable: true,
            wide: true,
        };
        let mut f = Function::decode(
            Address {
                bus: 0,
                device: 4,
                function: 0,
            },
            &c,
            bars,
        );
        f.driver = Some("virtio-pci");
        assert_eq!(f.class, 0x010000);
        assert_eq!(f.capability(CAP_VENDOR), Some(0x84));
        let line = f.proc_line();
        let cols: Vec<&str> = line.trim_end_matches('\n').split('\t').collect();
        assert_eq!(cols.len(), 3 + 7 + 7 + 1);
        assert_eq!(&cols[..3], &["0020", "1af41042", "b"]);
        assert_eq!(cols[4], "        febd1000");
        assert_eq!(cols[7], "        fe00000c");
        assert_eq!(cols[3 + 7 + 4], "            4000");
        assert_eq!(cols[17], "virtio-pci");
    }

    #[test]
    fn config_addresses_select_the_dword() {
        let a = Address {
            bus: 0,
            device: 4,
            function: 0,
        };
        assert_eq!(a.config_address(0x10), 0x8000_2010);
        assert_eq!(a.config_address(0x13), 0x8000_2010);
        assert_eq!(a.to_string(), "00:04.0");
    }
}
