//! Where the three global options come from: flag, then environment, then the config
//! file's `[contract]` section, then the built-in default.

use std::path::{Path, PathBuf};

use jaula_policy::config::ContractSection;
use jaula_policy::limits::ContractLimits;
use jaula_policy::uid_range::UidRange;

use crate::error::{ContractError, Result};
use crate::isolation::IsolationConfig;

/// Overrides `--root`.
pub const ENV_ROOT: &str = "JAULA_CONTRACT_ROOT";
/// Overrides `--state-dir`.
pub const ENV_STATE: &str = "JAULA_CONTRACT_STATE";
/// Overrides `--uid-range` (`MIN-MAX`).
pub const ENV_UIDS: &str = "JAULA_CONTRACT_UIDS";

/// Default workspace root.
pub const DEFAULT_ROOT: &str = "/var/lib/jaula/contracts";
/// Default state directory.
pub const DEFAULT_STATE: &str = "/var/lib/jaula/state";
/// Default uid range: far above the system range and above the first few blocks of
/// 65536 that `useradd` hands out as subordinate uids for rootless containers, so a
/// Contract's uid is not some container's root-mapped user.
pub const DEFAULT_UIDS: &str = "2000000-2099999";

/// The command-line flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContractFlags {
    /// `--root`.
    pub root: Option<PathBuf>,
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// `--uid-range`.
    pub uid_range: Option<String>,
}

fn absolutize(what: &'static str, path: PathBuf) -> Result<PathBuf> {
    std::path::absolute(&path).map_err(|_| ContractError::RelativePath { what, path })
}

impl ContractFlags {
    /// Resolve flags, `env` (a lookup, so tests need not touch the process
    /// environment; empty values count as unset) and `config` into an
    /// [`IsolationConfig`]. Relative paths are taken against the current directory.
    pub fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        config: &ContractSection,
    ) -> Result<IsolationConfig> {
        let env = |k: &str| env(k).filter(|v| !v.is_empty());
        let root = self
            .root
            .clone()
            .or_else(|| env(ENV_ROOT).map(PathBuf::from))
            .or_else(|| config.root.clone())
            .unwrap_or_else(|| Path::new(DEFAULT_ROOT).to_path_buf());
        let state = self
            .state_dir
            .clone()
            .or_else(|| env(ENV_STATE).map(PathBuf::from))
            .or_else(|| config.state_dir.clone())
            .unwrap_or_else(|| Path::new(DEFAULT_STATE).to_path_buf());
        // The config's range was checked as the file was read; a flag's or the
        // environment's is checked here.
        let uids = match self.uid_range.clone().or_else(|| env(ENV_UIDS)) {
            Some(text) => UidRange::parse(&text)?,
            None => match config.uid_range {
                Some(range) => range,
                None => UidRange::parse(DEFAULT_UIDS)?,
            },
        };
        let mut limits = ContractLimits::default();
        if let Some(n) = config.max_processes {
            limits.max_processes = n;
        }
        if let Some(n) = config.max_memory_bytes {
            limits.max_memory_bytes = n;
        }
        Ok(IsolationConfig {
            workspace_root: absolutize("workspace root", root)?,
            state_dir: absolutize("state directory", state)?,
            uids,
            limits,
            separate_uids: None,
        })
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
