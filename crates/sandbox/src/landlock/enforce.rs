//! The half that acts on the calling thread: build the ruleset, restrict, report.
//!
//! Landlock is a Linux LSM: on any other kernel [`probe`] reports it not implemented and
//! [`restrict_self`] refuses, so callers take the same path as on a Linux kernel without it.

use std::fmt;
#[cfg(target_os = "linux")]
use std::os::fd::OwnedFd;
use std::path::PathBuf;

#[cfg(target_os = "linux")]
use ::landlock::{
    Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, RestrictSelfAttr, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
#[cfg(target_os = "linux")]
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};
#[cfg(target_os = "linux")]
use rustix::io::Errno;
use serde::Serialize;

use super::plan::{Plan, PlanMode};
#[cfg(target_os = "linux")]
use super::plan::{PlanRule, TargetKind};
use super::rights::{Right, Rights, ScopeKind};
use super::LandlockError;

/// The first ABI whose `landlock_restrict_self` can restrict every thread at once
/// (`LANDLOCK_RESTRICT_SELF_TSYNC`).
const ABI_ALL_THREADS: u32 = 8;

/// How much of the ruleset must be enforced for [`restrict_self`] to succeed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AbiFloor {
    /// The filesystem rights of ABI 1 are a hard requirement; REFER, TRUNCATE, IOCTL_DEV and
    /// the scopes are enforced where the kernel has them and reported where it does not.
    #[default]
    FsV1,
    /// Every right and scope this layer uses must be enforced (ABI 6 or newer).
    Everything,
}

/// What the running kernel offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "landlock", rename_all = "kebab-case")]
pub enum KernelStatus {
    /// Landlock works.
    Available {
        /// The kernel's own Landlock ABI version (`LANDLOCK_CREATE_RULESET_VERSION`).
        abi: u32,
    },
    /// Built in but not enabled at boot (`EOPNOTSUPP`): add `landlock` to `lsm=`.
    NotEnabled,
    /// Not built into this kernel (`ENOSYS`): Linux 5.13+ with `CONFIG_SECURITY_LANDLOCK`.
    NotImplemented,
}

impl KernelStatus {
    /// The kernel's Landlock ABI; 0 where there is none, which handles no right.
    pub fn abi(self) -> u32 {
        match self {
            KernelStatus::Available { abi } => abi,
            _ => 0,
        }
    }
}

impl fmt::Display for KernelStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelStatus::Available { abi } => write!(f, "available, ABI {abi}"),
            KernelStatus::NotEnabled => {
                f.write_str("built into the kernel but not enabled at boot (lsm=)")
            }
            KernelStatus::NotImplemented => f.write_str("not built into this kernel"),
        }
    }
}

/// What `restrict_self` would enforce on this kernel, for `jaula check`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Support {
    /// What the kernel offers.
    pub kernel: KernelStatus,
    /// Filesystem rights this layer handles and this kernel enforces.
    pub fs_enforced: Rights,
    /// Filesystem rights this layer handles that this kernel is too old for.
    pub fs_missing: Rights,
    /// Scopes this kernel enforces (ABI 6 and newer).
    pub scopes_enforced: Vec<ScopeKind>,
    /// Scopes this kernel is too old for: signals and abstract sockets then reach
    /// processes outside the cage (`jaula check` says so).
    pub scopes_missing: Vec<ScopeKind>,
    /// Whether the ABI 1 floor holds, i.e. whether `restrict_self` can succeed.
    pub floor_met: bool,
    /// Whether the restriction can cover every thread (ABI 8), not only the caller.
    pub(crate) all_threads: bool,
}

impl Support {
    fn for_kernel(kernel: KernelStatus) -> Support {
        let abi = kernel.abi();
        let fs_enforced = Rights::HANDLED.available_at(abi);
        let (scopes_enforced, scopes_missing) = ScopeKind::ALL
            .into_iter()
            .partition(|s| s.since_abi() <= abi);
        Support {
            kernel,
            fs_enforced,
            fs_missing: Rights::HANDLED - fs_enforced,
            scopes_enforced,
            scopes_missing,
            floor_met: fs_enforced.contains(Rights::FLOOR),
            all_threads: abi >= ABI_ALL_THREADS,
        }
    }
}

fn write_rights_line(f: &mut fmt::Formatter<'_>, label: &str, rights: Rights) -> fmt::Result {
    let names: Vec<&str> = rights.iter().map(Right::name).collect();
    writeln!(
        f,
        "  {label}: {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )
}

fn write_scopes_line(f: &mut fmt::Formatter<'_>, label: &str, scopes: &[ScopeKind]) -> fmt::Result {
    let names: Vec<&str> = scopes.iter().map(|s| s.name()).collect();
    writeln!(
        f,
        "  {label}: {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "landlock: {}", self.kernel)?;
        write_rights_line(f, "filesystem rights enforced", self.fs_enforced)?;
        if !self.fs_missing.is_empty() {
            write_rights_line(
                f,
                "filesystem rights NOT enforced (kernel too old)",
                self.fs_missing,
            )?;
        }
        write_scopes_line(f, "scopes enforced", &self.scopes_enforced)?;
        if !self.scopes_missing.is_empty() {
            write_scopes_line(
                f,
                "scopes NOT enforced (kernel too old)",
                &self.scopes_missing,
            )?;
        }
        if !self.floor_met {
            writeln!(
                f,
                "  the ABI 1 floor is not met: the Landlock layer cannot start"
            )?;
        }
        Ok(())
    }
}

/// Ask the kernel for its Landlock ABI version. Nothing is created or restricted. The
/// kernel is asked once per process: the answer cannot change while it runs.
pub fn probe() -> Support {
    static STATUS: std::sync::OnceLock<KernelStatus> = std::sync::OnceLock::new();
    Support::for_kernel(*STATUS.get_or_init(kernel_status))
}

#[cfg(not(target_os = "linux"))]
fn kernel_status() -> KernelStatus {
    KernelStatus::NotImplemented
}

#[cfg(target_os = "linux")]
fn kernel_status() -> KernelStatus {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and only the VERSION flag,
    // landlock_create_ruleset(2) reads no memory and creates no file descriptor: it returns
    // the ABI version or -1 with errno (Documentation/userspace-api/landlock.rst).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version >= 1 {
        return KernelStatus::Available {
            abi: u32::try_from(version).unwrap_or(u32::MAX),
        };
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => KernelStatus::NotEnabled,
        _ => KernelStatus::NotImplemented,
    }
}

/// How far the ruleset was enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
// Only the Linux `restrict_self` reaches an enforcement to report.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) enum EnforcementStatus {
    /// Every handled right and scope is enforced.
    Full,
    /// The kernel enforces only part of what was handled (an older ABI, a rule narrowed
    /// to fit its object); the missing part is listed in the [`Enforcement`].
    Partial,
}

/// A rule of the plan that was not added because its path changed after planning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct SkippedRule {
    /// The planned path.
    pub(crate) path: PathBuf,
    /// Why it could not be added (a symlink there now, the path gone).
    pub(crate) error: String,
}

/// What the kernel now enforces on the calling thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Enforcement {
    /// What the plan was built for: the host's filesystem or the bubblewrap view.
    pub(crate) mode: PlanMode,
    /// The kernel's Landlock ABI.
    pub(crate) abi: u32,
    /// Whether everything handled is enforced.
    pub(crate) status: EnforcementStatus,
    /// Filesystem rights the ruleset handles: any of them not granted by a rule is denied.
    pub(crate) fs_handled: Rights,
    /// Handled rights this kernel does not enforce (too old an ABI).
    pub(crate) fs_not_enforced: Rights,
    /// Scopes the domain enforces.
    pub(crate) scopes: Vec<ScopeKind>,
    /// Scopes asked for that this kernel does not enforce.
    pub(crate) scopes_not_enforced: Vec<ScopeKind>,
    /// Rules given to the kernel.
    pub(crate) rules: usize,
    /// Planned rules not added because their path changed after planning: each is a
    /// grant lost, never one widened.
    pub(crate) skipped: Vec<SkippedRule>,
    /// Whether `no_new_privs` was set, which an unprivileged `landlock_restrict_self`
    /// requires.
    pub(crate) no_new_privs: bool,
    /// Whether every thread of the process was restricted, not only the caller.
    pub(crate) all_threads: bool,
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.status {
            EnforcementStatus::Full => "fully enforced",
            EnforcementStatus::Partial => "partially enforced",
        };
        writeln!(
            f,
            "landlock: ABI {}, {status}, {} rules{}",
            self.abi,
            self.rules,
            if self.all_threads {
                ", all threads"
            } else {
                ""
            }
        )?;
        write_rights_line(f, "filesystem rights handled", self.fs_handled)?;
        if !self.fs_not_enforced.is_empty() {
            write_rights_line(f, "filesystem rights NOT enforced", self.fs_not_enforced)?;
        }
        write_scopes_line(f, "scopes", &self.scopes)?;
        if !self.scopes_not_enforced.is_empty() {
            write_scopes_line(f, "scopes NOT enforced", &self.scopes_not_enforced)?;
        }
        for skip in &self.skipped {
            writeln!(f, "  skipped rule {}: {}", skip.path.display(), skip.error)?;
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn access_fs(rights: Rights) -> BitFlags<AccessFs> {
    rights
        .iter()
        .map(|r| match r {
            Right::Execute => AccessFs::Execute,
            Right::WriteFile => AccessFs::WriteFile,
            Right::ReadFile => AccessFs::ReadFile,
            Right::ReadDir => AccessFs::ReadDir,
            Right::RemoveDir => AccessFs::RemoveDir,
            Right::RemoveFile => AccessFs::RemoveFile,
            Right::MakeChar => AccessFs::MakeChar,
            Right::MakeDir => AccessFs::MakeDir,
            Right::MakeReg => AccessFs::MakeReg,
            Right::MakeSock => AccessFs::MakeSock,
            Right::MakeFifo => AccessFs::MakeFifo,
            Right::MakeBlock => AccessFs::MakeBlock,
            Right::MakeSym => AccessFs::MakeSym,
            Right::Refer => AccessFs::Refer,
            Right::Truncate => AccessFs::Truncate,
            Right::IoctlDev => AccessFs::IoctlDev,
        })
        .fold(BitFlags::EMPTY, |acc, a| acc | a)
}

/// Open a rule's path without following any symlink, anywhere along it.
///
/// Planned paths are canonical, so a symlink met now means the tree changed since
/// planning; following it could attach the grant to whatever it points at, a sealed root
/// included. `O_PATH` needs no read permission on the object, so the open does not itself
/// depend on DAC (it still needs search permission on the parents).
///
/// Three system calls per rule (this open, `landlock_add_rule`, `close`): the planned
/// [`TargetKind`] decides the rights, so no `fstat` here or in [`add_path_beneath`]. A final symlink fails the open (`ELOOP`: no
/// `O_NOFOLLOW`, so `RESOLVE_NO_SYMLINKS` refuses it) and is skipped. A planned directory
/// that has become a file meanwhile makes the crate narrow the rule and report the ruleset
/// partially enforced, which the `Everything` floor refuses: the race fails closed.
#[cfg(target_os = "linux")]
fn open_beneath(rule: &PlanRule) -> Result<Option<(OwnedFd, Rights)>, Errno> {
    let planned = match rule.kind {
        TargetKind::Directory => rule.rights,
        // A non-directory only takes file rights (EINVAL otherwise).
        TargetKind::File => rule.rights & Rights::FILE,
    };
    if planned.is_empty() {
        return Ok(None);
    }
    match rustix::fs::openat2(
        CWD,
        &rule.path,
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(fd) => Ok(Some((fd, planned))),
        // openat2 (5.6) predates Landlock (5.13) but a seccomp filter may refuse it: then
        // only the last component is kept from being followed, and its type is asked.
        Err(Errno::NOSYS) => {
            let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(CWD, &rule.path, flags, Mode::empty())?;
            let rights = match FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) {
                FileType::Directory => rule.rights,
                FileType::Symlink => return Ok(None),
                _ => rule.rights & Rights::FILE,
            };
            Ok((!rights.is_empty()).then_some((fd, rights)))
        }
        Err(e) => Err(e),
    }
}

/// The rule descriptors of one ruleset, kept open until a batch is full and then closed
/// together: each run of consecutive descriptor numbers among them (the kernel hands out
/// the lowest free number, so a single-threaded loop of opens mostly makes one run) is
/// closed by one `close_range(2)` instead of a `close` per rule, so a rule costs about
/// two system calls, not three.
#[cfg(target_os = "linux")]
#[derive(Default)]
struct RuleFds(Vec<OwnedFd>);

#[cfg(target_os = "linux")]
impl RuleFds {
    /// Well below the usual 1024 soft limit on open descriptors, whatever the caller holds.
    const BATCH: usize = 256;

    /// Keep `fd` until the batch is closed; close the batch when it is full.
    fn keep(&mut self, fd: OwnedFd) {
        self.0.push(fd);
        if self.0.len() >= Self::BATCH {
            self.close();
        }
    }

    fn close(&mut self) {
        use std::os::fd::IntoRawFd;
        let mut raw: Vec<i32> = std::mem::take(&mut self.0)
            .into_iter()
            .map(IntoRawFd::into_raw_fd)
            .collect();
        raw.sort_unstable();
        for run in raw.chunk_by(|a, b| b - a == 1) {
            let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
                continue;
            };
            // SAFETY: every number from `first` to `last` is in `run` (consecutive, as
            // `chunk_by` split them), each a descriptor this batch owned and released from
            // its `OwnedFd` above, so the range holds nothing anything else owns; flags 0
            // closes them.
            let ret =
                unsafe { libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0u32) };
            if ret != 0 {
                // A kernel before 5.9, or a filter refusing it: one by one.
                for &fd in run {
                    // SAFETY: `fd` was released from its `OwnedFd` above; closed once.
                    unsafe { libc::close(fd) };
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for RuleFds {
    fn drop(&mut self) {
        self.close();
    }
}

/// `struct landlock_path_beneath_attr` (include/uapi/linux/landlock.h): packed there, so
/// packed here.
#[cfg(target_os = "linux")]
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
#[cfg(target_os = "linux")]
const RULE_PATH_BENEATH: libc::c_int = 1;

/// Add one path-beneath rule granting `rights` (already within what this kernel handles)
/// beneath `parent`.
///
/// Straight to the kernel rather than through the `landlock` crate, whose `add_rule`
/// makes an `fstat` of every descriptor to narrow a file's rights: the plan already knows
/// each target's kind and [`open_beneath`] narrowed the rights by it, so the crate's check
/// would be a fourth system call per rule (the floor is three: open, add, close). A target
/// that became a non-directory since planning makes the kernel answer EINVAL to directory
/// rights, which refuses the launch: the race still fails closed.
#[cfg(target_os = "linux")]
fn add_path_beneath(
    ruleset: &OwnedFd,
    parent: &OwnedFd,
    rights: Rights,
) -> Result<(), std::io::Error> {
    use std::os::fd::AsRawFd;
    let attr = PathBeneathAttr {
        allowed_access: access_fs(rights).bits(),
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: both descriptors are open and owned by the caller for the whole call; `attr`
    // is a fully initialised `struct landlock_path_beneath_attr` (packed, as the UAPI
    // declares it) that outlives the call, and the kernel only reads it
    // (landlock_add_rule(2)). Flags must be 0.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            std::ptr::addr_of!(attr),
            0u32,
        )
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Restrict the calling thread (and, from ABI 8, every thread of the process) to `plan`.
///
/// Landlock domains are per thread before ABI 8: call this in the process that will
/// `exec` the command, after any other thread has been joined or was never started,
/// typically in the child between `fork` and `exec` or in a single-threaded launcher.
/// Threads and children created afterwards inherit the domain; threads that already exist
/// do not (unless `all_threads` is reported true). The restriction cannot be undone.
///
/// `no_new_privs` is set, as the kernel requires it for an unprivileged caller.
#[cfg(not(target_os = "linux"))]
pub fn restrict_self(_plan: &Plan, _floor: AbiFloor) -> Result<Enforcement, LandlockError> {
    Err(LandlockError::Unavailable {
        status: KernelStatus::NotImplemented,
    })
}

/// See the other `restrict_self`: this is the Linux one.
#[cfg(target_os = "linux")]
pub fn restrict_self(plan: &Plan, floor: AbiFloor) -> Result<Enforcement, LandlockError> {
    let support = probe();
    let abi = match support.kernel {
        KernelStatus::Available { abi } => abi,
        KernelStatus::NotEnabled | KernelStatus::NotImplemented => {
            return Err(LandlockError::Unavailable {
                status: support.kernel,
            })
        }
    };
    let above_floor = match floor {
        AbiFloor::FsV1 => CompatLevel::BestEffort,
        AbiFloor::Everything => CompatLevel::HardRequirement,
    };
    let scopes: BitFlags<Scope> = Scope::Signal | Scope::AbstractUnixSocket;
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))?
        .set_compatibility(above_floor)
        .handle_access(access_fs(Rights::HANDLED))?
        .scope(scopes)?
        .create()?;
    let AddedRules {
        mut ruleset,
        added,
        skipped,
        opened,
    } = add_rules(plan, &support, ruleset)?;
    // Closed before restricting: the domain is the ruleset's, not its rules' descriptors.
    drop(opened);
    // Asked for only where it exists: a best-effort request the kernel cannot honour would
    // mark the whole ruleset "partially enforced" on every ABI 6 and 7 kernel.
    let all_threads = abi >= ABI_ALL_THREADS;
    if all_threads {
        ruleset = ruleset.all_threads(true)?;
    }
    let status = ruleset.restrict_self()?;
    let status_kind = match status.ruleset {
        RulesetStatus::FullyEnforced => EnforcementStatus::Full,
        RulesetStatus::PartiallyEnforced => EnforcementStatus::Partial,
        RulesetStatus::NotEnforced => return Err(LandlockError::NotEnforced { abi }),
    };
    if floor == AbiFloor::Everything && status_kind != EnforcementStatus::Full {
        return Err(LandlockError::BelowFloor { floor, abi });
    }
    Ok(Enforcement {
        mode: plan.mode,
        abi,
        status: status_kind,
        fs_handled: support.fs_enforced,
        fs_not_enforced: support.fs_missing,
        scopes: support.scopes_enforced,
        scopes_not_enforced: support.scopes_missing,
        rules: added,
        skipped,
        no_new_privs: status.no_new_privs,
        all_threads: status.all_threads,
    })
}

/// What [`add_rules`] leaves: the ruleset (the crate's own path may have added to it), how
/// many rules went in, those skipped, and the opened descriptors the rules name.
#[cfg(target_os = "linux")]
struct AddedRules {
    ruleset: RulesetCreated,
    added: usize,
    skipped: Vec<SkippedRule>,
    opened: RuleFds,
}

/// Open each planned path (no symlink followed) and add its rule with what this kernel
/// enforces. A path gone or unreachable since planning is skipped and reported: granting
/// less is the safe direction.
#[cfg(target_os = "linux")]
fn add_rules(
    plan: &Plan,
    support: &Support,
    mut ruleset: RulesetCreated,
) -> Result<AddedRules, LandlockError> {
    // The rules go to the kernel through a duplicate of the ruleset's descriptor (see
    // `add_path_beneath`); the crate's own handle then restricts.
    let rules_fd: Option<OwnedFd> = ruleset
        .try_clone()
        .map_err(LandlockError::RulesetFd)?
        .into();
    let mut skipped = Vec::new();
    let mut added = 0usize;
    let mut opened = RuleFds::default();
    for rule in &plan.rules {
        match open_beneath(rule) {
            Ok(Some((fd, rights))) => {
                let granted = rights & support.fs_enforced;
                match &rules_fd {
                    Some(rules) if !granted.is_empty() => {
                        add_path_beneath(rules, &fd, granted).map_err(|source| {
                            LandlockError::AddRule {
                                path: rule.path.clone(),
                                source,
                            }
                        })?;
                        opened.keep(fd);
                    }
                    // No descriptor (a ruleset the crate did not create) or nothing this
                    // kernel can grant: the crate's own path, which reports it.
                    _ => ruleset = ruleset.add_rule(PathBeneath::new(fd, access_fs(rights)))?,
                }
                added += 1;
            }
            Ok(None) => skipped.push(SkippedRule {
                path: rule.path.clone(),
                error: "now a symlink, or no right its type can take".to_string(),
            }),
            // Gone, replaced by a symlink, or unreachable since planning: granting less
            // is the safe direction, and the report says so.
            Err(e @ (Errno::NOENT | Errno::LOOP | Errno::XDEV | Errno::ACCESS | Errno::PERM)) => {
                skipped.push(SkippedRule {
                    path: rule.path.clone(),
                    error: std::io::Error::from(e).to_string(),
                })
            }
            Err(e) => {
                return Err(LandlockError::Open {
                    path: rule.path.clone(),
                    source: e.into(),
                })
            }
        }
    }
    Ok(AddedRules {
        ruleset,
        added,
        skipped,
        opened,
    })
}

/// Put the calling process (the socket gate's forked child, before it execs the command)
/// in a nested Landlock domain that scopes signals and nothing else, so the command cannot
/// signal its supervisor, which stays in the parent domain: the supervisor holds the
/// gate's listener and the DNS stub, and a command that killed it would end both (the gate
/// fails closed, but the record of what was refused would be lost). The supervisor still
/// signals the command (an ancestor domain may), and kernel-sent signals (SIGCHLD, the
/// terminal's SIGINT) are not scoped. Returns whether the kernel enforced it (ABI 6+).
#[cfg(target_os = "linux")]
pub(crate) fn scope_signals_below_parent() -> Result<bool, LandlockError> {
    if !matches!(probe().kernel, KernelStatus::Available { .. }) {
        return Ok(false);
    }
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::Signal)?
        .create()?
        .restrict_self()?;
    Ok(status.ruleset == RulesetStatus::FullyEnforced)
}

/// A prepared Landlock domain that handles only the write rights: entered by the socket
/// gate's child before it execs the command, and by the supervisor's thread that binds a
/// socket the supervisor's own wider domain must not (see [`Plan::gate_split`]).
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct WritesDomain {
    ruleset: OwnedFd,
}

#[cfg(target_os = "linux")]
impl WritesDomain {
    /// Build the ruleset of `plan`'s write grants (a [`super::plan::GateSplit`]'s
    /// `command_writes`) without enforcing it. A rule whose path went away since planning
    /// is left out: a grant lost, never one widened.
    pub(crate) fn prepare(plan: &Plan) -> Result<WritesDomain, LandlockError> {
        let handled = Rights::WRITE & probe().fs_enforced;
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(access_fs(handled))?
            .create()?;
        let ruleset: Option<OwnedFd> = created.into();
        let ruleset = ruleset.ok_or_else(|| {
            LandlockError::Nested(std::io::Error::other("no Landlock ruleset was created"))
        })?;
        let mut opened = RuleFds::default();
        for rule in &plan.rules {
            let (fd, rights) = match open_beneath(rule) {
                Ok(Some(found)) => found,
                Ok(None) | Err(Errno::NOENT | Errno::LOOP | Errno::XDEV | Errno::ACCESS) => {
                    continue
                }
                Err(e) => {
                    return Err(LandlockError::Open {
                        path: rule.path.clone(),
                        source: e.into(),
                    })
                }
            };
            let granted = rights & handled;
            if granted.is_empty() {
                continue;
            }
            add_path_beneath(&ruleset, &fd, granted).map_err(|source| LandlockError::AddRule {
                path: rule.path.clone(),
                source,
            })?;
            opened.keep(fd);
        }
        drop(opened);
        Ok(WritesDomain { ruleset })
    }

    /// Restrict the calling thread to this domain, stacked on the one it is in. Needs
    /// `no_new_privs` (set by process hardening before any Landlock step).
    pub(crate) fn enter(&self) -> Result<(), LandlockError> {
        use std::os::fd::AsRawFd;
        // SAFETY: landlock_restrict_self(2) takes a ruleset descriptor this value owns and
        // open for the call, and flags 0; it reads no memory of ours.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            )
        };
        if ret == 0 {
            Ok(())
        } else {
            Err(LandlockError::Nested(std::io::Error::last_os_error()))
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod rule_fds_tests {
    use super::RuleFds;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A memfd named `name`: other tests' threads open descriptors meanwhile and may be
    /// given a closed number again, so a descriptor is recognised by what it is.
    fn memfd(name: &str) -> OwnedFd {
        let cname = std::ffi::CString::new(name).unwrap_or_default();
        // SAFETY: memfd_create reads the NUL-terminated name; a descriptor it returns is
        // new and owned by nobody else.
        let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
        // SAFETY: `fd` was just created and is owned here alone.
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    fn holds(fd: i32, name: &str) -> bool {
        std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .is_ok_and(|target| target.to_string_lossy().contains(name))
    }

    #[test]
    fn every_kept_descriptor_is_closed_and_nothing_else() {
        let name = "jaula-rule-fds-kept";
        let outside = memfd("jaula-rule-fds-outside");
        let mut kept = RuleFds::default();
        let mut numbers = Vec::new();
        for _ in 0..(RuleFds::BATCH + 10) {
            let fd = memfd(name);
            numbers.push(fd.as_raw_fd());
            kept.keep(fd);
        }
        drop(kept);
        assert!(numbers.iter().all(|&fd| !holds(fd, name)));
        assert!(holds(outside.as_raw_fd(), "jaula-rule-fds-outside"));
    }

    #[test]
    fn a_batch_with_a_gap_closes_only_its_own() {
        let a = memfd("jaula-rule-fds-a");
        let gap = memfd("jaula-rule-fds-gap");
        let b = memfd("jaula-rule-fds-b");
        let (na, nb) = (a.as_raw_fd(), b.as_raw_fd());
        let mut kept = RuleFds::default();
        kept.keep(a);
        kept.keep(b);
        drop(kept);
        assert!(!holds(na, "jaula-rule-fds-a") && !holds(nb, "jaula-rule-fds-b"));
        assert!(holds(gap.as_raw_fd(), "jaula-rule-fds-gap"));
    }
}
