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
