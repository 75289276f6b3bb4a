//! The README's sample outputs, checked against a real run.
//!
//! A sample is a block of the README that shows what a guest program
//! prints. Each entry of `SAMPLES` names the block by its first line, the
//! program to boot, and which of the block's lines to hold the run to;
//! the `readme` part of the test command boots the program and wants each
//! of those lines, in order, in the console. Numbers are what changes from
//! run to run (ticks, samples, addresses, percentages, the length of a
//! bar), so a line is compared by its shape (`expect::SAMPLE`): every
//! number, hexadecimal number and run of `#` stands for any other. Words, names, punctuation
//! and the order of the lines must be as printed, so a renamed log line, a
//! new column in `ps` or a changed message makes the README fail here
//! rather than mislead its reader.

use std::path::Path;

/// One sample block of the README.
pub struct Sample {
    /// The block's first line (after its opening fence).
    pub first_line: &'static str,
    /// The program `cargo xtask run -- ...` boots for it.
    pub program: &'static [&'static str],
    /// The block's lines to check: those from the first line that starts
    /// with `from` up to the first that contains `until` (excluded;
    /// `None`: to the block's end). Lines typed at the shell (`/ $ `) are
    /// skipped.
    pub from: &'static str,
    pub until: Option<&'static str>,
}

pub const SAMPLES: &[Sample] = &[
    // The boot log of the first block, up to init's start (whose
    // arguments depend on what is run).
    Sample {
        first_line: "profkern 0.1.0:",
        program: &["/bin/profdemo"],
        from: "profkern ",
        until: Some("INFO  boot: starting"),
    },
    Sample {
        first_line: "/ $ profdemo",
        program: &["/bin/profdemo"],
        from: "profdemo:",
        until: None,
    },
    Sample {
        first_line: "/ $ prof profdemo --work",
        program: &["/bin/prof", "profdemo", "--work"],
        from: "prof:",
        until: None,
    },
];

/// The lines of `sample` in `readme`, or why they cannot be found.
pub fn shown_lines(readme: &str, sample: &Sample) -> Result<Vec<String>, String> {
    let lines: Vec<&str> = readme.lines().collect();
    let start = lines
        .windows(2)
        .position(|w| w[0].starts_with("```") && w[1].starts_with(sample.first_line))
        .map(|i| i + 1)
        .ok_or_else(|| format!("no block of README.md starts with '{}'", sample.first_line))?;
    let block: Vec<&str> = lines[start..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .copied()
        .collect();
    let from = block
        .iter()
        .position(|l| l.starts_with(sample.from))
        .ok_or_else(|| {
            format!(
                "the block '{}' has no line '{}'",
                sample.first_line, sample.from
            )
        })?;
    Ok(block[from..]
        .iter()
        .take_while(|l| sample.until.is_none_or(|u| !l.contains(u)))
        .filter(|l| !l.starts_with("/ $ ") && !l.trim().is_empty())
        .map(|l| l.to_string())
        .collect())
}

/// The first shown line that the console lacks (in order), if any: every
/// number, hexadecimal number and run of `#` stands for any, and blanks
/// count as one (`expect::SAMPLE`).
pub fn first_missing<'a>(shown: &'a [String], console: &[String]) -> Option<&'a str> {
    crate::expect::first_missing(shown, console, crate::expect::SAMPLE).map(|i| shown[i].as_str())
}

/// The README's text.
pub fn readme(root: &Path) -> Result<String, String> {
    std::fs::read_to_string(root.join("README.md")).map_err(|e| format!("README.md: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_found_and_cut() {
        let readme = "text\n```\n/ $ profdemo\nprofdemo: 1 samples\n  0x1 loop_a # 1\n```\n";
        let sample = Sample {
            first_line: "/ $ profdemo",
            program: &[],
            from: "profdemo:",
            until: None,
        };
        let lines = shown_lines(readme, &sample).unwrap();
        assert_eq!(lines, vec!["profdemo: 1 samples", "  0x1 loop_a # 1"]);
        let console: Vec<String> = vec![
            "noise".into(),
            "profdemo: 7 samples".into(),
            "  0x9 loop_a ## 3".into(),
        ];
        assert_eq!(first_missing(&lines, &console), None);
        let console: Vec<String> = vec!["profdemo: 7 samples".into()];
        assert_eq!(first_missing(&lines, &console), Some("  0x1 loop_a # 1"));
    }
}
