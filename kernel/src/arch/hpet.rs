//! The HPET (High Precision Event Timer): the third tick source
//! (`tick=hpet`).
//!
//! The HPET is one up-counter running at a fixed rate the chip states in
//! femtoseconds per count (QEMU's: 10 ns, 100 MHz), and a few comparators
//! that raise an interrupt when the counter reaches them. The firmware's
//! ACPI table named HPET gives the physical address of its registers
//! (`acpi::hpet_base`), which the physical-memory window maps like the
//! local APIC's.
//!
//! Timer 0 ticks: in periodic mode its comparator adds the period to
//! itself each time it fires, so the rate never drifts. Its interrupt goes
//! where the PIT's went: the legacy replacement route sends timer 0 to
//! IRQ 0 (and cuts the PIT off from it), so the PIC delivers it on the
//! PIT's vector and `clock::on_timer_interrupt` cannot tell the two apart,
//! which is the point: nothing above the clock knows which chip ticks. The
//! other CPUs tick from their local APIC timers, as with the PIT.

use core::sync::atomic::{AtomicU64, Ordering};

/// General capabilities: the period in femtoseconds (high half), whether
/// the legacy route exists (bit 15).
const REG_CAPABILITIES: usize = 0x000;
/// General configuration: the counter runs (bit 0), the legacy route is on
/// (bit 1).
const REG_CONFIG: usize = 0x010;
const REG_COUNTER: usize = 0x0f0;
const REG_TIMER0_CONFIG: usize = 0x100;
const REG_TIMER0_COMPARATOR: usize = 0x108;

const CAP_LEGACY_ROUTE: u64 = 1 << 15;
const CONFIG_ENABLE: u64 = 1 << 0;
const CONFIG_LEGACY_ROUTE: u64 = 1 << 1;
const TIMER_INTERRUPT: u64 = 1 << 2;
const TIMER_PERIODIC: u64 = 1 << 3;
const TIMER_CAN_PERIODIC: u64 = 1 << 4;
/// The next comparator write sets the period's accumulator too.
const TIMER_SET_VALUE: u64 = 1 << 6;

const FEMTOS_PER_SECOND: u64 = 1_000_000_000_000_000;

/// Virtual address of the registers; 0 until `start_periodic`.
static BASE: AtomicU64 = AtomicU64::new(0);

fn read(reg: usize) -> u64 {
    let base = BASE.load(Ordering::Relaxed);
    // SAFETY: `base` maps the HPET's 1 KiB register block (through the
    // physical-memory window, as the ACPI table placed it) and `reg` is one
    // of its 64-bit registers, 8-byte aligned.
    unsafe { core::ptr::read_volatile((base as usize + reg) as *const u64) }
}

fn write(reg: usize, value: u64) {
    let base = BASE.load(Ordering::Relaxed);
    // SAFETY: as in `read`; writing these registers changes only when the
    // HPET counts and whom it interrupts.
    unsafe { core::ptr::write_volatile((base as usize + reg) as *mut u64, value) };
}

/// Starts timer 0 periodic at `hz` on IRQ 0, the HPET's registers at
/// physical address `phys`. Returns the counter's rate in Hz, or why the
/// chip cannot tick (no legacy route, a timer 0 that is not periodic, a
/// period of 0). Call with IRQ 0 masked and the PIT's channel 0 stopped.
pub fn start_periodic(phys: u64, hz: u32) -> Result<u64, &'static str> {
    BASE.store(crate::mm::phys_to_virt(phys).as_u64(), Ordering::Relaxed);
    let capabilities = read(REG_CAPABILITIES);
    let femtos = capabilities >> 32;
    if femtos == 0 || femtos > 100_000_000 {
        return Err("the HPET states no valid period");
    }
    if capabilities & CAP_LEGACY_ROUTE == 0 {
        return Err("the HPET cannot route timer 0 to IRQ 0");
    }
    if read(REG_TIMER0_CONFIG) & TIMER_CAN_PERIODIC == 0 {
        return Err("the HPET's timer 0 is not periodic");
    }
    let rate = FEMTOS_PER_SECOND / femtos;
    let period = (rate / u64::from(hz)).max(1);
    // Stopped while it is set up, from a counter of 0.
    write(REG_CONFIG, read(REG_CONFIG) & !CONFIG_ENABLE);
    write(REG_COUNTER, 0);
    write(
        REG_TIMER0_CONFIG,
        TIMER_INTERRUPT | TIMER_PERIODIC | TIMER_SET_VALUE,
    );
    write(REG_TIMER0_COMPARATOR, period);
    // After a write with SET_VALUE, the next one is the period itself.
    write(REG_TIMER0_COMPARATOR, period);
    write(
        REG_CONFIG,
        read(REG_CONFIG) | CONFIG_LEGACY_ROUTE | CONFIG_ENABLE,
    );
    Ok(rate)
}
