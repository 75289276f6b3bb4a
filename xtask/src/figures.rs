//! The book's figures: each `docs/book/figures/NAME.dot` (graphviz) is the
//! source of `NAME.svg` beside it. `cargo xtask figures` remakes every SVG;
//! the docs check remakes each in memory and fails when the file on disk
//! differs (a source edited without its picture, or the other way), when
//! an SVG has no source, or when a chapter shows a figure that is not
//! there. graphviz comes from Debian, installed on demand like QEMU; its
//! output is the same from run to run for the same version, which is what
//! lets the check compare bytes.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::build;

/// Where the figures live, under the book's own folder so that mdBook
/// copies them with the chapters.
pub const DIR: &str = "docs/book/figures";

/// Every figure's source, sorted.
pub fn sources(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(DIR))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "dot"))
        .collect();
    found.sort();
    found
}

/// The SVG graphviz makes of `source`.
pub fn render(source: &Path) -> Result<Vec<u8>, String> {
    let dot = crate::setup::ensure("dot", "graphviz")?;
    let out = Command::new(dot)
        .arg("-Tsvg")
        .arg(source)
        .output()
        .map_err(|e| format!("cannot run dot: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "dot failed on {}: {}",
            source.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// `cargo xtask figures`: remakes every SVG from its source.
pub fn run() -> Result<ExitCode, String> {
    let root = build::root();
    for source in sources(&root) {
        let svg = source.with_extension("svg");
        std::fs::write(&svg, render(&source)?)
            .map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
        println!("{}", svg.strip_prefix(&root).unwrap_or(&svg).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// What the docs check finds wrong with the figures (empty: nothing).
pub fn check(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for source in sources(root) {
        let svg = source.with_extension("svg");
        let name = svg
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        match (render(&source), std::fs::read(&svg)) {
            (Err(e), _) => problems.push(e),
            (_, Err(_)) => problems.push(format!("{name} is missing: run cargo xtask figures")),
            (Ok(made), Ok(kept)) if made != kept => problems.push(format!(
                "{name} is not what its source draws: run cargo xtask figures"
            )),
            _ => {}
        }
    }
    let dir = root.join(DIR);
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "svg") && !path.with_extension("dot").exists() {
            problems.push(format!("{} has no .dot source", path.display()));
        }
    }
    // Every figure is shown by a chapter, and every figure shown exists.
    let chapters = std::fs::read_dir(root.join("docs/book"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect::<Vec<_>>()
        .join("\n");
    for source in sources(root) {
        let name = source.with_extension("svg");
        let name = name.file_name().unwrap_or_default().to_string_lossy();
        if !chapters.contains(&format!("(figures/{name})")) {
            problems.push(format!("no chapter shows figures/{name}"));
        }
    }
    for shown in chapters.split("](figures/").skip(1) {
        let name = shown.split(')').next().unwrap_or_default();
        if !dir.join(name).exists() {
            problems.push(format!(
                "a chapter shows figures/{name}, which is not there"
            ));
        }
    }
    problems
}
