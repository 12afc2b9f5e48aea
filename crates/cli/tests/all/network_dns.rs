//! The DNS stub inside the cage's network namespace, live, on both backends, as root and
//! as uid 65534.
//!
//! - `none`: a lookup is answered NXDOMAIN at once (an answer arrives: no timeout), which
//!   `getaddrinfo` reports as final (`EAI_NONAME`, not the retried `EAI_AGAIN`), and the
//!   name appears in the exit summary and in the `--log` file with rule `network none`;
//!   a name the cage did not look up appears in neither, and the nameserver's port 53 is
//!   not also reported as a refused connection. A connect to the host resolver's own
//!   address (beyond the stub's UDP port 53) is refused at once and named and logged.
//! - `allow`: an allowed name resolves to the steering address 127.0.2.1; a refused one
//!   fails, and is named in the proxy's summary and `--log` with its rule.
//!
//! Every packet stays in the namespace jaula made for the cage: the host's nameserver
//! address is the stub's own there, and nothing is sent from the host's namespace.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{
    bare_tree, cage_here, chown_tree, jaula, jaula_run, missing_tool, scratch, skip_or_fail,
    Backend, LoggedRun, User,
};

const BACKENDS: [Backend; 2] = [Backend::Landlock, Backend::Bwrap];
const USERS: [User; 2] = [User::Root, User::Nobody];

/// Sends one A query for pypi.org straight to the first nameserver of the cage's
/// resolv.conf and prints the answer's rcode: an answer at all (rather than the socket
/// timeout) is the stub answering; rcode 3 is NXDOMAIN.
const ASK_THE_STUB: &str = r#"
import socket, struct
ns = [l.split()[1] for l in open('/etc/resolv.conf') if l.startswith('nameserver')]
ns = (ns or ['127.0.0.1'])[0]
q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b'\x04pypi\x03org\x00' + struct.pack('>HH', 1, 1)
s = socket.socket(socket.AF_INET6 if ':' in ns else socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(120)
s.sendto(q, (ns, 53))
r = s.recv(512)
print('stub-answer rcode=%d id=%04x' % (r[3] & 15, struct.unpack('>H', r[:2])[0]))
"#;

type Run = LoggedRun;

fn run(user: User, backend: Backend, network: &[&str], script: &str) -> Run {
    let (dir, root, home, repo) = bare_tree("net-dns-");
    chown_tree(&root, user.uid());
    let log = root.join("refusals.jsonl");
    let mut cmd = jaula_run(backend, &home, &repo);
    cmd.args(network)
        .arg("--log")
        .arg(&log)
        .args(["--", "/bin/sh", "-c", script]);
    user.apply(&mut cmd);
    LoggedRun {
        out: cmd.output().unwrap(),
        log,
        _dir: dir,
    }
}

fn ready(user: User, backend: Backend) -> bool {
    if let Some(tool) = missing_tool(&["getent", "python3"]) {
        skip_or_fail(&format!("{tool} is not installed"));
        return false;
    }
    cage_here(backend, user)
}

/// `script` with the environment variable `name` holding the Python program `program`
/// (its single quotes made double), for `python3 -c "$NAME"` in the script.
fn with_python(name: &str, program: &str, script: &str) -> String {
    format!(
        "{name}='{}'; export {name}; {script}",
        program.replace('\'', "\"")
    )
}

/// Runs `script` with the `network` flags on every backend, as every identity this host
/// cages as, and hands each run, which must have succeeded, to `check` with a label for
/// its messages and the run's stdout and stderr.
fn on_each_cage(network: &[&str], script: &str, check: impl Fn(&str, &Run, &str, &str)) {
    for user in USERS {
        for backend in BACKENDS {
            if !ready(user, backend) {
                continue;
            }
            let what = format!("{} as uid {}", backend.name(), user.uid());
            let r = run(user, backend, network, script);
            let (out, err) = (r.stdout(), r.stderr());
            assert!(r.out.status.success(), "{what}: {err}");
            check(&what, &r, &out, &err);
        }
    }
}

fn summary_lines<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    jaula_testkit::output::lines_starting(text, prefix)
}

#[test]
fn network_none_answers_lookups_nxdomain_and_names_them() {
    let script = "python3 -c \"$ASK\" ; getent hosts pypi.org ; echo getent=$? ; \
         python3 -c 'import socket\ntry:\n socket.getaddrinfo(\"files.pythonhosted.org\", 443)\nexcept socket.gaierror as e:\n print(\"gai-failed\", \"EAI_NONAME\" if e.errno == socket.EAI_NONAME else \"EAI_AGAIN\" if e.errno == socket.EAI_AGAIN else e.errno)' ; \
         exit 0";
    on_each_cage(
        &["--network", "none"],
        &with_python("ASK", ASK_THE_STUB, script),
        |what, r, out, err| {
            assert!(
                out.contains("stub-answer rcode=3 id=1234"),
                "{what}: the stub did not answer NXDOMAIN:\n{out}\n{err}"
            );
            assert!(out.contains("getent=2"), "{what}: {out}");
            // Final, not temporary: a client gives up at once instead of retrying.
            assert!(out.contains("gai-failed EAI_NONAME\n"), "{what}: {out}");
            let lines = summary_lines(err, "jaula: network none refused ");
            assert_eq!(lines.len(), 1, "{what}: one summary line:\n{err}");
            let line = lines[0];
            assert!(
                line.starts_with("jaula: network none refused DNS lookups of "),
                "{what}: {line}"
            );
            assert!(line.contains("pypi.org (A"), "{what}: {line}");
            assert!(line.contains("files.pythonhosted.org (A"), "{what}: {line}");
            // Control: a name nobody looked up is not named, and the nameserver is not
            // reported a second time as a refused connection.
            assert!(!line.contains("example.org"), "{what}: {line}");
            assert!(!line.contains("DNS server"), "{what}: {line}");

            let log = r.log();
            let dns: Vec<_> = log.iter().filter(|v| v["method"] == "DNS").collect();
            assert!(
                dns.iter().any(|v| v["host"] == "pypi.org"
                    && v["qtype"] == "A"
                    && v["decision"] == "deny"
                    && v["rule"] == "network none"
                    && v["port"] == 53),
                "{what}: {log:?}"
            );
            assert!(
                dns.iter().any(|v| v["host"] == "files.pythonhosted.org"),
                "{what}: {log:?}"
            );
            assert!(
                log.iter().all(|v| v["host"] != "example.org"),
                "{what}: {log:?}"
            );
        },
    );
}

/// The first nameserver of the host's resolv.conf, which the cage reads too (none listed
/// reads as the local host, as glibc has it); `None` for one the stub does not serve
/// (an IPv6 address other than `::1`).
fn host_resolver() -> Option<std::net::IpAddr> {
    let text = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let first = text
        .lines()
        .filter_map(|l| l.strip_prefix("nameserver"))
        .find_map(|rest| rest.trim().parse::<std::net::IpAddr>().ok());
    match first {
        None => Some(std::net::Ipv4Addr::LOCALHOST.into()),
        Some(std::net::IpAddr::V6(v6)) if !v6.is_loopback() => None,
        some => some,
    }
}

/// Connects, in the cage, to the first nameserver's address: TCP port 53 (DNS over TCP,
/// which the stub does not serve) blocking, and, when the address is not loopback on the
/// host, TCP port 8443 both non-blocking and blocking. Each prints its errno. First it
/// proves the address is the cage's own (a bind to it succeeds only where an interface
/// holds it, which in the empty namespace is the stub's `lo` alias), and connects nowhere
/// otherwise: nothing is ever sent toward the host's real resolver.
const CONNECT_TO_THE_RESOLVER: &str = r#"
import errno, socket, sys
ns = sys.argv[1]
fam = socket.AF_INET6 if ':' in ns else socket.AF_INET
try:
    socket.socket(fam, socket.SOCK_DGRAM).bind((ns, 0))
except OSError as e:
    print('not-local', e.errno)
    sys.exit(0)
def tcp(port, blocking):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setblocking(blocking)
    if blocking:
        s.settimeout(120)
    code = s.connect_ex((ns, port))
    print('%s:%d=%s' % ('blocking' if blocking else 'nonblocking', port, errno.errorcode.get(code, code)))
tcp(53, True)
if not socket.inet_pton(fam, ns).startswith(b'') and ns != '::1':
    tcp(8443, False)
    tcp(8443, True)
"#;

#[test]
fn network_none_names_and_logs_connects_to_the_hosts_resolver_address() {
    let Some(resolver) = host_resolver() else {
        eprintln!(
            "skipped: the host's first nameserver is an IPv6 address the stub does not serve"
        );
        return;
    };
    let outside = !resolver.is_loopback();
    let shown = match resolver {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    };
    let script = format!("python3 -c \"$PROBE\" {resolver} ; exit 0");
    on_each_cage(
        &["--network", "none"],
        &with_python("PROBE", CONNECT_TO_THE_RESOLVER, &script),
        |what, r, out, err| {
            assert!(
                !out.contains("not-local"),
                "{what}: the stub holds no {resolver}: {out}"
            );
            assert!(
                out.contains("blocking:53=ECONNREFUSED\n"),
                "{what}: {out}\n{err}"
            );
            let lines = summary_lines(err, "jaula: network none refused ");
            assert_eq!(lines.len(), 1, "{what}: one summary line:\n{err}");
            assert!(
                lines[0].contains(&format!("{shown}:53 (DNS server: a name lookup)")),
                "{what}: {}",
                lines[0]
            );
            let log = r.log();
            let connects: Vec<(String, u64)> = log
                .iter()
                .filter(|v| v["method"] == "connect" && v["rule"] == "network none")
                .map(|v| {
                    (
                        v["host"].as_str().unwrap_or("").to_owned(),
                        v["port"].as_u64().unwrap_or(0),
                    )
                })
                .collect();
            assert!(
                connects.contains(&(resolver.to_string(), 53)),
                "{what}: {log:?}"
            );
            if outside {
                // Refused at once, as any outside address is, whether or not the client
                // waits for its connect.
                assert!(
                    out.contains("nonblocking:8443=ENETUNREACH\n"),
                    "{what}: {out}"
                );
                assert!(out.contains("blocking:8443=ENETUNREACH\n"), "{what}: {out}");
                assert!(
                    lines[0].contains(&format!("{shown}:8443 (the host's DNS server)")),
                    "{what}: {}",
                    lines[0]
                );
                assert!(
                    connects.contains(&(resolver.to_string(), 8443)),
                    "{what}: {log:?}"
                );
            }
        },
    );
}

#[test]
fn network_none_names_no_lookup_when_none_was_made() {
    for backend in BACKENDS {
        if !ready(User::Root, backend) {
            continue;
        }
        let r = run(
            User::Root,
            backend,
            &["--network", "none"],
            "python3 -c 'import socket; socket.create_connection((\"192.0.2.8\", 9))' ; exit 0",
        );
        let err = r.stderr();
        assert!(r.out.status.success(), "{}: {err}", backend.name());
        assert_eq!(
            summary_lines(&err, "jaula: network none refused "),
            ["jaula: network none refused connections to: 192.0.2.8:9"],
            "{}: {err}",
            backend.name()
        );
        let log = r.log();
        assert_eq!(log.len(), 1, "{}: {log:?}", backend.name());
        assert_eq!(log[0]["method"], "connect");
        assert_eq!(log[0]["host"], "192.0.2.8");
        assert_eq!(log[0]["port"], 9);
        assert_eq!(log[0]["rule"], "network none");
    }
}

#[test]
fn network_allow_resolves_allowed_names_to_the_steering_address_and_refuses_the_rest() {
    let script = "getent ahostsv4 example.test ; echo ahosts=$? ; \
                  getent hosts refused.test ; echo refused=$? ; exit 0";
    on_each_cage(
        &["--network", "allow", "--allow-domain", "example.test"],
        script,
        |what, r, out, err| {
            assert!(
                out.lines()
                    .any(|l| l.starts_with("127.0.2.1") && l.contains("example.test")),
                "{what}: {out}\n{err}"
            );
            assert!(out.contains("ahosts=0"), "{what}: {out}");
            assert!(out.contains("refused=2"), "{what}: {out}");
            let blocked = summary_lines(err, "jaula: network: blocked ");
            assert_eq!(blocked.len(), 1, "{what}: {err}");
            assert!(blocked[0].contains(" refused.test ("), "{what}: {err}");
            assert!(!blocked[0].contains("example.test"), "{what}: {err}");

            let log = r.log();
            assert!(
                log.iter().any(|v| v["method"] == "DNS"
                    && v["host"] == "refused.test"
                    && v["decision"] == "deny"
                    && v["rule"] == "not in the allow list"),
                "{what}: {log:?}"
            );
            assert!(
                log.iter().any(|v| v["method"] == "DNS"
                    && v["host"] == "example.test"
                    && v["qtype"] == "A"
                    && v["decision"] == "allow"
                    && v["rule"] == "allow-domain example.test"),
                "{what}: {log:?}"
            );
        },
    );
}

#[test]
fn log_under_none_without_the_socket_gate_is_a_usage_error() {
    let (_dir, root) = scratch("net-dns-usage-");
    let log = root.join("never.jsonl");
    let out = Command::new(jaula())
        .current_dir(&root)
        .args(["run", "--network", "none", "--no-socket-gate", "--log"])
        .arg(&log)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the socket gate"));
    assert!(!Path::new(&log).exists());
}

/// The Landlock ABI this kernel speaks (0 without Landlock).
fn landlock_abi() -> i64 {
    i64::from(jaula_sandbox::landlock::probe().kernel.abi())
}

/// The stub lives in the socket gate's supervisor, the command's parent: the command
/// cannot signal it (a nested Landlock domain scopes its signals, ABI 6), so it cannot kill
/// the stub and lose the record; it still signals its own processes.
#[test]
fn the_command_cannot_signal_the_supervisor_that_holds_the_stub() {
    if landlock_abi() < 6 {
        skip_or_fail("Landlock signal scoping needs ABI 6 (Linux 6.12)");
        return;
    }
    let script = "kill -TERM $PPID ; echo parent=$? ; sleep 30 & kill $! ; echo own=$? ; \
                  getent hosts after.kill.test ; exit 0";
    on_each_cage(&["--network", "none"], script, |what, _, out, err| {
        assert!(out.contains("parent=1"), "{what}: {out}\n{err}");
        assert!(out.contains("own=0"), "{what}: {out}\n{err}");
        assert!(err.contains("after.kill.test (A"), "{what}: {err}");
    });
}
