//! The docs check: every file and function a document names must exist.
//!
//! In `README.md`, `docs/*.md` and `docs/book/*.md`, each backticked
//! reference is checked:
//! a repository path (`kernel/src/profil.rs`, with `{a,b}` alternatives
//! expanded), a path with a function (`proc/lifecycle.rs: fork`), or a Rust
//! path (`proc::sched::run`, `kcore::profil::bin_for`), whose last name must
//! be defined (fn, struct, enum, const, static, mod, type, macro) somewhere in
//! the sources. Renaming code without its chapter then fails the test command.
//!
//! `docs/syscalls.md` must also have a table row for every Linux call the
//! `abi` crate numbers (`syscall_rows_missing`), must not list one of them
//! among the calls this kernel lacks, and must give their count right
//! (`syscall_list_stale`), so the table cannot fall behind the kernel.
//!
//! `docs/architecture.md` must list `kernel_main`'s steps, every call it
//! makes at the top level, in order (`boot_steps_differ`), and its boot
//! option table must have a row for each of `kcore::bootopts::KEYS`, in
//! their order (`boot_options_differ`): lists that stay whole, not only
//! names that exist.
//!
//! And nothing may point outside the repository (`leaves_repository`): a
//! Markdown link or a backticked `../` path in a document, or a backticked
//! `../` path in a source comment, that resolves above the repository's root
//! names a file that someone who clones the project does not have.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Directories whose sources can hold named items.
const SOURCE_DIRS: &[&str] = &["kernel", "libc-lite", "user", "xtask", "boot"];
/// Where a short path like `proc/lifecycle.rs` may live.
const PATH_BASES: &[&str] = &[
    "",
    "kernel/src/",
    "kernel/",
    "libc-lite/src/",
    "xtask/src/",
    "user/src/",
];

/// One reference a document makes.
#[derive(Debug, PartialEq, Eq)]
pub enum Reference {
    Path(String),
    PathItem(String, String),
    Item(String),
}

fn expand_braces(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .flat_map(|alt| {
                expand_braces(&format!("{}{}{}", &path[..open], alt, &path[close + 1..]))
            })
            .collect(),
        _ => vec![path.to_string()],
    }
}

fn looks_like_path(s: &str) -> bool {
    let exts = [".rs", ".md", ".toml", ".c", ".h", ".gdb"];
    s.contains('/')
        && exts.iter().any(|e| s.ends_with(e))
        && !s.contains(' ')
        && !s.starts_with("../")
        && !s.starts_with('/')
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The references in one document's text.
pub fn references(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 0 {
                continue;
            }
            if let Some((path, item)) = span.split_once(": ")
                && looks_like_path(path)
                && is_ident(item)
            {
                out.push(Reference::PathItem(path.to_string(), item.to_string()));
            } else if looks_like_path(span) {
                out.extend(expand_braces(span).into_iter().map(Reference::Path));
            } else if span.contains("::")
                && span.split("::").all(is_ident)
                && !span.starts_with("abi::sys")
            {
                out.push(Reference::Item(span.to_string()));
            }
        }
    }
    out
}

/// The file `path` names (a `*` in its last part matches any name; the
/// pattern exists if one file matches).
fn find_file(root: &Path, path: &str) -> Option<PathBuf> {
    PATH_BASES
        .iter()
        .map(|base| root.join(format!("{base}{path}")))
        .find(|p| match p.to_str() {
            Some(text) if text.contains('*') => glob_matches(p),
            _ => p.exists(),
        })
}

fn glob_matches(pattern: &Path) -> bool {
    let (Some(dir), Some(name)) = (
        pattern.parent(),
        pattern.file_name().and_then(|n| n.to_str()),
    ) else {
        return false;
    };
    let (prefix, suffix) = name.split_once('*').unwrap_or((name, ""));
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
    })
}

fn sources(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "target") {
                walk(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "rs" || e == "c" || e == "gdb")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for dir in SOURCE_DIRS {
        walk(&root.join(dir), &mut out);
    }
    out
}

/// Names defined in `text` (fn, struct, enum, const, static, mod, type,
/// trait, macro_rules!, gdb `define`, C functions).
fn defined_names(text: &str, into: &mut BTreeSet<String>) {
    const KEYWORDS: &[&str] = &[
        "fn",
        "struct",
        "enum",
        "const",
        "static",
        "mod",
        "type",
        "trait",
        "macro_rules!",
        "define",
        "union",
    ];
    for line in text.lines() {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '!'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if KEYWORDS.contains(&pair[0]) {
                into.insert(pair[1].to_string());
            }
        }
        // C: `type name(` at the start of a line.
        if let Some(open) = line.find('(')
            && !line.starts_with(' ')
            && let Some(name) = line[..open].split_whitespace().last()
        {
            into.insert(name.trim_start_matches('*').to_string());
        }
    }
}

/// `path` with `.` and `..` taken out, without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The relative paths in `text` (a file in `dir`) that lead out of `root`:
/// Markdown link targets (resolved from `dir`), and backticked `../` paths
/// that lead out when resolved from `root` and name no file from `dir`
/// (in a source comment, ../signal.rs in backticks names the file one
/// directory up from that source file).
pub fn leaves_repository(text: &str, dir: &Path, root: &Path) -> Vec<String> {
    let outside = |base: &Path, target: &str| !normalize(&base.join(target)).starts_with(root);
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let tail = &rest[at + 2..];
        let target = tail.split([')', ' ', '#']).next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && outside(dir, target) {
            found.push(format!("link to {target} leaves the repository"));
        }
        rest = tail;
    }
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 1 && span.starts_with("../") && !span.contains(char::is_whitespace) {
            let here = normalize(&dir.join(span));
            if outside(root, span) && (!here.starts_with(root) || !here.exists()) {
                found.push(format!("{span} is outside the repository"));
            }
        }
    }
    found
}

/// Problems with the references of `doc` (empty when all exist).
pub fn check_doc(root: &Path, doc: &Path, names: &BTreeSet<String>) -> Vec<String> {
    let text = std::fs::read_to_string(doc).unwrap_or_default();
    let mut problems = leaves_repository(&text, doc.parent().unwrap_or(root), root);
    for reference in references(&text) {
        match &reference {
            Reference::Path(path) => {
                if find_file(root, path).is_none() {
                    problems.push(format!("no file {path}"));
                }
            }
            Reference::PathItem(path, item) => match find_file(root, path) {
                None => problems.push(format!("no file {path}")),
                Some(file) => {
                    let mut here = BTreeSet::new();
                    defined_names(
                        &std::fs::read_to_string(file).unwrap_or_default(),
                        &mut here,
                    );
                    if !here.contains(item) {
                        problems.push(format!("{path} defines no {item}"));
                    }
                }
            },
            Reference::Item(item) => {
                let last = item.rsplit("::").next().unwrap_or(item);
                if !names.contains(last) {
                    problems.push(format!("nothing defines {item}"));
                }
            }
        }
    }
    problems
}

/// Checks README.md and docs/*.md; returns (document, problems) for each.
pub fn check_all(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut names = BTreeSet::new();
    let mut sources_outside = Vec::new();
    for file in sources(root) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        defined_names(&text, &mut names);
        let dir = file.parent().unwrap_or(root);
        for problem in leaves_repository(&text, dir, root) {
            let name = file.strip_prefix(root).unwrap_or(&file).display();
            sources_outside.push(format!("{name}: {problem}"));
        }
    }
    let mut docs = vec![root.join("README.md")];
    for dir in ["docs", "docs/book"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            let mut md: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect();
            md.sort();
            docs.extend(md);
        }
    }
    let sources_check = ("sources".to_string(), sources_outside);
    std::iter::once(sources_check)
        .chain(docs.iter().map(|doc| {
            let name = doc.strip_prefix(root).unwrap_or(doc).display().to_string();
            let mut problems = check_doc(root, doc, &names);
            if name == "docs/architecture.md" {
                let main =
                    std::fs::read_to_string(root.join("kernel/src/main.rs")).unwrap_or_default();
                let text = std::fs::read_to_string(doc).unwrap_or_default();
                problems.extend(boot_steps_differ(&main, &text));
                problems.extend(boot_options_differ(kcore::bootopts::KEYS, &text));
            }
            if name == "docs/syscalls.md" {
                let abi =
                    std::fs::read_to_string(root.join("kernel/abi/src/sys.rs")).unwrap_or_default();
                let table = std::fs::read_to_string(doc).unwrap_or_default();
                problems.extend(syscall_rows_missing(&abi, &table));
                problems.extend(syscall_list_stale(&abi, &table));
            }
            (name, problems)
        }))
        .collect()
}

/// The first call on a line: a path (`a::b::c`, `f`) followed by `(`, not
/// an enum variant's constructor. A line that is a macro's (`info!(...)`)
/// has none: what it calls are its arguments.
fn first_call(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let is_path = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b':';
    let mut start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if is_path(b) {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            if b == b'!' && bytes.get(i + 1) != Some(&b'=') {
                return None;
            }
            let path = &line[s..i];
            let fresh = s == 0 || !matches!(bytes[s - 1], b'.' | b'!');
            if b == b'(' && fresh && !matches!(path, "Some" | "Ok" | "Err") {
                return Some(path.to_string());
            }
        }
    }
    None
}

/// `kernel_main`'s steps: the first call of each statement at the top of
/// its body (four spaces in), in order.
pub fn kernel_main_steps(main_rs: &str) -> Vec<String> {
    let Some(at) = main_rs.find("fn kernel_main(") else {
        return Vec::new();
    };
    main_rs[at..]
        .lines()
        .skip(1)
        .take_while(|l| *l != "}")
        .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
        .filter(|l| !l.trim_start().starts_with("//"))
        .filter_map(first_call)
        .collect()
}

/// The calls step 3 of architecture.md's boot sequence names, in order:
/// each backticked path (no `/`, `.`, `=` or space) of its bullets.
fn documented_steps(architecture: &str) -> Vec<String> {
    const TICK: char = '\u{60}';
    let Some((_, after)) = architecture.split_once(&format!("3. {TICK}kernel_main{TICK}")) else {
        return Vec::new();
    };
    let list = after.split("\n## ").next().unwrap_or("");
    list.lines()
        .skip(1)
        .flat_map(|line| line.split(TICK).skip(1).step_by(2).map(str::to_string))
        .filter(|name| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
                && !name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        })
        .collect()
}

/// Where architecture.md's boot sequence and `kernel_main` part: a step
/// the function has and the list lacks, one the list has and the function
/// lacks, or the two in another order.
pub fn boot_steps_differ(main_rs: &str, architecture: &str) -> Vec<String> {
    let steps = kernel_main_steps(main_rs);
    let listed = documented_steps(architecture);
    if steps.is_empty() {
        return vec!["kernel/src/main.rs has no kernel_main with steps".into()];
    }
    let mut problems: Vec<String> = steps
        .iter()
        .filter(|s| !listed.contains(s))
        .map(|s| format!("the boot sequence does not list `{s}`, which kernel_main calls"))
        .chain(
            listed
                .iter()
                .filter(|s| !steps.contains(s))
                .map(|s| format!("the boot sequence lists `{s}`, which kernel_main does not call")),
        )
        .collect();
    if problems.is_empty() && steps != listed {
        let (i, _) = steps
            .iter()
            .zip(&listed)
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .unwrap_or((0, (&steps[0], &listed[0])));
        problems.push(format!(
            "the boot sequence lists `{}` where kernel_main calls `{}` (step {})",
            listed[i],
            steps[i],
            i + 1
        ));
    }
    problems
}

/// Where architecture.md's boot option table and the kernel's keys part:
/// the table's keys (first cell of each row under "## Boot options") must
/// be `keys`, in order.
pub fn boot_options_differ(keys: &[&str], architecture: &str) -> Vec<String> {
    let Some((_, after)) = architecture.split_once("## Boot options") else {
        return vec!["no \"Boot options\" section".into()];
    };
    let table: Vec<&str> = after
        .split("\n## ")
        .next()
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.strip_prefix("| \u{60}")?.split_once('\u{60}'))
        .map(|(key, _)| key)
        .collect();
    if table == keys {
        return Vec::new();
    }
    let missing: Vec<&&str> = keys.iter().filter(|k| !table.contains(k)).collect();
    let extra: Vec<&&str> = table.iter().filter(|k| !keys.contains(k)).collect();
    if missing.is_empty() && extra.is_empty() {
        vec![format!(
            "the boot option table lists {table:?}, the kernel's order is {keys:?}"
        )]
    } else {
        vec![format!(
            "the boot option table lacks {missing:?} and has {extra:?}, which the kernel does not know"
        )]
    }
}

/// The Linux calls `abi/src/sys.rs` numbers (below 1000): lowercase name
/// and number.
fn numbered_calls(abi: &str) -> Vec<(String, String)> {
    abi.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("pub const ")?;
            let (name, value) = rest.split_once(": usize = ")?;
            let number = value.trim_end_matches(';');
            (number.parse::<u32>().ok()? < 1000).then(|| (name.to_lowercase(), number.to_string()))
        })
        .collect()
}

/// What the "Every other Linux call" section of syscalls.md gets wrong:
/// a call it lists as missing (`` `name` (number) ``) that `abi` numbers,
/// or a count ("of the N in the table above") that is not the number of
/// calls `abi` numbers.
pub fn syscall_list_stale(abi: &str, table: &str) -> Vec<String> {
    let calls = numbered_calls(abi);
    let Some((_, others)) = table.split_once("## Every other Linux call") else {
        return vec!["no \"Every other Linux call\" section".into()];
    };
    let others = others.split("\n## ").next().unwrap_or("");
    let mut problems: Vec<String> = calls
        .iter()
        .filter(|(name, number)| others.contains(&format!("`{name}` ({number})")))
        .map(|(name, number)| format!("{name} ({number}) is listed as missing but is numbered"))
        .collect();
    let count = others
        .split_once(" in the table above")
        .and_then(|(before, _)| before.rsplit(' ').next()?.parse::<usize>().ok());
    if count != Some(calls.len()) {
        problems.push(format!(
            "the count of calls in the table says {count:?}, abi numbers {}",
            calls.len()
        ));
    }
    problems
}

/// The Linux calls (number below 1000) in `abi/src/sys.rs` without a table
/// row in syscalls.md: a row whose first cell holds the number and whose
/// second names the call in backticks.
pub fn syscall_rows_missing(abi: &str, table: &str) -> Vec<String> {
    let rows: Vec<(Vec<&str>, &str)> = table
        .lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix('|')?.split('|');
            let numbers = cells.next()?.split(',').map(str::trim).collect();
            Some((numbers, cells.next()?))
        })
        .collect();
    numbered_calls(abi)
        .into_iter()
        .filter(|(name, number)| {
            !rows.iter().any(|(numbers, calls)| {
                numbers.contains(&number.as_str()) && calls.contains(&format!("`{name}`"))
            })
        })
        .map(|(name, number)| format!("{name} ({number}) has no row in the system call table"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_steps_are_held_to_kernel_main() {
        let main = "fn kernel_main(b: &BootInfo) -> ! {\n    // a comment(x)\n    log::init();\n    let (r, o) = read_opts(b);\n    info!(\"x {}\", f(1));\n    if let Some(k) = o.crash {\n        crash(k);\n    }\n    mm::init(b);\n}\n";
        assert_eq!(
            kernel_main_steps(main),
            ["log::init", "read_opts", "mm::init"]
        );
        let doc = "3. `kernel_main` (`kernel/src/main.rs`):\n   - `log::init` — the console;\n   - `read_opts`, then `mm::init` (`TrapFrame`, `a/b.rs`, `x=1`);\n\n## Next\n";
        assert!(boot_steps_differ(main, doc).is_empty());
        let swapped = doc.replace(
            "`read_opts`, then `mm::init`",
            "`mm::init`, then `read_opts`",
        );
        assert_eq!(
            boot_steps_differ(main, &swapped),
            ["the boot sequence lists `mm::init` where kernel_main calls `read_opts` (step 2)"]
        );
        let short = doc.replace("`read_opts`, then ", "");
        assert_eq!(
            boot_steps_differ(main, &short),
            ["the boot sequence does not list `read_opts`, which kernel_main calls"]
        );
    }

    #[test]
    fn boot_options_are_held_to_the_keys() {
        let doc = "## Boot options\n\n| key | values |\n|---|---|\n| `hz` | n |\n| `lock` | x |\n\n## Exit\n| `no` | |\n";
        assert!(boot_options_differ(&["hz", "lock"], doc).is_empty());
        assert_eq!(
            boot_options_differ(&["hz", "lock", "quiet"], doc),
            ["the boot option table lacks [\"quiet\"] and has [], which the kernel does not know"]
        );
        assert_eq!(
            boot_options_differ(&["lock", "hz"], doc),
            [
                "the boot option table lists [\"hz\", \"lock\"], the kernel's order is [\"lock\", \"hz\"]"
            ]
        );
    }

    #[test]
    fn every_numbered_call_needs_a_row() {
        let abi = "pub const READ: usize = 0;\npub const PREAD64: usize = 17;\npub const OURS: usize = 1000;\n";
        let table = "| # | call | notes |\n|---|---|---|\n| 0 | `read` | ok |\n";
        assert_eq!(
            syscall_rows_missing(abi, table),
            vec!["pread64 (17) has no row in the system call table"]
        );
        let table = "| 0 | `read` |\n| 17, 18 | `pread64`, `pwrite64` | |\n";
        assert!(syscall_rows_missing(abi, table).is_empty());
    }

    #[test]
    fn a_numbered_call_listed_as_missing_is_stale() {
        let abi = "pub const READ: usize = 0;\npub const SOCKET: usize = 41;\n";
        let table = "| 0 | `read` |\n## Every other Linux call\n\nimplements 2 of the 2 in the table above.\n\n- `socket` (41), `bind` (49).\n## Our calls\n`read` (0)\n";
        assert_eq!(
            syscall_list_stale(abi, table),
            vec!["socket (41) is listed as missing but is numbered"]
        );
        let fixed = table
            .replace("`socket` (41), ", "")
            .replace("of the 2", "of the 3");
        assert_eq!(
            syscall_list_stale(abi, &fixed),
            vec!["the count of calls in the table says Some(3), abi numbers 2"]
        );
        assert!(syscall_list_stale(abi, &fixed.replace("of the 3", "of the 2")).is_empty());
    }

    #[test]
    fn finds_paths_items_and_rust_paths() {
        let text = "See `kernel/src/profil.rs` and `proc/lifecycle.rs: fork`, `proc::sched::run`,\n\
                    `kernel/src/syscall/{mod,fs}.rs`, not `cargo xtask run` or `a::b c`.\n```\n`kernel/x.rs`\n```\n";
        assert_eq!(
            references(text),
            vec![
                Reference::Path("kernel/src/profil.rs".into()),
                Reference::PathItem("proc/lifecycle.rs".into(), "fork".into()),
                Reference::Item("proc::sched::run".into()),
                Reference::Path("kernel/src/syscall/mod.rs".into()),
                Reference::Path("kernel/src/syscall/fs.rs".into()),
            ]
        );
    }

    #[test]
    fn a_renamed_function_is_reported() {
        let root = crate::build::root();
        let names: BTreeSet<String> = ["run".to_string()].into();
        let dir = std::env::temp_dir().join(format!("docs-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let doc = dir.join("x.md");
        std::fs::write(
            &doc,
            "`kernel/src/nope.rs` `kernel/src/profil.rs: no_such_fn` `proc::sched::run` `a::gone`",
        )
        .unwrap();
        let problems = check_doc(&root, &doc, &names);
        assert_eq!(
            problems,
            [
                "no file kernel/src/nope.rs",
                "kernel/src/profil.rs defines no no_such_fn",
                "nothing defines a::gone"
            ]
        );
    }

    #[test]
    fn paths_that_leave_the_repository_are_found() {
        let root = Path::new("/repo");
        let docs = Path::new("/repo/docs");
        let text = "see [the spec](../../shared/spec.md), [ok](../README.md), \
                    [web](https://example.org/x), `../shared/spec/profil.md` and `kernel/../docs/x.md`";
        assert_eq!(
            leaves_repository(text, docs, root),
            [
                "link to ../../shared/spec.md leaves the repository",
                "../shared/spec/profil.md is outside the repository",
            ]
        );
        // From a source file, a `../` path that names no file one directory
        // up (here nothing exists under /repo) and leaves the root is found.
        let from_kernel = leaves_repository("`../x.md`", Path::new("/repo/kernel/src"), root);
        assert_eq!(from_kernel, ["../x.md is outside the repository"]);
        // One that names a real file beside it is a neighbour, not outside.
        let here = std::env::current_dir().unwrap();
        let beside = leaves_repository("`../main.rs`", &here.join("src/bin"), &here);
        assert!(beside.is_empty(), "{beside:?}");
    }
}
