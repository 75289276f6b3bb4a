//! A file's bytes: one physical frame per 4 KiB page, which is also the
//! file's page cache.
//!
//! Pages come from the frame allocator, not the kernel heap, so a file can
//! grow to whatever memory is free without copying what it already holds,
//! and its memory goes back the moment it is truncated or deleted (the heap
//! never shrinks). A page that was never written is a hole and reads as
//! zeros. Growth stops at the frames user memory must leave the kernel
//! (`mm::frames::KERNEL_RESERVE`): a ramfs that fills memory is ENOSPC for the
//! writer, never an out-of-memory kernel, and no other file loses a byte.
//!
//! mmap maps these very frames (`map_page`), so a file has one copy of each
//! page however it is reached: a store through a shared mapping is what the
//! next `read` returns, a `write` is what every mapping sees, and `msync`
//! has nothing to write back. A private mapping maps them copy-on-write
//! (the frame has the file as another user, so the first store copies it).
//! A mapped frame has one user more per mapping, so truncating the file or
//! deleting it takes the frame from the file while the mappings keep it, and
//! the mappings keep the whole `FileData` alive for pages not yet touched.
//!
//! `FileData` is a handle (an `Arc`) that the file's node and every mapping
//! of it share; the pages sit behind their own lock (level 5 in `sync.rs`,
//! before the areas), because the page-fault path reaches them while the
//! caller may hold the process table, where a node's lock may not be
//! taken. Nothing is copied to or from user memory inside that lock: `read`
//! and `write` copy through a kernel buffer, so a buffer that is itself a
//! mapping of the same file faults in outside it.
//!
//! Stores through a mapping into the last page, past the end of the file,
//! land in the frame; the bytes there are cleared before the file grows over
//! them (`clear_past_end`), so growing the file reads zeros there, as it
//! must. A page wholly past the end cannot be mapped: touching it is
//! SIGBUS, as on Linux.
//!
//! A file on a disk gets these pages too, as its page cache, when it is
//! first mapped or run (fs/ext2.rs, `ext2::pages`): then its reads come
//! from them and its writes go to them as well as to the disk, so a store
//! through a shared mapping is what `read` returns there as well. Such a
//! store reaches the disk only when the page is written back: the pages a
//! shared mapping that may store was given are marked (`map_page`'s
//! `may_store`), and `stored_pages` lists them for the write-back. A mark
//! stays while a mapping still holds the frame, since the mapping can
//! store again without a fault (Linux write-protects the page after
//! writing it back, and takes a fault to mark it again; here the mark is
//! simply kept, and the write-back skips a page the disk already has).
//!
//! A running program's text is its file's pages (exec maps them privately,
//! proc/exec.rs), so a store into the file would change the code under the
//! program's feet. As on Linux, a file that some process runs cannot be
//! opened for writing or truncated (ETXTBSY): each address space made by
//! exec holds an `ExecHold` on its file for as long as it lives.

use abi::Errno;
use alloc::collections::BTreeSet;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use x86_64::structures::paging::PhysFrame;

use crate::mm::PAGE_SIZE;
use crate::mm::areas::FaultError;
use crate::mm::frames::OwnedFrame;
use crate::sync::{IrqLock, Rank};

const PAGE: usize = PAGE_SIZE as usize;

/// A file's bytes, shared by its node and its mappings.
#[derive(Clone)]
pub struct FileData(Arc<IrqLock<Pages>>);

impl Default for FileData {
    /// An empty file.
    fn default() -> FileData {
        FileData(Arc::new(IrqLock::new(Rank::FileData, Pages::default())))
    }
}

impl PartialEq for FileData {
    /// The same file (two mappings of it may merge).
    fn eq(&self, other: &FileData) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl core::fmt::Debug for FileData {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FileData({:p})", Arc::as_ptr(&self.0))
    }
}

impl FileData {
    pub fn from_bytes(data: &[u8]) -> Result<FileData, Errno> {
        let file = FileData::default();
        file.write_at(0, data)?;
        Ok(file)
    }

    /// A file of `len` zero bytes, all holes (shared anonymous memory).
    pub fn sized(len: u64) -> Result<FileData, Errno> {
        let file = FileData::default();
        file.truncate(len).map_err(|_| Errno::ENOMEM)?;
        Ok(file)
    }

    pub fn len(&self) -> u64 {
        self.0.lock().len
    }

    /// Whether some process runs this file as its program: then opening it
    /// for writing or truncating it is ETXTBSY.
    pub fn is_running(&self) -> bool {
        self.0.lock().running > 0
    }

    /// The first page at or after `page` that has a frame (`data`) or is
    /// a hole (`!data`), in one look at the page table under one lock:
    /// `kcore::holes::seek`'s `next`. Past the last page with a place in
    /// the table every page is a hole.
    pub fn next_page(&self, page: u64, data: bool) -> Option<u64> {
        let pages = &self.0.lock().pages;
        let from = usize::try_from(page).unwrap_or(usize::MAX);
        let found = pages
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, p)| p.is_some() == data)
            .map(|(at, _)| at as u64);
        match found {
            Some(at) => Some(at),
            None if data => None,
            None => Some(page.max(pages.len() as u64)),
        }
    }

    /// Pages that have a frame (the rest are holes).
    pub fn resident_pages(&self) -> usize {
        self.0.lock().pages.iter().filter(|p| p.is_some()).count()
    }

    /// A handle that does not keep the pages (a System V segment removed
    /// while still attached: its mappings keep them, and the last one to
    /// go frees them).
    pub fn downgrade(&self) -> WeakFileData {
        WeakFileData(Arc::downgrade(&self.0))
    }

    /// Copies bytes from `at` into `buf`; how many there were.
    pub fn read_at(&self, at: u64, buf: &mut [u8]) -> usize {
        self.0.lock().read_at(at, buf)
    }

    /// Writes `buf` at `at`, growing the file; all of it, or (ENOSPC) none.
    pub fn write_at(&self, at: u64, buf: &[u8]) -> Result<(), Errno> {
        self.0.lock().write_at(at, buf)
    }

    /// Sets the length (see `Pages::truncate`).
    pub fn truncate(&self, len: u64) -> Result<(), Errno> {
        self.0.lock().truncate(len)
    }

    /// fallocate(2)'s allocation: frames for every page of `[at, end)`
    /// now, so writing there cannot run out (ENOSPC, with what was
    /// allocated kept, if memory is short); the length grows to `end`
    /// unless `keep_size`.
    pub fn allocate(&self, at: u64, end: u64, keep_size: bool) -> Result<(), Errno> {
        let mut pages = self.0.lock();
        let first = usize::try_from(at / PAGE_SIZE).map_err(|_| Errno::EFBIG)?;
        let last = usize::try_from(end.div_ceil(PAGE_SIZE)).map_err(|_| Errno::EFBIG)?;
        pages.allocate(first, last)?;
        if !keep_size && end > pages.len {
            pages.truncate(end)?;
        }
        Ok(())
    }

    /// fallocate's FALLOC_FL_PUNCH_HOLE: `[at, end)` reads as zeros; a
    /// whole page there that no mapping shares goes back to the allocator
    /// (a hole), one that a mapping shares is zeroed in place, so the
    /// mapping sees the zeros too. The length stays.
    pub fn punch(&self, at: u64, end: u64) {
        let mut pages = self.0.lock();
        let end = end.min(pages.len);
        let mut pos = at;
        while pos < end {
            let page = (pos / PAGE_SIZE) as usize;
            let from = (pos % PAGE_SIZE) as usize;
            let to = (end - page as u64 * PAGE_SIZE).min(PAGE_SIZE) as usize;
            if let Some(Some(frame)) = pages.pages.get_mut(page) {
                if from == 0 && to == PAGE && !frame.is_shared() {
                    pages.pages[page] = None;
                } else {
                    frame.bytes_mut()[from..to].fill(0);
                }
            }
            pos = (page as u64 + 1) * PAGE_SIZE;
        }
    }

    /// The whole file as one buffer (export).
    pub fn to_vec(&self) -> Vec<u8> {
        let pages = self.0.lock();
        let mut out = alloc::vec![0u8; pages.len as usize];
        pages.read_at(0, &mut out);
        out
    }

    /// The frame of page `page`, with one more user for the mapping that
    /// asked (which releases it when unmapped): a hole gets its frame now.
    /// `PastEnd` for a page wholly past the end (SIGBUS for a program's
    /// access), `NoMemory` when no frame is left.
    /// `may_store`: the mapping is shared and may be made writable, so
    /// the page is marked for write-back (a disk file's, see the top).
    pub fn map_page(&self, page: u64, may_store: bool) -> Result<PhysFrame, FaultError> {
        let mut pages = self.0.lock();
        if page >= pages.len.div_ceil(PAGE_SIZE) {
            return Err(FaultError::PastEnd);
        }
        let page = page as usize;
        pages
            .allocate(page, page + 1)
            .map_err(|_| FaultError::NoMemory)?;
        if may_store {
            pages.stored.insert(page);
        }
        let frame = pages.pages[page].as_ref().expect("allocated above");
        Ok(frame.share())
    }

    /// The pages a shared mapping may have stored into since they were
    /// last written back, lowest first.
    pub fn stored_pages(&self) -> Vec<u64> {
        self.0.lock().stored.iter().map(|&p| p as u64).collect()
    }

    /// Page `page` was written back: its mark goes unless a mapping still
    /// holds its frame (and so may store into it again), or the page is
    /// gone (truncated away).
    pub fn written_back(&self, page: u64) {
        let mut pages = self.0.lock();
        let page = page as usize;
        let mapped = matches!(pages.pages.get(page), Some(Some(frame)) if frame.is_shared());
        if !mapped {
            pages.stored.remove(&page);
        }
    }
}

/// A program's hold on its file (Linux's `deny_write_access` for exec):
/// while one lives, the file is busy for writers (`FileData::is_running`).
/// A forked address space clones it; the last one dropped frees the file
/// for writing again.
pub struct ExecHold(FileData);

impl ExecHold {
    pub fn new(file: &FileData) -> ExecHold {
        file.0.lock().running += 1;
        ExecHold(file.clone())
    }
}

impl Clone for ExecHold {
    fn clone(&self) -> ExecHold {
        ExecHold::new(&self.0)
    }
}

impl Drop for ExecHold {
    fn drop(&mut self) {
        (self.0).0.lock().running -= 1;
    }
}

/// A `FileData` that may be gone (`FileData::downgrade`).
pub struct WeakFileData(Weak<IrqLock<Pages>>);

impl WeakFileData {
    pub fn upgrade(&self) -> Option<FileData> {
        self.0.upgrade().map(FileData)
    }
}

/// The pages and length behind the lock.
#[derive(Default)]
struct Pages {
    pages: Vec<Option<OwnedFrame>>,
    len: u64,
    /// Address spaces running this file as their program (`ExecHold`).
    running: usize,
    /// Pages given to a shared mapping that may store, not written back
    /// since (`FileData::stored_pages`).
    stored: BTreeSet<usize>,
}

impl Pages {
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

    /// Copies bytes from `at` into `buf`; how many there were.
    fn read_at(&self, at: u64, buf: &mut [u8]) -> usize {
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
    fn write_at(&mut self, at: u64, buf: &[u8]) -> Result<(), Errno> {
        let start = usize::try_from(at).map_err(|_| Errno::EFBIG)?;
        let end = start.checked_add(buf.len()).ok_or(Errno::EFBIG)?;
        if buf.is_empty() {
            return Ok(());
        }
        self.allocate(start / PAGE, end.div_ceil(PAGE))?;
        if end as u64 > self.len {
            self.clear_past_end();
        }
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

    /// Zeroes the last page past the end: what a mapping stored there is
    /// not the file's, and the file is about to grow over it.
    fn clear_past_end(&mut self) {
        let len = self.len as usize;
        if let Some(bytes) = self.page_mut(len / PAGE)
            && !len.is_multiple_of(PAGE)
        {
            bytes[len % PAGE..].fill(0);
        }
    }

    /// Sets the length: pages past it go back to the allocator (a mapping
    /// keeps its own reference), and the rest of the last page is zeroed (so
    /// growing again reads zeros).
    fn truncate(&mut self, len: u64) -> Result<(), Errno> {
        let len_bytes = usize::try_from(len).map_err(|_| Errno::EFBIG)?;
        if len > self.len {
            self.clear_past_end();
        }
        let keep = len_bytes.div_ceil(PAGE);
        if keep < self.pages.len() {
            self.pages.truncate(keep); // the frames go back as they drop
            self.pages.shrink_to_fit();
            self.stored.retain(|&p| p < keep);
        }
        if let Some(bytes) = self.page_mut(len_bytes / PAGE) {
            bytes[len_bytes % PAGE..].fill(0);
        }
        self.len = len;
        Ok(())
    }
}
