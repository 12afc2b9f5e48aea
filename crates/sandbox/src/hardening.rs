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
mod linux {
    use super::*;

    use rustix::io::Errno;
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    use rustix::thread::{self, CapabilitiesSecureBits, CapabilitySet, CapabilitySets};

    const CAP_LAST_CAP_PATH: &str = "/proc/sys/kernel/cap_last_cap";
    const PROC_SELF_FD: &str = "/proc/self/fd";
    const CAP_SETPCAP: u32 = 8;

    fn io_err(errno: Errno) -> io::Error {
        io::Error::from_raw_os_error(errno.raw_os_error())
    }

    fn cap_bit(cap: u32) -> CapabilitySet {
        CapabilitySet::from_bits_retain(1u64 << cap)
    }

    pub(super) fn validate_keep_fds(keep_fds: &[RawFd]) -> Result<Vec<u32>, HardeningError> {
        let mut valid = Vec::with_capacity(keep_fds.len());
        for &fd in keep_fds {
            let number = u32::try_from(fd).map_err(|_| HardeningError::InvalidKeepFd { fd })?;
            if fd_flags(fd).is_none() {
                return Err(HardeningError::KeepFdNotOpen { fd });
            }
            valid.push(number);
        }
        Ok(valid)
    }

    /// `fcntl(F_GETFD)`: `None` when the number is not an open descriptor.
    fn fd_flags(fd: RawFd) -> Option<libc::c_int> {
        // SAFETY: F_GETFD takes no argument and only reads the descriptor table; on a
        // number that is not open the kernel returns EBADF without side effects.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        (flags >= 0).then_some(flags)
    }

    fn set_fd_flags(fd: RawFd, flags: libc::c_int) -> io::Result<()> {
        // SAFETY: F_SETFD only changes the descriptor's FD_CLOEXEC flag. It neither closes
        // nor duplicates the descriptor, so no Rust owner of it is invalidated.
        let result = unsafe { libc::fcntl(fd, libc::F_SETFD, flags) };
        if result < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    pub(super) fn cap_last_cap() -> (u32, CapLastCapSource) {
        match std::fs::read_to_string(CAP_LAST_CAP_PATH)
            .ok()
            .as_deref()
            .and_then(parse_cap_last_cap)
        {
            Some(cap) => (cap, CapLastCapSource::Procfs),
            None => {
                // PR_CAPBSET_READ answers EINVAL exactly for numbers above cap_last_cap
                // (kernel/sys.c via cap_valid), whether or not the bit is set.
                let exists = |cap: u32| thread::capability_is_in_bounding_set(cap_bit(cap)).is_ok();
                (
                    probe_cap_last_cap(COMPILED_CAP_LAST_CAP, exists),
                    CapLastCapSource::Probed,
                )
            }
        }
    }

    fn has_effective(cap: u32) -> Result<bool, HardeningError> {
        let sets = thread::capabilities(None)
            .map_err(|e| HardeningError::ReadCapabilities { source: io_err(e) })?;
        Ok(sets.effective.contains(cap_bit(cap)))
    }

    const WHY_SETPCAP_IS_NOT_NEEDED: &str =
        "(no CAP_SETPCAP to change it here); safe as it is: no_new_privs makes execve \
         intersect the new permitted set with the current one, which is empty once the \
         capabilities step has run, so no capability can come back";

    pub(super) fn lock_securebits() -> Result<(Outcome, String), HardeningError> {
        let current = thread::capabilities_secure_bits()
            .map_err(|e| HardeningError::ReadSecurebits { source: io_err(e) })?
            .bits();
        if current == LOCKED_SECUREBITS {
            return Ok((
                Outcome::AlreadyInPlace,
                "NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE set, KEEP_CAPS off, all locked"
                    .to_owned(),
            ));
        }
        let wanted = CapabilitiesSecureBits::from_bits_retain(LOCKED_SECUREBITS);
        match thread::set_capabilities_secure_bits(wanted) {
            Ok(()) => Ok((
                Outcome::Applied,
                "NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE set, KEEP_CAPS off, all locked"
                    .to_owned(),
            )),
            Err(Errno::PERM) if !has_effective(CAP_SETPCAP)? => Ok((
                Outcome::NotPermitted,
                format!("left at {current:#x} {WHY_SETPCAP_IS_NOT_NEEDED}"),
            )),
            Err(e) => Err(HardeningError::SetSecurebits {
                current,
                wanted: LOCKED_SECUREBITS,
                source: io_err(e),
            }),
        }
    }

    /// The calling thread's status: capabilities are per thread, and `/proc/self` would
    /// show the main thread's, which is not the one `harden` runs on when it is called
    /// from another (the live tests do that).
    const PROC_THREAD_SELF_STATUS: &str = "/proc/thread-self/status";

    /// The bounding and ambient sets from one read of `/proc/thread-self/status` (four
    /// system calls where asking `prctl` costs one per capability per set); `None` when
    /// /proc is not there or does not say, and the callers ask `prctl` instead.
    fn status_caps() -> Option<StatusCaps> {
        use std::io::Read;
        let mut file = std::fs::File::open(PROC_THREAD_SELF_STATUS).ok()?;
        // The whole file is about 1.5 KiB; the capability lines sit in its middle.
        let mut buf = [0u8; 8192];
        let mut len = 0;
        while len < buf.len() {
            match file.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(_) => return None,
            }
        }
        parse_status_caps(std::str::from_utf8(&buf[..len]).ok()?)
    }

    fn bounding_set(last: u32) -> Result<Vec<u32>, HardeningError> {
        if let Some(caps) = status_caps() {
            return Ok(caps_in(caps.bounding, last));
        }
        let mut present = Vec::new();
        for cap in 0..=last {
            let held = thread::capability_is_in_bounding_set(cap_bit(cap)).map_err(|e| {
                HardeningError::ReadBoundingSet {
                    cap,
                    source: io_err(e),
                }
            })?;
            if held {
                present.push(cap);
            }
        }
        Ok(present)
    }

    pub(super) fn drop_bounding_set(last: u32) -> Result<(Outcome, String), HardeningError> {
        let present = bounding_set(last)?;
        if present.is_empty() {
            return Ok((Outcome::AlreadyInPlace, "empty".to_owned()));
        }
        let count = present.len();
        for cap in present {
            match thread::remove_capability_from_bounding_set(cap_bit(cap)) {
                Ok(()) => {}
                Err(Errno::PERM) if !has_effective(CAP_SETPCAP)? => {
                    return Ok((
                        Outcome::NotPermitted,
                        format!("{count} capabilities left {WHY_SETPCAP_IS_NOT_NEEDED}"),
                    ));
                }
                Err(e) => {
                    return Err(HardeningError::DropBoundingSet {
                        cap,
                        source: io_err(e),
                    })
                }
            }
        }
        Ok((Outcome::Applied, format!("{count} capabilities dropped")))
    }

    /// Ambient capabilities held, or `None` on a kernel without an ambient set.
    fn ambient_set(last: u32) -> Result<Option<Vec<u32>>, HardeningError> {
        if let Some(StatusCaps {
            ambient: Some(mask),
            ..
        }) = status_caps()
        {
            return Ok(Some(caps_in(mask, last)));
        }
        // No CapAmb line (or no /proc): ask the kernel, which also tells a kernel without
        // an ambient set apart.
        let mut present = Vec::new();
        for cap in 0..=last {
            match thread::capability_is_in_ambient_set(cap_bit(cap)) {
                Ok(true) => present.push(cap),
                Ok(false) => {}
                // Before Linux 4.3 PR_CAP_AMBIENT itself is unknown.
                Err(Errno::INVAL) if cap == 0 => return Ok(None),
                Err(e) => {
                    return Err(HardeningError::ReadAmbientSet {
                        cap,
                        source: io_err(e),
                    })
                }
            }
        }
        Ok(Some(present))
    }

    pub(super) fn clear_ambient_set(last: u32) -> Result<(Outcome, String), HardeningError> {
        match ambient_set(last)? {
            None => Ok((
                Outcome::Unsupported,
                "kernel older than 4.3 has no ambient set".to_owned(),
            )),
            Some(present) if present.is_empty() => {
                Ok((Outcome::AlreadyInPlace, "empty".to_owned()))
            }
            Some(present) => {
                thread::clear_ambient_capability_set()
                    .map_err(|e| HardeningError::ClearAmbientSet { source: io_err(e) })?;
                Ok((
                    Outcome::Applied,
                    format!("{} capabilities cleared", present.len()),
                ))
            }
        }
    }

    fn read_capabilities() -> Result<CapabilitySets, HardeningError> {
        thread::capabilities(None)
            .map_err(|e| HardeningError::ReadCapabilities { source: io_err(e) })
    }

    fn all_empty(sets: &CapabilitySets) -> bool {
        sets.effective.is_empty() && sets.permitted.is_empty() && sets.inheritable.is_empty()
    }

    pub(super) fn clear_capabilities() -> Result<(Outcome, String), HardeningError> {
        let before = read_capabilities()?;
        if all_empty(&before) {
            return Ok((
                Outcome::AlreadyInPlace,
                "effective, permitted and inheritable empty".to_owned(),
            ));
        }
        let empty = CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        };
        thread::set_capabilities(None, empty)
            .map_err(|e| HardeningError::ClearCapabilities { source: io_err(e) })?;
        Ok((
            Outcome::Applied,
            format!(
                "effective, permitted and inheritable emptied (permitted was {:#x})",
                before.permitted.bits()
            ),
        ))
    }

    pub(super) fn set_no_new_privs() -> Result<(Outcome, String), HardeningError> {
        let already =
            thread::no_new_privs().map_err(|e| HardeningError::NoNewPrivs { source: io_err(e) })?;
        if already {
            return Ok((Outcome::AlreadyInPlace, "set".to_owned()));
        }
        thread::set_no_new_privs(true)
            .map_err(|e| HardeningError::NoNewPrivs { source: io_err(e) })?;
        Ok((Outcome::Applied, "set".to_owned()))
    }

    const NO_CORE: Rlimit = Rlimit {
        current: Some(0),
        maximum: Some(0),
    };

    pub(super) fn disable_core_dumps() -> Result<(Outcome, String), HardeningError> {
        if getrlimit(Resource::Core) == NO_CORE {
            return Ok((Outcome::AlreadyInPlace, "RLIMIT_CORE 0/0".to_owned()));
        }
        setrlimit(Resource::Core, NO_CORE)
            .map_err(|e| HardeningError::CoreLimit { source: io_err(e) })?;
        Ok((Outcome::Applied, "RLIMIT_CORE 0/0".to_owned()))
    }

    fn close_range_cloexec(first: u32, last: u32) -> io::Result<()> {
        // SAFETY: close_range with CLOSE_RANGE_CLOEXEC takes integers only and sets
        // FD_CLOEXEC on open descriptors in the range; it closes nothing now, so no Rust
        // owner of a descriptor is invalidated.
        let result = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first,
                last,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if result < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    pub(super) fn mark_inherited_fds_cloexec(
        keep_fds: &[u32],
    ) -> Result<(Outcome, String), HardeningError> {
        for &fd in keep_fds.iter().filter(|fd| **fd > 2) {
            // validate_keep_fds proved it fits and is open.
            let raw = fd as RawFd;
            let flags = fd_flags(raw).ok_or(HardeningError::KeepFdNotOpen { fd: raw })?;
            set_fd_flags(raw, flags & !libc::FD_CLOEXEC)
                .map_err(|source| HardeningError::KeepFdInheritable { fd: raw, source })?;
        }
        let what = describe_fds(keep_fds);
        for (first, last) in cloexec_ranges(keep_fds) {
            match close_range_cloexec(first, last) {
                Ok(()) => {}
                // ENOSYS: no close_range (before 5.9); EINVAL: no CLOSE_RANGE_CLOEXEC
                // (before 5.11). Both only happen on the first call, before any marking.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) => {
                    let marked = mark_listed_fds_cloexec(keep_fds)?;
                    return Ok((
                        Outcome::Applied,
                        format!("{what} marked close-on-exec ({marked} via {PROC_SELF_FD})"),
                    ));
                }
                Err(source) => {
                    return Err(HardeningError::CloseRange {
                        first,
                        last,
                        source,
                    })
                }
            }
        }
        Ok((
            Outcome::Applied,
            format!("{what} marked close-on-exec (close_range)"),
        ))
    }

    /// The fallback: every descriptor /proc lists. Fails closed when /proc is missing.
    pub(super) fn mark_listed_fds_cloexec(keep_fds: &[u32]) -> Result<usize, HardeningError> {
        let list_error = |source| HardeningError::ListFds {
            path: PathBuf::from(PROC_SELF_FD),
            source,
        };
        // Collect first: the directory's own descriptor is open while iterating and is
        // gone afterwards (EBADF below), and marking while listing is not needed.
        let mut fds = Vec::new();
        for entry in std::fs::read_dir(PROC_SELF_FD).map_err(list_error)? {
            let entry = entry.map_err(list_error)?;
            if let Some(fd) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            {
                if fd > 2 && !keep_fds.contains(&fd) {
                    fds.push(fd);
                }
            }
        }
        let mut marked = 0;
        for fd in fds {
            let Ok(raw) = RawFd::try_from(fd) else {
                continue;
            };
            let Some(flags) = fd_flags(raw) else { continue };
            set_fd_flags(raw, flags | libc::FD_CLOEXEC)
                .map_err(|source| HardeningError::MarkFd { fd: raw, source })?;
            marked += 1;
        }
        Ok(marked)
    }

    pub(super) fn verify(report: &HardeningReport) -> Result<(), HardeningError> {
        let fail = |what: String| Err(HardeningError::Verification { what });
        let sets = read_capabilities()?;
        if !all_empty(&sets) {
            return fail(format!(
                "capabilities remain: effective {:#x}, permitted {:#x}, inheritable {:#x}",
                sets.effective.bits(),
                sets.permitted.bits(),
                sets.inheritable.bits()
            ));
        }
        if report.outcome(Step::AmbientSet) != Some(Outcome::Unsupported) {
            if let Some(present) = ambient_set(report.cap_last_cap)?.filter(|p| !p.is_empty()) {
                return fail(format!("ambient capabilities remain: {present:?}"));
            }
        }
        if matches!(
            report.outcome(Step::BoundingSet),
            Some(Outcome::Applied | Outcome::AlreadyInPlace)
        ) {
            let present = bounding_set(report.cap_last_cap)?;
            if !present.is_empty() {
                return fail(format!("bounding set still holds {present:?}"));
            }
        }
        if matches!(
            report.outcome(Step::Securebits),
            Some(Outcome::Applied | Outcome::AlreadyInPlace)
        ) {
            let bits = thread::capabilities_secure_bits()
                .map_err(|e| HardeningError::ReadSecurebits { source: io_err(e) })?
                .bits();
            if bits != LOCKED_SECUREBITS {
                return fail(format!(
                    "securebits are {bits:#x}, wanted {LOCKED_SECUREBITS:#x}"
                ));
            }
        }
        if !thread::no_new_privs().map_err(|e| HardeningError::NoNewPrivs { source: io_err(e) })? {
            return fail("no_new_privs is not set".to_owned());
        }
        if getrlimit(Resource::Core) != NO_CORE {
            return fail("RLIMIT_CORE is not 0/0".to_owned());
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "hardening_tests.rs"]
mod tests;
