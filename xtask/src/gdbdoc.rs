//! The GDB walk-throughs of `docs/gdb.md`, read as tests.
//!
//! A walk-through is a ```text block of the page that starts with the
//! command that boots it (`$ cargo xtask gdb -- /bin/profdemo`, or with
//! options before the `--`, as `--add FILE`). Its other lines are what a
//! reader types and sees:
//!
//! - `(gdb) COMMAND   # comment`: a command, run as written (the comment,
//!   after two spaces and `#`, is for the reader);
//! - an indented line that starts with `#`: more comment;
//! - any other line: what gdb prints for the command above it. Each such
//!   line must appear in gdb's output for that command, in the page's
//!   order (gdb may print more lines than the page shows).
//!
//! A shown line is a pattern of `expect.rs`, read as `expect::GDB`: any
//! hexadecimal number stands for any hexadecimal number (addresses move
//! with every build) and `...` for any text (what differs from run to
//! run). Everything else must be exactly as printed, up to runs of
//! blanks: function names, files, line numbers, values.
//! So a stale line number, a renamed function or a wrong value fails the
//! `gdb` suite, which is what keeps the page true.

/// One walk-through: the program it boots and its steps.
#[derive(Debug, PartialEq)]
pub struct Walkthrough {
    /// The page's line number of the block's first line, for reports.
    pub line: usize,
    /// The boot command's options, before `--` (e.g. `--add FILE`).
    pub options: Vec<String>,
    /// What follows `--` in the boot command (empty: the normal boot).
    pub program: Vec<String>,
    pub steps: Vec<Step>,
}

/// A command and the lines the page shows for it.
#[derive(Debug, PartialEq)]
pub struct Step {
    pub command: String,
    pub shown: Vec<String>,
}

const BOOT: &str = "$ cargo xtask gdb";
const PROMPT: &str = "(gdb) ";

/// The walk-throughs in `page` (the text of docs/gdb.md), or what is wrong
/// with one.
pub fn parse(page: &str) -> Result<Vec<Walkthrough>, String> {
    let mut found = Vec::new();
    let mut block: Option<Walkthrough> = None;
    let mut in_fence = false;
    for (index, line) in page.lines().enumerate() {
        let number = index + 1;
        if line.trim_start().starts_with("```") {
            if in_fence {
                found.extend(block.take());
            }
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            continue;
        }
        if let Some(rest) = line.strip_prefix(BOOT) {
            let mut options: Vec<String> = rest.split_whitespace().map(String::from).collect();
            let program = match options.iter().position(|w| w == "--") {
                Some(at) => options.split_off(at).split_off(1),
                None => Vec::new(),
            };
            block = Some(Walkthrough {
                line: number,
                options,
                program,
                steps: Vec::new(),
            });
            continue;
        }
        let Some(walk) = block.as_mut() else {
            continue;
        };
        if let Some(command) = line.strip_prefix(PROMPT) {
            let command = strip_comment(command).trim();
            if command.is_empty() {
                return Err(format!("line {number}: a (gdb) prompt with no command"));
            }
            walk.steps.push(Step {
                command: command.to_string(),
                shown: Vec::new(),
            });
        } else if line.trim().is_empty()
            || (line.starts_with(' ') && line.trim_start().starts_with('#'))
        {
            continue;
        } else {
            match walk.steps.last_mut() {
                Some(step) => step.shown.push(line.to_string()),
                None => {
                    return Err(format!(
                        "line {number}: output shown before any (gdb) command"
                    ));
                }
            }
        }
    }
    if in_fence {
        return Err("a ``` block is not closed".into());
    }
    Ok(found)
}

/// The command without the reader's comment (two blanks, then `#`).
fn strip_comment(command: &str) -> &str {
    match command.find("  #") {
        Some(at) => &command[..at],
        None => command,
    }
}

/// The gdb command file for `walk`: each command preceded by a marker that
/// `split_output` finds again, then `kill` so QEMU goes.
pub fn script(walk: &Walkthrough) -> String {
    let mut text = String::new();
    for (i, step) in walk.steps.iter().enumerate() {
        text.push_str(&format!("echo {}\\n\n{}\n", marker(i), step.command));
    }
    text.push_str(&format!("echo {}\\n\nkill\n", marker(walk.steps.len())));
    text
}

fn marker(i: usize) -> String {
    format!("@@gdb-doc-step-{i}@@")
}

/// gdb's output for each step of a `script` run; `None` for a step gdb
/// never reached (an earlier command failed and batch mode stopped).
pub fn split_output(output: &str, steps: usize) -> Vec<Option<String>> {
    (0..steps)
        .map(|i| {
            let start = output.find(&marker(i))? + marker(i).len();
            let rest = &output[start..];
            let end = rest.find(&marker(i + 1)).unwrap_or(rest.len());
            Some(rest[..end].to_string())
        })
        .collect()
}

/// Checks one step: every shown line appears in `output`, in order. The
/// error names the first shown line not found.
pub fn check_step(step: &Step, output: &str) -> Result<(), String> {
    let printed: Vec<&str> = output.lines().collect();
    match crate::expect::first_missing(&step.shown, &printed, crate::expect::GDB) {
        None => Ok(()),
        Some(i) => {
            // What gdb did print, so a failure in CI can be read from its
            // report alone (the console log stays on the machine that ran it).
            let said: Vec<&str> = printed
                .iter()
                .map(|l| l.trim())
                .filter(|l| !l.is_empty())
                .take(4)
                .collect();
            let said = if said.is_empty() {
                "nothing".to_string()
            } else {
                format!("`{}`", said.join(" | "))
            };
            Err(format!(
                "after `{}` the page shows `{}`, which gdb did not print (it printed {said})",
                step.command,
                step.shown[i].trim()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "\
Some prose.

```text
$ cargo xtask gdb -- /bin/profdemo
(gdb) tick                # a comment
Breakpoint 1, kernel::clock::on_timer_interrupt (tf=0xffff80000003dc80) at kernel/src/clock.rs:85
                          # more comment
(gdb) bt 2
#0  kernel::clock::on_timer_interrupt (tf=0xffff80000003dc80) at kernel/src/clock.rs:85
#1  0xffffffff8005fbfe in kernel::arch::trap::trap_dispatch (tf=0x1) at ...
```

```text
not a walk-through
```
";

    #[test]
    fn parses_commands_comments_and_shown_lines() {
        let walks = parse(PAGE).unwrap();
        assert_eq!(walks.len(), 1);
        let w = &walks[0];
        assert_eq!(w.line, 4);
        assert_eq!(w.program, vec!["/bin/profdemo"]);
        assert!(w.options.is_empty());
        let with_options = PAGE.replace("gdb -- /bin/profdemo", "gdb --add a.out -- /bin/a.out x");
        let w = parse(&with_options).unwrap().remove(0);
        assert_eq!(
            (w.options, w.program),
            (
                vec!["--add".to_string(), "a.out".into()],
                vec!["/bin/a.out".to_string(), "x".into()]
            )
        );
        assert_eq!(w.steps.len(), 2);
        assert_eq!(w.steps[0].command, "tick");
        assert_eq!(w.steps[0].shown.len(), 1);
        assert_eq!(w.steps[1].command, "bt 2");
        assert_eq!(
            w.steps[1].shown.len(),
            2,
            "#0 lines are output, not comments"
        );
    }

    #[test]
    fn a_step_needs_its_lines_in_order() {
        let step = Step {
            command: "bt".into(),
            shown: vec!["#0 a".into(), "#1 b".into()],
        };
        assert!(check_step(&step, "#0   a\nnoise\n#1\tb\n").is_ok());
        assert!(check_step(&step, "#1 b\n#0 a\n").is_err());
        let err = check_step(&step, "#0 a\n").unwrap_err();
        assert!(err.contains("#1 b"), "{err}");
        assert!(err.contains("it printed `#0 a`"), "{err}");
        let err = check_step(&step, "\n").unwrap_err();
        assert!(err.contains("it printed nothing"), "{err}");
    }

    #[test]
    fn output_is_split_at_the_markers() {
        let walk = parse(PAGE).unwrap().remove(0);
        let script = script(&walk);
        assert!(script.contains("tick\n") && script.ends_with("kill\n"));
        let out = format!(
            "noise\n{}\nBreakpoint 1\n{}\n#0 x\n{}\n",
            marker(0),
            marker(1),
            marker(2)
        );
        let parts = split_output(&out, 2);
        assert_eq!(parts[0].as_deref(), Some("\nBreakpoint 1\n"));
        assert_eq!(parts[1].as_deref(), Some("\n#0 x\n"));
        assert_eq!(split_output(&format!("{}\n", marker(0)), 2)[1], None);
    }
}
