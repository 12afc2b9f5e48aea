//! The credential home: a scratch `$HOME` with present and absent secrets, caches, a repo
//! and the cage's own config, each file holding a marker unique to its path.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

/// The content of a marker file: unique per path, so a read that returns it proves the
/// caged process reached the host file.
pub fn marker(path: &Path) -> String {
    format!("jaula-marker:{}\n", path.display())
}

/// Write [`marker`] into `path`, creating its parents.
pub fn write_marker(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, marker(path)).unwrap();
}

/// A scratch home built by [`build_home`].
pub struct Home {
    /// The scratch root everything lives under (`outside/` holds files beyond the cage).
    pub root: PathBuf,
    /// The fake home, with present and absent secrets.
    pub home: PathBuf,
    /// The working directory inside it, writable in every cage.
    pub repo: PathBuf,
    /// The window's own broker token, the one readable exception to the seals.
    pub token: PathBuf,
}

impl Home {
    /// `jaula run`'s flags for this tree: `--repo R --home H --token-file T`.
    pub fn cage_args(&self) -> Vec<OsString> {
        vec![
            "--repo".into(),
            self.repo.clone().into(),
            "--home".into(),
            self.home.clone().into(),
            "--token-file".into(),
            self.token.clone().into(),
        ]
    }
}

/// Files present in the fixture, relative to its root: secrets, the agents' state,
/// ordinary configuration and caches, the repo and a file outside every root.
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

/// Empty directories of the fixture: where a create probe has an existing parent.
pub const EXTRA_DIRS: &[&str] = &[
    "home/.claude/channels/seat2",
    "home/.local/state",
    "home/.agents-city/.runtime/cage",
];

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

/// Build the fixture under `root`: every [`PRESENT_FILES`] entry holds its marker (the
/// cage's config holds a comment, so it parses), every [`EXTRA_DIRS`] entry exists.
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

/// Write each `(relative path, content)` under `base`, creating parent directories.
pub fn write_files(base: &Path, files: &[(&str, &str)]) {
    for (rel, content) in files {
        let path = base.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
    }
}

/// A local npm package (`localpkg`, exporting `greeting`) and an app that may install it,
/// under `dir`: an npm workload that needs no registry.
pub fn write_npm_packages(dir: &Path, greeting: &str) {
    write_files(
        dir,
        &[
            (
                "localpkg/package.json",
                r#"{"name": "jaula-localpkg", "version": "1.0.0", "main": "index.js"}"#,
            ),
            (
                "localpkg/index.js",
                &format!("module.exports = '{greeting}';\n"),
            ),
            (
                "app/package.json",
                r#"{"name": "app", "version": "1.0.0", "private": true}"#,
            ),
        ],
    );
}
