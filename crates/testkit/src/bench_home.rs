//! The scratch homes `bench/` launches cages in, one definition for the benchmark harness
//! (through the `jaula-scratch-home` binary) and for any test that wants the same shapes:
//!
//! - [`minimal`]: the window's token file and an empty `src/repo`, nothing to seal;
//! - [`real_sized`]: every default secret, the usual state and caches, a few hundred
//!   top-level entries and a few thousand beneath, as an owner's home looks;
//! - [`with_entries`]: exactly `n` top-level entries, for the launch-versus-home-size curve.
//!
//! Every home holds `src/repo`, the repository the bench's cages work in. The shapes are
//! fixed: a figure in `bench/results` is only comparable with one taken in the same home.

use std::fs;
use std::io;
use std::path::Path;

/// The window token `--token-file` names, relative to the home.
pub const TOKEN: &str = ".agents-city/.runtime/broker/w1.token";

/// The credentials a real home holds, relative to it: every kind jaula seals by default.
pub const SECRETS: &[&str] = &[
    ".ssh/id_ed25519",
    ".ssh/id_ed25519.pub",
    ".ssh/known_hosts",
    ".ssh/config",
    ".aws/credentials",
    ".aws/config",
    ".kube/config",
    ".gnupg/pubring.kbx",
    ".config/gcloud/credentials.db",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".git-credentials",
    ".netrc",
    ".pgpass",
    ".claude/.credentials.json",
    ".cargo/credentials.toml",
    TOKEN,
    ".agents-city/.runtime/broker/w2.token",
    ".claude/channels/seat1/.env",
    ".claude/channels/seat2/.env",
];

/// Write `text` to `home/rel`, creating its parents.
fn put(home: &Path, rel: &str, text: &str) -> io::Result<()> {
    let path = home.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, text)
}

/// The token file and an empty `src/repo` under `home` (made if absent).
pub fn minimal(home: &Path) -> io::Result<()> {
    fs::create_dir_all(home.join("src/repo"))?;
    put(home, TOKEN, "secret\n")
}

/// A real-sized home under `home` (made if absent; what is there already stays).
pub fn real_sized(home: &Path) -> io::Result<()> {
    for rel in SECRETS {
        put(home, rel, "secret\n")?;
    }
    put(home, ".config/jaula/config.toml", "# bench\n")?;
    for rel in [
        ".claude/settings.json",
        ".claude.json",
        ".agents-city/state.json",
    ] {
        put(home, rel, "{}\n")?;
    }
    for rel in [
        ".bashrc",
        ".profile",
        ".gitconfig",
        ".cargo/config.toml",
        ".npmrc",
    ] {
        put(home, rel, "# bench\n")?;
    }
    for dir in [
        ".cargo/registry",
        ".cargo/git",
        ".cargo/bin",
        ".rustup",
        ".npm/_cacache",
        ".cache/pip",
        ".local/share/app",
        ".local/state/app",
        ".local/bin",
        "go/pkg",
    ] {
        fs::create_dir_all(home.join(dir))?;
    }
    for i in 0..150 {
        put(home, &format!(".dotfile{i:03}"), "x\n")?;
    }
    for i in 0..80 {
        for j in 0..10 {
            put(home, &format!("projects/p{i:03}/f{j}.txt"), "x\n")?;
        }
        fs::create_dir_all(home.join(format!("dir{i:03}")))?;
    }
    for i in 0..60 {
        put(home, &format!(".config/app{i:03}/settings.ini"), "x\n")?;
    }
    for i in 0..400 {
        put(home, &format!(".cache/blob{i:03}"), "x\n")?;
    }
    for i in 0..200 {
        put(home, &format!(".claude/projects/p{i:03}.jsonl"), "x\n")?;
    }
    for i in 0..300 {
        put(home, &format!(".local/share/app/d{i:03}"), "x\n")?;
    }
    fs::create_dir_all(home.join("src/repo"))
}

/// A home of exactly `n` top-level entries (at least 3): `~/.ssh` holding a key to seal,
/// `~/.agents-city` holding the token, `~/src` holding the repo, and the rest, one in four
/// a directory. A home that already has `n` top-level entries is kept as it is (the
/// 100,000-entry one takes a while to make); any other is made afresh.
pub fn with_entries(home: &Path, n: usize) -> io::Result<()> {
    if let Ok(entries) = fs::read_dir(home) {
        if entries.count() == n {
            return Ok(());
        }
        fs::remove_dir_all(home)?;
    }
    put(home, ".ssh/id_ed25519", "secret\n")?;
    minimal(home)?;
    let have = fs::read_dir(home)?.count();
    for i in 0..n.saturating_sub(have) {
        let path = home.join(format!("e{i:06}"));
        if i % 4 == 0 {
            fs::create_dir(path)?;
        } else {
            fs::write(path, "x")?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "bench_home_tests.rs"]
mod tests;
