//! Socket calls: socket, socketpair, bind, listen, connect, accept4,
//! sendto, recvfrom, sendmsg, recvmsg, sendmmsg, recvmmsg, shutdown,
//! getsockname, getpeername, setsockopt, getsockopt.
//!
//! Each turns the raw integers into what they stand for (a `Domain`, a
//! `Type` and its flags, an `Address` read from a `sockaddr_un`,
//! `sockaddr_in` or `sockaddr_in6`, the descriptors and credentials of a
//! control message) and calls `fs::socket`. The Unix domain and the
//! Internet's over loopback are here; any other family is EAFNOSUPPORT.
//! Bytes cross into
//! a kernel buffer before anything is sent, and a receive checks every
//! buffer it may write before it takes a message, so a bad pointer is
//! EFAULT and loses nothing. Addresses go back as Linux's
//! `move_addr_to_user` does: cut to the caller's length, the whole length
//! written back.

use abi::Errno;
use abi::socket::*;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use super::SysResult;
use super::fs::{fd_file, iovecs};
use crate::fs::file::{Kind, OpenFile};
use crate::fs::socket::{Address, CAPACITY, Domain, Outgoing, Socket, Type};
use crate::mm::uaccess;
use crate::proc::current;
use kcore::inet::Endpoint;

/// The socket open as `fd`: EBADF for no descriptor, ENOTSOCK for another
/// kind of file.
fn socket_of(fd: i32) -> Result<(Arc<OpenFile>, Arc<Socket>), Errno> {
    let file = fd_file(fd)?;
    let Kind::Socket(socket) = &file.kind else {
        return Err(Errno::ENOTSOCK);
    };
    let socket = socket.clone();
    Ok((file, socket))
}

fn nonblocking(file: &OpenFile, flags: u32) -> bool {
    *file.flags.lock() & abi::types::O_NONBLOCK != 0 || flags & MSG_DONTWAIT != 0
}

/// socket(2)'s arguments: the domain, the type and its SOCK_NONBLOCK,
/// SOCK_CLOEXEC flags, checked in Linux's order (flags EINVAL, family
/// EAFNOSUPPORT, type EINVAL, protocol EPROTONOSUPPORT, type
/// ESOCKTNOSUPPORT; the Internet's protocols by `kcore::inet::protocol`).
fn parse(domain: u32, ty: u32, protocol: u32) -> Result<(Domain, Type, u32), Errno> {
    let flags = ty & !SOCK_TYPE_MASK;
    if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let inet = domain == u32::from(AF_INET) || domain == u32::from(AF_INET6);
    if domain != AF_UNIX as u32 && !inet {
        return Err(Errno::EAFNOSUPPORT);
    }
    let base = ty & SOCK_TYPE_MASK;
    if base >= 11 {
        return Err(Errno::EINVAL);
    }
    if inet {
        let family = domain as u16;
        let may_raw = crate::proc::cred().capable(abi::types::CAP_NET_RAW);
        let proto = kcore::inet::protocol(family, base, protocol, may_raw)?;
        let ty = if base == SOCK_STREAM {
            Type::Stream
        } else {
            Type::Dgram
        };
        return Ok((Domain::Inet { family, proto }, ty, flags));
    }
    if protocol != 0 && protocol != AF_UNIX as u32 {
        return Err(Errno::EPROTONOSUPPORT);
    }
    let ty = match base {
        SOCK_STREAM => Type::Stream,
        // SOCK_RAW means datagrams in the Unix domain, as on Linux.
        SOCK_DGRAM | 3 => Type::Dgram,
        SOCK_SEQPACKET => Type::SeqPacket,
        _ => return Err(Errno::ESOCKTNOSUPPORT),
    };
    Ok((Domain::Unix, ty, flags))
}

/// An open file for `socket` (its only one), installed as the lowest free
/// descriptor.
fn install(socket: Arc<Socket>, flags: u32) -> Result<i32, Errno> {
    let file = OpenFile::new(
        Kind::Socket(socket),
        abi::types::O_RDWR | (flags & SOCK_NONBLOCK),
        None,
    );
    current(|p| {
        p.files
            .install(&file, flags & SOCK_CLOEXEC != 0, p.fd_limit())
    })
}

pub fn socket(domain: u32, ty: u32, protocol: u32) -> SysResult {
    let (domain, ty, flags) = parse(domain, ty, protocol)?;
    install(Socket::new(domain, ty), flags).map(|fd| fd as usize)
}

/// socketpair(2): the Unix domain only (an Internet pair is EOPNOTSUPP,
/// as on Linux).
pub fn socketpair(domain: u32, ty: u32, protocol: u32, sv: u64) -> SysResult {
    let (domain, ty, flags) = parse(domain, ty, protocol)?;
    if domain != Domain::Unix {
        return Err(Errno::EOPNOTSUPP);
    }
    uaccess::check_range(sv, 8, true)?;
    let (a, b) = Socket::pair(ty);
    let first = install(a, flags)?;
    let pair = match install(b, flags) {
        Ok(second) => [first, second],
        Err(e) => {
            let _ = super::fs::close(first);
            return Err(e);
        }
    };
    if let Err(e) = uaccess::write(sv, &pair) {
        for fd in pair {
            let _ = super::fs::close(fd);
        }
        return Err(e);
    }
    Ok(0)
}

/// The largest address a caller may pass (`struct sockaddr_storage`).
const SOCKADDR_STORAGE_SIZE: usize = 128;

/// The `len` bytes of an address at `addr` (EINVAL past
/// `sockaddr_storage`, as Linux's `move_addr_to_kernel`).
fn address_bytes(addr: u64, len: u32) -> Result<Vec<u8>, Errno> {
    let len = len as usize;
    if len > SOCKADDR_STORAGE_SIZE {
        return Err(Errno::EINVAL);
    }
    let mut bytes = vec![0u8; len];
    uaccess::copy_from_user(&mut bytes, addr)?;
    Ok(bytes)
}

/// The Internet address at `addr` for `socket` (`kcore::inet::parse`).
fn read_endpoint(socket: &Socket, addr: u64, len: u32) -> Result<Endpoint, Errno> {
    kcore::inet::parse(socket.domain.family(), &address_bytes(addr, len)?)
}

/// The address at `addr` in `socket`'s family: for the Unix domain a
/// `sockaddr_un` of `len` bytes: EINVAL for a length outside 3..=110 (2
/// only where `unnamed_ok`: bind's request for a made-up name) or another
/// family.
fn read_address(socket: &Socket, addr: u64, len: u32, unnamed_ok: bool) -> Result<Address, Errno> {
    if let Domain::Inet { .. } = socket.domain {
        return read_endpoint(socket, addr, len).map(Address::Inet);
    }
    let len = len as usize;
    if len < SUN_PATH_OFFSET || len > size_of::<SockaddrUn>() {
        return Err(Errno::EINVAL);
    }
    let mut bytes = vec![0u8; len];
    uaccess::copy_from_user(&mut bytes, addr)?;
    if u16::from_le_bytes([bytes[0], bytes[1]]) != AF_UNIX {
        return Err(Errno::EINVAL);
    }
    let path = &bytes[SUN_PATH_OFFSET..];
    match path.first() {
        None if unnamed_ok => Ok(Address::Unnamed),
        None => Err(Errno::EINVAL),
        Some(0) => Ok(Address::Abstract(path[1..].to_vec())),
        Some(_) => {
            let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
            String::from_utf8(path[..end].to_vec())
                .map(Address::Path)
                .map_err(|_| Errno::EINVAL)
        }
    }
}

/// A path name made absolute against the current directory ("" for the
/// others).
fn resolve(name: &Address) -> Result<String, Errno> {
    match name {
        Address::Path(path) => kcore::path::resolve(&current(|p| p.cwd.clone()), path),
        _ => Ok(String::new()),
    }
}

/// The bytes of `name` as `socket`'s family says them. An Internet name
/// is a `sockaddr_in` or `sockaddr_in6` (an unnamed socket's is the
/// wildcard, port 0). A `sockaddr_un` has a path with its NUL, an
/// abstract name after its NUL, an unnamed socket as the family alone (or
/// nothing: a received message from an unnamed sender).
fn encode(socket: &Socket, name: &Address, unnamed_family: bool) -> Vec<u8> {
    let family = socket.domain.family();
    match name {
        Address::Inet(endpoint) => return kcore::inet::encode(family, endpoint),
        Address::Unnamed if family != AF_UNIX => {
            return kcore::inet::encode(family, &Endpoint::unspecified(family));
        }
        _ => {}
    }
    let mut out = AF_UNIX.to_le_bytes().to_vec();
    match name {
        Address::Inet(_) => {}
        Address::Unnamed if !unnamed_family => out.clear(),
        Address::Unnamed => {}
        Address::Path(path) => {
            out.extend_from_slice(path.as_bytes());
            out.push(0);
        }
        Address::Abstract(bytes) => {
            out.push(0);
            out.extend_from_slice(bytes);
        }
    }
    out
}

/// Writes `bytes` to `addr`, cut to the caller's length at `len_ptr` (an
/// int; negative is EINVAL), and the whole length back there (Linux's
/// `move_addr_to_user`). Callers whose address is optional (accept4,
/// recvfrom) skip it for a null `addr`.
fn write_address(bytes: &[u8], addr: u64, len_ptr: u64) -> Result<(), Errno> {
    let room = uaccess::read::<i32>(len_ptr)?;
    let room = usize::try_from(room).map_err(|_| Errno::EINVAL)?;
    let n = room.min(bytes.len());
    uaccess::copy_to_user(addr, &bytes[..n])?;
    uaccess::write(len_ptr, &(bytes.len() as u32))
}

/// bind(2) of an Internet socket: an address of this machine
/// (EADDRNOTAVAIL otherwise), a port below 1024 only with
/// CAP_NET_BIND_SERVICE (EACCES).
fn bind_inet(socket: &Arc<Socket>, addr: u64, len: u32) -> SysResult {
    let local = read_endpoint(socket, addr, len)?;
    if !local.is_local() {
        return Err(Errno::EADDRNOTAVAIL);
    }
    if local.port != 0
        && local.port < kcore::inet::PRIVILEGED_BELOW
        && !crate::proc::cred().capable(abi::types::CAP_NET_BIND_SERVICE)
    {
        return Err(Errno::EACCES);
    }
    socket.bind_inet(local).map(|()| 0)
}

pub fn bind(fd: i32, addr: u64, len: u32) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    if let Domain::Inet { .. } = socket.domain {
        return bind_inet(&socket, addr, len);
    }
    let name = read_address(&socket, addr, len, true)?;
    if name == Address::Unnamed {
        return socket.autobind().map(|()| 0);
    }
    let perm = 0o777 & !current(|p| p.umask);
    socket.bind(name.clone(), &resolve(&name)?, perm)?;
    Ok(0)
}

pub fn listen(fd: i32, backlog: i32) -> SysResult {
    socket_of(fd)?.1.listen(backlog).map(|()| 0)
}

/// The socket `name` stands for.
fn find(name: &Address) -> Result<Arc<Socket>, Errno> {
    Socket::find(name, &resolve(name)?)
}

pub fn connect(fd: i32, addr: u64, len: u32) -> SysResult {
    let (file, socket) = socket_of(fd)?;
    if let Domain::Inet { .. } = socket.domain {
        let bytes = address_bytes(addr, len)?;
        if kcore::inet::family_of(&bytes) == Some(AF_UNSPEC) {
            return socket.disconnect().map(|()| 0);
        }
        let to = kcore::inet::parse(socket.domain.family(), &bytes)?;
        return socket.connect_inet(to, nonblocking(&file, 0)).map(|()| 0);
    }
    let target = find(&read_address(&socket, addr, len, false)?)?;
    socket.connect(target, nonblocking(&file, 0)).map(|()| 0)
}

pub fn accept4(fd: i32, addr: u64, len_ptr: u64, flags: u32) -> SysResult {
    if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let (file, socket) = socket_of(fd)?;
    if addr != 0 {
        uaccess::check_range(len_ptr, 4, true)?;
    }
    let server = socket.accept(nonblocking(&file, 0))?;
    let peer = server.peer_name().unwrap_or(Address::Unnamed);
    let peer = encode(&server, &peer, true);
    let fd = install(server, flags)?;
    if addr != 0
        && let Err(e) = write_address(&peer, addr, len_ptr)
    {
        let _ = super::fs::close(fd);
        return Err(e);
    }
    Ok(fd as usize)
}

/// The bytes of an iovec array, EMSGSIZE past what one send may carry.
fn gather(iov: &[(u64, u64)], limit: usize) -> Result<Vec<u8>, Errno> {
    let total = iov
        .iter()
        .try_fold(0usize, |sum, &(_, len)| sum.checked_add(len as usize))
        .filter(|&t| t <= limit)
        .ok_or(Errno::EMSGSIZE)?;
    let mut bytes = vec![0u8; total];
    let mut at = 0;
    for &(base, len) in iov {
        uaccess::copy_from_user(&mut bytes[at..at + len as usize], base)?;
        at += len as usize;
    }
    Ok(bytes)
}

/// The descriptors and credentials a sendmsg's control messages carry.
/// Control messages of other levels are passed over, as Linux does; a
/// header that does not fit, or an unknown SOL_SOCKET type (any, for an
/// Internet socket), is EINVAL; a descriptor not open is EBADF. An IPv6
/// socket's datagram may state its hop limit and traffic class.
fn read_control(socket: &Socket, addr: u64, len: u64) -> Result<Control, Errno> {
    // Descriptors and credentials travel only between Unix sockets.
    let unix = socket.domain == Domain::Unix;
    let ipv6 = socket.domain.family() == AF_INET6;
    let mut control = Control::default();
    let Control {
        files,
        cred,
        hop_limit,
        tclass,
    } = &mut control;
    if len == 0 {
        return Ok(control);
    }
    if len > 64 * 1024 {
        return Err(Errno::ENOBUFS);
    }
    let mut bytes = vec![0u8; len as usize];
    uaccess::copy_from_user(&mut bytes, addr)?;
    let header = size_of::<CmsgHdr>();
    let mut at = 0;
    while at + header <= bytes.len() {
        let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let int = |i: usize| i32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let cmsg_len = word(at) as usize;
        let (level, ty) = (int(at + 8), int(at + 12));
        if cmsg_len < header || cmsg_len > bytes.len() - at {
            return Err(Errno::EINVAL);
        }
        let data = &bytes[at + header..at + cmsg_len];
        match (level, ty) {
            (SOL_SOCKET, _) if !unix => return Err(Errno::EINVAL),
            (SOL_SOCKET, SCM_RIGHTS) => {
                let (fds, _) = data.as_chunks::<4>();
                if files.len() + fds.len() > SCM_MAX_FD {
                    return Err(Errno::EINVAL);
                }
                for fd in fds {
                    files.push(fd_file(i32::from_le_bytes(*fd))?);
                }
            }
            (SOL_SOCKET, SCM_CREDENTIALS) => {
                let ([pid, uid, gid], []) = data.as_chunks::<4>() else {
                    return Err(Errno::EINVAL);
                };
                let [pid, uid, gid] = [pid, uid, gid].map(|b| u32::from_le_bytes(*b));
                // Linux's `scm_check_creds`: a process may say only its own
                // pid and one of its own user and group ids; root anything.
                let (me, mine) = crate::proc::current(|p| (p.pid, p.cred.clone()));
                let root = mine.is_root();
                let own_uid = [mine.ruid, mine.euid, mine.suid].contains(&uid);
                let own_gid = [mine.rgid, mine.egid, mine.sgid].contains(&gid);
                if !(root || pid == me && own_uid && own_gid) {
                    return Err(Errno::EPERM);
                }
                *cred = Some(Ucred {
                    pid: pid as i32,
                    uid,
                    gid,
                });
            }
            (SOL_SOCKET, _) => return Err(Errno::EINVAL),
            (IPPROTO_IPV6, IPV6_HOPLIMIT) if ipv6 => {
                *hop_limit = Some(kcore::inet::ipv6_control_value(data)?);
            }
            (IPPROTO_IPV6, IPV6_TCLASS) if ipv6 => {
                *tclass = Some(kcore::inet::ipv6_control_value(data)?);
            }
            _ => {}
        }
        at += cmsg_align(cmsg_len);
    }
    Ok(control)
}

/// What a sendmsg's control messages carry.
#[derive(Default)]
struct Control {
    files: Vec<Arc<OpenFile>>,
    cred: Option<Ucred>,
    /// An IPv6 datagram's own hop limit and traffic class.
    hop_limit: Option<i32>,
    tclass: Option<i32>,
}

/// sendto and sendmsg: the address (`addr`, `len`; none if `addr` is
/// null) read and the socket's state checked before the bytes are
/// gathered from `iov`, as Linux orders it; the socket named looked up
/// last. TCP passes over an address, as Linux does.
fn send(
    fd: i32,
    iov: &[(u64, u64)],
    control: Option<(u64, u64)>,
    flags: u32,
    (addr, len): (u64, u32),
) -> SysResult {
    let (file, socket) = socket_of(fd)?;
    let inet = matches!(socket.domain, Domain::Inet { .. });
    let addressed = addr != 0 && !(inet && socket.ty == Type::Stream);
    let name = if addressed {
        Some(read_address(&socket, addr, len, false)?)
    } else {
        None
    };
    let signal = flags & MSG_NOSIGNAL == 0;
    socket.may_send(name.is_some(), signal)?;
    let Control {
        files,
        cred,
        hop_limit,
        tclass,
    } = match control {
        Some((addr, len)) => read_control(&socket, addr, len)?,
        None => Control::default(),
    };
    let nonblock = nonblocking(&file, flags);
    if socket.ty == Type::Stream {
        return send_stream(&socket, iov, files, cred, nonblock, signal);
    }
    // A message must fit in a receive queue.
    let bytes = gather(iov, CAPACITY)?;
    let (to, to_inet) = match name {
        Some(Address::Inet(endpoint)) => (None, Some(endpoint)),
        Some(name) => (Some(find(&name)?), None),
        None => (None, None),
    };
    let out = Outgoing {
        bytes: &bytes,
        files,
        cred,
        to,
        to_inet,
        hop_limit,
        tclass,
    };
    socket.send(out, nonblock, signal)
}

/// Bytes a stream's send copies in at a time.
const STREAM_PIECE: usize = 16 * CAPACITY;

/// A send on a stream, of any length: `iov`'s bytes in pieces of at most
/// `STREAM_PIECE`, the descriptors and credentials with the first. Stops
/// at a piece that went only in part (no room when `nonblock`, or a
/// signal) and returns what went; an error after some bytes is that count.
fn send_stream(
    socket: &Arc<Socket>,
    iov: &[(u64, u64)],
    files: Vec<Arc<OpenFile>>,
    cred: Option<Ucred>,
    nonblock: bool,
    signal: bool,
) -> SysResult {
    let total = iov
        .iter()
        .try_fold(0usize, |sum, &(_, len)| sum.checked_add(len as usize))
        .ok_or(Errno::EINVAL)?;
    let mut files = Some(files);
    let mut sent = 0;
    let mut at = (0, 0); // (iovec, offset in it)
    loop {
        let mut piece = Vec::with_capacity((total - sent).min(STREAM_PIECE));
        while piece.len() < STREAM_PIECE && at.0 < iov.len() {
            let (base, len) = iov[at.0];
            let n = (len as usize - at.1).min(STREAM_PIECE - piece.len());
            let from = piece.len();
            piece.resize(from + n, 0);
            if let Err(e) = uaccess::copy_from_user(&mut piece[from..], base + at.1 as u64) {
                return if sent > 0 { Ok(sent) } else { Err(e) };
            }
            at.1 += n;
            if at.1 == len as usize {
                at = (at.0 + 1, 0);
            }
        }
        let out = Outgoing {
            files: files.take().unwrap_or_default(),
            cred,
            ..Outgoing::bytes(&piece)
        };
        match socket.send(out, nonblock, signal && sent == 0) {
            Ok(n) => {
                sent += n;
                if n < piece.len() || sent == total {
                    return Ok(sent);
                }
            }
            Err(_) if sent > 0 => return Ok(sent),
            Err(e) => return Err(e),
        }
    }
}

pub fn sendto(fd: i32, buf: u64, len: u64, flags: u32, addr: u64, addr_len: u32) -> SysResult {
    send(fd, &[(buf, len)], None, flags, (addr, addr_len))
}

pub fn sendmsg(fd: i32, msg: u64, flags: u32) -> SysResult {
    socket_of(fd)?;
    let hdr: MsgHdr = uaccess::read(msg)?;
    let iov = iovecs(hdr.msg_iov, hdr.msg_iovlen)?;
    let control = Some((hdr.msg_control, hdr.msg_controllen));
    send(fd, &iov, control, flags, (hdr.msg_name, hdr.msg_namelen))
}

/// What a receive returns and writes back, after the bytes are copied.
struct Receipt {
    len: usize,
    flags: u32,
    from: Vec<u8>,
    control: Vec<u8>,
}

/// Receives into the buffers `iov` (each checked writable first) and
/// builds the control messages for `control_room` bytes: the sender's
/// credentials if SO_PASSCRED is on, then the descriptors passed, each
/// installed (close-on-exec with MSG_CMSG_CLOEXEC) as far as the room and
/// RLIMIT_NOFILE allow (MSG_CTRUNC, and the rest closed, past that).
fn receive(fd: i32, iov: &[(u64, u64)], flags: u32, control_room: usize) -> Result<Receipt, Errno> {
    let (file, socket) = socket_of(fd)?;
    for &(base, len) in iov {
        uaccess::check_range(base, len as usize, true)?;
    }
    let want = iov
        .iter()
        .map(|&(_, len)| len as usize)
        .sum::<usize>()
        .min(16 * CAPACITY);
    let mut buf = vec![0u8; want];
    let got = socket.recv(
        &mut buf,
        flags & MSG_PEEK != 0,
        flags & MSG_WAITALL != 0,
        nonblocking(&file, flags),
    )?;
    let mut at = 0;
    for &(base, len) in iov {
        let n = (len as usize).min(got.len - at);
        uaccess::copy_to_user(base, &buf[at..at + n])?;
        at += n;
    }
    let mut out_flags = 0;
    let mut len = got.len;
    if got.whole > got.len {
        out_flags |= MSG_TRUNC;
        if flags & MSG_TRUNC != 0 {
            len = got.whole;
        }
    }
    if let Some((hop_limit, tclass)) = got.ipv6 {
        // An IPv6 datagram's hop limit and traffic class, each if asked
        // for, cut to the room as Linux's put_cmsg cuts them.
        let mut control = kcore::inet::ControlBuffer::new(control_room);
        let asked = |name| socket.get_option(IPPROTO_IPV6, name) == Ok(1);
        if asked(IPV6_RECVHOPLIMIT) {
            control.put(IPPROTO_IPV6, IPV6_HOPLIMIT, &hop_limit.to_le_bytes());
        }
        if asked(IPV6_RECVTCLASS) {
            control.put(IPPROTO_IPV6, IPV6_TCLASS, &tclass.to_le_bytes());
        }
        if control.truncated {
            out_flags |= MSG_CTRUNC;
        }
        return Ok(Receipt {
            len,
            flags: out_flags,
            from: encode(&socket, &got.from, false),
            control: control.bytes,
        });
    }
    let mut control = Vec::new();
    let header = size_of::<CmsgHdr>();
    let put = |ty: i32, data: &[u8], control: &mut Vec<u8>| {
        let cmsg_len = header + data.len();
        let mut cmsg = Vec::with_capacity(cmsg_align(cmsg_len));
        cmsg.extend_from_slice(&(cmsg_len as u64).to_le_bytes());
        cmsg.extend_from_slice(&SOL_SOCKET.to_le_bytes());
        cmsg.extend_from_slice(&ty.to_le_bytes());
        cmsg.extend_from_slice(data);
        cmsg.resize(cmsg_align(cmsg_len), 0);
        control.extend_from_slice(&cmsg);
    };
    if socket.passcred() {
        let c = got.cred;
        let data: Vec<u8> = [c.pid as u32, c.uid, c.gid]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        if control_room >= header + data.len() {
            put(SCM_CREDENTIALS, &data, &mut control);
        } else {
            out_flags |= MSG_CTRUNC;
        }
    }
    if !got.files.is_empty() {
        let room = control_room.saturating_sub(control.len() + header) / 4;
        let cloexec = flags & MSG_CMSG_CLOEXEC != 0;
        let mut fds = Vec::new();
        let mut files = got.files;
        let mut no_descriptor = false;
        while fds.len() < room && !files.is_empty() {
            let file = files.remove(0);
            match current(|p| p.files.install(&file, cloexec, p.fd_limit())) {
                Ok(fd) => fds.push(fd),
                Err(_) => {
                    no_descriptor = true;
                    break;
                }
            }
        }
        if no_descriptor || !files.is_empty() {
            out_flags |= MSG_CTRUNC;
        }
        // Those that found no room (or no descriptor) are closed here.
        drop(files);
        if !fds.is_empty() {
            let data: Vec<u8> = fds.iter().flat_map(|fd| fd.to_le_bytes()).collect();
            put(SCM_RIGHTS, &data, &mut control);
        }
    }
    Ok(Receipt {
        len,
        flags: out_flags,
        // TCP's receives name no one: the peer is the connection's.
        from: if socket.domain != Domain::Unix && socket.ty == Type::Stream {
            Vec::new()
        } else {
            encode(&socket, &got.from, false)
        },
        control,
    })
}

pub fn recvfrom(fd: i32, buf: u64, len: u64, flags: u32, addr: u64, len_ptr: u64) -> SysResult {
    socket_of(fd)?;
    if addr != 0 {
        uaccess::check_range(len_ptr, 4, true)?;
    }
    let got = receive(fd, &[(buf, len)], flags, 0)?;
    if addr != 0 {
        write_address(&got.from, addr, len_ptr)?;
    }
    Ok(got.len)
}

pub fn recvmsg(fd: i32, msg: u64, flags: u32) -> SysResult {
    socket_of(fd)?;
    let hdr: MsgHdr = uaccess::read(msg)?;
    uaccess::check_range(msg, size_of::<MsgHdr>(), true)?;
    if hdr.msg_control != 0 {
        uaccess::check_range(hdr.msg_control, hdr.msg_controllen as usize, true)?;
    }
    let iov = iovecs(hdr.msg_iov, hdr.msg_iovlen)?;
    let room = if hdr.msg_control == 0 {
        0
    } else {
        hdr.msg_controllen as usize
    };
    let got = receive(fd, &iov, flags, room)?;
    if !got.control.is_empty() {
        uaccess::copy_to_user(hdr.msg_control, &got.control)?;
    }
    let mut out = hdr;
    if hdr.msg_name != 0 {
        let n = (hdr.msg_namelen as usize).min(got.from.len());
        uaccess::copy_to_user(hdr.msg_name, &got.from[..n])?;
    }
    out.msg_namelen = got.from.len() as u32;
    out.msg_controllen = got.control.len() as u64;
    out.msg_flags = got.flags as i32;
    uaccess::write(msg, &out)?;
    Ok(got.len)
}

/// Where `msg_len` of the `index`th `struct mmsghdr` at `vec` is.
fn mmsg_len_at(vec: u64, index: usize) -> u64 {
    vec + (index * size_of::<MmsgHdr>() + size_of::<MsgHdr>()) as u64
}

/// sendmmsg(2): sendmsg for each of `vlen` messages (at most `MMSG_MAX`),
/// each one's byte count written to its `msg_len`. Stops at the first
/// that fails: its error if it was the first, else the count sent, as
/// Linux answers.
pub fn sendmmsg(fd: i32, vec: u64, vlen: u64, flags: u32) -> SysResult {
    socket_of(fd)?;
    let vlen = (vlen as usize).min(MMSG_MAX);
    let mut sent = 0;
    while sent < vlen {
        let at = vec + (sent * size_of::<MmsgHdr>()) as u64;
        let step = sendmsg(fd, at, flags)
            .and_then(|n| uaccess::write(mmsg_len_at(vec, sent), &(n as u32)));
        match step {
            Ok(()) => sent += 1,
            Err(e) if sent == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(sent)
}

/// recvmmsg(2): recvmsg into each of `vlen` messages (at most
/// `MMSG_MAX`), each one's byte count written to its `msg_len`. With
/// MSG_WAITFORONE only the first waits. `timeout` (a timespec, or null)
/// is looked at after each message, as Linux does, and the time left is
/// written back. The first failure ends it: its error if nothing came,
/// else the count received.
pub fn recvmmsg(fd: i32, vec: u64, vlen: u64, flags: u32, timeout: u64) -> SysResult {
    let deadline = if timeout != 0 {
        Some(super::poll::deadline_after(uaccess::read(timeout)?)?)
    } else {
        None
    };
    socket_of(fd)?;
    let vlen = (vlen as usize).min(MMSG_MAX);
    let mut flags = flags;
    let mut got = 0;
    while got < vlen {
        let at = vec + (got * size_of::<MmsgHdr>()) as u64;
        let step = recvmsg(fd, at, flags & !MSG_WAITFORONE)
            .and_then(|n| uaccess::write(mmsg_len_at(vec, got), &(n as u32)));
        match step {
            Ok(()) => got += 1,
            Err(e) if got == 0 => return Err(e),
            Err(_) => break,
        }
        if flags & MSG_WAITFORONE != 0 {
            flags |= MSG_DONTWAIT;
        }
        if deadline.is_some_and(|d| crate::clock::nanos_since_boot() >= d) {
            break;
        }
    }
    if let Some(deadline) = deadline {
        uaccess::write(timeout, &super::poll::left_until(deadline))?;
    }
    Ok(got)
}

pub fn shutdown(fd: i32, how: u32) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    let (read, write) = match how {
        SHUT_RD => (true, false),
        SHUT_WR => (false, true),
        SHUT_RDWR => (true, true),
        _ => return Err(Errno::EINVAL),
    };
    socket.shutdown(read, write);
    Ok(0)
}

pub fn getsockname(fd: i32, addr: u64, len_ptr: u64) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    write_address(&encode(&socket, &socket.name(), true), addr, len_ptr).map(|()| 0)
}

pub fn getpeername(fd: i32, addr: u64, len_ptr: u64) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    let peer = socket.peer_name()?;
    write_address(&encode(&socket, &peer, true), addr, len_ptr).map(|()| 0)
}

/// setsockopt(2): SO_PASSCRED turns credentials on receipt on or off;
/// on a Unix socket SO_SNDBUF, SO_RCVBUF and SO_REUSEADDR are taken and
/// change nothing (a receive queue holds `CAPACITY` bytes), and levels
/// other than SOL_SOCKET have no options (EOPNOTSUPP); an Internet
/// socket keeps the integer options `kcore::inet::int_option` names
/// (IP-level ones may be one byte, as on Linux). Anything else is
/// ENOPROTOOPT.
pub fn setsockopt(fd: i32, level: i32, name: i32, value: u64, len: u32) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    let inet = socket.domain != Domain::Unix;
    if level != SOL_SOCKET && !inet {
        return Err(Errno::EOPNOTSUPP);
    }
    let int = if (len as usize) >= size_of::<i32>() {
        uaccess::read::<i32>(value)?
    } else if inet && len >= 1 && (level == IPPROTO_IP || level == IPPROTO_IPV6) {
        i32::from(uaccess::read::<u8>(value)?)
    } else {
        return Err(Errno::EINVAL);
    };
    match (level, name) {
        (SOL_SOCKET, SO_PASSCRED) => socket.set_passcred(int != 0),
        _ if inet => socket.set_option(level, name, int)?,
        (_, SO_SNDBUF | SO_RCVBUF | SO_REUSEADDR) => {}
        _ => return Err(Errno::ENOPROTOOPT),
    }
    Ok(0)
}

/// getsockopt(2): the value cut to the caller's length, which gets the
/// length written.
pub fn getsockopt(fd: i32, level: i32, name: i32, value: u64, len_ptr: u64) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    let inet = match socket.domain {
        Domain::Inet { proto, .. } => Some(proto),
        Domain::Unix => None,
    };
    if level != SOL_SOCKET && inet.is_none() {
        return Err(Errno::EOPNOTSUPP);
    }
    let room = usize::try_from(uaccess::read::<i32>(len_ptr)?).map_err(|_| Errno::EINVAL)?;
    let int = |v: i32| v.to_le_bytes().to_vec();
    let bytes = match (level, name) {
        (SOL_SOCKET, SO_TYPE) => int(socket.ty.number() as i32),
        (SOL_SOCKET, SO_ERROR) => int(socket.take_error().map_or(0, |e| e.0)),
        (SOL_SOCKET, SO_PASSCRED) => int(socket.passcred() as i32),
        (SOL_SOCKET, SO_ACCEPTCONN) => int(socket.listening() as i32),
        (SOL_SOCKET, SO_DOMAIN) => int(i32::from(socket.domain.family())),
        (SOL_SOCKET, SO_PROTOCOL) => int(inet.map_or(0, |p| p.number())),
        _ if inet.is_some() && name != SO_PEERCRED => int(socket.get_option(level, name)?),
        (SOL_SOCKET, SO_REUSEADDR) => int(0),
        (SOL_SOCKET, SO_SNDBUF | SO_RCVBUF) => int(CAPACITY as i32),
        (SOL_SOCKET, SO_PEERCRED) => {
            let c = socket.peer_cred();
            [c.pid as u32, c.uid, c.gid]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect()
        }
        _ => return Err(Errno::ENOPROTOOPT),
    };
    let n = room.min(bytes.len());
    uaccess::copy_to_user(value, &bytes[..n])?;
    uaccess::write(len_ptr, &(n as u32))?;
    Ok(0)
}
