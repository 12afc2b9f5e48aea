//! Process hardening applied before exec (layer 4 of docs/architecture.md).
//!
//! `harden` (Linux only) is called in the process that is about to `execve` the caged
//! program (after any identity change, since it drops the capabilities a uid change
//! needs). It locks the securebits, empties every capability set, sets `no_new_privs`,
//! turns core dumps off and marks every inherited file descriptor close-on-exec.
//! Capabilities, securebits and `no_new_privs` are per-thread: call it on the thread that
//! will exec (`execve` kills the others, so their credentials never reach the caged
//! program).
//!
//! Which environment variables the caged program inherits is decided by
//! [`jaula_policy::env`], not here.
//!
//! What this layer does not do, on purpose: a uid-0 process without capabilities still
//! owns every root-owned file (owner permission bits apply to it, e.g. `/etc/shadow`
//! mode 0640 root:shadow stays readable); Landlock and the contract-mode identity layer
//! close that. And `unshare(CLONE_NEWUSER)` hands a full capability set inside the new
//! namespace whatever the bounding set says (kernel/user_namespace.c, `set_cred_user_ns`);
//! the seccomp layer denies namespace creation.
// The pure helpers below serve the Linux steps only; other platforms build the report types.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;

use serde::Serialize;

/// What `harden` may leave alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HardeningOptions {
    /// File descriptors above 2 that the caged program inherits (`--keep-fd`). They are
    /// made inheritable (close-on-exec cleared); each must be open, or `harden` fails
    /// before changing anything. 0, 1 and 2 are always inherited.
    pub(crate) keep_fds: Vec<RawFd>,
}

impl HardeningOptions {
    /// No descriptor kept beyond 0, 1 and 2.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a descriptor the caged program inherits.
    pub fn keep_fd(mut self, fd: RawFd) -> Self {
        self.keep_fds.push(fd);
        self
    }
}

/// One hardening step, in the order `harden` applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Step {
    /// Lock the securebits, so uid 0 regains no capability at exec and no setuid binary
    /// can hand them back.
    Securebits,
    /// Drop every capability from the bounding set: none can be gained later.
    BoundingSet,
    /// Clear the ambient set, which would otherwise survive the exec.
    AmbientSet,
    /// Empty the effective, permitted and inheritable sets.
    Capabilities,
    /// Set `no_new_privs`: setuid bits and file capabilities grant nothing after it.
    NoNewPrivs,
    /// `RLIMIT_CORE` 0: a crash writes no image of the caged process's memory.
    CoreDumps,
    /// Mark every descriptor above 2 close-on-exec, except those kept.
    InheritedFds,
}

impl Step {
    fn label(self) -> &'static str {
        match self {
            Step::Securebits => "securebits",
            Step::BoundingSet => "bounding set",
            Step::AmbientSet => "ambient set",
            Step::Capabilities => "capabilities",
            Step::NoNewPrivs => "no_new_privs",
            Step::CoreDumps => "core dumps",
            Step::InheritedFds => "inherited fds",
        }
    }
}

/// What a step achieved. Anything that neither holds nor is provably harmless is an
/// error, never an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The step changed the process state.
    Applied,
    /// The state was already as wanted (nested cage, or an earlier step implied it).
    AlreadyInPlace,
    /// The caller lacks the privilege the step needs; `detail` says why that is harmless.
    NotPermitted,
    /// The kernel predates the feature; `detail` says why nothing is lost.
    Unsupported,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::AlreadyInPlace => "already in place",
            // Only ever reported with the reason the state is safe as it is (bwrap's inner
            // stage as root runs without CAP_SETPCAP): "not permitted" read as a failure.
            Outcome::NotPermitted => "not needed",
            Outcome::Unsupported => "unsupported",
        }
    }
}

/// The outcome of one step with a human explanation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StepReport {
    /// The step.
    pub(crate) step: Step,
    /// What it achieved.
    pub(crate) outcome: Outcome,
    /// Why that outcome is the safe one, for people.
    pub(crate) detail: String,
}

/// Where the highest capability number came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CapLastCapSource {
    /// `/proc/sys/kernel/cap_last_cap`.
    Procfs,
    /// `/proc` unreadable: found by asking `PR_CAPBSET_READ` which numbers exist,
    /// starting from [`COMPILED_CAP_LAST_CAP`].
    Probed,
}

/// `CAP_CHECKPOINT_RESTORE`, the last capability as of Linux 5.9 (still the last in 6.x).
pub(crate) const COMPILED_CAP_LAST_CAP: u32 = 40;

/// What `harden` did, step by step. Displays as a short table and serialises to JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HardeningReport {
    /// The highest capability number the running kernel knows.
    pub(crate) cap_last_cap: u32,
    /// How that number was learnt.
    pub(crate) cap_last_cap_source: CapLastCapSource,
    /// Every step, in the order applied.
    pub(crate) steps: Vec<StepReport>,
}

impl HardeningReport {
    /// The report of one step.
    pub(crate) fn step(&self, step: Step) -> Option<&StepReport> {
        self.steps.iter().find(|report| report.step == step)
    }

    fn outcome(&self, step: Step) -> Option<Outcome> {
        self.step(step).map(|report| report.outcome)
    }
}

impl fmt::Display for HardeningReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match self.cap_last_cap_source {
            CapLastCapSource::Procfs => "/proc/sys/kernel/cap_last_cap",
            CapLastCapSource::Probed => "probed with PR_CAPBSET_READ",
        };
        writeln!(
            f,
            "process hardening (capabilities 0..={}, {source}):",
            self.cap_last_cap
        )?;
        for report in &self.steps {
            writeln!(
                f,
                "  {:<14} {:<17} {}",
                report.step.label(),
                report.outcome.label(),
                report.detail
            )?;
        }
        Ok(())
    }
}

/// A hardening step that failed. The process may be partly hardened: the caller must not
/// exec the caged program (fail closed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HardeningError {
    /// A kept descriptor number that cannot be one (negative).
    #[error("--keep-fd {fd}: not a file descriptor number")]
    InvalidKeepFd {
        /// The number given.
        fd: RawFd,
    },
    /// A kept descriptor that is not open: keeping it would hand the program nothing.
    #[error("--keep-fd {fd}: no such open file descriptor")]
    KeepFdNotOpen {
        /// The number given.
        fd: RawFd,
    },
    /// `PR_GET_SECUREBITS` failed.
    #[error("cannot read the securebits: {source}")]
    ReadSecurebits {
        /// What the kernel answered.
        source: io::Error,
    },
    /// `PR_SET_SECUREBITS` failed.
    #[error("cannot set the securebits to {wanted:#x} (currently {current:#x}): {source}")]
    SetSecurebits {
        /// The securebits before the call.
        current: u32,
        /// The securebits asked for.
        wanted: u32,
        /// What the kernel answered.
        source: io::Error,
    },
    /// `PR_CAPBSET_READ` failed for a capability the kernel should know.
    #[error("cannot read capability {cap} of the bounding set: {source}")]
    ReadBoundingSet {
        /// The capability number.
        cap: u32,
        /// What the kernel answered.
        source: io::Error,
    },
    /// `PR_CAPBSET_DROP` failed.
    #[error("cannot drop capability {cap} from the bounding set: {source}")]
    DropBoundingSet {
        /// The capability number.
        cap: u32,
        /// What the kernel answered.
        source: io::Error,
    },
    /// `PR_CAP_AMBIENT_IS_SET` failed.
    #[error("cannot read capability {cap} of the ambient set: {source}")]
    ReadAmbientSet {
        /// The capability number.
        cap: u32,
        /// What the kernel answered.
        source: io::Error,
    },
    /// `PR_CAP_AMBIENT_CLEAR_ALL` failed.
    #[error("cannot clear the ambient capability set: {source}")]
    ClearAmbientSet {
        /// What the kernel answered.
        source: io::Error,
    },
    /// `capget` failed.
    #[error("cannot read the capability sets (capget): {source}")]
    ReadCapabilities {
        /// What the kernel answered.
        source: io::Error,
    },
    /// `capset` failed.
    #[error("cannot clear the capability sets (capset): {source}")]
    ClearCapabilities {
        /// What the kernel answered.
        source: io::Error,
    },
    /// `PR_SET_NO_NEW_PRIVS` failed.
    #[error("cannot set no_new_privs: {source}")]
    NoNewPrivs {
        /// What the kernel answered.
        source: io::Error,
    },
    /// `setrlimit(RLIMIT_CORE)` failed.
    #[error("cannot set RLIMIT_CORE to 0: {source}")]
    CoreLimit {
        /// What the kernel answered.
        source: io::Error,
    },
    /// Clearing close-on-exec on a kept descriptor failed.
    #[error("cannot make --keep-fd {fd} inheritable: {source}")]
    KeepFdInheritable {
        /// The kept descriptor.
        fd: RawFd,
        /// What the kernel answered.
        source: io::Error,
    },
    /// `close_range(CLOSE_RANGE_CLOEXEC)` failed on a kernel that has it.
    #[error("cannot mark file descriptors {first}..={last} close-on-exec: {source}")]
    CloseRange {
        /// The range's first descriptor.
        first: u32,
        /// The range's last descriptor.
        last: u32,
        /// What the kernel answered.
        source: io::Error,
    },
    /// Without `close_range`: the open descriptors could not be listed.
    #[error("cannot list open file descriptors in {}: {source}", path.display())]
    ListFds {
        /// The directory listed (`/proc/self/fd`).
        path: PathBuf,
        /// What the kernel answered.
        source: io::Error,
    },
    /// Without `close_range`: one descriptor could not be marked close-on-exec.
    #[error("cannot mark file descriptor {fd} close-on-exec: {source}")]
    MarkFd {
        /// The descriptor.
        fd: RawFd,
        /// What the kernel answered.
        source: io::Error,
    },
    /// A read-back after the steps found a capability, bit or limit still in place.
    #[error("hardening did not hold after it was applied: {what}")]
    Verification {
        /// What was found.
        what: String,
    },
}

/// Hardens the calling process for the `execve` that follows.
///
/// The steps run in the order the kernel needs them; each is reported in the
/// [`HardeningReport`] or returns a [`HardeningError`] that must stop the launch.
///
/// Place in a launch: after any uid/gid change (it removes CAP_SETUID/CAP_SETGID) and
/// after the Landlock ruleset has opened the policy's paths (a capability-less root is
/// subject to ordinary permission checks on other users' 0700 trees); before
/// `landlock_restrict_self` and the seccomp filter, which the no_new_privs set here lets
/// an unprivileged process install.
#[cfg(target_os = "linux")]
pub fn harden(options: &HardeningOptions) -> Result<HardeningReport, HardeningError> {
    use linux::*;
    // Bad input is refused before anything changes, so a typo in --keep-fd leaves the
    // process as it was.
    let keep_fds = validate_keep_fds(&options.keep_fds)?;
    let (cap_last_cap, cap_last_cap_source) = cap_last_cap();
    let mut report = HardeningReport {
        cap_last_cap,
        cap_last_cap_source,
        steps: Vec::new(),
    };
    // Securebits and the bounding set both need CAP_SETPCAP in the effective set
    // (security/commoncap.c: cap_task_prctl, cap_prctl_drop), so they come before capset
    // takes it away. SECBIT_NOROOT stops uid 0 from regaining a full permitted set at
    // execve (capabilities(7), "Capabilities and execution of programs by root").
    // Without CAP_SETPCAP (any unprivileged caller) both are reported not_permitted: the
    // no_new_privs step below makes them moot, which the live tests show with a
    // setuid-root binary and a file-capability binary under a full bounding set.
    report.push(Step::Securebits, lock_securebits()?);
    // The bounding set caps what any later execve may add from file capabilities or from
    // root's implicit full set.
    report.push(Step::BoundingSet, drop_bounding_set(cap_last_cap)?);
    // Ambient capabilities survive execve of unprivileged programs; clearing needs no
    // privilege, and doing it explicitly reports kernels older than 4.3 that have none.
    report.push(Step::AmbientSet, clear_ambient_set(cap_last_cap)?);
    // Last capability step: lowering the sets is always allowed, and it drops the
    // CAP_SETPCAP the two steps above needed. For root, NOROOT alone would already empty
    // the sets at execve; dropping them here also covers the time until execve and the
    // callers that could not set NOROOT.
    report.push(Step::Capabilities, clear_capabilities()?);
    // After this no execve can grant privilege: setuid/setgid bits and file capabilities
    // are ignored and the new permitted set is intersected with the (now empty) old one
    // (commoncap.c: cap_bprm_creds_from_file). It is also what lets the launcher install
    // Landlock and seccomp without CAP_SYS_ADMIN, which the process no longer has.
    report.push(Step::NoNewPrivs, set_no_new_privs()?);
    // Soft and hard limit 0: a crash cannot write the agent's memory (its API key,
    // decrypted secrets) to a core file, and raising the hard limit again needs
    // CAP_SYS_RESOURCE, which is gone.
    report.push(Step::CoreDumps, disable_core_dumps()?);
    // Last, so nothing above opens a descriptor after the marking. Close-on-exec rather
    // than close: jaula still holds descriptors it needs until execve (std's exec-error
    // pipe, the launcher's status channel, Landlock and seccomp fds), and closing numbers
    // that Rust code owns would turn their later drop into a close of whatever reuses the
    // number. The kernel closes every marked descriptor atomically at execve
    // (fs/file.c: do_close_on_exec), so the caged program never sees one.
    report.push(Step::InheritedFds, mark_inherited_fds_cloexec(&keep_fds)?);
    // Read the state back: a step the kernel acknowledged but that does not hold must
    // stop the launch, not be discovered by an attacker.
    verify(&report)?;
    Ok(report)
}

impl HardeningReport {
    fn push(&mut self, step: Step, (outcome, detail): (Outcome, String)) {
        self.steps.push(StepReport {
            step,
            outcome,
            detail,
        });
    }
}

/// The securebits jaula locks: the "pure capabilities" mode of capabilities(7) plus
/// NO_CAP_AMBIENT_RAISE, every one locked so no descendant can undo it. KEEP_CAPS stays
/// off (and locked off): a uid change never keeps a permitted set.
const LOCKED_SECUREBITS: u32 = SECBIT_NOROOT
    | SECBIT_NOROOT_LOCKED
    | SECBIT_NO_SETUID_FIXUP
    | SECBIT_NO_SETUID_FIXUP_LOCKED
    | SECBIT_KEEP_CAPS_LOCKED
    | SECBIT_NO_CAP_AMBIENT_RAISE
    | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
const SECBIT_NOROOT: u32 = 1 << 0;
const SECBIT_NOROOT_LOCKED: u32 = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: u32 = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: u32 = 1 << 3;
const SECBIT_KEEP_CAPS_LOCKED: u32 = 1 << 5;
const SECBIT_NO_CAP_AMBIENT_RAISE: u32 = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: u32 = 1 << 7;

/// The highest capability number from the text of `/proc/sys/kernel/cap_last_cap`;
/// `None` if it is not a number capset's 64-bit sets can hold.
fn parse_cap_last_cap(text: &str) -> Option<u32> {
    text.trim().parse::<u32>().ok().filter(|cap| *cap < 64)
}

/// The bounding and ambient sets as `/proc/thread-self/status` shows them (`CapBnd:` and
/// `CapAmb:`, 16 hex digits each). `None` without a `CapBnd` line; `ambient` is `None`
/// when there is no `CapAmb` line (kernels before 4.3 have no ambient set).
fn parse_status_caps(text: &str) -> Option<StatusCaps> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
    };
    Some(StatusCaps {
        bounding: field("CapBnd:")?,
        ambient: field("CapAmb:"),
    })
}

/// Two capability sets read in one go from `/proc/thread-self/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatusCaps {
    bounding: u64,
    ambient: Option<u64>,
}

/// The capability numbers (at most `last`) set in `mask`.
fn caps_in(mask: u64, last: u32) -> Vec<u32> {
    (0..=last.min(63))
        .filter(|cap| mask & (1u64 << cap) != 0)
        .collect()
}

/// The highest capability number the kernel knows, found by asking about numbers around
/// `start`: `exists(n)` is false when the kernel rejects `n` (EINVAL).
fn probe_cap_last_cap(start: u32, exists: impl Fn(u32) -> bool) -> u32 {
    let mut last = start.min(63);
    while last > 0 && !exists(last) {
        last -= 1;
    }
    while last < 63 && exists(last + 1) {
        last += 1;
    }
    last
}

/// Ranges to mark close-on-exec: everything from 3 up, except the kept descriptors.
fn cloexec_ranges(keep_fds: &[u32]) -> Vec<(u32, u32)> {
    let mut kept: Vec<u32> = keep_fds.iter().copied().filter(|fd| *fd > 2).collect();
    kept.sort_unstable();
    kept.dedup();
    let mut ranges = Vec::new();
    let mut first = 3u32;
    for fd in kept {
        if fd > first {
            ranges.push((first, fd - 1));
        }
        first = fd.saturating_add(1);
    }
    // Kept descriptors are at most i32::MAX, so this last range is never empty.
    ranges.push((first, u32::MAX));
    ranges
}

fn describe_fds(keep_fds: &[u32]) -> String {
    let kept: Vec<String> = keep_fds
        .iter()
        .filter(|fd| **fd > 2)
        .map(|fd| fd.to_string())
        .collect();
    if kept.is_empty() {
        "every descriptor above 2".to_owned()
    } else {
        format!("every descriptor above 2 except {}", kept.join(", "))
    }
}

#[cfg(target_os = "linux")]
mod linux;

#[cfg(test)]
#[path = "hardening_tests.rs"]
mod tests;
