//! Which resolved addresses the proxy may connect to.
//!
//! An allowed *name* says nothing about where it points: a hosts entry, a DNS answer the
//! name's owner controls, or a rebinding attack can map it to the host's own loopback
//! services, the cloud metadata endpoint (169.254.169.254) or the owner's private network.
//! So after resolution, on each address actually connected to, the proxy refuses the
//! ranges below unless the owner stated that address explicitly ([`check`]).
//!
//! Pure: no sockets, no resolution. The proxy calls [`check`] with the exact
//! `SocketAddr` it is about to pass to `connect(2)`, so nothing is resolved twice.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// Why an address is not an ordinary public destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// 127.0.0.0/8, ::1: the host's own services.
    Loopback,
    /// 169.254.0.0/16 (cloud instance metadata lives at 169.254.169.254), fe80::/10.
    LinkLocal,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7 (unique local), fec0::/10 (deprecated
    /// site-local, still routed by some networks as private), 64:ff9b:1::/48 (local-use
    /// NAT64, RFC 8215: whatever a site's translator maps it to).
    Private,
    /// 100.64.0.0/10: carrier-grade NAT and cloud-internal services (RFC 6598).
    SharedAddressSpace,
    /// 0.0.0.0/8 and ::. Linux connects 0.0.0.0 to the host itself.
    Unspecified,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 240.0.0.0/4 (reserved; no public host has one).
    Reserved,
}

impl AddressClass {
    /// Classes an owner statement can open: real hosts a rule may name. The others
    /// (`0.0.0.0`, multicast, broadcast, reserved) are no host a TCP client means to reach,
    /// and `0.0.0.0` is the host's loopback in disguise.
    pub fn can_be_allowed(self) -> bool {
        matches!(
            self,
            AddressClass::Loopback
                | AddressClass::LinkLocal
                | AddressClass::Private
                | AddressClass::SharedAddressSpace
        )
    }

    /// The class as the log and the refusal name it.
    pub fn name(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Private => "private",
            AddressClass::SharedAddressSpace => "shared address space (100.64.0.0/10)",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The class of a non-public address; `None` for an ordinary public one. IPv6 forms that
/// carry an IPv4 address which the kernel or a translator would reach (IPv4-mapped,
/// IPv4-compatible, NAT64 well-known prefix, 6to4) are judged by that IPv4 address.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, _, _] = ip.octets();
    if ip.is_broadcast() {
        Some(AddressClass::Broadcast)
    } else if a == 0 {
        Some(AddressClass::Unspecified)
    } else if a == 127 {
        Some(AddressClass::Loopback)
    } else if a == 169 && b == 254 {
        Some(AddressClass::LinkLocal)
    } else if a == 10 || (a == 172 && (16..32).contains(&b)) || (a == 192 && b == 168) {
        Some(AddressClass::Private)
    } else if a == 100 && (64..128).contains(&b) {
        Some(AddressClass::SharedAddressSpace)
    } else if (224..240).contains(&a) {
        Some(AddressClass::Multicast)
    } else if a >= 240 {
        Some(AddressClass::Reserved)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if ip.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if ip.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let s = ip.segments();
    if s[0] & 0xff00 == 0xff00 {
        Some(AddressClass::Multicast)
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some(AddressClass::LinkLocal)
    } else if s[0] & 0xfe00 == 0xfc00
        || s[0] & 0xffc0 == 0xfec0
        || (s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 0x0001)
    {
        Some(AddressClass::Private)
    } else {
        None
    }
}

/// The IPv4 address an IPv6 address stands for, where traffic to it ends up at that
/// IPv4 address: `::ffff:a.b.c.d` (mapped; the kernel connects to the IPv4 address),
/// `::a.b.c.d` (compatible, deprecated), `64:ff9b::a.b.c.d` (NAT64 well-known prefix,
/// RFC 6052) and `2002:AABB:CCDD::/48` (6to4, RFC 3056).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        Some(v4)
    } else if s[..6] == [0, 0, 0, 0, 0, 0] || s[..6] == [0x0064, 0xff9b, 0, 0, 0, 0] {
        Some(low)
    } else if s[0] == 0x2002 {
        Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ))
    } else {
        None
    }
}

/// An owner's `--allow-address`: one address or a CIDR block (`10.1.0.0/16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddressRange {
    network: IpAddr,
    prefix: u8,
}

/// Why an `--allow-address` value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddressRangeError {
    /// Neither an address nor `ADDRESS/PREFIX`.
    #[error("{value:?} is not an IP address or ADDRESS/PREFIX block")]
    Syntax {
        /// The value as given.
        value: String,
    },
    /// A prefix longer than the address family has bits.
    #[error("{value:?}: prefix {prefix} is longer than the address ({max} bits)")]
    Prefix {
        /// The value as given.
        value: String,
        /// The prefix length written.
        prefix: u8,
        /// The family's bit count (32 or 128).
        max: u8,
    },
    /// An address with bits set below the prefix: likely a typo for another block.
    #[error("{value:?}: host bits are set below the /{prefix}; write the block's first address")]
    HostBits {
        /// The value as given.
        value: String,
        /// The prefix length written.
        prefix: u8,
    },
    /// A block so wide it would undo the address check.
    #[error("{value:?}: a block shorter than /{min} would open most of the address space")]
    TooWide {
        /// The value as given.
        value: String,
        /// The shortest prefix accepted for its family.
        min: u8,
    },
}

/// Shortest prefixes accepted: `/8` for IPv4 (10.0.0.0/8 is the widest private range),
/// `/7` for IPv6 (fc00::/7). A wider block is almost surely a typo for "everything".
const MIN_PREFIX_V4: u8 = 8;
const MIN_PREFIX_V6: u8 = 7;

impl FromStr for AddressRange {
    type Err = AddressRangeError;

    fn from_str(value: &str) -> Result<AddressRange, AddressRangeError> {
        let syntax = || AddressRangeError::Syntax {
            value: value.to_owned(),
        };
        let (addr, prefix) = match value.trim().split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix.parse::<u8>().map_err(|_| syntax())?)),
            None => (value.trim(), None),
        };
        let network = IpAddr::from_str(addr).map_err(|_| syntax())?.to_canonical();
        let (max, min) = match network {
            IpAddr::V4(_) => (32, MIN_PREFIX_V4),
            IpAddr::V6(_) => (128, MIN_PREFIX_V6),
        };
        let prefix = prefix.unwrap_or(max);
        if prefix > max {
            return Err(AddressRangeError::Prefix {
                value: value.to_owned(),
                prefix,
                max,
            });
        }
        if prefix < min {
            return Err(AddressRangeError::TooWide {
                value: value.to_owned(),
                min,
            });
        }
        if masked(network, prefix) != bits(network) {
            return Err(AddressRangeError::HostBits {
                value: value.to_owned(),
                prefix,
            });
        }
        Ok(AddressRange { network, prefix })
    }
}

/// A config file's address is checked as it is read, so a bad one is refused at load with
/// its key and line.
impl<'de> serde::Deserialize<'de> for AddressRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AddressRange, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for AddressRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = if self.network.is_ipv4() { 32 } else { 128 };
        if self.prefix == max {
            write!(f, "{}", self.network)
        } else {
            write!(f, "{}/{}", self.network, self.prefix)
        }
    }
}

impl AddressRange {
    /// Whether `ip` lies in the block; an IPv4-mapped IPv6 address counts as its IPv4
    /// address, since that is where a connect to it goes.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.contains_canonical(ip.to_canonical())
    }

    fn contains_canonical(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.network.is_ipv4()
            && masked(ip, self.prefix) == masked(self.network, self.prefix)
    }
}

fn bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn masked(ip: IpAddr, prefix: u8) -> u128 {
    let width: u32 = if ip.is_ipv4() { 32 } else { 128 };
    let keep = u32::from(prefix).min(width);
    if keep == 0 {
        return 0;
    }
    let drop = width - keep;
    (bits(ip) >> drop) << drop
}

/// What the owner stated about the name being connected to.
#[derive(Clone, Copy, Debug)]
pub struct OwnerStatement<'a> {
    /// The request's host, normalised (a name or an IPv4 literal).
    pub host: &'a str,
    /// The name was admitted by an exact `--allow-domain` entry: not a `*.suffix`
    /// pattern and not a preset. Only such a name can reach a non-public address.
    pub exact_entry: bool,
    /// The owner's `--allow-address` blocks.
    pub allowed: &'a [AddressRange],
}

/// A refused connection: the address and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The address a name resolved to.
    pub address: IpAddr,
    /// The non-public class it falls in.
    pub class: AddressClass,
}

impl Refusal {
    /// The rule name in the log, the `x-jaula-rule` header and the 403.
    pub fn rule(&self) -> String {
        format!("address {} is {}", self.address, self.class)
    }
}

/// May the proxy connect to `ip` for this request? A public address: yes. A non-public
/// one only when its class can be opened at all and the name was admitted by an exact
/// allow entry that also names the address: the entry is that IP literal itself, or it
/// is `localhost` and the address is loopback, or an `--allow-address` block holds it.
pub fn check(ip: IpAddr, owner: &OwnerStatement<'_>) -> Result<(), Refusal> {
    let Some(class) = classify(ip) else {
        return Ok(());
    };
    let refusal = Refusal { address: ip, class };
    if !class.can_be_allowed() || !owner.exact_entry {
        return Err(refusal);
    }
    let canonical = ip.to_canonical();
    let names_literal = owner
        .host
        .parse::<IpAddr>()
        .is_ok_and(|literal| literal.to_canonical() == canonical);
    let names_localhost = owner.host == "localhost" && class == AddressClass::Loopback;
    let listed = owner.allowed.iter().any(|r| r.contains(ip));
    if names_literal || names_localhost || listed {
        Ok(())
    } else {
        Err(refusal)
    }
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
