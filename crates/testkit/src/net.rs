//! Loopback servers for the network tests: traffic never leaves the host.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};

/// What an upstream saw of one request: its request line and its `Host` header.
pub struct Seen {
    /// The request line, e.g. `GET /x HTTP/1.1`.
    pub line: String,
    /// The `Host` header's value (empty when absent).
    pub host: String,
}

/// An HTTP upstream on 127.0.0.1 that answers every request with the body
/// `{prefix}{request line}`, so a client proves which request reached it.
pub fn http_upstream(prefix: &'static str) -> SocketAddr {
    http_upstream_with(move |seen| format!("{prefix}{}", seen.line))
}

/// An HTTP upstream on 127.0.0.1 that answers every request (one a connection) with the
/// body `answer` makes of what it saw.
pub fn http_upstream_with(answer: impl Fn(&Seen) -> String + Send + Sync + 'static) -> SocketAddr {
    let answer = std::sync::Arc::new(answer);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                reader.read_line(&mut first).unwrap_or(0);
                let mut host = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("host") {
                            host = value.trim().to_owned();
                        }
                    }
                }
                let seen = Seen {
                    line: first.trim_end().to_owned(),
                    host,
                };
                let body = answer(&seen);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    addr
}

/// A listener on a free port of 127.0.0.1, non-blocking (ready to hand to an async
/// runtime), and its address.
pub fn loopback_listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    (listener, addr)
}
