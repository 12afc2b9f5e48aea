//! The stub resolver inside the cage's network namespace.
//!
//! The cage's `/etc/resolv.conf` is the host's, and names a server the empty namespace
//! cannot reach: a lookup then ends in a timeout or ENETUNREACH, and nobody learns which
//! name was wanted. So, before the cage is confined, each IPv4 nameserver address is put
//! on the namespace's `lo` (`bind_stub`) and UDP port 53 is bound there; a process that
//! lives outside the confinement answers on those sockets: under `none` the socket gate's
//! supervisor (`serve_refusing`: NXDOMAIN to everything, each name recorded), under
//! `allow` the proxy (which answers allowed names with the steering address).
//!
//! NXDOMAIN rather than REFUSED: resolvers read REFUSED as a fault of the server and
//! report a temporary failure (`EAI_AGAIN`), which clients retry for seconds (Codex: about
//! 5 s a try) where an uncaged lookup without a network fails at once. Under `none` no
//! name will ever resolve, so the final answer is the true one.
//!
//! Binding port 53 and adding an address need CAP_NET_BIND_SERVICE and CAP_NET_ADMIN in
//! the namespace's owning user namespace: the process that made the namespace has them
//! (as root, or inside the user namespace it made) until the hardening step drops them.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::Mutex;

use jaula_policy::network::dns::{self, QType, DNS_PORT};

/// Where a stub answers, read from `resolv.conf`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct StubAddresses {
    /// Served: every IPv4 nameserver, and `::1`.
    pub(crate) served: Vec<IpAddr>,
    /// Not served: IPv6 nameservers other than `::1` (LIMIT: putting an IPv6 address on
    /// `lo` is not done; a lookup sent there fails with ENETUNREACH, which the socket
    /// gate reports as an address).
    pub(crate) skipped: Vec<IpAddr>,
}

/// The nameservers of a `resolv.conf` text. With none listed, glibc and musl ask the
/// local host (`127.0.0.1`), so that is served then.
pub(crate) fn stub_addresses(resolv_conf: &str) -> StubAddresses {
    let mut out = StubAddresses::default();
    for line in resolv_conf.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("nameserver") {
            continue;
        }
        // A scoped IPv6 address (`fe80::1%eth0`) is not parsed: skipped as unknown.
        let Some(Ok(addr)) = words.next().map(str::parse::<IpAddr>) else {
            continue;
        };
        let usable = match addr {
            IpAddr::V4(v4) => !(v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast()),
            IpAddr::V6(v6) => v6 == Ipv6Addr::LOCALHOST,
        };
        let list = if usable {
            &mut out.served
        } else {
            &mut out.skipped
        };
        if !list.contains(&addr) {
            list.push(addr);
        }
    }
    if out.served.is_empty() && out.skipped.is_empty() {
        out.served.push(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    out
}

/// Put each served address on `lo` (all of 127.0.0.0/8 and `::1` are there already) and
/// bind UDP port 53 on it. Call inside the new namespace, before the hardening step.
#[cfg(target_os = "linux")]
pub(crate) fn bind_stub(addresses: &StubAddresses) -> io::Result<Vec<UdpSocket>> {
    let mut sockets = Vec::new();
    let mut alias = 0;
    for addr in &addresses.served {
        if let IpAddr::V4(v4) = addr {
            if !v4.is_loopback() {
                alias += 1;
                add_loopback_alias(alias, *v4)?;
            }
        }
        match UdpSocket::bind(SocketAddr::new(*addr, DNS_PORT)) {
            Ok(socket) => sockets.push(socket),
            // IPv6 switched off in the namespace (net.ipv6.conf.default.disable_ipv6):
            // no client can ask `::1` either, so there is nothing to serve.
            Err(e) if addr.is_ipv6() && e.raw_os_error() == Some(libc::EADDRNOTAVAIL) => {}
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot bind {addr} port {DNS_PORT}: {e}"),
                ))
            }
        }
    }
    Ok(sockets)
}

/// `lo:N` with `addr`/32: SIOCSIFADDR makes the alias (with a classful mask), and
/// SIOCSIFNETMASK narrows it to the one address, so no route for the rest of, say,
/// 10.0.0.0/8 points at `lo` (a connect there would hang instead of failing at once).
#[cfg(target_os = "linux")]
fn add_loopback_alias(n: u32, addr: Ipv4Addr) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    let fd = socket.as_raw_fd();
    let name = format!("lo:{n}\0");
    let set = |request: libc::c_ulong, value: Ipv4Addr| -> io::Result<()> {
        // SAFETY: ifreq is plain old data; all-zero is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in req.ifr_name.iter_mut().zip(name.as_bytes()) {
            *dst = *src as libc::c_char;
        }
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(value.octets()),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: ifru_addr is a sockaddr, which sockaddr_in is laid out to overlay (same
        // size, family first); the write stays inside the union.
        unsafe {
            std::ptr::write(
                std::ptr::addr_of_mut!(req.ifr_ifru.ifru_addr).cast::<libc::sockaddr_in>(),
                sin,
            );
        }
        // SAFETY: `fd` is an open socket owned above; `req` is a valid ifreq the kernel
        // reads the name and the address from.
        if unsafe { libc::ioctl(fd, request, &req) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    let context = |what: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("cannot {what} {addr} on lo:{n}: {e}"))
    };
    set(libc::SIOCSIFADDR, addr).map_err(|e| context("add", e))?;
    set(libc::SIOCSIFNETMASK, Ipv4Addr::BROADCAST).map_err(|e| context("narrow", e))
}

/// More distinct lookups than a summary line can usefully name: later ones are counted,
/// not kept, so a cage cannot grow the supervisor's memory without bound.
const KEPT_NAMES: usize = 64;

/// Names looked up in the cage, each with the record types asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lookups {
    /// The first distinct names (at most 64), in presentation format, with every record
    /// type asked for each.
    pub kept: BTreeMap<String, BTreeSet<QType>>,
    /// Lookups of further names, counted but not kept.
    pub dropped: u64,
}

impl Lookups {
    /// Record one lookup of `name` (presentation format) for `qtype`.
    pub fn note(&mut self, name: &str, qtype: QType) {
        if let Some(types) = self.kept.get_mut(name) {
            types.insert(qtype);
        } else if self.kept.len() < KEPT_NAMES {
            self.kept.insert(name.to_owned(), BTreeSet::from([qtype]));
        } else {
            self.dropped += 1;
        }
    }
}

static REFUSED_LOOKUPS: Mutex<Lookups> = Mutex::new(Lookups {
    kept: BTreeMap::new(),
    dropped: 0,
});

/// What the `none` stub refused so far in this process.
pub fn refused_lookups() -> Lookups {
    REFUSED_LOOKUPS
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default()
}

/// The `none` stub's answer to one datagram: NXDOMAIN to every query (recorded), FORMERR
/// or NOTIMP to a malformed one, nothing to what is not a query at all.
fn refuse_one(msg: &[u8]) -> Option<Vec<u8>> {
    match dns::parse_query(msg) {
        Ok(query) => {
            let name = query.question.name.to_string();
            if let Ok(mut lookups) = REFUSED_LOOKUPS.lock() {
                lookups.note(&name, query.question.qtype);
            }
            super::none_log::report(&super::none_log::NoneRefusal::Lookup {
                name: &name,
                qtype: query.question.qtype,
            });
            Some(dns::nx_domain(&query))
        }
        Err(e) => dns::error_for(msg, e),
    }
}

/// Serve `socket` under `none` until the process ends: a thread of the socket gate's
/// supervisor, outside the cage's seccomp filter and holding the only copy of the socket.
pub(crate) fn serve_refusing(socket: UdpSocket) {
    // 512 bytes is the classic UDP limit; EDNS clients may send more, and a longer query
    // is cut at the buffer, which still holds its question.
    let mut buf = [0u8; 4096];
    loop {
        let (n, peer) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Nothing else is expected of a bound UDP socket; stop rather than spin.
            Err(_) => return,
        };
        if let Some(answer) = refuse_one(&buf[..n]) {
            let _ = socket.send_to(&answer, peer);
        }
    }
}

#[cfg(test)]
#[path = "dns_stub_tests.rs"]
mod tests;
