//! A file's bytes: one physical frame per 4 KiB page.
//!
//! Pages come from the frame allocator, not the kernel heap, so a file can
//! grow to whatever memory is free without copying what it already holds,
//! and its memory goes back the moment it is truncated or deleted (the heap
//! never shrinks). A page that was never written is a hole and reads as
//! zeros. Growth stops at the frames user memory must leave the kernel
//! (`mm::frames::KERNEL_RESERVE`): a ramfs that fills memory is ENOSPC for the
//! writer, never an out-of-memory kernel, and no other file loses a byte.

use abi::Errno;
use alloc::vec::Vec;

use crate::mm::PAGE_SIZE;
use crate::mm::frames::OwnedFrame;

const PAGE: usize = PAGE_SIZE as usize;

#[derive(Default)]
pub struct FileData {
    pages: Vec<Option<OwnedFrame>>,
    len: u64,
}

impl FileData {
    /// The bytes of page `page`, if it has a frame.
    fn page(&self, page: usize) -> Option<&[u8; PAGE]> {
        self.pages.get(page)?.as_ref().map(OwnedFrame::bytes)
    }

    /// The bytes of page `page`, for writing, if it has a frame.
    fn page_mut(&mut self, page: usize) -> Option<&mut [u8; PAGE]> {
        self.pages
            .get_mut(page)?
            .as_mut()
            .map(OwnedFrame::bytes_mut)
    }

    pub fn from_bytes(data: &[u8]) -> Result<FileData, Errno> {
        let mut file = FileData::default();
        file.write_at(0, data)?;
        Ok(file)
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Copies bytes from `at` into `buf`; how many there were.
    pub fn read_at(&self, at: u64, buf: &mut [u8]) -> usize {
        let n = (self.len.saturating_sub(at) as usize).min(buf.len());
        let mut done = 0;
        while done < n {
            let pos = at as usize + done;
            let (page, offset) = (pos / PAGE, pos % PAGE);
            let chunk = (PAGE - offset).min(n - done);
            match self.page(page) {
                Some(bytes) => {
                    buf[done..done + chunk].copy_from_slice(&bytes[offset..offset + chunk])
                }
                None => buf[done..done + chunk].fill(0),
            }
            done += chunk;
        }
        n
    }

    /// Writes `buf` at `at`, growing the file; all of it, or (ENOSPC) none.
    pub fn write_at(&mut self, at: u64, buf: &[u8]) -> Result<(), Errno> {
        let start = usize::try_from(at).map_err(|_| Errno::EFBIG)?;
        let end = start.checked_add(buf.len()).ok_or(Errno::EFBIG)?;
        if buf.is_empty() {
            return Ok(());
        }
        self.allocate(start / PAGE, end.div_ceil(PAGE))?;
        let mut done = 0;
        while done < buf.len() {
            let pos = start + done;
            let (page, offset) = (pos / PAGE, pos % PAGE);
            let chunk = (PAGE - offset).min(buf.len() - done);
            let bytes = self.page_mut(page).expect("allocated above");
            bytes[offset..offset + chunk].copy_from_slice(&buf[done..done + chunk]);
            done += chunk;
        }
        self.len = self.len.max(end as u64);
        Ok(())
    }

    /// Gives pages `first..end` a frame each, or (ENOSPC) changes nothing.
    fn allocate(&mut self, first: usize, end: usize) -> Result<(), Errno> {
        if self.pages.len() < end {
            self.pages
                .try_reserve(end - self.pages.len())
                .map_err(|_| Errno::ENOSPC)?;
            self.pages.resize_with(end, || None);
        }
        let mut fresh = Vec::new();
        for page in first..end {
            if self.pages[page].is_some() {
                continue;
            }
            match OwnedFrame::new_user() {
                Ok(frame) => {
                    self.pages[page] = Some(frame);
                    fresh.push(page);
                }
                Err(_) => {
                    for page in fresh {
                        self.pages[page] = None; // the frame goes back
                    }
                    return Err(Errno::ENOSPC);
                }
            }
        }
        Ok(())
    }

    /// Sets the length: pages past it go back to the allocator, and the
    /// rest of the last page is zeroed (so growing again reads zeros).
    pub fn truncate(&mut self, len: u64) -> Result<(), Errno> {
        let len_bytes = usize::try_from(len).map_err(|_| Errno::EFBIG)?;
        let keep = len_bytes.div_ceil(PAGE);
        if keep < self.pages.len() {
            self.pages.truncate(keep); // the frames go back as they drop
            self.pages.shrink_to_fit();
        }
        if let Some(bytes) = self.page_mut(len_bytes / PAGE) {
            bytes[len_bytes % PAGE..].fill(0);
        }
        self.len = len;
        Ok(())
    }

    /// The whole file as one buffer (exec, export).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = alloc::vec![0u8; self.len as usize];
        self.read_at(0, &mut out);
        out
    }
}
