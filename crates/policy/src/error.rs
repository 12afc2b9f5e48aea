//! Typed errors, each carrying the path or value that caused it.

use std::path::PathBuf;

/// Why a policy could not be built. Nothing is written to disk before any of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    #[error("the cage needs an existing working directory, got: {}", .0.display())]
    RepoMissing(PathBuf),
    #[error("the working directory is not a directory: {}", .0.display())]
    RepoNotDirectory(PathBuf),
    #[error("the working directory is unsafe to cage: {} is the filesystem root", .0.display())]
    RepoIsRoot(PathBuf),
    #[error("the working directory is unsafe to cage: {} is the home directory", .0.display())]
    RepoIsHome(PathBuf),
    #[error(
        "the working directory is unsafe to cage: {} contains the home directory {}",
        .repo.display(), .home.display()
    )]
    RepoContainsHome { repo: PathBuf, home: PathBuf },
    #[error(
        "the working directory is unsafe to cage: {} lies inside the sealed root {}",
        .repo.display(), .sealed.display()
    )]
    RepoInsideSealed { repo: PathBuf, sealed: PathBuf },
    #[error(
        "the working directory is unsafe to cage: {} contains the sealed root {}",
        .repo.display(), .sealed.display()
    )]
    RepoContainsSealed { repo: PathBuf, sealed: PathBuf },
    #[error("no home directory: pass --home or set HOME")]
    NoHome,
    #[error("{what} must be an absolute path or start with ~, got: {}", .path.display())]
    NotAbsolute { what: &'static str, path: PathBuf },
    #[error("{origin}: unknown unix-socket preset {name:?} (known: ssh-agent, gpg-agent, docker)")]
    UnknownSocketPreset { origin: String, name: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Why the config file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("cannot read config file {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {} is not valid: {message}", .path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{name}={value:?} is not understood: expected {expected}")]
    BadEnv {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
}
