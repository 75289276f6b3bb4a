//! The rules of wait4(2) and waitid(2): which children a wait looks at,
//! which of their changes it reports, and how each change is written
//! (a wait status for wait4, a `siginfo_t` for waitid).
//!
//! A child has three changes its parent can wait for: it ended (always
//! reported by wait4; by waitid with WEXITED), it was stopped by a signal
//! (WUNTRACED, waitid's WSTOPPED) and it was continued by SIGCONT
//! (WCONTINUED). A stop or continue is reported once; the newer replaces
//! the older, as on Linux, so a child stopped and continued before its
//! parent looked is reported as continued. waitid's WNOWAIT reports a
//! change and leaves it to be reported again.

use abi::Errno;
use abi::signal::{CLD_CONTINUED, CLD_EXITED, CLD_KILLED, CLD_STOPPED, SIGCHLD, SIGCONT};
use abi::types::{
    P_ALL, P_PGID, P_PID, P_PIDFD, WAIT_STATUS_CONTINUED, WALL, WCLONE, WCONTINUED, WEXITED,
    WNOHANG, WNOTHREAD, WNOWAIT, WSTOPPED, WUNTRACED, wait_exit_code, wait_status_stopped,
    wait_term_signal,
};

/// Which children a wait looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Any,
    Pid(u32),
    /// The children in this process group.
    Group(u32),
    /// The children in the caller's own process group.
    CallersGroup,
}

/// What a wait reports and how it waits: the options, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub exited: bool,
    pub stopped: bool,
    pub continued: bool,
    /// WNOHANG: answer at once when no child has a change to report.
    pub no_hang: bool,
    /// WNOWAIT: leave the change to be reported again.
    pub keep: bool,
    /// __WCLONE: children whose exit signal is not SIGCHLD, instead of
    /// those whose exit signal is.
    clone_children: bool,
    /// __WALL: children of either kind.
    all_children: bool,
}

impl Options {
    fn new(options: u32) -> Options {
        Options {
            exited: options & WEXITED != 0,
            stopped: options & WSTOPPED != 0,
            continued: options & WCONTINUED != 0,
            no_hang: options & WNOHANG != 0,
            keep: options & WNOWAIT != 0,
            clone_children: options & WCLONE != 0,
            all_children: options & WALL != 0,
        }
    }

    /// Whether a child that sends `exit_signal` when it ends is of the
    /// kind this wait looks at (Linux's `eligible_child`): a child that
    /// signals its parent with something other than SIGCHLD (a "clone"
    /// child) is seen only with __WCLONE or __WALL.
    pub fn sees(&self, exit_signal: u32) -> bool {
        self.all_children || (exit_signal != SIGCHLD) == self.clone_children
    }
}

/// wait4's `pid` and `options` as Linux reads them: -1 any child, 0 the
/// caller's group, below -1 the group -pid, above 0 that child. INT_MIN
/// names no group (its negation overflows): ESRCH.
pub fn wait4_args(pid: i32, options: u32) -> Result<(Which, Options), Errno> {
    const KNOWN: u32 = WNOHANG | WUNTRACED | WCONTINUED | WNOTHREAD | WCLONE | WALL;
    if options & !KNOWN != 0 {
        return Err(Errno::EINVAL);
    }
    let which = match pid {
        i32::MIN => return Err(Errno::ESRCH),
        -1 => Which::Any,
        0 => Which::CallersGroup,
        n if n < 0 => Which::Group(n.unsigned_abs()),
        n => Which::Pid(n as u32),
    };
    Ok((which, Options::new(options | WEXITED)))
}

/// waitid's `idtype`, `id` and `options` as Linux reads them. At least
/// one of WEXITED, WSTOPPED and WCONTINUED is needed. There are no pidfds
/// here, so P_PIDFD names no open pidfd: EBADF.
pub fn waitid_args(idtype: u32, id: i32, options: u32) -> Result<(Which, Options), Errno> {
    const KNOWN: u32 =
        WNOHANG | WNOWAIT | WEXITED | WSTOPPED | WCONTINUED | WNOTHREAD | WCLONE | WALL;
    if options & !KNOWN != 0 || options & (WEXITED | WSTOPPED | WCONTINUED) == 0 {
        return Err(Errno::EINVAL);
    }
    let which = match idtype {
        P_ALL => Which::Any,
        P_PID if id > 0 => Which::Pid(id as u32),
        P_PGID if id > 0 => Which::Group(id as u32),
        // Linux 5.4 and later: group 0 is the caller's.
        P_PGID if id == 0 => Which::CallersGroup,
        P_PIDFD => return Err(Errno::EBADF),
        _ => return Err(Errno::EINVAL),
    };
    Ok((which, Options::new(options)))
}

/// A stop or continue of a child, kept until a wait reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Stopped(u32),
    Continued,
}

/// What a wait reports of one child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// It ended, with this wait status.
    Ended(i32),
    Changed(Change),
}

impl Report {
    /// The change of a child that `options` asks for: its end (`zombie`,
    /// the wait status) or else its pending stop or continue.
    pub fn of(options: &Options, zombie: Option<i32>, change: Option<Change>) -> Option<Report> {
        match (zombie, change) {
            (Some(status), _) => options.exited.then_some(Report::Ended(status)),
            (None, Some(Change::Stopped(signal))) => options
                .stopped
                .then_some(Report::Changed(Change::Stopped(signal))),
            (None, Some(Change::Continued)) => options
                .continued
                .then_some(Report::Changed(Change::Continued)),
            (None, None) => None,
        }
    }

    /// wait4's status word (WIFEXITED, WIFSIGNALED, WIFSTOPPED,
    /// WIFCONTINUED tell them apart).
    pub fn wait_status(&self) -> i32 {
        match *self {
            Report::Ended(status) => status,
            Report::Changed(Change::Stopped(signal)) => wait_status_stopped(signal),
            Report::Changed(Change::Continued) => WAIT_STATUS_CONTINUED,
        }
    }

    /// waitid's `si_code` and `si_status`: how it changed, and the exit
    /// code or the signal.
    pub fn code_and_status(&self) -> (i32, i32) {
        match *self {
            Report::Ended(status) => match wait_term_signal(status) {
                Some(signal) => (CLD_KILLED, signal as i32),
                None => (CLD_EXITED, wait_exit_code(status).unwrap_or(0)),
            },
            Report::Changed(Change::Stopped(signal)) => (CLD_STOPPED, signal as i32),
            Report::Changed(Change::Continued) => (CLD_CONTINUED, SIGCONT as i32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::signal::{SIGKILL, SIGSTOP, SIGTSTP};
    use abi::types::{wait_status_exited, wait_status_signaled};

    #[test]
    fn wait4_reads_pid_as_linux_does() {
        assert_eq!(wait4_args(-1, 0).unwrap().0, Which::Any);
        assert_eq!(wait4_args(0, 0).unwrap().0, Which::CallersGroup);
        assert_eq!(wait4_args(-7, 0).unwrap().0, Which::Group(7));
        assert_eq!(wait4_args(7, 0).unwrap().0, Which::Pid(7));
        assert_eq!(wait4_args(i32::MIN, 0), Err(Errno::ESRCH));
        assert_eq!(wait4_args(-1, 0x100), Err(Errno::EINVAL));
        // wait4 cannot ask for WNOWAIT or WEXITED by name.
        assert_eq!(wait4_args(-1, WNOWAIT), Err(Errno::EINVAL));
        let (_, options) = wait4_args(-1, WUNTRACED).unwrap();
        assert!(options.exited && options.stopped && !options.continued);
    }

    #[test]
    fn waitid_needs_something_to_wait_for() {
        assert_eq!(waitid_args(P_ALL, 0, WNOHANG), Err(Errno::EINVAL));
        assert_eq!(waitid_args(P_ALL, 0, WEXITED).unwrap().0, Which::Any);
        assert_eq!(waitid_args(P_PID, 0, WEXITED), Err(Errno::EINVAL));
        assert_eq!(waitid_args(P_PID, -3, WEXITED), Err(Errno::EINVAL));
        assert_eq!(waitid_args(P_PGID, -3, WEXITED), Err(Errno::EINVAL));
        assert_eq!(
            waitid_args(P_PGID, 0, WEXITED).unwrap().0,
            Which::CallersGroup
        );
        assert_eq!(waitid_args(P_PGID, 9, WSTOPPED).unwrap().0, Which::Group(9));
        assert_eq!(waitid_args(P_PIDFD, 3, WEXITED), Err(Errno::EBADF));
        assert_eq!(waitid_args(4, 3, WEXITED), Err(Errno::EINVAL));
        assert_eq!(waitid_args(P_ALL, 0, WEXITED | 0x100), Err(Errno::EINVAL));
        let (_, options) = waitid_args(P_ALL, 0, WCONTINUED | WNOWAIT).unwrap();
        assert!(!options.exited && options.continued && options.keep);
    }

    #[test]
    fn clone_children_need_wclone_or_wall() {
        let plain = wait4_args(-1, 0).unwrap().1;
        assert!(plain.sees(SIGCHLD) && !plain.sees(0));
        let clones = wait4_args(-1, WCLONE).unwrap().1;
        assert!(!clones.sees(SIGCHLD) && clones.sees(0));
        let all = wait4_args(-1, WALL).unwrap().1;
        assert!(all.sees(SIGCHLD) && all.sees(0));
    }

    #[test]
    fn a_report_is_what_was_asked_for() {
        let exits = waitid_args(P_ALL, 0, WEXITED).unwrap().1;
        let stops = waitid_args(P_ALL, 0, WSTOPPED).unwrap().1;
        let stopped = Some(Change::Stopped(SIGSTOP));
        assert_eq!(Report::of(&exits, None, stopped), None);
        assert_eq!(
            Report::of(&stops, None, stopped),
            Some(Report::Changed(Change::Stopped(SIGSTOP)))
        );
        // An ended child is reported as ended, whatever stop it had.
        assert_eq!(Report::of(&exits, Some(9), stopped), Some(Report::Ended(9)));
        assert_eq!(Report::of(&stops, Some(9), stopped), None);
        assert_eq!(Report::of(&stops, None, Some(Change::Continued)), None);
    }

    #[test]
    fn reports_are_written_as_linux_writes_them() {
        let exited = Report::Ended(wait_status_exited(3));
        assert_eq!(exited.wait_status(), 0x300);
        assert_eq!(exited.code_and_status(), (CLD_EXITED, 3));
        let killed = Report::Ended(wait_status_signaled(SIGKILL));
        assert_eq!(killed.code_and_status(), (CLD_KILLED, SIGKILL as i32));
        let stopped = Report::Changed(Change::Stopped(SIGTSTP));
        assert_eq!(stopped.wait_status(), (SIGTSTP as i32) << 8 | 0x7f);
        assert_eq!(stopped.code_and_status(), (CLD_STOPPED, SIGTSTP as i32));
        let continued = Report::Changed(Change::Continued);
        assert_eq!(continued.wait_status(), 0xffff);
        assert_eq!(continued.code_and_status(), (CLD_CONTINUED, SIGCONT as i32));
    }
}
