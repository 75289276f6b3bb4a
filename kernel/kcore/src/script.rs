//! `#!` scripts: what exec does with a file that begins with `#!`.
//!
//! The first line names an interpreter and at most one argument:
//! `#!/bin/sh` or `#!/usr/bin/env python3`. exec then runs the
//! interpreter instead, with the arguments spliced as Linux's
//! `binfmt_script` splices them: the interpreter's name, the one argument
//! if there is one (everything after the name, spaces inside kept), the
//! script's path, then the caller's arguments after its argv[0]. The
//! interpreter is a program like any other, and may itself be a script, a
//! few levels deep (`MAX_DEPTH`).
//!
//! Only the first `LINE_MAX` bytes are looked at. A line longer than that
//! is fine if the interpreter's name ends inside them (the argument may be
//! cut short: the interpreter can read the script itself); a name that
//! does not end there is ENOEXEC, as is a line with no name at all.

extern crate alloc;

use abi::Errno;
use alloc::vec::Vec;

/// The bytes of a file exec reads to find the `#!` line (Linux's
/// `BINPRM_BUF_SIZE`).
pub const LINE_MAX: usize = 256;

/// Scripts in a row exec follows (a script whose interpreter is a script
/// ...) before it gives up with ELOOP, as Linux's `exec_binprm` allows
/// five and refuses a sixth.
pub const MAX_DEPTH: usize = 5;

/// A `#!` line: the interpreter's path and its optional argument.
#[derive(Debug, PartialEq, Eq)]
pub struct Line<'a> {
    pub interpreter: &'a [u8],
    pub argument: Option<&'a [u8]>,
}

fn spacetab(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn terminator(b: u8) -> bool {
    spacetab(b) || b == 0
}

/// The `#!` line of a file whose first bytes are `head` (up to
/// `LINE_MAX`, fewer for a shorter file); None if it is no script.
pub fn parse(head: &[u8]) -> Option<Result<Line<'_>, Errno>> {
    if !head.starts_with(b"#!") {
        return None;
    }
    Some(parse_line(&head[..head.len().min(LINE_MAX)]))
}

fn parse_line(buf: &[u8]) -> Result<Line<'_>, Errno> {
    let mut end = match buf.iter().position(|&b| b == b'\n') {
        Some(newline) => newline,
        None => {
            // No newline: the interpreter's name must end inside the
            // bytes read (a space, a tab, or the NUL past a short file's
            // end), else it may have been cut.
            let name = buf[2..]
                .iter()
                .position(|&b| !spacetab(b))
                .ok_or(Errno::ENOEXEC)?
                + 2;
            let ends_inside = buf.len() < LINE_MAX || buf[name..].iter().any(|&b| terminator(b));
            if !ends_inside {
                return Err(Errno::ENOEXEC);
            }
            buf.len()
        }
    };
    // A NUL ends the line too (a short file's padding, in Linux's buffer).
    if let Some(nul) = buf[..end].iter().position(|&b| b == 0) {
        end = end.min(nul.max(2));
    }
    while end > 2 && spacetab(buf[end - 1]) {
        end -= 1;
    }
    let line = &buf[2..end];
    let start = line
        .iter()
        .position(|&b| !spacetab(b))
        .ok_or(Errno::ENOEXEC)?;
    let line = &line[start..];
    let name_len = line
        .iter()
        .position(|&b| terminator(b))
        .unwrap_or(line.len());
    let (interpreter, rest) = line.split_at(name_len);
    let argument = rest
        .iter()
        .position(|&b| !spacetab(b))
        .map(|at| &rest[at..]);
    Ok(Line {
        interpreter,
        argument,
    })
}

/// The interpreter's arguments: its name, the line's argument if any,
/// the script's path, then `argv` after its first.
pub fn argv(line: &Line, script: &[u8], argv: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(argv.len() + 2);
    out.push(line.interpreter.to_vec());
    if let Some(argument) = line.argument {
        out.push(argument.to_vec());
    }
    out.push(script.to_vec());
    out.extend(argv.iter().skip(1).cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &[u8]) -> Result<(Vec<u8>, Option<Vec<u8>>), Errno> {
        parse(text)
            .expect("a script")
            .map(|l| (l.interpreter.to_vec(), l.argument.map(<[u8]>::to_vec)))
    }

    #[test]
    fn the_name_and_one_argument_with_its_spaces() {
        assert_eq!(
            line(b"#!/bin/sh\necho hi\n"),
            Ok((b"/bin/sh".to_vec(), None))
        );
        assert_eq!(
            line(b"#!  /usr/bin/env \t python3 -u  \t\nx"),
            Ok((b"/usr/bin/env".to_vec(), Some(b"python3 -u".to_vec())))
        );
        assert_eq!(line(b"#!/bin/sh"), Ok((b"/bin/sh".to_vec(), None)));
        assert_eq!(
            line(b"#!/bin/sh -e\r\n"),
            Ok((b"/bin/sh".to_vec(), Some(b"-e\r".to_vec())))
        );
    }

    #[test]
    fn no_name_is_enoexec() {
        assert_eq!(line(b"#!\n/bin/sh"), Err(Errno::ENOEXEC));
        assert_eq!(line(b"#!   \t \n"), Err(Errno::ENOEXEC));
        assert_eq!(line(b"#!"), Err(Errno::ENOEXEC));
    }

    #[test]
    fn a_long_line_is_fine_if_the_name_ends_inside_it() {
        let mut long = b"#!/bin/sh ".to_vec();
        long.resize(400, b'x');
        let (name, arg) = line(&long).unwrap();
        assert_eq!(name, b"/bin/sh");
        assert_eq!(arg.unwrap().len(), LINE_MAX - 10);
        let mut cut = b"#!/".to_vec();
        cut.resize(400, b'a');
        assert_eq!(line(&cut), Err(Errno::ENOEXEC));
    }

    #[test]
    fn not_a_script() {
        assert_eq!(parse(b"\x7fELF"), None);
        assert_eq!(parse(b"#"), None);
        assert_eq!(parse(b" #!/bin/sh"), None);
    }

    #[test]
    fn arguments_are_spliced_as_linux_does() {
        let l = Line {
            interpreter: b"/bin/sh",
            argument: Some(b"-e"),
        };
        let given = [b"run".to_vec(), b"a".to_vec(), b"b".to_vec()];
        let want: Vec<Vec<u8>> = [&b"/bin/sh"[..], b"-e", b"/t/x.sh", b"a", b"b"]
            .iter()
            .map(|s| s.to_vec())
            .collect();
        assert_eq!(argv(&l, b"/t/x.sh", &given), want);
        let bare = Line {
            interpreter: b"/bin/sh",
            argument: None,
        };
        assert_eq!(
            argv(&bare, b"/t/x.sh", &[]),
            [b"/bin/sh".to_vec(), b"/t/x.sh".to_vec()]
        );
    }
}
