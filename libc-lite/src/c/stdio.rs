//! `<stdio.h>`: the printf family, puts, putchar, and the three standard
//! streams.
//!
//! Output is formatted into a small buffer and written with `write(2)`; there
//! is no stdio buffering beyond one call, so output order between stdout,
//! stderr and the kernel log is what the program did. Supported conversions:
//! `d i u x X o c s p %`, with flags `- 0 + space #`, a width and a precision
//! (digits or `*`), and the length modifiers `hh h l ll z j t`. There is no
//! floating point: C programs are built with `-mgeneral-regs-only`.

use core::ffi::{VaList, c_char, c_int, c_void};

use super::cbytes;

/// A stream is just a file descriptor.
#[repr(C)]
pub struct File {
    fd: c_int,
}

struct Stream(File);
// SAFETY: the descriptors are fixed and only read.
unsafe impl Sync for Stream {}

static STDIN: Stream = Stream(File { fd: 0 });
static STDOUT: Stream = Stream(File { fd: 1 });
static STDERR: Stream = Stream(File { fd: 2 });

#[unsafe(no_mangle)]
pub static stdin: &File = &STDIN.0;
#[unsafe(no_mangle)]
pub static stdout: &File = &STDOUT.0;
#[unsafe(no_mangle)]
pub static stderr: &File = &STDERR.0;

/// Where formatted bytes go.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

/// A file descriptor, through a 256-byte buffer.
struct FdSink {
    fd: c_int,
    buf: [u8; 256],
    len: usize,
    total: usize,
    failed: bool,
}

impl FdSink {
    fn new(fd: c_int) -> Self {
        FdSink {
            fd,
            buf: [0; 256],
            len: 0,
            total: 0,
            failed: false,
        }
    }
    fn flush(&mut self) {
        if self.len > 0 && crate::sys::write_all(self.fd, &self.buf[..self.len]).is_err() {
            self.failed = true;
        }
        self.len = 0;
    }
    fn finish(mut self) -> c_int {
        self.flush();
        if self.failed { -1 } else { self.total as c_int }
    }
}

impl Sink for FdSink {
    fn put(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(self.buf.len()) {
            if self.len + chunk.len() > self.buf.len() {
                self.flush();
            }
            self.buf[self.len..self.len + chunk.len()].copy_from_slice(chunk);
            self.len += chunk.len();
        }
        self.total += bytes.len();
    }
}

/// A caller's buffer of `cap` bytes (snprintf): output past it is counted,
/// not written; the result is always NUL-terminated when `cap > 0`.
struct BufSink {
    buf: *mut u8,
    cap: usize,
    total: usize,
}

impl Sink for BufSink {
    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.total + 1 < self.cap {
                // SAFETY: within the caller's buffer of `cap` bytes.
                unsafe { self.buf.add(self.total).write(b) };
            }
            self.total += 1;
        }
    }
}

impl BufSink {
    fn finish(self) -> c_int {
        if self.cap > 0 {
            // SAFETY: index < cap.
            unsafe { self.buf.add(self.total.min(self.cap - 1)).write(0) };
        }
        self.total as c_int
    }
}

#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alt: bool,
    width: usize,
    precision: Option<usize>,
}

fn pad(out: &mut dyn Sink, byte: u8, n: usize) {
    for _ in 0..n {
        out.put(&[byte]);
    }
}

/// Writes `body` (digits or text) with sign/prefix, precision zeros and width.
fn emit(out: &mut dyn Sink, spec: &Spec, prefix: &[u8], body: &[u8], numeric: bool) {
    let zeros = if numeric {
        spec.precision.map_or(0, |p| p.saturating_sub(body.len()))
    } else {
        0
    };
    let len = prefix.len() + zeros + body.len();
    let fill = spec.width.saturating_sub(len);
    let zero_pad = spec.zero && !spec.left && numeric && spec.precision.is_none();
    if !spec.left && !zero_pad {
        pad(out, b' ', fill);
    }
    out.put(prefix);
    if zero_pad {
        pad(out, b'0', fill);
    }
    pad(out, b'0', zeros);
    out.put(body);
    if spec.left {
        pad(out, b' ', fill);
    }
}

fn digits(mut v: u64, base: u64, upper: bool, buf: &mut [u8; 24]) -> &[u8] {
    let table = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = table[(v % base) as usize];
        v /= base;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// The formatting engine shared by every printf.
///
/// # Safety
/// `fmt` must be a NUL-terminated string whose conversions match `args`.
unsafe fn format(out: &mut dyn Sink, fmt: *const c_char, args: &mut VaList) {
    // SAFETY: forwarded from the caller.
    let fmt = unsafe { cbytes(fmt) };
    let mut i = 0;
    while i < fmt.len() {
        let start = i;
        while i < fmt.len() && fmt[i] != b'%' {
            i += 1;
        }
        out.put(&fmt[start..i]);
        if i >= fmt.len() {
            break;
        }
        i += 1;
        let mut spec = Spec::default();
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => spec.left = true,
                b'0' => spec.zero = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            // SAFETY: a `*` width takes an int argument.
            let w = unsafe { args.next_arg::<c_int>() };
            spec.left |= w < 0;
            spec.width = w.unsigned_abs() as usize;
            i += 1;
        }
        while let Some(d) = fmt.get(i).filter(|b| b.is_ascii_digit()) {
            spec.width = spec.width * 10 + usize::from(d - b'0');
            i += 1;
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            let mut p = 0usize;
            if fmt.get(i) == Some(&b'*') {
                // SAFETY: a `*` precision takes an int argument.
                p = unsafe { args.next_arg::<c_int>() }.max(0) as usize;
                i += 1;
            }
            while let Some(d) = fmt.get(i).filter(|b| b.is_ascii_digit()) {
                p = p * 10 + usize::from(d - b'0');
                i += 1;
            }
            spec.precision = Some(p);
        }
        let mut long = 0; // 0 = int, 1 = long / size_t etc.
        while let Some(&m) = fmt.get(i) {
            match m {
                b'l' | b'z' | b'j' | b't' => long = 1,
                b'h' => {}
                _ => break,
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else { break };
        i += 1;
        let mut buf = [0u8; 24];
        // SAFETY (each next_arg): the caller's format promises this type.
        match conv {
            b'd' | b'i' => {
                let v = if long == 1 {
                    unsafe { args.next_arg::<i64>() }
                } else {
                    i64::from(unsafe { args.next_arg::<c_int>() })
                };
                let sign: &[u8] = if v < 0 {
                    b"-"
                } else if spec.plus {
                    b"+"
                } else if spec.space {
                    b" "
                } else {
                    b""
                };
                let body = digits(v.unsigned_abs(), 10, false, &mut buf);
                emit(out, &spec, sign, body, true);
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = if long == 1 {
                    unsafe { args.next_arg::<u64>() }
                } else {
                    u64::from(unsafe { args.next_arg::<u32>() })
                };
                let base = match conv {
                    b'o' => 8,
                    b'u' => 10,
                    _ => 16,
                };
                let prefix: &[u8] = match (spec.alt && v != 0, conv) {
                    (true, b'x') => b"0x",
                    (true, b'X') => b"0X",
                    (true, b'o') => b"0",
                    _ => b"",
                };
                let body = digits(v, base, conv == b'X', &mut buf);
                emit(out, &spec, prefix, body, true);
            }
            b'p' => {
                let v = unsafe { args.next_arg::<*const c_void>() } as u64;
                let body = digits(v, 16, false, &mut buf);
                emit(out, &spec, b"0x", body, true);
            }
            b'c' => {
                let c = unsafe { args.next_arg::<c_int>() } as u8;
                emit(out, &spec, b"", &[c], false);
            }
            b's' => {
                let p = unsafe { args.next_arg::<*const c_char>() };
                let text: &[u8] = if p.is_null() {
                    b"(null)"
                } else {
                    unsafe { cbytes(p) }
                };
                let text = &text[..spec.precision.map_or(text.len(), |n| n.min(text.len()))];
                emit(out, &spec, b"", text, false);
            }
            b'%' => out.put(b"%"),
            other => {
                out.put(b"%");
                out.put(&[other]);
            }
        }
    }
}

/// # Safety
/// `fmt` and the arguments must match, as for C's printf.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn printf(fmt: *const c_char, mut args: ...) -> c_int {
    let mut out = FdSink::new(1);
    // SAFETY: forwarded from the caller.
    unsafe { format(&mut out, fmt, &mut args) };
    out.finish()
}

/// # Safety
/// As for printf; `stream` must be one of stdin, stdout, stderr.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fprintf(stream: *const File, fmt: *const c_char, mut args: ...) -> c_int {
    // SAFETY: the caller passes a valid stream.
    let mut out = FdSink::new(unsafe { (*stream).fd });
    // SAFETY: forwarded from the caller.
    unsafe { format(&mut out, fmt, &mut args) };
    out.finish()
}

/// # Safety
/// As for printf; `buf` must hold `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn snprintf(
    buf: *mut c_char,
    size: usize,
    fmt: *const c_char,
    mut args: ...
) -> c_int {
    let mut out = BufSink {
        buf: buf.cast(),
        cap: size,
        total: 0,
    };
    // SAFETY: forwarded from the caller.
    unsafe { format(&mut out, fmt, &mut args) };
    out.finish()
}

/// # Safety
/// As for printf; `buf` must be large enough (prefer snprintf).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sprintf(buf: *mut c_char, fmt: *const c_char, mut args: ...) -> c_int {
    let mut out = BufSink {
        buf: buf.cast(),
        cap: usize::MAX,
        total: 0,
    };
    // SAFETY: forwarded from the caller.
    unsafe { format(&mut out, fmt, &mut args) };
    out.finish()
}

/// # Safety
/// `s` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn puts(s: *const c_char) -> c_int {
    let mut out = FdSink::new(1);
    // SAFETY: forwarded from the caller.
    out.put(unsafe { cbytes(s) });
    out.put(b"\n");
    out.finish()
}

/// # Safety
/// `s` must be a NUL-terminated string and `stream` a standard stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fputs(s: *const c_char, stream: *const File) -> c_int {
    // SAFETY: forwarded from the caller.
    let mut out = FdSink::new(unsafe { (*stream).fd });
    // SAFETY: forwarded from the caller.
    out.put(unsafe { cbytes(s) });
    out.finish()
}

#[unsafe(no_mangle)]
pub extern "C" fn putchar(c: c_int) -> c_int {
    match crate::sys::write(1, &[c as u8]) {
        Ok(_) => c & 0xff,
        Err(_) => -1,
    }
}

/// Opens `path` as a stream: mode "r", "w" or "a", with "+" for both ways
/// ("b" is taken and means nothing, as on every Unix). NULL if the mode is
/// not one of those or open(2) fails.
///
/// # Safety
/// `path` and `mode` must be NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut File {
    use abi::types::{O_APPEND, O_CREAT, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY};
    // SAFETY: forwarded from the caller.
    let (path, mode) = unsafe { (cbytes(path), cbytes(mode)) };
    let plus = mode.contains(&b'+');
    let flags = match (mode.first(), plus) {
        (Some(b'r'), false) => O_RDONLY,
        (Some(b'r'), true) => O_RDWR,
        (Some(b'w'), false) => O_WRONLY | O_CREAT | O_TRUNC,
        (Some(b'w'), true) => O_RDWR | O_CREAT | O_TRUNC,
        (Some(b'a'), false) => O_WRONLY | O_CREAT | O_APPEND,
        (Some(b'a'), true) => O_RDWR | O_CREAT | O_APPEND,
        _ => return core::ptr::null_mut(),
    };
    let Ok(path) = core::str::from_utf8(path) else {
        return core::ptr::null_mut();
    };
    match crate::sys::open(path, flags, 0o666) {
        Ok(fd) => alloc::boxed::Box::into_raw(alloc::boxed::Box::new(File { fd })),
        Err(_) => core::ptr::null_mut(),
    }
}

/// Reads a line into `buf`: up to `size - 1` bytes, stopping after a
/// newline, NUL-terminated. NULL at end of file with nothing read, or on
/// an error. Unbuffered: one read(2) a byte, so a stream shares its file
/// offset with its descriptor exactly.
///
/// # Safety
/// `buf` must hold `size` bytes; `stream` must be open.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fgets(buf: *mut c_char, size: c_int, stream: *mut File) -> *mut c_char {
    if size <= 0 {
        return core::ptr::null_mut();
    }
    // SAFETY: the caller's stream.
    let fd = unsafe { (*stream).fd };
    // SAFETY: the caller promises `size` bytes at `buf`.
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), size as usize) };
    let mut n = 0;
    while n + 1 < out.len() {
        let mut byte = [0u8];
        match crate::sys::read(fd, &mut byte) {
            Ok(1) => {
                out[n] = byte[0];
                n += 1;
                if byte[0] == b'\n' {
                    break;
                }
            }
            Ok(_) => break,
            Err(_) => return core::ptr::null_mut(),
        }
    }
    if n == 0 {
        return core::ptr::null_mut();
    }
    out[n] = 0;
    buf
}

/// Closes a stream fopen made (and frees it); the standard streams are
/// closed but not freed. 0, or EOF (-1) if close(2) failed.
///
/// # Safety
/// `stream` must be open, and not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fclose(stream: *mut File) -> c_int {
    // SAFETY: the caller's stream.
    let fd = unsafe { (*stream).fd };
    let standard = [&STDIN.0, &STDOUT.0, &STDERR.0]
        .iter()
        .any(|s| core::ptr::eq(*s, stream));
    if !standard {
        // SAFETY: every other stream came from fopen's Box.
        drop(unsafe { alloc::boxed::Box::from_raw(stream) });
    }
    if crate::sys::close(fd).is_ok() { 0 } else { -1 }
}

/// Output is unbuffered past each call, so there is nothing to flush.
#[unsafe(no_mangle)]
pub extern "C" fn fflush(_stream: *const File) -> c_int {
    0
}
