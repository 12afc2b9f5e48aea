//! The launch, resolved once: everything the stage that execs the command needs, as data.
//!
//! The outer `jaula run` gathers the sources, resolves the policy, scrubs the environment
//! and decides the network mode; then either it launches in-process, or it hands this plan
//! to a stage it starts (jaula inside the bubblewrap view, the `--network allow` child,
//! the stage a planting-reporting parent waits for). That stage reads the plan from an
//! inherited sealed memfd ([`crate::plan_fd`]), never from flags or the environment, and
//! never resolves anything again: inside the view the sealed paths are tmpfs, and a second
//! resolution there could only disagree with the first.
//!
//! It lives here rather than in `jaula-policy` because half of it is backend vocabulary
//! (the Landlock plan mode, the network mode, resource limits) that the pure model does
//! not know.

use std::ffi::OsString;
use std::os::fd::RawFd;

use jaula_policy::Policy;
use serde::{Deserialize, Serialize};

use crate::identity::Identity;
use crate::landlock::PlanMode;
use jaula_policy::limits::ResourceLimits;
use jaula_policy::network::NetworkMode;

/// The plan format. A stage refuses any other: an older or newer jaula binary inside the
/// view (an upgrade between the two execs) must not guess at fields it does not know.
pub const PLAN_VERSION: u32 = 3;

/// One launch, resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchPlan {
    /// [`PLAN_VERSION`] when written.
    pub version: u32,
    /// The policy, resolved by the outer stage against the host.
    pub policy: Policy,
    /// Where the Landlock rules are planned: natively, or inside the bwrap view.
    pub stage: PlanMode,
    /// The network mode and the descriptors its stage needs.
    pub network: NetworkPlan,
    /// The command's whole environment, credential variables already scrubbed.
    pub env: Vec<(OsString, OsString)>,
    /// Set before confining (inherited by every stage after the first).
    pub limits: ResourceLimits,
    /// A Contract's spawn: the inherited descriptor of the `cgroup.procs` the stage moves
    /// into (step 2), opened by the runner. Consumed by the first stage; never handed on.
    pub cgroup_fd: Option<RawFd>,
    /// A Contract's spawn: the uid and gid the stage becomes (step 3), after the limits
    /// and the cgroup and before anything else. `None`: the caller's own.
    pub identity: Option<Identity>,
    /// Inherited descriptors passed through to the command; every other one above 2 is
    /// closed before `exec`.
    pub keep_fds: Vec<RawFd>,
    /// The inherited descriptor of this cage's record ([`crate::cage_record`]), opened for
    /// appending by the jaula that started the launch: the socket gate's supervisor writes
    /// who it is and when it ends there. Never handed to the command.
    #[serde(default)]
    pub record_fd: Option<RawFd>,
    /// The socket gate supervises connect/bind (off only with `--no-socket-gate`).
    pub socket_gate: bool,
    /// What the stage reports after the command ends (only when it is the one waiting).
    pub reports: Reports,
    /// Print the layers in force before `exec`.
    pub verbose: bool,
    /// The command and its arguments; never empty.
    pub command: Vec<OsString>,
}

/// The network part of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkPlan {
    /// `host`, `none` or `allow`.
    pub mode: NetworkMode,
    /// `none` natively: apply the no-namespace fallback (Landlock TCP + seccomp socket
    /// families) even where a namespace could be made (tests exercise it this way).
    pub fallback: bool,
    /// `allow`: the inherited descriptor over which the stage hands its loopback listener
    /// to the proxy in the outer jaula.
    pub handoff_fd: Option<RawFd>,
    /// `allow`: the allow list admits `localhost`, so it is not put in `NO_PROXY`.
    pub proxy_localhost: bool,
    /// In the bwrap view: the inherited descriptors holding the DNS stub's sockets, which
    /// the jaula that started bubblewrap bound in the namespace it made (see
    /// `NetnsInChild` in [`crate::network::netns`]). Empty natively: the stage binds its own.
    pub dns_fds: Vec<RawFd>,
    /// `none` with `--log`: the inherited descriptor of the log file, opened by the
    /// outermost jaula; the socket gate's supervisor writes every refusal there.
    pub log_fd: Option<RawFd>,
}

/// After-the-command reports made by the stage that waits for it (the socket gate's
/// supervisor): the outermost jaula, never a stage whose parent already reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reports {
    /// Snapshot the protected paths before, report changes after (natively).
    pub planting: bool,
    /// The `--network none` refused-destination notes.
    pub network_none: bool,
}

/// Why a plan was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The plan was written by a jaula of another plan format.
    #[error(
        "the launch plan has format version {found}, this jaula reads only version {expected} \
         (was jaula replaced between the two stages?)"
    )]
    Version {
        /// The version the plan carries.
        found: u32,
        /// [`PLAN_VERSION`].
        expected: u32,
    },
    /// The plan is not valid JSON for this format.
    #[error("the launch plan is malformed: {0}")]
    Malformed(String),
    /// The plan's command is empty: there would be nothing to exec.
    #[error("the launch plan names no command")]
    NoCommand,
    /// The plan could not be serialised.
    #[error("the launch plan cannot be written: {0}")]
    Encode(String),
    /// The plan descriptor is missing, or is not the sealed memfd the outer stage writes.
    #[error("no launch plan was inherited on descriptor {fd}: {reason}")]
    NotInherited {
        /// The plan descriptor.
        fd: RawFd,
        /// What was wrong with it.
        reason: String,
    },
    /// The open-file limit is below the plan descriptor, so it cannot be placed there.
    #[error(
        "the open-file limit (RLIMIT_NOFILE {limit}) leaves no room for descriptor {fd}, on \
         which jaula hands its launch plan to its own stage; raise it (ulimit -n 1024)"
    )]
    NoRoom {
        /// The plan descriptor.
        fd: RawFd,
        /// The soft `RLIMIT_NOFILE` in force.
        limit: u64,
    },
    /// Writing, sealing or moving the plan's memfd failed.
    #[error("cannot hand the launch plan over: {0}")]
    Io(#[from] std::io::Error),
}

/// Only the version, read before the rest so a plan of another format is named as such
/// rather than as a parse error on whatever field changed.
#[derive(Deserialize)]
struct VersionOnly {
    version: u32,
}

impl LaunchPlan {
    /// The plan as bytes (JSON: small, and readable in a debugger's `/proc/PID/fd`).
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, PlanError> {
        serde_json::to_vec(self).map_err(|e| PlanError::Encode(e.to_string()))
    }

    /// Parse a plan, refusing another format version, unknown fields and an empty command.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<LaunchPlan, PlanError> {
        let header: VersionOnly =
            serde_json::from_slice(bytes).map_err(|e| PlanError::Malformed(e.to_string()))?;
        if header.version != PLAN_VERSION {
            return Err(PlanError::Version {
                found: header.version,
                expected: PLAN_VERSION,
            });
        }
        let plan: LaunchPlan =
            serde_json::from_slice(bytes).map_err(|e| PlanError::Malformed(e.to_string()))?;
        if plan.command.is_empty() {
            return Err(PlanError::NoCommand);
        }
        Ok(plan)
    }
}

#[cfg(test)]
#[path = "launch_plan_tests.rs"]
pub(crate) mod tests;
