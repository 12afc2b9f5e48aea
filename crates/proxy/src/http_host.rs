//! The method and Host of an HTTP/1.x request head, for a connection steered to port 80.
//!
//! The proxy judges the Host, dials that name, and replays the bytes unchanged, so the
//! upstream must read the same name from them. This parser is therefore strict where
//! servers disagree (request smuggling lives in those disagreements): lines end in CRLF,
//! no line folding, no whitespace between a field name and its colon, exactly one Host
//! field, and an origin-form (`/path`) or asterisk-form (`*`) target. An absolute-form
//! target (`http://other/`), whose authority a server prefers over Host (RFC 9112
//! §3.2.2), and CONNECT's authority-form are refused: a client that ignores the proxy
//! variables sends neither.

use crate::sniff::{printable_name, Sniffed};

/// What the request head names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    /// The request method, as sent (`GET`, `POST`, ...).
    pub method: String,
    /// The Host field's host, without its port (the listener's port is the one dialled).
    pub host: String,
}

const END_OF_HEAD: &[u8] = b"\r\n\r\n";

/// Parse the start of a plain HTTP connection.
pub fn request_head(bytes: &[u8]) -> Sniffed<RequestHead> {
    if bytes.first().is_some_and(|b| !b.is_ascii_uppercase()) {
        // Catches TLS sent to port 80 at once rather than after the size bound.
        return Sniffed::Malformed("not an HTTP/1.x request");
    }
    let Some(end) = bytes
        .windows(END_OF_HEAD.len())
        .position(|w| w == END_OF_HEAD)
    else {
        return Sniffed::NeedMore;
    };
    // Up to the CR of the last field line's CRLF: every line then ends in CR.
    match parse(&bytes[..end + 1]) {
        Ok(head) => Sniffed::Found(head),
        Err(why) => Sniffed::Malformed(why),
    }
}

fn parse(head: &[u8]) -> Result<RequestHead, &'static str> {
    let mut lines = head.split(|&b| b == b'\n').map(|line| {
        line.strip_suffix(b"\r")
            .ok_or("a request line does not end in CRLF")
    });
    let request_line = lines.next().ok_or("empty request")??;
    let method = request_line_method(request_line)?;
    let mut host = None;
    for line in lines {
        let line = line?;
        if line.is_empty() {
            return Err("empty line inside the request head");
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err("obsolete line folding in the request head");
        }
        if line.contains(&b'\r') {
            return Err("bare CR in the request head");
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or("a header line without a colon")?;
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
            return Err("a header name is not a token");
        }
        if name.eq_ignore_ascii_case(b"host") {
            if host.is_some() {
                return Err("two Host fields");
            }
            host = Some(host_of(trim(&line[colon + 1..]))?);
        }
    }
    Ok(RequestHead {
        method,
        host: host.ok_or("no Host field")?,
    })
}

/// `METHOD SP origin-form SP HTTP/1.x`.
fn request_line_method(line: &[u8]) -> Result<String, &'static str> {
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the request line is not METHOD TARGET VERSION");
    };
    if method.is_empty() || !method.iter().all(|&b| is_token(b)) {
        return Err("the request method is not a token");
    }
    if version != b"HTTP/1.1" && version != b"HTTP/1.0" {
        return Err("not an HTTP/1.0 or HTTP/1.1 request");
    }
    let origin_form = target.first() == Some(&b'/');
    let asterisk = target == b"*" && method == b"OPTIONS";
    if !origin_form && !asterisk {
        return Err("the request target is not a path (absolute-form is refused)");
    }
    if !target.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err("the request target is not printable ASCII");
    }
    // Checked to be tchar ASCII above.
    Ok(String::from_utf8_lossy(method).into_owned())
}

/// RFC 9110 §5.6.2 tchar.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim(value: &[u8]) -> &[u8] {
    let start = value
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(start, |i| i + 1);
    &value[start..end]
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` (RFC 9110 §7.2), without the port.
fn host_of(value: &[u8]) -> Result<String, &'static str> {
    let name = printable_name(value).ok_or("the Host field is empty or not printable ASCII")?;
    let (host, port) = if let Some(bracketed) = name.strip_prefix('[') {
        let (literal, after) = bracketed
            .split_once(']')
            .ok_or("the Host field's IPv6 literal is not closed")?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or("bytes after the Host field's IPv6 literal")?,
            ),
        };
        (&name[..literal.len() + 2], port)
    } else {
        match name.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (name, None),
        }
    };
    if let Some(port) = port {
        if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err("the Host field's port is not a number");
        }
    }
    if host.is_empty() {
        return Err("the Host field names no host");
    }
    Ok(host.to_owned())
}

#[cfg(test)]
#[path = "http_host_tests.rs"]
mod tests;
