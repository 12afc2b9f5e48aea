//! The network of one run, settled once: the flags a command line gave (parsed, not yet
//! judged) over the config's `[network]`, into the mode, its domain rules and addresses,
//! with every check that spans more than one value. The CLI parses the flags and hands
//! them here; the backends read the result.

use std::net::SocketAddr;

use serde::Deserialize;

use super::{
    AddressRange, AddressRangeError, DomainPattern, DomainRules, NetworkError, NetworkMode,
    NetworkSpec, Preset, ResolveOverride,
};
use crate::Platform;

/// `[network]`: defaults for `jaula run --network` (flags win; flag lists add to these).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// `host`, `none` or `allow`, like `--network`.
    pub mode: Option<NetworkMode>,
    /// Host names or `*.suffix` patterns, like `--allow-domain`.
    #[serde(default)]
    pub allow_domain: Vec<DomainPattern>,
    /// Patterns refused even when allowed, like `--deny-domain`.
    #[serde(default)]
    pub deny_domain: Vec<DomainPattern>,
    /// Presets by name, like `--allow-preset`.
    #[serde(default)]
    pub allow_preset: Vec<Preset>,
    /// Non-public addresses or blocks (`ADDR[/PREFIX]`) an exactly allowed name may
    /// resolve to, like `--allow-address`.
    #[serde(default)]
    pub allow_address: Vec<AddressRange>,
    /// `HOST=ADDR:PORT` answers the `allow` proxy uses instead of DNS (each still checked
    /// like a DNS answer): a pinned name, or a test's local upstream.
    #[serde(default)]
    pub resolve: Vec<ResolveOverride>,
    /// `true`: `--network none` natively uses the no-namespace fallback (Landlock TCP +
    /// seccomp socket families, no loopback) even where a namespace could be made.
    pub none_without_namespace: Option<bool>,
}

/// The network a command line asked for, each value as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkFlags {
    /// `--network`, when given (else the config's mode, else `host`).
    pub mode: Option<NetworkMode>,
    /// `--allow-domain`.
    pub allow_domains: Vec<String>,
    /// `--deny-domain`.
    pub deny_domains: Vec<String>,
    /// `--allow-preset`.
    pub presets: Vec<String>,
    /// `--allow-address`, unparsed.
    pub allow_addresses: Vec<String>,
    /// `--log` was given.
    pub log: bool,
    /// The socket gate is on (no `--no-socket-gate`): its supervisor sees refusals.
    pub socket_gate: bool,
}

/// One run's network, settled: what the backends and the proxy are handed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettledNetwork {
    /// The mode in force.
    pub mode: NetworkMode,
    /// The proxy's domain rules (empty unless the mode has a proxy).
    pub rules: DomainRules,
    /// Non-public addresses an exactly allowed name may resolve to: the config's, then
    /// the flags'.
    pub allow_addresses: Vec<AddressRange>,
    /// The config's `network.resolve`: names the proxy answers without DNS.
    pub resolve: Vec<(String, SocketAddr)>,
    /// The allow list admits `localhost`, so it goes through the proxy, not `NO_PROXY`.
    pub proxy_localhost: bool,
    /// Config `network.none_without_namespace`: close the network without a namespace.
    pub fallback: bool,
}

/// Flags that each parse but do not make one network together.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    /// `--allow-address` in a mode with no proxy to open it.
    #[error(
        "--allow-address given with network mode {mode}; only --network allow has a proxy \
         to open it"
    )]
    AllowAddressWithoutAllow {
        /// The mode asked for.
        mode: NetworkMode,
    },
    /// `--log` without the socket gate, whose supervisor is the one that sees refusals.
    #[error(
        "--log with --network {mode} needs the socket gate, whose supervisor sees the \
         refusals; drop --no-socket-gate"
    )]
    LogNeedsGate {
        /// The mode asked for.
        mode: NetworkMode,
    },
    /// macOS: `--log` where nothing would see the refusals.
    #[error("--log with --network {mode} is Linux only: on macOS nothing sees the refusals")]
    LogOffLinux {
        /// The mode asked for.
        mode: NetworkMode,
    },
    /// An `--allow-address` that is not an address or block.
    #[error("--allow-address: {0}")]
    AllowAddress(#[from] AddressRangeError),
    /// The lists do not make rules (a bad pattern, an unknown preset, lists without
    /// `allow`).
    #[error("network: {0}")]
    Lists(#[from] NetworkError),
}

impl NetworkFlags {
    /// Settle the flags over the config's `[network]` for a cage on `platform`. The
    /// config's lists only count when the mode has a proxy (a config can hold an allow
    /// list and a single run still ask for `none`); lists given as flags with another mode
    /// are refused rather than ignored.
    pub fn settle(
        &self,
        config: &NetworkSection,
        platform: Platform,
    ) -> Result<SettledNetwork, SettleError> {
        let mode = self.mode.or(config.mode).unwrap_or_default();
        let proxy = mode.through_proxy();
        let mut spec = NetworkSpec {
            mode,
            allow_domains: self.allow_domains.clone(),
            deny_domains: self.deny_domains.clone(),
            presets: self.presets.clone(),
        };
        if proxy {
            spec.allow_domains
                .extend(config.allow_domain.iter().map(ToString::to_string));
            spec.deny_domains
                .extend(config.deny_domain.iter().map(ToString::to_string));
            spec.presets
                .extend(config.allow_preset.iter().map(|p| p.name.to_owned()));
        } else if !self.allow_addresses.is_empty() {
            return Err(SettleError::AllowAddressWithoutAllow { mode });
        }
        // Refused writes are seen by the socket gate's supervisor, and so are the closed
        // network's refusals: without the gate only the proxy has anything to log.
        if self.log && !proxy && !self.socket_gate {
            return Err(SettleError::LogNeedsGate { mode });
        }
        let mut allow_addresses = config.allow_address.clone();
        for text in &self.allow_addresses {
            allow_addresses.push(text.parse()?);
        }
        let rules = spec.resolve()?;
        // Linux logs what the socket gate and the namespace's DNS stub refuse; Seatbelt
        // refuses in the kernel and tells nobody (on macOS only the proxy logs).
        if platform == Platform::MacOs && self.log && !proxy {
            return Err(SettleError::LogOffLinux { mode });
        }
        Ok(SettledNetwork {
            mode,
            proxy_localhost: proxy && rules.decide("localhost").allowed,
            rules,
            allow_addresses,
            resolve: config
                .resolve
                .iter()
                .map(|entry| (entry.host.clone(), entry.addr))
                .collect(),
            fallback: config.none_without_namespace == Some(true),
        })
    }
}

impl NetworkSection {
    /// The config's lists, resolved together as `allow` would use them: a config that is
    /// wrong is wrong for the next run too, whatever mode this one asks for.
    pub fn check_lists(&self) -> Result<(), NetworkError> {
        NetworkSpec {
            mode: NetworkMode::Allow,
            allow_domains: self.allow_domain.iter().map(ToString::to_string).collect(),
            deny_domains: self.deny_domain.iter().map(ToString::to_string).collect(),
            presets: self
                .allow_preset
                .iter()
                .map(|p| p.name.to_owned())
                .collect(),
        }
        .resolve()
        .map(drop)
    }
}

#[cfg(test)]
#[path = "settle_tests.rs"]
mod tests;
