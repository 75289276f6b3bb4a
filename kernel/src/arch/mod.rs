//! Everything specific to the x86_64 processor and the PC around it.

pub mod acpi;
pub mod apic;
pub mod cpuid;
pub mod entropy;
pub mod fpu;
pub mod gdt;
pub mod hpet;
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
