//! The bwrap view's host isolation, live: a default bwrap cage reaches no host service through the
//! host's `/tmp` or `/run/user/UID`, sees none of the host's `/tmp` files, writes its own
//! `/tmp` into the window's directory under the state home, reads no host process's command
//! line, and carries no `TMUX`/`TMUX_PANE`. Each attack also runs uncaged, as the same user,
//! to show it is real on this host (the control). Every verdict is judged on the host side:
//! the listener's accept queue, the files on disk, the tmux server's window list.
//!
//! The caged program is this test binary: `probe_entry` runs the actions named in
//! `JAULA_BV_PROBE` and prints one `BV <action> => <result>` line for each.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{chown_tree, jaula, scratch, skip_or_fail, User, NOBODY};
use jaula_testkit::{rerun, this_test, Reaped, SharedDir};

const WINDOW: &str = "bv-window";

/// The prober: does nothing unless run as one.
#[test]
fn probe_entry() {
    let Ok(actions) = std::env::var("JAULA_BV_PROBE") else {
        return;
    };
    for action in actions.split(';').filter(|a| !a.is_empty()) {
        let (verb, arg) = action.split_once(':').unwrap_or((action, ""));
        let result = match verb {
            "connect" => match UnixStream::connect(arg) {
                Ok(_) => "ok".to_string(),
                Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
            },
            "stat" => match fs::symlink_metadata(arg) {
                Ok(_) => "ok".to_string(),
                Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
            },
            "write" => match fs::write(arg, "written by the cage\n") {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
            },
            "list" => match fs::read_dir(arg) {
                Ok(rd) => {
                    let mut names: Vec<String> = rd
                        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .collect();
                    names.sort();
                    format!("ok [{}]", names.join(","))
                }
                Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
            },
            "env" => match std::env::var_os(arg) {
                Some(_) => "set".to_string(),
                None => "unset".to_string(),
            },
            // `grep -a NEEDLE /proc/*/cmdline`, counting the processes it could read.
            "cmdline" => {
                let (mut read, mut found) = (0, false);
                for entry in fs::read_dir("/proc").unwrap().flatten() {
                    let name = entry.file_name();
                    if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                        continue;
                    }
                    if let Ok(bytes) = fs::read(entry.path().join("cmdline")) {
                        read += 1;
                        found |= String::from_utf8_lossy(&bytes).contains(arg);
                    }
                }
                format!("{} read={read}", if found { "found" } else { "absent" })
            }
            // Open descriptors other than stdio and the one reading the list: a descriptor
            // of the private /tmp would lead out of the view with openat(fd, "..").
            "fds" => {
                let mut fds: Vec<String> = fs::read_dir("/proc/self/fd")
                    .unwrap()
                    .flatten()
                    .filter(|e| {
                        fs::read_link(e.path())
                            .map(|t| !t.starts_with("/proc/"))
                            .unwrap_or(false)
                    })
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !["0", "1", "2"].contains(&n.as_str()))
                    .collect();
                fds.sort();
                format!("[{}]", fds.join(","))
            }
            _ => panic!("unknown probe action {verb}"),
        };
        println!("BV {action} => {result}");
    }
}

/// A directory created for the test, removed (with what is in it) when dropped.
struct Made(PathBuf);

impl Drop for Made {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The host side: a home with a repo, a socket server in the host's `/tmp` and one in
/// `/run/user/UID`, a host `/tmp` file, and a host process whose argv holds a password.
struct Host {
    _dir: tempfile::TempDir,
    user: User,
    home: PathBuf,
    repo: PathBuf,
    host_tmp: Made,
    run_user: SharedDir,
    tmp_sock: PathBuf,
    tmp_listener: UnixListener,
    run_sock: PathBuf,
    run_listener: UnixListener,
    tmp_marker: PathBuf,
    secret: String,
    victim: Reaped,
}

impl Host {
    fn new(user: User, name: &str) -> Host {
        let (dir, root) = scratch(&format!("bwrap-view-{name}-"));
        let (home, repo) = (root.join("home"), root.join("home/repo"));
        fs::create_dir_all(&repo).unwrap();
        let uid = user.uid();
        let tag = root.file_name().unwrap().to_string_lossy().into_owned();
        // The host's /tmp is where tmux, X11 and many agents put their sockets.
        let host_tmp = Made(PathBuf::from(format!("/tmp/jaula-bv-{tag}")));
        fs::create_dir(&host_tmp.0).unwrap();
        let tmp_marker = host_tmp.0.join("host-file");
        fs::write(&tmp_marker, "host /tmp file\n").unwrap();
        // Made as logind would make it if the machine has none, and held while this host
        // lives: other tests of this process (escape_sockets) use it at the same time.
        let run_user = SharedDir::acquire(Path::new(&format!("/run/user/{uid}")), 0o700, uid);
        let tmp_sock = host_tmp.0.join("server.sock");
        let run_sock = run_user.path().join(format!("jaula-bv-{tag}.sock"));
        let listen = |path: &Path| {
            let l = UnixListener::bind(path).unwrap();
            l.set_nonblocking(true).unwrap();
            std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
            l
        };
        let tmp_listener = listen(&tmp_sock);
        let run_listener = listen(&run_sock);
        chown_tree(&root, uid);
        chown_tree(&host_tmp.0, uid);
        let secret = format!("jaula-bv-secret-{tag}");
        let victim = Command::new("/bin/sleep")
            .arg0(format!("mysql --password={secret}"))
            .arg("600")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        Host {
            _dir: dir,
            user,
            home,
            repo,
            host_tmp,
            run_user,
            tmp_sock,
            tmp_listener,
            run_sock,
            run_listener,
            tmp_marker,
            secret,
            victim: Reaped(victim),
        }
    }

    fn probe_cmd(&self, caged: bool, actions: &str, extra: &[&str]) -> Command {
        let mut probe: Vec<OsString> = rerun::argv(&this_test!("probe_entry"));
        probe.push("-q".into());
        let mut cmd = if caged {
            let mut c = Command::new(jaula());
            c.args(["run", "--backend", "bwrap", "--window", WINDOW])
                .args(extra)
                .arg("--repo")
                .arg(&self.repo)
                .arg("--home")
                .arg(&self.home)
                .arg("--")
                .args(&probe);
            c
        } else {
            let mut c = Command::new(&probe[0]);
            c.args(&probe[1..]);
            c
        };
        cmd.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", self.run_user.path())
            .env("TMUX", format!("{},1,0", self.tmp_sock.display()))
            .env("TMUX_PANE", "%0")
            .env("JAULA_BV_PROBE", actions)
            .current_dir(&self.repo)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.user == User::Nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
        cmd
    }

    /// Runs the actions; None when jaula refused to build a bwrap cage here.
    fn run(&self, caged: bool, actions: &str, extra: &[&str]) -> Option<BTreeMap<String, String>> {
        let out = self.probe_cmd(caged, actions, extra).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if caged && out.status.code() == Some(126) && stderr.contains("refusing to run uncaged") {
            return None;
        }
        assert!(out.status.success(), "{:?}\n{stderr}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        Some(
            stdout
                .lines()
                .filter_map(|l| l.strip_prefix("BV "))
                .filter_map(|l| l.split_once(" => "))
                .map(|(a, r)| (a.to_string(), r.to_string()))
                .collect(),
        )
    }

    /// Did the host servers get a connection since the last call?
    fn connections(&self) -> (bool, bool) {
        let got = |l: &UnixListener| match l.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        };
        (got(&self.tmp_listener), got(&self.run_listener))
    }

    fn window_tmp(&self) -> PathBuf {
        self.home
            .join(".agents-city/.runtime/tmp")
            .join(WINDOW)
            .join("tmp")
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.run_sock);
    }
}

fn root_or_skip() -> bool {
    if !common::is_root() {
        skip_or_fail("the bwrap view tests need root: host sockets and cages as uid 65534");
        return false;
    }
    true
}

fn actions(h: &Host) -> String {
    format!(
        "connect:{};connect:{};stat:{};cmdline:{};env:TMUX;env:TMUX_PANE;fds",
        h.tmp_sock.display(),
        h.run_sock.display(),
        h.tmp_marker.display(),
        h.secret
    )
}

fn view_case(user: User) {
    if !root_or_skip() {
        return;
    }
    let h = Host::new(user, &format!("{user:?}"));
    let acts = actions(&h);
    let key = |verb: &str, arg: &dyn std::fmt::Display| format!("{verb}:{arg}");
    let (tmp_c, run_c) = (
        key("connect", &h.tmp_sock.display()),
        key("connect", &h.run_sock.display()),
    );
    let stat = key("stat", &h.tmp_marker.display());
    let cmdline = key("cmdline", &h.secret);

    // The control: every attack works uncaged, as the same user.
    let control = h.run(false, &acts, &[]).unwrap();
    assert_eq!(control[&tmp_c], "ok", "{control:?}");
    assert_eq!(control[&run_c], "ok", "{control:?}");
    assert_eq!(
        h.connections(),
        (true, true),
        "the host servers saw the control"
    );
    assert_eq!(control[&stat], "ok");
    assert!(control[&cmdline].starts_with("found"), "{control:?}");
    assert_eq!(control["env:TMUX"], "set");
    assert_eq!(control["env:TMUX_PANE"], "set");

    // The default bwrap cage.
    let Some(caged) = h.run(true, &acts, &[]) else {
        return skip_or_fail("jaula refused to build a bwrap cage here");
    };
    let enoent = format!("err {}", libc::ENOENT);
    assert_eq!(caged[&tmp_c], enoent, "host /tmp socket: {caged:?}");
    assert_eq!(caged[&run_c], enoent, "host /run/user socket: {caged:?}");
    assert_eq!(
        h.connections(),
        (false, false),
        "a host server saw a connection from the cage"
    );
    assert_eq!(caged[&stat], enoent, "a host /tmp file is visible");
    assert!(caged[&cmdline].starts_with("absent"), "{caged:?}");
    assert!(
        !caged[&cmdline].ends_with("read=0"),
        "the cage read no command line at all, so the check proves nothing: {caged:?}"
    );
    assert_eq!(caged["env:TMUX"], "unset");
    assert_eq!(caged["env:TMUX_PANE"], "unset");
    assert_eq!(caged["fds"], "[]", "a descriptor reached the caged command");
    assert!(matches!(h.victim.id(), pid if pid > 0));
}

jaula_testkit::as_each_user!(
    view_case =>
    default_cage_reaches_no_host_socket_file_or_command_line_as_root,
    default_cage_reaches_no_host_socket_file_or_command_line_as_uid_65534
);

/// The cage's /tmp and /var/tmp are the window's directories under the state home, and its
/// XDG_RUNTIME_DIR is a writable /run/user/UID of its own, empty but for the protected
/// entries the host has there.
fn private_dirs_case(user: User) {
    if !root_or_skip() {
        return;
    }
    let h = Host::new(user, &format!("dirs-{user:?}"));
    let uid = user.uid();
    let acts = format!(
        "write:/tmp/left-by-cage;write:/var/tmp/left-by-cage-var;list:/run/user/{uid};\
         write:/run/user/{uid}/rt-file;list:/run/user"
    );
    let Some(caged) = h.run(true, &acts, &[]) else {
        return skip_or_fail("jaula refused to build a bwrap cage here");
    };
    assert_eq!(caged["write:/tmp/left-by-cage"], "ok", "{caged:?}");
    assert_eq!(caged["write:/var/tmp/left-by-cage-var"], "ok", "{caged:?}");
    // Empty, but for the host's systemd unit directory when the host has one: that is a
    // protected path, shown read-only so the cage cannot plant a unit there.
    let host_systemd = h.run_user.path().join("systemd").is_dir();
    let expected = if host_systemd {
        "ok [systemd]"
    } else {
        "ok []"
    };
    assert_eq!(
        caged[&format!("list:/run/user/{uid}")],
        expected,
        "{caged:?}"
    );
    assert_eq!(caged[&format!("write:/run/user/{uid}/rt-file")], "ok");
    assert_eq!(caged["list:/run/user"], format!("ok [{uid}]"), "{caged:?}");
    // Host side: the files are in the window's directory, not in the host's /tmp.
    let win = h.window_tmp();
    assert_eq!(
        fs::read_to_string(win.join("left-by-cage")).unwrap(),
        "written by the cage\n"
    );
    assert!(win
        .parent()
        .unwrap()
        .join("var-tmp/left-by-cage-var")
        .exists());
    assert!(!Path::new("/tmp/left-by-cage").exists());
    assert!(!Path::new("/var/tmp/left-by-cage-var").exists());
    assert!(!h.run_user.path().join("rt-file").exists());
    let meta = fs::metadata(&win).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), uid);
    let _ = &h.host_tmp;
}

jaula_testkit::as_each_user!(
    private_dirs_case =>
    cage_tmp_lands_in_the_window_dir_and_run_user_is_its_own_as_root,
    cage_tmp_lands_in_the_window_dir_and_run_user_is_its_own_as_uid_65534
);

/// `--no-pid-ns` is the documented opt-out: the host's command lines are readable again
/// (so the default's protection is the namespace, not something else).
#[test]
fn no_pid_ns_shares_the_hosts_proc_again() {
    if !root_or_skip() {
        return;
    }
    let h = Host::new(User::Nobody, "no-pid-ns");
    let acts = format!("cmdline:{}", h.secret);
    let Some(shared) = h.run(true, &acts, &["--no-pid-ns"]) else {
        return skip_or_fail("jaula refused to build a bwrap cage here");
    };
    assert!(shared[&acts].starts_with("found"), "{shared:?}");
    let own = h.run(true, &acts, &["--pid-ns"]).unwrap();
    assert!(own[&acts].starts_with("absent"), "{own:?}");
}

/// The headline route: a tmux server on the host's default socket directory
/// (`/tmp/tmux-UID/`) runs `new-window CMD` uncaged for any client that reaches it. Uncaged
/// the client reaches it (the window count grows); caged it cannot, and the host's server
/// still has one window.
fn tmux_case(user: User) {
    if !root_or_skip() {
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        return skip_or_fail("tmux is not installed");
    }
    let h = Host::new(user, &format!("tmux-{user:?}"));
    let server = format!(
        "jaula-bv-{}",
        h.repo
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
    );
    let tmux = |caged: bool, args: &[&str]| {
        let mut cmd = if caged {
            let mut c = Command::new(jaula());
            c.args(["run", "--backend", "bwrap", "--window", WINDOW, "--repo"])
                .arg(&h.repo)
                .arg("--home")
                .arg(&h.home)
                .args(["--", "tmux", "-L", &server]);
            c
        } else {
            let mut c = Command::new("tmux");
            c.args(["-L", &server]);
            c
        };
        cmd.args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &h.home)
            .env("TERM", "xterm")
            // uid 65534's login shell is nologin; tmux runs window commands with $SHELL.
            .env("SHELL", "/bin/sh")
            .current_dir(&h.repo)
            .stdin(Stdio::null());
        if user == User::Nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
        cmd.output().unwrap()
    };
    let windows = || {
        let out = tmux(false, &["list-windows", "-F", "#{window_index}"]);
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    struct Server<'a>(&'a dyn Fn(bool, &[&str]) -> std::process::Output, PathBuf);
    impl Drop for Server<'_> {
        fn drop(&mut self) {
            let _ = (self.0)(false, &["kill-server"]);
            let _ = fs::remove_file(&self.1);
        }
    }
    let started = tmux(false, &["new-session", "-d", "-s", "s", "sleep 600"]);
    assert!(started.status.success(), "{started:?}");
    let _server = Server(
        &tmux,
        PathBuf::from(format!("/tmp/tmux-{}/{server}", user.uid())),
    );
    assert_eq!(windows(), 1);
    let pwned = h.repo.join("pwned-by-tmux");
    // Control: uncaged, new-window is honoured (synchronously: the server has created the
    // window before it answers the client).
    let control = tmux(false, &["new-window", "-d", "sleep 600"]);
    assert!(control.status.success(), "{control:?}");
    assert_eq!(windows(), 2, "the uncaged control did not reach the server");
    let caged = tmux(
        true,
        &[
            "new-window",
            "-d",
            &format!("touch {}; sleep 600", pwned.display()),
        ],
    );
    let stderr = String::from_utf8_lossy(&caged.stderr);
    if caged.status.code() == Some(126) && stderr.contains("refusing to run uncaged") {
        return skip_or_fail("jaula refused to build a bwrap cage here");
    }
    assert!(
        !caged.status.success(),
        "the caged client reached the server: {stderr}"
    );
    assert!(
        stderr.contains("no server running") || stderr.contains("error connecting"),
        "{stderr}"
    );
    assert_eq!(
        windows(),
        2,
        "the caged client opened a window on the host's server"
    );
    assert!(!pwned.exists());
}

jaula_testkit::as_each_user!(
    tmux_case =>
    tmux_server_on_the_default_socket_dir_is_unreachable_as_root,
    tmux_server_on_the_default_socket_dir_is_unreachable_as_uid_65534
);

/// `jaula run -v` names the PID namespace each backend gives and the bwrap view's private
/// directories; `jaula check` states both, including the native limit.
#[test]
fn verbose_and_check_show_the_pid_namespace_and_the_private_dirs() {
    let (_dir, root) = scratch("bwrap-view-verbose-");
    let (home, repo) = (root.join("home"), root.join("home/repo"));
    fs::create_dir_all(&repo).unwrap();
    let run = |backend: &str| {
        Command::new(jaula())
            .args([
                "run",
                "-v",
                "--backend",
                backend,
                "--window",
                WINDOW,
                "--repo",
            ])
            .arg(&repo)
            .arg("--home")
            .arg(&home)
            .args(["--", "/bin/true"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &home)
            .current_dir(&repo)
            .output()
            .unwrap()
    };
    let bwrap = run("bwrap");
    let stderr = String::from_utf8_lossy(&bwrap.stderr);
    if bwrap.status.code() == Some(126) && stderr.contains("refusing to run uncaged") {
        return skip_or_fail("jaula refused to build a bwrap cage here");
    }
    assert!(bwrap.status.success(), "{stderr}");
    assert!(
        stderr.contains("jaula: pid namespace: the cage's own"),
        "{stderr}"
    );
    let win = home.join(".agents-city/.runtime/tmp").join(WINDOW);
    assert!(
        stderr.contains(&format!("{}/tmp", win.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("jaula: /run/user: the cage's own, empty"),
        "{stderr}"
    );
    let native = run("landlock");
    let stderr = String::from_utf8_lossy(&native.stderr);
    if native.status.success() {
        assert!(
            stderr.contains("jaula: pid namespace: the host's (LIMIT)"),
            "{stderr}"
        );
    }
    let check = Command::new(jaula()).arg("check").output().unwrap();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(
        stdout.contains("pid namespace: bwrap view: the cage's own")
            && stdout.contains("landlock (native): the host's, LIMIT"),
        "{stdout}"
    );
}

/// A symlink planted where the window's directory belongs (the state home is writable by
/// every window) makes `jaula run` refuse with exit 126, and nothing is written through it.
#[test]
fn a_planted_symlink_at_the_window_dir_refuses_the_launch() {
    let (_dir, root) = scratch("bwrap-view-planted-");
    let (home, repo) = (root.join("home"), root.join("home/repo"));
    fs::create_dir_all(&repo).unwrap();
    let victim = root.join("victim");
    fs::create_dir_all(&victim).unwrap();
    let tmp_root = home.join(".agents-city/.runtime/tmp");
    fs::create_dir_all(&tmp_root).unwrap();
    std::os::unix::fs::symlink(&victim, tmp_root.join(WINDOW)).unwrap();
    let out = Command::new(jaula())
        .args(["run", "--backend", "bwrap", "--window", WINDOW, "--repo"])
        .arg(&repo)
        .arg("--home")
        .arg(&home)
        .args(["--", "/bin/sh", "-c", "echo x > /tmp/through-the-link"])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .current_dir(&repo)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("refusing to run uncaged") {
        return skip_or_fail("jaula refused to build a bwrap cage here");
    }
    assert_eq!(out.status.code(), Some(126), "{stderr}");
    assert!(
        stderr.contains("private /tmp") && stderr.contains(WINDOW),
        "{stderr}"
    );
    assert_eq!(
        fs::read_dir(&victim).unwrap().count(),
        0,
        "wrote through the link"
    );
}
