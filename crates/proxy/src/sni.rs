//! The server name of a TLS ClientHello, read without decrypting anything.
//!
//! A ClientHello is sent in the clear (RFC 8446 §4.1.2; RFC 5246 §7.4.1.2) in one or more
//! handshake records. This parser reassembles the handshake message from the records,
//! walks its fixed fields to the extensions, and takes the `server_name` extension's
//! `host_name` entry (RFC 6066 §3). It is strict where leniency could let two readers see
//! two different names: a second `server_name` extension, a second `host_name` entry, a
//! length that overruns its container, or a record of another type before the message is
//! complete are all malformed.
//!
//! With Encrypted Client Hello (`encrypted_client_hello`, 0xfe0d) the name in the clear
//! is the outer one, the client-facing server's public name; the real name is encrypted
//! to that server. The parser reports that ECH was offered; the proxy judges the outer
//! name and dials it, so the connection still only reaches the server of an allowed name.
//!
//! Hand-written by measurement (issue 24; probe binaries built with this workspace's
//! release profile). rustls 0.23's `server::Acceptor`, even without a crypto provider
//! (+6 crates, +186 KB), checks the hello as a TLS server would (one without
//! `signature_algorithms` is refused), does not say whether ECH was offered, and reports
//! an IP-literal or non-DNS name as no name at all. tls-parser 0.12 (+14 crates to build,
//! nom and phf among them; +29 KB) does not join a hello spread over several records, so
//! the record layer and every check above would stay here. What either could replace is
//! the length-checked walk below, about 90 lines that the property tests feed arbitrary
//! and mutated bytes.

use crate::sniff::{printable_name, Sniffed, MAX_SNIFF};

/// What the ClientHello names in the clear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientHelloNames {
    /// The `host_name` of the `server_name` extension; `None` when the client sent none
    /// (an IP-literal destination, or a client that never sends SNI).
    pub server_name: Option<String>,
    /// The client offered Encrypted Client Hello: `server_name` is the outer name.
    pub ech: bool,
}

const RECORD_HEADER: usize = 5;
const CONTENT_HANDSHAKE: u8 = 0x16;
const HANDSHAKE_CLIENT_HELLO: u8 = 0x01;
/// RFC 8446 §5.1: a record's fragment is at most 2^14 bytes.
const MAX_FRAGMENT: usize = 1 << 14;
const EXT_SERVER_NAME: u16 = 0x0000;
const EXT_ENCRYPTED_CLIENT_HELLO: u16 = 0xfe0d;
const NAME_TYPE_HOST_NAME: u8 = 0x00;

/// Parse the start of a TLS connection.
pub fn client_hello(bytes: &[u8]) -> Sniffed<ClientHelloNames> {
    let message = match handshake_message(bytes) {
        Sniffed::Found(m) => m,
        Sniffed::NeedMore => return Sniffed::NeedMore,
        Sniffed::Malformed(why) => return Sniffed::Malformed(why),
    };
    match names(&message) {
        Ok(names) => Sniffed::Found(names),
        Err(why) => Sniffed::Malformed(why),
    }
}

/// The ClientHello body (without its 4-byte handshake header), reassembled from as many
/// handshake records as it spans.
fn handshake_message(bytes: &[u8]) -> Sniffed<Vec<u8>> {
    let mut message = Vec::new();
    let mut rest = bytes;
    loop {
        if rest.len() < RECORD_HEADER {
            return Sniffed::NeedMore;
        }
        if rest[0] != CONTENT_HANDSHAKE {
            return Sniffed::Malformed("not a TLS handshake record");
        }
        if rest[1] != 0x03 {
            return Sniffed::Malformed("not a TLS record version");
        }
        let length = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if length == 0 || length > MAX_FRAGMENT {
            return Sniffed::Malformed("TLS record length out of range");
        }
        if message.is_empty() {
            match rest.get(RECORD_HEADER) {
                None => return Sniffed::NeedMore,
                Some(&HANDSHAKE_CLIENT_HELLO) => {}
                Some(_) => {
                    return Sniffed::Malformed("the first handshake message is not a ClientHello")
                }
            }
        }
        let Some(fragment) = rest.get(RECORD_HEADER..RECORD_HEADER + length) else {
            return Sniffed::NeedMore;
        };
        message.extend_from_slice(fragment);
        rest = &rest[RECORD_HEADER + length..];
        if message.len() >= 4 {
            let declared = usize::from(message[1]) << 16
                | usize::from(message[2]) << 8
                | usize::from(message[3]);
            if declared + 4 > MAX_SNIFF {
                return Sniffed::Malformed("ClientHello larger than the steering bound");
            }
            if message.len() > declared + 4 {
                // Another handshake message shares the record: no client sends one
                // before the server has answered.
                return Sniffed::Malformed("bytes after the ClientHello in its record");
            }
            if message.len() == declared + 4 {
                message.drain(..4);
                return Sniffed::Found(message);
            }
        }
    }
}

/// A cursor over a byte slice that refuses to read past its end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.bytes.len() < n {
            return Err("a ClientHello length overruns its container");
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, &'static str> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn vector8(&mut self) -> Result<&'a [u8], &'static str> {
        let n = usize::from(self.u8()?);
        self.take(n)
    }
    fn vector16(&mut self) -> Result<Reader<'a>, &'static str> {
        let n = usize::from(self.u16()?);
        Ok(Reader {
            bytes: self.take(n)?,
        })
    }
    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

fn names(body: &[u8]) -> Result<ClientHelloNames, &'static str> {
    let mut r = Reader { bytes: body };
    let version = r.u16()?;
    if version >> 8 != 0x03 {
        return Err("ClientHello version is not TLS");
    }
    r.take(32)?; // random
    if r.vector8()?.len() > 32 {
        return Err("ClientHello session id longer than 32 bytes");
    }
    let suites = r.vector16()?;
    if suites.bytes.is_empty() || suites.bytes.len() % 2 != 0 {
        return Err("ClientHello cipher suites malformed");
    }
    if r.vector8()?.is_empty() {
        return Err("ClientHello offers no compression method");
    }
    let mut names = ClientHelloNames {
        server_name: None,
        ech: false,
    };
    if r.is_empty() {
        // A TLS 1.2 ClientHello may end here: no extensions, so no name.
        return Ok(names);
    }
    let mut extensions = r.vector16()?;
    if !r.is_empty() {
        return Err("bytes after the ClientHello extensions");
    }
    let mut seen_server_name = false;
    let mut seen_ech = false;
    while !extensions.is_empty() {
        let kind = extensions.u16()?;
        let data = extensions.vector16()?;
        match kind {
            EXT_SERVER_NAME => {
                if std::mem::replace(&mut seen_server_name, true) {
                    return Err("two server_name extensions");
                }
                names.server_name = Some(host_name(data)?);
            }
            EXT_ENCRYPTED_CLIENT_HELLO => {
                if std::mem::replace(&mut seen_ech, true) {
                    return Err("two encrypted_client_hello extensions");
                }
                names.ech = true;
            }
            _ => {}
        }
    }
    Ok(names)
}

/// The one `host_name` entry of a `server_name` extension's ServerNameList.
fn host_name(mut data: Reader<'_>) -> Result<String, &'static str> {
    let mut list = data.vector16()?;
    if !data.is_empty() {
        return Err("bytes after the server name list");
    }
    let mut found = None;
    while !list.is_empty() {
        let name_type = list.u8()?;
        let name = list.vector16()?;
        if name_type != NAME_TYPE_HOST_NAME {
            // RFC 6066 defines no other type; an unknown one names nothing we can judge.
            continue;
        }
        if found.is_some() {
            return Err("two host_name entries in server_name");
        }
        let name = printable_name(name.bytes).ok_or("server name is not printable ASCII")?;
        found = Some(name.to_owned());
    }
    found.ok_or("server_name extension without a host_name")
}

#[cfg(test)]
#[path = "sni_tests.rs"]
mod tests;
