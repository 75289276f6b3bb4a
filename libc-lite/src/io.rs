//! Formatted output to file descriptors: `print!`, `println!`, `eprintln!`.
//!
//! Text is gathered in a small buffer on the stack and written with as few
//! `write` calls as it takes, so a line normally reaches the console whole
//! even when several processes print at once.

use core::fmt;

pub struct FdWriter {
    fd: i32,
    buf: [u8; 512],
    len: usize,
}

impl FdWriter {
    pub fn new(fd: i32) -> Self {
        FdWriter {
            fd,
            buf: [0; 512],
            len: 0,
        }
    }

    pub fn flush(&mut self) {
        let _ = crate::sys::write_all(self.fd, &self.buf[..self.len]);
        self.len = 0;
    }
}

impl fmt::Write for FdWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for chunk in s.as_bytes().chunks(self.buf.len()) {
            if self.len + chunk.len() > self.buf.len() {
                self.flush();
            }
            self.buf[self.len..self.len + chunk.len()].copy_from_slice(chunk);
            self.len += chunk.len();
        }
        Ok(())
    }
}

impl Drop for FdWriter {
    fn drop(&mut self) {
        self.flush();
    }
}

pub fn print_to(fd: i32, args: fmt::Arguments) {
    let _ = fmt::Write::write_fmt(&mut FdWriter::new(fd), args);
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::io::print_to(1, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::io::print_to(1, format_args!("{}\n", format_args!($($arg)*))) };
}

#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::io::print_to(2, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! eprintln {
    () => { $crate::eprint!("\n") };
    ($($arg:tt)*) => { $crate::io::print_to(2, format_args!("{}\n", format_args!($($arg)*))) };
}
