//! jaula-proxy: the one way out of a cage in `--network allow` mode.
//!
//! An HTTP/1 proxy (hyper on tokio) that runs outside the cage for the lifetime of the
//! caged process. It answers `CONNECT host:port` with a byte tunnel (TLS passes through,
//! never decrypted) and absolute-URI requests (`GET http://host/path`) by forwarding them,
//! each only when [`DomainRules::decide`](jaula_policy::network::DomainRules::decide)
//! allows the host; anything else gets `403` naming the rule. Names are resolved here,
//! outside the cage, after the decision, and every address is checked by
//! [`address::check`](jaula_policy::network::address::check) just before it is connected
//! to: an allowed name that resolves to loopback, link-local (cloud metadata), private or
//! unspecified space is refused unless the owner named that address
//! ([`ProxyConfig::allow_addresses`]).
//!
//! Resources are bounded: at most [`ProxyConfig::max_connections`] client connections are
//! served at once (the rest wait in the kernel's accept queue), a client that does not
//! finish its request head within [`ProxyConfig::header_timeout`] is dropped, and an
//! upstream that does not accept within [`ProxyConfig::connect_timeout`] gets `504`.
//!
//! An allowed request whose upstream cannot be reached (no such name, connection
//! refused, unreachable, timed out) is no refusal: the client gets `502` or `504`
//! saying which, the log records `"decision":"failed"` with the reason, and the exit
//! summary lists it on a line of its own, apart from what the rules blocked.
//!
//! Clients that ignore the proxy variables are steered ([`steer`]): connections to the
//! cage's steering address on ports 443 and 80 are judged on the TLS server name or the
//! HTTP Host they carry, then take the same way out as a `CONNECT` would, undecrypted.
#![deny(missing_docs)]

mod admit;
#[cfg(target_os = "linux")]
mod dns;
pub mod http_host;
mod log;
mod serve;
pub mod sni;
pub mod sniff;
pub mod steer;
mod supervise;
mod upstream;

#[cfg(test)]
mod test_support;

#[cfg(target_os = "linux")]
pub use dns::serve_dns;
pub use log::{open_log, rfc3339_now, DecisionRecord, Summary};
pub use serve::{serve, Proxy};
pub use steer::SteeredListener;
pub use supervise::{
    serve_while, supervise, to_child, wait_forwarding, Served, SuperviseError, Supervised,
};

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use jaula_policy::network::{AddressRange, DomainRules};

/// What the proxy admits and how it behaves.
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    /// The domain allow- and deny-lists every request is decided by.
    pub rules: DomainRules,
    /// Names answered without DNS (tests; `--network-resolve HOST=ADDR:PORT`): the
    /// normalised host maps to one socket address whatever port was asked for.
    /// Resolved addresses are checked like DNS answers: an override gives no exemption.
    pub resolve: BTreeMap<String, SocketAddr>,
    /// The owner's `--allow-address` blocks: non-public addresses that names admitted by
    /// an exact `--allow-domain` entry may reach. Empty by default.
    pub allow_addresses: Vec<AddressRange>,
    /// Where every decision is appended as one JSON line.
    pub log: Option<PathBuf>,
    /// Client connections served at once; the rest wait in the kernel's accept queue.
    pub max_connections: usize,
    /// How long a client may take to send its request head before it is dropped.
    pub header_timeout: Duration,
    /// How long an upstream may take to accept before the client gets `504`.
    pub connect_timeout: Duration,
}

impl ProxyConfig {
    /// Enough for an agent's parallel fetches, few enough that a runaway loop in the cage
    /// cannot exhaust the host's descriptors.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

    /// The defaults around `rules`: no overrides, no log, 256 connections, 30 s for a
    /// request head, 15 s for an upstream connect.
    pub fn new(rules: DomainRules) -> ProxyConfig {
        ProxyConfig {
            rules,
            resolve: BTreeMap::new(),
            allow_addresses: Vec::new(),
            log: None,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(15),
        }
    }
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The decision log could not be opened for appending.
    #[error("cannot open the network log {}: {source}", path.display())]
    Log {
        /// The log file.
        path: PathBuf,
        /// What the kernel answered.
        source: std::io::Error,
    },
    /// The listener handed in could not be served (not a listening socket, runtime error).
    #[error("cannot serve on the cage's listener: {0}")]
    Listener(#[source] std::io::Error),
}
