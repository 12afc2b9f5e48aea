//! A network mode and everything it means, in one table. The CLI parses a mode and the
//! backends enforce it, but what a mode asks of a cage (is the host's network closed, does
//! jaula's proxy carry the traffic) and how it is described to the owner are answered here
//! and nowhere else: a new mode is its variant, its name, and its row in
//! [`NetworkMode::needs`], after which each backend's exhaustive `match` on the mode (the
//! kernel work only it can do) is what the compiler points at.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::NetworkError;

/// What a caged process may reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkMode {
    /// The host's network, unchanged: the default, as launchers have always had it.
    #[default]
    Host,
    /// Only the cage's own loopback.
    None,
    /// Only jaula's proxy, which admits the allowed host names.
    Allow,
}

/// What one mode asks of every backend and of the owner's notices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeNeeds {
    /// The command loses the host's network: on Linux a network namespace of its own (or
    /// the no-namespace fallback), on macOS no IP destination but what the profile names.
    pub closed: bool,
    /// jaula's filtering proxy carries the command's traffic: the proxy variables are set,
    /// the domain lists and `--allow-address` mean something, and the proxy logs.
    pub proxy: bool,
    /// The line said before the command starts (`-v` says [`NetworkMode::summary`]);
    /// `{allowed}` stands for the number of allowed name patterns.
    pub start_notice: Option<&'static str>,
    /// The one-line summary `-v` gives; `{allowed}` and `{denied}` stand for the number of
    /// allow and deny patterns.
    pub summary: &'static str,
}

impl NetworkMode {
    /// The names `--network` and config `network.mode` accept, for help texts and errors.
    pub const NAMES: [&'static str; 3] = ["host", "none", "allow"];

    /// The name `--network` takes for this mode.
    pub fn name(self) -> &'static str {
        match self {
            NetworkMode::Host => "host",
            NetworkMode::None => "none",
            NetworkMode::Allow => "allow",
        }
    }

    /// What this mode asks of a cage: the one table every backend and notice reads.
    pub const fn needs(self) -> ModeNeeds {
        match self {
            NetworkMode::Host => ModeNeeds {
                closed: false,
                proxy: false,
                start_notice: None,
                summary: "host (the host's network, unrestricted)",
            },
            NetworkMode::None => ModeNeeds {
                closed: true,
                proxy: false,
                start_notice: Some(
                    "jaula: network none: the command has only the cage's own loopback; host \
                     names do not resolve and every outside connection fails (open it with \
                     --network host, or let named hosts through with --network allow \
                     --allow-domain NAME)",
                ),
                summary: "none (a network namespace with only loopback)",
            },
            NetworkMode::Allow => ModeNeeds {
                closed: true,
                proxy: true,
                start_notice: Some(
                    "jaula: network allow: only through jaula's proxy (HTTP_PROXY/HTTPS_PROXY), \
                     for {allowed} allowed name pattern(s); a client that ignores the proxy \
                     variables is steered to it on ports 443 and 80 of the names it looks up",
                ),
                summary: "allow (only jaula's proxy; {allowed} allow and {denied} deny patterns)",
            },
        }
    }

    /// Whether the host's network is closed to the command ([`ModeNeeds::closed`]).
    pub const fn closes_host_network(self) -> bool {
        self.needs().closed
    }

    /// Whether jaula's proxy carries the command's traffic ([`ModeNeeds::proxy`]).
    pub const fn through_proxy(self) -> bool {
        self.needs().proxy
    }

    /// Closed with nothing let through: only the cage's own loopback.
    pub const fn loopback_only(self) -> bool {
        let needs = self.needs();
        needs.closed && !needs.proxy
    }

    /// The line before the command starts, for a mode that changes what the command sees.
    pub fn start_notice(self, allowed: usize) -> Option<String> {
        self.needs()
            .start_notice
            .map(|text| text.replace("{allowed}", &allowed.to_string()))
    }

    /// The mode as `-v` names it, with the size of its lists where it has them.
    pub fn summary(self, allowed: usize, denied: usize) -> String {
        self.needs()
            .summary
            .replace("{allowed}", &allowed.to_string())
            .replace("{denied}", &denied.to_string())
    }
}

impl fmt::Display for NetworkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NetworkMode {
    type Err = NetworkError;
    fn from_str(s: &str) -> Result<NetworkMode, NetworkError> {
        match s {
            "host" => Ok(NetworkMode::Host),
            "none" => Ok(NetworkMode::None),
            "allow" => Ok(NetworkMode::Allow),
            other => Err(NetworkError::UnknownMode {
                value: other.to_owned(),
            }),
        }
    }
}

#[cfg(test)]
#[path = "mode_tests.rs"]
mod tests;
