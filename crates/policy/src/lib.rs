//! jaula-policy: the pure model of a cage.
//!
//! A [`PolicySpec`] is what the user declared (`~/.ssh`, `$AGENTS_CITY_HOME`, flags). It is
//! resolved against one host into a [`Policy`]: canonical absolute paths, each sealed root
//! with its declared kind, the writable roots, the protected cage configuration, and the
//! [`FileRule`]s for single files those roots cannot describe (a writable file in a
//! read-only home, a readable file inside a seal, files sealed by pattern).
//! [`Policy::decide`] is the reference meaning every backend is tested against.
//!
//! Beside the filesystem model, everything else a cage is made of, as data and pure
//! functions the enforcing crates read:
//!
//! - [`network`]: modes, domain rules, presets, address classes, the DNS codec;
//! - [`seccomp`]: the deny-list and its reference decision;
//! - [`env`](mod@env): which variables a caged process inherits;
//! - [`limits`]: resource ceilings; [`uid_range`]: the uids handed to Contracts;
//! - [`config`]: the config file, read straight into typed values; [`BackendChoice`]: the
//!   Linux backend a launch asks for (`--backend`, `[run] backend`);
//! - [`run_argv`]: the one way a `jaula run` command line is written.
//!
//! - [`host_fs`]: the one interface through which resolution and every backend ask the
//!   host's filesystem what is there ([`HostFs`]), so tests can fake a host.
//!
//! This crate never spawns a process and holds no `unsafe`; it reads the filesystem only
//! through [`HostFs`], to resolve symlinks, to ask whether an undeclared path is a file, to
//! read the config file, and to follow a repo's `.git` file, `commondir` and `.gitmodules`
//! to its git directories.
#![deny(missing_docs)]

pub mod backend_choice;
pub mod config;
pub mod decide;
pub mod defaults;
pub mod env;
pub mod error;
pub mod file_rule;
pub mod git_config;
pub mod git_todo;
pub mod host_fs;
pub mod limits;
pub mod network;
pub mod paths;
pub mod policy;
mod protect;
pub mod protect_kind;
mod root_index;
pub mod run_argv;
pub mod seccomp;
pub mod serde_path;
pub mod sockets;
pub mod sources;
pub mod spec;
pub mod uid_range;

pub use backend_choice::BackendChoice;
pub use config::ConfigFile;
pub use decide::{Access, Decision, Rule};
pub use error::{ConfigError, PolicyError};
pub use file_rule::{FileMatch, FileRule, FileRuleSource};
pub use host_fs::{EntryKind, HostFs, RealHostFs};
pub use policy::{
    AbsentRoot, CageProfile, Policy, ProtectKind, ProtectedPath, ProtectedSource, SealKind,
    SealSource, SealedRoot, StandingDirectory, Warning, WritableRoot, WriteSource,
};
pub use sockets::{AllowedSocket, SocketSource, UnixPreset};
pub use sources::{CageFlags, EnvVars, Sources};
pub use spec::PolicySpec;

use serde::{Deserialize, Serialize};

/// The kernel a policy is resolved for. Both are computable on any host: a Linux machine
/// renders the macOS profile (tests, review) and the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Platform {
    /// Landlock, seccomp and bubblewrap.
    Linux,
    /// Seatbelt (`sandbox-exec`).
    #[serde(rename = "macos")]
    MacOs,
}

impl Platform {
    /// The platform this binary runs on; anything that is not macOS is treated as Linux,
    /// whose backends refuse to start where their kernel features are missing.
    pub fn host() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Linux
        }
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Platform::Linux => "linux",
            Platform::MacOs => "macos",
        })
    }
}

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
pub(crate) use test_support::test_scratch;
