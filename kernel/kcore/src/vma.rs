//! The areas of a user address space: which ranges are mapped, with what
//! rights and for what, kept apart from the page tables.
//!
//! Page tables say what the MMU may do with a page that is there; they cannot
//! say "this range is taken" for pages not (yet) there, such as a 64 TiB
//! `PROT_NONE` reservation, and walking them to find a free range is slow.
//! So, as Linux keeps its VMAs beside the page tables, the kernel keeps one
//! `Area` per run of pages with the same rights and purpose, and asks this
//! map where a new mapping may go, what `munmap` and `mprotect` cut, and what
//! a fault address belongs to.
//!
//! The structure is an ordered map from an area's start to its end and
//! attributes (alloc's B-tree): finding the area of an address, inserting and
//! removing are O(log n) in the number of areas. Neighbours with the same
//! attributes are merged, so a program that maps a thousand blocks back to
//! back holds one area, not a thousand. A free range is found top-down, as
//! Linux does: the walk goes down from the top of the mmap region through
//! areas until a gap is large enough, so its cost is the number of areas
//! above the first gap that fits. Linux's maple tree keeps the largest gap of
//! every subtree to make that O(log n) too; with merging, a teaching kernel's
//! processes do not need it (the map/unmap loops in the tests measure it).
//!
//! Addresses are page-aligned byte addresses and every range is half-open,
//! `[start, end)`; callers check alignment and bounds before calling.
//!
//! A file mapping names its file with the kernel's handle, `F` (here only
//! compared and cloned), and its place in the file by `base`, the file
//! offset that address 0 would have: the page at `addr` holds the file's
//! bytes from `base + addr`. So cutting an area in two needs no arithmetic
//! (both pieces keep the base, as Linux adjusts `vm_pgoff` on a split), and
//! two neighbours merge exactly when they map the file contiguously.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// What an area is for (shown by `/proc/PID/maps`-style listings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind<F> {
    /// The heap, grown and shrunk by brk(2).
    Heap,
    /// The main thread's stack.
    Stack,
    /// An anonymous mmap(2) area.
    Anonymous,
    /// An anonymous private mmap(2) area made with MAP_GROWSDOWN: a touch
    /// in the free space below it grows it down (`Areas::grow_down`), as a
    /// stack, to at most `most` bytes (the RLIMIT_STACK it was made with).
    GrowsDown { most: u64 },
    /// An mmap(2) of a file (or of shared anonymous memory, which is a
    /// file with no name, as Linux's).
    File(FileMap<F>),
}

/// Which file an area maps, from where, and whether stores reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMap<F> {
    pub file: F,
    /// The file offset of address 0 (wrapping): see the top of this file.
    pub base: u64,
    /// `MAP_SHARED`: stores go to the file and every mapping of it sees
    /// them; otherwise the area's pages are copied at the first store.
    pub shared: bool,
}

impl<F> FileMap<F> {
    /// `file` mapped at `start` from file offset `offset`.
    pub fn new(file: F, start: u64, offset: u64, shared: bool) -> FileMap<F> {
        FileMap {
            file,
            base: offset.wrapping_sub(start),
            shared,
        }
    }

    /// The file offset the byte at `addr` maps.
    pub fn offset_of(&self, addr: u64) -> u64 {
        self.base.wrapping_add(addr)
    }
}

/// The attributes of an area: its `PROT_*` rights, its kind, and
/// whether fork's child gets it empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Area<F> {
    pub prot: u32,
    pub kind: Kind<F>,
    /// madvise's MADV_WIPEONFORK (private anonymous memory only): the
    /// child of a fork gets the area with none of its pages, so it reads
    /// zeros, as a fresh mapping would. Cleared by MADV_KEEPONFORK; exec
    /// starts a new address space without it.
    pub wipe_on_fork: bool,
}

/// One area with its range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range<F> {
    pub start: u64,
    pub end: u64,
    pub area: Area<F>,
}

impl<F> Area<F> {
    /// An area with rights `prot` for `kind`, copied by fork.
    pub fn new(prot: u32, kind: Kind<F>) -> Area<F> {
        Area {
            prot,
            kind,
            wipe_on_fork: false,
        }
    }

    /// Whether `RLIMIT_DATA` counts this area (Linux's `is_data_mapping`:
    /// writable, private, not the stack).
    pub fn is_data(&self) -> bool {
        self.prot & abi::types::PROT_WRITE != 0
            && !self.is_shared()
            && !matches!(self.kind, Kind::Stack)
    }

    /// The same area moved from `from` to `to` (mremap): a file area maps
    /// at `to` what it mapped at `from`.
    pub fn moved(&self, from: u64, to: u64) -> Area<F>
    where
        F: Clone,
    {
        let kind = match &self.kind {
            Kind::File(map) => Kind::File(FileMap {
                base: map.offset_of(from).wrapping_sub(to),
                ..map.clone()
            }),
            other => other.clone(),
        };
        Area {
            prot: self.prot,
            kind,
            wipe_on_fork: self.wipe_on_fork,
        }
    }

    /// Whether stores to it reach a file that others may map.
    pub fn is_shared(&self) -> bool {
        matches!(&self.kind, Kind::File(map) if map.shared)
    }
}

/// Bytes in areas: all of them (what `RLIMIT_AS` limits) and the data
/// areas among them (what `RLIMIT_DATA` limits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub total: u64,
    pub data: u64,
}

impl Usage {
    /// What `len` bytes of `area` count for.
    pub fn of<F>(area: &Area<F>, len: u64) -> Usage {
        Usage {
            total: len,
            data: if area.is_data() { len } else { 0 },
        }
    }

    /// `self` less `other`, each sum at least 0.
    pub fn less(self, other: Usage) -> Usage {
        Usage {
            total: self.total.saturating_sub(other.total),
            data: self.data.saturating_sub(other.data),
        }
    }

    fn add(&mut self, more: Usage) {
        self.total += more.total;
        self.data += more.data;
    }

    fn sub(&mut self, less: Usage) {
        self.total -= less.total;
        self.data -= less.data;
    }
}

/// The areas of one address space, never overlapping.
#[derive(Clone, Debug)]
pub struct Areas<F> {
    /// start -> (end, attributes).
    map: BTreeMap<u64, (u64, Area<F>)>,
    /// Kept by `insert` and `remove`, so the limit checks cost nothing.
    usage: Usage,
}

impl<F: Clone + PartialEq> Default for Areas<F> {
    fn default() -> Self {
        Areas::new()
    }
}

impl<F: Clone + PartialEq> Areas<F> {
    pub const fn new() -> Areas<F> {
        Areas {
            map: BTreeMap::new(),
            usage: Usage { total: 0, data: 0 },
        }
    }

    /// Bytes in all areas and in data areas.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Bytes of `[start, end)` that areas hold, all and data.
    pub fn usage_in(&self, start: u64, end: u64) -> Usage {
        let mut usage = Usage::default();
        for r in self.overlapping(start, end) {
            usage.add(Usage::of(&r.area, r.end.min(end) - r.start.max(start)));
        }
        usage
    }

    /// Every area, in address order.
    pub fn iter(&self) -> impl Iterator<Item = Range<F>> + '_ {
        self.map.iter().map(|(&start, (end, area))| Range {
            start,
            end: *end,
            area: area.clone(),
        })
    }

    /// How many areas there are.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The area that contains `addr`, if any.
    pub fn find(&self, addr: u64) -> Option<Range<F>> {
        let (&start, (end, area)) = self.map.range(..=addr).next_back()?;
        (addr < *end).then(|| Range {
            start,
            end: *end,
            area: area.clone(),
        })
    }

    /// The areas that overlap `[start, end)`, in address order.
    fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = Range<F>> + '_ {
        // The area that begins before `start` may reach into the range.
        let before = self
            .map
            .range(..start)
            .next_back()
            .filter(|(_, (e, _))| *e > start);
        before
            .into_iter()
            .chain(self.map.range(start..end))
            .map(|(&start, (end, area))| Range {
                start,
                end: *end,
                area: area.clone(),
            })
    }

    /// Whether any page of `[start, end)` belongs to an area.
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        self.overlapping(start, end).next().is_some()
    }

    /// Whether an area overlapping `[start, end)` satisfies `test`.
    pub fn any_in(&self, start: u64, end: u64, test: impl Fn(&Area<F>) -> bool) -> bool {
        self.overlapping(start, end).any(|r| test(&r.area))
    }

    /// Whether every page of `[start, end)` belongs to some area.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        for r in self.overlapping(start, end) {
            if r.start > at {
                return false;
            }
            at = r.end;
            if at >= end {
                return true;
            }
        }
        at >= end
    }

    /// Adds `[start, end)` with `area`, merging with neighbours that have
    /// the same attributes. The range must be free (`overlaps` is false).
    pub fn insert(&mut self, start: u64, end: u64, area: Area<F>) {
        debug_assert!(start < end && !self.overlaps(start, end));
        self.usage.add(Usage::of(&area, end - start));
        let (mut start, mut end) = (start, end);
        if let Some((&s, (e, a))) = self.map.range(..start).next_back()
            && *e == start
            && *a == area
        {
            self.map.remove(&s);
            start = s;
        }
        if let Some((e, a)) = self.map.get(&end)
            && *a == area
        {
            let e = *e;
            self.map.remove(&end);
            end = e;
        }
        self.map.insert(start, (end, area));
    }

    /// A touch at `addr`, which no area holds: if the area above it grows
    /// down (`Kind::GrowsDown`), it takes the pages from `addr`'s up to its
    /// start and this returns true, as Linux's `expand_downwards`. Not
    /// below `min_addr`, nor past the area's `most` bytes, nor to within
    /// `guard_gap` bytes of the area below, unless that one grows down too
    /// or allows no access (Linux's `stack_guard_gap` rule: a stack never
    /// grows into a guard that keeps it from the mapping under it).
    pub fn grow_down(&mut self, addr: u64, guard_gap: u64, min_addr: u64) -> bool {
        const PAGE: u64 = 4096;
        let page = addr & !(PAGE - 1);
        if page < min_addr || self.find(addr).is_some() {
            return false;
        }
        let Some((&start, (end, area))) = self.map.range(page..).next() else {
            return false;
        };
        let Kind::GrowsDown { most } = area.kind else {
            return false;
        };
        if end - page > most {
            return false;
        }
        if let Some((_, (below_end, below))) = self.map.range(..start).next_back() {
            let guarded = !matches!(below.kind, Kind::GrowsDown { .. }) && below.prot != 0;
            if guarded && page - below_end < guard_gap {
                return false;
            }
        }
        let area = area.clone();
        self.insert(page, start, area);
        true
    }

    /// Takes `[start, end)` out of the areas, cutting the areas at its
    /// edges in two; returns the pieces taken, in address order.
    pub fn remove(&mut self, start: u64, end: u64) -> Vec<Range<F>> {
        let taken: Vec<Range<F>> = self.overlapping(start, end).collect();
        for r in &taken {
            self.map.remove(&r.start);
            if r.start < start {
                self.map.insert(r.start, (start, r.area.clone()));
            }
            if r.end > end {
                self.map.insert(end, (r.end, r.area.clone()));
            }
        }
        let taken: Vec<Range<F>> = taken
            .into_iter()
            .map(|r| Range {
                start: r.start.max(start),
                end: r.end.min(end),
                area: r.area,
            })
            .collect();
        for r in &taken {
            self.usage.sub(Usage::of(&r.area, r.end - r.start));
        }
        taken
    }

    /// Gives every area in `[start, end)` the rights `prot`, cutting areas
    /// at the edges; returns the pieces with their old attributes. The range
    /// must be covered (`covers`).
    pub fn protect(&mut self, start: u64, end: u64, prot: u32) -> Vec<Range<F>> {
        let old = self.remove(start, end);
        for r in &old {
            let area = Area {
                prot,
                ..r.area.clone()
            };
            self.insert(r.start, r.end, area);
        }
        old
    }

    /// madvise's MADV_WIPEONFORK (`wipe`) and MADV_KEEPONFORK over the
    /// areas in `[start, end)`, cutting them at the edges; the parts of the
    /// range no area holds are the caller's to report. EINVAL, with nothing
    /// changed, for MADV_WIPEONFORK over a file or shared memory (Linux
    /// allows it on private anonymous memory only).
    pub fn set_wipe_on_fork(&mut self, start: u64, end: u64, wipe: bool) -> Result<(), abi::Errno> {
        if wipe && self.any_in(start, end, |a| matches!(a.kind, Kind::File(_))) {
            return Err(abi::Errno::EINVAL);
        }
        for r in self.remove(start, end) {
            let area = Area {
                wipe_on_fork: wipe,
                ..r.area
            };
            self.insert(r.start, r.end, area);
        }
        Ok(())
    }

    /// The highest `start` with `[start, start + len)` free and inside
    /// `[low, high)`: where a mapping without a usable hint goes.
    pub fn find_gap(&self, len: u64, low: u64, high: u64) -> Option<u64> {
        if len == 0 || high.checked_sub(low)? < len {
            return None;
        }
        // `top` is the end of the free run being looked at.
        let mut top = high;
        for (&s, &(e, _)) in self.map.range(..high).rev() {
            if e < top && top - e >= len {
                return Some(top - len).filter(|&at| at >= low);
            }
            top = top.min(s);
            if top < low.saturating_add(len) {
                return None;
            }
        }
        (top - low >= len).then(|| top - len)
    }
}

/// What madvise(2) is asked to do with a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Advice about the future (access pattern, huge pages, merging, core
    /// dumps, swapping out): nothing here acts on it, and taking it as
    /// said is what Linux does too where it has nothing to act with.
    Hint,
    /// MADV_DONTNEED, MADV_FREE: the pages go; the next touch finds them
    /// as a fresh mapping would.
    Drop,
    /// MADV_WILLNEED, MADV_POPULATE_READ, MADV_POPULATE_WRITE: the pages
    /// are filled now.
    Populate,
    /// MADV_WIPEONFORK (true) and MADV_KEEPONFORK (false): whether fork's
    /// child gets the range empty (`Area::wipe_on_fork`).
    WipeOnFork(bool),
}

/// madvise's `advice`, as Linux's `madvise_behavior_valid` reads it.
/// EINVAL for what Linux does not know, and for what this kernel does
/// not do: MADV_REMOVE (punching holes in a file) and the memory-failure
/// injections MADV_HWPOISON and MADV_SOFT_OFFLINE (as a Linux built
/// without CONFIG_MEMORY_FAILURE does).
pub fn advice(value: u32) -> Result<Advice, abi::Errno> {
    use abi::types::*;
    match value {
        MADV_DONTNEED | MADV_FREE => Ok(Advice::Drop),
        MADV_WILLNEED | MADV_POPULATE_READ | MADV_POPULATE_WRITE => Ok(Advice::Populate),
        MADV_WIPEONFORK => Ok(Advice::WipeOnFork(true)),
        MADV_KEEPONFORK => Ok(Advice::WipeOnFork(false)),
        MADV_REMOVE | MADV_HWPOISON | MADV_SOFT_OFFLINE => Err(abi::Errno::EINVAL),
        // NORMAL, RANDOM, SEQUENTIAL; DONTFORK, DOFORK, MERGEABLE,
        // UNMERGEABLE, HUGEPAGE, NOHUGEPAGE, DONTDUMP, DODUMP; COLD,
        // PAGEOUT; DONTNEED_LOCKED (24, a drop of locked pages, and no
        // page is ever locked out of reach here); COLLAPSE.
        MADV_NORMAL..=2 | 10..=17 | 20 | 21 | 24 | MADV_COLLAPSE => Ok(Advice::Hint),
        _ => Err(abi::Errno::EINVAL),
    }
}

/// How the descriptor an mmap call maps was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenedFor {
    pub read: bool,
    pub write: bool,
}

/// mmap(2)'s checks of its arguments, in the order Linux's `do_mmap` makes
/// them, so that a call with more than one thing wrong gets Linux's error:
/// a zero length (EINVAL); a length past the address space, `user_top`
/// (ENOMEM); a MAP_FIXED address not page-aligned (EINVAL); a file range
/// past the largest file offset (EOVERFLOW); then the mapping type, which
/// must be MAP_PRIVATE, MAP_SHARED or, for a file, MAP_SHARED_VALIDATE
/// (EINVAL), the last refusing flags outside `MAP_LEGACY_FLAGS`
/// (EOPNOTSUPP: MAP_SYNC needs a DAX device, which nothing here is), and
/// shared anonymous memory may not grow down (EINVAL); last the
/// descriptor's mode (EACCES unless open for reading, and for
/// writing too if a shared mapping may store). Two checks come before
/// these and are the caller's (the offset's alignment, then the
/// descriptor), and two after (whether the address space has room, and
/// whether the file has pages to map, ENODEV). Unknown protection bits are
/// not refused: Linux ignores them. Returns whether the mapping is shared.
pub fn check_mmap(
    addr: u64,
    len: u64,
    flags: u32,
    prot: u32,
    offset: u64,
    file: Option<OpenedFor>,
    user_top: u64,
) -> Result<bool, abi::Errno> {
    use abi::Errno;
    use abi::types::*;
    const PAGE: u64 = 4096;
    if len == 0 {
        return Err(Errno::EINVAL);
    }
    let pages_len = len
        .checked_next_multiple_of(PAGE)
        .filter(|&l| l <= user_top)
        .ok_or(Errno::ENOMEM)?;
    if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 && !addr.is_multiple_of(PAGE) {
        return Err(Errno::EINVAL);
    }
    if file.is_some()
        && offset
            .checked_add(pages_len)
            .is_none_or(|end| end > i64::MAX as u64)
    {
        return Err(Errno::EOVERFLOW);
    }
    let shared = match flags & MAP_TYPE {
        MAP_SHARED => true,
        MAP_SHARED_VALIDATE if file.is_some() => {
            if flags & !MAP_LEGACY_FLAGS != 0 {
                return Err(Errno::EOPNOTSUPP);
            }
            true
        }
        MAP_PRIVATE => false,
        _ => return Err(Errno::EINVAL),
    };
    if file.is_none() && shared && flags & MAP_GROWSDOWN != 0 {
        return Err(Errno::EINVAL);
    }
    if let Some(opened) = file
        && (!opened.read || shared && prot & PROT_WRITE != 0 && !opened.write)
    {
        return Err(Errno::EACCES);
    }
    Ok(shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grows_down_area_grows_into_free_space_but_not_into_the_guard_gap() {
        const P: u64 = 4096;
        let grows = |most| Area::new(3, Kind::<u32>::GrowsDown { most });
        let anon = Area::new(3, Kind::<u32>::Anonymous);
        let mut a = Areas::new();
        a.insert(1000 * P, 1001 * P, anon.clone());
        a.insert(1300 * P, 1301 * P, grows(20 * P));
        // Ten pages below: the area takes them all, in one piece.
        assert!(a.grow_down(1290 * P + 5, 256 * P, 16 * P));
        assert_eq!(
            a.find(1290 * P).map(|r| (r.start, r.end)),
            Some((1290 * P, 1301 * P))
        );
        assert_eq!(a.usage().total, 12 * P);
        // Not past `most` (20 pages), and never for an address held already.
        assert!(!a.grow_down(1280 * P, 256 * P, 16 * P));
        assert!(a.grow_down(1281 * P, 256 * P, 16 * P));
        assert!(!a.grow_down(1290 * P, 256 * P, 16 * P));
        // The guard gap: 256 pages above the mapping below at the least.
        let mut b = Areas::new();
        b.insert(1000 * P, 1001 * P, anon.clone());
        b.insert(1300 * P, 1301 * P, grows(400 * P));
        assert!(!b.grow_down(1256 * P, 256 * P, 16 * P));
        assert!(b.grow_down(1257 * P, 256 * P, 16 * P));
        // ... unless the mapping below allows no access, or grows down too.
        let mut c = Areas::new();
        c.insert(
            1000 * P,
            1001 * P,
            Area {
                prot: 0,
                ..anon.clone()
            },
        );
        c.insert(1300 * P, 1301 * P, grows(400 * P));
        assert!(c.grow_down(1001 * P, 256 * P, 16 * P));
        // Below `min_addr` and under an ordinary area: no.
        let mut d = Areas::new();
        d.insert(20 * P, 21 * P, grows(400 * P));
        d.insert(500 * P, 501 * P, anon);
        assert!(!d.grow_down(15 * P, 256 * P, 16 * P));
        assert!(!d.grow_down(499 * P, 256 * P, 16 * P));
    }

    /// The cases of tests/musl/mmapcheck.c that need no address space,
    /// with the errors Linux 6.18 gave them.
    #[test]
    fn mmap_checks_come_in_linuxs_order() {
        use abi::types::*;
        const EACCES: abi::Errno = abi::Errno::EACCES;
        const EINVAL: abi::Errno = abi::Errno::EINVAL;
        const ENOMEM: abi::Errno = abi::Errno::ENOMEM;
        const EOVERFLOW: abi::Errno = abi::Errno::EOVERFLOW;
        const EOPNOTSUPP: abi::Errno = abi::Errno::EOPNOTSUPP;
        const TOP: u64 = 1 << 47;
        let write_only = Some(OpenedFor {
            read: false,
            write: true,
        });
        let read_only = Some(OpenedFor {
            read: true,
            write: false,
        });
        let (r, w) = (PROT_READ, PROT_WRITE);
        let check = |addr, len, flags, prot, offset, file| {
            check_mmap(addr, len, flags, prot, offset, file, TOP)
        };
        // A well-known suite's mmap06.
        assert_eq!(check(0, 1024, MAP_PRIVATE, w, 0, write_only), Err(EACCES));
        assert_eq!(check(0, 1024, MAP_SHARED, r, 0, write_only), Err(EACCES));
        assert_eq!(check(0, 0, MAP_SHARED, r | w, 0, write_only), Err(EINVAL));
        assert_eq!(check(0, 1024, 0, r | w, 0, write_only), Err(EINVAL));
        // Types.
        assert_eq!(check(0, 1024, 0xf, r, 0, read_only), Err(EINVAL));
        assert_eq!(
            check(0, 1024, MAP_SHARED_VALIDATE, r, 0, read_only),
            Ok(true)
        );
        let unknown = 0x80_0000;
        for flag in [unknown, MAP_SYNC, MAP_FIXED_NOREPLACE] {
            let flags = MAP_SHARED_VALIDATE | flag;
            assert_eq!(check(0, 1024, flags, r, 0, read_only), Err(EOPNOTSUPP));
            assert_eq!(check(0, 1024, flags, r, 0, write_only), Err(EOPNOTSUPP));
        }
        let populate = MAP_SHARED_VALIDATE | MAP_POPULATE;
        assert_eq!(check(0, 1024, populate, r, 0, read_only), Ok(true));
        assert_eq!(
            check(0, 1024, MAP_SHARED | unknown, r, 0, read_only),
            Ok(true)
        );
        assert_eq!(check(0, 4096, MAP_SHARED_VALIDATE, r, 0, None), Err(EINVAL));
        assert_eq!(check(0, 4096, 0, r, 0, None), Err(EINVAL));
        assert_eq!(
            check(0, 4096, MAP_PRIVATE | unknown, r | 0x100, 0, None),
            Ok(false)
        );
        // Which comes first.
        assert_eq!(
            check(0x1000_0001, 4096, MAP_PRIVATE | MAP_FIXED, r, 0, write_only),
            Err(EINVAL)
        );
        assert_eq!(
            check(0, 1 << 62, MAP_PRIVATE, r, 0, write_only),
            Err(ENOMEM)
        );
        let far = 0x7fff_ffff_ffff_f000;
        assert_eq!(
            check(0, 0x2000, MAP_PRIVATE, r, far, write_only),
            Err(EOVERFLOW)
        );
        assert_eq!(
            check(0, 0x1000, MAP_PRIVATE, r, far, read_only),
            Err(EOVERFLOW)
        );
        assert_eq!(check(0, 4096, MAP_SHARED, r | w, 0, read_only), Err(EACCES));
        assert_eq!(check(0, 4096, MAP_PRIVATE, r | w, 0, read_only), Ok(false));
        let grows = MAP_SHARED | MAP_ANONYMOUS | MAP_GROWSDOWN;
        assert_eq!(check(0, 4096, grows, r, 0, None), Err(EINVAL));
    }

    #[test]
    fn madvise_advice_is_read_as_linux_reads_it() {
        use abi::types::*;
        assert_eq!(advice(MADV_NORMAL), Ok(Advice::Hint));
        assert_eq!(advice(MADV_DONTNEED), Ok(Advice::Drop));
        assert_eq!(advice(MADV_FREE), Ok(Advice::Drop));
        assert_eq!(advice(MADV_WILLNEED), Ok(Advice::Populate));
        assert_eq!(advice(MADV_POPULATE_WRITE), Ok(Advice::Populate));
        assert_eq!(advice(MADV_COLLAPSE), Ok(Advice::Hint));
        for unknown in [5, 6, 7, 26, 99, 102, u32::MAX] {
            assert_eq!(advice(unknown), Err(abi::Errno::EINVAL), "{unknown}");
        }
        assert_eq!(advice(MADV_WIPEONFORK), Ok(Advice::WipeOnFork(true)));
        assert_eq!(advice(MADV_KEEPONFORK), Ok(Advice::WipeOnFork(false)));
        assert_eq!(advice(MADV_HWPOISON), Err(abi::Errno::EINVAL));
    }

    #[test]
    fn wipe_on_fork_cuts_areas_and_refuses_files() {
        let mut a = Areas::new();
        a.insert(0x10 * P, 0x20 * P, anon(RW));
        a.insert(0x30 * P, 0x40 * P, file(RW, 1, 0x30 * P, 0, false));
        a.set_wipe_on_fork(0x14 * P, 0x18 * P, true).unwrap();
        let wiped: Vec<_> = a
            .iter()
            .map(|r| (r.start / P, r.end / P, r.area.wipe_on_fork))
            .collect();
        assert_eq!(
            wiped,
            [
                (0x10, 0x14, false),
                (0x14, 0x18, true),
                (0x18, 0x20, false),
                (0x30, 0x40, false)
            ]
        );
        // A range that reaches a file changes nothing.
        assert_eq!(
            a.set_wipe_on_fork(0x10 * P, 0x40 * P, true),
            Err(abi::Errno::EINVAL)
        );
        assert_eq!(a.len(), 4);
        // Keeping is allowed anywhere, and merges the pieces back.
        a.set_wipe_on_fork(0x10 * P, 0x40 * P, false).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a.usage().total, 0x20 * P);
    }

    const RW: u32 = 3;
    const NONE: u32 = 0;
    const P: u64 = 4096;

    /// The tests name files by number.
    type Area = super::Area<u32>;
    type Areas = super::Areas<u32>;

    fn anon(prot: u32) -> Area {
        Area::new(prot, Kind::Anonymous)
    }

    fn file(prot: u32, file: u32, start: u64, offset: u64, shared: bool) -> Area {
        Area::new(prot, Kind::File(FileMap::new(file, start, offset, shared)))
    }

    fn ranges(a: &Areas) -> Vec<(u64, u64, u32)> {
        a.iter().map(|r| (r.start, r.end, r.area.prot)).collect()
    }

    #[test]
    fn neighbours_with_the_same_attributes_merge() {
        let mut a = Areas::new();
        a.insert(10 * P, 20 * P, anon(RW));
        a.insert(20 * P, 30 * P, anon(RW));
        a.insert(5 * P, 10 * P, anon(RW));
        assert_eq!(ranges(&a), [(5 * P, 30 * P, RW)]);
        a.insert(30 * P, 31 * P, anon(NONE));
        a.insert(31 * P, 32 * P, Area::new(RW, Kind::Stack));
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn removing_the_middle_splits_an_area() {
        let mut a = Areas::new();
        a.insert(0, 10 * P, anon(RW));
        let taken = a.remove(3 * P, 5 * P);
        assert_eq!(
            taken.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>(),
            [(3 * P, 5 * P)]
        );
        assert_eq!(ranges(&a), [(0, 3 * P, RW), (5 * P, 10 * P, RW)]);
        assert!(!a.overlaps(3 * P, 5 * P));
        assert!(a.covers(0, 3 * P) && !a.covers(0, 6 * P));
        assert_eq!(a.find(4 * P), None);
        assert_eq!(a.find(5 * P).map(|r| r.start), Some(5 * P));
    }

    #[test]
    fn removing_across_areas_takes_every_piece() {
        let mut a = Areas::new();
        a.insert(0, 4 * P, anon(RW));
        a.insert(4 * P, 8 * P, anon(NONE));
        a.insert(10 * P, 12 * P, anon(RW));
        let taken = a.remove(2 * P, 11 * P);
        assert_eq!(
            taken.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>(),
            [(2 * P, 4 * P), (4 * P, 8 * P), (10 * P, 11 * P)]
        );
        assert_eq!(ranges(&a), [(0, 2 * P, RW), (11 * P, 12 * P, RW)]);
    }

    #[test]
    fn protect_cuts_and_merges_back() {
        let mut a = Areas::new();
        a.insert(0, 10 * P, anon(RW));
        a.protect(2 * P, 4 * P, NONE);
        assert_eq!(
            ranges(&a),
            [(0, 2 * P, RW), (2 * P, 4 * P, NONE), (4 * P, 10 * P, RW)]
        );
        a.protect(2 * P, 4 * P, RW);
        assert_eq!(ranges(&a), [(0, 10 * P, RW)]);
    }

    #[test]
    fn gaps_are_found_top_down_and_reused() {
        let (low, high) = (100 * P, 200 * P);
        let mut a = Areas::new();
        let first = a.find_gap(10 * P, low, high).unwrap();
        assert_eq!(first, 190 * P);
        a.insert(first, first + 10 * P, anon(RW));
        let second = a.find_gap(10 * P, low, high).unwrap();
        assert_eq!(second, 180 * P);
        a.insert(second, second + 10 * P, anon(NONE));
        // Unmapping the first makes its range the highest gap again.
        a.remove(first, first + 10 * P);
        assert_eq!(a.find_gap(10 * P, low, high), Some(190 * P));
        // A gap too small is passed over.
        a.insert(190 * P, 195 * P, anon(RW));
        assert_eq!(a.find_gap(10 * P, low, high), Some(170 * P));
        assert_eq!(a.find_gap(5 * P, low, high), Some(195 * P));
    }

    #[test]
    fn a_full_range_has_no_gap() {
        let mut a = Areas::new();
        a.insert(0, 100 * P, anon(RW));
        assert_eq!(a.find_gap(P, 0, 100 * P), None);
        assert_eq!(a.find_gap(P, 0, 101 * P), Some(100 * P));
        assert_eq!(a.find_gap(2 * P, 0, 101 * P), None);
        assert_eq!(a.find_gap(0, 0, 101 * P), None);
        assert_eq!(a.find_gap(P, 10 * P, 5 * P), None);
    }

    #[test]
    fn an_area_reaching_over_the_top_closes_the_gap_below_it() {
        let mut a = Areas::new();
        a.insert(90 * P, 300 * P, anon(RW));
        assert_eq!(a.find_gap(10 * P, 0, 200 * P), Some(80 * P));
        assert_eq!(a.find_gap(10 * P, 85 * P, 200 * P), None);
    }

    #[test]
    fn a_thousand_back_to_back_mappings_are_one_area() {
        let mut a = Areas::new();
        let (low, high) = (P, 1 << 46);
        for _ in 0..1000 {
            let at = a.find_gap(256 * P, low, high).unwrap();
            a.insert(at, at + 256 * P, anon(RW));
        }
        assert_eq!(a.len(), 1);
        assert!(a.covers(high - 1000 * 256 * P, high));
    }

    #[test]
    fn covers_sees_holes() {
        let mut a = Areas::new();
        a.insert(0, 2 * P, anon(RW));
        a.insert(2 * P, 3 * P, anon(NONE));
        a.insert(4 * P, 5 * P, anon(RW));
        assert!(a.covers(0, 3 * P));
        assert!(a.covers(P, 2 * P + 1));
        assert!(!a.covers(0, 5 * P));
        assert!(a.covers(4 * P, 5 * P));
        assert!(!a.covers(5 * P, 6 * P));
    }

    #[test]
    fn usage_follows_every_insert_remove_and_protect() {
        let stack = Area::new(RW, Kind::Stack);
        let mut a = Areas::new();
        a.insert(0, 10 * P, anon(RW));
        a.insert(10 * P, 12 * P, anon(NONE));
        a.insert(20 * P, 24 * P, stack);
        assert_eq!(
            a.usage(),
            Usage {
                total: 16 * P,
                data: 10 * P
            }
        );
        a.remove(5 * P, 11 * P);
        assert_eq!(
            a.usage(),
            Usage {
                total: 10 * P,
                data: 5 * P
            }
        );
        a.protect(0, 2 * P, NONE);
        assert_eq!(
            a.usage(),
            Usage {
                total: 10 * P,
                data: 3 * P
            }
        );
        assert_eq!(
            a.usage_in(P, 22 * P),
            Usage {
                total: 7 * P,
                data: 3 * P
            }
        );
        a.remove(0, 100 * P);
        assert_eq!(a.usage(), Usage::default());
    }

    #[test]
    fn a_file_area_cut_in_two_keeps_its_offsets() {
        let mut a = Areas::new();
        a.insert(10 * P, 20 * P, file(RW, 7, 10 * P, 3 * P, true));
        a.remove(14 * P, 15 * P);
        let Kind::File(high) = a.find(16 * P).unwrap().area.kind else {
            panic!("a file area")
        };
        assert_eq!(high.offset_of(16 * P), 9 * P);
        let Kind::File(low) = a.find(10 * P).unwrap().area.kind else {
            panic!("a file area")
        };
        assert_eq!(low.offset_of(10 * P + 5), 3 * P + 5);
    }

    #[test]
    fn file_areas_merge_only_where_the_file_continues() {
        let mut a = Areas::new();
        a.insert(10 * P, 20 * P, file(RW, 7, 10 * P, 0, true));
        // The next ten pages of the same file, mapped right after: one area.
        a.insert(20 * P, 30 * P, file(RW, 7, 20 * P, 10 * P, true));
        assert_eq!(a.len(), 1);
        // The same file from offset 0 again, or another file: apart.
        a.insert(30 * P, 40 * P, file(RW, 7, 30 * P, 0, true));
        a.insert(40 * P, 50 * P, file(RW, 8, 40 * P, 20 * P, true));
        // The same file continued, but private: apart too.
        a.insert(50 * P, 60 * P, file(RW, 8, 50 * P, 30 * P, false));
        assert_eq!(a.len(), 4);
    }

    #[test]
    fn a_moved_file_area_maps_the_same_offsets() {
        let area = file(RW, 7, 10 * P, 3 * P, false);
        let Kind::File(map) = area.moved(12 * P, 100 * P).kind else {
            panic!("a file area")
        };
        assert_eq!(map.offset_of(100 * P), 5 * P);
    }

    #[test]
    fn shared_writable_file_areas_are_not_data() {
        let mut a = Areas::new();
        a.insert(0, 4 * P, file(RW, 1, 0, 0, true));
        a.insert(4 * P, 6 * P, file(RW, 1, 4 * P, 0, false));
        assert_eq!(
            a.usage(),
            Usage {
                total: 6 * P,
                data: 2 * P
            }
        );
        assert!(a.find(0).unwrap().area.is_shared());
    }
}
