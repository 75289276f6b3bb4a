//! The console: the serial port as a terminal.
//!
//! Output goes straight to COM1. Input arrives by interrupt (IRQ 4), one byte
//! at a time, and is edited here into lines as a terminal's canonical mode
//! does: characters are echoed, backspace erases, Enter completes the line,
//! Ctrl-D at the start of a line is end of file, Ctrl-U erases the line.
//! Readers sleep until a whole line is ready. Ctrl-C and Ctrl-\ discard the
//! line and send SIGINT and SIGQUIT to the foreground process group, which a
//! shell sets with `tcsetpgrp` (ioctl TIOCSPGRP) for each job it runs. Those
//! keys are the terminal's control characters (`c_cc`: VERASE, VKILL, VEOF,
//! VINTR, VQUIT), Linux's defaults until a program sets others.
//!
//! In canonical mode Ctrl-P prints every thread, its state, what it sleeps
//! on and its CPU (`proc::dump_threads`, xv6's procdump): what to look at
//! when a program hangs.
//!
//! That is the terminal's canonical mode. A program that edits lines itself
//! (the shell, for its history and arrow keys) turns it off with `tcsetattr`
//! (ioctl TCSETS, `c_lflag` without ICANON): then every byte is readable as
//! it arrives, echoed only with ECHO, and Ctrl-C still signals with ISIG.

use abi::types::{ECHO, ICANON, ISIG, Termios, VEOF, VERASE, VINTR, VKILL, VQUIT};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::arch::uart;
use crate::proc::sched::{self, Chan, Readiness};
use crate::sync::{IrqLock, Rank};

const MAX_LINE: usize = 1024;

struct Input {
    editing: Vec<u8>,
    ready: VecDeque<u8>,
    /// Ctrl-D on an empty line: the next read returns 0.
    eof: bool,
    /// The terminal's settings as last set (TCSETS) and reported (TCGETS).
    /// Of them the console honours the local flags ISIG, ICANON and ECHO;
    /// its control keys are Linux's defaults (^C, ^\, ^D, DEL/BS, ^U)
    /// whatever `c_cc` says.
    termios: Termios,
}

static INPUT: IrqLock<Input> = IrqLock::new(
    Rank::Service,
    Input {
        editing: Vec::new(),
        ready: VecDeque::new(),
        eof: false,
        termios: Termios::initial(),
    },
);

/// The terminal's settings (TCGETS).
pub fn termios() -> Termios {
    INPUT.lock().termios
}

/// Sets the terminal's settings (TCSETS); leaving canonical mode makes a
/// half-typed line readable at once, as on Linux.
pub fn set_termios(termios: Termios) {
    let mut input = INPUT.lock();
    input.termios = termios;
    if termios.c_lflag & ICANON == 0 && !input.editing.is_empty() {
        let line = core::mem::take(&mut input.editing);
        input.ready.extend(line);
        drop(input);
        wake();
    }
}

/// The terminal's changes (input, its end) and pollers.
pub static READY: Readiness = Readiness::new();

/// New input (or its end): wakes readers and pollers. Takes the process
/// table, which comes before the input's lock in the order (sync.rs), so
/// the caller must have let the input go.
fn wake() {
    READY.changed_for(Chan::Console, abi::types::POLLIN | abi::types::POLLHUP);
}

/// The window size programs are told (TIOCGWINSZ) and may set
/// (TIOCSWINSZ): a serial line does not know its screen, so it is 24x80
/// until someone says otherwise, as Linux's console keeps what was set.
static WINSIZE: IrqLock<abi::types::Winsize> = IrqLock::new(
    Rank::Service,
    abi::types::Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    },
);

pub fn winsize() -> abi::types::Winsize {
    *WINSIZE.lock()
}

/// Sets the window size; a change sends SIGWINCH to the foreground group.
pub fn set_winsize(winsize: abi::types::Winsize) {
    let changed = core::mem::replace(&mut *WINSIZE.lock(), winsize) != winsize;
    if changed {
        crate::signal::send_to_group(
            foreground(),
            abi::signal::SIGWINCH,
            crate::signal::Origin::kernel(),
        );
    }
}

/// The process group Ctrl-C signals; init's until a shell says otherwise.
static FOREGROUND: AtomicU32 = AtomicU32::new(crate::proc::INIT_PID);

pub fn foreground() -> u32 {
    FOREGROUND.load(Ordering::Relaxed)
}

pub fn set_foreground(pgid: u32) {
    FOREGROUND.store(pgid, Ordering::Relaxed);
}

/// Takes what was typed while the machine booted, then lets the serial
/// port's receive interrupt through.
pub fn init() {
    for byte in uart::take_early_input() {
        receive(byte);
    }
    uart::enable_com1_receive_interrupt();
    crate::arch::pic::set_irq_enabled(4, true);
}

/// IRQ 4: take every byte the UART has.
pub fn on_interrupt() {
    while let Some(byte) = uart::com1_received_byte() {
        receive(byte);
    }
    crate::arch::pic::end_of_interrupt(crate::arch::trap::IRQ_COM1);
}

/// Ctrl-P: prints the thread table (in canonical mode only, so a program
/// that edits its own lines, as bash does, still gets the key).
const DUMP_KEY: u8 = 0x10;

/// Whether `byte` is the control character `c_cc[index]` (0 disables one,
/// as `_POSIX_VDISABLE`).
fn is_control(termios: &Termios, index: usize, byte: u8) -> bool {
    termios.c_cc[index] != 0 && termios.c_cc[index] == byte
}

fn receive(byte: u8) {
    let termios = termios();
    let lflag = termios.c_lflag;
    let signals = lflag & ISIG != 0;
    let signal = match byte {
        _ if signals && is_control(&termios, VINTR, byte) => abi::signal::SIGINT,
        _ if signals && is_control(&termios, VQUIT, byte) => abi::signal::SIGQUIT,
        _ if lflag & ICANON == 0 => return pass_through(byte, lflag),
        DUMP_KEY => return crate::proc::dump_threads(),
        _ => return edit_line(byte),
    };
    if lflag & ECHO != 0 {
        // Echoed as ^X, as Linux's ECHOCTL does.
        crate::log::write_bytes(&[b'^', byte ^ 0x40, b'\n']);
    }
    // As a terminal does (without NOFLSH): typed-ahead input goes too.
    let mut input = INPUT.lock();
    input.editing.clear();
    input.ready.clear();
    drop(input);
    let group = foreground();
    crate::signal::send_to_group(group, signal, crate::signal::Origin::kernel());
}

/// Non-canonical mode: the byte is readable as it is.
fn pass_through(byte: u8, lflag: u32) {
    let mut input = INPUT.lock();
    if input.ready.len() < MAX_LINE * 4 {
        input.ready.push_back(byte);
        if lflag & ECHO != 0 {
            crate::log::write_bytes(&[byte]);
        }
    }
    drop(input);
    wake();
}

/// Canonical mode: `byte` edits the line; a completed line (or the end of
/// input) wakes the readers, once the input's lock is let go.
fn edit_line(byte: u8) {
    let mut input = INPUT.lock();
    let termios = input.termios;
    let control = |index| is_control(&termios, index, byte);
    let readable = match byte {
        b'\r' | b'\n' => {
            crate::log::write_bytes(b"\n");
            let line = core::mem::take(&mut input.editing);
            input.ready.extend(line);
            input.ready.push_back(b'\n');
            true
        }
        // Backspace erases too, whatever VERASE says: serial terminals send
        // either.
        _ if control(VERASE) || byte == 0x08 => {
            if input.editing.pop().is_some() {
                crate::log::write_bytes(b"\x08 \x08");
            }
            false
        }
        _ if control(VKILL) => {
            for _ in 0..input.editing.len() {
                crate::log::write_bytes(b"\x08 \x08");
            }
            input.editing.clear();
            false
        }
        _ if control(VEOF) => {
            if input.editing.is_empty() {
                input.eof = true;
            } else {
                let line = core::mem::take(&mut input.editing);
                input.ready.extend(line);
            }
            true
        }
        // Anything else is part of the line, escape sequences of arrow keys
        // typed ahead included (a line editor will read them); other
        // control characters echo as ^X, so they cannot move the cursor.
        b if input.editing.len() < MAX_LINE => {
            input.editing.push(b);
            if b < 0x20 && b != b'\t' {
                crate::log::write_bytes(&[b'^', b + 0x40]);
            } else {
                crate::log::write_bytes(&[b]);
            }
            false
        }
        _ => false,
    };
    drop(input);
    if readable {
        wake();
    }
}

/// Reads up to `buf.len()` bytes of complete lines, sleeping until there
/// are some; with `nonblock` (the file's O_NONBLOCK), EAGAIN instead of
/// sleeping, as a terminal gives on Linux (readline and bash open
/// /dev/tty so, and clear the flag when they see EAGAIN).
pub fn read(buf: &mut [u8], nonblock: bool) -> Result<usize, abi::Errno> {
    sched::wait_event(Chan::Console, || {
        let mut input = INPUT.lock();
        if !input.ready.is_empty() {
            let n = buf.len().min(input.ready.len());
            for (dst, src) in buf.iter_mut().zip(input.ready.drain(..n)) {
                *dst = src;
            }
            Some(Ok(n))
        } else if input.eof {
            input.eof = false;
            Some(Ok(0))
        } else if nonblock {
            Some(Err(abi::Errno::EAGAIN))
        } else {
            None
        }
    })?
}

/// Whether a read would return at once (a line, or end of file, typed).
pub fn readable() -> bool {
    let input = INPUT.lock();
    !input.ready.is_empty() || input.eof
}

pub fn write(buf: &[u8]) -> usize {
    crate::log::write_bytes(buf);
    buf.len()
}
