//! `cargo xtask prof PROGRAM [ARGS...]`: the classic Unix profiling path.
//!
//! Build everything, boot, run the program with `GMON_OUT_PREFIX` set (each
//! of its processes writes `gmon.out.PID`), bring those home over the
//! export channel, and run the host's GNU gprof on the program's own ELF and
//! the first process's profile (every one with `--all`): flat profile and
//! call graph. `--graph FILE.svg` also draws the call graph
//! with gprof2dot and graphviz.
//!
//! PROGRAM is C sources (`prog.c more.c -- ARGS`: compiled by
//! `build::musl_profiled` with musl and the project's gprof runtime,
//! libgmon.a, then run as the host ELF it makes), a guest program
//! (`/bin/callgraph`: a profiled build from `user/profiled`, gcrt0 start-up
//! and mcount in every function, or the guest path of an `--add
//! HOST:GUEST`) or a file on the host (`./a.out`, `/tmp/work`): an ELF built
//! elsewhere with gprof support, for example by `gcc -pg -static`, which is
//! copied in as `/bin/NAME` and run from there. Either way gprof reads the
//! very file that ran.
//!
//! A dynamically linked ELF (plain `gcc -pg`) gets its loader and libraries
//! at the host's paths, and by default the project's libgmon.so at
//! `PRELOAD`, named in `LD_PRELOAD`, which replaces glibc's gprof runtime
//! and so its SIGPROF emulation with the native profil (`--way native`);
//! `--way sigprof` leaves glibc's runtime in charge, and `--way both` runs
//! /bin/profways, which takes the two in turns and says what each costs.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use crate::build::{self, Boot};
use crate::options::{Options, Way};
use crate::{qemu, setup};

pub const GMON: &str = "/gmon.out";

/// The host ELF of guest program `program` (e.g. `/bin/callgraph`): the
/// host file of an `--add` that put it there, else the user program of
/// that name.
pub fn host_elf(opts: &Options, program: &str) -> Result<PathBuf, String> {
    if let Some((host, _)) = opts.add.iter().rev().find(|(_, guest)| guest == program) {
        return Ok(PathBuf::from(host));
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    build::user_programs(opts)?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, path)| path)
        .ok_or_else(|| format!("no program '{name}' among the user programs (see user/src/bin and user/profiled/src/bin)"))
}

/// Runs `gprof -b ARGS ELF GMON...` (several profiles are summed); returns
/// its standard output, or an error that includes anything gprof printed
/// on stderr (a warning is an error).
pub fn gprof(elf: &Path, gmons: &[PathBuf], args: &[&str]) -> Result<String, String> {
    let gprof = setup::ensure("gprof", "binutils")?;
    let out = Command::new(gprof)
        .arg("-b")
        .args(args)
        .arg(elf)
        .args(gmons)
        .output()
        .map_err(|e| format!("cannot run gprof: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.trim().is_empty() {
        return Err(format!("gprof failed ({}): {}", out.status, stderr.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Where the profiled program's processes write their profiles:
/// `GMON_OUT_PREFIX` makes each write `PREFIX.PID` (gmon.rs, and glibc's
/// gmon the same), so a program that forks leaves one file per process.
pub const GMON_DIR: &str = "/tmp/gmon";

/// `word` in double quotes for the project's /bin/sh (which takes `\`
/// before `"`, `\`, `$` and a backquote there).
fn sh_quote(word: &str) -> String {
    let mut quoted = String::from("\"");
    for c in word.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// Where a dynamically linked glibc program finds the project's gprof
/// runtime (`build::gmon_preload`) in the guest.
pub const PRELOAD: &str = "/lib/libgmon.so";

/// The command line that runs `program` with its processes' profiles
/// going to `GMON_DIR`, with `preload` in `LD_PRELOAD` if given.
pub fn with_gmon_prefix(program: &[String], preload: Option<&str>) -> Vec<String> {
    let words: Vec<String> = program.iter().map(|w| sh_quote(w)).collect();
    let preload = preload.map_or(String::new(), |lib| format!("LD_PRELOAD={lib} "));
    let line = format!(
        "mkdir {GMON_DIR} && {preload}GMON_OUT_PREFIX={GMON_DIR}/gmon.out {}",
        words.join(" ")
    );
    vec!["/bin/sh".into(), "-c".into(), line]
}

/// The process id a profile's name ends in (`gmon.out.42`).
pub fn pid_of(path: &Path) -> Option<u32> {
    path.extension()?.to_str()?.parse().ok()
}

/// The per-process profiles among exported files (`gmon.out.PID`), first
/// process first.
pub fn per_process(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut profiles: Vec<PathBuf> = files
        .iter()
        .filter(|p| pid_of(p).is_some())
        .cloned()
        .collect();
    profiles.sort_by_key(|p| pid_of(p));
    profiles
}

/// Boots `opts.program`, each of its processes writing `gmon.out.PID`
/// (with `preload` in `LD_PRELOAD`, if given); returns the host copies,
/// first process first.
pub fn run_and_fetch(
    opts: &Options,
    preload: Option<&str>,
    echo: bool,
) -> Result<(qemu::Outcome, Vec<PathBuf>), String> {
    let mut opts = opts.clone();
    opts.program = with_gmon_prefix(&opts.program, preload);
    opts.export = vec![GMON_DIR.to_string()];
    let image = build::image(&opts, &Boot::normal(&opts))?;
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(300));
    let outcome = qemu::boot(&opts, &image, timeout, echo, &[])?;
    Ok((outcome, per_process(&qemu::unpack_exports(&opts)?)))
}

/// The profiles gprof reads: the first process's, or with `all` every
/// process's (gprof sums the files it is given). Says which.
pub fn choose_profiles(profiles: &[PathBuf], all: bool) -> Vec<PathBuf> {
    let pids: Vec<String> = profiles
        .iter()
        .filter_map(|p| pid_of(p).map(|pid| pid.to_string()))
        .collect();
    if all {
        eprintln!(
            "xtask: gprof reads the sum of {} processes' profiles ({})",
            profiles.len(),
            pids.join(", ")
        );
        return profiles.to_vec();
    }
    let others = if profiles.len() > 1 {
        format!(
            " ({} processes wrote one: {}; --all sums them)",
            profiles.len(),
            pids.join(", ")
        )
    } else {
        String::new()
    };
    eprintln!(
        "xtask: gprof reads the profile of process {}, the first{others}",
        pids.first().map_or("?", |n| n.as_str())
    );
    profiles[..1].to_vec()
}

/// `prof a.c b.c [--] ARGS`: the leading C sources, and the program's
/// arguments after them (a `--` between the two is dropped).
fn split_sources(program: &[String]) -> (Vec<PathBuf>, Vec<String>) {
    let count = program.iter().take_while(|a| a.ends_with(".c")).count();
    let mut args = program[count..].to_vec();
    if count > 0 && args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    (program[..count].iter().map(PathBuf::from).collect(), args)
}

/// C sources given to prof are compiled for gprof, and the program becomes
/// the ELF they make (then run as any host ELF).
fn compile_sources(opts: &mut Options) -> Result<(), String> {
    let (sources, args) = split_sources(&opts.program);
    if sources.is_empty() {
        return Ok(());
    }
    let cflags = opts.cflags.as_deref().unwrap_or(build::PROF_CFLAGS);
    let elf = build::musl_profiled(opts, &sources, cflags)?;
    eprintln!("xtask: compiled {} for gprof", elf.display());
    opts.program = std::iter::once(elf.display().to_string())
        .chain(args)
        .collect();
    Ok(())
}

/// Finds the ELF gprof must read for `opts.program`, once. A guest program
/// (the guest path of an `--add`, or one of the user programs) is run as it
/// is; anything else names a host ELF, which is added to the ramdisk as
/// `/bin/NAME` and run from there.
fn resolve_program(opts: &mut Options) -> Result<PathBuf, String> {
    let Some(program) = opts.program.first().cloned() else {
        return Err(
            "prof needs a program: cargo xtask prof PROGRAM [ARGS...], e.g. /bin/callgraph or ./a.out".into(),
        );
    };
    let added = opts.add.iter().any(|(_, guest)| *guest == program);
    if (added || program.starts_with("/bin/"))
        && let Ok(elf) = host_elf(opts, &program)
    {
        return Ok(elf);
    }
    let bytes = std::fs::read(&program).map_err(|e| {
        format!("{program}: not a guest program (user/src/bin, user/profiled/src/bin, --add) and not a host file: {e}")
    })?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err(format!("{program} is not an ELF executable"));
    }
    let name = Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{program}: no file name"))?;
    let guest = format!("/bin/{name}");
    opts.add.push((program.clone(), guest.clone()));
    opts.program[0] = guest;
    Ok(PathBuf::from(program))
}

/// A dynamically linked program runs here as it was built, with its
/// loader and libraries (the host's, added at the same paths by
/// `build::with_runtimes`). Its profiling runtime is glibc's, whose
/// profil() is the SIGPROF emulation, unless `--way native` (the default)
/// puts the project's libgmon.so in `LD_PRELOAD`, which answers gcrt1.o's
/// `__monstartup` and every `mcount` with the native profil. Returns the
/// library to preload, if any.
fn add_runtime(opts: &mut Options, elf: &Path) -> Result<Option<&'static str>, String> {
    if !build::is_dynamic(elf) {
        return Ok(None);
    }
    if opts.way == Way::Sigprof {
        eprintln!(
            "xtask: {} is dynamic: glibc's own gmon samples with SIGPROF (--way sigprof)",
            elf.display()
        );
        return Ok(None);
    }
    let library = build::gmon_preload(opts)?;
    opts.add
        .push((library.display().to_string(), PRELOAD.to_string()));
    eprintln!(
        "xtask: {} is dynamic: LD_PRELOAD={PRELOAD} (libgmon.so) samples with the native profil",
        elf.display()
    );
    Ok(Some(PRELOAD))
}

pub fn run(opts: &Options) -> Result<ExitCode, String> {
    let mut opts = opts.clone();
    compile_sources(&mut opts)?;
    let elf = resolve_program(&mut opts)?;
    if opts.way == Way::Both {
        return both_ways(&mut opts, &elf);
    }
    let preload = add_runtime(&mut opts, &elf)?;
    let opts = &opts;
    let program = &opts.program[0];
    let (outcome, profiles) = run_and_fetch(opts, preload, true)?;
    eprintln!("xtask: {}", outcome.ending.describe());
    if profiles.is_empty() {
        return Err(format!(
            "{program} wrote no profile: was it built for gprof (a .c file given here, user/profiled, or gcc -pg), and did it exit normally?"
        ));
    }
    let gmons = choose_profiles(&profiles, opts.all);
    println!("{}", gprof(&elf, &gmons, &[])?);
    if let Some(svg) = &opts.graph {
        draw_graph(&elf, &gmons, svg)?;
        eprintln!("xtask: call graph drawn in {}", svg.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Rounds `--way both` runs the program each way.
const ROUNDS: &str = "5";

/// `--way both`: the program profiled both ways in one boot, alternating,
/// by /bin/profways, which prints each way's run time and samples; then
/// gprof's flat profile of the last run each way.
fn both_ways(opts: &mut Options, elf: &Path) -> Result<ExitCode, String> {
    if !build::is_dynamic(elf) {
        return Err(format!(
            "--way both needs a dynamically linked glibc program (gcc -pg without -static); {} is static, and its runtime is the one it was linked with",
            elf.display()
        ));
    }
    opts.way = Way::Native;
    let library = add_runtime(opts, elf)?.ok_or("no library to preload")?;
    opts.program = ["/bin/profways", "--rounds", ROUNDS, library]
        .into_iter()
        .map(String::from)
        .chain(opts.program.drain(..))
        .collect();
    opts.export = vec![GMON_DIR.to_string()];
    let image = build::image(opts, &Boot::normal(opts))?;
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(900));
    let outcome = qemu::boot(opts, &image, timeout, true, &[])?;
    eprintln!("xtask: {}", outcome.ending.describe());
    let exported = qemu::unpack_exports(opts)?;
    let mut shown = 0;
    for (way, title) in [
        ("sigprof.", "glibc's runtime, SIGPROF emulation"),
        ("native.", "libgmon.so, the native profil"),
    ] {
        let Some(gmon) = exported.iter().find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(&format!("_{way}")))
        }) else {
            continue;
        };
        println!("== {title}: gprof -p of {}", gmon.display());
        println!("{}", gprof(elf, std::slice::from_ref(gmon), &["-p"])?);
        shown += 1;
    }
    if shown < 2 {
        return Err("profways left fewer than two profiles: see its output above".into());
    }
    Ok(ExitCode::SUCCESS)
}

/// gprof | gprof2dot | dot -Tsvg, installing gprof2dot (PyPI) and graphviz
/// (Debian) when missing.
fn draw_graph(elf: &Path, gmons: &[PathBuf], svg: &Path) -> Result<(), String> {
    let dot = setup::ensure("dot", "graphviz")?;
    let gprof2dot = match setup::which("gprof2dot") {
        Some(found) => found,
        None => {
            eprintln!("xtask: gprof2dot not found; installing it with pip");
            let ok = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "gprof2dot"])
                .status()
                .is_ok_and(|s| s.success());
            setup::which("gprof2dot").filter(|_| ok).ok_or(
                "gprof2dot not found and pip could not install it; install it with: python3 -m pip install gprof2dot",
            )?
        }
    };
    let profile = gprof(elf, gmons, &[])?;
    let mut g2d = Command::new(gprof2dot)
        .args(["-f", "prof"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run gprof2dot: {e}"))?;
    use std::io::Write;
    g2d.stdin
        .take()
        .expect("piped")
        .write_all(profile.as_bytes())
        .map_err(|e| format!("gprof2dot: {e}"))?;
    let graph = g2d
        .wait_with_output()
        .map_err(|e| format!("gprof2dot: {e}"))?;
    if !graph.status.success() {
        return Err(format!("gprof2dot failed ({})", graph.status));
    }
    let mut dot = Command::new(dot)
        .arg("-Tsvg")
        .arg("-o")
        .arg(svg)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run dot: {e}"))?;
    dot.stdin
        .take()
        .expect("piped")
        .write_all(&graph.stdout)
        .map_err(|e| format!("dot: {e}"))?;
    let status = dot.wait().map_err(|e| format!("dot: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("dot failed ({status})"))
    }
}

/// Where `kprof`'s guest writes the kernel's profile.
pub const KGMON_DIR: &str = "/tmp/kgmon";
/// What `kprof` runs when given no program (and the kprof suites run):
/// the kernel's test workload, two seconds in two named kernel
/// functions, three parts to one.
pub const KPROF_DEFAULT: &[&str] = &["/bin/kgmon", "-w", "2000"];

/// The shell line that runs `program` with the kernel profiling itself
/// from a reset, then stops and dumps it into `KGMON_DIR`.
pub fn with_kernel_profiling(program: &[String]) -> Vec<String> {
    let words: Vec<String> = if program.is_empty() {
        KPROF_DEFAULT.iter().map(|w| sh_quote(w)).collect()
    } else {
        program.iter().map(|w| sh_quote(w)).collect()
    };
    let line = format!(
        "mkdir {KGMON_DIR} && /bin/kgmon -r -b && {}; /bin/kgmon -h -p {KGMON_DIR}/gmon.out",
        words.join(" ")
    );
    vec!["/bin/sh".into(), "-c".into(), line]
}

/// A copy of the kernel's ELF that gprof can name every function in
/// (`target/kprof/kernel`): the compiler gives a function it shares
/// between codegen units a `.llvm.NUMBER` suffix, and gprof takes a
/// symbol with a dot and letters in it for a local label and charges its
/// samples to the function before. It takes `.NUMBER` (a nested
/// function's), so the copy has `.llvm.` made `.` (`objcopy
/// --redefine-syms`; each name stays unique); the kernel that ran is
/// unchanged.
pub fn kernel_for_gprof(kernel: &Path) -> Result<PathBuf, String> {
    let nm = setup::ensure("nm", "binutils")?;
    let objcopy = setup::ensure("objcopy", "binutils")?;
    let out = Command::new(&nm)
        .arg(kernel)
        .output()
        .map_err(|e| format!("cannot run nm: {e}"))?;
    if !out.status.success() {
        return Err(format!("nm {} failed", kernel.display()));
    }
    let mut renames = String::new();
    for name in String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
    {
        if let Some((plain, number)) = name.split_once(".llvm.") {
            renames += &format!("{name} {plain}.{number}\n");
        }
    }
    let dir = build::root().join("target/kprof");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let map = dir.join("renames");
    std::fs::write(&map, renames).map_err(|e| format!("cannot write {}: {e}", map.display()))?;
    let copy = dir.join("kernel");
    let status = Command::new(&objcopy)
        .arg(format!("--redefine-syms={}", map.display()))
        .arg(kernel)
        .arg(&copy)
        .status()
        .map_err(|e| format!("cannot run objcopy: {e}"))?;
    if !status.success() {
        return Err(format!(
            "objcopy --redefine-syms on {} failed",
            kernel.display()
        ));
    }
    Ok(copy)
}

/// Boots with `program` run under kernel profiling and brings the
/// kernel's gmon.out home; the outcome and the profile's host path.
pub fn run_and_fetch_kernel(
    opts: &Options,
    echo: bool,
) -> Result<(qemu::Outcome, Option<PathBuf>), String> {
    let mut opts = opts.clone();
    opts.program = with_kernel_profiling(&opts.program);
    opts.export = vec![KGMON_DIR.to_string()];
    let image = build::image(&opts, &Boot::normal(&opts))?;
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(300));
    let outcome = qemu::boot(&opts, &image, timeout, echo, &[])?;
    Ok((outcome, kernel_gmon(&opts)?))
}

/// The kernel's gmon.out among what a boot run by
/// `with_kernel_profiling` exported, if it came home.
pub fn kernel_gmon(opts: &Options) -> Result<Option<PathBuf>, String> {
    Ok(qemu::unpack_exports(opts)?.into_iter().find(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("gmon.out"))
    }))
}

/// `cargo xtask kprof [-- PROGRAM ARGS]`: the kernel's own profile while
/// the program ran, flat profile and call graph, by GNU gprof over the
/// profiled kernel's ELF (`opts.kprof` is set: options.rs); `--graph`
/// draws the call graph as `prof --graph` does.
pub fn run_kernel(opts: &Options) -> Result<ExitCode, String> {
    if opts.user {
        return both_sides(opts);
    }
    let kernel = kernel_for_gprof(&build::kernel(opts)?)?;
    let (outcome, gmon) = run_and_fetch_kernel(opts, true)?;
    eprintln!("xtask: {}", outcome.ending.describe());
    let gmon = gmon.ok_or("the guest left no kernel profile: see its output above")?;
    let gmons = std::slice::from_ref(&gmon);
    println!("{}", gprof(&kernel, gmons, &[])?);
    if let Some(svg) = &opts.graph {
        draw_graph(&kernel, gmons, svg)?;
        eprintln!("xtask: call graph drawn in {}", svg.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask kprof --user [--kernel] -- PROGRAM ARGS`: one run of a
/// program built for gprof (as `prof` takes it) with the kernel profiling
/// itself too; the program's flat profile and the kernel's, side by side:
/// where the program spent its time, and what it made the kernel do
/// meanwhile (the kernel's profile also holds whatever else ran).
fn both_sides(opts: &Options) -> Result<ExitCode, String> {
    let both = user_and_kernel(opts, true)?;
    println!(
        "{}",
        side_by_side(&both.user_flat, &both.kernel_flat, SIDE_ROWS)
    );
    eprintln!("xtask: the whole profiles: {}", both.whole);
    Ok(ExitCode::SUCCESS)
}

/// The two flat profiles of one `kprof --user` run.
pub struct BothSides {
    pub user_flat: String,
    pub kernel_flat: String,
    /// The gprof commands that give each whole profile.
    pub whole: String,
}

/// Boots the profiled kernel, runs `opts.program` (built for gprof) with
/// `GMON_OUT_PREFIX` inside a kernel profile, brings both profiles home
/// and reads each with gprof: the program's first process's (every
/// process's with `--all`) and the kernel's.
pub fn user_and_kernel(opts: &Options, echo: bool) -> Result<BothSides, String> {
    let mut opts = opts.clone();
    opts.kprof = true;
    compile_sources(&mut opts)?;
    let elf = resolve_program(&mut opts)?;
    let kernel = kernel_for_gprof(&build::kernel(&opts)?)?;
    let inner = with_gmon_prefix(&opts.program, None);
    opts.program = with_kernel_profiling(&inner);
    opts.export = vec![GMON_DIR.to_string(), KGMON_DIR.to_string()];
    let image = build::image(&opts, &Boot::normal(&opts))?;
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(300));
    let outcome = qemu::boot(&opts, &image, timeout, echo, &[])?;
    eprintln!("xtask: {}", outcome.ending.describe());
    let exported = qemu::unpack_exports(&opts)?;
    let profiles = per_process(&exported);
    if profiles.is_empty() {
        return Err(format!(
            "{} wrote no profile: was it built for gprof, and did it exit normally?",
            inner.join(" ")
        ));
    }
    let gmon = exported
        .iter()
        .find(|p| p.to_string_lossy().ends_with("gmon.out"))
        .cloned()
        .ok_or("the guest left no kernel profile: see its output above")?;
    let user_gmons = choose_profiles(&profiles, opts.all);
    Ok(BothSides {
        user_flat: gprof(&elf, &user_gmons, &["-p"])?,
        kernel_flat: gprof(&kernel, std::slice::from_ref(&gmon), &["-p"])?,
        whole: format!(
            "gprof {} {} and gprof {} {}",
            elf.display(),
            user_gmons[0].display(),
            kernel.display(),
            gmon.display()
        ),
    })
}

/// One row of a gprof flat profile (`gprof -p`): "% time", cumulative
/// seconds, self seconds, then, for a function with arcs, calls and the
/// two per-call times, and the name, which may hold spaces (a Rust name:
/// `<T as Trait>::f`).
#[derive(Clone, Debug, PartialEq)]
pub struct FlatRow<'a> {
    pub percent: f64,
    pub self_seconds: f64,
    /// None for a function gprof has no arcs of (no mcount in it).
    pub calls: Option<u64>,
    pub name: &'a str,
}

/// The rows of a flat profile, top first; header and blank lines skipped.
pub fn flat_rows(flat: &str) -> impl Iterator<Item = FlatRow<'_>> {
    flat.lines().filter_map(|line| {
        let mut rest = line.trim_start();
        let mut numbers = Vec::new();
        while numbers.len() < 6 {
            let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let Ok(n) = word.parse::<f64>() else { break };
            numbers.push(n);
            rest = after.trim_start();
        }
        let name = rest.trim_end();
        if numbers.len() < 3 || name.is_empty() {
            return None;
        }
        Some(FlatRow {
            percent: numbers[0],
            self_seconds: numbers[2],
            calls: (numbers.len() == 6).then(|| numbers[3] as u64),
            name,
        })
    })
}

/// The flat-profile row of `function`, if it has one.
pub fn flat_row<'a>(flat: &'a str, function: &str) -> Option<FlatRow<'a>> {
    flat_rows(flat).find(|row| row.name == function)
}

/// Rows of each flat profile `kprof --user` shows.
const SIDE_ROWS: usize = 15;

/// The first `rows` functions of two gprof flat profiles (`-p`), as two
/// columns: percent of its own side's time, seconds, name (the left one's
/// cut to fit; the right one's whole, for the kernel's long generic names).
fn side_by_side(user: &str, kernel: &str, rows: usize) -> String {
    let rows_of = |flat: &str| -> Vec<String> {
        flat_rows(flat)
            .take(rows)
            .map(|row| format!("{:6.2} {:7.2}  {}", row.percent, row.self_seconds, row.name))
            .collect()
    };
    const WIDTH: usize = 58;
    let cut = |text: &str| -> String {
        if text.chars().count() <= WIDTH {
            format!("{text:WIDTH$}")
        } else {
            let kept: String = text.chars().take(WIDTH - 3).collect();
            format!("{kept}...")
        }
    };
    let (left, right) = (rows_of(user), rows_of(kernel));
    let mut out = format!(
        "{}  {}\n{}  {}\n",
        cut("the program (user mode)"),
        "the kernel, meanwhile",
        cut("     %    self  function"),
        "     %    self  function"
    );
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).map_or("", |r| r.as_str());
        let r = right.get(i).map_or("", |r| r.as_str());
        out += format!("{}  {r}", cut(l)).trim_end();
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_program(program: &str) -> Options {
        Options {
            program: vec![program.to_string(), "arg".to_string()],
            ..Options::default()
        }
    }

    #[test]
    fn two_flat_profiles_go_side_by_side() {
        let user = "Flat profile:\n\n  %   cumulative   self              self     total\n time   seconds   seconds    calls  ms/call  ms/call  name\n 75.00      0.03     0.03        1    30.00    30.00  work\n 25.00      0.04     0.01                             main\n";
        let kernel = " 60.00      0.06     0.06      221     0.27     0.27  kernel::mm::paging::fork_cow\n 40.00      0.10     0.04                             memset\n 10.00      0.11     0.01                             a_third\n";
        let text = side_by_side(user, kernel, 2);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[2].starts_with(" 75.00    0.03  work"), "{text}");
        assert!(
            lines[2].ends_with(" 60.00    0.06  kernel::mm::paging::fork_cow"),
            "{text}"
        );
        assert!(
            lines[3].contains("main") && lines[3].ends_with("memset"),
            "{text}"
        );
        let spaced =
            " 50.00      0.02     0.02       10     2.00     2.00  <a::B as c::D>::write_str\n";
        let text = side_by_side(spaced, "", 1);
        assert!(
            text.lines()
                .nth(2)
                .unwrap()
                .contains("  <a::B as c::D>::write_str"),
            "{text}"
        );
    }

    #[test]
    fn a_flat_row_has_its_calls_only_with_arcs_and_keeps_a_spaced_name() {
        let flat = "Flat profile:\n\n  %   cumulative   self              self     total\n time   seconds   seconds    calls  ms/call  ms/call  name\n 74.71      1.50     1.50      100    14.98    14.98  kernel::kprof::spin_three_parts\n  1.26      1.04     0.01                             memset\n  0.50      1.05     0.00        7     0.00     0.00  <a::B as c::D>::f\n";
        let rows: Vec<FlatRow> = flat_rows(flat).collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(
            rows[0],
            FlatRow {
                percent: 74.71,
                self_seconds: 1.50,
                calls: Some(100),
                name: "kernel::kprof::spin_three_parts"
            }
        );
        assert_eq!((rows[1].calls, rows[1].name), (None, "memset"));
        assert_eq!(
            flat_row(flat, "<a::B as c::D>::f").and_then(|r| r.calls),
            Some(7)
        );
        assert_eq!(flat_row(flat, "f"), None);
    }

    #[test]
    fn the_program_runs_under_sh_with_a_gmon_prefix() {
        let words = [r#"/bin/x"#, r#"a b"#, r#"$HOME "q" \ `c`"#].map(String::from);
        let line = &with_gmon_prefix(&words, None)[2];
        assert_eq!(
            line,
            r#"mkdir /tmp/gmon && GMON_OUT_PREFIX=/tmp/gmon/gmon.out "/bin/x" "a b" "\$HOME \"q\" \\ \`c\`""#
        );
        let line = &with_gmon_prefix(&words[..1], Some(PRELOAD))[2];
        assert_eq!(
            line,
            r#"mkdir /tmp/gmon && LD_PRELOAD=/lib/libgmon.so GMON_OUT_PREFIX=/tmp/gmon/gmon.out "/bin/x""#
        );
    }

    #[test]
    fn the_first_process_or_all_of_them() {
        let files: Vec<PathBuf> = ["out/tmp_gmon_gmon.out.4", "out/tmp_gmon_gmon.out.12"]
            .map(PathBuf::from)
            .to_vec();
        assert_eq!(pid_of(&files[1]), Some(12));
        assert_eq!(pid_of(Path::new("gmon.out")), None);
        let exported = [
            files[1].clone(),
            PathBuf::from("out/gmon.out"),
            files[0].clone(),
        ];
        assert_eq!(per_process(&exported), files, "first process first");
        assert_eq!(choose_profiles(&files, false), files[..1]);
        assert_eq!(choose_profiles(&files, true), files);
    }

    #[test]
    fn c_sources_come_first_then_the_arguments() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (sources, args) = split_sources(&words(&["a.c", "lib/b.c", "--", "-n", "3"]));
        assert_eq!(sources, [PathBuf::from("a.c"), PathBuf::from("lib/b.c")]);
        assert_eq!(args, ["-n", "3"]);
        let (sources, args) = split_sources(&words(&["a.c", "x.c.txt"]));
        assert_eq!((sources.len(), args), (1, words(&["x.c.txt"])));
        let (sources, args) = split_sources(&words(&["/bin/callgraph", "--", "a.c"]));
        assert!(sources.is_empty());
        assert_eq!(
            args,
            ["/bin/callgraph", "--", "a.c"],
            "not sources: left alone"
        );
    }

    #[test]
    fn a_host_elf_is_added_as_bin_name() {
        let path = std::env::temp_dir().join(format!("xtask-prof-{}", std::process::id()));
        std::fs::write(&path, b"\x7fELF\x02\x01\x01").unwrap();
        let host = path.display().to_string();
        let mut opts = with_program(&host);
        assert_eq!(resolve_program(&mut opts).unwrap(), path);
        let guest = format!("/bin/{}", path.file_name().unwrap().to_string_lossy());
        assert_eq!(opts.program, [guest.clone(), "arg".to_string()]);
        assert_eq!(opts.add, [(host, guest.clone())]);
        // gprof reads the file that ran.
        assert_eq!(host_elf(&opts, &guest).unwrap(), path);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_guest_path_given_with_add_is_not_added_again() {
        let mut opts = with_program("/opt/work");
        opts.add
            .push(("build/work".to_string(), "/opt/work".to_string()));
        assert_eq!(
            resolve_program(&mut opts).unwrap(),
            PathBuf::from("build/work")
        );
        assert_eq!(opts.add.len(), 1);
        assert_eq!(
            host_elf(&opts, "/opt/work").unwrap(),
            PathBuf::from("build/work")
        );
    }

    #[test]
    fn what_is_not_a_program_is_one_line() {
        let not_elf = std::env::temp_dir().join(format!("xtask-prof-text-{}", std::process::id()));
        std::fs::write(&not_elf, "int main;").unwrap();
        let err = resolve_program(&mut with_program(&not_elf.display().to_string())).unwrap_err();
        assert!(err.ends_with("is not an ELF executable"), "{err}");
        std::fs::remove_file(&not_elf).unwrap();
        let err = resolve_program(&mut with_program("no/such/file")).unwrap_err();
        assert!(
            err.starts_with("no/such/file: not a guest program"),
            "{err}"
        );
        assert!(!err.contains('\n'));
        let err = resolve_program(&mut Options::default()).unwrap_err();
        assert!(err.starts_with("prof needs a program"), "{err}");
    }
}
