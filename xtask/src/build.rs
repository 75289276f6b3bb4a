//! Building: the kernel, the ramdisk, and the disk image that holds both.
//!
//! The kernel and the user programs are `x86_64-unknown-none` binaries built
//! by a nested cargo. The ramdisk is a newc cpio archive (written with
//! `kcore::cpio`, the same code the kernel reads it with) holding every user
//! program under `bin/` (debug info stripped: the host keeps the full ELF for
//! gdb and gprof), files added with `--add`, and `etc/boot.conf`, the boot
//! options for this boot. The `boot` crate then wraps kernel and ramdisk into
//! a BIOS or UEFI disk image under `target/images/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::options::Options;

pub const TARGET: &str = "x86_64-unknown-none";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// `cargo build --quiet --target x86_64-unknown-none` of `packages`, in
/// release mode with `--release`; `target_dir` is relative to the root.
fn cargo_build(opts: &Options, packages: &[&str], target_dir: &str) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root()).args([
        "build",
        "--quiet",
        "--target",
        TARGET,
        "--target-dir",
        target_dir,
    ]);
    for package in packages {
        cmd.args(["--package", package]);
    }
    if opts.release {
        cmd.arg("--release");
    }
    cmd
}

/// Where cargo puts the `x86_64-unknown-none` artifacts under `target_dir`.
fn artifacts(opts: &Options, target_dir: &str) -> PathBuf {
    root()
        .join(target_dir)
        .join(TARGET)
        .join(if opts.release { "release" } else { "debug" })
}

/// How long a step may run before xtask says what it is doing: a build
/// with nothing to do is silent, a first build (minutes) is not.
const SAY_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs a command, turning failure into a one-line error. A step that takes
/// longer than `SAY_AFTER` is named when it starts to take long, and its
/// time given when it ends.
pub fn run_checked(cmd: &mut Command, what: &str) -> Result<(), String> {
    let start = std::time::Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    let mut said = false;
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("waiting for {what}: {e}"))?
        {
            break status;
        }
        if !said && start.elapsed() > SAY_AFTER {
            eprintln!("xtask: {what}...");
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if said {
        eprintln!("xtask: {what}: {:.0} s", start.elapsed().as_secs_f64());
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Where the profiled kernel (`--kprof`) is built: a target directory of
/// its own, so that switching between it and the plain kernel rebuilds
/// neither.
const KPROF_TARGET_DIR: &str = "target/mcount";

/// Builds the kernel and returns the path of its ELF. With `--kprof`, the
/// profiled kernel: feature `mcount` (kernel/src/arch/mcount.rs) and
/// `-Z instrument-mcount`, given through `cargo rustc` to the kernel crate
/// alone, so that only the kernel's own functions call mcount (kcore, the
/// other crates and the Rust library it links are not instrumented).
pub fn kernel(opts: &Options) -> Result<PathBuf, String> {
    if opts.kprof {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.current_dir(root()).args([
            "rustc",
            "--quiet",
            "--package",
            "kernel",
            "--bin",
            "kernel",
            "--features",
            "mcount",
            "--target",
            TARGET,
            "--target-dir",
            KPROF_TARGET_DIR,
        ]);
        if opts.release {
            cmd.arg("--release");
        }
        cmd.args(["--", "-Z", "instrument-mcount"]);
        run_checked(&mut cmd, "building the profiled kernel")?;
        return Ok(artifacts(opts, KPROF_TARGET_DIR).join("kernel"));
    }
    run_checked(
        &mut cargo_build(opts, &["kernel"], "target"),
        "building the kernel",
    )?;
    Ok(artifacts(opts, "target").join("kernel"))
}

/// The bins of a package: its `src/bin/NAME.rs` files and `src/bin/NAME/main.rs` directories.
fn bin_names(package_dir: &str) -> Result<Vec<String>, String> {
    let src = root().join(package_dir).join("src/bin");
    // Cargo's rule: `NAME.rs`, or a directory `NAME/` with a `main.rs`
    // (a program in several files, as the shell).
    let mut names: Vec<String> = std::fs::read_dir(&src)
        .map_err(|e| format!("cannot list {}: {e}", src.display()))?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_str()?.to_string();
            match name.strip_suffix(".rs") {
                Some(stem) => Some(stem.to_string()),
                None => e.path().join("main.rs").is_file().then_some(name),
            }
        })
        .collect();
    names.sort();
    Ok(names)
}

/// Builds the user programs; returns (name, ELF path) for each. The programs
/// in `user/profiled` are built apart, in `target/profiled`, with
/// `-Z instrument-mcount` (every function calls mcount) and libc-lite's gprof
/// start-up, so no other program pays for profiling.
pub fn user_programs(opts: &Options) -> Result<Vec<(String, PathBuf)>, String> {
    run_checked(
        &mut cargo_build(opts, &["user", "libc-lite"], "target"),
        "building the user programs",
    )?;
    let plain = artifacts(opts, "target");
    let mut programs: Vec<(String, PathBuf)> = bin_names("user")?
        .into_iter()
        .map(|n| (n.clone(), plain.join(n)))
        .collect();

    let mut cmd = cargo_build(opts, &["profiled", "libc-lite"], "target/profiled");
    cmd.env("RUSTFLAGS", PROFILED_RUSTFLAGS);
    run_checked(&mut cmd, "building the profiled example programs")?;
    let profiled = artifacts(opts, "target/profiled");
    programs.extend(
        bin_names("user/profiled")?
            .into_iter()
            .map(|n| (n.clone(), profiled.join(n))),
    );
    programs.extend(c_programs("user/c", &plain.join("liblibc_lite.a"), false)?);
    programs.extend(c_programs(
        "user/profiled/c",
        &profiled.join("liblibc_lite.a"),
        true,
    )?);
    // Without musl-gcc (and no root to install it) the kernel still boots;
    // only the musl suite, which asks again, fails.
    match musl_programs() {
        Ok(musl) => programs.extend(
            musl.into_iter()
                .map(|(name, path)| (format!("musl-{name}"), path)),
        ),
        Err(why) => eprintln!("xtask: leaving out the musl programs: {why}"),
    }
    Ok(programs)
}

/// The C sources of the musl conformance programs.
pub const MUSL_DIR: &str = "tests/musl";

/// Compiles every `tests/musl/*.c` with `musl-gcc -static` (Debian's
/// musl-tools, installed if missing) into `target/musl/NAME`: ordinary Linux
/// binaries, which run unchanged on the host and, as `/bin/musl-NAME`, on
/// this kernel.
pub fn musl_programs() -> Result<Vec<(String, PathBuf)>, String> {
    let sources = c_sources(&root().join(MUSL_DIR));
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    let cc = crate::setup::ensure("musl-gcc", "musl-tools")?;
    let out_dir = root().join("target/musl");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let mut programs = Vec::new();
    for source in sources {
        let name = stem(&source);
        let out = out_dir.join(&name);
        if !up_to_date(&out, &[&source]) {
            let mut cmd = Command::new(&cc);
            cmd.args(["-static", "-O2", "-g", "-w", "-o"])
                .arg(&out)
                .arg(&source)
                .arg("-lm");
            run_checked(&mut cmd, &format!("compiling {}", source.display()))?;
        }
        programs.push((name, out));
    }
    Ok(programs)
}

/// The C sources of the dynamically linked programs.
pub const DYNAMIC_DIR: &str = "tests/dynamic";

/// How each `tests/dynamic/*.c` is built, as a user builds a program on a
/// Debian machine: (name suffix, compiler, flags). Each build names its own
/// interpreter: musl's loader is its libc, glibc's is ld-linux-x86-64.so.2.
const DYNAMIC_BUILDS: &[(&str, &str, &str, &[&str])] = &[
    ("musl", "musl-gcc", "musl-tools", &["-fPIE", "-pie"]),
    ("glibc", "gcc", "gcc", &["-fPIE", "-pie"]),
    ("glibc-nopie", "gcc", "gcc", &["-fno-PIE", "-no-pie"]),
];

/// A program built for the host, and what it needs at run time: the
/// host's files, each at the same path in the guest (its interpreter, and
/// for glibc the libraries `ldd` lists).
pub struct Dynamic {
    pub name: String,
    pub elf: PathBuf,
    pub libraries: Vec<PathBuf>,
}

/// Compiles every `tests/dynamic/*.c` each way of `DYNAMIC_BUILDS` into
/// `target/dynamic/NAME-BUILD`: ordinary dynamically linked Linux programs,
/// which run unchanged on the host and on this kernel once their loader
/// and libraries are there.
pub fn dynamic_programs() -> Result<Vec<Dynamic>, String> {
    let out_dir = root().join("target/dynamic");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let mut programs = Vec::new();
    for source in c_sources(&root().join(DYNAMIC_DIR)) {
        for (suffix, compiler, package, flags) in DYNAMIC_BUILDS {
            let cc = crate::setup::ensure(compiler, package)?;
            let name = format!("{}-{suffix}", stem(&source));
            let out = out_dir.join(&name);
            if !up_to_date(&out, &[&source]) {
                let mut cmd = Command::new(&cc);
                cmd.args(*flags)
                    .args(["-O2", "-g", "-w", "-pthread", "-o"])
                    .arg(&out)
                    .arg(&source);
                run_checked(&mut cmd, &format!("compiling {}", source.display()))?;
            }
            let libraries = runtime_files(&out)?;
            programs.push(Dynamic {
                name,
                elf: out,
                libraries,
            });
        }
    }
    Ok(programs)
}

/// The interpreter `elf` names in its `PT_INTERP`, read with the kernel's
/// own parser.
fn interpreter(elf: &Path) -> Result<PathBuf, String> {
    let bytes = std::fs::read(elf).map_err(|e| format!("{}: {e}", elf.display()))?;
    let exe = kcore::elf::parse(&bytes, bytes.len() as u64)
        .map_err(|e| format!("{}: {}", elf.display(), e.message()))?;
    let name = exe
        .interp
        .ok_or_else(|| format!("{} names no interpreter", elf.display()))?;
    let start = usize::try_from(name.offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let end = usize::try_from(name.offset + name.len)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let path = kcore::elf::interp_path(&bytes[start..end], name.len)
        .map_err(|e| format!("{}: its PT_INTERP: {}", elf.display(), e.message()))?;
    Ok(PathBuf::from(path))
}

/// What a dynamically linked host program needs in the guest, each file to
/// go at its host path there: its interpreter, and for glibc's (whose
/// loader is `ld-linux-*`) the libraries `ldd` finds. musl's loader is its
/// libc, so a musl program needs nothing more.
pub fn runtime_files(elf: &Path) -> Result<Vec<PathBuf>, String> {
    let loader = interpreter(elf)?;
    let glibc = loader
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("ld-linux"));
    let mut files = vec![loader];
    if glibc {
        files.extend(ldd_libraries(elf)?);
    }
    Ok(files)
}

/// `added` (host file, guest path) with what each dynamically linked
/// program among them needs to run (`runtime_files`, at the host's paths),
/// unless a file is already there or missing on the host: so `--add
/// ./a.out` of a program built by plain `gcc` runs as it does on the host.
/// A program whose loader cannot be found (a test of exec's ENOENT, say)
/// is added as it is.
pub fn with_runtimes(added: &[(String, String)]) -> Vec<(String, String)> {
    let mut all = added.to_vec();
    for (host, _) in added {
        let Ok(files) = runtime_files(Path::new(host)) else {
            continue;
        };
        for file in files.iter().filter(|f| f.is_file()) {
            let path = file.display().to_string();
            if !all.iter().any(|(_, guest)| *guest == path) {
                all.push((path.clone(), path));
            }
        }
    }
    all
}

/// Whether `elf` names an interpreter (a dynamically linked program).
pub fn is_dynamic(elf: &Path) -> bool {
    interpreter(elf).is_ok()
}

/// The libraries glibc's loader finds for `elf` on the host (`ldd`'s
/// `NAME => PATH` lines).
fn ldd_libraries(elf: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("ldd")
        .arg(elf)
        .output()
        .map_err(|e| format!("cannot run ldd: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "ldd {}: {}",
            elf.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once("=> ")?.1.split_whitespace().next())
        .filter(|path| path.starts_with('/'))
        .map(PathBuf::from)
        .collect())
}

/// Compiles `source` the way a Debian user builds a program for gprof,
/// `gcc -pg -static -O2 -g`: glibc's own gcrt1.o and gmon, which sample
/// through SIGPROF (libc6-dev, installed if missing). Returns the ELF,
/// `target/glibc/NAME`, which runs unchanged on the host and on this kernel.
pub fn glibc_profiled(source: &Path) -> Result<PathBuf, String> {
    let gcc = crate::setup::ensure("gcc", "gcc")?;
    crate::setup::ensure("/usr/lib/x86_64-linux-gnu/gcrt1.o", "libc6-dev")?;
    let out_dir = root().join("target/glibc");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let out = out_dir.join(stem(source));
    if !up_to_date(&out, &[source]) {
        let mut cmd = Command::new(gcc);
        cmd.args(["-pg", "-static", "-O2", "-g", "-o"])
            .arg(&out)
            .arg(source);
        run_checked(&mut cmd, &format!("compiling {}", source.display()))?;
    }
    Ok(out)
}

/// Builds libgmon.a, gprof's runtime for musl programs (libc-lite's gmon
/// source compiled for them, `libc-lite/musl-gmon`); returns the directory
/// that holds it, for `-L`.
pub fn musl_gmon(opts: &Options) -> Result<PathBuf, String> {
    run_checked(
        &mut cargo_build(opts, &["musl-gmon"], "target"),
        "building libgmon.a (libc-lite/musl-gmon)",
    )?;
    Ok(artifacts(opts, "target"))
}

/// The host's target, for what runs in the guest as a Linux program would.
pub const LINUX_TARGET: &str = "x86_64-unknown-linux-gnu";

/// Builds libgmon.so, gprof's runtime with the native profil for
/// dynamically linked glibc programs, preloaded in their place of glibc's
/// own (`libc-lite/musl-gmon` with feature `preload`, a shared object for
/// the host's target); returns its path.
pub fn gmon_preload(opts: &Options) -> Result<PathBuf, String> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root()).args([
        "rustc",
        "--quiet",
        "--package",
        "musl-gmon",
        "--lib",
        "--crate-type",
        "cdylib",
        "--features",
        "preload",
        "--target",
        LINUX_TARGET,
        "--target-dir",
        "target",
    ]);
    if opts.release {
        cmd.arg("--release");
    }
    run_checked(
        &mut cmd,
        "building libgmon.so (libc-lite/musl-gmon, feature preload)",
    )?;
    Ok(root()
        .join("target")
        .join(LINUX_TARGET)
        .join(if opts.release { "release" } else { "debug" })
        .join("libgmon.so"))
}

/// Compiles `source` as a Debian user builds a program for gprof without
/// `-static`: `gcc -pg -O2 -g`, a PIE linked against glibc's libc.so.6
/// (libc6-dev, installed if missing). Returns `target/glibc/NAME-dynamic`.
pub fn glibc_profiled_dynamic(source: &Path) -> Result<PathBuf, String> {
    let gcc = crate::setup::ensure("gcc", "gcc")?;
    crate::setup::ensure("/usr/lib/x86_64-linux-gnu/gcrt1.o", "libc6-dev")?;
    let out_dir = root().join("target/glibc");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let out = out_dir.join(format!("{}-dynamic", stem(source)));
    if !up_to_date(&out, &[source]) {
        let mut cmd = Command::new(gcc);
        cmd.args(["-pg", "-O2", "-g", "-o"]).arg(&out).arg(source);
        run_checked(&mut cmd, &format!("compiling {}", source.display()))?;
    }
    Ok(out)
}

/// The flags `musl_profiled` compiles with unless told otherwise: what
/// `gcc -pg` users write, optimised, with the line table gprof -l reads.
pub const PROF_CFLAGS: &str = "-O2 -g";

/// Compiles `sources` into one static musl program for gprof,
/// `musl-gcc -pg -static CFLAGS ... -lgmon -lm`, as `target/prof/NAME` (the
/// first source's name): it runs on this kernel with the native profil
/// and writes gmon.out at exit. A source that does not compile is the
/// compiler's messages and one line.
pub fn musl_profiled(opts: &Options, sources: &[PathBuf], cflags: &str) -> Result<PathBuf, String> {
    let cc = crate::setup::ensure("musl-gcc", "musl-tools")?;
    let gmon = musl_gmon(opts)?;
    let first = sources.first().ok_or("no C source to compile")?;
    for source in sources {
        if !source.is_file() {
            return Err(format!("{}: no such C source", source.display()));
        }
    }
    let out_dir = root().join("target/prof");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let out = out_dir.join(stem(first));
    let mut cmd = Command::new(cc);
    cmd.args(["-pg", "-static"])
        .args(cflags.split_whitespace())
        .arg("-o")
        .arg(&out)
        .args(sources)
        .arg("-L")
        .arg(&gmon)
        .args(["-lgmon", "-lm"]);
    let names: Vec<String> = sources.iter().map(|s| s.display().to_string()).collect();
    run_checked(&mut cmd, &format!("compiling {}", names.join(" ")))?;
    Ok(out)
}

/// The `.c` files in `dir`, sorted (none if it does not exist).
fn c_sources(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut sources: Vec<PathBuf> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    sources
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("c")
        .to_string()
}

/// Compiles every `DIR/*.c` with the host's gcc into a static program for
/// our kernel, linked with libc-lite's static library (`-pg` and the
/// profiled library for `profiled`). The kernel saves the FPU/SSE registers,
/// so C code may compute in floating point; libc-lite's printf has no `%f`.
fn c_programs(dir: &str, libc: &Path, profiled: bool) -> Result<Vec<(String, PathBuf)>, String> {
    let sources = c_sources(&root().join(dir));
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    let gcc = crate::setup::ensure("gcc", "gcc")?;
    let out_dir = root().join("target/c");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    // xtask itself is an input: it holds C_FLAGS.
    let xtask = std::env::current_exe().unwrap_or_default();
    let mut programs = Vec::new();
    for source in sources {
        let name = stem(&source);
        let out = out_dir.join(&name);
        if up_to_date(
            &out,
            &[&source, libc, &root().join("libc-lite/include"), &xtask],
        ) {
            programs.push((name, out));
            continue;
        }
        let mut cmd = Command::new(&gcc);
        cmd.args(C_FLAGS)
            .arg("-I")
            .arg(root().join("libc-lite/include"));
        if profiled {
            cmd.arg("-pg");
        }
        cmd.arg("-o").arg(&out).arg(&source).arg(libc).arg("-lgcc");
        run_checked(&mut cmd, &format!("compiling {}", source.display()))?;
        programs.push((name, out));
    }
    Ok(programs)
}

/// One C program for the kernel, from `source` (outside `user/c`), linked
/// with libc-lite as the programs of `user/c` are: the labs' C checks.
pub fn c_program(opts: &Options, source: &Path) -> Result<PathBuf, String> {
    user_programs(opts)?;
    let libc = artifacts(opts, "target").join("liblibc_lite.a");
    let gcc = crate::setup::ensure("gcc", "gcc")?;
    let out_dir = root().join("target/c/labs");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let out = out_dir.join(stem(source));
    let mut cmd = Command::new(&gcc);
    cmd.args(C_FLAGS)
        .arg("-I")
        .arg(root().join("libc-lite/include"))
        .arg("-o")
        .arg(&out)
        .arg(source)
        .arg(&libc)
        .arg("-lgcc");
    run_checked(&mut cmd, &format!("compiling {}", source.display()))?;
    Ok(out)
}

/// Whether `out` exists and is newer than every input (a directory counts
/// by its newest file), so gcc need not run again.
fn up_to_date(out: &Path, inputs: &[&Path]) -> bool {
    fn newest(path: &Path) -> Option<std::time::SystemTime> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_dir() {
            return meta.modified().ok();
        }
        std::fs::read_dir(path)
            .ok()?
            .flatten()
            .map(|e| newest(&e.path()))
            .try_fold(meta.modified().ok()?, |acc, t| Some(acc.max(t?)))
    }
    let Some(built) = std::fs::metadata(out).ok().and_then(|m| m.modified().ok()) else {
        return false;
    };
    inputs
        .iter()
        .all(|input| newest(input).is_some_and(|t| t <= built))
}

/// How C programs for the kernel are compiled: freestanding, static, no PIE
/// (linked at 0x400000), frame pointers (mcount and gdb use them).
pub const C_FLAGS: &[&str] = &[
    "-std=gnu11",
    "-ffreestanding",
    "-nostdlib",
    "-static",
    "-no-pie",
    "-fno-pic",
    "-fno-stack-protector",
    "-fno-omit-frame-pointer",
    "-O1",
    "-g",
    "-Wall",
    "-Werror",
];

/// RUSTFLAGS of the profiled build: the workspace's target flags (from
/// .cargo/config.toml, which RUSTFLAGS replaces) plus mcount calls.
const PROFILED_RUSTFLAGS: &str =
    "-C relocation-model=static -C force-frame-pointers=yes -Z instrument-mcount";

/// The ELF without its debug sections (smaller ramdisk); the original if the
/// toolchain's llvm-objcopy is not there.
fn stripped(elf: &Path) -> Result<Vec<u8>, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let Some(objcopy) = llvm_tool("llvm-objcopy") else {
        return read(elf);
    };
    let dir = root().join("target/images");
    // A fresh clone strips its programs before anything else made the
    // folder; without it every objcopy fails (and the image keeps the
    // debug sections).
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let out = dir.join(format!(
        "{}.stripped",
        elf.file_name().unwrap_or_default().to_string_lossy()
    ));
    let ok = Command::new(objcopy)
        .arg("--strip-debug")
        .arg(elf)
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    if ok { read(&out) } else { read(elf) }
}

/// A tool from the pinned toolchain's `llvm-tools` component.
pub fn llvm_tool(name: &str) -> Option<PathBuf> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(root())
        .output()
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let path = sysroot
        .join("lib/rustlib/x86_64-unknown-linux-gnu/bin")
        .join(name);
    path.exists().then_some(path)
}

/// What one boot should do: its boot options, and a name for its files.
#[derive(Clone, Debug)]
pub struct Boot {
    pub name: String,
    pub conf: String,
}

impl Boot {
    fn with(opts: &Options, name: &str, extra: &str) -> Boot {
        let mut conf = format!("hz={}\ntick={}\n", opts.hz, opts.tick.name());
        for arg in &opts.program {
            conf += "init_arg=";
            kcore::bootopts::encode_arg(arg, &mut conf).expect("writing to a String");
            conf += "\n";
        }
        if !opts.export.is_empty() {
            conf += &format!("export={}\n", opts.export.join(","));
        }
        for line in &opts.boot {
            conf += line;
            conf += "\n";
        }
        conf += extra;
        Boot {
            name: name.to_string(),
            conf,
        }
    }

    /// A normal boot with the user's options.
    pub fn normal(opts: &Options) -> Boot {
        Boot::with(opts, "run", "")
    }

    /// A test boot: the user's accelerator and firmware, with these options.
    pub fn test(opts: &Options, name: &str, extra: &str) -> Boot {
        Boot::with(opts, name, extra)
    }
}

/// The root disk's /etc/motd: a text file on the disk, for a first
/// `cat` (and docs/gdb.md's walk-through from read(2) to the disk).
const MOTD: &str = "profkern: this file is on the disk, /dev/vda, an ext3 volume.\n";

/// The root disk `cargo xtask run` boots on: `target/root.img`, an ext3
/// image `mke2fs -d` makes from the user programs (in /bin) and
/// /etc/motd, with the directories init mounts on (/dev, /proc, /tmp)
/// and /root, /mnt. Made
/// on first use, or again with `fresh`; otherwise kept, so what a boot
/// writes is there in the next, and only the programs in /bin that this
/// build changed are written over (`refresh_programs`).
pub fn root_image_path() -> PathBuf {
    root().join("target/root.img")
}

/// Makes or refreshes the root disk at `image`: target/root.img
/// (`root_image_path`) for `run` and `gdb`; the test suites make fresh
/// ones of their own.
pub fn root_image_at(opts: &Options, image: &Path, fresh: bool) -> Result<PathBuf, String> {
    let image = image.to_path_buf();
    let programs = user_programs(opts)?;
    if image.exists() && !fresh {
        refresh_programs(&image, &programs)?;
        return Ok(image);
    }
    let tree = image.with_extension("tree");
    let _ = std::fs::remove_dir_all(&tree);
    for dir in ["bin", "etc", "dev", "proc", "tmp", "mnt", "root"] {
        std::fs::create_dir_all(tree.join(dir))
            .map_err(|e| format!("cannot create {}: {e}", tree.display()))?;
    }
    for (name, elf) in &programs {
        let path = tree.join("bin").join(name);
        std::fs::write(&path, stripped(elf)?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| format!("{e}"))?;
    }
    let motd = tree.join("etc/motd");
    std::fs::write(&motd, MOTD).map_err(|e| format!("cannot write {}: {e}", motd.display()))?;
    std::fs::set_permissions(
        tree.join("tmp"),
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .map_err(|e| format!("{e}"))?;
    println!(
        "xtask: making {} (ext3, 256 MiB) from the programs",
        image.display()
    );
    crate::setup::make_ext3(&image, "256M", 4096, Some(&tree), &["-L", "profkern"])?;
    Ok(image)
}

/// Brings the programs in the root disk's /bin up to date with this build,
/// with debugfs (the image is not mounted: QEMU is not running), leaving
/// every other file as the last boot left it. A disk a crash left with a
/// journal to replay is replayed first (`e2fsck -p`).
fn refresh_programs(image: &Path, programs: &[(String, PathBuf)]) -> Result<(), String> {
    let work = image.with_extension("refresh");
    let _ = std::fs::remove_dir_all(&work);
    for dir in ["new", "old"] {
        std::fs::create_dir_all(work.join(dir)).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    let mut dump = String::new();
    for (name, elf) in programs {
        std::fs::write(work.join("new").join(name), stripped(elf)?).map_err(|e| e.to_string())?;
        dump.push_str(&format!(
            "dump /bin/{name} {}\n",
            work.join("old").join(name).display()
        ));
    }
    let debugfs = |args: &[&str], script: &str| -> Result<(), String> {
        let script_file = work.join("script");
        std::fs::write(&script_file, script).map_err(|e| e.to_string())?;
        let out = Command::new(crate::setup::e2fs_tool("debugfs")?)
            .args(args)
            .arg("-f")
            .arg(&script_file)
            .arg(image)
            .output()
            .map_err(|e| format!("cannot run debugfs: {e}"))?;
        if !out.status.success() {
            return Err(format!("debugfs: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(())
    };
    debugfs(&[], &dump)?;
    let stale: Vec<&String> = programs
        .iter()
        .map(|(name, _)| name)
        .filter(|name| {
            std::fs::read(work.join("old").join(name)).ok()
                != std::fs::read(work.join("new").join(name)).ok()
        })
        .collect();
    if !stale.is_empty() {
        let header = Command::new(crate::setup::e2fs_tool("dumpe2fs")?)
            .arg("-h")
            .arg(image)
            .output()
            .map_err(|e| format!("cannot run dumpe2fs: {e}"))?;
        if String::from_utf8_lossy(&header.stdout).contains("needs_recovery") {
            let _ = Command::new(crate::setup::e2fs_tool("e2fsck")?)
                .arg("-p")
                .arg(image)
                .output();
        }
        let mut write = String::from("cd /bin\n");
        for name in &stale {
            let new = work.join("new").join(name);
            write.push_str(&format!(
                "rm {name}\nwrite {} {name}\nsif {name} mode 0100755\nsif {name} uid 0\nsif {name} gid 0\n",
                new.display()
            ));
        }
        debugfs(&["-w"], &write)?;
        println!(
            "xtask: {}: {} program(s) in /bin brought up to this build",
            image.display(),
            stale.len()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The ramdisk archive: programs, added files, and the boot options.
pub fn ramdisk(opts: &Options, boot: &Boot) -> Result<Vec<u8>, String> {
    use kcore::cpio::{S_IFDIR, S_IFREG, write_entry, write_trailer};
    let mut out = Vec::new();
    let mut ino = 0;
    let mut entry = |out: &mut Vec<u8>, name: &str, mode: u32, data: &[u8]| {
        ino += 1;
        write_entry(out, ino, name, mode, data);
    };
    entry(&mut out, "bin", S_IFDIR | 0o755, &[]);
    entry(&mut out, "etc", S_IFDIR | 0o755, &[]);
    for (name, elf) in user_programs(opts)? {
        entry(
            &mut out,
            &format!("bin/{name}"),
            S_IFREG | 0o755,
            &stripped(&elf)?,
        );
    }
    for (host, guest) in &with_runtimes(&opts.add) {
        let data = std::fs::read(host).map_err(|e| format!("--add {host}: {e}"))?;
        entry(
            &mut out,
            guest.trim_start_matches('/'),
            S_IFREG | 0o755,
            &data,
        );
    }
    entry(
        &mut out,
        "etc/boot.conf",
        S_IFREG | 0o644,
        boot.conf.as_bytes(),
    );
    write_trailer(&mut out);
    Ok(out)
}

/// Builds kernel, ramdisk and disk image for `boot`; returns the image path.
pub fn image(opts: &Options, boot: &Boot) -> Result<PathBuf, String> {
    let kernel = kernel(opts)?;
    let images = root().join("target").join("images");
    std::fs::create_dir_all(&images)
        .map_err(|e| format!("cannot create {}: {e}", images.display()))?;
    let dir = root().join("target").join("images");
    let ramdisk_path = dir.join(format!("{}.cpio", boot.name));
    std::fs::write(&ramdisk_path, ramdisk(opts, boot)?)
        .map_err(|e| format!("cannot write {}: {e}", ramdisk_path.display()))?;
    let suffix = if opts.uefi { "uefi" } else { "bios" };
    let image = dir.join(format!("{}-{suffix}.img", boot.name));
    // The image gets the kernel without debug info (the bootloader reads it
    // through real-mode BIOS calls, so size is boot time); gdb uses the full ELF.
    let kernel_for_image = dir.join("kernel.stripped");
    std::fs::write(&kernel_for_image, stripped(&kernel)?)
        .map_err(|e| format!("cannot write {}: {e}", kernel_for_image.display()))?;
    let mut write = Command::new(image_tool()?);
    write
        .arg(suffix)
        .arg(&kernel_for_image)
        .arg(&ramdisk_path)
        .arg(&image);
    if opts.verbose {
        write.arg("--log");
    }
    let out = write
        .output()
        .map_err(|e| format!("cannot run the disk image tool: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(image)
}

/// The disk image writer (`boot/src/main.rs`), built on first use: its
/// first build compiles the bootloader's BIOS and UEFI stages, the longest
/// step of a fresh clone's first run, so it is named and timed here rather
/// than hidden inside xtask's own (quiet) build.
fn image_tool() -> Result<PathBuf, String> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--quiet", "--package", "boot", "--bin", "boot"])
        .current_dir(root());
    run_checked(
        &mut cmd,
        "building the disk image tool (the bootloader's stages: a minute or two the first time)",
    )?;
    Ok(root().join("target/debug/boot"))
}

#[cfg(test)]
mod tests {
    use super::up_to_date;
    use std::time::{Duration, SystemTime};

    fn touch(path: &std::path::Path, age_secs: u64) {
        std::fs::write(path, b"x").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[test]
    fn boot_options_from_the_command_line_reach_boot_conf() {
        let opts = crate::options::Options {
            boot: vec!["lock=ticket".into(), "mode=selftest".into()],
            ..Default::default()
        };
        let conf = super::Boot::normal(&opts).conf;
        assert!(conf.contains("\nlock=ticket\nmode=selftest\n"), "{conf}");
        // A test's own options come after, so they win.
        let conf = super::Boot::test(&opts, "t", "lock=tas\n").conf;
        assert!(conf.ends_with("mode=selftest\nlock=tas\n"), "{conf}");
    }

    #[test]
    fn rebuilds_only_when_an_input_is_newer() {
        let dir = std::env::temp_dir().join(format!("up-to-date-{}", std::process::id()));
        let headers = dir.join("include");
        std::fs::create_dir_all(&headers).unwrap();
        let (source, header, out) = (dir.join("a.c"), headers.join("a.h"), dir.join("a"));
        touch(&source, 300);
        touch(&header, 300);
        // The directory's own time counts too (a header added or removed).
        let old = SystemTime::now() - Duration::from_secs(300);
        std::fs::File::open(&headers)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(!up_to_date(&out, &[&source, &headers]), "no output yet");
        touch(&out, 100);
        assert!(up_to_date(&out, &[&source, &headers]));
        touch(&header, 10);
        assert!(
            !up_to_date(&out, &[&source, &headers]),
            "a header in the directory changed"
        );
        touch(&out, 0);
        touch(&source, 0);
        std::fs::File::options()
            .write(true)
            .open(&source)
            .unwrap()
            .set_modified(SystemTime::now() + Duration::from_secs(5))
            .unwrap();
        assert!(
            !up_to_date(&out, &[&source, &headers]),
            "the source changed"
        );
        assert!(
            !up_to_date(&out, &[&dir.join("missing.c")]),
            "a missing input is never up to date"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dynamic_program_brings_its_loader_and_libc() {
        // xtask itself is linked against the host's glibc.
        let me = std::env::current_exe().unwrap().display().to_string();
        let text = std::env::temp_dir().join(format!("xtask-static-{}", std::process::id()));
        std::fs::write(&text, "not an ELF").unwrap();
        let text = text.display().to_string();
        let added = super::with_runtimes(&[
            (me.clone(), "/bin/xtask".into()),
            (text.clone(), "/bin/text".into()),
        ]);
        let guests: Vec<&str> = added.iter().map(|(_, g)| g.as_str()).collect();
        assert_eq!(guests[..2], ["/bin/xtask", "/bin/text"]);
        assert!(
            guests.iter().any(|g| g.contains("ld-linux")),
            "the loader: {guests:?}"
        );
        assert!(
            guests.iter().any(|g| g.ends_with("/libc.so.6")),
            "libc: {guests:?}"
        );
        assert!(added[2..].iter().all(|(host, guest)| host == guest));
        let again = super::with_runtimes(&added);
        assert_eq!(again, added, "nothing twice");
        std::fs::remove_file(&text).unwrap();
    }
}
