//! A refused write is named: at the command's exit one stderr line lists the paths the
//! cage refused to write, each with its rule and the flag that would allow it, and
//! `--log FILE` holds one JSON line per refusal (`"method":"file"`). Live, on both
//! backends, as root and as uid 65534: a write beneath no writable root (Landlock's
//! `EACCES`, the bwrap view's `EROFS`, both seen by the socket gate's supervisor, which
//! makes the call), a write to a protected path (the gate's own refusal), and
//! `git config --global`, whose refused lock file is named as `~/.gitconfig`'s refusal.
//! A run that writes only where it may prints no such line and logs nothing.

use crate::common;

use std::fs;
use std::path::Path;

use common::{
    bare_tree, cage_here, chown_tree, jaula_run, require_root, tools_or_skip, Backend, User,
};
use serde_json::Value;

const SUMMARY: &str = "jaula: the cage refused writes to ";

/// Each case on both backends, as root and as uid 65534 (the tree is handed to each).
fn each_cage(what: &str, case: fn(Backend, User)) {
    if !require_root(what) {
        return;
    }
    for backend in [Backend::Landlock, Backend::Bwrap] {
        for user in [User::Root, User::Nobody] {
            case(backend, user);
        }
    }
}

struct Run {
    stderr: String,
    log: Vec<Value>,
    code: Option<i32>,
}

/// `script` in a cage over a fresh tree (`home/.bashrc` present, both owned by `user`),
/// with `--log`: the tree's root, home and what the run said.
fn run(backend: Backend, user: User, script: &str) -> (tempfile::TempDir, std::path::PathBuf, Run) {
    let (keep, root, home, repo) = bare_tree("write-refusals-");
    let root = fs::canonicalize(root).unwrap();
    fs::write(home.join(".bashrc"), "# the owner's\n").unwrap();
    chown_tree(&root, user.uid());
    // The log lives outside the tree the cage could write: the outer jaula opens it.
    let log = root.join("refusals.jsonl");
    let mut cmd = jaula_run(backend, &home, &repo);
    cmd.arg("--log")
        .arg(&log)
        .args(["--", "/bin/sh", "-c", script]);
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let log = fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let run = Run {
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        log,
        code: out.status.code(),
    };
    (keep, root, run)
}

fn summaries(stderr: &str) -> Vec<&str> {
    jaula_testkit::output::lines_starting(stderr, SUMMARY)
}

fn file_records<'a>(log: &'a [Value], path: &Path) -> Vec<&'a Value> {
    log.iter()
        .filter(|v| v["method"] == "file" && v["path"] == path.to_str().unwrap())
        .collect()
}

fn read_only_and_protected_are_named(backend: Backend, user: User) {
    if !cage_here(backend, user) {
        return;
    }
    let script = "echo x > ../outside.txt; echo y >> \"$HOME/.bashrc\"; exit 0";
    let (_keep, root, run) = run(backend, user, script);
    let what = format!("{} as uid {}", backend.name(), user.uid());
    assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
    // The writes were refused (the command's own shell said so too).
    assert!(!root.join("outside.txt").exists(), "{what}");
    assert_eq!(
        fs::read_to_string(root.join("home/.bashrc")).unwrap(),
        "# the owner's\n",
        "{what}"
    );
    let lines = summaries(&run.stderr);
    assert_eq!(lines.len(), 1, "{what}: one summary line:\n{}", run.stderr);
    let line = lines[0];
    let outside = root.join("outside.txt");
    assert!(
        line.contains(&format!(
            "{} (default: read-only; allow with --allow-write {})",
            outside.display(),
            root.display()
        )),
        "{what}: {line}"
    );
    assert!(
        line.contains("~/.bashrc (protected: ~/.bashrc (")
            && line.contains("allow with --unprotect ~/.bashrc"),
        "{what}: {line}"
    );

    let ro = file_records(&run.log, &outside);
    assert_eq!(ro.len(), 1, "{what}: {:?}", run.log);
    assert_eq!(ro[0]["decision"], "deny", "{what}");
    let bashrc = root.join("home/.bashrc");
    let protected = file_records(&run.log, &bashrc);
    assert_eq!(protected.len(), 1, "{what}: {:?}", run.log);
    let allow_write = format!("--allow-write {}", root.display());
    let unprotect = format!("--unprotect {}", bashrc.display());
    for (record, rule, call, allow_with) in [
        (&ro[0], "read-only", "create", allow_write),
        (&protected[0], "protected", "write", unprotect),
    ] {
        assert_eq!(record["rule"], rule, "{what}: {rule}");
        assert_eq!(record["call"], call, "{what}: {rule}");
        assert_eq!(record["allow_with"][0], allow_with, "{what}: {rule}");
    }
}

fn git_config_global_is_named(backend: Backend, user: User) {
    if !cage_here(backend, user) || !tools_or_skip(&["git"]) {
        return;
    }
    let (_keep, root, run) = run(backend, user, "git config --global user.name caged");
    let what = format!("{} as uid {}", backend.name(), user.uid());
    assert_ne!(run.code, Some(0), "{what}: git config --global succeeded");
    assert!(!root.join("home/.gitconfig").exists(), "{what}");
    // The gate's own form, as for `.git/config`, at the moment of the refusal.
    assert!(
        run.stderr.lines().any(|l| l.starts_with("jaula: refused ")
            && l.contains(&format!("{}", root.join("home/.gitconfig").display()))
            && l.contains("protected: ~/.gitconfig")),
        "{what}:\n{}",
        run.stderr
    );
    let lines = summaries(&run.stderr);
    assert_eq!(lines.len(), 1, "{what}:\n{}", run.stderr);
    assert!(
        lines[0].contains("~/.gitconfig (protected: ~/.gitconfig (")
            && lines[0].contains("--unprotect ~/.gitconfig"),
        "{what}: {}",
        lines[0]
    );
    let records = file_records(&run.log, &root.join("home/.gitconfig"));
    assert_eq!(records.len(), 1, "{what}: {:?}", run.log);
    assert_eq!(records[0]["rule"], "protected", "{what}");
}

fn an_allowed_run_says_nothing(backend: Backend, user: User) {
    if !cage_here(backend, user) {
        return;
    }
    let (_keep, root, run) = run(backend, user, "echo ok > written.txt && mkdir d && rm -r d");
    let what = format!("{} as uid {}", backend.name(), user.uid());
    assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
    assert!(root.join("repo/written.txt").exists(), "{what}");
    assert!(summaries(&run.stderr).is_empty(), "{what}:\n{}", run.stderr);
    assert!(
        run.log.iter().all(|v| v["method"] != "file"),
        "{what}: {:?}",
        run.log
    );
}

#[test]
fn read_only_and_protected_writes_are_named_at_exit_and_logged() {
    each_cage(
        "handing the tree to uid 65534",
        read_only_and_protected_are_named,
    );
}

#[test]
fn git_config_global_is_named_as_the_protected_gitconfig() {
    each_cage("handing the tree to uid 65534", git_config_global_is_named);
}

#[test]
fn a_run_refused_nothing_prints_no_line() {
    each_cage("handing the tree to uid 65534", an_allowed_run_says_nothing);
}
