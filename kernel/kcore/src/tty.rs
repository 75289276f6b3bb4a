//! A terminal's line discipline: what the bytes typed at a terminal become
//! before a program reads them, and what a program writes becomes before
//! the terminal shows it (POSIX's "General Terminal Interface"; Linux's
//! `n_tty`). The console and each pseudo-terminal have one.
//!
//! **Input.** Each typed byte goes through `receive`:
//!
//! - `ISIG`: the `VINTR`, `VQUIT` and `VSUSP` characters are not input but
//!   a signal (SIGINT, SIGQUIT, SIGTSTP) to the terminal's foreground
//!   process group; what was typed ahead is thrown away unless `NOFLSH`.
//! - `ICRNL` turns a carriage return into a newline (`IGNCR` drops it,
//!   `INLCR` turns a newline into a return), as a terminal sends CR for
//!   Enter.
//! - `ICANON` (canonical mode): input is edited into lines. `VERASE` takes
//!   back a character, `VKILL` the line, `VEOF` ends a line without a
//!   newline (on an empty line: a read returns 0, end of file), a newline
//!   completes it. A reader gets nothing until a line is complete, and at
//!   most one line a read.
//! - Otherwise (raw or cbreak mode) every byte is readable at once; a read
//!   waits for at least one byte when `VMIN` is above 0 and returns what
//!   there is when it is 0 (`VTIME` is not timed here: as 0).
//! - `ECHO`: what is typed is shown (control characters as `^X` with
//!   `ECHOCTL`), an erase as backspace-space-backspace with `ECHOE`;
//!   `ECHONL` shows the newline even without `ECHO`.
//!
//! **Output.** With `OPOST` and `ONLCR` a newline is shown as CR LF
//! (`output`), which is why a program's `\n` arrives as `\r\n` at a
//! pseudo-terminal's master.
//!
//! The discipline only computes: it returns the bytes to echo and the
//! signal to send, and its owner (`fs/console.rs`, `fs/pty.rs`) shows them,
//! signals and wakes readers.

use abi::types::{
    ECHO, ECHOCTL, ECHOE, ECHONL, ICANON, ICRNL, IGNCR, INLCR, ISIG, NOFLSH, ONLCR, OPOST, Termios,
    VEOF, VERASE, VINTR, VKILL, VMIN, VQUIT, VSUSP,
};
use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// The longest line canonical mode edits (Linux's `N_TTY_BUF_SIZE`, 4096):
/// more is dropped until the line ends.
pub const MAX_LINE: usize = 4096;

/// What one typed byte did, beyond the input it may have added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// A signal for the foreground process group (`ISIG`).
    pub signal: Option<u32>,
    /// Something became readable (a line, a byte, end of file): wake the
    /// readers.
    pub readable: bool,
}

/// One terminal's settings and the input it holds.
#[derive(Clone, Debug)]
pub struct Discipline {
    pub termios: Termios,
    /// The line being edited (canonical mode).
    editing: Vec<u8>,
    /// Input a read may take: complete lines (canonical), or every byte.
    ready: VecDeque<u8>,
    /// Where each complete line in `ready` ends (canonical mode reads
    /// stop there), as counts of bytes from the front.
    line_ends: VecDeque<usize>,
    /// End of file typed on an empty line: the next read returns 0.
    eof: bool,
}

impl Discipline {
    pub fn new(termios: Termios) -> Discipline {
        Discipline {
            termios,
            editing: Vec::new(),
            ready: VecDeque::new(),
            line_ends: VecDeque::new(),
            eof: false,
        }
    }

    fn lflag(&self, flag: u32) -> bool {
        self.termios.c_lflag & flag != 0
    }

    /// Whether `byte` is control character `index` (0 disables one, as
    /// `_POSIX_VDISABLE`).
    fn is(&self, index: usize, byte: u8) -> bool {
        self.termios.c_cc[index] != 0 && self.termios.c_cc[index] == byte
    }

    fn canonical(&self) -> bool {
        self.lflag(ICANON)
    }

    /// Sets the terminal's settings (TCSETS). Leaving canonical mode makes
    /// the line being edited readable at once, as on Linux; returns whether
    /// that woke something.
    pub fn set_termios(&mut self, termios: Termios) -> bool {
        let was_canonical = self.canonical();
        self.termios = termios;
        if was_canonical && !self.canonical() {
            self.line_ends.clear();
            if !self.editing.is_empty() {
                let line = core::mem::take(&mut self.editing);
                self.ready.extend(line);
                return true;
            }
        }
        false
    }

    /// Throws away typed input, edited and complete (a signal's flush,
    /// TCSETSF, TCFLSH).
    pub fn flush_input(&mut self) {
        self.editing.clear();
        self.ready.clear();
        self.line_ends.clear();
        self.eof = false;
    }

    /// How `byte` is shown when echoed: as itself, or `^X` for a control
    /// character with `ECHOCTL` (tab and newline as themselves).
    fn echo_char(&self, byte: u8, echo: &mut Vec<u8>) {
        if self.lflag(ECHOCTL) && (byte < 0x20 || byte == 0x7f) && byte != b'\t' && byte != b'\n' {
            echo.extend_from_slice(&[b'^', byte ^ 0x40]);
        } else {
            echo.push(byte);
        }
    }

    /// How many columns the echo of `byte` took (what an erase takes back).
    fn echo_width(&self, byte: u8) -> usize {
        if self.lflag(ECHOCTL) && (byte < 0x20 || byte == 0x7f) && byte != b'\t' {
            2
        } else {
            1
        }
    }

    /// One byte typed at the terminal; what it shows goes on `echo`.
    pub fn receive(&mut self, byte: u8, echo: &mut Vec<u8>) -> Received {
        if self.lflag(ISIG) {
            let signal = if self.is(VINTR, byte) {
                Some(abi::signal::SIGINT)
            } else if self.is(VQUIT, byte) {
                Some(abi::signal::SIGQUIT)
            } else if self.is(VSUSP, byte) {
                Some(abi::signal::SIGTSTP)
            } else {
                None
            };
            if let Some(signal) = signal {
                if !self.lflag(NOFLSH) {
                    self.flush_input();
                }
                if self.lflag(ECHO) {
                    self.echo_char(byte, echo);
                }
                return Received {
                    signal: Some(signal),
                    readable: false,
                };
            }
        }
        let iflag = self.termios.c_iflag;
        let byte = match byte {
            b'\r' if iflag & IGNCR != 0 => return Received::default(),
            b'\r' if iflag & ICRNL != 0 => b'\n',
            b'\n' if iflag & INLCR != 0 => b'\r',
            b => b,
        };
        if !self.canonical() {
            if self.ready.len() >= MAX_LINE {
                return Received::default();
            }
            self.ready.push_back(byte);
            if self.lflag(ECHO) {
                self.echo_char(byte, echo);
            } else if byte == b'\n' && self.lflag(ECHONL) {
                echo.push(b'\n');
            }
            return Received {
                signal: None,
                readable: true,
            };
        }
        self.edit(byte, echo)
    }

    /// Canonical mode: `byte` edits the line or completes it.
    fn edit(&mut self, byte: u8, echo: &mut Vec<u8>) -> Received {
        let echoing = self.lflag(ECHO);
        let complete = |d: &mut Discipline| {
            let line = core::mem::take(&mut d.editing);
            d.ready.extend(line);
            d.line_ends.push_back(d.ready.len());
            Received {
                signal: None,
                readable: true,
            }
        };
        if byte == b'\n' {
            if echoing || self.lflag(ECHONL) {
                echo.push(b'\n');
            }
            self.editing.push(b'\n');
            return complete(self);
        }
        if self.is(VEOF, byte) {
            if self.editing.is_empty() {
                self.eof = true;
                return Received {
                    signal: None,
                    readable: true,
                };
            }
            return complete(self);
        }
        if self.is(VERASE, byte) {
            if let Some(gone) = self.editing.pop()
                && echoing
            {
                if self.lflag(ECHOE) {
                    for _ in 0..self.echo_width(gone) {
                        echo.extend_from_slice(b"\x08 \x08");
                    }
                } else {
                    self.echo_char(byte, echo);
                }
            }
            return Received::default();
        }
        if self.is(VKILL, byte) {
            if echoing {
                if self.lflag(ECHOE) {
                    let columns: usize = self.editing.iter().map(|&b| self.echo_width(b)).sum();
                    for _ in 0..columns {
                        echo.extend_from_slice(b"\x08 \x08");
                    }
                } else {
                    self.echo_char(byte, echo);
                    echo.push(b'\n');
                }
            }
            self.editing.clear();
            return Received::default();
        }
        if self.editing.len() < MAX_LINE - 1 {
            self.editing.push(byte);
            if echoing {
                self.echo_char(byte, echo);
            }
        }
        Received::default()
    }

    /// Whether a read would return at once: a complete line or end of
    /// file (canonical), a byte (otherwise; or always, with `VMIN` 0).
    pub fn readable(&self) -> bool {
        if self.eof {
            return true;
        }
        if self.canonical() {
            !self.line_ends.is_empty()
        } else {
            !self.ready.is_empty() || self.termios.c_cc[VMIN] == 0
        }
    }

    /// Takes what a read gets into `buf`: `None` when it must wait,
    /// `Some(0)` at end of file. Canonical mode gives at most one line.
    pub fn read(&mut self, buf: &mut [u8]) -> Option<usize> {
        if !self.readable() {
            return None;
        }
        if self.canonical() && self.line_ends.is_empty() {
            // Only end of file can be pending here.
            self.eof = false;
            return Some(0);
        }
        let available = if self.canonical() {
            self.line_ends[0]
        } else {
            self.ready.len()
        };
        if available == 0 && self.eof {
            self.eof = false;
            return Some(0);
        }
        let n = buf.len().min(available);
        for (dst, src) in buf.iter_mut().zip(self.ready.drain(..n)) {
            *dst = src;
        }
        if self.canonical() {
            // The lines behind this one end that much nearer the front.
            for end in self.line_ends.iter_mut() {
                *end -= n;
            }
            if self.line_ends[0] == 0 {
                self.line_ends.pop_front();
            }
        }
        Some(n)
    }

    /// Bytes of input a read could take now (FIONREAD).
    pub fn waiting(&self) -> usize {
        if self.canonical() {
            self.line_ends.back().copied().unwrap_or(0)
        } else {
            self.ready.len()
        }
    }

    /// What the terminal shows for `bytes` a program wrote: with `OPOST`
    /// and `ONLCR`, each newline as CR LF.
    pub fn output(&self, bytes: &[u8], out: &mut Vec<u8>) {
        let oflag = self.termios.c_oflag;
        if oflag & OPOST == 0 || oflag & ONLCR == 0 {
            out.extend_from_slice(bytes);
            return;
        }
        for &b in bytes {
            if b == b'\n' {
                out.extend_from_slice(b"\r\n");
            } else {
                out.push(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(d: &mut Discipline, bytes: &[u8]) -> (Vec<u8>, Vec<Received>) {
        let mut echo = Vec::new();
        let got = bytes.iter().map(|&b| d.receive(b, &mut echo)).collect();
        (echo, got)
    }

    fn read_all(d: &mut Discipline) -> Vec<u8> {
        let mut buf = [0u8; 64];
        match d.read(&mut buf) {
            Some(n) => buf[..n].to_vec(),
            None => b"(waits)".to_vec(),
        }
    }

    fn pty() -> Discipline {
        Discipline::new(Termios::standard())
    }

    #[test]
    fn a_line_is_readable_only_when_complete_and_one_at_a_time() {
        let mut d = pty();
        let (echo, got) = typed(&mut d, b"ls");
        assert_eq!(echo, b"ls");
        assert!(got.iter().all(|r| !r.readable));
        assert_eq!(read_all(&mut d), b"(waits)");
        typed(&mut d, b"\rpwd\n");
        assert_eq!(read_all(&mut d), b"ls\n", "CR became NL (ICRNL)");
        assert_eq!(read_all(&mut d), b"pwd\n");
        assert_eq!(read_all(&mut d), b"(waits)");
    }

    #[test]
    fn a_short_read_leaves_the_rest_of_the_line() {
        let mut d = pty();
        typed(&mut d, b"abcdef\nxy\n");
        let mut buf = [0u8; 4];
        assert_eq!(d.read(&mut buf), Some(4));
        assert_eq!(&buf, b"abcd");
        assert_eq!(d.waiting(), 6);
        assert_eq!(read_all(&mut d), b"ef\n");
        assert_eq!(read_all(&mut d), b"xy\n");
    }

    #[test]
    fn erase_kill_and_end_of_file() {
        let mut d = pty();
        let (echo, _) = typed(&mut d, b"cax\x7fb\x15ok\x04");
        assert_eq!(echo, b"cax\x08 \x08b\x08 \x08\x08 \x08\x08 \x08ok");
        assert_eq!(
            read_all(&mut d),
            b"ok",
            "VEOF ends a line without a newline"
        );
        typed(&mut d, b"\x04");
        assert_eq!(read_all(&mut d), b"", "VEOF on an empty line: end of file");
        assert_eq!(read_all(&mut d), b"(waits)", "once");
    }

    #[test]
    fn signal_characters_signal_and_flush() {
        let mut d = pty();
        let (echo, got) = typed(&mut d, b"half\x03");
        assert_eq!(got[4].signal, Some(abi::signal::SIGINT));
        assert_eq!(echo, b"half^C");
        assert_eq!(d.waiting(), 0);
        let (_, got) = typed(&mut d, b"\x1c\x1a");
        assert_eq!(got[0].signal, Some(abi::signal::SIGQUIT));
        assert_eq!(got[1].signal, Some(abi::signal::SIGTSTP));
        let mut t = Termios::standard();
        t.c_lflag &= !ISIG;
        d.set_termios(t);
        let (_, got) = typed(&mut d, b"\x03\n");
        assert_eq!(got[0].signal, None);
        assert_eq!(read_all(&mut d), b"\x03\n", "without ISIG: input");
    }

    #[test]
    fn raw_mode_gives_every_byte_and_leaving_canonical_releases_the_line() {
        let mut d = pty();
        typed(&mut d, b"pending");
        let mut raw = Termios::standard();
        raw.c_lflag &= !(ICANON | ECHO);
        assert!(d.set_termios(raw), "the edited line is readable now");
        assert_eq!(read_all(&mut d), b"pending");
        let (echo, got) = typed(&mut d, b"\x7fq");
        assert!(echo.is_empty());
        assert!(got.iter().all(|r| r.readable));
        assert_eq!(read_all(&mut d), b"\x7fq", "no editing in raw mode");
        raw.c_cc[VMIN] = 0;
        d.set_termios(raw);
        assert_eq!(read_all(&mut d), b"", "VMIN 0: a read returns at once");
    }

    #[test]
    fn output_shows_a_newline_as_cr_lf() {
        let d = pty();
        let mut out = Vec::new();
        d.output(b"I wish to buy a fish license.\n", &mut out);
        assert_eq!(out, b"I wish to buy a fish license.\r\n");
        let mut t = Termios::standard();
        t.c_oflag &= !OPOST;
        let d = Discipline::new(t);
        out.clear();
        d.output(b"a\n", &mut out);
        assert_eq!(out, b"a\n");
    }

    #[test]
    fn control_characters_echo_as_caret_letters() {
        let mut d = pty();
        let (echo, _) = typed(&mut d, b"\x01\t\x7f");
        assert_eq!(echo, b"^A\t\x08 \x08", "the tab erased, one column");
        let (echo, _) = typed(&mut d, b"\x7f");
        assert_eq!(echo, b"\x08 \x08\x08 \x08", "^A took two columns");
    }
}
