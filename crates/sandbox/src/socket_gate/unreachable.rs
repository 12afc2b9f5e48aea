//! The inet destinations the cage tried and the network could not reach, for the exit
//! summary under `--network none`.
//!
//! The supervisor performs every `connect` of the cage itself, so it sees each inet
//! destination with the kernel's answer. In the cage's empty network namespace a connect
//! to anything but its own loopback fails with ENETUNREACH: those are the addresses the
//! closed network refused. Nothing is judged or changed here; the set is only read back
//! by the supervising process after the command exits. It lives in a process-wide set
//! because the supervisor and the hook that prints the summary are the same process,
//! and blocking connects finish on worker threads.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::Mutex;

/// More distinct destinations than a summary line can usefully name: later ones are
/// counted, not kept, so a cage cannot grow the supervisor's memory without bound.
const KEPT: usize = 64;

static REFUSED: Mutex<Refused> = Mutex::new(Refused {
    kept: BTreeSet::new(),
    dropped: 0,
});

/// Distinct destinations refused by the closed network, and how many more were not kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refused {
    /// The first distinct destinations (at most 64).
    pub kept: BTreeSet<SocketAddr>,
    /// Refusals of further destinations, counted but not kept.
    pub dropped: u64,
}

/// Record `addr` (raw sockaddr bytes as the cage passed them) when `result` is the
/// closed network's refusal.
pub(super) fn note(addr: &[u8], result: Result<(), i32>) {
    if result != Err(libc::ENETUNREACH) {
        return;
    }
    let Some(dest) = inet_destination(addr) else {
        return;
    };
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
    REFUSED.lock().map(|r| r.clone()).unwrap_or_default()
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
