//! `cargo xtask test`: every test the project has, counted in one line.
//!
//! The test command is the `PARTS` table, run in order: the host crates'
//! unit tests, the repository's files, the documents, the QEMU suites
//! (each a row of `suites.rs`: self-tests, crash boots, the user-space test
//! programs, the musl and glibc programs against the host's Linux, gprof,
//! the shell), the README's samples, the GDB page, the labs and a smoke
//! run of the benchmark. Every check is one pass or fail; the last line is
//! `N passed, M failed`, and the exit status is non-zero when anything
//! failed. `cargo xtask test -- NAME...` runs only the parts and suites
//! whose names start with one of the NAMEs, for quick rounds.
//!
//! This file is the runner and the checkers of each kind of suite
//! (`Expect`); what a line must look like is `expect.rs`'s one language.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use crate::build::{self, Boot};
use crate::options::Options;
use crate::prof;
use crate::qemu::{self, Ending, Outcome};
use crate::setup;
use crate::suites::{Expect, Suite, suites};

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    /// The whole console log of the suite being checked, named beside each
    /// of its failures.
    log: Option<PathBuf>,
}

impl Tally {
    fn record(&mut self, name: &str, ok: bool, why: &str) {
        if ok {
            self.passed += 1;
            println!("test {name} ... ok");
        } else {
            println!("test {name} ... FAILED: {why}");
            if let Some(log) = &self.log {
                println!("   the whole console: {}", log.display());
            }
            self.failed.push(format!("{name}: {why}"));
        }
    }
}

/// Where a suite's whole console goes: `target/test-logs/NAME.log`.
fn log_path(suite: &str) -> PathBuf {
    build::root()
        .join("target/test-logs")
        .join(format!("{suite}.log"))
}

/// Keeps a suite's whole console (and QEMU's complaints) to read after the
/// run, failed or not.
fn keep_log(suite: &str, outcome: &Outcome) -> Result<PathBuf, String> {
    let path = log_path(suite);
    let dir = path.parent().expect("has a parent");
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut text = outcome.lines.join("\n");
    text.push('\n');
    if !outcome.qemu_stderr.trim().is_empty() {
        text.push_str("--- qemu stderr ---\n");
        text.push_str(&outcome.qemu_stderr);
    }
    text.push_str(&format!("--- {}\n", outcome.ending.describe()));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// One part of the test command: its name (what `cargo xtask test --
/// NAME` selects, by prefix), what `cargo xtask help` says of it, and how
/// it runs. The QEMU suites are one part whose rows (`suites.rs`) are also
/// selected one by one by their own names. Adding a part is adding a row.
struct Part {
    name: &'static str,
    about: &'static str,
    run: fn(&Options, &Selection, &mut Tally) -> Result<(), String>,
}

/// The parts, in the order the test command runs them.
const PARTS: &[Part] = &[
    Part {
        name: "host",
        about: "cargo test of the host crates (kcore, abi, xtask, boot)",
        run: |_, _, tally| host_tests(tally),
    },
    Part {
        name: "repo",
        about: "git tracks sources only: no core dump, nothing over 1 MiB (repo.rs)",
        run: |_, _, tally| repo_holds_sources(tally),
    },
    Part {
        name: "docs",
        about: "what the documents name exists, the lists they keep are whole, the book builds",
        run: |_, _, tally| docs_are_true(tally),
    },
    Part {
        name: "suites",
        about: "the QEMU suites of suites.rs, each also selected by its own name (sigtests, musl-4cpus, ...)",
        run: run_suites,
    },
    Part {
        name: "readme",
        about: "the README's sample outputs against a run of each",
        run: |opts, _, tally| readme_samples_are_true(opts, tally),
    },
    Part {
        name: "gdb",
        about: "docs/gdb.md's walk-throughs, run in GDB as written",
        run: |opts, _, tally| gdb_walkthroughs_are_true(opts, tally),
    },
    Part {
        name: "labs",
        about: "each lab passes here, fails with its piece taken out, and its patch gives this tree back",
        run: |_, _, tally| labs_hold(tally),
    },
    Part {
        name: "bench",
        about: "cargo xtask bench --quick: every benchmark gives a number on both kernels",
        run: |opts, _, tally| bench_smoke(opts, tally),
    },
];

/// The parts and suites `cargo xtask test -- NAME...` asked for: every
/// one whose name starts with one of the NAMEs (all of them for none).
struct Selection<'a>(&'a [String]);

impl Selection<'_> {
    fn wants(&self, name: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|o| name.starts_with(o.as_str()))
    }

    /// A QEMU suite runs when its part or its own name is asked for.
    fn wants_suite(&self, suite: &str) -> bool {
        self.wants("suites") || self.wants(suite)
    }
}

/// The parts, for `cargo xtask help`.
pub fn parts_help() -> String {
    let mut text = String::from(
        "\nthe test command's parts (`cargo xtask test -- NAME...` runs those\nwhose names start with a NAME; the QEMU suites go by their own names too):\n",
    );
    for part in PARTS {
        text.push_str(&format!("  {:<8}{}\n", part.name, part.about));
    }
    text
}

pub fn run(opts: &Options) -> Result<ExitCode, String> {
    let mut tally = Tally::default();
    let selection = Selection(&opts.program);
    let suite_names: Vec<&str> = suites().iter().map(|s| s.name).collect();
    if let Some(unknown) = opts.program.iter().find(|o| {
        !PARTS.iter().any(|p| p.name.starts_with(o.as_str()))
            && !suite_names.iter().any(|s| s.starts_with(o.as_str()))
    }) {
        return Err(format!(
            "no test part or suite named '{unknown}*' (`cargo xtask help` lists the parts)"
        ));
    }
    for part in PARTS {
        let asked = selection.wants(part.name)
            || part.name == "suites" && suite_names.iter().any(|s| selection.wants(s));
        if asked {
            (part.run)(opts, &selection, &mut tally)?;
        }
    }
    if !tally.failed.is_empty() {
        println!("\nfailures:");
        for f in &tally.failed {
            println!("    {f}");
        }
    }
    println!("\n{} passed, {} failed", tally.passed, tally.failed.len());
    Ok(if tally.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn repo_holds_sources(tally: &mut Tally) -> Result<(), String> {
    println!("== repo: git tracks sources only");
    let found = crate::repo::problems(&build::root())?;
    tally.record(
        "repo/no_core_dump_and_nothing_over_1_mib",
        found.is_empty(),
        &found.join("; "),
    );
    Ok(())
}

fn docs_are_true(tally: &mut Tally) -> Result<(), String> {
    println!("== docs: every file and function they name exists");
    let root = build::root();
    for (doc, problems) in crate::docs::check_all(&root) {
        tally.record(
            &format!("docs/{doc}"),
            problems.is_empty(),
            &problems.join("; "),
        );
    }
    let problems = crate::lab::check_book(&root);
    tally.record(
        "docs/labs_match_the_book",
        problems.is_empty(),
        &problems.join("; "),
    );
    let problems = crate::figures::check(&root);
    tally.record(
        "docs/figures_match_their_sources",
        problems.is_empty(),
        &problems.join("; "),
    );
    let built = crate::book::build_html();
    tally.record(
        "docs/book_builds_with_every_link_whole",
        built.is_ok(),
        &built.err().unwrap_or_default(),
    );
    Ok(())
}

fn run_suites(opts: &Options, selection: &Selection, tally: &mut Tally) -> Result<(), String> {
    setup::qemu()?;
    for suite in suites().iter().filter(|s| selection.wants_suite(s.name)) {
        let opts = Options {
            program: Vec::new(),
            ..opts.clone()
        };
        run_suite(&opts, suite, tally)?;
    }
    Ok(())
}

fn labs_hold(tally: &mut Tally) -> Result<(), String> {
    println!(
        "== labs: each check passes here, fails with its piece taken out, and its patch gives this tree back"
    );
    let start = std::time::Instant::now();
    for (name, ok, why) in crate::lab::test_all()? {
        tally.record(&name, ok, &why);
    }
    println!("   (labs: {:.0} s)", start.elapsed().as_secs_f64());
    Ok(())
}

/// A smoke run: every benchmark must produce a number on both kernels;
/// the numbers themselves are not judged here.
fn bench_smoke(opts: &Options, tally: &mut Tally) -> Result<(), String> {
    println!("== bench --quick (this kernel and Linux)");
    let quick = Options {
        quick: true,
        program: Vec::new(),
        ..opts.clone()
    };
    let result = crate::bench::run(&quick);
    tally.record(
        "bench/every_benchmark_produced_a_number",
        result.is_ok(),
        &result.err().unwrap_or_default(),
    );
    Ok(())
}

/// Runs `cargo test` on the host crates and adds up its result lines.
fn host_tests(tally: &mut Tally) -> Result<(), String> {
    println!("== host unit tests");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(build::root())
        .args(["test", "--quiet"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    let (mut passed, mut failed) = (0, 0);
    for line in text.lines().filter(|l| l.starts_with("test result:")) {
        let count = |word: &str| {
            line.split(';')
                .find_map(|part| {
                    part.trim()
                        .trim_start_matches("test result: ok.")
                        .trim_start_matches("test result: FAILED.")
                        .trim()
                        .strip_suffix(word)
                })
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(0)
        };
        passed += count(" passed");
        failed += count(" failed");
    }
    tally.passed += passed;
    for i in 0..failed {
        tally
            .failed
            .push(format!("host unit test #{i} (see cargo test output above)"));
    }
    if !out.status.success() && failed == 0 {
        tally.record(
            "host/cargo-test",
            false,
            "cargo test failed before running tests",
        );
    }
    Ok(())
}

/// A program run here and on the host, whose outputs must be equal.
struct SameAsLinux {
    name: String,
    /// The command line on the host.
    host: Vec<String>,
    /// The command line here.
    guest: Vec<String>,
}

/// The script the project's /bin/sh runs, and the host's sh beside it.
const SHELL_GRAMMAR_SCRIPT: &str = "tests/shell/posix.sh";
/// The script the glibc shells run.
const GLIBC_SCRIPT: &str = "tests/glibc/shell.sh";
/// The script busybox's sh runs to try busybox's ps, free, uptime and top.
const GLIBC_PROC_SCRIPT: &str = "tests/glibc/proc.sh";
/// Where the fetched Debian binaries are kept.
const DEBIAN_DIR: &str = "target/debian";

/// A file to put in the ramdisk: (host path, guest path).
type RamdiskFile = (String, String);

/// The glibc cases: busybox-static's and bash-static's binaries (fetched
/// once) and the files to put in the ramdisk for them.
fn glibc_cases() -> Result<(Vec<SameAsLinux>, Vec<RamdiskFile>), String> {
    let dir = build::root().join(DEBIAN_DIR);
    let busybox = crate::setup::debian_file(&dir, "busybox-static", "./bin/busybox")?;
    let bash = crate::setup::debian_file(&dir, "bash-static", "./bin/bash-static")?;
    let script = build::root().join(GLIBC_SCRIPT);
    let proc_script = build::root().join(GLIBC_PROC_SCRIPT);
    let show = |p: &std::path::Path| p.display().to_string();
    let cases = vec![
        SameAsLinux {
            name: "busybox-sh".into(),
            host: vec![
                show(&busybox),
                "sh".into(),
                show(&script),
                format!("{} sh", show(&busybox)),
            ],
            guest: ["/bin/busybox", "sh", "/etc/shell.sh", "/bin/busybox sh"]
                .map(String::from)
                .to_vec(),
        },
        SameAsLinux {
            name: "busybox-proc".into(),
            host: vec![
                show(&busybox),
                "sh".into(),
                show(&proc_script),
                show(&busybox),
            ],
            guest: ["/bin/busybox", "sh", "/etc/proc.sh", "/bin/busybox"]
                .map(String::from)
                .to_vec(),
        },
        SameAsLinux {
            name: "bash".into(),
            host: vec![show(&bash), show(&script), show(&bash)],
            guest: ["/bin/bash", "/etc/shell.sh", "/bin/bash"]
                .map(String::from)
                .to_vec(),
        },
    ];
    let adds = vec![
        (show(&busybox), "/bin/busybox".to_string()),
        (show(&bash), "/bin/bash".to_string()),
        (show(&script), "/etc/shell.sh".to_string()),
        (show(&proc_script), "/etc/proc.sh".to_string()),
    ];
    Ok((cases, adds))
}

fn run_suite(opts: &Options, suite: &Suite, tally: &mut Tally) -> Result<(), String> {
    let mut boot_opts = opts.clone();
    boot_opts.hz = suite.hz;
    boot_opts.cpus = suite.cpus.unwrap_or(opts.cpus);
    boot_opts.tick = suite.tick;
    boot_opts.uefi = suite.uefi || opts.uefi;
    boot_opts.program = suite.program.iter().map(|s| s.to_string()).collect();
    let cases: Vec<SameAsLinux> = match suite.expect {
        Expect::Musl => {
            let mut cases: Vec<SameAsLinux> = build::musl_programs()?
                .into_iter()
                .map(|(name, path)| SameAsLinux {
                    guest: vec![format!("/bin/musl-{name}")],
                    host: vec![path.display().to_string()],
                    name,
                })
                .collect();
            // The project's shell against the host's sh (dash on Debian).
            let script = build::root().join(SHELL_GRAMMAR_SCRIPT);
            boot_opts
                .add
                .push((script.display().to_string(), "/etc/posix.sh".into()));
            cases.push(SameAsLinux {
                name: "sh-grammar".into(),
                host: vec!["sh".into(), script.display().to_string()],
                guest: vec!["/bin/sh".into(), "/etc/posix.sh".into()],
            });
            cases
        }
        Expect::Glibc => {
            let (cases, adds) = glibc_cases()?;
            boot_opts.add.extend(adds);
            cases
        }
        _ => Vec::new(),
    };
    for case in &cases {
        // musltests runs /bin/musl-NAME for a bare NAME.
        if case.guest == [format!("/bin/musl-{}", case.name)] {
            boot_opts.program.push(case.name.clone());
        } else {
            boot_opts.program.push("--case".into());
            boot_opts.program.push(case.name.clone());
            boot_opts.program.extend(case.guest.iter().cloned());
            boot_opts.program.push("--".into());
        }
    }
    for (source, guest) in suite.glibc_profiled {
        let elf = build::glibc_profiled(&build::root().join(source))?;
        boot_opts
            .add
            .push((elf.display().to_string(), guest.to_string()));
    }
    for (source, guest) in suite.musl_profiled {
        let source = build::root().join(source);
        let elf = build::musl_profiled(opts, &[source], build::PROF_CFLAGS)?;
        boot_opts
            .add
            .push((elf.display().to_string(), guest.to_string()));
    }
    boot_opts.export = suite
        .exports
        .iter()
        .map(|(path, _)| path.to_string())
        .collect();
    if let Expect::Gprof { .. } = suite.expect {
        boot_opts.export.push(prof::GMON.to_string());
        boot_opts.export.push(prof::GMON_DIR.to_string());
    }
    let image = build::image(&boot_opts, &Boot::test(&boot_opts, suite.name, suite.conf))?;
    println!(
        "== {} (hz={}, tick={}, {})",
        suite.name,
        suite.hz,
        suite.tick.name(),
        if boot_opts.uefi { "uefi" } else { "bios" }
    );
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(300));
    let outcome = qemu::boot(&boot_opts, &image, timeout, false, suite.typing)?;
    tally.log = Some(keep_log(suite.name, &outcome)?);
    if let Some(t) = outcome.first_line_after {
        println!(
            "   kernel banner {:.2} s after QEMU started",
            t.as_secs_f64()
        );
    }
    match suite.expect {
        Expect::SelfTests => check_selftests(suite.name, &outcome, tally),
        Expect::Crash(texts) => check_crash(suite.name, &outcome, texts, tally),
        Expect::UserSuite(prefix) => check_user_suite(suite.name, prefix, &outcome, tally),
        Expect::Output(lines, status) => {
            let quiet = !boot_opts.verbose;
            check_output(suite.name, &outcome, (lines, status, quiet), tally)
        }
        Expect::Musl | Expect::Glibc => check_same_as_linux(suite.name, &outcome, &cases, tally)?,
        Expect::Gprof {
            elf,
            top,
            calls,
            console,
            arcs,
            share,
            counted,
            summed,
        } => check_gprof(
            suite.name,
            &boot_opts,
            &outcome,
            (elf, top, calls, console, arcs, share, counted, summed),
            tally,
        )?,
    }
    check_exports(suite, &boot_opts, tally)?;
    tally.log = None;
    Ok(())
}

fn show_console(outcome: &Outcome) {
    println!("   --- console ---");
    for line in &outcome.lines {
        println!("   | {line}");
    }
    if !outcome.qemu_stderr.trim().is_empty() {
        println!("   --- qemu stderr ---\n{}", outcome.qemu_stderr);
    }
}

fn check_selftests(suite: &str, outcome: &Outcome, tally: &mut Tally) {
    for line in &outcome.lines {
        if let Some(name) = line.strip_prefix("selftest: ok ") {
            tally.record(&format!("{suite}/{name}"), true, "");
        } else if let Some(rest) = line.strip_prefix("selftest: FAIL ") {
            let (name, why) = rest.split_once(": ").unwrap_or((rest, ""));
            tally.record(&format!("{suite}/{name}"), false, why);
        }
    }
    let reported = outcome
        .lines
        .iter()
        .any(|l| l.contains("ignoring 'bogus_option=1': unknown option"));
    tally.record(
        &format!("{suite}/bad_boot_option_is_reported"),
        reported,
        "no warning for bogus_option=1",
    );
    let finished = outcome.ending == Ending::Exited(0);
    if !finished {
        show_console(outcome);
    }
    tally.record(
        &format!("{suite}/powered_off_cleanly"),
        finished,
        &outcome.ending.describe(),
    );
}

fn check_crash(suite: &str, outcome: &Outcome, texts: &[&str], tally: &mut Tally) {
    let console = outcome.lines.join("\n");
    let missing: Vec<_> = texts.iter().filter(|t| !console.contains(**t)).collect();
    let ok = outcome.ending == Ending::KernelFailure && missing.is_empty();
    if !ok {
        show_console(outcome);
    }
    let why = format!("{}; missing {:?}", outcome.ending.describe(), missing);
    tally.record(&format!("{suite}/report_and_failure_status"), ok, &why);
}

fn check_user_suite(suite: &str, prefix: &str, outcome: &Outcome, tally: &mut Tally) {
    let mut seen = 0;
    for line in &outcome.lines {
        let Some(rest) = line.strip_prefix(prefix).map(str::trim_start) else {
            continue;
        };
        seen += 1;
        if let Some(name) = rest.strip_prefix("ok ") {
            tally.record(&format!("{suite}/{name}"), true, "");
        } else if let Some(rest) = rest.strip_prefix("FAIL ") {
            let (name, why) = rest.split_once(": ").unwrap_or((rest, ""));
            tally.record(&format!("{suite}/{name}"), false, why);
        }
    }
    let finished = outcome.ending == Ending::Exited(0);
    if !finished || seen == 0 {
        show_console(outcome);
    }
    tally.record(
        &format!("{suite}/ran_and_exited_0"),
        finished && seen > 0,
        &outcome.ending.describe(),
    );
}

/// What a program printed and how it ended, as musltests frames it.
#[derive(Debug, PartialEq)]
struct Run {
    lines: Vec<String>,
    end: String,
}

/// The runs of `name` in the console of a musltests boot.
fn guest_run(lines: &[String], name: &str) -> Option<Run> {
    let begin = lines
        .iter()
        .position(|l| l == &format!("musl: begin {name}"))?;
    let mut out = Vec::new();
    for line in &lines[begin + 1..] {
        if let Some(text) = line.strip_prefix("musl| ") {
            out.push(text.to_string());
        } else if let Some(end) = line.strip_prefix(&format!("musl: end {name} ")) {
            return Some(Run {
                lines: out,
                end: end.to_string(),
            });
        }
    }
    None
}

/// Runs `argv` on the host, in an empty directory of its own (the programs
/// use relative paths), as the reference.
fn host_run(name: &str, argv: &[String]) -> Result<Run, String> {
    use std::os::unix::process::ExitStatusExt;
    let dir = build::root().join("target/musl-run").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} on the host: {e}", argv[0]))?;
    let end = match (out.status.code(), out.status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (_, Some(signal)) => format!("signal {signal}"),
        _ => String::from("status ?"),
    };
    Ok(Run {
        lines: String::from_utf8_lossy(&out.stdout)
            .split('\n')
            .map(String::from)
            .collect(),
        end,
    })
}

fn check_same_as_linux(
    suite: &str,
    outcome: &Outcome,
    cases: &[SameAsLinux],
    tally: &mut Tally,
) -> Result<(), String> {
    let mut shown = false;
    for SameAsLinux { name, host, .. } in cases {
        let host = host_run(name, host)?;
        let guest = guest_run(&outcome.lines, name);
        let why = match &guest {
            None => String::from("no complete run on the console"),
            Some(g) if g.end != host.end => {
                format!("ended with {} here, {} on Linux", g.end, host.end)
            }
            Some(g) => match g.lines.iter().zip(&host.lines).position(|(a, b)| a != b) {
                Some(i) => format!(
                    "line {}: {:?} here, {:?} on Linux",
                    i + 1,
                    g.lines[i],
                    host.lines[i]
                ),
                None if g.lines.len() != host.lines.len() => format!(
                    "{} lines here, {} on Linux",
                    g.lines.len(),
                    host.lines.len()
                ),
                None => String::new(),
            },
        };
        if !why.is_empty() && !shown {
            show_console(outcome);
            shown = true;
        }
        tally.record(
            &format!("{suite}/{name}_same_as_linux"),
            why.is_empty(),
            &why,
        );
    }
    Ok(())
}

/// The console must show the `want` lines in order and end with `status`;
/// with `quiet` (no `--verbose`) nothing may come before the kernel's banner.
fn check_output(
    suite: &str,
    outcome: &Outcome,
    (want, status, quiet): (&[&str], u8, bool),
    tally: &mut Tally,
) {
    // The first line not found, in order (the rest are not looked for).
    let missing: Vec<&str> =
        crate::expect::first_missing(want, &outcome.lines, crate::expect::CONSOLE)
            .map(|i| want[i])
            .into_iter()
            .collect();
    // Without --verbose the console starts with the kernel: the
    // bootloader's log is off (boot/src/lib.rs).
    let before_kernel: Vec<&String> = outcome
        .lines
        .iter()
        .take_while(|l| quiet && !l.starts_with(qemu::KERNEL_FIRST_LINE))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let ok =
        missing.is_empty() && before_kernel.is_empty() && outcome.ending == Ending::Exited(status);
    if !ok {
        show_console(outcome);
    }
    let why = format!(
        "{}; missing (in order) {missing:?}; before the kernel's banner {before_kernel:?}",
        outcome.ending.describe()
    );
    tally.record(&format!("{suite}/output_and_status_{status}"), ok, &why);
}

type GprofExpect<'a> = (
    &'a str,
    &'a str,
    &'a [&'a str],
    &'a [&'a str],
    Option<usize>,
    Option<(&'a str, f64, f64)>,
    &'a [(&'a str, &'a str)],
    &'a [&'a str],
);

fn check_gprof(
    suite: &str,
    opts: &Options,
    outcome: &Outcome,
    (elf, top, calls, console, arcs, share, counted, summed): GprofExpect,
    tally: &mut Tally,
) -> Result<(), String> {
    let name = |what: &str| format!("{suite}/{what}");
    let text = outcome.lines.join("\n");
    let missing: Vec<_> = console.iter().filter(|c| !text.contains(**c)).collect();
    tally.record(
        &name("console"),
        missing.is_empty(),
        &format!("missing {missing:?}"),
    );
    let exported = qemu::unpack_exports(opts)?;
    // One file per process (GMON_OUT_PREFIX, as prof runs programs), the
    // first process's read as prof reads it; else the one gmon.out.
    let per_process = prof::per_process(&exported);
    let gmon = per_process.first().or(exported.first()).cloned();
    let elf = prof::host_elf(opts, elf)?;
    let Some(gmon) = gmon else {
        show_console(outcome);
        tally.record(&name("gmon_out_written"), false, &outcome.ending.describe());
        return Ok(());
    };
    if let Some(want) = arcs {
        let got = std::fs::read(&gmon)
            .ok()
            .and_then(|bytes| kcore::gmon::decode(&bytes).ok())
            .map(|d| d.arcs.len());
        tally.record(
            &name(&format!("gmon_out_has_{want}_arcs")),
            got == Some(want),
            &format!("{got:?} arcs"),
        );
    }
    let gmons = [gmon];
    let flat = prof::gprof(&elf, &gmons, &["-p"]);
    tally.record(
        &name("gprof_reads_it_without_warning"),
        flat.is_ok(),
        flat.as_ref().err().map_or("", |e| e),
    );
    let Ok(flat) = flat else { return Ok(()) };
    // The first row under the header line that ends in "name".
    let first = flat
        .lines()
        .skip_while(|l| !l.trim_end().ends_with("name"))
        .nth(1)
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or("");
    tally.record(
        &name("flat_profile_top_is_the_hot_spot"),
        first == top,
        &format!("top is '{first}', want '{top}'"),
    );
    if let Some((function, low, high)) = share {
        // A flat-profile row: "% time", cumulative, self, ..., name.
        let percent = flat
            .lines()
            .filter(|l| l.split_whitespace().last() == Some(function))
            .find_map(|l| l.split_whitespace().next()?.parse::<f64>().ok());
        tally.record(
            &name(&format!(
                "{function}_has_{low}_to_{high}_percent_of_the_time"
            )),
            percent.is_some_and(|p| (low..=high).contains(&p)),
            &format!("{percent:?} percent\n{flat}"),
        );
    }
    if !summed.is_empty() {
        let all = prof::gprof(&elf, &prof::choose_profiles(&per_process, true), &["-q"]);
        let all = all.unwrap_or_else(|e| e);
        for call in summed {
            tally.record(
                &name(&format!(
                    "every_process_summed_shows_{}",
                    call.replace(['/', ' ', ':'], "_")
                )),
                call_shown(&all, call),
                &format!("not in gprof -q of {} profiles", per_process.len()),
            );
        }
    }
    if calls.is_empty() && counted.is_empty() {
        return Ok(());
    }
    let graph = prof::gprof(&elf, &gmons, &["-q"])?;
    for (said, function) in counted {
        let printed = text
            .lines()
            .find_map(|l| l.split_once(said))
            .and_then(|(_, rest)| rest.split_whitespace().next()?.parse::<u64>().ok());
        let shown = called(&graph, function);
        tally.record(
            &name(&format!("call_graph_counts_every_call_to_{function}")),
            printed.is_some() && printed == shown,
            &format!("the program said {printed:?}, gprof {shown:?}"),
        );
    }
    for call in calls {
        let found = call_shown(&graph, call);
        tally.record(
            &name(&format!(
                "call_graph_shows_{}",
                call.replace(['/', ' ', ':'], "_")
            )),
            found,
            "not in gprof -q",
        );
    }
    Ok(())
}

/// Whether a line of gprof's call graph shows `call` ("1000/1000 a": the
/// count and the callee on one line).
fn call_shown(graph: &str, call: &str) -> bool {
    let (count, callee) = call.split_once(' ').unwrap_or((call, ""));
    graph.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.contains(&count) && words.contains(&callee)
    })
}

/// The calls to `function` in gprof's call graph: the "called" column of
/// its own line (`[14] 0.0 0.00 0.00 1+2046 tree_sum [14]`), recursive
/// calls added.
fn called(graph: &str, function: &str) -> Option<u64> {
    let words: Vec<&str> = graph
        .lines()
        .find(|l| l.starts_with('[') && l.split_whitespace().any(|w| w == function))?
        .split_whitespace()
        .collect();
    let at = words.iter().position(|w| *w == function)?;
    words[at.checked_sub(1)?]
        .split('+')
        .map(|n| n.parse::<u64>().ok())
        .sum()
}

/// The README's sample outputs against a run of each (readme.rs): every
/// line a sample shows must be printed, in order, shape for shape.
fn readme_samples_are_true(opts: &Options, tally: &mut Tally) -> Result<(), String> {
    println!("== readme (its sample outputs, against a run)");
    let readme = crate::readme::readme(&build::root())?;
    for sample in crate::readme::SAMPLES {
        let words: String = sample
            .first_line
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let name = format!("readme/sample_{}", words.trim_matches('_'));
        let shown = match crate::readme::shown_lines(&readme, sample) {
            Ok(lines) => lines,
            Err(why) => {
                tally.record(&name, false, &why);
                continue;
            }
        };
        let boot_opts = Options {
            program: sample.program.iter().map(|s| s.to_string()).collect(),
            ..opts.clone()
        };
        let image = build::image(&boot_opts, &build::Boot::normal(&boot_opts))?;
        let outcome = qemu::boot(&boot_opts, &image, Duration::from_secs(120), false, &[])?;
        let log = keep_log(
            &format!("readme-{}", sample.program.join("-").replace('/', "")),
            &outcome,
        )?;
        let missing = crate::readme::first_missing(&shown, &outcome.lines);
        tally.log = Some(log);
        tally.record(
            &name,
            missing.is_none(),
            &format!(
                "README.md shows '{}', which the run did not print (numbers aside)",
                missing.unwrap_or_default().trim()
            ),
        );
        tally.log = None;
    }
    Ok(())
}

/// The walk-throughs of `docs/gdb.md`, run command by command as the page
/// writes them, each line the page shows checked against what gdb printed
/// (gdbdoc.rs says how lines match). One test per walk-through, named by
/// its program; the failure names the first step that went otherwise.
fn gdb_walkthroughs_are_true(opts: &Options, tally: &mut Tally) -> Result<(), String> {
    println!("== gdb (docs/gdb.md's walk-throughs, as written)");
    let page_path = build::root().join("docs/gdb.md");
    let page = std::fs::read_to_string(&page_path)
        .map_err(|e| format!("cannot read {}: {e}", page_path.display()))?;
    let walks = crate::gdbdoc::parse(&page).map_err(|e| format!("docs/gdb.md: {e}"))?;
    if walks.is_empty() {
        tally.record("gdb/walkthroughs", false, "docs/gdb.md has no walk-through");
    }
    for walk in &walks {
        let name = walk
            .program
            .first()
            .map_or("boot".into(), |p| p.trim_start_matches("/bin/").to_string());
        let script = build::root().join(format!("target/gdb-walkthrough-{name}.cmd"));
        std::fs::write(&script, crate::gdbdoc::script(walk))
            .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
        let mut gdb_opts = opts.clone();
        gdb_opts.program = walk.program.clone();
        let (_, output) = crate::gdb::session(&gdb_opts, Some(&script))?;
        let log = log_path(&format!("gdb-{name}"));
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&log, &output)
            .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
        let outputs = crate::gdbdoc::split_output(&output, walk.steps.len());
        let verdict =
            walk.steps
                .iter()
                .zip(&outputs)
                .enumerate()
                .try_for_each(|(i, (step, out))| {
                    let Some(out) = out else {
                        let said = output.lines().rev().find(|l| !l.trim().is_empty());
                        return Err(format!(
                            "step {} (`{}`) was never run: gdb stopped earlier ({})",
                            i + 1,
                            step.command,
                            said.unwrap_or("no output").trim()
                        ));
                    };
                    crate::gdbdoc::check_step(step, out).map_err(|e| format!("step {}: {e}", i + 1))
                });
        tally.log = Some(log);
        tally.record(
            &format!("gdb/walkthrough_{name}_line_{}", walk.line),
            verdict.is_ok(),
            &verdict.err().unwrap_or_default(),
        );
        tally.log = None;
    }
    Ok(())
}

/// Checks the files the suite exported (over COM2) arrived with the right
/// bytes; a path whose expected content is empty must not exist in the guest.
fn check_exports(suite: &Suite, opts: &Options, tally: &mut Tally) -> Result<(), String> {
    if suite.exports.is_empty() {
        return Ok(());
    }
    let written = qemu::unpack_exports(opts)?;
    for (path, want) in suite.exports {
        let name = path.trim_start_matches('/').replace('/', "_");
        let file = written
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == name));
        let got = file.and_then(|f| std::fs::read_to_string(f).ok());
        let ok = if want.is_empty() {
            got.is_none()
        } else {
            got.as_deref() == Some(*want)
        };
        let why = format!(
            "{path}: got {got:?}, want {}",
            if want.is_empty() {
                "no file".into()
            } else {
                format!("{want:?}")
            }
        );
        tally.record(
            &format!("{}/export{}", suite.name, path.replace('/', "_")),
            ok,
            &why,
        );
    }
    Ok(())
}
