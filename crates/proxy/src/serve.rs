//! The accept loop and the per-request decision.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, HOST};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::admit::{self, Ask, Closed};
use crate::log::{Recorder, Via};
use crate::{ProxyConfig, ProxyError, Summary};

type Body = BoxBody<Bytes, hyper::Error>;

/// Headers that describe one hop and must not be forwarded (RFC 9110 §7.6.1), plus the
/// proxy's own credentials header, which belongs to this hop only.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// A proxy's shared state; cheap to clone.
#[derive(Clone)]
pub struct Proxy {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    config: ProxyConfig,
    recorder: Recorder,
    /// Shared by the proxy's listener and the steering listeners: one bound for all.
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) active: AtomicUsize,
    pub(crate) peak: AtomicUsize,
}

impl Proxy {
    /// Opens the log (if any); nothing is served yet.
    pub fn new(config: ProxyConfig) -> Result<Proxy, ProxyError> {
        let recorder = Recorder::open(config.log.as_deref())?;
        let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
        Ok(Proxy {
            inner: Arc::new(Inner {
                config,
                recorder,
                slots,
                active: AtomicUsize::new(0),
                peak: AtomicUsize::new(0),
            }),
        })
    }

    pub(crate) fn config(&self) -> &ProxyConfig {
        &self.inner.config
    }

    pub(crate) fn recorder(&self) -> &Recorder {
        &self.inner.recorder
    }

    /// Blocked hosts so far.
    pub fn summary(&self) -> Summary {
        self.inner.recorder.summary()
    }

    /// Client connections being served now.
    pub fn active_connections(&self) -> usize {
        self.inner.active.load(Ordering::SeqCst)
    }

    /// The most client connections ever served at once.
    pub fn peak_connections(&self) -> usize {
        self.inner.peak.load(Ordering::SeqCst)
    }
}

/// Serve `listener` until the future is dropped. Every accepted connection first takes one
/// of `max_connections` slots, so a flood waits in the kernel's accept queue instead of
/// consuming this process's descriptors.
pub async fn serve(listener: TcpListener, proxy: Proxy) {
    while let Some((stream, slot)) = accept_slotted(&listener, &proxy).await {
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let service = {
                let proxy = proxy.clone();
                hyper::service::service_fn(move |req| handle(proxy.clone(), req))
            };
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(proxy.inner.config.header_timeout)
                .preserve_header_case(true);
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
            drop(slot);
        });
    }
}

/// One of the proxy's shared connection slots, held for as long as a connection is
/// served: counted in the active and peak figures, given back when dropped.
pub(crate) struct Slot {
    proxy: Proxy,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.proxy.inner.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Send buffer asked for on every client connection (the kernel doubles it for its own
/// bookkeeping). Clients are always on this host, in the cage, so a few hundred KiB
/// cover the link's bandwidth-delay product many times over. The autotuned default grows
/// to `net.ipv4.tcp_wmem`'s maximum (4 MiB): a tunnel then runs that far ahead of its
/// reader, whose copy out of the socket finds the bytes gone from its cache. Bounded, a
/// 100 MiB `CONNECT` download costs about a quarter less CPU per byte in total
/// (bench/network.sh; docs/benchmarks.md, "Network proxy"). Upstream sockets keep
/// autotuning: their far end may be a long fat path.
const CLIENT_SEND_BUFFER: usize = 256 * 1024;

/// The next connection on `listener` with a slot of its own (`None` once the slots are
/// closed): a flood waits in the kernel's accept queue instead of consuming this process's
/// descriptors. Every listener the proxy serves (its own, the steered ones) shares them.
pub(crate) async fn accept_slotted(
    listener: &TcpListener,
    proxy: &Proxy,
) -> Option<(TcpStream, Slot)> {
    loop {
        let permit = proxy.inner.slots.clone().acquire_owned().await.ok()?;
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // EMFILE/ENFILE/ECONNABORTED: the queued connection stays queued (or is
                // gone); back off briefly rather than spin on the same error.
                drop(permit);
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // Refused or clamped, the kernel's autotuned default stays: slower, still correct.
        let _ = rustix::net::sockopt::set_socket_send_buffer_size(&stream, CLIENT_SEND_BUFFER);
        let now = proxy.inner.active.fetch_add(1, Ordering::SeqCst) + 1;
        proxy.inner.peak.fetch_max(now, Ordering::SeqCst);
        let slot = Slot {
            proxy: proxy.clone(),
            _permit: permit,
        };
        return Some((stream, slot));
    }
}

fn text(status: StatusCode, message: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(message))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn refused(status: StatusCode, rule: &str, message: String) -> Response<Body> {
    let mut response = text(status, message);
    if let Ok(v) = HeaderValue::from_str(rule) {
        response.headers_mut().insert("x-jaula-rule", v);
    }
    response
}

async fn handle(proxy: Proxy, req: Request<Incoming>) -> Result<Response<Body>, hyper::Error> {
    let Some((host, port)) = target(&req) else {
        return Ok(text(
            StatusCode::BAD_REQUEST,
            "jaula proxy: only CONNECT host:port and absolute http:// URIs are proxied\n"
                .to_owned(),
        ));
    };
    let method = req.method().as_str().to_owned();
    let ask = Ask {
        method: &method,
        host: &host,
        port,
        via: Via::Proxy,
    };
    let upstream = match admit::open(&proxy, ask).await {
        Ok(stream) => stream,
        Err(closed) => return Ok(answer(&closed, &method, &host, port)),
    };
    let shown = admit::shown(&host);
    if req.method() == Method::CONNECT {
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(req).await {
                tunnel(upgraded, upstream).await;
            }
        });
        return Ok(Response::new(
            http_body_util::Empty::new()
                .map_err(|never| match never {})
                .boxed(),
        ));
    }
    forward(req, upstream, &shown, port).await
}

/// The client's answer when no upstream was opened: `403` naming the rule for a refusal,
/// the gateway status (with `x-jaula-upstream` naming why) for an upstream that could
/// not be reached.
fn answer(closed: &Closed, method: &str, host: &str, port: u16) -> Response<Body> {
    let message = closed.message(method, &admit::shown(host), port);
    let mut response = match closed.rule() {
        Some(rule) => refused(closed.status(), &rule, message),
        None => text(closed.status(), message),
    };
    if let Some(reason) = closed.upstream_reason() {
        response
            .headers_mut()
            .insert("x-jaula-upstream", HeaderValue::from_static(reason));
    }
    response
}

/// Bytes copied per read in a tunnel: tokio's default (8 KiB) costs a syscall pair per
/// 8 KiB and holds bulk transfers to a fraction of loopback speed.
const TUNNEL_BUFFER: usize = 256 * 1024;

/// Copy both ways until either side closes. The client connection is taken back from
/// hyper as the plain socket it is (plus any bytes hyper had already read past the
/// request head), so the copy runs between two sockets with no HTTP layer between.
async fn tunnel(upgraded: hyper::upgrade::Upgraded, mut upstream: TcpStream) {
    match upgraded.downcast::<TokioIo<TcpStream>>() {
        Ok(parts) => relay(parts.io.into_inner(), upstream, &parts.read_buf).await,
        Err(upgraded) => {
            let mut client = TokioIo::new(upgraded);
            let _ = tokio::io::copy_bidirectional_with_sizes(
                &mut client,
                &mut upstream,
                TUNNEL_BUFFER,
                TUNNEL_BUFFER,
            )
            .await;
        }
    }
}

/// Send `already_read` (bytes the client sent before the relay began) upstream, then
/// move bytes both ways between the two sockets until each side has closed.
pub(crate) async fn relay(client: TcpStream, mut upstream: TcpStream, already_read: &[u8]) {
    use tokio::io::AsyncWriteExt;
    if !already_read.is_empty() && upstream.write_all(already_read).await.is_err() {
        return;
    }
    // Linux: socket to socket through a pipe in the kernel, no copy through user space.
    #[cfg(target_os = "linux")]
    let _ = tokio::try_join!(
        splice_one_way(&client, &upstream),
        splice_one_way(&upstream, &client)
    );
    // Elsewhere (macOS has no splice(2)): a user-space copy with large buffers.
    #[cfg(not(target_os = "linux"))]
    let mut client = client;
    #[cfg(not(target_os = "linux"))]
    let _ = tokio::io::copy_bidirectional_with_sizes(
        &mut client,
        &mut upstream,
        TUNNEL_BUFFER,
        TUNNEL_BUFFER,
    )
    .await;
}

#[cfg(target_os = "linux")]
/// Most bytes one `splice` call moves, and the pipe's capacity asked for (the kernel
/// may grant less; unprivileged callers are capped by /proc/sys/fs/pipe-max-size).
const SPLICE_CHUNK: usize = 1024 * 1024;

/// Move bytes from `from` to `to` with `splice(2)` through a pipe until `from` ends, then
/// end `to`'s write side so the peer sees the close. Two system calls per chunk and no
/// user-space copy: this is what brings a tunnel near loopback speed (bench/network.sh).
#[cfg(target_os = "linux")]
async fn splice_one_way(from: &TcpStream, to: &TcpStream) -> std::io::Result<()> {
    use rustix::pipe::{pipe_with, splice, PipeFlags, SpliceFlags};
    use tokio::io::Interest;
    let (pipe_out, pipe_in) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
    // A bigger pipe means fewer wake-ups; the default 64 KiB still works if refused.
    let _ = rustix::pipe::fcntl_setpipe_size(&pipe_in, SPLICE_CHUNK);
    let flags = SpliceFlags::MOVE | SpliceFlags::NONBLOCK;
    loop {
        let filled = loop {
            from.readable().await?;
            match from.try_io(Interest::READABLE, || {
                Ok(splice(from, None, &pipe_in, None, SPLICE_CHUNK, flags)?)
            }) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        };
        if filled == 0 {
            rustix::net::shutdown(to, rustix::net::Shutdown::Write)?;
            return Ok(());
        }
        let mut left = filled;
        while left > 0 {
            to.writable().await?;
            match to.try_io(Interest::WRITABLE, || {
                Ok(splice(&pipe_out, None, to, None, left, flags)?)
            }) {
                Ok(n) => left -= n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The host and port a request is for: the authority of `CONNECT`, or of an absolute
/// `http://` URI. `None` for origin-form requests (`GET /`), `https://` in absolute form
/// (a client must tunnel those) and anything without a host.
fn target(req: &Request<Incoming>) -> Option<(String, u16)> {
    let uri = req.uri();
    if req.method() == Method::CONNECT {
        let authority = uri.authority()?;
        return Some((authority.host().to_owned(), authority.port_u16()?));
    }
    if uri.scheme_str() != Some("http") {
        return None;
    }
    let authority = uri.authority()?;
    Some((
        authority.host().to_owned(),
        authority.port_u16().unwrap_or(80),
    ))
}

/// Send an absolute-URI request on as origin-form over a fresh upstream connection.
async fn forward(
    mut req: Request<Incoming>,
    upstream: TcpStream,
    host: &str,
    port: u16,
) -> Result<Response<Body>, hyper::Error> {
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "/".to_owned());
    *req.uri_mut() = match path.parse::<Uri>() {
        Ok(u) => u,
        Err(_) => {
            return Ok(text(
                StatusCode::BAD_REQUEST,
                "jaula proxy: bad request path\n".to_owned(),
            ))
        }
    };
    let headers = req.headers_mut();
    for name in HOP_BY_HOP {
        headers.remove(*name);
    }
    if !headers.contains_key(HOST) {
        let value = if port == 80 {
            host.to_owned()
        } else {
            format!("{host}:{port}")
        };
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(HOST, v);
        }
    }
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => {
                return Ok(text(
                    StatusCode::BAD_GATEWAY,
                    format!("jaula: network: upstream {host}:{port}: {e}\n"),
                ))
            }
        };
    tokio::spawn(connection);
    match sender.send_request(req).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            for name in HOP_BY_HOP {
                parts.headers.remove(*name);
            }
            Ok(Response::from_parts(parts, body.boxed()))
        }
        Err(e) => Ok(text(
            StatusCode::BAD_GATEWAY,
            format!("jaula: network: upstream {host}:{port}: {e}\n"),
        )),
    }
}
