//! Structure layouts shared by the kernel and user space (`#[repr(C)]`).

/// What `kinfo()` reports: the machine as a test or `free`/`uptime` sees it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KInfo {
    /// Clock ticks since boot.
    pub ticks: u64,
    /// Ticks per second (the boot option `hz`).
    pub hz: u64,
    /// Physical frames (4 KiB) free right now.
    pub free_frames: u64,
    /// Physical frames the allocator manages in all.
    pub total_frames: u64,
}
