//! Network policy: the pure half. A mode (`host`, `none`, `allow`), the domain patterns
//! of an allow-list and a deny-list, built-in presets, the decision the proxy makes for
//! one host name, the classes of addresses the proxy refuses unless the owner stated them
//! ([`address`]), and the DNS messages the cage's stub resolver reads and writes ([`dns`]).
//!
//! The half that acts on the kernel (a network namespace with only loopback, the
//! fallback Landlock TCP rules and socket-family filter, handing the in-namespace
//! listener to the proxy) is `jaula_sandbox::network`; the proxy itself is the
//! `jaula-proxy` crate. Both read their rules from here, so neither needs the other.
//!
//! Matching is by name, never by address: the proxy resolves the name itself, outside the
//! cage, after the decision, so a caged process cannot steer it with its own DNS answers.

pub mod address;
pub mod dns;
mod mode;
mod pattern;
mod presets;
mod settle;

pub use address::{AddressClass, AddressRange, AddressRangeError};
pub use mode::{ModeNeeds, NetworkMode};
pub use pattern::{normalize_host, DomainPattern, PatternError};
pub use presets::{preset, presets, Preset};
pub use settle::{NetworkFlags, NetworkSection, SettleError, SettledNetwork};

use std::net::{Ipv4Addr, SocketAddr};

/// Under `--network allow`, where the cage's DNS answers send a client that ignores the
/// proxy variables: an address of the cage's own loopback (all of 127.0.0.0/8 is local on
/// `lo`, so no interface set-up is needed) that no ordinary service uses. Listeners bound
/// here on the web ports are handed to the proxy, which judges each connection on its TLS
/// SNI or HTTP Host, exactly like a request made through the proxy variables.
pub const STEERING_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 2, 1);

use std::str::FromStr;

use serde::Serialize;

/// The proxy variables for a caged process whose proxy listens on `port` of the loopback,
/// upper and lower case (curl reads only `http_proxy` in lower case; Go and Python read
/// both). `NO_PROXY` keeps the loopback direct, and `localhost` too unless the allow list
/// admits it, in which case it goes to the proxy, which reaches the host's loopback.
pub fn proxy_env_at(port: u16, proxy_localhost: bool) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let no_proxy = if proxy_localhost {
        "127.0.0.1,::1".to_owned()
    } else {
        "localhost,127.0.0.1,::1".to_owned()
    };
    let mut env = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &url),
        ("HTTPS_PROXY", &url),
        ("ALL_PROXY", &url),
        ("NO_PROXY", &no_proxy),
    ] {
        env.push((name.to_owned(), value.clone()));
        env.push((name.to_ascii_lowercase(), value.clone()));
    }
    env
}

/// One `HOST=ADDR:PORT` answer the `allow` proxy uses instead of DNS (each still checked
/// like a DNS answer): a pinned name, or a test's local upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveOverride {
    /// The name, normalised as the proxy compares it (lower case, no trailing dot).
    pub host: String,
    /// Where the proxy connects for it.
    pub addr: SocketAddr,
}

/// Why a `HOST=ADDR:PORT` entry was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{value:?}: want HOST=ADDR:PORT")]
pub struct ResolveOverrideError {
    /// The entry as written.
    pub value: String,
}

impl FromStr for ResolveOverride {
    type Err = ResolveOverrideError;
    fn from_str(value: &str) -> Result<ResolveOverride, ResolveOverrideError> {
        let bad = || ResolveOverrideError {
            value: value.to_owned(),
        };
        let (host, addr) = value.split_once('=').ok_or_else(bad)?;
        let host = normalize_host(host).ok_or_else(bad)?;
        let addr = addr.parse().map_err(|_| bad())?;
        Ok(ResolveOverride { host, addr })
    }
}

impl<'de> serde::Deserialize<'de> for ResolveOverride {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ResolveOverride, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Bad network configuration. Nothing starts when one of these is returned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkError {
    /// A mode that is not host, none or allow.
    #[error("network mode {value:?} is not one of host, none, allow")]
    UnknownMode {
        /// The value as given.
        value: String,
    },
    /// A domain entry that is not a valid pattern.
    #[error("{list} entry {value:?}: {reason}")]
    Pattern {
        /// Which list held it (`--allow-domain`, `--deny-domain`, a config key).
        list: &'static str,
        /// The entry as given.
        value: String,
        /// Why it was refused.
        reason: PatternError,
    },
    /// A preset name jaula does not know.
    #[error("unknown preset {name:?} (known: {known})")]
    UnknownPreset {
        /// The name as given.
        name: String,
        /// The known presets, listed for the message.
        known: String,
    },
    /// Domain lists with a mode other than allow, where they would silently do nothing.
    #[error(
        "{what} given with network mode {mode}; domain lists only mean something with \
         --network allow"
    )]
    ListsWithoutAllow {
        /// Which lists were given.
        what: &'static str,
        /// The mode in force.
        mode: NetworkMode,
    },
}

/// Where a pattern came from, named in every decision so a user knows what to change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RuleSource {
    /// `--allow-domain` or config `network.allow_domain`.
    AllowDomain,
    /// `--deny-domain` or config `network.deny_domain`.
    DenyDomain,
    /// A built-in preset.
    Preset {
        /// The preset's name.
        name: &'static str,
    },
}

/// One pattern with its origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The host-name pattern.
    pub pattern: DomainPattern,
    /// Where it came from.
    pub source: RuleSource,
}

impl Rule {
    /// The rule as the proxy names it: `allow-domain api.example.com`,
    /// `deny-domain *.example.com`, `preset github: *.github.com`.
    pub fn name(&self) -> String {
        match &self.source {
            RuleSource::AllowDomain => format!("allow-domain {}", self.pattern),
            RuleSource::DenyDomain => format!("deny-domain {}", self.pattern),
            RuleSource::Preset { name } => format!("preset {name}: {}", self.pattern),
        }
    }
}

/// The rule name of a host no allow entry matches.
pub const NOT_ALLOWED_RULE: &str = "not in the allow list";
/// The rule name of a request whose host is not a valid name or address.
pub const INVALID_HOST_RULE: &str = "invalid host name";

/// The proxy's answer for one host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostDecision {
    /// Whether the proxy lets the host through.
    pub allowed: bool,
    /// The rule that decided: the matching deny or allow entry, or [`NOT_ALLOWED_RULE`].
    pub rule: String,
}

/// The declared network settings, unvalidated (flags and config merged by the caller).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkSpec {
    /// host, none or allow.
    pub mode: NetworkMode,
    /// Allowed host-name patterns, as written.
    pub allow_domains: Vec<String>,
    /// Refused host-name patterns, as written; they win over every allow.
    pub deny_domains: Vec<String>,
    /// Preset names, as written.
    pub presets: Vec<String>,
}

/// Validated lists: deny wins over allow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainRules {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
}

impl NetworkSpec {
    /// Validate every pattern and preset name. Lists given with a mode other than `allow`
    /// are refused rather than ignored: a user who wrote them expected them to act.
    pub fn resolve(&self) -> Result<DomainRules, NetworkError> {
        if self.mode != NetworkMode::Allow {
            let what = if !self.allow_domains.is_empty() {
                Some("--allow-domain")
            } else if !self.deny_domains.is_empty() {
                Some("--deny-domain")
            } else if !self.presets.is_empty() {
                Some("--allow-preset")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(NetworkError::ListsWithoutAllow {
                    what,
                    mode: self.mode,
                });
            }
        }
        let mut rules = DomainRules::default();
        for value in &self.allow_domains {
            rules.allow.push(Rule {
                pattern: parse_in("allow-domain", value)?,
                source: RuleSource::AllowDomain,
            });
        }
        for value in &self.deny_domains {
            rules.deny.push(Rule {
                pattern: parse_in("deny-domain", value)?,
                source: RuleSource::DenyDomain,
            });
        }
        for name in &self.presets {
            let found = preset(name).ok_or_else(|| NetworkError::UnknownPreset {
                name: name.clone(),
                known: presets()
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            for domain in found.domains {
                rules.allow.push(Rule {
                    pattern: parse_in("preset", domain)?,
                    source: RuleSource::Preset { name: found.name },
                });
            }
        }
        Ok(rules)
    }
}

fn parse_in(list: &'static str, value: &str) -> Result<DomainPattern, NetworkError> {
    DomainPattern::parse(value).map_err(|reason| NetworkError::Pattern {
        list,
        value: value.to_owned(),
        reason,
    })
}

impl DomainRules {
    /// The allow rules, explicit entries and presets' alike.
    pub fn allow(&self) -> &[Rule] {
        &self.allow
    }

    /// The deny rules.
    pub fn deny(&self) -> &[Rule] {
        &self.deny
    }

    /// Decide for the host of a request (a name or an IP literal, any case, an optional
    /// trailing dot). The deny list is consulted first and wins; then the allow list;
    /// anything else is refused.
    pub fn decide(&self, host: &str) -> HostDecision {
        let Some(host) = normalize_host(host) else {
            return HostDecision {
                allowed: false,
                rule: INVALID_HOST_RULE.to_owned(),
            };
        };
        if let Some(rule) = self.deny.iter().find(|r| r.pattern.matches(&host)) {
            return HostDecision {
                allowed: false,
                rule: rule.name(),
            };
        }
        match self.allow.iter().find(|r| r.pattern.matches(&host)) {
            Some(rule) => HostDecision {
                allowed: true,
                rule: rule.name(),
            },
            None => HostDecision {
                allowed: false,
                rule: NOT_ALLOWED_RULE.to_owned(),
            },
        }
    }

    /// Whether the host is allowed and an `--allow-domain` entry names it exactly (not a
    /// `*.suffix` pattern, not a preset). The proxy lets only such names reach the
    /// non-public addresses the owner stated: a pattern or a preset covers names whose
    /// answers the owner does not control.
    pub fn allowed_by_exact_entry(&self, host: &str) -> bool {
        let Some(host) = normalize_host(host) else {
            return false;
        };
        self.decide(&host).allowed
            && self.allow.iter().any(|r| {
                r.source == RuleSource::AllowDomain
                    && matches!(&r.pattern, DomainPattern::Exact(name) if *name == host)
            })
    }
}

#[cfg(test)]
#[path = "network_tests.rs"]
mod tests;
