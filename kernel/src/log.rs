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
//! reads as it was printed, and syslog(2) and `/dev/kmsg` read in Linux's
//! forms (kcore::kmsg): a program (`dmesg`) can see the boot log after the
//! console has scrolled it away. Each line has Linux's level (3 an error,
//! 4 a warning, 6 information), and reaches the console only below the
//! console level, 7 at boot, which the boot option `loglevel=` and syslog's
//! CONSOLE_LEVEL set: `loglevel=4` keeps warnings (an unknown system call,
//! say) out of a program's output on the console, and in the ring.

use core::fmt::{self, Write};
use uart_16550::SerialPort;

use crate::sync::{IrqLock, Rank};

static COM1: IrqLock<Option<SerialPort>> = IrqLock::new(Rank::Serial, None);

/// Sets up COM1 at its standard I/O port.
pub fn init() {
    // SAFETY: 0x3f8 is COM1 on every PC and QEMU machine, and nothing else
    // in the kernel drives it.
    let port = unsafe { SerialPort::new(0x3f8) };
    // Set up by arch::uart, which keeps what was typed while the machine
    // booted (uart_16550's `init` would clear it).
    crate::arch::uart::init_com1();
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

    /// Linux's number for it.
    fn number(self) -> u8 {
        match self {
            Level::Error => kcore::kmsg::LEVEL_ERR,
            Level::Warn => kcore::kmsg::LEVEL_WARNING,
            Level::Info => kcore::kmsg::LEVEL_INFO,
        }
    }

    /// The kernel's kind of line for Linux's level `number` (0 to 7).
    fn of_number(number: u8) -> Level {
        match number {
            0..=3 => Level::Error,
            4 => Level::Warn,
            _ => Level::Info,
        }
    }
}

/// Lines reach the console only below this level (kcore::kmsg::printed).
static CONSOLE_LEVEL: core::sync::atomic::AtomicU8 =
    core::sync::atomic::AtomicU8::new(kcore::kmsg::DEFAULT_CONSOLE_LEVEL);

/// The console level: the boot option `loglevel=`, syslog's
/// CONSOLE_LEVEL, CONSOLE_OFF and CONSOLE_ON.
pub fn set_console_level(level: u8) {
    CONSOLE_LEVEL.store(level, core::sync::atomic::Ordering::Relaxed);
}

pub fn console_level() -> u8 {
    CONSOLE_LEVEL.load(core::sync::atomic::Ordering::Relaxed)
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
    if !kcore::kmsg::printed(level.number(), console_level()) {
        return;
    }
    write_fmt(line);
}

/// Logs what a program wrote to /dev/kmsg (`<N>` first gives its level).
pub fn log_written(text: &str) {
    let (level, message) = kcore::kmsg::parse_written(text.trim_end_matches('\n'));
    log(Level::of_number(level), format_args!("{message}"));
}

/// The log from byte `from` on (counted from boot; an overwritten part
/// starts at the oldest byte kept), line by line: `visit` gets the
/// positions of each line (its newline included) and the line read back
/// (`kcore::kmsg::parse`); a line the wrap cut, or still being written,
/// is passed over.
pub fn each_record(from: u64, mut visit: impl FnMut(core::ops::Range<u64>, kcore::kmsg::Record)) {
    let mut text = alloc::vec![0u8; RING_BYTES];
    let (n, next) = read_ring(from, &mut text);
    let start = next - n as u64;
    let mut at = 0;
    while let Some(end) = text[at..n].iter().position(|&b| b == b'\n') {
        let line = &text[at..at + end];
        if let Ok(line) = core::str::from_utf8(line)
            && let Some(record) = kcore::kmsg::parse(line)
        {
            visit(start + at as u64..start + (at + end + 1) as u64, record);
        }
        at += end + 1;
    }
}

/// Bytes logged since boot: the position just past the newest line.
pub fn written() -> u64 {
    RING.lock().written
}

/// Where syslog's READ_ALL starts (moved by CLEAR) and where its READ
/// goes on from (moved by each READ).
pub static SYSLOG_CLEARED: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
pub static SYSLOG_READ: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// How much of the log the ring keeps: the boot log is about 1 KiB.
pub const RING_BYTES: usize = 64 * 1024;

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
