//! A cage lives as long as its processes: a helper the command leaves running (the city's
//! bus hub, a build daemon, a dev server) keeps a working gate after `jaula run` has left
//! with the command's status, and the gate's supervisor leaves when the last of them has.
//!
//! Live, on both Linux backends, as root and as uid 65534. Every wait is on a FIFO, a
//! pipe or a pidfd: the helper blocks on a FIFO the test opens only after jaula has
//! returned, so each gated call it makes afterwards is made with jaula gone.

use crate::common;

use jaula_testkit::output::{read_all, read_fifo};
use jaula_testkit::{make_fifos, spawn_ready, wait_until_gone, Ready};

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{bare_tree, cage_here, chown_tree, each_cage, jaula_run, Backend, User};

const USERS: [User; 2] = [User::Root, User::Nobody];

/// What the helper does once released, after the command and jaula have gone: a file
/// written (a write-open, gated), `/dev/null` opened for writing (gated), a protected name
/// refused (so the answer is the gate's EACCES, not ENOSYS from a filter with no
/// listener), and a unix socket bound and connected to (bind and connect, gated). Each
/// line of `late.txt` names one call and its outcome.
const HELPER: &str = r#"
read word < in.fifo
{
  echo "word $word"
  if : > /dev/null; then echo "devnull ok"; else echo "devnull failed"; fi
  if (echo x > .envrc) 2> envrc.err; then echo "envrc WRITTEN"; else echo "envrc $(cat envrc.err | sed 's/.*: //')"; fi
  python3 -c '
import socket
s = socket.socket(socket.AF_UNIX); s.bind("hub.sock"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("hub.sock"); print("socket ok")
' 2>&1
  echo "ppid $(awk '/^PPid:/ {print $2}' /proc/$$/status)"
} > late.txt
echo done > out.fifo
read word < in.fifo
"#;

struct Tree {
    _keep: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    user: User,
}

impl Tree {
    fn new(name: &str, user: User) -> Tree {
        let (keep, root, home, repo) = bare_tree(&format!("lifetime-{name}-"));
        fs::write(repo.join("helper.sh"), HELPER).unwrap();
        make_fifos(&repo, &["in.fifo", "out.fifo"]);
        chown_tree(&root, user.uid());
        Tree {
            _keep: keep,
            root,
            home,
            repo,
            user,
        }
    }

    /// `jaula run` of `sh -c script` in the repo, as the tree's user.
    fn caged(&self, backend: Backend, flags: &[&str], script: &str) -> Command {
        let mut cmd = jaula_run(backend, &self.home, &self.repo);
        cmd.args(flags).args(["--", "/bin/sh", "-c", script]);
        self.user.apply(&mut cmd);
        cmd
    }

    /// Release the helper and wait until it has written its record.
    fn release_helper(&self) -> String {
        fs::write(self.repo.join("in.fifo"), "hello\n").unwrap();
        assert_eq!(read_fifo(&self.repo.join("out.fifo")), "done\n");
        fs::read_to_string(self.repo.join("late.txt")).unwrap()
    }

    /// Let the released helper end.
    fn finish_helper(&self) {
        fs::write(self.repo.join("in.fifo"), "bye\n").unwrap();
    }
}

/// The command starts the helper detached from its session and its output, then leaves
/// with status 7.
const START_HELPER_AND_LEAVE: &str = "setsid /bin/sh helper.sh </dev/null >/dev/null 2>&1 & exit 7";

/// What the released helper must have recorded: every gated call answered by a live
/// supervisor.
fn assert_helper_was_served(record: &str, what: &str) {
    let lines: Vec<&str> = record.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "word hello",
            "devnull ok",
            "envrc Permission denied",
            "socket ok"
        ],
        "{what}: {record}"
    );
}

/// The helper's parent once the command has gone: the supervisor, its child subreaper.
fn helper_parent(record: &str) -> i32 {
    record
        .lines()
        .find_map(|l| l.strip_prefix("ppid "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no ppid line in {record}"))
}

fn exe_of(pid: i32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/exe")).ok()
}

fn helper_outlives_the_command(backend: Backend, user: User, flags: &[&str]) {
    if !cage_here(backend, user) {
        return;
    }
    let tree = Tree::new("helper", user);
    // Only the status is waited for: in a PID namespace of the cage's own, bubblewrap's
    // init keeps the caller's output open until the cage's last process has ended
    // (docs/security.md); `the_callers_output_ends_with_the_command` covers the rest.
    let errors = tree.root.join("stderr");
    let status = tree
        .caged(backend, flags, START_HELPER_AND_LEAVE)
        .stdout(Stdio::null())
        .stderr(fs::File::create(&errors).unwrap())
        .status()
        .unwrap();
    let what = format!("{} as uid {} {flags:?}", backend.name(), user.uid());
    // jaula returned while the helper still waits on its FIFO.
    assert_eq!(
        status.code(),
        Some(7),
        "{what}: {}",
        fs::read_to_string(&errors).unwrap_or_default()
    );
    let record = tree.release_helper();
    assert_helper_was_served(&record, &what);
    // Without a PID namespace the helper's parent is a host pid: the supervisor, which
    // leaves once the helper has.
    if backend == Backend::Landlock || flags.contains(&"--no-pid-ns") {
        let supervisor = helper_parent(&record);
        assert_eq!(
            exe_of(supervisor).as_deref(),
            Some(Path::new(&common::jaula())),
            "{what}: the helper's parent is not jaula's supervisor: {record}"
        );
        tree.finish_helper();
        wait_until_gone(supervisor);
    } else {
        tree.finish_helper();
    }
}

#[test]
fn a_detached_helper_keeps_a_working_gate_after_jaula_has_left() {
    each_cage(|backend, user| helper_outlives_the_command(backend, user, &[]));
}

#[test]
fn the_supervisor_leaves_when_the_last_helper_has() {
    for user in USERS {
        helper_outlives_the_command(Backend::Landlock, user, &["--network", "none"]);
        helper_outlives_the_command(Backend::Bwrap, user, &["--no-pid-ns"]);
    }
}

/// A window closed with SIGHUP, or a `jaula run` killed outright, while the command runs:
/// the helper the command started keeps a live gate.
fn jaula_ended_by(signal: rustix::process::Signal, backend: Backend, user: User) {
    if !cage_here(backend, user) {
        return;
    }
    let tree = Tree::new("signal", user);
    let Ready {
        mut child, stdin, ..
    } = spawn_ready(
        &mut tree.caged(
            backend,
            &[],
            "setsid /bin/sh helper.sh </dev/null >/dev/null 2>&1 & echo ready; exec cat",
        ),
        "ready",
    );
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, signal).unwrap();
    let status = child.wait().unwrap();
    let what = format!("{} as uid {} after {signal:?}", backend.name(), user.uid());
    assert!(!status.success(), "{what}: {status}");
    // SIGKILL leaves the command running: it ends with its input.
    drop(stdin);
    let record = tree.release_helper();
    tree.finish_helper();
    assert_helper_was_served(&record, &what);
}

#[test]
fn a_window_closed_with_sighup_leaves_the_helper_a_live_gate() {
    each_cage(|backend, user| jaula_ended_by(rustix::process::Signal::HUP, backend, user));
}

#[test]
fn a_killed_jaula_leaves_the_helper_a_live_gate() {
    each_cage(|backend, user| jaula_ended_by(rustix::process::Signal::KILL, backend, user));
}

/// `$(jaula run ...)` ends with the command: the supervisor that stays for a helper does
/// not keep the caller's output open.
#[test]
fn the_callers_output_ends_with_the_command() {
    each_cage(|backend, user| {
        let tree = Tree::new("output", user);
        let flags: &[&str] = match backend {
            // bubblewrap's own init holds the output in a PID namespace of the cage's
            // own (docs/security.md): the launcher's prefix runs without one.
            Backend::Bwrap => &["--no-pid-ns"],
            Backend::Landlock => &[],
        };
        let mut child = tree
            .caged(
                backend,
                flags,
                "setsid /bin/sh helper.sh </dev/null >/dev/null 2>&1 & echo bye",
            )
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Reads to the end of the output: it must come while the helper still waits.
        let all = read_all(child.stdout.take().unwrap());
        assert_eq!(all, "bye\n");
        assert!(child.wait().unwrap().success());
        let record = tree.release_helper();
        tree.finish_helper();
        assert_helper_was_served(&record, backend.name());
        let _ = std::io::stdout().flush();
    });
}

impl Tree {
    /// `jaula ps --json` (or `stop WINDOW`) for this tree's home, as its user.
    fn jaula(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = common::jaula_in(&self.home, &self.repo);
        cmd.args(args).arg("--home").arg(&self.home);
        self.user.apply(&mut cmd);
        cmd.output().unwrap()
    }

    fn cages(&self) -> Vec<serde_json::Value> {
        let out = self.jaula(&["ps", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    /// The helper started, with jaula gone: the window's cage as `jaula ps` lists it.
    fn start_helper_in_window(&self, backend: Backend, window: &str) -> serde_json::Value {
        let status = self
            .caged(backend, &["--window", window], START_HELPER_AND_LEAVE)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(7));
        let cages = self.cages();
        let mine: Vec<&serde_json::Value> =
            cages.iter().filter(|c| c["window"] == window).collect();
        assert_eq!(mine.len(), 1, "{cages:?}");
        mine[0].clone()
    }
}

/// `jaula ps` lists a window whose command has ended while its helper lives, and `jaula
/// stop` ends the helper with the cage; afterwards the window is gone from the list.
#[test]
fn ps_lists_a_window_that_outlives_its_command_and_stop_ends_it() {
    each_cage(|backend, user| {
        let tree = Tree::new("ps", user);
        let what = format!("{} as uid {}", backend.name(), user.uid());
        let cage = tree.start_helper_in_window(backend, "hub");
        assert_eq!(cage["state"], "live", "{what}: {cage}");
        assert_eq!(cage["backend"], backend.name(), "{what}: {cage}");
        assert_eq!(cage["processes"], 1, "{what}: the helper alone: {cage}");
        let supervisor = cage["supervisor_pid"].as_i64().unwrap() as i32;
        let out = tree.jaula(&["stop", "hub"]);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // stop returns once the supervisor has ended, which it does only when nothing
        // is left under its filter: the helper is gone, never released.
        assert!(
            exe_of(supervisor).is_none(),
            "{what}: the supervisor still runs"
        );
        assert!(!tree.repo.join("late.txt").exists(), "{what}");
        assert!(
            tree.cages().iter().all(|c| c["window"] != "hub"),
            "{what}: still listed"
        );
        let out = tree.jaula(&["stop", "hub"]);
        assert_eq!(out.status.code(), Some(1), "{what}: a second stop");
    });
}

/// A supervisor killed from outside (the cage cannot): its cage is listed as dead, and the
/// helper it leaves fails closed (its gated calls get ENOSYS from a filter with no
/// listener), never open. The helper reports on a FIFO it opened while the gate lived.
#[test]
fn a_killed_supervisor_leaves_a_dead_cage_that_fails_closed() {
    const REPORTS_ON_FD_3: &str = "exec 3> out.fifo; echo ready >&3; read word < in.fifo; \
        if (: > /dev/null) 2>&3; then echo devnull-ok >&3; else echo devnull-failed >&3; fi; \
        if (echo x > .envrc) 2>&3; then echo envrc-WRITTEN >&3; fi";
    for user in USERS {
        let backend = Backend::Landlock;
        if !cage_here(backend, user) {
            continue;
        }
        let tree = Tree::new("dead", user);
        let script =
            format!("setsid /bin/sh -c '{REPORTS_ON_FD_3}' </dev/null >/dev/null 2>&1 & exit 7");
        let status = tree
            .caged(backend, &["--window", "doomed"], &script)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(7));
        // The helper's report channel, opened before its supervisor goes: the helper holds
        // it once its first line arrives (the supervisor opens the FIFO for it and then
        // hands the descriptor over; killed in between, the helper would hold nothing).
        let mut report =
            std::io::BufReader::new(fs::File::open(tree.repo.join("out.fifo")).unwrap());
        let mut ready = String::new();
        std::io::BufRead::read_line(&mut report, &mut ready).unwrap();
        assert_eq!(ready, "ready\n");
        let cage = tree
            .cages()
            .into_iter()
            .find(|c| c["window"] == "doomed")
            .unwrap();
        let supervisor = cage["supervisor_pid"].as_i64().unwrap() as i32;
        let pid = rustix::process::Pid::from_raw(supervisor).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
        wait_until_gone(supervisor);
        let listed: Vec<serde_json::Value> = tree
            .cages()
            .into_iter()
            .filter(|c| c["window"] == "doomed")
            .collect();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["state"], "dead", "{listed:?}");
        fs::write(tree.repo.join("in.fifo"), "go\n").unwrap();
        let mut said = String::new();
        report.read_to_string(&mut said).unwrap();
        assert!(said.contains("Function not implemented"), "{said}");
        assert!(said.contains("devnull-failed"), "{said}");
        assert!(!said.contains("envrc-WRITTEN"), "{said}");
        assert!(!tree.repo.join(".envrc").exists());
    }
}
