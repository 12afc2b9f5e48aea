//! The policy flags every cage-building command accepts, learned once.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use jaula_policy::{CageFlags, Platform};

/// Flags shared by `line`, `profile`, `check`, `explain`, `render` (and later `run`): the
/// five a tmux launcher passes plus jaula's own.
#[derive(Args, Debug, Clone)]
pub struct PolicyArgs {
    /// The working directory this window owns: writable, never inside a sealed root.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Window name: names this window's private /tmp in bubblewrap's view (default:
    /// repo-<repo's name>-<hash of its path>, so each repo finds its own again), its line
    /// in `jaula ps`, and the profile file `line` writes on macOS (default: window.sb).
    // The literal default stands for "not given" (`run` derives the /tmp name from the repo
    // instead); hidden from --help, where `[default: window]` named neither.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "window",
        hide_default_value = true
    )]
    pub window: String,
    /// The home whose credentials are sealed (default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// This window's broker token file, readable even inside the sealed broker directory.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Colon-separated resolved mount targets to make writable too.
    #[arg(long, value_name = "PATH[:PATH...]", default_value = "")]
    pub mounts: OsString,
    /// Seal one more path for read and write (repeatable; adds to CITY_CAGE_DENY).
    #[arg(long = "deny", value_name = "PATH")]
    pub deny: Vec<PathBuf>,
    /// Make one more path writable (repeatable; adds to CITY_CAGE_ALLOW_WRITE). Ignored,
    /// with a warning, when it lies inside a sealed root.
    #[arg(long = "allow-write", value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,
    /// The Agents City state home (overrides AGENTS_CITY_HOME).
    #[arg(long, value_name = "DIR")]
    pub state_home: Option<PathBuf>,
    /// The config file (overrides JAULA_CONFIG; default ~/.config/jaula/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Let the cage connect to this host unix socket (repeatable). Every other host
    /// socket is refused; sockets the cage binds itself stay reachable.
    #[arg(long = "allow-unix-socket", value_name = "PATH")]
    pub allow_unix_socket: Vec<PathBuf>,
    /// Let the cage reach a named host socket: ssh-agent ($SSH_AUTH_SOCK, which is then
    /// kept in the environment), gpg-agent, docker (repeatable). See docs/security.md for
    /// what each gives away.
    #[arg(long = "allow-unix-preset", value_name = "NAME", value_parser = unix_preset)]
    pub allow_unix_preset: Vec<String>,
    /// Remove a path from the planting guard: every default protected path at or beneath
    /// it becomes as writable as its root (repeatable; adds to config `cage.unprotect`).
    /// jaula's own configuration stays protected.
    #[arg(long = "unprotect", value_name = "PATH")]
    pub unprotect: Vec<PathBuf>,
    /// Also protect the PATH directories agents install tools into (~/.local/bin,
    /// ~/.cargo/bin, ~/go/bin, ~/.bun/bin): stricter, and `cargo install`, `pipx` and
    /// `go install` then fail in the cage (config `cage.protect_path_dirs`).
    #[arg(long)]
    pub protect_path_dirs: bool,
}

/// `--allow-unix-preset NAME`: a preset jaula knows, or a usage error (exit 2) naming the
/// ones it does. Kept as the name: the config file's list is merged with it as text.
fn unix_preset(name: &str) -> Result<String, String> {
    match jaula_policy::UnixPreset::parse(name) {
        Some(_) => Ok(name.to_owned()),
        None => {
            let known: Vec<&str> = jaula_policy::UnixPreset::ALL
                .iter()
                .map(|p| p.name())
                .collect();
            Err(format!(
                "unknown unix-socket preset {name:?} (known: {})",
                known.join(", ")
            ))
        }
    }
}

/// A kernel to build the cage for, when it is not the host's.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlatformArg {
    Linux,
    Macos,
}

impl From<PlatformArg> for Platform {
    fn from(p: PlatformArg) -> Platform {
        match p {
            PlatformArg::Linux => Platform::Linux,
            PlatformArg::Macos => Platform::MacOs,
        }
    }
}

impl PolicyArgs {
    pub fn flags(&self, platform: Option<Platform>) -> CageFlags {
        CageFlags {
            repo: self.repo.clone(),
            home: self.home.clone(),
            token_file: self.token_file.clone(),
            mounts: Some(self.mounts.clone()),
            deny: self.deny.clone(),
            allow_write: self.allow_write.clone(),
            state_home: self.state_home.clone(),
            config: self.config.clone(),
            platform,
            profile: jaula_policy::CageProfile::Window,
            allow_unix_socket: self.allow_unix_socket.clone(),
            allow_unix_preset: self.allow_unix_preset.clone(),
            unprotect: self.unprotect.clone(),
            protect_path_dirs: self.protect_path_dirs,
            launcher_exe: None,
            owner_uid: None,
        }
    }
}
/// `--json` on every command that prints data.
#[derive(Debug, Args, Clone, Copy)]
pub struct JsonFlag {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
