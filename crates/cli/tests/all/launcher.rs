//! What a tmux launcher can give a window, live on both Linux backends, as root and as uid
//! 65534: `jaula line` carries the window's network mode and token hand-over into the
//! prefix it prints; a token named in the config goes only to the agent it belongs to; a
//! host socket allowed by path keeps the variable that names it.
//!
//! The agent is a stub named `claude` that prints its environment and the network devices
//! it sees (`/proc/net/dev` is per network namespace); its login is a file of the test's
//! own, whose access token is the marker looked for.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{bare_tree, chown_tree, jaula_in, Backend, User};

const ACCESS: &str = "sk-ant-oat01-launcher-access-token";
const REFRESH: &str = "sk-ant-ort01-launcher-refresh-token";

/// One window's tree, owned by its user: home (with a Claude login), repo, a `bin` with
/// the stub `claude`, and a config file choosing the backend plus `extra`.
struct Window {
    _keep: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    config: PathBuf,
    claude: PathBuf,
    user: User,
}

fn window(name: &str, backend: Backend, user: User, extra: &str) -> Window {
    let (keep, root, home, repo) = bare_tree(&format!("launcher-{name}-"));
    let login = home.join(".claude");
    fs::create_dir_all(&login).unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    fs::write(
        login.join(".credentials.json"),
        format!(
            r#"{{"claudeAiOauth":{{"accessToken":"{ACCESS}","refreshToken":"{REFRESH}","expiresAt":{}}}}}"#,
            now_ms + 3_600_000
        ),
    )
    .unwrap();
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    fs::write(&claude, "#!/bin/sh\nenv\ncat /proc/net/dev\n").unwrap();
    fs::set_permissions(&claude, fs::Permissions::from_mode(0o755)).unwrap();
    let config = root.join("config.toml");
    fs::write(
        &config,
        format!("[run]\nbackend = \"{}\"\n{extra}", backend.name()),
    )
    .unwrap();
    chown_tree(&root, user.uid());
    common::open_to_others(&root);
    Window {
        _keep: keep,
        root,
        home,
        repo,
        config,
        claude,
        user,
    }
}

impl Window {
    /// `jaula run --config C FLAGS -- CMD...` in the repo, as the window's user.
    fn run(&self, flags: &[&str], env: &[(&str, &Path)], cmd: &[&Path]) -> Output {
        let mut c = jaula_in(&self.home, &self.repo);
        c.args(["run", "--config"])
            .arg(&self.config)
            .args(flags)
            .arg("--")
            .args(cmd)
            .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
            .stdin(Stdio::null());
        self.user.apply(&mut c);
        c.output().unwrap()
    }

    /// `jaula line --config C --repo R FLAGS`, then `sh -c "$prefix CLAUDE"` in the repo,
    /// as a launcher starts a window.
    fn launch(&self, flags: &[&str]) -> (String, Output) {
        let mut c = jaula_in(&self.home, &self.repo);
        c.args(["line", "--config"])
            .arg(&self.config)
            .arg("--repo")
            .arg(&self.repo)
            .args(flags);
        self.user.apply(&mut c);
        let out = c.output().unwrap();
        jaula_testkit::output::assert_ok_for("jaula line", &out);
        let prefix = String::from_utf8(out.stdout).unwrap();
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c")
            .arg(format!("{prefix}'{}'", self.claude.display()))
            .current_dir(&self.repo)
            .env_clear()
            .env("PATH", common::HOST_PATH)
            .env("HOME", &self.home)
            .stdin(Stdio::null());
        self.user.apply(&mut sh);
        (prefix, sh.output().unwrap())
    }
}

fn text(out: &Output) -> String {
    jaula_testkit::output::describe(out)
}

/// The network devices `/proc/net/dev` lists in `stdout` (after its two header lines).
fn devices(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.trim().to_owned())
        .filter(|name| !name.is_empty() && !name.contains('=') && !name.contains(' '))
        .collect()
}

/// `[env] hand_access_token = ["claude"]` holds for every run, so the token goes only to a
/// command that is claude: `jaula run -- sh -c env` sees none and jaula says nothing of
/// it; the `claude` stub gets it, with jaula's notice.
#[test]
fn a_token_named_in_the_config_goes_only_to_its_agent() {
    common::each_cage_as(&common::users(), |backend, user| {
        let w = window(
            "token",
            backend,
            user,
            "[env]\nhand_access_token = [\"claude\"]\n",
        );
        let other = w.run(
            &[],
            &[],
            &[Path::new("/bin/sh"), Path::new("-c"), Path::new("env")],
        );
        let all = text(&other);
        assert!(other.status.success(), "{backend:?} {user:?}: {all}");
        assert!(
            !all.contains(ACCESS),
            "{backend:?} {user:?}: token handed to sh: {all}"
        );
        assert!(
            !all.contains("handing claude"),
            "{backend:?} {user:?}: {all}"
        );

        let agent = w.run(&[], &[], &[&w.claude]);
        let all = text(&agent);
        assert!(agent.status.success(), "{backend:?} {user:?}: {all}");
        assert!(
            String::from_utf8_lossy(&agent.stdout)
                .contains(&format!("CLAUDE_CODE_OAUTH_TOKEN={ACCESS}")),
            "{backend:?} {user:?}: {all}"
        );
        assert!(all.contains("handing claude its access token"), "{all}");
        assert!(!all.contains(REFRESH), "{backend:?} {user:?}: {all}");
    });
}

/// The prefix `jaula line --network none --hand-access-token claude` prints starts the
/// window in the cage's own network namespace (loopback only) with its token: the
/// launcher carries every option a window needs.
#[test]
fn the_line_carries_the_network_mode_and_the_token_to_the_window() {
    let host = fs::read_to_string("/proc/net/dev").unwrap();
    common::each_cage_as(&common::users(), |backend, user| {
        let w = window("line", backend, user, "");
        let (prefix, out) = w.launch(&["--network", "none", "--hand-access-token", "claude"]);
        assert!(prefix.contains(" --network none "), "{prefix}");
        assert!(prefix.contains(" --hand-access-token claude "), "{prefix}");
        let all = text(&out);
        assert!(out.status.success(), "{backend:?} {user:?}: {all}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("CLAUDE_CODE_OAUTH_TOKEN={ACCESS}")),
            "{backend:?} {user:?}: {all}"
        );
        assert_eq!(devices(&stdout), ["lo"], "{backend:?} {user:?}: {all}");
        // The control: the same line without the options hands nothing and shares the
        // host's devices.
        let (_, plain) = w.launch(&[]);
        let all = text(&plain);
        assert!(plain.status.success(), "{backend:?} {user:?}: {all}");
        assert!(!all.contains(ACCESS), "{backend:?} {user:?}: {all}");
        assert_eq!(
            devices(&String::from_utf8_lossy(&plain.stdout)),
            devices(&host),
            "{backend:?} {user:?}: {all}"
        );
    });
}

/// A socket allowed with `--allow-unix-socket PATH` keeps the variable that names it
/// (SSH_AUTH_SOCK, and TMUX with its trailing fields), named through a symlink too; the
/// same variables naming a socket that is not allowed are scrubbed as before.
#[test]
fn an_allowed_socket_keeps_the_variable_that_names_it() {
    common::each_cage_as(&common::users(), |backend, user| {
        let w = window("socket", backend, user, "");
        let sock = w.root.join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        chown_tree(&sock, user.uid());
        let link = w.root.join("agent-link.sock");
        std::os::unix::fs::symlink(&sock, &link).unwrap();
        let tmux = PathBuf::from(format!("{},4242,0", sock.display()));
        let env = [("SSH_AUTH_SOCK", link.as_path()), ("TMUX", tmux.as_path())];
        let env_cmd = [Path::new("/bin/sh"), Path::new("-c"), Path::new("env")];

        // The caged `env`'s output with `--allow-unix-socket SOCKET`, which must succeed.
        let env_allowing = |socket: &Path| {
            let out = w.run(
                &["--allow-unix-socket", socket.to_str().unwrap()],
                &env,
                &env_cmd,
            );
            let all = text(&out);
            assert!(out.status.success(), "{backend:?} {user:?}: {all}");
            (String::from_utf8_lossy(&out.stdout).into_owned(), all)
        };

        let (stdout, all) = env_allowing(&sock);
        for kept in [
            format!("SSH_AUTH_SOCK={}", link.display()),
            format!("TMUX={}", tmux.display()),
        ] {
            assert!(
                stdout.contains(&kept),
                "{backend:?} {user:?}: {kept}: {all}"
            );
        }

        let other = w.root.join("other.sock");
        let _other = std::os::unix::net::UnixListener::bind(&other).unwrap();
        let (stdout, all) = env_allowing(&other);
        for scrubbed in ["SSH_AUTH_SOCK=", "TMUX="] {
            assert!(
                !stdout.contains(scrubbed),
                "{backend:?} {user:?}: {scrubbed}: {all}"
            );
        }
    });
}
