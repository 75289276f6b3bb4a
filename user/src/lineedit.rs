//! Line editing for interactive programs (the shell): the terminal in
//! non-canonical mode, and the program does what a terminal's line
//! discipline would, plus a history. Keys: printable characters, Backspace,
//! Delete, Left/Right, Home/End (and Ctrl-A/Ctrl-E), Up/Down through the
//! history, Ctrl-U to erase, Ctrl-D on an empty line for end of input.
//! Ctrl-C still arrives as SIGINT (ISIG stays on): the program installs
//! `on_interrupt` as its handler (without SA_RESTART), and the line is
//! dropped whether the signal ended a read (EINTR) or came between two.

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use libc_lite::{Errno, print, sys};

/// Set by `on_interrupt`, taken by the editor.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A SIGINT handler for programs that use the editor.
pub extern "C" fn on_interrupt(_signal: i32) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Lines kept in the history.
const HISTORY: usize = 100;

#[derive(Default)]
pub struct LineEditor {
    history: Vec<String>,
}

/// What one key does.
enum Key {
    Insert(u8),
    Enter,
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    Up,
    Down,
    EraseLine,
    EndOfInput,
    Ignore,
}

/// One byte from the terminal; EINTR if Ctrl-C came before or during the
/// read (a signal between the check and the read is seen at the next key).
fn read_byte() -> Result<Option<u8>, Errno> {
    if INTERRUPTED.swap(false, Ordering::Relaxed) {
        return Err(Errno::EINTR);
    }
    let mut b = [0u8; 1];
    let got = sys::read(0, &mut b);
    if got == Err(Errno::EINTR) {
        INTERRUPTED.store(false, Ordering::Relaxed);
    }
    Ok((got? == 1).then_some(b[0]))
}

/// Decodes one key from the terminal (escape sequences included).
fn read_key() -> Result<Option<Key>, Errno> {
    let Some(byte) = read_byte()? else {
        return Ok(None);
    };
    Ok(Some(match byte {
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x01 => Key::Home,
        0x05 => Key::End,
        0x15 => Key::EraseLine,
        0x04 => Key::EndOfInput,
        0x1b => match (read_byte()?, read_byte()?) {
            (Some(b'[' | b'O'), Some(b'A')) => Key::Up,
            (Some(b'[' | b'O'), Some(b'B')) => Key::Down,
            (Some(b'[' | b'O'), Some(b'C')) => Key::Right,
            (Some(b'[' | b'O'), Some(b'D')) => Key::Left,
            (Some(b'[' | b'O'), Some(b'H')) => Key::Home,
            (Some(b'[' | b'O'), Some(b'F')) => Key::End,
            // VT220 keys: ESC [ n ~ (1 or 7 Home, 3 Delete, 4 or 8 End).
            (Some(b'['), Some(n @ b'0'..=b'9')) => {
                let mut last = read_byte()?;
                while last.is_some_and(|b| b.is_ascii_digit() || b == b';') {
                    last = read_byte()?;
                }
                match n {
                    b'1' | b'7' => Key::Home,
                    b'3' => Key::Delete,
                    b'4' | b'8' => Key::End,
                    _ => Key::Ignore,
                }
            }
            _ => Key::Ignore,
        },
        b if (0x20..0x7f).contains(&b) || b == b'\t' => Key::Insert(b),
        _ => Key::Ignore,
    }))
}

impl LineEditor {
    /// Whether standard input is a terminal this editor can drive.
    pub fn usable() -> bool {
        sys::terminal_flags(0).is_ok()
    }

    /// Reads one line after `prompt`; None at end of input. A line ended by
    /// Ctrl-C comes back empty.
    pub fn read_line(&mut self, prompt: &str) -> Result<Option<String>, Errno> {
        let saved = sys::terminal_flags(0)?;
        sys::set_terminal_flags(0, (saved & !(sys::ICANON | sys::ECHO)) | sys::ISIG)?;
        print!("{prompt}");
        INTERRUPTED.store(false, Ordering::Relaxed);
        let result = self.edit(prompt);
        let _ = sys::set_terminal_flags(0, saved);
        match result {
            Err(Errno::EINTR) => {
                print!("^C\n");
                Ok(Some(String::new()))
            }
            other => other,
        }
    }

    fn edit(&mut self, prompt: &str) -> Result<Option<String>, Errno> {
        let mut line: Vec<u8> = Vec::new();
        let mut cursor = 0;
        // Where Up/Down are in the history; history.len() is the new line.
        let mut recalled = self.history.len();
        loop {
            let Some(key) = read_key()? else {
                return Ok(None);
            };
            match key {
                Key::Enter => break,
                Key::EndOfInput if line.is_empty() => {
                    print!("\n");
                    return Ok(None);
                }
                Key::Insert(b) if cursor == line.len() => {
                    line.push(b);
                    cursor += 1;
                    print!("{}", b as char); // at the end: no redraw needed
                    continue;
                }
                Key::Insert(b) => {
                    line.insert(cursor, b);
                    cursor += 1;
                }
                Key::Backspace if cursor > 0 => {
                    cursor -= 1;
                    line.remove(cursor);
                }
                Key::Delete | Key::EndOfInput if cursor < line.len() => {
                    line.remove(cursor);
                }
                Key::Left if cursor > 0 => cursor -= 1,
                Key::Right if cursor < line.len() => cursor += 1,
                Key::Home => cursor = 0,
                Key::End => cursor = line.len(),
                Key::EraseLine => {
                    line.clear();
                    cursor = 0;
                }
                Key::Up | Key::Down => {
                    let next = match key {
                        Key::Up => recalled.checked_sub(1),
                        _ => (recalled < self.history.len()).then_some(recalled + 1),
                    };
                    let Some(next) = next else { continue };
                    recalled = next;
                    line = self
                        .history
                        .get(recalled)
                        .map_or_else(Vec::new, |l| l.clone().into_bytes());
                    cursor = line.len();
                }
                _ => continue,
            }
            redraw(prompt, &line, cursor);
        }
        print!("\n");
        let text = String::from_utf8(line).unwrap_or_default();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            if self.history.len() == HISTORY {
                self.history.remove(0);
            }
            self.history.push(text.clone());
        }
        Ok(Some(text))
    }
}

/// Rewrites the whole line (ANSI: erase to the end, move left).
fn redraw(prompt: &str, line: &[u8], cursor: usize) {
    print!(
        "\r{prompt}{}\x1b[K",
        core::str::from_utf8(line).unwrap_or("")
    );
    if cursor < line.len() {
        print!("\x1b[{}D", line.len() - cursor);
    }
}
