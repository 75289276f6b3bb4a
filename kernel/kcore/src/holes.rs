//! lseek's `SEEK_DATA` and `SEEK_HOLE`: where the next data, or the next
//! hole, begins in a file, for a program that copies a sparse file
//! without writing its holes out (`cp --sparse`, `tar -S`).
//!
//! A file in memory is kept in pages, and a page never written has no
//! frame (fs/filedata.rs): that page is a hole, as tmpfs answers. A file
//! whose holes are not known is all data, with one hole at its end (what
//! Linux's `generic_file_llseek` says). Either way an offset at or past
//! the end, or a negative one, is ENXIO: there is no data there, and the
//! end is not a hole to seek to.

use abi::Errno;

/// Which of the two is sought.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seek {
    Data,
    Hole,
}

/// The offset of the first byte at or after `at` that is data (or a
/// hole) in a file of `len` bytes kept in pages of `page_size` bytes,
/// where `has_page(n)` says whether page n holds data. The end of the
/// file counts as a hole; no data after `at` is ENXIO.
pub fn seek(
    at: i64,
    len: u64,
    page_size: u64,
    has_page: impl Fn(u64) -> bool,
    want: Seek,
) -> Result<u64, Errno> {
    let at = u64::try_from(at).map_err(|_| Errno::ENXIO)?;
    if at >= len {
        return Err(Errno::ENXIO);
    }
    let found = (at / page_size..len.div_ceil(page_size))
        .find(|&page| has_page(page) == (want == Seek::Data))
        .map(|page| (page * page_size).max(at));
    match (found, want) {
        (Some(offset), _) => Ok(offset),
        (None, Seek::Data) => Err(Errno::ENXIO),
        (None, Seek::Hole) => Ok(len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages 1 and 3 of a 5-page file (the last one half used) hold data.
    fn sparse(page: u64) -> bool {
        page == 1 || page == 3
    }
    const LEN: u64 = 4 * 4096 + 2048;

    #[test]
    fn data_and_holes_are_found_a_page_at_a_time() {
        let data = |at| seek(at, LEN, 4096, sparse, Seek::Data);
        let hole = |at| seek(at, LEN, 4096, sparse, Seek::Hole);
        assert_eq!(data(0), Ok(4096));
        assert_eq!(data(5000), Ok(5000), "inside data: where it is");
        assert_eq!(data(8192), Ok(3 * 4096));
        assert_eq!(data(4 * 4096), Err(Errno::ENXIO), "only a hole is left");
        assert_eq!(hole(0), Ok(0));
        assert_eq!(hole(4096), Ok(8192));
        assert_eq!(hole(3 * 4096 + 7), Ok(4 * 4096));
    }

    #[test]
    fn a_file_with_no_known_holes_is_data_to_its_end() {
        let all = |_| true;
        assert_eq!(seek(3, 5, 4096, all, Seek::Data), Ok(3));
        assert_eq!(seek(3, 5, 4096, all, Seek::Hole), Ok(5));
        assert_eq!(seek(0, 3 * 4096, 4096, all, Seek::Hole), Ok(3 * 4096));
    }

    #[test]
    fn the_end_and_before_the_start_are_enxio() {
        for want in [Seek::Data, Seek::Hole] {
            assert_eq!(seek(5, 5, 4096, |_| true, want), Err(Errno::ENXIO));
            assert_eq!(seek(-1, 5, 4096, |_| true, want), Err(Errno::ENXIO));
            assert_eq!(seek(0, 0, 4096, |_| true, want), Err(Errno::ENXIO));
        }
    }
}
