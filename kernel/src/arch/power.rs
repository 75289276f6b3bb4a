//! Ending the machine with a status the host can see.
//!
//! QEMU's `isa-debug-exit` device (port 0xf4) ends QEMU with exit code
//! `(value << 1) | 1`. xtask maps that back: value 0..=126 is the exit status
//! of the guest's program (or of the self-tests), and `KERNEL_FAILURE` (127,
//! QEMU exit code 255) means the kernel itself stopped on a panic or an
//! unexpected exception.

use x86_64::instructions::port::Port;

const DEBUG_EXIT_PORT: u16 = 0xf4;
/// Status of a kernel panic or exception report.
pub const KERNEL_FAILURE: u8 = 127;

/// Powers off with `status` (masked to 0..=127).
pub fn exit(status: u8) -> ! {
    x86_64::instructions::interrupts::disable();
    // SAFETY: writing the debug-exit port ends QEMU; on a machine without the
    // device the write is ignored and we halt below.
    unsafe { Port::<u32>::new(DEBUG_EXIT_PORT).write(u32::from(status & 0x7f)) };
    loop {
        x86_64::instructions::hlt();
    }
}

/// Stops the machine after a kernel failure.
pub fn fail() -> ! {
    exit(KERNEL_FAILURE)
}
