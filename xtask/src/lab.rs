//! `cargo xtask lab [ID | start ID]`: the book's labs and their checks.
//!
//! Every lab is an exercise at the end of a chapter of `docs/book/` whose
//! check a machine can run. As in MIT's 6.1810, the kernel on main is
//! whole: each lab's piece is built, tested and documented like any other
//! feature, and a student starts from a tree with that piece taken out.
//!
//! - `cargo xtask lab` lists every exercise and says which labs are started.
//! - `cargo xtask lab start ID` makes a git branch `lab/ID` from the branch
//!   you are on, with the lab's patch applied in reverse and committed.
//!   A branch rather than a worktree: the student stays in the same
//!   checkout, so the build in `target/` (minutes the first time) serves the
//!   lab at once, the book's paths are the same, `git diff main` shows the
//!   work done and `git checkout main` goes back.
//! - `cargo xtask lab ID` runs the lab's check on the tree as it is and says
//!   "done" or what is still missing.
//!
//! One file per lab, `docs/book/solutions/ID.patch`, is both the reference
//! solution (applied forward to the started tree) and the take-out (applied
//! in reverse to main), so the two cannot drift. The test command's `labs`
//! part (see `test_all`) proves three things for every lab: its check
//! passes on this tree; in a copy with the patch taken out it fails, with
//! its reason; and that copy with the patch applied again is this tree, byte
//! for byte, so the solution passes. A lab whose piece is not on main yet
//! (no patch) must fail its check on this tree instead, and the list says
//! so.
//!
//! A check boots the kernel one or more times. Most run `/bin/labcheck ID`
//! (user/src/bin/labcheck.rs), written against the interface the exercise
//! fixes; a few read the console (a boot option that silences lines, a
//! table printed at power-off). A boot option the tree does not know is
//! refused before anything boots, and that refusal is the check's answer.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use crate::build::{self, Boot};
use crate::expect;
use crate::options::Options;
use crate::qemu::{self, Ending};

/// One lab.
pub struct Lab {
    /// Chapter and number, as the book numbers its exercises: "3.2".
    pub id: &'static str,
    pub title: &'static str,
    /// What to do, in one line.
    pub todo: &'static str,
    /// The boots its check makes; all must pass.
    pub runs: &'static [Run],
}

/// One boot of a check.
pub struct Run {
    /// Boot options (`--boot KEY=VALUE`).
    pub boot: &'static [&'static str],
    /// The program init runs.
    pub program: &'static [&'static str],
    /// Console lines that must appear, in order (`expect`'s patterns, read
    /// as `expect::CONSOLE`).
    pub expect: &'static [&'static str],
    /// Console lines that must not (`*` likewise).
    pub absent: &'static [&'static str],
    /// The boot is a deliberate kernel crash (`crash=KIND`): it must end
    /// in the kernel's failure status, and only then are the lines read.
    pub kernel_fails: bool,
    /// A C program (a path in the repository) to compile against
    /// libc-lite and run as `/bin/NAME`, in place of `program`: it must
    /// print what the same source prints compiled for the host (glibc).
    pub c_source: Option<&'static str>,
    /// The machine gets a scratch disk, `/dev/vda`: `SCRATCH_DISK_BYTES`
    /// of zeros, made again for each boot.
    pub scratch_disk: bool,
}

/// The size of a check's scratch disk.
const SCRATCH_DISK_BYTES: u64 = 4 << 20;

/// A run of `labcheck ID [ARG]`, passing on its `ok` line.
macro_rules! labcheck {
    ($id:literal $(, $arg:literal)? ; boot $($opt:literal),*) => {
        Run {
            boot: &[$($opt),*],
            program: &["/bin/labcheck", $id $(, $arg)?],
            expect: &[concat!("labcheck: ok ", $id)],
            absent: &[],
            c_source: None,
            kernel_fails: false,
            scratch_disk: false,
        }
    };
}

/// Every lab, in the book's order. The docs check holds the book to this
/// list: each lab is an exercise of its chapter with the same title.
pub const LABS: &[Lab] = &[
    Lab {
        id: "1.1",
        title: "A quiet boot",
        todo: "a boot option quiet=1 that silences the kernel's INFO lines",
        runs: &[Run {
            boot: &["quiet=1"],
            program: &["/bin/true"],
            expect: &["profkern *"],
            absent: &["*INFO*"],
            c_source: None,
            kernel_fails: false,
            scratch_disk: false,
        }],
    },
    Lab {
        id: "1.2",
        title: "The memory map",
        todo: "log each region of the bootloader's memory map before mm::init",
        runs: &[Run {
            boot: &[],
            program: &["/bin/true"],
            expect: &["*memory: 0x* Usable*"],
            absent: &[],
            c_source: None,
            kernel_fails: false,
            scratch_disk: false,
        }],
    },
    Lab {
        id: "2.1",
        title: "Traps per vector",
        todo: "count traps per vector and print the table when init exits",
        runs: &[Run {
            boot: &[],
            program: &["/bin/true"],
            expect: &["*traps: vector 32: *", "*traps: vector 256: *"],
            absent: &[],
            c_source: None,
            kernel_fails: false,
            scratch_disk: false,
        }],
    },
    Lab {
        id: "2.3",
        title: "The faulting bytes",
        todo: "report the 16 bytes of code at the faulting rip, as Linux's Code: line",
        runs: &[Run {
            boot: &["crash=pagefault"],
            program: &["/bin/true"],
            expect: &[
                "    code at rip: <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx> <xx>",
            ],
            absent: &[],
            c_source: None,
            kernel_fails: true,
            scratch_disk: false,
        }],
    },
    Lab {
        id: "3.1",
        title: "The HPET",
        todo: "a third tick source, the HPET (tick=hpet)",
        runs: &[Run {
            boot: &["tick=hpet", "mode=selftest"],
            program: &[],
            expect: &[
                "*clock: HPET tick at *",
                "selftest: ok tick_rate_matches_hz",
            ],
            absent: &["selftest: FAIL*"],
            c_source: None,
            kernel_fails: false,
            scratch_disk: false,
        }],
    },
    Lab {
        id: "3.2",
        title: "The time slice as a boot option",
        todo: "a boot option slice_ms that sets the time slice",
        runs: &[
            labcheck!("3.2", "1"; boot "slice_ms=1"),
            labcheck!("3.2", "100"; boot "slice_ms=100"),
        ],
    },
    Lab {
        id: "4.1",
        title: "The heap on demand",
        todo: "brk records the area only; the pages come at the first touch",
        runs: &[labcheck!("4.1"; boot)],
    },
    Lab {
        id: "4.3",
        title: "One zero page",
        todo: "map one shared read-only zero frame for reads of never-written pages",
        runs: &[labcheck!("4.3"; boot)],
    },
    Lab {
        id: "5.1",
        title: "nice",
        todo: "setpriority and a scheduler that gives a nice 10 process less CPU",
        runs: &[labcheck!("5.1"; boot)],
    },
    Lab {
        id: "5.3",
        title: "RLIMIT_FSIZE",
        todo: "a write past the file size limit writes what fits, then EFBIG and SIGXFSZ",
        runs: &[labcheck!("5.3"; boot)],
    },
    Lab {
        id: "6.1",
        title: "System calls counted",
        todo: "count system calls per number in /proc/sysstat and show them with /bin/sysstat",
        runs: &[labcheck!("6.1"; boot)],
    },
    Lab {
        id: "7.1",
        title: "openat with a directory",
        todo: "openat(dirfd, \"relative\") with a real directory descriptor",
        runs: &[labcheck!("7.1"; boot)],
    },
    Lab {
        id: "7.2",
        title: "Capabilities",
        todo: "Linux's capability sets, capget and capset, and Cred::may asking for CAP_DAC_OVERRIDE",
        runs: &[labcheck!("7.2"; boot)],
    },
    Lab {
        id: "7.3",
        title: "A pipe's capacity",
        todo: "F_GETPIPE_SZ and F_SETPIPE_SZ, rounded up to a power of two pages",
        runs: &[labcheck!("7.3"; boot)],
    },
    Lab {
        id: "7.4",
        title: "/proc/PID/fd",
        todo: "a directory of one symbolic link per open descriptor",
        runs: &[labcheck!("7.4"; boot)],
    },
    Lab {
        id: "7.5",
        title: "Sockets in flight",
        todo: "collect sockets kept alive only by their own queues, as Linux's unix_gc does",
        runs: &[labcheck!("7.5"; boot)],
    },
    Lab {
        id: "7.6",
        title: "/dev/klog",
        todo: "a device whose reads return the kernel's log lines so far",
        runs: &[labcheck!("7.6"; boot)],
    },
    Lab {
        id: "8.1",
        title: "Real-time signals queue",
        todo: "keep a count per real-time signal and deliver each one",
        runs: &[labcheck!("8.1"; boot)],
    },
    Lab {
        id: "8.3",
        title: "Ignoring SIGCHLD reaps",
        todo: "a parent whose SIGCHLD is SIG_IGN leaves no zombies",
        runs: &[labcheck!("8.3"; boot)],
    },
    Lab {
        id: "9.1",
        title: "A profiling clock of its own",
        todo: "a boot option profhz that samples at a rate below hz (4.4BSD's profhz)",
        runs: &[labcheck!("9.1", "100"; boot "profhz=100")],
    },
    Lab {
        id: "10.1",
        title: "stdio",
        todo: "fopen, fgets and fclose in libc-lite, reading what glibc reads",
        runs: &[Run {
            boot: &[],
            program: &[],
            expect: &[],
            absent: &[],
            c_source: Some("tests/labs/stdio.c"),
            kernel_fails: false,
            scratch_disk: false,
        }],
    },
    Lab {
        id: "11.1",
        title: "/proc/PID/task",
        todo: "a directory per thread under /proc/PID/task, and ps -T that lists them",
        runs: &[labcheck!("11.1"; boot)],
    },
    Lab {
        id: "11.2",
        title: "FUTEX_REQUEUE",
        todo: "FUTEX_REQUEUE and FUTEX_CMP_REQUEUE: wake some waiters, move the rest to another word",
        runs: &[labcheck!("11.2"; boot)],
    },
    Lab {
        id: "11.3",
        title: "CLONE_FILES without CLONE_VM",
        todo: "clone may share the descriptor table without the memory",
        runs: &[labcheck!("11.3"; boot)],
    },
    Lab {
        id: "12.3",
        title: "Lock hold times",
        todo: "record each lock rank's longest hold and show it in /proc/lock_stat",
        runs: &[labcheck!("12.3"; boot)],
    },
    Lab {
        id: "13.1",
        title: "/proc/diskstats",
        todo: "count each disk's requests, sectors and times, and show them as Linux's /proc/diskstats",
        runs: &[Run {
            scratch_disk: true,
            ..labcheck!("13.1"; boot)
        }],
    },
    Lab {
        id: "15.6",
        title: "Scripts",
        todo: "exec a file that starts with #! by running the interpreter its line names (kcore::script reads the line)",
        runs: &[labcheck!("15.6"; boot)],
    },
];

/// Where the reference solutions are, one patch per lab: `ID.patch`.
pub const SOLUTIONS: &str = "docs/book/solutions";

/// How long one boot of a check may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// One exercise of the book: its id ("3.2") and title.
#[derive(Debug, PartialEq, Default)]
pub struct Exercise {
    pub id: String,
    pub title: String,
}

/// The exercises of every chapter of `docs/book/` (NN-name.md), in order:
/// the items `K. **Title.**` of its `## Exercises` list.
pub fn exercises(root: &Path) -> Result<Vec<Exercise>, String> {
    let dir = root.join("docs/book");
    let mut chapters: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let (number, _) = name.split_once('-')?;
            Some((number.parse().ok()?, p))
        })
        .collect();
    chapters.sort();
    let mut found = Vec::new();
    for (chapter, path) in chapters {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        found.extend(chapter_exercises(chapter, &text));
    }
    Ok(found)
}

fn chapter_exercises(chapter: u32, text: &str) -> Vec<Exercise> {
    let Some(at) = text.find("\n## Exercises") else {
        return Vec::new();
    };
    let section = &text[at + 1..];
    let section = match section[3..].find("\n## ") {
        Some(end) => &section[..end + 3],
        None => section,
    };
    section
        .lines()
        .filter_map(|line| {
            let (number, rest) = line.split_once(". **")?;
            let number: u32 = number.parse().ok()?;
            let title = rest.split_once(".**")?.0;
            Some(Exercise {
                id: format!("{chapter}.{number}"),
                title: title.to_string(),
            })
        })
        .collect()
}

/// What the docs check finds wrong between the book and `LABS`: a lab
/// that is not its chapter's exercise of that number and title, or whose
/// exercise does not name `cargo xtask lab ID`; an exercise that names a
/// lab check that does not exist.
pub fn check_book(root: &Path) -> Vec<String> {
    let exercises = match exercises(root) {
        Ok(e) => e,
        Err(e) => return vec![e],
    };
    let mut problems = Vec::new();
    for lab in LABS {
        match exercises.iter().find(|e| e.id == lab.id) {
            None => problems.push(format!("lab {} is no exercise of the book", lab.id)),
            Some(e) if e.title != lab.title => problems.push(format!(
                "lab {} is '{}' in xtask/src/lab.rs but '{}' in the book",
                lab.id, lab.title, e.title
            )),
            Some(_) => {}
        }
    }
    let book = std::fs::read_dir(root.join("docs/book"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect::<Vec<_>>()
        .join("\n");
    for named in book.split("cargo xtask lab ").skip(1) {
        let id: String = named
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let id = id.trim_end_matches('.');
        if !id.is_empty() && !LABS.iter().any(|l| l.id == id) {
            problems.push(format!(
                "the book names `cargo xtask lab {id}`, which has no check"
            ));
        }
    }
    if let Ok(entries) = std::fs::read_dir(root.join(SOLUTIONS)) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let id = name.strip_suffix(".patch");
            if !id.is_some_and(|id| LABS.iter().any(|l| l.id == id)) {
                problems.push(format!(
                    "{SOLUTIONS}/{name} is no lab's solution (ID.patch)"
                ));
            }
        }
    }
    // Each take-out must still apply to this tree: a change to the code a
    // lab's piece touches shows here at once, not only in the labs part.
    for lab in LABS {
        let patch = patch_path(root, lab.id);
        if patch.exists()
            && let Err(why) = git(
                root,
                &[
                    "apply",
                    "--reverse",
                    "--check",
                    &patch.display().to_string(),
                ],
            )
        {
            problems.push(format!(
                "lab {}'s patch no longer takes its piece out of this tree ({why}): make it again from a tree without the piece",
                lab.id
            ));
        }
    }
    for lab in LABS {
        if !book.contains(&format!("cargo xtask lab {}", lab.id))
            && !book.contains(&format!("cargo xtask\n   lab {}", lab.id))
            && !book.contains(&format!("`cargo\n   xtask lab {}", lab.id))
        {
            problems.push(format!("the book never says `cargo xtask lab {}`", lab.id));
        }
    }
    problems
}

/// `cargo xtask lab`: every exercise of the book; the labs with what to do.
pub fn list() -> Result<ExitCode, String> {
    println!("The book's exercises. `cargo xtask lab start ID` gives you a branch lab/ID with");
    println!("that piece of the kernel taken out; `cargo xtask lab ID` checks it. A project has");
    println!("no check of its own yet (its exercise in docs/book/ names the test to write).\n");
    let root = build::root();
    let here = current_branch(&root);
    for exercise in exercises(&root)? {
        match LABS.iter().find(|l| l.id == exercise.id) {
            Some(lab) => {
                let branch = lab_branch(lab.id);
                let state = if here.as_deref() == Some(branch.as_str()) {
                    "  [you are on its branch]".to_string()
                } else if branch_exists(&root, &branch) {
                    format!("  [started: {branch}]")
                } else if !patch_path(&root, lab.id).exists() {
                    "  [not on main yet: done from the tree as it is]".to_string()
                } else {
                    String::new()
                };
                println!(
                    "  {:<5} lab      {} — {}{state}",
                    lab.id, lab.title, lab.todo
                )
            }
            None if exercise.title == "Question" => {
                println!("  {:<5} question (to think about; no check)", exercise.id)
            }
            None => {
                let title = exercise.title.trim_start_matches("Project: ");
                let mut chars = title.chars();
                let title: String = chars
                    .next()
                    .map(|c| c.to_uppercase().chain(chars).collect())
                    .unwrap_or_default();
                println!("  {:<5} project  {title}", exercise.id)
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The branch `cargo xtask lab start ID` makes.
fn lab_branch(id: &str) -> String {
    format!("lab/{id}")
}

fn patch_path(root: &Path, id: &str) -> PathBuf {
    root.join(SOLUTIONS).join(format!("{id}.patch"))
}

/// `git ARGS` in `dir`: its standard output, or a one-line error.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run git (the labs need it): {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn current_branch(root: &Path) -> Option<String> {
    git(root, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok()
}

fn branch_exists(root: &Path, branch: &str) -> bool {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok()
}

/// `cargo xtask lab start ID`: a branch `lab/ID` from the one checked out,
/// with the lab's piece taken out (its patch applied in reverse) and
/// committed, and checked out.
pub fn start(id: &str) -> Result<ExitCode, String> {
    let lab = find(id)?;
    let root = build::root();
    let patch = patch_path(&root, lab.id);
    if !patch.exists() {
        return Err(format!(
            "lab {id} is not on main yet, so there is nothing to take out: do it on the tree as it is, and check it with `cargo xtask lab {id}`"
        ));
    }
    let branch = lab_branch(lab.id);
    if branch_exists(&root, &branch) {
        return Err(format!(
            "the branch {branch} exists already: `git checkout {branch}` to go on with it, or `git branch -D {branch}` to start again"
        ));
    }
    if !git(&root, &["status", "--porcelain", "--untracked-files=no"])?.is_empty() {
        return Err(
            "the tree has changes not committed: commit or stash them first, so that the lab starts from a known tree".into(),
        );
    }
    let from = current_branch(&root).unwrap_or_else(|| "HEAD".into());
    let patch_arg = patch.display().to_string();
    git(&root, &["apply", "--reverse", "--check", &patch_arg]).map_err(|e| {
        format!("{e}\n(the lab's patch no longer takes out of this tree: the tree moved since it was made)")
    })?;
    git(&root, &["checkout", "--quiet", "-b", &branch])?;
    git(&root, &["apply", "--reverse", &patch_arg])?;
    git(&root, &["add", "--all"])?;
    let message = format!("lab {}: start, with {} taken out", lab.id, lab.title);
    // A fresh machine may have no git identity; the commit is the lab's.
    let mut commit = vec!["commit", "--quiet", "-m", &message];
    if git(&root, &["config", "user.email"]).is_err() {
        commit.splice(
            0..0,
            [
                "-c",
                "user.name=profkern lab",
                "-c",
                "user.email=lab@profkern.invalid",
            ],
        );
    }
    git(&root, &commit)?;
    println!("lab {}: {} — {}", lab.id, lab.title, lab.todo);
    println!("  you are on a new branch, {branch}, made from {from} with this piece taken out.");
    println!("  check your work with `cargo xtask lab {}`;", lab.id);
    println!("  `git diff {from}` shows what you changed against the whole kernel,");
    println!(
        "  {SOLUTIONS}/{}.patch is the reference solution (git apply it to compare),",
        lab.id
    );
    println!("  and `git checkout {from}` goes back.");
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask lab ID`: runs the check, says whether the lab is done.
pub fn run(id: &str) -> Result<ExitCode, String> {
    let lab = find(id)?;
    println!("lab {}: {} (checking)", lab.id, lab.title);
    match check(lab) {
        Ok(()) => {
            println!("lab {}: done", lab.id);
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            println!("lab {}: not done: {why}", lab.id);
            Ok(ExitCode::FAILURE)
        }
    }
}

fn find(id: &str) -> Result<&'static Lab, String> {
    LABS.iter().find(|l| l.id == id).ok_or_else(|| {
        let ids: Vec<&str> = LABS.iter().map(|l| l.id).collect();
        let project = exercises(&build::root())
            .unwrap_or_default()
            .into_iter()
            .any(|e| e.id == id);
        if project {
            format!(
                "exercise {id} is a project: it has no check of its own yet (the book names the test to write)"
            )
        } else {
            format!("no lab '{id}'; the labs are {}", ids.join(", "))
        }
    })
}

/// Runs every boot of `lab`'s check; Err says what is missing.
pub fn check(lab: &Lab) -> Result<(), String> {
    for run in lab.runs {
        check_run(run)?;
    }
    Ok(())
}

fn check_run(run: &Run) -> Result<(), String> {
    for line in run.boot {
        if let Some(why) = kcore::bootopts::check_line(line) {
            return Err(format!(
                "the kernel does not take the boot option {line}: {why}"
            ));
        }
    }
    let mut opts = Options {
        boot: run.boot.iter().map(|s| s.to_string()).collect(),
        program: run.program.iter().map(|s| s.to_string()).collect(),
        // OVMF reaches the kernel in half the time SeaBIOS takes to read
        // the ramdisk (suites.rs, `Suite::uefi`), and a lab boots often.
        uefi: true,
        ..Options::default()
    };
    let mut expect: Vec<String> = run.expect.iter().map(|s| s.to_string()).collect();
    if let Some(source) = run.c_source {
        let source = build::root().join(source);
        let guest = build::c_program(&opts, &source)?;
        let name = guest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        opts.add
            .push((guest.display().to_string(), format!("/bin/{name}")));
        opts.program = vec![format!("/bin/{name}")];
        expect.extend(host_output(&source)?);
    }
    if run.scratch_disk {
        let disk = build::root().join("target/lab-disk.img");
        let file = std::fs::File::create(&disk)
            .and_then(|f| f.set_len(SCRATCH_DISK_BYTES).map(|()| f))
            .map_err(|e| format!("cannot make {}: {e}", disk.display()))?;
        drop(file);
        opts.disks = vec![disk];
    }
    let image = build::image(&opts, &Boot::normal(&opts))?;
    let outcome = qemu::boot(&opts, &image, RUN_TIMEOUT, false, &[])?;
    let lines = &outcome.lines;
    let say = |why: String| {
        // A labcheck FAIL line says best what is missing.
        let detail = lines
            .iter()
            .find(|l| l.starts_with("labcheck: FAIL"))
            .and_then(|l| l.trim_start_matches("labcheck: FAIL ").split_once(": "))
            .map_or(why, |(_, said)| said.to_string());
        let program = match run.c_source {
            Some(source) => format!("{source}, built with libc-lite"),
            None => run.program.join(" "),
        };
        format!(
            "{detail} (booted with {} running {program})",
            show_boot(run)
        )
    };
    let ended_as_asked = match outcome.ending {
        Ending::KernelFailure => run.kernel_fails,
        Ending::Exited(_) => !run.kernel_fails,
        Ending::TimedOut(_) | Ending::QemuEnded(_) | Ending::Killed => false,
    };
    if !ended_as_asked {
        return Err(say(format!(
            "the boot ended badly: {}",
            outcome.ending.describe()
        )));
    }
    if let Some(i) = expect::first_missing(&expect, lines, expect::CONSOLE) {
        return Err(say(format!(
            "no console line like '{}' (in order)",
            expect[i]
        )));
    }
    for unwanted in run.absent {
        if let Some(l) = lines
            .iter()
            .find(|l| expect::matches(l, unwanted, expect::CONSOLE))
        {
            return Err(say(format!("the console has '{l}'")));
        }
    }
    Ok(())
}

/// What `source` prints compiled and run on the host (gcc, glibc): each
/// line must appear in the guest's console.
fn host_output(source: &Path) -> Result<Vec<String>, String> {
    let gcc = crate::setup::ensure("gcc", "gcc")?;
    let dir = build::root().join("target/labs-host");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let exe = dir.join(source.file_stem().unwrap_or_default());
    build::run_checked(
        Command::new(gcc).arg("-o").arg(&exe).arg(source),
        &format!("compiling {} for the host", source.display()),
    )?;
    let out = Command::new(&exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.replace('*', "?"))
        .collect())
}

fn show_boot(run: &Run) -> String {
    if run.boot.is_empty() {
        "no options".into()
    } else {
        run.boot.join(" ")
    }
}

/// The `labs` part of the test command. For every lab with a patch: the
/// check passes on this tree; a scratch copy with the patch taken out fails
/// it, saying why; and the scratch copy with the patch applied again is
/// this tree, byte for byte (so the solution passes: the first proof).
/// For a lab whose piece is not on main yet: the check fails on this tree.
/// Returns (name, passed, why) per test.
pub fn test_all() -> Result<Vec<(String, bool, String)>, String> {
    let mut results = Vec::new();
    let root = build::root();
    for lab in LABS {
        let verdict = check(lab);
        if patch_path(&root, lab.id).exists() {
            results.push((
                format!("labs/{}_passes_on_main", lab.id),
                verdict.is_ok(),
                verdict.err().unwrap_or_default(),
            ));
        } else {
            results.push((
                format!("labs/{}_fails_as_shipped", lab.id),
                verdict.is_err(),
                "the check passes on a tree without the lab's piece: it cannot tell done from not done".into(),
            ));
        }
    }
    let scratch = root.join("target/lab-scratch");
    for lab in LABS {
        let patch = patch_path(&root, lab.id);
        if !patch.exists() {
            continue;
        }
        let started = Instant::now();
        let taken_out = started_tree_fails(&root, &scratch, &patch, lab.id);
        results.push((
            format!("labs/{}_fails_when_started", lab.id),
            taken_out.is_ok(),
            taken_out.as_ref().err().cloned().unwrap_or_default(),
        ));
        if let Ok(reason) = &taken_out {
            println!(
                "   (lab {} started: 'not done: {reason}', {:.0} s)",
                lab.id,
                started.elapsed().as_secs_f64()
            );
        }
        let solved = solution_restores_the_tree(&root, &scratch, &patch);
        results.push((
            format!("labs/{}_solution_gives_main_back", lab.id),
            solved.is_ok(),
            solved.err().unwrap_or_default(),
        ));
    }
    Ok(results)
}

/// `git apply ARGS patch` in the scratch copy. The scratch copy sits inside
/// the repository's target/: without the ceiling, git would find the
/// repository above it and apply the patch relative to the repository's
/// root, ignoring (silently) every path outside the scratch folder, which
/// is all of them.
fn apply_in_scratch(scratch: &Path, patch: &Path, reverse: bool) -> Result<(), String> {
    let mut command = Command::new("git");
    command.args(["apply", "--verbose", "--whitespace=nowarn"]);
    if reverse {
        command.arg("--reverse");
    }
    let applied = command
        .arg(patch)
        .env(
            "GIT_CEILING_DIRECTORIES",
            scratch.parent().unwrap_or(scratch),
        )
        .current_dir(scratch)
        .output()
        .map_err(|e| format!("cannot run git apply: {e}"))?;
    let said = String::from_utf8_lossy(&applied.stderr);
    let how = if reverse { "in reverse" } else { "forward" };
    if !applied.status.success() {
        return Err(format!(
            "{} does not apply {how}: {}",
            patch.display(),
            said.trim()
        ));
    }
    if !said.contains("Applied patch") {
        return Err(format!(
            "{} applied {how} to no file: {}",
            patch.display(),
            said.trim()
        ));
    }
    Ok(())
}

/// Syncs `scratch` to the tree, takes the lab's piece out, and runs
/// `cargo xtask lab ID` there: Ok(its reason) when it says "not done"
/// (a build that breaks, or a check that passes, is an Err).
fn started_tree_fails(
    root: &Path,
    scratch: &Path,
    patch: &Path,
    id: &str,
) -> Result<String, String> {
    sync_tree(root, scratch)?;
    apply_in_scratch(scratch, patch, true)?;
    let out = Command::new(env!("CARGO"))
        .args(["xtask", "lab", id])
        .current_dir(scratch)
        .output()
        .map_err(|e| format!("cannot run cargo in {}: {e}", scratch.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let said = text
        .lines()
        .rev()
        .find(|l| l.starts_with("lab "))
        .map(str::to_string)
        .unwrap_or_default();
    let prefix = format!("lab {id}: not done: ");
    match said.strip_prefix(&prefix) {
        // A student starts from a tree that builds: the patch must take
        // out every use of the piece, not leave the kernel broken.
        Some(reason) if reason.starts_with("building the kernel failed") => Err(format!(
            "the started tree's kernel does not build ({reason}): the patch leaves a use of the lab's piece in it"
        )),
        Some(reason) if !out.status.success() => Ok(reason.to_string()),
        _ if out.status.success() => Err(format!(
            "with the piece taken out the check still passes ('{said}'): it cannot tell done from not done"
        )),
        _ => Err(format!(
            "with the piece taken out the tree does not build or boot: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("(nothing on stderr)")
        )),
    }
}

/// In the started scratch copy, applies the patch forward and compares
/// every file it names with the tree's.
fn solution_restores_the_tree(root: &Path, scratch: &Path, patch: &Path) -> Result<(), String> {
    apply_in_scratch(scratch, patch, false)?;
    let text = std::fs::read_to_string(patch).map_err(|e| format!("{}: {e}", patch.display()))?;
    for file in text.lines().filter_map(|l| {
        l.strip_prefix("+++ b/")
            .or_else(|| l.strip_prefix("--- a/"))
    }) {
        let (ours, theirs) = (
            std::fs::read(root.join(file)),
            std::fs::read(scratch.join(file)),
        );
        if ours.ok() != theirs.ok() {
            return Err(format!(
                "the started tree with {} applied differs from this tree in {file}",
                patch.display()
            ));
        }
    }
    Ok(())
}

/// Makes `scratch` hold the repository's files as they are now (tracked
/// and untracked, not ignored), keeping its own `target/` so that one
/// build serves every solution. A file is rewritten only when its bytes
/// differ, so cargo rebuilds only what a patch changed, and a file a patch
/// had changed gets a fresh time when restored (never an old one cargo
/// would take for up to date).
fn sync_tree(root: &Path, scratch: &Path) -> Result<(), String> {
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git ls-files: {e}"))?;
    if !listed.status.success() {
        return Err("git ls-files failed: the labs test needs the git repository".into());
    }
    let files: Vec<PathBuf> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .filter(|p| root.join(p).is_file())
        .collect();
    let keep: std::collections::HashSet<&PathBuf> = files.iter().collect();
    // Files of an earlier patch that the tree does not have.
    for old in walk(scratch, scratch)? {
        if !keep.contains(&old) {
            std::fs::remove_file(scratch.join(&old))
                .map_err(|e| format!("cannot remove {}: {e}", old.display()))?;
        }
    }
    for file in &files {
        let from = root.join(file);
        let to = scratch.join(file);
        let bytes = std::fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        if std::fs::read(&to).ok().as_ref() == Some(&bytes) {
            continue;
        }
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&to, &bytes).map_err(|e| format!("{}: {e}", to.display()))?;
        let mode = std::fs::metadata(&from)
            .map_err(|e| e.to_string())?
            .permissions();
        std::fs::set_permissions(&to, mode).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Every file under `dir` but `target/`, relative to `base`.
fn walk(base: &Path, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(found);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(base)
            .map_err(|e| e.to_string())?
            .to_path_buf();
        if rel == Path::new("target") {
            continue;
        }
        if path.is_dir() {
            found.extend(walk(base, &path)?);
        } else {
            found.push(rel);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exercises_are_read_from_a_chapter() {
        let text = "# 3. The clock\n\n## Exercises\n\n1. **The HPET.** Add it.\n2. **Slices.** x\n\n## Next\n3. **Not one.** y\n";
        let found = chapter_exercises(3, text);
        let ids: Vec<&str> = found.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["3.1", "3.2"]);
        assert_eq!(found[0].title, "The HPET");
    }
}
