//! The CMOS real-time clock: wall-clock time, and a second hand independent of
//! the tick, which the self-test uses to check the tick rate.

use x86_64::instructions::port::Port;

fn read_register(reg: u8) -> u8 {
    // SAFETY: ports 0x70/0x71 select and read a CMOS register; reading the
    // time registers has no side effects.
    unsafe {
        Port::<u8>::new(0x70).write(reg);
        Port::<u8>::new(0x71).read()
    }
}

fn update_in_progress() -> bool {
    read_register(0x0a) & 0x80 != 0
}

/// The RTC's seconds field (0..=59, in whatever encoding the RTC uses).
pub fn seconds() -> u8 {
    while update_in_progress() {
        core::hint::spin_loop();
    }
    read_register(0x00)
}
