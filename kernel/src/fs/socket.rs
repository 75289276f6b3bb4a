//! Unix-domain sockets: byte streams, datagrams and sequenced packets
//! between processes of this machine, with descriptors and credentials
//! passed along.
//!
//! A socket is a receive queue of messages and a connection. Sending puts a
//! `Message` (bytes, the descriptors passed with them, the sender's
//! credentials and name) on the *receiver's* queue, so each socket's queue
//! is bounded by one limit and a full receiver holds its senders back, as a
//! full pipe does. Everyone who waits on a socket waits on its channel
//! (`Chan::Socket`): readers for messages, writers for room in it, an
//! accepting listener for a connection, a connecting client for room in a
//! listener's backlog; every change wakes it (`wake`: its channel and its `PollQueue`), so
//! poll and select wake too.
//!
//! - **Stream** (SOCK_STREAM): bytes, without boundaries; a read takes what
//!   is there, across messages, up to and including the byte that carried
//!   descriptors (they arrive with it, as on Linux) and never bytes of two
//!   senders at once.
//! - **Sequenced packets** (SOCK_SEQPACKET): connected like a stream, but a
//!   read takes one message, and what does not fit is lost (MSG_TRUNC).
//! - **Datagrams** (SOCK_DGRAM): a message to a named socket or to the one
//!   `connect` chose; no connection to lose: a receiver that is gone is
//!   ECONNREFUSED.
//!
//! Connecting (stream, seqpacket) makes the server's socket at once and
//! queues it on the listener's backlog, so the client may send before
//! `accept` (Linux does the same). Peers hold each other weakly: a socket
//! lives as long as its open files (and a backlog or a message in flight
//! holding it), and its `Drop` tells the peer, which then reads the end of
//! the stream and gets EPIPE for a write; ECONNRESET if data was left
//! unread (or it was never accepted), as Linux says.
//!
//! Names: a path (a node of the file system that names the socket, made by
//! `bind` and left behind when the socket closes, as on Unix: connecting to
//! it then is ECONNREFUSED), or a name in Linux's abstract namespace (a
//! leading NUL byte), which goes with the socket.
//!
//! Rings in flight: a socket's descriptor sent into its own queue (or
//! around a ring of sockets) and then closed keeps the ring alive, each
//! open file held only by a message no one can receive. Linux's `unix_gc`
//! finds such rings, and so does `collect_rings` here, after a socket's
//! descriptor is closed: every socket file sitting in a queue is counted
//! (`Passed`, `IN_FLIGHT`); one whose references are all such messages is a
//! candidate; a candidate is still reachable if some of its messages sit
//! in a queue that is not a candidate's, or in the queue of a reachable
//! one; the rest are garbage, and their queues are emptied, which lets the
//! files go.
//!
//! Internet sockets (`Domain::Inet`) are these same sockets with other
//! names, as this machine's only network is its loopback interface: TCP
//! is a stream, UDP and UDP-Lite are datagrams. Their names are
//! `Endpoint`s in one table of ports (`PORTS`, rules in `kcore::inet`);
//! a TCP connect finds a listener there; a UDP datagram is addressed anew
//! each time (a connected UDP socket remembers an address, not a socket),
//! never waits, and is dropped when no one holds the port or the
//! receiver's queue is full, as a network would drop it.
//!
//! Not done: out-of-band data; rings through a listener's backlog of
//! unaccepted sockets; for Internet sockets, TCP's half-open states (a
//! connection is made at once) and IPv6's control messages other than a
//! datagram's hop limit and traffic class.

use abi::Errno;
use abi::socket::{
    IPPROTO_IPV6, IPV6_TCLASS, IPV6_UNICAST_HOPS, IPV6_V6ONLY, SO_RCVBUF, SO_REUSEADDR,
    SO_REUSEPORT, SOL_SOCKET, Ucred,
};
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use kcore::inet::{Binding, Endpoint, Ports, Proto};

use super::file::OpenFile;
use crate::proc::sched::{self, Chan, Readiness};
use crate::sync::{IrqLock, Rank};

/// Bytes a socket's receive queue holds before senders wait.
pub const CAPACITY: usize = 128 * 1024;
/// Datagrams a receive queue holds before senders wait: more than this many
/// is full (Linux's `net.unix.max_dgram_qlen`, 10).
const MAX_DGRAM_QUEUE: usize = 10;
/// The largest backlog `listen` takes (Linux's SOMAXCONN).
const MAX_BACKLOG: usize = 4096;

/// The family a socket belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    Unix,
    /// AF_INET or AF_INET6, over TCP, UDP or UDP-Lite.
    Inet {
        family: u16,
        proto: Proto,
    },
}

impl Domain {
    /// Its AF_ number (SO_DOMAIN, and the first field of its names).
    pub fn family(self) -> u16 {
        match self {
            Domain::Unix => abi::socket::AF_UNIX,
            Domain::Inet { family, .. } => family,
        }
    }
}

/// The largest UDP payload: 65535 less the IPv4 and UDP headers (IPv6's
/// header is not counted in its payload length).
fn max_udp_payload(family: u16) -> usize {
    if family == abi::socket::AF_INET {
        65507
    } else {
        65527
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Stream,
    Dgram,
    SeqPacket,
}

impl Type {
    /// Connected before it can send: stream and seqpacket.
    pub fn connection_oriented(self) -> bool {
        self != Type::Dgram
    }

    /// SOCK_STREAM, SOCK_DGRAM or SOCK_SEQPACKET (SO_TYPE).
    pub fn number(self) -> u32 {
        use abi::socket::*;
        match self {
            Type::Stream => SOCK_STREAM,
            Type::Dgram => SOCK_DGRAM,
            Type::SeqPacket => SOCK_SEQPACKET,
        }
    }
}

/// A socket's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    /// Not bound: `getsockname` gives just the family.
    Unnamed,
    /// A path, as given to bind (what getsockname returns).
    Path(String),
    /// A name in the abstract namespace (without its leading NUL).
    Abstract(Vec<u8>),
    /// An Internet address and port.
    Inet(Endpoint),
}

/// One send: what a receive hands over.
struct Message {
    bytes: Vec<u8>,
    /// Bytes a stream read has taken already.
    taken: usize,
    files: Passed,
    cred: Ucred,
    from: Address,
    /// An IPv6 datagram's hop limit and traffic class (what
    /// IPV6_RECVHOPLIMIT and IPV6_RECVTCLASS report).
    ipv6: Option<(i32, i32)>,
}

/// The socket files in some queue, by their open file's id: a weak
/// reference and how many messages hold it. Every change moves the
/// generation, so the collector can tell that nothing went in or out of a
/// queue while it looked.
struct InFlight {
    files: BTreeMap<u64, (Weak<OpenFile>, usize)>,
    generation: u64,
}

static IN_FLIGHT: IrqLock<InFlight> = IrqLock::new(
    Rank::Service,
    InFlight {
        files: BTreeMap::new(),
        generation: 0,
    },
);

/// The descriptors a message carries (SCM_RIGHTS), counted in
/// `IN_FLIGHT` while they sit in a queue: from the send that queues them
/// to the receive that takes them (or the queue's end).
#[derive(Default)]
struct Passed(Vec<Arc<OpenFile>>);

impl Passed {
    fn new(files: Vec<Arc<OpenFile>>) -> Passed {
        Self::count(&files, true);
        Passed(files)
    }

    fn count(files: &[Arc<OpenFile>], into_queue: bool) {
        let mut sockets = files
            .iter()
            .filter(|f| matches!(f.kind, super::file::Kind::Socket(_)))
            .peekable();
        if sockets.peek().is_none() {
            return;
        }
        let mut flight = IN_FLIGHT.lock();
        flight.generation += 1;
        for file in sockets {
            if into_queue {
                flight
                    .files
                    .entry(file.id)
                    .or_insert_with(|| (Arc::downgrade(file), 0))
                    .1 += 1;
            } else if let Some(entry) = flight.files.get_mut(&file.id) {
                entry.1 -= 1;
                if entry.1 == 0 {
                    flight.files.remove(&file.id);
                }
            }
        }
    }

    /// The files, out of the queue (a receive).
    fn take(&mut self) -> Vec<Arc<OpenFile>> {
        let files = core::mem::take(&mut self.0);
        Self::count(&files, false);
        files
    }

    /// More references to the files, which stay in the queue (a peek).
    fn peek(&self) -> Vec<Arc<OpenFile>> {
        self.0.clone()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Drop for Passed {
    fn drop(&mut self) {
        Self::count(&self.0, false);
    }
}

impl Message {
    fn left(&self) -> &[u8] {
        &self.bytes[self.taken..]
    }
}

/// What a send hands over.
pub struct Outgoing<'a> {
    pub bytes: &'a [u8],
    /// Passed along (SCM_RIGHTS).
    pub files: Vec<Arc<OpenFile>>,
    /// The credentials the sender stated (SCM_CREDENTIALS); None: the
    /// caller's.
    pub cred: Option<Ucred>,
    /// Where a datagram goes, if not to the connected peer.
    pub to: Option<Arc<Socket>>,
    /// Where a UDP datagram goes, if not to the address connected to.
    pub to_inet: Option<Endpoint>,
    /// An IPv6 datagram's hop limit and traffic class, as sendmsg's
    /// control messages state them (-1 or none: the socket's setting).
    pub hop_limit: Option<i32>,
    pub tclass: Option<i32>,
}

impl<'a> Outgoing<'a> {
    /// Just bytes, to the peer (write(2)).
    pub fn bytes(bytes: &'a [u8]) -> Self {
        Outgoing {
            bytes,
            files: Vec::new(),
            cred: None,
            to: None,
            to_inet: None,
            hop_limit: None,
            tclass: None,
        }
    }
}

/// What a receive got.
pub struct Received {
    /// Bytes copied into the buffer.
    pub len: usize,
    /// The message's whole length (seqpacket, dgram): more than `len` when
    /// it was cut short.
    pub whole: usize,
    pub files: Vec<Arc<OpenFile>>,
    /// The sender's credentials (of the first message read).
    pub cred: Ucred,
    pub from: Address,
    /// An IPv6 datagram's hop limit and traffic class.
    pub ipv6: Option<(i32, i32)>,
}

enum Conn {
    Unconnected,
    Listening {
        backlog: usize,
        pending: VecDeque<Arc<Socket>>,
    },
    /// To the peer (stream, seqpacket), or the default destination (dgram).
    Connected(Weak<Socket>),
}

/// shutdown bits: no more reading, no more writing (Linux's RCV_SHUTDOWN and
/// SEND_SHUTDOWN).
const SHUT_READ: u8 = 1;
const SHUT_WRITE: u8 = 2;

struct State {
    name: Address,
    conn: Conn,
    /// The peer's name when it connected (getpeername, and accept's answer).
    peer_name: Address,
    /// Who is at the other end (SO_PEERCRED): the connecting process for
    /// an accepted socket, the listening one for a client, the creator for
    /// a pair.
    peer_cred: Option<Ucred>,
    /// Whose socket it is: the creator's, then the process that called
    /// listen (what a client's SO_PEERCRED reports).
    cred: Ucred,
    rx: VecDeque<Message>,
    rx_bytes: usize,
    shut: u8,
    /// An error to report once (SO_ERROR, or the next read): ECONNRESET.
    error: Option<Errno>,
    /// SO_PASSCRED: receives say who sent.
    passcred: bool,
    /// Made by connect, not yet accepted.
    embryo: bool,
    /// Its last descriptor closed (`release`).
    released: bool,
    /// Options set and read back (`kcore::inet::int_option`), by level
    /// and name.
    options: BTreeMap<(i32, i32), i32>,
}

impl State {
    fn new(name: Address, conn: Conn, peer_cred: Option<Ucred>) -> State {
        State {
            name,
            conn,
            peer_name: Address::Unnamed,
            peer_cred,
            cred: own_cred(),
            rx: VecDeque::new(),
            rx_bytes: 0,
            shut: 0,
            error: None,
            passcred: false,
            embryo: false,
            released: false,
            options: BTreeMap::new(),
        }
    }
}

pub struct Socket {
    pub domain: Domain,
    pub ty: Type,
    state: IrqLock<State>,
    /// Its changes (a message in or out, a connection, a shutdown) and
    /// its pollers.
    pub ready: Readiness,
}

/// The abstract namespace: names to sockets, each gone with its socket.
static ABSTRACT: IrqLock<BTreeMap<Vec<u8>, Weak<Socket>>> =
    IrqLock::new(Rank::Service, BTreeMap::new());

/// The Internet ports held, each by a socket until it closes. Taken after
/// a socket's own lock (Service after Channel), never the other way.
static PORTS: IrqLock<Ports<Weak<Socket>>> = IrqLock::new(Rank::Service, Ports::new());

/// Whether `weak` is `socket`.
fn is(socket: &Socket) -> impl Fn(&Weak<Socket>) -> bool + '_ {
    move |weak| core::ptr::eq(weak.as_ptr(), socket)
}

/// The caller's credentials as a socket reports them: its process id and
/// effective ids (Linux's `cred_to_ucred`).
pub fn own_cred() -> Ucred {
    let (pid, cred) = crate::proc::current(|p| (p.pid, p.cred.clone()));
    Ucred {
        pid: pid as i32,
        uid: cred.euid,
        gid: cred.egid,
    }
}

impl Socket {
    pub fn new(domain: Domain, ty: Type) -> Arc<Socket> {
        Self::with_state(domain, ty, Conn::Unconnected, None)
    }

    /// An unnamed socket of `domain` and `ty`, connected as `conn`, whose
    /// other end is `peer` (SO_PEERCRED).
    fn with_state(domain: Domain, ty: Type, conn: Conn, peer: Option<Ucred>) -> Arc<Socket> {
        Arc::new(Socket {
            domain,
            ty,
            state: IrqLock::new(Rank::Channel, State::new(Address::Unnamed, conn, peer)),
            ready: Readiness::new(),
        })
    }

    /// socketpair(2): two Unix-domain sockets connected to each other.
    pub fn pair(ty: Type) -> (Arc<Socket>, Arc<Socket>) {
        let cred = Some(own_cred());
        let a = Self::with_state(Domain::Unix, ty, Conn::Unconnected, cred);
        let b = Self::with_state(Domain::Unix, ty, Conn::Connected(Arc::downgrade(&a)), cred);
        a.state.lock().conn = Conn::Connected(Arc::downgrade(&b));
        (a, b)
    }

    fn chan(&self) -> Chan {
        Chan::Socket(self as *const Socket as usize)
    }

    /// Something changed: wakes whoever waits on this socket (and pollers).
    fn wake(&self) {
        self.ready.changed(self.chan());
    }

    pub fn name(&self) -> Address {
        self.state.lock().name.clone()
    }

    /// getpeername: ENOTCONN unless connected.
    pub fn peer_name(&self) -> Result<Address, Errno> {
        let s = self.state.lock();
        match s.conn {
            Conn::Connected(_) => Ok(s.peer_name.clone()),
            _ => Err(Errno::ENOTCONN),
        }
    }

    /// SO_PEERCRED: Linux answers an unconnected socket with pid 0 and the
    /// overflow ids.
    pub fn peer_cred(&self) -> Ucred {
        self.state.lock().peer_cred.unwrap_or(Ucred {
            pid: 0,
            uid: 65534,
            gid: 65534,
        })
    }

    pub fn set_passcred(&self, on: bool) {
        self.state.lock().passcred = on;
    }

    pub fn passcred(&self) -> bool {
        self.state.lock().passcred
    }

    pub fn listening(&self) -> bool {
        matches!(self.state.lock().conn, Conn::Listening { .. })
    }

    /// SO_ERROR: the pending error, cleared by reading it.
    pub fn take_error(&self) -> Option<Errno> {
        self.state.lock().error.take()
    }

    /// Names the socket `name`. A path becomes a node of the file system
    /// (`resolved`, the path made absolute; EADDRINUSE if anything has that
    /// name); an abstract name is EADDRINUSE while another socket has it.
    /// A socket is named once (EINVAL).
    ///
    /// Linux's order: a path is made first, so a taken path is EADDRINUSE
    /// even for a socket named already (whose new node is then removed);
    /// an abstract name checks the socket first.
    pub fn bind(self: &Arc<Self>, name: Address, resolved: &str, perm: u32) -> Result<(), Errno> {
        let in_use = |e| {
            if e == Errno::EEXIST {
                Errno::EADDRINUSE
            } else {
                e
            }
        };
        match &name {
            Address::Unnamed => return Err(Errno::EINVAL),
            Address::Inet(local) => return self.bind_inet(*local),
            Address::Path(_) => {
                super::ramfs::make_socket(resolved, perm, Arc::downgrade(self)).map_err(in_use)?;
                let mut s = self.state.lock();
                if s.name != Address::Unnamed {
                    drop(s);
                    let _ = super::ramfs::remove(resolved, false);
                    return Err(Errno::EINVAL);
                }
                s.name = name;
            }
            Address::Abstract(bytes) => {
                let mut s = self.state.lock();
                if s.name != Address::Unnamed {
                    return Err(Errno::EINVAL);
                }
                let mut names = ABSTRACT.lock();
                if names.get(bytes).is_some_and(|s| s.strong_count() > 0) {
                    return Err(Errno::EADDRINUSE);
                }
                names.insert(bytes.clone(), Arc::downgrade(self));
                drop(names);
                s.name = name;
            }
        }
        Ok(())
    }

    /// bind with no name (or a send or listen from an unnamed socket
    /// with SO_PASSCRED): a fresh abstract name of five hex digits, as
    /// Linux's autobind.
    pub fn autobind(self: &Arc<Self>) -> Result<(), Errno> {
        static NEXT: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
        loop {
            let n = NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed) & 0xfffff;
            let name = alloc::format!("{n:05x}").into_bytes();
            match self.bind(Address::Abstract(name), "", 0) {
                Err(Errno::EADDRINUSE) => continue,
                other => return other,
            }
        }
    }

    /// The socket named `name`: a path (`resolved`, absolute) must name a
    /// socket (ECONNREFUSED otherwise, or when it has closed), an abstract
    /// name a live one (ECONNREFUSED).
    pub fn find(name: &Address, resolved: &str) -> Result<Arc<Socket>, Errno> {
        let found = match name {
            Address::Unnamed => return Err(Errno::EINVAL),
            Address::Path(_) => super::ramfs::socket_at(resolved)?,
            Address::Abstract(bytes) => ABSTRACT.lock().get(bytes).cloned(),
            Address::Inet(to) => PORTS.lock().find(Proto::Tcp, to, true, |_| true).cloned(),
        };
        found.and_then(|s| s.upgrade()).ok_or(Errno::ECONNREFUSED)
    }

    /// listen(2): a named stream or seqpacket socket that is not connected
    /// starts taking connections, up to `backlog` waiting (again: a new
    /// backlog).
    pub fn listen(self: &Arc<Self>, backlog: i32) -> Result<(), Errno> {
        if !self.ty.connection_oriented() {
            return Err(Errno::EOPNOTSUPP);
        }
        let backlog = usize::try_from(backlog).unwrap_or(0).min(MAX_BACKLOG);
        let cred = own_cred();
        // An Internet socket listens on an ephemeral port if it has none.
        if matches!(self.domain, Domain::Inet { .. }) {
            self.autobind_inet()?;
        }
        let mut s = self.state.lock();
        if s.name == Address::Unnamed {
            return Err(Errno::EINVAL);
        }
        if matches!(s.conn, Conn::Connected(_)) {
            return Err(Errno::EINVAL);
        }
        if matches!(self.domain, Domain::Inet { .. }) {
            PORTS.lock().listen(is(self))?;
        }
        match &mut s.conn {
            Conn::Connected(_) => return Err(Errno::EINVAL),
            Conn::Listening { backlog: b, .. } => *b = backlog,
            conn @ Conn::Unconnected => {
                *conn = Conn::Listening {
                    backlog,
                    pending: VecDeque::new(),
                }
            }
        }
        s.cred = cred;
        Ok(())
    }

    /// connect(2). A stream or seqpacket socket queues a new server-side
    /// socket on `target`'s backlog (waiting while it is full, EAGAIN
    /// when `nonblock`) and is connected to it at once; a datagram socket
    /// just remembers `target` as where its sends go.
    pub fn connect(self: &Arc<Self>, target: Arc<Socket>, nonblock: bool) -> Result<(), Errno> {
        self.connect_named(target, nonblock, None)
    }

    /// connect, with the names of the two ends of an Internet connection
    /// (`inet`: the client's and the server's address as they speak to
    /// each other) in place of the client's and the listener's names.
    fn connect_named(
        self: &Arc<Self>,
        target: Arc<Socket>,
        nonblock: bool,
        inet: Option<(Endpoint, Endpoint)>,
    ) -> Result<(), Errno> {
        if target.ty != self.ty {
            return Err(Errno::EPROTOTYPE);
        }
        let own_name = {
            let s = self.state.lock();
            match s.conn {
                Conn::Connected(_) if self.ty.connection_oriented() => {
                    return Err(Errno::EISCONN);
                }
                Conn::Listening { .. } => return Err(Errno::EINVAL),
                _ => match inet {
                    Some((client, _)) => Address::Inet(client),
                    None => s.name.clone(),
                },
            }
        };
        if !self.ty.connection_oriented() {
            let peer_name = target.name();
            let mut s = self.state.lock();
            s.conn = Conn::Connected(Arc::downgrade(&target));
            s.peer_name = peer_name;
            return Ok(());
        }
        // The server's end, made ready outside the listener's lock (it
        // becomes a socket only once the backlog takes it).
        let mut server_state = Some(State {
            peer_name: own_name,
            embryo: true,
            ..State::new(
                Address::Unnamed,
                Conn::Connected(Arc::downgrade(self)),
                Some(own_cred()),
            )
        });
        let (listener_name, listener_cred, server) = sched::wait_event(target.chan(), || {
            let mut t = target.state.lock();
            let name = match inet {
                Some((_, server)) => Address::Inet(server),
                None => t.name.clone(),
            };
            let (cred, options) = (t.cred, t.options.clone());
            let Conn::Listening { backlog, pending } = &mut t.conn else {
                return Some(Err(Errno::ECONNREFUSED));
            };
            if pending.len() > *backlog {
                return nonblock.then_some(Err(Errno::EAGAIN));
            }
            let mut state = server_state.take().expect("taken once");
            state.name = name.clone();
            // An accepted socket starts with its listener's options.
            state.options = options;
            let server = Arc::new(Socket {
                domain: target.domain,
                ty: self.ty,
                state: IrqLock::new(Rank::Channel, state),
                ready: Readiness::new(),
            });
            pending.push_back(server.clone());
            Some(Ok((name, cred, server)))
        })??;
        {
            let mut s = self.state.lock();
            s.conn = Conn::Connected(Arc::downgrade(&server));
            s.peer_name = listener_name;
            s.peer_cred = Some(listener_cred);
            if let Some((client, _)) = inet {
                s.name = Address::Inet(client);
            }
        }
        target.wake();
        Ok(())
    }

    /// accept(2): the next connection on the backlog (EINVAL if not
    /// listening; waits, or EAGAIN when `nonblock`).
    pub fn accept(&self, nonblock: bool) -> Result<Arc<Socket>, Errno> {
        let server = sched::wait_event(self.chan(), || {
            let mut s = self.state.lock();
            let Conn::Listening { pending, .. } = &mut s.conn else {
                return Some(Err(Errno::EINVAL));
            };
            match pending.pop_front() {
                Some(server) => Some(Ok(server)),
                None if nonblock => Some(Err(Errno::EAGAIN)),
                None => None,
            }
        })??;
        server.state.lock().embryo = false;
        // A client waiting for room in the backlog may go on.
        self.wake();
        Ok(server)
    }

    /// The checks a send makes before any byte is copied in (so a bad
    /// buffer on an unconnected socket is ENOTCONN, as on Linux): a
    /// connection-oriented socket given an address (`addressed`) is EISCONN,
    /// or EOPNOTSUPP unconnected; with none it must be connected (ENOTCONN)
    /// and not shut for writing (EPIPE, with SIGPIPE when `signal`); a
    /// datagram socket needs an address or a connection (ENOTCONN).
    pub fn may_send(&self, addressed: bool, signal: bool) -> Result<(), Errno> {
        let s = self.state.lock();
        let connected = matches!(s.conn, Conn::Connected(_));
        let inet = matches!(self.domain, Domain::Inet { .. });
        let verdict = if !self.ty.connection_oriented() {
            if addressed || connected {
                Ok(())
            } else if inet {
                Err(Errno::EDESTADDRREQ)
            } else {
                Err(Errno::ENOTCONN)
            }
        } else if inet {
            // TCP passes over an address, and an unconnected or shut
            // socket has no stream to write to.
            if connected && s.shut & SHUT_WRITE == 0 {
                Ok(())
            } else {
                Err(Errno::EPIPE)
            }
        } else {
            match (addressed, connected) {
                (true, true) => Err(Errno::EISCONN),
                (true, false) => Err(Errno::EOPNOTSUPP),
                (false, false) => Err(Errno::ENOTCONN),
                (false, true) if s.shut & SHUT_WRITE != 0 => Err(Errno::EPIPE),
                (false, true) => Ok(()),
            }
        };
        drop(s);
        sigpipe_on(verdict, signal)
    }

    /// Where a send goes (after `may_send`): the connected peer (EPIPE if
    /// it has gone), or `to`, or the datagram socket's chosen one
    /// (ECONNREFUSED if it has gone).
    fn destination(&self, to: Option<Arc<Socket>>) -> Result<Arc<Socket>, Errno> {
        self.may_send(to.is_some(), false)?;
        if let Some(to) = to {
            return Ok(to);
        }
        let peer = match &self.state.lock().conn {
            Conn::Connected(peer) => peer.clone(),
            _ => return Err(Errno::ENOTCONN),
        };
        peer.upgrade().ok_or(if self.ty.connection_oriented() {
            Errno::EPIPE
        } else {
            Errno::ECONNREFUSED
        })
    }

    /// Sends `out.bytes` with the descriptors `out.files` (they go with the
    /// first byte), to the peer or, for a datagram socket, to `out.to`.
    /// Waits for room unless `nonblock` (EAGAIN; a stream returns what it
    /// sent). EPIPE once the other end cannot read, with SIGPIPE when
    /// `signal`. A stream sends in pieces as room appears; the others whole
    /// (EMSGSIZE past `CAPACITY`).
    pub fn send(
        self: &Arc<Self>,
        out: Outgoing,
        nonblock: bool,
        signal: bool,
    ) -> Result<usize, Errno> {
        sigpipe_on(self.send_to_peer(out, nonblock), signal)
    }

    fn send_to_peer(self: &Arc<Self>, out: Outgoing, nonblock: bool) -> Result<usize, Errno> {
        if matches!(self.domain, Domain::Inet { .. }) {
            if self.ty == Type::Dgram {
                return self.send_datagram_inet(&out);
            }
            if let Some(sent) = self.send_to_closed_peer(out.bytes.len()) {
                return Ok(sent);
            }
        }
        let Outgoing {
            bytes,
            files,
            cred,
            to,
            ..
        } = out;
        let peer = self.destination(to)?;
        let stream = self.ty == Type::Stream;
        // Nothing to send on a stream (descriptors need a byte to go with).
        if stream && bytes.is_empty() {
            return Ok(0);
        }
        if !stream && bytes.len() > CAPACITY {
            return Err(Errno::EMSGSIZE);
        }
        // A datagram receiver connected back to the sender is bounded by
        // bytes alone, not by its count of datagrams (Linux's rule).
        let mut count_bounded = true;
        if self.ty == Type::Dgram {
            let p = peer.state.lock();
            if p.released {
                return Err(Errno::ECONNREFUSED);
            }
            // A datagram socket connected elsewhere takes nothing from us.
            if let Conn::Connected(other) = &p.conn {
                if !Weak::ptr_eq(other, &Arc::downgrade(self)) {
                    return Err(Errno::EPERM);
                }
                count_bounded = false;
            }
        }
        let (cred, from) = (cred.unwrap_or_else(own_cred), self.name());
        let mut files = Some(files);
        let mut done = 0;
        loop {
            let step = sched::wait_event(peer.chan(), || {
                let mut p = peer.state.lock();
                if self.ty.connection_oriented() && p.shut & SHUT_READ != 0 {
                    return Some(Err(Errno::EPIPE));
                }
                let room = CAPACITY - p.rx_bytes.min(CAPACITY);
                let n = if stream {
                    room.min(bytes.len() - done)
                } else {
                    bytes.len()
                };
                let full = if stream {
                    n == 0 && done < bytes.len()
                } else if self.ty == Type::Dgram {
                    (count_bounded && p.rx.len() > MAX_DGRAM_QUEUE) || room < n
                } else {
                    room < n && !p.rx.is_empty()
                };
                if full {
                    return nonblock.then_some(Err(Errno::EAGAIN));
                }
                p.rx_bytes += n;
                p.rx.push_back(Message {
                    bytes: bytes[done..done + n].to_vec(),
                    taken: 0,
                    files: Passed::new(files.take().unwrap_or_default()),
                    cred,
                    from: from.clone(),
                    ipv6: None,
                });
                Some(Ok(n))
            });
            match step {
                Ok(Ok(n)) => {
                    done += n;
                    peer.wake();
                    if done == bytes.len() {
                        return Ok(done);
                    }
                }
                Ok(Err(e)) | Err(e) if done == 0 => return Err(e),
                _ => return Ok(done),
            }
        }
    }

    /// Receives into `buf`: a stream takes bytes across messages of one
    /// sender, stopping after passed descriptors; the others take one
    /// message, cut to `buf`.
    /// `peek` leaves the queue as it is (passed descriptors are shared,
    /// not moved); `wait_all` waits until `buf` is full (a stream, until
    /// the end or a signal). With nothing to read: 0 at the end of a
    /// connection, the pending error (once), EAGAIN if `nonblock`, else
    /// waits. A stream or seqpacket socket that is not connected is EINVAL.
    pub fn recv(
        &self,
        buf: &mut [u8],
        peek: bool,
        wait_all: bool,
        nonblock: bool,
    ) -> Result<Received, Errno> {
        let stream = self.ty == Type::Stream;
        let mut got = Received {
            len: 0,
            whole: 0,
            files: Vec::new(),
            cred: Ucred::default(),
            from: Address::Unnamed,
            ipv6: None,
        };
        let waited = sched::wait_event(self.chan(), || {
            let mut s = self.state.lock();
            if self.ty.connection_oriented() && !matches!(s.conn, Conn::Connected(_)) {
                return Some(Err(match self.domain {
                    Domain::Inet { .. } => Errno::ENOTCONN,
                    Domain::Unix => Errno::EINVAL,
                }));
            }
            if s.rx.is_empty() {
                if got.len > 0 && !(wait_all && stream) {
                    return Some(Ok(()));
                }
                if let Some(e) = s.error.take() {
                    return Some(if got.len > 0 { Ok(()) } else { Err(e) });
                }
                if s.shut & SHUT_READ != 0 {
                    return Some(Ok(()));
                }
                return nonblock.then_some(if got.len > 0 {
                    Ok(())
                } else {
                    Err(Errno::EAGAIN)
                });
            }
            if !stream {
                let State { rx, rx_bytes, .. } = &mut *s;
                let m = rx.front_mut().expect("not empty");
                got.len = buf.len().min(m.bytes.len());
                got.whole = m.bytes.len();
                buf[..got.len].copy_from_slice(&m.bytes[..got.len]);
                got.cred = m.cred;
                got.from = m.from.clone();
                got.ipv6 = m.ipv6;
                if peek {
                    got.files = m.files.peek();
                } else {
                    got.files = m.files.take();
                    *rx_bytes -= m.bytes.len();
                    rx.pop_front();
                }
                return Some(Ok(()));
            }
            let State { rx, rx_bytes, .. } = &mut *s;
            let mut index = 0;
            while got.len < buf.len() {
                let Some(m) = rx.get_mut(index) else { break };
                // One read never glues bytes of two senders together.
                if got.len > 0 && m.cred != got.cred {
                    break;
                }
                if got.len == 0 {
                    got.cred = m.cred;
                    got.from = m.from.clone();
                }
                let n = m.left().len().min(buf.len() - got.len);
                buf[got.len..got.len + n].copy_from_slice(&m.left()[..n]);
                got.len += n;
                let had_files = !m.files.is_empty();
                if peek {
                    got.files.extend(m.files.peek());
                    index += 1;
                } else {
                    got.files.extend(m.files.take());
                    m.taken += n;
                    *rx_bytes -= n;
                    if m.left().is_empty() {
                        rx.pop_front();
                    }
                }
                if had_files {
                    break;
                }
            }
            got.whole = got.len;
            let done = !wait_all || peek || got.len == buf.len() || !got.files.is_empty();
            if done { Some(Ok(())) } else { None }
        });
        match waited {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            // A signal after some bytes: those are the answer.
            Err(_) if got.len > 0 => {}
            Err(e) => return Err(e),
        }
        if !peek {
            // Room for senders: those waiting in send wait on this
            // socket; a connected peer's pollers wait on the peer, for
            // POLLOUT, which this read may have just made true.
            self.wake();
            if self.ty.connection_oriented() {
                let peer = match &self.state.lock().conn {
                    Conn::Connected(peer) => peer.upgrade(),
                    _ => None,
                };
                if let Some(peer) = peer {
                    peer.wake();
                }
            }
        }
        Ok(got)
    }

    /// shutdown(2): this end stops reading (SHUT_RD) or writing (SHUT_WR)
    /// or both; a connected peer sees the mirror image (it reads the end,
    /// or gets EPIPE).
    pub fn shutdown(&self, read: bool, write: bool) {
        let bits = (if read { SHUT_READ } else { 0 }) | (if write { SHUT_WRITE } else { 0 });
        let peer = {
            let mut s = self.state.lock();
            s.shut |= bits;
            match &s.conn {
                Conn::Connected(peer) if self.ty.connection_oriented() => peer.upgrade(),
                _ => None,
            }
        };
        if let Some(peer) = peer {
            let mirrored =
                (if read { SHUT_WRITE } else { 0 }) | (if write { SHUT_READ } else { 0 });
            peer.state.lock().shut |= mirrored;
            peer.wake();
        }
        self.wake();
    }

    /// poll(2)'s view: POLLIN with a message (or a connection to accept,
    /// or the end to read), POLLOUT with room at the peer, POLLHUP when
    /// both directions are shut (or a stream was never connected),
    /// POLLRDHUP once nothing more will arrive, POLLERR with an error.
    pub fn poll(&self) -> i16 {
        use abi::types::{POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDHUP};
        let (peer, mut ready) = {
            let s = self.state.lock();
            let mut ready = 0;
            if s.error.is_some() {
                ready |= POLLERR;
            }
            if s.shut & SHUT_READ != 0 {
                ready |= POLLIN | POLLRDHUP;
            }
            if s.shut == SHUT_READ | SHUT_WRITE {
                ready |= POLLHUP;
            }
            if !s.rx.is_empty() {
                ready |= POLLIN;
            }
            let peer = match &s.conn {
                Conn::Listening { pending, .. } => {
                    if !pending.is_empty() {
                        ready |= POLLIN;
                    }
                    return ready;
                }
                Conn::Unconnected if self.ty == Type::Stream => return ready | POLLOUT | POLLHUP,
                Conn::Unconnected => return ready | POLLOUT,
                Conn::Connected(peer) => peer.upgrade(),
            };
            // Shut for writing: a write fails at once, so it is "ready".
            if s.shut & SHUT_WRITE != 0 {
                return ready | POLLOUT;
            }
            (peer, ready)
        };
        match peer {
            Some(peer) => {
                let p = peer.state.lock();
                let connected_back = matches!(&p.conn,
                    Conn::Connected(back) if is(self)(back));
                let full = !p.released
                    && (p.rx_bytes >= CAPACITY
                        || (self.ty == Type::Dgram
                            && !connected_back
                            && p.rx.len() > MAX_DGRAM_QUEUE));
                if !full {
                    ready |= POLLOUT;
                }
            }
            // A peer that went: a send fails at once (EPIPE, ECONNREFUSED).
            None => ready |= POLLOUT,
        }
        ready
    }

    /// Bytes waiting to be read (FIONREAD; for a datagram socket, the next
    /// message's size).
    pub fn readable_bytes(&self) -> usize {
        let s = self.state.lock();
        match self.ty {
            Type::Stream => s.rx_bytes,
            _ => s.rx.front().map_or(0, |m| m.bytes.len()),
        }
    }
}

/// Internet sockets: names from the table of ports, connections to this
/// machine only.
impl Socket {
    /// The family and protocol of an Internet socket.
    fn inet(&self) -> Result<(u16, Proto), Errno> {
        match self.domain {
            Domain::Inet { family, proto } => Ok((family, proto)),
            Domain::Unix => Err(Errno::EINVAL),
        }
    }

    /// An option's value: as set, or Linux's default.
    fn option(&self, s: &State, level: i32, name: i32) -> Option<i32> {
        let (family, proto) = self.inet().ok()?;
        let default = kcore::inet::int_option(family, proto, level, name)?;
        Some(s.options.get(&(level, name)).copied().unwrap_or(default))
    }

    /// bind(2) of an Internet socket to `local`, a local address (the
    /// caller checked), port 0 for an ephemeral one. EINVAL once named;
    /// EADDRINUSE when the port is held (`kcore::inet::Ports::bind`).
    pub fn bind_inet(self: &Arc<Self>, local: Endpoint) -> Result<(), Errno> {
        let (family, proto) = self.inet()?;
        let mut s = self.state.lock();
        if s.name != Address::Unnamed {
            return Err(Errno::EINVAL);
        }
        let on = |level, name| self.option(&s, level, name).unwrap_or(0) != 0;
        let binding = Binding {
            proto,
            local,
            v6only: family == abi::socket::AF_INET6 && on(IPPROTO_IPV6, IPV6_V6ONLY),
            reuse_addr: on(SOL_SOCKET, SO_REUSEADDR),
            reuse_port: on(SOL_SOCKET, SO_REUSEPORT),
            listening: false,
            owner: Arc::downgrade(self),
        };
        let port = PORTS.lock().bind(binding)?;
        s.name = Address::Inet(Endpoint { port, ..local });
        Ok(())
    }

    /// An unnamed Internet socket takes an ephemeral port on the wildcard
    /// address (before it connects, listens or sends, as on Linux).
    fn autobind_inet(self: &Arc<Self>) -> Result<(), Errno> {
        let (family, _) = self.inet()?;
        if self.name() != Address::Unnamed {
            return Ok(());
        }
        match self.bind_inet(Endpoint::unspecified(family)) {
            // Named meanwhile by another thread: named all the same.
            Err(Errno::EINVAL) => Ok(()),
            other => other,
        }
    }

    /// Its own address as it speaks to `to`: its port, and its bound
    /// address, or the loopback one if it is bound to the wildcard.
    fn speaking_to(&self, to: &Endpoint) -> Endpoint {
        let own = match self.name() {
            Address::Inet(own) => own,
            _ => Endpoint::default(),
        };
        if own.is_any() {
            Endpoint {
                ip: to.source_for(),
                ..own
            }
        } else {
            own
        }
    }

    /// connect(2) of an Internet socket to `to`. TCP: the listener there
    /// takes the connection at once (ECONNREFUSED if none), and a
    /// non-blocking caller hears EINPROGRESS, as from Linux, then finds
    /// the socket writable and SO_ERROR 0. UDP: `to` becomes where sends
    /// go and the only sender heard. An address off this machine is
    /// ENETUNREACH.
    pub fn connect_inet(self: &Arc<Self>, to: Endpoint, nonblock: bool) -> Result<(), Errno> {
        let (_, proto) = self.inet()?;
        if !to.is_local() {
            return Err(Errno::ENETUNREACH);
        }
        if proto == Proto::Tcp {
            if matches!(self.state.lock().conn, Conn::Connected(_)) {
                return Err(Errno::EISCONN);
            }
            self.autobind_inet()?;
            let server = Endpoint {
                ip: to.source_for(),
                ..to
            };
            let client = self.speaking_to(&to);
            let target = PORTS
                .lock()
                .find(Proto::Tcp, &to, true, |_| true)
                .and_then(Weak::upgrade)
                .ok_or(Errno::ECONNREFUSED)?;
            self.connect_named(target, nonblock, Some((client, server)))?;
            return if nonblock {
                Err(Errno::EINPROGRESS)
            } else {
                Ok(())
            };
        }
        self.autobind_inet()?;
        let own = self.speaking_to(&to);
        let mut s = self.state.lock();
        s.conn = Conn::Connected(Weak::new());
        s.peer_name = Address::Inet(to);
        s.name = Address::Inet(own);
        Ok(())
    }

    /// A TCP send to a peer that has closed (this end is in CLOSE_WAIT):
    /// Linux sends the bytes, the peer's stack answers with a reset, and
    /// the next send is EPIPE (a receive hears it once first). Here the
    /// bytes are dropped and the reset is taken at once. `None` while the
    /// peer is open. An empty send sends nothing and provokes nothing.
    fn send_to_closed_peer(&self, len: usize) -> Option<usize> {
        let peer = match &self.state.lock().conn {
            Conn::Connected(peer) => peer.clone(),
            _ => return None,
        };
        if let Some(peer) = peer.upgrade() {
            let released = peer.state.lock().released;
            if !released {
                return None;
            }
        }
        if len > 0 {
            let mut s = self.state.lock();
            s.shut = SHUT_READ | SHUT_WRITE;
            s.error = Some(Errno::EPIPE);
        }
        self.wake();
        Some(len)
    }

    /// connect(2) with AF_UNSPEC: a UDP socket forgets its peer.
    pub fn disconnect(&self) -> Result<(), Errno> {
        let (_, proto) = self.inet()?;
        if proto == Proto::Tcp {
            return Err(Errno::EOPNOTSUPP);
        }
        let mut s = self.state.lock();
        s.conn = Conn::Unconnected;
        s.peer_name = Address::Unnamed;
        Ok(())
    }

    /// A UDP datagram to `to` or to the address connected to. It never
    /// waits: no one holding the port, a receiver connected to another
    /// sender, or a full receive queue drops it, as the network would
    /// (and a connected sender then hears ECONNREFUSED, as from Linux's
    /// ICMP "port unreachable").
    fn send_datagram_inet(self: &Arc<Self>, out: &Outgoing) -> Result<usize, Errno> {
        let (family, proto) = self.inet()?;
        let (bytes, to) = (out.bytes, out.to_inet);
        if bytes.len() > max_udp_payload(family) {
            return Err(Errno::EMSGSIZE);
        }
        let to = match to {
            Some(to) => to,
            None => match self.peer_name()? {
                Address::Inet(to) => to,
                _ => return Err(Errno::EDESTADDRREQ),
            },
        };
        if to.port == 0 {
            return Err(Errno::EINVAL);
        }
        if !to.is_local() {
            return Err(Errno::ENETUNREACH);
        }
        self.autobind_inet()?;
        // A refusal heard since the last send is this send's answer.
        if let Some(e) = self.take_error() {
            return Err(e);
        }
        let (from, cred) = (self.speaking_to(&to), own_cred());
        // Over IPv6 (to an address that is not IPv4's), the datagram
        // carries a hop limit and a traffic class: stated, or the socket's.
        let ipv6 = (!to.is_v4()).then(|| {
            let s = self.state.lock();
            let setting = |stated: Option<i32>, name, default| match stated {
                Some(v) if v >= 0 => v,
                _ => match self.option(&s, IPPROTO_IPV6, name) {
                    Some(v) if v >= 0 => v,
                    _ => default,
                },
            };
            (
                setting(out.hop_limit, IPV6_UNICAST_HOPS, 64),
                setting(out.tclass, IPV6_TCLASS, 0),
            )
        });
        let receiver = PORTS
            .lock()
            .find(proto, &to, false, |_| true)
            .and_then(Weak::upgrade);
        let Some(receiver) = receiver else {
            if matches!(self.state.lock().conn, Conn::Connected(_)) {
                self.state.lock().error = Some(Errno::ECONNREFUSED);
            }
            return Ok(bytes.len());
        };
        {
            let mut r = receiver.state.lock();
            let heard = match (&r.conn, &r.peer_name) {
                (Conn::Connected(_), Address::Inet(peer)) => {
                    peer.port == from.port && (peer.is_any() || peer.ip == from.ip)
                }
                _ => true,
            };
            let room = receiver.option(&r, SOL_SOCKET, SO_RCVBUF).unwrap_or(0) as usize;
            if r.released || !heard || r.rx_bytes + bytes.len() > room {
                return Ok(bytes.len());
            }
            r.rx_bytes += bytes.len();
            r.rx.push_back(Message {
                bytes: bytes.to_vec(),
                taken: 0,
                files: Passed::default(),
                cred,
                from: Address::Inet(from),
                ipv6,
            });
        }
        receiver.wake();
        Ok(bytes.len())
    }

    /// setsockopt(2) of an integer option of an Internet socket
    /// (`kcore::inet::int_option` names them). ENOPROTOOPT for another;
    /// IPV6_V6ONLY only before bind (EINVAL). A change to SO_REUSEADDR or
    /// SO_REUSEPORT reaches the socket's hold on its port at once.
    pub fn set_option(&self, level: i32, name: i32, value: i32) -> Result<(), Errno> {
        let mut s = self.state.lock();
        self.option(&s, level, name).ok_or(Errno::ENOPROTOOPT)?;
        if (level, name) == (IPPROTO_IPV6, IPV6_V6ONLY) && s.name != Address::Unnamed {
            return Err(Errno::EINVAL);
        }
        let value = kcore::inet::setting(level, name, value);
        s.options.insert((level, name), value);
        if level == SOL_SOCKET && matches!(name, SO_REUSEADDR | SO_REUSEPORT) {
            let mut ports = PORTS.lock();
            if let Some(binding) = ports.get_mut(is(self)) {
                if name == SO_REUSEADDR {
                    binding.reuse_addr = value != 0;
                } else {
                    binding.reuse_port = value != 0;
                }
            }
        }
        Ok(())
    }

    /// getsockopt(2) of an integer option of an Internet socket: as set,
    /// or Linux's default; ENOPROTOOPT for another.
    pub fn get_option(&self, level: i32, name: i32) -> Result<i32, Errno> {
        let s = self.state.lock();
        self.option(&s, level, name).ok_or(Errno::ENOPROTOOPT)
    }
}

/// A send's answer, with SIGPIPE for the caller on EPIPE when `signal`
/// (no MSG_NOSIGNAL), as a pipe does.
fn sigpipe_on<T>(result: Result<T, Errno>, signal: bool) -> Result<T, Errno> {
    if signal && matches!(result, Err(Errno::EPIPE)) {
        let origin = crate::signal::Origin::kernel();
        crate::signal::send_to_current(abi::signal::SIGPIPE, origin);
    }
    result
}

impl Socket {
    /// Its last descriptor closed (`OpenFile`'s drop), or, for a socket
    /// never accepted, its last reference went. Nothing more arrives: the
    /// receive queue goes, closing the descriptors in flight in it; a
    /// listener's backlog goes (each waiting client reads ECONNRESET) and
    /// clients waiting for room in it get ECONNREFUSED; a connected peer
    /// reads the end and gets EPIPE for a write, and ECONNRESET if what it
    /// sent was never read; an abstract name is free again. Only once.
    pub fn release(&self) {
        let (rx, pending, peer, reset) = {
            let mut s = self.state.lock();
            if s.released {
                return;
            }
            s.released = true;
            s.shut = SHUT_READ | SHUT_WRITE;
            s.rx_bytes = 0;
            let rx = core::mem::take(&mut s.rx);
            let reset = !rx.is_empty() || s.embryo;
            let (pending, peer) = match &mut s.conn {
                Conn::Listening { pending, .. } => {
                    let pending = core::mem::take(pending);
                    s.conn = Conn::Unconnected;
                    (pending, None)
                }
                Conn::Connected(peer) if self.ty.connection_oriented() => {
                    (VecDeque::new(), peer.upgrade())
                }
                _ => (VecDeque::new(), None),
            };
            if matches!(self.domain, Domain::Inet { .. }) {
                PORTS.lock().unbind(is(self));
            }
            if let Address::Abstract(name) = &s.name {
                let mut names = ABSTRACT.lock();
                if names.get(name).is_some_and(is(self)) {
                    names.remove(name);
                }
            }
            (rx, pending, peer, reset)
        };
        if let Some(peer) = peer {
            {
                let mut p = peer.state.lock();
                if reset {
                    p.shut = SHUT_READ | SHUT_WRITE;
                    p.error = Some(Errno::ECONNRESET);
                } else if matches!(self.domain, Domain::Inet { .. }) {
                    // TCP's FIN: the peer reads the end and may still
                    // write (CLOSE_WAIT), until `send_to_closed_peer`.
                    p.shut |= SHUT_READ;
                } else {
                    p.shut = SHUT_READ | SHUT_WRITE;
                }
            }
            peer.wake();
        }
        self.wake();
        // Outside every lock: closing what was in flight may release other
        // sockets and wake their sleepers.
        drop(rx);
        drop(pending);
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.release();
    }
}

/// Finds rings of sockets kept alive only by their own messages in
/// flight, and empties their queues so that they go (Linux's `unix_gc`).
/// Called after a socket's descriptor is closed, outside every lock;
/// costs one look at `IN_FLIGHT` when nothing is in flight.
///
/// A candidate is a socket file every reference to which is a queued
/// message. Each candidate's queue is read (one socket lock at a time,
/// only the ids of what it carries); a candidate held by fewer candidates'
/// messages than hold it in all is held from outside, so reachable, and
/// so is everything in a reachable one's queue. The others are garbage.
/// The view is trusted only if nothing entered or left any queue while it
/// was taken (`InFlight::generation`); otherwise it is taken again, up to
/// three times, and the next close tries again.
pub fn collect_rings() {
    for _ in 0..3 {
        if collect_once() {
            return;
        }
    }
}

/// One attempt; false when the queues changed under it.
fn collect_once() -> bool {
    use super::file::Kind;
    let (generation, snapshot) = {
        let flight = IN_FLIGHT.lock();
        if flight.files.is_empty() {
            return true;
        }
        let files: Vec<(Arc<OpenFile>, usize)> = flight
            .files
            .values()
            .filter_map(|(file, held)| Some((file.upgrade()?, *held)))
            .collect();
        (flight.generation, files)
    };
    // Every reference is a queued message, besides this snapshot's own.
    let candidates: Vec<(Arc<OpenFile>, usize)> = snapshot
        .into_iter()
        .filter(|(file, held)| Arc::strong_count(file) == held + 1)
        .collect();
    if candidates.is_empty() {
        return true;
    }
    let socket = |file: &OpenFile| match &file.kind {
        Kind::Socket(socket) => Some(socket.clone()),
        _ => None,
    };
    let index: BTreeMap<u64, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, (file, _))| (file.id, i))
        .collect();
    // What each candidate's queue carries, by id.
    let carried: Vec<Vec<u64>> = candidates
        .iter()
        .map(|(file, _)| {
            socket(file).map_or_else(Vec::new, |s| {
                let state = s.state.lock();
                state
                    .rx
                    .iter()
                    .flat_map(|m| m.files.0.iter().map(|f| f.id))
                    .collect()
            })
        })
        .collect();
    let mut from_candidates = alloc::vec![0usize; candidates.len()];
    for id in carried.iter().flatten() {
        if let Some(&i) = index.get(id) {
            from_candidates[i] += 1;
        }
    }
    let mut reachable: Vec<bool> = candidates
        .iter()
        .zip(&from_candidates)
        .map(|((_, held), inside)| held > inside)
        .collect();
    let mut to_visit: Vec<usize> = (0..candidates.len()).filter(|&i| reachable[i]).collect();
    while let Some(i) = to_visit.pop() {
        for id in &carried[i] {
            if let Some(&j) = index.get(id)
                && !reachable[j]
            {
                reachable[j] = true;
                to_visit.push(j);
            }
        }
    }
    if IN_FLIGHT.lock().generation != generation {
        return false;
    }
    // No one can receive from a garbage socket (no descriptor reaches
    // it), so what is sent into it meanwhile may go too.
    let mut emptied = Vec::new();
    for ((file, _), live) in candidates.iter().zip(&reachable) {
        if !live && let Some(s) = socket(file) {
            let mut state = s.state.lock();
            state.rx_bytes = 0;
            emptied.push(core::mem::take(&mut state.rx));
        }
    }
    // Outside every lock: the messages close the files they carry, and
    // the sockets of the ring with them.
    drop(emptied);
    drop(candidates);
    true
}
