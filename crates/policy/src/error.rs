//! Typed errors, each carrying the path or value that caused it.

use std::path::PathBuf;

/// Why a policy could not be built. Nothing is written to disk before any of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The working directory does not exist (a typo or a deleted checkout).
    #[error("the cage needs an existing working directory, got: {}", .0.display())]
    RepoMissing(PathBuf),
    /// The working directory names a file or something else that cannot hold a checkout.
    #[error("the working directory is not a directory: {}", .0.display())]
    RepoNotDirectory(PathBuf),
    /// The working directory is `/`: writable, it would make the whole host writable.
    #[error("the working directory is unsafe to cage: {} is the filesystem root", .0.display())]
    RepoIsRoot(PathBuf),
    /// The working directory is the home itself: writable, it would expose every dotfile.
    #[error("the working directory is unsafe to cage: {} is the home directory", .0.display())]
    RepoIsHome(PathBuf),
    #[error(
        "the working directory is unsafe to cage: {} contains the home directory {}",
        .repo.display(), .home.display()
    )]
    /// The working directory is an ancestor of the home, so the home would be writable.
    RepoContainsHome {
        /// The refused working directory.
        repo: PathBuf,
        /// The home it contains.
        home: PathBuf,
    },
    #[error(
        "the working directory is unsafe to cage: {} lies inside the sealed root {}",
        .repo.display(), .sealed.display()
    )]
    /// The working directory lies under a sealed root: writing it would unseal secrets.
    RepoInsideSealed {
        /// The refused working directory.
        repo: PathBuf,
        /// The sealed root above it.
        sealed: PathBuf,
    },
    #[error(
        "the working directory is unsafe to cage: {} contains the sealed root {}",
        .repo.display(), .sealed.display()
    )]
    /// A sealed root lies under the working directory: the writable grant would cover it.
    RepoContainsSealed {
        /// The refused working directory.
        repo: PathBuf,
        /// The sealed root inside it.
        sealed: PathBuf,
    },
    /// Neither `--home` nor `HOME` names a home, so nothing can be sealed against it.
    #[error("no home directory: pass --home or set HOME")]
    NoHome,
    #[error("{what} must be an absolute path or start with ~, got: {}", .path.display())]
    /// A declared path is relative: it would mean a different place in each directory.
    NotAbsolute {
        /// Which input held the path (a flag, a variable or a config key).
        what: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// A unix-socket preset name that jaula does not know (a typo must not open nothing
    /// silently, nor something else).
    #[error("{origin}: unknown unix-socket preset {name:?} (known: ssh-agent, gpg-agent, docker)")]
    UnknownSocketPreset {
        /// Where the name was given (a flag or a config key).
        origin: String,
        /// The name that matched no preset.
        name: String,
    },
    /// The config file or an environment variable could not be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl PolicyError {
    /// Whether the working directory itself is refused as unsafe to cage (the root, the
    /// home, an ancestor of the home, or a directory on either side of a sealed root):
    /// a command that defaulted the repo to where it stands then says to pass one.
    pub fn is_unsafe_repo(&self) -> bool {
        matches!(
            self,
            PolicyError::RepoIsRoot(_)
                | PolicyError::RepoIsHome(_)
                | PolicyError::RepoContainsHome { .. }
                | PolicyError::RepoInsideSealed { .. }
                | PolicyError::RepoContainsSealed { .. }
        )
    }
}

/// Why the config file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The config file exists but cannot be read (permissions, a directory, I/O).
    #[error("cannot read config file {}: {source}", .path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// What the kernel answered.
        source: std::io::Error,
    },
    /// The config file is not valid TOML for jaula's schema (unknown key, wrong type).
    #[error("config file {} is not valid: {message}", .path.display())]
    Parse {
        /// The config file.
        path: PathBuf,
        /// The parser's message, with the key and line.
        message: String,
    },
    /// An environment variable jaula reads holds a value it does not understand.
    #[error("{name}={value:?} is not understood: expected {expected}")]
    BadEnv {
        /// The variable's name.
        name: &'static str,
        /// Its value as found.
        value: String,
        /// What it may hold instead.
        expected: &'static str,
    },
}
