//! The upstream connection of an allowed request ([`connect`]: every address checked
//! just before the connect that uses it), and why one reached no upstream: the name did
//! not resolve, or the server refused, was unreachable, or did not answer in time. None of these is a decision of
//! the rules, and each is told apart from one everywhere it shows: the client's status
//! (`502`, `504` for a timeout) and message, the log's `"decision":"failed"` with a
//! `reason`, and a summary line of its own at exit, so "blocked" and "upstream down"
//! never look the same.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use hyper::StatusCode;
use jaula_policy::network::address::{self, OwnerStatement, Refusal};
use tokio::net::TcpStream;

use crate::ProxyConfig;

/// Why no upstream connection was made.
pub(crate) enum Unreached {
    /// Every address the name resolved to was refused by [`address::check`]; the first
    /// refusal is reported.
    Refused(Refusal),
    /// Resolution failed, or every permitted address failed to connect.
    Failed(UpstreamFailure),
}

/// Resolve the host and connect to the first address that passes the address check and
/// accepts. Each address is checked immediately before the connect that uses it, and the
/// connect uses exactly that address: a second answer from a rebinding DNS server is
/// never asked for.
pub(crate) async fn connect(
    config: &ProxyConfig,
    owner: &OwnerStatement<'_>,
    port: u16,
) -> Result<(TcpStream, SocketAddr), Unreached> {
    let host = owner.host;
    let addresses: Vec<SocketAddr> = match config.resolve.get(host) {
        Some(addr) => vec![*addr],
        None => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| Unreached::Failed(UpstreamFailure::resolution(&e)))?
            .collect(),
    };
    let mut first_refusal = None;
    let mut last = None;
    for addr in addresses {
        if let Err(refusal) = address::check(addr.ip(), owner) {
            first_refusal.get_or_insert(refusal);
            continue;
        }
        match tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok((stream, addr));
            }
            Ok(Err(e)) => last = Some(UpstreamFailure::connect(addr, &e)),
            Err(_) => return Err(Unreached::Failed(UpstreamFailure::timed_out(addr))),
        }
    }
    // A refusal is the answer even when another address merely failed: it is the one the
    // owner can act on, and failing closed must not look like a network fault.
    Err(match (first_refusal, last) {
        (Some(refusal), _) => Unreached::Refused(refusal),
        (None, Some(last)) => Unreached::Failed(last),
        (None, None) => Unreached::Failed(UpstreamFailure::no_address()),
    })
}

/// What kind of failure; its [`name`](FailureKind::name) is the log's `reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// The name did not resolve (no such name, or the host's resolver failed).
    Resolution,
    /// The server answered the connect with a reset: nothing listens on that port.
    Refused,
    /// No route to the network or host.
    Unreachable,
    /// No answer within the connect timeout.
    TimedOut,
    /// Any other error of the connect.
    Other,
}

impl FailureKind {
    /// The log's `reason`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            FailureKind::Resolution => "name-not-resolved",
            FailureKind::Refused => "connection-refused",
            FailureKind::Unreachable => "unreachable",
            FailureKind::TimedOut => "timed-out",
            FailureKind::Other => "connect-failed",
        }
    }

    /// As a person reads it, in messages and the summary.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            FailureKind::Resolution => "name did not resolve",
            FailureKind::Refused => "connection refused",
            FailureKind::Unreachable => "unreachable",
            FailureKind::TimedOut => "timed out",
            FailureKind::Other => "connect failed",
        }
    }

    /// The kind of a failed connect's error.
    pub(crate) fn of_connect(error: &io::Error) -> FailureKind {
        match error.raw_os_error() {
            Some(libc_errno::ECONNREFUSED) => FailureKind::Refused,
            Some(
                libc_errno::ENETUNREACH
                | libc_errno::EHOSTUNREACH
                | libc_errno::ENETDOWN
                | libc_errno::EHOSTDOWN,
            ) => FailureKind::Unreachable,
            Some(libc_errno::ETIMEDOUT) => FailureKind::TimedOut,
            _ => match error.kind() {
                io::ErrorKind::ConnectionRefused => FailureKind::Refused,
                io::ErrorKind::TimedOut => FailureKind::TimedOut,
                _ => FailureKind::Other,
            },
        }
    }
}

/// The errno values the kinds are told by, from rustix (no libc dependency here).
mod libc_errno {
    use rustix::io::Errno;
    pub(super) const ECONNREFUSED: i32 = Errno::CONNREFUSED.raw_os_error();
    pub(super) const ENETUNREACH: i32 = Errno::NETUNREACH.raw_os_error();
    pub(super) const EHOSTUNREACH: i32 = Errno::HOSTUNREACH.raw_os_error();
    pub(super) const ENETDOWN: i32 = Errno::NETDOWN.raw_os_error();
    pub(super) const EHOSTDOWN: i32 = Errno::HOSTDOWN.raw_os_error();
    pub(super) const ETIMEDOUT: i32 = Errno::TIMEDOUT.raw_os_error();
}

/// One allowed request's failure to reach its upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UpstreamFailure {
    pub(crate) kind: FailureKind,
    /// The address the last connect was made to; none when the name did not resolve.
    pub(crate) address: Option<SocketAddr>,
    /// The error as the system gave it.
    pub(crate) detail: String,
}

impl UpstreamFailure {
    /// A lookup that failed.
    pub(crate) fn resolution(error: &io::Error) -> UpstreamFailure {
        UpstreamFailure {
            kind: FailureKind::Resolution,
            address: None,
            detail: error.to_string(),
        }
    }

    /// A connect to `address` that failed with `error`.
    pub(crate) fn connect(address: SocketAddr, error: &io::Error) -> UpstreamFailure {
        UpstreamFailure {
            kind: FailureKind::of_connect(error),
            address: Some(address),
            detail: error.to_string(),
        }
    }

    /// A connect to `address` that did not finish in time.
    pub(crate) fn timed_out(address: SocketAddr) -> UpstreamFailure {
        UpstreamFailure {
            kind: FailureKind::TimedOut,
            address: Some(address),
            detail: "no answer within the connect timeout".to_owned(),
        }
    }

    /// Resolution gave no address at all.
    pub(crate) fn no_address() -> UpstreamFailure {
        UpstreamFailure {
            kind: FailureKind::Resolution,
            address: None,
            detail: "no address".to_owned(),
        }
    }

    /// The gateway status the client receives: `504` for a timeout, `502` otherwise.
    pub(crate) fn status(&self) -> StatusCode {
        match self.kind {
            FailureKind::TimedOut => StatusCode::GATEWAY_TIMEOUT,
            _ => StatusCode::BAD_GATEWAY,
        }
    }

    /// The summary's entry for a request to `host:port`: `host:port -> address (kind)`.
    pub(crate) fn summary_key(&self, host: &str, port: u16) -> String {
        match self.address {
            Some(address) => format!("{host}:{port} -> {address} ({})", self.kind.describe()),
            None => format!("{host}:{port} ({})", self.kind.describe()),
        }
    }
}

impl fmt::Display for UpstreamFailure {
    /// `127.0.0.1:9: connection refused (Connection refused (os error 111))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(address) = self.address {
            write!(f, "{address}: ")?;
        }
        write!(f, "{} ({})", self.kind.describe(), self.detail)
    }
}

#[cfg(test)]
#[path = "upstream_tests.rs"]
mod tests;
