//! `cargo xtask book`: the book as HTML, with mdBook.
//!
//! The chapters link to the project's other documents as they sit in the
//! repository (one folder up, in `docs/`), which is right on GitHub and in
//! an editor.
//! So the book is built from a copy, `target/book-src/`: the book's folder
//! (chapters, `SUMMARY.md`, `book.toml`, figures) and the documents of
//! `docs/` beside the chapters (the appendices), with the links between
//! them rewritten for that one folder. mdBook renders the copy into
//! `target/book/`, and every relative link and image of the HTML is then
//! followed: a link to nothing, or a figure that is not there, is an error.
//!
//! mdBook itself is installed once with `cargo install` into
//! `target/tools/` (the Rust ecosystem's own channel, as the toolchain
//! comes through rustup), at the version below.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::build;

/// The mdBook release the book is built with.
const MDBOOK_VERSION: &str = "0.5.4";

/// `docs/` documents that become the book's appendices.
const APPENDICES: [&str; 6] = [
    "gdb.md",
    "profil.md",
    "architecture.md",
    "syscalls.md",
    "performance.md",
    "security.md",
];

/// `cargo xtask book`.
pub fn run() -> Result<ExitCode, String> {
    let index = build_html()?;
    println!("{}", index.display());
    Ok(ExitCode::SUCCESS)
}

/// Builds the book and checks its links; returns the path of its first
/// page, or every broken link and missing figure.
pub fn build_html() -> Result<PathBuf, String> {
    let root = build::root();
    let mdbook = mdbook()?;
    let staging = root.join("target/book-src");
    stage(&root, &staging)?;
    let out = root.join("target/book");
    let _ = std::fs::remove_dir_all(&out);
    build::run_checked(
        Command::new(&mdbook).arg("build").arg(&staging),
        "building the book with mdBook",
    )?;
    let broken = broken_links(&out);
    if !broken.is_empty() {
        return Err(format!(
            "the book has {} broken link(s): {}",
            broken.len(),
            broken.join("; ")
        ));
    }
    Ok(out.join("index.html"))
}

/// The mdbook binary, installed into target/tools on first use.
fn mdbook() -> Result<PathBuf, String> {
    let tools = build::root().join("target/tools");
    let bin = tools.join("bin/mdbook");
    let version = Command::new(&bin)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if version.is_some_and(|v| v.contains(MDBOOK_VERSION)) {
        return Ok(bin);
    }
    println!("xtask: installing mdBook {MDBOOK_VERSION} into target/tools (once)");
    build::run_checked(
        Command::new(env!("CARGO"))
            .args(["install", "mdbook", "--locked", "--no-default-features"])
            .args(["--version", MDBOOK_VERSION, "--root"])
            .arg(&tools),
        "installing mdBook",
    )?;
    Ok(bin)
}

/// Copies the book and its appendices into `staging`, links rewritten.
fn stage(root: &Path, staging: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(staging);
    copy_dir(&root.join("docs/book"), staging)?;
    for name in APPENDICES {
        let from = root.join("docs").join(name);
        let text =
            std::fs::read_to_string(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        write(&staging.join(name), &rewrite_links(&text))?;
    }
    copy_dir(&root.join("docs/img"), &staging.join("img"))?;
    for entry in std::fs::read_dir(staging)
        .map_err(|e| e.to_string())?
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
            write(&path, &rewrite_links(&text))?;
        }
    }
    Ok(())
}

/// Links as they are in the repository, made to work in one folder: a
/// chapter's link one folder up to a document of `docs/`, and a
/// document's link down into `book/`, both become plain names.
fn rewrite_links(text: &str) -> String {
    text.replace("](../", "](").replace("](book/", "](")
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from)
        .map_err(|e| format!("{}: {e}", from.display()))?
        .flatten()
    {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target)?;
        } else {
            std::fs::copy(&path, &target)
                .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Every relative `href` and `src` of the HTML under `out` whose target
/// file is not there, as "page: target".
fn broken_links(out: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    for page in html_pages(out) {
        let Ok(html) = std::fs::read_to_string(&page) else {
            continue;
        };
        let dir = page.parent().unwrap_or(out);
        for target in link_targets(&html) {
            let path = target.split(['#', '?']).next().unwrap_or_default();
            if !path.is_empty() && !dir.join(path).exists() {
                let name = page
                    .strip_prefix(out)
                    .unwrap_or(&page)
                    .display()
                    .to_string();
                broken.push(format!("{name}: {target}"));
            }
        }
    }
    broken.sort();
    broken.dedup();
    broken
}

fn html_pages(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(html_pages(&path));
        } else if path.extension().is_some_and(|e| e == "html") {
            found.push(path);
        }
    }
    found
}

/// The relative targets of `href="..."` and `src="..."` in `html`.
fn link_targets(html: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for piece in html.split(attr).skip(1) {
            let target = piece.split('"').next().unwrap_or_default();
            let external = target.contains("://")
                || target.starts_with("mailto:")
                || target.starts_with("data:")
                || target.starts_with("javascript:")
                || target.starts_with('#')
                || target.starts_with('/');
            if !target.is_empty() && !external {
                targets.push(target.to_string());
            }
        }
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_made_flat() {
        assert_eq!(
            rewrite_links(concat!(
                "see [it](",
                "..",
                "/profil.md) and [ch](book/09-profil.md) and [x](y.md)"
            )),
            "see [it](profil.md) and [ch](09-profil.md) and [x](y.md)"
        );
    }

    #[test]
    fn only_relative_targets_are_followed() {
        let html = r##"<a href="a.html#x">a</a> <a href="https://x.org">b</a> <img src="figures/f.svg"> <a href="#top">c</a>"##;
        assert_eq!(link_targets(html), vec!["a.html#x", "figures/f.svg"]);
    }
}
