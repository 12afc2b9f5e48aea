//! The steering path in-process: a steered listener and an upstream on this host's
//! loopback, both served by one runtime. The live, caged version is in
//! crates/cli/tests/all/network_steer.rs.

use super::*;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use jaula_policy::network::{NetworkMode, NetworkSpec};

use crate::test_support::{assert_fields, log_lines, scratch_log};
use crate::ProxyConfig;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An upstream that records every byte it receives until the client half-closes, and
/// answers `reply` as soon as it has seen `expect` bytes.
async fn upstream(expect: usize, reply: &'static [u8]) -> (SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        let mut answered = false;
        loop {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            let total = {
                let mut seen = record.lock().unwrap();
                seen.extend_from_slice(&buf[..n]);
                seen.len()
            };
            if !answered && total >= expect {
                stream.write_all(reply).await.unwrap();
                answered = true;
            }
        }
    });
    (addr, seen)
}

fn proxy(upstream: SocketAddr, log: &std::path::Path) -> Proxy {
    let rules = NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: vec!["example.test".into()],
        ..NetworkSpec::default()
    }
    .resolve()
    .unwrap();
    let mut config = ProxyConfig::new(rules);
    config.resolve = BTreeMap::from([("example.test".to_owned(), upstream)]);
    config.allow_addresses = vec!["127.0.0.1".parse().unwrap()];
    config.log = Some(log.to_path_buf());
    Proxy::new(config).unwrap()
}

/// A proxy logging to `log` whose allowed name leads to an [`upstream`] (`expect`,
/// `reply`), a steered listener of `protocol` it serves, and what the upstream sees.
async fn steered_upstream(
    protocol: Protocol,
    expect: usize,
    reply: &'static [u8],
    log: &std::path::Path,
) -> (Proxy, SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let (up, seen) = upstream(expect, reply).await;
    let proxy = proxy(up, log);
    let addr = steered(protocol, &proxy);
    (proxy, addr, seen)
}

/// A steered listener on an ephemeral loopback port, served by `proxy`.
fn steered(protocol: Protocol, proxy: &Proxy) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    start(SteeredListener { listener, protocol }, proxy.clone()).unwrap();
    addr
}

/// Send `request`, half-close (which the relay passes on, so the upstream ends too), and
/// read everything the other side sends until it closes.
async fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(request).await.unwrap();
    client.shutdown().await.unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).await.unwrap();
    got
}

/// A minimal ClientHello naming `name`, in one record.
fn client_hello(name: Option<&str>) -> Vec<u8> {
    let mut ext = Vec::new();
    if let Some(name) = name {
        let n = name.len() as u16;
        ext.extend_from_slice(&[0x00, 0x00]);
        ext.extend_from_slice(&(n + 5).to_be_bytes());
        ext.extend_from_slice(&(n + 3).to_be_bytes());
        ext.push(0);
        ext.extend_from_slice(&n.to_be_bytes());
        ext.extend_from_slice(name.as_bytes());
    }
    let mut body = vec![0x03, 0x03];
    body.extend_from_slice(&[1u8; 32]);
    body.push(0);
    body.extend_from_slice(&[0x00, 0x02, 0x13, 0x01, 0x01, 0x00]);
    body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    body.extend_from_slice(&ext);
    let mut message = vec![0x01];
    message.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    message.extend_from_slice(&body);
    let mut record = vec![0x16, 0x03, 0x01];
    record.extend_from_slice(&(message.len() as u16).to_be_bytes());
    record.extend_from_slice(&message);
    record
}

#[test]
fn an_allowed_http_host_reaches_its_upstream_byte_for_byte() {
    let (_dir, log) = scratch_log();
    runtime().block_on(async {
        let request: &[u8] = b"GET /x HTTP/1.1\r\nhOST: Example.Test\r\nX-Odd:  kept \r\n\r\n";
        let (proxy, addr, seen) = steered_upstream(
            Protocol::Http,
            request.len(),
            b"HTTP/1.1 200 OK\r\n\r\nup!",
            &log,
        )
        .await;
        let got = exchange(addr, request).await;
        assert_eq!(got, b"HTTP/1.1 200 OK\r\n\r\nup!");
        assert_eq!(seen.lock().unwrap().as_slice(), request);
        assert_eq!(proxy.summary().allowed, 1);
    });
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 1);
    assert_fields(
        &lines[0],
        serde_json::json!({
            "method": "GET",
            "host": "example.test",
            "decision": "allow",
            "rule": "allow-domain example.test",
            "via": "steered",
        }),
    );
}

/// A loopback port with nothing listening: bound, read, and closed again, so a connect
/// there is refused by this host's own kernel (nothing leaves loopback).
fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

#[test]
fn an_allowed_name_whose_upstream_refuses_is_a_failure_not_a_refusal() {
    let (_dir, log) = scratch_log();
    let down = closed_port();
    runtime().block_on(async {
        let proxy = proxy(down, &log);
        // TLS: an internal_error alert, never access_denied.
        let tls = steered(Protocol::Tls, &proxy);
        let got = exchange(tls, &client_hello(Some("example.test"))).await;
        assert_eq!(got, TLS_INTERNAL_ERROR);
        // HTTP: 502 saying what failed, with no rule header.
        let http = steered(Protocol::Http, &proxy);
        let got = exchange(http, b"GET / HTTP/1.1\r\nHost: example.test\r\n\r\n").await;
        let text = String::from_utf8(got).unwrap();
        assert!(text.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{text}");
        assert!(!text.contains("x-jaula-rule"), "{text}");
        assert!(
            text.contains("\r\nx-jaula-upstream: connection-refused\r\n"),
            "{text}"
        );
        let port = http.port();
        assert!(
            text.contains(&format!(
                "jaula: network: GET to example.test:{port} allowed by rule: allow-domain \
                 example.test, but the upstream could not be reached (not a refusal): \
                 {down}: connection refused ("
            )),
            "{text}"
        );
        let summary = proxy.summary();
        assert!(summary.blocked.is_empty(), "{summary:?}");
        assert_eq!(summary.allowed, 0);
        assert_eq!(
            summary.to_string(),
            format!(
                "jaula: network: 2 allowed request(s) failed upstream (not refused by jaula): \
                 example.test:{} -> {down} (connection refused) (1) example.test:{} -> {down} \
                 (connection refused) (1)",
                tls.port().min(http.port()),
                tls.port().max(http.port()),
            )
        );
    });
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 2);
    for line in &lines {
        assert_fields(
            line,
            serde_json::json!({
                "decision": "failed",
                "rule": "allow-domain example.test",
                "reason": "connection-refused",
                "address": "127.0.0.1",
                "via": "steered",
            }),
        );
        assert!(
            line["error"].as_str().unwrap().contains("refused"),
            "{line}"
        );
    }
}

#[test]
fn an_allowed_server_name_is_relayed_undecrypted_both_ways() {
    let (_dir, log) = scratch_log();
    runtime().block_on(async {
        let mut hello = client_hello(Some("example.test"));
        // Bytes after the ClientHello in the same write (0-RTT data) pass too.
        hello.extend_from_slice(b"\x17\x03\x03\x00\x01Z");
        let (_proxy, addr, seen) =
            steered_upstream(Protocol::Tls, hello.len(), b"server-bytes!", &log).await;
        let got = exchange(addr, &hello).await;
        assert_eq!(got, b"server-bytes!");
        assert_eq!(*seen.lock().unwrap(), hello);
    });
    assert_fields(
        &log_lines(&log)[0],
        serde_json::json!({
            "method": "CONNECT",
            "host": "example.test",
            "decision": "allow",
            "via": "steered",
        }),
    );
}

#[test]
fn tls_refusals_get_an_access_denied_alert_and_name_their_rule() {
    let (_dir, log) = scratch_log();
    runtime().block_on(async {
        let (_proxy, addr, seen) = steered_upstream(Protocol::Tls, 1, b"", &log).await;
        for hello in [
            client_hello(Some("refused.test")),
            client_hello(None),
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        ] {
            assert_eq!(exchange(addr, &hello).await, TLS_ACCESS_DENIED);
        }
        assert!(seen.lock().unwrap().is_empty());
    });
    let lines = log_lines(&log);
    let rules: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["host"].as_str().unwrap(), l["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rules,
        [
            ("refused.test", "not in the allow list"),
            ("127.0.0.1", "steered TLS without a server name (SNI)"),
            ("127.0.0.1", "steered: not a TLS handshake record"),
        ]
    );
    assert!(lines
        .iter()
        .all(|l| l["via"] == "steered" && l["decision"] == "deny"));
}

#[test]
fn a_refused_http_host_gets_the_proxys_403_and_is_logged_steered() {
    let (_dir, log) = scratch_log();
    runtime().block_on(async {
        let (proxy, addr, seen) = steered_upstream(Protocol::Http, 1, b"", &log).await;
        let got = exchange(addr, b"GET / HTTP/1.1\r\nHost: refused.test\r\n\r\n").await;
        let text = String::from_utf8(got).unwrap();
        let port = addr.port();
        assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
        assert!(
            text.contains("\r\nx-jaula-rule: not in the allow list\r\n"),
            "{text}"
        );
        assert!(
            text.ends_with(&format!(
                "\r\n\r\njaula: network: GET to refused.test:{port} blocked by rule: not in \
                 the allow list\n"
            )),
            "{text}"
        );
        assert!(seen.lock().unwrap().is_empty());
        assert_eq!(
            proxy.summary().to_string(),
            "jaula: network: blocked 1 request(s) to 1 host(s): refused.test (1 steered)\n\
             jaula: network: the rules that blocked them: not in the allow list (refused.test)"
        );
    });
    assert_fields(
        &log_lines(&log)[0],
        serde_json::json!({"decision": "deny", "host": "refused.test", "via": "steered"}),
    );
}

#[test]
fn a_client_that_names_nothing_before_closing_is_not_logged() {
    let (_dir, log) = scratch_log();
    runtime().block_on(async {
        let (proxy, addr, _) = steered_upstream(Protocol::Http, 1, b"", &log).await;
        assert!(exchange(addr, b"GET / HTTP/1.1\r\nHost: exa")
            .await
            .is_empty());
        assert!(proxy.summary().is_empty());
        assert_eq!(proxy.summary().allowed, 0);
    });
    assert!(log_lines(&log).is_empty());
}
