//! Escape by proxy, form 2: code a caged agent plants for the owner to
//! run later, uncaged. Every planted file jaula protects is a named route, run on both
//! Linux backends, as root and as uid 65534 (`landlock_root::ROUTE`, `landlock_user::…`,
//! `bwrap_root::…`, `bwrap_user::…`).
//!
//! Each case runs twice, in two fresh scratch trees owned by the case's user:
//!
//! 1. **control**: the plant runs uncaged, then the owner's next step (`git commit`,
//!    `git status`, `bash -i`, a new tmux server, …) runs, and the planted code must leave
//!    its marker. This proves the route is real on this host, for this user.
//! 2. **caged**: the same plant runs in `jaula run --backend B`, then the same owner step
//!    runs uncaged, and the marker must be absent and the protected path byte-for-byte as it
//!    was (or still absent).
//!
//! The verdict is host-side only: the marker lies outside every writable root, so only an
//! uncaged program can create it, and the protected path is compared on the host. What the
//! caged shell printed is kept for the failure message, never judged. Where a route is
//! refused by the supervisor's write gate, its stderr line (`jaula: refused …: protected:
//! …`) naming the protected path is asserted too.
//!
//! A few owners' steps are tools this host does not run for a user (systemd's user manager,
//! a desktop session's autostart, an editor or agent that reads repo settings); for those
//! the control shows the file lands uncaged and the caged verdict is the host file alone
//! (`Next::Unrun`, which names the tool). The others are run for real, each as its owner
//! would: git, `script(1)` for git's pager (it pages only to a terminal), `bash -i`,
//! `bash -l`, `zsh -i`, a tmux server on a private socket, vim, neovim, D-Bus activation
//! on a private session bus, systemd's environment.d generator, a PATH lookup, the
//! installed jaula.
//!
//! The table in docs/security.md ("Planting routes, live") is rendered from the routes
//! below; `docs_table_matches_the_routes` fails when it drifts.
//!
//! Needs root (to build the uid 65534 cases), git, bash, zsh, tmux, vim, neovim,
//! dbus-daemon and dbus-send, script(1) and systemd's environment.d generator; a missing
//! one is a printed skip, a failure under CI=true (.ci/run installs them).

use crate::common;

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use common::{chown_tree, jaula, missing_tool, scratch, skip_or_fail, Backend, User, HOST_PATH};

/// In a plant, stands for the marker the planted code creates when the owner's step runs it.
const RAN: &str = "@RAN@";

/// systemd's generator that turns `~/.config/environment.d` into the session's environment.
const ENV_GENERATOR: &str =
    "/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator";

/// What the scratch tree holds before the plant, besides a home and a repo with one commit.
#[derive(Clone, Copy, Debug)]
enum Setup {
    Plain,
    /// `.git/hooks` removed (as after `git init --template=`), so a hook needs a new directory.
    NoHooksDir,
    /// The repo has a submodule `sub`, its git directory at `.git/modules/sub`.
    Submodule,
    /// The repo has a linked worktree inside it, `.worktrees/feat` (`.git/worktrees/feat`).
    WorktreeInRepo,
    /// The repo is a linked worktree of `<root>/main`, which the cage may also write
    /// (`--allow-write`): its git directory is found through the `.git` file's `gitdir:` and
    /// `commondir`, outside the repo.
    LinkedWorktree,
    /// A copy of jaula lies at this path (relative to the scratch root) and launches the cage.
    JaulaAt(&'static str),
    /// The owner's symlink at the first path (relative to the scratch root), to the second.
    Link(&'static str, &'static str),
}

/// The owner's next step, uncaged, that would run the planted code.
#[derive(Clone, Copy, Debug)]
enum Next {
    /// git in a directory relative to the scratch root.
    Git(&'static str, &'static [&'static str]),
    /// `git log -1` with a terminal on stdout (`script(1)`): git runs `core.pager` only then.
    GitPager,
    /// `git credential fill` for an https host: what `git fetch`/`push` ask when a server
    /// wants a password, so every configured credential helper runs.
    GitCredential,
    /// bash in a directory relative to the scratch root.
    Bash(&'static str, &'static [&'static str]),
    /// `zsh -i -c true`.
    Zsh,
    /// A new tmux server on a private socket (`tmux -S … new-session -d`), reading the
    /// default configuration files (`~/.tmux.conf`, `~/.config/tmux/tmux.conf`).
    Tmux,
    /// `vim` with the default init (`~/.vimrc`).
    Vim,
    /// `nvim --headless` with the default init (`~/.config/nvim/init.lua`).
    Nvim,
    /// A private session bus whose client asks for `org.jaula.Planted`: D-Bus activation
    /// runs the service file's `Exec=` from `$XDG_DATA_HOME/dbus-1/services`.
    DbusActivation,
    /// The session's environment from `~/.config/environment.d` (systemd's generator), then
    /// the owner's next non-interactive bash in it (`BASH_ENV` runs).
    EnvironmentD,
    /// The owner types this command with the home's PATH directories first.
    OnPath(&'static str),
    /// The owner runs the installed jaula (`jaula --version`).
    InstalledJaula,
    /// The tool that would run the file is not run here (named); the verdict is the file.
    Unrun(&'static str),
    /// git in the repo, whose failure is the plant's effect (a socket where git reads a
    /// file): the marker stands for that failure, made by the test when git fails.
    GitFails(&'static [&'static str]),
}

impl Next {
    fn tools(self) -> &'static [&'static str] {
        match self {
            Next::Git(..) | Next::GitCredential | Next::GitFails(_) => &["git"],
            Next::GitPager => &["git", "script"],
            Next::Bash(..) => &["bash"],
            Next::Zsh => &["zsh"],
            Next::Tmux => &["tmux"],
            Next::Vim => &["vim"],
            Next::Nvim => &["nvim"],
            Next::DbusActivation => &["dbus-daemon", "dbus-send"],
            Next::EnvironmentD => &[ENV_GENERATOR, "bash"],
            Next::OnPath(_) | Next::InstalledJaula | Next::Unrun(_) => &[],
        }
    }

    /// The owner's step as the docs table shows it.
    fn label(self) -> String {
        match self {
            Next::Git(_, args) => format!("`git {}`", args.join(" ")),
            Next::GitPager => "`git log` (paged, on a terminal)".into(),
            Next::GitCredential => "`git credential fill` (a fetch that needs a password)".into(),
            Next::Bash(_, args) => format!("`bash {}`", args.join(" ")),
            Next::Zsh => "`zsh -i`".into(),
            Next::Tmux => "a new tmux server".into(),
            Next::Vim => "`vim`".into(),
            Next::Nvim => "`nvim`".into(),
            Next::DbusActivation => "D-Bus activation on the session bus".into(),
            Next::EnvironmentD => "the next session's environment, then `bash -c`".into(),
            Next::OnPath(cmd) => format!("`{cmd}` from PATH"),
            Next::InstalledJaula => "the owner's next `jaula`".into(),
            Next::Unrun(tool) => format!("{tool} (not run here: host file checked)"),
            Next::GitFails(args) => format!("`git {}` (its failure is the effect)", args.join(" ")),
        }
    }
}

/// What a backend does with the route, as the case asserts it.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Refused by a layer the backend has without the write gate; the text names it.
    Refused(&'static str),
    /// Refused by the supervisor's write gate: its `jaula: refused …: protected:` line,
    /// naming the protected path, is asserted besides the host-side verdict.
    Gate,
    /// Refused by the write gate first (asserted as for `Gate`); the backend's own layer
    /// named by the text would refuse it too, without the gate.
    GateBefore(&'static str),
    /// The plant lands and runs: a documented limit (the text says where).
    Lands(&'static str),
    /// A repository the cage made: the write gate's git rules refuse the config key or the
    /// hook (a `jaula: refused …` line naming a path at or beneath the guarded one), and
    /// the owner's step runs nothing. The guarded path itself may change (the cage's own
    /// `git init` made it).
    GitRules,
}

impl Expect {
    fn cell(self) -> String {
        match self {
            Expect::Refused(how) => format!("refused: {how}"),
            Expect::Gate => "refused: write gate (`jaula: refused …: protected: …`)".into(),
            Expect::GateBefore(layer) => {
                format!(
                    "refused: write gate (`jaula: refused …: protected: …`); without it, {layer}"
                )
            }
            Expect::Lands(why) => format!("**lands**: {why}"),
            Expect::GitRules => {
                "refused: write gate, git rules (`jaula: refused …: git key …` / `… git hook …`)"
                    .into()
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Route {
    /// The test's name, set by `routes!`.
    name: &'static str,
    /// The planted file, as the docs table shows it.
    item: &'static str,
    /// The plant, in words.
    attack: &'static str,
    setup: Setup,
    /// Files the owner has before the plant: (path relative to the scratch root, content).
    /// A content starting with `#!` is made executable.
    files: &'static [(&'static str, &'static str)],
    /// Extra `jaula run` flags.
    flags: &'static [&'static str],
    /// The plant: a `/bin/sh -c` script run in the repo, as the owner, caged or not.
    plant: &'static str,
    next: Next,
    /// The protected entry the plant writes (relative to the scratch root): compared on the
    /// host before and after, and named by the write gate's refusal.
    guarded: &'static str,
    bwrap: Expect,
    landlock: Expect,
    /// What the write gate's refusal names, when not `guarded` (relative to the scratch
    /// root; the line names it or a path beneath it).
    named: &'static str,
}

/// A route with the defaults: a plain tree, no owner files, no flags, and both backends
/// expected to refuse through the write gate until `.expect` says otherwise.
fn route(item: &'static str, attack: &'static str, plant: &'static str, next: Next) -> Route {
    Route {
        name: "",
        item,
        attack,
        setup: Setup::Plain,
        files: &[],
        flags: &[],
        plant,
        next,
        guarded: "",
        bwrap: Expect::Gate,
        landlock: Expect::Gate,
        named: "",
    }
}

impl Route {
    fn guards(mut self, guarded: &'static str) -> Route {
        self.guarded = guarded;
        self
    }
    fn names(mut self, named: &'static str) -> Route {
        self.named = named;
        self
    }
    fn files(mut self, files: &'static [(&'static str, &'static str)]) -> Route {
        self.files = files;
        self
    }
    fn setup(mut self, setup: Setup) -> Route {
        self.setup = setup;
        self
    }
    fn flags(mut self, flags: &'static [&'static str]) -> Route {
        self.flags = flags;
        self
    }
    fn expect(mut self, bwrap: Expect, landlock: Expect) -> Route {
        self.bwrap = bwrap;
        self.landlock = landlock;
        self
    }
    fn expected(&self, backend: Backend) -> Expect {
        match backend {
            Backend::Bwrap => self.bwrap,
            Backend::Landlock => self.landlock,
        }
    }
}

// ── The scratch world of one run (control or caged) ─────────────────────────────────────

/// One host path's state: each entry beneath it with its kind, mode and a hash of its bytes
/// (a 19 MB jaula copy is compared too, without printing it on failure).
type State = Vec<(PathBuf, &'static str, u32, u64, u64)>;

fn state_of(path: &Path) -> State {
    fn walk(path: &Path, out: &mut State) {
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        let mode = meta.mode() & 0o7777;
        if meta.file_type().is_symlink() {
            let target = fs::read_link(path).unwrap();
            let mut h = DefaultHasher::new();
            target.hash(&mut h);
            out.push((path.to_path_buf(), "link", mode, 0, h.finish()));
        } else if meta.is_dir() {
            out.push((path.to_path_buf(), "dir", mode, 0, 0));
            let mut children: Vec<PathBuf> = fs::read_dir(path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            children.sort();
            for child in children {
                walk(&child, out);
            }
        } else {
            let bytes = fs::read(path).unwrap_or_default();
            let mut h = DefaultHasher::new();
            bytes.hash(&mut h);
            out.push((path.to_path_buf(), "file", mode, meta.len(), h.finish()));
        }
    }
    let mut out = Vec::new();
    walk(path, &mut out);
    out
}

/// jaula without its debug information: the copy an owner installs, made once per test
/// process (the debug build is ~100 MB, and some routes copy it twice).
fn jaula_template() -> &'static Path {
    static TEMPLATE: OnceLock<PathBuf> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        // The installed copy must lie outside every cage's writable roots, as scratch does.
        jaula_testkit::scratch::stop_unless_provable(dir);
        fs::create_dir_all(dir).unwrap();
        let path = dir.join(format!("jaula-installed-{}", std::process::id()));
        let stripped = Command::new("objcopy")
            .arg("--strip-debug")
            .arg(jaula())
            .arg(&path)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !stripped {
            jaula_testkit::copy_program(&jaula(), &path);
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    })
}

struct World {
    _keep: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    user: User,
    /// The marker the planted code creates: outside every writable root.
    ran: PathBuf,
    /// The jaula that launches the cage (an installed copy for `Setup::JaulaAt`).
    jaula: PathBuf,
    extra_flags: Vec<String>,
    tmux_socket: Option<PathBuf>,
    children: Vec<Child>,
}

/// Home directories the default policy makes writable, present as on a used machine.
const HOME_DIRS: &[&str] = &[
    ".config",
    ".local/share",
    ".local/state",
    ".local/bin",
    ".cargo/bin",
    ".cache",
    ".claude",
    ".codex",
    ".agents-city/.runtime/cage",
];

impl World {
    fn new(route: &Route, user: User) -> World {
        let (keep, root) = scratch("form2-");
        let home = root.join("home");
        let repo = root.join("repo");
        for dir in HOME_DIRS {
            fs::create_dir_all(home.join(dir)).unwrap();
        }
        fs::create_dir_all(root.join("outside")).unwrap();
        let mut w = World {
            _keep: keep,
            ran: root.join("outside/ran"),
            home,
            repo,
            user,
            jaula: jaula(),
            extra_flags: Vec::new(),
            tmux_socket: None,
            children: Vec::new(),
            root,
        };
        chown_tree(&w.root, user.uid());
        w.setup(route.setup);
        for (rel, content) in route.files {
            let path = w.root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, content).unwrap();
            if content.starts_with("#!") {
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        chown_tree(&w.root, user.uid());
        w
    }

    fn setup(&mut self, setup: Setup) {
        let main = self.root.join("main");
        let first = if matches!(setup, Setup::LinkedWorktree) {
            main.clone()
        } else {
            self.repo.clone()
        };
        fs::create_dir_all(&first).unwrap();
        fs::write(first.join("file.txt"), "one\n").unwrap();
        chown_tree(&first, self.user.uid());
        self.git(&first, &["init", "-q", "-b", "main"]);
        self.git(&first, &["add", "."]);
        self.git(&first, &["commit", "-q", "-m", "init"]);
        match setup {
            Setup::Plain => {}
            Setup::NoHooksDir => fs::remove_dir_all(self.repo.join(".git/hooks")).unwrap(),
            Setup::Submodule => {
                let src = self.root.join("outside/subsrc");
                fs::create_dir_all(&src).unwrap();
                fs::write(src.join("lib.txt"), "lib\n").unwrap();
                chown_tree(&src, self.user.uid());
                self.git(&src, &["init", "-q", "-b", "main"]);
                self.git(&src, &["add", "."]);
                self.git(&src, &["commit", "-q", "-m", "lib"]);
                let src = src.to_str().unwrap().to_string();
                let repo = self.repo.clone();
                self.git(
                    &repo,
                    &[
                        "-c",
                        "protocol.file.allow=always",
                        "submodule",
                        "add",
                        "-q",
                        &src,
                        "sub",
                    ],
                );
                self.git(&repo, &["commit", "-q", "-m", "sub"]);
                assert!(self.repo.join(".git/modules/sub/config").is_file());
            }
            Setup::WorktreeInRepo => {
                let repo = self.repo.clone();
                self.git(
                    &repo,
                    &["worktree", "add", "-q", ".worktrees/feat", "-b", "feat"],
                );
                assert!(self.repo.join(".git/worktrees/feat/commondir").is_file());
            }
            Setup::LinkedWorktree => {
                let repo = self.repo.to_str().unwrap().to_string();
                self.git(&main, &["worktree", "add", "-q", &repo, "-b", "feat"]);
                assert!(self.repo.join(".git").is_file());
                self.extra_flags
                    .push(format!("--allow-write={}", main.display()));
            }
            Setup::Link(link, target) => {
                let link = self.root.join(link);
                std::os::unix::fs::symlink(target, &link).unwrap();
                std::os::unix::fs::lchown(&link, Some(self.user.uid()), Some(self.user.uid()))
                    .unwrap();
            }
            Setup::JaulaAt(rel) => {
                let path = self.root.join(rel);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                jaula_testkit::copy_program(jaula_template(), &path);
                self.jaula = path;
            }
        }
    }

    /// A command as the owner: a clean environment, the scratch home, in the repo.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", HOST_PATH)
            .env("HOME", &self.home)
            .env("LC_ALL", "C")
            // tmux and script(1) run commands with $SHELL, else the passwd shell:
            // nobody's is nologin.
            .env("SHELL", "/bin/sh")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            // A credential helper that asks nothing leaves git to prompt: fail instead.
            .env("GIT_TERMINAL_PROMPT", "0")
            .current_dir(&self.repo)
            .stdin(Stdio::null());
        self.user.apply(&mut cmd);
        cmd
    }

    /// A setup step with git, as the owner; it must succeed.
    fn git(&self, dir: &Path, args: &[&str]) {
        let out = self
            .command("git")
            .current_dir(dir)
            .args([
                "-c",
                "user.name=owner",
                "-c",
                "user.email=owner@example.invalid",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "setup: git {args:?}: {}", text(&out));
    }

    fn plant_script(&self, route: &Route) -> String {
        route.plant.replace(RAN, self.ran.to_str().unwrap())
    }

    fn uncaged(&self, script: &str) -> Output {
        self.command("/bin/sh")
            .args(["-c", script])
            .output()
            .unwrap()
    }

    fn caged(&self, backend: Backend, flags: &[&str], script: &str) -> Output {
        let mut cmd = self.command(&self.jaula);
        cmd.args(["run", "--backend", backend.name()])
            .args(flags)
            .args(&self.extra_flags)
            .arg("--repo")
            .arg(&self.repo)
            .arg("--home")
            .arg(&self.home)
            .args(["--", "/bin/sh", "-c", script]);
        let out = cmd.output().unwrap();
        assert!(
            out.status.code() != Some(126),
            "jaula refused to build a {} cage: {}",
            backend.name(),
            text(&out)
        );
        out
    }

    /// The owner's next step, uncaged. Its exit status is not judged (planted code may make
    /// it fail); the marker is.
    fn next(&mut self, next: Next) -> Output {
        let owner_git = [
            "-c",
            "user.name=owner",
            "-c",
            "user.email=owner@example.invalid",
        ];
        match next {
            Next::Git(dir, args) => self
                .command("git")
                .current_dir(self.root.join(dir))
                .args(owner_git)
                .args(args)
                .output()
                .unwrap(),
            Next::GitPager => self
                .command("script")
                .args(["-q", "-e", "-c", "git log -1", "/dev/null"])
                .env("TERM", "xterm")
                .output()
                .unwrap(),
            Next::GitCredential => {
                let mut child = self
                    .command("git")
                    .args(["credential", "fill"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(b"protocol=https\nhost=example.invalid\n\n")
                    .unwrap();
                child.wait_with_output().unwrap()
            }
            Next::Bash(dir, args) => self
                .command("bash")
                .current_dir(self.root.join(dir))
                .args(args)
                .output()
                .unwrap(),
            Next::Zsh => self
                .command("zsh")
                .args(["-i", "-c", "true"])
                .output()
                .unwrap(),
            Next::Tmux => {
                // No event to wait for is needed: tmux holds the first client's command
                // until the configuration has been read, and a `run-shell` without `-b`
                // in it holds the configuration until its command exits. When
                // `new-session -d` returns, a planted `run-shell` has already run.
                let socket = self.root.join("outside/tmux");
                self.tmux_socket = Some(socket.clone());
                self.command("tmux")
                    .arg("-S")
                    .arg(&socket)
                    .args(["new-session", "-d"])
                    .output()
                    .unwrap()
            }
            Next::Vim => self
                .command("vim")
                .args(["-X", "-N", "--not-a-term", "-c", "qa!"])
                .env("TERM", "dumb")
                .output()
                .unwrap(),
            Next::Nvim => self
                .command("nvim")
                .args(["--headless", "-c", "qa!"])
                .output()
                .unwrap(),
            Next::DbusActivation => self.dbus_activation(),
            Next::EnvironmentD => {
                let generated = self.command(ENV_GENERATOR).output().unwrap();
                let session_env: Vec<(String, String)> = String::from_utf8_lossy(&generated.stdout)
                    .lines()
                    .filter_map(|l| l.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                self.command("bash")
                    .args(["-c", "true"])
                    .envs(session_env)
                    .output()
                    .unwrap()
            }
            Next::OnPath(cmd) => {
                let path = format!(
                    "{}:{}:{HOST_PATH}",
                    self.home.join(".local/bin").display(),
                    self.home.join(".cargo/bin").display()
                );
                self.command("/bin/sh")
                    .args(["-c", &format!("{cmd} --version")])
                    .env("PATH", path)
                    .output()
                    .unwrap()
            }
            Next::InstalledJaula => self.command(&self.jaula).arg("--version").output().unwrap(),
            Next::Unrun(_) => self.command("true").output().unwrap(),
            Next::GitFails(args) => {
                let out = self
                    .command("git")
                    .args(owner_git)
                    .args(args)
                    .output()
                    .unwrap();
                if !out.status.success() {
                    fs::write(&self.ran, "git failed\n").unwrap();
                }
                out
            }
        }
    }

    /// A private session bus (its own socket, the owner's `XDG_DATA_HOME`), and a client
    /// calling `org.jaula.Planted`. Without a sleep: the daemon prints its address once it
    /// listens, and a failed activation is answered as soon as the activated process exits.
    fn dbus_activation(&mut self) -> Output {
        let socket = self.root.join("outside/bus");
        let mut daemon = self
            .command("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .arg(format!("--address=unix:path={}", socket.display()))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .stdout(Stdio::piped())
            // Its notices (a failed activation, an fd limit it may not raise) are noise
            // here: the verdict is the marker.
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let address = jaula_testkit::output::first_line(&mut daemon);
        self.children.push(daemon);
        self.command("dbus-send")
            .arg(format!("--bus={}", address.trim()))
            .args([
                "--print-reply",
                "--reply-timeout=60000",
                "--dest=org.jaula.Planted",
                "/",
                "org.jaula.Planted.Ping",
            ])
            .output()
            .unwrap()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(socket) = &self.tmux_socket {
            let _ = self
                .command("tmux")
                .arg("-S")
                .arg(socket)
                .arg("kill-server")
                .output();
        }
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An output's status, stdout and stderr, for a failure message.
use jaula_testkit::output::describe as text;

/// The write gate's refusal of the protected path (or a path beneath it): `protected:`
/// for the path itself, `the protected path` for a name on the way to it.
fn gate_refused(stderr: &str, guarded: &Path) -> bool {
    let guarded = guarded.to_str().unwrap();
    stderr.lines().any(|l| {
        l.starts_with("jaula: refused ")
            && (l.contains(": protected: ") || l.contains("the protected path "))
            && l.contains(guarded)
    })
}

fn case(name: &str, backend: Backend, user: User) {
    let route = all_routes().into_iter().find(|r| r.name == name).unwrap();
    if !common::cage_here(backend, user) {
        return;
    }
    if let Some(tool) = missing_tool(route.next.tools()) {
        skip_or_fail(&format!(
            "{tool} is not installed: the owner's next step ({}) cannot run",
            route.next.label()
        ));
        return;
    }
    let who = format!("{name} ({} as uid {})", backend.name(), user.uid());

    // Control: uncaged, the same plant, then the same step, runs the planted code.
    let mut control = World::new(&route, user);
    let guarded = control.root.join(route.guarded);
    let before = state_of(&guarded);
    let planted = control.uncaged(&control.plant_script(&route));
    let step = control.next(route.next);
    if let Next::Unrun(_) = route.next {
        assert_ne!(
            state_of(&guarded),
            before,
            "{who}: control: the plant did not land uncaged: {}",
            text(&planted)
        );
    } else {
        assert!(
            control.ran.exists(),
            "{who}: control: uncaged, the owner's step ({}) did not run the planted code\n\
             plant: {}\nstep: {}",
            route.next.label(),
            text(&planted),
            text(&step)
        );
    }
    drop(control);

    // Caged: the plant from inside the cage, then the owner's step, uncaged.
    let mut w = World::new(&route, user);
    let guarded = w.root.join(route.guarded);
    let before = state_of(&guarded);
    let caged = w.caged(backend, route.flags, &w.plant_script(&route));
    let after = state_of(&guarded);
    let step = w.next(route.next);
    let ran = w.ran.exists();
    match route.expected(backend) {
        Expect::Lands(why) => {
            let landed = if let Next::Unrun(_) = route.next {
                after != before
            } else {
                ran
            };
            assert!(
                landed,
                "{who}: expected to land ({why}), but it did not\ncage: {}\nstep: {}",
                text(&caged),
                text(&step)
            );
        }
        Expect::GitRules => {
            assert!(
                !ran,
                "{who}: the planted code ran at the owner's next step ({})\ncage: {}\nstep: {}",
                route.next.label(),
                text(&caged),
                text(&step)
            );
            let stderr = String::from_utf8_lossy(&caged.stderr);
            let named = guarded.to_str().unwrap();
            assert!(
                stderr
                    .lines()
                    .any(|l| l.starts_with("jaula: refused ") && l.contains(named)),
                "{who}: no `jaula: refused` line naming {named}\ncage: {}",
                text(&caged)
            );
        }
        expect @ (Expect::Refused(_) | Expect::Gate | Expect::GateBefore(_)) => {
            assert!(
                !ran,
                "{who}: the planted code ran at the owner's next step ({})\ncage: {}\nstep: {}",
                route.next.label(),
                text(&caged),
                text(&step)
            );
            assert_eq!(
                after,
                before,
                "{who}: {} changed on the host\ncage: {}",
                guarded.display(),
                text(&caged)
            );
            if let Expect::Gate | Expect::GateBefore(_) = expect {
                let stderr = String::from_utf8_lossy(&caged.stderr);
                let named = match route.named {
                    "" => guarded.clone(),
                    named => w.root.join(named),
                };
                assert!(
                    gate_refused(&stderr, &named),
                    "{who}: no `jaula: refused …: protected:` line naming {}\ncage: {}",
                    named.display(),
                    text(&caged)
                );
            }
        }
    }
}

// ── The routes ──────────────────────────────────────────────────────────────────────────

/// An owner's hook that does nothing yet: what a plant appends to.
const OWNER_HOOK: &str = "#!/bin/sh\n# the owner's hook\n";

macro_rules! routes {
    ($($name:ident => $route:expr;)*) => {
        fn all_routes() -> Vec<Route> {
            vec![$({
                let mut r: Route = $route;
                r.name = stringify!($name);
                r
            }),*]
        }
        mod landlock_root {
            use super::*;
            $(#[test] fn $name() { case(stringify!($name), Backend::Landlock, User::Root) })*
        }
        mod landlock_user {
            use super::*;
            $(#[test] fn $name() { case(stringify!($name), Backend::Landlock, User::Nobody) })*
        }
        mod bwrap_root {
            use super::*;
            $(#[test] fn $name() { case(stringify!($name), Backend::Bwrap, User::Root) })*
        }
        mod bwrap_user {
            use super::*;
            $(#[test] fn $name() { case(stringify!($name), Backend::Bwrap, User::Nobody) })*
        }
    };
}

/// How each backend refuses a route: the write gate first, and the layer that would refuse
/// it without the gate (the texts are the docs table's cells).
const GATE: Expect = Expect::Gate;
const RO_BIND: Expect = Expect::GateBefore("EROFS (read-only bind)");
const RO_HOME: Expect = Expect::GateBefore("EROFS (the home root is read-only)");
const MOUNT_BUSY: Expect = Expect::GateBefore("EBUSY (a mount point)");
const LL_HOME: Expect = Expect::GateBefore("EACCES (Landlock: the home root is not writable)");
const LL_SPLIT: Expect =
    Expect::GateBefore("EACCES (Landlock: its writable directory is split around it)");
/// Refused by the layer before the gate is asked: the plant's first step makes a file
/// beside the protected one (git's `~/.gitconfig.lock`, a `jaula.new`), which is not
/// protected and which the layer already refuses.
const RO_HOME_FIRST: Expect = Expect::Refused("EROFS (the home root is read-only)");
const LL_HOME_FIRST: Expect = Expect::Refused("EACCES (Landlock: the home root is not writable)");
const LL_SPLIT_FIRST: Expect =
    Expect::Refused("EACCES (Landlock: its writable directory is split around it)");
const LL_TXTBSY: Expect = Expect::GateBefore(
    "ETXTBSY (the kernel's: the launcher is running; a rename or removal is what the cage \
     must stop)",
);
const LANDS_PATH: Expect = Expect::Lands(
    "PATH directories stay writable by default, agents install tools there; \
     `--protect-path-dirs` closes it (docs/configuration.md)",
);

const COMMIT: Next = Next::Git("repo", &["commit", "-q", "--allow-empty", "-m", "owner"]);
const STATUS: Next = Next::Git("repo", &["status", "--short"]);

routes! {
    // ── the repo's git directory ──
    git_hook_created => route(
        "`.git/hooks/pre-commit`", "create a hook in `.git/hooks`",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"#,
        COMMIT).guards("repo/.git/hooks")
        .expect(RO_BIND, GATE);
    git_hook_modified => route(
        "`.git/hooks/pre-commit`", "append to the owner's hook",
        r#"printf 'touch @RAN@\n' >> .git/hooks/pre-commit"#,
        COMMIT).guards("repo/.git/hooks")
        .files(&[("repo/.git/hooks/pre-commit", OWNER_HOOK)])
        .expect(RO_BIND, GATE);
    git_hooks_dir_created => route(
        "`.git/hooks/`", "create the absent hooks directory and a hook in it",
        r#"mkdir .git/hooks && printf '#!/bin/sh\ntouch @RAN@\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"#,
        COMMIT).guards("repo/.git/hooks").setup(Setup::NoHooksDir)
        .expect(GATE, GATE);
    git_config_fsmonitor_appended => route(
        "`.git/config` `core.fsmonitor`", "append (`>>`)",
        r#"printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> .git/config"#,
        STATUS).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_fsmonitor_rewritten => route(
        "`.git/config` `core.fsmonitor`", "rewrite in place (`>`, truncating)",
        r#"{ cat .git/config; printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n'; } > config.new && cat config.new > .git/config"#,
        STATUS).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_fsmonitor_git_config => route(
        "`.git/config` `core.fsmonitor`", "`git config --local` (lock file renamed over it)",
        r#"git config --local core.fsmonitor 'touch @RAN@; false'"#,
        STATUS).guards("repo/.git/config")
        .expect(GATE, GATE);
    git_config_hookspath_appended => route(
        "`.git/config` `core.hooksPath`", "a hook in the repo, then append `core.hooksPath`",
        r#"mkdir -p tools/hooks && printf '#!/bin/sh\ntouch @RAN@\n' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit && printf '[core]\n\thooksPath = tools/hooks\n' >> .git/config"#,
        COMMIT).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_hookspath_git_config => route(
        "`.git/config` `core.hooksPath`", "a hook in the repo, then `git config --local`",
        r#"mkdir -p tools/hooks && printf '#!/bin/sh\ntouch @RAN@\n' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit && git config --local core.hooksPath tools/hooks"#,
        COMMIT).guards("repo/.git/config")
        .expect(GATE, GATE);
    git_config_pager_appended => route(
        "`.git/config` `core.pager`", "append (`>>`)",
        r#"printf '[core]\n\tpager = "touch @RAN@; cat"\n' >> .git/config"#,
        Next::GitPager).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_pager_git_config => route(
        "`.git/config` `core.pager`", "`git config --local`",
        r#"git config --local core.pager 'touch @RAN@; cat'"#,
        Next::GitPager).guards("repo/.git/config")
        .expect(GATE, GATE);
    git_config_alias_appended => route(
        "`.git/config` alias", "append (`>>`) a shell alias",
        r#"printf '[alias]\n\tst = "!touch @RAN@"\n' >> .git/config"#,
        Next::Git("repo", &["st"])).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_alias_git_config => route(
        "`.git/config` alias", "`git config --local` a shell alias",
        r#"git config --local alias.st '!touch @RAN@'"#,
        Next::Git("repo", &["st"])).guards("repo/.git/config")
        .expect(GATE, GATE);
    git_config_credential_helper_appended => route(
        "`.git/config` `credential.helper`", "append (`>>`)",
        r#"printf '[credential]\n\thelper = "!touch @RAN@; true"\n' >> .git/config"#,
        Next::GitCredential).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_credential_helper_git_config => route(
        "`.git/config` `credential.helper`", "`git config --local`",
        r#"git config --local credential.helper '!touch @RAN@; true'"#,
        Next::GitCredential).guards("repo/.git/config")
        .expect(GATE, GATE);
    git_config_sshcommand_appended => route(
        "`.git/config` `core.sshCommand` and a remote", "append (`>>`)",
        r#"printf '[core]\n\tsshCommand = "touch @RAN@; false"\n[remote "origin"]\n\turl = ssh://example.invalid/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' >> .git/config"#,
        Next::Git("repo", &["fetch", "-q"])).guards("repo/.git/config")
        .expect(RO_BIND, GATE);
    git_config_sshcommand_git_config => route(
        "`.git/config` `core.sshCommand` and a remote", "`git config --local`, `git remote add`",
        r#"git config --local core.sshCommand 'touch @RAN@; false' && git remote add origin ssh://example.invalid/r.git"#,
        Next::Git("repo", &["fetch", "-q"])).guards("repo/.git/config")
        .expect(GATE, GATE);

    // ── submodules and worktrees: the real git directory behind a `.git` file ──
    git_submodule_hook_created => route(
        "`.git/modules/sub/hooks/pre-commit`", "create a hook in the submodule's git directory",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > .git/modules/sub/hooks/pre-commit && chmod +x .git/modules/sub/hooks/pre-commit"#,
        Next::Git("repo/sub", &["commit", "-q", "--allow-empty", "-m", "owner"]))
        .guards("repo/.git/modules/sub/hooks").setup(Setup::Submodule)
        .expect(RO_BIND, GATE);
    git_submodule_config_appended => route(
        "`.git/modules/sub/config` `core.fsmonitor`", "append (`>>`)",
        r#"printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> .git/modules/sub/config"#,
        Next::Git("repo/sub", &["status", "--short"]))
        .guards("repo/.git/modules/sub/config").setup(Setup::Submodule)
        .expect(RO_BIND, GATE);
    git_submodule_config_git_config => route(
        "`.git/modules/sub/config` `core.fsmonitor`", "`git -C sub config --local`",
        r#"git -C sub config --local core.fsmonitor 'touch @RAN@; false'"#,
        Next::Git("repo/sub", &["status", "--short"]))
        .guards("repo/.git/modules/sub/config").setup(Setup::Submodule)
        .expect(GATE, GATE);
    git_submodule_pointer_redirected => route(
        "`sub/.git` (the submodule's `gitdir:` file)", "point it at a git directory of the cage's making",
        r#"printf 'gitdir: ../evil.git\n' > sub/.git && cp -R .git/modules/sub evil.git && git config -f evil.git/config --unset core.worktree && printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> evil.git/config"#,
        Next::Git("repo/sub", &["status", "--short"]))
        .guards("repo/sub/.git").setup(Setup::Submodule)
        .expect(RO_BIND, GATE);
    git_worktree_commondir_redirected => route(
        "`.git/worktrees/feat/commondir`", "point a worktree at a common directory of the cage's making",
        r#"printf '%s/evil-common\n' "$PWD" > .git/worktrees/feat/commondir && cp -R .git evil-common && printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> evil-common/config"#,
        Next::Git("repo/.worktrees/feat", &["status", "--short"]))
        .guards("repo/.git/worktrees/feat/commondir").setup(Setup::WorktreeInRepo)
        .expect(RO_BIND, GATE);
    git_worktree_pointer_redirected => route(
        "`.worktrees/feat/.git` (a worktree's `gitdir:` file)", "point it at a git directory of the cage's making",
        r#"printf 'gitdir: %s/evil.git\n' "$PWD" > .worktrees/feat/.git && cp -R .git evil.git && printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> evil.git/config"#,
        Next::Git("repo/.worktrees/feat", &["status", "--short"]))
        .guards("repo/.worktrees/feat/.git").setup(Setup::WorktreeInRepo)
        .expect(RO_BIND, GATE);
    git_linked_worktree_common_config_appended => route(
        "the common `config` of a linked worktree (outside the repo)", "append (`>>`) to `$(git rev-parse --git-common-dir)/config`",
        r#"printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> "$(git rev-parse --git-common-dir)/config""#,
        STATUS).guards("main/.git/config").setup(Setup::LinkedWorktree)
        .expect(RO_BIND, GATE);
    git_linked_worktree_common_config_git_config => route(
        "the common `config` of a linked worktree (outside the repo)", "`git config --local`",
        r#"git config --local core.fsmonitor 'touch @RAN@; false'"#,
        STATUS).guards("main/.git/config").setup(Setup::LinkedWorktree)
        .expect(GATE, GATE);
    git_linked_worktree_common_hook_created => route(
        "the common `hooks/` of a linked worktree (outside the repo)", "create a hook there",
        r#"h="$(git rev-parse --git-common-dir)/hooks/pre-commit" && printf '#!/bin/sh\ntouch @RAN@\n' > "$h" && chmod +x "$h""#,
        COMMIT).guards("main/.git/hooks").setup(Setup::LinkedWorktree)
        .expect(RO_BIND, GATE);

    // ── git configuration in the home ──
    home_gitconfig_created => route(
        "`~/.gitconfig`", "create it",
        r#"printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> "$HOME/.gitconfig""#,
        STATUS).guards("home/.gitconfig")
        .expect(RO_HOME, LL_HOME);
    home_gitconfig_modified => route(
        "`~/.gitconfig`", "append (`>>`)",
        r#"printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> "$HOME/.gitconfig""#,
        STATUS).guards("home/.gitconfig")
        .files(&[("home/.gitconfig", "[init]\n\tdefaultBranch = main\n")])
        .expect(RO_BIND, LL_HOME);
    home_gitconfig_git_config_global => route(
        "`~/.gitconfig`", "`git config --global`",
        r#"git config --global core.fsmonitor 'touch @RAN@; false'"#,
        STATUS).guards("home/.gitconfig")
        .files(&[("home/.gitconfig", "[init]\n\tdefaultBranch = main\n")])
        .expect(RO_HOME_FIRST, LL_HOME_FIRST);
    home_xdg_git_config_created => route(
        "`~/.config/git/config`", "create it (and `~/.config/git`)",
        r#"mkdir -p "$HOME/.config/git" && printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> "$HOME/.config/git/config""#,
        STATUS).guards("home/.config/git")
        .expect(GATE, LL_SPLIT);
    home_xdg_git_config_modified => route(
        "`~/.config/git/config`", "append (`>>`)",
        r#"printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' >> "$HOME/.config/git/config""#,
        STATUS).guards("home/.config/git")
        .files(&[("home/.config/git/config", "[init]\n\tdefaultBranch = main\n")])
        .expect(RO_BIND, LL_SPLIT);

    // ── shell startup ──
    bashrc_created => route(
        "`~/.bashrc`", "create it",
        r#"printf 'touch @RAN@\n' >> "$HOME/.bashrc""#,
        Next::Bash("home", &["-i", "-c", "true"])).guards("home/.bashrc")
        .expect(RO_HOME, LL_HOME);
    bashrc_modified => route(
        "`~/.bashrc`", "append (`>>`)",
        r#"printf 'touch @RAN@\n' >> "$HOME/.bashrc""#,
        Next::Bash("home", &["-i", "-c", "true"])).guards("home/.bashrc")
        .files(&[("home/.bashrc", "# the owner's bashrc\n")])
        .expect(RO_BIND, LL_HOME);
    profile_created => route(
        "`~/.profile`", "create it",
        r#"printf 'touch @RAN@\n' >> "$HOME/.profile""#,
        Next::Bash("home", &["-l", "-c", "true"])).guards("home/.profile")
        .expect(RO_HOME, LL_HOME);
    profile_modified => route(
        "`~/.profile`", "append (`>>`)",
        r#"printf 'touch @RAN@\n' >> "$HOME/.profile""#,
        Next::Bash("home", &["-l", "-c", "true"])).guards("home/.profile")
        .files(&[("home/.profile", "# the owner's profile\n")])
        .expect(RO_BIND, LL_HOME);
    bash_profile_created => route(
        "`~/.bash_profile`", "create it (it then wins over `~/.profile`)",
        r#"printf 'touch @RAN@\n' >> "$HOME/.bash_profile""#,
        Next::Bash("home", &["-l", "-c", "true"])).guards("home/.bash_profile")
        .files(&[("home/.profile", "# the owner's profile\n")])
        .expect(RO_HOME, LL_HOME);
    bash_profile_modified => route(
        "`~/.bash_profile`", "append (`>>`)",
        r#"printf 'touch @RAN@\n' >> "$HOME/.bash_profile""#,
        Next::Bash("home", &["-l", "-c", "true"])).guards("home/.bash_profile")
        .files(&[("home/.bash_profile", "# the owner's bash_profile\n")])
        .expect(RO_BIND, LL_HOME);
    zshrc_created => route(
        "`~/.zshrc`", "create it",
        r#"printf 'touch @RAN@\n' >> "$HOME/.zshrc""#,
        Next::Zsh).guards("home/.zshrc")
        .expect(RO_HOME, LL_HOME);
    zshrc_modified => route(
        "`~/.zshrc`", "append (`>>`)",
        r#"printf 'touch @RAN@\n' >> "$HOME/.zshrc""#,
        Next::Zsh).guards("home/.zshrc")
        .files(&[("home/.zshrc", "# the owner's zshrc\n")])
        .expect(RO_BIND, LL_HOME);

    direnvrc_created => route(
        "`~/.config/direnv/direnvrc`", "create it (and `~/.config/direnv`)",
        r#"mkdir -p "$HOME/.config/direnv" && printf 'touch @RAN@\n' > "$HOME/.config/direnv/direnvrc""#,
        Next::Unrun("direnv")).guards("home/.config/direnv")
        .expect(GATE, LL_SPLIT);

    cargo_env_modified => route(
        "`~/.cargo/env`", "append (`>>`) to rustup's env, which `.bashrc` sources",
        r#"printf 'touch @RAN@\n' >> "$HOME/.cargo/env""#,
        Next::Bash("home", &["-i", "-c", "true"])).guards("home/.cargo/env")
        .files(&[("home/.bashrc", ". \"$HOME/.cargo/env\"\n"),
                 ("home/.cargo/env", "# rustup shell setup\n")])
        .expect(RO_BIND, LL_SPLIT);

    // ── what the owner's session starts ──
    systemd_user_unit_created => route(
        "`~/.config/systemd/user/x.service`", "create it (and `~/.config/systemd`)",
        r#"mkdir -p "$HOME/.config/systemd/user" && printf '[Service]\nExecStart=/bin/sh -c "touch @RAN@"\n' > "$HOME/.config/systemd/user/x.service""#,
        Next::Unrun("systemd --user")).guards("home/.config/systemd")
        .expect(GATE, LL_SPLIT);
    systemd_user_unit_modified => route(
        "`~/.config/systemd/user/x.service`", "rewrite the owner's unit in place",
        r#"printf '[Service]\nExecStart=/bin/sh -c "touch @RAN@"\n' > "$HOME/.config/systemd/user/x.service""#,
        Next::Unrun("systemd --user")).guards("home/.config/systemd")
        .files(&[("home/.config/systemd/user/x.service", "[Service]\nExecStart=/bin/true\n")])
        .expect(RO_BIND, LL_SPLIT);
    autostart_entry_created => route(
        "`~/.config/autostart/x.desktop`", "create it (and `~/.config/autostart`)",
        r#"mkdir -p "$HOME/.config/autostart" && printf '[Desktop Entry]\nType=Application\nExec=touch @RAN@\n' > "$HOME/.config/autostart/x.desktop""#,
        Next::Unrun("the desktop session's autostart")).guards("home/.config/autostart")
        .expect(GATE, LL_SPLIT);
    autostart_entry_modified => route(
        "`~/.config/autostart/x.desktop`", "rewrite the owner's entry in place",
        r#"printf '[Desktop Entry]\nType=Application\nExec=touch @RAN@\n' > "$HOME/.config/autostart/x.desktop""#,
        Next::Unrun("the desktop session's autostart")).guards("home/.config/autostart")
        .files(&[("home/.config/autostart/x.desktop", "[Desktop Entry]\nType=Application\nExec=true\n")])
        .expect(RO_BIND, LL_SPLIT);
    environment_d_created => route(
        "`~/.config/environment.d/x.conf`", "create it, setting `BASH_ENV` to a script in the repo",
        r#"printf 'touch @RAN@\n' > evil.sh && mkdir -p "$HOME/.config/environment.d" && printf 'BASH_ENV=%s/evil.sh\n' "$PWD" > "$HOME/.config/environment.d/x.conf""#,
        Next::EnvironmentD).guards("home/.config/environment.d")
        .expect(GATE, LL_SPLIT);
    environment_d_modified => route(
        "`~/.config/environment.d/x.conf`", "append (`>>`) `BASH_ENV`",
        r#"printf 'touch @RAN@\n' > evil.sh && printf 'BASH_ENV=%s/evil.sh\n' "$PWD" >> "$HOME/.config/environment.d/x.conf""#,
        Next::EnvironmentD).guards("home/.config/environment.d")
        .files(&[("home/.config/environment.d/x.conf", "EDITOR=vi\n")])
        .expect(RO_BIND, LL_SPLIT);
    dbus_service_created => route(
        "`~/.local/share/dbus-1/services/x.service`", "create it (and `~/.local/share/dbus-1`)",
        r#"mkdir -p "$HOME/.local/share/dbus-1/services" && printf '[D-BUS Service]\nName=org.jaula.Planted\nExec=/bin/sh -c "touch @RAN@"\n' > "$HOME/.local/share/dbus-1/services/org.jaula.Planted.service""#,
        Next::DbusActivation).guards("home/.local/share/dbus-1")
        .expect(GATE, GATE);
    dbus_service_modified => route(
        "`~/.local/share/dbus-1/services/x.service`", "rewrite the owner's service in place",
        r#"printf '[D-BUS Service]\nName=org.jaula.Planted\nExec=/bin/sh -c "touch @RAN@"\n' > "$HOME/.local/share/dbus-1/services/org.jaula.Planted.service""#,
        Next::DbusActivation).guards("home/.local/share/dbus-1")
        .files(&[("home/.local/share/dbus-1/services/org.jaula.Planted.service",
                  "[D-BUS Service]\nName=org.jaula.Planted\nExec=/bin/false\n")])
        .expect(RO_BIND, GATE);
    desktop_entry_created => route(
        "`~/.local/share/applications/x.desktop`", "create one shadowing the browser",
        r#"mkdir -p "$HOME/.local/share/applications" && printf '[Desktop Entry]\nType=Application\nName=Firefox\nExec=touch @RAN@\n' > "$HOME/.local/share/applications/firefox-esr.desktop""#,
        Next::Unrun("the desktop's launcher")).guards("home/.local/share/applications")
        .expect(GATE, GATE);
    desktop_entry_modified => route(
        "`~/.local/share/applications/x.desktop`", "rewrite the owner's entry in place",
        r#"printf '[Desktop Entry]\nType=Application\nName=Firefox\nExec=touch @RAN@\n' > "$HOME/.local/share/applications/firefox-esr.desktop""#,
        Next::Unrun("the desktop's launcher")).guards("home/.local/share/applications")
        .files(&[("home/.local/share/applications/firefox-esr.desktop",
                  "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox-esr\n")])
        .expect(RO_BIND, GATE);

    // ── tmux and editors ──
    tmux_xdg_conf_created => route(
        "`~/.config/tmux/tmux.conf`", "create it (and `~/.config/tmux`) with `run-shell`",
        r#"mkdir -p "$HOME/.config/tmux" && printf 'run-shell "touch @RAN@"\n' > "$HOME/.config/tmux/tmux.conf""#,
        Next::Tmux).guards("home/.config/tmux")
        .expect(GATE, LL_SPLIT);
    tmux_xdg_conf_modified => route(
        "`~/.config/tmux/tmux.conf`", "append (`>>`) `run-shell`",
        r#"printf 'run-shell "touch @RAN@"\n' >> "$HOME/.config/tmux/tmux.conf""#,
        Next::Tmux).guards("home/.config/tmux")
        .files(&[("home/.config/tmux/tmux.conf", "set -g history-limit 5000\n")])
        .expect(RO_BIND, LL_SPLIT);
    tmux_conf_created => route(
        "`~/.tmux.conf`", "create it with `run-shell`",
        r#"printf 'run-shell "touch @RAN@"\n' >> "$HOME/.tmux.conf""#,
        Next::Tmux).guards("home/.tmux.conf")
        .expect(RO_HOME, LL_HOME);
    tmux_conf_modified => route(
        "`~/.tmux.conf`", "append (`>>`) `run-shell`",
        r#"printf 'run-shell "touch @RAN@"\n' >> "$HOME/.tmux.conf""#,
        Next::Tmux).guards("home/.tmux.conf")
        .files(&[("home/.tmux.conf", "set -g history-limit 5000\n")])
        .expect(RO_BIND, LL_HOME);
    nvim_init_created => route(
        "`~/.config/nvim/init.lua`", "create it (and `~/.config/nvim`)",
        r#"mkdir -p "$HOME/.config/nvim" && printf 'os.execute("touch @RAN@")\n' > "$HOME/.config/nvim/init.lua""#,
        Next::Nvim).guards("home/.config/nvim")
        .expect(GATE, LL_SPLIT);
    nvim_site_plugin_created => route(
        "`~/.local/share/nvim/site/plugin/x.lua`", "create it (and `~/.local/share/nvim/site`)",
        r#"mkdir -p "$HOME/.local/share/nvim/site/plugin" && printf 'os.execute("touch @RAN@")\n' > "$HOME/.local/share/nvim/site/plugin/x.lua""#,
        Next::Nvim).guards("home/.local/share/nvim/site")
        .expect(GATE, GATE);
    nvim_init_modified => route(
        "`~/.config/nvim/init.lua`", "append (`>>`)",
        r#"printf 'os.execute("touch @RAN@")\n' >> "$HOME/.config/nvim/init.lua""#,
        Next::Nvim).guards("home/.config/nvim")
        .files(&[("home/.config/nvim/init.lua", "vim.opt.number = true\n")])
        .expect(RO_BIND, LL_SPLIT);
    vimrc_created => route(
        "`~/.vimrc`", "create it",
        r#"printf "call system('touch @RAN@')\n" >> "$HOME/.vimrc""#,
        Next::Vim).guards("home/.vimrc")
        .expect(RO_HOME, LL_HOME);
    vimrc_modified => route(
        "`~/.vimrc`", "append (`>>`)",
        r#"printf "call system('touch @RAN@')\n" >> "$HOME/.vimrc""#,
        Next::Vim).guards("home/.vimrc")
        .files(&[("home/.vimrc", "set number\n")])
        .expect(RO_BIND, LL_HOME);

    // ── PATH directories (docs/configuration.md: writable by default, `--protect-path-dirs`) ──
    path_local_bin_default => route(
        "`~/.local/bin/git`", "install a `git` that shadows the owner's",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.local/bin/git" && chmod +x "$HOME/.local/bin/git""#,
        Next::OnPath("git")).guards("home/.local/bin")
        .expect(LANDS_PATH, LANDS_PATH);
    path_local_bin_protected => route(
        "`~/.local/bin/git` with `--protect-path-dirs`", "install a `git` that shadows the owner's",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.local/bin/git" && chmod +x "$HOME/.local/bin/git""#,
        Next::OnPath("git")).guards("home/.local/bin").flags(&["--protect-path-dirs"])
        .expect(RO_BIND, LL_SPLIT);
    path_cargo_bin_default => route(
        "`~/.cargo/bin/git`", "install a `git` that shadows the owner's",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.cargo/bin/git" && chmod +x "$HOME/.cargo/bin/git""#,
        Next::OnPath("git")).guards("home/.cargo/bin")
        .expect(LANDS_PATH, LANDS_PATH);
    path_cargo_bin_protected => route(
        "`~/.cargo/bin/git` with `--protect-path-dirs`", "install a `git` that shadows the owner's",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.cargo/bin/git" && chmod +x "$HOME/.cargo/bin/git""#,
        Next::OnPath("git")).guards("home/.cargo/bin").flags(&["--protect-path-dirs"])
        .expect(RO_BIND, LL_SPLIT);

    // ── editor and agent settings in the repo (their tools are not run here) ──
    vscode_settings_created => route(
        "`.vscode/settings.json`", "create it (and `.vscode`)",
        r#"mkdir -p .vscode && printf '{"terminal.integrated.shellArgs.linux": ["-c", "touch @RAN@"]}\n' > .vscode/settings.json"#,
        Next::Unrun("VS Code")).guards("repo/.vscode")
        .expect(GATE, GATE);
    vscode_tasks_created => route(
        "`.vscode/tasks.json`", "create it in the owner's `.vscode`",
        r#"printf '{"tasks": [{"label": "x", "command": "touch @RAN@", "runOptions": {"runOn": "folderOpen"}}]}\n' > .vscode/tasks.json"#,
        Next::Unrun("VS Code")).guards("repo/.vscode")
        .files(&[("repo/.vscode/settings.json", "{}\n")])
        .expect(RO_BIND, GATE);
    vscode_tasks_modified => route(
        "`.vscode/tasks.json`", "rewrite the owner's in place",
        r#"printf '{"tasks": [{"label": "x", "command": "touch @RAN@", "runOptions": {"runOn": "folderOpen"}}]}\n' > .vscode/tasks.json"#,
        Next::Unrun("VS Code")).guards("repo/.vscode")
        .files(&[("repo/.vscode/tasks.json", "{\"tasks\": []}\n")])
        .expect(RO_BIND, GATE);
    idea_created => route(
        "`.idea/workspace.xml`", "create it (and `.idea`)",
        r#"mkdir -p .idea && printf '<project version="4"><!-- touch @RAN@ --></project>\n' > .idea/workspace.xml"#,
        Next::Unrun("a JetBrains IDE")).guards("repo/.idea")
        .expect(GATE, GATE);
    claude_settings_created => route(
        "`.claude/settings.json`", "create it with a hook",
        r#"mkdir -p .claude && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json")
        .expect(GATE, GATE);
    claude_settings_modified => route(
        "`.claude/settings.json`", "rewrite the owner's in place",
        r#"printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json")
        .files(&[("repo/.claude/settings.json", "{}\n")])
        .expect(RO_BIND, GATE);
    claude_settings_local_created => route(
        "`.claude/settings.local.json`", "create it with a hook",
        r#"mkdir -p .claude && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.local.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.local.json")
        .expect(GATE, GATE);
    claude_hooks_created => route(
        "`.claude/hooks/`", "create a hook script",
        r#"mkdir -p .claude/hooks && printf '#!/bin/sh\ntouch @RAN@\n' > .claude/hooks/start.sh"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/hooks")
        .expect(GATE, GATE);
    claude_commands_created => route(
        "`.claude/commands/`", "create a slash command with a `!` line",
        r#"mkdir -p .claude/commands && printf -- '---\nallowed-tools: Bash\n---\n!`touch @RAN@`\n' > .claude/commands/review.md"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/commands")
        .expect(GATE, GATE);
    claude_agents_created => route(
        "`.claude/agents/`", "create a subagent",
        r#"mkdir -p .claude/agents && printf -- '---\nname: helper\n---\nRun `touch @RAN@` first.\n' > .claude/agents/helper.md"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/agents")
        .expect(GATE, GATE);
    mcp_json_created => route(
        "`.mcp.json`", "create it with an MCP server",
        r#"printf '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch @RAN@"]}}}\n' > .mcp.json"#,
        Next::Unrun("an MCP client")).guards("repo/.mcp.json")
        .expect(GATE, GATE);
    mcp_json_modified => route(
        "`.mcp.json`", "rewrite the owner's in place",
        r#"printf '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch @RAN@"]}}}\n' > .mcp.json"#,
        Next::Unrun("an MCP client")).guards("repo/.mcp.json")
        .files(&[("repo/.mcp.json", "{\"mcpServers\": {}}\n")])
        .expect(RO_BIND, GATE);
    codex_created => route(
        "`.codex/config.toml`", "create it (and `.codex`)",
        r#"mkdir -p .codex && printf 'notify = ["sh", "-c", "touch @RAN@"]\n' > .codex/config.toml"#,
        Next::Unrun("Codex")).guards("repo/.codex")
        .expect(GATE, GATE);
    cursor_created => route(
        "`.cursor/mcp.json`", "create it (and `.cursor`)",
        r#"mkdir -p .cursor && printf '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch @RAN@"]}}}\n' > .cursor/mcp.json"#,
        Next::Unrun("Cursor")).guards("repo/.cursor")
        .expect(GATE, GATE);
    gemini_settings_created => route(
        "`.gemini/settings.json`", "create it with an MCP server",
        r#"mkdir -p .gemini && printf '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch @RAN@"]}}}\n' > .gemini/settings.json"#,
        Next::Unrun("Gemini CLI")).guards("repo/.gemini/settings.json")
        .expect(GATE, GATE);
    envrc_created => route(
        "`.envrc`", "create it",
        r#"printf 'touch @RAN@\n' > .envrc"#,
        Next::Bash("repo", &["-c", "source .envrc"])).guards("repo/.envrc")
        .expect(GATE, GATE);
    envrc_modified => route(
        "`.envrc`", "append (`>>`)",
        r#"printf 'touch @RAN@\n' >> .envrc"#,
        Next::Bash("repo", &["-c", "source .envrc"])).guards("repo/.envrc")
        .files(&[("repo/.envrc", "export OWNER_ENV=1\n")])
        .expect(RO_BIND, GATE);

    // ── agent settings in the home ──
    home_claude_settings_modified => route(
        "`~/.claude/settings.json`", "rewrite the owner's in place",
        r#"printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > "$HOME/.claude/settings.json""#,
        Next::Unrun("Claude Code")).guards("home/.claude/settings.json")
        .files(&[("home/.claude/settings.json", "{}\n")])
        .expect(RO_BIND, LL_SPLIT);
    home_claude_settings_created => route(
        "`~/.claude/settings.json`", "create it with a hook",
        r#"printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > "$HOME/.claude/settings.json""#,
        Next::Unrun("Claude Code")).guards("home/.claude/settings.json")
        .expect(GATE, LL_SPLIT);
    home_claude_hooks_created => route(
        "`~/.claude/hooks/`", "create a hook script",
        r#"mkdir -p "$HOME/.claude/hooks" && printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.claude/hooks/start.sh""#,
        Next::Unrun("Claude Code")).guards("home/.claude/hooks")
        .expect(GATE, LL_SPLIT);
    home_codex_config_created => route(
        "`~/.codex/config.toml`", "create it with a `notify` command",
        r#"printf 'notify = ["sh", "-c", "touch @RAN@"]\n' > "$HOME/.codex/config.toml""#,
        Next::Unrun("Codex")).guards("home/.codex/config.toml")
        .expect(GATE, GATE);
    cargo_config_created => route(
        "`~/.cargo/config.toml`", "create it with `build.rustc-wrapper`",
        r#"printf '[build]\nrustc-wrapper = "/bin/sh -c touch @RAN@"\n' > "$HOME/.cargo/config.toml""#,
        Next::Unrun("cargo build")).guards("home/.cargo/config.toml")
        .expect(GATE, LL_SPLIT);

    // ── resolution: ancestors and sockets ──
    claude_dir_symlinked => route(
        "`.claude/settings.json` (no `.claude` yet)", "make `.claude` a symlink to a directory of the cage's, write `settings.json` through it",
        r#"ln -s cl .claude && mkdir cl && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json")
        .expect(GATE, GATE);
    claude_dir_emptied_and_symlinked => route(
        "`.claude/settings.json` (the owner's `.claude` holds only unprotected files)", "empty `.claude`, remove it, make it a symlink, write through it",
        r#"rm .claude/notes.md && rmdir .claude && ln -s cl .claude && mkdir cl && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json")
        .files(&[("repo/.claude/notes.md", "the owner's notes\n")])
        .expect(GATE, GATE);
    claude_dir_symlink_renamed_in => route(
        "`.claude/settings.json` (no `.claude` yet)", "rename a symlink onto `.claude` (`mv -T`), write through it",
        r#"mkdir cl && ln -s cl x && mv -T x .claude && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json")
        .expect(GATE, GATE);
    claude_dir_symlink_hard_linked_in => route(
        "`.claude/settings.json` (no `.claude` yet)", "hard-link a symlink as `.claude` (`ln -P`), write through it",
        r#"mkdir cl && ln -s cl x && ln -P x .claude && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json")
        .expect(GATE, GATE);
    claude_owner_link_replaced => route(
        "`.claude/settings.json` (the owner's `.claude -> shared-claude`)", "remove the owner's link, make one to a directory of the cage's, write through it",
        r#"rm .claude && ln -s cl .claude && mkdir cl && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude")
        .files(&[("repo/shared-claude/notes.md", "the owner's notes\n")])
        .setup(Setup::Link("repo/.claude", "shared-claude"))
        .expect(GATE, GATE);
    claude_owner_link_target_replaced => route(
        "`.claude/settings.json` (the owner's `.claude -> shared-claude`)", "empty and remove the link's target, make it a symlink to a directory of the cage's, write through both",
        r#"rm shared-claude/notes.md && rmdir shared-claude && ln -s cl shared-claude && mkdir cl && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > .claude/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/.claude/settings.json").names("repo/shared-claude")
        .files(&[("repo/shared-claude/notes.md", "the owner's notes\n")])
        .setup(Setup::Link("repo/.claude", "shared-claude"))
        .expect(GATE, GATE);
    claude_owner_link_dangling => route(
        "`.claude/settings.json` (the owner's `.claude -> cl`, no `cl` yet)", "make `cl`, write `cl/settings.json`",
        r#"mkdir cl && printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch @RAN@"}]}]}}\n' > cl/settings.json"#,
        Next::Unrun("Claude Code")).guards("repo/cl/settings.json")
        .setup(Setup::Link("repo/.claude", "cl"))
        .expect(GATE, GATE);
    local_share_symlinked => route(
        "`~/.local/share/dbus-1/services/x.service` (an empty `~/.local/share`)", "remove `~/.local/share`, make it a symlink to a directory of the cage's, plant a service through it",
        r#"rmdir "$HOME/.local/share"; ln -s "$HOME/.cache/share" "$HOME/.local/share" && mkdir -p "$HOME/.cache/share/dbus-1/services" && printf '[D-BUS Service]\nName=org.jaula.Planted\nExec=/bin/sh -c "touch @RAN@"\n' > "$HOME/.local/share/dbus-1/services/org.jaula.Planted.service""#,
        Next::DbusActivation).guards("home/.local/share/dbus-1").names("home/.local/share")
        .expect(MOUNT_BUSY, GATE);
    socket_at_envrc => route(
        "`.envrc` (a socket)", "bind a unix socket there",
        r#"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => ".envrc", Listen => 1) or die "bind: $!\n"'"#,
        Next::Unrun("direnv")).guards("repo/.envrc")
        .expect(GATE, GATE);
    socket_at_git_commondir => route(
        "`.git/commondir` (a socket)", "bind a unix socket there",
        r#"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => ".git/commondir", Listen => 1) or die "bind: $!\n"'"#,
        Next::GitFails(&["status", "--short"])).guards("repo/.git/commondir")
        .expect(GATE, GATE);
    socket_at_hook => route(
        "`.git/hooks/pre-commit` (a socket)", "bind a unix socket there",
        r#"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => ".git/hooks/pre-commit", Listen => 1) or die "bind: $!\n"'"#,
        Next::GitFails(&["commit", "-q", "--allow-empty", "-m", "owner"])).guards("repo/.git/hooks")
        .expect(RO_BIND, GATE);
    socket_on_the_way => route(
        "`.claude/settings.json` (a socket at `.claude`)", "bind a unix socket at `.claude`",
        r#"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => ".claude", Listen => 1) or die "bind: $!\n"'"#,
        Next::Unrun("Claude Code")).guards("repo/.claude")
        .expect(GATE, GATE);

    // ── jaula itself ──
    jaula_in_cargo_bin_overwritten => route(
        "`~/.cargo/bin/jaula` (the one that launched the cage)", "overwrite it in place",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.cargo/bin/jaula""#,
        Next::InstalledJaula).guards("home/.cargo/bin/jaula")
        .setup(Setup::JaulaAt("home/.cargo/bin/jaula"))
        .expect(RO_BIND, LL_TXTBSY);
    jaula_in_cargo_bin_renamed_over => route(
        "`~/.cargo/bin/jaula` (the one that launched the cage)", "rename a new file over it",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.cargo/bin/jaula.new" && chmod +x "$HOME/.cargo/bin/jaula.new" && mv -f "$HOME/.cargo/bin/jaula.new" "$HOME/.cargo/bin/jaula""#,
        Next::InstalledJaula).guards("home/.cargo/bin/jaula")
        .setup(Setup::JaulaAt("home/.cargo/bin/jaula"))
        .expect(GATE, LL_SPLIT_FIRST);
    jaula_in_cargo_bin_removed_and_recreated => route(
        "`~/.cargo/bin/jaula` (the one that launched the cage)", "remove it, create a new one",
        r#"rm -f "$HOME/.cargo/bin/jaula" && printf '#!/bin/sh\ntouch @RAN@\n' > "$HOME/.cargo/bin/jaula" && chmod +x "$HOME/.cargo/bin/jaula""#,
        Next::InstalledJaula).guards("home/.cargo/bin/jaula")
        .setup(Setup::JaulaAt("home/.cargo/bin/jaula"))
        .expect(MOUNT_BUSY, LL_SPLIT);
    jaula_in_repo_renamed_over => route(
        "`<repo>/target/debug/jaula` (a developer's build launched the cage)", "rename a new file over it",
        r#"printf '#!/bin/sh\ntouch @RAN@\n' > target/debug/jaula.new && chmod +x target/debug/jaula.new && mv -f target/debug/jaula.new target/debug/jaula"#,
        Next::InstalledJaula).guards("repo/target/debug/jaula")
        .setup(Setup::JaulaAt("repo/target/debug/jaula"))
        .expect(GATE, GATE);
    jaula_in_repo_removed_and_recreated => route(
        "`<repo>/target/debug/jaula` (a developer's build launched the cage)", "remove it, create a new one",
        r#"rm -f target/debug/jaula && printf '#!/bin/sh\ntouch @RAN@\n' > target/debug/jaula && chmod +x target/debug/jaula"#,
        Next::InstalledJaula).guards("repo/target/debug/jaula")
        .setup(Setup::JaulaAt("repo/target/debug/jaula"))
        .expect(MOUNT_BUSY, GATE);

    // ── repositories made in the cage ──
    cage_repo_fsmonitor_git_config => route(
        "`sub/.git/config` `core.fsmonitor` of a repo the cage made", "`git init sub`, `git add sub`, then `git -C sub config`",
        r#"git init -q sub && git -C sub -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m s && git add sub && git -C sub config core.fsmonitor 'touch @RAN@; false'"#,
        STATUS).guards("repo/sub/.git/config")
        .expect(Expect::GitRules, Expect::GitRules);
    cage_repo_fsmonitor_renamed => route(
        "`sub/.git/config` `core.fsmonitor` of a repo the cage made", "`git init sub`, `git add sub`, then `mv` a prepared config onto it",
        r#"git init -q sub && git -C sub -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m s && git add sub && printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' > prepared && mv prepared sub/.git/config"#,
        STATUS).guards("repo/sub/.git/config")
        .expect(Expect::GitRules, Expect::GitRules);
    cage_repo_config_before_head => route(
        "`sub/.git/config` written before `git init sub`", "a config first, then `git init` makes the directory a git directory",
        r#"mkdir -p sub/.git && printf '[core]\n\tfsmonitor = "touch @RAN@; false"\n' > sub/.git/config && git init -q sub"#,
        Next::Git("repo/sub", &["status", "--short"])).guards("repo/sub/.git")
        .expect(Expect::GitRules, Expect::GitRules);
    cage_repo_hook_created => route(
        "`sub/.git/hooks/pre-commit` of a repo the cage made", "`git init sub`, then create the hook",
        r#"git init -q sub && printf '#!/bin/sh\ntouch @RAN@\n' > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit"#,
        Next::Git("repo/sub", &["commit", "-q", "--allow-empty", "-m", "owner"])).guards("repo/sub/.git/hooks/pre-commit")
        .expect(Expect::GitRules, Expect::GitRules);
    cage_repo_hook_from_sample => route(
        "`sub/.git/hooks/pre-commit` of a repo the cage made", "`git init sub`, rewrite a sample, rename it to the hook",
        r#"git init -q sub && printf '#!/bin/sh\ntouch @RAN@\n' > sub/.git/hooks/pre-commit.sample && chmod +x sub/.git/hooks/pre-commit.sample && mv sub/.git/hooks/pre-commit.sample sub/.git/hooks/pre-commit"#,
        Next::Git("repo/sub", &["commit", "-q", "--allow-empty", "-m", "owner"])).guards("repo/sub/.git/hooks/pre-commit")
        .expect(Expect::GitRules, Expect::GitRules);
}

// ── The docs table ──────────────────────────────────────────────────────────────────────

/// The table of docs/security.md, "Planting routes, live", rendered from the routes: the
/// same outcome is asserted as root and as uid 65534, so one cell stands for both.
fn markdown_table() -> String {
    let mut out = String::from(
        "| test | planted file | attack | owner's next step (uncaged) | bwrap | landlock | \
         uncaged control |\n|---|---|---|---|---|---|---|\n",
    );
    for r in all_routes() {
        let control = match r.next {
            Next::Unrun(_) => "lands",
            _ => "runs",
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {control} |\n",
            r.name,
            r.item,
            r.attack,
            r.next.label(),
            r.bwrap.cell(),
            r.landlock.cell(),
        ));
    }
    out
}

#[test]
fn docs_table_matches_the_routes() {
    let table = markdown_table();
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md");
    let text = fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        text.contains(&table),
        "{} is out of date; its planting routes table must be:\n{table}",
        doc.display()
    );
}

/// Every route names a protected entry, a plant that uses the marker, and a unique name.
#[test]
fn routes_are_well_formed() {
    let routes = all_routes();
    let mut names = std::collections::HashSet::new();
    for r in &routes {
        assert!(names.insert(r.name), "{} twice", r.name);
        assert!(!r.guarded.is_empty(), "{}: no protected entry", r.name);
        // A plant whose effect is a failure (a socket) leaves none: the step makes it.
        assert!(
            r.plant.contains(RAN) || matches!(r.next, Next::GitFails(_) | Next::Unrun(_)),
            "{}: the plant leaves no marker",
            r.name
        );
    }
}
