//! Merging the sources of a cage, in increasing precedence: built-in defaults, the config
//! file, environment variables, command-line flags. Lists (denies, write-allows) are
//! unions; single values are taken from the highest source that sets them.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::defaults;
pub use crate::env::{split_colon_list, EnvVars};
use crate::host_fs::{HostFs, RealHostFs};
use crate::{ConfigError, ConfigFile, Platform, PolicyError, PolicySpec, SocketSource, UnixPreset};

/// The environment variables jaula honours, with the meanings launchers already rely on.
/// `0` turns the cage off.
pub const ENV_CAGE: &str = "CITY_CAGE";
/// Extra sealed roots, colon-separated.
pub const ENV_DENY: &str = "CITY_CAGE_DENY";
/// Extra writable roots, colon-separated.
pub const ENV_ALLOW_WRITE: &str = "CITY_CAGE_ALLOW_WRITE";
/// `1` or `0`: whether bubblewrap works here, said instead of probed.
pub const ENV_BWRAP: &str = "CITY_CAGE_BWRAP";
/// The agents-city state home (default `~/.agents-city`).
pub const ENV_STATE_HOME: &str = "AGENTS_CITY_HOME";
/// The config file, when not the default one.
pub const ENV_CONFIG: &str = "JAULA_CONFIG";

/// The policy flags every cage-building command accepts. Filled by the CLI; the merge
/// below is the only place their meaning lives.
#[derive(Clone, Debug, Default)]
pub struct CageFlags {
    /// `--repo`: the working directory, writable.
    pub repo: Option<PathBuf>,
    /// `--home`: the home the defaults are sealed against (else `HOME`).
    pub home: Option<PathBuf>,
    /// `--token-file`: the window's own token, readable above every seal.
    pub token_file: Option<PathBuf>,
    /// `--mounts`: colon-separated resolved mount targets.
    pub mounts: Option<OsString>,
    /// `--deny`: extra sealed roots (added to `CITY_CAGE_DENY` and `cage.deny`).
    pub deny: Vec<PathBuf>,
    /// `--allow-write`: extra writable roots (added to the variable and the config's).
    pub allow_write: Vec<PathBuf>,
    /// `--state-home`: wins over `AGENTS_CITY_HOME`.
    pub state_home: Option<PathBuf>,
    /// `--config`: wins over `JAULA_CONFIG` and the default file.
    pub config: Option<PathBuf>,
    /// `--platform`, to render the other kernel's cage; the host's otherwise.
    pub platform: Option<Platform>,
    /// The built-in writable set (`jaula contract run` asks for a tenant's).
    pub profile: crate::policy::CageProfile,
    /// `--allow-unix-socket`: host sockets the cage may connect to.
    pub allow_unix_socket: Vec<PathBuf>,
    /// `--allow-unix-preset`, as written (checked here, so a typo is refused by name).
    pub allow_unix_preset: Vec<String>,
    /// `--unprotect`: paths removed from the planting guard (adds to config `unprotect`).
    pub unprotect: Vec<PathBuf>,
    /// `--protect-path-dirs`: `true` wins over the config; absent leaves the config's.
    pub protect_path_dirs: bool,
    /// The jaula binary building this cage, protected from writes inside it.
    pub launcher_exe: Option<PathBuf>,
    /// The uid of the process building the policy, whose `/run/user/UID` runtime
    /// directory holds what its user manager and session bus run. The caller passes it in
    /// (`getuid`): this crate never asks the process.
    pub owner_uid: Option<u32>,
}

/// What the launcher should believe about bubblewrap without probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BwrapHint {
    /// Nobody said: build a namespace and see.
    Probe,
    /// `CITY_CAGE_BWRAP=1` or config `bwrap = true`: trusted if the binary exists.
    Works,
    /// `CITY_CAGE_BWRAP=0` or config `bwrap = false`.
    DoesNotWork,
}

/// Everything the sources decided, before resolution against the host.
#[derive(Clone, Debug)]
pub struct Sources {
    /// `false` when `CITY_CAGE=0` or config `enabled = false`: launch uncaged.
    pub enabled: bool,
    /// What to believe about bubblewrap (`CITY_CAGE_BWRAP`, config `bwrap`).
    pub bwrap: BwrapHint,
    /// The config file in use (it may not exist when it is the default).
    pub config_path: PathBuf,
    /// Whether that file existed and was read.
    pub config_loaded: bool,
    /// The merged declaration; `repo` is empty when no `--repo` was given.
    pub spec: PolicySpec,
    /// `[run]` from the config file, for `jaula run` to merge with its flags.
    pub run: crate::config::RunSection,
    /// `[env]`: the credential-variable scrub's changes.
    pub env: crate::config::EnvSection,
    /// `[contract]`, for `jaula contract` to merge with its flags and variables.
    pub contract: crate::config::ContractSection,
    /// `[network]`, for `jaula run --network`.
    pub network: crate::config::NetworkSection,
}

impl Sources {
    /// Merge defaults, the config file, `env` and `flags`. Reads the config file (when it
    /// exists) and nothing else.
    pub fn gather(flags: &CageFlags, env: &EnvVars, cwd: &Path) -> Result<Sources, PolicyError> {
        Sources::gather_on(flags, env, cwd, &RealHostFs)
    }

    /// [`gather`](Self::gather), reading the config file from `fs`.
    pub fn gather_on(
        flags: &CageFlags,
        env: &EnvVars,
        cwd: &Path,
        fs: &dyn HostFs,
    ) -> Result<Sources, PolicyError> {
        let home = owner_home(flags, env, cwd)?;
        let (config_dir, config_path, config) = find_config(flags, env, &home, cwd, fs)?;
        let config_loaded = config.is_some();
        let ConfigFile {
            cage,
            run,
            env: env_section,
            contract,
            network,
        } = config.unwrap_or_default();
        let (enabled, bwrap) = switches(env, &cage);

        let state_home = flags
            .state_home
            .clone()
            .or_else(|| env.non_empty(ENV_STATE_HOME).map(PathBuf::from))
            .or(cage.state_home.clone());

        let mut extra_sealed = cage.deny.clone();
        extra_sealed.extend(env.colon_list(ENV_DENY));
        extra_sealed.extend(flags.deny.iter().cloned());

        let mut extra_writable = cage.allow_write.clone();
        extra_writable.extend(env.colon_list(ENV_ALLOW_WRITE));
        extra_writable.extend(flags.allow_write.iter().cloned());

        let allowed_sockets = allowed_sockets(flags, &cage, env, &home)?;
        let mut unprotected = cage.unprotect.clone();
        unprotected.extend(flags.unprotect.iter().cloned());
        let protect_path_dirs = flags.protect_path_dirs || cage.protect_path_dirs.unwrap_or(false);
        let create_absent_roots = cage.create_cache_roots.unwrap_or(true);
        let runtime_dir = env
            .non_empty("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());

        let mounts = flags
            .mounts
            .as_deref()
            .map(split_colon_list)
            .unwrap_or_default();

        let spec = PolicySpec {
            platform: flags.platform.unwrap_or_else(Platform::host),
            profile: flags.profile,
            home,
            repo: flags.repo.clone().unwrap_or_default(),
            cwd: cwd.to_path_buf(),
            state_home,
            extra_sealed,
            extra_writable,
            mounts,
            token_file: flags.token_file.clone(),
            config_dir,
            config_file: Some(config_path.clone()),
            allowed_sockets,
            unprotected,
            protect_path_dirs,
            launcher_exe: flags.launcher_exe.clone(),
            runtime_dir,
            owner_uid: flags.owner_uid,
            create_absent_roots,
            tool_path: Some(
                env.colon_list("PATH")
                    .into_iter()
                    .filter(|dir| dir.is_absolute())
                    .collect(),
            ),
            launched: None,
        };
        Ok(Sources {
            enabled,
            bwrap,
            config_path,
            config_loaded,
            spec,
            run,
            env: env_section,
            contract,
            network,
        })
    }
}

/// The home whose cage is built: `--home`, else `$HOME`, made absolute against `cwd`.
fn owner_home(flags: &CageFlags, env: &EnvVars, cwd: &Path) -> Result<PathBuf, PolicyError> {
    let home = match (&flags.home, env.non_empty("HOME")) {
        (Some(h), _) => h.clone(),
        (None, Some(h)) => PathBuf::from(h),
        (None, None) => return Err(PolicyError::NoHome),
    };
    Ok(if home.is_absolute() {
        home
    } else {
        cwd.join(home)
    })
}

/// The config directory, the config file's path, and the file read when it exists (one
/// named by `--config` or `JAULA_CONFIG` must).
fn find_config(
    flags: &CageFlags,
    env: &EnvVars,
    home: &Path,
    cwd: &Path,
    fs: &dyn HostFs,
) -> Result<(PathBuf, PathBuf, Option<ConfigFile>), PolicyError> {
    // The default config lives in the home whose cage is being built; XDG_CONFIG_HOME
    // only moves it for the real home, not for a `--home` override.
    let config_dir = match (flags.home.is_none(), env.non_empty("XDG_CONFIG_HOME")) {
        (true, Some(xdg)) if Path::new(xdg).is_absolute() => Path::new(xdg).join("jaula"),
        _ => home.join(defaults::CONFIG_DIR),
    };
    let explicit = flags
        .config
        .clone()
        .or_else(|| env.non_empty(ENV_CONFIG).map(PathBuf::from))
        .map(|p| crate::paths::expand_tilde(&p, home))
        .map(|p| if p.is_absolute() { p } else { cwd.join(p) });
    let (config_path, config) = match explicit {
        Some(path) => {
            let config = ConfigFile::load_from(&path, fs)?;
            (path, Some(config))
        }
        None => {
            // The default file may be missing; any other failure to read it is an error.
            let path = config_dir.join(defaults::CONFIG_FILE_NAME);
            match fs.read_to_string(&path) {
                Ok(text) => {
                    let config = ConfigFile::parse(&text, &path)?;
                    (path, Some(config))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => (path, None),
                Err(source) => return Err(ConfigError::Read { path, source }.into()),
            }
        }
    };
    Ok((config_dir, config_path, config))
}

/// Whether the cage is on (`CITY_CAGE`, config `cage.enabled`), and what is known of
/// bubblewrap (`CITY_CAGE_BWRAP`, config `cage.bwrap`): the environment wins.
fn switches(env: &EnvVars, cage: &crate::config::CageSection) -> (bool, BwrapHint) {
    // CITY_CAGE: only the exact value "0" disables, as launchers expect.
    let enabled = match env.get(ENV_CAGE) {
        Some(v) if v == "0" => false,
        Some(_) => true,
        None => cage.enabled.unwrap_or(true),
    };
    let bwrap = match env.get(ENV_BWRAP).map(|v| v.as_bytes()) {
        Some(b"0") => BwrapHint::DoesNotWork,
        Some(b"1") => BwrapHint::Works,
        _ => match cage.bwrap {
            Some(true) => BwrapHint::Works,
            Some(false) => BwrapHint::DoesNotWork,
            None => BwrapHint::Probe,
        },
    };
    (enabled, bwrap)
}

/// The host sockets the cage may connect to: the presets' (config and flags) and the paths
/// named (config and flags).
fn allowed_sockets(
    flags: &CageFlags,
    cage: &crate::config::CageSection,
    env: &EnvVars,
    home: &Path,
) -> Result<Vec<(PathBuf, SocketSource)>, PolicyError> {
    let mut allowed_sockets: Vec<(PathBuf, SocketSource)> = Vec::new();
    // The config's presets were checked as the file was read; the flags' are here.
    let mut presets: Vec<UnixPreset> = cage.allow_unix_preset.clone();
    for name in &flags.allow_unix_preset {
        presets.push(
            UnixPreset::parse(name).ok_or_else(|| PolicyError::UnknownSocketPreset {
                origin: "--allow-unix-preset".to_owned(),
                name: name.clone(),
            })?,
        );
    }
    for preset in presets {
        for path in preset.paths(env, home) {
            allowed_sockets.push((path, SocketSource::Preset(preset)));
        }
    }
    for path in cage
        .allow_unix_socket
        .iter()
        .chain(&flags.allow_unix_socket)
    {
        allowed_sockets.push((path.clone(), SocketSource::Owner));
    }
    Ok(allowed_sockets)
}

#[cfg(test)]
#[path = "sources_tests.rs"]
mod tests;
