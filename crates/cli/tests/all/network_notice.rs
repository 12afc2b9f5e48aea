//! A closed network is visible: `jaula run --network none|allow` says in one stderr line
//! what the mode lets through and how to open it, and at exit reminds the user when the
//! command failed with the network closed (`none`) or failed without sending the proxy a
//! single request (`allow`: a client that ignores the proxy variables). Live, through each
//! backend (and natively with and without the socket gate, whose supervisor prints it).

use crate::common;

use std::process::{Command, Output};

use common::{jaula, scratch, skip_or_fail};

fn run(args: &[&str], script: &str) -> Output {
    let (_keep, root) = scratch("network-notice-");
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    Command::new(jaula())
        .arg("run")
        .args(args)
        .arg("--repo")
        .arg(&repo)
        .args(["--", "/bin/sh", "-c", script])
        .current_dir(&repo)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn cages(backend: &str) -> bool {
    let out = run(&["--backend", backend, "--network", "none"], "true");
    if out.status.success() {
        return true;
    }
    skip_or_fail(&format!(
        "jaula run --backend {backend} --network none cannot cage here: {}",
        stderr(&out)
    ));
    false
}

#[test]
fn network_none_says_so_at_start_and_after_a_failure() {
    for extra in [
        &["--backend", "bwrap"][..],
        &["--backend", "landlock"],
        &["--backend", "landlock", "--no-socket-gate"],
    ] {
        if !cages(extra[1]) {
            continue;
        }
        let mut args = extra.to_vec();
        args.extend(["--network", "none"]);
        let failed = run(&args, "exit 3");
        assert_eq!(failed.status.code(), Some(3), "{extra:?}");
        let text = stderr(&failed);
        let starts = jaula_testkit::output::lines_starting(
            &text,
            "jaula: network none: the command has only",
        )
        .len();
        assert_eq!(starts, 1, "{extra:?}: one start line:\n{text}");
        assert!(text.contains("--network host"), "{extra:?}: {text}");
        let notes = text
            .lines()
            .filter(|l| l.contains("the command failed (exit 3) with the network closed"))
            .count();
        assert_eq!(notes, 1, "{extra:?}: one exit note:\n{text}");

        let ok = run(&args, "true");
        assert!(ok.status.success());
        assert!(
            !stderr(&ok).contains("the command failed"),
            "{extra:?}: a note after success: {}",
            stderr(&ok)
        );
    }
}

#[test]
fn network_allow_names_a_client_that_never_asked_the_proxy() {
    if !cages("bwrap") && !cages("landlock") {
        return;
    }
    let failed = run(
        &["--network", "allow", "--allow-domain", "allowed.example"],
        "exit 4",
    );
    assert_eq!(failed.status.code(), Some(4), "{}", stderr(&failed));
    let text = stderr(&failed);
    assert!(
        text.contains("jaula: network allow: only through jaula's proxy"),
        "{text}"
    );
    assert!(text.contains("sent no request through the proxy"), "{text}");
    let ok = run(
        &["--network", "allow", "--allow-domain", "allowed.example"],
        "true",
    );
    assert!(ok.status.success());
    assert!(!stderr(&ok).contains("sent no request"), "{}", stderr(&ok));
}

#[test]
fn network_host_says_nothing() {
    let out = run(&[], "exit 2");
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr(&out).contains("jaula: network"), "{}", stderr(&out));
}

/// Under `none` the exit summary names the addresses the cage tried, as the socket gate's
/// supervisor saw its connects fail in the empty namespace: a non-blocking connect
/// (curl), a blocking one (python, finished on a supervisor worker) and a UDP connect to
/// port 53, which is how glibc reaches its resolver (named as a lookup). The addresses are
/// TEST-NET ones, and the namespace has no route: nothing leaves the machine.
#[test]
fn network_none_names_the_addresses_it_refused() {
    for tool in ["curl", "python3"] {
        if Command::new(tool).arg("--version").output().is_err() {
            skip_or_fail(&format!("{tool} is not installed"));
            return;
        }
    }
    let script = "curl -sS -m 5 http://192.0.2.7:8080/ ; \
         python3 -c 'import socket; socket.create_connection((\"192.0.2.8\", 9))' ; \
         python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect((\"192.0.2.9\", 53))' ; \
         exit 0";
    for backend in ["bwrap", "landlock"] {
        if !cages(backend) {
            continue;
        }
        let out = run(&["--backend", backend, "--network", "none"], script);
        assert!(out.status.success(), "{backend}: {out:?}");
        let text = stderr(&out);
        let lines = jaula_testkit::output::lines_starting(
            &text,
            "jaula: network none refused connections to: ",
        );
        assert_eq!(
            lines,
            [
                "jaula: network none refused connections to: 192.0.2.7:8080, 192.0.2.8:9, \
              192.0.2.9:53 (DNS server: a name lookup)"
            ],
            "{backend}: {text}"
        );
    }
}
