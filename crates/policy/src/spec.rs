//! What the user declared, before it meets a host.

use std::path::PathBuf;

use crate::Platform;

/// A declared cage: unresolved paths (`~` allowed), merged from every source by
/// [`crate::Sources`]. Resolve it with [`PolicySpec::resolve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicySpec {
    /// Which kernel's cage to build.
    pub platform: Platform,
    /// The home whose credentials are sealed (`--home`, else `$HOME`).
    pub home: PathBuf,
    /// The built-in writable set: an agent window's, or a tenant's.
    pub profile: crate::policy::CageProfile,
    /// The window's working directory: writable, and never inside a sealed root.
    pub repo: PathBuf,
    /// Where relative paths are taken from (the caller's working directory).
    pub cwd: PathBuf,
    /// The relocated state home (`AGENTS_CITY_HOME`); `~/.agents-city` when `None`.
    pub state_home: Option<PathBuf>,
    /// Extra sealed roots (`CITY_CAGE_DENY`, config `deny`, `--deny`).
    pub extra_sealed: Vec<PathBuf>,
    /// Extra writable roots (`CITY_CAGE_ALLOW_WRITE`, config `allow_write`, `--allow-write`).
    pub extra_writable: Vec<PathBuf>,
    /// Resolved targets of the agent's workspace mounts (`--mounts`), writable.
    pub mounts: Vec<PathBuf>,
    /// This window's own broker token file, readable even inside the sealed broker dir.
    pub token_file: Option<PathBuf>,
    /// The config directory jaula reads by default; protected from writes even when absent.
    pub config_dir: PathBuf,
    /// The config file that shaped this spec, if one was read; protected from writes.
    pub config_file: Option<PathBuf>,
    /// Host unix sockets the cage may connect to (`--allow-unix-socket`, presets already
    /// expanded to their paths), each with why.
    pub allowed_sockets: Vec<(PathBuf, crate::SocketSource)>,
    /// Paths the owner removed from the planting guard (`--unprotect`, config
    /// `cage.unprotect`): every default protected entry at or beneath one is dropped.
    pub unprotected: Vec<PathBuf>,
    /// Protect the PATH directories agents install tools into (`--protect-path-dirs`).
    pub protect_path_dirs: bool,
    /// The jaula binary that launched the cage, protected wherever it is installed. The
    /// caller passes it in (`std::env::current_exe()`): this crate never asks the process.
    pub launcher_exe: Option<PathBuf>,
    /// `XDG_RUNTIME_DIR` (`/run/user/UID`), whose `systemd` directory is protected.
    pub runtime_dir: Option<PathBuf>,
    /// The uid building the policy: `/run/user/UID`'s `systemd` and `dbus-1` are protected
    /// on Linux whatever `XDG_RUNTIME_DIR` says (it may be unset, or name another place,
    /// while the owner's user manager still reads `/run/user/UID`).
    pub owner_uid: Option<u32>,
    /// Whether `jaula run` creates the absent agent-state and cache roots beneath the home
    /// before caging (config `cage.create_cache_roots`, default on). Off, a root absent at
    /// launch stays unwritable, and `decide` says so.
    pub create_absent_roots: bool,
    /// The `PATH` the cage is launched with, absolute entries only: an absent root of
    /// [`crate::defaults::CACHE_ROOT_TOOLS`] is created only when one of its programs is
    /// found here. `None` (a spec built without an environment) creates every one.
    pub tool_path: Option<Vec<PathBuf>>,
    /// The command the cage starts, when known (`jaula run`): a program of a tool family
    /// counts as present when the command is that program, wherever it lives (an agent
    /// started by its path from a directory not on the `PATH`).
    pub launched: Option<PathBuf>,
}

impl PolicySpec {
    /// A spec with only the built-in defaults, for `repo` under `home`.
    pub fn with_defaults(platform: Platform, home: PathBuf, repo: PathBuf) -> PolicySpec {
        let config_dir = home.join(crate::defaults::CONFIG_DIR);
        PolicySpec {
            platform,
            profile: crate::policy::CageProfile::Window,
            cwd: PathBuf::from("/"),
            home,
            repo,
            state_home: None,
            extra_sealed: Vec::new(),
            extra_writable: Vec::new(),
            mounts: Vec::new(),
            token_file: None,
            config_dir,
            config_file: None,
            allowed_sockets: Vec::new(),
            unprotected: Vec::new(),
            protect_path_dirs: false,
            launcher_exe: None,
            runtime_dir: None,
            owner_uid: None,
            create_absent_roots: true,
            tool_path: None,
            launched: None,
        }
    }
}
