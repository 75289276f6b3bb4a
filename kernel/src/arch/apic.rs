//! The local APIC timer, the second tick source.
//!
//! Its rate depends on the machine, so it is calibrated against the PIT: count
//! how far it runs down in 10 ms of PIT channel 2, then program it periodic at
//! the wanted rate. The PIT's channel 0 is stopped and IRQ 0 masked, so only
//! one source ticks.

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::registers::model_specific::Msr;

use super::{pit, trap};

const IA32_APIC_BASE: u32 = 0x1b;
const REG_EOI: usize = 0xb0;
const REG_SPURIOUS: usize = 0xf0;
const REG_LVT_TIMER: usize = 0x320;
const REG_INITIAL_COUNT: usize = 0x380;
const REG_CURRENT_COUNT: usize = 0x390;
const REG_DIVIDE: usize = 0x3e0;
const LVT_MASKED: u32 = 1 << 16;
const LVT_PERIODIC: u32 = 1 << 17;
const DIVIDE_BY_16: u32 = 0x3;

/// Virtual address of the APIC's registers; 0 until `start_timer`.
static BASE: AtomicU64 = AtomicU64::new(0);

fn write(reg: usize, value: u32) {
    let base = BASE.load(Ordering::Relaxed);
    // SAFETY: `base` maps the local APIC's 4 KiB register page (through the
    // physical-memory window) and `reg` is one of its 32-bit registers.
    unsafe { core::ptr::write_volatile((base as usize + reg) as *mut u32, value) };
}

fn read(reg: usize) -> u32 {
    let base = BASE.load(Ordering::Relaxed);
    // SAFETY: as in `write`.
    unsafe { core::ptr::read_volatile((base as usize + reg) as *const u32) }
}

/// Enables the local APIC and starts its timer at `hz`; returns the timer's
/// measured input rate in Hz (after the divide-by-16).
pub fn start_timer(hz: u32) -> u64 {
    // SAFETY: reading IA32_APIC_BASE has no side effects.
    let phys = unsafe { Msr::new(IA32_APIC_BASE).read() } & 0xf_ffff_f000;
    BASE.store(crate::mm::phys_to_virt(phys).as_u64(), Ordering::Relaxed);
    write(REG_SPURIOUS, 0x100 | trap::APIC_SPURIOUS as u32);
    write(REG_DIVIDE, DIVIDE_BY_16);
    write(REG_LVT_TIMER, LVT_MASKED | trap::APIC_TIMER as u32);
    write(REG_INITIAL_COUNT, u32::MAX);
    pit::busy_wait_us(10_000);
    let per_10ms = u64::from(u32::MAX - read(REG_CURRENT_COUNT));
    let rate = per_10ms * 100;
    write(REG_LVT_TIMER, LVT_PERIODIC | trap::APIC_TIMER as u32);
    write(REG_INITIAL_COUNT, (rate / u64::from(hz)).max(1) as u32);
    rate
}

/// Acknowledges the current APIC interrupt.
pub fn end_of_interrupt() {
    write(REG_EOI, 0);
}
