//! Python's own regression tests on both kernels: `cargo xtask pytests`,
//! and the suites `python-short` (in the default run) and `python-all`
//! (slow, run when named).
//!
//! The same Debian root (`rootfs::image`) boots twice, as two fresh
//! copies, at the same time: on this kernel, whose init mounts it as /
//! and runs the tests, and on Debian's Linux in the same QEMU machine,
//! whose /init (`tests/debian/debinit.c`, in an initramfs with the disk's
//! modules) mounts it, gives it /proc, /sys, /dev, /tmp and the loopback
//! interface, and changes root to it. Both run `tests/debian/pyregr.py`
//! (the image's /usr/local/lib/pyregr.py), which prints a line per test:
//! `pyregr: OUTCOME MODULE TEST_ID[ -- why]`.
//!
//! The verdict, per module: every test that passes on Linux passes here,
//! unless docs/syscalls.md lists it, with its reason, under "Python's
//! regression tests". A listed test that now passes is reported, to be
//! taken off the list. Both consoles are kept in target/pytests-work/.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::build::{self, Boot};
use crate::checks::Tally;
use crate::options::Options;
use crate::qemu::{self, Ending};
use crate::suites::{Disk, Expect, Suite};

/// The modules of the default run: the quick ones (under half a minute
/// each on either kernel), each touching the kernel: files and their
/// metadata, directories, descriptors and locks, users and groups, limits,
/// select, poll and epoll, memory maps, threads, clocks.
pub const SHORT: &[&str] = &[
    "test_stat",
    "test_pwd",
    "test_grp",
    "test_resource",
    "test_fileio",
    "test_poll",
    "test_select",
    "test_epoll",
    "test_mmap",
    "test_fcntl",
    "test_shutil",
    "test_tempfile",
    "test_pathlib",
    "test_thread",
    "test_sched",
    "test_time",
];

/// Every module the issue names: the standard library's parts that talk
/// to the kernel.
pub const ALL: &[&str] = &[
    "test_os",
    "test_posix",
    "test_signal",
    "test_subprocess",
    "test_select",
    "test_selectors",
    "test_poll",
    "test_epoll",
    "test_mmap",
    "test_fcntl",
    "test_threading",
    "test_thread",
    "test_socket",
    "test_tempfile",
    "test_shutil",
    "test_pathlib",
    "test_time",
    "test_resource",
    "test_pty",
    "test_fileio",
    "test_stat",
    "test_pwd",
    "test_grp",
    "test_sched",
];

/// The heading in docs/syscalls.md whose list names the tests that pass
/// on Linux and not here: "- `TEST_ID`: reason".
const LIST_HEADING: &str = "## Python's regression tests";

/// One test's outcome as pyregr.py prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Pass,
    Skip,
    Fail,
    Error,
}

/// What one kernel's console said: every test by (module, id), with the
/// reason for a skip or failure; whether the run reached its end.
#[derive(Debug, Default)]
pub struct Run {
    pub tests: BTreeMap<(String, String), (Kind, String)>,
    pub done: bool,
    /// Seconds each module took, as pyregr.py measured them.
    pub seconds: BTreeMap<String, u64>,
}

/// Reads pyregr.py's lines out of a console (anything else is the tests'
/// own output, or the kernel's).
pub fn parse(lines: &[String]) -> Run {
    let mut run = Run::default();
    for line in lines {
        let Some(rest) = line.trim_end().strip_prefix("pyregr: ") else {
            continue;
        };
        if rest == "done" {
            run.done = true;
            continue;
        }
        let (head, why) = rest.split_once(" -- ").unwrap_or((rest, ""));
        let words: Vec<&str> = head.split_whitespace().collect();
        let kind = match words.first() {
            Some(&"pass") => Kind::Pass,
            Some(&"skip") => Kind::Skip,
            Some(&"fail") => Kind::Fail,
            Some(&"error") => Kind::Error,
            Some(&"time") => {
                if let [_, module, seconds] = words[..] {
                    run.seconds
                        .insert(module.to_string(), seconds.parse().unwrap_or(0));
                }
                continue;
            }
            _ => continue,
        };
        if let [_, module, id] = words[..] {
            run.tests.insert(
                (module.to_string(), id.to_string()),
                (kind, why.to_string()),
            );
        }
    }
    run
}

/// A module's counts on one kernel: run, passed, skipped, failed (errors
/// counted as failures).
fn counts(run: &Run, module: &str) -> [usize; 4] {
    let mut c = [0; 4];
    for ((m, _), (kind, _)) in &run.tests {
        if m == module {
            c[0] += 1;
            c[match kind {
                Kind::Pass => 1,
                Kind::Skip => 2,
                Kind::Fail | Kind::Error => 3,
            }] += 1;
        }
    }
    c
}

/// The table: one row per module, Linux's counts and this kernel's.
pub fn table(modules: &[&str], linux: &Run, ours: &Run) -> String {
    let mut out = format!(
        "{:<16} {:>21}   {:>21}\n{:<16} {:>5} {:>5} {:>4} {:>4}   {:>5} {:>5} {:>4} {:>4}\n",
        "",
        "Linux",
        "profkern",
        "module",
        "run",
        "pass",
        "skip",
        "fail",
        "run",
        "pass",
        "skip",
        "fail"
    );
    for module in modules {
        let [a, b, c, d] = counts(linux, module);
        let [e, f, g, h] = counts(ours, module);
        out.push_str(&format!(
            "{module:<16} {a:>5} {b:>5} {c:>4} {d:>4}   {e:>5} {f:>5} {g:>4} {h:>4}\n"
        ));
    }
    out
}

/// The tests docs/syscalls.md lists as passing on Linux and not here,
/// each with its reason: "- `test id`: reason" under `LIST_HEADING`.
pub fn listed(syscalls_md: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(at) = syscalls_md.find(LIST_HEADING) else {
        return out;
    };
    let section = &syscalls_md[at + LIST_HEADING.len()..];
    let section = section.split("\n## ").next().unwrap_or("");
    for line in section.lines() {
        if let Some(rest) = line.strip_prefix("- `")
            && let Some((id, reason)) = rest.split_once("`: ")
        {
            out.insert(id.to_string(), reason.trim().to_string());
        }
    }
    out
}

/// A module's verdict: Ok when every test that passed on Linux passed
/// here or is listed; else the ones that did not, with what happened.
/// Also the listed tests that passed here after all (to be taken off).
pub fn judge(
    module: &str,
    linux: &Run,
    ours: &Run,
    listed: &BTreeMap<String, String>,
) -> (Result<(), String>, Vec<String>) {
    let mut differ = Vec::new();
    let mut stale = Vec::new();
    for ((m, id), (kind, _)) in &linux.tests {
        if m != module || *kind != Kind::Pass {
            continue;
        }
        let here = ours.tests.get(&(m.clone(), id.clone()));
        match (here, listed.contains_key(id)) {
            (Some((Kind::Pass, _)), true) => stale.push(id.clone()),
            (Some((Kind::Pass, _)), false) | (_, true) => {}
            (Some((kind, why)), false) => differ.push(format!("{id}: {kind:?}: {why}")),
            (None, false) => differ.push(format!("{id}: not run here")),
        }
    }
    if linux.tests.keys().all(|(m, _)| m != module) {
        return (Err("Linux ran none of its tests".into()), stale);
    }
    if differ.is_empty() {
        (Ok(()), stale)
    } else {
        let shown: Vec<String> = differ.iter().take(12).cloned().collect();
        let more = if differ.len() > 12 {
            format!("\n     (and {} more)", differ.len() - 12)
        } else {
            String::new()
        };
        (
            Err(format!(
                "{} tests pass on Linux and not here, and are not listed in docs/syscalls.md:\n     {}{more}",
                differ.len(),
                shown.join("\n     ")
            )),
            stale,
        )
    }
}

/// The suites' runner: both kernels, then one check per module.
pub fn run(opts: &Options, suite: &Suite, tally: &mut Tally) -> Result<(), String> {
    let Expect::PythonAgrees(modules) = suite.expect else {
        return Err(format!("{} is not a Python suite", suite.name));
    };
    println!(
        "== {} (Python's regression tests: {} modules, on this kernel and on Linux)",
        suite.name,
        modules.len()
    );
    let (linux, ours) = both(opts, suite, modules)?;
    print!("{}", table(modules, &linux, &ours));
    let md = std::fs::read_to_string(build::root().join("docs/syscalls.md"))
        .map_err(|e| format!("docs/syscalls.md: {e}"))?;
    let listed = listed(&md);
    for module in modules {
        let (verdict, stale) = judge(module, &linux, &ours, &listed);
        for id in stale {
            println!("   note: {id} is listed in docs/syscalls.md and passed here: take it off");
        }
        tally.record(
            &format!("{}/{module}", suite.name),
            verdict.is_ok(),
            verdict.as_ref().err().map_or("", |s| s),
        );
    }
    Ok(())
}

/// `cargo xtask pytests [MODULE... | all]`: the table for the modules
/// named (`SHORT` when none, `ALL` for `all`), and each module's verdict.
pub fn command(opts: &Options, names: &[String]) -> Result<ExitCode, String> {
    let modules: Vec<&'static str> = match names {
        [] => SHORT.to_vec(),
        [all] if all == "all" => ALL.to_vec(),
        _ => names
            .iter()
            .map(|n| &*Box::leak(n.clone().into_boxed_str()))
            .collect(),
    };
    let modules: &'static [&'static str] = Box::leak(modules.into_boxed_slice());
    let mut suite = crate::suites::suites()
        .into_iter()
        .find(|s| s.name == "python-all")
        .ok_or("no python-all suite")?;
    suite.name = "pytests";
    suite.expect = Expect::PythonAgrees(modules);
    let mut tally = Tally::default();
    run(opts, &suite, &mut tally)?;
    println!("{} passed, {} failed", tally.passed, tally.failed.len());
    Ok(if tally.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Both kernels' runs of pyregr.py on `modules`, parsed.
fn both(opts: &Options, suite: &Suite, modules: &[&str]) -> Result<(Run, Run), String> {
    let work = build::root().join("target/pytests-work");
    let limit = Duration::from_secs(opts.timeout.unwrap_or(suite.timeout));
    // Each module may take this long before pyregr.py gives up on it.
    let per_module = (limit.as_secs() / 2).clamp(60, 1200);
    let mut program: Vec<String> = ["/usr/bin/python3", "/usr/local/lib/pyregr.py", "--timeout"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    program.push(per_module.to_string());
    program.extend(modules.iter().map(|m| m.to_string()));
    let (linux, ours) = on_both(opts, suite, &program, limit, &work)?;
    let (linux, ours) = (parse(&linux), parse(&ours));
    if !linux.done {
        return Err(format!(
            "Linux did not finish the tests (console: {})",
            work.join("linux.log").display()
        ));
    }
    if !ours.done {
        return Err(format!(
            "this kernel did not finish the tests (console: {})",
            work.join("profkern.log").display()
        ));
    }
    Ok((linux, ours))
}

/// Boots both kernels on their own copies of the Debian root, each
/// running `program` (an absolute path on the root, then its arguments;
/// Linux's /init, `tests/debian/debinit.c`, runs it there), Linux in a
/// thread beside this kernel. Each one's console lines, kept as well in
/// `work` (linux.log, profkern.log).
pub fn on_both(
    opts: &Options,
    suite: &Suite,
    program: &[String],
    limit: Duration,
    work: &Path,
) -> Result<(Vec<String>, Vec<String>), String> {
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let linux_image =
        crate::checks::fresh_disk_image(&format!("{}-linux", suite.name), Disk::Debian)?;
    let our_image = crate::checks::fresh_disk_image(suite.name, Disk::Debian)?;
    let (kernel, initrd, _) = crate::linuxdisk::linux_with_init("tests/debian/debinit.c", work)?;

    let linux_opts = opts.clone();
    let linux_args = program.join(" ");
    let linux = std::thread::spawn(move || {
        crate::bench::boot_linux(
            &linux_opts,
            (&kernel, &initrd),
            &linux_image,
            &linux_args,
            limit,
        )
    });
    let ours = boot_ours(opts, suite, &our_image, program, limit, work);
    let linux = linux
        .join()
        .map_err(|_| "the thread booting Linux panicked".to_string())?;
    let ours = ours?;
    let linux = linux?;
    save(&work.join("linux.log"), &linux)?;
    save(&work.join("profkern.log"), &ours)?;
    Ok((linux, ours))
}

fn save(path: &Path, lines: &[String]) -> Result<(), String> {
    std::fs::write(path, lines.join("\n") + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// This kernel on `image` as its root, init running `program`; the
/// console's lines (an ending other than power-off with status 0 is an
/// error that shows the console, kept in `work`).
fn boot_ours(
    opts: &Options,
    suite: &Suite,
    image: &Path,
    program: &[String],
    limit: Duration,
    work: &Path,
) -> Result<Vec<String>, String> {
    let mut boot_opts = suite.boot_options(opts);
    boot_opts.program = program.to_vec();
    boot_opts.disks = vec![image.to_path_buf()];
    boot_opts.guest_out = Some(build::root().join("target/guest-out").join(suite.name));
    let boot = Boot::test(&boot_opts, suite.name, suite.conf);
    let kernel_image = build::image(&boot_opts, &boot)?;
    let outcome = qemu::boot(&boot_opts, &kernel_image, limit, false, &[])?;
    if outcome.ending != Ending::Exited(0) {
        let path = work.join("profkern.log");
        let _ = save(&path, &outcome.lines);
        return Err(format!(
            "this kernel: {} (console: {})",
            outcome.ending.describe(),
            path.display()
        ));
    }
    Ok(outcome.lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn parse_reads_pyregr_lines_among_others() {
        let run = parse(&lines(
            "[ 12] INFO boot\n\
             pyregr: pass test_os test.test_os.A.test_x\n\
             noise pyregr: fail test_os test.test_os.A.test_noise\n\
             pyregr: fail test_os test.test_os.A.test_y -- AssertionError: 1 != 2\n\
             pyregr: skip test_os test.test_os.B.test_z -- needs root\n\
             pyregr: time test_os 12\n\
             pyregr: done",
        ));
        assert!(run.done);
        assert_eq!(run.tests.len(), 3);
        assert_eq!(
            run.tests[&("test_os".into(), "test.test_os.A.test_y".into())],
            (Kind::Fail, "AssertionError: 1 != 2".into())
        );
        assert_eq!(run.seconds["test_os"], 12);
        assert_eq!(counts(&run, "test_os"), [3, 1, 1, 1]);
    }

    #[test]
    fn listed_reads_only_its_section() {
        let md = "## Other\n- `not.this`: no\n## Python's regression tests\n\nText.\n\n\
                  - `test.test_os.A.test_y`: no AF_INET\n- `x.y`: why\n## Next\n- `z`: no\n";
        let l = listed(md);
        assert_eq!(l.len(), 2);
        assert_eq!(l["test.test_os.A.test_y"], "no AF_INET");
    }

    #[test]
    fn judge_fails_a_test_that_passes_only_on_linux_unless_listed() {
        let linux = parse(&lines(
            "pyregr: pass m t.a\npyregr: pass m t.b\npyregr: fail m t.c\npyregr: pass m t.d\npyregr: done",
        ));
        let ours = parse(&lines(
            "pyregr: pass m t.a\npyregr: error m t.b -- OSError\npyregr: pass m t.c\npyregr: pass m t.d\npyregr: done",
        ));
        let (verdict, stale) = judge("m", &linux, &ours, &BTreeMap::new());
        let why = verdict.unwrap_err();
        assert!(why.contains("t.b: Error: OSError"), "{why}");
        assert!(!why.contains("t.c"));
        assert!(stale.is_empty());
        let mut listed = BTreeMap::new();
        listed.insert("t.b".to_string(), "reason".to_string());
        listed.insert("t.d".to_string(), "reason".to_string());
        let (verdict, stale) = judge("m", &linux, &ours, &listed);
        assert!(verdict.is_ok());
        assert_eq!(stale, vec!["t.d".to_string()]);
        let (verdict, _) = judge("other", &linux, &ours, &listed);
        assert!(
            verdict.is_err(),
            "a module Linux ran nothing of cannot pass"
        );
    }

    #[test]
    fn the_short_set_is_part_of_all() {
        let all: BTreeSet<&str> = ALL.iter().copied().collect();
        assert!(SHORT.iter().all(|m| all.contains(m)));
    }
}
