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

fn from_bcd(value: u8, binary: bool) -> u64 {
    if binary {
        u64::from(value)
    } else {
        u64::from((value >> 4) * 10 + (value & 0x0f))
    }
}

/// Seconds since 1970-01-01 UTC, read from the RTC (assumed to keep UTC, as
/// QEMU's does by default).
pub fn unix_time() -> u64 {
    // Read twice until equal, so an update in between cannot tear the value.
    let read_all = || {
        let s = seconds();
        [
            s,
            read_register(0x02),
            read_register(0x04),
            read_register(0x07),
            read_register(0x08),
            read_register(0x09),
        ]
    };
    let mut now = read_all();
    loop {
        let again = read_all();
        if again == now {
            break;
        }
        now = again;
    }
    let binary = read_register(0x0b) & 0x04 != 0;
    let [sec, min, hour, day, month, year] = now.map(|v| from_bcd(v, binary));
    kcore::time::days_from_civil(2000 + year, month, day) * 86_400 + hour * 3600 + min * 60 + sec
}
