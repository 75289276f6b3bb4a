//! The kernel log as Linux's readers want it: `syslog(2)` (what `dmesg`
//! and busybox's `dmesg` call) gives lines with a `<level>` prefix and a
//! timestamp in seconds, `/dev/kmsg` gives one record per read as
//! `level,sequence,microseconds,-;text`. The kernel keeps its log as the
//! lines it printed (`[    ticks] LEVEL text`, kernel/src/log.rs); this
//! module reads such a line back and writes it in either form, and knows
//! the console level a message must be under to be printed (the boot
//! option `loglevel=`, syslog's CONSOLE_LEVEL).
//!
//! Levels are Linux's: 3 an error, 4 a warning, 6 information (the
//! kernel's three), 0 to 7 for what a program writes to /dev/kmsg.

use alloc::format;
use alloc::string::String;

/// Linux's levels for the kernel's three kinds of line.
pub const LEVEL_ERR: u8 = 3;
pub const LEVEL_WARNING: u8 = 4;
pub const LEVEL_INFO: u8 = 6;

/// The console level at boot: every level below it is printed (Linux's
/// CONSOLE_LOGLEVEL_DEFAULT, 7: all but debug messages).
pub const DEFAULT_CONSOLE_LEVEL: u8 = 7;

/// The level of a line's label, as log.rs writes it.
pub fn level_of_label(label: &str) -> Option<u8> {
    match label {
        "ERROR" => Some(LEVEL_ERR),
        "WARN" => Some(LEVEL_WARNING),
        "INFO" => Some(LEVEL_INFO),
        _ => None,
    }
}

/// One line of the log, read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub ticks: u64,
    pub level: u8,
    pub text: &'a str,
}

/// Reads a log line (`[     1234] INFO  text`, without its newline).
/// None for anything else (a line cut by the ring's wrap, say).
pub fn parse(line: &str) -> Option<Record<'_>> {
    let rest = line.strip_prefix('[')?;
    let (ticks, rest) = rest.split_once(']')?;
    let ticks = ticks.trim().parse().ok()?;
    let rest = rest.strip_prefix(' ')?;
    let (label, text) = rest.split_at_checked(5)?;
    let level = level_of_label(label.trim_end())?;
    Some(Record {
        ticks,
        level,
        text: text.strip_prefix(' ').unwrap_or(text),
    })
}

/// Microseconds since boot of a record made at `ticks` of a clock of `hz`.
fn micros(ticks: u64, hz: u32) -> u64 {
    (u128::from(ticks) * 1_000_000 / u128::from(hz.max(1))) as u64
}

/// The record as syslog(2) gives it: `<6>[    1.234000] text\n`.
pub fn syslog_line(record: &Record, hz: u32) -> String {
    let us = micros(record.ticks, hz);
    format!(
        "<{}>[{:>5}.{:06}] {}\n",
        record.level,
        us / 1_000_000,
        us % 1_000_000,
        record.text
    )
}

/// The record as one read of /dev/kmsg gives it: `6,SEQ,USEC,-;text\n`
/// (the facility is the kernel's, 0, so the priority is the level).
pub fn kmsg_record(record: &Record, seq: u64, hz: u32) -> String {
    format!(
        "{},{},{},-;{}\n",
        record.level,
        seq,
        micros(record.ticks, hz),
        record.text
    )
}

/// What a program wrote to /dev/kmsg: an optional `<N>` prefix gives the
/// level (the facility bits above it are dropped), else it is information
/// (Linux's default for user messages is 4, a warning; this kernel logs
/// them as what they say they are, and a line with no level as INFO).
pub fn parse_written(text: &str) -> (u8, &str) {
    if let Some(rest) = text.strip_prefix('<')
        && let Some((number, message)) = rest.split_once('>')
        && let Ok(priority) = number.parse::<u32>()
    {
        return ((priority & 7) as u8, message);
    }
    (LEVEL_INFO, text)
}

/// Whether a message of `level` reaches the console at `console_level`.
pub fn printed(level: u8, console_level: u8) -> bool {
    level < console_level
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_are_read_back() {
        let r = parse("[     1234] INFO  clock: pit at 1000 Hz").unwrap();
        assert_eq!(
            r,
            Record {
                ticks: 1234,
                level: LEVEL_INFO,
                text: "clock: pit at 1000 Hz"
            }
        );
        let w = parse("[        7] WARN  pid 3 (sh): unknown system call 40").unwrap();
        assert_eq!(w.level, LEVEL_WARNING);
        assert_eq!(w.text, "pid 3 (sh): unknown system call 40");
        assert_eq!(parse("[        7] ERROR oops").unwrap().level, LEVEL_ERR);
        assert_eq!(parse("half a line] INFO  x"), None);
        assert_eq!(parse("[  12] NOISE x"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn records_are_written_as_linux_writes_them() {
        let r = Record {
            ticks: 1234,
            level: LEVEL_INFO,
            text: "hello",
        };
        assert_eq!(syslog_line(&r, 1000), "<6>[    1.234000] hello\n");
        assert_eq!(syslog_line(&r, 100), "<6>[   12.340000] hello\n");
        assert_eq!(kmsg_record(&r, 42, 1000), "6,42,1234000,-;hello\n");
    }

    #[test]
    fn written_messages_take_their_level() {
        assert_eq!(parse_written("<3>disk on fire"), (3, "disk on fire"));
        // A facility above the level is dropped (user, 1 << 3).
        assert_eq!(parse_written("<12>from user"), (4, "from user"));
        assert_eq!(parse_written("plain"), (LEVEL_INFO, "plain"));
        assert_eq!(parse_written("<x>odd"), (LEVEL_INFO, "<x>odd"));
    }

    #[test]
    fn the_console_prints_below_its_level() {
        assert!(printed(LEVEL_INFO, DEFAULT_CONSOLE_LEVEL));
        assert!(!printed(LEVEL_WARNING, 4));
        assert!(printed(LEVEL_ERR, 4));
        assert!(!printed(LEVEL_ERR, 1));
    }
}
