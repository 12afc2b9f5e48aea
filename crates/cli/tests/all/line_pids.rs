//! `jaula line`'s prefix, run as a launcher runs it (`sh -c "$prefix CMD"` in the repo): a
//! pid the caged window writes down names that very process on the host, and a host-side
//! tool signalling that pid reaches it. The seed's cage ran without a PID namespace for
//! this: its runtime gateway writes its own pid into `<runtime>/gateways/<actor>.pid` and
//! `agents-city exit` signals it from the host later (a namespace-local pid would name an
//! unrelated host process). Plain `jaula run` under bwrap keeps its own PID namespace: the
//! same command there writes a pid that is not its host pid.
//!
//! Every verdict is the host's: the pid file on disk, `/proc/<pid>` read by the test, the
//! trap's answer to a host `kill`, the launcher's exit status. The caged command blocks on
//! a FIFO the test holds open, never on a timer.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use common::{bare_tree, cage_here, chown_tree, jaula_in, require_root, Backend, User};

/// The pid file and the FIFO, relative to the repo (the command starts there).
const PID_FILE: &str = "window.pid";
const FIFO: &str = "block.fifo";
/// The caged command's script (`$1` the pid file, `$2` the FIFO): write `$$` down, answer
/// SIGTERM with a line naming itself and exit status 7, open the FIFO, say it is ready,
/// then block on a read of it. `wait` is what a trapped signal interrupts (POSIX), so the
/// trap runs the moment the signal arrives. The FIFO is open before `ready`: a `cat` that
/// opened it only after the test let go would wait for a writer for ever.
const SCRIPT: &str = "echo $$ > \"$1\"; trap 'echo \"term $$\"; exit 7' TERM; exec 9< \"$2\"; \
                      echo ready; cat <&9 & wait";

/// One caged window: its scratch tree, the FIFO held open by the test (a reader and a
/// writer: the caged command's open never waits, and its `cat` ends at EOF once this is
/// dropped),
/// the launcher running it, and its stdout.
struct Window {
    _keep: tempfile::TempDir,
    repo: PathBuf,
    stderr: PathBuf,
    marker: String,
    fifo: Option<fs::File>,
    launcher: Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Window {
    fn argv(&self) -> Vec<String> {
        caged_argv(&self.marker)
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    fn stderr(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// The pid the caged command wrote down, once it said it is ready.
    fn written_pid(&mut self) -> u32 {
        let ready = self.line();
        assert_eq!(ready, "ready\n", "stderr: {}", self.stderr());
        let text = fs::read_to_string(self.repo.join(PID_FILE)).unwrap();
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("not a pid: {text:?}"))
    }

    /// Let the caged `cat` end, then the launcher; its exit status and the rest of stdout.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.fifo.take());
        let status = self.launcher.wait().unwrap();
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        (status.code(), rest)
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        drop(self.fifo.take());
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
    }
}

/// A scratch tree owned by `user` (home, repo, the FIFO, `config` as the home's config
/// file when given), and the launcher started on `caged` (the jaula command line before
/// the caged command, as shell text ending in a space): `sh -c "$caged CMD"` in the repo,
/// as `user`, as a tmux launcher starts a window.
fn launch(user: User, name: &str, config: Option<&str>, caged: Caged) -> Window {
    let (keep, root, home, repo) = bare_tree(&format!("line-pids-{name}-"));
    if let Some(config) = config {
        let dir = home.join(".config/jaula");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("config.toml"), config).unwrap();
    }
    let fifo = repo.join(FIFO);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    chown_tree(&root, user.uid());
    let held = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let tag = root.file_name().unwrap().to_string_lossy().into_owned();
    let marker = format!("jaula-line-pid-marker-{tag}");
    let prefix = match caged {
        Caged::LinePrefix => {
            let mut cmd = jaula_in(&home, &repo);
            cmd.args(["line", "--repo"])
                .arg(&repo)
                .args(["--window", name]);
            user.apply(&mut cmd);
            let out = cmd.output().unwrap();
            assert!(
                out.status.success() && out.stdout.ends_with(b" ") && out.stdout.len() > 1,
                "jaula line: {}",
                jaula_testkit::output::describe(&out)
            );
            let prefix = String::from_utf8(out.stdout).unwrap();
            // What this suite is about: the launcher's default asks for the host's pids.
            assert!(prefix.contains(" --no-pid-ns "), "{prefix}");
            prefix
        }
        Caged::PlainRun => format!(
            "{} run --backend bwrap --repo {} -- ",
            quote(&common::jaula().display().to_string()),
            quote(&repo.display().to_string())
        ),
    };
    let command: Vec<String> = caged_argv(&marker).iter().map(|a| quote(a)).collect();
    let command = command.join(" ");
    let stderr = root.join("launcher.stderr");
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(format!("{prefix}{command}"))
        .current_dir(&repo)
        .env_clear()
        .env("PATH", common::HOST_PATH)
        .env("HOME", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&stderr).unwrap());
    user.apply(&mut cmd);
    let mut launcher = cmd.spawn().unwrap();
    let stdout = BufReader::new(launcher.stdout.take().unwrap());
    Window {
        _keep: keep,
        repo,
        stderr,
        marker,
        fifo: Some(held),
        launcher,
        stdout,
    }
}

/// What runs before the caged command.
#[derive(Clone, Copy)]
enum Caged {
    /// The prefix `jaula line --repo R --window W` prints.
    LinePrefix,
    /// `jaula run --backend bwrap --repo R --`, flags left at their defaults.
    PlainRun,
}

/// The caged command's argv, exactly: nothing else on the host has it (the launcher and
/// jaula carry the marker too, but after other arguments).
fn caged_argv(marker: &str) -> Vec<String> {
    ["sh", "-c", SCRIPT, marker, PID_FILE, FIFO]
        .map(String::from)
        .to_vec()
}

fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// `/proc/<pid>/cmdline` as arguments; None once the process is gone.
fn cmdline(pid: u32) -> Option<Vec<String>> {
    let bytes = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// The `NSpid` line of `/proc/<pid>/status`: the pid in each PID namespace the process is
/// in, the host's (this test's) first.
fn ns_pids(pid: u32) -> Vec<u32> {
    status_field(pid, "NSpid:")
}

/// The numbers on the `name` line of `/proc/<pid>/status`.
fn status_field(pid: u32, name: &str) -> Vec<u32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Whether `pid`'s mount namespace is this test's.
fn same_mount_ns(pid: u32) -> bool {
    fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap()
        == fs::read_link("/proc/self/ns/mnt").unwrap()
}

fn case_ready(backend: Backend, user: User) -> bool {
    if !require_root("caging as root and as uid 65534, and reading their /proc entries") {
        return false;
    }
    cage_here(backend, user)
}

/// The launcher's default, on `backend` (chosen by the home's config file: the prefix
/// names no backend): the pid the window writes is its host pid, and the owner's
/// host-side `kill` of that pid is answered by the window's own trap.
fn line_case(backend: Backend, user: User) {
    if !case_ready(backend, user) {
        return;
    }
    let config = format!("[run]\nbackend = \"{}\"\n", backend.name());
    let mut w = launch(user, "w-pids", Some(&config), Caged::LinePrefix);
    let pid = w.written_pid();
    assert_eq!(
        cmdline(pid),
        Some(w.argv()),
        "{backend:?} {user:?}: pid {pid} from the pid file is not the caged command on the \
         host; stderr: {}",
        w.stderr()
    );
    assert_eq!(
        ns_pids(pid),
        vec![pid],
        "{backend:?} {user:?}: the window has a PID namespace of its own"
    );
    // The backend the config named really is the one that ran: bubblewrap's view is a
    // mount namespace of its own; natively the command stays in the host's.
    assert_eq!(
        same_mount_ns(pid),
        backend == Backend::Landlock,
        "{backend:?} {user:?}"
    );
    // The host-side tool: the owner's `kill`, outside every cage.
    let mut kill = Command::new("/bin/sh");
    kill.args(["-c", "kill -TERM \"$1\"", "host-tool", &pid.to_string()]);
    user.apply(&mut kill);
    jaula_testkit::output::assert_ok_for("host kill", &kill.output().unwrap());
    assert_eq!(
        w.line(),
        format!("term {pid}\n"),
        "{backend:?} {user:?}: the window's trap did not answer; stderr: {}",
        w.stderr()
    );
    let stderr = w.stderr.clone();
    let (code, rest) = w.finish();
    assert_eq!(
        code,
        Some(7),
        "{backend:?} {user:?}: the launcher did not leave with the trap's status; stderr: {}",
        fs::read_to_string(stderr).unwrap_or_default()
    );
    assert_eq!(rest, "", "{backend:?} {user:?}");
}

fn line_bwrap_case(user: User) {
    line_case(Backend::Bwrap, user);
}

fn line_landlock_case(user: User) {
    line_case(Backend::Landlock, user);
}

jaula_testkit::as_each_user!(
    line_bwrap_case =>
    line_prefix_pid_names_the_caged_process_on_the_host_under_bwrap_as_root,
    line_prefix_pid_names_the_caged_process_on_the_host_under_bwrap_as_uid_65534
);

jaula_testkit::as_each_user!(
    line_landlock_case =>
    line_prefix_pid_names_the_caged_process_on_the_host_under_landlock_as_root,
    line_prefix_pid_names_the_caged_process_on_the_host_under_landlock_as_uid_65534
);

/// `jaula run` used directly keeps its PID namespace under bwrap: the same command writes
/// a namespace-local pid, and the process the host sees with that argv has another one.
fn plain_run_case(user: User) {
    if !case_ready(Backend::Bwrap, user) {
        return;
    }
    let mut w = launch(user, "plain-run", None, Caged::PlainRun);
    let written = w.written_pid();
    let argv = w.argv();
    let with_argv: Vec<u32> = fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|pid| cmdline(*pid).as_ref() == Some(&argv))
        .collect();
    // The shell's fork for `cat` carries its argv until it execs: the command is the one
    // whose parent is not among them.
    let host: Vec<u32> = with_argv
        .iter()
        .copied()
        .filter(|pid| !with_argv.contains(&status_field(*pid, "PPid:")[0]))
        .collect();
    assert_eq!(
        host.len(),
        1,
        "{user:?}: the caged command on the host: {host:?}"
    );
    let host = host[0];
    let pids = ns_pids(host);
    assert_eq!(
        pids.len(),
        2,
        "{user:?}: host pid {host}, NSpid {pids:?}: not in a PID namespace of its own"
    );
    assert_eq!(pids, vec![host, written], "{user:?}");
    assert_ne!(
        host, written,
        "{user:?}: the written pid is the host's after all"
    );
    let (code, rest) = w.finish();
    assert_eq!(code, Some(0), "{user:?}");
    assert_eq!(rest, "", "{user:?}");
}

jaula_testkit::as_each_user!(
    plain_run_case =>
    plain_run_under_bwrap_writes_a_namespace_local_pid_as_root,
    plain_run_under_bwrap_writes_a_namespace_local_pid_as_uid_65534
);

#[test]
fn quoting_keeps_a_word_whole() {
    let out = Command::new("/bin/sh")
        .args(["-c", &format!("printf '%s|' {}", quote("a 'b' $c"))])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a 'b' $c|");
}
