//! The serial console (COM1) and the kernel log.
//!
//! Everything the kernel says goes to COM1, which QEMU connects to the
//! terminal (`cargo xtask run`) or to the test runner. Each log line carries
//! the tick count and a level, so a reader sees when and how serious:
//!
//!     [     1234] INFO  clock: pit at 1000 Hz
//!
//! The port is behind the kernel's lock (interrupts off while held), because
//! the timer interrupt and exception handlers print too.
//!
//! Every log line, INFO lines that `quiet=1` keeps off the console too, is
//! also kept in a ring of the last `RING_BYTES` bytes, which `/dev/klog`
//! reads (Linux's printk buffer, which dmesg and /dev/kmsg read): a program
//! can see the boot log after the console has scrolled it away.

use core::fmt::{self, Write};
use uart_16550::SerialPort;

use crate::sync::{IrqLock, Rank};

static COM1: IrqLock<Option<SerialPort>> = IrqLock::new(Rank::Serial, None);

/// Sets up COM1 at its standard I/O port.
pub fn init() {
    // SAFETY: 0x3f8 is COM1 on every PC and QEMU machine, and nothing else
    // in the kernel drives it.
    let mut port = unsafe { SerialPort::new(0x3f8) };
    port.init();
    *COM1.lock() = Some(port);
}

/// Writes formatted text to the console; used by the `print!` macros.
pub fn write_fmt(args: fmt::Arguments) {
    if let Some(port) = COM1.lock().as_mut() {
        let _ = port.write_fmt(args);
    }
}

/// Writes raw bytes (user `write` to the console goes through here).
pub fn write_bytes(bytes: &[u8]) {
    if let Some(port) = COM1.lock().as_mut() {
        for &b in bytes {
            if b == b'\n' {
                port.send(b'\r');
            }
            port.send(b);
        }
    }
}

/// Writes text even if the lock is held: for the last words of a panic or a
/// fault report, when the holder will never run again. The lock checks
/// stand aside from then on (`sync::last_words`), since the CPU may hold
/// any lock when it panics.
pub fn emergency_write(args: fmt::Arguments) {
    // SAFETY: only called on the way to power-off, with interrupts off, so
    // the machine will not resume whoever held the lock.
    crate::sync::last_words();
    unsafe { COM1.force_unlock() };
    write_fmt(args);
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error,
    Warn,
    Info,
}

impl Level {
    fn label(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN ",
            Level::Info => "INFO ",
        }
    }
}

/// The boot option `quiet=1`: INFO lines are not written.
static QUIET: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Silences INFO lines (or not); called once at boot, before the first.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, core::sync::atomic::Ordering::Relaxed);
}

/// Writes one log line at `level`: to the ring always, to the console
/// unless `quiet` holds it back.
pub fn log(level: Level, args: fmt::Arguments) {
    let line = format_args!(
        "[{:>9}] {} {}\n",
        crate::clock::ticks(),
        level.label(),
        args
    );
    let _ = RING.lock().write_fmt(line);
    if level == Level::Info && QUIET.load(core::sync::atomic::Ordering::Relaxed) {
        return;
    }
    write_fmt(line);
}

/// How much of the log the ring keeps: the boot log is about 1 KiB.
const RING_BYTES: usize = 64 * 1024;

/// The last `RING_BYTES` bytes of the log. Byte `n` of everything ever
/// logged is at `bytes[n % RING_BYTES]` while `n >= written - RING_BYTES`.
struct Ring {
    bytes: [u8; RING_BYTES],
    /// Bytes ever logged.
    written: u64,
}

static RING: IrqLock<Ring> = IrqLock::new(
    Rank::LogRing,
    Ring {
        bytes: [0; RING_BYTES],
        written: 0,
    },
);

impl Write for Ring {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            self.bytes[(self.written % RING_BYTES as u64) as usize] = b;
            self.written += 1;
        }
        Ok(())
    }
}

/// Copies the log from byte `at` (counted from boot) into `buf`: the
/// number copied and the position after them. A position the ring has
/// overwritten reads from its oldest byte, so a slow reader skips ahead
/// rather than reading text that is gone.
pub fn read_ring(at: u64, buf: &mut [u8]) -> (usize, u64) {
    let ring = RING.lock();
    let oldest = ring.written.saturating_sub(RING_BYTES as u64);
    let from = at.max(oldest);
    let n = (ring.written.saturating_sub(from) as usize).min(buf.len());
    for (i, b) in buf[..n].iter_mut().enumerate() {
        *b = ring.bytes[((from + i as u64) % RING_BYTES as u64) as usize];
    }
    (n, from + n as u64)
}

/// Lines about user programs' misfortunes (faults, bad signal frames) that
/// may be printed per second; a fuzzer or a crash loop must not turn the
/// console into the bottleneck. The rest are counted and reported with the
/// next line that gets through, as Linux's printk_ratelimit does.
const USER_LINES_PER_SECOND: u64 = 10;

struct RateLimit {
    second: u64,
    printed: u64,
    suppressed: u64,
}

static USER_LINES: crate::sync::IrqLock<RateLimit> = crate::sync::IrqLock::new(
    crate::sync::Rank::LogLimit,
    RateLimit {
        second: 0,
        printed: 0,
        suppressed: 0,
    },
);

/// Prints a line about a user program, unless too many were printed this
/// second.
pub fn user_line(args: fmt::Arguments) {
    let second = crate::clock::ticks() / u64::from(crate::clock::hz()).max(1);
    let suppressed = {
        let mut limit = USER_LINES.lock();
        if limit.second != second {
            limit.second = second;
            limit.printed = 0;
        }
        if limit.printed == USER_LINES_PER_SECOND {
            limit.suppressed += 1;
            return;
        }
        limit.printed += 1;
        core::mem::take(&mut limit.suppressed)
    };
    if suppressed > 0 {
        write_fmt(format_args!("({suppressed} similar lines not shown)\n"));
    }
    write_fmt(format_args!("{args}\n"));
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::log::write_fmt(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::log::write_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}

#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Info, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Warn, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Error, format_args!($($arg)*)) };
}
