//! The terminal requests of ioctl(2), for the console and for either end
//! of a pseudo-terminal (fs/pty.rs): settings (`TCGETS`, `TCSETS*`), the
//! window size, the foreground process group, the controlling terminal
//! (`TIOCSCTTY`, `TIOCNOTTY`, `TIOCGSID`), queues (`FIONREAD`, `TIOCOUTQ`,
//! `TCFLSH`), and a master's own (`TIOCGPTN`, `TIOCSPTLCK`, `TIOCGPTLCK`,
//! `TIOCGPTPEER`). A request a terminal does not know is EINVAL, as Linux's
//! `tty_ioctl` gives for one it passes to the line discipline.

use abi::Errno;
use abi::types::*;
use alloc::sync::Arc;

use super::SysResult;
use crate::fs::console;
use crate::fs::dev::Device;
use crate::fs::file::OpenFile;
use crate::fs::pty::Pty;
use crate::mm::uaccess;
use crate::proc::current;

/// A terminal request on a descriptor open on terminal `device`.
pub fn ioctl(device: Device, request: u32, arg: u64) -> SysResult {
    match device {
        Device::PtyMaster(n) => pty_ioctl(&crate::fs::dev::pair(n)?, true, request, arg),
        Device::PtySlave(n) => pty_ioctl(&crate::fs::dev::pair(n)?, false, request, arg),
        _ => console_ioctl(request, arg),
    }
}

/// Whether process group `pgid` exists in the caller's session.
fn group_in_my_session(pgid: i32) -> bool {
    let sid = current(|p| p.sid);
    pgid > 0
        && crate::proc::TABLE
            .lock()
            .procs
            .values()
            .any(|p| p.pgid == pgid as u32 && p.sid == sid)
}

/// The console: one terminal, everyone's (see fs/console.rs).
fn console_ioctl(request: u32, arg: u64) -> SysResult {
    match request {
        TCGETS => {
            // Linux's kernel struct termios, 36 bytes: no more, or a C
            // library's smaller buffer is overrun (abi::types::Termios).
            uaccess::write(arg, &console::termios())?;
            Ok(0)
        }
        TCSETS | TCSETSW | TCSETSF => {
            console::set_termios(uaccess::read::<Termios>(arg)?);
            Ok(0)
        }
        TIOCGWINSZ => uaccess::write(arg, &console::winsize()).map(|()| 0),
        TIOCSWINSZ => {
            console::set_winsize(uaccess::read::<Winsize>(arg)?);
            Ok(0)
        }
        TIOCGPGRP => {
            uaccess::write(arg, &(console::foreground() as i32))?;
            Ok(0)
        }
        TIOCSPGRP => {
            let pgid: i32 = uaccess::read(arg)?;
            let exists = pgid > 0
                && crate::proc::TABLE
                    .lock()
                    .procs
                    .values()
                    .any(|p| p.pgid == pgid as u32);
            if !exists {
                return Err(if pgid > 0 {
                    Errno::EPERM
                } else {
                    Errno::EINVAL
                });
            }
            console::set_foreground(pgid as u32);
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// One end of a pseudo-terminal (`master` says which).
fn pty_ioctl(pty: &Arc<Pty>, master: bool, request: u32, arg: u64) -> SysResult {
    match request {
        TCGETS => uaccess::write(arg, &pty.termios()).map(|()| 0),
        TCSETS | TCSETSW | TCSETSF => {
            let termios = uaccess::read::<Termios>(arg)?;
            pty.set_termios(termios, request == TCSETSF);
            Ok(0)
        }
        TIOCGWINSZ => uaccess::write(arg, &pty.winsize()).map(|()| 0),
        TIOCSWINSZ => {
            pty.set_winsize(uaccess::read::<Winsize>(arg)?);
            Ok(0)
        }
        FIONREAD => uaccess::write(arg, &(pty.waiting(master) as i32)).map(|()| 0),
        TIOCOUTQ => uaccess::write(arg, &(pty.waiting(!master) as i32)).map(|()| 0),
        TCFLSH => {
            let queue = arg as u32;
            if queue > TCIOFLUSH {
                return Err(Errno::EINVAL);
            }
            pty.flush(master, queue);
            Ok(0)
        }
        // Nothing is slow to drain here, and there is no line to break.
        TCSBRK | TCSBRKP | TCXONC => Ok(0),
        TIOCGPGRP => {
            // The slave's answer is for its own session only (ENOTTY
            // otherwise, as Linux's `tiocgpgrp`); the master may always ask.
            if !master && pty.session() != Some(current(|p| p.sid)) {
                return Err(Errno::ENOTTY);
            }
            uaccess::write(arg, &(pty.foreground() as i32)).map(|()| 0)
        }
        TIOCSPGRP => {
            let pgid: i32 = uaccess::read(arg)?;
            if pty.session() != Some(current(|p| p.sid)) {
                return Err(Errno::ENOTTY);
            }
            if pgid < 0 {
                return Err(Errno::EINVAL);
            }
            if !group_in_my_session(pgid) {
                return Err(Errno::EPERM);
            }
            pty.set_foreground(pgid as u32);
            Ok(0)
        }
        TIOCGSID => match pty.session() {
            Some(sid) => uaccess::write(arg, &(sid as i32)).map(|()| 0),
            None => Err(Errno::ENOTTY),
        },
        TIOCSCTTY => {
            // A session leader with no controlling terminal takes this one,
            // unless it is another session's (root may take it with arg 1).
            let (pid, sid) = current(|p| (p.pid, p.sid));
            if pty.session() == Some(sid) {
                return Ok(0);
            }
            if pid != sid || crate::fs::pty::of_session(sid).is_some() {
                return Err(Errno::EPERM);
            }
            if pty.session().is_some() && !(arg == 1 && crate::proc::cred().euid == 0) {
                return Err(Errno::EPERM);
            }
            pty.set_session(Some(sid));
            Ok(0)
        }
        TIOCNOTTY => {
            let (pid, sid) = current(|p| (p.pid, p.sid));
            if pty.session() != Some(sid) {
                return Err(Errno::ENOTTY);
            }
            // The leader letting go hangs the session up (Linux's
            // `disassociate_ctty`); anyone else just loses it, which a
            // terminal shared by the session cannot show here.
            if pid == sid {
                pty.hang_up_session();
            }
            Ok(0)
        }
        TIOCGPTN if master => uaccess::write(arg, &pty.index).map(|()| 0),
        TIOCSPTLCK if master => {
            pty.set_locked(uaccess::read::<i32>(arg)? != 0);
            Ok(0)
        }
        TIOCGPTLCK if master => uaccess::write(arg, &i32::from(pty.locked())).map(|()| 0),
        TIOCGPTPEER if master => open_peer(pty, arg as u32),
        _ => Err(if master { Errno::ENOTTY } else { Errno::EINVAL }),
    }
}

/// TIOCGPTPEER: opens the master's slave with `flags` (O_RDWR, O_NOCTTY,
/// O_CLOEXEC, O_NONBLOCK...) without a path lookup, as `openpty` does in
/// newer C libraries.
fn open_peer(pty: &Arc<Pty>, flags: u32) -> SysResult {
    let allowed = O_ACCMODE | O_NOCTTY | O_CLOEXEC | O_NONBLOCK;
    if flags & !allowed != 0 {
        return Err(Errno::EINVAL);
    }
    let path = crate::fs::pty::slave_path(pty.index);
    let node = crate::fs::ramfs::lookup(&path)?;
    crate::fs::pty::open_slave_end(pty, flags & O_NOCTTY != 0)?;
    let file = OpenFile::new(crate::fs::file::Kind::Node(node), flags, Some(&path));
    current(|p| p.files.install(&file, flags & O_CLOEXEC != 0, p.fd_limit())).map(|fd| fd as usize)
}
