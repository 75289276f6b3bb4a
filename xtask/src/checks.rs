//! The checkers of the test command: how a suite's console is judged,
//! one function for each kind of `Expect` (self-tests, crash reports,
//! user-space suites, output lines, programs compared with the host's
//! Linux, gprof profiles, exported files), and the tally they count into.
//! The runner (`test.rs`) boots a suite and hands its console here.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use crate::build;
use crate::options::Options;
use crate::prof;
use crate::qemu::{self, Ending, Outcome};
use crate::suites::{Disk, Suite};

/// How many checks passed and failed in what `Tally::absorb` read.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Counted {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
}

#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) passed: usize,
    pub(crate) failed: Vec<String>,
    /// The whole console log of the suite being checked, named beside each
    /// of its failures.
    pub(crate) log: Option<PathBuf>,
}

impl Tally {
    /// Counts the checks another `cargo xtask test` printed (`record`'s
    /// lines, in `text`) as this one's; returns what `text` alone holds.
    pub(crate) fn absorb(&mut self, text: &str) -> Counted {
        let mut counted = Counted::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("test ") else {
                continue;
            };
            if let Some(name) = rest.strip_suffix(" ... ok") {
                if !name.contains(" ... ") {
                    self.passed += 1;
                    counted.passed += 1;
                }
            } else if let Some((name, why)) = rest.split_once(" ... FAILED: ") {
                self.failed.push(format!("{name}: {why}"));
                counted.failed += 1;
            }
        }
        counted
    }

    pub(crate) fn record(&mut self, name: &str, ok: bool, why: &str) {
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

/// A program run here and on the host, whose outputs must be equal.
pub(crate) struct SameAsLinux {
    pub(crate) name: String,
    /// The command line on the host.
    pub(crate) host: Vec<String>,
    /// The command line here.
    pub(crate) guest: Vec<String>,
}

pub(crate) fn check_selftests(suite: &str, outcome: &Outcome, tally: &mut Tally) {
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

pub(crate) fn check_crash(suite: &str, outcome: &Outcome, texts: &[&str], tally: &mut Tally) {
    let console = outcome.lines.join("\n");
    let missing: Vec<_> = texts.iter().filter(|t| !console.contains(**t)).collect();
    let ok = outcome.ending == Ending::KernelFailure && missing.is_empty();
    if !ok {
        show_console(outcome);
    }
    let why = format!("{}; missing {:?}", outcome.ending.describe(), missing);
    tally.record(&format!("{suite}/report_and_failure_status"), ok, &why);
}

pub(crate) fn check_user_suite(suite: &str, prefix: &str, outcome: &Outcome, tally: &mut Tally) {
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
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Run {
    pub(crate) lines: Vec<String>,
    pub(crate) end: String,
}

/// The runs of `name` in the console of a musltests boot.
pub(crate) fn guest_run(lines: &[String], name: &str) -> Option<Run> {
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

/// How long a host reference run may take: as long as `/bin/musltests`
/// gives each program in the guest.
const HOST_LIMIT: std::time::Duration = std::time::Duration::from_secs(240);

/// Runs `argv` on the host, in an empty directory of its own (the programs
/// use relative paths), as the reference. A run that outlasts `HOST_LIMIT`
/// is killed with its process group and ends "killed after 240 s", so a
/// program that hangs on the host (a test that waits for a stop Linux never
/// sends) fails its comparison instead of hanging the test command.
pub(crate) fn host_run(name: &str, argv: &[String]) -> Result<Run, String> {
    use std::io::Read;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let dir = build::root().join("target/musl-run").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {} on the host: {e}", argv[0]))?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    let start = std::time::Instant::now();
    let kill_group = |pid: u32| {
        // The whole group: children left behind would keep stdout open.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .status();
    };
    let mut status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("waiting for {}: {e}", argv[0]))?
        {
            break Some(status);
        }
        if start.elapsed() > HOST_LIMIT {
            kill_group(child.id());
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // Its output ends when every process that holds it has ended.
    let left = HOST_LIMIT.saturating_sub(start.elapsed());
    let stdout = rx.recv_timeout(left).unwrap_or_else(|_| {
        kill_group(child.id());
        status = None;
        rx.recv().unwrap_or_default()
    });
    let end = match status.map(|s| (s.code(), s.signal())) {
        None => format!("killed after {} s", HOST_LIMIT.as_secs()),
        Some((Some(code), _)) => format!("exit {code}"),
        Some((_, Some(signal))) => format!("signal {signal}"),
        Some(_) => String::from("status ?"),
    };
    Ok(Run {
        lines: String::from_utf8_lossy(&stdout)
            .split('\n')
            .map(String::from)
            .collect(),
        end,
    })
}

/// Each program's run on the host, once per test command, keyed by its
/// command line: the suites that compare with Linux run on one CPU and on
/// four, often at the same time, and a program's answer on the host is the
/// same for both. Two runs of one program at once would also share the
/// fixed paths some use (`/tmp/lease-test`) and its run directory, and
/// disturb each other; the second suite to ask waits for the first run.
pub(crate) fn host_run_once(name: &str, argv: &[String]) -> Result<Run, String> {
    type Runs = std::collections::BTreeMap<Vec<String>, Arc<OnceLock<Result<Run, String>>>>;
    static RUNS: Mutex<Runs> = Mutex::new(std::collections::BTreeMap::new());
    let cell = RUNS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(argv.to_vec())
        .or_default()
        .clone();
    cell.get_or_init(|| host_run(name, argv)).clone()
}

pub(crate) fn check_same_as_linux(
    suite: &str,
    outcome: &Outcome,
    cases: &[SameAsLinux],
    tally: &mut Tally,
) -> Result<(), String> {
    let mut shown = false;
    for SameAsLinux { name, host, .. } in cases {
        let host = host_run_once(name, host)?;
        let guest = guest_run(&outcome.lines, name);
        let why = match &guest {
            None => String::from("no complete run on the console"),
            Some(g) => {
                let lines = first_difference(&g.lines, &host.lines);
                match (g.end != host.end, lines) {
                    (false, lines) => lines,
                    // What the program printed is what says why it ended
                    // otherwise: both go in the one line a failure gets.
                    (true, lines) if !lines.is_empty() => {
                        format!("ended with {} here, {} on Linux; {lines}", g.end, host.end)
                    }
                    (true, _) => format!("ended with {} here, {} on Linux", g.end, host.end),
                }
            }
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

/// Where a program's output here first differs from Linux's, as one
/// line; empty when the two are the same.
fn first_difference(here: &[String], linux: &[String]) -> String {
    match here.iter().zip(linux).position(|(a, b)| a != b) {
        Some(i) => format!(
            "line {}: {:?} here, {:?} on Linux",
            i + 1,
            here[i],
            linux[i]
        ),
        None if here.len() > linux.len() => format!(
            "{} lines here, {} on Linux; line {} here: {:?}",
            here.len(),
            linux.len(),
            linux.len() + 1,
            here[linux.len()]
        ),
        None if here.len() != linux.len() => {
            format!("{} lines here, {} on Linux", here.len(), linux.len())
        }
        None => String::new(),
    }
}

/// The console must show the `want` lines in order and end with `status`;
/// with `quiet` (no `--verbose`) nothing may come before the kernel's banner.
pub(crate) fn check_output(
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
    // bootloader's log is off (boot/src/lib.rs). Only UEFI's firmware
    // may speak first.
    let before_kernel: Vec<&String> = outcome
        .lines
        .iter()
        .take_while(|l| quiet && !l.starts_with(qemu::KERNEL_FIRST_LINE))
        .filter(|l| !l.trim().is_empty() && !qemu::from_firmware(l))
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

pub(crate) type GprofExpect<'a> = (
    &'a str,
    &'a str,
    &'a [&'a str],
    &'a [&'a str],
    Option<usize>,
    Option<(&'a str, f64, f64)>,
    &'a [(&'a str, &'a str)],
    &'a [&'a str],
);

pub(crate) fn check_gprof(
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
    let first = prof::flat_rows(&flat).next().map_or("", |row| row.name);
    tally.record(
        &name("flat_profile_top_is_the_hot_spot"),
        first == top,
        &format!("top is '{first}', want '{top}'"),
    );
    if let Some((function, low, high)) = share {
        let percent = prof::flat_row(&flat, function).map(|row| row.percent);
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
pub(crate) fn call_shown(graph: &str, call: &str) -> bool {
    let (count, callee) = call.split_once(' ').unwrap_or((call, ""));
    graph.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.contains(&count) && words.contains(&callee)
    })
}

/// The calls to `function` in gprof's call graph: the "called" column of
/// its own line (`[14] 0.0 0.00 0.00 1+2046 tree_sum [14]`), recursive
/// calls added.
pub(crate) fn called(graph: &str, function: &str) -> Option<u64> {
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

/// Checks the files the suite exported (over COM2) arrived with the right
/// bytes; a path whose expected content is empty must not exist in the guest.
pub(crate) fn check_exports(
    suite: &Suite,
    opts: &Options,
    tally: &mut Tally,
) -> Result<(), String> {
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

/// A fresh image for a disk suite in target/ (`suite` names it):
/// `kcore::virtio::disk_suite::host_byte` at every offset, or an
/// ext3 file system holding `kcore::ext2::suite`'s host files.
pub(crate) fn fresh_disk_image(suite: &str, disk: Disk) -> Result<std::path::PathBuf, String> {
    let path = crate::build::root().join(format!("target/disk-{suite}.img"));
    match disk {
        Disk::Pattern => {
            use kcore::virtio::disk_suite::{SIZE, host_byte};
            let bytes: Vec<u8> = (0..SIZE).map(host_byte).collect();
            std::fs::write(&path, bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Disk::Ext3 => make_ext3_image(suite, &path)?,
        Disk::Root => return Err("a root disk is made by build::root_image_at".into()),
        Disk::Debian => {
            // A copy, so the test never changes what `run --root debian`
            // boots on (holes stay holes: the image is 1 GiB, mostly empty).
            let from = crate::rootfs::image(false)?;
            let copied = Command::new("cp")
                .args(["--sparse=always", "-f"])
                .arg(&from)
                .arg(&path)
                .status()
                .map_err(|e| format!("cp: {e}"))?;
            if !copied.success() {
                return Err(format!("copying {} failed", from.display()));
            }
        }
    }
    Ok(path)
}

/// `mke2fs -t ext3 -b 1024 -d SEED` over a new image, SEED holding the
/// host's files of `kcore::ext2::suite`.
fn make_ext3_image(suite: &str, path: &std::path::Path) -> Result<(), String> {
    use kcore::ext2::suite::{BLOCK_SIZE, HOST_FILES, HOST_LINK, IMAGE_BYTES, byte};
    let seed = crate::build::root().join(format!("target/disk-{suite}-seed"));
    let _ = std::fs::remove_dir_all(&seed);
    std::fs::create_dir_all(&seed).map_err(|e| format!("cannot create {}: {e}", seed.display()))?;
    for &(name, size) in HOST_FILES {
        let bytes: Vec<u8> = (0..size).map(|at| byte(size, at)).collect();
        std::fs::write(seed.join(name), bytes).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    let (link, target) = HOST_LINK;
    std::os::unix::fs::symlink(target, seed.join(link))
        .map_err(|e| format!("cannot make the link {link}: {e}"))?;
    crate::setup::make_ext3(
        path,
        &format!("{}k", IMAGE_BYTES / 1024),
        BLOCK_SIZE as u32,
        Some(&seed),
        &[],
    )?;
    // An attribute Linux's tools wrote, for the guest to read.
    let (file, name, value) = kcore::ext2::suite::HOST_XATTR;
    debugfs(path, &format!("ea_set /{file} {name} {value}"), true)?;
    Ok(())
}

/// Runs one debugfs request on `image` (`-w`: writable); its output.
fn debugfs(image: &std::path::Path, request: &str, write: bool) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new(crate::setup::e2fs_tool("debugfs")?);
    if write {
        cmd.arg("-w");
    }
    let out = cmd
        .arg("-R")
        .arg(request)
        .arg(image)
        .output()
        .map_err(|e| format!("cannot run debugfs: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "debugfs {request}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// What is wrong with the guest's extended attributes as debugfs reads
/// them (`ea_list` for the names, `ea_get -f` for each value).
fn guest_xattrs_wrong(
    image: &std::path::Path,
    scratch: &std::path::Path,
) -> Result<Vec<String>, String> {
    use kcore::ext2::suite::{GUEST_XATTR_FILE, guest_xattrs};
    let file = format!("/out/{GUEST_XATTR_FILE}");
    let listing = debugfs(image, &format!("ea_list {file}"), false)?;
    let mut names: Vec<String> = String::from_utf8_lossy(&listing)
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split(" (").next())
        .map(String::from)
        .collect();
    names.sort();
    let mut want: Vec<String> = guest_xattrs().iter().map(|(n, _)| (*n).into()).collect();
    want.sort();
    let mut wrong = Vec::new();
    if names != want {
        wrong.push(format!("{file}: attributes {names:?}, want {want:?}"));
    }
    let value_file = scratch.join("xattr-value");
    for (name, value) in guest_xattrs() {
        let _ = std::fs::remove_file(&value_file);
        debugfs(
            image,
            &format!("ea_get -f {} {file} {name}", value_file.display()),
            false,
        )?;
        if std::fs::read(&value_file).ok().as_ref() != Some(&value) {
            wrong.push(format!("{file}: {name} differs"));
        }
    }
    Ok(wrong)
}

/// After a disk suite: a pattern image holds the guest's bytes over its
/// region and the host's everywhere else, byte for byte; an ext3 image
/// is one e2fsck finds clean, whose guest-written files debugfs reads
/// back as the guest wrote them.
pub(crate) fn check_disk_image(
    suite: &str,
    disk: Disk,
    path: &std::path::Path,
    tally: &mut Tally,
) -> Result<(), String> {
    match disk {
        Disk::Pattern => check_pattern_image(suite, path, tally),
        Disk::Ext3 => check_ext3_image(suite, path, tally),
        Disk::Root | Disk::Debian => check_root_image(suite, path, tally),
    }
}

fn check_pattern_image(
    suite: &str,
    path: &std::path::Path,
    tally: &mut Tally,
) -> Result<(), String> {
    use kcore::virtio::disk_suite::{SIZE, final_byte};
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let wrong = (0..SIZE).find(|&at| bytes.get(at as usize) != Some(&final_byte(at)));
    let why = match wrong {
        Some(at) => format!(
            "{}: byte {at:#x} is {:?}, want {:#04x}",
            path.display(),
            bytes.get(at as usize),
            final_byte(at)
        ),
        None => String::new(),
    };
    tally.record(
        &format!("{suite}/the_image_holds_what_the_guest_wrote"),
        wrong.is_none(),
        &why,
    );
    Ok(())
}

/// After a root-disk suite: clean, unmounted by init, and holding the
/// file the program wrote last.
fn check_root_image(suite: &str, path: &std::path::Path, tally: &mut Tally) -> Result<(), String> {
    let fsck = crate::setup::e2fsck_clean(path);
    let header = Command::new(crate::setup::e2fs_tool("dumpe2fs")?)
        .arg("-h")
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run dumpe2fs: {e}"))?;
    let header = String::from_utf8_lossy(&header.stdout);
    let clean = fsck.is_ok()
        && header
            .lines()
            .any(|l| l.starts_with("Filesystem state:") && l.ends_with(" clean"))
        && !header.contains("needs_recovery");
    tally.record(
        &format!("{suite}/the_root_disk_is_clean_and_unmounted"),
        clean,
        &format!(
            "{}; {}",
            fsck.err().unwrap_or_else(|| "e2fsck -fn: clean".into()),
            header
                .lines()
                .filter(|l| l.contains("features") || l.contains("state"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    );
    let kept = debugfs(path, "cat /root/kept", false).unwrap_or_default();
    let kept = String::from_utf8_lossy(&kept);
    tally.record(
        &format!("{suite}/what_the_program_wrote_is_on_the_disk"),
        kept == "kept\n",
        &format!("/root/kept holds {kept:?}"),
    );
    Ok(())
}

fn check_ext3_image(suite: &str, path: &std::path::Path, tally: &mut Tally) -> Result<(), String> {
    // Linux's checker, read-only: a clean image exits 0, with nothing to
    // replay (the guest unmounted it).
    let fsck = crate::setup::e2fsck_clean(path);
    tally.record(
        &format!("{suite}/e2fsck_finds_the_image_clean"),
        fsck.is_ok(),
        fsck.as_ref().err().map_or("", |e| e),
    );
    // The guest's files, as debugfs (Linux's reading of the format, not
    // this kernel's) finds them.
    let dump = crate::build::root().join(format!("target/disk-{suite}-dump"));
    let _ = std::fs::remove_dir_all(&dump);
    std::fs::create_dir_all(&dump).map_err(|e| format!("cannot create {}: {e}", dump.display()))?;
    let mut wrong = Vec::new();
    if let Err(e) = debugfs(path, &format!("rdump /out {}", dump.display()), false) {
        wrong.push(e);
    }
    for (name, size, fill) in kcore::ext2::suite::guest_files() {
        let file = dump.join("out").join(&name);
        match std::fs::read(&file) {
            Err(e) => wrong.push(format!("{name}: {e}")),
            Ok(got) if got.len() as u64 != size => {
                wrong.push(format!("{name}: {} bytes, want {size}", got.len()))
            }
            Ok(got) => {
                if let Some(at) = (0..size).find(|&at| got[at as usize] != fill.byte(at)) {
                    wrong.push(format!("{name}: byte {at} differs"));
                }
            }
        }
    }
    wrong.extend(guest_xattrs_wrong(path, &dump)?);
    let _ = std::fs::remove_dir_all(&dump);
    tally.record(
        &format!("{suite}/debugfs_reads_what_the_guest_wrote"),
        wrong.is_empty(),
        &wrong.join("; "),
    );
    Ok(())
}

/// After a kernel-profile suite: the kernel's gmon.out came home, gprof
/// reads it with the kernel's ELF without a warning, `first` has `share`
/// (low, high: percent) of the time of `first` and `second`, and mcount
/// counted exactly `calls` calls of each.
pub(crate) fn check_kernel_profile(
    suite: &str,
    opts: &Options,
    outcome: &Outcome,
    (first, second, (low, high), calls): (&str, &str, (f64, f64), u32),
    tally: &mut Tally,
) -> Result<(), String> {
    let name = |what: &str| format!("{suite}/{what}");
    let Some(gmon) = prof::kernel_gmon(opts)? else {
        show_console(outcome);
        tally.record(
            &name("kernel_gmon_out_written"),
            false,
            &outcome.ending.describe(),
        );
        return Ok(());
    };
    let kernel = prof::kernel_for_gprof(&crate::build::kernel(opts)?)?;
    let flat = prof::gprof(&kernel, &[gmon], &["-p"]);
    tally.record(
        &name("gprof_reads_it_with_the_kernel_elf"),
        flat.is_ok(),
        flat.as_ref().err().map_or("", |e| e),
    );
    let Ok(flat) = flat else { return Ok(()) };
    let seconds = |function: &str| prof::flat_row(&flat, function).map(|row| row.self_seconds);
    let split = match (seconds(first), seconds(second)) {
        (Some(a), Some(b)) if a + b > 0.0 => Some(100.0 * a / (a + b)),
        _ => None,
    };
    tally.record(
        &name(&format!("{low}_to_{high}_percent_in_the_first_function")),
        split.is_some_and(|p| (low..=high).contains(&p)),
        &format!("{first}: {split:?} percent of the two\n{flat}"),
    );
    let counted = |function: &str| prof::flat_row(&flat, function).and_then(|row| row.calls);
    let (a, b) = (counted(first), counted(second));
    tally.record(
        &name(&format!("mcount_counted_{calls}_calls_of_each")),
        a == Some(u64::from(calls)) && b == Some(u64::from(calls)),
        &format!("{first}: {a:?} calls, {second}: {b:?} calls\n{flat}"),
    );
    Ok(())
}

/// The whole console, shown under a failure.
/// The core file the suite exported, read by GDB on the host beside the
/// musl program `elf` that wrote it: `bt` must show the `shows` texts in
/// order (the signal, then each frame).
pub(crate) fn check_core_in_gdb(
    suite: &str,
    opts: &Options,
    outcome: &Outcome,
    (elf, shows): (&str, &[&str]),
    tally: &mut Tally,
) -> Result<(), String> {
    let name = |what: &str| format!("{suite}/{what}");
    let exported = qemu::unpack_exports(opts)?;
    let Some(core) = exported.first() else {
        show_console(outcome);
        tally.record(
            &name("core_file_written"),
            false,
            &outcome.ending.describe(),
        );
        return Ok(());
    };
    let program = build::musl_programs()?
        .into_iter()
        .find(|(n, _)| n == elf)
        .map(|(_, path)| path)
        .ok_or_else(|| format!("no musl program '{elf}' in tests/musl"))?;
    let gdb = crate::setup::ensure("gdb", "gdb")?;
    let out = Command::new(gdb)
        .args(["-batch", "-nx", "-ex", "bt"])
        .arg(&program)
        .arg(core)
        .output()
        .map_err(|e| format!("running gdb: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rest = text.as_str();
    let missing = shows.iter().find(|want| match rest.find(**want) {
        Some(at) => {
            rest = &rest[at + want.len()..];
            false
        }
        None => true,
    });
    tally.record(
        &name("gdb_reads_the_stack_from_the_core"),
        missing.is_none(),
        &format!("gdb's bt did not show {missing:?} (in order):\n{text}"),
    );
    Ok(())
}

pub(crate) fn show_console(outcome: &Outcome) {
    println!("   --- console ---");
    for line in &outcome.lines {
        println!("   | {line}");
    }
    if !outcome.qemu_stderr.trim().is_empty() {
        println!("   --- qemu stderr ---\n{}", outcome.qemu_stderr);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_program_runs_on_the_host_once_whoever_asks() {
        let count = std::env::temp_dir().join(format!("xtask-host-once-{}", std::process::id()));
        let argv: Vec<String> = [
            "sh".to_string(),
            "-c".to_string(),
            format!("echo run >> {0}; wc -l < {0}", count.display()),
        ]
        .to_vec();
        let asks: Vec<_> = (0..3)
            .map(|_| {
                let argv = argv.clone();
                std::thread::spawn(move || host_run_once("host-once-test", &argv).unwrap())
            })
            .collect();
        for ask in asks {
            let run = ask.join().unwrap();
            assert_eq!(run.lines[0].trim(), "1", "one run, seen by every asker");
            assert_eq!(run.end, "exit 0");
        }
        std::fs::remove_file(&count).unwrap();
        let _ = std::fs::remove_dir_all(build::root().join("target/musl-run/host-once-test"));
    }
    use super::*;

    #[test]
    fn first_difference_names_the_line_or_the_extra_one() {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(first_difference(&v(&["a", "b"]), &v(&["a", "b"])), "");
        assert_eq!(
            first_difference(&v(&["a", "x"]), &v(&["a", "b"])),
            "line 2: \"x\" here, \"b\" on Linux"
        );
        assert_eq!(
            first_difference(&v(&["a", "b", "too few readings"]), &v(&["a", "b"])),
            "3 lines here, 2 on Linux; line 3 here: \"too few readings\""
        );
        assert_eq!(
            first_difference(&v(&["a"]), &v(&["a", "b"])),
            "1 lines here, 2 on Linux"
        );
    }

    #[test]
    fn a_tally_absorbs_what_another_printed() {
        let mut mine = Tally::default();
        mine.record("here/first", true, "");
        let mut theirs = Tally::default();
        theirs.record("there/a", true, "");
        theirs.record("there/b", false, "it said no ... twice");
        let printed = "== there (hz=1000)\ntest there/a ... ok\n\
                       test there/b ... FAILED: it said no ... twice\n\
                       xtask: test x ... ok is not a check\n";
        let counted = mine.absorb(printed);
        assert_eq!(
            counted,
            Counted {
                passed: 1,
                failed: 1
            }
        );
        assert_eq!(mine.passed, 2);
        assert_eq!(mine.failed, theirs.failed);
    }
}
