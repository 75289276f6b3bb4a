//! Extended attributes of a file in memory: named values beside its bytes
//! (`user.mime_type`, `user.xdg.origin.url`), as tmpfs keeps them, and
//! the rules Linux's VFS applies before a file system sees a request
//! (`fs/xattr.c`: `xattr_permission`, `xattr_resolve_name`).
//!
//! A name is a namespace and a rest: `user.` for anyone the file's
//! permission bits allow, and only on regular files and directories;
//! `trusted.` for root alone (others do not even see them listed);
//! `security.` with no rule of the VFS's. `system.` (POSIX ACLs) and any
//! other prefix are EOPNOTSUPP, as tmpfs without ACLs answers.

use abi::Errno;
use abi::types::{XATTR_CREATE, XATTR_REPLACE};
use alloc::vec::Vec;

/// The namespaces a name may be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Namespace {
    User,
    Trusted,
    Security,
}

/// What a request wants of the file (`xattr_permission`'s mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// What kind of file the request is about, as far as the rules care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Directory {
        sticky: bool,
    },
    /// A symbolic link, a device, a FIFO, a socket.
    Other,
}

/// The namespace of `name`; EOPNOTSUPP for one this file system does not
/// keep (`system.`, anything else), EINVAL for a bare prefix.
pub fn namespace(name: &[u8]) -> Result<Namespace, Errno> {
    let (namespace, rest) = [
        (&b"user."[..], Namespace::User),
        (b"trusted.", Namespace::Trusted),
        (b"security.", Namespace::Security),
    ]
    .iter()
    .find_map(|(prefix, ns)| name.strip_prefix(*prefix).map(|rest| (*ns, rest)))
    .ok_or(Errno::EOPNOTSUPP)?;
    if rest.is_empty() {
        return Err(Errno::EINVAL);
    }
    Ok(namespace)
}

/// `xattr_permission` after the namespace is known: whether the caller
/// (`privileged`: CAP_SYS_ADMIN; `owner`: owns the file or may act as its
/// owner; `permitted`: the file's bits allow `access`) may `access` the
/// attribute. A read that may not see an attribute finds none (ENODATA);
/// a write is EPERM, or EACCES when only the bits say no.
pub fn check(
    namespace: Namespace,
    kind: FileKind,
    access: Access,
    privileged: bool,
    owner: bool,
    permitted: bool,
) -> Result<(), Errno> {
    let refused = match access {
        Access::Write => Errno::EPERM,
        Access::Read => Errno::ENODATA,
    };
    match namespace {
        Namespace::Security => return Ok(()),
        Namespace::Trusted if !privileged => return Err(refused),
        Namespace::Trusted => return Ok(()),
        Namespace::User => match kind {
            FileKind::Other => return Err(refused),
            FileKind::Directory { sticky: true } if access == Access::Write && !owner => {
                return Err(Errno::EPERM);
            }
            _ => {}
        },
    }
    if permitted {
        Ok(())
    } else {
        Err(Errno::EACCES)
    }
}

/// A file's attributes, in the order they were first set (the order
/// tmpfs lists them in; a file has few, so a search is short).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs(Vec<(Vec<u8>, Vec<u8>)>);

impl Attrs {
    fn position(&self, name: &[u8]) -> Option<usize> {
        self.0.iter().position(|(n, _)| n == name)
    }

    /// setxattr's store: XATTR_CREATE fails on a name there (EEXIST),
    /// XATTR_REPLACE on one not there (ENODATA). A value replaced keeps
    /// its name's place.
    pub fn set(&mut self, name: &[u8], value: &[u8], flags: u32) -> Result<(), Errno> {
        match self.position(name) {
            Some(_) if flags & XATTR_CREATE != 0 => Err(Errno::EEXIST),
            None if flags & XATTR_REPLACE != 0 => Err(Errno::ENODATA),
            Some(at) => {
                self.0[at].1 = value.to_vec();
                Ok(())
            }
            None => {
                self.0.push((name.to_vec(), value.to_vec()));
                Ok(())
            }
        }
    }

    /// Attributes a file system read from a disk, in its order.
    pub fn from_pairs(pairs: Vec<(Vec<u8>, Vec<u8>)>) -> Attrs {
        Attrs(pairs)
    }

    /// Each name and its value, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.0.iter().map(|(n, v)| (n.as_slice(), v.as_slice()))
    }

    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.position(name).map(|at| self.0[at].1.as_slice())
    }

    /// removexattr's: ENODATA for a name not there.
    pub fn remove(&mut self, name: &[u8]) -> Result<(), Errno> {
        let at = self.position(name).ok_or(Errno::ENODATA)?;
        self.0.remove(at);
        Ok(())
    }

    /// listxattr's answer: each name and a NUL, `trusted.` ones only for
    /// a privileged caller. A name of a namespace not kept here (a POSIX
    /// ACL a disk holds, `system.posix_acl_access`) is not listed, as
    /// Linux lists only names a handler takes.
    pub fn list(&self, privileged: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, _) in &self.0 {
            let shown = match namespace(name) {
                Ok(Namespace::Trusted) => privileged,
                Ok(_) => true,
                Err(_) => false,
            };
            if shown {
                out.extend_from_slice(name);
                out.push(0);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_need_a_known_namespace_and_more() {
        assert_eq!(namespace(b"user.a"), Ok(Namespace::User));
        assert_eq!(namespace(b"trusted.x"), Ok(Namespace::Trusted));
        assert_eq!(namespace(b"security.selinux"), Ok(Namespace::Security));
        assert_eq!(namespace(b"user."), Err(Errno::EINVAL));
        assert_eq!(
            namespace(b"system.posix_acl_access"),
            Err(Errno::EOPNOTSUPP)
        );
        assert_eq!(namespace(b"nonsense"), Err(Errno::EOPNOTSUPP));
    }

    #[test]
    fn create_replace_and_remove_say_what_is_there() {
        let mut a = Attrs::default();
        assert_eq!(a.set(b"user.a", b"1", XATTR_REPLACE), Err(Errno::ENODATA));
        assert_eq!(a.set(b"user.a", b"1", XATTR_CREATE), Ok(()));
        assert_eq!(a.set(b"user.a", b"2", XATTR_CREATE), Err(Errno::EEXIST));
        assert_eq!(a.set(b"user.a", b"3", XATTR_REPLACE), Ok(()));
        assert_eq!(a.get(b"user.a"), Some(&b"3"[..]));
        assert_eq!(a.remove(b"user.a"), Ok(()));
        assert_eq!(a.remove(b"user.a"), Err(Errno::ENODATA));
    }

    #[test]
    fn trusted_names_are_listed_to_root_alone() {
        let mut a = Attrs::default();
        a.set(b"user.b", b"", 0).unwrap();
        a.set(b"trusted.t", b"", 0).unwrap();
        assert_eq!(a.list(true), b"user.b\0trusted.t\0", "in the order set");
        assert_eq!(a.list(false), b"user.b\0");
        let disk = Attrs::from_pairs(vec![
            (b"system.posix_acl_access".to_vec(), vec![1]),
            (b"user.c".to_vec(), vec![]),
        ]);
        assert_eq!(disk.list(true), b"user.c\0", "no handler, not listed");
    }

    #[test]
    fn the_rules_of_each_namespace() {
        use Access::*;
        let reg = FileKind::Regular;
        assert_eq!(
            check(Namespace::User, reg, Write, false, false, true),
            Ok(())
        );
        assert_eq!(
            check(Namespace::User, reg, Write, false, false, false),
            Err(Errno::EACCES)
        );
        let link = FileKind::Other;
        assert_eq!(
            check(Namespace::User, link, Write, true, true, true),
            Err(Errno::EPERM)
        );
        assert_eq!(
            check(Namespace::User, link, Read, true, true, true),
            Err(Errno::ENODATA)
        );
        let sticky = FileKind::Directory { sticky: true };
        assert_eq!(
            check(Namespace::User, sticky, Write, false, false, true),
            Err(Errno::EPERM)
        );
        assert_eq!(
            check(Namespace::User, sticky, Read, false, false, true),
            Ok(())
        );
        assert_eq!(
            check(Namespace::Trusted, reg, Read, false, true, true),
            Err(Errno::ENODATA)
        );
        assert_eq!(
            check(Namespace::Trusted, reg, Write, true, false, false),
            Ok(())
        );
        assert_eq!(
            check(Namespace::Security, link, Write, false, false, false),
            Ok(())
        );
    }
}
