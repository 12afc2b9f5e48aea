//! Landlock layer: writes only beneath writable roots, reads everywhere but sealed roots.
//!
//! Two halves. [`plan`] is pure: it turns a [`Policy`](jaula_policy::Policy) and a view
//! of the filesystem into a list of `(path, rights)` rules, each with its reason, and can
//! be printed by `jaula explain`. [`restrict_self`] hands a plan to the kernel with the
//! `landlock` crate's compatibility API: the filesystem rights of ABI 1 are a hard floor,
//! everything newer (REFER, TRUNCATE, IOCTL_DEV, the ABI 6 scopes) best effort, and the
//! achieved [`Enforcement`] is returned for `jaula run --verbose`; [`probe`] says the same
//! without restricting anything, for `jaula check`.
//!
//! Where Landlock cannot say exactly what `decide` says, the difference is one of
//! [`DEVIATIONS`], each pinned by a live test and listed in `docs/security.md`.

mod effect;
mod enforce;
mod plan;
mod rights;

use std::path::PathBuf;

pub use effect::effect;
#[cfg(target_os = "linux")]
pub use enforce::scope_signals_below_parent;
pub use enforce::{
    probe, restrict_self, AbiFloor, Enforcement, EnforcementStatus, KernelStatus, SkippedRule,
    Support,
};
pub use plan::{
    plan, DirLister, EntryKind, Plan, PlanMode, PlanNote, PlanRule, RealFs, Reason, SplitDir,
    TargetKind, DEVICE_NODES,
};
pub use rights::{Right, Rights, ScopeKind};

/// Why the Landlock layer could not be planned or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandlockError {
    #[error("Landlock is a Linux layer; this policy was resolved for {platform}")]
    NotLinux { platform: jaula_policy::Platform },
    #[error("Landlock is unavailable: {status}")]
    Unavailable { status: KernelStatus },
    #[error("cannot list {}: {source}", .dir.display())]
    List {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open {} for a Landlock rule: {source}", .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("refusing a plan that grants {rights} inside the sealed path {}", .path.display())]
    GrantInsideSeal { path: PathBuf, rights: Rights },
    #[error("the kernel (Landlock ABI {abi}) did not enforce the ruleset")]
    NotEnforced { abi: u32 },
    #[error("the kernel (Landlock ABI {abi}) enforces less than the required floor {floor:?}")]
    BelowFloor { floor: AbiFloor, abi: u32 },
    #[cfg(target_os = "linux")]
    #[error("landlock: {0}")]
    Ruleset(#[from] ::landlock::RulesetError),
}

/// A named, documented difference between this layer and `Policy::decide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Deviation {
    pub name: &'static str,
    /// Which plan modes show it.
    pub native: bool,
    pub bwrap_view: bool,
    /// Whether the layer allows more than `decide` (`true`) or less (`false`).
    pub looser: bool,
    pub why: &'static str,
}

/// Every known deviation of this layer from `decide`.
pub const DEVIATIONS: &[Deviation] = &[
    Deviation {
        name: "sealed-names-listable",
        native: true,
        bwrap_view: false,
        looser: true,
        why: "READ_DIR granted on each ancestor of a sealed root applies beneath it too, so \
              the names (not contents) of entries inside a sealed directory can be listed",
    },
    Deviation {
        name: "split-dir-no-new-entries",
        native: true,
        bwrap_view: false,
        looser: false,
        why: "a writable directory holding a sealed or protected path (or one that may \
              appear there) gets no write rule of its own: new direct children cannot be \
              created in it, nor existing direct children removed or renamed",
    },
    Deviation {
        name: "ancestor-snapshot",
        native: true,
        bwrap_view: false,
        looser: false,
        why: "entries appearing after the cage started directly inside an ancestor of a \
              sealed root have no rule and stay unreadable",
    },
    Deviation {
        name: "native-dev-subset",
        native: true,
        bwrap_view: false,
        looser: false,
        why: "natively /dev is the host's: only the devices bubblewrap's --dev provides are \
              granted (a readable block device would expose every sealed file)",
    },
    Deviation {
        name: "protected-not-split",
        native: true,
        bwrap_view: false,
        looser: true,
        why: "a protected path whose split would break agent work (anything in the repo, \
              .git's config and hooks, ~/.local/share, ~/.codex, /run/user/UID) stays as \
              writable as its root; the .git entry has no Landlock form at all. Under \
              jaula run the gate's supervisor refuses every write, creation, removal and \
              rename of a protected name there; without the gate (--no-socket-gate) the \
              change is reported after the command exits",
    },
    Deviation {
        name: "metadata-writes",
        native: true,
        bwrap_view: true,
        looser: true,
        why: "Landlock does not handle chmod, chown, utimes or setxattr: metadata of files \
              outside writable roots can still be changed where DAC allows",
    },
];

#[cfg(test)]
#[path = "landlock_tests.rs"]
mod tests;
