//! The suite `debian-script`: a script of the Debian root's own tools
//! (bash, coreutils, grep, sed, find, ps) on this kernel and on Debian's
//! Linux, each booted on a copy of the same root (`pytests::on_both`),
//! and what the two print held to each other.
//!
//! The script, `tests/debian/script.sh` (the image's
//! /usr/local/lib/script.sh), prints each line as `script| LINE` and
//! starts each section with `== NAME`; it prints nothing that may rightly
//! differ between two kernels. Each section is one check: its lines here
//! must be Linux's, in order. A failure names the first line that differs
//! and keeps both consoles in target/debian-script-work/.

use std::time::Duration;

use crate::build;
use crate::checks::Tally;
use crate::options::Options;
use crate::suites::Suite;

/// What a line of the script's output starts with.
const PREFIX: &str = "script| ";

/// The script's output, cut into its sections: (name, lines), in order.
pub fn sections(console: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in console {
        let Some(text) = line.strip_prefix(PREFIX) else {
            continue;
        };
        match text.strip_prefix("== ") {
            Some(name) => out.push((name.to_string(), Vec::new())),
            None => match out.last_mut() {
                Some((_, lines)) => lines.push(text.to_string()),
                None => out.push((String::new(), vec![text.to_string()])),
            },
        }
    }
    out
}

/// Why section `name` here differs from Linux's; None when it does not.
pub fn differs(name: &str, ours: &[String], linux: &[String]) -> Option<String> {
    if let Some(i) = ours.iter().zip(linux).position(|(a, b)| a != b) {
        return Some(format!(
            "{name}, line {}: {:?} here, {:?} on Linux",
            i + 1,
            ours[i],
            linux[i]
        ));
    }
    match ours.len().cmp(&linux.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Less => Some(format!(
            "{name}: {} lines here, {} on Linux; Linux's next: {:?}",
            ours.len(),
            linux.len(),
            linux[ours.len()]
        )),
        std::cmp::Ordering::Greater => Some(format!(
            "{name}: {} lines here, {} on Linux; the next here: {:?}",
            ours.len(),
            linux.len(),
            ours[linux.len()]
        )),
    }
}

/// Boots both kernels on the script and records one check per section of
/// Linux's output (and one for its end, so that a script cut short here
/// fails).
pub fn run(opts: &Options, suite: &Suite, tally: &mut Tally) -> Result<(), String> {
    println!(
        "== {} (the Debian root's tools on this kernel and on Linux)",
        suite.name
    );
    let work = build::root().join("target/debian-script-work");
    let limit = Duration::from_secs(opts.timeout.unwrap_or(suite.timeout));
    let program = ["/bin/bash", "/usr/local/lib/script.sh"].map(String::from);
    let (linux, ours) = crate::pytests::on_both(opts, suite, &program, limit, &work)?;
    let (linux, ours) = (sections(&linux), sections(&ours));
    if !linux.iter().any(|(name, _)| name == "end") {
        return Err(format!(
            "the script did not end on Linux (console: {})",
            work.join("linux.log").display()
        ));
    }
    for (name, lines) in &linux {
        let here = ours.iter().find(|(n, _)| n == name).map(|(_, l)| l);
        let why = match here {
            None => Some(format!("{name}: the section is missing here")),
            Some(here) => differs(name, here, lines),
        };
        tally.record(
            &format!("{}/{name}", suite.name),
            why.is_none(),
            &why.unwrap_or_default(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn sections_are_cut_at_their_headers_among_other_lines() {
        let got = sections(&lines(
            "[ 1] INFO boot\nscript| == shell\nscript| 42\nnoise\nscript| == end\nscript| x",
        ));
        assert_eq!(
            got,
            vec![
                ("shell".to_string(), vec!["42".to_string()]),
                ("end".to_string(), vec!["x".to_string()]),
            ]
        );
    }

    #[test]
    fn a_difference_names_its_line_or_what_is_missing() {
        let a = lines("1\n2\n3");
        assert_eq!(differs("s", &a, &a), None);
        assert_eq!(
            differs("s", &lines("1\nX"), &a).unwrap(),
            "s, line 2: \"X\" here, \"2\" on Linux"
        );
        assert_eq!(
            differs("s", &lines("1\n2"), &a).unwrap(),
            "s: 2 lines here, 3 on Linux; Linux's next: \"3\""
        );
    }
}
