//! What `login` reads from /etc/passwd, for init's console login
//! (user/src/bin/init.rs): a user's home and shell, and the environment a
//! login shell starts with.
//!
//! An /etc/passwd line is seven fields separated by colons:
//! `name:password:uid:gid:gecos:home:shell` (passwd(5)).

use alloc::string::String;
use alloc::vec::Vec;

/// A user as /etc/passwd gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub home: String,
    pub shell: String,
}

/// The first account with user id `uid` in /etc/passwd's text; lines that
/// are not seven fields with a numeric uid are passed over, as glibc's
/// `getpwuid` passes over a damaged line. An empty shell is /bin/sh, as
/// login(1) takes it.
pub fn account(passwd: &str, uid: u32) -> Option<Account> {
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        let [name, _, id, _, _, home, shell] = fields[..] else {
            return None;
        };
        (id.parse() == Ok(uid)).then(|| Account {
            name: String::from(name),
            uid,
            home: String::from(home),
            shell: String::from(if shell.is_empty() { "/bin/sh" } else { shell }),
        })
    })
}

/// login(1)'s PATH for root and for everyone else (Debian's
/// /etc/login.defs, ENV_SUPATH and ENV_PATH).
pub const ROOT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
pub const USER_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games";

impl Account {
    /// The environment login(1) gives the shell: HOME, SHELL, USER,
    /// LOGNAME, PATH, and the terminal's type.
    pub fn environment(&self, term: &str) -> Vec<String> {
        let path = if self.uid == 0 { ROOT_PATH } else { USER_PATH };
        alloc::vec![
            alloc::format!("HOME={}", self.home),
            alloc::format!("SHELL={}", self.shell),
            alloc::format!("USER={}", self.name),
            alloc::format!("LOGNAME={}", self.name),
            alloc::format!("PATH={path}"),
            alloc::format!("TERM={term}"),
        ]
    }

    /// The shell's argv[0]: its name after a '-', which tells a shell it
    /// is a login shell (so bash reads /etc/profile and ~/.profile).
    pub fn login_argv0(&self) -> String {
        let name = self.shell.rsplit('/').next().unwrap_or(&self.shell);
        alloc::format!("-{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "\
root:x:0:0:root:/root:/bin/bash
broken line
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
odd:x:notanumber:1::/:/bin/sh
student:x:1000:1000:A student,,,:/home/student:
";

    #[test]
    fn finds_an_account_by_uid() {
        let root = account(PASSWD, 0).unwrap();
        assert_eq!((root.name.as_str(), root.home.as_str()), ("root", "/root"));
        assert_eq!(root.shell, "/bin/bash");
        assert_eq!(account(PASSWD, 1).unwrap().name, "daemon");
        assert_eq!(account(PASSWD, 7), None);
        assert_eq!(account("", 0), None);
    }

    #[test]
    fn an_empty_shell_is_bin_sh() {
        assert_eq!(account(PASSWD, 1000).unwrap().shell, "/bin/sh");
    }

    #[test]
    fn a_login_shell_is_told_so_and_given_logins_environment() {
        let root = account(PASSWD, 0).unwrap();
        assert_eq!(root.login_argv0(), "-bash");
        let env = root.environment("linux");
        assert!(env.contains(&String::from("HOME=/root")));
        assert!(env.contains(&alloc::format!("PATH={ROOT_PATH}")));
        assert!(env.contains(&String::from("TERM=linux")));
        let student = account(PASSWD, 1000).unwrap();
        assert!(
            student
                .environment("linux")
                .contains(&alloc::format!("PATH={USER_PATH}"))
        );
    }
}
