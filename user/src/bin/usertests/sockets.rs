//! Sockets: the families refused, bad pointers, and descriptors that
//! never arrive.

use super::*;

/// Sockets: the Unix domain and the Internet's (over loopback) are here,
/// other families are EAFNOSUPPORT and an Internet pair EOPNOTSUPP;
/// every pointer a socket call takes is checked (EFAULT), for both
/// domains, and a message a bad receive buffer refused is still there.
pub(super) fn sockets_of_two_families_and_bad_pointers() -> Outcome {
    use abi::socket::*;
    let stream = SOCK_STREAM as usize;
    // AF_NETLINK and AF_PACKET: families this kernel does not have.
    for (family, what) in [(16, "AF_NETLINK"), (17, "AF_PACKET")] {
        expect_err(
            &format!("socket({what})"),
            raw(nr::SOCKET, &[family, stream, 0]),
            Errno::EAFNOSUPPORT,
        )?;
    }
    let mut sv = [0i32; 2];
    expect_err(
        "socketpair(AF_INET)",
        raw(
            nr::SOCKETPAIR,
            &[AF_INET as usize, stream, 0, sv.as_mut_ptr() as usize],
        ),
        Errno::EOPNOTSUPP,
    )?;
    let udp = raw(nr::SOCKET, &[AF_INET as usize, SOCK_DGRAM as usize, 0])
        .map_err(|e| format!("socket(AF_INET, SOCK_DGRAM): {}", e.message()))?;
    raw(
        nr::SOCKETPAIR,
        &[AF_UNIX as usize, stream, 0, sv.as_mut_ptr() as usize],
    )
    .map_err(|e| format!("socketpair: {}", e.message()))?;
    let (a, b) = (sv[0] as usize, sv[1] as usize);
    let mut len = 110u32;
    let len_ptr = &mut len as *mut u32 as usize;
    let mut checks: Vec<(String, Result<usize, Errno>)> = Vec::new();
    for (bad, what) in BAD {
        let mut check = |call: &str, r| checks.push((format!("{call}({what})"), r));
        check("socketpair", raw(nr::SOCKETPAIR, &[1, stream, 0, bad]));
        check("bind", raw(nr::BIND, &[a, bad, 110]));
        check("connect", raw(nr::CONNECT, &[a, bad, 110]));
        let nosignal = MSG_NOSIGNAL as usize;
        check("sendto", raw(nr::SENDTO, &[a, bad, 4, nosignal, 0, 0]));
        check("sendmsg", raw(nr::SENDMSG, &[a, bad, 0]));
        check("recvmsg", raw(nr::RECVMSG, &[b, bad, 0]));
        check("getsockname", raw(nr::GETSOCKNAME, &[a, bad, len_ptr]));
        check("getsockname len", raw(nr::GETSOCKNAME, &[a, len_ptr, bad]));
        let (level, name) = (SOL_SOCKET as usize, SO_TYPE as usize);
        check(
            "getsockopt",
            raw(nr::GETSOCKOPT, &[a, level, name, bad, len_ptr]),
        );
        check("setsockopt", raw(nr::SETSOCKOPT, &[a, level, name, bad, 4]));
        // The Internet's names take the same path in.
        check("bind inet", raw(nr::BIND, &[udp, bad, 16]));
        check("connect inet", raw(nr::CONNECT, &[udp, bad, 16]));
        // (A null address is no address: EDESTADDRREQ, as on Linux.)
        if bad != 0 {
            let to = raw(nr::SENDTO, &[udp, len_ptr, 4, nosignal, bad, 16]);
            check("sendto inet", to);
        }
        check(
            "getsockname inet",
            raw(nr::GETSOCKNAME, &[udp, bad, len_ptr]),
        );
        let (ip, ttl) = (IPPROTO_IP as usize, IP_TTL as usize);
        check(
            "setsockopt inet",
            raw(nr::SETSOCKOPT, &[udp, ip, ttl, bad, 4]),
        );
    }
    let _ = sys::close(udp as i32);
    // The message waits out a receive into a bad buffer.
    sys::write_all(sv[0], b"kept").map_err(|e| e.message())?;
    let iov = [0u64, 4];
    let msg = MsgHdr {
        msg_iov: iov.as_ptr() as u64,
        msg_iovlen: 1,
        ..MsgHdr::default()
    };
    checks.push((
        "recvmsg(iov NULL)".into(),
        raw(nr::RECVMSG, &[b, &msg as *const MsgHdr as usize, 0]),
    ));
    let mut got = [0u8; 4];
    let n = sys::read(sv[1], &mut got).map_err(|e| e.message())?;
    let _ = sys::close(sv[0]);
    let _ = sys::close(sv[1]);
    for (what, result) in checks {
        ensure!(
            result == Err(Errno::EFAULT),
            "{what} gave {result:?}, want EFAULT"
        );
    }
    ensure!(&got[..n] == b"kept", "the message was lost after EFAULT");
    Ok(())
}

/// Descriptors passed over a socket and never received close with the
/// socket that held them: a receiver that exits without reading them, and
/// a socket whose peer holds its descriptor. The system's count of
/// open files (`/proc/sys/fs/file-nr`) is back where it was.
pub(super) fn descriptors_in_flight_are_closed() -> Outcome {
    use abi::socket::*;
    let before = open_files()?;
    let mut sv = [0i32; 2];
    let pair = |sv: &mut [i32; 2]| {
        let args = [
            AF_UNIX as usize,
            SOCK_DGRAM as usize,
            0,
            sv.as_mut_ptr() as usize,
        ];
        raw(nr::SOCKETPAIR, &args).map_err(|e| format!("socketpair: {}", e.message()))
    };
    pair(&mut sv)?;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        sys::exit(0); // never receives
    }
    for passed in [r, w, w] {
        send_descriptor(sv[0], passed).map_err(|e| format!("sendmsg: {}", e.message()))?;
    }
    sys::waitpid(pid as i32).map_err(|e| e.message())?;
    for fd in [r, w, sv[0], sv[1]] {
        let _ = sys::close(fd);
    }
    // A socket's own descriptor sent to its peer: closing the peer frees
    // it. (One sent into its own queue would keep itself alive: Linux
    // collects such rings, this kernel does not; see fs/socket.rs.)
    pair(&mut sv)?;
    send_descriptor(sv[0], sv[0]).map_err(|e| e.message())?;
    let _ = sys::close(sv[0]);
    let _ = sys::close(sv[1]);
    let after = open_files()?;
    ensure!(
        after == before,
        "open files: {before} before, {after} after"
    );
    Ok(())
}
