//! The proxy on its own, in-process, against upstream servers on loopback. Names are
//! resolved through the proxy's override table, never DNS. The override is checked like
//! a DNS answer, so reaching these loopback servers takes the owner's explicit
//! `allow_addresses` statement (`--allow-address 127.0.0.1`), as it would for anyone.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream};
use std::time::Duration;

use jaula_policy::network::{NetworkMode, NetworkSpec};
use jaula_proxy::{serve, Proxy, ProxyConfig};

struct Harness {
    addr: SocketAddr,
    proxy: Proxy,
    runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    log: std::path::PathBuf,
}

fn harness(allow: &[&str], deny: &[&str], upstream: SocketAddr, max: usize) -> Harness {
    harness_with(allow, deny, upstream, max, &["127.0.0.1"])
}

fn harness_with(
    allow: &[&str],
    deny: &[&str],
    upstream: SocketAddr,
    max: usize,
    allow_addresses: &[&str],
) -> Harness {
    let rules = NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: allow.iter().map(|s| s.to_string()).collect(),
        deny_domains: deny.iter().map(|s| s.to_string()).collect(),
        presets: vec![],
    }
    .resolve()
    .unwrap();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let log = dir.path().join("net.jsonl");
    let mut config = ProxyConfig::new(rules);
    for name in [
        "allowed.test",
        "also.allowed.test",
        "blocked.test",
        "localhost",
        "127.0.0.1",
    ] {
        config.resolve.insert(name.to_owned(), upstream);
    }
    config.allow_addresses = allow_addresses.iter().map(|a| a.parse().unwrap()).collect();
    config.log = Some(log.clone());
    config.max_connections = max;
    config.header_timeout = Duration::from_millis(300);
    let proxy = Proxy::new(config).unwrap();
    // Two workers: a slow client must not stall the others (the limits under test).
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    let runtime = runtime.worker_threads(2).enable_all().build().unwrap();
    let (listener, addr) = jaula_testkit::net::loopback_listener();
    let p = proxy.clone();
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        serve(listener, p).await
    });
    Harness {
        addr,
        proxy,
        runtime,
        _dir: dir,
        log,
    }
}

/// An upstream that answers every connection with a fixed HTTP response naming the
/// request line it saw.
fn http_upstream() -> SocketAddr {
    jaula_testkit::net::http_upstream("saw ")
}

/// An upstream that echoes bytes back.
fn echo_upstream() -> SocketAddr {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut r = stream.try_clone().unwrap();
                let mut w = stream;
                let _ = std::io::copy(&mut r, &mut w);
            });
        }
    });
    addr
}

fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn get(h: &Harness, host: &str) -> String {
    exchange(
        h.addr,
        &format!(
            "GET http://{host}/some/path?q=1 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        ),
    )
}

#[test]
fn allowed_absolute_uri_is_forwarded_in_origin_form() {
    let h = harness(&["allowed.test"], &[], http_upstream(), 16);
    let response = get(&h, "allowed.test");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.ends_with("saw GET /some/path?q=1 HTTP/1.1"),
        "{response}"
    );
}

#[test]
fn denied_host_gets_403_naming_the_rule_and_is_logged() {
    let h = harness(
        &["*.allowed.test"],
        &["also.allowed.test"],
        http_upstream(),
        16,
    );
    let response = get(&h, "also.allowed.test");
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(
        response.contains("x-jaula-rule: deny-domain also.allowed.test"),
        "{response}"
    );
    assert!(response.contains("blocked by rule: deny-domain also.allowed.test"));
    let response = get(&h, "blocked.test");
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(response.contains("not in the allow list"), "{response}");
    let log = std::fs::read_to_string(&h.log).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["host"], "also.allowed.test");
    assert_eq!(lines[0]["port"], 80);
    assert_eq!(lines[0]["decision"], "deny");
    assert_eq!(lines[0]["rule"], "deny-domain also.allowed.test");
    assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
    let summary = h.proxy.summary();
    assert_eq!(summary.blocked.len(), 2);
    assert_eq!(summary.allowed, 0);
}

#[test]
fn connect_tunnels_bytes_untouched() {
    let h = harness(&["allowed.test"], &[], echo_upstream(), 16);
    let mut s = TcpStream::connect(h.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
    }
    let payload: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let mut w = s.try_clone().unwrap();
    let sent = payload.clone();
    let writer = std::thread::spawn(move || w.write_all(&sent).unwrap());
    let mut back = vec![0u8; payload.len()];
    reader.read_exact(&mut back).unwrap();
    writer.join().unwrap();
    assert_eq!(back, payload);
    // A half-close crosses the tunnel both ways: the client's end of writing reaches the
    // upstream (the echo's copy ends and it closes), whose close reaches the client.
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{} bytes after the close", rest.len());
}

#[test]
fn denied_connect_gets_403() {
    let h = harness(&["allowed.test"], &[], echo_upstream(), 16);
    let response = exchange(
        h.addr,
        "CONNECT blocked.test:443 HTTP/1.1\r\nHost: blocked.test:443\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

#[test]
fn malformed_and_origin_form_requests_get_400_and_the_proxy_keeps_serving() {
    let h = harness(&["allowed.test"], &[], http_upstream(), 16);
    for garbage in [
        "THIS IS NOT HTTP\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
        "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
        "CONNECT allowed.test HTTP/1.1\r\n\r\n",
        "GET http://allowed.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
        "\u{0}\u{1}\u{2}\r\n\r\n",
    ] {
        let response = exchange(h.addr, garbage);
        assert!(
            response.starts_with("HTTP/1.1 400"),
            "{garbage:?} -> {response:?}"
        );
    }
    assert!(get(&h, "allowed.test").starts_with("HTTP/1.1 200"));
}

#[test]
fn unresolvable_or_closed_upstream_gets_502_not_a_hang() {
    let closed = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let h = harness(&["allowed.test"], &[], addr, 16);
    let response = get(&h, "allowed.test");
    assert!(response.starts_with("HTTP/1.1 502"), "{response}");
    // A failure, not a refusal: what failed is named, no rule is.
    assert!(
        response.contains("x-jaula-upstream: connection-refused\r\n"),
        "{response}"
    );
    assert!(!response.contains("x-jaula-rule"), "{response}");
    let summary = h.proxy.summary();
    assert!(summary.blocked.is_empty(), "{summary:?}");
    assert_eq!(summary.upstream_failures.len(), 1, "{summary:?}");
}

#[test]
fn a_flood_of_1000_connections_is_bounded_and_leaves_the_proxy_serving() {
    const FLOOD: usize = 1000;
    const SLOTS: usize = 32;
    let h = harness(&["allowed.test"], &[], http_upstream(), SLOTS);
    // 1. Complete requests, all at once: each is answered.
    let answered = h.runtime.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..FLOOD {
            let addr = h.addr;
            tasks.push(tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
                s.write_all(b"GET http://blocked.test/ HTTP/1.1\r\nHost: blocked.test\r\nConnection: close\r\n\r\n")
                    .await
                    .unwrap();
                let mut out = Vec::new();
                s.read_to_end(&mut out).await.unwrap();
                out.starts_with(b"HTTP/1.1 403")
            }));
        }
        let mut ok = 0;
        for t in tasks {
            ok += usize::from(t.await.unwrap());
        }
        ok
    });
    assert_eq!(answered, FLOOD);
    // 2. Idle connections that never send a request: held at once, then a real request.
    let idle: Vec<TcpStream> = (0..FLOOD)
        .map(|_| TcpStream::connect(h.addr).unwrap())
        .collect();
    let response = get(&h, "allowed.test");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    drop(idle);
    assert!(
        h.proxy.peak_connections() <= SLOTS,
        "peak {} > {SLOTS}",
        h.proxy.peak_connections()
    );
    assert!(get(&h, "allowed.test").starts_with("HTTP/1.1 200"));
}

/// A loopback listener that is never served: a connection would sit in its accept queue,
/// so "the server saw no connection" is checked without waiting (a loopback connect
/// completes before connect(2) returns, and the proxy answers only after it).
struct Untouched(StdListener);

impl Untouched {
    fn new() -> Untouched {
        let l = StdListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Untouched(l)
    }
    fn addr(&self) -> SocketAddr {
        self.0.local_addr().unwrap()
    }
    fn reached(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        }
    }
}

fn log_lines(h: &Harness) -> Vec<serde_json::Value> {
    std::fs::read_to_string(&h.log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_allowed_name_resolving_to_loopback_is_refused_over_http_and_connect() {
    let server = Untouched::new();
    let h = harness_with(&["allowed.test"], &[], server.addr(), 16, &[]);
    let response = get(&h, "allowed.test");
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(
        response.contains("x-jaula-rule: address 127.0.0.1 is loopback"),
        "{response}"
    );
    assert!(
        response.contains("allowed by rule: allow-domain allowed.test, but refused: address 127.0.0.1 is loopback"),
        "{response}"
    );
    let response = exchange(
        h.addr,
        "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(
        response.contains("x-jaula-rule: address 127.0.0.1 is loopback"),
        "{response}"
    );
    assert!(!server.reached(), "the loopback server saw a connection");
    let lines = log_lines(&h);
    assert_eq!(lines.len(), 2);
    for (line, (method, port)) in lines.iter().zip([("GET", 80), ("CONNECT", 443)]) {
        assert_eq!(line["method"], method);
        assert_eq!(line["host"], "allowed.test");
        assert_eq!(line["port"], port);
        assert_eq!(line["decision"], "deny");
        assert_eq!(line["rule"], "address 127.0.0.1 is loopback");
        assert_eq!(line["address"], "127.0.0.1");
        assert_eq!(line["reason"], "loopback");
    }
    let summary = h.proxy.summary();
    assert!(summary.blocked.is_empty(), "{summary:?}");
    assert_eq!(
        summary
            .refused_addresses
            .get("allowed.test -> 127.0.0.1 (loopback)"),
        Some(&2)
    );
}

#[test]
fn the_owners_allow_address_admits_an_exactly_allowed_name_and_logs_the_address() {
    let h = harness_with(&["allowed.test"], &[], http_upstream(), 16, &["127.0.0.1"]);
    let response = get(&h, "allowed.test");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let lines = log_lines(&h);
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[0]["rule"], "allow-domain allowed.test");
    assert_eq!(lines[0]["address"], "127.0.0.1");
    assert!(lines[0].get("reason").is_none());
    assert!(h.proxy.summary().is_empty());
}

#[test]
fn a_name_admitted_by_a_pattern_never_reaches_loopback_even_with_allow_address() {
    let server = Untouched::new();
    let h = harness_with(&["*.allowed.test"], &[], server.addr(), 16, &["127.0.0.1"]);
    let response = get(&h, "also.allowed.test");
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(
        response.contains("x-jaula-rule: address 127.0.0.1 is loopback"),
        "{response}"
    );
    assert!(!server.reached(), "the loopback server saw a connection");
}

#[test]
fn an_allow_entry_that_is_the_literal_or_localhost_names_loopback_itself() {
    for host in ["127.0.0.1", "localhost"] {
        let h = harness_with(&[host], &[], http_upstream(), 16, &[]);
        let response = get(&h, host);
        assert!(response.starts_with("HTTP/1.1 200"), "{host}: {response}");
        // The same loopback address under another exactly allowed name stays refused.
        let h = harness_with(&[host, "allowed.test"], &[], http_upstream(), 16, &[]);
        let response = get(&h, "allowed.test");
        assert!(response.starts_with("HTTP/1.1 403"), "{host}: {response}");
    }
}
