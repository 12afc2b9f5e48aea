//! One connection's way out, whichever way it reached the proxy: the name decision, the
//! address check on each resolved address, the upstream connect, and the log line. A
//! request through the proxy variables ([`crate::serve`]) and a steered connection
//! ([`crate::steer`]) both come through [`open`], so they cannot be judged differently.

use hyper::StatusCode;
use jaula_policy::network::normalize_host;
use tokio::net::TcpStream;

use crate::log::{Verdict, Via};

use crate::upstream::{connect, Unreached, UpstreamFailure};
use crate::Proxy;
use jaula_policy::network::address::{OwnerStatement, Refusal};

/// What the client asked for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ask<'a> {
    /// `CONNECT`, or the HTTP method.
    pub method: &'a str,
    /// As the client wrote it; judged and shown normalised.
    pub host: &'a str,
    pub port: u16,
    pub via: Via,
}

/// Why no upstream connection was handed back; already logged.
#[derive(Clone, Debug)]
pub(crate) enum Closed {
    /// The rules refused the name.
    Name { rule: String },
    /// The name was allowed, every address it resolved to was refused.
    Address {
        allowed_by: String,
        refusal: Refusal,
    },
    /// The name was allowed; resolution or the connect failed (no policy decision).
    Unreached {
        allowed_by: String,
        failure: UpstreamFailure,
    },
}

impl Closed {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Closed::Name { .. } | Closed::Address { .. } => StatusCode::FORBIDDEN,
            Closed::Unreached { failure, .. } => failure.status(),
        }
    }

    /// The rule for the `x-jaula-rule` header; none when nothing was refused.
    pub(crate) fn rule(&self) -> Option<String> {
        match self {
            Closed::Name { rule } => Some(rule.clone()),
            Closed::Address { refusal, .. } => Some(refusal.rule()),
            Closed::Unreached { .. } => None,
        }
    }

    /// The `x-jaula-upstream` header of an upstream failure (the log's `reason`): a
    /// client, or a person reading `curl -v`, tells it from a refusal without the body,
    /// which most clients never show for a failed `CONNECT`.
    pub(crate) fn upstream_reason(&self) -> Option<&'static str> {
        match self {
            Closed::Unreached { failure, .. } => Some(failure.kind.name()),
            Closed::Name { .. } | Closed::Address { .. } => None,
        }
    }

    /// The one-line explanation the client receives.
    pub(crate) fn message(&self, method: &str, shown: &str, port: u16) -> String {
        match self {
            Closed::Name { rule } => {
                format!("jaula: network: {method} to {shown}:{port} blocked by rule: {rule}\n")
            }
            Closed::Address {
                allowed_by,
                refusal,
            } => {
                let remedy = if refusal.class.can_be_allowed() {
                    "only an exact --allow-domain entry naming the address, or one with \
                     --allow-address, opens it"
                } else {
                    "this kind of address is never opened"
                };
                format!(
                    "jaula: network: {method} to {shown}:{port} allowed by rule: {allowed_by}, \
                     but refused: {} ({remedy})\n",
                    refusal.rule()
                )
            }
            Closed::Unreached {
                allowed_by,
                failure,
            } => format!(
                "jaula: network: {method} to {shown}:{port} allowed by rule: {allowed_by}, \
                 but the upstream could not be reached (not a refusal): {failure}\n"
            ),
        }
    }
}

/// The host as shown in the log, the summary and messages: normalised when it is a valid
/// name, as written otherwise.
pub(crate) fn shown(host: &str) -> String {
    normalize_host(host).unwrap_or_else(|| host.to_owned())
}

/// Decide `ask`, and when the name is allowed, connect to its first permitted address.
/// Every outcome is logged once, here.
pub(crate) async fn open(proxy: &Proxy, ask: Ask<'_>) -> Result<TcpStream, Closed> {
    let config = proxy.config();
    let recorder = proxy.recorder();
    let decision = config.rules.decide(ask.host);
    let shown = shown(ask.host);
    let record = |verdict| recorder.record(ask.method, &shown, ask.port, ask.via, verdict);
    if !decision.allowed {
        record(Verdict::NameDenied {
            rule: &decision.rule,
        });
        return Err(Closed::Name {
            rule: decision.rule,
        });
    }
    let owner = OwnerStatement {
        host: &shown,
        exact_entry: config.rules.allowed_by_exact_entry(&shown),
        allowed: &config.allow_addresses,
    };
    match connect(config, &owner, ask.port).await {
        Ok((stream, address)) => {
            record(Verdict::Allowed {
                rule: &decision.rule,
                address: Some(address.ip()),
            });
            Ok(stream)
        }
        Err(Unreached::Refused(refusal)) => {
            record(Verdict::AddressRefused { refusal });
            Err(Closed::Address {
                allowed_by: decision.rule,
                refusal,
            })
        }
        Err(Unreached::Failed(failure)) => {
            // The name was allowed; the upstream failed, which is no policy decision.
            record(Verdict::UpstreamFailed {
                rule: &decision.rule,
                failure: &failure,
            });
            Err(Closed::Unreached {
                allowed_by: decision.rule,
                failure,
            })
        }
    }
}
