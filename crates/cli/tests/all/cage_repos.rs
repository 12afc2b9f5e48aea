//! Repositories the cage makes, live: the owner's next uncaged git command in one runs
//! nothing the cage chose.
//!
//! Only the git directories found at launch are protected paths. A cage that runs `git
//! init sub`, sets `core.fsmonitor` in `sub/.git/config` and `git add sub` would have the
//! owner's next `git status` in the parent run its command; a hook in `sub/.git/hooks`
//! would run at the owner's next commit there. The gate's supervisor installs a git
//! directory's config only after reading it, and makes no hook. For each backend and
//! identity (root, and uid 65534): every attack fails naming what it refused and the
//! owner's git on the host runs nothing, while the same script run uncaged (the control)
//! does plant; and ordinary work (init, clone, remote add, config user.name, submodule
//! add, worktree add, cargo new) succeeds, with the owner's git working in it afterwards.

use crate::common;
use jaula_testkit::case_tests;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{jaula, scratch, skip_or_fail, User, HOST_PATH};
use jaula_testkit::output::describe as text;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    /// A bare repository with one commit on `main`, made by the test: what a clone or a
    /// submodule comes from (no network).
    bare: PathBuf,
    user: User,
}

/// The gits this host has: Debian's, and a newer one in /usr/local when installed.
fn gits() -> Vec<&'static str> {
    ["/usr/bin/git", "/usr/local/bin/git"]
        .into_iter()
        .filter(|g| Path::new(g).exists())
        .collect()
}

impl Fixture {
    fn new(name: &str, user: User) -> Fixture {
        let (dir, root) = scratch(&format!("cage-repos-{name}-"));
        let home = root.join("home");
        let repo = root.join("repo");
        let bare = root.join("bare.git");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&repo).unwrap();
        let f = Fixture {
            _dir: dir,
            root,
            home,
            repo,
            bare,
            user,
        };
        user.own(&f.root);
        f.owner_git(&f.repo, &["init", "-q", "-b", "main"]);
        fs::write(f.repo.join("file.txt"), "one\n").unwrap();
        f.owner_git(&f.repo, &["add", "."]);
        f.owner_git(&f.repo, &["commit", "-q", "-m", "init"]);
        f.owner_git(&f.root, &["init", "-q", "--bare", "-b", "main", "bare.git"]);
        f.owner_git(&f.repo, &["push", "-q", f.bare.to_str().unwrap(), "main"]);
        user.own(&f.root);
        f
    }

    fn as_owner(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", HOST_PATH)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "owner")
            .env("GIT_AUTHOR_EMAIL", "owner@example.invalid")
            .env("GIT_COMMITTER_NAME", "owner")
            .env("GIT_COMMITTER_EMAIL", "owner@example.invalid")
            .env("LC_ALL", "C");
        self.user.apply(cmd);
    }

    /// git on the host, as the owner, which must succeed.
    fn owner_git(&self, dir: &Path, args: &[&str]) -> Output {
        let out = self.owner_git_output(dir, args);
        assert!(
            out.status.success(),
            "{:?}: owner's git {args:?} in {}: {}",
            self.user,
            dir.display(),
            text(&out)
        );
        out
    }

    fn owner_git_output(&self, dir: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir).args(args);
        self.as_owner(&mut cmd);
        cmd.output().unwrap()
    }

    /// `sh -c script` in `jaula run --backend B`, in the repo, as the fixture's user, with
    /// `$ROOT` and `$BARE` set.
    fn caged(&self, backend: &str, script: &str) -> Output {
        let mut cmd = Command::new(jaula());
        cmd.args(["run", "--backend", backend, "--repo"])
            .arg(&self.repo)
            .arg("--home")
            .arg(&self.home)
            .args(["--", "/usr/bin/env"])
            .arg(format!("ROOT={}", self.root.display()))
            .arg(format!("BARE={}", self.bare.display()))
            .args(["/bin/sh", "-c", script])
            .current_dir(&self.repo);
        self.as_owner(&mut cmd);
        cmd.output().unwrap()
    }

    /// The same script run uncaged, as the owner: the control.
    fn uncaged(&self, script: &str) -> Output {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script]).current_dir(&self.repo);
        self.as_owner(&mut cmd);
        cmd.env("ROOT", &self.root).env("BARE", &self.bare);
        cmd.output().unwrap()
    }

    fn marker(&self) -> PathBuf {
        self.root.join("MARKER")
    }
}

fn backend_or_skip(backend: &str, user: User) -> bool {
    let f = Fixture::new("probe", user);
    common::cage_or_skip(backend, &f.caged(backend, "true"))
}

/// The issue's attack: `git init sub`, `core.fsmonitor` in `sub/.git/config` (through
/// `git config`, and by renaming a prepared file onto it), `git add sub` in the parent.
const FSMONITOR: &str = r#"
git init -q -b main sub
git -C sub -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m sub
git -C sub config core.fsmonitor "touch $ROOT/MARKER; false"
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch %s/MARKER; false"\n' "$ROOT" > prepared
mv prepared sub/.git/config
git add sub
"#;

fn fsmonitor_in_a_cage_made_repo(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    // The control: uncaged, the owner's next `git status` in the parent runs it.
    let control = Fixture::new("fsmonitor-control", user);
    let _ = control.uncaged(FSMONITOR);
    control.owner_git(&control.repo, &["status", "--short"]);
    assert!(
        control.marker().exists(),
        "{user:?}: uncaged, core.fsmonitor of a nested repo did not run at the owner's git status"
    );

    let f = Fixture::new(&format!("fsmonitor-{backend}"), user);
    let out = f.caged(backend, FSMONITOR);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("jaula: refused rename onto")
            && stderr.contains("sub/.git/config: git key core.fsmonitor"),
        "{user:?} {backend}: no refusal naming core.fsmonitor: {}",
        text(&out)
    );
    let config = fs::read_to_string(f.repo.join("sub/.git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    f.owner_git(&f.repo, &["status", "--short"]);
    f.owner_git(&f.repo.join("sub"), &["status", "--short"]);
    assert!(
        !f.marker().exists(),
        "{user:?} {backend}: the owner's git ran the cage's core.fsmonitor"
    );
}

/// A hook in a repository the cage made, by every route: written, copied, renamed from a
/// sample, linked, symlinked, a whole prepared `hooks` directory renamed into place.
const HOOK_ATTACKS: &[&str] = &[
    "printf '#!/bin/sh\\ntouch %s/MARKER\\n' \"$ROOT\" > h/.git/hooks/pre-commit; chmod +x h/.git/hooks/pre-commit",
    "printf '#!/bin/sh\\ntouch %s/MARKER\\n' \"$ROOT\" > staged; chmod +x staged; mv staged h/.git/hooks/pre-commit",
    "printf '#!/bin/sh\\ntouch %s/MARKER\\n' \"$ROOT\" > h/.git/hooks/pre-commit.sample; chmod +x h/.git/hooks/pre-commit.sample; mv h/.git/hooks/pre-commit.sample h/.git/hooks/pre-commit",
    "printf '#!/bin/sh\\ntouch %s/MARKER\\n' \"$ROOT\" > staged; chmod +x staged; ln staged h/.git/hooks/pre-commit",
    "printf '#!/bin/sh\\ntouch %s/MARKER\\n' \"$ROOT\" > staged; chmod +x staged; ln -s \"$PWD/staged\" h/.git/hooks/pre-commit",
    "mkdir -p hk; printf '#!/bin/sh\\ntouch %s/MARKER\\n' \"$ROOT\" > hk/pre-commit; chmod +x hk/pre-commit; mv h/.git/hooks h/.git/hooks-away; mv hk h/.git/hooks",
];

fn hook_in_a_cage_made_repo(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let setup = "git init -q -b main h";
    // The control: each route, uncaged, plants a hook that runs at the owner's commit.
    for attack in HOOK_ATTACKS {
        let control = Fixture::new("hook-control", user);
        let out = control.uncaged(&format!("{setup} && {attack}"));
        assert!(out.status.success(), "control `{attack}`: {}", text(&out));
        control.owner_git(
            &control.repo.join("h"),
            &["commit", "-q", "--allow-empty", "-m", "o"],
        );
        assert!(
            control.marker().exists(),
            "{user:?}: uncaged, `{attack}` planted no hook that runs"
        );
    }

    let f = Fixture::new(&format!("hook-{backend}"), user);
    let out = f.caged(backend, setup);
    assert!(out.status.success(), "{}", text(&out));
    for attack in HOOK_ATTACKS {
        let out = f.caged(backend, &format!("set -e; {attack}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("jaula: refused"),
            "{user:?} {backend}: `{attack}` was not refused: {}",
            text(&out)
        );
        assert!(
            stderr.contains("git hook") || stderr.contains("hooks directory"),
            "{user:?} {backend}: `{attack}`: the refusal does not say why: {stderr}"
        );
    }
    f.owner_git(
        &f.repo.join("h"),
        &["commit", "-q", "--allow-empty", "-m", "owner"],
    );
    assert!(
        !f.marker().exists(),
        "{user:?} {backend}: the owner's commit ran a hook the cage planted"
    );
    assert!(!f.repo.join("h/.git/hooks/pre-commit").exists());
}

/// A config written before the directory is a git directory: refused when the directory
/// becomes one (by `git init`, or by making `objects`, `refs` and `HEAD`), and a
/// descriptor kept on it writes nothing the owner's git reads.
fn config_before_the_git_directory(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let evil = r#"printf '[core]\n\tfsmonitor = "touch %s/MARKER; false"\n' "$ROOT""#;
    let early = format!("mkdir -p e/.git && {evil} > e/.git/config && git init -q e");
    let by_hand = format!(
        "mkdir -p m/.git && {evil} > m/.git/config && mkdir m/.git/objects m/.git/refs && \
         echo 'ref: refs/heads/main' > m/.git/HEAD"
    );
    // A descriptor opened for writing while the directory was not a git directory, kept
    // across the moment it became one, and written afterwards.
    let kept = format!(
        "mkdir -p k/.git && : > k/.git/config && exec 3>>k/.git/config && \
         mkdir k/.git/objects k/.git/refs && echo 'ref: refs/heads/main' > k/.git/HEAD && \
         {evil} >&3"
    );

    for (name, script, dir) in [
        ("early", &early, "e"),
        ("by-hand", &by_hand, "m"),
        ("kept", &kept, "k"),
    ] {
        let control = Fixture::new(&format!("early-control-{name}"), user);
        let out = control.uncaged(script);
        assert!(out.status.success(), "control {name}: {}", text(&out));
        let _ = control.owner_git_output(&control.repo.join(dir), &["status", "--short"]);
        assert!(
            control.marker().exists(),
            "{user:?}: uncaged, the {name} config did not run at the owner's git status"
        );

        let f = Fixture::new(&format!("early-{name}-{backend}"), user);
        let out = f.caged(backend, script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if name == "kept" {
            // The directory became a git directory with an empty config, installed as a
            // new file: the write through the kept descriptor lands in the old one.
            assert!(out.status.success(), "{user:?} {backend}: {}", text(&out));
            let config = fs::read_to_string(f.repo.join("k/.git/config")).unwrap();
            assert!(!config.contains("fsmonitor"), "{config}");
        } else {
            assert!(
                !out.status.success() && stderr.contains("git key core.fsmonitor"),
                "{user:?} {backend}: the {name} config was not refused: {}",
                text(&out)
            );
        }
        let _ = f.owner_git_output(&f.repo.join(dir), &["status", "--short"]);
        assert!(
            !f.marker().exists(),
            "{user:?} {backend}: the owner's git ran the {name} config"
        );
    }
}

/// Ordinary work in repositories the cage makes, with each git the host has; then the
/// owner's git works in all of them.
fn ordinary_work_succeeds(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let f = Fixture::new(&format!("work-{backend}"), user);
    // A nested repository of the owner's, with a setting of the owner's that runs a
    // command: the cage's own changes there are admitted, and the owner's setting stays.
    let own = f.repo.join("own");
    f.owner_git(&f.repo, &["init", "-q", "-b", "main", "own"]);
    f.owner_git(&own, &["config", "core.pager", "less -R"]);
    let out = f.caged(
        backend,
        "set -e; git -C own config user.name agent; git -C own remote add origin \"$BARE\"",
    );
    assert!(
        out.status.success(),
        "{user:?} {backend}: git config in the owner's nested repo: {}",
        text(&out)
    );
    let config = fs::read_to_string(own.join(".git/config")).unwrap();
    assert!(
        config.contains("pager = less -R") && config.contains("name = agent"),
        "{config}"
    );
    // A new command-running key is still refused there.
    let out = f.caged(
        backend,
        "git -C own config core.editor 'touch \"$ROOT/MARKER\"'",
    );
    assert!(
        !out.status.success()
            && String::from_utf8_lossy(&out.stderr).contains("git key core.editor"),
        "{user:?} {backend}: core.editor in the owner's nested repo: {}",
        text(&out)
    );
    let mut made = vec!["own".to_string()];
    for (i, git) in gits().into_iter().enumerate() {
        let script = format!(
            r#"set -e
            G={git}
            $G init -q -b main w{i}
            cd w{i}
            $G config user.name agent
            $G config user.email agent@example.invalid
            $G remote add origin "$BARE"
            echo x > f
            $G add f
            $G commit -q -m first
            $G -c protocol.file.allow=always submodule add -q "$BARE" lib
            $G commit -q -m submodule
            $G worktree add -q ../wt{i}
            cd ..
            $G clone -q "$BARE" c{i}
            $G -C c{i} config user.name agent
            $G -C c{i} -c user.email=a@b.invalid commit -q --allow-empty -m cloned
            "#
        );
        let out = f.caged(backend, &script);
        assert!(
            out.status.success(),
            "{user:?} {backend} {git}: ordinary work failed: {}",
            text(&out)
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("jaula: refused"),
            "{}",
            text(&out)
        );
        made.extend([
            format!("w{i}"),
            format!("wt{i}"),
            format!("c{i}"),
            format!("w{i}/lib"),
        ]);
    }
    if Path::new("/usr/bin/cargo").exists() {
        let out = f.caged(backend, "/usr/bin/cargo new -q --vcs git krate");
        assert!(
            out.status.success(),
            "{user:?} {backend}: cargo new failed: {}",
            text(&out)
        );
        made.push("krate".into());
    } else {
        skip_or_fail("/usr/bin/cargo is not installed: cargo new not tried");
    }
    for dir in &made {
        let dir = f.repo.join(dir);
        f.owner_git(&dir, &["status", "--short"]);
        f.owner_git(&dir, &["commit", "-q", "--allow-empty", "-m", "owner"]);
    }
    f.owner_git(&f.repo.join("w0"), &["submodule", "status"]);
    let config = fs::read_to_string(f.repo.join("w0/.git/config")).unwrap();
    assert!(config.contains("name = agent") && config.contains("[remote \"origin\"]"));
    assert!(!f.marker().exists());
}

/// `core.worktree` set in a repository the cage made, leading where the cage may not
/// write: the owner's next checkout there writes what the cage committed. Into the launch
/// repo's `.git` (a hook), and into the home through a symlink (`~/.bashrc`).
const WORKTREE_ATTACKS: &[(&str, &str)] = &[
    (
        r#"git init -q -b main sub && cd sub && mkdir hooks && printf '#!/bin/sh\ntouch %s/MARKER\n' "$ROOT" > hooks/pre-commit && chmod +x hooks/pre-commit && git add -A && git -c user.name=a -c user.email=a@b.invalid commit -qm x && git config core.worktree ../../.git"#,
        "repo/.git/hooks/pre-commit",
    ),
    (
        r#"git init -q -b main sub && cd sub && printf 'touch %s/MARKER\n' "$ROOT" > .bashrc && git add -A && git -c user.name=a -c user.email=a@b.invalid commit -qm x && ln -s "$HOME" .git/wt && git config core.worktree wt"#,
        "home/.bashrc",
    ),
];

fn worktree_leading_out(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    for (attack, lands) in WORKTREE_ATTACKS {
        // The control: uncaged, the owner's checkout in `sub` writes the cage's file there.
        let control = Fixture::new("worktree-control", user);
        let out = control.uncaged(attack);
        assert!(out.status.success(), "control `{attack}`: {}", text(&out));
        let _ = control.owner_git_output(&control.repo.join("sub"), &["checkout", "--", "."]);
        assert!(
            control.root.join(lands).exists(),
            "{user:?}: uncaged, the owner's checkout did not write {lands}"
        );

        let f = Fixture::new(&format!("worktree-{backend}"), user);
        let out = f.caged(backend, attack);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("jaula: refused rename onto") && stderr.contains("core.worktree"),
            "{user:?} {backend}: `{attack}`: no refusal naming core.worktree: {}",
            text(&out)
        );
        let _ = f.owner_git_output(&f.repo.join("sub"), &["checkout", "--", "."]);
        let _ = f.owner_git_output(&f.repo, &["commit", "-q", "--allow-empty", "-m", "o"]);
        assert!(
            !f.root.join(lands).exists() && !f.marker().exists(),
            "{user:?} {backend}: `{attack}`: the owner's checkout wrote {lands}"
        );
    }
}

/// `renameat2(RENAME_WHITEOUT)` of a cage-made repository's config: unprivileged since
/// Linux 5.8, it leaves a 0:0 device where git reads the config (the owner's git then
/// fails in that repository). Refused like an exchange.
const WHITEOUT: &str = r#"git init -q -b main w && /usr/bin/python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, b"w/.git/config", -100, b"moved", 4)
sys.exit(0 if r == 0 else 3)
'"#;

fn whiteout_of_a_config(backend: &str, user: User) {
    use std::os::unix::fs::FileTypeExt;
    if !backend_or_skip(backend, user) {
        return;
    }
    let control = Fixture::new("whiteout-control", user);
    let out = control.uncaged(WHITEOUT);
    assert!(out.status.success(), "control: {}", text(&out));
    let left = fs::symlink_metadata(control.repo.join("w/.git/config")).unwrap();
    assert!(
        left.file_type().is_char_device(),
        "{user:?}: uncaged, no whiteout was left at the config"
    );

    let f = Fixture::new(&format!("whiteout-{backend}"), user);
    let out = f.caged(backend, WHITEOUT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(3)
            && stderr.contains("jaula: refused rename of")
            && stderr.contains("w/.git/config"),
        "{user:?} {backend}: the whiteout was not refused: {}",
        text(&out)
    );
    let config = fs::symlink_metadata(f.repo.join("w/.git/config")).unwrap();
    assert!(
        config.file_type().is_file(),
        "{user:?} {backend}: {config:?}"
    );
    f.owner_git(&f.repo.join("w"), &["status", "--short"]);
}

/// A rebase left stopped by a conflict in the launch repo: `side` (two commits) onto a
/// `main` that changed the same line.
fn stopped_rebase_fixture(name: &str, user: User) -> Fixture {
    let f = Fixture::new(name, user);
    let git = |args: &[&str]| f.owner_git(&f.repo, args);
    git(&["checkout", "-q", "-b", "side"]);
    fs::write(f.repo.join("file.txt"), "side\n").unwrap();
    git(&["commit", "-q", "-am", "side one"]);
    fs::write(f.repo.join("g.txt"), "g\n").unwrap();
    git(&["add", "g.txt"]);
    git(&["commit", "-q", "-m", "side two"]);
    git(&["checkout", "-q", "main"]);
    fs::write(f.repo.join("file.txt"), "main\n").unwrap();
    git(&["commit", "-q", "-am", "main two"]);
    git(&["checkout", "-q", "side"]);
    user.own(&f.root);
    f
}

/// Ways to leave a stopped rebase that runs a command at the owner's `git rebase
/// --continue`: an exec line appended in place, inserted by `sed -i` (a rename), a whole
/// prepared state directory renamed into place, and a merge strategy with a slash that git
/// runs through a `git-merge-..` directory (or link) at the worktree's top. Each starts
/// with `git rebase main`, which stops at the conflict.
const REBASE_ATTACKS: &[(&str, &str)] = &[
    (
        "append",
        "echo \"exec touch $ROOT/MARKER\" >> .git/rebase-merge/git-rebase-todo",
    ),
    (
        "sed",
        "sed -i \"1i exec touch $ROOT/MARKER\" .git/rebase-merge/git-rebase-todo",
    ),
    (
        "state-dir",
        "cp -r .git/rebase-merge staged && echo \"x touch $ROOT/MARKER\" >> staged/git-rebase-todo && \
         rm -rf .git/rebase-merge; mv staged .git/rebase-merge",
    ),
    (
        "strategy-dir",
        "printf '#!/bin/sh\\ntouch %s/MARKER\\nexit 1\\n' \"$ROOT\" > x && chmod +x x && \
         echo ../../x > .git/rebase-merge/strategy && mkdir git-merge-..",
    ),
    (
        "strategy-link",
        "printf '#!/bin/sh\\ntouch %s/MARKER\\nexit 1\\n' \"$ROOT\" > x && chmod +x x && \
         echo ../../x > .git/rebase-merge/strategy && mkdir -p sub && ln -s sub t && mv t git-merge-..",
    ),
];

/// The owner resolves the conflict and continues the rebase the cage left.
fn owner_continues(f: &Fixture) {
    fs::write(f.repo.join("file.txt"), "resolved\n").unwrap();
    let _ = f.owner_git_output(&f.repo, &["add", "file.txt"]);
    let mut cmd = Command::new("git");
    cmd.current_dir(&f.repo).args(["rebase", "--continue"]);
    f.as_owner(&mut cmd);
    cmd.env("GIT_EDITOR", "true");
    let _ = cmd.output().unwrap();
}

fn stopped_rebase_runs_nothing(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    for (name, attack) in REBASE_ATTACKS {
        let script = format!("git rebase -q main >/dev/null 2>&1; {attack}");
        let control = stopped_rebase_fixture(&format!("rebase-{name}-control"), user);
        let out = control.uncaged(&script);
        owner_continues(&control);
        assert!(
            control.marker().exists(),
            "{user:?}: uncaged, {name} did not run at the owner's rebase --continue: {}",
            text(&out)
        );

        let f = stopped_rebase_fixture(&format!("rebase-{name}-{backend}"), user);
        let out = f.caged(backend, &script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let named = if name.starts_with("strategy") {
            stderr.contains("git-merge-..") && stderr.contains("merge strategy")
        } else {
            stderr.contains("jaula: refused")
                && (stderr.contains("exec line") || stderr.contains("rebase-merge"))
        };
        assert!(
            named,
            "{user:?} {backend} {name}: no refusal naming the rebase state: {}",
            text(&out)
        );
        owner_continues(&f);
        assert!(
            !f.marker().exists(),
            "{user:?} {backend} {name}: the owner's rebase --continue ran the cage's command"
        );
    }
    // `git rebase --exec` itself: git's own todo list, refused when it is written.
    let f = stopped_rebase_fixture(&format!("rebase-exec-{backend}"), user);
    let out = f.caged(
        backend,
        "GIT_SEQUENCE_EDITOR=true git rebase -q --exec \"touch $ROOT/MARKER\" main",
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is an exec line"),
        "{user:?} {backend}: {}",
        text(&out)
    );
    owner_continues(&f);
    assert!(
        !f.marker().exists(),
        "{user:?} {backend}: rebase --exec ran"
    );
}

/// An agent's own rebases keep working: a todo list edited by `sed -i`, a conflict
/// resolved and continued, all in the cage; the owner's git then sees the rebased branch.
fn ordinary_rebase_succeeds(backend: &str, user: User) {
    if !backend_or_skip(backend, user) {
        return;
    }
    let f = stopped_rebase_fixture(&format!("rebase-work-{backend}"), user);
    let out = f.caged(
        backend,
        "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a.invalid GIT_COMMITTER_NAME=a \
         GIT_COMMITTER_EMAIL=a@a.invalid GIT_EDITOR=true; \
         GIT_SEQUENCE_EDITOR='sed -i s/^pick/pick/' git rebase -q -i main; \
         test -f .git/rebase-merge/git-rebase-todo || exit 9; \
         echo resolved > file.txt && git add file.txt && git rebase --continue && \
         git cherry-pick -n HEAD~1 >/dev/null 2>&1; git reset -q --hard",
    );
    assert!(out.status.success(), "{user:?} {backend}: {}", text(&out));
    let log = f.owner_git(&f.repo, &["log", "--format=%s", "main..side"]);
    assert_eq!(
        String::from_utf8_lossy(&log.stdout),
        "side two\nside one\n",
        "{user:?} {backend}"
    );
}

case_tests! {
    fsmonitor_landlock_root => fsmonitor_in_a_cage_made_repo("landlock", User::Root);
    fsmonitor_landlock_nobody => fsmonitor_in_a_cage_made_repo("landlock", User::Nobody);
    fsmonitor_bwrap_root => fsmonitor_in_a_cage_made_repo("bwrap", User::Root);
    fsmonitor_bwrap_nobody => fsmonitor_in_a_cage_made_repo("bwrap", User::Nobody);
    hook_landlock_root => hook_in_a_cage_made_repo("landlock", User::Root);
    hook_landlock_nobody => hook_in_a_cage_made_repo("landlock", User::Nobody);
    hook_bwrap_root => hook_in_a_cage_made_repo("bwrap", User::Root);
    hook_bwrap_nobody => hook_in_a_cage_made_repo("bwrap", User::Nobody);
    early_config_landlock_root => config_before_the_git_directory("landlock", User::Root);
    early_config_landlock_nobody => config_before_the_git_directory("landlock", User::Nobody);
    early_config_bwrap_root => config_before_the_git_directory("bwrap", User::Root);
    early_config_bwrap_nobody => config_before_the_git_directory("bwrap", User::Nobody);
    work_landlock_root => ordinary_work_succeeds("landlock", User::Root);
    work_landlock_nobody => ordinary_work_succeeds("landlock", User::Nobody);
    work_bwrap_root => ordinary_work_succeeds("bwrap", User::Root);
    work_bwrap_nobody => ordinary_work_succeeds("bwrap", User::Nobody);
    worktree_landlock_root => worktree_leading_out("landlock", User::Root);
    worktree_landlock_nobody => worktree_leading_out("landlock", User::Nobody);
    worktree_bwrap_root => worktree_leading_out("bwrap", User::Root);
    worktree_bwrap_nobody => worktree_leading_out("bwrap", User::Nobody);
    whiteout_landlock_root => whiteout_of_a_config("landlock", User::Root);
    whiteout_landlock_nobody => whiteout_of_a_config("landlock", User::Nobody);
    whiteout_bwrap_root => whiteout_of_a_config("bwrap", User::Root);
    whiteout_bwrap_nobody => whiteout_of_a_config("bwrap", User::Nobody);
    rebase_landlock_root => stopped_rebase_runs_nothing("landlock", User::Root);
    rebase_landlock_nobody => stopped_rebase_runs_nothing("landlock", User::Nobody);
    rebase_bwrap_root => stopped_rebase_runs_nothing("bwrap", User::Root);
    rebase_bwrap_nobody => stopped_rebase_runs_nothing("bwrap", User::Nobody);
    rebase_work_landlock_root => ordinary_rebase_succeeds("landlock", User::Root);
    rebase_work_landlock_nobody => ordinary_rebase_succeeds("landlock", User::Nobody);
    rebase_work_bwrap_root => ordinary_rebase_succeeds("bwrap", User::Root);
    rebase_work_bwrap_nobody => ordinary_rebase_succeeds("bwrap", User::Nobody);
}
