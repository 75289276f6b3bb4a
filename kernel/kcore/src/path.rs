//! Path names: turning what a process passes into an absolute, normal path.
//!
//! The ramfs is looked up by absolute paths without `.`, `..` or repeated
//! slashes; this resolves a user path against the current directory into that
//! form, with Linux's limits (`NAME_MAX` 255 per component, `PATH_MAX` 4096).
//! `..` at the root stays at the root, as on Unix.

extern crate alloc;
use abi::Errno;
use alloc::string::String;
use alloc::vec::Vec;

pub const NAME_MAX: usize = 255;
pub const PATH_MAX: usize = 4096;

/// Resolves `path` against the absolute directory `cwd`.
pub fn resolve(cwd: &str, path: &str) -> Result<String, Errno> {
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    if path.len() >= PATH_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    let mut parts: Vec<&str> = Vec::new();
    let start = if path.starts_with('/') { "" } else { cwd };
    for part in start.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name if name.len() > NAME_MAX => return Err(Errno::ENAMETOOLONG),
            name => parts.push(name),
        }
    }
    let mut out = String::with_capacity(path.len() + cwd.len());
    for part in &parts {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// Splits an absolute normal path into its parent directory and last name;
/// None for the root.
pub fn split_last(path: &str) -> Option<(&str, &str)> {
    let cut = path.rfind('/')?;
    let name = &path[cut + 1..];
    if name.is_empty() {
        return None;
    }
    Some((if cut == 0 { "/" } else { &path[..cut] }, name))
}

/// What of the absolute normal path `path` lies below the directory
/// `dir` (also absolute and normal), without a leading `/`: "" for `dir`
/// itself, "b/c" for `dir/b/c`; None for a path outside it (`/ab` is not
/// below `/a`).
pub fn below<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    if path == dir {
        return Some("");
    }
    let rest = path.strip_prefix(dir)?;
    if dir.ends_with('/') {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_finds_what_lies_under_a_directory() {
        for (path, dir, want) in [
            ("/a", "/a", Some("")),
            ("/a/b/c", "/a", Some("b/c")),
            ("/ab", "/a", None),
            ("/b", "/a", None),
            ("/x/y", "/", Some("x/y")),
            ("/", "/", Some("")),
            ("/a", "/a/b", None),
        ] {
            assert_eq!(below(path, dir), want, "{path} below {dir}");
        }
    }

    #[test]
    fn resolves_like_unix() {
        for (cwd, path, want) in [
            ("/", "bin/ls", "/bin/ls"),
            ("/home", "x", "/home/x"),
            ("/home", "/etc//boot.conf", "/etc/boot.conf"),
            ("/a/b", "../c", "/a/c"),
            ("/a/b", "./.././../../..", "/"),
            ("/", "..", "/"),
            ("/a", ".", "/a"),
            ("/a", "b/", "/a/b"),
        ] {
            assert_eq!(resolve(cwd, path).as_deref(), Ok(want), "{cwd} + {path}");
        }
    }

    #[test]
    fn limits_are_errors() {
        assert_eq!(resolve("/", ""), Err(Errno::ENOENT));
        assert_eq!(resolve("/", &"x".repeat(256)), Err(Errno::ENAMETOOLONG));
        assert!(resolve("/", &"x".repeat(255)).is_ok());
        assert_eq!(resolve("/", &"a/".repeat(2048)), Err(Errno::ENAMETOOLONG));
    }

    #[test]
    fn splits_parent_and_name() {
        assert_eq!(split_last("/bin/ls"), Some(("/bin", "ls")));
        assert_eq!(split_last("/ls"), Some(("/", "ls")));
        assert_eq!(split_last("/"), None);
    }
}
