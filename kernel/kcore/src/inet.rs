//! How socket(2) refuses the Internet families while this kernel has no
//! network: in Linux's order, so that a program probing for a protocol
//! gets the answer Linux gives. Linux's `inet_create` finds the protocol
//! among those that serve the type (TCP for streams; UDP and ping for
//! datagrams; any protocol for raw sockets, which need CAP_NET_RAW): a
//! type nothing serves is ESOCKTNOSUPPORT, a protocol the type does not
//! have EPROTONOSUPPORT, a raw socket without the capability EPERM. A
//! request Linux would grant is where this kernel says EAFNOSUPPORT, as a
//! Linux built without the family does.

use abi::Errno;
use abi::socket::{AF_INET6, SOCK_DGRAM, SOCK_STREAM};

/// SOCK_RAW.
const SOCK_RAW: u32 = 3;

/// The error for `socket(family, base_type, protocol)`, `family` one of
/// AF_INET and AF_INET6 and `base_type` below SOCK_MAX (the caller checked
/// both); `may_raw`: the caller has CAP_NET_RAW.
pub fn refusal(family: u16, base_type: u32, protocol: u32, may_raw: bool) -> Errno {
    const TCP: u32 = 6;
    const UDP: u32 = 17;
    let ping = if family == AF_INET6 { 58 } else { 1 };
    let served: &[u32] = match base_type {
        SOCK_STREAM => &[TCP],
        SOCK_DGRAM => &[UDP, ping],
        SOCK_RAW => &[],
        _ => return Errno::ESOCKTNOSUPPORT,
    };
    if base_type != SOCK_RAW && protocol != 0 && !served.contains(&protocol) {
        return Errno::EPROTONOSUPPORT;
    }
    if base_type == SOCK_RAW && !may_raw {
        return Errno::EPERM;
    }
    Errno::EAFNOSUPPORT
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::socket::{AF_INET, SOCK_SEQPACKET};

    #[test]
    fn internet_sockets_are_refused_in_linuxs_order() {
        assert_eq!(refusal(AF_INET, SOCK_STREAM, 0, false), Errno::EAFNOSUPPORT);
        assert_eq!(refusal(AF_INET, SOCK_STREAM, 6, false), Errno::EAFNOSUPPORT);
        assert_eq!(
            refusal(AF_INET, SOCK_STREAM, 17, false),
            Errno::EPROTONOSUPPORT
        );
        assert_eq!(refusal(AF_INET, SOCK_DGRAM, 1, false), Errno::EAFNOSUPPORT);
        assert_eq!(
            refusal(AF_INET6, SOCK_DGRAM, 58, false),
            Errno::EAFNOSUPPORT
        );
        assert_eq!(
            refusal(AF_INET6, SOCK_DGRAM, 1, false),
            Errno::EPROTONOSUPPORT
        );
        assert_eq!(
            refusal(AF_INET, SOCK_DGRAM, 99, false),
            Errno::EPROTONOSUPPORT
        );
        assert_eq!(
            refusal(AF_INET, SOCK_SEQPACKET, 0, false),
            Errno::ESOCKTNOSUPPORT
        );
        assert_eq!(refusal(AF_INET, SOCK_RAW, 99, false), Errno::EPERM);
        assert_eq!(refusal(AF_INET, SOCK_RAW, 99, true), Errno::EAFNOSUPPORT);
    }
}
