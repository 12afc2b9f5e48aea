//! `jaula run --network allow`, live: an allowed name whose upstream refuses the
//! connection is a failure, not a refusal, everywhere it shows. The client gets `502`
//! with `x-jaula-upstream: connection-refused` (through the proxy variables, plain HTTP
//! and `CONNECT`) or a TLS `internal_error` alert (steered), never the `403` or
//! `access_denied` of a refusal; the exit summary lists it on a line of its own, naming
//! host, port and address; the log records `"decision":"failed"` with the reason. A
//! refused name in the same run keeps its own line and names its rule.
//!
//! The "upstream" is a port of the host's loopback with nothing listening (bound, then
//! closed), dialled by the proxy through the config key `network.resolve` with the
//! owner's `--allow-address 127.0.0.1`: nothing leaves the machine. Unreachable and
//! timed-out upstreams cannot be made without other addresses; their classification is
//! unit-tested (crates/proxy/src/upstream_tests.rs).

use crate::common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use common::{bare_tree, cage_here, chown_tree, skip_or_fail, Backend, LoggedRun, User};

const BACKENDS: [Backend; 2] = [Backend::Bwrap, Backend::Landlock];

/// A loopback port nothing listens on: bound, read, and closed again.
fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// `network.resolve` for the test names, readable by every test identity.
fn resolve_config(root: &Path, down: SocketAddr) -> PathBuf {
    let path = root.join("jaula-test-config.toml");
    std::fs::write(
        &path,
        format!("[network]\nresolve = [\"down.test={down}\", \"blocked.test={down}\"]\n"),
    )
    .unwrap();
    path
}

/// Through the proxy variables: plain HTTP (the proxy's answer, headers and body) and
/// HTTPS (`CONNECT`, whose answer curl shows only with `-v`); a refused name; then a
/// client that ignores the proxy variables, steered on port 443.
const SCRIPT: &str = "\
    curl -sS -m 30 -i http://down.test/h 2>&1 | tr -d '\\r' | sed 's/^/http: /'; \
    curl -sS -v -m 30 https://down.test/c 2>&1 | tr -d '\\r' \
        | grep -iE 'x-jaula-upstream|HTTP/1.1 [0-9]|tunnel failed' | sed 's/^/connect: /'; \
    curl -sS -m 30 -o /dev/null -w 'blocked: %{http_code}\\n' http://blocked.test/; \
    curl -sS -m 30 --noproxy '*' -k --resolve down.test:443:127.0.2.1 https://down.test/s \
        2>&1 | sed 's/^/steered: /'; \
    exit 0";

fn upstream_refuses(user: User) {
    if let Some(tool) = common::missing_tool(&["curl"]) {
        skip_or_fail(&format!("{tool} is not installed"));
        return;
    }
    for backend in BACKENDS {
        if !cage_here(backend, user) {
            continue;
        }
        let b = format!("{} {user:?}", backend.name());
        let (dir, root, home, repo) = bare_tree("net-upstream");
        let down = closed_port();
        let config = resolve_config(&root, down);
        let log = root.join("decisions.jsonl");
        chown_tree(&root, user.uid());
        let mut cmd =
            common::jaula_run_allowing(backend, (&home, &repo), "down.test", &config, &log);
        cmd.args(["--", "sh", "-c", SCRIPT]);
        user.apply(&mut cmd);
        let r = LoggedRun {
            out: cmd.output().unwrap(),
            log,
            _dir: dir,
        };
        let (out, err) = (r.stdout(), r.stderr());
        assert!(r.out.status.success(), "{b}: {err}");

        // The client: a gateway error saying what failed, never a refusal.
        assert!(
            out.contains("http: HTTP/1.1 502 Bad Gateway\n"),
            "{b}: {out}\n{err}"
        );
        assert!(
            out.contains("http: x-jaula-upstream: connection-refused\n"),
            "{b}: {out}"
        );
        assert!(
            out.contains(&format!(
                "http: jaula: network: GET to down.test:80 allowed by rule: allow-domain \
                 down.test, but the upstream could not be reached (not a refusal): {down}: \
                 connection refused"
            )),
            "{b}: {out}"
        );
        assert!(!out.contains("x-jaula-rule"), "{b}: {out}");
        assert!(
            out.contains("connect: < HTTP/1.1 502 Bad Gateway\n"),
            "{b}: {out}"
        );
        assert!(
            out.contains("connect: < x-jaula-upstream: connection-refused\n"),
            "{b}: {out}"
        );
        assert!(out.contains("blocked: 403\n"), "{b}: {out}");
        assert!(
            out.contains("steered: ") && out.contains("internal error"),
            "{b}: {out}"
        );
        assert!(!out.contains("access denied"), "{b}: {out}");

        // The summary at exit: refusals and failures on lines of their own.
        let lines = jaula_testkit::output::lines_starting(&err, "jaula: network: ");
        assert_eq!(
            lines,
            [
                "jaula: network: blocked 1 request(s) to 1 host(s): blocked.test (1)".to_owned(),
                "jaula: network: the rules that blocked them: not in the allow list (blocked.test)"
                    .to_owned(),
                format!(
                    "jaula: network: 3 allowed request(s) failed upstream (not refused by \
                     jaula): down.test:443 -> {down} (connection refused) (2) down.test:80 -> \
                     {down} (connection refused) (1)"
                ),
            ],
            "{b}: {err}"
        );
        assert!(!err.contains("sent no request"), "{b}: {err}");

        // The log: `failed` with the allow rule, the address and the reason.
        let records = r.log();
        let failed: Vec<_> = records
            .iter()
            .filter(|v| v["decision"] == "failed")
            .collect();
        assert_eq!(failed.len(), 3, "{b}: {records:?}");
        for v in &failed {
            assert_eq!(v["host"], "down.test", "{b}: {v}");
            assert_eq!(v["rule"], "allow-domain down.test", "{b}: {v}");
            assert_eq!(v["reason"], "connection-refused", "{b}: {v}");
            assert_eq!(v["address"], "127.0.0.1", "{b}: {v}");
            assert!(v["error"].as_str().is_some(), "{b}: {v}");
        }
        assert_eq!(
            failed.iter().filter(|v| v["via"] == "steered").count(),
            1,
            "{b}: {records:?}"
        );
        assert!(
            records.iter().any(|v| v["host"] == "blocked.test"
                && v["decision"] == "deny"
                && v["rule"] == "not in the allow list"),
            "{b}: {records:?}"
        );
        assert!(
            records
                .iter()
                .all(|v| v["decision"] != "allow" || v["method"] == "DNS"),
            "{b}: nothing was let through: {records:?}"
        );
    }
}

jaula_testkit::as_each_user!(
    upstream_refuses =>
    an_upstream_that_refuses_is_a_failure_not_a_refusal_as_root,
    an_upstream_that_refuses_is_a_failure_not_a_refusal_unprivileged
);
