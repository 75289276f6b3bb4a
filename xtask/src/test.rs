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
use crate::checks::{
    self, SameAsLinux, Tally, check_core_in_gdb, check_crash, check_exports, check_gprof,
    check_output, check_same_as_linux, check_selftests, check_user_suite,
};
use crate::options::Options;
use crate::prof;
use crate::qemu::{self, Outcome};
use crate::setup;
use crate::suites::{Disk, Expect, Suite, suites};

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
        name: "kprof-user",
        about: "cargo xtask kprof --user --kernel: a profiled program's profile beside the kernel's, from one run",
        run: |opts, _, tally| both_profiles_of_one_run(opts, tally),
    },
    Part {
        name: "bench",
        about: "cargo xtask bench --quick: every benchmark gives a number on both kernels",
        run: |opts, _, tally| bench_smoke(opts, tally),
    },
];

/// Suites too slow for the default run: `cargo xtask test -- NAME` runs
/// one, by its whole name.
const SLOW: &[&str] = &["crash-disk", "fuzz-disk", "python-all"];

/// The parts and suites `cargo xtask test -- NAME...` asked for: every
/// one whose name starts with one of the NAMEs (all of them for none).
struct Selection<'a>(&'a [String]);

impl Selection<'_> {
    fn wants(&self, name: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|o| name.starts_with(o.as_str()))
    }

    /// A QEMU suite runs when its part or its own name is asked for; a
    /// slow one (`SLOW`) only when its whole name is.
    fn wants_suite(&self, suite: &str) -> bool {
        if SLOW.contains(&suite) {
            return self.0.iter().any(|o| o == suite);
        }
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
    if let Ok(name) = std::env::var(ONE_SUITE) {
        return run_one_suite(opts, &name);
    }
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
    let all = suites();
    let chosen: Vec<&Suite> = all
        .iter()
        .filter(|s| selection.wants_suite(s.name))
        .collect();
    let opts = Options {
        program: Vec::new(),
        ..opts.clone()
    };
    let jobs = opts.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    if jobs > 1 && chosen.len() > 1 {
        return run_at_once(&opts, &chosen, jobs, tally);
    }
    for suite in chosen {
        run_suite(&opts, suite, tally)?;
    }
    Ok(())
}

/// The environment variable that makes `cargo xtask test` one suite of a
/// run of many (`run_at_once`): the suite's exact name.
const ONE_SUITE: &str = "PROFKERN_TEST_SUITE";

/// How many of the `jobs` places a suite takes: one for a suite on one
/// CPU, all of them for one on more (its virtual CPUs want the host's
/// cores), for one that counts clock ticks (`Suite::counts_ticks`) and
/// for the disk suites that boot many times in a row, with their own
/// files (`crashdisk.rs`, `diskfuzz.rs`, `linuxdisk.rs`).
fn places(suite: &Suite, opts: &Options, jobs: usize) -> usize {
    let alone = suite.boot_options(opts).cpus > 1
        || suite.counts_ticks()
        || matches!(
            suite.expect,
            Expect::DiskKills(_)
                | Expect::DiskFuzz(_)
                | Expect::LinuxAgrees
                | Expect::PythonAgrees(_)
                | Expect::DebianScript
        );
    if alone { jobs } else { 1 }
}

/// Runs `chosen` up to `jobs` at a time, each suite a `cargo xtask test`
/// of its own (this program again, with `ONE_SUITE` set), so that each
/// one's output is whole: printed when it ends, in the order they end.
/// What is built on the host (images, programs, disk images, checks after
/// power-off) still happens one suite at a time (`build_lock`); only the
/// QEMU boots overlap. The next suite to start is the first waiting one
/// that fits the free places, so suites that run alone wait for a moment
/// when nothing else runs (usually the end).
fn run_at_once(
    opts: &Options,
    chosen: &[&Suite],
    jobs: usize,
    tally: &mut Tally,
) -> Result<(), String> {
    if chosen.iter().any(|s| s.boot_options(opts).uefi) {
        // Installed once here, not by two suites at once.
        setup::ovmf()?;
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find xtask itself: {e}"))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut waiting: Vec<&Suite> = chosen.to_vec();
    let (done, ended) = std::sync::mpsc::channel();
    let mut free = jobs;
    let mut running = 0;
    println!("   ({} suites, up to {jobs} at once)", chosen.len());
    while !waiting.is_empty() || running > 0 {
        while let Some((i, taken)) = waiting
            .iter()
            .map(|s| places(s, opts, jobs))
            .enumerate()
            .find(|&(_, places)| places <= free)
        {
            let suite = waiting.remove(i);
            free -= taken;
            running += 1;
            let (reader, writer) =
                std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
            let writer2 = writer
                .try_clone()
                .map_err(|e| format!("cannot make a pipe: {e}"))?;
            let child = Command::new(&exe)
                .args(&args)
                .env(ONE_SUITE, suite.name)
                .stdin(Stdio::null())
                .stdout(writer)
                .stderr(writer2)
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
            let done = done.clone();
            let name = suite.name;
            let started = std::time::Instant::now();
            std::thread::spawn(move || {
                let mut child = child;
                let mut reader = reader;
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut reader, &mut text);
                let status = child.wait().ok();
                let _ = done.send((name, taken, text, status, started.elapsed()));
            });
        }
        let (name, taken, text, status, took) = ended
            .recv()
            .map_err(|_| "a suite's runner vanished".to_string())?;
        free += taken;
        running -= 1;
        print!("{text}");
        println!("   ({name}: {:.0} s)", took.as_secs_f64());
        let counted = tally.absorb(&text);
        if status.is_none_or(|s| !s.success()) && counted.failed == 0 {
            let said = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("(it printed nothing)");
            tally.record(
                &format!("{name}/ran"),
                false,
                &format!("the suite did not run to its end: {said}"),
            );
        }
    }
    Ok(())
}

/// One suite, as a part of `run_at_once`: its checks' lines, and the exit
/// status says whether any failed.
fn run_one_suite(opts: &Options, name: &str) -> Result<ExitCode, String> {
    let all = suites();
    let suite = all
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no suite named '{name}'"))?;
    let mut tally = Tally::default();
    let opts = Options {
        program: Vec::new(),
        ..opts.clone()
    };
    run_suite(&opts, suite, &mut tally)?;
    Ok(if tally.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Held while a suite builds or checks on the host, released while QEMU
/// runs: suites run at once (`run_at_once`) share what they build
/// (`target/images/*.stripped`, the musl programs, Debian's packages,
/// apt-get), and two writing one file at once would give a third a torn
/// copy. An advisory lock on `target/.suite-build.lock`; the kernel drops
/// it when the process ends, however it ends.
struct BuildLock {
    _held: std::fs::File,
}

fn build_lock() -> Result<BuildLock, String> {
    let path = build::root().join("target/.suite-build.lock");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(BuildLock { _held: file })
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

/// `cargo xtask kprof --user --kernel -- /bin/callgraph`: the program's
/// profile is callgraph's (`a` on top, called 1000 times, `b` 10), and the
/// kernel's, from the same run, has samples of its own.
fn both_profiles_of_one_run(opts: &Options, tally: &mut Tally) -> Result<(), String> {
    println!("== kprof --user --kernel -- /bin/callgraph");
    let run = Options {
        program: vec!["/bin/callgraph".into()],
        user: true,
        ..opts.clone()
    };
    let both = match crate::prof::user_and_kernel(&run, false) {
        Ok(both) => both,
        Err(why) => {
            tally.record("kprof-user/both_profiles_came_home", false, &why);
            return Ok(());
        }
    };
    // The program's profile is judged by what does not move with the
    // host's load: mcount's exact counts, and `a` on top (the gprof
    // suites judge /bin/callgraph's profile in full).
    let calls =
        |function: &str| crate::prof::flat_row(&both.user_flat, function).and_then(|row| row.calls);
    let top = crate::prof::flat_rows(&both.user_flat)
        .next()
        .map(|row| row.name);
    tally.record(
        "kprof-user/the_program_s_profile_is_its_own",
        top == Some("callgraph::a")
            && calls("callgraph::a") == Some(1000)
            && calls("callgraph::b") == Some(10),
        &both.user_flat,
    );
    // A few ticks in all (the program hardly calls the kernel): the
    // seconds round to 0.00, the percentages do not.
    let kernel_percent: f64 = crate::prof::flat_rows(&both.kernel_flat)
        .map(|row| row.percent)
        .filter(|p| p.is_finite())
        .sum();
    tally.record(
        "kprof-user/the_kernel_s_profile_of_the_same_run_has_samples",
        kernel_percent > 0.0,
        &both.kernel_flat,
    );
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
    crate::setup::e2fsprogs()?;
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

/// The dynamic cases: each program of `tests/dynamic/` as each build made
/// it, run with two arguments, and the files to put in the ramdisk: the
/// programs, and the host's loaders and libraries at the paths they have
/// on the host (where the programs look for them).
fn dynamic_cases() -> Result<(Vec<SameAsLinux>, Vec<RamdiskFile>), String> {
    let mut cases = Vec::new();
    let mut adds: Vec<RamdiskFile> = Vec::new();
    for program in build::dynamic_programs()? {
        let guest = format!("/bin/{}", program.name);
        let args = ["one", "two"].map(String::from);
        cases.push(SameAsLinux {
            name: program.name.clone(),
            host: [program.elf.display().to_string()]
                .into_iter()
                .chain(args.clone())
                .collect(),
            guest: [guest.clone()].into_iter().chain(args).collect(),
        });
        adds.push((program.elf.display().to_string(), guest));
        for library in program.libraries {
            let path = library.display().to_string();
            if !adds.iter().any(|(_, guest)| *guest == path) {
                adds.push((path.clone(), path));
            }
        }
    }
    Ok((cases, adds))
}

fn run_suite(opts: &Options, suite: &Suite, tally: &mut Tally) -> Result<(), String> {
    // The disk suites below run alone (`places`) and keep it throughout.
    let lock = build_lock()?;
    if let Expect::DiskKills(kills) = suite.expect {
        return crate::crashdisk::run(opts, suite, kills, tally);
    }
    if let Expect::DiskFuzz(images) = suite.expect {
        return crate::diskfuzz::run(opts, suite, images, tally);
    }
    if let Expect::LinuxAgrees = suite.expect {
        return crate::linuxdisk::run(opts, suite, tally);
    }
    if let Expect::PythonAgrees(_) = suite.expect {
        return crate::pytests::run(opts, suite, tally);
    }
    if let Expect::DebianScript = suite.expect {
        return crate::debscript::run(opts, suite, tally);
    }
    let mut boot_opts = suite.boot_options(opts);
    boot_opts.guest_out = Some(build::root().join("target/guest-out").join(suite.name));
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
        Expect::Dynamic => {
            let (cases, adds) = dynamic_cases()?;
            boot_opts.add.extend(adds);
            // tests/dynamic/aslr.c runs under the host's randomisation
            // on both sides (Linux's default and this kernel's is 2).
            let level = std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
                .map_err(|e| format!("reading the host's randomize_va_space: {e}"))?;
            boot_opts
                .boot
                .push(format!("randomize_va_space={}", level.trim()));
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
    for (source, guest) in suite.glibc_preloaded {
        // Its loader and libc come with it (build::with_runtimes).
        let elf = build::glibc_profiled_dynamic(&build::root().join(source))?;
        boot_opts
            .add
            .push((elf.display().to_string(), guest.to_string()));
        let library = build::gmon_preload(opts)?.display().to_string();
        if !boot_opts.add.iter().any(|(_, g)| g == prof::PRELOAD) {
            boot_opts.add.push((library, prof::PRELOAD.to_string()));
        }
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
    if let Expect::CoreInGdb { core, .. } = suite.expect {
        boot_opts.export.push(core.to_string());
    }
    if let Expect::KernelProfile { .. } = suite.expect {
        boot_opts.kprof = true;
        boot_opts.program = prof::with_kernel_profiling(&boot_opts.program);
        boot_opts.export.push(prof::KGMON_DIR.to_string());
    }
    if let Expect::Gprof { .. } = suite.expect {
        boot_opts.export.push(prof::GMON.to_string());
        boot_opts.export.push(prof::GMON_DIR.to_string());
    }
    boot_opts.disks.clear();
    for (index, &disk) in suite.disks.iter().enumerate() {
        let name = disk_image_name(suite.name, index);
        let image = if disk == Disk::Root {
            let image = build::root().join(format!("target/disk-{name}.img"));
            build::root_image_at(&boot_opts, &image, true)?
        } else {
            checks::fresh_disk_image(&name, disk)?
        };
        boot_opts.disks.push(image);
    }
    let image = build::image(&boot_opts, &Boot::test(&boot_opts, suite.name, suite.conf))?;
    println!(
        "== {} (hz={}, tick={}, {})",
        suite.name,
        suite.hz,
        suite.tick.name(),
        if boot_opts.uefi { "uefi" } else { "bios" }
    );
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(suite.timeout));
    drop(lock);
    let outcome = qemu::boot(&boot_opts, &image, timeout, false, suite.typing)?;
    let _lock = build_lock()?;
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
        Expect::Musl | Expect::Glibc | Expect::Dynamic => {
            check_same_as_linux(suite.name, &outcome, &cases, tally)?
        }
        Expect::DiskKills(_)
        | Expect::DiskFuzz(_)
        | Expect::LinuxAgrees
        | Expect::PythonAgrees(_)
        | Expect::DebianScript => {
            unreachable!("run above")
        }
        Expect::KernelProfile {
            first,
            second,
            share,
            calls,
        } => crate::checks::check_kernel_profile(
            suite.name,
            &boot_opts,
            &outcome,
            (first, second, share, calls),
            tally,
        )?,
        Expect::CoreInGdb { elf, shows, .. } => {
            check_core_in_gdb(suite.name, &boot_opts, &outcome, (elf, shows), tally)?
        }
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
    for (index, (&disk, image)) in suite.disks.iter().zip(&boot_opts.disks).enumerate() {
        checks::check_disk_image(&disk_image_name(suite.name, index), disk, image, tally)?;
    }
    tally.log = None;
    Ok(())
}

/// What a suite's disk `index` is called in its image's file name and
/// its checks: the suite's name for `/dev/vda`, then `SUITE-vdb`...
fn disk_image_name(suite: &str, index: usize) -> String {
    match index {
        0 => suite.to_string(),
        _ => format!(
            "{suite}-{}",
            kcore::virtio::disk_name(index).expect("no more disks than MAX_DISKS")
        ),
    }
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

/// The files a walk-through's boot command adds (`--add`, the only option
/// it may give: anything else would make the test boot otherwise than the
/// reader), their host paths from the repository's root. The dynamically
/// linked test programs (`target/dynamic/`) are built first.
fn walkthrough_adds(walk: &crate::gdbdoc::Walkthrough) -> Result<Vec<(String, String)>, String> {
    if walk.options.is_empty() {
        return Ok(Vec::new());
    }
    let words: Vec<String> = ["gdb".to_string()]
        .into_iter()
        .chain(walk.options.iter().cloned())
        .collect();
    let bad = |why: String| format!("docs/gdb.md line {}: {why}", walk.line);
    let crate::options::Command::Gdb(given) = crate::options::parse(&words).map_err(bad)? else {
        return Err(bad("not a gdb command".into()));
    };
    let only_adds = Options {
        add: given.add.clone(),
        ..Options::default()
    };
    if given != only_adds {
        return Err(bad(
            "a walk-through's boot command may give --add and nothing else".into(),
        ));
    }
    if given
        .add
        .iter()
        .any(|(host, _)| host.starts_with("target/dynamic/"))
    {
        build::dynamic_programs()?;
    }
    Ok(given
        .add
        .into_iter()
        .map(|(host, guest)| (build::root().join(host).display().to_string(), guest))
        .collect())
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
        // Each walk-through boots on a root disk of its own, made afresh,
        // so what it shows does not hang on what earlier boots wrote.
        let mut gdb_opts = opts.clone();
        gdb_opts.add = walkthrough_adds(walk)?;
        gdb_opts.program = walk.program.clone();
        // (One that adds files boots on the ramdisk: no disk to make.)
        gdb_opts.fresh = gdb_opts.add.is_empty();
        let root = build::root().join(format!("target/gdb-root-{name}.img"));
        let (_, output) = crate::gdb::session(&gdb_opts, Some(&script), &root)?;
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
