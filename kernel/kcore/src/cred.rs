//! Who a process is: its user and group ids, the rules for changing them,
//! and the permission check on a file's mode bits.
//!
//! As on Linux (credentials(7)) a process has a real, an effective and a
//! saved set-user-ID, and a file-system user ID that follows the effective
//! one (likewise for groups), plus supplementary groups. The effective ids
//! decide what the process may do to processes and System V objects; the
//! file-system ids decide what it may do to files; the real ids say who it
//! is (`access(2)` checks with them).
//!
//! Root's powers are capabilities (capabilities(7)): three sets of bits,
//! effective (what the kernel consults now), permitted (what the process
//! may make effective) and inheritable (what may pass through exec). Root
//! starts with every capability; an exec by root gets them all again, and
//! one by anyone else none (there are no file capabilities here). Changing
//! ids changes them as Linux's `cap_emulate_setxuid` does: the effective
//! set empties when the effective user id leaves 0 and comes back from the
//! permitted set when it returns, both sets empty when no user id is 0 any
//! more, and the file-system capabilities follow the file-system user id.
//! So "privileged" and "euid 0" agree for every program that does not
//! manage capabilities itself, and capset(2) lets root drop some. The
//! file checks ask for the capability they need (`may`, `owns`,
//! `may_chown`: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
//! CAP_CHOWN); the rest of the kernel still asks `is_root`.
//!
//! The rules are those of setuid(2), setreuid(2), setresuid(2),
//! setfsuid(2) and setgroups(2); each function below names its manual page.
//! They are pure, so `cargo test` checks them here; the kernel keeps one
//! `Cred` per process (`proc::Process::cred`), shared across fork until
//! one side changes it.

use abi::Errno;
use alloc::vec::Vec;

/// Supplementary groups a process may have (Linux's NGROUPS_MAX).
pub const NGROUPS_MAX: usize = 65536;

/// "Leave this id as it is" in the set*id calls: -1 as an unsigned id.
pub const UNCHANGED: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cred {
    pub ruid: u32,
    pub euid: u32,
    pub suid: u32,
    pub fsuid: u32,
    pub rgid: u32,
    pub egid: u32,
    pub sgid: u32,
    pub fsgid: u32,
    /// Supplementary groups, sorted and without duplicates.
    pub groups: Vec<u32>,
    pub caps: Caps,
}

/// The three capability sets, one bit per capability (`abi::types::CAP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub effective: u64,
    pub permitted: u64,
    pub inheritable: u64,
}

/// Every capability Linux 6.1 has.
pub const ALL_CAPS: u64 = (1 << (abi::types::CAP_LAST_CAP + 1)) - 1;

/// The capabilities that follow the file-system user id (Linux's
/// `CAP_FS_MASK`).
pub const FS_CAPS: u64 = {
    use abi::types::*;
    1 << CAP_CHOWN
        | 1 << CAP_DAC_OVERRIDE
        | 1 << CAP_DAC_READ_SEARCH
        | 1 << CAP_FOWNER
        | 1 << CAP_FSETID
        | 1 << CAP_LINUX_IMMUTABLE
        | 1 << CAP_MKNOD
        | 1 << CAP_MAC_OVERRIDE
};

impl Caps {
    pub const NONE: Caps = Caps {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    };
    pub const ROOT: Caps = Caps {
        effective: ALL_CAPS,
        permitted: ALL_CAPS,
        inheritable: 0,
    };

    /// capset(2)'s rule for replacing the sets with `new` (Linux's
    /// `cap_capset`): the permitted set may only shrink, the effective set
    /// must lie within the new permitted one, and the inheritable set may
    /// grow only within the permitted set (anywhere with CAP_SETPCAP).
    pub fn may_become(&self, new: &Caps) -> Result<(), Errno> {
        let setpcap = self.effective & 1 << abi::types::CAP_SETPCAP != 0;
        let inheritable_room = if setpcap {
            ALL_CAPS
        } else {
            self.inheritable | self.permitted
        };
        if new.permitted & !self.permitted != 0
            || new.effective & !new.permitted != 0
            || new.inheritable & !inheritable_room != 0
            || (new.effective | new.permitted | new.inheritable) & !ALL_CAPS != 0
        {
            return Err(Errno::EPERM);
        }
        Ok(())
    }
}

/// What a caller asks of a file: bits of `access(2)`'s mode.
pub const MAY_READ: u32 = 4;
pub const MAY_WRITE: u32 = 2;
pub const MAY_EXEC: u32 = 1;

impl Cred {
    /// The first process's: root in every id, no supplementary groups.
    pub const fn root() -> Cred {
        Cred::of(0, 0)
    }

    /// A process that is `uid` and `gid` in every id.
    pub const fn of(uid: u32, gid: u32) -> Cred {
        Cred {
            ruid: uid,
            euid: uid,
            suid: uid,
            fsuid: uid,
            rgid: gid,
            egid: gid,
            sgid: gid,
            fsgid: gid,
            groups: Vec::new(),
            caps: if uid == 0 { Caps::ROOT } else { Caps::NONE },
        }
    }

    /// Whether capability `cap` (`abi::types::CAP_*`) is in the effective
    /// set.
    pub fn capable(&self, cap: u32) -> bool {
        self.caps.effective & 1 << cap != 0
    }

    /// The capabilities after a change of user ids from `old` (Linux's
    /// `cap_emulate_setxuid` and `cap_emulate_setfsuid`).
    fn ids_changed(&mut self, old: [u32; 4]) {
        let [r, e, s, fs] = old;
        let caps = &mut self.caps;
        if (r == 0 || e == 0 || s == 0) && self.ruid != 0 && self.euid != 0 && self.suid != 0 {
            caps.permitted = 0;
            caps.effective = 0;
        }
        if e == 0 && self.euid != 0 {
            caps.effective = 0;
        }
        if e != 0 && self.euid == 0 {
            caps.effective = caps.permitted;
        }
        if fs == 0 && self.fsuid != 0 {
            caps.effective &= !FS_CAPS;
        }
        if fs != 0 && self.fsuid == 0 {
            caps.effective |= caps.permitted & FS_CAPS;
        }
    }

    fn user_ids(&self) -> [u32; 4] {
        [self.ruid, self.euid, self.suid, self.fsuid]
    }

    /// Privileged: effective user id 0 (see the top of the file).
    pub fn is_root(&self) -> bool {
        self.euid == 0
    }

    /// Whether `gid` is the effective group or a supplementary one (Linux's
    /// `in_egroup_p`, used for processes and System V objects).
    pub fn in_egroup(&self, gid: u32) -> bool {
        self.egid == gid || self.groups.binary_search(&gid).is_ok()
    }

    /// Whether `gid` is the file-system group or a supplementary one
    /// (Linux's `in_group_p`, used for files).
    pub fn in_fsgroup(&self, gid: u32) -> bool {
        self.fsgid == gid || self.groups.binary_search(&gid).is_ok()
    }

    /// setuid(2): root sets all four user ids; anyone else may set the
    /// effective one to the real or saved one (EPERM otherwise).
    pub fn setuid(&mut self, uid: u32) -> Result<(), Errno> {
        let old = self.user_ids();
        if uid == UNCHANGED {
            return Err(Errno::EINVAL);
        }
        if self.is_root() {
            self.ruid = uid;
            self.suid = uid;
        } else if uid != self.ruid && uid != self.suid {
            return Err(Errno::EPERM);
        }
        self.euid = uid;
        self.fsuid = uid;
        self.ids_changed(old);
        Ok(())
    }

    /// setgid(2), as setuid for the group ids.
    pub fn setgid(&mut self, gid: u32) -> Result<(), Errno> {
        if gid == UNCHANGED {
            return Err(Errno::EINVAL);
        }
        if self.is_root() {
            self.rgid = gid;
            self.sgid = gid;
        } else if gid != self.rgid && gid != self.sgid {
            return Err(Errno::EPERM);
        }
        self.egid = gid;
        self.fsgid = gid;
        Ok(())
    }

    /// setreuid(2): an unprivileged caller may set the real id to the real
    /// or effective one, and the effective id to the real, effective or
    /// saved one. The saved id becomes the new effective one when the real
    /// id is set, or the effective one is set to anything but the old real.
    pub fn setreuid(&mut self, ruid: u32, euid: u32) -> Result<(), Errno> {
        let old = self.user_ids();
        let (old_r, old_e, old_s) = (self.ruid, self.euid, self.suid);
        let new_r = if ruid == UNCHANGED { old_r } else { ruid };
        let new_e = if euid == UNCHANGED { old_e } else { euid };
        if !self.is_root()
            && (ruid != UNCHANGED && ruid != old_r && ruid != old_e
                || euid != UNCHANGED && euid != old_r && euid != old_e && euid != old_s)
        {
            return Err(Errno::EPERM);
        }
        if ruid != UNCHANGED || euid != UNCHANGED && euid != old_r {
            self.suid = new_e;
        }
        self.ruid = new_r;
        self.euid = new_e;
        self.fsuid = new_e;
        self.ids_changed(old);
        Ok(())
    }

    /// setregid(2), as setreuid for the group ids (privilege is still the
    /// effective user id's).
    pub fn setregid(&mut self, rgid: u32, egid: u32) -> Result<(), Errno> {
        let (old_r, old_e, old_s) = (self.rgid, self.egid, self.sgid);
        let new_r = if rgid == UNCHANGED { old_r } else { rgid };
        let new_e = if egid == UNCHANGED { old_e } else { egid };
        if !self.is_root()
            && (rgid != UNCHANGED && rgid != old_r && rgid != old_e
                || egid != UNCHANGED && egid != old_r && egid != old_e && egid != old_s)
        {
            return Err(Errno::EPERM);
        }
        if rgid != UNCHANGED || egid != UNCHANGED && egid != old_r {
            self.sgid = new_e;
        }
        self.rgid = new_r;
        self.egid = new_e;
        self.fsgid = new_e;
        Ok(())
    }

    /// setresuid(2): an unprivileged caller may set each id to any of its
    /// current real, effective and saved ones.
    pub fn setresuid(&mut self, ruid: u32, euid: u32, suid: u32) -> Result<(), Errno> {
        let old = self.user_ids();
        let current = [self.ruid, self.euid, self.suid];
        let allowed = |id: u32| id == UNCHANGED || current.contains(&id);
        if !self.is_root() && !(allowed(ruid) && allowed(euid) && allowed(suid)) {
            return Err(Errno::EPERM);
        }
        let keep = |new: u32, old: u32| if new == UNCHANGED { old } else { new };
        self.ruid = keep(ruid, self.ruid);
        self.euid = keep(euid, self.euid);
        self.suid = keep(suid, self.suid);
        self.fsuid = self.euid;
        self.ids_changed(old);
        Ok(())
    }

    /// setresgid(2), as setresuid for the group ids.
    pub fn setresgid(&mut self, rgid: u32, egid: u32, sgid: u32) -> Result<(), Errno> {
        let current = [self.rgid, self.egid, self.sgid];
        let allowed = |id: u32| id == UNCHANGED || current.contains(&id);
        if !self.is_root() && !(allowed(rgid) && allowed(egid) && allowed(sgid)) {
            return Err(Errno::EPERM);
        }
        let keep = |new: u32, old: u32| if new == UNCHANGED { old } else { new };
        self.rgid = keep(rgid, self.rgid);
        self.egid = keep(egid, self.egid);
        self.sgid = keep(sgid, self.sgid);
        self.fsgid = self.egid;
        Ok(())
    }

    /// setfsuid(2): always answers the old file-system user id; changes it
    /// only for root or to one of the real, effective, saved or current
    /// file-system ids (there is no error to report).
    pub fn setfsuid(&mut self, uid: u32) -> u32 {
        let old = self.fsuid;
        let ids = self.user_ids();
        if uid != UNCHANGED
            && (self.is_root() || [self.ruid, self.euid, self.suid, self.fsuid].contains(&uid))
        {
            self.fsuid = uid;
        }
        self.ids_changed(ids);
        old
    }

    /// setfsgid(2), as setfsuid for the group.
    pub fn setfsgid(&mut self, gid: u32) -> u32 {
        let old = self.fsgid;
        if gid != UNCHANGED
            && (self.is_root() || [self.rgid, self.egid, self.sgid, self.fsgid].contains(&gid))
        {
            self.fsgid = gid;
        }
        old
    }

    /// setgroups(2): root only (EPERM), at most NGROUPS_MAX (EINVAL).
    pub fn setgroups(&mut self, groups: &[u32]) -> Result<(), Errno> {
        if groups.len() > NGROUPS_MAX {
            return Err(Errno::EINVAL);
        }
        if !self.is_root() {
            return Err(Errno::EPERM);
        }
        let mut groups = groups.to_vec();
        groups.sort_unstable();
        groups.dedup();
        self.groups = groups;
        Ok(())
    }

    /// execve of a set-user-ID or set-group-ID file: the effective id
    /// becomes the file's owner (group), and the saved ids copy the
    /// effective ones whether or not the file had the bits (execve(2)).
    pub fn exec(&mut self, set_uid: Option<u32>, set_gid: Option<u32>) {
        if let Some(uid) = set_uid {
            self.euid = uid;
            self.fsuid = uid;
        }
        if let Some(gid) = set_gid {
            self.egid = gid;
            self.fsgid = gid;
        }
        self.suid = self.euid;
        self.sgid = self.egid;
        // Without file capabilities, root's exec gets every capability
        // (effective only when the effective id is 0) and anyone else's
        // none; the inheritable set stays.
        let root = self.euid == 0 || self.ruid == 0;
        self.caps.permitted = if root { ALL_CAPS } else { 0 };
        self.caps.effective = if self.euid == 0 { ALL_CAPS } else { 0 };
    }

    /// Whether a program runs as someone other than its caller (after
    /// `exec` of a set-user-ID or set-group-ID file): AT_SECURE, so libc
    /// distrusts the environment, and exec randomises its layout whatever
    /// the caller's personality says.
    pub fn secure(&self) -> bool {
        self.euid != self.ruid || self.egid != self.rgid
    }

    /// Whether this process may signal one with `target`'s ids (kill(2)):
    /// root may; anyone else when its real or effective user id is the
    /// target's real or saved one.
    pub fn may_signal(&self, target: &Cred) -> bool {
        self.is_root()
            || [self.ruid, self.euid]
                .iter()
                .any(|id| *id == target.ruid || *id == target.suid)
    }

    /// The credentials `access(2)` checks with: the file-system ids
    /// replaced by the real ones (Linux's `access_override_creds`), so a
    /// set-user-ID program can ask what its user may do; with them the
    /// capabilities of the real user: all the permitted ones for a real
    /// root, none for anyone else.
    pub fn for_access(&self) -> Cred {
        let effective = if self.ruid == 0 {
            self.caps.permitted
        } else {
            0
        };
        Cred {
            fsuid: self.ruid,
            fsgid: self.rgid,
            caps: Caps {
                effective,
                ..self.caps
            },
            ..self.clone()
        }
    }

    /// Whether this process may do `want` (`MAY_*` bits) to a file with
    /// `mode`, `uid` and `gid`, judged by its file-system ids: the owner's
    /// bits for the owner, the group's for a member, the others' for the
    /// rest. Then, as Linux's `generic_permission`: CAP_DAC_OVERRIDE may
    /// read and write anything, and execute what has an execute bit for
    /// someone (a directory is always searchable); CAP_DAC_READ_SEARCH may
    /// read anything and search any directory.
    pub fn may(&self, want: u32, mode: u32, uid: u32, gid: u32) -> bool {
        let privileged = self.capable(abi::types::CAP_DAC_OVERRIDE);
        let granted = if self.fsuid == uid {
            mode >> 6
        } else if self.in_fsgroup(gid) {
            mode >> 3
        } else {
            mode
        } & 7;
        if want & !granted == 0 {
            return true;
        }
        let is_dir = mode & abi::types::S_IFMT == abi::types::S_IFDIR;
        if privileged && (want & MAY_EXEC == 0 || is_dir || mode & 0o111 != 0) {
            return true;
        }
        let reads_or_searches = want & MAY_WRITE == 0 && (is_dir || want & MAY_EXEC == 0);
        reads_or_searches && self.capable(abi::types::CAP_DAC_READ_SEARCH)
    }

    /// Whether this process owns a file with owner `uid`, or has
    /// CAP_FOWNER: who may chmod it, set its times to anything, or, in a
    /// sticky directory, remove it.
    pub fn owns(&self, uid: u32) -> bool {
        self.fsuid == uid || self.capable(abi::types::CAP_FOWNER)
    }

    /// Whether this process may give a file to any owner and group
    /// (CAP_CHOWN); its owner may still change the group to its own.
    pub fn may_chown(&self) -> bool {
        self.capable(abi::types::CAP_CHOWN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::types::{S_IFDIR, S_IFREG};

    fn user() -> Cred {
        Cred::of(1000, 100)
    }

    #[test]
    fn root_setuid_drops_every_id_for_good() {
        let mut c = Cred::root();
        c.setuid(1000).unwrap();
        assert_eq!((c.ruid, c.euid, c.suid, c.fsuid), (1000, 1000, 1000, 1000));
        assert_eq!(c.setuid(0), Err(Errno::EPERM), "no way back");
        assert_eq!(c.setuid(UNCHANGED), Err(Errno::EINVAL));
    }

    #[test]
    fn a_set_user_id_program_switches_between_real_and_saved() {
        // A set-user-ID-root program run by user 1000.
        let mut c = user();
        c.exec(Some(0), None);
        assert_eq!((c.ruid, c.euid, c.suid), (1000, 0, 0));
        // seteuid(1000) is setresuid(-1, 1000, -1): root may, saved stays 0.
        c.setresuid(UNCHANGED, 1000, UNCHANGED).unwrap();
        assert!(!c.is_root());
        assert_eq!(c.setuid(5), Err(Errno::EPERM));
        c.setuid(0).unwrap();
        assert_eq!((c.ruid, c.euid, c.suid), (1000, 0, 0), "the saved id");
    }

    #[test]
    fn setreuid_moves_the_saved_id_as_linux_does() {
        let mut c = user();
        c.exec(Some(0), None); // r 1000, e 0, s 0
        c.setreuid(UNCHANGED, 1000).unwrap();
        assert_eq!(
            (c.ruid, c.euid, c.suid),
            (1000, 1000, 0),
            "e set to the old real id: the saved id stays, the way back to root"
        );
        let mut c = user();
        c.exec(Some(0), None);
        c.setreuid(0, 1000).unwrap();
        assert_eq!(
            (c.ruid, c.euid, c.suid),
            (0, 1000, 1000),
            "r set: s = new e"
        );
        let mut c = user();
        assert_eq!(c.setreuid(UNCHANGED, 7), Err(Errno::EPERM));
        assert_eq!(c.setreuid(7, UNCHANGED), Err(Errno::EPERM));
        c.setreuid(UNCHANGED, UNCHANGED).unwrap();
        assert_eq!(c, user());
    }

    #[test]
    fn setresuid_lets_a_user_shuffle_only_its_own_ids() {
        let mut c = user();
        c.exec(Some(2000), None); // r 1000, e 2000, s 2000
        c.setresuid(2000, 1000, 1000).unwrap();
        assert_eq!((c.ruid, c.euid, c.suid, c.fsuid), (2000, 1000, 1000, 1000));
        assert_eq!(c.setresuid(0, UNCHANGED, UNCHANGED), Err(Errno::EPERM));
        let mut g = user();
        assert_eq!(g.setresgid(UNCHANGED, 0, UNCHANGED), Err(Errno::EPERM));
        let mut r = Cred::root();
        r.setresgid(5, 6, 7).unwrap();
        assert_eq!((r.rgid, r.egid, r.sgid, r.fsgid), (5, 6, 7, 6));
    }

    #[test]
    fn setfsuid_answers_the_old_id_and_changes_only_to_a_known_one() {
        let mut c = user();
        assert_eq!(c.setfsuid(0), 1000);
        assert_eq!(c.fsuid, 1000, "not one of its ids");
        let mut r = Cred::root();
        assert_eq!(r.setfsuid(1000), 0);
        assert_eq!(r.fsuid, 1000);
        assert!(r.is_root(), "the effective id still is");
        assert!(!r.may(MAY_READ, S_IFREG | 0o600, 0, 0));
    }

    #[test]
    fn only_root_sets_groups() {
        let mut c = user();
        assert_eq!(c.setgroups(&[1]), Err(Errno::EPERM));
        let mut r = Cred::root();
        r.setgroups(&[30, 10, 30]).unwrap();
        assert_eq!(r.groups, [10, 30]);
        assert!(r.in_egroup(30) && !r.in_egroup(20));
        assert_eq!(
            r.setgroups(&alloc::vec![0; NGROUPS_MAX + 1]),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn owner_group_and_others_each_get_their_bits() {
        let mut c = user();
        let file = S_IFREG | 0o640;
        assert!(c.may(MAY_READ | MAY_WRITE, file, 1000, 0));
        assert!(c.may(MAY_READ, file, 1, 100));
        assert!(!c.may(MAY_WRITE, file, 1, 100));
        assert!(!c.may(MAY_READ, file, 1, 1));
        // The owner's bits decide for the owner even when others have more.
        assert!(!c.may(MAY_READ, S_IFREG | 0o066, 1000, 100));
        c.groups = alloc::vec![7];
        assert!(c.may(MAY_READ, file, 1, 7), "a supplementary group");
    }

    #[test]
    fn root_reads_and_writes_anything_but_executes_only_what_someone_may() {
        let r = Cred::root();
        assert!(r.may(MAY_READ | MAY_WRITE, S_IFREG, 5, 5));
        assert!(!r.may(MAY_EXEC, S_IFREG | 0o644, 5, 5));
        assert!(r.may(MAY_EXEC, S_IFREG | 0o001, 5, 5));
        assert!(r.may(MAY_EXEC, S_IFDIR, 5, 5));
    }

    #[test]
    fn access_checks_with_the_real_ids() {
        let mut c = user();
        c.exec(Some(0), None);
        assert!(c.may(MAY_READ, S_IFREG | 0o600, 0, 0));
        let real = c.for_access();
        assert!(!real.may(MAY_READ, S_IFREG | 0o600, 0, 0));
        assert!(real.may(MAY_READ, S_IFREG | 0o600, 1000, 0));
    }

    #[test]
    fn capabilities_follow_the_ids_as_on_linux() {
        use abi::types::{CAP_DAC_OVERRIDE, CAP_KILL};
        let mut r = Cred::root();
        assert!(r.capable(CAP_KILL));
        // Leaving euid 0 empties the effective set; coming back fills it.
        r.setresuid(0, 1000, 0).unwrap();
        assert_eq!(r.caps.effective, 0);
        assert_eq!(r.caps.permitted, ALL_CAPS);
        r.setresuid(0, 0, 0).unwrap();
        assert_eq!(r.caps.effective, ALL_CAPS);
        // The file-system capabilities follow the file-system id alone.
        r.setfsuid(1000);
        assert!(!r.capable(CAP_DAC_OVERRIDE) && r.capable(CAP_KILL));
        r.setfsuid(0);
        assert!(r.capable(CAP_DAC_OVERRIDE));
        // No id 0 left: nothing permitted, and nothing comes back.
        r.setuid(1000).unwrap();
        assert_eq!(r.caps, Caps::NONE);
        // Root's exec gets them all again, after a capset dropped some.
        let mut d = Cred::root();
        d.caps.effective &= !(1 << CAP_DAC_OVERRIDE);
        assert!(!d.may(MAY_WRITE, S_IFREG | 0o600, 5, 5));
        d.exec(None, None);
        assert!(d.may(MAY_WRITE, S_IFREG | 0o600, 5, 5));
    }

    #[test]
    fn read_search_reads_and_searches_only() {
        use abi::types::{CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH};
        let mut c = Cred::root();
        c.caps.effective = 1 << CAP_DAC_READ_SEARCH;
        assert!(c.may(MAY_READ, S_IFREG | 0o600, 5, 5));
        assert!(c.may(MAY_READ | MAY_EXEC, S_IFDIR | 0o700, 5, 5));
        assert!(!c.may(MAY_WRITE, S_IFREG | 0o600, 5, 5));
        assert!(!c.may(MAY_EXEC, S_IFREG | 0o700, 5, 5));
        c.caps.effective = 1 << CAP_DAC_OVERRIDE;
        assert!(c.may(MAY_WRITE, S_IFREG | 0o600, 5, 5));
    }

    #[test]
    fn capset_only_narrows() {
        use abi::types::{CAP_DAC_OVERRIDE, CAP_SETPCAP};
        let root = Caps::ROOT;
        let mut fewer = root;
        fewer.effective &= !(1 << CAP_DAC_OVERRIDE);
        assert_eq!(root.may_become(&fewer), Ok(()));
        // Back again: it is still permitted.
        assert_eq!(fewer.may_become(&root), Ok(()));
        let mut dropped = fewer;
        dropped.permitted &= !(1 << CAP_DAC_OVERRIDE);
        assert_eq!(fewer.may_become(&dropped), Ok(()));
        assert_eq!(dropped.may_become(&root), Err(Errno::EPERM));
        // Effective beyond permitted.
        let mut wide = dropped;
        wide.effective |= 1 << CAP_DAC_OVERRIDE;
        assert_eq!(dropped.may_become(&wide), Err(Errno::EPERM));
        // Inheritable: within permitted, or anywhere with CAP_SETPCAP.
        let mut user = Caps::NONE;
        let mut inh = user;
        inh.inheritable = 1;
        assert_eq!(user.may_become(&inh), Err(Errno::EPERM));
        user.effective = 1 << CAP_SETPCAP;
        user.permitted = user.effective;
        assert_eq!(
            user.may_become(&Caps {
                inheritable: 1,
                ..user
            }),
            Ok(())
        );
    }

    #[test]
    fn kill_needs_a_shared_user_id() {
        let alice = user();
        let mut setuid = user();
        setuid.exec(Some(0), None); // r 1000, s 0
        assert!(alice.may_signal(&setuid), "its real id is alice's");
        assert!(!alice.may_signal(&Cred::root()));
        assert!(Cred::root().may_signal(&alice));
        assert!(!Cred::of(1001, 100).may_signal(&alice));
    }
}
