//! Internet sockets over the loopback interface: the parts that are pure
//! rules, tested on the host. This kernel has no network card, so an
//! Internet socket reaches only this machine: TCP is a Unix-domain stream
//! and UDP a Unix-domain datagram socket with Internet names
//! (`kernel/src/fs/socket.rs` moves the bytes). What makes them Internet
//! sockets is here:
//!
//! - **socket(2)'s protocols** (`protocol`): TCP for streams, UDP and
//!   UDP-Lite for datagrams, in Linux's order of errors.
//! - **Names** (`Endpoint`, `parse`, `encode`): `sockaddr_in` and
//!   `sockaddr_in6`. An IPv4 address is kept as IPv6 keeps it on a
//!   dual-stack socket, mapped (`::ffff:a.b.c.d`), so one table holds both
//!   families and an IPv6 socket bound to `::` hears IPv4 clients too, as
//!   on Linux.
//! - **Ports** (`Ports`): who holds which port, the rules of SO_REUSEADDR
//!   and SO_REUSEPORT, `IPV6_V6ONLY`, ephemeral ports for a socket that
//!   connects or sends unnamed, and which socket a connection or a
//!   datagram to an address reaches (an exact address before a wildcard).
//! - **Options** (`int_option`): the integer options a program sets and
//!   reads back, with Linux's defaults.

use abi::Errno;
use abi::socket::*;
use alloc::vec::Vec;

/// The transport protocol of an Internet socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Tcp,
    Udp,
    /// UDP-Lite (RFC 3828): UDP whose checksum may cover only part of a
    /// datagram. Over loopback nothing is corrupted, so it is UDP with
    /// ports of its own.
    UdpLite,
}

impl Proto {
    /// Its number (SO_PROTOCOL).
    pub fn number(self) -> i32 {
        match self {
            Proto::Tcp => IPPROTO_TCP,
            Proto::Udp => IPPROTO_UDP,
            Proto::UdpLite => IPPROTO_UDPLITE,
        }
    }
}

/// What `socket(family, base_type, protocol)` makes, `family` one of
/// AF_INET and AF_INET6 and `base_type` below SOCK_MAX (the caller checked
/// both), or Linux's refusal, in the order of Linux's `inet_create`: a
/// type nothing serves is ESOCKTNOSUPPORT, a protocol the type has not
/// EPROTONOSUPPORT. Ping sockets (ICMP datagrams) are EACCES, as on a
/// Linux whose `ping_group_range` admits no one (its default); raw sockets
/// are EPERM without CAP_NET_RAW (`may_raw`), and with it EPROTONOSUPPORT:
/// there are no packets here to read raw.
pub fn protocol(family: u16, base_type: u32, protocol: u32, may_raw: bool) -> Result<Proto, Errno> {
    let ping = if family == AF_INET6 {
        IPPROTO_ICMPV6
    } else {
        IPPROTO_ICMP
    } as u32;
    match (base_type, protocol as i32) {
        (SOCK_STREAM, 0 | IPPROTO_TCP) => Ok(Proto::Tcp),
        (SOCK_STREAM, _) => Err(Errno::EPROTONOSUPPORT),
        (SOCK_DGRAM, 0 | IPPROTO_UDP) => Ok(Proto::Udp),
        (SOCK_DGRAM, IPPROTO_UDPLITE) => Ok(Proto::UdpLite),
        (SOCK_DGRAM, _) if protocol == ping => Err(Errno::EACCES),
        (SOCK_DGRAM, _) => Err(Errno::EPROTONOSUPPORT),
        (SOCK_RAW, _) if !may_raw => Err(Errno::EPERM),
        (SOCK_RAW, _) => Err(Errno::EPROTONOSUPPORT),
        _ => Err(Errno::ESOCKTNOSUPPORT),
    }
}

/// An Internet socket's address: IPv6, with IPv4 mapped into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Endpoint {
    pub ip: [u8; 16],
    pub port: u16,
    /// IPv6's flow label and scope (interface), kept as given.
    pub flowinfo: u32,
    pub scope_id: u32,
}

/// `::ffff:0:0/96`, where IPv4 lives in IPv6.
const V4_MAPPED: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

impl Endpoint {
    /// `a.b.c.d:port`.
    pub fn v4(ip: [u8; 4], port: u16) -> Endpoint {
        let mut mapped = [0u8; 16];
        mapped[..12].copy_from_slice(&V4_MAPPED);
        mapped[12..].copy_from_slice(&ip);
        Endpoint {
            ip: mapped,
            port,
            ..Endpoint::default()
        }
    }

    /// An IPv4 address (mapped).
    pub fn is_v4(&self) -> bool {
        self.ip[..12] == V4_MAPPED
    }

    /// The wildcard: `0.0.0.0` or `::` (INADDR_ANY, in6addr_any).
    pub fn is_any(&self) -> bool {
        self.ip == [0; 16] || (self.is_v4() && self.ip[12..] == [0; 4])
    }

    /// The loopback network: 127.0.0.0/8 or `::1`.
    pub fn is_loopback(&self) -> bool {
        (self.is_v4() && self.ip[12] == 127) || self.ip == LOOPBACK6
    }

    /// An address of this machine: the only interface is loopback, and
    /// the wildcard means "here" as a destination too (Linux's rule).
    pub fn is_local(&self) -> bool {
        self.is_loopback() || self.is_any()
    }

    /// The unnamed address of a socket of `family`: what getsockname says
    /// before bind.
    pub fn unspecified(family: u16) -> Endpoint {
        if family == AF_INET {
            Endpoint::v4([0; 4], 0)
        } else {
            Endpoint::default()
        }
    }

    /// The address a socket sending to `self` from this machine speaks
    /// from: the loopback interface's own (`127.0.0.1` or `::1`), or
    /// `self` when it is a loopback address already.
    pub fn source_for(&self) -> [u8; 16] {
        if self.is_loopback() {
            self.ip
        } else if self.is_v4() {
            Endpoint::v4([127, 0, 0, 1], 0).ip
        } else {
            LOOPBACK6
        }
    }
}

const LOOPBACK6: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// The first two bytes of an address: its family.
pub fn family_of(bytes: &[u8]) -> Option<u16> {
    Some(u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]))
}

/// The `sockaddr_in` or `sockaddr_in6` of a socket of `family`, in Linux's
/// order of checks (`inet_bind`, `inet6_bind`, `tcp_v4_connect`): too
/// short is EINVAL, another family EAFNOSUPPORT. An IPv6 socket takes an
/// IPv4 address only mapped.
pub fn parse(family: u16, bytes: &[u8]) -> Result<Endpoint, Errno> {
    let port = |b: &[u8]| u16::from_be_bytes([b[2], b[3]]);
    if family == AF_INET {
        if bytes.len() < SOCKADDR_IN_SIZE {
            return Err(Errno::EINVAL);
        }
        if family_of(bytes) != Some(AF_INET) {
            return Err(Errno::EAFNOSUPPORT);
        }
        let ip = bytes[4..8].try_into().expect("4 bytes");
        return Ok(Endpoint::v4(ip, port(bytes)));
    }
    if bytes.len() < SOCKADDR_IN6_SIZE_RFC2133 {
        return Err(Errno::EINVAL);
    }
    if family_of(bytes) != Some(AF_INET6) {
        return Err(Errno::EAFNOSUPPORT);
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    Ok(Endpoint {
        ip: bytes[8..24].try_into().expect("16 bytes"),
        port: port(bytes),
        flowinfo: u32::from_be(word(4)),
        scope_id: if bytes.len() >= SOCKADDR_IN6_SIZE {
            word(24)
        } else {
            0
        },
    })
}

/// `endpoint` as a socket of `family` names it: a `sockaddr_in` (the
/// mapped address's last four bytes) or a `sockaddr_in6`.
pub fn encode(family: u16, endpoint: &Endpoint) -> Vec<u8> {
    let mut out = Vec::with_capacity(SOCKADDR_IN6_SIZE);
    out.extend_from_slice(&family.to_le_bytes());
    out.extend_from_slice(&endpoint.port.to_be_bytes());
    if family == AF_INET {
        out.extend_from_slice(&endpoint.ip[12..]);
        out.resize(SOCKADDR_IN_SIZE, 0);
    } else {
        out.extend_from_slice(&endpoint.flowinfo.to_be_bytes());
        out.extend_from_slice(&endpoint.ip);
        out.extend_from_slice(&endpoint.scope_id.to_le_bytes());
    }
    out
}

/// Ports below this need CAP_NET_BIND_SERVICE (EACCES).
pub const PRIVILEGED_BELOW: u16 = 1024;
/// Where ephemeral ports come from (Linux's `ip_local_port_range`).
pub const EPHEMERAL: core::ops::RangeInclusive<u16> = 32768..=60999;

/// One socket's hold on a port.
#[derive(Clone, Debug)]
pub struct Binding<T> {
    pub proto: Proto,
    /// Its address and port (the port 0 asks for an ephemeral one).
    pub local: Endpoint,
    /// An IPv6 socket that hears IPv6 only (IPV6_V6ONLY); an IPv4
    /// socket's mapped address never covers IPv6 anyway.
    pub v6only: bool,
    pub reuse_addr: bool,
    pub reuse_port: bool,
    /// Taking connections (TCP's LISTEN state).
    pub listening: bool,
    pub owner: T,
}

impl<T> Binding<T> {
    /// Whether a packet for `ip` is for this binding's address.
    fn covers(&self, ip: &[u8; 16]) -> bool {
        let target = Endpoint {
            ip: *ip,
            ..Endpoint::default()
        };
        if self.local.ip == *ip {
            return true;
        }
        if !self.local.is_any() {
            return false;
        }
        if self.local.is_v4() {
            target.is_v4()
        } else {
            !(self.v6only && target.is_v4())
        }
    }

    /// Two bindings whose addresses share a packet.
    fn overlaps<U>(&self, other: &Binding<U>) -> bool {
        let both_dual = self.local.ip == [0; 16] && other.local.ip == [0; 16];
        self.proto == other.proto
            && self.local.port == other.local.port
            && (both_dual || self.covers(&other.local.ip) || other.covers(&self.local.ip))
    }

    /// Whether `self` may hold its port beside `other` (which overlaps
    /// it): both asked with SO_REUSEPORT; or both with SO_REUSEADDR,
    /// and, for TCP, neither is listening (Linux's `inet_csk_bind_conflict`
    /// and `udp_lib_lport_inuse`).
    fn shares_with<U>(&self, other: &Binding<U>) -> bool {
        (self.reuse_port && other.reuse_port)
            || (self.reuse_addr
                && other.reuse_addr
                && (self.proto != Proto::Tcp || !(self.listening || other.listening)))
    }
}

/// Every port held on this machine.
pub struct Ports<T> {
    bindings: Vec<Binding<T>>,
    /// Where the search for the next ephemeral port starts.
    next: u16,
}

impl<T> Default for Ports<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Ports<T> {
    pub const fn new() -> Ports<T> {
        Ports {
            bindings: Vec::new(),
            next: *EPHEMERAL.start(),
        }
    }

    fn conflicts(&self, new: &Binding<T>) -> bool {
        self.bindings
            .iter()
            .any(|b| b.overlaps(new) && !new.shares_with(b))
    }

    /// Takes `binding`'s port, or an ephemeral one for port 0; the port
    /// held. EADDRINUSE when another socket holds it and the two may not
    /// share it, or when every ephemeral port is taken.
    pub fn bind(&mut self, mut binding: Binding<T>) -> Result<u16, Errno> {
        if binding.local.port == 0 {
            let span = (*EPHEMERAL.end() - *EPHEMERAL.start()) as u32 + 1;
            let free = (0..span).find_map(|i| {
                let offset = (self.next - EPHEMERAL.start()) as u32 + i;
                let port = *EPHEMERAL.start() + (offset % span) as u16;
                binding.local.port = port;
                (!self.conflicts(&binding)).then_some(port)
            });
            let port = free.ok_or(Errno::EADDRINUSE)?;
            self.next = if port == *EPHEMERAL.end() {
                *EPHEMERAL.start()
            } else {
                port + 1
            };
        } else if self.conflicts(&binding) {
            return Err(Errno::EADDRINUSE);
        }
        let port = binding.local.port;
        self.bindings.push(binding);
        Ok(port)
    }

    /// The binding of the socket `is_me` names.
    pub fn get_mut(&mut self, is_me: impl Fn(&T) -> bool) -> Option<&mut Binding<T>> {
        self.bindings.iter_mut().find(|b| is_me(&b.owner))
    }

    /// listen(2): the socket starts taking connections. EADDRINUSE when
    /// another socket listens on an overlapping address and the two did
    /// not both ask for SO_REUSEPORT (SO_REUSEADDR shares a port between
    /// sockets, never a listening one). No binding: EINVAL.
    pub fn listen(&mut self, is_me: impl Fn(&T) -> bool) -> Result<(), Errno> {
        let me = self
            .bindings
            .iter()
            .position(|b| is_me(&b.owner))
            .ok_or(Errno::EINVAL)?;
        let mine = &self.bindings[me];
        let clash = self.bindings.iter().enumerate().any(|(i, b)| {
            i != me && b.listening && b.overlaps(mine) && !(b.reuse_port && mine.reuse_port)
        });
        if clash {
            return Err(Errno::EADDRINUSE);
        }
        self.bindings[me].listening = true;
        Ok(())
    }

    /// The socket lets its port go (it closed).
    pub fn unbind(&mut self, is_me: impl Fn(&T) -> bool) {
        self.bindings.retain(|b| !is_me(&b.owner));
    }

    /// Who gets a connection (`listening`) or a datagram for `to` over
    /// `proto`: a socket bound to exactly that address before one bound to
    /// a wildcard; among equals, the first bound. `accepts` may pass over
    /// a socket (a datagram socket connected to someone else).
    pub fn find(
        &self,
        proto: Proto,
        to: &Endpoint,
        listening: bool,
        accepts: impl Fn(&T) -> bool,
    ) -> Option<&T> {
        let candidates = || {
            self.bindings.iter().filter(|b| {
                b.proto == proto
                    && b.local.port == to.port
                    && (!listening || b.listening)
                    && b.covers(&to.ip)
                    && accepts(&b.owner)
            })
        };
        candidates()
            .find(|b| b.local.ip == to.ip)
            .or_else(|| candidates().next())
            .map(|b| &b.owner)
    }
}

/// The integer options an Internet socket keeps, with Linux's defaults:
/// set them and they read back (as `setting` stores them). `None`: not an
/// option of this socket (ENOPROTOOPT).
pub fn int_option(family: u16, proto: Proto, level: i32, name: i32) -> Option<i32> {
    let value = match (level, name) {
        (SOL_SOCKET, SO_SNDBUF) if proto == Proto::Tcp => 16384,
        (SOL_SOCKET, SO_RCVBUF) if proto == Proto::Tcp => 131_072,
        (SOL_SOCKET, SO_SNDBUF | SO_RCVBUF) => 212_992,
        (SOL_SOCKET, SO_DEBUG | SO_REUSEADDR | SO_DONTROUTE | SO_BROADCAST | SO_KEEPALIVE) => 0,
        (SOL_SOCKET, SO_OOBINLINE | SO_NO_CHECK | SO_PRIORITY | SO_REUSEPORT) => 0,
        (SOL_SOCKET, SO_RCVLOWAT | SO_SNDLOWAT) => 1,
        (IPPROTO_TCP, _) if proto != Proto::Tcp => return None,
        (IPPROTO_TCP, TCP_NODELAY | TCP_CORK | TCP_DEFER_ACCEPT | TCP_WINDOW_CLAMP) => 0,
        (IPPROTO_TCP, TCP_USER_TIMEOUT | TCP_FASTOPEN | TCP_NOTSENT_LOWAT) => 0,
        (IPPROTO_TCP, TCP_MAXSEG) => 536,
        (IPPROTO_TCP, TCP_KEEPIDLE) => 7200,
        (IPPROTO_TCP, TCP_KEEPINTVL) => 75,
        (IPPROTO_TCP, TCP_KEEPCNT) => 9,
        (IPPROTO_TCP, TCP_SYNCNT) => 6,
        (IPPROTO_TCP, TCP_LINGER2) => 60,
        (IPPROTO_TCP, TCP_QUICKACK) => 1,
        (IPPROTO_IP, IP_TOS) => 0,
        (IPPROTO_IP, IP_TTL) => 64,
        (IPPROTO_IP, IP_MULTICAST_TTL | IP_MULTICAST_LOOP) => 1,
        (IPPROTO_IPV6, _) if family != AF_INET6 => return None,
        (IPPROTO_IPV6, IPV6_V6ONLY | IPV6_TCLASS | IPV6_DONTFRAG) => 0,
        (IPPROTO_IPV6, IPV6_RECVHOPLIMIT | IPV6_RECVTCLASS) => 0,
        (IPPROTO_IPV6, IPV6_UNICAST_HOPS) => 64,
        (IPPROTO_IPV6, IPV6_MULTICAST_HOPS | IPV6_MULTICAST_LOOP) => 1,
        _ => return None,
    };
    Some(value)
}

/// What an option set to `value` reads back as: a flag as 0 or 1; a
/// buffer size doubled, for the kernel's bookkeeping, and at least
/// Linux's floor (SOCK_MIN_SNDBUF, SOCK_MIN_RCVBUF), as `sock_setsockopt`
/// stores it; anything else as given.
pub fn setting(level: i32, name: i32, value: i32) -> i32 {
    let flag = match level {
        SOL_SOCKET => !matches!(
            name,
            SO_PRIORITY | SO_RCVLOWAT | SO_SNDLOWAT | SO_SNDBUF | SO_RCVBUF
        ),
        IPPROTO_TCP => matches!(name, TCP_NODELAY | TCP_CORK | TCP_QUICKACK),
        IPPROTO_IP => matches!(name, IP_MULTICAST_LOOP | IP_RECVTOS | IP_RECVTTL),
        IPPROTO_IPV6 => matches!(
            name,
            IPV6_V6ONLY | IPV6_MULTICAST_LOOP | IPV6_DONTFRAG | IPV6_RECVHOPLIMIT | IPV6_RECVTCLASS
        ),
        _ => false,
    };
    match (level, name) {
        _ if flag => (value != 0) as i32,
        (SOL_SOCKET, SO_SNDBUF) => value.max(0).saturating_mul(2).max(4608),
        (SOL_SOCKET, SO_RCVBUF) => value.max(0).saturating_mul(2).max(2304),
        _ => value,
    }
}

/// An IPv6 datagram's hop limit or traffic class as a sendmsg control
/// message states it (IPV6_HOPLIMIT, IPV6_TCLASS): exactly one int, from
/// -1 (the socket's own setting) to 255; EINVAL otherwise, as Linux's
/// `ip6_datagram_send_ctl`.
pub fn ipv6_control_value(data: &[u8]) -> Result<i32, Errno> {
    let bytes: [u8; 4] = data.try_into().map_err(|_| Errno::EINVAL)?;
    let value = i32::from_le_bytes(bytes);
    if (-1..=255).contains(&value) {
        Ok(value)
    } else {
        Err(Errno::EINVAL)
    }
}

/// The control messages a receive hands back, built as Linux's `put_cmsg`
/// builds them into the caller's `room` bytes: a message whose header
/// does not fit is left out; one whose data does not fit is cut (its
/// `cmsg_len` says how much came); either sets `truncated`
/// (MSG_CTRUNC). Each message takes its aligned space, or what is left.
pub struct ControlBuffer {
    room: usize,
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl ControlBuffer {
    pub fn new(room: usize) -> ControlBuffer {
        ControlBuffer {
            room,
            bytes: Vec::new(),
            truncated: false,
        }
    }

    pub fn put(&mut self, level: i32, ty: i32, data: &[u8]) {
        let header = size_of::<CmsgHdr>();
        let left = self.room - self.bytes.len();
        if left < header {
            self.truncated = true;
            return;
        }
        let mut len = header + data.len();
        if left < len {
            self.truncated = true;
            len = left;
        }
        self.bytes.extend_from_slice(&(len as u64).to_le_bytes());
        self.bytes.extend_from_slice(&level.to_le_bytes());
        self.bytes.extend_from_slice(&ty.to_le_bytes());
        self.bytes.extend_from_slice(&data[..len - header]);
        let space = cmsg_align(header + data.len()).min(left);
        self.bytes.resize(self.bytes.len() - len + space, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_takes_tcp_and_udp_and_refuses_the_rest_in_linuxs_order() {
        assert_eq!(protocol(AF_INET, SOCK_STREAM, 0, false), Ok(Proto::Tcp));
        assert_eq!(protocol(AF_INET6, SOCK_STREAM, 6, false), Ok(Proto::Tcp));
        assert_eq!(
            protocol(AF_INET, SOCK_STREAM, 17, false),
            Err(Errno::EPROTONOSUPPORT)
        );
        assert_eq!(protocol(AF_INET, SOCK_DGRAM, 0, false), Ok(Proto::Udp));
        assert_eq!(
            protocol(AF_INET6, SOCK_DGRAM, 136, false),
            Ok(Proto::UdpLite)
        );
        assert_eq!(protocol(AF_INET, SOCK_DGRAM, 1, false), Err(Errno::EACCES));
        assert_eq!(
            protocol(AF_INET6, SOCK_DGRAM, 58, false),
            Err(Errno::EACCES)
        );
        assert_eq!(
            protocol(AF_INET6, SOCK_DGRAM, 1, false),
            Err(Errno::EPROTONOSUPPORT)
        );
        assert_eq!(
            protocol(AF_INET, SOCK_SEQPACKET, 0, false),
            Err(Errno::ESOCKTNOSUPPORT)
        );
        assert_eq!(protocol(AF_INET, SOCK_RAW, 99, false), Err(Errno::EPERM));
        assert_eq!(
            protocol(AF_INET, SOCK_RAW, 99, true),
            Err(Errno::EPROTONOSUPPORT)
        );
    }

    #[test]
    fn names_read_and_write_as_linux_lays_them_out() {
        let sin = [2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let e = parse(AF_INET, &sin).unwrap();
        assert_eq!(e.port, 8080);
        assert!(e.is_v4() && e.is_loopback() && !e.is_any());
        assert_eq!(encode(AF_INET, &e), sin);
        assert_eq!(parse(AF_INET, &sin[..15]), Err(Errno::EINVAL));
        let mut wrong = sin;
        wrong[0] = 10;
        assert_eq!(parse(AF_INET, &wrong), Err(Errno::EAFNOSUPPORT));

        let mut sin6 = [0u8; 28];
        sin6[0] = 10;
        sin6[3] = 80;
        sin6[23] = 1;
        sin6[24] = 3;
        let e = parse(AF_INET6, &sin6).unwrap();
        assert!(e.is_loopback() && !e.is_v4());
        assert_eq!((e.port, e.scope_id), (80, 3));
        assert_eq!(encode(AF_INET6, &e), sin6);
        // RFC 2133's form, without the scope.
        assert_eq!(parse(AF_INET6, &sin6[..24]).unwrap().scope_id, 0);
        assert_eq!(parse(AF_INET6, &sin6[..23]), Err(Errno::EINVAL));
        // An IPv4 peer of an IPv6 socket reads as a mapped address.
        let mapped = encode(AF_INET6, &Endpoint::v4([127, 0, 0, 1], 9));
        assert_eq!(&mapped[18..24], &[0xff, 0xff, 127, 0, 0, 1]);
        assert!(Endpoint::unspecified(AF_INET).is_any());
        assert!(Endpoint::unspecified(AF_INET6).is_any());
        assert!(!Endpoint::v4([10, 0, 0, 1], 0).is_local());
        assert_eq!(
            Endpoint::v4([0; 4], 0).source_for(),
            Endpoint::v4([127, 0, 0, 1], 0).ip
        );
    }

    fn binding(owner: u32, local: Endpoint) -> Binding<u32> {
        Binding {
            proto: Proto::Tcp,
            local,
            v6only: false,
            reuse_addr: false,
            reuse_port: false,
            listening: false,
            owner,
        }
    }

    #[test]
    fn a_port_is_held_once_unless_both_sockets_share_it() {
        let mut ports = Ports::new();
        let any4 = Endpoint::v4([0; 4], 5000);
        let lo4 = Endpoint::v4([127, 0, 0, 1], 5000);
        assert_eq!(ports.bind(binding(1, any4)), Ok(5000));
        assert_eq!(ports.bind(binding(2, lo4)), Err(Errno::EADDRINUSE));
        // UDP's ports are another table.
        let udp = Binding {
            proto: Proto::Udp,
            ..binding(3, lo4)
        };
        assert_eq!(ports.bind(udp), Ok(5000));
        // An IPv6 wildcard hears IPv4 too, unless it is IPv6-only.
        let any6 = Endpoint {
            port: 5000,
            ..Endpoint::default()
        };
        assert_eq!(ports.bind(binding(4, any6)), Err(Errno::EADDRINUSE));
        let v6only = Binding {
            v6only: true,
            ..binding(4, any6)
        };
        assert_eq!(ports.bind(v6only), Ok(5000));
        ports.unbind(|&o| o == 1 || o == 4);
        assert_eq!(ports.bind(binding(2, lo4)), Ok(5000));

        // SO_REUSEADDR on both: shared until one listens.
        let reuse = |owner| Binding {
            reuse_addr: true,
            ..binding(owner, Endpoint::v4([0; 4], 6000))
        };
        assert_eq!(ports.bind(reuse(5)), Ok(6000));
        assert_eq!(ports.bind(reuse(6)), Ok(6000));
        assert_eq!(ports.listen(|&o| o == 5), Ok(()));
        assert_eq!(ports.listen(|&o| o == 6), Err(Errno::EADDRINUSE));
        assert_eq!(ports.bind(reuse(7)), Err(Errno::EADDRINUSE));
        assert_eq!(ports.listen(|&o| o == 99), Err(Errno::EINVAL));
    }

    #[test]
    fn ephemeral_ports_come_from_linuxs_range_and_skip_held_ones() {
        let mut ports = Ports::new();
        let first = ports.bind(binding(1, Endpoint::v4([0; 4], 0))).unwrap();
        assert!(EPHEMERAL.contains(&first));
        let second = ports.bind(binding(2, Endpoint::v4([0; 4], 0))).unwrap();
        assert_ne!(first, second);
        assert!(EPHEMERAL.contains(&second));
    }

    #[test]
    fn a_connection_reaches_the_exact_address_before_the_wildcard() {
        let mut ports = Ports::new();
        let mut any = binding(1, Endpoint::v4([0; 4], 7000));
        any.reuse_port = true;
        let mut exact = binding(2, Endpoint::v4([127, 0, 0, 2], 7000));
        exact.reuse_port = true;
        ports.bind(any).unwrap();
        ports.bind(exact).unwrap();
        ports.listen(|&o| o == 1).unwrap();
        let to = |ip| Endpoint::v4(ip, 7000);
        // Not yet listening: the wildcard takes it.
        assert_eq!(
            ports.find(Proto::Tcp, &to([127, 0, 0, 2]), true, |_| true),
            Some(&1)
        );
        ports.listen(|&o| o == 2).unwrap();
        assert_eq!(
            ports.find(Proto::Tcp, &to([127, 0, 0, 2]), true, |_| true),
            Some(&2)
        );
        assert_eq!(
            ports.find(Proto::Tcp, &to([127, 0, 0, 1]), true, |_| true),
            Some(&1)
        );
        assert_eq!(
            ports.find(Proto::Tcp, &to([127, 0, 0, 1]), true, |&o| o != 1),
            None
        );
        assert_eq!(
            ports.find(Proto::Udp, &to([127, 0, 0, 1]), false, |_| true),
            None
        );
        // A dual-stack IPv6 listener hears an IPv4 client.
        let mut ports = Ports::new();
        let any6 = Endpoint {
            port: 8000,
            ..Endpoint::default()
        };
        ports.bind(binding(3, any6)).unwrap();
        ports.listen(|&o| o == 3).unwrap();
        let v4 = Endpoint::v4([127, 0, 0, 1], 8000);
        assert_eq!(ports.find(Proto::Tcp, &v4, true, |_| true), Some(&3));
        ports.get_mut(|&o| o == 3).unwrap().v6only = true;
        assert_eq!(ports.find(Proto::Tcp, &v4, true, |_| true), None);
    }

    #[test]
    fn control_messages_are_cut_as_linuxs_put_cmsg_cuts_them() {
        let hop = 64i32.to_le_bytes();
        // Room for both: each takes CMSG_SPACE(4) = 24 bytes.
        let mut c = ControlBuffer::new(1024);
        c.put(IPPROTO_IPV6, IPV6_HOPLIMIT, &hop);
        c.put(IPPROTO_IPV6, IPV6_TCLASS, &0i32.to_le_bytes());
        assert_eq!((c.bytes.len(), c.truncated), (48, false));
        assert_eq!(&c.bytes[..8], &20u64.to_le_bytes());
        assert_eq!(&c.bytes[16..20], &hop);
        // The second one's data cut to one byte: cmsg_len 17.
        let mut c = ControlBuffer::new(24 + 17);
        c.put(IPPROTO_IPV6, IPV6_HOPLIMIT, &hop);
        c.put(IPPROTO_IPV6, IPV6_TCLASS, &hop);
        assert_eq!((c.bytes.len(), c.truncated), (41, true));
        assert_eq!(&c.bytes[24..32], &17u64.to_le_bytes());
        // No room for a header: nothing, and truncated.
        let mut c = ControlBuffer::new(15);
        c.put(IPPROTO_IPV6, IPV6_HOPLIMIT, &hop);
        assert_eq!((c.bytes.len(), c.truncated), (0, true));
        assert_eq!(ipv6_control_value(&hop), Ok(64));
        assert_eq!(ipv6_control_value(&(-1i32).to_le_bytes()), Ok(-1));
        assert_eq!(
            ipv6_control_value(&256i32.to_le_bytes()),
            Err(Errno::EINVAL)
        );
        assert_eq!(ipv6_control_value(&hop[..3]), Err(Errno::EINVAL));
    }

    #[test]
    fn options_read_back_linuxs_defaults_where_the_socket_has_them() {
        assert_eq!(
            int_option(AF_INET, Proto::Tcp, IPPROTO_IP, IP_TTL),
            Some(64)
        );
        assert_eq!(
            int_option(AF_INET, Proto::Tcp, IPPROTO_TCP, TCP_NODELAY),
            Some(0)
        );
        assert_eq!(
            int_option(AF_INET, Proto::Udp, IPPROTO_TCP, TCP_NODELAY),
            None
        );
        assert_eq!(
            int_option(AF_INET, Proto::Udp, IPPROTO_IPV6, IPV6_V6ONLY),
            None
        );
        assert_eq!(
            int_option(AF_INET6, Proto::Udp, IPPROTO_IPV6, IPV6_V6ONLY),
            Some(0)
        );
        assert_eq!(int_option(AF_INET, Proto::Tcp, SOL_SOCKET, 9999), None);
        assert_eq!(setting(SOL_SOCKET, SO_REUSEADDR, 7), 1);
        assert_eq!(setting(IPPROTO_TCP, TCP_NODELAY, -1), 1);
        assert_eq!(setting(SOL_SOCKET, SO_SNDBUF, 10_000), 20_000);
        assert_eq!(setting(SOL_SOCKET, SO_RCVBUF, 1), 2304);
        assert_eq!(setting(IPPROTO_IP, IP_TTL, 5), 5);
    }
}
