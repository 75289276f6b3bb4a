//! The repository holds sources only: the test command's `repo` part.
//!
//! A core dump, a disk image or a build product committed by mistake makes
//! every clone pay for it for ever (a 74.7 MB gdb core once made 12 of a
//! clone's 12.8 MiB). So every file git tracks must be at most
//! `MAX_BYTES`, unless it is on `EXCEPTIONS` with the reason it is a source
//! someone edits, and no tracked file may be named like a core dump.

use std::path::Path;
use std::process::Command;

/// The largest file git may track without a written reason.
pub const MAX_BYTES: u64 = 1 << 20;

/// Files allowed over `MAX_BYTES`: (path, why it is a source). None yet:
/// the largest sources are test programs of about 80 KB.
pub const EXCEPTIONS: &[(&str, &str)] = &[];

/// A name that is a core dump's: `core`, `core.PID`, `vgcore.PID`, `X.core`.
pub fn is_core_dump_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    name == "core" || numbered("core.") || numbered("vgcore.") || name.ends_with(".core")
}

/// What is wrong with the files git tracks under `root`: each too-large
/// file and each core dump, one line each.
pub fn problems(root: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git ls-files: {e}"))?;
    if !out.status.success() {
        return Err("git ls-files failed: the repo check needs the git repository".into());
    }
    let mut found = Vec::new();
    for path in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let path = String::from_utf8_lossy(path);
        if is_core_dump_name(&path) {
            found.push(format!(
                "{path} is named like a core dump: git rm --cached it"
            ));
            continue;
        }
        // A tracked file deleted in the work tree has no size to judge.
        let Ok(meta) = std::fs::metadata(root.join(&*path)) else {
            continue;
        };
        if meta.len() > MAX_BYTES && !EXCEPTIONS.iter().any(|(p, _)| *p == path) {
            found.push(format!(
                "{path} is {:.1} MiB, over 1 MiB, and not on repo::EXCEPTIONS with a reason",
                meta.len() as f64 / (1024.0 * 1024.0)
            ));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_dump_names_are_known() {
        for name in ["core", "a/core", "core.1234", "vgcore.77", "x/kernel.core"] {
            assert!(is_core_dump_name(name), "{name}");
        }
        for name in [
            "kcore",
            "core.rs",
            "kernel/kcore/src/lib.rs",
            "core.",
            "score",
        ] {
            assert!(!is_core_dump_name(name), "{name}");
        }
    }

    #[test]
    fn this_repository_holds_only_sources() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        // Outside a git checkout (a packaged crate) there is nothing to judge.
        if let Ok(found) = problems(&root) {
            assert!(found.is_empty(), "{found:?}");
        }
    }
}
