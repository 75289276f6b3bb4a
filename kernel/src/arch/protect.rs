//! Protections the CPU gives the kernel against its own mistakes.
//!
//! - **SMEP**: ring 0 never executes a user page, so a corrupted kernel
//!   function pointer cannot jump into code a program planted.
//! - **SMAP**: ring 0 never reads or writes a user page, except inside
//!   `mm/uaccess.rs`, whose copy opens a window with `stac` and closes it with
//!   `clac`; a stray kernel dereference of a user pointer faults at once. Every
//!   trap entry clears AC (`clac`), so an interrupt taken inside the window
//!   does not inherit it; the `syscall` entry's FMASK clears it too.
//! - **CR0.WP**: read-only pages are read-only for the kernel as well (the
//!   bootloader maps the kernel's text and read-only data without WRITABLE),
//!   and copy-on-write user pages are never written in place by mistake.
//! - **NX** (EFER.NXE, turned on by the bootloader): data pages are never
//!   executed; the paging code maps user data, stacks and heaps NO_EXECUTE.
//!
//! SMEP and SMAP are used when CPUID reports them (QEMU's `-cpu max` under TCG
//! does); `smep()`/`smap()` say whether they are on, and the self-tests check
//! each protection by provoking it (`selftest.rs`).

use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};

/// Read by the assembly of uaccess and the trap entry: 1 when `stac`/`clac`
/// exist and must be used.
#[unsafe(no_mangle)]
pub static SMAP_ENABLED: AtomicU8 = AtomicU8::new(0);
static SMEP_ENABLED: AtomicBool = AtomicBool::new(false);

/// CPUID leaf 7, sub-leaf 0, EBX: bit 7 SMEP, bit 20 SMAP.
fn cpuid_7_ebx() -> u32 {
    // A CPU without leaf 7 reports zeros: no SMEP, no SMAP.
    core::arch::x86_64::__cpuid_count(7, 0).ebx
}

pub fn init() {
    let ebx = cpuid_7_ebx();
    let (smep, smap) = (ebx & (1 << 7) != 0, ebx & (1 << 20) != 0);
    // SAFETY: WP, SMEP and SMAP only forbid accesses; the kernel touches user
    // memory only through uaccess, which opens the SMAP window, and never
    // runs user code in ring 0.
    unsafe {
        Cr0::update(|f| f.insert(Cr0Flags::WRITE_PROTECT));
        Cr4::update(|f| {
            if smep {
                f.insert(Cr4Flags::SUPERVISOR_MODE_EXECUTION_PROTECTION);
            }
            if smap {
                f.insert(Cr4Flags::SUPERVISOR_MODE_ACCESS_PREVENTION);
            }
        });
    }
    SMEP_ENABLED.store(smep, Ordering::Relaxed);
    SMAP_ENABLED.store(u8::from(smap), Ordering::Relaxed);
    crate::info!(
        "cpu: SMEP {}, SMAP {}, kernel write protection on",
        if smep { "on" } else { "not available" },
        if smap { "on" } else { "not available" }
    );
}

pub fn smep() -> bool {
    SMEP_ENABLED.load(Ordering::Relaxed)
}

pub fn smap() -> bool {
    SMAP_ENABLED.load(Ordering::Relaxed) != 0
}
