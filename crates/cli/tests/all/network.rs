//! `jaula run --network`: live, with servers on the host's loopback outside the cage.
//! Allowed names resolve through the proxy's own override (`--network-resolve`), never
//! DNS or the host's files. The override gets no exemption from the proxy's address
//! check: the upstreams here are on the host's loopback, so runs that must reach them
//! carry the owner's explicit statement, `--allow-address 127.0.0.1`.

use crate::common;

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{jaula, scratch, skip_or_fail};
use jaula_testkit::find_tool;
#[cfg(target_os = "linux")]
use jaula_testkit::output::read_fifo;
use jaula_testkit::output::{assert_says, read_all};

/// The backends a namespace can be made with here; `landlock` makes its own.
const BACKENDS: [&str; 2] = ["bwrap", "landlock"];

/// python3 and curl drive every case here.
fn tools_or_skip() -> bool {
    match ["python3", "curl"]
        .into_iter()
        .find(|t| find_tool(t).is_none())
    {
        Some(tool) => skip_or_fail(&format!("{tool} is not installed")),
        None => return true,
    }
    false
}

/// A host-side TCP listener that is never served (a connection would sit in its queue)
/// and a UDP socket, both non-blocking so "nothing arrived" is checked without waiting.
struct HostServers {
    tcp: TcpListener,
    udp: UdpSocket,
}

impl HostServers {
    fn new() -> HostServers {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        HostServers { tcp, udp }
    }
    fn tcp_port(&self) -> u16 {
        self.tcp.local_addr().unwrap().port()
    }
    fn udp_port(&self) -> u16 {
        self.udp.local_addr().unwrap().port()
    }
    /// Whether a TCP connection reached the listener (checked after the caged process
    /// exited: loopback connects complete before connect(2) returns).
    fn tcp_reached(&self) -> bool {
        match self.tcp.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        }
    }
    /// Whether a datagram arrived (loopback delivers within sendto(2)).
    fn udp_reached(&self) -> bool {
        let mut buf = [0u8; 64];
        match self.udp.recv(&mut buf) {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("recv: {e}"),
        }
    }
}

/// A probe that ignores every proxy variable: direct TCP and UDP to the host's
/// loopback servers, and a DNS lookup. Prints `tcp=`, `udp=`, `dns=` lines.
const PROBE: &str = r#"
import socket, sys
tcp_port, udp_port = int(sys.argv[1]), int(sys.argv[2])
def tcp():
    try:
        s = socket.socket()
        s.settimeout(10)
        s.connect(("127.0.0.1", tcp_port))
        return "ok"
    except OSError as e:
        return "fail:%s" % e.errno
def udp():
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"jaula-udp", ("127.0.0.1", udp_port))
        return "sent"
    except OSError as e:
        return "fail:%s" % e.errno
def dns():
    try:
        socket.getaddrinfo("jaula-probe.example.com", 80)
        return "ok"
    except OSError:
        return "fail"
print("tcp=" + tcp())
print("udp=" + udp())
print("dns=" + dns())
"#;

/// `jaula run ARGS -- COMMAND` in `repo`. The test-only knobs are config keys, not flags
/// (`jaula run --help` has no internal ones): `--network-resolve HOST=ADDR:PORT` and
/// `--network-fallback` in `args` are written to a config file beside the repo as
/// `network.resolve` and `network.none_without_namespace`.
fn run_jaula(repo: &Path, args: &[&str], command: &[&str]) -> Output {
    jaula_command(repo, args, command).output().unwrap()
}

/// The `jaula run` command [`run_jaula`] runs.
fn jaula_command(repo: &Path, args: &[&str], command: &[&str]) -> Command {
    let mut flags: Vec<&str> = Vec::new();
    let mut resolve: Vec<String> = Vec::new();
    let mut fallback = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--network-resolve" => resolve.push(format!("{:?}", rest.next().unwrap())),
            "--network-fallback" => fallback = true,
            other => flags.push(other),
        }
    }
    let mut cmd = Command::new(jaula());
    cmd.current_dir(repo).arg("run").args(&flags);
    if !resolve.is_empty() || fallback {
        let config = repo.join("jaula-test-config.toml");
        std::fs::write(
            &config,
            format!(
                "[network]\nresolve = [{}]\nnone_without_namespace = {fallback}\n",
                resolve.join(", ")
            ),
        )
        .unwrap();
        cmd.arg("--config").arg(&config);
    }
    cmd.arg("--").args(command);
    cmd
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn probe(repo: &Path, args: &[&str], servers: &HostServers) -> (Output, String) {
    let tcp = servers.tcp_port().to_string();
    let udp = servers.udp_port().to_string();
    let out = run_jaula(repo, args, &["python3", "-c", PROBE, &tcp, &udp]);
    let text = stdout(&out);
    (out, text)
}

fn none_blocks(args: &[&str]) {
    if !tools_or_skip() {
        return;
    }
    let (_dir, root) = scratch("net-none");
    let servers = HostServers::new();
    let (out, text) = probe(&root, args, &servers);
    assert!(out.status.success(), "{args:?}: {out:?}");
    assert_says(&text, &["tcp=fail", "dns=fail"], format!("{args:?}"));
    assert!(!servers.tcp_reached(), "{args:?}: TCP reached the host");
    assert!(!servers.udp_reached(), "{args:?}: UDP reached the host");
}

#[test]
fn control_host_mode_reaches_the_loopback_servers() {
    // Without this, the `none` and `allow` tests below could pass for a broken probe.
    if !tools_or_skip() {
        return;
    }
    let (_dir, root) = scratch("net-host");
    let servers = HostServers::new();
    let (out, text) = probe(&root, &["--network", "host"], &servers);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("tcp=ok"), "{text}");
    assert!(servers.tcp_reached());
    assert!(servers.udp_reached());
}

#[test]
fn none_bwrap_blocks_tcp_udp_and_dns() {
    none_blocks(&["--backend", "bwrap", "--network", "none"]);
}

#[test]
fn none_landlock_namespace_blocks_tcp_udp_and_dns() {
    none_blocks(&["--backend", "landlock", "--network", "none"]);
}

#[test]
fn none_landlock_fallback_without_namespace_blocks_tcp_udp_and_dns() {
    none_blocks(&[
        "--backend",
        "landlock",
        "--network",
        "none",
        "--network-fallback",
    ]);
    // The fallback's own mark: no IP socket at all, while unix sockets still work.
    let (_dir, root) = scratch("net-fallback");
    let out = run_jaula(
        &root,
        &["--backend", "landlock", "--network", "none", "--network-fallback"],
        &[
            "python3",
            "-c",
            "import socket\nsocket.socket(socket.AF_UNIX)\ntry:\n socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n print('inet=ok')\nexcept OSError as e:\n print('inet=fail:%d' % e.errno)",
        ],
    );
    assert_eq!(
        stdout(&out).trim(),
        format!("inet=fail:{}", libc::EAFNOSUPPORT)
    );
}

#[test]
fn none_keeps_the_cages_own_loopback() {
    if !tools_or_skip() {
        return;
    }
    let (_dir, root) = scratch("net-lo");
    let script = "import socket\nl=socket.socket(); l.bind(('127.0.0.1',0)); l.listen()\n\
                  c=socket.create_connection(l.getsockname()); print('lo=ok')";
    for backend in BACKENDS {
        let out = run_jaula(
            &root,
            &["--backend", backend, "--network", "none"],
            &["python3", "-c", script],
        );
        assert_eq!(stdout(&out).trim(), "lo=ok", "{backend}: {out:?}");
    }
}

/// An upstream HTTP server on the host's loopback: answers every request with a body
/// naming the request line it saw.
fn http_upstream() -> SocketAddr {
    jaula_testkit::net::http_upstream("upstream saw ")
}

struct AllowRun {
    out: Output,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// The owner's statement that opens the loopback upstreams to `allowed.test`.
const LOOPBACK_STATED: [&str; 2] = ["--allow-address", "127.0.0.1"];

fn allow_run(backend: &str, upstream: SocketAddr, script: &str, extra: &[&str]) -> AllowRun {
    let mut all = LOOPBACK_STATED.to_vec();
    all.extend_from_slice(extra);
    allow_run_unstated(backend, upstream, script, &all)
}

/// As [`allow_run`] without `--allow-address`: the proxy must refuse the loopback.
fn allow_run_unstated(
    backend: &str,
    upstream: SocketAddr,
    script: &str,
    extra: &[&str],
) -> AllowRun {
    let (mut cmd, dir, log) = allow_command(backend, upstream, script, extra);
    AllowRun {
        out: cmd.output().unwrap(),
        log,
        _dir: dir,
    }
}

/// The command [`allow_run_unstated`] runs, in a new scratch repo, with the path of its
/// decision log.
fn allow_command(
    backend: &str,
    upstream: SocketAddr,
    script: &str,
    extra: &[&str],
) -> (Command, tempfile::TempDir, PathBuf) {
    let (dir, root) = scratch("net-allow");
    let log = root.join("decisions.jsonl");
    let resolve_a = format!("allowed.test={upstream}");
    let resolve_b = format!("blocked.test={upstream}");
    let mut args = vec![
        "--backend",
        backend,
        "--network",
        "allow",
        "--allow-domain",
        "allowed.test",
        "--network-resolve",
        &resolve_a,
        "--network-resolve",
        &resolve_b,
        "--log",
        log.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let cmd = jaula_command(&root, &args, &["sh", "-c", script]);
    (cmd, dir, log)
}

#[test]
fn allow_admits_the_allowed_name_over_http_and_connect_and_403s_the_rest() {
    if !tools_or_skip() {
        return;
    }
    let upstream = http_upstream();
    for backend in BACKENDS {
        let script = "printf 'env=%s %s\\n' \"$HTTP_PROXY\" \"$https_proxy\"; \
             printf 'http=%s\\n' \"$(curl -sS http://allowed.test/a?b=1)\"; \
             printf 'connect=%s\\n' \"$(curl -sS -p http://allowed.test:443/t)\"; \
             printf 'denied=%s\\n' \"$(curl -sS -w ' %{http_code}' http://blocked.test/)\"; \
             printf 'denied_connect=%s\\n' \"$(curl -sS -p http://blocked.test:443/ 2>&1)\"";
        let r = allow_run(backend, upstream, script, &[]);
        let text = stdout(&r.out);
        assert!(r.out.status.success(), "{backend}: {:?}", r.out);
        assert_says(
            &text,
            &[
                "env=http://127.0.0.1:3128 http://127.0.0.1:3128",
                "http=upstream saw GET /a?b=1 HTTP/1.1",
                "connect=upstream saw GET /t HTTP/1.1",
                "denied=jaula: network: GET to blocked.test:80 blocked by rule: not in the allow list\n 403",
                "denied_connect=",
                "403",
            ],
            backend,
        );
        let stderr = String::from_utf8_lossy(&r.out.stderr);
        assert!(
            stderr.contains("jaula: network: blocked 2 request(s) to 1 host(s): blocked.test (2)"),
            "{backend}: {stderr}"
        );
        let log = std::fs::read_to_string(&r.log).unwrap();
        let records: Vec<serde_json::Value> = log
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let summary: Vec<(String, u64, String, String)> = records
            .iter()
            .map(|r| {
                (
                    r["host"].as_str().unwrap().to_owned(),
                    r["port"].as_u64().unwrap(),
                    r["decision"].as_str().unwrap().to_owned(),
                    r["rule"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "allowed.test".into(),
                    80,
                    "allow".into(),
                    "allow-domain allowed.test".into()
                ),
                (
                    "allowed.test".into(),
                    443,
                    "allow".into(),
                    "allow-domain allowed.test".into()
                ),
                (
                    "blocked.test".into(),
                    80,
                    "deny".into(),
                    "not in the allow list".into()
                ),
                (
                    "blocked.test".into(),
                    443,
                    "deny".into(),
                    "not in the allow list".into()
                ),
            ],
            "{backend}"
        );
    }
}

/// A rebinding attack: a host-side name for an allowed host points at the host's own
/// loopback. Without the owner's statement the proxy refuses it for plain HTTP and for
/// CONNECT, logs why, and the loopback server never sees a connection; with
/// `--allow-address 127.0.0.1` the same name is admitted.
#[test]
fn allow_refuses_an_allowed_name_resolving_to_the_hosts_loopback_unless_stated() {
    if !tools_or_skip() {
        return;
    }
    let script =
        "printf 'http=%s\\n' \"$(curl -sS -m 30 -w ' %{http_code}' http://allowed.test/x)\"; \
         printf 'connect=%s\\n' \"$(curl -sS -m 30 -p http://allowed.test:443/t 2>&1)\"";
    let upstream = http_upstream();
    for backend in BACKENDS {
        let servers = HostServers::new();
        let target = SocketAddr::from(([127, 0, 0, 1], servers.tcp_port()));
        let r = allow_run_unstated(backend, target, script, &[]);
        let text = stdout(&r.out);
        assert!(r.out.status.success(), "{backend}: {:?}", r.out);
        assert!(
            text.contains(
                "http=jaula: network: GET to allowed.test:80 allowed by rule: allow-domain \
                 allowed.test, but refused: address 127.0.0.1 is loopback"
            ) && text.contains(" 403\n"),
            "{backend}: {text}"
        );
        assert_says(&text, &["connect=", "403"], backend);
        assert!(
            !servers.tcp_reached(),
            "{backend}: the loopback server saw a connection"
        );
        let stderr = String::from_utf8_lossy(&r.out.stderr);
        assert!(
            stderr.contains(
                "jaula: network: refused 2 connection(s) to non-public addresses (see \
                 --allow-address): allowed.test -> 127.0.0.1 (loopback) (2)"
            ),
            "{backend}: {stderr}"
        );
        assert!(!stderr.contains("blocked"), "{backend}: {stderr}");
        let log = std::fs::read_to_string(&r.log).unwrap();
        let records: Vec<serde_json::Value> = log
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 2, "{backend}: {log}");
        for (record, (method, port)) in records.iter().zip([("GET", 80), ("CONNECT", 443)]) {
            assert_eq!(record["method"], method, "{backend}: {log}");
            assert_eq!(record["host"], "allowed.test", "{backend}: {log}");
            assert_eq!(record["port"], port, "{backend}: {log}");
            assert_eq!(record["decision"], "deny", "{backend}: {log}");
            assert_eq!(record["rule"], "address 127.0.0.1 is loopback");
            assert_eq!(record["address"], "127.0.0.1", "{backend}: {log}");
            assert_eq!(record["reason"], "loopback", "{backend}: {log}");
        }

        // The owner's explicit statement admits the same name to the same loopback.
        let r = allow_run(backend, upstream, script, &[]);
        let text = stdout(&r.out);
        assert!(r.out.status.success(), "{backend}: {:?}", r.out);
        assert_says(
            &text,
            &[
                "http=upstream saw GET /x HTTP/1.1 200",
                "connect=upstream saw GET /t HTTP/1.1",
            ],
            backend,
        );
        let log = std::fs::read_to_string(&r.log).unwrap();
        assert!(
            log.lines().all(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["decision"] == "allow" && v["address"] == "127.0.0.1"
            }),
            "{backend}: {log}"
        );
        assert!(
            !String::from_utf8_lossy(&r.out.stderr).contains("refused"),
            "{backend}: {:?}",
            r.out
        );
    }
}

/// `--allow-domain localhost` is the owner's statement for loopback under that name
/// only: `localhost` reaches the host's loopback server, while `allowed.test`, mapped to
/// the same server, stays refused.
#[test]
fn allow_localhost_entry_opens_loopback_for_localhost_only() {
    if !tools_or_skip() {
        return;
    }
    let upstream = http_upstream();
    let resolve_localhost = format!("localhost={upstream}");
    let script =
        "printf 'localhost=%s\\n' \"$(curl -sS -m 30 -w ' %{http_code}' http://localhost/l)\"; \
         printf 'named=%s\\n' \"$(curl -sS -m 30 -w ' %{http_code}' http://allowed.test/n)\"";
    for backend in BACKENDS {
        let r = allow_run_unstated(
            backend,
            upstream,
            script,
            &[
                "--allow-domain",
                "localhost",
                "--network-resolve",
                &resolve_localhost,
            ],
        );
        let text = stdout(&r.out);
        assert!(r.out.status.success(), "{backend}: {:?}", r.out);
        assert_says(
            &text,
            &[
                "localhost=upstream saw GET /l HTTP/1.1 200",
                "refused: address 127.0.0.1 is loopback",
                " 403\n",
            ],
            backend,
        );
    }
}

#[test]
fn allow_gives_a_process_that_ignores_the_proxy_no_network() {
    if !tools_or_skip() {
        return;
    }
    let upstream = http_upstream();
    for backend in BACKENDS {
        let servers = HostServers::new();
        // The upstream itself, directly, with the proxy variables ignored.
        let script = format!(
            "curl -sS --noproxy '*' -m 10 http://{upstream}/ >/dev/null 2>&1; echo direct=$?; \
             python3 -c '{}' {} {}",
            PROBE.replace('\'', "\"").trim(),
            servers.tcp_port(),
            servers.udp_port()
        );
        let r = allow_run(backend, upstream, &script, &[]);
        let text = stdout(&r.out);
        assert!(r.out.status.success(), "{backend}: {:?}", r.out);
        assert_says(&text, &["direct=7", "tcp=fail", "dns=fail"], backend);
        assert!(!servers.tcp_reached(), "{backend}: TCP reached the host");
        assert!(!servers.udp_reached(), "{backend}: UDP reached the host");
    }
}

#[test]
fn allow_mirrors_exit_status_and_signals_and_ends_with_the_cage() {
    if !tools_or_skip() {
        return;
    }
    let upstream = http_upstream();
    for backend in BACKENDS {
        left_behind_does_not_keep_jaula(backend, upstream);
        // Natively jaula's child is the command itself and its signal is mirrored as a
        // signal; bubblewrap reports a killed child as exit 128+N, as it does without
        // the proxy, and jaula mirrors that.
        let r = allow_run(backend, upstream, "kill -TERM $$", &[]);
        let (signal, code) = (r.out.status.signal(), r.out.status.code());
        match backend {
            "bwrap" => assert_eq!(code, Some(128 + libc::SIGTERM), "{:?}", r.out),
            _ => assert_eq!(signal, Some(libc::SIGTERM), "{backend}: {:?}", r.out),
        }
    }
}

/// A background process left behind does not keep jaula (and its proxy) alive: jaula
/// leaves with the shell's status while `cat` still waits on a FIFO that nobody has
/// opened for writing. The test then writes a line into the FIFO, which `cat` copies to
/// the output it inherited: reading it proves `cat` outlived jaula. (It opens nothing for
/// writing: once the supervisor is gone, such a call of a process left behind fails, see
/// docs/security.md, "Escape by proxy: host sockets". Under bwrap, bubblewrap's init also holds the output
/// pipes until it ends.)
fn left_behind_does_not_keep_jaula(backend: &str, upstream: SocketAddr) {
    use std::io::Write;
    use std::process::Stdio;
    let (mut cmd, dir, _log) =
        allow_command(backend, upstream, "cat ./hold & exit 7", &LOOPBACK_STATED);
    let fifo = dir.path().join("hold");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(7), "{backend}: {status}");
    // Blocks until `cat` has the FIFO open for reading; closing it ends `cat`.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .unwrap()
        .write_all(b"done\n")
        .unwrap();
    let rest = read_all(child.stdout.take().unwrap());
    assert_eq!(rest, "done\n", "{backend}");
}

#[test]
fn allow_refuses_where_no_namespace_can_be_made() {
    let (_dir, root) = scratch("net-refuse");
    let out = Command::new(jaula())
        .current_dir(&root)
        .env("CITY_CAGE_BWRAP", "0")
        .args([
            "run",
            "--backend",
            "bwrap",
            "--network",
            "allow",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a network namespace"));
}

#[test]
fn bad_patterns_and_misplaced_lists_are_usage_errors() {
    let (_dir, root) = scratch("net-usage");
    let unwanted_log = root.join("never.jsonl");
    let unwanted_log = unwanted_log.to_str().unwrap();
    // Each row: the flags (`LOG` standing for the log that must not be created), and what
    // the refusal says.
    for (flags, needle) in [
        (
            "--network none --no-socket-gate --log LOG",
            "needs the socket gate",
        ),
        (
            "--network host --no-socket-gate --network-log LOG",
            "--log with --network host needs the socket gate",
        ),
        ("--network allow --allow-domain *.com", "public suffix"),
        ("--network allow --allow-domain *", "every host"),
        ("--network allow --deny-domain https://x.example", "scheme"),
        ("--network allow --allow-domain x.example/p", "path"),
        ("--network allow --allow-domain x.example:443", "port"),
        ("--network allow --allow-preset cobol", "unknown preset"),
        ("--network none --allow-domain x.example", "--network allow"),
        ("--allow-preset github", "--network allow"),
        (
            "--network none --allow-address 127.0.0.1",
            "--network allow",
        ),
        (
            "--network allow --allow-address localhost",
            "not an IP address",
        ),
        ("--network allow --allow-address 10.0.0.1/8", "host bits"),
        (
            "--network allow --allow-address 0.0.0.0/0",
            "most of the address space",
        ),
    ] {
        let args: Vec<&str> = flags
            .split_whitespace()
            .map(|word| if word == "LOG" { unwanted_log } else { word })
            .collect();
        let out = run_jaula(&root, &args, &["true"]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(
            !Path::new(unwanted_log).exists(),
            "{args:?}: a refused --log was created"
        );
    }
}

#[test]
fn check_reports_the_network_mode() {
    let out = Command::new(jaula()).arg("check").output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("network: host (default"), "{text}");
}

/// What a helper left running does once released, with `jaula run` gone: fetch through
/// the proxy (the cage's `HTTP_PROXY`, inherited) and write down the answer.
#[cfg(target_os = "linux")]
const LATE_HELPER: &str = r#"
read word < in.fifo
curl -sS -m 30 http://allowed.test/late > late.txt 2>&1
echo done > out.fifo
read word < in.fifo
"#;

/// The proxy's own process for the run in `dir`: named `jaula-proxy`, working in `dir`.
#[cfg(target_os = "linux")]
fn proxy_process_in(dir: &Path) -> Vec<i32> {
    let mut found = Vec::new();
    for (pid, proc_dir) in jaula_testkit::proc_pids() {
        let comm = std::fs::read_to_string(proc_dir.join("comm")).unwrap_or_default();
        let cwd = std::fs::read_link(proc_dir.join("cwd")).ok();
        if comm.trim_end() == "jaula-proxy" && cwd.as_deref() == Some(dir) {
            found.push(pid);
        }
    }
    found
}

/// Under `--network allow` the proxy lives as long as the cage's processes: a helper the
/// command starts detached fetches through it after `jaula run` has left with the
/// command's status and its output has ended; the proxy process leaves once the helper
/// has. (bubblewrap runs with `--no-pid-ns`: in a PID namespace of the cage's own its init
/// holds the caller's output while a helper lives, docs/security.md.)
// pidfds and the socket gate's lifetime are Linux's.
#[cfg(target_os = "linux")]
#[test]
fn allow_serves_a_helper_left_running_after_jaula_has_left() {
    use std::process::Stdio;
    use std::sync::{Arc, Mutex};
    if !tools_or_skip() {
        return;
    }
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let upstream = {
        let seen = seen.clone();
        jaula_testkit::net::http_upstream_with(move |s| {
            seen.lock().unwrap().push(s.line.clone());
            format!("upstream saw {}", s.line)
        })
    };
    for (backend, flags) in [("landlock", &[][..]), ("bwrap", &["--no-pid-ns"][..])] {
        let mut extra = LOOPBACK_STATED.to_vec();
        extra.extend_from_slice(flags);
        let (mut cmd, dir, log) = allow_command(
            backend,
            upstream,
            "setsid /bin/sh helper.sh </dev/null >/dev/null 2>&1 & echo started; exit 7",
            &extra,
        );
        let _keep = dir;
        let root = std::fs::canonicalize(cmd.get_current_dir().unwrap()).unwrap();
        std::fs::write(root.join("helper.sh"), LATE_HELPER).unwrap();
        jaula_testkit::make_fifos(&root, &["in.fifo", "out.fifo"]);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Both ends of the caller's output reach EOF while the helper still waits on its
        // FIFO, which nothing has opened yet.
        let out = read_all(child.stdout.take().unwrap());
        let err = read_all(child.stderr.take().unwrap());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(7), "{backend}: {status} {err}");
        assert_eq!(out, "started\n", "{backend}: {err}");
        let proxies = proxy_process_in(&root);
        assert_eq!(proxies.len(), 1, "{backend}: no proxy process left: {err}");
        let proxy = rustix::process::pidfd_open(
            rustix::process::Pid::from_raw(proxies[0]).unwrap(),
            rustix::process::PidfdFlags::empty(),
        )
        .unwrap();

        // Released: the helper fetches through the proxy, with jaula gone.
        std::fs::write(root.join("in.fifo"), "go\n").unwrap();
        assert_eq!(read_fifo(&root.join("out.fifo")), "done\n", "{backend}");
        let late = std::fs::read_to_string(root.join("late.txt")).unwrap();
        assert_eq!(late, "upstream saw GET /late HTTP/1.1", "{backend}");
        assert!(
            seen.lock()
                .unwrap()
                .iter()
                .any(|l| l == "GET /late HTTP/1.1"),
            "{backend}: the upstream never saw the helper's request"
        );
        // The proxy's --log recorded it too, after jaula had left.
        let recorded = std::fs::read_to_string(&log).unwrap();
        assert!(
            recorded.lines().any(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["host"] == "allowed.test" && v["decision"] == "allow"
            }),
            "{backend}: {recorded}"
        );
        // The proxy still runs while the helper does (a pidfd polls readable once the
        // process has ended; a zero timeout asks for the state now, no waiting).
        let mut fds = [rustix::event::PollFd::new(
            &proxy,
            rustix::event::PollFlags::IN,
        )];
        let ready =
            rustix::event::poll(&mut fds, Some(&rustix::event::Timespec::default())).unwrap();
        assert_eq!(
            ready, 0,
            "{backend}: the proxy ended while the helper lived"
        );

        // The helper ends; the proxy's process follows (this waits on its pidfd).
        std::fs::write(root.join("in.fifo"), "bye\n").unwrap();
        rustix::event::poll(&mut fds, None).unwrap();
        assert!(
            proxy_process_in(&root).is_empty(),
            "{backend}: a proxy process remains"
        );
    }
}
