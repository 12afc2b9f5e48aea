//! Network modes: the kernel half. A network namespace with only loopback, the fallback
//! Landlock TCP rules and socket-family filter, the DNS stub inside the namespace, and the
//! hand-off of the in-namespace listeners to the proxy (`netns`, `dns_stub` and
//! `none_log`, Linux only).
//!
//! The pure half (modes, domain rules, presets, address classes, DNS messages) is
//! [`jaula_policy::network`]; the proxy itself is the `jaula-proxy` crate.

#[cfg(target_os = "linux")]
pub mod dns_stub;
#[cfg(target_os = "linux")]
pub mod netns;
#[cfg(target_os = "linux")]
pub mod none_log;
