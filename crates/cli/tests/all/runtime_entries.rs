//! The state home's `.runtime`, live, on both backends, as root and as uid 65534: a caged
//! window makes a file, a directory and a bound unix socket there (another caged process
//! connects to it), while `.runtime/broker` stays sealed (nothing made, written, moved or
//! read there) and `.runtime/cage`, jaula's own bookkeeping, stays unwritable.
//!
//! Natively `.runtime` is a directory Landlock must split (a grant on it would cover the
//! broker), so its new entries are made by the socket gate's supervisor, whose Landlock
//! domain has the directory whole (`Plan::gate_split`); `--no-socket-gate` keeps the split
//! and its deviation `split-dir-no-new-entries`, checked here too.

use crate::common;

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{cage_here, chown_tree, jaula_run, open_to_others, scratch, skip_or_fail};
use common::{Backend, User};

const TOKEN: &str = "token-secret-5f1c";
const PROFILE: &str = "profile-untouched";

/// The caged script: one line per attempt, `LABEL ok` or `LABEL refused ERRNO` (a read
/// prints what it got). The socket's peer is a second process of the cage.
const SCRIPT: &str = r#"
import os, socket, subprocess, sys
rt = sys.argv[1]
def attempt(label, f):
    try:
        got = f()
        print(label, "ok" if got is None else "ok " + str(got), flush=True)
        return True
    except OSError as e:
        print(label, "refused", e.errno, flush=True)
        return False
def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)
def read(path):
    with open(path) as f:
        return f.read().strip().replace("\n", "|")
attempt("file", lambda: write(rt + "/hub.log", "hub\n"))
attempt("append", lambda: write(rt + "/hub.log", "more\n", "a"))
attempt("file-read", lambda: read(rt + "/hub.log"))
attempt("dir", lambda: os.mkdir(rt + "/state"))
attempt("dir-file", lambda: write(rt + "/state/pid", "1\n"))
attempt("rename", lambda: os.rename(rt + "/state/pid", rt + "/pid"))
attempt("remove", lambda: os.unlink(rt + "/pid"))
srv = socket.socket(socket.AF_UNIX)
if attempt("bind", lambda: srv.bind(rt + "/hub.sock")):
    srv.listen(1)
    client = subprocess.Popen([sys.executable, "-c",
        "import socket, sys\n"
        "c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.sendall(b'ping')",
        rt + "/hub.sock"])
    conn, _ = srv.accept()
    print("peer", conn.recv(16).decode(), flush=True)
    print("client", client.wait(), flush=True)
attempt("broker-read", lambda: read(rt + "/broker/w1.token"))
attempt("broker-write", lambda: write(rt + "/broker/w1.token", "planted"))
attempt("broker-create", lambda: write(rt + "/broker/new.token", "planted"))
attempt("broker-mkdir", lambda: os.mkdir(rt + "/broker/d"))
attempt("broker-bind", lambda: socket.socket(socket.AF_UNIX).bind(rt + "/broker/s.sock"))
attempt("broker-rename", lambda: os.rename(rt + "/broker", rt + "/moved-broker"))
attempt("broker-tmpfile", lambda: os.close(os.open(rt + "/broker", os.O_TMPFILE | os.O_WRONLY, 0o600)))
attempt("cage-write", lambda: write(rt + "/cage/profile.sb", "planted", "a"))
attempt("cage-create", lambda: write(rt + "/cage/new.sb", "planted"))
attempt("cage-mkdir", lambda: os.mkdir(rt + "/cage/d"))
attempt("cage-bind", lambda: socket.socket(socket.AF_UNIX).bind(rt + "/cage/s.sock"))
attempt("cage-rename", lambda: os.rename(rt + "/cage", rt + "/moved-cage"))
attempt("cage-tmpfile", lambda: os.close(os.open(rt + "/cage", os.O_TMPFILE | os.O_WRONLY, 0o600)))
"#;

struct Tree {
    _keep: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    runtime: PathBuf,
}

fn tree(user: User) -> Tree {
    let (keep, root) = scratch("runtime-entries-");
    let home = root.join("home");
    let repo = home.join("src/repo");
    let runtime = home.join(".agents-city/.runtime");
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(runtime.join("broker")).unwrap();
    fs::create_dir_all(runtime.join("cage")).unwrap();
    fs::write(runtime.join("broker/w1.token"), TOKEN).unwrap();
    fs::write(runtime.join("cage/profile.sb"), PROFILE).unwrap();
    chown_tree(&root, user.uid());
    open_to_others(&root);
    Tree {
        _keep: keep,
        home,
        repo,
        runtime,
    }
}

fn run(backend: Backend, user: User, t: &Tree, extra: &[&str]) -> Output {
    let mut cmd = jaula_run(backend, &t.home, &t.repo);
    cmd.args(extra)
        .args(["--", "python3", "-c", SCRIPT])
        .arg(&t.runtime);
    user.apply(&mut cmd);
    cmd.output().unwrap()
}

/// The verdict line for `label` (everything after the label).
fn verdict(out: &Output, label: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label)?.strip_prefix(' '))
        .unwrap_or_else(|| {
            panic!(
                "no {label} line\nstdout:\n{stdout}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .to_owned()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The broker and the cage's bookkeeping are exactly as planted, whatever the cage said.
fn assert_sealed_and_protected_untouched(t: &Tree, context: &str) {
    assert_eq!(names(&t.runtime.join("broker")), ["w1.token"], "{context}");
    assert_eq!(
        fs::read_to_string(t.runtime.join("broker/w1.token")).unwrap(),
        TOKEN,
        "{context}"
    );
    // jaula's own evidence of the run (planting.jsonl), probe cache and the live cages'
    // records (live/) are its to write.
    let cage: Vec<String> = names(&t.runtime.join("cage"))
        .into_iter()
        .filter(|n| n != "planting.jsonl" && n != "bwrap-probe" && n != "live")
        .collect();
    assert_eq!(cage, ["profile.sb"], "{context}");
    assert_eq!(
        fs::read_to_string(t.runtime.join("cage/profile.sb")).unwrap(),
        PROFILE,
        "{context}"
    );
    assert!(!t.runtime.join("moved-broker").exists(), "{context}");
    assert!(!t.runtime.join("moved-cage").exists(), "{context}");
}

fn python_or_skip() -> bool {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        skip_or_fail("python3 is not installed");
        return false;
    }
    true
}

fn runtime_takes_new_entries(backend: Backend, user: User) {
    if !python_or_skip() || !cage_here(backend, user) {
        return;
    }
    let t = tree(user);
    let out = run(backend, user, &t, &[]);
    let context = format!(
        "{} as uid {}\nstdout:\n{}\nstderr:\n{}",
        backend.name(),
        user.uid(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{context}");

    // New entries of every kind, on the host.
    for label in ["file", "append", "dir", "dir-file", "rename", "remove"] {
        assert_eq!(verdict(&out, label), "ok", "{label}: {context}");
    }
    assert_eq!(
        fs::read_to_string(t.runtime.join("hub.log")).unwrap(),
        "hub\nmore\n"
    );
    assert!(t.runtime.join("state").is_dir(), "{context}");
    assert_eq!(names(&t.runtime.join("state")), Vec::<String>::new());
    assert!(!t.runtime.join("pid").exists(), "{context}");
    // Reading a new entry back is Landlock's `ancestor-snapshot` natively: `.runtime` is
    // an ancestor of the sealed broker, so it has read rules for the entries it held at
    // launch only (a read rule on it would cover the broker). The view has no such limit.
    let read_back = verdict(&out, "file-read");
    match backend {
        Backend::Landlock => assert_eq!(read_back, "refused 13", "{context}"),
        Backend::Bwrap => assert_eq!(read_back, "ok hub|more", "{context}"),
    }
    assert_eq!(verdict(&out, "bind"), "ok", "{context}");
    let sock = fs::symlink_metadata(t.runtime.join("hub.sock")).unwrap();
    assert!(sock.file_type().is_socket(), "{context}");
    assert_eq!(verdict(&out, "peer"), "ping", "{context}");
    assert_eq!(verdict(&out, "client"), "0", "{context}");

    // The broker: its token never reaches the cage, nothing of the cage's lands there.
    let read = verdict(&out, "broker-read");
    assert!(!read.contains(TOKEN), "{context}");
    if backend == Backend::Landlock {
        // Natively every one of these is refused (the view may let the cage write into
        // the empty tmpfs it mounts over the broker: only the host counts there).
        for label in [
            "broker-read",
            "broker-write",
            "broker-create",
            "broker-mkdir",
            "broker-bind",
            "broker-rename",
            "broker-tmpfile",
        ] {
            assert_eq!(verdict(&out, label), "refused 13", "{label}: {context}");
        }
    }
    for label in [
        "cage-write",
        "cage-create",
        "cage-mkdir",
        "cage-bind",
        "cage-rename",
        "cage-tmpfile",
    ] {
        assert!(
            verdict(&out, label).starts_with("refused"),
            "{label}: {context}"
        );
    }
    assert_sealed_and_protected_untouched(&t, &context);
}

jaula_testkit::case_tests! {
    runtime_takes_new_entries_landlock_as_root => runtime_takes_new_entries(Backend::Landlock, User::Root);
    runtime_takes_new_entries_landlock_as_uid_65534 => runtime_takes_new_entries(Backend::Landlock, User::Nobody);
    runtime_takes_new_entries_bwrap_as_root => runtime_takes_new_entries(Backend::Bwrap, User::Root);
    runtime_takes_new_entries_bwrap_as_uid_65534 => runtime_takes_new_entries(Backend::Bwrap, User::Nobody);
}

/// Without the gate nothing stands in for the split: natively `.runtime` keeps the
/// deviation `split-dir-no-new-entries` (docs/security.md), and the broker stays sealed.
#[test]
fn without_the_gate_runtime_stays_split_natively() {
    if !python_or_skip() || !cage_here(Backend::Landlock, User::Root) {
        return;
    }
    for user in [User::Root, User::Nobody] {
        if !cage_here(Backend::Landlock, user) {
            return;
        }
        let t = tree(user);
        let out = run(Backend::Landlock, user, &t, &["--no-socket-gate"]);
        let context = format!(
            "uid {}\nstdout:\n{}\nstderr:\n{}",
            user.uid(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{context}");
        for label in ["file", "dir", "bind", "broker-read", "broker-create"] {
            assert_eq!(verdict(&out, label), "refused 13", "{label}: {context}");
        }
        assert!(!t.runtime.join("hub.log").exists(), "{context}");
        assert_sealed_and_protected_untouched(&t, &context);
    }
}
