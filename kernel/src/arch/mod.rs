//! Everything specific to the x86_64 processor and the PC around it.

pub mod acpi;
pub mod apic;
pub mod cpuid;
pub mod entropy;
pub mod fpu;
pub mod gdt;
pub mod hpet;
#[cfg(feature = "mcount")]
pub mod mcount;
pub mod pci;
pub mod percpu;
pub mod pic;
pub mod pit;
pub mod power;
pub mod protect;
pub mod rtc;
pub mod smp;
pub mod switch;
pub mod syscall;
pub mod trap;
pub mod uart;

/// Reads the time-stamp counter.
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no side effects and is allowed in ring 0.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Where the kernel's own code is: `[start, end)` of its executable
/// segment, from the program headers of its ELF image (`kcore::elf::
/// text_span`), for the kernel's profiler (kprof.rs). None if the image
/// holds no headers the profiler can read.
pub fn kernel_text() -> Option<(u64, u64)> {
    unsafe extern "C" {
        /// The linker's name for the first byte of the ELF header, which it
        /// puts at the start of the first loaded segment (read-only data).
        static __ehdr_start: [u8; 64];
    }
    // SAFETY: `__ehdr_start` is the kernel image's ELF header: the
    // bootloader maps every loaded segment, read-only here, for the
    // kernel's whole life, and the linker puts the headers in the first.
    let head: &[u8; 64] = unsafe { &*core::ptr::addr_of!(__ehdr_start) };
    let len = kcore::elf::headers_end(head)?;
    // The program headers follow the ELF header in the same segment; a
    // table past one page would be no kernel's this linker made.
    if len > 4096 {
        return None;
    }
    // SAFETY: `headers_end` read the table's place from the header just
    // checked; it lies in the same mapped, read-only segment, `len` bytes.
    let headers = unsafe { core::slice::from_raw_parts(head.as_ptr(), len) };
    kcore::elf::text_span(headers)
}
