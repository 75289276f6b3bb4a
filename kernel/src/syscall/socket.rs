//! Socket calls: socket, socketpair, bind, listen, connect, accept4,
//! sendto, recvfrom, sendmsg, recvmsg, shutdown, getsockname, getpeername,
//! setsockopt, getsockopt.
//!
//! Each turns the raw integers into what they stand for (a `Type` and its
//! flags, an `Address` read from a `sockaddr_un`, the descriptors and
//! credentials of a control message) and calls `fs::socket`. Only the
//! Unix domain is here: any other family is EAFNOSUPPORT. Bytes cross into
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
use crate::fs::socket::{Address, CAPACITY, Outgoing, Socket, Type};
use crate::mm::uaccess;
use crate::proc::current;

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

/// socket(2)'s type argument: the type and its SOCK_NONBLOCK, SOCK_CLOEXEC
/// flags, checked in Linux's order (flags EINVAL, family EAFNOSUPPORT,
/// type EINVAL, protocol EPROTONOSUPPORT, type ESOCKTNOSUPPORT). The
/// Internet families are refused after Linux's own checks of them
/// (`kcore::inet::refusal`).
fn parse(domain: u32, ty: u32, protocol: u32) -> Result<(Type, u32), Errno> {
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
        let may_raw = crate::proc::cred().capable(abi::types::CAP_NET_RAW);
        return Err(kcore::inet::refusal(domain as u16, base, protocol, may_raw));
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
    Ok((ty, flags))
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
    let (ty, flags) = parse(domain, ty, protocol)?;
    install(Socket::new(ty), flags).map(|fd| fd as usize)
}

pub fn socketpair(domain: u32, ty: u32, protocol: u32, sv: u64) -> SysResult {
    let (ty, flags) = parse(domain, ty, protocol)?;
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

/// A `sockaddr_un` of `len` bytes: EINVAL for a length outside
/// 3..=110 (2 only where `unnamed_ok`: bind's request for a made-up name)
/// or another family.
fn read_address(addr: u64, len: u32, unnamed_ok: bool) -> Result<Address, Errno> {
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

/// The bytes of `name` as a `sockaddr_un` says them: a path with its NUL,
/// an abstract name after its NUL, an unnamed socket as the family alone
/// (or nothing: a received message from an unnamed sender).
fn encode(name: &Address, unnamed_family: bool) -> Vec<u8> {
    let mut out = AF_UNIX.to_le_bytes().to_vec();
    match name {
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

pub fn bind(fd: i32, addr: u64, len: u32) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    let name = read_address(addr, len, true)?;
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
    let target = find(&read_address(addr, len, false)?)?;
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
    let fd = install(server, flags)?;
    if addr != 0
        && let Err(e) = write_address(&encode(&peer, true), addr, len_ptr)
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
/// header that does not fit, or an unknown SOL_SOCKET type, is EINVAL; a
/// descriptor not open is EBADF.
fn read_control(addr: u64, len: u64) -> Result<(Vec<Arc<OpenFile>>, Option<Ucred>), Errno> {
    let mut files = Vec::new();
    let mut cred = None;
    if len == 0 {
        return Ok((files, cred));
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
                cred = Some(Ucred {
                    pid: pid as i32,
                    uid,
                    gid,
                });
            }
            (SOL_SOCKET, _) => return Err(Errno::EINVAL),
            _ => {}
        }
        at += cmsg_align(cmsg_len);
    }
    Ok((files, cred))
}

/// sendto and sendmsg: the address (`addr`, `len`; none if `addr` is
/// null) read and the socket's state checked before the bytes are
/// gathered from `iov`, as Linux orders it; the socket named looked up
/// last.
fn send(
    fd: i32,
    iov: &[(u64, u64)],
    control: Option<(u64, u64)>,
    flags: u32,
    (addr, len): (u64, u32),
) -> SysResult {
    let (file, socket) = socket_of(fd)?;
    let name = if addr != 0 {
        Some(read_address(addr, len, false)?)
    } else {
        None
    };
    let signal = flags & MSG_NOSIGNAL == 0;
    socket.may_send(name.is_some(), signal)?;
    let limit = match socket.ty {
        // A stream's bytes go in pieces: only the kernel buffer bounds them.
        Type::Stream => 16 * CAPACITY,
        // A message must fit in a receive queue.
        _ => CAPACITY,
    };
    let bytes = gather(iov, limit)?;
    let (files, cred) = match control {
        Some((addr, len)) => read_control(addr, len)?,
        None => (Vec::new(), None),
    };
    let to = name.as_ref().map(find).transpose()?;
    let out = Outgoing {
        bytes: &bytes,
        files,
        cred,
        to,
    };
    socket.send(out, nonblocking(&file, flags), signal)
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
        from: encode(&got.from, false),
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
    write_address(&encode(&socket.name(), true), addr, len_ptr).map(|()| 0)
}

pub fn getpeername(fd: i32, addr: u64, len_ptr: u64) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    write_address(&encode(&socket.peer_name()?, true), addr, len_ptr).map(|()| 0)
}

/// setsockopt(2): SO_PASSCRED turns credentials on receipt on or off;
/// SO_SNDBUF, SO_RCVBUF and SO_REUSEADDR are taken and change nothing (a
/// receive queue holds `CAPACITY` bytes); anything else is ENOPROTOOPT,
/// and levels other than SOL_SOCKET have no options here (EOPNOTSUPP).
pub fn setsockopt(fd: i32, level: i32, name: i32, value: u64, len: u32) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    if level != SOL_SOCKET {
        return Err(Errno::EOPNOTSUPP);
    }
    if (len as usize) < size_of::<i32>() {
        return Err(Errno::EINVAL);
    }
    let on = uaccess::read::<i32>(value)? != 0;
    match name {
        SO_PASSCRED => socket.set_passcred(on),
        SO_SNDBUF | SO_RCVBUF | SO_REUSEADDR => {}
        _ => return Err(Errno::ENOPROTOOPT),
    }
    Ok(0)
}

/// getsockopt(2): the value cut to the caller's length, which gets the
/// length written.
pub fn getsockopt(fd: i32, level: i32, name: i32, value: u64, len_ptr: u64) -> SysResult {
    let (_, socket) = socket_of(fd)?;
    if level != SOL_SOCKET {
        return Err(Errno::EOPNOTSUPP);
    }
    let room = usize::try_from(uaccess::read::<i32>(len_ptr)?).map_err(|_| Errno::EINVAL)?;
    let int = |v: i32| v.to_le_bytes().to_vec();
    let bytes = match name {
        SO_TYPE => int(socket.ty.number() as i32),
        SO_ERROR => int(socket.take_error().map_or(0, |e| e.0)),
        SO_PASSCRED => int(socket.passcred() as i32),
        SO_ACCEPTCONN => int(socket.listening() as i32),
        SO_DOMAIN => int(AF_UNIX as i32),
        SO_PROTOCOL | SO_REUSEADDR => int(0),
        SO_SNDBUF | SO_RCVBUF => int(CAPACITY as i32),
        SO_PEERCRED => {
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
