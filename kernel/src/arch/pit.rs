//! The 8254 programmable interval timer.
//!
//! Channel 0 is the classic tick source (IRQ 0, periodic). Channel 2, whose
//! output can be polled through port 0x61, is the kernel's stopwatch: it times
//! a known interval to calibrate the TSC and the local APIC timer.

use x86_64::instructions::port::Port;

/// The PIT's input clock, in Hz.
pub const FREQUENCY: u32 = 1_193_182;

const CHANNEL0: u16 = 0x40;
const CHANNEL2: u16 = 0x42;
const COMMAND: u16 = 0x43;
const GATE: u16 = 0x61;

/// The divisor that comes closest to `hz`.
pub fn divisor_for(hz: u32) -> u16 {
    ((FREQUENCY + hz / 2) / hz).clamp(1, 65535) as u16
}

/// Starts channel 0 as a rate generator at `hz`; returns the exact rate.
pub fn start_periodic(hz: u32) -> u32 {
    let divisor = divisor_for(hz);
    // SAFETY: programming channel 0 only changes when IRQ 0 fires.
    unsafe {
        Port::<u8>::new(COMMAND).write(0x34); // channel 0, lo/hi byte, mode 2
        Port::<u8>::new(CHANNEL0).write(divisor as u8);
        Port::<u8>::new(CHANNEL0).write((divisor >> 8) as u8);
    }
    FREQUENCY / u32::from(divisor)
}

/// Stops channel 0 (mode 0 waiting for a count that never comes).
pub fn stop() {
    // SAFETY: as in start_periodic.
    unsafe { Port::<u8>::new(COMMAND).write(0x30) };
}

/// Busy-waits `micros` microseconds (at most 54 ms) on channel 2.
pub fn busy_wait_us(micros: u32) {
    let count = (u64::from(FREQUENCY) * u64::from(micros) / 1_000_000).clamp(1, 65535) as u16;
    // SAFETY: channel 2 drives only the PC speaker, which stays disconnected
    // (bit 1 of port 0x61 clear); nothing else uses it.
    unsafe {
        let mut gate = Port::<u8>::new(GATE);
        let speaker_off_gate_on = (gate.read() & !0x02) | 0x01;
        gate.write(speaker_off_gate_on & !0x01);
        Port::<u8>::new(COMMAND).write(0xb0); // channel 2, lo/hi byte, mode 0
        Port::<u8>::new(CHANNEL2).write(count as u8);
        Port::<u8>::new(CHANNEL2).write((count >> 8) as u8);
        gate.write(speaker_off_gate_on); // rising gate edge starts the count
        while gate.read() & 0x20 == 0 {
            core::hint::spin_loop();
        }
    }
}
