//! virtio 1.x over PCI, the parts that are arithmetic and bookkeeping:
//! where a device's structures are, the layout of a split virtqueue, which
//! descriptors are free, and the block device's request format.
//!
//! A virtio device is a PCI function (vendor 0x1af4) whose vendor-specific
//! capabilities say in which BAR, at which offset, it keeps its common
//! configuration (features, status, queue set-up), its notification
//! registers (the doorbell the driver rings), its interrupt status and its
//! device-specific configuration (a disk's capacity).
//!
//! The driver and the device talk through virtqueues in ordinary memory.
//! A split virtqueue of `n` entries is three arrays:
//!
//! ```text
//!   descriptor table   n x 16 bytes   addr, len, flags (NEXT, WRITE), next
//!   available ring     4 + 2n bytes   flags, idx, ring[n]: heads the driver offers
//!   used ring          4 + 8n bytes   flags, idx, ring[n]: (head, bytes written) the device returns
//! ```
//!
//! A request is a chain of descriptors (for a disk: a header the device
//! reads, the data, a status byte it writes). The driver puts the chain's
//! head in the available ring, bumps `idx` and rings the doorbell; the
//! device processes it, puts the head in the used ring, bumps its `idx` and
//! interrupts. [`Queue`] keeps the driver's side of this (free
//! descriptors, the next available slot, the last used entry seen); the
//! kernel does the volatile reads and writes of the shared memory.

use alloc::vec::Vec;

/// PCI vendor id of every virtio device.
pub const VENDOR: u16 = 0x1af4;
/// A modern (virtio 1.x only) block device's PCI device id: 0x1040 plus
/// the virtio device type (2, block). A transitional one is 0x1001.
pub const DEVICE_BLOCK_MODERN: u16 = 0x1042;
pub const DEVICE_BLOCK_TRANSITIONAL: u16 = 0x1001;

/// The most block devices the kernel drives, `/dev/vda` to `/dev/vdd`;
/// xtask refuses more `--disk`s than this.
pub const MAX_DISKS: usize = 4;

/// The name in /dev of block device `index` (0 is `vda`), as Linux names
/// its virtio disks; None past `MAX_DISKS`.
pub fn disk_name(index: usize) -> Option<&'static str> {
    ["vda", "vdb", "vdc", "vdd"].get(index).copied()
}

/// The `cfg_type` of a virtio vendor capability.
pub const CAP_COMMON: u8 = 1;
pub const CAP_NOTIFY: u8 = 2;
pub const CAP_ISR: u8 = 3;
pub const CAP_DEVICE: u8 = 4;

/// Device status bits, set in this order during start-up.
pub mod status {
    pub const ACKNOWLEDGE: u8 = 1;
    pub const DRIVER: u8 = 2;
    pub const DRIVER_OK: u8 = 4;
    pub const FEATURES_OK: u8 = 8;
    pub const FAILED: u8 = 128;
}

/// Feature bits.
pub mod feature {
    /// The device speaks virtio 1.x (no legacy layout): required here.
    pub const VERSION_1: u64 = 1 << 32;
    /// Block: the device has a write cache that FLUSH empties.
    pub const BLK_FLUSH: u64 = 1 << 9;
    /// Block: read-only device.
    pub const BLK_RO: u64 = 1 << 5;
    /// Block: the device says how many data buffers one request may have
    /// (`seg_max`, at `BLK_CONFIG_SEG_MAX` of its configuration). Without
    /// it a request has one, as Linux assumes.
    pub const BLK_SEG_MAX: u64 = 1 << 2;
}

/// Where a block device's `seg_max` is in its device configuration.
pub const BLK_CONFIG_SEG_MAX: usize = 12;

/// Offsets in the common configuration structure (virtio 1.x, 4.1.4.3).
pub mod common {
    pub const DEVICE_FEATURE_SELECT: usize = 0x00;
    pub const DEVICE_FEATURE: usize = 0x04;
    pub const DRIVER_FEATURE_SELECT: usize = 0x08;
    pub const DRIVER_FEATURE: usize = 0x0c;
    pub const MSIX_CONFIG: usize = 0x10;
    pub const NUM_QUEUES: usize = 0x12;
    pub const DEVICE_STATUS: usize = 0x14;
    pub const QUEUE_SELECT: usize = 0x16;
    pub const QUEUE_SIZE: usize = 0x18;
    pub const QUEUE_MSIX_VECTOR: usize = 0x1a;
    pub const QUEUE_ENABLE: usize = 0x1c;
    pub const QUEUE_NOTIFY_OFF: usize = 0x1e;
    pub const QUEUE_DESC: usize = 0x20;
    pub const QUEUE_DRIVER: usize = 0x28;
    pub const QUEUE_DEVICE: usize = 0x30;
}

/// Where one virtio structure is: a BAR, an offset in it and a length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub bar: u8,
    pub offset: u32,
    pub length: u32,
}

/// The structures a virtio PCI function's capabilities point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub common: Region,
    pub notify: Region,
    /// Queue `q`'s doorbell is at `notify.offset + queue_notify_off(q) *
    /// notify_multiplier`.
    pub notify_multiplier: u32,
    pub isr: Region,
    pub device: Option<Region>,
}

/// Finds the virtio structures from a function's configuration bytes and
/// its capability list (`kcore::pci::capabilities`). The first capability
/// of each type wins, as the specification asks. None if the common,
/// notify or ISR structure is missing, or one names a BAR past 5.
pub fn layout(config: &[u8; 256], capabilities: &[(u8, u8)]) -> Option<Layout> {
    let le32 = |at: usize| crate::bytes::le32(config, at);
    let mut found: [Option<Region>; 5] = [None; 5];
    let mut multiplier = 0;
    for &(at, id) in capabilities {
        let at = usize::from(at);
        if id != crate::pci::CAP_VENDOR || at + 16 > 256 {
            continue;
        }
        let kind = config[at + 3];
        let region = Region {
            bar: config[at + 4],
            offset: le32(at + 8),
            length: le32(at + 12),
        };
        if region.bar > 5 || !(1..=4).contains(&kind) || found[usize::from(kind)].is_some() {
            continue;
        }
        if kind == CAP_NOTIFY {
            if at + 20 > 256 {
                continue;
            }
            multiplier = le32(at + 16);
        }
        found[usize::from(kind)] = Some(region);
    }
    Some(Layout {
        common: found[usize::from(CAP_COMMON)]?,
        notify: found[usize::from(CAP_NOTIFY)]?,
        notify_multiplier: multiplier,
        isr: found[usize::from(CAP_ISR)]?,
        device: found[usize::from(CAP_DEVICE)],
    })
}

/// Descriptor flags.
pub const DESC_NEXT: u16 = 1;
pub const DESC_WRITE: u16 = 2;

/// The byte sizes of a split virtqueue's three parts for `n` entries, and
/// their alignments (16, 2 and 4, virtio 1.x 2.7).
pub fn ring_sizes(n: u16) -> (usize, usize, usize) {
    let n = usize::from(n);
    (16 * n, 6 + 2 * n, 6 + 8 * n)
}

/// One buffer of a request: a physical address, a length, and whether the
/// device writes it (rather than reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub addr: u64,
    pub len: u32,
    pub device_writes: bool,
}

/// A descriptor's 16 bytes, as the device reads them.
pub fn descriptor(buffer: Buffer, next: Option<u16>) -> [u8; 16] {
    let mut d = [0u8; 16];
    d[0..8].copy_from_slice(&buffer.addr.to_le_bytes());
    d[8..12].copy_from_slice(&buffer.len.to_le_bytes());
    let flags = if buffer.device_writes { DESC_WRITE } else { 0 }
        | if next.is_some() { DESC_NEXT } else { 0 };
    d[12..14].copy_from_slice(&flags.to_le_bytes());
    d[14..16].copy_from_slice(&next.unwrap_or(0).to_le_bytes());
    d
}

/// The driver's side of one split virtqueue: which descriptors are free,
/// where the next available entry goes, and which used entries it has
/// taken back. It writes nothing itself: it says what to write where.
#[derive(Debug)]
pub struct Queue {
    size: u16,
    /// Free descriptors, a stack.
    free: Vec<u16>,
    /// The chain each head heads, while the device has it.
    chains: Vec<Vec<u16>>,
    /// The available ring's next `idx` (wraps at 2^16, as the ring's does).
    avail_idx: u16,
    /// The used ring's `idx` as far as the driver has taken entries.
    last_used: u16,
}

/// What to write to offer a chain: each descriptor's index and bytes, the
/// available ring's slot and the head to put there, and the new `idx`.
#[derive(Debug, PartialEq, Eq)]
pub struct Offer {
    pub descriptors: Vec<(u16, [u8; 16])>,
    pub head: u16,
    pub avail_slot: u16,
    pub avail_idx: u16,
}

impl Queue {
    /// A queue of `size` entries (a power of two up to 32768, as the
    /// device allows).
    pub fn new(size: u16) -> Queue {
        assert!(
            size.is_power_of_two() && size <= 32768,
            "virtqueue size {size}"
        );
        Queue {
            size,
            free: (0..size).rev().collect(),
            chains: (0..size).map(|_| Vec::new()).collect(),
            avail_idx: 0,
            last_used: 0,
        }
    }

    pub fn size(&self) -> u16 {
        self.size
    }

    /// Free descriptors left.
    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// Takes descriptors for `buffers` and says what to write to offer
    /// them to the device. The caller writes the descriptors, then the
    /// available slot, then (after a write barrier) `idx`, then rings.
    /// None when too few descriptors are free: wait for a completion.
    pub fn offer(&mut self, buffers: &[Buffer]) -> Option<Offer> {
        if buffers.is_empty() || buffers.len() > self.free.len() {
            return None;
        }
        let ids: Vec<u16> = (0..buffers.len())
            .map(|_| self.free.pop().expect("counted"))
            .collect();
        let descriptors = buffers
            .iter()
            .enumerate()
            .map(|(i, &b)| (ids[i], descriptor(b, ids.get(i + 1).copied())))
            .collect();
        let head = ids[0];
        self.chains[usize::from(head)] = ids;
        let avail_slot = self.avail_idx % self.size;
        self.avail_idx = self.avail_idx.wrapping_add(1);
        Some(Offer {
            descriptors,
            head,
            avail_slot,
            avail_idx: self.avail_idx,
        })
    }

    /// Where the next used entry to take back is, if the device's used
    /// `idx` (read by the caller) says there is one.
    pub fn next_used_slot(&self, device_idx: u16) -> Option<u16> {
        (device_idx != self.last_used).then_some(self.last_used % self.size)
    }

    /// Takes back the used entry the caller read at `next_used_slot`:
    /// `head` is the chain the device finished. Its descriptors are free
    /// again. Err for a head the device does not hold (a device bug or
    /// damaged memory, which the driver must not trust).
    pub fn take_used(&mut self, head: u32) -> Result<(), &'static str> {
        let chain = usize::try_from(head)
            .ok()
            .and_then(|h| self.chains.get_mut(h))
            .filter(|c| !c.is_empty())
            .ok_or("the device returned a descriptor it was not given")?;
        let ids = core::mem::take(chain);
        self.free.extend(ids.into_iter().rev());
        self.last_used = self.last_used.wrapping_add(1);
        Ok(())
    }
}

/// virtio-blk request types.
pub const BLK_T_IN: u32 = 0;
pub const BLK_T_OUT: u32 = 1;
pub const BLK_T_FLUSH: u32 = 4;
/// The status byte the device writes last.
pub const BLK_S_OK: u8 = 0;
pub const BLK_S_IOERR: u8 = 1;
pub const BLK_S_UNSUPP: u8 = 2;
/// virtio-blk counts in 512-byte sectors, whatever the block size.
pub const SECTOR: u64 = 512;

/// How a block driver cuts its queue into request slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotShape {
    /// Requests in flight at once.
    pub slots: usize,
    /// Data buffers (pages) per request: a request moves at most this
    /// many pages.
    pub pages: usize,
}

/// The slots for a queue of `queue_size` descriptors, when the device
/// allows `seg_max` data buffers per request (None: it did not say, so
/// one), wanting at most `max_slots` slots of at most `max_pages` pages.
/// A request's chain is a header, its pages and a status byte, and every
/// slot's chain must fit in the queue at once. None when not even one
/// slot of one page fits.
pub fn slot_shape(
    queue_size: u16,
    seg_max: Option<u32>,
    max_slots: usize,
    max_pages: usize,
) -> Option<SlotShape> {
    let allowed = seg_max.map_or(1, |n| (n as usize).max(1));
    let pages = max_pages.min(allowed).max(1);
    let slots = (usize::from(queue_size) / (pages + 2)).min(max_slots);
    (slots > 0).then_some(SlotShape { slots, pages })
}

/// The 16-byte header a block request starts with: type, a reserved
/// word, and the first sector.
pub fn blk_header(kind: u32, sector: u64) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&kind.to_le_bytes());
    h[8..16].copy_from_slice(&sector.to_le_bytes());
    h
}

/// The disk suite's contract between the host and the guest: xtask makes
/// an image of `SIZE` bytes holding `host_byte` at every offset, the
/// guest's `/bin/disktest` checks it reads that and writes `guest_byte`
/// over `GUEST_REGION` (through requests of every shape, from several
/// processes), and after power-off xtask checks the image holds exactly
/// that. A byte depends on its offset and its 4 KiB block, so a request
/// served from the wrong place shows.
pub mod disk_suite {
    pub const SIZE: u64 = 32 << 20;
    pub const GUEST_REGION: core::ops::Range<u64> = (8 << 20)..(12 << 20) + 777;

    pub fn host_byte(offset: u64) -> u8 {
        (offset.wrapping_mul(7) ^ (offset >> 12).wrapping_mul(31)) as u8
    }

    pub fn guest_byte(offset: u64) -> u8 {
        (offset.wrapping_mul(13) ^ (offset >> 12).wrapping_mul(101) ^ 0x5a) as u8
    }

    /// What the image must hold at `offset` after the guest ran.
    pub fn final_byte(offset: u64) -> u8 {
        if GUEST_REGION.contains(&offset) {
            guest_byte(offset)
        } else {
            host_byte(offset)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_disk_has_a_name_and_no_more() {
        let names: Vec<_> = (0..MAX_DISKS).map(|i| disk_name(i).unwrap()).collect();
        assert_eq!(names, ["vda", "vdb", "vdc", "vdd"]);
        assert_eq!(disk_name(MAX_DISKS), None);
    }

    /// Capabilities laid out as QEMU's virtio-blk-pci lays its structures
    /// (hw/virtio/virtio-pci.c): all in BAR 4, common at +0, ISR at
    /// +0x1000, device at +0x2000, notify at +0x3000 with a multiplier of
    /// 4, and a PCI-configuration-access one the driver does not use. The
    /// list runs from high offsets to low, as a device may order it.
    fn qemu_config() -> ([u8; 256], Vec<(u8, u8)>) {
        let mut c = [0u8; 256];
        let mut caps = Vec::new();
        let mut put = |at: usize, kind: u8, offset: u32, length: u32, extra: Option<u32>| {
            c[at] = crate::pci::CAP_VENDOR;
            c[at + 2] = if extra.is_some() { 20 } else { 16 };
            c[at + 3] = kind;
            c[at + 4] = 4;
            c[at + 8..at + 12].copy_from_slice(&offset.to_le_bytes());
            c[at + 12..at + 16].copy_from_slice(&length.to_le_bytes());
            if let Some(x) = extra {
                c[at + 16..at + 20].copy_from_slice(&x.to_le_bytes());
            }
            caps.push((at as u8, crate::pci::CAP_VENDOR));
        };
        put(0x84, 5, 0, 0, Some(0)); // PCI configuration access: ignored
        put(0x70, CAP_NOTIFY, 0x3000, 0x1000, Some(4));
        put(0x60, CAP_DEVICE, 0x2000, 0x1000, None);
        put(0x50, CAP_ISR, 0x1000, 0x1000, None);
        put(0x40, CAP_COMMON, 0, 0x1000, None);
        (c, caps)
    }

    #[test]
    fn the_capabilities_say_where_each_structure_is() {
        let (c, caps) = qemu_config();
        let l = layout(&c, &caps).unwrap();
        assert_eq!(
            l.common,
            Region {
                bar: 4,
                offset: 0,
                length: 0x1000
            }
        );
        assert_eq!(l.isr.offset, 0x1000);
        assert_eq!(l.device.unwrap().offset, 0x2000);
        assert_eq!((l.notify.offset, l.notify_multiplier), (0x3000, 4));
        // Without a common structure there is no device to drive.
        let without: Vec<(u8, u8)> = caps.iter().copied().filter(|&(at, _)| at != 0x40).collect();
        assert_eq!(layout(&c, &without), None);
        // A BAR number past 5 is refused.
        let mut bad = c;
        bad[0x40 + 4] = 9;
        assert_eq!(layout(&bad, &caps), None);
    }

    #[test]
    fn chains_are_offered_and_taken_back() {
        let mut q = Queue::new(4);
        let header = Buffer {
            addr: 0x1000,
            len: 16,
            device_writes: false,
        };
        let data = Buffer {
            addr: 0x2000,
            len: 512,
            device_writes: true,
        };
        let status = Buffer {
            addr: 0x3000,
            len: 1,
            device_writes: true,
        };
        let first = q.offer(&[header, data, status]).unwrap();
        assert_eq!((first.head, first.avail_slot, first.avail_idx), (0, 0, 1));
        let ids: Vec<u16> = first.descriptors.iter().map(|d| d.0).collect();
        assert_eq!(ids, vec![0, 1, 2]);
        // The chain links 0 -> 1 -> 2; the data and status are written by
        // the device; the last has no NEXT.
        let flags = |d: &[u8; 16]| u16::from_le_bytes([d[12], d[13]]);
        let next = |d: &[u8; 16]| u16::from_le_bytes([d[14], d[15]]);
        assert_eq!(
            (
                flags(&first.descriptors[0].1),
                next(&first.descriptors[0].1)
            ),
            (DESC_NEXT, 1)
        );
        assert_eq!(flags(&first.descriptors[1].1), DESC_NEXT | DESC_WRITE);
        assert_eq!(flags(&first.descriptors[2].1), DESC_WRITE);
        assert_eq!(q.free(), 1);
        assert_eq!(
            q.offer(&[header, data]),
            None,
            "two descriptors do not fit in one"
        );
        assert_eq!(q.next_used_slot(0), None);
        assert_eq!(q.next_used_slot(1), Some(0));
        assert!(q.take_used(7).is_err());
        q.take_used(0).unwrap();
        assert_eq!(q.free(), 4);
        assert!(q.take_used(0).is_err(), "a chain comes back once");
        assert_eq!(q.next_used_slot(1), None);
    }

    #[test]
    fn indexes_wrap_as_the_rings_do() {
        let mut q = Queue::new(2);
        let b = Buffer {
            addr: 0,
            len: 1,
            device_writes: false,
        };
        for round in 0..70_000u32 {
            let offer = q.offer(&[b]).unwrap();
            assert_eq!(offer.avail_slot, (round % 2) as u16);
            assert_eq!(offer.avail_idx, (round + 1) as u16);
            let slot = q.next_used_slot(offer.avail_idx).unwrap();
            assert_eq!(slot, (round % 2) as u16);
            q.take_used(u32::from(offer.head)).unwrap();
        }
    }

    #[test]
    fn sizes_and_headers() {
        assert_eq!(ring_sizes(128), (2048, 262, 1030));
        let h = blk_header(BLK_T_OUT, 0x1_0000_0002);
        assert_eq!(&h[0..4], &[1, 0, 0, 0]);
        assert_eq!(&h[8..16], &[2, 0, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn slots_share_the_queue_and_respect_seg_max() {
        // QEMU's virtio-blk: 256 descriptors, seg_max 254.
        assert_eq!(
            slot_shape(256, Some(254), 16, 16),
            Some(SlotShape {
                slots: 14,
                pages: 16
            })
        );
        // A device that gives no seg_max gets one page per request.
        assert_eq!(
            slot_shape(64, None, 16, 16),
            Some(SlotShape {
                slots: 16,
                pages: 1
            })
        );
        assert_eq!(
            slot_shape(128, Some(4), 16, 16),
            Some(SlotShape {
                slots: 16,
                pages: 4
            })
        );
        // seg_max 0 is read as one; a queue too small for any chain fails.
        assert_eq!(slot_shape(4, Some(0), 16, 16).map(|s| s.pages), Some(1));
        assert_eq!(slot_shape(2, Some(8), 16, 16), None);
    }
}
