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
//! ## One request (`transfer`, from a process: it sleeps)
//!
//! Take a free slot, sleeping while all `SLOTS` are busy. A slot is a
//! header and a status byte in the `headers` frame, and a frame of data.
//! Copy the data in (a write), offer the chain header -> data -> status in
//! the available ring, ring the doorbell, and sleep on the slot until the
//! interrupt says it is done; then read the status, copy the data out (a
//! read) and free the slot.
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
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
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

/// Requests in flight at once; each takes three descriptors.
const SLOTS: usize = 16;
/// The most bytes one request moves: one slot's data frame.
pub const MAX_TRANSFER: usize = 4096;
/// Bytes per slot in the headers frame: a 16-byte header, the status.
const SLOT_HEADER: usize = 32;
/// The queue size asked for: room for every slot's chain.
const QUEUE_SIZE: u16 = 64;

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
    data: DmaFrame,
}

struct Disk {
    /// Queue 0's doorbell, a 16-bit register.
    doorbell: Registers,
    isr: Registers,
    rings: DmaFrame,
    queue: Queue,
    avail_at: usize,
    used_at: usize,
    headers: DmaFrame,
    slots: Vec<Slot>,
    /// Which slot each chain head belongs to while the device has it.
    head_slot: Vec<Option<usize>>,
    /// What /proc/diskstats shows of it (`stats_text`).
    stats: DiskStats,
    /// Since when it has had a request, while it has one.
    busy_since: u64,
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
    let wanted = feature::VERSION_1 | (offered & (feature::BLK_FLUSH | feature::BLK_RO));
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
    if max < 3 * SLOTS as u16 || !max.is_power_of_two() {
        return Err("queue 0 is too small");
    }
    let size = QUEUE_SIZE.min(max);
    c.write_u16(common::QUEUE_SIZE, size);
    let (desc_len, avail_len, _) = virtio::ring_sizes(size);
    let avail_at = desc_len;
    let used_at = (avail_at + avail_len).next_multiple_of(4);
    let rings = DmaFrame::new().ok_or("no memory for the rings")?;
    c.write_u64(common::QUEUE_DESC, rings.phys());
    c.write_u64(common::QUEUE_DRIVER, rings.phys() + avail_at as u64);
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
    let mut slots = Vec::with_capacity(SLOTS);
    for _ in 0..SLOTS {
        let data = DmaFrame::new().ok_or("no memory for request data")?;
        slots.push(Slot {
            state: SlotState::Free,
            data,
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
    c.write_u8(common::DEVICE_STATUS, features_ok | status::DRIVER_OK);
    Ok(Disk {
        doorbell,
        isr,
        rings,
        queue: Queue::new(size),
        avail_at,
        used_at,
        headers,
        slots,
        head_slot: (0..size).map(|_| None).collect(),
        stats: DiskStats::default(),
        busy_since: 0,
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

/// What a request does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Flush,
}

/// Takes a free slot of `id`, sleeping while every slot is busy.
fn take_slot(id: DiskId) -> usize {
    let mut taken = None;
    sched::wait_uninterruptible(Chan::DiskSlot(id.index()), || {
        let mut disk = DISKS[id.index()].lock();
        let disk = disk.as_mut().expect("a disk");
        taken = disk.slots.iter().position(|s| s.state == SlotState::Free);
        if let Some(slot) = taken {
            disk.slots[slot].state = SlotState::Busy;
        }
        taken.is_some()
    });
    taken.expect("the wait ends with a slot")
}

/// Moves `data.len()` bytes (a multiple of 512, at most `MAX_TRANSFER`)
/// between the disk `id` at `sector` and `data`, or flushes the disk's
/// write cache (`Op::Flush`, `data` empty). Sleeps until the device is
/// done. EIO if it reports an error, EINVAL for a request past the disk's
/// end, ENXIO if there is no such disk.
pub fn transfer(id: DiskId, op: Op, sector: u64, data: &mut [u8]) -> Result<(), Errno> {
    if !present(id) {
        return Err(Errno::ENXIO);
    }
    let facts = facts(id);
    let len = data.len();
    let sectors = len as u64 / virtio::SECTOR;
    if len > MAX_TRANSFER
        || !(len as u64).is_multiple_of(virtio::SECTOR)
        || (op != Op::Flush
            && (len == 0 || sector + sectors > facts.sectors.load(Ordering::Relaxed)))
    {
        return Err(Errno::EINVAL);
    }
    if op == Op::Flush && !facts.has_flush.load(Ordering::Relaxed) {
        return Ok(());
    }
    if op == Op::Write && read_only(id) {
        return Err(Errno::EROFS);
    }
    let lock = &DISKS[id.index()];
    let slot = take_slot(id);
    let started = crate::clock::nanos_since_boot();
    submit(lock, op, sector, slot, data);
    sched::wait_uninterruptible(Chan::Disk(id.index(), slot), || {
        matches!(
            lock.lock().as_ref().expect("a disk").slots[slot].state,
            SlotState::Done(_)
        )
    });
    let status = {
        let mut disk = lock.lock();
        let disk = disk.as_mut().expect("a disk");
        let SlotState::Done(status) = disk.slots[slot].state else {
            unreachable!("the wait ended on Done");
        };
        if op == Op::Read && status == virtio::BLK_S_OK {
            disk.slots[slot].data.read_bytes(0, data);
        }
        disk.slots[slot].state = SlotState::Free;
        let now = crate::clock::nanos_since_boot();
        let request = match op {
            Op::Read => DiskRequest::Read { sectors },
            Op::Write => DiskRequest::Write { sectors },
            Op::Flush => DiskRequest::Flush,
        };
        disk.stats.record(request, now - started);
        disk.stats.in_flight -= 1;
        if disk.stats.in_flight == 0 {
            disk.stats.busy_ns += now - disk.busy_since;
        }
        status
    };
    sched::wakeup(Chan::DiskSlot(id.index()));
    // A disk that answers at once never made the caller sleep: a long run
    // of requests (a flusher's write-back) gives up the CPU at its slice's end.
    sched::cond_resched();
    (status == virtio::BLK_S_OK).then_some(()).ok_or(Errno::EIO)
}

/// Offers slot `slot`'s request to the device `disk` and rings its
/// doorbell.
fn submit(disk: &IrqLock<Option<Disk>>, op: Op, sector: u64, slot: usize, data: &[u8]) {
    let mut disk = disk.lock();
    let disk = disk.as_mut().expect("a disk");
    if disk.stats.in_flight == 0 {
        disk.busy_since = crate::clock::nanos_since_boot();
    }
    disk.stats.in_flight += 1;
    let kind = match op {
        Op::Read => virtio::BLK_T_IN,
        Op::Write => virtio::BLK_T_OUT,
        Op::Flush => virtio::BLK_T_FLUSH,
    };
    let header_at = slot * SLOT_HEADER;
    disk.headers
        .write_bytes(header_at, &virtio::blk_header(kind, sector));
    disk.headers.write_u8(header_at + 16, 0xff);
    if op == Op::Write {
        disk.slots[slot].data.write_bytes(0, data);
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
    let data = Buffer {
        addr: disk.slots[slot].data.phys(),
        len: data.len() as u32,
        device_writes: op == Op::Read,
    };
    let chain: &[Buffer] = if op == Op::Flush {
        &[header, status]
    } else {
        &[header, data, status]
    };
    let offer = disk
        .queue
        .offer(chain)
        .expect("every slot's chain fits in the queue");
    for (index, bytes) in &offer.descriptors {
        disk.rings.write_bytes(16 * usize::from(*index), bytes);
    }
    disk.head_slot[usize::from(offer.head)] = Some(slot);
    disk.rings.write_u16(
        disk.avail_at + 4 + 2 * usize::from(offer.avail_slot),
        offer.head,
    );
    // The device may read the index as soon as it is written: everything
    // it points at must be in memory first.
    fence(Ordering::SeqCst);
    disk.rings.write_u16(disk.avail_at + 2, offer.avail_idx);
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
