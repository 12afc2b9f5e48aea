//! The Contract's allowed egress, in the only terms a Kubernetes `NetworkPolicy` has: IP
//! blocks and ports. A policy cannot name a domain (`api.openai.com`): the API has no
//! such peer, and the addresses behind a name change under it. A domain allow-list needs
//! an egress proxy or a CNI with its own FQDN policy type (Cilium's `toFQDNs`, Calico's
//! domain sets); such a value is refused here with that explanation rather than dropped.
//!
//! Syntax of one rule: `CIDR`, or `CIDR:PORT[-END][/PROTO]`; IPv6 in brackets,
//! `[2001:db8::/32]:443`. A bare address means that host (/32 or /128). PROTO is `tcp`
//! (the default), `udp` or `sctp`.

use std::net::IpAddr;
use std::str::FromStr;

use crate::error::KubeError;

/// The transport protocol a port is allowed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
    /// SCTP.
    Sctp,
}

impl Protocol {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        }
    }
}

/// A port or an inclusive range of ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    /// First port.
    pub first: u16,
    /// Last port, when a range.
    pub last: Option<u16>,
    /// The protocol.
    pub protocol: Protocol,
}

/// One allowed destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressRule {
    /// The canonical CIDR (network address, prefix length).
    pub cidr: String,
    /// The ports, or every port when `None`.
    pub ports: Option<Ports>,
}

fn parse_cidr(text: &str) -> Result<String, String> {
    let (addr, prefix) = match text.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (text, None),
    };
    let ip: IpAddr = addr.parse().map_err(|_| {
        if addr.chars().any(|c| c.is_ascii_alphabetic()) && !addr.contains(':') {
            "a NetworkPolicy cannot allow a domain name, only IP blocks: resolve it to CIDRs, \
             or put an egress proxy or an FQDN-aware CNI policy in front (see docs/kubernetes.md)"
                .to_string()
        } else {
            format!("{addr:?} is not an IP address")
        }
    })?;
    let width: u8 = if ip.is_ipv4() { 32 } else { 128 };
    let prefix: u8 = match prefix {
        None => width,
        Some(p) => p
            .parse()
            .ok()
            .filter(|n| *n <= width && p.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("prefix length {p:?} is not 0..={width}"))?,
    };
    let host_bits_clear = match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            prefix == 32 || bits & (u32::MAX >> prefix) == 0
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            prefix == 128 || bits & (u128::MAX >> prefix) == 0
        }
    };
    if !host_bits_clear {
        return Err(format!(
            "{ip}/{prefix} has host bits set; write the network address"
        ));
    }
    Ok(format!("{ip}/{prefix}"))
}

fn parse_port(text: &str) -> Result<u16, String> {
    text.parse::<u16>()
        .ok()
        .filter(|p| *p != 0 && text.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| format!("port {text:?} is not 1..=65535"))
}

fn parse_ports(text: &str) -> Result<Ports, String> {
    let (range, protocol) = match text.split_once('/') {
        None => (text, Protocol::Tcp),
        Some((r, p)) => (
            r,
            match p.to_ascii_lowercase().as_str() {
                "tcp" => Protocol::Tcp,
                "udp" => Protocol::Udp,
                "sctp" => Protocol::Sctp,
                _ => return Err(format!("protocol {p:?} is not tcp, udp or sctp")),
            },
        ),
    };
    let (first, last) = match range.split_once('-') {
        None => (parse_port(range)?, None),
        Some((a, b)) => {
            let (a, b) = (parse_port(a)?, parse_port(b)?);
            if b < a {
                return Err(format!("port range {a}-{b} ends before it starts"));
            }
            (a, Some(b))
        }
    };
    Ok(Ports {
        first,
        last,
        protocol,
    })
}

impl FromStr for EgressRule {
    type Err = KubeError;

    fn from_str(value: &str) -> Result<EgressRule, KubeError> {
        let err = |reason: String| KubeError::InvalidEgress {
            value: value.to_string(),
            reason,
        };
        let (cidr, ports) = if let Some(rest) = value.strip_prefix('[') {
            let (cidr, after) = rest
                .split_once(']')
                .ok_or_else(|| err("missing ']' after the IPv6 block".into()))?;
            match after {
                "" => (cidr, None),
                a => match a.strip_prefix(':') {
                    Some(p) => (cidr, Some(p)),
                    None => return Err(err("expected ':PORT' after ']'".into())),
                },
            }
        } else if value.matches(':').count() > 1 {
            return Err(err(
                "IPv6 blocks go in brackets: [2001:db8::/32] or [2001:db8::/32]:443".into(),
            ));
        } else {
            match value.split_once(':') {
                Some((c, p)) => (c, Some(p)),
                None => (value, None),
            }
        };
        Ok(EgressRule {
            cidr: parse_cidr(cidr).map_err(err)?,
            ports: ports.map(parse_ports).transpose().map_err(err)?,
        })
    }
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
