//! Caged peers may talk: a socket a window cage bound is connectable from the owner's other
//! window cages (its server runs caged), while a host socket beside it stays refused, and
//! so does a host socket that later takes the same path. `jaula explain --connect` names
//! the window that bound it.
//!
//! Live, on both Linux backends, as root and as uid 65534. Window A starts a detached
//! server and leaves; window B (another repo, the same home and state home) talks to it.
//! Every wait is on a FIFO or a process's end: the server says it listens through
//! `ready.fifo` and that its socket is closed and removed through `gone.fifo`.

use crate::common;

use std::fs;
use std::io::ErrorKind;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{bare_tree, cage_here, chown_tree, jaula_in, jaula_run, tools_or_skip, Backend, User};
use jaula_testkit::output::{read_all, read_fifo};

const BACKENDS: [Backend; 2] = [Backend::Landlock, Backend::Bwrap];
const USERS: [User; 2] = [User::Root, User::Nobody];

/// The server window A leaves behind: one connection, its line written to `got.txt`,
/// "pong" back; then its socket closed and removed before it says so.
const SERVER: &str = r#"
import os, socket, sys
d = sys.argv[1]
path = os.path.join(d, "bus.sock")
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
with open(os.path.join(d, "ready.fifo"), "w") as f:
    f.write("ready\n")
c, _ = s.accept()
line = c.makefile().readline()
with open(os.path.join(d, "got.txt"), "w") as f:
    f.write(line)
c.sendall(b"pong\n")
c.close()
s.close()
os.unlink(path)
with open(os.path.join(d, "gone.fifo"), "w") as f:
    f.write("gone\n")
"#;

/// Window B's client: each argument a socket to connect to; one line printed for each,
/// "NAME reply LINE" or "NAME ERRNO".
const CLIENT: &str = r#"
import errno, os, socket, sys
for path in sys.argv[1:]:
    name = os.path.basename(path)
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(path)
    except OSError as e:
        print(name, errno.errorcode[e.errno])
        continue
    c.sendall(b"hello from b\n")
    print(name, "reply", c.makefile().readline().strip())
"#;

struct Tree {
    _keep: tempfile::TempDir,
    home: PathBuf,
    repo_a: PathBuf,
    repo_b: PathBuf,
    /// `~/.cache/peers`: writable in every window, the same file in both views.
    dir: PathBuf,
    user: User,
}

impl Tree {
    fn new(user: User) -> Tree {
        let (keep, root, home, repo_a) = bare_tree("peers-");
        let repo_b = root.join("repo-b");
        let dir = home.join(".cache/peers");
        fs::create_dir_all(&repo_b).unwrap();
        fs::create_dir_all(&dir).unwrap();
        fs::write(repo_a.join("server.py"), SERVER).unwrap();
        fs::write(repo_b.join("client.py"), CLIENT).unwrap();
        jaula_testkit::make_fifos(&dir, &["ready.fifo", "gone.fifo"]);
        chown_tree(&root, user.uid());
        Tree {
            _keep: keep,
            home,
            repo_a,
            repo_b,
            dir,
            user,
        }
    }

    fn window(&self, backend: Backend, repo: &Path, window: &str, argv: &[&str]) -> Command {
        let mut cmd = jaula_run(backend, &self.home, repo);
        cmd.args(["--window", window, "--"]).args(argv);
        self.user.apply(&mut cmd);
        cmd
    }

    /// Window B connects to each of `sockets` (names in the shared directory).
    fn window_b_connects(&self, backend: Backend, sockets: &[&str]) -> (String, String) {
        let client = self.repo_b.join("client.py");
        let paths: Vec<String> = sockets
            .iter()
            .map(|s| self.dir.join(s).display().to_string())
            .collect();
        let mut argv = vec!["python3", client.to_str().unwrap()];
        argv.extend(paths.iter().map(String::as_str));
        let out = self
            .window(backend, &self.repo_b, "b", &argv)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A host process's listening socket at `name` in the shared directory, the user's
    /// own (as an uncaged process of the owner would make it), never accepting by itself.
    fn host_listener(&self, name: &str) -> UnixListener {
        let path = self.dir.join(name);
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        rustix::fs::chown(
            &path,
            Some(rustix::fs::Uid::from_raw(self.user.uid())),
            Some(rustix::fs::Gid::from_raw(self.user.uid())),
        )
        .unwrap();
        listener
    }

    /// Control: the user's own uncaged connect to the host socket `name` works, and the
    /// listener takes it (so a refusal later is the cage's).
    fn uncaged_control(&self, name: &str, listener: &UnixListener) {
        let mut cmd = Command::new("python3");
        cmd.arg(self.repo_b.join("client.py"))
            .arg(self.dir.join(name))
            .stdin(Stdio::null());
        self.user.apply(&mut cmd);
        let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
        // The client waits for a reply line: accept, read its line, answer.
        let (conn, _) = loop {
            match listener.accept() {
                Ok(c) => break c,
                // Nonblocking: wait for the client's connect by polling the listener.
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    let mut fds = [rustix::event::PollFd::new(
                        listener,
                        rustix::event::PollFlags::IN,
                    )];
                    rustix::event::poll(&mut fds, None).unwrap();
                }
                Err(e) => panic!("{e}"),
            }
        };
        conn.set_nonblocking(false).unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(&conn), &mut line).unwrap();
        assert_eq!(line, "hello from b\n");
        std::io::Write::write_all(&mut &conn, b"host\n").unwrap();
        let out = read_all(child.stdout.take().unwrap());
        assert!(child.wait().unwrap().success());
        assert_eq!(out, format!("{name} reply host\n"));
    }

    fn read_fifo(&self, name: &str) -> String {
        read_fifo(&self.dir.join(name))
    }

    /// `jaula explain PATH --connect --json`, uncaged, as the user.
    fn explain(&self, name: &str) -> serde_json::Value {
        let mut cmd = jaula_in(&self.home, &self.repo_b);
        cmd.args(["explain", "--connect", "--json", "--home"])
            .arg(&self.home)
            .arg(self.dir.join(name));
        self.user.apply(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Tree {
    /// A failed case must not leave window A's server waiting for ever: end every process
    /// running this tree's server (host pids, also those in a bwrap PID namespace).
    fn drop(&mut self) {
        let server = self.repo_a.join("server.py").display().to_string();
        for (pid, proc_dir) in jaula_testkit::proc_pids() {
            let cmdline = fs::read(proc_dir.join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&server) {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        }
    }
}

/// No connection reached `listener`.
fn assert_never_connected(listener: &UnixListener, what: &str) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("{what}: the host socket saw a connection: {other:?}"),
    }
}

fn peers_talk(backend: Backend, user: User) {
    if !cage_here(backend, user) {
        return;
    }
    let tree = Tree::new(user);
    let what = format!("{} as uid {}", backend.name(), user.uid());
    let server = tree.repo_a.join("server.py");
    let script = format!(
        "setsid python3 {} {} </dev/null >/dev/null 2>&1 & exit 0",
        server.display(),
        tree.dir.display()
    );
    // Only the status is waited for: in a PID namespace of the cage's own, bubblewrap's
    // init holds the caller's output until the cage's last process (the server) ends.
    let errors = tree.home.join("window-a.err");
    let status = tree
        .window(backend, &tree.repo_a, "a", &["/bin/sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(fs::File::create(&errors).unwrap())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "{what}: window a: {}",
        fs::read_to_string(&errors).unwrap_or_default()
    );
    // Window A has gone; its server listens.
    assert_eq!(tree.read_fifo("ready.fifo"), "ready\n", "{what}");

    // explain names the window whose cage bound the socket; a host socket has no binder.
    let host = tree.host_listener("host.sock");
    let explained = tree.explain("bus.sock");
    assert_eq!(explained["bound_by"]["window"], "a", "{what}: {explained}");
    assert_eq!(
        explained["bound_by"]["repo"],
        tree.repo_a.display().to_string(),
        "{what}: {explained}"
    );
    assert_eq!(
        tree.explain("host.sock")["bound_by"],
        serde_json::Value::Null
    );

    tree.uncaged_control("host.sock", &host);
    let (stdout, stderr) = tree.window_b_connects(backend, &["bus.sock", "host.sock"]);
    assert_eq!(
        stdout, "bus.sock reply pong\nhost.sock EACCES\n",
        "{what}: window b: {stderr}"
    );
    assert!(
        stderr.contains("refused connect to") && stderr.contains("host.sock"),
        "{what}: {stderr}"
    );
    assert_never_connected(&host, &what);
    assert_eq!(
        fs::read_to_string(tree.dir.join("got.txt")).unwrap(),
        "hello from b\n",
        "{what}"
    );

    // What the peers check rests on: no cage can add a line to the records (a forged
    // `bound` line naming a live host socket would admit it).
    let live = tree.home.join(".agents-city/.runtime/cage/live");
    let forged = live.join("forged.jsonl");
    // Window a's record: its server lives on, so nothing of jaula's appends to it while
    // this runs (a record of a window-b run just ended may still get its `ended` line).
    let appended = fs::read_dir(&live)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            fs::read_to_string(p)
                .unwrap_or_default()
                .contains("\"window\":\"a\"")
        })
        .unwrap();
    let script = format!(
        "echo '\"ended\"' > {}; echo '\"ended\"' >> {}",
        forged.display(),
        appended.display()
    );
    let before = fs::read_to_string(&appended).unwrap();
    let out = tree
        .window(backend, &tree.repo_b, "b", &["/bin/sh", "-c", &script])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{what}: {out:?}");
    assert!(!forged.exists(), "{what}: a cage made a record");
    assert_eq!(fs::read_to_string(&appended).unwrap(), before, "{what}");

    // The server has closed and removed its socket: a host process takes the same path,
    // and window B is refused it.
    assert_eq!(tree.read_fifo("gone.fifo"), "gone\n", "{what}");
    let successor = tree.host_listener("bus.sock");
    assert_eq!(
        tree.explain("bus.sock")["bound_by"],
        serde_json::Value::Null,
        "{what}"
    );
    tree.uncaged_control("bus.sock", &successor);
    let (stdout, stderr) = tree.window_b_connects(backend, &["bus.sock"]);
    assert_eq!(stdout, "bus.sock EACCES\n", "{what}: {stderr}");
    assert_never_connected(&successor, &what);
}

#[test]
fn a_socket_of_one_window_is_reachable_from_another_but_host_sockets_are_not() {
    if !tools_or_skip(&["python3"]) {
        return;
    }
    for backend in BACKENDS {
        for user in USERS {
            peers_talk(backend, user);
        }
    }
}
