//! The built-in lists (docs/compatibility.md says where they come from). Each list says why it exists; the
//! resolver in `policy.rs` turns them into canonical paths for one host.

use crate::protect_kind::ProtectKind;
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
/// The token file's name inside each seat's channel directory.
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

/// The home roots of [`HOME_WRITABLE`] and [`HOME_WRITABLE_LINUX`] that belong to one
/// tool family, each with the programs that write it. `jaula run` creates such a root on a
/// fresh home only when one of its programs is on the `PATH` the cage is launched with, so
/// an account without Go gets no `~/go`; a tool installed later gets its root on the next
/// launch. Roots not listed here (`~/.cache`, `~/.config`, `~/.local/*`, the state home)
/// are shared by everything and always created.
pub const CACHE_ROOT_TOOLS: &[(&str, &[&str])] = &[
    (".claude", &["claude"]),
    (".codex", &["codex"]),
    (".opencode", &["opencode"]),
    (".kimi", &["kimi"]),
    (".npm", &["npm", "npx"]),
    (".cargo", &["cargo", "rustup"]),
    (".rustup", &["rustup"]),
    // A repository's own `./gradlew` and `./mvnw` need only java on the PATH.
    (".gradle", &["gradle", "java"]),
    (".m2", &["mvn", "java"]),
    (".pnpm-store", &["pnpm"]),
    (".bun", &["bun"]),
    ("go", &["go"]),
];

/// Cache directories inside a writable root that native Landlock splits (`~/.cargo` holds
/// sealed credential files, so no new direct child can be made in it natively). `jaula
/// run` creates them with the root when they are absent, so a tool's first fetch finds
/// them: cargo unpacks registry crates into `registry/` and clones git dependencies into
/// `git/`, and tolerates a lock file it cannot create beside them.
pub const HOME_CACHE_ENTRIES: &[&str] = &[".cargo/registry", ".cargo/git"];

/// Per-OS homes of the same state: pnpm, pip `--user`, pipx and `go install` fail with a
/// read-only filesystem without them, for reasons nobody would trace back to the cage.
pub const HOME_WRITABLE_MACOS: &[&str] = &[
    "Library/Caches",
    "Library/Logs",
    "Library/pnpm",
    "Library/Developer",
];
/// The Linux homes of that state (XDG data, state, user binaries and config; Go's tree).
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
/// The Linux temporary and device paths (`/run/user` holds the session's runtime files).
pub const SYSTEM_WRITABLE_LINUX: &[&str] = &["/dev", "/tmp", "/var/tmp", "/run/user"];

/// The config file, relative to the home, when neither `--config` nor `JAULA_CONFIG` names
/// one (and `XDG_CONFIG_HOME` is unset).
pub const CONFIG_DIR: &str = ".config/jaula";
/// The config file's name inside that directory (or inside `$XDG_CONFIG_HOME/jaula`).
pub const CONFIG_FILE_NAME: &str = "config.toml";

/// The per-OS home-relative writable roots of `platform`.
pub fn home_writable_for(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Linux => HOME_WRITABLE_LINUX,
        Platform::MacOs => HOME_WRITABLE_MACOS,
    }
}

/// The temporary and device paths `platform` makes writable.
pub fn system_writable_for(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Linux => SYSTEM_WRITABLE_LINUX,
        Platform::MacOs => SYSTEM_WRITABLE_MACOS,
    }
}

/// One default protected name, relative to the repo, the home or a git directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlantTarget {
    /// The name, relative to its base (repo, home or git directory).
    pub path: &'static str,
    /// Whether it is protected as a file or as a directory.
    pub kind: ProtectKind,
    /// Whether native Landlock may stop this path's creation by splitting its writable
    /// ancestors (no new entry can then be made in them). `false` where that split would
    /// break agent work (the repo root, `.git`, `~/.local/share`, `~/.codex`,
    /// `/run/user/UID`): there the path is reported after the run instead (see
    /// docs/security.md, "Planting guard").
    pub split_natively: bool,
}

const fn file(path: &'static str, split_natively: bool) -> PlantTarget {
    PlantTarget {
        path,
        kind: ProtectKind::File,
        split_natively,
    }
}

const fn dir(path: &'static str, split_natively: bool) -> PlantTarget {
    PlantTarget {
        path,
        kind: ProtectKind::Directory,
        split_natively,
    }
}

/// The repo's git directory, as an entry: a cage that could rename `.git` away and put its
/// own in place would hand the owner's next `git status` a config of its choosing.
pub const GIT_DIR_NAME: &str = ".git";

/// Inside every git directory (the repo's, its common dir, each worktree's and each
/// submodule's): what git executes or follows. `config` holds `core.fsmonitor`,
/// `core.hooksPath`, `core.pager`, aliases and credential helpers, every one a command git
/// runs; `config.worktree` the same per worktree; `hooks` is run by commit, checkout,
/// merge and push; `commondir` would point git at another directory's config. Never split
/// natively: a split git directory could not get `index.lock`, and git could not commit.
pub const GIT_DIR_PROTECTED: &[PlantTarget] = &[
    file("config", false),
    file("config.worktree", false),
    dir("hooks", false),
    file("commondir", false),
];

/// In the repo: editor and agent settings that tools execute when the owner opens the
/// repo (tasks, hooks, MCP servers, direnv). Never split natively: a split repo root
/// could get no new file at all.
pub const REPO_PROTECTED: &[PlantTarget] = &[
    dir(".vscode", false),
    dir(".idea", false),
    file(".claude/settings.json", false),
    file(".claude/settings.local.json", false),
    dir(".claude/hooks", false),
    dir(".claude/commands", false),
    dir(".claude/agents", false),
    file(".mcp.json", false),
    dir(".codex", false),
    dir(".cursor", false),
    file(".gemini/settings.json", false),
    file(".envrc", false),
];

/// Git's configuration in the home: read by every git the owner runs, uncaged.
pub const HOME_GIT_CONFIG: &[PlantTarget] = &[file(".gitconfig", true), dir(".config/git", true)];

/// Shell startup files, run by the owner's next shell. The home root is read-only in the
/// cage already; listing them gives `explain` the reason and the report a witness.
pub const SHELL_STARTUP: &[PlantTarget] = &[
    file(".profile", true),
    file(".bashrc", true),
    file(".bash_profile", true),
    file(".bash_login", true),
    file(".bash_logout", true),
    file(".bash_aliases", true),
    file(".zshenv", true),
    file(".zprofile", true),
    file(".zshrc", true),
    file(".zlogin", true),
    file(".zlogout", true),
    dir(".config/fish", true),
    // direnv's own startup: `direnvrc` and `lib/*.sh` run at every `.envrc` the owner's
    // shell loads, and `direnv.toml` can allow every `.envrc` without asking.
    dir(".config/direnv", true),
    // What shells source or run on their own beyond their rc files: rustup's `env`
    // (sourced from `.bashrc` and `.profile` by rustup's default setup), starship's
    // `custom` commands (run at every prompt), bash-completion's per-user completions (run
    // at the first tab), fish's vendor snippets, and direnv's allow list (an allowed
    // `.envrc` runs without asking).
    file(".cargo/env", true),
    file(".cargo/env.fish", true),
    file(".config/starship.toml", true),
    dir(".local/share/bash-completion", false),
    dir(".local/share/fish/vendor_conf.d", false),
    dir(".local/share/direnv", false),
];

/// What the owner's session starts on its own: systemd user units (both user unit
/// directories), XDG autostart, environment.d, D-Bus activated services, desktop entries
/// (one named like the browser's shadows it), X session scripts. `~/.local/share` is not
/// split natively: tools make new data directories there on first use.
pub const SESSION_STARTUP: &[PlantTarget] = &[
    dir(".config/systemd", true),
    dir(".config/autostart", true),
    dir(".config/environment.d", true),
    dir(".local/share/systemd", false),
    dir(".local/share/dbus-1", false),
    dir(".local/share/applications", false),
    file(".xprofile", true),
    file(".xsessionrc", true),
    file(".xinitrc", true),
    // systemd-tmpfiles' per-user rules (an `L+` line replaces any file at the next login),
    // and the window managers' configs (`exec` lines at the next session).
    dir(".config/user-tmpfiles.d", true),
    dir(".config/i3", true),
    dir(".config/sway", true),
    dir(".config/hypr", true),
];

/// In the runtime directory (`XDG_RUNTIME_DIR`, and `/run/user/UID` whatever that says):
/// systemd's runtime unit directories (`systemd/user`, `systemd/transient`,
/// `systemd/user.control`; a unit there starts with the owner's next
/// `systemctl --user daemon-reload`) and the session bus's transient service directory
/// (`dbus-1/services`: its `Exec=` runs at the next activation of that name). Not split
/// natively: `/run/user/UID` is where tools make their sockets.
pub const RUNTIME_PROTECTED: &[PlantTarget] = &[dir("systemd", false), dir("dbus-1", false)];

/// Where systemd-logind makes each user's runtime directory: `/run/user/UID`.
pub const RUNTIME_USER_DIRS: &str = "/run/user";

/// tmux and screen configuration: `run-shell` at the owner's next tmux start.
pub const MULTIPLEXER_CONFIG: &[PlantTarget] = &[
    dir(".config/tmux", true),
    file(".tmux.conf", true),
    file(".screenrc", true),
];

/// Editor init files and plugin directories, run by the owner's next editor.
pub const EDITOR_INIT: &[PlantTarget] = &[
    dir(".config/nvim", true),
    file(".vimrc", true),
    dir(".vim", true),
    file(".emacs", true),
    dir(".emacs.d", true),
    dir(".config/emacs", true),
    dir(".config/Code/User", true),
    // Neovim's data-side runtime path: `site/plugin/*.lua` and `site/pack/*/start` load at
    // every start, as `~/.config/nvim` does.
    dir(".local/share/nvim/site", false),
];

/// Cargo's user config: `build.rustc-wrapper` and `target.*.runner` run on the owner's
/// next build. `~/.cargo` is split natively already (its credentials are sealed).
pub const CARGO_CONFIG: &[PlantTarget] = &[
    file(".cargo/config.toml", true),
    file(".cargo/config", true),
];

/// The agents' own user settings that execute commands: Claude Code's settings (hooks,
/// `apiKeyHelper`, status line), hook scripts, slash commands (`!` lines) and subagents;
/// Codex's `config.toml` (`notify`, MCP servers); Cursor's and Gemini's MCP servers. The
/// rest of each agent's directory (sessions, history, caches) stays writable. `~/.claude`
/// is split natively already (its credentials file is sealed); `~/.codex` is not, since
/// Codex makes new state files there as it runs.
pub const AGENT_SETTINGS: &[PlantTarget] = &[
    file(".claude/settings.json", true),
    file(".claude/settings.local.json", true),
    dir(".claude/hooks", true),
    dir(".claude/commands", true),
    dir(".claude/agents", true),
    file(".codex/config.toml", false),
    file(".cursor/mcp.json", true),
    file(".gemini/settings.json", true),
];

/// PATH directories agents install tools into. Writable by default (`cargo install`,
/// `pipx`, `uv tool`, `go install` put tools there); `--protect-path-dirs` (config
/// `cage.protect_path_dirs`) makes them read-only, since a tool planted there can shadow
/// one the owner runs uncaged.
pub const PATH_DIRS: &[PlantTarget] = &[
    dir(".local/bin", true),
    dir(".cargo/bin", true),
    dir("go/bin", true),
    dir(".bun/bin", true),
];

/// How deep submodule git directories are looked for beneath `<git>/modules`, and how
/// many at most: a bound, so a hostile repo cannot make resolution walk forever.
pub const SUBMODULE_DEPTH: usize = 4;
/// The most submodule git directories resolution collects before it stops.
pub const SUBMODULE_LIMIT: usize = 256;
