//! profil(2) arithmetic: which 16-bit bin a program counter falls into.
//!
//! The relation is 4.4BSD's (the contract is `docs/profil.md`):
//!
//! ```text
//! bin = floor( floor((pc - offset) / 2) * scale / 65536 )
//! ```
//!
//! computed without overflow for every 64-bit `pc` and `offset` (the
//! product is done in 128 bits; BSD's `(int)` truncation is a bug we do not
//! copy). A sample is dropped when `pc < offset` or the bin is past the end of
//! the buffer. The kernel's timer interrupt, libc-lite's SIGPROF emulation and
//! the tests all use these functions, so they agree to the bin.

use abi::Errno;
use abi::types::{PROF_SCALE_AUTO, Prof};

/// The largest scale: one bin per 2 bytes of text.
pub const SCALE_ONE: u32 = 65536;
/// Most regions the multi-region form accepts.
pub const MAX_REGIONS: usize = 32;

/// One histogram: a user buffer of `size` bytes, and the mapping from pc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// User address of the first bin.
    pub buffer: u64,
    /// Buffer size in bytes (bins = size / 2).
    pub size: u64,
    pub offset: u64,
    pub scale: u32,
    /// Exclusive upper pc bound (multi-region form); `u64::MAX` for none.
    pub high: u64,
}

impl Region {
    /// The bin `pc` falls into, or None if the sample is dropped.
    pub fn bin(&self, pc: u64) -> Option<u64> {
        if pc >= self.high {
            return None;
        }
        bin_for(pc, self.offset, self.scale).filter(|&bin| bin < self.size / 2)
    }

    /// Whether `pc` is inside this region's pc range (multi-region lookup).
    pub fn contains(&self, pc: u64) -> bool {
        pc >= self.offset && pc < self.high
    }
}

/// BSD's relation; None when `pc < offset`.
pub fn bin_for(pc: u64, offset: u64, scale: u32) -> Option<u64> {
    let halfwords = pc.checked_sub(offset)? / 2;
    Some(((halfwords as u128 * scale as u128) >> 16) as u64)
}

/// A bin after `ticks` more counts: 16 bits that stop at 65535.
pub fn saturating_count(old: u16, ticks: u64) -> u16 {
    u16::try_from(u64::from(old) + ticks).unwrap_or(u16::MAX)
}

/// The scale that maps `[low, high)` onto the whole bins of a `bufsize`-byte
/// buffer (AIX's `p_scale == -1`): the largest scale at which the range's
/// last pc still falls in the last bin. Bins are whole: `bufsize / 2` of
/// them, an odd last byte is none. The scale stays in 1..=65536, so a range
/// too long for its buffer even at scale 1 drops its top pcs, and a buffer
/// with no bin counts nothing.
pub fn scale_for(low: u64, high: u64, bufsize: u64) -> u32 {
    let bins = u128::from(bufsize / 2);
    // The half-word index of the last pc, which must land in bin `bins - 1`:
    // last * scale / 65536 < bins.
    let last = u128::from((high.saturating_sub(low).max(1) - 1) / 2);
    if last == 0 {
        return SCALE_ONE;
    }
    let scale = (bins * 65536).saturating_sub(1) / last;
    scale.clamp(1, u128::from(SCALE_ONE)) as u32
}

/// Checks a multi-region array (without its terminating entry) and turns it
/// into regions: every `p_low < p_high`, `p_high` strictly ascending, a
/// non-negative size, and a scale from 1 to 65536 (or "compute it"). A
/// scale of 0 is EINVAL: it would pour every pc of the region into bin 0.
pub fn regions_from(
    array: &[Prof],
    out: &mut [Option<Region>; MAX_REGIONS],
) -> Result<usize, Errno> {
    if array.len() > MAX_REGIONS {
        return Err(Errno::EINVAL);
    }
    let mut previous_high = 0;
    for (i, p) in array.iter().enumerate() {
        if p.p_low >= p.p_high || p.p_high <= previous_high || p.p_bufsize < 0 {
            return Err(Errno::EINVAL);
        }
        previous_high = p.p_high;
        let size = p.p_bufsize as u64;
        let scale = match p.p_scale {
            PROF_SCALE_AUTO => scale_for(p.p_low, p.p_high, size),
            0 => return Err(Errno::EINVAL),
            s if s > SCALE_ONE => return Err(Errno::EINVAL),
            s => s,
        };
        out[i] = Some(Region {
            buffer: p.p_buff,
            size,
            offset: p.p_low,
            scale,
            high: p.p_high,
        });
    }
    Ok(array.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(offset: u64, size: u64, scale: u32) -> Region {
        Region {
            buffer: 0,
            size,
            offset,
            scale,
            high: u64::MAX,
        }
    }

    #[test]
    fn the_manual_page_spans() {
        // "A scale of 65536 maps each bin to 2 bytes ... 32768 gives 4 bytes,
        // 16384 gives 8 bytes."
        for (scale, bytes_per_bin) in [(65536, 2), (32768, 4), (16384, 8)] {
            for pc in 0x1000..0x1100u64 {
                assert_eq!(
                    bin_for(pc, 0x1000, scale),
                    Some((pc - 0x1000) / bytes_per_bin)
                );
            }
        }
    }

    #[test]
    fn exact_relation_with_odd_scales() {
        for scale in [1u32, 3, 0x4001, 0x4321, 65535] {
            for pc in [0x40_0000u64, 0x40_0001, 0x40_1234, 0x7fff_ffff_ffff] {
                let want = ((pc - 0x40_0000) / 2) as u128 * scale as u128 / 65536;
                assert_eq!(bin_for(pc, 0x40_0000, scale), Some(want as u64));
            }
        }
    }

    #[test]
    fn no_overflow_anywhere_in_64_bits() {
        assert_eq!(bin_for(u64::MAX, 0, SCALE_ONE), Some(u64::MAX / 2));
        assert_eq!(bin_for(u64::MAX, 0, 1), Some((u64::MAX / 2) >> 16));
        assert_eq!(bin_for(u64::MAX, u64::MAX, SCALE_ONE), Some(0));
        // BSD's 32-bit truncation would wrap here; we do not.
        assert_eq!(bin_for(0x1_0000_0004, 0, SCALE_ONE), Some(0x8000_0002));
    }

    #[test]
    fn drops_below_offset_and_past_the_buffer() {
        let r = region(0x1000, 8, SCALE_ONE); // 4 bins: pcs 0x1000..0x1008
        assert_eq!(r.bin(0xfff), None);
        assert_eq!(r.bin(0x1000), Some(0));
        assert_eq!(r.bin(0x1007), Some(3));
        assert_eq!(r.bin(0x1008), None);
        assert_eq!(region(0, 0, SCALE_ONE).bin(0), None, "size 0 has no bin");
        assert_eq!(region(0, 1, SCALE_ONE).bin(0), None, "size 1 has no bin");
    }

    #[test]
    fn counts_saturate_at_65535() {
        assert_eq!(saturating_count(0, 1), 1);
        assert_eq!(saturating_count(65534, 1), 65535);
        assert_eq!(saturating_count(65535, 1), 65535);
        assert_eq!(saturating_count(65000, 10_000), 65535);
        assert_eq!(saturating_count(1, u64::MAX - 1), 65535);
    }

    /// A region over `[low, high)` with a `size`-byte buffer and the
    /// computed scale.
    fn auto_region(low: u64, high: u64, size: u64) -> Region {
        Region {
            buffer: 0,
            size,
            offset: low,
            scale: scale_for(low, high, size),
            high,
        }
    }

    #[test]
    fn computed_scale_covers_the_range_exactly() {
        for (low, high, size) in [
            (0x40_0000u64, 0x40_1000u64, 1024u64),
            (0, 100, 10),
            (0x1000, 0x1002, 2),
            (0, 1 << 20, 64),
        ] {
            let r = auto_region(low, high, size);
            let scale = r.scale;
            assert!(
                r.bin(high - 1).is_some(),
                "last pc of [{low:#x},{high:#x}) has no bin at scale {scale}"
            );
            assert!(r.bin(low).is_some());
        }
        assert_eq!(
            scale_for(0, 0x1000, 0x1000),
            65536,
            "capped at one bin per 2 bytes"
        );
        assert_eq!(scale_for(0, 1 << 40, 2), 1, "at least 1");
    }

    /// Every pc of the range has a bin, the last bin is reached, and no
    /// larger scale would do: for odd buffer sizes and ranges of any length,
    /// not only multiples (3 bytes = 1 bin for a 6-byte range was the case
    /// that lost its top pcs when the scale was computed from bytes).
    #[test]
    fn computed_scale_uses_whole_bins() {
        for size in 2..40u64 {
            for span in 1..300u64 {
                let (low, high) = (0x40_0000, 0x40_0000 + span);
                let r = auto_region(low, high, size);
                let scale = r.scale;
                let bins = size / 2;
                let last = r.bin(high - 1);
                assert!(
                    last.is_some(),
                    "size {size}, span {span}: the last pc has no bin at scale {scale}"
                );
                assert!((low..high).all(|pc| r.bin(pc).is_some_and(|b| b < bins)));
                if scale < SCALE_ONE {
                    let wider = Region {
                        scale: scale + 1,
                        ..r
                    };
                    assert_eq!(
                        wider.bin(high - 1),
                        None,
                        "size {size}, span {span}: scale {scale} is not the largest"
                    );
                }
            }
        }
        assert_eq!(scale_for(0, 6, 3), 32767, "the case from the report");
        let none = Region {
            buffer: 0,
            size: 1,
            offset: 0,
            scale: scale_for(0, 6, 1),
            high: 6,
        };
        assert!((0..6).all(|pc| none.bin(pc).is_none()), "no bin, no count");
    }

    #[test]
    fn region_arrays_are_validated() {
        let p = |low, high, scale| Prof {
            p_low: low,
            p_high: high,
            p_buff: 0x1000,
            p_bufsize: 64,
            p_scale: scale,
        };
        let mut out = [None; MAX_REGIONS];
        assert_eq!(
            regions_from(
                &[p(0x100, 0x200, 65536), p(0x300, 0x400, PROF_SCALE_AUTO)],
                &mut out
            ),
            Ok(2)
        );
        assert_eq!(out[1].unwrap().scale, scale_for(0x300, 0x400, 64));
        assert_eq!(
            regions_from(&[p(0x300, 0x400, 1), p(0x100, 0x200, 1)], &mut out),
            Err(Errno::EINVAL),
            "descending"
        );
        assert_eq!(
            regions_from(&[p(0x100, 0x200, 1), p(0x150, 0x200, 1)], &mut out),
            Err(Errno::EINVAL),
            "equal highs"
        );
        assert_eq!(
            regions_from(&[p(0x200, 0x200, 1)], &mut out),
            Err(Errno::EINVAL),
            "low == high"
        );
        assert_eq!(
            regions_from(&[p(0x100, 0x200, 65537)], &mut out),
            Err(Errno::EINVAL),
            "scale too big"
        );
        assert_eq!(
            regions_from(&[p(0x100, 0x200, 0)], &mut out),
            Err(Errno::EINVAL),
            "scale 0 would count every pc into bin 0"
        );
        let mut neg = p(0x100, 0x200, 1);
        neg.p_bufsize = -2;
        assert_eq!(regions_from(&[neg], &mut out), Err(Errno::EINVAL));
        assert_eq!(
            regions_from(&[p(1, 2, 1); MAX_REGIONS + 1], &mut out),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn first_region_containing_the_pc_wins() {
        let a = Region {
            buffer: 0,
            size: 64,
            offset: 0x100,
            scale: SCALE_ONE,
            high: 0x200,
        };
        assert!(a.contains(0x100) && a.contains(0x1ff) && !a.contains(0x200) && !a.contains(0xff));
        assert_eq!(a.bin(0x200), None);
    }
}
