//! Page tables and address spaces.
//!
//! Every address space has its own level-4 table. Its upper half (entries
//! 256..512) points at the kernel's level-3 tables, which are all created at
//! boot, so a kernel mapping made later (heap growth, a new kernel stack) is
//! seen by every process without touching their tables. The lower half is the
//! process's own; dropping an `AddressSpace` gives back every frame in it and
//! every table that mapped it.
//!
//! Page-table entries are made with the `x86_64` crate's `OffsetPageTable`,
//! which reaches tables through the bootloader's physical-memory window; a
//! user page's entry is read, changed and cleared through `user_leaf`, a
//! walk of our own, because a `PROT_NONE` page is kept in a not-present
//! entry that the crate would call unmapped (see `NO_ACCESS`).

use alloc::boxed::Box;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Once;
use x86_64::registers::control::{Cr3, Cr3Flags};
use x86_64::structures::paging::mapper::{MapToError, Translate, TranslateResult};
use x86_64::structures::paging::{
    FrameAllocator, Mapper, OffsetPageTable, Page, PageTable, PageTableFlags as Flags, PhysFrame,
    Size4KiB, page_table::PageTableEntry,
};
use x86_64::{PhysAddr, VirtAddr};

use kcore::wx::Mapping;

use super::frames::{self, KernelFrames};
use super::phys_to_virt;
use crate::sync::{IrqGuard, IrqLock, Rank};

static KERNEL_L4: Once<PhysFrame> = Once::new();

/// A page-table lock. Every change of an entry is made holding the lock
/// of the address space it belongs to: two CPUs may otherwise edit one
/// table at once (two threads of a process faulting in pages side by
/// side, each making the same missing level-2 table), or one may act on
/// what it read just before the other changed it (a copy-on-write break
/// racing another).
///
/// Each address space has its own (`AddressSpace` owns it, `Space`
/// points at it), so processes fault, fork and unmap on different CPUs
/// without waiting for each other; the kernel half has `KERNEL_TABLES`.
/// A holder does at most one level-1 table's worth of work: a few entry
/// writes and one page copy, or fork's copy of one table of 512 entries
/// (`fork_cow` lets go between tables), so interrupts are never off for
/// a whole walk.
///
/// Lock order (sync.rs, memory): a page-table lock is taken inside the
/// kernel heap's lock (heap growth maps kernel pages) and the areas' and
/// a file's pages' locks are never held with it; inside it only the frame
/// table is taken. No CPU holds two (the rank's count says so: fork fills
/// the child, which no other CPU can reach yet, under the parent's lock
/// alone). A shootdown may wait while one is held: waiting CPUs answer
/// (arch/smp.rs).
type TablesLock = IrqLock<()>;

/// The kernel half's page-table lock (`map_kernel`, `unmap_kernel`).
static KERNEL_TABLES: TablesLock = IrqLock::new(Rank::PageTables, ());

/// Frames holding kernel-half page tables made after boot (for heap growth
/// and new kernel-stack slots). They are kept for reuse, never freed, so
/// leak checks must count them apart from lost frames.
static KERNEL_TABLE_FRAMES: AtomicU64 = AtomicU64::new(0);

pub fn kernel_table_frames() -> u64 {
    KERNEL_TABLE_FRAMES.load(Ordering::Relaxed)
}

/// The frame allocator for kernel-half mappings, counting the tables it makes.
struct KernelTableFrames;

// SAFETY: hands out frames from the allocator, unused and zeroed.
unsafe impl FrameAllocator<Size4KiB> for KernelTableFrames {
    fn allocate_frame(&mut self) -> Option<PhysFrame> {
        let frame = frames::alloc()?;
        KERNEL_TABLE_FRAMES.fetch_add(1, Ordering::Relaxed);
        Some(frame)
    }
}

/// Why a mapping could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    OutOfMemory,
    AlreadyMapped,
    NotMapped,
}

/// A page table reached through the physical window.
///
/// # Safety
/// `frame` must hold a page table (a frame taken from a present, non-huge
/// page-table entry, or one allocated for a table), and the caller must not
/// let the reference outlive that use nor hold another reference to the
/// same table at the same time. Every change holds its space's page-table
/// lock (`TablesLock`) and no
/// interrupt handler edits page tables, so a walk that takes one table at
/// a time keeps this; a walk that only reads may race a change on another
/// CPU, and then sees each entry (one aligned 64-bit word) before or after.
unsafe fn table(frame: PhysFrame) -> &'static mut PageTable {
    // SAFETY: the caller's promise; the physical window maps every frame.
    unsafe { &mut *phys_to_virt(frame.start_address()).as_mut_ptr::<PageTable>() }
}

fn mapper_for(l4: PhysFrame) -> OffsetPageTable<'static> {
    let offset = phys_to_virt(0u64);
    // SAFETY: `l4` is a level-4 table and `offset` is where the bootloader
    // mapped all of physical memory; the mapper is used for one operation
    // and dropped, one table walk at a time (see `table`).
    unsafe { OffsetPageTable::new(table(l4), offset) }
}

/// Maps `page` to `frame` in the tables under `l4`; tables made on the way
/// get `parent_flags` (user-accessible ones for the user half, so that a
/// page's own entry alone decides whether the user may touch it).
fn map_in(
    l4: PhysFrame,
    page: VirtAddr,
    frame: PhysFrame,
    flags: Flags,
    parent_flags: Flags,
    tables: &mut impl FrameAllocator<Size4KiB>,
) -> Result<(), MapError> {
    let page = Page::<Size4KiB>::containing_address(page);
    // SAFETY: the caller owns `frame`, from the frame allocator or device
    // memory past the end of RAM (dma.rs), so mapping it aliases nothing.
    let result =
        unsafe { mapper_for(l4).map_to_with_table_flags(page, frame, flags, parent_flags, tables) };
    match result {
        Ok(flush) => {
            flush.flush();
            Ok(())
        }
        Err(MapToError::FrameAllocationFailed) => Err(MapError::OutOfMemory),
        Err(_) => Err(MapError::AlreadyMapped),
    }
}

/// Records the boot page table as the kernel's and creates every upper-half
/// level-3 table, so that all address spaces share the kernel's mappings.
/// The bootloader's own mappings in the lower half go (see below);
/// `protect_code_aliases` finishes W^X once the heap is up.
pub fn init() {
    let (l4, _) = Cr3::read();
    KERNEL_L4.call_once(|| l4);
    // SAFETY: a table (see `table`) that nothing else references now.
    for entry in unsafe { table(l4) }.iter_mut().skip(256) {
        if entry.is_unused() {
            let frame = frames::alloc().expect("memory for the kernel's page tables");
            entry.set_frame(frame, Flags::PRESENT | Flags::WRITABLE);
        }
    }
    // The bootloader leaves the page it jumped from identity-mapped and
    // executable (and its GDT) in the lower half. Nothing uses them once the
    // kernel runs, the lower half is user space's, and the window maps
    // those frames writable.
    // SAFETY: a table (see `table`) that nothing else references now.
    for entry in unsafe { table(l4) }.iter_mut().take(256) {
        entry.set_unused();
    }
    x86_64::instructions::tlb::flush_all();
}

/// Makes the physical-memory window's alias of every frame the kernel can
/// execute read-only, so kernel code is writable through no address (Linux
/// does the same to its direct map). The window is built of huge pages;
/// those over code are split down to 4 KiB pages first. Needs the heap.
pub fn protect_code_aliases() {
    let mut code = alloc::vec::Vec::new();
    Space::kernel().for_each_mapping(true, |m| {
        if m.executable {
            code.push(m);
        }
    });
    for m in code {
        for phys in (m.phys..m.phys + m.len).step_by(super::PAGE_SIZE as usize) {
            window_read_only(phys_to_virt(phys));
        }
    }
}

/// Removes write permission from the 4 KiB window page at `va`, splitting
/// the huge pages above it as needed.
fn window_read_only(va: VirtAddr) {
    let mut frame = kernel_l4();
    let indices = [va.p4_index(), va.p3_index(), va.p2_index(), va.p1_index()];
    for (depth, index) in indices.into_iter().enumerate() {
        let level = 4 - depth as u8;
        // SAFETY: a table (see `table`) that nothing else references now.
        let entry = &mut unsafe { table(frame) }[index];
        assert!(
            entry.flags().contains(Flags::PRESENT),
            "the physical-memory window does not map {va:?}"
        );
        if level == 1 {
            entry.set_flags(entry.flags() - Flags::WRITABLE);
            break;
        }
        if entry.flags().contains(Flags::HUGE_PAGE) {
            split_huge_page(entry, level);
        }
        frame = PhysFrame::containing_address(entry.addr());
    }
    x86_64::instructions::tlb::flush(va);
}

/// Replaces the huge page that `entry` (in a level-`level` table) maps by a
/// table of pages one level smaller, with the same frames and rights.
fn split_huge_page(entry: &mut PageTableEntry, level: u8) {
    let flags = entry.flags();
    let base = entry.addr().as_u64();
    let child_size = 1u64 << (12 + 9 * (u32::from(level) - 2));
    let child_flags = if level == 2 {
        flags - Flags::HUGE_PAGE // 4 KiB pages have no size bit
    } else {
        flags
    };
    let frame = KernelTableFrames
        .allocate_frame()
        .expect("memory for the kernel's page tables");
    // SAFETY: a table (see `table`) that nothing else references now.
    for (i, child) in unsafe { table(frame) }.iter_mut().enumerate() {
        child.set_addr(PhysAddr::new(base + i as u64 * child_size), child_flags);
    }
    entry.set_frame(frame, flags - Flags::HUGE_PAGE);
}

fn kernel_l4() -> PhysFrame {
    *KERNEL_L4.get().expect("paging::init not called")
}

/// Maps a kernel page (upper half), seen by every address space.
pub fn map_kernel(page: VirtAddr, frame: PhysFrame, flags: Flags) -> Result<(), MapError> {
    debug_assert!(page.as_u64() >= super::USER_TOP);
    let parents = Flags::PRESENT | Flags::WRITABLE;
    let _tables = KERNEL_TABLES.lock();
    map_in(
        kernel_l4(),
        page,
        frame,
        flags | Flags::PRESENT,
        parents,
        &mut KernelTableFrames,
    )
}

/// Removes a kernel mapping and returns the frame it mapped. Flushes this
/// CPU's entry only: the caller sees to the others (mm/kstack.rs).
pub fn unmap_kernel(page: VirtAddr) -> Option<PhysFrame> {
    let _tables = KERNEL_TABLES.lock();
    let (frame, flush) = mapper_for(kernel_l4())
        .unmap(Page::<Size4KiB>::containing_address(page))
        .ok()?;
    flush.flush();
    Some(frame)
}

/// Switches to the kernel's own address space (no user mappings).
pub fn activate_kernel() {
    load_cr3(&Space::kernel());
}

/// Switches to the kernel's own table unless it is loaded already (an
/// idle CPU, arch/smp.rs's shootdowns).
pub fn activate_kernel_if_not() {
    if Cr3::read().0 != kernel_l4() {
        load_cr3(&Space::kernel());
    }
}

/// Loads `space` into CR3, first saying so in this CPU's record: a
/// shootdown (arch/smp.rs) asks exactly the CPUs whose record names the
/// table, and a CPU that writes its record after the asker read it loads
/// CR3 after the change, so it cannot cache the old entries. The record
/// also keeps the space's page-table lock, which `Space::current` hands
/// out. Interrupts are off, so no switch comes between the two.
fn load_cr3(space: &Space) {
    x86_64::instructions::interrupts::without_interrupts(|| {
        let cpu = crate::arch::percpu::this_cpu();
        cpu.loaded_tables()
            .store(space.tables.as_ptr() as u64, Ordering::SeqCst);
        cpu.loaded_l4()
            .store(space.l4.start_address().as_u64(), Ordering::SeqCst);
        // SAFETY: every table loaded here (the kernel's, or an address
        // space's, whose upper half is the kernel's) maps the kernel, so
        // the kernel keeps running.
        unsafe { Cr3::write(space.l4, Cr3Flags::empty()) };
    });
}

/// Builds the page tables an AP starts with (arch/smp.rs) in the four
/// pages at physical `base` (below 1 MiB; the first holds the trampoline
/// code): a level-4 table whose upper half is the kernel's and whose
/// first 2 MiB map themselves, so the trampoline runs on at its own
/// address once paging is on. Returns the level-4 table's address.
pub fn trampoline_tables(base: u64) -> u64 {
    let [l4, l3, l2] =
        [1, 2, 3].map(|i| PhysFrame::containing_address(PhysAddr::new(base + i * 4096)));
    // SAFETY: the three pages are kept out of the frame allocator for this
    // (`frames::trampoline_pages`) and nothing else references them; the
    // kernel's table is only read.
    unsafe {
        let kernel = table(kernel_l4());
        let (root, mid, low) = (table(l4), table(l3), table(l2));
        root.zero();
        mid.zero();
        low.zero();
        for i in 256..512 {
            root[i] = kernel[i].clone();
        }
        let parent = Flags::PRESENT | Flags::WRITABLE;
        root[0].set_frame(l3, parent);
        mid[0].set_frame(l2, parent);
        low[0].set_addr(PhysAddr::new(0), parent | Flags::HUGE_PAGE);
    }
    l4.start_address().as_u64()
}

/// The pages of the loaded address space whose entries one operation
/// changed, for this CPU's TLB: each page's entry is invalidated alone
/// (`invlpg`) up to `FlushBatch::CEILING` pages, and the whole TLB is
/// flushed beyond (Linux's `tlb_single_page_flush_ceiling` is the same 33).
///
/// Why not always flush it all: under QEMU's TCG a full flush is not a
/// constant cost. A CR3 reload empties QEMU's software TLB, which it
/// resizes as it is used, and was measured taking 2 to 80 ms; a fork
/// that reloaded CR3 held the process table that long, and a program
/// forking sixty children spent 650 ms in fork instead of 25 ms. Fork
/// write-protects a few dozen pages of a small parent, which `invlpg`
/// drops one at a time for a few microseconds.
struct FlushBatch {
    pages: [VirtAddr; Self::CEILING],
    len: usize,
    overflowed: bool,
}

impl FlushBatch {
    const CEILING: usize = 33;

    fn new() -> FlushBatch {
        FlushBatch {
            pages: [VirtAddr::zero(); Self::CEILING],
            len: 0,
            overflowed: false,
        }
    }

    /// Notes that `page`'s entry changed (no allocation: the caller may
    /// hold a page-table lock, which ranks below the heap's).
    fn add(&mut self, page: VirtAddr) {
        if self.len < Self::CEILING {
            self.pages[self.len] = page;
            self.len += 1;
        } else {
            self.overflowed = true;
        }
    }

    /// Drops the noted pages' entries from this CPU's TLB.
    fn flush(&self) {
        if self.overflowed {
            x86_64::instructions::tlb::flush_all();
        } else {
            for &page in &self.pages[..self.len] {
                x86_64::instructions::tlb::flush(page);
            }
        }
    }
}

/// Tells the other CPUs that may cache entries of the address space `l4`
/// to flush them (or, `leaving`, to stop using it), and waits.
fn shootdown(l4: PhysFrame, leaving: bool) {
    crate::arch::smp::shootdown(l4.start_address().as_u64(), leaving);
}

/// Marks a user page shared copy-on-write (an available PTE bit): it is
/// mapped read-only, and a write fault gives the writer its own copy.
///
/// The rule every path keeps: a private page whose frame has more than one
/// user is never mapped writable. Fork marks the writable pages of both
/// sides COW; anything that later grants write goes through
/// `Space::protect`, which marks a shared frame COW instead.
pub const COW: Flags = Flags::BIT_9;

/// Marks a page of a `MAP_SHARED` mapping (an available PTE bit): its frame
/// is shared on purpose (with the file it maps and every other mapping of
/// it), so it is exempt from the copy-on-write rule: `protect` grants write
/// as asked and fork gives the child the page as it is, so both keep
/// seeing each other's stores.
pub const SHARED: Flags = Flags::BIT_11;

/// Marks a `PROT_NONE` user page (an available PTE bit). Its entry is kept
/// *not present*, with the frame's address still in it: so the page keeps
/// its frame and contents for a later mprotect, every access faults, from
/// user mode and from the kernel alike, and the user-memory path, which
/// copies first and checks only after a fault (mm/uaccess.rs), cannot read
/// it. (A present entry without the user bit would stop the user, but not
/// the kernel's copy: a supervisor page is the kernel's to read.) Such an
/// entry is "mapped" for everything that owns frames: `translate`,
/// `unmap`, `next_mapped`, fork and the drop of an address space.
pub const NO_ACCESS: Flags = Flags::BIT_10;

/// Whether a level-1 user entry holds a frame: present, or a `NO_ACCESS`
/// page parked not present.
fn holds_frame(flags: Flags) -> bool {
    flags.intersects(Flags::PRESENT | NO_ACCESS)
}

/// Page-table flags for a user page with mmap-style `prot` bits: the one
/// translation from `PROT_*` to rights.
pub fn prot_flags(prot: u32) -> Flags {
    use abi::types::{PROT_EXEC, PROT_READ, PROT_WRITE};
    let mut flags = Flags::PRESENT;
    if prot & (PROT_READ | PROT_WRITE | PROT_EXEC) == 0 {
        flags |= NO_ACCESS;
    }
    if prot & PROT_WRITE != 0 {
        flags |= Flags::WRITABLE;
    }
    if prot & PROT_EXEC == 0 {
        flags |= Flags::NO_EXECUTE;
    }
    flags
}

/// A user page's entry flags: present and user-accessible, or, for a
/// `NO_ACCESS` page, not present at all.
fn user_entry(flags: Flags) -> Flags {
    if flags.contains(NO_ACCESS) {
        flags - Flags::PRESENT - Flags::USER_ACCESSIBLE - Flags::WRITABLE
    } else {
        flags | Flags::PRESENT | Flags::USER_ACCESSIBLE
    }
}

/// The operations on an address space, on its level-4 table. An
/// `AddressSpace` owns one and lends it out (`Deref`); `Space::current()` is
/// whatever CR3 holds (the running process's address space, which cannot be
/// freed while it runs), for the user-memory path and the fault handler. It
/// is neither Copy nor Clone, so no handle outlives the memory it names.
#[derive(Debug, PartialEq, Eq)]
pub struct Space {
    l4: PhysFrame,
    /// The address space's page-table lock (see `TablesLock`): its
    /// `AddressSpace`'s, or `KERNEL_TABLES`. Valid as long as `l4` is.
    tables: NonNull<TablesLock>,
}

impl Space {
    /// The address space the CPU is using now: the one `load_cr3` last
    /// loaded (the kernel's before any was).
    pub fn current() -> Space {
        x86_64::instructions::interrupts::without_interrupts(|| {
            let cpu = crate::arch::percpu::this_cpu();
            let tables = cpu.loaded_tables().load(Ordering::SeqCst) as *mut TablesLock;
            match NonNull::new(tables) {
                Some(tables) => Space {
                    l4: Cr3::read().0,
                    tables,
                },
                None => Space::kernel(),
            }
        })
    }

    /// Takes this address space's page-table lock.
    #[track_caller]
    fn lock_tables(&self) -> IrqGuard<'_, ()> {
        // SAFETY: `tables` lives as long as the address space does (its
        // `AddressSpace` owns it, or it is `KERNEL_TABLES`), and this
        // handle cannot outlive that (see above).
        unsafe { self.tables.as_ref() }.lock()
    }

    /// Maps user page `page` to `frame` (user-accessible unless `flags` has
    /// `NO_ACCESS`). The frame's reference now belongs to this address
    /// space, which releases it when unmapped or dropped.
    pub fn map(&self, page: VirtAddr, frame: PhysFrame, flags: Flags) -> Result<(), MapError> {
        let _tables = self.lock_tables();
        self.map_locked(page, frame, flags)
    }

    /// `map`, for a caller holding the page-table lock.
    fn map_locked(&self, page: VirtAddr, frame: PhysFrame, flags: Flags) -> Result<(), MapError> {
        debug_assert!(page.as_u64() < super::USER_TOP);
        let parents = Flags::PRESENT | Flags::WRITABLE | Flags::USER_ACCESSIBLE;
        map_in(
            self.l4,
            page,
            frame,
            user_entry(flags),
            parents,
            &mut KernelFrames,
        )
    }

    /// Removes the mapping of `page`, giving the frame's reference back to
    /// the caller.
    pub fn unmap(&self, page: VirtAddr) -> Option<PhysFrame> {
        let _tables = self.lock_tables();
        self.unmap_locked(page)
    }

    /// `unmap` for one page of many: only this CPU's TLB is flushed, and
    /// the caller calls `flush_others` once after the last page, before
    /// it releases any of the frames.
    pub fn unmap_batch(&self, page: VirtAddr) -> Option<PhysFrame> {
        let _tables = self.lock_tables();
        self.clear_leaf(page)
    }

    /// The shootdown that ends a batch of `unmap_batch` calls.
    pub fn flush_others(&self) {
        shootdown(self.l4, false);
    }

    /// `unmap`, for a caller holding the page-table lock.
    fn unmap_locked(&self, page: VirtAddr) -> Option<PhysFrame> {
        let frame = self.clear_leaf(page)?;
        shootdown(self.l4, false);
        Some(frame)
    }

    /// Clears `page`'s entry and this CPU's TLB entry for it, returning
    /// the frame it held; other CPUs are the caller's to flush. The caller
    /// holds the page-table lock.
    fn clear_leaf(&self, page: VirtAddr) -> Option<PhysFrame> {
        let entry = self.user_leaf(page)?;
        if !holds_frame(entry.flags()) {
            return None;
        }
        let frame = PhysFrame::containing_address(entry.addr());
        entry.set_unused();
        x86_64::instructions::tlb::flush(page);
        Some(frame)
    }

    /// The level-1 entry for user address `addr`, if the tables above it
    /// exist (the entry itself may be empty). User space has no huge pages.
    #[allow(clippy::mut_from_ref)] // one walk at a time, see `table`
    fn user_leaf(&self, addr: VirtAddr) -> Option<&'static mut PageTableEntry> {
        if addr.as_u64() >= super::USER_TOP {
            return None;
        }
        let mut frame = self.l4;
        for index in [addr.p4_index(), addr.p3_index(), addr.p2_index()] {
            // SAFETY: a table (see `table`) that nothing else references now.
            let entry = &unsafe { table(frame) }[index];
            let flags = entry.flags();
            if !flags.contains(Flags::PRESENT) || flags.contains(Flags::HUGE_PAGE) {
                return None;
            }
            frame = PhysFrame::containing_address(entry.addr());
        }
        // SAFETY: a table (see `table`) that nothing else references now.
        Some(&mut unsafe { table(frame) }[addr.p1_index()])
    }

    /// The first page in `[from, end)` (user addresses) that a 4 KiB page
    /// maps. Empty tables are skipped whole (512 GiB, 1 GiB, 2 MiB at a
    /// time), so a walk over a huge, mostly empty range costs what is mapped,
    /// not what was asked for: `munmap(0, 2^47)` must not take hours.
    pub fn next_mapped(&self, from: u64, end: u64) -> Option<u64> {
        /// The start of the next region of `size` bytes after `at`.
        fn next_region(at: u64, size: u64) -> u64 {
            (at | (size - 1)).saturating_add(1)
        }
        let mut at = from & !0xfff;
        while at < end && at < super::USER_TOP {
            let va = VirtAddr::new(at);
            // SAFETY: a table (see `table`) that nothing else references now.
            let e4 = &unsafe { table(self.l4) }[va.p4_index()];
            if !e4.flags().contains(Flags::PRESENT) {
                at = next_region(at, 1 << 39);
                continue;
            }
            // SAFETY: a table (see `table`) that nothing else references now.
            let e3 = &unsafe { table(PhysFrame::containing_address(e4.addr())) }[va.p3_index()];
            if !e3.flags().contains(Flags::PRESENT) || e3.flags().contains(Flags::HUGE_PAGE) {
                at = next_region(at, 1 << 30);
                continue;
            }
            // SAFETY: a table (see `table`) that nothing else references now.
            let e2 = &unsafe { table(PhysFrame::containing_address(e3.addr())) }[va.p2_index()];
            if !e2.flags().contains(Flags::PRESENT) || e2.flags().contains(Flags::HUGE_PAGE) {
                at = next_region(at, 1 << 21);
                continue;
            }
            // SAFETY: a table (see `table`) that nothing else references now.
            let e1 = &unsafe { table(PhysFrame::containing_address(e2.addr())) }[va.p1_index()];
            if holds_frame(e1.flags()) {
                return Some(at);
            }
            at += 0x1000;
        }
        None
    }

    /// Gives the mapped user page `page` the rights `flags` (from
    /// `prot_flags`), keeping the copy-on-write rule (see `COW`): write on a
    /// private page whose frame has another user is granted as COW, so the
    /// first write gives this page its own copy; a `SHARED` page stays
    /// shared. mprotect's one way to change rights.
    pub fn protect(&self, page: VirtAddr, flags: Flags) -> bool {
        let _tables = self.lock_tables();
        let Some((phys, old)) = self.translate(page) else {
            return false;
        };
        let flags = flags | (old & SHARED);
        let has_users = frames::users(PhysFrame::containing_address(phys)) > 1;
        let flags = if flags.contains(Flags::WRITABLE) && has_users && !flags.contains(SHARED) {
            (flags - Flags::WRITABLE) | COW
        } else {
            flags
        };
        self.set_flags_locked(page, flags)
    }

    /// Resolves a write to the copy-on-write page holding `addr`: a frame
    /// this page alone uses just becomes writable; a shared one is copied
    /// into a fresh frame for this page. Ok as well if the page is
    /// writable already (another CPU broke it first); EFAULT if it is
    /// neither.
    // Never inlined: docs/gdb.md's `cow` helper stops here when a user
    // fault is the caller, and an inlined copy in `user_fault` has no
    // breakpoint (whether the compiler inlines it changes from build to
    // build).
    #[inline(never)]
    pub fn break_cow(&self, addr: u64) -> Result<(), abi::Errno> {
        use abi::Errno;
        let page = VirtAddr::new(super::page_down(addr));
        let _tables = self.lock_tables();
        let (phys, flags) = self.translate(page).ok_or(Errno::EFAULT)?;
        if !flags.contains(COW) {
            let writable = flags.contains(Flags::WRITABLE) && !flags.contains(NO_ACCESS);
            return if writable { Ok(()) } else { Err(Errno::EFAULT) };
        }
        let writable = (flags - COW) | Flags::WRITABLE;
        let old = PhysFrame::containing_address(phys);
        if frames::users(old) == 1 {
            self.set_flags_locked(page, writable);
            return Ok(());
        }
        let new = frames::alloc_user_copy(old)?;
        // The entry is rewritten in place: the tables above it stay, and
        // no CPU may keep the old translation once it is let go.
        let entry = self.user_leaf(page).ok_or(Errno::EFAULT)?;
        entry.set_addr(new.start_address(), user_entry(writable));
        x86_64::instructions::tlb::flush(page);
        shootdown(self.l4, false);
        frames::release(old);
        Ok(())
    }

    /// Replaces the flags of the mapped user page `page` as they are: the
    /// caller keeps the copy-on-write rule (`protect` does).
    /// The caller holds the page-table lock.
    fn set_flags_locked(&self, page: VirtAddr, flags: Flags) -> bool {
        let Some(entry) = self.user_leaf(page) else {
            return false;
        };
        if !holds_frame(entry.flags()) {
            return false;
        }
        entry.set_flags(user_entry(flags));
        x86_64::instructions::tlb::flush(page);
        shootdown(self.l4, false);
        true
    }

    /// The physical address and flags mapping `addr`, if a 4 KiB page maps
    /// it; for a user page that includes a `NO_ACCESS` one (not present,
    /// still holding its frame), whose flags say so.
    pub fn translate(&self, addr: VirtAddr) -> Option<(PhysAddr, Flags)> {
        if addr.as_u64() < super::USER_TOP {
            let entry = self.user_leaf(addr)?;
            let flags = entry.flags();
            return holds_frame(flags).then(|| (entry.addr() + (addr.as_u64() & 0xfff), flags));
        }
        match mapper_for(self.l4).translate(addr) {
            TranslateResult::Mapped {
                frame,
                offset,
                flags,
            } => Some((frame.start_address() + offset, flags)),
            _ => None,
        }
    }

    /// Makes this the address space the CPU uses.
    pub fn activate(&self) {
        if Cr3::read().0 != self.l4 {
            load_cr3(self);
        }
    }

    pub fn is_active(&self) -> bool {
        Cr3::read().0 == self.l4
    }

    /// A number that names this address space for as long as it lives
    /// (its root table's address): what a futex key is made of.
    pub fn id(&self) -> u64 {
        self.l4.start_address().as_u64()
    }

    /// Visits every table below the root in the user half as (its level:
    /// 3, 2 or 1; the address its first entry maps; its frame), each
    /// table before the ones below it. The walk reads the upper levels
    /// without the page-table lock: tables are freed only with the address
    /// space, and an entry that another CPU fills meanwhile is read whole
    /// (one aligned word), before or after.
    fn for_each_table(&self, mut visit: impl FnMut(u8, u64, PhysFrame)) {
        let present = |e: &PageTableEntry| {
            let flags = e.flags();
            flags.contains(Flags::PRESENT) && !flags.contains(Flags::HUGE_PAGE)
        };
        // SAFETY: a table (see `table`), only read here.
        for (i4, e4) in unsafe { table(self.l4) }.iter().take(256).enumerate() {
            if !present(e4) {
                continue;
            }
            let l3 = PhysFrame::containing_address(e4.addr());
            visit(3, (i4 << 39) as u64, l3);
            // SAFETY: a table (see `table`), only read here.
            for (i3, e3) in unsafe { table(l3) }.iter().enumerate() {
                if !present(e3) {
                    continue;
                }
                let l2 = PhysFrame::containing_address(e3.addr());
                visit(2, ((i4 << 39) | (i3 << 30)) as u64, l2);
                // SAFETY: a table (see `table`), only read here.
                for (i2, e2) in unsafe { table(l2) }.iter().enumerate() {
                    if present(e2) {
                        let base = (i4 << 39) | (i3 << 30) | (i2 << 21);
                        visit(1, base as u64, PhysFrame::containing_address(e2.addr()));
                    }
                }
            }
        }
    }

    /// Visits every level-1 table of the user half as (the address its
    /// first entry maps, its frame); see `for_each_table`.
    fn for_each_leaf_table(&self, mut visit: impl FnMut(u64, PhysFrame)) {
        self.for_each_table(|level, base, frame| {
            if level == 1 {
                visit(base, frame)
            }
        });
    }

    /// Frames of the user half's page tables below the root: what the
    /// address space costs beyond its pages (Linux's VmPTE, which leaves
    /// out the root table too). They are made as pages are first mapped
    /// and kept until the address space goes.
    pub fn table_frames(&self) -> u64 {
        let mut frames = 0;
        self.for_each_table(|_, _, _| frames += 1);
        frames
    }

    /// A copy-on-write copy of this address space's user half: every
    /// writable page becomes read-only + COW in both, and each frame gains a
    /// user. None when out of memory (the partial copy is freed).
    ///
    /// The page-table lock is held for one level-1 table at a time (512
    /// entries), not for the whole walk: a large parent would otherwise
    /// keep its CPU's interrupts off, and every other thread of the parent
    /// waiting, for as long as the copy takes. Another thread of the parent
    /// may meanwhile fault in or unmap pages in tables not yet copied, and
    /// the child gets the table as the copy finds it, as a fork a moment
    /// later would. The child needs no lock: no other CPU can reach it yet.
    pub fn fork_cow(&self) -> Option<AddressSpace> {
        let child = AddressSpace::new()?;
        super::areas::create(child.id(), Some(self.id()));
        let mut failed = false;
        let mut protected = FlushBatch::new();
        self.for_each_leaf_table(|base, l1| {
            if failed {
                return;
            }
            let _tables = self.lock_tables();
            // SAFETY: a table (see `table`), under its space's lock.
            for (i1, entry) in unsafe { table(l1) }.iter_mut().enumerate() {
                let mut flags = entry.flags();
                if !holds_frame(flags) {
                    continue;
                }
                let addr = VirtAddr::new(base + ((i1 as u64) << 12));
                if flags.contains(Flags::WRITABLE) && !flags.contains(SHARED) {
                    flags = (flags - Flags::WRITABLE) | COW;
                    entry.set_flags(flags);
                    protected.add(addr);
                }
                let frame = PhysFrame::containing_address(entry.addr());
                frames::share(frame);
                if child.map_locked(addr, frame, flags).is_err() {
                    frames::release(frame);
                    failed = true;
                    return;
                }
            }
        });
        if self.is_active() {
            protected.flush();
        }
        // Other threads of this process, on other CPUs, must not go on
        // writing through entries cached before the write protection.
        shootdown(self.l4, false);
        if failed { None } else { Some(child) }
    }

    /// Writes `bytes` at user address `addr` of this (possibly inactive)
    /// address space as a user write would: only into pages the user may
    /// write, filling a page on demand (mm/areas.rs) and breaking
    /// copy-on-write first. clone's CLONE_CHILD_SETTID writes into a new
    /// child's copy this way. EFAULT where the user could not write.
    pub fn write_user(&self, addr: u64, bytes: &[u8]) -> Result<(), abi::Errno> {
        use abi::Errno;
        let end = addr
            .checked_add(bytes.len() as u64)
            .filter(|&end| end <= super::USER_TOP)
            .ok_or(Errno::EFAULT)?;
        let mut page = super::page_down(addr);
        while page < end {
            if self.translate(VirtAddr::new(page)).is_none() {
                super::areas::fault_in(self, page, true)?;
            }
            let (_, flags) = self.translate(VirtAddr::new(page)).ok_or(Errno::EFAULT)?;
            if !flags.contains(Flags::USER_ACCESSIBLE) || flags.contains(NO_ACCESS) {
                return Err(Errno::EFAULT);
            }
            if flags.contains(COW) {
                self.break_cow(page)?;
            } else if !flags.contains(Flags::WRITABLE) {
                return Err(Errno::EFAULT);
            }
            page += super::PAGE_SIZE;
        }
        self.write_bytes(addr, bytes).map_err(|_| Errno::EFAULT)
    }

    /// Copies `bytes` to user address `addr` of this (possibly inactive)
    /// address space through the physical window; used by exec to fill a new
    /// image. Fails if a page is not mapped.
    pub fn write_bytes(&self, addr: u64, bytes: &[u8]) -> Result<(), MapError> {
        let mut done = 0;
        while done < bytes.len() {
            let at = addr + done as u64;
            let (phys, _) = self
                .translate(VirtAddr::new(at))
                .ok_or(MapError::NotMapped)?;
            let room = (super::PAGE_SIZE - at % super::PAGE_SIZE) as usize;
            let n = room.min(bytes.len() - done);
            // SAFETY: `phys` is a frame of this address space, reached
            // through the physical window, and `n` stays within its page.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    bytes[done..].as_ptr(),
                    phys_to_virt(phys).as_mut_ptr::<u8>(),
                    n,
                )
            };
            done += n;
        }
        Ok(())
    }
}

/// One level of a walk: the table at `frame` covers `level` (4 = the root),
/// reached through parents whose combined rights were `writable` and
/// `executable`.
fn walk_table(
    frame: PhysFrame,
    level: u8,
    base: u64,
    entries: core::ops::Range<usize>,
    (writable, executable): (bool, bool),
    visit: &mut impl FnMut(Mapping),
) {
    let span = 1u64 << (12 + 9 * (u32::from(level) - 1));
    for i in entries {
        // SAFETY: a table (see `table`) that nothing else references now.
        let entry = &unsafe { table(frame) }[i];
        let flags = entry.flags();
        if !flags.contains(Flags::PRESENT) {
            continue;
        }
        // Sign-extend: the upper half starts at 0xffff_8000_0000_0000.
        let virt = VirtAddr::new_truncate(base + i as u64 * span).as_u64();
        let rights = (
            writable && flags.contains(Flags::WRITABLE),
            executable && !flags.contains(Flags::NO_EXECUTE),
        );
        if level == 1 || (level <= 3 && flags.contains(Flags::HUGE_PAGE)) {
            visit(Mapping {
                virt,
                phys: entry.addr().as_u64(),
                len: span,
                writable: rights.0,
                executable: rights.1,
            });
        } else {
            let child = PhysFrame::containing_address(entry.addr());
            walk_table(child, level - 1, virt, 0..512, rights, visit);
        }
    }
}

impl Space {
    /// The kernel's own address space: the page table the bootloader built,
    /// whose upper half every process shares.
    pub fn kernel() -> Space {
        Space {
            l4: kernel_l4(),
            tables: NonNull::from(&KERNEL_TABLES),
        }
    }

    /// Visits every mapping in the user half (`kernel` false) or the whole
    /// address space, with the rights that hold once every level's flags
    /// are combined (writable only if every level allows writes, executable
    /// unless some level forbids it). 4 KiB, 2 MiB and 1 GiB pages alike.
    pub fn for_each_mapping(&self, kernel: bool, mut visit: impl FnMut(Mapping)) {
        let entries = if kernel { 0..512 } else { 0..256 };
        walk_table(self.l4, 4, 0, entries, (true, true), &mut visit);
    }
}

/// A process's address space: a `Space` that owns its user half and its
/// page-table lock, and frees both when dropped.
pub struct AddressSpace {
    space: Space,
    /// The lock `space.tables` points at (boxed: it stays put when the
    /// `AddressSpace` moves).
    _tables: Box<TablesLock>,
}

// SAFETY: the only thing that is not Send in an address space is the
// pointer to its own page-table lock, an `IrqLock` (made for sharing
// between CPUs) that the `AddressSpace` owns and takes with it.
unsafe impl Send for AddressSpace {}

impl AddressSpace {
    /// An empty user half over the shared kernel half; None when out of memory.
    pub fn new() -> Option<AddressSpace> {
        let l4 = frames::alloc()?;
        // SAFETY: a table (see `table`) that nothing else references now.
        let kernel = unsafe { table(kernel_l4()) };
        // SAFETY: a table (see `table`) that nothing else references now.
        let new = unsafe { table(l4) };
        for i in 256..512 {
            new[i] = kernel[i].clone();
        }
        let tables = Box::new(IrqLock::new(Rank::PageTables, ()));
        let space = AddressSpace {
            space: Space {
                l4,
                tables: NonNull::from(&*tables),
            },
            _tables: tables,
        };
        super::areas::create(space.id(), None);
        Some(space)
    }
}

impl core::ops::Deref for AddressSpace {
    type Target = Space;
    fn deref(&self) -> &Space {
        &self.space
    }
}

/// Releases every frame below `level` and the table frames themselves.
fn free_table(frame: PhysFrame, level: u8) {
    // SAFETY: a table (see `table`) that nothing else references now.
    for entry in unsafe { table(frame) }.iter() {
        let holds = if level > 1 {
            entry.flags().contains(Flags::PRESENT)
        } else {
            holds_frame(entry.flags())
        };
        if !holds {
            continue;
        }
        let child = PhysFrame::containing_address(entry.addr());
        if level > 1 {
            free_table(child, level - 1);
        } else {
            frames::release(child);
        }
    }
    frames::release(frame);
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        if self.is_active() {
            activate_kernel();
        }
        // A CPU that last ran one of its threads may still have it loaded.
        shootdown(self.space.l4, true);
        // SAFETY: a table (see `table`) that nothing else references now.
        for entry in unsafe { table(self.space.l4) }.iter().take(256) {
            if entry.flags().contains(Flags::PRESENT) {
                free_table(PhysFrame::containing_address(entry.addr()), 3);
            }
        }
        super::areas::destroy(self.id());
        frames::release(self.space.l4);
    }
}
