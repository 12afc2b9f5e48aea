//! The one error type of the crate. Every variant names the value or path that caused it,
//! so the CLI can render it once, plainly.

use std::io;
use std::path::PathBuf;

/// Why a Contract's uid, tree, hand-over or wipe could not be established.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// A contract id that is not a safe single path segment.
    #[error("contract id is not a safe path segment: {0:?}")]
    InvalidContractId(String),
    /// A work record id that is not a safe path segment, or names a reserved directory.
    #[error("work record id is not a safe path segment: {value:?} ({reason})")]
    InvalidWorkRecordId {
        /// The refused id.
        value: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A runtime kind that is not `[a-z][a-z0-9_]{0,31}`.
    #[error("runtime kind is not a safe segment: {0:?}")]
    InvalidRuntimeKind(String),
    /// A uid range that is malformed, empty, or overlaps uids that must never be handed out.
    #[error("contract uid range {value:?} is invalid: {reason}")]
    InvalidUidRange {
        /// The range as given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// Every uid of the range is held by some Contract.
    #[error("contract uid range {min}-{max} is exhausted")]
    UidRangeExhausted {
        /// First uid of the range.
        min: u32,
        /// Last uid of the range.
        max: u32,
    },
    /// The persisted uid map cannot be trusted.
    #[error("contract uid map at {path} is corrupt: {reason}")]
    CorruptUidMap {
        /// The map file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A path that must be absolute was not.
    #[error("{what} must be an absolute path: {path}")]
    RelativePath {
        /// Which setting.
        what: &'static str,
        /// The offending path.
        path: PathBuf,
    },
    /// The runner's state directory cannot be created, locked or written.
    #[error("state directory {path}: {source}")]
    StateDir {
        /// The file or directory in the state dir that failed.
        path: PathBuf,
        /// The kernel's answer.
        #[source]
        source: io::Error,
    },
    /// A filesystem operation on the Contract's tree failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: PathBuf,
        /// The kernel's answer.
        #[source]
        source: io::Error,
    },
    /// A path handed to the library is not inside the Contract's tree under the root.
    #[error("{path} is not inside contract {contract}'s tree under the workspace root {root}")]
    OutsideContractTree {
        /// The refused path.
        path: PathBuf,
        /// The Contract whose tree it had to be in.
        contract: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// Part of the Contract's tree is not what the runner created (a symlink or a file
    /// where a directory must be), so the runner refuses to act through it.
    #[error("{path} is not a real directory (symlink or other file planted in its place?)")]
    NotARealDirectory {
        /// The entry that was expected to be a directory.
        path: PathBuf,
    },
    /// `.git` of a workspace is not the runner's own directory.
    #[error("git guard refused {path}: {reason}")]
    GitGuard {
        /// The `.git` path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A cgroup v2 operation failed after the subtree was found to be delegated.
    #[error("cgroup {path}: {reason}")]
    Cgroup {
        /// The cgroup file or directory.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// The Contract's uid could not reach a path its spawn needs: a directory on the way
    /// it may not search, or a program it may not execute. Found before anything runs.
    #[error(
        "uid {uid} cannot {step} {}: {} (mode {mode:04o}, owner {owner}, group {group}) {why}; {}",
        target.display(),
        blocked.display(),
        reach_fix(blocked)
    )]
    TenantCannotReach {
        /// The Contract's uid (`none yet` is never shown: a fresh uid is checked as one
        /// that owns nothing).
        uid: String,
        /// What the spawn does there: "enter its workspace under", "execute".
        step: &'static str,
        /// The path the step needs.
        target: PathBuf,
        /// The path on the way that refuses it.
        blocked: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// Its owner.
        owner: u32,
        /// Its group.
        group: u32,
        /// "is not searchable by it", "is not executable by it", "is not a regular file".
        why: &'static str,
    },
    /// A path the spawn needs could not be examined at all.
    #[error("cannot check that uid {uid} can {step} {}: {}: {source}", target.display(), path.display())]
    ReachCheck {
        /// The Contract's uid.
        uid: String,
        /// What the spawn does there.
        step: &'static str,
        /// The path the step needs.
        target: PathBuf,
        /// The path that could not be examined.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The operator's two ways out of [`ContractError::TenantCannotReach`]: let every uid pass
/// through the directory (search only, so what it holds stays unlisted), or put the
/// workspace root somewhere every uid can reach.
fn reach_fix(blocked: &std::path::Path) -> String {
    format!(
        "fix: chmod o+x {} (lets every uid pass through it, not list it), or choose a \
         workspace root (--root, JAULA_CONTRACT_ROOT, contract.root) every Contract uid can reach",
        blocked.display()
    )
}

impl From<jaula_policy::uid_range::UidRangeError> for ContractError {
    fn from(e: jaula_policy::uid_range::UidRangeError) -> ContractError {
        ContractError::InvalidUidRange {
            value: e.value,
            reason: e.reason,
        }
    }
}

impl ContractError {
    pub(crate) fn io(
        op: &'static str,
        path: impl Into<PathBuf>,
        source: impl Into<io::Error>,
    ) -> Self {
        ContractError::Io {
            op,
            path: path.into(),
            source: source.into(),
        }
    }

    pub(crate) fn state(path: impl Into<PathBuf>, source: impl Into<io::Error>) -> Self {
        ContractError::StateDir {
            path: path.into(),
            source: source.into(),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = ContractError> = std::result::Result<T, E>;
