//! `cargo xtask prof PROGRAM [ARGS...]`: the classic Unix profiling path.
//!
//! Build everything, boot, run the program (a profiled build from
//! `user/profiled`: gcrt0 start-up and mcount in every function), bring its
//! `/gmon.out` home over the export channel, and run the host's GNU gprof on
//! the program's own ELF: flat profile and call graph. `--graph FILE.svg`
//! also draws the call graph with gprof2dot and graphviz.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use crate::build::{self, Boot};
use crate::options::Options;
use crate::{qemu, setup};

pub const GMON: &str = "/gmon.out";

/// The host ELF of guest program `program` (e.g. `/bin/callgraph`).
pub fn host_elf(opts: &Options, program: &str) -> Result<PathBuf, String> {
    let name = program.rsplit('/').next().unwrap_or(program);
    build::user_programs(opts)?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, path)| path)
        .ok_or_else(|| format!("no program '{name}' among the user programs (see user/src/bin and user/profiled/src/bin)"))
}

/// Runs `gprof -b ARGS ELF GMON`; returns its standard output, or an error
/// that includes anything gprof printed on stderr (a warning is an error).
pub fn gprof(elf: &Path, gmon: &Path, args: &[&str]) -> Result<String, String> {
    let gprof = setup::ensure("gprof", "binutils")?;
    let out = Command::new(gprof)
        .arg("-b")
        .args(args)
        .arg(elf)
        .arg(gmon)
        .output()
        .map_err(|e| format!("cannot run gprof: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.trim().is_empty() {
        return Err(format!("gprof failed ({}): {}", out.status, stderr.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Boots `opts.program` with /gmon.out exported; returns the host copy.
pub fn run_and_fetch(
    opts: &Options,
    echo: bool,
) -> Result<(qemu::Outcome, Option<PathBuf>), String> {
    let mut opts = opts.clone();
    opts.export = vec![GMON.to_string()];
    let image = build::image(&opts, &Boot::normal(&opts))?;
    let timeout = Duration::from_secs(opts.timeout.unwrap_or(300));
    let outcome = qemu::boot(&opts, &image, timeout, echo, &[])?;
    let gmon = qemu::unpack_exports(&opts)?.into_iter().next();
    Ok((outcome, gmon))
}

pub fn run(opts: &Options) -> Result<ExitCode, String> {
    let Some(program) = opts.program.first() else {
        return Err(
            "prof needs a program: cargo xtask prof PROGRAM [ARGS...], e.g. /bin/callgraph".into(),
        );
    };
    let elf = host_elf(opts, program)?;
    let (outcome, gmon) = run_and_fetch(opts, true)?;
    eprintln!("xtask: {}", outcome.ending.describe());
    let gmon = gmon.ok_or_else(|| {
        format!("{program} wrote no {GMON}: is it a profiled build (user/profiled), and did it exit normally?")
    })?;
    println!("{}", gprof(&elf, &gmon, &[])?);
    if let Some(svg) = &opts.graph {
        draw_graph(&elf, &gmon, svg)?;
        eprintln!("xtask: call graph drawn in {}", svg.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// gprof | gprof2dot | dot -Tsvg, installing gprof2dot (PyPI) and graphviz
/// (Debian) when missing.
fn draw_graph(elf: &Path, gmon: &Path, svg: &Path) -> Result<(), String> {
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
    let profile = gprof(elf, gmon, &[])?;
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
