//! Connections steered to the proxy without the client knowing: under `--network allow`
//! the cage's DNS answers every allowed name with the steering address, where the cage's
//! stage bound listeners on ports 443 and 80 and handed them out. A client that ignores
//! the proxy variables (Node's `fetch`, most Go programs) connects there.
//!
//! Nothing is decrypted. The proxy reads only the connection's first bytes, bounded by
//! [`MAX_SNIFF`] and the header timeout: on a TLS port the ClientHello's server name
//! ([`sni`]), on an HTTP port the request head's Host ([`http_host`]). That name then
//! takes exactly the way a `CONNECT name:port` through the proxy takes (`admit::open`):
//! the rules, the address check, the dial from the host, the log (marked
//! `"via":"steered"`) and the summary. The bytes already read are replayed upstream
//! first, then the two sockets are relayed as they are, so the client's TLS session is
//! with the real server and the client checks that server's certificate itself.
//!
//! A refusal closes the connection: after a TLS `access_denied` alert on a TLS port (the
//! client reports "access denied" rather than a bare reset), after a `403` naming the rule
//! on an HTTP port. An allowed name whose upstream could not be reached is no refusal:
//! a TLS client gets an `internal_error` alert instead (curl: "alert internal error"), an
//! HTTP client the proxy's `502` or `504` saying what failed.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::admit::{self, Ask, Closed};
use crate::log::{Verdict, Via};
use crate::serve::accept_slotted;
use crate::sniff::{Sniffed, MAX_SNIFF};
use crate::{http_host, sni, Proxy};

/// What a steered port speaks, and so how its first bytes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// TLS: judged on the ClientHello's server name.
    Tls,
    /// HTTP/1.x: judged on the request head's Host.
    Http,
}

/// A listener in the cage's namespace whose connections are steered.
#[derive(Debug)]
pub struct SteeredListener {
    /// The bound, listening socket.
    pub listener: std::net::TcpListener,
    /// What its clients speak.
    pub protocol: Protocol,
}

impl SteeredListener {
    /// A listener for port 443: judged on the TLS server name.
    pub fn tls(listener: std::net::TcpListener) -> SteeredListener {
        SteeredListener {
            listener,
            protocol: Protocol::Tls,
        }
    }

    /// A listener for port 80: judged on the HTTP Host.
    pub fn http(listener: std::net::TcpListener) -> SteeredListener {
        SteeredListener {
            listener,
            protocol: Protocol::Http,
        }
    }
}

/// Serve one steered listener on the current runtime until the task is aborted.
pub(crate) fn start(steered: SteeredListener, proxy: Proxy) -> io::Result<JoinHandle<()>> {
    steered.listener.set_nonblocking(true)?;
    // The listener's own port is the port dialled upstream: 443 stays 443.
    let local = steered.listener.local_addr()?;
    let listener = TcpListener::from_std(steered.listener)?;
    let target = Target {
        protocol: steered.protocol,
        port: local.port(),
        address: local.ip().to_string(),
    };
    Ok(tokio::spawn(accept_loop(listener, target, proxy)))
}

#[derive(Clone, Debug)]
struct Target {
    protocol: Protocol,
    port: u16,
    /// The steering address, logged as the host when a connection names none.
    address: String,
}

/// As [`crate::serve`]'s loop: every connection holds one of the proxy's shared slots.
async fn accept_loop(listener: TcpListener, target: Target, proxy: Proxy) {
    while let Some((stream, slot)) = accept_slotted(&listener, &proxy).await {
        let proxy = proxy.clone();
        let target = target.clone();
        tokio::spawn(async move {
            steer(stream, &target, &proxy).await;
            drop(slot);
        });
    }
}

/// What the first bytes named.
struct Named {
    method: String,
    host: String,
}

async fn steer(mut client: TcpStream, target: &Target, proxy: &Proxy) {
    let mut first = Vec::new();
    let timeout = proxy.config().header_timeout;
    let named = match tokio::time::timeout(timeout, sniff(&mut client, target, &mut first)).await {
        Ok(Some(named)) => named,
        // The client went away or stayed silent before naming anything: nothing was
        // asked for, so nothing is decided or logged.
        Ok(None) | Err(_) => return,
    };
    let named = match named {
        Ok(named) => named,
        Err(rule) => {
            let method = match target.protocol {
                Protocol::Tls => "CONNECT",
                Protocol::Http => "HTTP",
            };
            proxy.recorder().record(
                method,
                &target.address,
                target.port,
                Via::Steered,
                Verdict::NameDenied { rule: &rule },
            );
            let closed = Closed::Name { rule };
            refuse(&mut client, target, &closed, method, &target.address).await;
            return;
        }
    };
    let ask = Ask {
        method: &named.method,
        host: &named.host,
        port: target.port,
        via: Via::Steered,
    };
    match admit::open(proxy, ask).await {
        Ok(upstream) => crate::serve::relay(client, upstream, &first).await,
        Err(closed) => {
            let shown = admit::shown(&named.host);
            refuse(&mut client, target, &closed, &named.method, &shown).await;
        }
    }
}

/// Read until the port's parser can judge. `None`: the client closed first. `Some(Err)`:
/// the refusal's rule.
async fn sniff(
    client: &mut TcpStream,
    target: &Target,
    first: &mut Vec<u8>,
) -> Option<Result<Named, String>> {
    let mut chunk = [0u8; 4096];
    loop {
        let room = MAX_SNIFF.saturating_sub(first.len()).min(chunk.len());
        let n = client.read(&mut chunk[..room]).await.ok()?;
        if n == 0 {
            return None;
        }
        first.extend_from_slice(&chunk[..n]);
        let judged = match target.protocol {
            Protocol::Tls => match sni::client_hello(first) {
                Sniffed::Found(names) => Sniffed::Found(match names.server_name {
                    Some(host) => Ok(Named {
                        method: "CONNECT".to_owned(),
                        host,
                    }),
                    None => Err("steered TLS without a server name (SNI)".to_owned()),
                }),
                Sniffed::NeedMore => Sniffed::NeedMore,
                Sniffed::Malformed(why) => Sniffed::Malformed(why),
            },
            Protocol::Http => match http_host::request_head(first) {
                Sniffed::Found(head) => Sniffed::Found(Ok(Named {
                    method: head.method,
                    host: head.host,
                })),
                Sniffed::NeedMore => Sniffed::NeedMore,
                Sniffed::Malformed(why) => Sniffed::Malformed(why),
            },
        };
        match judged {
            Sniffed::Found(named) => return Some(named),
            Sniffed::Malformed(why) => return Some(Err(format!("steered: {why}"))),
            Sniffed::NeedMore if first.len() >= MAX_SNIFF => {
                return Some(Err(format!(
                    "steered: nothing to judge in the first {MAX_SNIFF} bytes"
                )))
            }
            Sniffed::NeedMore => {}
        }
    }
}

/// TLS alert record: fatal (2), access_denied (49) (RFC 8446 §6).
const TLS_ACCESS_DENIED: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 49];
/// TLS alert record: fatal (2), internal_error (80): "unrelated to the peer or the
/// correctness of the protocol" (RFC 8446 §6.2), the nearest TLS has to "upstream down".
const TLS_INTERNAL_ERROR: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 80];

/// Tell the client, in its own protocol, then close.
async fn refuse(
    client: &mut TcpStream,
    target: &Target,
    closed: &Closed,
    method: &str,
    shown: &str,
) {
    let reply = match target.protocol {
        Protocol::Tls => tls_alert(closed).to_vec(),
        Protocol::Http => http_refusal(closed, method, shown, target.port).into_bytes(),
    };
    let _ = client.write_all(&reply).await;
    let _ = client.shutdown().await;
}

/// The alert a TLS client is closed with: `access_denied` for a refusal,
/// `internal_error` when the upstream could not be reached.
fn tls_alert(closed: &Closed) -> [u8; 7] {
    match closed {
        Closed::Name { .. } | Closed::Address { .. } => TLS_ACCESS_DENIED,
        Closed::Unreached { .. } => TLS_INTERNAL_ERROR,
    }
}

/// The proxy's own answer, as a raw HTTP/1.1 response on a connection that closes.
fn http_refusal(closed: &Closed, method: &str, shown: &str, port: u16) -> String {
    let status = closed.status();
    let message = closed.message(method, shown, port);
    // A rule is built from the owner's patterns and printable names; a header line must
    // still never carry a line break.
    let rule = closed
        .rule()
        .map(|r| format!("x-jaula-rule: {}\r\n", r.replace(['\r', '\n'], " ")))
        .unwrap_or_default();
    let upstream = closed
        .upstream_reason()
        .map(|r| format!("x-jaula-upstream: {r}\r\n"))
        .unwrap_or_default();
    format!(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\n{rule}{upstream}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{message}",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        message.len()
    )
}

#[cfg(test)]
#[path = "steer_tests.rs"]
mod tests;
