//! The built-in lists, equal to the seed cage's. Each list says why it exists; the
//! resolver in `policy.rs` turns them into canonical paths for one host.

use crate::Platform;

/// Home-relative directories that exist to hold credentials: sealed for read and write.
pub const CREDENTIAL_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".kube",
    ".gnupg",
    ".config/gcloud",
    ".config/gh",
    ".docker",
];

/// Home-relative files with the same job. `~/.npmrc` is deliberately absent: sealing it
/// breaks `npm install` for every owner who configures a registry there; owners who keep
/// tokens in it add it with `CITY_CAGE_DENY`. `~/.claude/.credentials.json` is where
/// Claude Code keeps its OAuth tokens outside macOS, inside a directory the cage keeps
/// writable, so it must be sealed on its own.
pub const CREDENTIAL_FILES: &[&str] = &[
    ".git-credentials",
    ".netrc",
    ".pgpass",
    ".claude/.credentials.json",
];

/// Cargo's registry tokens (`cargo login`), sealed as files inside the writable `~/.cargo`.
pub const CARGO_CREDENTIAL_FILES: &[&str] = &[".cargo/credentials", ".cargo/credentials.toml"];

/// The broker's token store, relative to the state home (`AGENTS_CITY_HOME`).
pub const BROKER_DIR: &str = ".runtime/broker";

/// Where `jaula line` writes per-window profiles, relative to the state home. Protected:
/// a window that could rewrite it would shape the next window's cage.
pub const CAGE_PROFILE_DIR: &str = ".runtime/cage";

/// The state home when `AGENTS_CITY_HOME` is not set, relative to the home.
pub const DEFAULT_STATE_HOME: &str = ".agents-city";

/// Where the remote-road channels keep one `.env` token file per seat:
/// `~/.claude/channels/<seat>/.env`.
pub const CHANNELS_DIR: &str = ".claude/channels";
pub const CHANNEL_TOKEN_FILE: &str = ".env";

/// Claude keeps `~/.claude.json` (and, on macOS, backup siblings named after it) at the
/// root of the home, which is otherwise read-only.
pub const CLAUDE_JSON: &str = ".claude.json";

/// Home-relative runtime state and build caches a working agent legitimately writes.
pub const HOME_WRITABLE: &[&str] = &[
    ".claude",
    ".agents-city",
    ".codex",
    ".opencode",
    ".kimi",
    ".npm",
    ".cache",
    ".cargo",
    ".rustup",
    ".gradle",
    ".m2",
    ".pnpm-store",
    ".bun",
];

/// Per-OS homes of the same state: pnpm, pip `--user`, pipx and `go install` fail with a
/// read-only filesystem without them, for reasons nobody would trace back to the cage.
pub const HOME_WRITABLE_MACOS: &[&str] = &[
    "Library/Caches",
    "Library/Logs",
    "Library/pnpm",
    "Library/Developer",
];
pub const HOME_WRITABLE_LINUX: &[&str] = &[
    ".local/share",
    ".local/state",
    ".local/bin",
    ".config",
    "go",
];

/// Temporary and device paths, per kernel: where `/tmp` really lives is the one fact the
/// two cages disagree on. On Linux `/dev` is the cage's own device tree (bubblewrap's
/// `--dev`), never the host's bound over it.
pub const SYSTEM_WRITABLE_MACOS: &[&str] = &[
    "/dev",
    "/private/tmp",
    "/private/var/tmp",
    "/private/var/folders",
];
pub const SYSTEM_WRITABLE_LINUX: &[&str] = &["/dev", "/tmp", "/var/tmp", "/run/user"];

/// The config file, relative to the home, when neither `--config` nor `JAULA_CONFIG` names
/// one (and `XDG_CONFIG_HOME` is unset).
pub const CONFIG_DIR: &str = ".config/jaula";
pub const CONFIG_FILE_NAME: &str = "config.toml";

pub fn home_writable_for(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Linux => HOME_WRITABLE_LINUX,
        Platform::MacOs => HOME_WRITABLE_MACOS,
    }
}

pub fn system_writable_for(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Linux => SYSTEM_WRITABLE_LINUX,
        Platform::MacOs => SYSTEM_WRITABLE_MACOS,
    }
}
