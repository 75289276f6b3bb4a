//! Sockets: the families, types, flags, options and structures of
//! socket(2), bind(2), sendmsg(2) and friends, as Linux x86_64 has them.

/// `AF_UNSPEC`: connect(2) with it dissolves a datagram socket's
/// association.
pub const AF_UNSPEC: u16 = 0;
/// `AF_UNIX`: sockets between processes of this machine (fs/socket.rs).
pub const AF_UNIX: u16 = 1;
/// `AF_INET`, `AF_INET6`: TCP and UDP over the loopback interface only
/// (`kcore::inet`): this kernel has no network card.
pub const AF_INET: u16 = 2;
pub const AF_INET6: u16 = 10;

pub const SOCK_STREAM: u32 = 1;
pub const SOCK_DGRAM: u32 = 2;
pub const SOCK_RAW: u32 = 3;
pub const SOCK_SEQPACKET: u32 = 5;
/// socket(2)'s type argument carries these beside the type.
pub const SOCK_NONBLOCK: u32 = 0o4000;
pub const SOCK_CLOEXEC: u32 = 0o2000000;
pub const SOCK_TYPE_MASK: u32 = 0xf;

/// `struct sockaddr_un`: the family, then a path (NUL-terminated unless it
/// fills the array) or, with a NUL first byte, a name in the abstract
/// namespace that is exactly the rest of the given length.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SockaddrUn {
    pub sun_family: u16,
    pub sun_path: [u8; 108],
}
const _: () = assert!(size_of::<SockaddrUn>() == 110);

impl Default for SockaddrUn {
    fn default() -> Self {
        SockaddrUn {
            sun_family: AF_UNIX,
            sun_path: [0; 108],
        }
    }
}

/// `struct sockaddr_in`: family, port (big-endian), IPv4 address, 8 bytes
/// of padding.
pub const SOCKADDR_IN_SIZE: usize = 16;
/// `struct sockaddr_in6`: family, port, flow information, the 16-byte
/// address, scope id. RFC 2133's older form lacks the scope id (24 bytes),
/// and Linux takes it.
pub const SOCKADDR_IN6_SIZE: usize = 28;
pub const SOCKADDR_IN6_SIZE_RFC2133: usize = 24;

/// Protocol numbers: socket(2)'s third argument and option levels.
pub const IPPROTO_IP: i32 = 0;
pub const IPPROTO_ICMP: i32 = 1;
pub const IPPROTO_TCP: i32 = 6;
pub const IPPROTO_UDP: i32 = 17;
pub const IPPROTO_IPV6: i32 = 41;
pub const IPPROTO_ICMPV6: i32 = 58;
pub const IPPROTO_UDPLITE: i32 = 136;

/// Where `sun_path` starts: a length of just this is an unnamed address.
pub const SUN_PATH_OFFSET: usize = 2;

/// `struct msghdr` (sendmsg, recvmsg).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsgHdr {
    pub msg_name: u64,
    pub msg_namelen: u32,
    pub msg_iov: u64,
    pub msg_iovlen: u64,
    pub msg_control: u64,
    pub msg_controllen: u64,
    pub msg_flags: i32,
}
const _: () = assert!(size_of::<MsgHdr>() == 56);

/// `struct mmsghdr` (sendmmsg, recvmmsg): a message and the bytes the
/// call moved for it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MmsgHdr {
    pub msg_hdr: MsgHdr,
    pub msg_len: u32,
}
const _: () = assert!(size_of::<MmsgHdr>() == 64);

/// At most this many messages in one sendmmsg or recvmmsg (UIO_MAXIOV).
pub const MMSG_MAX: usize = 1024;

/// `struct cmsghdr`: one control message's header; its data follows,
/// and the next header starts 8-byte aligned (`cmsg_align`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CmsgHdr {
    pub cmsg_len: u64,
    pub cmsg_level: i32,
    pub cmsg_type: i32,
}
const _: () = assert!(size_of::<CmsgHdr>() == 16);

/// CMSG_ALIGN: control messages are laid out on 8-byte boundaries.
pub const fn cmsg_align(len: usize) -> usize {
    (len + 7) & !7
}

/// `struct ucred`: who sent a message (SCM_CREDENTIALS) or is at the other
/// end of a connection (SO_PEERCRED).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ucred {
    pub pid: i32,
    pub uid: u32,
    pub gid: u32,
}
const _: () = assert!(size_of::<Ucred>() == 12);

/// The level of socket options and of control messages.
pub const SOL_SOCKET: i32 = 1;
/// Control messages: descriptors passed along (an array of int) ...
pub const SCM_RIGHTS: i32 = 1;
/// ... and the sender's `Ucred`.
pub const SCM_CREDENTIALS: i32 = 2;
/// At most this many descriptors in one SCM_RIGHTS message (Linux's
/// SCM_MAX_FD).
pub const SCM_MAX_FD: usize = 253;

pub const SO_DEBUG: i32 = 1;
pub const SO_REUSEADDR: i32 = 2;
pub const SO_TYPE: i32 = 3;
pub const SO_ERROR: i32 = 4;
pub const SO_DONTROUTE: i32 = 5;
pub const SO_BROADCAST: i32 = 6;
pub const SO_SNDBUF: i32 = 7;
pub const SO_RCVBUF: i32 = 8;
pub const SO_KEEPALIVE: i32 = 9;
pub const SO_OOBINLINE: i32 = 10;
pub const SO_NO_CHECK: i32 = 11;
pub const SO_PRIORITY: i32 = 12;
pub const SO_LINGER: i32 = 13;
pub const SO_REUSEPORT: i32 = 15;
pub const SO_PASSCRED: i32 = 16;
pub const SO_PEERCRED: i32 = 17;
pub const SO_RCVLOWAT: i32 = 18;
pub const SO_SNDLOWAT: i32 = 19;
pub const SO_RCVTIMEO: i32 = 20;
pub const SO_SNDTIMEO: i32 = 21;
pub const SO_TIMESTAMP: i32 = 29;
pub const SO_ACCEPTCONN: i32 = 30;
pub const SO_PROTOCOL: i32 = 38;
pub const SO_DOMAIN: i32 = 39;

/// IPPROTO_TCP options.
pub const TCP_NODELAY: i32 = 1;
pub const TCP_MAXSEG: i32 = 2;
pub const TCP_CORK: i32 = 3;
pub const TCP_KEEPIDLE: i32 = 4;
pub const TCP_KEEPINTVL: i32 = 5;
pub const TCP_KEEPCNT: i32 = 6;
pub const TCP_SYNCNT: i32 = 7;
pub const TCP_LINGER2: i32 = 8;
pub const TCP_DEFER_ACCEPT: i32 = 9;
pub const TCP_WINDOW_CLAMP: i32 = 10;
pub const TCP_QUICKACK: i32 = 12;
pub const TCP_USER_TIMEOUT: i32 = 18;
pub const TCP_FASTOPEN: i32 = 23;
pub const TCP_NOTSENT_LOWAT: i32 = 25;

/// IPPROTO_IP options.
pub const IP_TOS: i32 = 1;
pub const IP_TTL: i32 = 2;
pub const IP_RECVTTL: i32 = 12;
pub const IP_RECVTOS: i32 = 13;
pub const IP_MULTICAST_TTL: i32 = 33;
pub const IP_MULTICAST_LOOP: i32 = 34;

/// IPPROTO_IPV6 options.
pub const IPV6_UNICAST_HOPS: i32 = 16;
pub const IPV6_MULTICAST_HOPS: i32 = 18;
pub const IPV6_MULTICAST_LOOP: i32 = 19;
pub const IPV6_V6ONLY: i32 = 26;
pub const IPV6_RECVPKTINFO: i32 = 49;
pub const IPV6_RECVHOPLIMIT: i32 = 51;
/// The control message of IPV6_RECVHOPLIMIT (an int), which also sets one
/// datagram's hop limit in sendmsg.
pub const IPV6_HOPLIMIT: i32 = 52;
pub const IPV6_RECVRTHDR: i32 = 56;
pub const IPV6_RECVDSTOPTS: i32 = 58;
pub const IPV6_RECVTCLASS: i32 = 66;
/// The traffic class: an option, and the control message of
/// IPV6_RECVTCLASS (an int), which also sets one datagram's in sendmsg.
pub const IPV6_TCLASS: i32 = 67;
pub const IPV6_DONTFRAG: i32 = 62;

/// send/recv flags.
pub const MSG_OOB: u32 = 0x1;
pub const MSG_PEEK: u32 = 0x2;
pub const MSG_CTRUNC: u32 = 0x8;
pub const MSG_TRUNC: u32 = 0x20;
pub const MSG_DONTWAIT: u32 = 0x40;
pub const MSG_EOR: u32 = 0x80;
pub const MSG_WAITALL: u32 = 0x100;
pub const MSG_NOSIGNAL: u32 = 0x4000;
/// recvmmsg: wait for the first message only.
pub const MSG_WAITFORONE: u32 = 0x10000;
pub const MSG_CMSG_CLOEXEC: u32 = 0x4000_0000;

/// shutdown(2)'s `how`.
pub const SHUT_RD: u32 = 0;
pub const SHUT_WR: u32 = 1;
pub const SHUT_RDWR: u32 = 2;
