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
/// hole) in a file of `len` bytes kept in pages of `page_size` bytes.
/// `next(page, data)` answers the first page at or after `page` that
/// holds data (`data`) or is a hole (`!data`), or None if there is none
/// before the file's last page; a file asks its own page table, so a long
/// hole costs one search, not a look at each page. The end of the file
/// counts as a hole; no data after `at` is ENXIO.
pub fn seek(
    at: i64,
    len: u64,
    page_size: u64,
    next: impl Fn(u64, bool) -> Option<u64>,
    want: Seek,
) -> Result<u64, Errno> {
    let at = u64::try_from(at).map_err(|_| Errno::ENXIO)?;
    if at >= len {
        return Err(Errno::ENXIO);
    }
    let found = next(at / page_size, want == Seek::Data)
        .and_then(|page| page.checked_mul(page_size))
        .map(|offset| offset.max(at))
        .filter(|&offset| offset < len);
    match (found, want) {
        (Some(offset), _) => Ok(offset),
        (None, Seek::Data) => Err(Errno::ENXIO),
        (None, Seek::Hole) => Ok(len),
    }
}

/// `seek`'s `next` for a file whose holes are not known: every page is
/// data.
pub fn all_data(page: u64, data: bool) -> Option<u64> {
    data.then_some(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages 1 and 3 of a 5-page file (the last one half used) hold data.
    fn sparse(page: u64, data: bool) -> Option<u64> {
        (page..5).find(|&p| (p == 1 || p == 3) == data)
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
        assert_eq!(seek(3, 5, 4096, all_data, Seek::Data), Ok(3));
        assert_eq!(seek(3, 5, 4096, all_data, Seek::Hole), Ok(5));
        assert_eq!(seek(0, 3 * 4096, 4096, all_data, Seek::Hole), Ok(3 * 4096));
        // A file of 2^50 bytes: one call, not a look at each page.
        assert_eq!(seek(0, 1 << 50, 4096, all_data, Seek::Hole), Ok(1 << 50));
    }

    #[test]
    fn the_end_and_before_the_start_are_enxio() {
        for want in [Seek::Data, Seek::Hole] {
            assert_eq!(seek(5, 5, 4096, all_data, want), Err(Errno::ENXIO));
            assert_eq!(seek(-1, 5, 4096, all_data, want), Err(Errno::ENXIO));
            assert_eq!(seek(0, 0, 4096, all_data, want), Err(Errno::ENXIO));
        }
    }
}
