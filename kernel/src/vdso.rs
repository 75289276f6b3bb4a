//! The vDSO and its clock page, as exec gives them to every process.
//!
//! The vDSO (`kernel/vdso`, built by build.rs into a small shared object)
//! answers `clock_gettime`, `gettimeofday`, `time` and `getcpu` in user
//! mode. Exec maps two things, side by side, where mmap would put them:
//!
//! ```text
//!   [vvar]  one page, read-only, shared: the clock page, which the tick
//!           rewrites (clock.rs) and every process sees at once
//!   [vdso]  the image, read and execute, private: its pages are the same
//!           frames in every process, copied only if someone writes to them
//!           (a debugger's breakpoint), as any private file mapping
//! ```
//!
//! and puts the image's address in the auxiliary vector as
//! `AT_SYSINFO_EHDR`, where libc looks for it. Both are file mappings of
//! kernel-made `FileData`s, so fork, munmap, /proc/PID/maps and core dumps
//! need nothing new for them: they show as `[vvar]` and `[vdso]`, on
//! device 00:00 with inode 0, as on Linux.

use abi::Errno;
use abi::types::{PROT_EXEC, PROT_READ};
use alloc::sync::Arc;
use kcore::vdso::ClockPage;
use kcore::vma::{FileMap, Kind};
use spin::Once;

use crate::fs::filedata::FileData;
use crate::mm::PAGE_SIZE;
use crate::mm::areas::MappedFile;
use crate::proc::vm::UserMemory;

/// The image build.rs linked: one page of code and symbol tables.
static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vdso.so"));

struct Vdso {
    image: MappedFile,
    page: MappedFile,
    /// The kernel's view of `page`'s frame, which the tick writes.
    clock: &'static ClockPage,
}

static VDSO: Once<Vdso> = Once::new();

/// Makes the image's pages and the clock page. Called once at boot, after
/// the frame allocator and before the clock starts (the clock publishes
/// into the page from its first tick).
pub fn init() {
    let kernel_file = |data: FileData, name: &str| MappedFile {
        data,
        ino: 0,
        name: Arc::from(name),
        may_write: false,
        disk_node: None,
    };
    let image = FileData::from_bytes(IMAGE).expect("memory for the vDSO at boot");
    let page = FileData::sized(PAGE_SIZE).expect("memory for the clock page at boot");
    // This use of the frame is never given back, so the page lives as
    // long as the kernel (mm::clock_page_at's contract).
    let frame = page
        .map_page(0, false)
        .unwrap_or_else(|_| panic!("no frame for the clock page at boot"));
    VDSO.call_once(|| Vdso {
        image: kernel_file(image, "[vdso]"),
        page: kernel_file(page, "[vvar]"),
        clock: crate::mm::clock_page_at(frame),
    });
    crate::info!("vdso: {} bytes, clock page shared", IMAGE.len());
}

/// The clock page every process sees; None before `init`.
pub fn clock_page() -> Option<&'static ClockPage> {
    VDSO.get().map(|v| v.clock)
}

/// Maps the clock page and the vDSO into `mem`, where mmap would put them;
/// returns the image's address (AT_SYSINFO_EHDR). ENOMEM when there is no
/// room.
pub fn map(mem: &mut UserMemory) -> Result<u64, Errno> {
    let vdso = VDSO.get().expect("vdso::init not called");
    let image_len = vdso.image.data.len().next_multiple_of(PAGE_SIZE);
    let start = mem.room_for(PAGE_SIZE + image_len)?;
    let image = start + PAGE_SIZE;
    // The page: shared, so the tick's writes are what every process reads.
    let page = FileMap::new(vdso.page.clone(), start, 0, true);
    mem.record(start, image, PROT_READ, Kind::File(page));
    let code = FileMap::new(vdso.image.clone(), image, 0, false);
    mem.record(
        image,
        image + image_len,
        PROT_READ | PROT_EXEC,
        Kind::File(code),
    );
    Ok(image)
}
