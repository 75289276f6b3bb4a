//! One pattern language for every check that reads what something printed:
//! the suites' console lines (`test.rs`, `suites.rs`), the labs' checks
//! (`lab.rs`), the GDB page's shown lines (`gdbdoc.rs`) and the README's
//! samples (`readme.rs`). Each writes the line it wants, and this module
//! says whether a printed line is one, and finds wanted lines in order.
//!
//! In a pattern:
//!
//! | written | matches |
//! |---|---|
//! | `*` or `...` | any text, also none |
//! | `<xx>` | two hexadecimal digits (one byte, as in `code at rip: <xx> <xx>`) |
//! | a hexadecimal number, `0x1f` | that number, or with `Numbers::AnyHex` or `Numbers::Any` any `0x` number |
//! | a decimal number or a run of `#`, `1505`, `####` | that text, or with `Numbers::Any` any run of digits and `#` |
//! | anything else | itself |
//!
//! With `blanks_squeezed`, runs of blanks count as one space and the ends
//! are trimmed, on both sides (gdb prints tabs; the README aligns columns).

/// How the numbers a pattern writes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbers {
    /// As written: `labcheck: ok 3.2` is lab 3.2's line, not 4.1's.
    Exact,
    /// A `0x` number stands for any: addresses move between builds.
    AnyHex,
    /// Every number and `#` bar stands for any: sample output.
    Any,
}

/// How a caller reads its patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub numbers: Numbers,
    pub blanks_squeezed: bool,
}

/// The suites' and the labs' console lines: numbers as written.
pub const CONSOLE: Style = Style {
    numbers: Numbers::Exact,
    blanks_squeezed: false,
};
/// The GDB page: addresses are any, the rest (line numbers, values) exact.
pub const GDB: Style = Style {
    numbers: Numbers::AnyHex,
    blanks_squeezed: true,
};
/// The README's samples: every number stands for any.
pub const SAMPLE: Style = Style {
    numbers: Numbers::Any,
    blanks_squeezed: true,
};

#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Text(String),
    AnyText,
    HexByte,
    AnyHex,
    AnyNumber,
}

fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The length of a `0x` number at the start of `s` (0 if there is none).
fn hex_len(s: &str) -> usize {
    s.strip_prefix("0x")
        .map(|h| h.bytes().take_while(u8::is_ascii_hexdigit).count())
        .filter(|&n| n > 0)
        .map_or(0, |n| n + 2)
}

/// The length of a run of digits and `#` at the start of `s`.
fn number_len(s: &str) -> usize {
    s.bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'#')
        .count()
}

fn pieces(pattern: &str, numbers: Numbers) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut text = String::new();
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        let (piece, len) = if rest.starts_with("...") {
            (Some(Piece::AnyText), 3)
        } else if c == '*' {
            (Some(Piece::AnyText), 1)
        } else if rest.starts_with("<xx>") {
            (Some(Piece::HexByte), 4)
        } else if numbers != Numbers::Exact && hex_len(rest) > 0 {
            (Some(Piece::AnyHex), hex_len(rest))
        } else if numbers == Numbers::Any && number_len(rest) > 0 {
            (Some(Piece::AnyNumber), number_len(rest))
        } else {
            (None, c.len_utf8())
        };
        match piece {
            Some(piece) => {
                if !text.is_empty() {
                    out.push(Piece::Text(core::mem::take(&mut text)));
                }
                out.push(piece);
            }
            None => text.push(c),
        }
        rest = &rest[len..];
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

fn matches_pieces(line: &str, pieces: &[Piece]) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return line.is_empty();
    };
    match first {
        Piece::Text(t) => line
            .strip_prefix(t.as_str())
            .is_some_and(|l| matches_pieces(l, rest)),
        Piece::AnyText => {
            (0..=line.len()).any(|i| line.is_char_boundary(i) && matches_pieces(&line[i..], rest))
        }
        Piece::HexByte => {
            line.len() >= 2
                && line.as_bytes()[..2].iter().all(u8::is_ascii_hexdigit)
                && matches_pieces(&line[2..], rest)
        }
        Piece::AnyHex => {
            let n = hex_len(line);
            n > 0 && matches_pieces(&line[n..], rest)
        }
        Piece::AnyNumber => {
            let n = match hex_len(line) {
                0 => number_len(line),
                n => n,
            };
            n > 0 && matches_pieces(&line[n..], rest)
        }
    }
}

/// Whether `line` is one `pattern` describes, read in `style`.
pub fn matches(line: &str, pattern: &str, style: Style) -> bool {
    if style.blanks_squeezed {
        matches_pieces(&squeeze(line), &pieces(&squeeze(pattern), style.numbers))
    } else {
        matches_pieces(line, &pieces(pattern, style.numbers))
    }
}

/// Finds `wanted` in `lines`, in order, each after the one before; the
/// index of the first wanted line that is not there, or None if all are.
pub fn first_missing<W: AsRef<str>, L: AsRef<str>>(
    wanted: &[W],
    lines: &[L],
    style: Style,
) -> Option<usize> {
    let mut from = 0;
    for (i, want) in wanted.iter().enumerate() {
        match lines[from..]
            .iter()
            .position(|l| matches(l.as_ref(), want.as_ref(), style))
        {
            Some(at) => from += at + 1,
            None => return Some(i),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_dots_stand_for_any_text() {
        assert!(matches("hello", "hello", CONSOLE));
        assert!(!matches("hello!", "hello", CONSOLE));
        assert!(matches(
            "pid 17 (fault): segmentation fault at rip 0x4020eb",
            "pid * (fault): segmentation fault at rip 0x*",
            CONSOLE
        ));
        assert!(!matches("pid 17 (sh): x", "pid * (fault): x", CONSOLE));
        assert!(matches("abc", "*", CONSOLE));
        assert!(matches("a-b-c", "a*c", CONSOLE));
        assert!(matches(
            "loop_b + 1 in section .text",
            "loop_... in section .text",
            GDB
        ));
    }

    #[test]
    fn console_numbers_are_exact_and_hex_bytes_are_any() {
        assert!(!matches("labcheck: ok 4.1", "labcheck: ok 3.2", CONSOLE));
        assert!(matches(
            "    code at rip: 0f 0b",
            "    code at rip: <xx> <xx>",
            CONSOLE
        ));
        assert!(!matches(
            "    code at rip: 0f 0g",
            "    code at rip: <xx> <xx>",
            CONSOLE
        ));
        assert!(!matches(
            "    code at rip: 0f",
            "    code at rip: <xx> <xx>",
            CONSOLE
        ));
        assert!(matches(
            "[ 4] memory: 0x100 Usable",
            "*memory: 0x* Usable*",
            CONSOLE
        ));
    }

    #[test]
    fn gdb_reads_addresses_as_any_and_the_rest_exactly() {
        let want = "#1 0x1 in kernel::arch::trap::trap_dispatch (tf=0x2) at ...";
        assert!(matches(
            "#1  0xffffffff8005fbfe in kernel::arch::trap::trap_dispatch (tf=0xffff80000003dc80) at kernel/src/arch/trap.rs:266",
            want,
            GDB
        ));
        assert!(!matches(
            "#1 0xffffffff8005fbfe in kernel::arch::trap::dispatch (tf=0x1) at x",
            want,
            GDB
        ));
        assert!(!matches(
            "at kernel/src/clock.rs:86",
            "at kernel/src/clock.rs:85",
            GDB
        ));
        assert!(
            !matches("$1 = 12", "$1 = 0x1", GDB),
            "a decimal is not a hex number"
        );
        assert!(matches("$2 = true", "\t$2 =  true ", GDB));
        assert!(matches(
            "Breakpoint 4, 0x0000000000405b1b in ?? ()",
            "Breakpoint 4, 0x0000000000405b1b in ?? ()",
            GDB
        ));
    }

    #[test]
    fn samples_read_every_number_and_bar_as_any() {
        assert!(matches(
            "0x4058a0 loop_a ################################ 1505 (75.0%)",
            "  0x404840 loop_a    ####### 1501 (75.2%)",
            SAMPLE
        ));
        assert!(!matches("loop_a 1501", "loop_b 1501", SAMPLE));
        assert!(matches(
            "[        0] INFO  clock: TSC runs at 2604 MHz",
            "[ 12] INFO clock: TSC runs at 1 MHz",
            SAMPLE
        ));
    }

    #[test]
    fn wanted_lines_are_found_in_order() {
        let lines = ["noise", "profdemo: 7 samples", "  0x9 loop_a ## 3"];
        assert_eq!(
            first_missing(&["profdemo: 1 samples", "  0x1 loop_a # 1"], &lines, SAMPLE),
            None
        );
        assert_eq!(
            first_missing(&["  0x1 loop_a # 1", "profdemo: 1 samples"], &lines, SAMPLE),
            Some(1),
            "in order"
        );
        assert_eq!(first_missing(&["x"], &lines, CONSOLE), Some(0));
    }
}
