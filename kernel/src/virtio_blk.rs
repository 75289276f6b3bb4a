//! The virtio block devices: the disks QEMU gives with `-device
//! virtio-blk-pci`, driven over PCI with their completion interrupts, as
//! xv6's `virtio_disk.c` drives its one, but with several requests in
//! flight and up to `MAX_DISKS` disks, `/dev/vda` to `/dev/vdd` in the
//! order of their PCI addresses (QEMU's order of `-device` options).
//!
//! ## Start-up (`init`: once, at boot, on the boot CPU alone)
//!
//! For each function that is a virtio block device (vendor 0x1af4): read
//! where its structures are (`kcore::virtio::layout`); reset it; say
//! ACKNOWLEDGE and DRIVER; agree on features (VERSION_1, and FLUSH if it
//! has a write cache); FEATURES_OK; give queue 0 its three rings, all in
//! one DMA frame, and MSI-X table entry 0, which sends the disk's own
//! vector (`DISK_VECTOR` + its index) to this CPU; DRIVER_OK. Each disk
//! has its own lock, slots and vector, so nothing one disk does waits for
//! another.
//!
//! ## A transfer (`transfer`, from a process: it sleeps)
//!
//! A transfer of any length is cut into requests of at most
//! `max_transfer` bytes (a slot's pages), which go out one after another
//! without waiting: the device works on several at once, and the caller
//! sleeps only for the oldest. For each request: take a free slot (a
//! header and status byte in the `headers` frame, and up to
//! `PAGES_PER_REQUEST` frames of data); copy the data in (a write); offer
//! the chain header -> pages -> status in the available ring; ring the
//! doorbell. Then, oldest first, sleep on each slot until the interrupt
//! says it is done, read its status, copy the data out (a read) and free
//! the slot. A caller that finds no free slot while it has requests out
//! collects its own oldest first, so no caller ever sleeps for a slot
//! while holding finished ones. `write_each` does the same for several
//! stretches apart on the disk (a flush's dirty runs): all their requests
//! are one queue, so the second stretch does not wait for the first.
//!
//! ## A started read (`start_read`, then `finish_read`)
//!
//! The buffer cache's prefetch offers a read of one request and goes on
//! without sleeping; `finish_read` later sleeps until it is done, copies
//! it out and frees the slot, as `collect` does for a transfer. Until
//! then the slot is held by someone who is not waiting for it, against
//! the rule above, so started reads may take at most `max_detached` of
//! the slots and never sleep for one: a transfer always finds the others
//! free or held by callers that collect their own.
//!
//! ## The interrupt (`on_interrupt`, with the disk its vector names)
//!
//! Take back every used entry the device added, mark each one's slot done
//! with its status, and wake its sleeper: the wake-up happens after the
//! disk's lock is let go, since it takes the process table.
//!
//! The ring arithmetic (which descriptors are free, where the next entry
//! goes) is `kcore::virtio::Queue`'s, tested on the host; this file does
//! the reads and writes of the shared memory and the device's registers,
//! in the order the device needs them.

use abi::Errno;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use kcore::pci::{
    Bar, CAP_MSIX, COMMAND, COMMAND_BUS_MASTER, COMMAND_INTX_DISABLE, COMMAND_MEMORY, Function,
};
use kcore::procfs::{DiskRequest, DiskStats};
use kcore::virtio::{self, Buffer, Queue, common, feature, status};

use crate::arch::pci::{read32, write32};
use crate::mm::dma::{DmaFrame, Registers, Window};
use crate::proc::sched::{self, Chan};
use crate::sync::{IrqLock, Rank};
use crate::{info, warn};

/// The most requests in flight at once on one disk.
const SLOTS: usize = 16;
/// The most pages one request moves (64 KiB). Fewer, larger requests
/// are what makes a disk fast: each costs a doorbell, an interrupt and a
/// wake-up, whatever its size.
const PAGES_PER_REQUEST: usize = 16;
const PAGE: usize = 4096;
/// Bytes per slot in the headers frame: a 16-byte header, the status.
const SLOT_HEADER: usize = 32;
/// The queue size asked for: the most whose descriptor table fits in one
/// frame (16 bytes each), room for 14 slots of 16 pages.
const QUEUE_SIZE: u16 = 256;

#[derive(Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    /// Offered to the device.
    Busy,
    /// The device finished it, with this status byte.
    Done(u8),
}

struct Slot {
    state: SlotState,
    /// Its data pages, `max_transfer` bytes in all.
    pages: Vec<DmaFrame>,
    /// When its request was offered, for /proc/diskstats' times.
    offered_at: u64,
    /// Whether its request was started by `start_read`, to be finished
    /// by `finish_read`, rather than by a `transfer` that waits for it.
    detached: bool,
}

impl Slot {
    /// Copies `data` into the slot's pages, from the first.
    fn fill(&self, data: &[u8]) {
        for (page, chunk) in self.pages.iter().zip(data.chunks(PAGE)) {
            page.write_bytes(0, chunk);
        }
    }

    /// Copies the slot's pages out into `data`.
    fn empty_into(&self, data: &mut [u8]) {
        for (page, chunk) in self.pages.iter().zip(data.chunks_mut(PAGE)) {
            page.read_bytes(0, chunk);
        }
    }
}

struct Disk {
    /// Queue 0's doorbell, a 16-bit register.
    doorbell: Registers,
    isr: Registers,
    /// The descriptor table, a frame of its own.
    descriptors: DmaFrame,
    /// The available ring at 0 and the used ring at `used_at`.
    rings: DmaFrame,
    queue: Queue,
    used_at: usize,
    headers: DmaFrame,
    slots: Vec<Slot>,
    /// Which slot each chain head belongs to while the device has it.
    head_slot: Vec<Option<usize>>,
    /// What /proc/diskstats shows of it (`stats_text`).
    stats: DiskStats,
    /// Since when it has had a request, while it has one.
    busy_since: u64,
    /// How many slots `start_read`'s requests hold (see `MAX_DETACHED`).
    detached: usize,
}

/// The most disks the driver keeps (vda to vdd); the vectors from
/// `DISK_VECTOR` on are theirs.
pub use kcore::virtio::MAX_DISKS;

/// The disks' major device number. Linux's virtio-blk major is dynamic;
/// 254 is what it gets on a PC with no other dynamic block driver.
pub const MAJOR: u32 = 254;

/// Which disk: vda is 0, vdb 1, and so on, in the order `init` found
/// them. Made only for indices below `MAX_DISKS`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DiskId(u8);

impl DiskId {
    /// The disk `index`, if the driver can keep that many.
    pub fn new(index: usize) -> Option<DiskId> {
        (index < MAX_DISKS).then_some(DiskId(index as u8))
    }

    /// Every disk there may be, whether or not `init` found it.
    pub fn all() -> impl Iterator<Item = DiskId> {
        (0..MAX_DISKS).map(|i| DiskId(i as u8))
    }

    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Its name in /dev: `vda`, `vdb`...
    pub fn name(self) -> &'static str {
        virtio::disk_name(self.index()).expect("a DiskId is below MAX_DISKS")
    }

    /// Its minor number: Linux's virtio-blk gives each disk 16 (the disk
    /// and its partitions), so vdb is 16.
    pub fn minor(self) -> u32 {
        16 * u32::from(self.0)
    }

    /// The disk whose completions arrive on `vector`, if any.
    pub fn of_vector(vector: u64) -> Option<DiskId> {
        let index = vector.checked_sub(crate::arch::trap::DISK_VECTOR)?;
        DiskId::new(usize::try_from(index).ok()?)
    }

    fn vector(self) -> u64 {
        crate::arch::trap::DISK_VECTOR + u64::from(self.0)
    }
}

/// What a request needs to know of a disk before taking its lock, set
/// once by `init`.
struct Facts {
    present: AtomicBool,
    /// Its size in 512-byte sectors.
    sectors: AtomicU64,
    /// Whether it has a write cache to flush.
    has_flush: AtomicBool,
    read_only: AtomicBool,
    /// The most bytes one request moves: a slot's pages.
    max_transfer: AtomicUsize,
}

/// Each disk, once `init` found it. The locks share one rank: nothing
/// holds two disks' locks at once.
static DISKS: [IrqLock<Option<Disk>>; MAX_DISKS] =
    [const { IrqLock::new(Rank::Disk, None) }; MAX_DISKS];
static FACTS: [Facts; MAX_DISKS] = [const {
    Facts {
        present: AtomicBool::new(false),
        sectors: AtomicU64::new(0),
        has_flush: AtomicBool::new(false),
        read_only: AtomicBool::new(false),
        max_transfer: AtomicUsize::new(0),
    }
}; MAX_DISKS];

fn facts(disk: DiskId) -> &'static Facts {
    &FACTS[disk.index()]
}

/// Whether there is a disk `disk`.
pub fn present(disk: DiskId) -> bool {
    facts(disk).present.load(Ordering::Acquire)
}

/// The disk's size in bytes (0 if there is none).
pub fn size_bytes(disk: DiskId) -> u64 {
    facts(disk).sectors.load(Ordering::Relaxed) * virtio::SECTOR
}

pub fn read_only(disk: DiskId) -> bool {
    facts(disk).read_only.load(Ordering::Relaxed)
}

/// The most bytes one request to `disk` moves: `transfer` cuts longer
/// transfers into requests of this size.
fn max_transfer(disk: DiskId) -> usize {
    facts(disk).max_transfer.load(Ordering::Relaxed)
}

/// The window on one structure (`region`) of `f`'s BARs.
fn window(f: &Function, region: virtio::Region) -> Option<Registers> {
    match f.bars[usize::from(region.bar)] {
        Bar::Memory { address, size, .. }
            if u64::from(region.offset) + u64::from(region.length) <= size =>
        {
            Registers::map(address + u64::from(region.offset), region.length as usize)
        }
        _ => None,
    }
}

/// Finds and starts the virtio block devices, the first `MAX_DISKS` of
/// them. Call at boot, on the boot CPU, before the other CPUs start (the
/// configuration ports). A device that fails to start takes no name: the
/// next one is named as if it were not there.
pub fn init() {
    let mut ids = DiskId::all();
    let mut next = ids.next();
    for f in crate::pci::functions().iter().filter(|f| {
        f.vendor == virtio::VENDOR
            && (f.device == virtio::DEVICE_BLOCK_MODERN
                || f.device == virtio::DEVICE_BLOCK_TRANSITIONAL)
    }) {
        let Some(id) = next else {
            warn!(
                "virtio-blk: {}: more than {MAX_DISKS} disks; left alone",
                f.address
            );
            continue;
        };
        match start(f, id) {
            Ok(disk) => {
                *DISKS[id.index()].lock() = Some(disk);
                facts(id).present.store(true, Ordering::Release);
                crate::fs::dev::add_disk(id);
                info!(
                    "virtio-blk: {} {} MiB{}{}, /dev/{}",
                    f.address,
                    size_bytes(id) >> 20,
                    if facts(id).has_flush.load(Ordering::Relaxed) {
                        ", write cache"
                    } else {
                        ""
                    },
                    if read_only(id) { ", read-only" } else { "" },
                    id.name()
                );
                next = ids.next();
            }
            Err(why) => warn!("virtio-blk: {}: {why}; no disk", f.address),
        }
    }
}

/// The start-up sequence of the module's header for the device `f`, to
/// be the disk `id`; Err says which step the device refused.
fn start(f: &Function, id: DiskId) -> Result<Disk, &'static str> {
    let config = crate::pci::config(f.address);
    let layout = virtio::layout(&config, &f.capabilities).ok_or("no virtio 1.x capabilities")?;
    let common_regs = window(f, layout.common).ok_or("common configuration not mappable")?;
    let isr = window(f, layout.isr).ok_or("interrupt status not mappable")?;
    let device = layout
        .device
        .and_then(|r| window(f, r))
        .ok_or("device configuration not mappable")?;
    let msix = f.capability(CAP_MSIX).ok_or("no MSI-X")?;

    // Memory decoding and bus mastering (DMA) on, the legacy line off.
    let command = read32(f.address, COMMAND as u8);
    let on = u32::from(COMMAND_MEMORY | COMMAND_BUS_MASTER | COMMAND_INTX_DISABLE);
    write32(f.address, COMMAND as u8, command | on);

    let c = &common_regs;
    c.write_u8(common::DEVICE_STATUS, 0);
    while c.read_u8(common::DEVICE_STATUS) != 0 {
        core::hint::spin_loop();
    }
    c.write_u8(common::DEVICE_STATUS, status::ACKNOWLEDGE);
    c.write_u8(common::DEVICE_STATUS, status::ACKNOWLEDGE | status::DRIVER);
    let offered = {
        c.write_u32(common::DEVICE_FEATURE_SELECT, 0);
        let low = c.read_u32(common::DEVICE_FEATURE);
        c.write_u32(common::DEVICE_FEATURE_SELECT, 1);
        u64::from(low) | u64::from(c.read_u32(common::DEVICE_FEATURE)) << 32
    };
    if offered & feature::VERSION_1 == 0 {
        c.write_u8(common::DEVICE_STATUS, status::FAILED);
        return Err("the device does not offer VERSION_1");
    }
    let wanted = feature::VERSION_1
        | (offered & (feature::BLK_FLUSH | feature::BLK_RO | feature::BLK_SEG_MAX));
    c.write_u32(common::DRIVER_FEATURE_SELECT, 0);
    c.write_u32(common::DRIVER_FEATURE, wanted as u32);
    c.write_u32(common::DRIVER_FEATURE_SELECT, 1);
    c.write_u32(common::DRIVER_FEATURE, (wanted >> 32) as u32);
    let features_ok = status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK;
    c.write_u8(common::DEVICE_STATUS, features_ok);
    if c.read_u8(common::DEVICE_STATUS) & status::FEATURES_OK == 0 {
        c.write_u8(common::DEVICE_STATUS, status::FAILED);
        return Err("the device refused the features");
    }

    // Queue 0: its size, its rings, its interrupt.
    c.write_u16(common::QUEUE_SELECT, 0);
    // A split queue's size is a power of two (virtio 1.0, 2.6).
    let max = c.read_u16(common::QUEUE_SIZE);
    if !max.is_power_of_two() {
        return Err("queue 0's size is not a power of two");
    }
    let size = QUEUE_SIZE.min(max);
    let seg_max =
        (offered & feature::BLK_SEG_MAX != 0).then(|| device.read_u32(virtio::BLK_CONFIG_SEG_MAX));
    let shape = virtio::slot_shape(size, seg_max, SLOTS, PAGES_PER_REQUEST)
        .ok_or("queue 0 is too small")?;
    c.write_u16(common::QUEUE_SIZE, size);
    let (_, avail_len, _) = virtio::ring_sizes(size);
    let used_at = avail_len.next_multiple_of(4);
    let descriptors = DmaFrame::new().ok_or("no memory for the descriptors")?;
    let rings = DmaFrame::new().ok_or("no memory for the rings")?;
    c.write_u64(common::QUEUE_DESC, descriptors.phys());
    c.write_u64(common::QUEUE_DRIVER, rings.phys());
    c.write_u64(common::QUEUE_DEVICE, rings.phys() + used_at as u64);
    c.write_u16(common::MSIX_CONFIG, 0xffff);
    c.write_u16(common::QUEUE_MSIX_VECTOR, 0);
    if c.read_u16(common::QUEUE_MSIX_VECTOR) != 0 {
        return Err("the device refused an MSI-X vector for queue 0");
    }
    let notify_off = u32::from(c.read_u16(common::QUEUE_NOTIFY_OFF));
    let doorbell_region = virtio::Region {
        bar: layout.notify.bar,
        offset: layout.notify.offset + notify_off * layout.notify_multiplier,
        length: 2,
    };
    let doorbell = window(f, doorbell_region).ok_or("doorbell not mappable")?;
    route_msix(f, msix, id.vector())?;
    c.write_u16(common::QUEUE_ENABLE, 1);

    let headers = DmaFrame::new().ok_or("no memory for request headers")?;
    let mut slots = Vec::with_capacity(shape.slots);
    for _ in 0..shape.slots {
        let pages = (0..shape.pages)
            .map(|_| DmaFrame::new())
            .collect::<Option<Vec<_>>>()
            .ok_or("no memory for request data")?;
        slots.push(Slot {
            state: SlotState::Free,
            pages,
            offered_at: 0,
            detached: false,
        });
    }
    let sectors = u64::from(device.read_u32(0)) | u64::from(device.read_u32(4)) << 32;
    let facts = facts(id);
    facts.sectors.store(sectors, Ordering::Relaxed);
    facts
        .has_flush
        .store(offered & feature::BLK_FLUSH != 0, Ordering::Relaxed);
    facts
        .read_only
        .store(offered & feature::BLK_RO != 0, Ordering::Relaxed);
    facts
        .max_transfer
        .store(shape.pages * PAGE, Ordering::Relaxed);
    c.write_u8(common::DEVICE_STATUS, features_ok | status::DRIVER_OK);
    Ok(Disk {
        doorbell,
        isr,
        descriptors,
        rings,
        queue: Queue::new(size),
        used_at,
        headers,
        slots,
        head_slot: (0..size).map(|_| None).collect(),
        stats: DiskStats::default(),
        busy_since: 0,
        detached: 0,
    })
}

/// Points MSI-X table entry 0 at this CPU's local APIC with `vector`,
/// unmasked, and turns MSI-X on.
fn route_msix(f: &Function, cap: u8, vector: u64) -> Result<(), &'static str> {
    let table = read32(f.address, cap + 4);
    let bar = (table & 7) as usize;
    let offset = u64::from(table & !7);
    let Bar::Memory { address, .. } = f.bars.get(bar).copied().unwrap_or(Bar::None) else {
        return Err("MSI-X table in no memory BAR");
    };
    let entry = Registers::map(address + offset, 16).ok_or("MSI-X table not mappable")?;
    // The local APIC must be on to take the message; `enable` is what
    // `smp::start_others` does a moment later anyway, and it says the id.
    let apic_id = crate::arch::apic::enable();
    entry.write_u32(0, 0xfee0_0000 | (apic_id << 12));
    entry.write_u32(4, 0);
    entry.write_u32(8, vector as u32);
    entry.write_u32(12, 0);
    // Message control is the upper half of the capability's first dword:
    // bit 15 enables MSI-X, bit 14 (function mask) stays clear.
    let first = read32(f.address, cap);
    write32(f.address, cap, (first | 1 << 31) & !(1 << 30));
    Ok(())
}

/// What a transfer does, with the caller's buffer: a read fills it, a
/// write sends it, a flush has none.
pub enum Op<'a> {
    Read(&'a mut [u8]),
    Write(&'a [u8]),
    Flush,
}

impl Op<'_> {
    fn len(&self) -> usize {
        match self {
            Op::Read(data) => data.len(),
            Op::Write(data) => data.len(),
            Op::Flush => 0,
        }
    }
}

/// Takes a free slot of `id`, if there is one.
fn try_take_slot(id: DiskId) -> Option<usize> {
    let mut disk = DISKS[id.index()].lock();
    let disk = disk.as_mut().expect("a disk");
    let slot = disk.slots.iter().position(|s| s.state == SlotState::Free)?;
    disk.slots[slot].state = SlotState::Busy;
    Some(slot)
}

/// Takes a free slot of `id`, sleeping while every slot is busy. Only a
/// caller with no request of its own out may sleep here (see the header).
fn take_slot(id: DiskId) -> usize {
    let mut taken = None;
    sched::wait_uninterruptible(Chan::DiskSlot(id.index()), || {
        taken = try_take_slot(id);
        taken.is_some()
    });
    taken.expect("the wait ends with a slot")
}

/// One request of a transfer, offered to the device and not yet
/// collected: its slot, which stretch of the transfer it belongs to,
/// and which bytes of that stretch it moves.
struct Outstanding {
    slot: usize,
    stretch: usize,
    bytes: core::ops::Range<usize>,
}

/// Moves `op`'s bytes (a multiple of 512) between the disk `id` at
/// `sector` and the caller's buffer, or flushes the disk's write cache.
/// Sleeps until the device is done with all of it. EIO if it reports an
/// error for any part (the other parts are still waited for: their slots
/// and the caller's buffer are the device's until then), EINVAL for a
/// transfer past the disk's end, EROFS for a write to a read-only disk,
/// ENXIO if there is no such disk.
pub fn transfer(id: DiskId, sector: u64, op: Op) -> Result<(), Errno> {
    transfer_each(id, &mut [(sector, op)])
}

/// Writes each of `writes` (a first sector and its bytes, a multiple of
/// 512) to disk `id`, the requests of all of them in flight together:
/// a flush's dirty runs lie apart on the disk (a file's data here, the
/// journal's log there), and one waiting for the other would cost a
/// round trip to the device each. Sleeps until all are done; errors as
/// `transfer`'s, and nothing is written if any stretch is invalid.
pub fn write_each(id: DiskId, writes: &[(u64, &[u8])]) -> Result<(), Errno> {
    let mut stretches: Vec<(u64, Op)> = writes
        .iter()
        .map(|&(sector, data)| (sector, Op::Write(data)))
        .collect();
    transfer_each(id, &mut stretches)
}

/// Whether `op` at `sector` is a transfer disk `id` can make: EINVAL
/// for a length not a multiple of 512, an empty read or write, or one
/// past the disk's end; EROFS for a write to a read-only disk.
fn check(id: DiskId, sector: u64, op: &Op) -> Result<(), Errno> {
    let len = op.len();
    let sectors = facts(id).sectors.load(Ordering::Relaxed);
    if !(len as u64).is_multiple_of(virtio::SECTOR)
        || (!matches!(op, Op::Flush)
            && (len == 0 || sector + len as u64 / virtio::SECTOR > sectors))
    {
        return Err(Errno::EINVAL);
    }
    if matches!(op, Op::Write(_)) && read_only(id) {
        return Err(Errno::EROFS);
    }
    Ok(())
}

/// `transfer` for several stretches, each a first sector and its op.
/// Every request is offered as soon as a slot is free, the oldest
/// collected when none is: the device always has as many as it has room
/// for. A flush is not ordered after writes offered with it, so it only
/// comes alone (`flush`).
fn transfer_each(id: DiskId, stretches: &mut [(u64, Op)]) -> Result<(), Errno> {
    if !present(id) {
        return Err(Errno::ENXIO);
    }
    for (sector, op) in stretches.iter() {
        check(id, *sector, op)?;
    }
    // A flush is one request of no data (none on a disk without a write
    // cache); anything else, one per piece.
    let piece = max_transfer(id);
    let has_flush = facts(id).has_flush.load(Ordering::Relaxed);
    let mut requests = Vec::new();
    for (stretch, (_, op)) in stretches.iter().enumerate() {
        match op {
            Op::Flush if has_flush => requests.push((stretch, 0..0)),
            Op::Flush => {}
            _ => {
                let len = op.len();
                let pieces = (0..len).step_by(piece).map(|at| at..len.min(at + piece));
                requests.extend(pieces.map(|bytes| (stretch, bytes)));
            }
        }
    }
    let mut out: VecDeque<Outstanding> = VecDeque::new();
    let mut failed = false;
    for (stretch, bytes) in requests {
        let slot = loop {
            if let Some(slot) = try_take_slot(id) {
                break slot;
            }
            match out.pop_front() {
                Some(oldest) => failed |= !collect(id, &oldest, &mut stretches[oldest.stretch].1),
                None => break take_slot(id),
            }
        };
        let (sector, op) = &stretches[stretch];
        let first = sector + bytes.start as u64 / virtio::SECTOR;
        submit(id, op, first, slot, bytes.clone());
        out.push_back(Outstanding {
            slot,
            stretch,
            bytes,
        });
    }
    while let Some(oldest) = out.pop_front() {
        failed |= !collect(id, &oldest, &mut stretches[oldest.stretch].1);
    }
    // A disk that answers at once never made the caller sleep: a long run
    // of requests (a flusher's write-back) gives up the CPU at its slice's end.
    sched::cond_resched();
    if failed { Err(Errno::EIO) } else { Ok(()) }
}

/// Flushes the disk's write cache: when it returns, every write the disk
/// finished before it is durable. Sleeps; errors as `transfer`'s.
pub fn flush(id: DiskId) -> Result<(), Errno> {
    transfer(id, 0, Op::Flush)
}

/// The most slots of `slots` that `start_read`'s requests may hold at
/// once. A `transfer` always finds the rest either free or held by
/// callers that collect their own without waiting for anything but the
/// device, so it never waits on a read nobody may come back for.
fn max_detached(slots: usize) -> usize {
    slots - slots.div_ceil(4)
}

/// A read started by `start_read`: its slot, and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    slot: usize,
    len: usize,
}

impl Started {
    /// As a number, for a `BlockDevice` ticket.
    pub fn to_ticket(self) -> u64 {
        (self.slot as u64) << 32 | self.len as u64
    }

    /// Back from `to_ticket`.
    pub fn from_ticket(ticket: u64) -> Started {
        Started {
            slot: (ticket >> 32) as usize,
            len: ticket as u32 as usize,
        }
    }
}

/// Offers a read of `len` bytes (a multiple of 512, at most one request's)
/// at `sector` of disk `id` and returns at once, without sleeping: the
/// request for `finish_read`, which must come for it (its slot stays the
/// caller's until then). None, and nothing offered, when the read is
/// not one request on a present disk, or every slot a started read may
/// take is taken (see `max_detached`): the caller reads with `transfer`.
pub fn start_read(id: DiskId, sector: u64, len: usize) -> Option<Started> {
    let facts = facts(id);
    if !present(id)
        || len == 0
        || len > max_transfer(id)
        || !(len as u64).is_multiple_of(virtio::SECTOR)
        || sector + len as u64 / virtio::SECTOR > facts.sectors.load(Ordering::Relaxed)
    {
        return None;
    }
    let slot = {
        let mut disk = DISKS[id.index()].lock();
        let disk = disk.as_mut().expect("a disk");
        if disk.detached >= max_detached(disk.slots.len()) {
            return None;
        }
        let slot = disk.slots.iter().position(|s| s.state == SlotState::Free)?;
        disk.slots[slot].state = SlotState::Busy;
        disk.slots[slot].detached = true;
        disk.detached += 1;
        slot
    };
    // A read's data is not looked at when it goes out: an empty buffer
    // of the right length says how many pages the chain takes.
    submit(id, &Op::Read(&mut []), sector, slot, 0..len);
    Some(Started { slot, len })
}

/// Sleeps until the read `started` is done and copies its bytes into
/// `buf` (as long as the read), freeing its slot. EIO if the device
/// reported an error.
pub fn finish_read(id: DiskId, started: Started, buf: &mut [u8]) -> Result<(), Errno> {
    assert_eq!(
        buf.len(),
        started.len,
        "finish_read into a buffer of another length"
    );
    let request = Outstanding {
        slot: started.slot,
        stretch: 0,
        bytes: 0..started.len,
    };
    if collect(id, &request, &mut Op::Read(buf)) {
        Ok(())
    } else {
        Err(Errno::EIO)
    }
}

/// Sleeps until the device is done with request `r` of a transfer, copies
/// a read's bytes out, frees the slot; whether the device said OK.
fn collect(id: DiskId, r: &Outstanding, op: &mut Op) -> bool {
    let lock = &DISKS[id.index()];
    sched::wait_uninterruptible(Chan::Disk(id.index(), r.slot), || {
        matches!(
            lock.lock().as_ref().expect("a disk").slots[r.slot].state,
            SlotState::Done(_)
        )
    });
    let ok = {
        let mut disk = lock.lock();
        let disk = disk.as_mut().expect("a disk");
        let SlotState::Done(status) = disk.slots[r.slot].state else {
            unreachable!("the wait ended on Done");
        };
        let ok = status == virtio::BLK_S_OK;
        if let Op::Read(data) = op
            && ok
        {
            disk.slots[r.slot].empty_into(&mut data[r.bytes.clone()]);
        }
        let slot = &mut disk.slots[r.slot];
        slot.state = SlotState::Free;
        let offered_at = slot.offered_at;
        if core::mem::take(&mut slot.detached) {
            disk.detached -= 1;
        }
        let now = crate::clock::nanos_since_boot();
        let sectors = r.bytes.len() as u64 / virtio::SECTOR;
        let request = match op {
            Op::Read(_) => DiskRequest::Read { sectors },
            Op::Write(_) => DiskRequest::Write { sectors },
            Op::Flush => DiskRequest::Flush,
        };
        disk.stats.record(request, now - offered_at);
        disk.stats.in_flight -= 1;
        if disk.stats.in_flight == 0 {
            disk.stats.busy_ns += now - disk.busy_since;
        }
        ok
    };
    sched::wakeup(Chan::DiskSlot(id.index()));
    ok
}

/// Offers the request for bytes `bytes` of `op` to the device `id`, in
/// slot `slot` (taken), at `sector`, and rings its doorbell.
fn submit(id: DiskId, op: &Op, sector: u64, slot: usize, bytes: core::ops::Range<usize>) {
    let mut disk = DISKS[id.index()].lock();
    let disk = disk.as_mut().expect("a disk");
    if disk.stats.in_flight == 0 {
        disk.busy_since = crate::clock::nanos_since_boot();
    }
    disk.stats.in_flight += 1;
    disk.slots[slot].offered_at = crate::clock::nanos_since_boot();
    let kind = match op {
        Op::Read(_) => virtio::BLK_T_IN,
        Op::Write(_) => virtio::BLK_T_OUT,
        Op::Flush => virtio::BLK_T_FLUSH,
    };
    let header_at = slot * SLOT_HEADER;
    disk.headers
        .write_bytes(header_at, &virtio::blk_header(kind, sector));
    disk.headers.write_u8(header_at + 16, 0xff);
    if let Op::Write(data) = op {
        disk.slots[slot].fill(&data[bytes.clone()]);
    }
    let header = Buffer {
        addr: disk.headers.phys() + header_at as u64,
        len: 16,
        device_writes: false,
    };
    let status = Buffer {
        addr: header.addr + 16,
        len: 1,
        device_writes: true,
    };
    // The chain: the header, one buffer per page the request uses, the
    // status byte.
    let mut chain: Vec<Buffer> = Vec::with_capacity(PAGES_PER_REQUEST + 2);
    chain.push(header);
    let mut left = bytes.len();
    for page in &disk.slots[slot].pages {
        if left == 0 {
            break;
        }
        let len = left.min(PAGE);
        chain.push(Buffer {
            addr: page.phys(),
            len: len as u32,
            device_writes: matches!(op, Op::Read(_)),
        });
        left -= len;
    }
    chain.push(status);
    let offer = disk
        .queue
        .offer(&chain)
        .expect("every slot's chain fits in the queue");
    for (index, bytes) in &offer.descriptors {
        disk.descriptors
            .write_bytes(16 * usize::from(*index), bytes);
    }
    disk.head_slot[usize::from(offer.head)] = Some(slot);
    disk.rings
        .write_u16(4 + 2 * usize::from(offer.avail_slot), offer.head);
    // The device may read the index as soon as it is written: everything
    // it points at must be in memory first.
    fence(Ordering::SeqCst);
    disk.rings.write_u16(2, offer.avail_idx);
    fence(Ordering::SeqCst);
    disk.doorbell.write_u16(0, 0);
}

/// `/proc/diskstats`: a line for each disk, as Linux's.
pub fn stats_text() -> alloc::string::String {
    let mut text = alloc::string::String::new();
    for id in DiskId::all() {
        if let Some(disk) = DISKS[id.index()].lock().as_ref() {
            text.push_str(&kcore::procfs::diskstats_line(
                MAJOR,
                id.minor(),
                id.name(),
                &disk.stats,
            ));
        }
    }
    text
}

/// The vector of disk `id`: its device used some chains. Marks their
/// slots done and wakes their sleepers.
pub fn on_interrupt(id: DiskId) {
    let mut finished = [false; SLOTS];
    {
        let mut guard = DISKS[id.index()].lock();
        let Some(disk) = guard.as_mut() else { return };
        // Reading the status acknowledges it (with MSI-X it only says
        // why; the used ring says what).
        let _ = disk.isr.read_u8(0);
        loop {
            let device_idx = disk.rings.read_u16(disk.used_at + 2);
            fence(Ordering::Acquire);
            let Some(at) = disk.queue.next_used_slot(device_idx) else {
                break;
            };
            let head = disk.rings.read_u32(disk.used_at + 4 + 8 * usize::from(at));
            if let Err(why) = disk.queue.take_used(head) {
                warn!("virtio-blk: {why} ({head}); ignoring the rest of the used ring");
                break;
            }
            if let Some(slot) = disk.head_slot.get_mut(head as usize).and_then(Option::take) {
                let status = disk.headers.read_u8(slot * SLOT_HEADER + 16);
                disk.slots[slot].state = SlotState::Done(status);
                finished[slot] = true;
            }
        }
    }
    for (slot, _) in finished.iter().enumerate().filter(|(_, done)| **done) {
        sched::wakeup(Chan::Disk(id.index(), slot));
    }
}
