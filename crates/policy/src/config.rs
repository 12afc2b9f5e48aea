//! The TOML config file. Unknown keys are refused so a typo cannot silently weaken a cage.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ConfigError;

/// `config.toml`, as declared. Every key is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub cage: CageSection,
    #[serde(default)]
    pub run: RunSection,
    #[serde(default)]
    pub env: EnvSection,
    #[serde(default)]
    pub contract: ContractSection,
    #[serde(default)]
    pub network: NetworkSection,
}

/// `[network]`: defaults for `jaula run --network` (flags win; flag lists add to these).
/// Values are validated where they are used (jaula-sandbox's network module).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// `host`, `none` or `allow`, like `--network`.
    pub mode: Option<String>,
    /// Host names or `*.suffix` patterns, like `--allow-domain`.
    #[serde(default)]
    pub allow_domain: Vec<String>,
    /// Patterns refused even when allowed, like `--deny-domain`.
    #[serde(default)]
    pub deny_domain: Vec<String>,
    /// Preset names, like `--allow-preset`.
    #[serde(default)]
    pub allow_preset: Vec<String>,
    /// Non-public addresses or blocks (`ADDR[/PREFIX]`) an exactly allowed name may
    /// resolve to, like `--allow-address`.
    #[serde(default)]
    pub allow_address: Vec<String>,
    /// `HOST=ADDR:PORT` answers the `allow` proxy uses instead of DNS (each still checked
    /// like a DNS answer): a pinned name, or a test's local upstream.
    #[serde(default)]
    pub resolve: Vec<String>,
    /// `true`: `--network none` natively uses the no-namespace fallback (Landlock TCP +
    /// seccomp socket families, no loopback) even where a namespace could be made.
    pub none_without_namespace: Option<bool>,
}

/// `[contract]`: defaults for `jaula contract` (flags and `JAULA_CONTRACT_*` win).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ContractSection {
    /// The workspace root holding one tree per Contract.
    pub root: Option<PathBuf>,
    /// The runner's state directory (uid map, lock, evidence log).
    pub state_dir: Option<PathBuf>,
    /// The uid range, `MIN-MAX`.
    pub uid_range: Option<String>,
    /// RLIMIT_NPROC for every spawn.
    pub max_processes: Option<u64>,
    /// RLIMIT_DATA for every spawn, in bytes.
    pub max_memory_bytes: Option<u64>,
}

/// `[run]`: defaults for `jaula run`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// `auto`, `landlock` or `bwrap`, like `--backend`.
    pub backend: Option<String>,
}

/// `[env]`: changes to the default credential-variable scrub of `jaula run`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EnvSection {
    /// Variable names or `PREFIX_*` patterns to keep even though the defaults scrub them.
    #[serde(default)]
    pub keep: Vec<String>,
    /// Variable names or patterns to scrub as well.
    #[serde(default)]
    pub scrub: Vec<String>,
    /// Agents whose short-lived access token `jaula run` hands in from the owner's login
    /// (the refresh token stays sealed): `claude`.
    #[serde(default)]
    pub hand_access_token: Vec<String>,
}

/// `[cage]`: the same knobs as the `CITY_CAGE_*` environment variables.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CageSection {
    /// `false` turns the cage off, like `CITY_CAGE=0`.
    pub enabled: Option<bool>,
    /// Extra sealed roots, like `CITY_CAGE_DENY`.
    #[serde(default)]
    pub deny: Vec<PathBuf>,
    /// Extra writable roots, like `CITY_CAGE_ALLOW_WRITE`.
    #[serde(default)]
    pub allow_write: Vec<PathBuf>,
    /// The state home, like `AGENTS_CITY_HOME`.
    pub state_home: Option<PathBuf>,
    /// Whether bubblewrap works here, skipping the probe, like `CITY_CAGE_BWRAP`.
    pub bwrap: Option<bool>,
    /// Host unix sockets the cage may connect to, like `--allow-unix-socket`.
    #[serde(default)]
    pub allow_unix_socket: Vec<PathBuf>,
    /// Named host sockets (`ssh-agent`, `gpg-agent`, `docker`), like `--allow-unix-preset`.
    #[serde(default)]
    pub allow_unix_preset: Vec<String>,
    /// Paths removed from the planting guard, like `--unprotect`.
    #[serde(default)]
    pub unprotect: Vec<PathBuf>,
    /// Protect the PATH directories agents install tools into, like `--protect-path-dirs`.
    pub protect_path_dirs: Option<bool>,
    /// `false`: `jaula run` does not create absent agent-state and cache roots (`~/.npm`,
    /// `~/.cargo`, `~/.cache`, ...) before caging; writes beneath them are then refused.
    pub create_cache_roots: Option<bool>,
}

impl ConfigFile {
    /// Parse `text`; `path` is only used to name the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })
    }

    /// Read and parse the file at `path`.
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        ConfigFile::parse(&text, path)
    }
}
