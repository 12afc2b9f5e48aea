//! The inet destinations the cage tried and the network could not reach, for the exit
//! summary under `--network none`.
//!
//! The supervisor performs every `connect` of the cage itself, so it sees each inet
//! destination with the kernel's answer. In the cage's empty network namespace a connect
//! to anything but its own loopback fails with ENETUNREACH: those are the addresses the
//! closed network refused. One more place answers differently: the host's nameserver
//! addresses, which the DNS stub put on the namespace's `lo` (`dns_stub::bind_stub`). A
//! connect there reaches `lo`, where nothing listens but the stub's UDP port 53, and
//! fails with ECONNREFUSED; that too is the closed network's refusal (the address is the
//! host's resolver, not the cage's own), and is named and logged like the others. On a
//! loopback nameserver (`127.0.0.53`, `::1`) only port 53 counts: every other port there
//! is the cage's own loopback, where a refused connect is the cage's business.
//!
//! Nothing is judged or changed here; the set is only read back by the supervising
//! process after the command exits. It lives in a process-wide set because the
//! supervisor and the hook that prints the summary are the same process, and blocking
//! connects finish on worker threads.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::{Mutex, OnceLock};

use jaula_policy::network::dns::DNS_PORT;

/// More distinct destinations than a summary line can usefully name: later ones are
/// counted, not kept, so a cage cannot grow the supervisor's memory without bound.
const KEPT: usize = 64;

static REFUSED: Mutex<Refused> = Mutex::new(Refused {
    kept: BTreeSet::new(),
    dropped: 0,
    stub_addresses: Vec::new(),
});

/// Distinct destinations refused by the closed network, and how many more were not kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refused {
    /// The first distinct destinations (at most 64).
    pub kept: BTreeSet<SocketAddr>,
    /// Refusals of further destinations, counted but not kept.
    pub dropped: u64,
    /// Where the DNS stub answered (the host's nameserver addresses), so a summary can
    /// say which refused destinations were the host's resolver.
    pub stub_addresses: Vec<IpAddr>,
}

/// The addresses the `none` DNS stub answers on in the cage's namespace, set once by the
/// supervisor before the command runs; none without a stub.
static STUB_ADDRESSES: OnceLock<Vec<IpAddr>> = OnceLock::new();

/// Tell [`note`] where the DNS stub answers (the local addresses of its sockets). The
/// first call stays: a supervisor serves one stub.
pub(crate) fn set_stub_addresses(addresses: Vec<IpAddr>) {
    let _ = STUB_ADDRESSES.set(addresses);
}

/// The gate's own answer to a connect to `dest` from a socket of type `sock_type`, where
/// the DNS stub answers on `stub`; `None`: make the connect. Only the stub's addresses
/// get one, and only what a plain empty namespace would have answered:
/// - a datagram socket to port 53 is the lookup the stub is there for: made;
/// - port 53 otherwise (DNS over TCP, which the stub does not serve): ECONNREFUSED;
/// - any other port of a stub address that is not loopback on the host (the host's
///   resolver at, say, 10.0.0.53): ENETUNREACH, as for every outside address. Answered
///   here rather than by the kernel because `lo` holds the address: a non-blocking
///   connect would see `EINPROGRESS` and its refusal only later, where the gate cannot
///   see it, so the attempt would go unnamed;
/// - other ports of a loopback stub address (`127.0.0.53`): the cage's own loopback.
pub(crate) fn stub_answer(
    dest: SocketAddr,
    sock_type: libc::c_int,
    stub: &[IpAddr],
) -> Option<i32> {
    if !stub.contains(&dest.ip()) {
        return None;
    }
    match (dest.port() == DNS_PORT, sock_type == libc::SOCK_DGRAM) {
        (true, true) => None,
        (true, false) => Some(libc::ECONNREFUSED),
        (false, _) if dest.ip().is_loopback() => None,
        (false, _) => Some(libc::ENETUNREACH),
    }
}

/// [`stub_answer`] for the raw sockaddr the cage passed, with this supervisor's stub.
pub(super) fn gate_answer(
    addr: &[u8],
    sock_type: impl FnOnce() -> Option<libc::c_int>,
) -> Option<i32> {
    let stub = STUB_ADDRESSES.get()?;
    let dest = inet_destination(addr)?;
    if !stub.contains(&dest.ip()) {
        return None;
    }
    stub_answer(dest, sock_type()?, stub)
}

/// Whether a connect to `dest` that ended with `result` is the closed network's refusal,
/// where the DNS stub answers on `stub`: ENETUNREACH anywhere; ECONNREFUSED at a stub
/// address that is not loopback on the host (any port), or at port 53 of any stub
/// address (DNS over TCP, which the stub does not serve).
pub(crate) fn refused_by_closed_network(
    dest: SocketAddr,
    result: Result<(), i32>,
    stub: &[IpAddr],
) -> bool {
    match result {
        Err(libc::ENETUNREACH) => true,
        Err(libc::ECONNREFUSED) => {
            stub.contains(&dest.ip()) && (!dest.ip().is_loopback() || dest.port() == DNS_PORT)
        }
        _ => false,
    }
}

/// Record `addr` (raw sockaddr bytes as the cage passed them) when `result` is the
/// closed network's refusal.
pub(super) fn note(addr: &[u8], result: Result<(), i32>) {
    if result.is_ok() {
        return;
    }
    let Some(dest) = inet_destination(addr) else {
        return;
    };
    let stub = STUB_ADDRESSES.get().map(Vec::as_slice).unwrap_or_default();
    if !refused_by_closed_network(dest, result, stub) {
        return;
    }
    crate::network::none_log::report(&crate::network::none_log::NoneRefusal::Connect(dest));
    if let Ok(mut refused) = REFUSED.lock() {
        if refused.kept.len() < KEPT || refused.kept.contains(&dest) {
            refused.kept.insert(dest);
        } else {
            refused.dropped += 1;
        }
    }
}

/// What the closed network refused so far in this process.
pub fn unreachable_destinations() -> Refused {
    let mut refused = REFUSED.lock().map(|r| r.clone()).unwrap_or_default();
    refused.stub_addresses = STUB_ADDRESSES.get().cloned().unwrap_or_default();
    refused
}

/// An AF_INET or AF_INET6 sockaddr as bytes; `None` for any other family or a short one.
pub(crate) fn inet_destination(addr: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]));
    let port = u16::from_be_bytes([*addr.get(2)?, *addr.get(3)?]);
    match family {
        libc::AF_INET => {
            let ip: [u8; 4] = addr.get(4..8)?.try_into().ok()?;
            Some(SocketAddrV4::new(Ipv4Addr::from(ip), port).into())
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = addr.get(8..24)?.try_into().ok()?;
            Some(SocketAddrV6::new(Ipv6Addr::from(ip), port, 0, 0).into())
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "unreachable_tests.rs"]
mod tests;
