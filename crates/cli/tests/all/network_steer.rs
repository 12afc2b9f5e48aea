//! `jaula run --network allow`, live: clients that ignore the proxy variables and connect
//! straight to the steering address (127.0.2.1) on ports 80 and 443 are judged on the
//! HTTP Host or the TLS server name, and reach only allowed names.
//!
//! The upstreams run on the host's loopback outside the cage: a plain HTTP server and a
//! TLS server whose self-signed certificate (made here with `openssl`) the caged client
//! is told to trust. The proxy dials them through the config key `network.resolve`, never DNS, with
//! the owner's `--allow-address 127.0.0.1` (the upstreams are loopback). Inside the cage
//! the client is pointed at the steering address the way the cage's DNS would point it
//! (curl `--resolve`, a `dns.lookup` override for Node), so no name is resolved anywhere.

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{bare_tree, cage_here, chown_tree, jaula_run, skip_or_fail, Backend, LoggedRun, User};
use jaula_testkit::output::assert_says;
use jaula_testkit::Reaped;

const BACKENDS: [Backend; 2] = [Backend::Bwrap, Backend::Landlock];

fn tools_or_skip() -> bool {
    match common::missing_tool(&["curl", "python3", "openssl", "node"]) {
        Some(tool) => {
            skip_or_fail(&format!("{tool} is not installed"));
            false
        }
        None => true,
    }
}

/// A plain HTTP upstream: answers every request with the request line and Host it saw.
fn http_upstream() -> SocketAddr {
    jaula_testkit::net::http_upstream_with(|seen| {
        format!("upstream saw {} host {}", seen.line, seen.host)
    })
}

/// A TLS upstream: Python's own TLS server, so the handshake the caged client completes
/// is with a real server holding the key; the body names the server name it was asked.
const TLS_SERVER: &str = r#"
import http.server, ssl, sys
seen = {}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("tls upstream saw %s %s sni %s" % (self.command, self.path,
                seen.get("sni"))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
def sni(sock, name, ctx):
    seen["sni"] = name
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
ctx.sni_callback = sni
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// The TLS upstream process; killed when dropped.
struct TlsUpstream {
    _child: Reaped,
    addr: SocketAddr,
}

/// A certificate for `example.test` (and its key) in `dir`, and a server presenting it.
fn tls_upstream(dir: &Path) -> (TlsUpstream, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=example.test"])
        .args([
            "-addext",
            "subjectAltName=DNS:example.test,DNS:refused.test",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(made.success(), "openssl req failed");
    let mut child = Command::new("python3")
        .args(["-c", TLS_SERVER])
        .arg(&cert)
        .arg(&key)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().expect("the TLS server printed no port");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    (
        TlsUpstream {
            _child: Reaped(child),
            addr,
        },
        cert,
    )
}

/// Makes `node`'s `dns.lookup` answer the two test names with the steering address, as
/// the cage's DNS does for allowed names; `fetch` (undici) connects through it.
const NODE_PRELOAD: &str = r#"
const dns = require("dns");
const original = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (typeof options === "function") { callback = options; options = {}; }
  if (typeof options === "number") options = { family: options };
  if (host === "example.test" || host === "refused.test") {
    if (options && options.all) {
      return process.nextTick(callback, null, [{ address: "127.0.2.1", family: 4 }]);
    }
    return process.nextTick(callback, null, "127.0.2.1", 4);
  }
  return original.call(this, host, options, callback);
};
"#;

/// A Node script fetching each `(label, url)` in turn with the built-in `fetch`, which
/// ignores HTTP(S)_PROXY, printing `label=STATUS BODY` or `label=error CODE`. No single
/// quotes: the script is passed inside them.
fn node_fetch(calls: &[(&str, &str)]) -> String {
    let mut script = String::from(
        "const show = (label, p) => p\
           .then(async r => console.log(label + \"=\" + r.status + \" \" + (await r.text()).trim()))\
           .catch(e => console.log(label + \"=error \" + (e.cause && e.cause.code)));\
         (async () => {",
    );
    for (label, url) in calls {
        script.push_str(&format!("await show(\"{label}\", fetch(\"{url}\"));"));
    }
    script.push_str("})();");
    script
}

/// A steered run, and the TLS upstream it talked to (kept until the run is dropped).
struct Steered {
    run: LoggedRun,
    _tls: TlsUpstream,
}

impl std::ops::Deref for Steered {
    type Target = LoggedRun;
    fn deref(&self) -> &LoggedRun {
        &self.run
    }
}

/// A config file in `root` whose `network.resolve` makes the proxy dial each
/// `HOST=ADDR:PORT` entry instead of looking the name up (the test-only knob is a config
/// key: `jaula run` has no internal flags). Readable by every test identity.
fn resolve_config(root: &Path, entries: &[String]) -> PathBuf {
    let path = root.join("jaula-test-config.toml");
    let quoted: Vec<String> = entries.iter().map(|e| format!("{e:?}")).collect();
    std::fs::write(
        &path,
        format!("[network]\nresolve = [{}]\n", quoted.join(", ")),
    )
    .unwrap();
    path
}

/// Run `script` (with `$CERT` and `$PRELOAD` set) in a `--network allow` cage admitting
/// `example.test`, as `user`. The HTTP upstream answers for port 80, the TLS one for 443:
/// `network.resolve` maps a name to one address whatever the port, so each run maps
/// `example.test` to the upstream its script's port needs, via `which`.
fn steered_run(backend: Backend, user: User, which: Upstream, script: &str) -> Steered {
    let (dir, root, home, repo) = bare_tree("net-steer");
    let (tls, cert) = tls_upstream(&root);
    let preload = root.join("preload.js");
    std::fs::write(&preload, NODE_PRELOAD).unwrap();
    let log = root.join("decisions.jsonl");
    let target = match which {
        Upstream::Http => http_upstream(),
        Upstream::Tls => tls.addr,
    };
    let config = resolve_config(
        &root,
        &[
            format!("example.test={target}"),
            format!("refused.test={target}"),
        ],
    );
    chown_tree(&root, user.uid());
    let mut cmd =
        common::jaula_run_allowing(backend, (&home, &repo), "example.test", &config, &log);
    cmd.args(["--", "sh", "-c", script])
        .env("CERT", &cert)
        .env("PRELOAD", &preload);
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    Steered {
        run: LoggedRun {
            out,
            log,
            _dir: dir,
        },
        _tls: tls,
    }
}

/// Runs `script` steered (see [`steered_run`]) on every backend that cages here as
/// `user`, and hands each run, which must have succeeded, to `check` with a label for its
/// messages and the run's stdout and stderr; nothing when a tool is missing (a skip, a
/// failure under CI=true).
fn on_each_backend(
    user: User,
    which: Upstream,
    script: &str,
    check: impl Fn(&str, &Steered, &str, &str),
) {
    if !tools_or_skip() {
        return;
    }
    for backend in BACKENDS {
        if !cage_here(backend, user) {
            continue;
        }
        let r = steered_run(backend, user, which, script);
        let (text, stderr) = (r.stdout(), r.stderr());
        let b = format!("{} {user:?}", backend.name());
        assert!(r.out.status.success(), "{b}: {:?}", r.out);
        check(&b, &r, &text, &stderr);
    }
}

#[derive(Clone, Copy)]
enum Upstream {
    Http,
    Tls,
}

/// `(method, host, port, decision, rule, via)` of each log line.
fn log_summary(
    records: &[serde_json::Value],
) -> Vec<(String, String, u64, String, String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap_or("").to_owned(),
                r["host"].as_str().unwrap_or("").to_owned(),
                r["port"].as_u64().unwrap_or(0),
                r["decision"].as_str().unwrap_or("").to_owned(),
                r["rule"].as_str().unwrap_or("").to_owned(),
                r["via"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn record(
    method: &str,
    host: &str,
    port: u64,
    allowed: bool,
) -> (String, String, u64, String, String, String) {
    let (decision, rule) = if allowed {
        ("allow", "allow-domain example.test")
    } else {
        ("deny", "not in the allow list")
    };
    (
        method.into(),
        host.into(),
        port,
        decision.into(),
        rule.into(),
        "steered".into(),
    )
}

/// Port 80: curl with the proxy switched off and Node's `fetch` (which never reads the
/// proxy variables) reach the allowed name and get the proxy's 403 for the other; the
/// log and the summary mark both refusals as steered. Also: the other ports of the
/// steering address and a raw public address reach nothing, and the command holds no
/// capability although a root stage under bwrap was given CAP_NET_BIND_SERVICE.
fn http_is_steered_by_host(user: User) {
    let script = "\
        printf 'curl=%s\\n' \"$(curl -sS -m 30 --noproxy '*' --resolve example.test:80:127.0.2.1 \
            http://example.test/c?q=1)\"; \
        printf 'refused=%s\\n' \"$(curl -sS -m 30 --noproxy '*' -w ' %{http_code}' \
            --resolve refused.test:80:127.0.2.1 http://refused.test/r)\"; \
        curl -sS -m 30 --noproxy '*' http://127.0.2.1:8080/ >/dev/null 2>&1; echo other_port=$?; \
        curl -sS -m 30 --noproxy '*' http://192.0.2.1/ >/dev/null 2>&1; echo raw_ip=$?; \
        NODE_OPTIONS=\"--require $PRELOAD\" node -e '";
    let script = format!(
        "{script}{}'; grep -E '^Cap(Prm|Eff|Amb):' /proc/self/status",
        node_fetch(&[
            ("node_http", "http://example.test/node"),
            ("node_refused", "http://refused.test/node"),
        ])
    );
    on_each_backend(user, Upstream::Http, &script, |b, r, text, stderr| {
        assert_says(
            text,
            &[
                "curl=upstream saw GET /c?q=1 HTTP/1.1 host example.test\n",
                "refused=jaula: network: GET to refused.test:80 blocked by rule: not in the \
                 allow list\n 403\n",
                "other_port=7\n",
                "raw_ip=7\n",
                "node_http=200 upstream saw GET /node HTTP/1.1 host example.test\n",
                "node_refused=403 jaula: network: GET to refused.test:80 blocked",
            ],
            format!("{b}\nstderr: {stderr}"),
        );
        for set in ["CapPrm", "CapEff", "CapAmb"] {
            assert!(
                text.contains(&format!("{set}:\t0000000000000000\n")),
                "{b}: {text}"
            );
        }
        assert!(
            stderr.contains(
                "jaula: network: blocked 2 request(s) to 1 host(s): refused.test (2 steered)"
            ),
            "{b}: {stderr}"
        );
        assert_eq!(
            log_summary(&r.log()),
            [
                record("GET", "example.test", 80, true),
                record("GET", "refused.test", 80, false),
                record("GET", "example.test", 80, true),
                record("GET", "refused.test", 80, false),
            ],
            "{b}"
        );
    });
}

jaula_testkit::as_each_user!(
    http_is_steered_by_host =>
    http_to_the_steering_address_is_judged_on_its_host_as_root,
    http_to_the_steering_address_is_judged_on_its_host_unprivileged
);

/// Port 443: the client completes TLS with the real upstream and verifies its
/// certificate (so the proxy passed the bytes through unmodified and decrypted
/// nothing), and the upstream saw the server name the client sent. A refused server name
/// gets a TLS alert, the refusal is logged as steered with its rule, and a ClientHello
/// without a server name (a client connecting to an address, not a name) is refused.
fn tls_is_steered_by_server_name(user: User) {
    let script = format!(
        "printf 'tls=%s\\n' \"$(curl -sS -m 30 --noproxy '*' --cacert \"$CERT\" \
            --resolve example.test:443:127.0.2.1 https://example.test/s)\"; \
         curl -sS -m 30 --noproxy '*' --cacert \"$CERT\" --resolve refused.test:443:127.0.2.1 \
            https://refused.test/ 2>&1; echo refused=$?; \
         curl -sS -m 30 --noproxy '*' -k https://127.0.2.1/ 2>&1; echo no_sni=$?; \
         NODE_EXTRA_CA_CERTS=\"$CERT\" NODE_OPTIONS=\"--require $PRELOAD\" node -e '{}'",
        node_fetch(&[("node_https", "https://example.test/node-tls")])
    );
    on_each_backend(user, Upstream::Tls, &script, |b, r, text, stderr| {
        // curl: "(35) ... alert access denied"; exit 35 is CURLE_SSL_CONNECT_ERROR.
        assert_says(
            text,
            &[
                "tls=tls upstream saw GET /s sni example.test\n",
                "access denied",
                "refused=35\n",
                "no_sni=35\n",
                "node_https=200 tls upstream saw GET /node-tls sni example.test\n",
            ],
            format!("{b}\nstderr: {stderr}"),
        );
        assert!(
            stderr.contains(
                "jaula: network: blocked 2 request(s) to 2 host(s): 127.0.2.1 (1 steered) \
                 refused.test (1 steered)"
            ),
            "{b}: {stderr}"
        );
        // Each TLS steering refusal's rule is named at exit, not only in the log.
        assert!(
            stderr.contains(
                "\njaula: network: the rules that blocked them: not in the allow list \
                 (refused.test); steered TLS without a server name (SNI) (127.0.2.1)\n"
            ),
            "{b}: {stderr}"
        );
        let records = r.log();
        let mut expected = vec![
            record("CONNECT", "example.test", 443, true),
            record("CONNECT", "refused.test", 443, false),
            record("CONNECT", "127.0.2.1", 443, false),
            record("CONNECT", "example.test", 443, true),
        ];
        expected[2].4 = "steered TLS without a server name (SNI)".into();
        assert_eq!(log_summary(&records), expected, "{b}");
    });
}

jaula_testkit::as_each_user!(
    tls_is_steered_by_server_name =>
    tls_to_the_steering_address_is_judged_on_its_server_name_as_root,
    tls_to_the_steering_address_is_judged_on_its_server_name_unprivileged
);

/// Where the stage cannot bind the web ports (unprivileged under bwrap without a PID
/// namespace: /proc is the host's, read-only, so no user namespace of its own can be
/// mapped), the run says so and goes on: the proxy still admits the allowed name, and a
/// client that ignores the proxy variables reaches nothing, as before steering existed.
#[test]
fn without_steering_the_run_says_so_and_the_proxy_still_works() {
    if !tools_or_skip() || !cage_here(Backend::Bwrap, User::Nobody) {
        return;
    }
    let (dir, root, home, repo) = bare_tree("net-steer-none");
    chown_tree(&root, User::Nobody.uid());
    let upstream = http_upstream();
    let script = "printf 'proxied=%s\\n' \"$(curl -sS -m 30 http://example.test/p)\"; \
        curl -sS -m 30 --noproxy '*' --resolve example.test:80:127.0.2.1 \
            http://example.test/ >/dev/null 2>&1; echo steered=$?";
    let mut cmd = jaula_run(Backend::Bwrap, &home, &repo);
    cmd.args(["--no-pid-ns"])
        .args(["--network", "allow", "--allow-domain", "example.test"])
        .args(["--allow-address", "127.0.0.1", "--config"])
        .arg(resolve_config(&root, &[format!("example.test={upstream}")]))
        .args(["--", "sh", "-c", script]);
    User::Nobody.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let (text, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        text.contains("proxied=upstream saw GET /p HTTP/1.1 host example.test\n"),
        "{text}\n{stderr}"
    );
    assert!(text.contains("steered=7\n"), "{text}");
    assert!(
        stderr.contains(
            "jaula: network allow: no steering for clients that ignore the proxy variables"
        ),
        "{stderr}"
    );
    drop(dir);
}

/// The whole route with no help from the client: Node's `fetch` and curl (proxy switched
/// off, no `--resolve`) look the names up through the host's `/etc/resolv.conf`, which in
/// the cage's namespace reaches jaula's DNS stub. The allowed name resolves to the
/// steering address and its request reaches the upstream; the refused name does not
/// resolve at all, and the proxy's log names it with its rule (method `DNS`).
fn names_resolve_through_the_stub_and_are_steered(user: User) {
    let script = format!(
        "printf 'curl=%s\\n' \"$(curl -sS -m 30 --noproxy '*' http://example.test/plain)\"; \
         curl -sS -m 30 --noproxy '*' http://refused.test/ >/dev/null 2>&1; \
         echo refused_curl=$?; \
         node -e '{}'",
        node_fetch(&[
            ("node_http", "http://example.test/node-plain"),
            ("node_refused", "http://refused.test/node-plain"),
        ])
    );
    on_each_backend(user, Upstream::Http, &script, |b, r, text, stderr| {
        // curl exit 6: could not resolve host; Node: the lookup failed (REFUSED).
        assert_says(
            text,
            &[
                "curl=upstream saw GET /plain HTTP/1.1 host example.test\n",
                "node_http=200 upstream saw GET /node-plain HTTP/1.1 host example.test\n",
                "refused_curl=6\n",
            ],
            format!("{b}\nstderr: {stderr}"),
        );
        assert!(
            text.contains("node_refused=error ENOTFOUND")
                || text.contains("node_refused=error EAI_AGAIN"),
            "{b}: {text}"
        );
        let refused_lookups: Vec<_> = r
            .log()
            .into_iter()
            .filter(|l| l["method"] == "DNS" && l["host"] == "refused.test")
            .collect();
        assert!(!refused_lookups.is_empty(), "{b}: {:?}", r.log());
        for l in &refused_lookups {
            assert_eq!(l["decision"], "deny", "{l}");
            assert_eq!(l["rule"], "not in the allow list", "{l}");
        }
        assert!(stderr.contains("refused.test"), "{b}: {stderr}");
    });
}

jaula_testkit::as_each_user!(
    names_resolve_through_the_stub_and_are_steered =>
    names_resolve_through_the_stub_and_are_steered_as_root,
    names_resolve_through_the_stub_and_are_steered_unprivileged
);
