//! The local APIC: each CPU's own interrupt controller, its timer (the
//! second tick source), and the inter-processor interrupts (IPIs) one CPU
//! sends another.
//!
//! The timer's rate depends on the machine, so it is calibrated once, on
//! the boot CPU, against the PIT: count how far it runs down in 10 ms of PIT
//! channel 2, then program it periodic at the wanted rate. Every CPU's timer
//! runs from the same bus clock, so the other CPUs reuse that figure (they
//! could not all use the one PIT at once anyway). With `tick=apic` the
//! PIT's channel 0 is stopped and IRQ 0 masked, so only one source ticks on
//! the boot CPU; the other CPUs always tick from their own APIC timer,
//! since the PIT's interrupt reaches the boot CPU alone.
//!
//! Each CPU's APIC sits at the same physical address and answers only that
//! CPU, so `BASE` is one value for all of them. An IPI is a write of the
//! target's APIC id to the high half of the interrupt command register
//! (ICR) and of the vector and delivery mode to its low half, which sends
//! it.

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::registers::model_specific::Msr;

use super::{pit, trap};

const IA32_APIC_BASE: u32 = 0x1b;
const REG_ID: usize = 0x20;
const REG_EOI: usize = 0xb0;
const REG_SPURIOUS: usize = 0xf0;
const REG_LVT_TIMER: usize = 0x320;
const REG_INITIAL_COUNT: usize = 0x380;
const REG_CURRENT_COUNT: usize = 0x390;
const REG_DIVIDE: usize = 0x3e0;
const REG_ICR_LOW: usize = 0x300;
const REG_ICR_HIGH: usize = 0x310;
/// ICR delivery modes and flags (Intel SDM vol. 3, 11.6.1).
const ICR_FIXED: u32 = 0;
const ICR_INIT: u32 = 0b101 << 8;
const ICR_STARTUP: u32 = 0b110 << 8;
const ICR_ASSERT: u32 = 1 << 14;
const ICR_PENDING: u32 = 1 << 12;
const LVT_MASKED: u32 = 1 << 16;
const LVT_PERIODIC: u32 = 1 << 17;
const DIVIDE_BY_16: u32 = 0x3;

/// Virtual address of the APIC's registers; 0 until `enable`.
static BASE: AtomicU64 = AtomicU64::new(0);
/// The timer's input rate in Hz after the divide-by-16; 0 until
/// `calibrate`.
static RATE: AtomicU64 = AtomicU64::new(0);
/// The timer's count per tick (the same on every CPU); 0 until
/// `start_timer`.
static PERIOD: AtomicU64 = AtomicU64::new(0);

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

/// Turns this CPU's local APIC on (its spurious-vector register) and
/// returns its id. Every CPU calls it once, with interrupts off.
pub fn enable() -> u32 {
    if BASE.load(Ordering::Relaxed) == 0 {
        // SAFETY: reading IA32_APIC_BASE has no side effects.
        let phys = unsafe { Msr::new(IA32_APIC_BASE).read() } & 0xf_ffff_f000;
        BASE.store(crate::mm::phys_to_virt(phys).as_u64(), Ordering::Relaxed);
    }
    write(REG_SPURIOUS, 0x100 | trap::APIC_SPURIOUS as u32);
    id()
}

/// This CPU's APIC id.
pub fn id() -> u32 {
    read(REG_ID) >> 24
}

/// Measures the timer's input rate against the PIT (10 ms of channel 2),
/// once, on the boot CPU; returns it in Hz.
pub fn calibrate() -> u64 {
    let known = RATE.load(Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    write(REG_DIVIDE, DIVIDE_BY_16);
    write(REG_LVT_TIMER, LVT_MASKED | trap::APIC_TIMER as u32);
    write(REG_INITIAL_COUNT, u32::MAX);
    pit::busy_wait_us(10_000);
    let per_10ms = u64::from(u32::MAX - read(REG_CURRENT_COUNT));
    let rate = per_10ms * 100;
    RATE.store(rate, Ordering::Relaxed);
    rate
}

/// Enables this CPU's local APIC and starts its timer at `hz` (calibrating
/// first if no CPU has); returns the timer's input rate in Hz.
pub fn start_timer(hz: u32) -> u64 {
    enable();
    let rate = calibrate();
    let period = (rate / u64::from(hz)).max(1);
    PERIOD.store(period, Ordering::Relaxed);
    write(REG_DIVIDE, DIVIDE_BY_16);
    write(REG_LVT_TIMER, LVT_PERIODIC | trap::APIC_TIMER as u32);
    write(REG_INITIAL_COUNT, period as u32);
    rate
}

/// Stops this CPU's timer (an initial count of 0 stops it), for an idle
/// CPU that needs no tick until something wakes it.
pub fn stop_timer() {
    write(REG_INITIAL_COUNT, 0);
}

/// Starts this CPU's stopped timer again: a full period to the next tick.
pub fn restart_timer() {
    write(REG_INITIAL_COUNT, PERIOD.load(Ordering::Relaxed) as u32);
}

/// Waits until the APIC has sent the last IPI (the ICR's delivery status).
fn wait_sent() {
    while read(REG_ICR_LOW) & ICR_PENDING != 0 {
        core::hint::spin_loop();
    }
}

/// Writes the ICR: `low` to the CPU with APIC id `target`.
/// Interrupts stay off in between the two writes, so an IPI sent by an
/// interrupt handler cannot come between them and redirect this one.
fn send(target: u32, low: u32) {
    x86_64::instructions::interrupts::without_interrupts(|| {
        wait_sent();
        write(REG_ICR_HIGH, target << 24);
        write(REG_ICR_LOW, low);
    });
}

/// Sends interrupt `vector` to the CPU with APIC id `target`.
pub fn send_ipi(target: u32, vector: u8) {
    send(target, ICR_FIXED | u32::from(vector));
}

/// The INIT IPI, which resets the target CPU into its wait-for-startup
/// state (the first step of starting it, arch/smp.rs).
pub fn send_init(target: u32) {
    send(target, ICR_INIT | ICR_ASSERT);
    wait_sent();
}

/// The startup IPI: the target begins in real mode at physical address
/// `page << 12`.
pub fn send_startup(target: u32, page: u8) {
    send(target, ICR_STARTUP | ICR_ASSERT | u32::from(page));
    wait_sent();
}

/// Acknowledges the current APIC interrupt.
pub fn end_of_interrupt() {
    write(REG_EOI, 0);
}
