//! W^X over physical memory: no frame may be writable at one address and
//! executable at another (or both at one).
//!
//! Checking each page-table entry on its own is not enough: the same frame
//! can be mapped twice, once writable and once executable, and then a write
//! through the first changes code run through the second. That happened to
//! this kernel once (the last page of `.text` and the first of `.data` were
//! one frame of the ELF file), and the physical-memory window aliases every
//! frame. So the check works on physical ranges: the kernel walks its page
//! tables into a list of [`Mapping`]s and asks [`first_violation`].

/// One leaf of a page-table walk: `len` bytes of physical memory from `phys`,
/// with the rights that hold once every level's flags are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The virtual address that maps it (for the report).
    pub virt: u64,
    pub phys: u64,
    pub len: u64,
    pub writable: bool,
    pub executable: bool,
}

impl Mapping {
    fn overlaps(&self, other: &Mapping) -> bool {
        self.phys < other.phys.saturating_add(other.len)
            && other.phys < self.phys.saturating_add(self.len)
    }
}

/// A frame that is both writable and executable, and the two mappings that
/// make it so (the same mapping twice when one entry has both rights).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    pub writable: Mapping,
    pub executable: Mapping,
}

/// The first violation of W^X among `mappings`, if any.
///
/// Executable mappings are few (program text), writable ones many, so this
/// looks at each executable mapping against every writable one.
pub fn first_violation(mappings: &[Mapping]) -> Option<Violation> {
    mappings.iter().filter(|m| m.executable).find_map(|x| {
        mappings
            .iter()
            .find(|w| w.writable && w.overlaps(x))
            .map(|w| Violation {
                writable: *w,
                executable: *x,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(virt: u64, phys: u64, len: u64, writable: bool, executable: bool) -> Mapping {
        Mapping {
            virt,
            phys,
            len,
            writable,
            executable,
        }
    }

    #[test]
    fn separate_frames_are_fine() {
        let text = map(0xffff_8000, 0x10_0000, 0x4000, false, true);
        let data = map(0xffff_c000, 0x10_4000, 0x1000, true, false);
        let rodata = map(0xffff_0000, 0x10_0000, 0x4000, false, false);
        assert_eq!(first_violation(&[text, data, rodata]), None);
    }

    #[test]
    fn one_entry_with_both_rights_is_a_violation() {
        let wx = map(0x40_0000, 0x20_0000, 0x1000, true, true);
        assert_eq!(
            first_violation(&[wx]),
            Some(Violation {
                writable: wx,
                executable: wx
            })
        );
    }

    #[test]
    fn a_shared_frame_is_a_violation() {
        // The defect this module exists for: the last text page and the
        // first data page are one frame at two virtual addresses.
        let text = map(0xffff_ffff_8005_5000, 0x15_5000, 0x1000, false, true);
        let data = map(0xffff_ffff_8005_6000, 0x15_5000, 0x1000, true, false);
        let v = first_violation(&[text, data]).expect("found");
        assert_eq!((v.writable, v.executable), (data, text));
    }

    #[test]
    fn a_huge_writable_window_over_text_is_a_violation() {
        let text = map(0xffff_ffff_8001_2000, 0x21_2000, 0x1000, false, true);
        let window = map(0xffff_8000_0020_0000, 0x20_0000, 0x20_0000, true, false);
        assert!(first_violation(&[window, text]).is_some());
        // ... but not once the window ends just before the text frame.
        let below = map(0xffff_8000_0000_0000, 0, 0x21_2000, true, false);
        let above = map(0xffff_8000_0021_3000, 0x21_3000, 0x1000, true, false);
        assert_eq!(first_violation(&[below, text, above]), None);
    }

    #[test]
    fn ranges_at_the_top_of_memory_do_not_overflow() {
        let x = map(0, u64::MAX - 0xfff, 0x1000, false, true);
        let w = map(0, u64::MAX - 0x1fff, 0x1000, true, false);
        assert_eq!(first_violation(&[x, w]), None);
    }
}
