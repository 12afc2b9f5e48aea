//! Network proxy benchmark (not a test; `bench/network.sh` runs it in release mode).
//!
//! In one run, on loopback: 100 MiB downloaded directly from an upstream vs through the
//! proxy (CONNECT tunnel, and absolute-URI HTTP), best of several rounds each; and the
//! per-connection latency of connect + one request/response round trip, direct vs through
//! a CONNECT tunnel, median of many. The proxy is the production `serve` on the same
//! tokio runtime shape `jaula run` uses (2 workers).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use jaula_policy::network::{NetworkMode, NetworkSpec};
use jaula_proxy::{serve, Proxy, ProxyConfig};

const BODY: usize = 100 * 1024 * 1024;
const ROUNDS: usize = 5;
const LATENCY_SAMPLES: usize = 500;

fn upstream() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut first = String::new();
                    if reader.read_line(&mut first).unwrap_or(0) == 0 {
                        return;
                    }
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                    }
                    let size = if first.contains("/big") { BODY } else { 1 };
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n");
                    if stream.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                    let chunk = vec![7u8; 256 * 1024];
                    let mut left = size;
                    while left > 0 {
                        let n = left.min(chunk.len());
                        if stream.write_all(&chunk[..n]).is_err() {
                            return;
                        }
                        left -= n;
                    }
                }
            });
        }
    });
    addr
}

/// Send one GET and read the whole response body (Content-Length framing).
fn get(stream: &mut TcpStream, target: &str) -> usize {
    write!(stream, "GET {target} HTTP/1.1\r\nHost: bench.test\r\n\r\n").unwrap();
    let mut reader = BufReader::with_capacity(256 * 1024, stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut buf = vec![0u8; 256 * 1024];
    let mut got = 0;
    while got < length {
        let n = reader.read(&mut buf).unwrap();
        assert!(n > 0, "short body");
        got += n;
    }
    got
}

fn tunnel(proxy: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(proxy).unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(b"CONNECT bench.test:443 HTTP/1.1\r\nHost: bench.test:443\r\n\r\n")
        .unwrap();
    // Read the response head byte by byte so nothing past it is consumed.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"));
    s
}

/// CPU time (user + system) of this whole process so far, every thread (the client, the
/// upstream and the proxy's workers), from /proc/self/stat.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let per_second: u64 = String::from_utf8(
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    Duration::from_secs_f64(ticks as f64 / per_second as f64)
}

/// Best throughput of [`ROUNDS`] runs (MiB/s), and the CPU time all of them took per GiB
/// moved (ms): wall-clock throughput on a shared 2-core machine says as much about the
/// other jobs as about the path, CPU per byte says what the path costs.
fn best_throughput(mut f: impl FnMut() -> usize) -> (f64, f64) {
    let mut best = 0f64;
    let mut bytes = 0usize;
    let cpu_before = process_cpu();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let n = f();
        bytes += n;
        let mibs = n as f64 / (1024.0 * 1024.0) / start.elapsed().as_secs_f64();
        best = best.max(mibs);
    }
    let cpu = (process_cpu() - cpu_before).as_secs_f64() * 1e3;
    (best, cpu / (bytes as f64 / (1024.0 * 1024.0 * 1024.0)))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let up = upstream();
    let rules = NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: vec!["bench.test".into()],
        ..NetworkSpec::default()
    }
    .resolve()
    .unwrap();
    let mut config = ProxyConfig::new(rules);
    config.resolve.insert("bench.test".into(), up);
    // The upstream is on loopback: the owner's explicit statement, as for any user.
    config.allow_addresses = vec!["127.0.0.1".parse().unwrap()];
    let proxy = Proxy::new(config).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let paddr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    runtime.spawn(async move {
        serve(tokio::net::TcpListener::from_std(listener).unwrap(), proxy).await
    });

    let (direct, direct_cpu) = best_throughput(|| {
        let mut s = TcpStream::connect(up).unwrap();
        get(&mut s, "/big")
    });
    let (via_connect, connect_cpu) = best_throughput(|| get(&mut tunnel(paddr), "/big"));
    let (via_http, http_cpu) = best_throughput(|| {
        let mut s = TcpStream::connect(paddr).unwrap();
        get(&mut s, "http://bench.test/big")
    });

    let sample = |through_proxy: bool| {
        (0..LATENCY_SAMPLES)
            .map(|_| {
                let start = Instant::now();
                let mut s = if through_proxy {
                    tunnel(paddr)
                } else {
                    let s = TcpStream::connect(up).unwrap();
                    s.set_nodelay(true).unwrap();
                    s
                };
                get(&mut s, "/small");
                start.elapsed()
            })
            .collect::<Vec<_>>()
    };
    // Warm up both paths, then interleave-free sampling of each.
    let _ = sample(false);
    let _ = sample(true);
    let lat_direct = median(sample(false));
    let lat_proxy = median(sample(true));

    println!("{{");
    println!("  \"body_mib\": {},", BODY / (1024 * 1024));
    println!("  \"rounds\": {ROUNDS},");
    println!("  \"direct_mib_s\": {direct:.0},");
    println!("  \"connect_tunnel_mib_s\": {via_connect:.0},");
    println!("  \"absolute_uri_http_mib_s\": {via_http:.0},");
    println!("  \"connect_ratio\": {:.3},", via_connect / direct);
    println!("  \"http_ratio\": {:.3},", via_http / direct);
    println!("  \"direct_cpu_ms_per_gib\": {direct_cpu:.0},");
    println!("  \"connect_tunnel_cpu_ms_per_gib\": {connect_cpu:.0},");
    println!("  \"absolute_uri_http_cpu_ms_per_gib\": {http_cpu:.0},");
    println!("  \"latency_samples\": {LATENCY_SAMPLES},");
    println!(
        "  \"median_connection_direct_us\": {:.1},",
        lat_direct.as_secs_f64() * 1e6
    );
    println!(
        "  \"median_connection_via_proxy_us\": {:.1},",
        lat_proxy.as_secs_f64() * 1e6
    );
    println!(
        "  \"median_added_us\": {:.1}",
        (lat_proxy.as_secs_f64() - lat_direct.as_secs_f64()) * 1e6
    );
    println!("}}");
}
