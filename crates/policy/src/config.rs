//! The TOML config file. Unknown keys are refused so a typo cannot silently weaken a cage.
//!
//! Every value is read straight into its typed form (a network mode, a domain pattern, an
//! address block, an environment pattern, a uid range...), so a bad value is refused when
//! the file is loaded, with its key and line, whether or not the run at hand would use it:
//! a config that is wrong is wrong for the next run too.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::backend_choice::BackendChoice;
use crate::env::EnvPattern;
use crate::host_fs::HostFs;
pub use crate::network::NetworkSection;
use crate::sockets::UnixPreset;
use crate::uid_range::UidRange;
use crate::ConfigError;

/// `config.toml`, as declared. Every key is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[cage]`: what is sealed and what is writable.
    #[serde(default)]
    pub cage: CageSection,
    /// `[run]`: defaults for `jaula run` (its backend).
    #[serde(default)]
    pub run: RunSection,
    /// `[env]`: which environment variables reach the caged process.
    #[serde(default)]
    pub env: EnvSection,
    /// `[contract]`: defaults for `jaula contract` (workspace root, uid range, limits).
    #[serde(default)]
    pub contract: ContractSection,
    /// `[network]`: the network mode and its allow-lists.
    #[serde(default)]
    pub network: NetworkSection,
}

/// `[contract]`: defaults for `jaula contract` (flags and `JAULA_CONTRACT_*` win). The one
/// definition of the section: jaula-contract resolves its settings from this type.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ContractSection {
    /// The workspace root holding one tree per Contract.
    pub root: Option<PathBuf>,
    /// The runner's state directory (uid map, lock, evidence log).
    pub state_dir: Option<PathBuf>,
    /// The uid range, `MIN-MAX`.
    pub uid_range: Option<UidRange>,
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
    pub backend: Option<BackendChoice>,
    /// `true`: no network line at start, like `--quiet`.
    pub quiet: Option<bool>,
}

/// An agent whose short-lived access token `jaula run` can hand in (`[env]
/// hand_access_token`, `--hand-access-token`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenAgentName {
    /// Claude Code.
    Claude,
}

/// `[env]`: changes to the default credential-variable scrub of `jaula run`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EnvSection {
    /// Variable names or `PREFIX_*` patterns to keep even though the defaults scrub them.
    #[serde(default)]
    pub keep: Vec<EnvPattern>,
    /// Variable names or patterns to scrub as well.
    #[serde(default)]
    pub scrub: Vec<EnvPattern>,
    /// Agents whose short-lived access token `jaula run` hands in from the owner's login
    /// (the refresh token stays sealed): `claude`.
    #[serde(default)]
    pub hand_access_token: Vec<TokenAgentName>,
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
    pub allow_unix_preset: Vec<UnixPreset>,
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
    /// Parse `text`; `path` is only used to name the file in errors. A refusal names the
    /// key (`network.mode`) and its line, then what was wrong with the value.
    pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
        toml::from_str(text).map_err(|e: toml::de::Error| {
            let message = e.message().trim_end();
            let message = match e.span() {
                Some(span) => {
                    let (line, key) = key_at(text, span.start);
                    match key {
                        Some(key) => format!("{key} (line {line}): {message}"),
                        None => format!("line {line}: {message}"),
                    }
                }
                None => message.to_string(),
            };
            ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            }
        })
    }

    /// Read and parse the file at `path`.
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        ConfigFile::load_from(path, &crate::RealHostFs)
    }

    /// [`load`](Self::load), reading the file from `fs`.
    pub fn load_from(path: &Path, fs: &dyn HostFs) -> Result<ConfigFile, ConfigError> {
        let text = fs
            .read_to_string(path)
            .map_err(|source| ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        ConfigFile::parse(&text, path)
    }
}

/// The line (1-based) holding byte `offset` of `text`, and the dotted key whose value
/// covers it: the nearest `key =` at or above that line, under the nearest `[section]`
/// above it. toml's own message quotes the line but not the key's section, and a user
/// fixing `mode` needs to know it is `network.mode`.
fn key_at(text: &str, offset: usize) -> (usize, Option<String>) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let mut key: Option<&str> = None;
    let mut section: Option<&str> = None;
    // From the error's line upwards: the first `key =` found is the key, the first header
    // found is its section.
    for raw in text
        .lines()
        .take(line)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        let trimmed = raw.trim();
        if let Some(header) = trimmed.strip_prefix('[') {
            section = header.split(']').next().map(str::trim);
            break;
        }
        if key.is_none() {
            if let Some((name, _)) = trimmed.split_once('=') {
                let name = name.trim();
                let bare = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare {
                    key = Some(name);
                }
            }
        }
    }
    let dotted = match (section, key) {
        (Some(section), Some(key)) => Some(format!("{section}.{key}")),
        (None, Some(key)) => Some(key.to_string()),
        (Some(section), None) => Some(format!("[{section}]")),
        (None, None) => None,
    };
    (line, dotted)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
