//! gmon.out, the file GNU gprof reads: encoding and decoding.
//!
//! The tagged format of binutils' gprof (`gmon_io.c`), little-endian with
//! 64-bit addresses as on x86_64:
//!
//! ```text
//! header   "gmon", version u32 = 1, 12 spare bytes
//! tag 0    GMON_TAG_TIME_HIST: low_pc u64, high_pc u64, bins u32,
//!          prof_rate u32, dimension [15] ("seconds"), abbreviation 's',
//!          then `bins` u16 counts
//! tag 1    GMON_TAG_CG_ARC, once per arc: from_pc u64, self_pc u64, count u32
//! ```
//!
//! gprof divides `[low_pc, high_pc)` evenly among the bins, so the histogram
//! must be the profil(2) buffer whose scale maps exactly that range onto it.
//! libc-lite writes the file at exit; xtask's tests decode it again.

extern crate alloc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

pub const MAGIC: &[u8; 4] = b"gmon";
pub const VERSION: u32 = 1;
pub const TAG_TIME_HIST: u8 = 0;
pub const TAG_CG_ARC: u8 = 1;
const HEADER_LEN: usize = 20;

/// The histogram of one text range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram<'a> {
    pub low_pc: u64,
    pub high_pc: u64,
    /// Clock ticks per second (the kernel's hz).
    pub prof_rate: u32,
    pub bins: &'a [u16],
}

/// One call-graph arc: `count` calls from the call site `from_pc` into the
/// function containing `self_pc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arc {
    pub from_pc: u64,
    pub self_pc: u64,
    pub count: u32,
}

/// Bytes of text per histogram bin in libc-lite's profiles (glibc's
/// HISTFRACTION: 2 bytes per 16-bit counter, twice): profil scale 32768.
pub const BYTES_PER_BIN: u64 = 4;

/// Most arcs a profile records, whatever `GMON_MAXARCS` asks: 2^20 arcs
/// already take 24 MiB of table.
pub const MAX_ARCS: usize = 1 << 20;
/// Fewest arcs the default (sized from the text) gives a small program.
const DEFAULT_MIN_ARCS: usize = 50;

/// How many arcs a profile records: `GMON_MAXARCS` when it is a number,
/// clamped to 1..=MAX_ARCS (a huge value must not make the start-up
/// allocation fail), else 3 per 100 bytes of text (glibc's ARCDENSITY),
/// at least 50.
pub fn arc_limit(requested: Option<&str>, text_bytes: u64) -> usize {
    match requested.and_then(|n| n.trim().parse::<u64>().ok()) {
        Some(n) => n.clamp(1, MAX_ARCS as u64) as usize,
        None => ((text_bytes * 3 / 100) as usize).clamp(DEFAULT_MIN_ARCS, MAX_ARCS),
    }
}

/// Slots of the open-addressing table that holds `limit` arcs: a power of
/// two with the table at most 3/4 full, so probes stay short.
pub fn arc_slots(limit: usize) -> usize {
    (limit * 4).div_ceil(3).next_power_of_two()
}

/// Records one call from the call site `from_pc` into `self_pc`'s function
/// in the table `slots` (`arc_slots(limit)` long, count 0 = free), where
/// `used` arcs are already. An arc already there counts on, always; a new
/// arc takes a slot only while fewer than `limit` are used. Returns false
/// for a call that could not be recorded (a new arc in a full table).
pub fn record_arc(
    slots: &mut [Arc],
    used: &mut usize,
    limit: usize,
    from_pc: u64,
    self_pc: u64,
) -> bool {
    let mask = slots.len() - 1;
    let mut i = arc_hash(from_pc, self_pc) as usize & mask;
    for _ in 0..slots.len() {
        let slot = &mut slots[i];
        if slot.count == 0 {
            if *used >= limit {
                return false;
            }
            *slot = Arc {
                from_pc,
                self_pc,
                count: 1,
            };
            *used += 1;
            return true;
        }
        if slot.from_pc == from_pc && slot.self_pc == self_pc {
            slot.count = slot.count.saturating_add(1);
            return true;
        }
        i = (i + 1) & mask;
    }
    false
}

/// Where the search for arc (`from_pc`, `self_pc`) starts in a table.
fn arc_hash(from_pc: u64, self_pc: u64) -> u64 {
    (from_pc ^ self_pc.rotate_left(17)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40
}

/// One slot of an `ArcTable`; `count` 0 marks it free.
struct ArcSlot {
    from_pc: AtomicU64,
    self_pc: AtomicU64,
    count: AtomicU32,
}

/// An arc table one writer fills while others may look: the kernel's
/// mcount keeps one per CPU (kernel/src/kprof.rs), and only that CPU
/// records into it, with its mcount guard set so that an interrupt on it
/// does not record in the middle. Readers (an extract, a reset) run on
/// other CPUs once the writer has stopped. Every field is an atomic so
/// that such sharing is safe Rust; with one writer, `Relaxed` loads and
/// stores are plain moves and cost what `record_arc`'s table does.
///
/// Same table as `record_arc`'s (open addressing, 3/4 full at most, a new
/// arc turned away once `limit` are in), and the same hash.
pub struct ArcTable {
    slots: Vec<ArcSlot>,
    limit: usize,
    used: AtomicUsize,
    /// Calls not recorded: a new arc in a full table.
    lost: AtomicU64,
}

impl ArcTable {
    /// A table for `limit` arcs (at least one); None when the memory
    /// cannot be had.
    pub fn new(limit: usize) -> Option<ArcTable> {
        let limit = limit.max(1);
        let len = arc_slots(limit);
        let mut slots = Vec::new();
        slots.try_reserve_exact(len).ok()?;
        slots.resize_with(len, || ArcSlot {
            from_pc: AtomicU64::new(0),
            self_pc: AtomicU64::new(0),
            count: AtomicU32::new(0),
        });
        Some(ArcTable {
            slots,
            limit,
            used: AtomicUsize::new(0),
            lost: AtomicU64::new(0),
        })
    }

    /// Counts one call from `from_pc` into `self_pc`'s function. Only the
    /// table's one writer may call it, never two at once: two would still
    /// be memory-safe, but could give one arc two slots or miscount.
    /// A slot's pcs are written before its count makes it used (`Release`),
    /// so a reader that sees the count sees the arc.
    pub fn record(&self, from_pc: u64, self_pc: u64) {
        let mask = self.slots.len() - 1;
        let mut i = arc_hash(from_pc, self_pc) as usize & mask;
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            let count = slot.count.load(Ordering::Relaxed);
            if count == 0 {
                if self.used.load(Ordering::Relaxed) >= self.limit {
                    break;
                }
                slot.from_pc.store(from_pc, Ordering::Relaxed);
                slot.self_pc.store(self_pc, Ordering::Relaxed);
                slot.count.store(1, Ordering::Release);
                self.used.fetch_add(1, Ordering::Relaxed);
                return;
            }
            if slot.from_pc.load(Ordering::Relaxed) == from_pc
                && slot.self_pc.load(Ordering::Relaxed) == self_pc
            {
                slot.count.store(count.saturating_add(1), Ordering::Relaxed);
                return;
            }
            i = (i + 1) & mask;
        }
        self.lost.fetch_add(1, Ordering::Relaxed);
    }

    /// The arcs recorded, in table order.
    pub fn arcs(&self) -> impl Iterator<Item = Arc> + '_ {
        self.slots.iter().filter_map(|slot| {
            let count = slot.count.load(Ordering::Acquire);
            (count != 0).then(|| Arc {
                from_pc: slot.from_pc.load(Ordering::Relaxed),
                self_pc: slot.self_pc.load(Ordering::Relaxed),
                count,
            })
        })
    }

    /// Arcs in the table.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Calls not recorded since the last clear, for want of room.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Empties the table; only while its writer is stopped.
    pub fn clear(&self) {
        for slot in &self.slots {
            slot.count.store(0, Ordering::Relaxed);
        }
        self.used.store(0, Ordering::Relaxed);
        self.lost.store(0, Ordering::Relaxed);
    }
}

/// The arcs of several tables (one per CPU) as one list: the same arc in
/// two tables is one arc with the counts added (stopping at u32::MAX).
pub fn merge_arcs<'a>(tables: impl Iterator<Item = &'a ArcTable>) -> Vec<Arc> {
    let mut all: Vec<Arc> = tables.flat_map(|t| t.arcs()).collect();
    all.sort_unstable_by_key(|a| (a.from_pc, a.self_pc));
    let mut merged: Vec<Arc> = Vec::with_capacity(all.len());
    for arc in all {
        match merged.last_mut() {
            Some(last) if last.from_pc == arc.from_pc && last.self_pc == arc.self_pc => {
                last.count = last.count.saturating_add(arc.count);
            }
            _ => merged.push(arc),
        }
    }
    merged
}

/// Appends a complete gmon.out to `out`.
pub fn encode(hist: &Histogram, arcs: &[Arc], out: &mut Vec<u8>) {
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 12]);
    out.push(TAG_TIME_HIST);
    out.extend_from_slice(&hist.low_pc.to_le_bytes());
    out.extend_from_slice(&hist.high_pc.to_le_bytes());
    out.extend_from_slice(&(hist.bins.len() as u32).to_le_bytes());
    out.extend_from_slice(&hist.prof_rate.to_le_bytes());
    let mut dimension = [0u8; 15];
    dimension[..7].copy_from_slice(b"seconds");
    out.extend_from_slice(&dimension);
    out.push(b's');
    for bin in hist.bins {
        out.extend_from_slice(&bin.to_le_bytes());
    }
    for arc in arcs {
        out.push(TAG_CG_ARC);
        out.extend_from_slice(&arc.from_pc.to_le_bytes());
        out.extend_from_slice(&arc.self_pc.to_le_bytes());
        out.extend_from_slice(&arc.count.to_le_bytes());
    }
}

/// A decoded file (owned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub low_pc: u64,
    pub high_pc: u64,
    pub prof_rate: u32,
    pub bins: Vec<u16>,
    pub arcs: Vec<Arc>,
}

/// Why a file could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    BadHeader,
    Truncated,
    UnknownTag(u8),
    NoHistogram,
}

struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

/// Decodes a gmon.out with one histogram record and any number of arcs.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut c = Cursor(bytes);
    let header = c.take(HEADER_LEN).map_err(|_| DecodeError::BadHeader)?;
    if &header[..4] != MAGIC || header[4..8] != VERSION.to_le_bytes() {
        return Err(DecodeError::BadHeader);
    }
    let mut hist = None;
    let mut arcs = Vec::new();
    while let Ok(tag) = c.take(1).map(|t| t[0]) {
        match tag {
            TAG_TIME_HIST => {
                let (low_pc, high_pc) = (c.u64()?, c.u64()?);
                let n = c.u32()? as usize;
                let prof_rate = c.u32()?;
                c.take(16)?; // dimension and abbreviation
                let raw = c.take(n.checked_mul(2).ok_or(DecodeError::Truncated)?)?;
                let bins = raw
                    .as_chunks::<2>()
                    .0
                    .iter()
                    .map(|b| u16::from_le_bytes(*b))
                    .collect();
                hist = Some((low_pc, high_pc, prof_rate, bins));
            }
            TAG_CG_ARC => arcs.push(Arc {
                from_pc: c.u64()?,
                self_pc: c.u64()?,
                count: c.u32()?,
            }),
            other => return Err(DecodeError::UnknownTag(other)),
        }
    }
    let (low_pc, high_pc, prof_rate, bins) = hist.ok_or(DecodeError::NoHistogram)?;
    Ok(Decoded {
        low_pc,
        high_pc,
        prof_rate,
        bins,
        arcs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bytes_of_a_small_file() {
        let hist = Histogram {
            low_pc: 0x401000,
            high_pc: 0x401008,
            prof_rate: 1000,
            bins: &[3, 0x102],
        };
        let arcs = [Arc {
            from_pc: 0x401004,
            self_pc: 0x401000,
            count: 7,
        }];
        let mut out = Vec::new();
        encode(&hist, &arcs, &mut out);
        let mut want = Vec::new();
        want.extend_from_slice(b"gmon\x01\x00\x00\x00");
        want.extend_from_slice(&[0; 12]);
        want.push(0);
        want.extend_from_slice(&[0x00, 0x10, 0x40, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0x08, 0x10, 0x40, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[2, 0, 0, 0]);
        want.extend_from_slice(&[0xe8, 0x03, 0, 0]);
        want.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
        want.extend_from_slice(&[3, 0, 0x02, 0x01]);
        want.push(1);
        want.extend_from_slice(&[0x04, 0x10, 0x40, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0x00, 0x10, 0x40, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[7, 0, 0, 0]);
        assert_eq!(out, want);
        assert_eq!(out.len(), 20 + 1 + 40 + 4 + 1 + 20);
    }

    #[test]
    fn round_trip() {
        let bins: Vec<u16> = (0..1000u32).map(|i| (i * 37 % 65536) as u16).collect();
        let arcs: Vec<Arc> = (0..50)
            .map(|i| Arc {
                from_pc: 0x400000 + i,
                self_pc: 0x500000 - i,
                count: i as u32 * 1000,
            })
            .collect();
        let mut out = Vec::new();
        encode(
            &Histogram {
                low_pc: 0x400000,
                high_pc: 0x400000 + 4000,
                prof_rate: 250,
                bins: &bins,
            },
            &arcs,
            &mut out,
        );
        let d = decode(&out).unwrap();
        assert_eq!(
            (d.low_pc, d.high_pc, d.prof_rate),
            (0x400000, 0x400000 + 4000, 250)
        );
        assert_eq!(d.bins, bins);
        assert_eq!(d.arcs, arcs);
    }

    #[test]
    fn damaged_files_are_errors() {
        let mut out = Vec::new();
        encode(
            &Histogram {
                low_pc: 0,
                high_pc: 8,
                prof_rate: 100,
                bins: &[1, 2, 3, 4],
            },
            &[],
            &mut out,
        );
        assert_eq!(decode(&out[..10]), Err(DecodeError::BadHeader));
        for cut in 21..out.len() {
            assert!(decode(&out[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = out.clone();
        bad.push(9);
        assert_eq!(decode(&bad), Err(DecodeError::UnknownTag(9)));
        assert_eq!(decode(&out[..20]), Err(DecodeError::NoHistogram));
    }

    #[test]
    fn the_arc_limit_is_honoured_and_clamped() {
        assert_eq!(arc_limit(Some("1"), 1 << 20), 1);
        assert_eq!(arc_limit(Some("1000"), 0), 1000);
        assert_eq!(arc_limit(Some("0"), 0), 1, "at least one arc");
        assert_eq!(
            arc_limit(Some("1000000000000"), 0),
            MAX_ARCS,
            "a huge request must not fail the start-up allocation"
        );
        assert_eq!(
            arc_limit(Some("lots"), 10_000),
            300,
            "not a number: the default"
        );
        assert_eq!(arc_limit(None, 100), 50, "the default has a floor");
        assert_eq!(arc_limit(None, u64::MAX / 100), MAX_ARCS);
    }

    #[test]
    fn the_table_holds_exactly_the_limit() {
        for limit in [1usize, 2, 3, 7, 50, 1000] {
            let mut slots = alloc::vec![
                Arc {
                    from_pc: 0,
                    self_pc: 0,
                    count: 0
                };
                arc_slots(limit)
            ];
            assert!(slots.len().is_power_of_two() && limit * 4 <= slots.len() * 3);
            let mut used = 0;
            for n in 0..limit as u64 {
                assert!(
                    record_arc(&mut slots, &mut used, limit, 0x1000 + n * 8, 0x2000),
                    "limit {limit}: arc {n} did not fit"
                );
            }
            assert_eq!(used, limit);
            assert!(
                !record_arc(&mut slots, &mut used, limit, 0x9999, 0x2000),
                "limit {limit}: one arc too many was recorded"
            );
            // Arcs already in the table still count.
            assert!(record_arc(&mut slots, &mut used, limit, 0x1000, 0x2000));
            let first = slots.iter().find(|a| a.from_pc == 0x1000).unwrap();
            assert_eq!(first.count, 2);
            assert_eq!(slots.iter().filter(|a| a.count > 0).count(), limit);
        }
    }

    #[test]
    fn an_arc_table_counts_like_record_arc_and_turns_new_arcs_away_when_full() {
        let limit = 5;
        let table = ArcTable::new(limit).unwrap();
        let mut slots = vec![
            Arc {
                from_pc: 0,
                self_pc: 0,
                count: 0
            };
            arc_slots(limit)
        ];
        let mut used = 0;
        let calls = [
            (1, 10),
            (2, 10),
            (1, 10),
            (3, 30),
            (4, 40),
            (5, 50),
            (6, 60),
            (1, 10),
        ];
        let mut lost = 0;
        for (from, to) in calls {
            table.record(from, to);
            if !record_arc(&mut slots, &mut used, limit, from, to) {
                lost += 1;
            }
        }
        let mut got: Vec<Arc> = table.arcs().collect();
        let mut want: Vec<Arc> = slots.into_iter().filter(|a| a.count != 0).collect();
        got.sort_unstable_by_key(|a| a.from_pc);
        want.sort_unstable_by_key(|a| a.from_pc);
        assert_eq!(got, want);
        assert_eq!(table.used(), limit);
        assert_eq!(table.lost(), lost);
        assert_eq!(lost, 1, "(6, 60) found the table full");
        assert_eq!(got[0].count, 3);
        table.clear();
        assert_eq!(
            (table.arcs().count(), table.used(), table.lost()),
            (0, 0, 0)
        );
        table.record(7, 70);
        assert_eq!(table.arcs().collect::<Vec<_>>()[0].count, 1);
    }

    #[test]
    fn the_tables_of_several_cpus_merge_into_one_list() {
        let a = ArcTable::new(8).unwrap();
        let b = ArcTable::new(8).unwrap();
        for _ in 0..3 {
            a.record(0x10, 0x100);
        }
        a.record(0x20, 0x200);
        for _ in 0..4 {
            b.record(0x10, 0x100);
        }
        b.record(0x30, 0x300);
        let merged = merge_arcs([&a, &b].into_iter());
        let counts: Vec<(u64, u32)> = merged.iter().map(|a| (a.from_pc, a.count)).collect();
        assert_eq!(counts, [(0x10, 7), (0x20, 1), (0x30, 1)]);
    }
}
