//! The method and Host of an HTTP/1.x request head, for a connection steered to port 80.
//!
//! The proxy judges the Host, dials that name, and replays the bytes unchanged, so the
//! upstream must read the same name from them. The request line and the fields are read
//! by `httparse`, the parser hyper serves the proxy's own listener with; on top of it this
//! module is strict where servers disagree (request smuggling lives in those
//! disagreements) and `httparse` is lenient: lines end in CRLF (it also takes a bare LF),
//! no line folding, exactly one Host field, and an origin-form (`/path`) or asterisk-form
//! (`*`) target. An absolute-form target (`http://other/`), whose authority a server
//! prefers over Host (RFC 9112 §3.2.2), and CONNECT's authority-form are refused: a client
//! that ignores the proxy variables sends neither. `httparse` itself refuses whitespace
//! between a field name and its colon and a control character in a field value.

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
const NOT_PRINTABLE_HOST: &str = "the Host field is empty or not printable ASCII";

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
    match parse(&bytes[..end + END_OF_HEAD.len()]) {
        Ok(head) => Sniffed::Found(head),
        Err(why) => Sniffed::Malformed(why),
    }
}

/// `head` runs to the end of its empty line.
fn parse(head: &[u8]) -> Result<RequestHead, &'static str> {
    line_ends(head)?;
    // A slot per line, so `httparse` never runs out of them (`TooManyHeaders`).
    let lines = head.iter().filter(|&&b| b == b'\n').count();
    let mut fields = vec![httparse::EMPTY_HEADER; lines];
    let mut request = httparse::Request::new(&mut fields);
    let parsed = request.parse(head);
    let (Ok(httparse::Status::Complete(_)), Some(method), Some(target)) =
        (parsed, request.method, request.path)
    else {
        return Err(match parsed {
            Err(error) => refusal(error, request.method.is_some(), head),
            Ok(_) => "the request head ends early",
        });
    };
    let origin_form = target.starts_with('/');
    let asterisk = target == "*" && method == "OPTIONS";
    if !origin_form && !asterisk {
        return Err("the request target is not a path (absolute-form is refused)");
    }
    if !target.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err("the request target is not printable ASCII");
    }
    let mut hosts = request
        .headers
        .iter()
        .filter(|field| field.name.eq_ignore_ascii_case("host"));
    let host = hosts.next().ok_or("no Host field")?;
    if hosts.next().is_some() {
        return Err("two Host fields");
    }
    Ok(RequestHead {
        method: method.to_owned(),
        host: host_of(host.value)?,
    })
}

/// What `httparse` lets through about line ends: every line ends in CRLF, no CR stands
/// alone, and no line starts with whitespace (obsolete line folding, RFC 9112 §5.2).
fn line_ends(head: &[u8]) -> Result<(), &'static str> {
    for (at, &b) in head.iter().enumerate() {
        let next = head.get(at + 1).copied();
        match b {
            b'\n' if at == 0 || head[at - 1] != b'\r' => {
                return Err("a request line does not end in CRLF")
            }
            b'\n' if matches!(next, Some(b' ' | b'\t')) => {
                return Err("obsolete line folding in the request head")
            }
            b'\r' if next != Some(b'\n') => return Err("bare CR in the request head"),
            _ => {}
        }
    }
    Ok(())
}

/// The refusal's rule for what `httparse` refused.
fn refusal(error: httparse::Error, read_method: bool, head: &[u8]) -> &'static str {
    match error {
        httparse::Error::Version => "not an HTTP/1.0 or HTTP/1.1 request",
        httparse::Error::HeaderName => "a header name is not a token",
        httparse::Error::HeaderValue if host_holds_control(head) => NOT_PRINTABLE_HOST,
        httparse::Error::HeaderValue => "a header value holds a control character",
        // Stopped inside the first word of a line that has more than one.
        httparse::Error::Token if !read_method && request_line(head).contains(&b' ') => {
            "the request method is not a token"
        }
        _ => "the request line is not METHOD TARGET VERSION",
    }
}

fn request_line(head: &[u8]) -> &[u8] {
    head.split(|&b| b == b'\r').next().unwrap_or_default()
}

/// Whether a Host field's value holds a control character (what `httparse` refuses in a
/// value), so the refusal names the field the rules judge.
fn host_holds_control(head: &[u8]) -> bool {
    head.split(|&b| b == b'\n').skip(1).any(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        line.get(..5)
            .is_some_and(|name| name.eq_ignore_ascii_case(b"host:"))
            && line[5..]
                .iter()
                .any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f)
    })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` (RFC 9110 §7.2), without the port.
fn host_of(value: &[u8]) -> Result<String, &'static str> {
    let name = printable_name(value).ok_or(NOT_PRINTABLE_HOST)?;
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
