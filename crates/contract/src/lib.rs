//! Per-tenant ("Contract") isolation: one OS uid per Contract, a 0700 tree per
//! Contract, race-free hand-over of a checkout with `.git` kept the runner's, the
//! `.git` guard, wipe, retention listing, the spawn floor and an evidence log.
//!
//! Everything that walks a Contract's tree does so through directory file descriptors
//! with `O_NOFOLLOW`: the Contract owns that tree and may be rewriting it while the
//! runner (root) acts on it.
#![deny(missing_docs)]
// Contract mode (per-tenant uids, the hand-over and the wipe) is Linux-only: elsewhere only
// the pure types remain (ids, limits, uid ranges, errors) for the Kubernetes renderer, and
// their helpers for the Linux half go unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

pub mod cgroup;
#[cfg(target_os = "linux")]
mod dirfd;
pub mod error;
#[cfg(target_os = "linux")]
pub mod evidence;
pub mod floor;
#[cfg(target_os = "linux")]
pub mod handover;
pub mod ids;
#[cfg(target_os = "linux")]
pub mod isolation;
pub mod layout;
#[cfg(target_os = "linux")]
pub mod reach;
#[cfg(target_os = "linux")]
mod remove;
#[cfg(target_os = "linux")]
pub mod settings;
pub mod uids;

pub use cgroup::{CgroupStatus, ContractCgroup};
pub use error::{ContractError, Result};
#[cfg(target_os = "linux")]
pub use evidence::{Event, EvidenceLog, RunRecord, EVIDENCE_FILE};
pub use floor::{LimitInForce, SpawnFloor, SpawnSetup};
#[cfg(target_os = "linux")]
pub use handover::{check_git_dir, HandoverCounts, GIT_DIR};
pub use ids::{is_uuid, ContractId, RuntimeKind, WorkRecordId, NO_CONTRACT};
#[cfg(target_os = "linux")]
pub use isolation::{
    detect_uid_separation, runner_uid, ContractIsolation, HandoverReport, HeldWorkspace,
    IsolationConfig, LayoutReport, Separation, WipeReport, WorkspaceRemoval,
};
#[cfg(target_os = "linux")]
pub use remove::RemovalFailure;
#[cfg(target_os = "linux")]
pub use settings::ContractFlags;
pub use uids::UidMap;
