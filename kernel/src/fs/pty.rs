//! Pseudo-terminals: `/dev/ptmx` and `/dev/pts/N`.
//!
//! A pseudo-terminal is a pair of ends with a terminal's line discipline
//! between them (`kcore::tty`). A terminal emulator, `script`, `ssh` or
//! Python's `pty` module holds the *master* and plays the keyboard and the
//! screen; the program it runs gets the *slave* as its terminal and cannot
//! tell it from a real one. Opening `/dev/ptmx` makes a new pair: the
//! opener gets the master, a device node of its own that no directory
//! names (`Device::PtyMaster(N)`), and `/dev/pts/N` appears for the slave
//! (`Device::PtySlave(N)`), locked until the master says otherwise
//! (`TIOCSPTLCK`: glibc's `unlockpt`). `TIOCGPTN` tells the master its N
//! (`ptsname`). Both ends are terminals (`isatty` is true of each), and
//! reads, writes, poll and ioctl reach the pair through the device.
//!
//! - What the master writes is typed at the slave: it goes through the
//!   line discipline (editing, echo, the signal characters) into what the
//!   slave reads. The echo goes back to the master.
//! - What the slave writes goes through the discipline's output processing
//!   (a newline as CR LF) to the master.
//! - When the last slave descriptor closes, the master reads EIO (Python's
//!   `pty` ends its copy loop on it); when the master closes, the slave
//!   reads end of file, its writes are EIO, and its session's foreground
//!   group gets SIGHUP. The pair goes when both ends are closed.
//!
//! Each end's changes wake its own readers and pollers (`master_ready`,
//! `slave_ready`), so poll, select and epoll watch either end with no code
//! of their own, as they watch a pipe.

use abi::Errno;
use abi::types::{POLLERR, POLLHUP, POLLIN, POLLOUT, Termios, Winsize};
use alloc::collections::{BTreeMap, VecDeque};
use alloc::sync::Arc;
use alloc::vec::Vec;
use kcore::tty::Discipline;

use crate::proc::Pid;
use crate::proc::sched::{self, Chan, Readiness};
use crate::sync::{IrqLock, Rank};

/// Most pairs at once (Linux's default `kernel.pty.max` is 4096; this
/// kernel's processes are fewer).
pub const MAX_PTYS: u32 = 256;

/// Most bytes the slave's output may hold for the master before a slave
/// writer waits (Linux's pty buffer is of this order).
const OUTPUT_ROOM: usize = 64 * 1024;

/// Linux's major number of the slaves (`UNIX98_PTY_SLAVE_MAJOR`).
pub const SLAVE_MAJOR: u64 = 136;

pub struct Pty {
    pub index: u32,
    state: IrqLock<State>,
    /// The master's side changed (output to read, the slave closed).
    pub master_ready: Readiness,
    /// The slave's side changed (input to read, room, the master closed).
    pub slave_ready: Readiness,
}

struct State {
    line: Discipline,
    /// What the slave wrote, and the echo of what the master typed, for the
    /// master to read.
    output: VecDeque<u8>,
    /// Open descriptions of the master: one, unless it was opened again
    /// through `/proc/PID/fd` (the node it leads to).
    master_opens: u32,
    master_open: bool,
    slave_opens: u32,
    /// The slave was opened and all its descriptors have closed since
    /// (Linux's `TTY_OTHER_CLOSED`): a master read is EIO, not a wait.
    slave_closed: bool,
    /// The slave may not be opened yet (`TIOCSPTLCK`).
    locked: bool,
    winsize: Winsize,
    /// The session whose controlling terminal this is, if any.
    session: Option<Pid>,
    /// The process group the signal characters and SIGWINCH go to.
    foreground: Pid,
}

/// Every pair, by its number.
static PTYS: IrqLock<BTreeMap<u32, Arc<Pty>>> = IrqLock::new(Rank::Service, BTreeMap::new());

impl Pty {
    fn master_chan(&self) -> Chan {
        Chan::Pty(self.index, true)
    }

    fn slave_chan(&self) -> Chan {
        Chan::Pty(self.index, false)
    }

    /// A master write: each byte typed at the slave. Signals go to the
    /// foreground group; the echo, processed for output, to the master.
    pub fn master_write(&self, buf: &[u8]) -> Result<usize, Errno> {
        let mut echo = Vec::new();
        let mut signals = Vec::new();
        let mut readable = false;
        let foreground = {
            let mut state = self.state.lock();
            for &byte in buf {
                let received = state.line.receive(byte, &mut echo);
                readable |= received.readable;
                signals.extend(received.signal);
            }
            if !echo.is_empty() {
                let mut shown = Vec::with_capacity(echo.len());
                state.line.output(&echo, &mut shown);
                state.output.extend(shown);
            }
            state.foreground
        };
        if readable || !signals.is_empty() {
            self.slave_ready.changed_for(self.slave_chan(), POLLIN);
        }
        if !echo.is_empty() {
            self.master_ready.changed_for(self.master_chan(), POLLIN);
        }
        for signal in signals {
            crate::signal::send_to_group(foreground, signal, crate::signal::Origin::kernel());
        }
        Ok(buf.len())
    }

    /// A master read: what the slave wrote. EIO once every slave
    /// descriptor has closed, EAGAIN with `nonblock`, else a wait.
    pub fn master_read(&self, buf: &mut [u8], nonblock: bool) -> Result<usize, Errno> {
        let n = sched::wait_event(self.master_chan(), || {
            let mut state = self.state.lock();
            if !state.output.is_empty() {
                let n = buf.len().min(state.output.len());
                for (dst, src) in buf.iter_mut().zip(state.output.drain(..n)) {
                    *dst = src;
                }
                Some(Ok(n))
            } else if state.slave_closed {
                Some(Err(Errno::EIO))
            } else if nonblock {
                Some(Err(Errno::EAGAIN))
            } else {
                None
            }
        })??;
        self.slave_ready.changed_for(self.slave_chan(), POLLOUT);
        Ok(n)
    }

    /// A slave read: what the line discipline gives (a line, in canonical
    /// mode). End of file once the master has closed.
    pub fn slave_read(&self, buf: &mut [u8], nonblock: bool) -> Result<usize, Errno> {
        sched::wait_event(self.slave_chan(), || {
            let mut state = self.state.lock();
            match state.line.read(buf) {
                Some(n) => Some(Ok(n)),
                None if !state.master_open => Some(Ok(0)),
                None if nonblock => Some(Err(Errno::EAGAIN)),
                None => None,
            }
        })?
    }

    /// A slave write: processed for output and queued for the master;
    /// waits while the master has `OUTPUT_ROOM` unread. EIO once the master
    /// has closed.
    pub fn slave_write(&self, buf: &[u8], nonblock: bool) -> Result<usize, Errno> {
        sched::wait_event(self.slave_chan(), || {
            let mut state = self.state.lock();
            if !state.master_open {
                Some(Err(Errno::EIO))
            } else if state.output.len() < OUTPUT_ROOM || buf.is_empty() {
                let mut shown = Vec::with_capacity(buf.len());
                state.line.output(buf, &mut shown);
                state.output.extend(shown);
                Some(Ok(buf.len()))
            } else if nonblock {
                Some(Err(Errno::EAGAIN))
            } else {
                None
            }
        })??;
        self.master_ready.changed_for(self.master_chan(), POLLIN);
        Ok(buf.len())
    }

    /// poll(2) of the master.
    pub fn master_poll(&self) -> i16 {
        let state = self.state.lock();
        let mut ready = POLLOUT;
        if !state.output.is_empty() {
            ready |= POLLIN;
        }
        if state.slave_closed {
            ready |= POLLHUP;
        }
        ready
    }

    /// poll(2) of the slave.
    pub fn slave_poll(&self) -> i16 {
        let state = self.state.lock();
        if !state.master_open {
            return POLLIN | POLLHUP | POLLERR;
        }
        let mut ready = 0;
        if state.line.readable() {
            ready |= POLLIN;
        }
        if state.output.len() < OUTPUT_ROOM {
            ready |= POLLOUT;
        }
        ready
    }

    /// The terminal's settings (TCGETS, from either end).
    pub fn termios(&self) -> Termios {
        self.state.lock().line.termios
    }

    /// TCSETS (TCSETSF also throws typed input away).
    pub fn set_termios(&self, termios: Termios, flush: bool) {
        let woke = {
            let mut state = self.state.lock();
            if flush {
                state.line.flush_input();
            }
            state.line.set_termios(termios)
        };
        if woke {
            self.slave_ready.changed_for(self.slave_chan(), POLLIN);
        }
    }

    pub fn winsize(&self) -> Winsize {
        self.state.lock().winsize
    }

    /// TIOCSWINSZ: a new size, and SIGWINCH to the foreground group if it
    /// changed.
    pub fn set_winsize(&self, winsize: Winsize) {
        let changed = {
            let mut state = self.state.lock();
            let changed = state.winsize != winsize;
            state.winsize = winsize;
            changed.then_some(state.foreground)
        };
        if let Some(group) = changed {
            crate::signal::send_to_group(
                group,
                abi::signal::SIGWINCH,
                crate::signal::Origin::kernel(),
            );
        }
    }

    /// FIONREAD: bytes a read of this end could take now.
    pub fn waiting(&self, master: bool) -> usize {
        let state = self.state.lock();
        if master {
            state.output.len()
        } else {
            state.line.waiting()
        }
    }

    /// TCFLSH from this end (`master` says which): TCIFLUSH throws away
    /// what this end has not read yet, TCOFLUSH what it wrote and the other
    /// has not read, TCIOFLUSH both.
    pub fn flush(&self, master: bool, queue: u32) {
        use abi::types::{TCIFLUSH, TCIOFLUSH, TCOFLUSH};
        let (line, output) = match (queue, master) {
            (TCIOFLUSH, _) => (true, true),
            (TCIFLUSH, false) | (TCOFLUSH, true) => (true, false),
            _ => (false, true),
        };
        let mut state = self.state.lock();
        if line {
            state.line.flush_input();
        }
        if output {
            state.output.clear();
        }
        drop(state);
        self.slave_ready.changed(self.slave_chan());
        self.master_ready.changed(self.master_chan());
    }

    /// The session's leader let go of its controlling terminal
    /// (TIOCNOTTY) or ended: the terminal belongs to no session, and what
    /// was its foreground group gets SIGHUP and SIGCONT.
    pub fn hang_up_session(&self) {
        let group = {
            let mut state = self.state.lock();
            state.session.take().map(|_| state.foreground)
        };
        if let Some(group) = group {
            for signal in [abi::signal::SIGHUP, abi::signal::SIGCONT] {
                crate::signal::send_to_group(group, signal, crate::signal::Origin::kernel());
            }
        }
    }

    /// TIOCSPTLCK.
    pub fn set_locked(&self, locked: bool) {
        self.state.lock().locked = locked;
    }

    pub fn locked(&self) -> bool {
        self.state.lock().locked
    }

    pub fn foreground(&self) -> Pid {
        self.state.lock().foreground
    }

    pub fn set_foreground(&self, group: Pid) {
        self.state.lock().foreground = group;
    }

    pub fn session(&self) -> Option<Pid> {
        self.state.lock().session
    }

    /// Makes this the controlling terminal of session `sid`, whose leader
    /// is also the foreground group's (TIOCSCTTY, or a session leader's
    /// first open of the slave).
    pub fn set_session(&self, sid: Option<Pid>) {
        let mut state = self.state.lock();
        state.session = sid;
        if let Some(sid) = sid {
            state.foreground = sid;
        }
    }

    /// A slave descriptor opened (EIO while the pair is locked or its
    /// master gone).
    pub fn open_slave(&self) -> Result<(), Errno> {
        let mut state = self.state.lock();
        if state.locked || !state.master_open {
            return Err(Errno::EIO);
        }
        state.slave_opens += 1;
        state.slave_closed = false;
        Ok(())
    }

    /// A slave descriptor closed: after the last, the master reads EIO.
    pub fn close_slave(&self) {
        let last = {
            let mut state = self.state.lock();
            state.slave_opens -= 1;
            state.slave_closed = state.slave_opens == 0;
            state.slave_closed
        };
        if last {
            self.master_ready.changed_for(self.master_chan(), POLLHUP);
            forget_if_unused(self);
        }
    }

    /// The master opened again (through a `/proc/PID/fd` link).
    pub fn reopen_master(&self) -> Result<(), Errno> {
        let mut state = self.state.lock();
        if !state.master_open {
            return Err(Errno::EIO);
        }
        state.master_opens += 1;
        Ok(())
    }

    /// A master description closed. After the last, the slave is hung up,
    /// its name goes, and its session's foreground group gets SIGHUP and
    /// SIGCONT (Linux's `tty_vhangup`, without stopping the group for
    /// good).
    pub fn close_master(&self) {
        let hung_up = {
            let mut state = self.state.lock();
            state.master_opens -= 1;
            if state.master_opens > 0 {
                return;
            }
            state.master_open = false;
            state.session.map(|_| state.foreground)
        };
        let _ = super::ramfs::remove_device_node(&slave_path(self.index));
        self.slave_ready.changed(self.slave_chan());
        if let Some(group) = hung_up {
            for signal in [abi::signal::SIGHUP, abi::signal::SIGCONT] {
                crate::signal::send_to_group(group, signal, crate::signal::Origin::kernel());
            }
        }
        forget_if_unused(self);
    }
}

/// Drops a pair from the table once neither end is open, so its number
/// can be used again.
fn forget_if_unused(pty: &Pty) {
    let unused = {
        let state = pty.state.lock();
        !state.master_open && state.slave_opens == 0
    };
    if unused {
        PTYS.lock().remove(&pty.index);
    }
}

/// The group that owns the slaves' nodes (Debian's `tty`, as devpts'
/// `gid=5` mount option gives).
pub const TTY_GROUP: u32 = 5;

/// The pseudo-terminal that is session `sid`'s controlling terminal.
pub fn of_session(sid: Pid) -> Option<Arc<Pty>> {
    // The pairs' own locks come before the table's in the order
    // (sync.rs), so they are asked once it is let go.
    let all: Vec<Arc<Pty>> = PTYS.lock().values().cloned().collect();
    all.into_iter().find(|pty| pty.session() == Some(sid))
}

/// The current process, `pid`, is ending: if it leads a session, the
/// session's controlling terminal is hung up (Linux's `disassociate_ctty`).
pub fn process_ended(pid: Pid) {
    let sid = crate::proc::current(|p| p.sid);
    if pid == sid
        && let Some(pty) = of_session(sid)
    {
        pty.hang_up_session();
    }
}

/// A slave descriptor of `pty` opens (`open_slave`), and without
/// O_NOCTTY (`noctty`) may make it the caller's controlling terminal
/// (`acquire_if_leader`): open(2) of `/dev/pts/N` and TIOCGPTPEER alike.
pub fn open_slave_end(pty: &Arc<Pty>, noctty: bool) -> Result<(), Errno> {
    pty.open_slave()?;
    if !noctty {
        acquire_if_leader(pty);
    }
    Ok(())
}

/// A slave opened without O_NOCTTY becomes the caller's controlling
/// terminal if the caller leads a session that has none and the terminal
/// belongs to no session (Linux's `tty_open`).
pub fn acquire_if_leader(pty: &Arc<Pty>) {
    let (pid, sid) = crate::proc::current(|p| (p.pid, p.sid));
    if pid == sid && pty.session().is_none() && of_session(sid).is_none() {
        pty.set_session(Some(sid));
    }
}

/// The slave's path.
pub fn slave_path(index: u32) -> alloc::string::String {
    alloc::format!("/dev/pts/{index}")
}

/// The pair numbered `index`.
pub fn get(index: u32) -> Option<Arc<Pty>> {
    PTYS.lock().get(&index).cloned()
}

/// Opening `/dev/ptmx`: a new pair, numbered by the lowest free number,
/// its slave named `/dev/pts/N` for `uid` and `gid` (mode 0620, as devpts
/// makes them), locked. Returns the pair and the master's node, which no
/// directory names. ENOSPC when `MAX_PTYS` are in use.
pub fn open_master(uid: u32, gid: u32) -> Result<(Arc<Pty>, super::ramfs::NodeRef), Errno> {
    let pty = {
        let mut ptys = PTYS.lock();
        let index = (0..MAX_PTYS)
            .find(|i| !ptys.contains_key(i))
            .ok_or(Errno::ENOSPC)?;
        let pty = Arc::new(Pty {
            index,
            state: IrqLock::new(
                Rank::Channel,
                State {
                    line: Discipline::new(Termios::standard()),
                    output: VecDeque::new(),
                    master_opens: 1,
                    master_open: true,
                    slave_opens: 0,
                    slave_closed: false,
                    locked: true,
                    winsize: Winsize::default(),
                    session: None,
                    foreground: 0,
                },
            ),
            master_ready: Readiness::new(),
            slave_ready: Readiness::new(),
        });
        ptys.insert(index, pty.clone());
        pty
    };
    let slave = super::dev::Device::PtySlave(pty.index);
    if let Err(e) = super::ramfs::make_device_node(&slave_path(pty.index), slave, 0o620, uid, gid) {
        PTYS.lock().remove(&pty.index);
        return Err(e);
    }
    let master = super::ramfs::nameless_device(super::dev::Device::PtyMaster(pty.index), 0o666);
    Ok((pty, master))
}
