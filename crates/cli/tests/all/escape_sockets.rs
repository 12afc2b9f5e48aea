//! Escape by proxy, form 1: host services on pathname unix sockets that
//! act on request. Each route is a named test, on both Linux backends, as root and as uid
//! 65534. Every case first runs the attack uncaged as the same user (the control: the
//! service really does act for a caller on this host), then caged, and judges both from
//! host-side evidence only: the file the service's command writes outside every writable
//! root, and the service's own record of what it was asked (its log, tmux's window list,
//! a signature that verifies with the owner's key). The caged process's word (the errno it
//! printed) is checked too, but only as a second opinion.
//!
//! Synchronisation without sleeps: every service here handles requests in order, so after
//! the caged attack the test sends its own request ("sync", a tmux `wait-for`, an agent
//! listing) and, once that is answered, every earlier request is already on record.
//!
//! The positive side is here too: a socket the owner allowed (`--allow-unix-socket`) is
//! reachable, and a socket the cage binds itself is reachable from another caged process.
//!
//! Needs root (to build the uid 65534 cases), python3, tmux and openssh-client; a missing
//! one is a printed skip, a failure under CI=true (.ci/run installs them).

use crate::common;

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use common::{build_home, jaula, scratch, skip_or_fail, Backend, Home, User, NOBODY};
use jaula_testkit::SharedDir;

/// The command server every non-tmux, non-agent route talks to (see its docstring).
const CMD_SERVER: &str = include_str!("escape/cmd_server.py");
/// Not a version manager's shim: pyenv's would look for its root under the scratch HOME.
const PYTHON: &str = "/usr/bin/python3";
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A name no other case of this run (or another run's leftovers) uses.
fn unique_tag() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// One case's world: a scratch home owned by the case's user, the command server script
/// in the repo (readable from the cage), and the directories and processes to clean up.
struct World {
    _keep: tempfile::TempDir,
    root: PathBuf,
    h: Home,
    user: User,
    script: PathBuf,
    tag: String,
    /// Host directories this case made outside the scratch tree (`/run/jaula-…`).
    own_dirs: Vec<PathBuf>,
    /// Sockets this case's services bound outside the scratch tree.
    own_files: Vec<PathBuf>,
    shared: Vec<SharedDir>,
    children: Vec<Child>,
    tmux: Vec<Vec<String>>,
}

impl World {
    fn new(user: User, name: &str) -> World {
        let (keep, root) = scratch(&format!("escsock-{name}-"));
        let h = build_home(&root);
        let script = h.repo.join("cmd_server.py");
        fs::write(&script, CMD_SERVER).unwrap();
        user.own(&root);
        World {
            _keep: keep,
            root,
            h,
            user,
            script,
            tag: unique_tag(),
            own_dirs: Vec::new(),
            own_files: Vec::new(),
            shared: Vec::new(),
            children: Vec::new(),
            tmux: Vec::new(),
        }
    }

    /// A file the host-side service writes when it runs the attacker's command: outside
    /// every writable root, so only the uncaged service can create it.
    fn proof(&self, what: &str) -> PathBuf {
        self.root.join(format!("outside/proof-{what}"))
    }

    /// A fresh directory of this case under `parent`, owned by the case's user.
    fn own_dir(&mut self, parent: &Path) -> PathBuf {
        let dir = parent.join(format!("jaula-esc-{}", self.tag));
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&dir, Some(self.user.uid()), Some(self.user.uid())).unwrap();
        self.own_dirs.push(dir.clone());
        dir
    }

    /// A command as the case's user, with a clean environment.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.h.home)
            .env("LC_ALL", "C")
            // tmux runs commands with $SHELL, else the passwd shell: nobody's is nologin.
            .env("SHELL", "/bin/sh")
            .current_dir(&self.h.repo);
        if self.user == User::Nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
        cmd
    }

    /// A host-side setup step as the case's user; it must succeed.
    fn host(&self, cmd: &mut Command) -> String {
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        assert!(
            out.status.success(),
            "host step {cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// Starts the command server on `sock` and waits for its "ready" line.
    fn serve(&mut self, kind: &str, sock: &Path) -> PathBuf {
        let log = self.root.join(format!(
            "outside/{kind}-{}-{}.log",
            self.tag,
            sock.file_name().unwrap().to_string_lossy()
        ));
        fs::write(&log, "").unwrap();
        if self.user == User::Nobody {
            std::os::unix::fs::chown(&log, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let (child, line) = jaula_testkit::output::spawn_until_first_line(
            self.command(PYTHON)
                .arg(&self.script)
                .args(["serve", kind])
                .arg(sock)
                .arg(&log)
                .stderr(Stdio::inherit()),
        );
        assert_eq!(line, "ready\n", "the command server did not start");
        if !sock.starts_with(&self.root) {
            self.own_files.push(sock.to_path_buf());
        }
        self.children.push(child);
        log
    }

    /// `argv` under `jaula run --backend B flags`, as the case's user, in the repo.
    fn caged(
        &self,
        backend: Backend,
        flags: &[&str],
        env: &[(&str, &str)],
        argv: &[&str],
    ) -> Output {
        let mut cmd = self.command(jaula());
        cmd.args(["run", "--backend", backend.name()])
            .args(flags)
            .args(self.h.cage_args())
            .arg("--")
            .args(argv)
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        for flag in flags.iter().filter(|f| f.starts_with("--")) {
            assert!(
                !(stderr.contains("unexpected argument") && stderr.contains(*flag)),
                "jaula run does not know {flag} yet: this test needs the socket gate \
                 (--allow-unix-socket / --allow-unix-preset) merged.\n{stderr}"
            );
        }
        assert!(
            !(out.status.code() == Some(126) && stderr.contains("refusing to run uncaged")),
            "jaula refused to build a {} cage: {stderr}",
            backend.name()
        );
        out
    }

    /// The same `argv` with no cage at all, as the same user.
    fn uncaged(&self, env: &[(&str, &str)], argv: &[&str]) -> Output {
        self.command(argv[0])
            .args(&argv[1..])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn client_argv<'a>(&'a self, kind: &'a str, sock: &'a str, text: &'a str) -> Vec<&'a str> {
        vec![
            PYTHON,
            self.script.to_str().unwrap(),
            "client",
            kind,
            sock,
            text,
        ]
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for args in &self.tmux {
            let _ = Command::new("tmux")
                .args(args)
                .arg("kill-server")
                .env_clear()
                .env("PATH", PATH)
                .uid(self.user.uid())
                .output();
            // kill-server leaves the socket file behind.
            let uid = self.user.uid();
            let _ = fs::remove_file(match args.as_slice() {
                [flag, name] if flag == "-L" => PathBuf::from(format!("/tmp/tmux-{uid}/{name}")),
                [flag, path] if flag == "-S" => PathBuf::from(path),
                _ => PathBuf::from(format!("/tmp/tmux-{uid}/default")),
            });
        }
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        for file in &self.own_files {
            let _ = fs::remove_file(file);
        }
        for dir in &self.own_dirs {
            let _ = fs::remove_dir_all(dir);
        }
        self.shared.clear();
    }
}

fn preflight(tools: &[&str]) -> bool {
    if !common::is_root() {
        skip_or_fail("the socket escape suite needs root (it builds uid 65534 cases)");
        return false;
    }
    for tool in tools {
        let found = if tool.starts_with('/') {
            Path::new(tool).is_file()
        } else {
            PATH.split(':').any(|d| Path::new(d).join(tool).is_file())
        };
        if !found {
            skip_or_fail(&format!("{tool} is not installed (.ci/run installs it)"));
            return false;
        }
    }
    true
}

/// An output's status, stdout and stderr, for a failure message.
use jaula_testkit::output::describe as text;

/// The service's own record since `from`: (every line, the new lines).
fn log_since(log: &Path, from: usize) -> Vec<String> {
    fs::read_to_string(log)
        .unwrap()
        .lines()
        .skip(from)
        .map(String::from)
        .collect()
}

/// Sends "sync" and waits for the answer: afterwards every earlier request is on record.
fn sync(kind: &str, sock: &Path, world: &World) {
    if kind == "stream" {
        let mut s = UnixStream::connect(sock).unwrap();
        s.write_all(b"sync\n").unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert_eq!(reply, "done\n");
    } else {
        let me = world
            .root
            .join(format!("outside/sync-{}.sock", unique_tag()));
        let s = UnixDatagram::bind(&me).unwrap();
        // The service may run as uid 65534: it must be able to answer.
        fs::set_permissions(&me, fs::Permissions::from_mode(0o777)).unwrap();
        s.send_to(b"sync\n", sock).unwrap();
        let mut buf = [0u8; 16];
        let n = s.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"done\n");
        let _ = fs::remove_file(&me);
    }
}

fn log_len(log: &Path) -> usize {
    fs::read_to_string(log).unwrap().lines().count()
}

/// The caged process's word, second opinion only: it printed a refusal, and the errno is
/// EACCES (the gate's answer) or ENOENT (a view in which the host socket does not exist).
fn assert_refused_errno(out: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let refused = stdout
        .lines()
        .any(|l| l == format!("errno={}", libc::EACCES) || l == format!("errno={}", libc::ENOENT));
    assert!(
        refused,
        "{what}: the caged client was not refused with EACCES/ENOENT\n{}",
        text(out)
    );
}

/// Where a command server listens for a route.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// `/run/user/UID/…`, the user's runtime directory (D-Bus, docker, podman, systemd).
    RunUser,
    /// `/run/…`, system services (docker.sock, the system bus).
    Run,
    /// `/tmp/…`, shared by everyone.
    Tmp,
    /// `~/.cache/svc.sock`: inside the cage's own writable set, the hard case.
    HomeCache,
    /// `~/.ssh/ctl.sock`: a sealed directory, like an ssh ControlMaster socket.
    SealedDir,
    /// `/tmp/.X11-unix/X<n>`: keystrokes into the owner's desktop.
    X11,
}

fn place_socket(w: &mut World, place: Place, name: &str) -> PathBuf {
    let uid = w.user.uid();
    match place {
        Place::RunUser => {
            let dir = PathBuf::from(format!("/run/user/{uid}"));
            w.shared.push(SharedDir::acquire(&dir, 0o700, uid));
            dir.join(format!("jaula-esc-{}-{name}", w.tag))
        }
        Place::Run => w.own_dir(Path::new("/run")).join(name),
        Place::Tmp => w.own_dir(Path::new("/tmp")).join(name),
        Place::HomeCache => w.h.home.join(".cache").join(name),
        Place::SealedDir => w.h.home.join(".ssh").join(name),
        Place::X11 => {
            let dir = PathBuf::from("/tmp/.X11-unix");
            w.shared.push(SharedDir::acquire(&dir, 0o1777, 0));
            // A display number per case: X + digits, as X servers name them.
            static DISPLAY: AtomicU32 = AtomicU32::new(0);
            let n = 6000
                + (std::process::id() % 2000) * 16
                + DISPLAY.fetch_add(1, Ordering::Relaxed) % 16;
            dir.join(format!("X{n}"))
        }
    }
}

/// A command server on `place`, attacked with `kind` (stream connect, datagram sendto or
/// sendmsg): the control escapes, the caged attack leaves no trace in the service's log.
fn cmd_server_case(backend: Backend, user: User, place: Place, kind: &str) {
    if !preflight(&[PYTHON]) {
        return;
    }
    let mut w = World::new(user, &format!("{place:?}-{kind}"));
    let server_kind = if kind == "stream" { "stream" } else { "dgram" };
    let sock = place_socket(&mut w, place, &format!("svc-{kind}.sock"));
    let log = w.serve(server_kind, &sock);
    let sock_s = sock.to_str().unwrap().to_string();

    // Control: uncaged, as the same user, the service runs the command.
    let proof = w.proof("control");
    let cmd = format!("touch {}", proof.display());
    let out = w.uncaged(&[], &w.client_argv(kind, &sock_s, &cmd));
    assert!(
        out.status.success(),
        "control client failed\n{}",
        text(&out)
    );
    sync(server_kind, &sock, &w);
    let lines = log_since(&log, 0);
    assert!(
        lines.contains(&format!("ran {cmd}")) && proof.exists(),
        "control: the service did not act for an uncaged caller: {lines:?}"
    );

    // The attack, caged.
    let from = log_len(&log);
    let proof = w.proof("caged");
    let cmd = format!("touch {}", proof.display());
    let out = w.caged(backend, &[], &[], &w.client_argv(kind, &sock_s, &cmd));
    sync(server_kind, &sock, &w);
    let lines = log_since(&log, from);
    assert_eq!(
        lines,
        ["conn", "sync"],
        "{backend:?} {user:?} {place:?} {kind}: the host service heard the cage \
         (escape by proxy)\n{}",
        text(&out)
    );
    assert!(
        !proof.exists(),
        "{backend:?} {user:?}: the host service ran the cage's command"
    );
    assert_refused_errno(&out, &format!("{place:?} {kind}"));
}

/// How a tmux client names the server: the default socket, `-L name` or `-S path`.
#[derive(Clone, Copy, Debug)]
enum TmuxSocket {
    Default,
    Named,
    Path,
}

/// A tmux server of the case's user with one session `jaula` whose window 0 runs a shell.
/// Returns the socket arguments every client (host and cage) passes.
fn tmux_server(w: &mut World, which: TmuxSocket) -> Option<Vec<String>> {
    let args: Vec<String> = match which {
        TmuxSocket::Default => vec![],
        TmuxSocket::Named => vec!["-L".into(), format!("jaula-esc-{}", w.tag)],
        TmuxSocket::Path => vec![
            "-S".into(),
            w.h.home
                .join(format!(".cache/tmux-{}.sock", w.tag))
                .to_str()
                .unwrap()
                .into(),
        ],
    };
    if matches!(which, TmuxSocket::Default) {
        // Never talk to somebody else's server on the default socket.
        let live = w
            .command("tmux")
            .arg("has-session")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if live.status.success() {
            skip_or_fail(&format!(
                "a tmux server of uid {} already owns the default socket",
                w.user.uid()
            ));
            return None;
        }
    }
    // remain-on-exit: a window whose command has finished stays listed, so the window
    // list is a record of every window the server opened.
    let conf = w.root.join("outside/tmux.conf");
    fs::write(&conf, "set -g remain-on-exit on\n").unwrap();
    fs::set_permissions(&conf, fs::Permissions::from_mode(0o644)).unwrap();
    w.host(w.command("tmux").args(&args).arg("-f").arg(&conf).args([
        "new-session",
        "-d",
        "-s",
        "jaula",
        "/bin/sh",
    ]));
    w.tmux.push(args.clone());
    Some(args)
}

fn tmux_windows(w: &World, args: &[String]) -> usize {
    w.host(w.command("tmux").args(args).args(["list-windows", "-a"]))
        .lines()
        .count()
}

/// The default socket is per uid, shared by every case of that uid: one case at a time.
static DEFAULT_TMUX: Mutex<()> = Mutex::new(());

fn tmux_case(backend: Backend, user: User, which: TmuxSocket, attack: &str) {
    if !preflight(&["tmux"]) {
        return;
    }
    let _serial = matches!(which, TmuxSocket::Default)
        .then(|| DEFAULT_TMUX.lock().unwrap_or_else(|e| e.into_inner()));
    let mut w = World::new(user, &format!("tmux-{which:?}-{attack}"));
    let Some(args) = tmux_server(&mut w, which) else {
        return;
    };
    let sock_words = args.join(" ");
    // The attacker's tmux line, as a caged agent would type it.
    let attack_argv = |proof: &Path, then: Option<&str>| -> Vec<String> {
        let mut v = vec!["tmux".to_string()];
        v.extend(args.iter().cloned());
        let payload = match then {
            Some(then) => format!("touch {}; {then}", proof.display()),
            None => format!("touch {}", proof.display()),
        };
        match attack {
            "new-window" => {
                v.extend(["new-window".into(), "-t".into(), "jaula:".into(), payload]);
            }
            _ => {
                v.extend([
                    "send-keys".into(),
                    "-t".into(),
                    "jaula:0".into(),
                    payload,
                    "Enter".into(),
                ]);
            }
        }
        v
    };
    // After the attack: the host's own request through the same channel, answered only
    // once everything sent earlier has been handled.
    let settle = |w: &World, name: &str| {
        let keys = format!("tmux {sock_words} wait-for -S {name}");
        w.host(
            w.command("tmux")
                .args(&args)
                .args(["send-keys", "-t", "jaula:0", &keys, "Enter"]),
        );
        w.host(w.command("tmux").args(&args).args(["wait-for", name]));
    };

    // Control.
    let before = tmux_windows(&w, &args);
    let proof = w.proof("control");
    // The control's new window reports back itself once its command ran (windows run
    // side by side, so no later request could stand for it).
    let name = format!("jaula-nw-{}", w.tag);
    let done = format!("tmux {sock_words} wait-for -S {name}");
    let then = (attack == "new-window").then_some(done.as_str());
    let argv = attack_argv(&proof, then);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = w.uncaged(&[], &argv);
    assert!(out.status.success(), "control tmux failed\n{}", text(&out));
    if attack == "new-window" {
        assert_eq!(
            tmux_windows(&w, &args),
            before + 1,
            "control: no new window"
        );
        w.host(w.command("tmux").args(&args).args(["wait-for", &name]));
    } else {
        settle(&w, &format!("jaula-ctl-{}", w.tag));
    }
    assert!(
        proof.exists(),
        "control: the host tmux server did not run the uncaged caller's command"
    );

    // The attack, caged.
    let before = tmux_windows(&w, &args);
    let proof = w.proof("caged");
    let argv = attack_argv(&proof, None);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = w.caged(backend, &[], &[], &argv);
    assert_eq!(
        tmux_windows(&w, &args),
        before,
        "{backend:?} {user:?} {which:?}: the host tmux server opened a window for the cage\n{}",
        text(&out)
    );
    settle(&w, &format!("jaula-cg-{}", w.tag));
    assert!(
        !proof.exists(),
        "{backend:?} {user:?} {which:?} {attack}: the host tmux server ran the cage's command\n{}",
        text(&out)
    );
    assert!(
        !out.status.success(),
        "the caged tmux client reports success\n{}",
        text(&out)
    );
}

/// An ssh-agent of the case's user holding a key whose private half is in the sealed
/// `~/.ssh`: a valid signature made from the cage can only have come from the agent.
struct Agent {
    sock: PathBuf,
    pubkey: PathBuf,
}

fn ssh_agent(w: &mut World) -> Agent {
    let dir = w.own_dir(Path::new("/tmp"));
    let sock = dir.join("agent.sock");
    let key = w.h.home.join(".ssh/agent_key");
    w.host(
        w.command("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "jaula-owner", "-f"])
            .arg(&key),
    );
    // ssh-agent -D prints its environment lines once the socket is listening.
    let (child, line) = jaula_testkit::output::spawn_until_first_line(
        w.command("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stderr(Stdio::null()),
    );
    assert!(line.starts_with("SSH_AUTH_SOCK="), "ssh-agent: {line}");
    w.children.push(child);
    w.host(
        w.command("ssh-add")
            .arg("-q")
            .arg(&key)
            .env("SSH_AUTH_SOCK", &sock),
    );
    let pubkey = w.h.repo.join("owner_key.pub");
    fs::copy(key.with_extension("pub"), &pubkey).unwrap();
    w.user.own(&pubkey);
    Agent { sock, pubkey }
}

/// `ssh-keygen -Y verify` on the host: did the owner's key sign `msg`?
fn signed_by_owner(w: &World, agent: &Agent, msg: &Path) -> bool {
    let sig = msg.with_extension("txt.sig");
    if !sig.exists() {
        return false;
    }
    let signers = w.root.join(format!("outside/allowed-{}", unique_tag()));
    let pubkey = fs::read_to_string(&agent.pubkey).unwrap();
    fs::write(&signers, format!("owner {pubkey}")).unwrap();
    let out = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", "file", "-I", "owner", "-f"])
        .arg(&signers)
        .arg("-s")
        .arg(&sig)
        .stdin(fs::File::open(msg).unwrap())
        .output()
        .unwrap();
    out.status.success()
}

fn ssh_agent_case(backend: Backend, user: User) {
    if !preflight(&["ssh-agent", "ssh-add", "ssh-keygen"]) {
        return;
    }
    let mut w = World::new(user, "ssh-agent");
    let agent = ssh_agent(&mut w);
    let sock = agent.sock.to_str().unwrap().to_string();
    let env = [("SSH_AUTH_SOCK", sock.as_str())];
    let sign = |name: &str| -> (PathBuf, String) {
        let msg = w.h.repo.join(format!("{name}.txt"));
        let script = format!(
            "echo 'commit to sign' > {m} && ssh-keygen -Y sign -n file -f {k} {m}",
            m = msg.display(),
            k = agent.pubkey.display()
        );
        (msg, script)
    };

    let (msg, script) = sign("control");
    let out = w.uncaged(&env, &["/bin/sh", "-c", &script]);
    assert!(
        out.status.success(),
        "control signing failed\n{}",
        text(&out)
    );
    assert!(
        signed_by_owner(&w, &agent, &msg),
        "control: the agent did not sign for an uncaged caller"
    );

    let (msg, script) = sign("caged");
    let out = w.caged(
        backend,
        &["--keep-env", "SSH_AUTH_SOCK"],
        &env,
        &["/bin/sh", "-c", &script],
    );
    assert!(
        !signed_by_owner(&w, &agent, &msg),
        "{backend:?} {user:?}: the host ssh-agent signed with the owner's key for the cage\n{}",
        text(&out)
    );
}

/// With `--allow-unix-socket PATH` the owner's choice holds: that server is reachable,
/// and only that one: a second server beside it, not named, stays refused in the same run.
fn allowed_socket_case(backend: Backend, user: User) {
    if !preflight(&[PYTHON]) {
        return;
    }
    let mut w = World::new(user, "allowed");
    let sock = place_socket(&mut w, Place::Tmp, "svc.sock");
    let other = sock.with_file_name("other.sock");
    let log = w.serve("stream", &sock);
    let other_log = w.serve("stream", &other);
    let proof = w.proof("allowed");
    let other_proof = w.proof("other");
    let py = PYTHON;
    let script = w.script.display().to_string();
    let sh = format!(
        "{py} {script} client stream {s} 'touch {p}' && \
         {{ {py} {script} client stream {o} 'touch {op}'; true; }}",
        s = sock.display(),
        p = proof.display(),
        o = other.display(),
        op = other_proof.display()
    );
    let sock_s = sock.to_str().unwrap();
    let out = w.caged(
        backend,
        &["--allow-unix-socket", sock_s],
        &[],
        &["/bin/sh", "-c", &sh],
    );
    sync("stream", &sock, &w);
    sync("stream", &other, &w);
    assert!(
        log_since(&log, 0).contains(&format!("ran touch {}", proof.display())) && proof.exists(),
        "{backend:?} {user:?}: the allowed socket was not reachable\n{}",
        text(&out)
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        log_since(&other_log, 0),
        ["conn", "sync"],
        "{backend:?} {user:?}: allowing one socket opened its neighbour too\n{}",
        text(&out)
    );
    assert!(!other_proof.exists());
    assert_refused_errno(&out, "the socket beside the allowed one");
}

/// A socket the cage binds itself (in the repo, in the cage's /tmp) is reachable from
/// another caged process of the same run. The evidence is the server's log in the repo.
fn cage_bound_case(backend: Backend, user: User, in_tmp: bool) {
    if !preflight(&[PYTHON]) {
        return;
    }
    let mut w = World::new(user, "cage-bound");
    let sock = if in_tmp {
        PathBuf::from(format!("/tmp/jaula-cage-{}.sock", w.tag))
    } else {
        w.h.repo.join("cage.sock")
    };
    if in_tmp {
        // Whatever /tmp the cage sees, nothing is left on the host's.
        w.own_files.push(sock.clone());
    }
    let log = w.h.repo.join("cage-server.log");
    let proof = w.h.repo.join("cage-proof");
    let py = PYTHON;
    let script = w.script.display().to_string();
    let sh = format!(
        "{py} {script} serve stream {s} {l} --once | {{ read ready && \
         {py} {script} client stream {s} 'touch {p}'; }}",
        s = sock.display(),
        l = log.display(),
        p = proof.display()
    );
    let out = w.caged(backend, &[], &[], &["/bin/sh", "-c", &sh]);
    let lines = fs::read_to_string(&log).unwrap_or_default();
    assert!(
        out.status.success() && proof.exists() && lines.contains("ran touch"),
        "{backend:?} {user:?}: a socket the cage bound ({}) was not reachable from the same \
         cage: log {lines:?}\n{}",
        sock.display(),
        text(&out)
    );
}

macro_rules! routes {
    ($($name:ident => $body:expr;)*) => {
        mod landlock_root {
            use super::*;
            $(#[test] fn $name() { let f: fn(Backend, User) = $body; f(Backend::Landlock, User::Root) })*
        }
        mod landlock_user {
            use super::*;
            $(#[test] fn $name() { let f: fn(Backend, User) = $body; f(Backend::Landlock, User::Nobody) })*
        }
        mod bwrap_root {
            use super::*;
            $(#[test] fn $name() { let f: fn(Backend, User) = $body; f(Backend::Bwrap, User::Root) })*
        }
        mod bwrap_user {
            use super::*;
            $(#[test] fn $name() { let f: fn(Backend, User) = $body; f(Backend::Bwrap, User::Nobody) })*
        }
    };
}

routes! {
    tmux_new_window_default_socket => |b, u| tmux_case(b, u, TmuxSocket::Default, "new-window");
    tmux_new_window_named_socket_l => |b, u| tmux_case(b, u, TmuxSocket::Named, "new-window");
    tmux_new_window_socket_path_s => |b, u| tmux_case(b, u, TmuxSocket::Path, "new-window");
    tmux_send_keys_default_socket => |b, u| tmux_case(b, u, TmuxSocket::Default, "send-keys");
    tmux_send_keys_named_socket_l => |b, u| tmux_case(b, u, TmuxSocket::Named, "send-keys");
    tmux_send_keys_socket_path_s => |b, u| tmux_case(b, u, TmuxSocket::Path, "send-keys");
    cmd_server_in_run_user => |b, u| cmd_server_case(b, u, Place::RunUser, "stream");
    cmd_server_in_run => |b, u| cmd_server_case(b, u, Place::Run, "stream");
    cmd_server_in_tmp => |b, u| cmd_server_case(b, u, Place::Tmp, "stream");
    cmd_server_in_home_cache => |b, u| cmd_server_case(b, u, Place::HomeCache, "stream");
    cmd_server_in_sealed_dir_ssh_ctl => |b, u| cmd_server_case(b, u, Place::SealedDir, "stream");
    x11_style_socket => |b, u| cmd_server_case(b, u, Place::X11, "stream");
    dgram_sendto_host_server_in_tmp => |b, u| cmd_server_case(b, u, Place::Tmp, "dgram");
    dgram_sendmsg_host_server_in_tmp => |b, u| cmd_server_case(b, u, Place::Tmp, "dgram-sendmsg");
    dgram_sendto_host_server_in_home_cache => |b, u| cmd_server_case(b, u, Place::HomeCache, "dgram");
    ssh_agent_signing_refused_by_default => ssh_agent_case;
    allowed_unix_socket_is_reachable => allowed_socket_case;
    cage_bound_socket_in_repo_is_reachable => |b, u| cage_bound_case(b, u, false);
    cage_bound_socket_in_tmp_is_reachable => |b, u| cage_bound_case(b, u, true);
}
