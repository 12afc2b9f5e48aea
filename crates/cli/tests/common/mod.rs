//! Shared helpers for the CLI's live tests: scratch trees outside every writable root, and
//! a probe runner that measures what a caged shell really does to the host.
#![allow(dead_code)]

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Under CI=true a missing kernel feature or tool is a failure, not a skip.
pub fn skip_or_fail(reason: &str) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true and this test cannot run: {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

pub fn jaula() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_jaula"))
}

/// A fresh scratch directory under the target dir: never under `/tmp`, which every Linux
/// cage makes writable.
pub fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    fs::create_dir_all(base).unwrap();
    let dir = tempfile::Builder::new()
        .prefix(name)
        .tempdir_in(base)
        .unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// The content of a marker file: unique per path, so a read that returns it proves the
/// caged process reached the host file.
pub fn marker(path: &Path) -> String {
    format!("jaula-marker:{}\n", path.display())
}

pub fn write_marker(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, marker(path)).unwrap();
}

/// A scratch home with present and absent secrets, caches, a repo and the cage's config.
pub struct Home {
    pub root: PathBuf,
    pub home: PathBuf,
    pub repo: PathBuf,
    pub token: PathBuf,
}

pub const PRESENT_FILES: &[&str] = &[
    "home/.ssh/id_x",
    "home/.aws/credentials",
    "home/.git-credentials",
    "home/.claude/.credentials.json",
    "home/.cargo/credentials.toml",
    "home/.config/gh/hosts.yml",
    "home/.agents-city/.runtime/broker/w1.token",
    "home/.agents-city/.runtime/broker/w2.token",
    "home/.claude/channels/seat1/.env",
    "home/.claude/channels/seat1/config",
    "home/.bashrc",
    "home/.sshx/pub",
    "home/.claude/settings.json",
    "home/.claude.json",
    "home/.cache/c.txt",
    "home/.config/x/y.conf",
    "home/.config/jaula/config.toml",
    "home/.local/share/s.txt",
    "home/.cargo/config.toml",
    "home/.agents-city/state.json",
    "repo/file.txt",
    "outside/file.txt",
];

pub const EXTRA_DIRS: &[&str] = &[
    "home/.claude/channels/seat2",
    "home/.local/state",
    "home/.agents-city/.runtime/cage",
];

pub fn build_home(root: &Path) -> Home {
    for rel in PRESENT_FILES {
        let path = root.join(rel);
        if rel.ends_with("config.toml") && rel.contains("jaula") {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "# jaula config\n").unwrap();
        } else {
            write_marker(&path);
        }
    }
    for rel in EXTRA_DIRS {
        fs::create_dir_all(root.join(rel)).unwrap();
    }
    Home {
        root: root.to_path_buf(),
        home: root.join("home"),
        repo: root.join("repo"),
        token: root.join("home/.agents-city/.runtime/broker/w1.token"),
    }
}

/// Paths created by the probes: present nowhere before the run.
pub const CREATE_PATHS: &[&str] = &[
    "repo/new",
    "home/new",
    "home/.cache/new",
    "home/.ssh/new",
    "home/.netrc",
    "home/.cargo/credentials",
    "home/.config/jaula/new",
    "home/.agents-city/.runtime/cage/new",
    "home/.agents-city/.runtime/broker/new",
    "home/.claude/channels/seat2/.env",
    "home/.local/state/new",
    "home/.config/newdir",
    "outside/new",
    "home/.claude.json.backup",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    Create,
}

/// One probe: an operation on a path relative to the scratch root.
#[derive(Clone, Debug)]
pub struct Probe {
    pub rel: String,
    pub op: Op,
}

pub fn standard_probes() -> Vec<Probe> {
    let mut probes = Vec::new();
    for rel in PRESENT_FILES {
        if rel.contains("jaula/config.toml") {
            probes.push(Probe {
                rel: rel.to_string(),
                op: Op::Write,
            });
            continue;
        }
        probes.push(Probe {
            rel: rel.to_string(),
            op: Op::Read,
        });
        probes.push(Probe {
            rel: rel.to_string(),
            op: Op::Write,
        });
    }
    for rel in CREATE_PATHS {
        probes.push(Probe {
            rel: rel.to_string(),
            op: Op::Create,
        });
    }
    probes
}

fn sh_quote(path: &Path) -> Vec<u8> {
    let mut out = b"'".to_vec();
    for b in path.as_os_str().as_encoded_bytes() {
        if *b == b'\'' {
            out.extend_from_slice(b"'\"'\"'");
        } else {
            out.push(*b);
        }
    }
    out.push(b'\'');
    out
}

/// Run every probe in ONE caged shell (`prefix` + `sh script`), then judge each by its
/// host effect: a read counts when the caged shell printed the host file's marker, a write
/// when the host file changed, a create when the entry exists on the host afterwards.
/// Returns one bool per probe, in order.
pub fn run_probes(
    prefix: &[OsString],
    root: &Path,
    probes: &[Probe],
    script_dir: &Path,
) -> Vec<bool> {
    let mut script: Vec<u8> = Vec::new();
    for (i, p) in probes.iter().enumerate() {
        let q = sh_quote(&root.join(&p.rel));
        let line = match p.op {
            Op::Read => [
                b"if cat -- ".as_slice(),
                &q,
                b" 2>/dev/null | grep -qF 'jaula-marker:'; then echo 'R",
                i.to_string().as_bytes(),
                b" 1'; else echo 'R",
                i.to_string().as_bytes(),
                b" 0'; fi\n",
            ]
            .concat(),
            // Subshells: a failed redirection on a special builtin ends a POSIX shell.
            Op::Write => [
                b"(printf 'W' >> ".as_slice(),
                &q,
                b") 2>/dev/null || true\n",
            ]
            .concat(),
            Op::Create => [b"(: > ".as_slice(), &q, b") 2>/dev/null || true\n"].concat(),
        };
        script.extend_from_slice(&line);
    }
    fs::create_dir_all(script_dir).unwrap();
    let script_path = script_dir.join("probe.sh");
    fs::write(&script_path, &script).unwrap();
    let before: Vec<Option<Vec<u8>>> = probes
        .iter()
        .map(|p| fs::read(root.join(&p.rel)).ok())
        .collect();
    let mut argv: Vec<OsString> = prefix.to_vec();
    argv.push("/bin/sh".into());
    argv.push(script_path.into_os_string());
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "caged probe shell failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    probes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = root.join(&p.rel);
            match p.op {
                Op::Read => stdout.lines().any(|l| l == format!("R{i} 1")),
                Op::Write => fs::read(&path).ok() != before[i],
                Op::Create => fs::symlink_metadata(&path).is_ok(),
            }
        })
        .collect()
}

/// Parse a shell-quoted prefix as printed by `line` (POSIX single quotes only, as
/// `shlex.join` writes them) back into argv.
pub fn parse_shell_prefix(line: &[u8]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut in_word = false;
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        match b {
            b' ' | b'\n' | b'\t' => {
                if in_word {
                    out.push(OsString::from_vec(std::mem::take(&mut cur)));
                    in_word = false;
                }
            }
            b'\'' => {
                in_word = true;
                i += 1;
                while i < line.len() && line[i] != b'\'' {
                    cur.push(line[i]);
                    i += 1;
                }
            }
            b'"' => {
                in_word = true;
                i += 1;
                while i < line.len() && line[i] != b'"' {
                    cur.push(line[i]);
                    i += 1;
                }
            }
            _ => {
                in_word = true;
                cur.push(b);
            }
        }
        i += 1;
    }
    if in_word {
        out.push(OsString::from_vec(cur));
    }
    out
}

// ── Identities and backends for the live suites ─────────────────────────────────────────

/// The unprivileged identity every live suite runs as besides root.
pub const NOBODY: u32 = 65534;

/// A PATH with no directory under anyone's home: the tests' commands are the host's own.
pub const HOST_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Who the owner of a scratch tree is, and so who runs the cage and the controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum User {
    Root,
    Nobody,
}

impl User {
    pub fn uid(self) -> u32 {
        match self {
            User::Root => 0,
            User::Nobody => NOBODY,
        }
    }

    /// Runs `cmd` as this user (a no-op for root, which the test process is).
    pub fn apply(self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        if self == User::Nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
    }
}

/// The Linux backends a live case runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    Landlock,
    Bwrap,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Landlock => "landlock",
            Backend::Bwrap => "bwrap",
        }
    }
}

/// Gives `path` and everything beneath it (symbolic links themselves, not their targets)
/// to `uid`, so a scratch tree built by root belongs to the identity under test.
pub fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if fs::symlink_metadata(path).unwrap().is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

/// Whether `jaula run --backend B` builds a cage here as `user`, asked once per test
/// process: `Err` holds jaula's own reason, for `skip_or_fail`.
pub fn cage_available(backend: Backend, user: User) -> Result<(), String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Answers = HashMap<(Backend, User), Result<(), String>>;
    static SEEN: Mutex<Option<Answers>> = Mutex::new(None);
    let mut guard = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let seen = guard.get_or_insert_with(HashMap::new);
    if let Some(answer) = seen.get(&(backend, user)) {
        return answer.clone();
    }
    let (_keep, root) = scratch("cage-probe-");
    let (home, repo) = (root.join("home"), root.join("repo"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    chown_tree(&root, user.uid());
    let mut cmd = Command::new(jaula());
    cmd.args(["run", "--backend", backend.name(), "--repo"])
        .arg(&repo)
        .arg("--home")
        .arg(&home)
        .args(["--", "/bin/true"])
        .current_dir(&repo)
        .env_clear()
        .env("PATH", HOST_PATH)
        .env("HOME", &home);
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let answer = if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "jaula run --backend {} cannot cage here as uid {}: {}",
            backend.name(),
            user.uid(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    seen.insert((backend, user), answer.clone());
    answer
}

/// The first program of `tools` that this host lacks: a name is looked for on
/// [`HOST_PATH`], an absolute path as itself.
pub fn missing_tool<'a>(tools: &[&'a str]) -> Option<&'a str> {
    tools.iter().copied().find(|tool| {
        if tool.starts_with('/') {
            return !Path::new(tool).is_file();
        }
        !HOST_PATH
            .split(':')
            .any(|dir| Path::new(dir).join(tool).is_file())
    })
}
