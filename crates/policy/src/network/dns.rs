//! The DNS messages the cage's stub resolver reads and writes (RFC 1035 §4): one query's
//! header and first question in, and four kinds of answer out. Pure: no I/O, no
//! allocation beyond the message itself, and every length is checked before it is used.
//!
//! Only what a stub answering a query needs is understood. Compression pointers are
//! refused in the question: the first question starts right after the header, so a
//! pointer there could only point into the header or forward, and no resolver sends one.
//! EDNS options and any further records in the query are ignored (the answer carries no
//! OPT record, which RFC 6891 §7 allows a responder that does not speak EDNS).
//!
//! Hand-written by measurement (issue 24). hickory-proto 0.26, the maintained DNS codec,
//! declares Rust 1.88 where this workspace declares 1.80; even without default features it
//! brings 52 crates (idna and its ICU tables among them) into this crate, which has 18 and
//! is meant to stay a pure model; it adds 301 KB to a release-profile probe binary; and it
//! reads a question name through a pointer into the header (`c0 02` reads as `\000.`),
//! which this codec refuses. The property tests feed the parser arbitrary bytes and read
//! back what the answers echo.

use std::fmt;
use std::net::Ipv4Addr;

/// The port every resolver client uses (glibc, musl and Go have no other).
pub const DNS_PORT: u16 = 53;

/// The header's size on the wire.
const HEADER: usize = 12;
/// RFC 1035 §2.3.4: a label holds at most 63 bytes, a name at most 255 on the wire.
const MAX_LABEL: usize = 63;
const MAX_NAME: usize = 255;

/// Record types named in summaries; any other is shown by number (RFC 3597 style).
pub const TYPE_A: u16 = 1;
/// Record type AAAA (an IPv6 address).
pub const TYPE_AAAA: u16 = 28;
/// Class IN.
pub const CLASS_IN: u16 = 1;

/// Response codes the stub sends (RFC 1035 §4.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rcode {
    /// Answered (with or without records).
    NoError = 0,
    /// The message could not be read as a query.
    FormErr = 1,
    /// The name does not exist (NXDOMAIN): final, so resolvers do not retry.
    NxDomain = 3,
    /// Not a standard query (another opcode).
    NotImp = 4,
    /// The name is not allowed in this cage.
    Refused = 5,
}

/// Why a message was not read as a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DnsError {
    /// Fewer than the 12 bytes of a header.
    #[error("shorter than a DNS header")]
    Short,
    /// The QR bit is set: a response, which the stub never answers.
    #[error("a response, not a query")]
    NotAQuery,
    /// An opcode other than QUERY (0).
    #[error("opcode {0} is not a standard query")]
    Opcode(u8),
    /// QDCOUNT is 0.
    #[error("no question")]
    NoQuestion,
    /// The question's name, type or class runs past the message.
    #[error("the question runs past the end of the message")]
    Truncated,
    /// A compression pointer or reserved label type, which a question never needs.
    #[error("a compression pointer or reserved label type in the question")]
    LabelType,
    /// The name exceeds 255 bytes on the wire.
    #[error("the name is longer than 255 bytes")]
    NameTooLong,
}

/// A name as the query spelled it: its labels, ASCII letters lower-cased (RFC 4343:
/// comparisons ignore ASCII case). Other bytes are kept as they came.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name {
    labels: Vec<Vec<u8>>,
}

impl Name {
    /// The labels, in order, ASCII letters lower-cased.
    pub fn labels(&self) -> &[Vec<u8>] {
        &self.labels
    }

    /// The name as a host name the network rules can judge (`pypi.org`), when every
    /// label is letters, digits, `-` or `_`; `None` otherwise (the root, odd bytes).
    pub fn as_host(&self) -> Option<String> {
        if self.labels.is_empty() {
            return None;
        }
        let plain = self
            .labels
            .iter()
            .flatten()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_');
        plain.then(|| self.to_string())
    }

    fn wire_len(&self) -> usize {
        self.labels.iter().map(|l| l.len() + 1).sum::<usize>() + 1
    }

    fn write(&self, out: &mut Vec<u8>) {
        for label in &self.labels {
            out.push(label.len() as u8);
            out.extend_from_slice(label);
        }
        out.push(0);
    }
}

impl fmt::Display for Name {
    /// Presentation format (RFC 1035 §5.1): labels joined by dots, the root as `.`; a
    /// byte outside printable ASCII, or a dot or backslash inside a label, as `\DDD`, so
    /// a name from the cage can never carry a terminal escape or pass for another name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.labels.is_empty() {
            return f.write_str(".");
        }
        for (i, label) in self.labels.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            for &b in label {
                if b.is_ascii_graphic() && b != b'.' && b != b'\\' {
                    write!(f, "{}", b as char)?;
                } else {
                    write!(f, "\\{b:03}")?;
                }
            }
        }
        Ok(())
    }
}

/// A record type, shown by its name where the stub knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QType(pub u16);

impl fmt::Display for QType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            TYPE_A => "A",
            2 => "NS",
            5 => "CNAME",
            6 => "SOA",
            12 => "PTR",
            15 => "MX",
            16 => "TXT",
            TYPE_AAAA => "AAAA",
            33 => "SRV",
            64 => "SVCB",
            65 => "HTTPS",
            255 => "ANY",
            other => return write!(f, "TYPE{other}"),
        };
        f.write_str(name)
    }
}

/// The first question of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// The name asked about.
    pub name: Name,
    /// The record type asked for.
    pub qtype: QType,
    /// The class (IN, for anything a program sends).
    pub qclass: u16,
}

/// One query, as far as the stub reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The query's id, echoed in the answer so the client matches it.
    pub id: u16,
    /// The recursion-desired bit, echoed in the answer (RFC 1035 §4.1.1).
    pub recursion_desired: bool,
    /// The first question (the only one resolvers send).
    pub question: Question,
}

/// Read a query's header and first question.
pub fn parse_query(msg: &[u8]) -> Result<Query, DnsError> {
    let header = msg.get(..HEADER).ok_or(DnsError::Short)?;
    let id = u16::from_be_bytes([header[0], header[1]]);
    let flags = header[2];
    if flags & 0x80 != 0 {
        return Err(DnsError::NotAQuery);
    }
    let opcode = (flags >> 3) & 0x0f;
    if opcode != 0 {
        return Err(DnsError::Opcode(opcode));
    }
    let qdcount = u16::from_be_bytes([header[4], header[5]]);
    if qdcount == 0 {
        return Err(DnsError::NoQuestion);
    }
    let mut at = HEADER;
    let mut labels = Vec::new();
    let mut wire = 1;
    loop {
        let len = usize::from(*msg.get(at).ok_or(DnsError::Truncated)?);
        at += 1;
        if len == 0 {
            break;
        }
        if len > MAX_LABEL {
            // 0b11 is a compression pointer, 0b01 and 0b10 are reserved (RFC 6891 §5).
            return Err(DnsError::LabelType);
        }
        wire += len + 1;
        if wire > MAX_NAME {
            return Err(DnsError::NameTooLong);
        }
        let label = msg.get(at..at + len).ok_or(DnsError::Truncated)?;
        labels.push(label.to_ascii_lowercase());
        at += len;
    }
    let tail = msg.get(at..at + 4).ok_or(DnsError::Truncated)?;
    Ok(Query {
        id,
        recursion_desired: flags & 0x01 != 0,
        question: Question {
            name: Name { labels },
            qtype: QType(u16::from_be_bytes([tail[0], tail[1]])),
            qclass: u16::from_be_bytes([tail[2], tail[3]]),
        },
    })
}

/// The answer to `query`: `rcode`, the question echoed, and at most one A record.
fn response(query: &Query, rcode: Rcode, a: Option<(Ipv4Addr, u32)>) -> Vec<u8> {
    let question = &query.question;
    let mut out = Vec::with_capacity(HEADER + question.name.wire_len() + 4 + 16);
    out.extend_from_slice(&query.id.to_be_bytes());
    // QR, opcode 0, not authoritative, not truncated, RD echoed; RA set: the stub is the
    // only resolver the client has, and says it recursed so the client does not retry
    // elsewhere for that reason.
    out.push(0x80 | u8::from(query.recursion_desired));
    out.push(0x80 | rcode as u8);
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&u16::from(a.is_some()).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    question.name.write(&mut out);
    out.extend_from_slice(&question.qtype.0.to_be_bytes());
    out.extend_from_slice(&question.qclass.to_be_bytes());
    if let Some((addr, ttl)) = a {
        // A pointer to the question's name, which starts right after the header.
        out.extend_from_slice(&[0xc0, HEADER as u8]);
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&ttl.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&addr.octets());
    }
    out
}

/// REFUSED, with the question echoed: the server will not answer this name. Resolvers
/// read it as a fault of that server, not an answer about the name: glibc and musl move
/// on to the next server and end with a temporary failure (`EAI_AGAIN`), which clients
/// retry.
pub fn refused(query: &Query) -> Vec<u8> {
    response(query, Rcode::Refused, None)
}

/// NXDOMAIN, with the question echoed: the name does not exist. Every resolver takes it
/// as final (glibc and musl `getaddrinfo` return `EAI_NONAME`, Go "no such host", c-ares
/// `ENOTFOUND`), so a client gives up at once instead of retrying. No SOA record is
/// added: without one the answer is not cached (RFC 2308 §5), which a cage's closed
/// network, gone after the run, wants.
pub fn nx_domain(query: &Query) -> Vec<u8> {
    response(query, Rcode::NxDomain, None)
}

/// NOERROR with one A record for the question's name (the caller asks only for an
/// A/IN question).
pub fn a_record(query: &Query, addr: Ipv4Addr, ttl: u32) -> Vec<u8> {
    response(query, Rcode::NoError, Some((addr, ttl)))
}

/// NOERROR with no answer ("no data"): the name exists, with no record of this type.
pub fn no_data(query: &Query) -> Vec<u8> {
    response(query, Rcode::NoError, None)
}

/// The answer to a message [`parse_query`] refused, when it has a query's header: FORMERR
/// (or NOTIMP for another opcode) with no question, so the client stops waiting. `None`
/// for anything else (too short, or a response), which gets no answer at all.
pub fn error_for(msg: &[u8], error: DnsError) -> Option<Vec<u8>> {
    let rcode = match error {
        DnsError::Short | DnsError::NotAQuery => return None,
        DnsError::Opcode(_) => Rcode::NotImp,
        _ => Rcode::FormErr,
    };
    let header = msg.get(..HEADER)?;
    let mut out = Vec::with_capacity(HEADER);
    out.extend_from_slice(&header[..2]);
    // Keep the opcode and RD bits, set QR; RA set.
    out.push(0x80 | (header[2] & 0x79));
    out.push(0x80 | rcode as u8);
    out.extend_from_slice(&[0; 8]);
    Some(out)
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
