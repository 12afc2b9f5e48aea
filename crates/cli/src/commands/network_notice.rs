//! One stderr line each, so a closed network never looks like a broken one: at exit a
//! reminder when the command failed in a way the closed network may explain (what a mode
//! lets through, said at start, is the mode's own: `NetworkMode::start_notice`).
//!
//! The exit notes claim only what jaula saw: under `none` the names the cage looked up
//! (the namespace's DNS stub answered each), the inet addresses the cage's connects were
//! refused at (the socket gate performs every connect; the host resolver's own address
//! included), and that the command failed with the network closed; under
//! `allow` that it failed and not one request reached the proxy, which is what a client
//! that ignores the proxy variables (Node's built-in `fetch`, many Go binaries) looks like.

use std::process::ExitStatus;

use jaula_sandbox::call_gate::Refused;
use jaula_sandbox::network::dns_stub::Lookups;

/// The reminder at exit under `none`, when the command did not succeed.
pub fn after_none(status: ExitStatus) -> Option<String> {
    (!status.success()).then(|| {
        format!(
            "jaula: network none: the command failed ({}) with the network closed; if it \
             needed the network, that is why (--network host or --network allow opens it)",
            describe(status)
        )
    })
}

/// What the closed network refused under `none`: the names the cage looked up (its DNS
/// stub answered NXDOMAIN to each) and the addresses its connects failed at (as the
/// socket gate saw them: ENETUNREACH, or the host resolver's address, which the stub
/// holds in the cage); printed whether or not the command succeeded, since a client may
/// fall back and still hide what it tried.
pub fn refused_under_none(lookups: &Lookups, refused: &Refused) -> Option<String> {
    let mut parts = Vec::new();
    if !lookups.kept.is_empty() {
        let names: Vec<String> = lookups
            .kept
            .iter()
            .map(|(name, types)| {
                let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
                format!("{name} ({})", types.join(", "))
            })
            .collect();
        let more = match lookups.dropped {
            0 => String::new(),
            n => format!(" (and {n} more lookup(s) not listed)"),
        };
        parts.push(format!("DNS lookups of {}{more}", names.join(", ")));
    }
    if !refused.kept.is_empty() {
        // Port 53 here is a resolver the stub does not serve (an IPv6 one, or one the
        // client chose itself): the name travels in the datagram, which the gate does
        // not read.
        let addresses: Vec<String> = refused
            .kept
            .iter()
            .map(|a| match a.port() {
                53 => format!("{a} (DNS server: a name lookup)"),
                _ if refused.stub_addresses.contains(&a.ip()) => {
                    format!("{a} (the host's DNS server)")
                }
                _ => a.to_string(),
            })
            .collect();
        let more = match refused.dropped {
            0 => String::new(),
            n => format!(" (and {n} more attempt(s) not listed)"),
        };
        parts.push(format!("connections to: {}{more}", addresses.join(", ")));
    }
    (!parts.is_empty()).then(|| format!("jaula: network none refused {}", parts.join("; ")))
}

/// The reminder at exit under `allow`, when the command did not succeed and sent the
/// proxy nothing at all (a refusal by the proxy has its own summary line).
pub fn after_allow(status: ExitStatus, proxy_saw_requests: bool) -> Option<String> {
    // 126 and 127 are the shell's "cannot execute" and "not found": the command never ran
    // far enough to use the network, and the hint would send the user the wrong way.
    let never_ran = matches!(status.code(), Some(126 | 127));
    (!status.success() && !proxy_saw_requests && !never_ran).then(|| {
        format!(
            "jaula: network allow: the command failed ({}) and sent no request through the \
             proxy: a client that ignores HTTP_PROXY/HTTPS_PROXY and connects anywhere but \
             ports 443 and 80 of a name it looked up (raw addresses, other ports, QUIC) \
             reaches nothing here; point it at the proxy, or use --network host",
            describe(status)
        )
    })
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "ended".to_owned(),
    }
}

#[cfg(test)]
#[path = "network_notice_tests.rs"]
mod tests;
