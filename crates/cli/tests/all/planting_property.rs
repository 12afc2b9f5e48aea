//! The planting guard as a property (issue 21, points 1 and 2), against the live gate.
//!
//! proptest draws short sequences of file calls (symlink, mkdir, rmdir, unlink, rename,
//! link, bind, write-open, truncate, and a few ways to make a nested repository) over a
//! small tree: a repo from the host's `git init` with scratch directories `a`, `b`, `cl`,
//! absent protected names (`.claude/settings.json`, `.claude/hooks`, `.envrc`, `.vscode`),
//! an owner's `.mcp.json` that is a symbolic link, and a home with `~/.claude` and
//! `~/.config`. One sequence runs in ONE `jaula run --backend B`, one syscall an op, by a
//! small Python program ([`OPS_PY`]); an op the cage refuses is expected and ignored. Each
//! backend runs as root and as uid 65534, the tree owned by the same user as the cage.
//!
//! The verdict is the host's, uncaged, after the cage has gone ([`violations`]):
//!
//! - every protected path is resolved as the owner's tools resolve it, one component at a
//!   time through every symbolic link, and must not pass through a link that was not there
//!   at launch, reach a file holding [`MARK`] (every byte the cage writes carries it), or
//!   reach a directory holding such a file, a new link or any new entry; an absent one must
//!   still be absent (not even a socket or an empty directory: the guard refuses every
//!   creation there), and what the owner had there at launch must still be the same inode,
//!   a file with the same bytes;
//! - the owner's `git status` runs in the repo and in every directory holding a `.git` or
//!   a `HEAD` (a repository the cage made), and the canary the cage's configs name in
//!   `core.fsmonitor` must not run.
//!
//! Uncaged controls run representative sequences without the cage and must be judged
//! violations, so the checker is known to see each route. Every sequence the property found
//! failing is kept below as a named regression test, run on both backends as both users,
//! and multi-step routes random draws rarely make are run from a hand-picked table.
//!
//! `JAULA_PROPTEST_CASES` sets the cases per backend and user (default
//! [`DEFAULT_CASES`]); proptest keeps failing seeds in
//! `planting_property.proptest-regressions` beside this file and replays them first. Needs
//! root, git and /usr/bin/python3; a missing one is a printed skip, a failure under CI=true.

use crate::common;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output, Stdio};

use jaula_testkit::output::describe as text;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestError, TestRunner};

use common::{cage_here, jaula_run, require_root, scratch, skip_or_fail, Backend, User, HOST_PATH};

use self::Call::*;
use self::NewRepo::*;
use self::Style::*;
use self::Target::*;

/// Carried by every byte the cage writes: a file holding it is the cage's content.
const MARK: &str = "jaula-planted-2f91c";

/// The interpreter that runs the ops: the system's, never a shim under someone's home.
const PYTHON: &str = "/usr/bin/python3";

/// Cases per backend and user when `JAULA_PROPTEST_CASES` is unset: 11 s (landlock) to 18 s
/// (bwrap) each, measured on two shared cores.
const DEFAULT_CASES: u32 = 128;

/// The canary a planted git config runs, relative to the scratch root (outside every
/// writable root, so only an uncaged program can make it).
const CANARY: &str = "canary-ran";

/// The names the ops act on: relative to the repo, or to the home (`~/`). Plain scratch
/// names first: proptest shrinks a choice toward the front of the list.
const NAMES: &[&str] = &[
    "a",
    "b",
    "cl",
    "a/x",
    "b/x",
    "cl/x",
    "a/hooks",
    "a/hooks/x",
    "a/settings.json",
    "a/config",
    "cl/hooks",
    "cl/settings.json",
    "sub",
    "sub/config",
    "sub/.git",
    "sub/.git/config",
    ".claude",
    ".claude/settings.json",
    ".claude/hooks",
    ".claude/hooks/x",
    ".envrc",
    ".mcp.json",
    "owner-mcp.json",
    ".vscode",
    ".vscode/tasks.json",
    ".git",
    ".git/config",
    ".git/hooks",
    ".git/hooks/pre-commit",
    ".git/hooks/pre-commit.sample",
    ".git/config.worktree",
    ".git/commondir",
    "~/.claude/x",
    "~/.claude/settings.json",
    "~/.claude/hooks",
    "~/.config/git",
    "~/.config/git/config",
];

/// Link texts a symbolic link may hold besides an absolute name from [`NAMES`]: relative,
/// so they resolve from wherever the link ends up.
const LINK_TEXTS: &[&str] = &[
    "a", "../a", "../b", "x", "cl/x", "../cl", "../cl/x", "../../cl", "hooks",
];

/// Where a nested repository may be made (relative to the repo): `b/.git` is found by
/// the owner's git in `b`.
const NESTED: &[&str] = &["sub", "a/sub", "cl/sub", "b/.git"];

/// A symbolic link's text: a fixed relative text, or a name's absolute path.
#[derive(Clone, Copy, Debug)]
enum Target {
    Text(&'static str),
    At(&'static str),
}

/// A fieldless enum and `ALL`, its variants in order, each written once: what the
/// strategies draw from.
macro_rules! enum_with_all {
    ($(#[$meta:meta])* enum $name:ident { $($(#[$vmeta:meta])* $variant:ident,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug)]
        enum $name { $($(#[$vmeta])* $variant,)* }

        impl $name {
            const ALL: &'static [$name] = &[$($name::$variant),*];
        }
    };
}

enum_with_all! {
    /// How a nested repository is made, its `config` naming the canary in `core.fsmonitor`.
    enum NewRepo {
        /// `HEAD`, `objects`, `refs` and `config` written in place (a bare-looking git dir,
        /// `core.worktree = ..`).
        Direct,
        /// The same built in `cl/stage-N`, then renamed into place.
        Moved,
        /// `HEAD`, `objects`, `refs` in place; the config written in `cl/stage-N`, renamed in.
        ConfigMoved,
        /// `git init` in the cage, then its `.git/config` rewritten in place.
        GitInit,
        /// `git init` in the cage, then a config written in `cl/stage-N` renamed over it.
        GitInitMoved,
        /// A git dir built in `cl/stage-N`, and a `.git` file in place saying `gitdir:` it.
        GitFile,
        /// The config written in a plain directory, which then gets `objects`, `refs`, `HEAD`.
        ConfigFirst,
        /// `objects`, `refs`, the config, and `HEAD` last (git needs it to find the repo).
        HeadLast,
        /// The config, `HEAD`, `refs`, then `objects` renamed in from `cl/stage-N`.
        ObjectsLast,
        /// A git dir made config first in `cl/stage-N`, and a symlink `at/.git` to it.
        LinkedGitDir,
        /// `git init`, its config hard-linked out to `cl/stage-N`, and written through that name.
        WrittenThroughLink,
    }
}

enum_with_all! {
    /// How a planted config spells `core.fsmonitor`: each a form git reads, so a check of
    /// the keys must read them as git does.
    enum Style {
        /// `[core]` then `\tfsmonitor = …`.
        Plain,
        /// `[core] fsmonitor = …`: the key on the section's line.
        SameLine,
        /// `[CoRe]` then `\tFSMONITOR = …`: section and key names are case-insensitive.
        Folded,
        /// The value split over two lines by a backslash-newline.
        Continued,
        /// `[include] path = …` naming a file beside it (`cl/…inc`) that holds the key.
        Included,
    }
}

/// One op of a sequence: one syscall (a nested repository: a few).
#[derive(Clone, Copy, Debug)]
enum Call {
    Symlink(Target, &'static str),
    Mkdir(&'static str),
    Rmdir(&'static str),
    Unlink(&'static str),
    Rename(&'static str, &'static str),
    Link(&'static str, &'static str),
    Bind(&'static str),
    /// open(O_WRONLY|O_CREAT|O_TRUNC, 0755) and write an executable script holding MARK.
    Write(&'static str),
    Truncate(&'static str),
    /// open(O_WRONLY|O_CREAT|O_TRUNC) and write a git config naming the canary.
    GitConfig(Style, &'static str),
    Repo(NewRepo, Style, &'static str),
}

/// The ops' interpreter: `ops.py MARK CANARY OP…`, each OP its fields joined by `\x1f`.
/// It prints one line an op: its index and `ok` or the error.
const OPS_PY: &str = r##"
import os, socket, subprocess, sys
mark, canary = sys.argv[1], sys.argv[2]
script = ("#!/bin/sh\n# %s\ntouch %s\n" % (mark, canary)).encode()
sockets = []

def write(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)

def skeleton(d):
    os.mkdir(d)
    os.mkdir(d + "/objects")
    os.mkdir(d + "/refs")
    write(d + "/HEAD", b"ref: refs/heads/main\n")

def config(style, side):
    """A git config whose core.fsmonitor runs the canary, spelt as `style` says; an
    Included one writes the key in `side` first."""
    head = [("repositoryformatversion", "0"), ("bare", "false"), ("worktree", "..")]
    fsmonitor = ("fsmonitor", "\"touch %s; true\"" % canary)
    lines = lambda kvs: "".join("\t%s = %s\n" % kv for kv in kvs)
    if style == "Plain":
        text = "[core]\n" + lines(head + [fsmonitor])
    elif style == "SameLine":
        text = "".join("[core] %s = %s\n" % kv for kv in head + [fsmonitor])
    elif style == "Folded":
        text = "[CoRe]\n" + lines((k.upper(), v) for k, v in head + [fsmonitor])
    elif style == "Continued":
        text = "[core]\n" + lines(head) + "\tfsmonitor = \"to\\\nuch %s; true\"\n" % canary
    elif style == "Included":
        write(side, ("[core]\n" + lines([fsmonitor]) + "# %s\n" % mark).encode())
        text = "[core]\n" + lines(head) + "[include]\n\tpath = %s\n" % side
    else:
        raise ValueError(style)
    return (text + "# %s\n" % mark).encode()

def git_init(d):
    subprocess.run(["git", "init", "-q", d], check=True, stdin=subprocess.DEVNULL)

def run(kind, a):
    if kind == "symlink": os.symlink(a[0], a[1])
    elif kind == "mkdir": os.mkdir(a[0])
    elif kind == "rmdir": os.rmdir(a[0])
    elif kind == "unlink": os.unlink(a[0])
    elif kind == "rename": os.rename(a[0], a[1])
    elif kind == "link": os.link(a[0], a[1])
    elif kind == "bind":
        s = socket.socket(socket.AF_UNIX)
        sockets.append(s)
        s.bind(a[0])
    elif kind == "write": write(a[0], script)
    elif kind == "truncate": os.truncate(a[0], 0)
    elif kind == "gitconfig": write(a[1], config(a[0], a[2]))
    else:
        new_repo(kind, config(a[0], a[2] + ".inc"), a[1], a[2])

def new_repo(kind, config, at, stage):
    a = [at, stage]
    if kind == "Direct":
        skeleton(a[0]); write(a[0] + "/config", config)
    elif kind == "Moved":
        skeleton(a[1]); write(a[1] + "/config", config); os.rename(a[1], a[0])
    elif kind == "ConfigMoved":
        skeleton(a[0]); write(a[1], config); os.rename(a[1], a[0] + "/config")
    elif kind == "GitInit":
        git_init(a[0]); write(a[0] + "/.git/config", config)
    elif kind == "GitInitMoved":
        git_init(a[0]); write(a[1], config); os.rename(a[1], a[0] + "/.git/config")
    elif kind == "GitFile":
        skeleton(a[1]); write(a[1] + "/config", config)
        os.makedirs(a[0], exist_ok=True)
        write(a[0] + "/.git", ("gitdir: %s\n" % a[1]).encode())
    elif kind == "ConfigFirst":
        config_first(a[0], config)
    elif kind == "HeadLast":
        os.mkdir(a[0]); os.mkdir(a[0] + "/objects"); os.mkdir(a[0] + "/refs")
        write(a[0] + "/config", config); write(a[0] + "/HEAD", b"ref: refs/heads/main\n")
    elif kind == "ObjectsLast":
        os.mkdir(a[0]); write(a[0] + "/config", config)
        write(a[0] + "/HEAD", b"ref: refs/heads/main\n"); os.mkdir(a[0] + "/refs")
        os.mkdir(a[1]); os.rename(a[1], a[0] + "/objects")
    elif kind == "LinkedGitDir":
        config_first(a[1], config)
        os.makedirs(a[0], exist_ok=True)
        os.symlink(a[1], a[0] + "/.git")
    elif kind == "WrittenThroughLink":
        git_init(a[0])
        os.link(a[0] + "/.git/config", a[1])
        write(a[1], config)
    else:
        raise ValueError(kind)

def config_first(d, config):
    os.mkdir(d)
    write(d + "/config", config)
    os.mkdir(d + "/objects")
    os.mkdir(d + "/refs")
    write(d + "/HEAD", b"ref: refs/heads/main\n")

for i, op in enumerate(sys.argv[3:]):
    kind, *args = op.split("\x1f")
    try:
        run(kind, args)
        print(i, "ok", flush=True)
    except Exception as e:
        print(i, type(e).__name__, e, flush=True)
"##;

/// One op over `names`: the few names one case draws its ops from, so that a sequence
/// whose steps must meet on the same names (write a file in `a`, rename `a` onto
/// `.claude`) is drawn often.
fn call(names: Vec<&'static str>) -> impl Strategy<Value = Call> {
    let name = move || prop::sample::select(names.clone());
    let target = prop_oneof![
        prop::sample::select(LINK_TEXTS).prop_map(Text),
        name().prop_map(At),
    ];
    let how = prop::sample::select(NewRepo::ALL);
    prop_oneof![
        4 => (target, name()).prop_map(|(t, l)| Symlink(t, l)),
        2 => name().prop_map(Mkdir),
        1 => name().prop_map(Rmdir),
        1 => name().prop_map(Unlink),
        3 => (name(), name()).prop_map(|(a, b)| Rename(a, b)),
        1 => (name(), name()).prop_map(|(a, b)| Link(a, b)),
        1 => name().prop_map(Bind),
        4 => name().prop_map(Write),
        1 => name().prop_map(Truncate),
        1 => (style(), name()).prop_map(|(st, n)| GitConfig(st, n)),
        2 => (how, style(), prop::sample::select(NESTED)).prop_map(|(h, st, at)| Repo(h, st, at)),
    ]
}

fn style() -> impl Strategy<Value = Style> {
    prop::sample::select(Style::ALL)
}

/// 1 to 8 ops over 2 to 6 names drawn from [`NAMES`].
fn sequence() -> impl Strategy<Value = Vec<Call>> {
    prop::sample::subsequence(NAMES, 2..=6)
        .prop_flat_map(|names| prop::collection::vec(call(names), 1..=8))
}

// ── The tree ─────────────────────────────────────────────────────────────────────────────

/// How a protected path is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// The entry itself (`.git`): what it holds is the cage's work, only its identity counts.
    Entry,
    File,
    /// A directory: nothing beneath it may be the cage's content or link.
    Dir,
}

/// The protected paths judged, relative to the repo or the home (`~/`).
const PROTECTED: &[(&str, Kind)] = &[
    (".git", Kind::Entry),
    (".git/config", Kind::File),
    (".git/config.worktree", Kind::File),
    (".git/hooks", Kind::Dir),
    (".git/commondir", Kind::File),
    (".vscode", Kind::Dir),
    (".claude/settings.json", Kind::File),
    (".claude/hooks", Kind::Dir),
    (".envrc", Kind::File),
    (".mcp.json", Kind::File),
    ("~/.claude/settings.json", Kind::File),
    ("~/.claude/hooks", Kind::Dir),
    ("~/.gitconfig", Kind::File),
    ("~/.config/git", Kind::Dir),
];

/// One scratch tree, fresh for each case.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    /// Who owns the tree, runs the cage, and takes the owner's steps.
    user: User,
}

/// An owner's step on the host: nothing from this process's environment.
fn owner(cmd: &mut Command, tree: &Tree) {
    cmd.env_clear()
        .env("PATH", HOST_PATH)
        .env("HOME", &tree.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CEILING_DIRECTORIES", &tree.root)
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    tree.user.apply(cmd);
}

impl Tree {
    fn new(user: User) -> Tree {
        let (dir, root) = scratch("planting-prop-");
        let home = root.join("home");
        let repo = root.join("repo");
        for d in [".claude", ".config"] {
            fs::create_dir_all(home.join(d)).unwrap();
        }
        for d in ["a", "b", "cl"] {
            fs::create_dir_all(repo.join(d)).unwrap();
        }
        let tree = Tree {
            _dir: dir,
            root,
            home,
            repo,
            user,
        };
        user.own(&tree.root);
        if user == User::Nobody {
            common::open_to_others(&tree.root);
        }
        let mut git = Command::new("git");
        git.current_dir(&tree.repo)
            .args(["init", "-q", "-b", "main"]);
        owner(&mut git, &tree);
        let out = git.output().unwrap();
        assert!(out.status.success(), "git init: {}", text(&out));
        // The owner's own link: it must keep working, and is no way in for the cage.
        fs::write(tree.repo.join("owner-mcp.json"), "{\"owner\": true}\n").unwrap();
        std::os::unix::fs::symlink("owner-mcp.json", tree.repo.join(".mcp.json")).unwrap();
        fs::write(tree.root.join("ops.py"), OPS_PY).unwrap();
        user.own(&tree.root);
        tree
    }

    fn path(&self, name: &str) -> PathBuf {
        match name.strip_prefix("~/") {
            Some(rel) => self.home.join(rel),
            None => self.repo.join(name),
        }
    }

    /// The ops' arguments for `ops.py`.
    fn args(&self, calls: &[Call]) -> Vec<OsString> {
        let canary = self.root.join(CANARY);
        let mut args: Vec<OsString> = vec![self.root.join("ops.py").into(), MARK.into()];
        args.push(canary.into());
        for (i, call) in calls.iter().enumerate() {
            let stage = self.repo.join(format!("cl/stage-{i}"));
            let p = |n: &str| self.path(n).display().to_string();
            let fields: Vec<String> = match *call {
                Symlink(Text(t), l) => vec!["symlink".into(), t.into(), p(l)],
                Symlink(At(t), l) => vec!["symlink".into(), p(t), p(l)],
                Mkdir(n) => vec!["mkdir".into(), p(n)],
                Rmdir(n) => vec!["rmdir".into(), p(n)],
                Unlink(n) => vec!["unlink".into(), p(n)],
                Rename(a, b) => vec!["rename".into(), p(a), p(b)],
                Link(a, b) => vec!["link".into(), p(a), p(b)],
                Bind(n) => vec!["bind".into(), p(n)],
                Write(n) => vec!["write".into(), p(n)],
                Truncate(n) => vec!["truncate".into(), p(n)],
                GitConfig(st, n) => vec![
                    "gitconfig".into(),
                    format!("{st:?}"),
                    p(n),
                    format!("{}.inc", stage.display()),
                ],
                Repo(how, st, at) => vec![
                    format!("{how:?}"),
                    format!("{st:?}"),
                    p(at),
                    stage.display().to_string(),
                ],
            };
            args.push(fields.join("\x1f").into());
        }
        args
    }

    /// The sequence in one `jaula run --backend B`, as the tree's owner.
    fn caged(&self, backend: Backend, calls: &[Call]) -> Output {
        let mut cmd = jaula_run(backend, &self.home, &self.repo);
        cmd.arg("--").arg(PYTHON).args(self.args(calls));
        cmd.stdin(Stdio::null());
        self.user.apply(&mut cmd);
        cmd.output().unwrap()
    }

    /// The sequence without a cage: the controls.
    fn uncaged(&self, calls: &[Call]) -> Output {
        let mut cmd = Command::new(PYTHON);
        cmd.current_dir(&self.repo).args(self.args(calls));
        owner(&mut cmd, self);
        cmd.output().unwrap()
    }
}

// ── The host's verdict ───────────────────────────────────────────────────────────────────

/// Every entry under the scratch root at launch (links not followed): its inode, and a
/// link's text.
type Entries = HashMap<PathBuf, ((u64, u64), Option<PathBuf>)>;

fn entries_under(root: &Path) -> Entries {
    fn walk(path: &Path, out: &mut Entries) {
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        let link = meta
            .file_type()
            .is_symlink()
            .then(|| fs::read_link(path).unwrap());
        out.insert(path.to_path_buf(), ((meta.dev(), meta.ino()), link));
        if meta.is_dir() {
            for entry in fs::read_dir(path).unwrap() {
                walk(&entry.unwrap().path(), out);
            }
        }
    }
    let mut out = HashMap::new();
    walk(root, &mut out);
    out
}

/// The same link, with the same text, was there at launch.
fn link_at_launch(launch: &Entries, link: &Path, text: &Path) -> bool {
    launch
        .get(link)
        .is_some_and(|(_, t)| t.as_deref() == Some(text))
}

/// The same entry (path and inode) was there at launch.
fn entry_at_launch(launch: &Entries, path: &Path, meta: &fs::Metadata) -> bool {
    launch
        .get(path)
        .is_some_and(|(ino, _)| *ino == (meta.dev(), meta.ino()))
}

/// A path as the owner's tools resolve it.
struct Resolved {
    /// Where it ends (lexically past the first absent component).
    path: PathBuf,
    exists: bool,
    /// Links met that were not there at launch: (link, its text).
    new_links: Vec<(PathBuf, PathBuf)>,
}

/// Resolve `path` one component at a time, following every symbolic link (40 at most, as
/// the kernel), noting each link met that `launch` does not hold with the same text.
fn resolve(path: &Path, launch: &Entries) -> Resolved {
    enum Step {
        Up,
        Name(OsString),
    }
    fn push_rev(pending: &mut Vec<Step>, path: &Path) {
        for c in path.components().rev() {
            match c {
                Component::Normal(n) => pending.push(Step::Name(n.to_owned())),
                Component::ParentDir => pending.push(Step::Up),
                _ => {}
            }
        }
    }
    let mut pending = Vec::new();
    push_rev(&mut pending, path);
    let mut at = PathBuf::from("/");
    let mut new_links = Vec::new();
    let mut hops = 0;
    let mut exists = true;
    while let Some(step) = pending.pop() {
        let name = match step {
            Step::Up => {
                at.pop();
                continue;
            }
            Step::Name(name) => name,
        };
        let next = at.join(&name);
        if !exists {
            at = next;
            continue;
        }
        match fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                let text = fs::read_link(&next).unwrap();
                if !link_at_launch(launch, &next, &text) {
                    new_links.push((next.clone(), text.clone()));
                }
                if hops > 40 {
                    return Resolved {
                        path: next,
                        exists: false,
                        new_links,
                    };
                }
                if text.is_absolute() {
                    at = PathBuf::from("/");
                }
                push_rev(&mut pending, &text);
            }
            Ok(_) => at = next,
            Err(_) => {
                exists = false;
                at = next;
            }
        }
    }
    Resolved {
        path: at,
        exists,
        new_links,
    }
}

/// What a protected path resolved to at launch: its inode, and a file's bytes.
#[derive(Clone, Debug, PartialEq)]
struct Found {
    path: PathBuf,
    ino: (u64, u64),
    bytes: Option<Vec<u8>>,
}

fn found(path: &Path) -> Option<Found> {
    let meta = fs::metadata(path).ok()?;
    Some(Found {
        path: path.to_path_buf(),
        ino: (meta.dev(), meta.ino()),
        bytes: meta.is_file().then(|| fs::read(path).unwrap_or_default()),
    })
}

/// The tree at launch: its links, and what each protected path resolved to.
struct Launch {
    entries: Entries,
    protected: Vec<Option<Found>>,
}

impl Launch {
    fn take(tree: &Tree) -> Launch {
        let entries = entries_under(&tree.root);
        let protected = PROTECTED
            .iter()
            .map(|(name, _)| {
                let r = resolve(&tree.path(name), &entries);
                r.exists.then(|| found(&r.path)).flatten()
            })
            .collect();
        Launch { entries, protected }
    }
}

fn holds_mark(path: &Path) -> bool {
    fs::read(path)
        .map(|b| b.windows(MARK.len()).any(|w| w == MARK.as_bytes()))
        .unwrap_or(false)
}

/// Beneath a protected directory: entries that were not there at launch (a link the cage
/// made, a file holding the mark, a directory or socket), and files holding the mark.
fn dir_violations(dir: &Path, launch: &Entries, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let text = fs::read_link(&path).unwrap_or_default();
            if !link_at_launch(launch, &path, &text) {
                out.push(format!(
                    "holds a link the cage made: {} -> {}",
                    path.display(),
                    text.display()
                ));
            }
            continue;
        }
        if holds_mark(&path) {
            out.push(format!("holds the cage's file {}", path.display()));
        } else if !entry_at_launch(launch, &path, &meta) {
            out.push(format!(
                "holds an entry the cage made: {} ({})",
                path.display(),
                kind_of(&meta)
            ));
        }
        if meta.is_dir() {
            dir_violations(&path, launch, out);
        }
    }
}

fn kind_of(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a file"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a link"
    } else {
        "a special file"
    }
}

/// The directories the owner's `git status` is run in: the repo, and every directory
/// beneath it (links not followed) holding a `.git` or a `HEAD`.
fn git_dirs(repo: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if fs::symlink_metadata(dir.join(".git")).is_ok()
            || fs::symlink_metadata(dir.join("HEAD")).is_ok()
        {
            out.push(dir.to_path_buf());
        }
        if depth == 0 {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
            if is_dir && entry.file_name() != "objects" {
                walk(&path, depth - 1, out);
            }
        }
    }
    let mut out = vec![repo.to_path_buf()];
    walk(repo, 4, &mut out);
    out.dedup();
    out
}

/// Everything wrong with the tree after a sequence: one line each, empty when the guard
/// held.
fn violations(tree: &Tree, launch: &Launch) -> Vec<String> {
    let mut out = Vec::new();
    for ((name, kind), before) in PROTECTED.iter().zip(&launch.protected) {
        let r = resolve(&tree.path(name), &launch.entries);
        let mut wrong = Vec::new();
        for (link, text) in &r.new_links {
            wrong.push(format!(
                "passes through a link the cage made: {} -> {}",
                link.display(),
                text.display()
            ));
        }
        let now = r.exists.then(|| found(&r.path)).flatten();
        if let Some(before) = before {
            match &now {
                None => wrong.push(format!("the owner's {} is gone", before.path.display())),
                Some(now) if now.ino != before.ino => wrong.push(format!(
                    "the owner's {} was replaced (now {})",
                    before.path.display(),
                    now.path.display()
                )),
                Some(now) if now.bytes != before.bytes => {
                    wrong.push(format!("the owner's {} changed", now.path.display()))
                }
                Some(_) => {}
            }
        }
        if before.is_none() && r.exists {
            if let Ok(meta) = fs::symlink_metadata(&r.path) {
                wrong.push(format!("was absent; the cage made it: {}", kind_of(&meta)));
            }
        }
        if r.exists {
            let meta = fs::metadata(&r.path).ok();
            if meta.as_ref().is_some_and(|m| m.is_file()) && holds_mark(&r.path) {
                wrong.push("holds the cage's content".into());
            }
            if *kind == Kind::Dir && meta.is_some_and(|m| m.is_dir()) {
                dir_violations(&r.path, &launch.entries, &mut wrong);
            }
        }
        let root = format!("{}/", tree.root.display());
        for w in wrong {
            let w = w.replace(&root, "");
            out.push(format!(
                "{name} (resolves to {}): {w}",
                r.path.strip_prefix(&tree.root).unwrap_or(&r.path).display()
            ));
        }
    }
    let canary = tree.root.join(CANARY);
    if canary.exists() {
        out.push("the canary exists before the owner ran anything".into());
        return out;
    }
    for dir in git_dirs(&tree.repo) {
        let mut git = Command::new("git");
        git.current_dir(&dir).arg("status");
        owner(&mut git, tree);
        git.output().unwrap();
        if canary.exists() {
            out.push(format!(
                "the owner's `git status` in {} ran the cage's canary",
                dir.strip_prefix(&tree.root).unwrap_or(&dir).display(),
            ));
            let _ = fs::remove_file(&canary);
        }
    }
    out
}

// ── Running a sequence ───────────────────────────────────────────────────────────────────

/// Whether this host can run the property: root (to build both users' trees), git,
/// python3, and the backend's cage as `user`.
fn ready(backend: Backend, user: User) -> bool {
    host_ready() && cage_here(backend, user)
}

/// Root (the trees of both users are built by it), git and python3; otherwise
/// [`skip_or_fail`] with what is missing, and false.
fn host_ready() -> bool {
    if !require_root("the planting property (it builds each user's tree)") {
        return false;
    }
    match common::missing_tool(&["git", PYTHON]) {
        None => true,
        Some(tool) => {
            skip_or_fail(&format!("{tool} is not installed"));
            false
        }
    }
}

/// Run `calls` in one cage on `backend` as `user`; the failure report when the guard did
/// not hold.
fn check(backend: Backend, user: User, calls: &[Call]) -> Result<(), String> {
    let tree = Tree::new(user);
    let launch = Launch::take(&tree);
    let out = tree.caged(backend, calls);
    // jaula itself must have run the program: a launch failure proves nothing.
    if out.status.code() != Some(0) {
        return Err(format!("the cage did not run the ops: {}", text(&out)));
    }
    let wrong = violations(&tree, &launch);
    if wrong.is_empty() {
        return Ok(());
    }
    Err(report(backend, user, calls, &out, &wrong))
}

fn report(backend: Backend, user: User, calls: &[Call], out: &Output, wrong: &[String]) -> String {
    let results: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let mut s = format!(
        "--backend {} as uid {}: the guard did not hold.\nsequence:\n",
        backend.name(),
        user.uid()
    );
    for (i, call) in calls.iter().enumerate() {
        let result = results
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{i} ")))
            .unwrap_or("not run");
        let _ = writeln!(s, "  {call:?},  // {result}");
    }
    s.push_str("violations:\n");
    for w in wrong {
        let _ = writeln!(s, "  {w}");
    }
    let _ = write!(
        s,
        "jaula stderr: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    s
}

fn cases() -> u32 {
    std::env::var("JAULA_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn property(backend: Backend, user: User) {
    // The four runs share one seed file, which proptest reads and appends to: one at a time.
    static SEEDS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _seeds = SEEDS.lock().unwrap_or_else(|e| e.into_inner());
    if !ready(backend, user) {
        return;
    }
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        max_shrink_iters: 256,
        ..Config::default()
    });
    let result = runner.run(&sequence(), |calls| {
        check(backend, user, &calls).map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, calls)) => {
            panic!("minimal failing sequence {calls:?}\n{why}")
        }
        Err(e) => panic!("{e}"),
    }
}

jaula_testkit::case_tests! {
    no_sequence_plants_on_landlock => property(Backend::Landlock, User::Root);
    no_sequence_plants_on_landlock_as_nobody => property(Backend::Landlock, User::Nobody);
    no_sequence_plants_on_bwrap => property(Backend::Bwrap, User::Root);
    no_sequence_plants_on_bwrap_as_nobody => property(Backend::Bwrap, User::Nobody);
}

/// Each backend and user this host cages as; the others are skipped (failed under CI).
fn cages() -> Vec<(Backend, User)> {
    let mut out = Vec::new();
    for backend in [Backend::Landlock, Backend::Bwrap] {
        for user in [User::Root, User::Nobody] {
            if ready(backend, user) {
                out.push((backend, user));
            }
        }
    }
    out
}

/// One `#[test]` a regression: `name => [calls…];` runs [`regression`] on the calls.
macro_rules! regression_tests {
    ($($(#[$meta:meta])* $name:ident => [$($call:expr),* $(,)?];)*) => {
        $($(#[$meta])*
        #[test]
        fn $name() {
            regression(&[$($call),*]);
        })*
    };
}

/// A regression: `calls` must leave nothing planted on either backend, as either user.
fn regression(calls: &[Call]) {
    nothing_planted_by(&[calls]);
}

/// Each of `sequences` must leave nothing planted on either backend, as either user; the
/// failure names every sequence that did.
fn nothing_planted_by(sequences: &[&[Call]]) {
    let mut failed = Vec::new();
    for (backend, user) in cages() {
        for calls in sequences {
            if let Err(why) = check(backend, user, calls) {
                failed.push(why);
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

// ── Uncaged controls: each route is real here, and the checker sees it ──────────────────

/// What the host judges after `calls` ran without a cage.
fn uncaged_violations(calls: &[Call]) -> Vec<String> {
    let tree = Tree::new(User::Root);
    let launch = Launch::take(&tree);
    let out = tree.uncaged(calls);
    assert!(out.status.success(), "ops.py: {}", text(&out));
    violations(&tree, &launch)
}

fn control(calls: &[Call], expect: &str) {
    if !host_ready() {
        return;
    }
    let wrong = uncaged_violations(calls);
    assert!(
        wrong.iter().any(|w| w.contains(expect)),
        "uncaged {calls:?} should be judged `{expect}`; judged {wrong:#?}"
    );
}

#[test]
fn control_symlink_at_absent_agent_dir_then_write() {
    control(
        &[
            Symlink(Text("cl"), ".claude"),
            Write(".claude/settings.json"),
        ],
        "passes through a link the cage made",
    );
}

#[test]
fn control_write_absent_envrc() {
    control(
        &[Write(".envrc")],
        ".envrc (resolves to repo/.envrc): holds the cage's content",
    );
}

#[test]
fn control_hook_written() {
    control(&[Write(".git/hooks/pre-commit")], "holds the cage's file");
}

#[test]
fn control_owner_link_replaced() {
    control(
        &[Unlink(".mcp.json"), Symlink(Text("a"), ".mcp.json")],
        "passes through a link the cage made",
    );
}

#[test]
fn control_git_dir_replaced() {
    control(
        &[
            Rename(".git", "b/x"),
            Repo(GitInit, Plain, "cl/sub"),
            Rename("cl/sub/.git", ".git"),
        ],
        "was replaced",
    );
}

#[test]
fn control_socket_at_absent_envrc() {
    control(&[Bind(".envrc")], "was absent; the cage made it: a socket");
}

#[test]
fn control_nested_repo_direct() {
    control(&[Repo(Direct, Plain, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_repo_renamed() {
    control(&[Repo(Moved, Plain, "a/sub")], "ran the cage's canary");
}

#[test]
fn control_nested_git_init() {
    control(&[Repo(GitInitMoved, Plain, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_git_dir_in_a_scratch_dir() {
    control(&[Repo(Direct, Plain, "b/.git")], "ran the cage's canary");
}

#[test]
fn control_config_key_on_the_section_line() {
    control(&[Repo(Direct, SameLine, "sub")], "ran the cage's canary");
}

#[test]
fn control_config_case_folded() {
    control(&[Repo(Direct, Folded, "sub")], "ran the cage's canary");
}

#[test]
fn control_config_value_continued() {
    control(&[Repo(GitInit, Continued, "sub")], "ran the cage's canary");
}

#[test]
fn control_config_included() {
    control(&[Repo(GitInit, Included, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_repo_config_first() {
    control(&[Repo(ConfigFirst, Plain, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_repo_head_last() {
    control(&[Repo(HeadLast, Plain, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_repo_objects_last() {
    control(&[Repo(ObjectsLast, Plain, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_repo_linked_git_dir() {
    control(&[Repo(LinkedGitDir, Plain, "sub")], "ran the cage's canary");
}

#[test]
fn control_nested_repo_written_through_link() {
    control(
        &[Repo(WrittenThroughLink, Plain, "sub")],
        "ran the cage's canary",
    );
}

#[test]
fn control_nested_git_file() {
    control(&[Repo(GitFile, Plain, "sub")], "ran the cage's canary");
}

// ── Regressions: every sequence the property found failing ──────────────────────────────

regression_tests! {
    symlink_at_absent_agent_dir => [Symlink(Text("a"), ".claude")];
    symlink_at_absent_agent_dir_then_write => [Symlink(Text("cl"), ".claude"), Write(".claude/settings.json")];
    socket_at_absent_envrc => [Bind(".envrc")];
    socket_at_absent_editor_dir => [Bind(".vscode")];
    nested_repo_written_in_place => [Repo(Direct, Plain, "sub")];
    git_dir_written_in_a_scratch_dir => [Repo(Direct, Plain, "b/.git")];
    nested_repo_config_key_on_the_section_line => [Repo(Direct, SameLine, "sub")];
    nested_repo_config_case_folded => [Repo(Direct, Folded, "sub")];
    git_init_then_config_value_continued => [Repo(GitInit, Continued, "sub")];
    git_init_then_config_including_a_file_beside_it => [Repo(GitInit, Included, "sub")];
    nested_repo_config_written_before_the_dir_is_git_like => [Repo(ConfigFirst, Plain, "sub")];
    nested_repo_head_written_last => [Repo(HeadLast, Plain, "sub")];
    nested_repo_objects_renamed_in_last => [Repo(ObjectsLast, Plain, "sub")];
    nested_repo_git_dir_symlinked => [Repo(LinkedGitDir, Plain, "sub")];
    git_init_config_written_through_a_hard_link => [Repo(WrittenThroughLink, Plain, "sub")];
    nested_repo_built_aside_then_renamed_in => [Repo(Moved, Plain, "sub")];
    nested_repo_config_renamed_in => [Repo(ConfigMoved, Plain, "sub")];
    git_init_then_config_written => [Repo(GitInit, Plain, "sub")];
    git_init_then_config_renamed_over => [Repo(GitInitMoved, Plain, "sub")];
    git_file_naming_a_git_dir_made_aside => [Repo(GitFile, Plain, "sub")];
}

/// Multi-step sequences random draws rarely make (a directory renamed onto an absent
/// protected ancestor with the planted file inside, a link renamed into place, the owner's
/// link target replaced, a protected directory moved away and made anew), each run in one
/// cage on both backends.
const HAND_PICKED: &[&[Call]] = &[
    &[Link(".git/config", "a/x"), Write("a/x")],
    &[Link(".git/config", "a/x"), Truncate("a/x")],
    &[Link("owner-mcp.json", "a/x"), Write("a/x")],
    &[Symlink(At(".git/config"), "a/x"), Write("a/x")],
    &[Symlink(At(".git/hooks"), "a/x"), Rename("b", "a/x/b")],
    &[Symlink(Text("../../cl"), "a/hooks"), Rename("a", ".claude")],
    &[
        Symlink(Text("../cl"), "a/settings.json"),
        Rename("a", ".claude"),
    ],
    &[
        Mkdir(".claude"),
        Symlink(Text("../cl"), "a/hooks"),
        Rename("a/hooks", ".claude/hooks"),
    ],
    &[
        Write("~/.claude/x"),
        Link("~/.claude/x", "~/.claude/settings.json"),
    ],
    &[
        Mkdir("~/.claude/x"),
        Symlink(Text("../x"), "~/.claude/hooks"),
    ],
    &[Write("a/settings.json"), Rename("a", ".claude")],
    &[Mkdir("a/hooks"), Rename("a", ".claude")],
    &[Symlink(Text("a"), "~/.claude/hooks")],
    &[Rename(".git", "b/x")],
    &[Write("a/x"), Link("a/x", ".envrc")],
    &[Symlink(At("a"), ".vscode")],
    &[Rename(".git/hooks", "a/hooks")],
    &[Unlink(".mcp.json")],
    &[Write("owner-mcp.json")],
    &[Rename("owner-mcp.json", "b/x")],
    &[Rename("owner-mcp.json", "b/x"), Write("owner-mcp.json")],
    &[Unlink("owner-mcp.json"), Write("owner-mcp.json")],
    &[
        Mkdir(".claude"),
        Symlink(Text("../a"), ".claude/settings.json"),
    ],
    &[Mkdir(".claude"), Symlink(Text("../a"), ".claude/hooks")],
    &[Symlink(Text("../cl"), "~/.config/git")],
    &[
        Write("~/.claude/x"),
        Rename("~/.claude/x", "~/.claude/settings.json"),
    ],
    &[Write("a/x"), Rename("a/x", ".git/config")],
    &[Truncate(".git/config")],
    &[Rename(".git/config", "a/x")],
    &[Symlink(Text("../../cl"), ".git/commondir")],
    &[
        Mkdir(".claude"),
        Mkdir("a/hooks"),
        Rename("a/hooks", ".claude/hooks"),
    ],
    &[
        Mkdir(".claude"),
        Write("a/settings.json"),
        Rename("a/settings.json", ".claude/settings.json"),
    ],
    &[
        Mkdir(".claude"),
        Rename(".claude", "b/x"),
        Symlink(Text("a"), ".claude"),
    ],
    &[
        Mkdir(".claude"),
        Write("a/settings.json"),
        Rename("a", ".claude"),
    ],
    &[
        Mkdir("~/.claude/x"),
        Rename("~/.claude/x", "~/.claude/hooks"),
    ],
    &[Mkdir("cl/x"), Rename("cl/x", "~/.config/git")],
    &[Write("a/x"), Link("a/x", ".git/hooks/pre-commit")],
    &[Symlink(Text("a"), "b/x"), Rename("b/x", ".claude")],
    &[Symlink(Text("a"), "b/x"), Rename("b/x", ".vscode")],
    &[
        Mkdir("b/x"),
        Symlink(Text("../../a"), "b/x/hooks"),
        Rename("b/x", ".claude"),
    ],
    &[Rename(".git/hooks", "a/hooks"), Mkdir(".git/hooks")],
    &[Rename(".git", "a/sub"), Mkdir(".git")],
    &[Write(".git/hooks/pre-commit")],
    &[Symlink(Text("../a"), ".git/hooks/pre-commit")],
    &[Write("a/x"), Rename("a/x", ".git/commondir")],
    &[Mkdir(".claude"), Mkdir(".claude/hooks")],
    &[Rename("a", ".git/hooks/x")],
    &[Rename("a", ".vscode")],
    &[Write("a/x"), Rename("a", ".vscode")],
    &[Write("a/x"), Rename("a", "~/.config/git")],
    &[Write("a/x"), Rename("a", "~/.claude/hooks")],
    &[Symlink(Text("x"), "~/.claude/settings.json")],
    &[Unlink(".git/config"), Write(".git/config")],
];

#[test]
fn hand_picked_sequences_leave_nothing_planted() {
    if !host_ready() {
        return;
    }
    // Each is a route: without the cage, the host judges it planted.
    for calls in HAND_PICKED {
        assert!(
            !uncaged_violations(calls).is_empty(),
            "uncaged, {calls:?} plants nothing: not a route"
        );
    }
    nothing_planted_by(HAND_PICKED);
}

regression_tests! {
    socket_at_absent_git_commondir => [Bind(".git/commondir")];
    socket_at_absent_home_agent_settings => [Bind("~/.claude/settings.json")];
    socket_at_absent_agent_settings_in_a_dir_the_cage_made => [Mkdir(".claude"), Bind(".claude/settings.json")];
}
