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

mod backend;
mod enforce;
mod plan;
mod rights;

use std::path::PathBuf;

use crate::backend::Deviation;

pub(crate) use backend::LandlockBackend;
#[cfg(target_os = "linux")]
pub(crate) use enforce::scope_signals_below_parent;
#[cfg(target_os = "linux")]
pub(crate) use enforce::WritesDomain;
pub use enforce::{probe, restrict_self, AbiFloor, Enforcement, KernelStatus, Support};
#[cfg(target_os = "linux")]
pub(crate) use plan::GateSplit;
pub use plan::{plan, Plan, PlanMode, PlanRule, SplitDir};
pub use rights::{Right, Rights, ScopeKind};

#[cfg(test)]
use plan::{PlanNote, Reason};

/// Why the Landlock layer could not be planned or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandlockError {
    /// A plan names Linux paths and rights: a policy resolved for macOS has neither.
    #[error("Landlock is a Linux layer; this policy was resolved for {platform}")]
    NotLinux {
        /// The platform the policy was resolved for.
        platform: jaula_policy::Platform,
    },
    /// The kernel has no usable Landlock, so nothing can be restricted.
    #[error("Landlock is unavailable: {status}")]
    Unavailable {
        /// What the kernel answered.
        status: KernelStatus,
    },
    /// A directory the plan must split could not be listed: its entries would get no
    /// rule, so planning stops rather than guess.
    #[error("cannot list {}: {source}", .dir.display())]
    List {
        /// The directory.
        dir: PathBuf,
        /// Why the listing failed.
        source: std::io::Error,
    },
    /// A rule's path could not be opened (`O_PATH`, no symlink followed) to attach it.
    #[error("cannot open {} for a Landlock rule: {source}", .path.display())]
    Open {
        /// The rule's path.
        path: PathBuf,
        /// Why the open failed.
        source: std::io::Error,
    },
    /// `landlock_add_rule(2)` refused a rule (rights that do not fit the object, say).
    #[error("the kernel refused the Landlock rule for {}: {source}", .path.display())]
    AddRule {
        /// The rule's path.
        path: PathBuf,
        /// The kernel's error.
        source: std::io::Error,
    },
    /// The ruleset descriptor could not be duplicated for the restriction.
    #[error("cannot duplicate the Landlock ruleset descriptor: {0}")]
    RulesetFd(std::io::Error),
    /// The command's nested domain of write rules (under the socket gate) could not be
    /// created or entered.
    #[error("the command's nested Landlock domain: {0}")]
    Nested(std::io::Error),
    /// The planner's last check: a grant inside a sealed root other than a readable-in-seal
    /// file's `READ_FILE` would open the seal, so the whole plan is refused.
    #[error("refusing a plan that grants {rights} inside the sealed path {}", .path.display())]
    GrantInsideSeal {
        /// The path the grant was for.
        path: PathBuf,
        /// The rights it would have granted.
        rights: Rights,
    },
    /// `landlock_restrict_self(2)` returned but the kernel reports nothing enforced.
    #[error("the kernel (Landlock ABI {abi}) did not enforce the ruleset")]
    NotEnforced {
        /// The kernel's Landlock ABI.
        abi: u32,
    },
    /// The kernel enforces less than the caller's [`AbiFloor`] demands.
    #[error("the kernel (Landlock ABI {abi}) enforces less than the required floor {floor:?}")]
    BelowFloor {
        /// The floor that was asked for.
        floor: AbiFloor,
        /// The kernel's Landlock ABI.
        abi: u32,
    },
    /// The `landlock` crate's own error while building or applying the ruleset.
    #[cfg(target_os = "linux")]
    #[error("landlock: {0}")]
    Ruleset(#[from] ::landlock::RulesetError),
}

/// Every known deviation of the native layer (`jaula run --backend landlock`) from
/// `decide`.
pub const DEVIATIONS: &[Deviation] = &[
    Deviation {
        name: "sealed-names-listable",
        looser: true,
        why: "READ_DIR granted on each ancestor of a sealed root applies beneath it too, so \
              the names (not contents) of entries inside a sealed directory can be listed",
    },
    Deviation {
        name: "split-dir-no-new-entries",
        looser: false,
        why: "a writable directory holding a sealed or protected path (or one that may \
              appear there) gets no write rule of its own: new direct children cannot be \
              created in it, nor existing direct children removed or renamed. Under jaula \
              run the gate's supervisor, whose domain has such a directory whole, makes \
              and removes them and refuses what decide denies; only the Landlock layer \
              alone and --no-socket-gate keep the split",
    },
    Deviation {
        name: "ancestor-snapshot",
        looser: false,
        why: "entries appearing after the cage started directly inside an ancestor of a \
              sealed root have no rule and stay unreadable",
    },
    Deviation {
        name: "native-dev-subset",
        looser: false,
        why: "natively /dev is the host's: only the devices bubblewrap's --dev provides are \
              granted (a readable block device would expose every sealed file)",
    },
    Deviation {
        name: "protected-not-split",
        looser: true,
        why: "a protected path whose split would break agent work (anything in the repo, \
              .git's config and hooks, ~/.local/share, ~/.codex, /run/user/UID) stays as \
              writable as its root; the .git entry has no Landlock form at all. Under \
              jaula run the gate's supervisor refuses every write, creation, removal and \
              rename of a protected name there; without the gate (--no-socket-gate) the \
              change is reported after the command exits",
    },
    METADATA_WRITES,
    Deviation {
        name: "declared-file-seal-is-directory",
        looser: false,
        why: "a declared-file seal that is a directory on disk is sealed whole, as the disk \
              holds it: decide seals the declared path only, so its entries are unreadable \
              too",
    },
];

/// The deviations of the plan made for inside the bubblewrap view, whose mounts hide the
/// others (the view itself lists its own, [`crate::bwrap::DEVIATIONS`]).
pub(crate) const BWRAP_VIEW_DEVIATIONS: &[Deviation] = &[METADATA_WRITES];

const METADATA_WRITES: Deviation = Deviation {
    name: "metadata-writes",
    looser: true,
    why: "Landlock does not handle chmod, chown, utimes or setxattr: metadata of files \
          outside writable roots can still be changed where DAC allows",
};

#[cfg(test)]
#[path = "landlock_tests.rs"]
mod tests;
