//! A small city, as agents-city runs one: three windows started from `jaula line` prefixes
//! in a real tmux server, sharing one state home. Window 1 starts the bus hub detached on a
//! socket in the state home's `.runtime` and exits; windows 2 and 3, caged the same way,
//! reach the hub afterwards; the hub writes its log after window 1 has gone; and a
//! host-side tool signals the pid the hub wrote into `.runtime/gateways/` and hits it.
//!
//! Live, on both Linux backends (chosen by the home's config file, since the prefix names
//! none), as root and as uid 65534. Every wait is on a FIFO, a pipe or a pidfd.

use crate::common;

use jaula_testkit::output::read_fifo;
use jaula_testkit::wait_until_gone;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bare_tree, cage_here, chown_tree, jaula_in, tools_or_skip, Backend, User};

/// The hub: binds `.runtime/hub.sock`, writes its pid where a host tool finds it, says it
/// is ready on a FIFO, then logs every line a client sends, writes a file for it into its
/// own repo (a build daemon's work done for another window), answers `ack`, and logs a
/// SIGTERM.
const HUB: &str = r#"
import os, signal, socket, sys
runtime, window_waits, test_waits = sys.argv[1], sys.argv[2], sys.argv[3]
def term(*_):
    with open(os.path.join(runtime, "hub.log"), "a") as log:
        log.write("term\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
s = socket.socket(socket.AF_UNIX)
s.bind(os.path.join(runtime, "hub.sock"))
s.listen(4)
os.makedirs(os.path.join(runtime, "gateways"), exist_ok=True)
with open(os.path.join(runtime, "gateways", "hub.pid"), "w") as f:
    f.write(str(os.getpid()))
for ready in (window_waits, test_waits):
    with open(ready, "w") as f:
        f.write("ready\n")
while True:
    c, _ = s.accept()
    line = c.makefile().readline().strip()
    with open(os.path.join(runtime, "hub.log"), "a") as log:
        log.write(line + "\n")
    # A build daemon's work: written into window 1's repo on another window's request.
    with open("from-" + line + ".txt", "w") as f:
        f.write(line + "\n")
    c.sendall(b"ack\n")
    c.close()
"#;

/// A window's client: sends its name to the hub, writes the answer to a FIFO.
const CLIENT: &str = r#"
import os, socket, sys
runtime, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
c = socket.socket(socket.AF_UNIX)
try:
    c.connect(os.path.join(runtime, "hub.sock"))
    c.sendall((name + "\n").encode())
    answer = c.makefile().readline().strip()
except OSError as e:
    answer = "error %d" % e.errno
with open(out, "w") as f:
    f.write(answer + "\n")
"#;

struct City {
    _keep: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    user: User,
    tmux: PathBuf,
}

impl City {
    fn new(backend: Backend, user: User) -> City {
        let (keep, root, home, _repo) = bare_tree("city-");
        let config = home.join(".config/jaula");
        fs::create_dir_all(&config).unwrap();
        fs::write(
            config.join("config.toml"),
            format!("[run]\nbackend = \"{}\"\n", backend.name()),
        )
        .unwrap();
        fs::create_dir_all(home.join(".agents-city/.runtime")).unwrap();
        for i in 1..=3 {
            let repo = root.join(format!("repo{i}"));
            fs::create_dir_all(&repo).unwrap();
            fs::write(repo.join("hub.py"), HUB).unwrap();
            fs::write(repo.join("client.py"), CLIENT).unwrap();
            jaula_testkit::make_fifos(&repo, &["out.fifo", "started.fifo"]);
        }
        chown_tree(&root, user.uid());
        let tmux = root.join("tmux.sock");
        City {
            _keep: keep,
            root,
            home,
            user,
            tmux,
        }
    }

    fn runtime(&self) -> PathBuf {
        self.home.join(".agents-city/.runtime")
    }

    fn repo(&self, i: usize) -> PathBuf {
        self.root.join(format!("repo{i}"))
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new("tmux");
        cmd.env_clear()
            .env("PATH", common::HOST_PATH)
            .env("HOME", &self.home)
            // The pane's shell: uid 65534's login shell is nologin.
            .env("SHELL", "/bin/sh")
            .arg("-S")
            .arg(&self.tmux)
            .args(args);
        self.user.apply(&mut cmd);
        cmd.output().unwrap()
    }

    /// The prefix `jaula line` prints for window `i`.
    fn prefix(&self, i: usize) -> String {
        let repo = self.repo(i);
        let mut cmd = jaula_in(&self.home, &repo);
        cmd.args(["line", "--repo"])
            .arg(&repo)
            .args(["--window", &format!("w{i}")]);
        self.user.apply(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let prefix = String::from_utf8(out.stdout).unwrap();
        assert!(!prefix.is_empty(), "no cage here");
        prefix
    }

    /// Start window `i` running `command` behind its prefix; the pid of the pane's process.
    fn window(&self, i: usize, command: &str) -> i32 {
        // What jaula says goes to a file beside the repo, for a failure message.
        let line = format!(
            "{}{command} 2>>{}",
            self.prefix(i),
            self.root.join(format!("w{i}.err")).display()
        );
        let repo = self.repo(i);
        let out = self.tmux(&[
            "new-window",
            "-P",
            "-F",
            "#{pane_pid}",
            "-c",
            repo.to_str().unwrap(),
            "-n",
            &format!("w{i}"),
            &line,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// What window `i`'s client wrote to its FIFO.
    fn answer(&self, i: usize) -> String {
        read_fifo(&self.repo(i).join("out.fifo"))
    }
}

impl Drop for City {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        if let Ok(pid) = fs::read_to_string(self.runtime().join("gateways/hub.pid")) {
            if let Some(pid) = pid
                .trim()
                .parse()
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

fn city(backend: Backend, user: User) {
    if !tools_or_skip(&["tmux", "python3"]) || !cage_here(backend, user) {
        return;
    }
    let what = format!("{} as uid {}", backend.name(), user.uid());
    let c = City::new(backend, user);
    let runtime = c.runtime();
    let runtime_arg = runtime.display().to_string();
    let started = c.tmux(&["new-session", "-d", "-s", "city", "-x", "80", "-y", "24"]);
    assert!(
        started.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&started.stderr)
    );
    // Window 1 starts the hub detached and leaves; the hub says it is ready on the FIFO.
    let w1 = c.window(
        1,
        &format!(
            // The window leaves once the hub says it has started in a session of its own:
            // the window's terminal hangs up as the window closes, and that must not reach
            // a hub still in the window's session.
            "sh -c 'setsid python3 hub.py {runtime_arg} started.fifo out.fifo </dev/null >/dev/null 2>&1 & read ready < started.fifo'"
        ),
    );
    assert_eq!(c.answer(1), "ready\n", "{what}");
    wait_until_gone(w1);
    let hub_pid: i32 = fs::read_to_string(runtime.join("gateways/hub.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Windows 2 and 3 reach the hub window 1 started, after window 1 has gone.
    for i in [2, 3] {
        c.window(i, &format!("python3 client.py {runtime_arg} w{i} out.fifo"));
        assert_eq!(c.answer(i), "ack\n", "{what}: window {i}");
        assert_eq!(
            fs::read_to_string(c.repo(1).join(format!("from-w{i}.txt"))).unwrap(),
            format!("w{i}\n"),
            "{what}: the hub's work for window {i}"
        );
    }
    // The pid the hub wrote is its host pid: a host tool signals it and hits it.
    let cmdline = fs::read(format!("/proc/{hub_pid}/cmdline")).unwrap_or_default();
    assert!(
        String::from_utf8_lossy(&cmdline).contains("hub.py"),
        "{what}: pid {hub_pid} is not the hub: {:?}",
        String::from_utf8_lossy(&cmdline)
    );
    let pid = rustix::process::Pid::from_raw(hub_pid).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    wait_until_gone(hub_pid);
    let log = fs::read_to_string(runtime.join("hub.log")).unwrap();
    assert_eq!(log, "w2\nw3\nterm\n", "{what}");
    assert!(Path::new(&runtime).join("hub.sock").exists());
}

#[test]
fn a_city_of_three_windows_shares_a_hub_that_outlives_its_window() {
    for backend in [Backend::Landlock, Backend::Bwrap] {
        for user in [User::Root, User::Nobody] {
            city(backend, user);
        }
    }
}
