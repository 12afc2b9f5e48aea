//! Where each refusal of the closed network goes as it happens (`--log` under `none`).
//!
//! The DNS stub and the socket gate's connect workers run on threads of the supervisor;
//! each refusal they see is handed to one sink the launching jaula installs before the
//! command starts (it writes the JSON line; this crate does not know the log's format).
//! No sink, no cost beyond one atomic load.

use std::net::SocketAddr;
use std::sync::OnceLock;

use jaula_policy::network::dns::QType;

/// One refusal of the closed network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoneRefusal<'a> {
    /// A name looked up; the stub answered NXDOMAIN.
    Lookup {
        /// The name, in presentation format.
        name: &'a str,
        /// The record type asked for.
        qtype: QType,
    },
    /// A connect the closed network refused: ENETUNREACH, or ECONNREFUSED at an address
    /// of the DNS stub (see `call_gate::unreachable`).
    Connect(SocketAddr),
}

/// What receives every [`NoneRefusal`].
pub type Sink = Box<dyn Fn(&NoneRefusal<'_>) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Install the sink for this process; `false` when one was installed already (the first
/// stays: a launch installs one, once).
pub fn set_sink(sink: Sink) -> bool {
    SINK.set(sink).is_ok()
}

pub(crate) fn report(refusal: &NoneRefusal<'_>) {
    if let Some(sink) = SINK.get() {
        sink(refusal);
    }
}
