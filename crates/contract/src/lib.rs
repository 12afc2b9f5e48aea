//! Per-tenant ("Contract") isolation: one OS uid per Contract, a 0700 tree per
//! Contract, race-free hand-over of a checkout with `.git` kept the runner's, the
//! `.git` guard, wipe, retention listing, the spawn floor and an evidence log.
//!
//! Everything that walks a Contract's tree does so through directory file descriptors
//! with `O_NOFOLLOW`: the Contract owns that tree and may be rewriting it while the
//! runner (root) acts on it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cgroup;
pub mod error;
pub mod evidence;
pub mod floor;
mod fsat;
pub mod handover;
pub mod ids;
pub mod isolation;
mod remove;
pub mod settings;
pub mod uids;

pub use cgroup::{CgroupStatus, ContractCgroup};
pub use error::{ContractError, Result};
pub use evidence::{Event, EvidenceLog, RunRecord, EVIDENCE_FILE};
pub use floor::{LimitInForce, Limits, Sandbox, SpawnFloor};
pub use handover::{check_git_dir, HandoverCounts, GIT_DIR};
pub use ids::{is_uuid, ContractId, RuntimeKind, WorkRecordId, NO_CONTRACT};
pub use isolation::{
    detect_uid_separation, runner_uid, ContractIsolation, HandoverReport, HeldWorkspace,
    IsolationConfig, Separation, WipeReport, WorkspaceRemoval,
};
pub use remove::RemovalFailure;
pub use settings::{ContractConfig, ContractFlags};
pub use uids::{UidMap, UidRange};
