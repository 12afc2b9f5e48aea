//! One OS uid per Contract, and the Contract's directory tree.
//!
//! Layout under the workspace root (everything a wipe deletes):
//!
//! ```text
//! {contract}/                      0700, the Contract's uid
//! {contract}/{work_record}         a workspace
//! {contract}/harness/{runtime}     CODEX_HOME / CLAUDE_CONFIG_DIR
//! {contract}/tmp                   TMPDIR
//! {contract}/.gitconfig            lets the Contract's git read a runner-owned .git
//! ```
//!
//! The Contract owns `{contract}/` and may rename or replace anything in it, so every
//! operation here reaches into it through directory fds opened with `O_NOFOLLOW`, and
//! acts on the fd, never on a path the Contract could have swapped for a symlink. No
//! passwd entry is ever created: nothing needs name resolution, and a runner has no
//! business editing `/etc/passwd`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use jaula_policy::limits::ContractLimits;
use jaula_policy::uid_range::UidRange;
use rustix::fs::{
    fchmod, fchown, mkdirat, openat, renameat, unlinkat, AtFlags, FileType, Mode, OFlags,
};
use rustix::io::Errno;
use rustix::process::{geteuid, Gid, Uid};
use serde::Serialize;

use crate::dirfd::{file_type, list, lstat_at, open_dir_at, open_trusted_dir};
use crate::error::{ContractError, Result};
use crate::evidence::{Event, EvidenceLog, RunRecord};
use crate::floor::{SpawnFloor, SpawnSetup};
use crate::handover::{self, HandoverCounts, GIT_DIR};
use crate::ids::{
    is_safe_segment, is_uuid, ContractId, RuntimeKind, WorkRecordId, HARNESS_DIR, RESERVED_DIRS,
    TMP_DIR,
};
use crate::layout;
use crate::reach;
use crate::remove::{remove_tree, RemovalFailure};
use crate::uids::{first_free, UidMap};

const DIR_MODE: u32 = 0o700;
/// The root must be searchable by every Contract uid, or none could reach its own
/// 0700 tree; it is not listable, so one tenant cannot enumerate the others.
const ROOT_MODE: u32 = layout::PARENT_MODE;
const CONTRACT_GITCONFIG: &str = ".gitconfig";
const CONTRACT_GITCONFIG_TMP: &str = ".gitconfig.jaula-new";
/// git refuses a repository whose gitdir another user owns ("dubious ownership"), and
/// `.git` deliberately stays the runner's. This file is read only by git running as the
/// Contract's uid (its `HOME` is the Contract's tree), which gains no access it did not
/// already have; the runner's git never reads it.
const CONTRACT_GITCONFIG_BODY: &[u8] = b"[safe]\n\tdirectory = *\n";

/// Whether this process can give Contracts their own uids, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Separation {
    /// True when uids can be separated.
    pub can_separate_uids: bool,
    /// Why (or why not).
    pub reason: String,
}

/// Detected, never assumed: separating uids needs CAP_SETUID and CAP_SETGID for the
/// spawn and CAP_CHOWN for the hand-over, in the *effective* set (a root process in a
/// container with capabilities dropped has uid 0 and none of them).
pub fn detect_uid_separation() -> Separation {
    use rustix::thread::{capabilities, CapabilitySet};
    let needed = CapabilitySet::SETUID | CapabilitySet::SETGID | CapabilitySet::CHOWN;
    match capabilities(None) {
        Ok(sets) if sets.effective.contains(needed) => Separation {
            can_separate_uids: true,
            reason: if geteuid().is_root() {
                "running as root with CAP_SETUID, CAP_SETGID and CAP_CHOWN".into()
            } else {
                "CAP_SETUID, CAP_SETGID and CAP_CHOWN are effective".into()
            },
        },
        Ok(_) => Separation {
            can_separate_uids: false,
            reason: "CAP_SETUID, CAP_SETGID or CAP_CHOWN is not effective: every Contract runs as the runner's own uid".into(),
        },
        Err(e) => Separation {
            can_separate_uids: false,
            reason: format!("capget failed ({e}): assuming uids cannot be separated"),
        },
    }
}

/// The effective uid of this process: the owner the `.git` guard expects.
pub fn runner_uid() -> u32 {
    geteuid().as_raw()
}

/// How a [`ContractIsolation`] is configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsolationConfig {
    /// Where Contract trees live.
    pub workspace_root: PathBuf,
    /// The runner's own state: uid map, lock, evidence log.
    pub state_dir: PathBuf,
    /// uids handed to Contracts.
    pub uids: UidRange,
    /// The default spawn limits.
    pub limits: ContractLimits,
    /// `None` detects; `Some` overrides (tests, and a declared single-tenant mode).
    pub separate_uids: Option<bool>,
}

/// A workspace listed by [`ContractIsolation::held`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct HeldWorkspace {
    /// The Contract's directory name.
    pub contract: String,
    /// The work record's directory name (always a canonical UUID).
    pub work_record: String,
}

/// The result of [`ContractIsolation::hand_over`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HandoverReport {
    /// The Contract.
    pub contract: ContractId,
    /// The uid the checkout was re-owned to; none when uids are not separated (then
    /// nothing was changed).
    pub uid: Option<u32>,
    /// What the walk did.
    #[serde(flatten)]
    pub counts: HandoverCounts,
}

/// The result of [`ContractIsolation::wipe`]. A partial wipe reports nothing removed and
/// keeps the uid: the files left behind are still owned by that uid, so handing it to
/// the next Contract would hand over their contents with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WipeReport {
    /// The Contract.
    pub contract: ContractId,
    /// Workspaces deleted (0 unless `complete`).
    pub workspaces_removed: u64,
    /// Harness roots deleted (0 unless `complete`).
    pub harness_roots_removed: u64,
    /// Whether the uid went back to the pool.
    pub uid_retired: bool,
    /// Whether the tree is gone.
    pub complete: bool,
    /// What could not be removed.
    pub failures: Vec<RemovalFailure>,
}

/// The result of [`ContractIsolation::remove_workspace`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkspaceRemoval {
    /// The Contract.
    pub contract: ContractId,
    /// The work record.
    pub work_record: WorkRecordId,
    /// Whether there was a workspace directory to remove.
    pub existed: bool,
    /// Whether it is gone now.
    pub removed: bool,
    /// What could not be removed.
    pub failures: Vec<RemovalFailure>,
}

/// The result of [`ContractIsolation::ensure_layout`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LayoutReport {
    /// Directories an older jaula had left 0700, now 0711 (search, no listing).
    pub repaired: Vec<PathBuf>,
}

/// Allocates one uid per Contract and owns the Contracts' trees.
#[derive(Clone, Debug)]
pub struct ContractIsolation {
    root: PathBuf,
    state_dir: PathBuf,
    uids: UidRange,
    limits: ContractLimits,
    separation: Separation,
    map: UidMap,
    runner_uid: u32,
}

fn absolute(what: &'static str, path: &Path) -> Result<PathBuf> {
    if !path.is_absolute() {
        return Err(ContractError::RelativePath {
            what,
            path: path.to_path_buf(),
        });
    }
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(ContractError::RelativePath {
            what,
            path: path.to_path_buf(),
        });
    }
    Ok(path.components().collect())
}

impl ContractIsolation {
    /// Validate `config`. Nothing is created until an operation needs it.
    pub fn new(config: IsolationConfig) -> Result<ContractIsolation> {
        let root = absolute("workspace root", &config.workspace_root)?;
        // The root is the operator's choice, not the Contract's: resolving its symlinks
        // once here makes every later component-wise "is it under the root" comparison
        // exact.
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let state_dir = absolute("state directory", &config.state_dir)?;
        let separation = match config.separate_uids {
            None => detect_uid_separation(),
            Some(true) => Separation {
                can_separate_uids: true,
                reason: "declared by configuration".into(),
            },
            Some(false) => Separation {
                can_separate_uids: false,
                reason: "disabled by configuration".into(),
            },
        };
        Ok(ContractIsolation {
            map: UidMap::new(&state_dir),
            root,
            state_dir,
            uids: config.uids,
            limits: config.limits,
            separation,
            runner_uid: geteuid().as_raw(),
        })
    }

    /// The workspace root (canonical when it existed at construction).
    pub fn workspace_root(&self) -> &Path {
        &self.root
    }

    /// The runner's state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The configured uid range.
    pub fn uid_range(&self) -> UidRange {
        self.uids
    }

    /// The default limits.
    pub fn limits(&self) -> ContractLimits {
        self.limits
    }

    /// Whether Contracts get their own uids here, and why.
    pub fn separation(&self) -> &Separation {
        &self.separation
    }

    /// Shorthand for `separation().can_separate_uids`.
    pub fn can_separate_uids(&self) -> bool {
        self.separation.can_separate_uids
    }

    /// The uid of this runner process (what the `.git` guard expects).
    pub fn runner_uid(&self) -> u32 {
        self.runner_uid
    }

    /// `{root}/{contract}`.
    pub fn contract_dir(&self, contract: &ContractId) -> PathBuf {
        self.root.join(contract.as_str())
    }

    /// `{root}/{contract}/{work_record}`.
    pub fn workspace_path(&self, contract: &ContractId, work_record: &WorkRecordId) -> PathBuf {
        self.contract_dir(contract).join(work_record.as_str())
    }

    /// `{root}/{contract}/harness/{runtime}`.
    pub fn harness_config_dir(&self, contract: &ContractId, runtime: &RuntimeKind) -> PathBuf {
        self.contract_dir(contract)
            .join(HARNESS_DIR)
            .join(runtime.as_str())
    }

    /// `{root}/{contract}/tmp`.
    pub fn tmp_dir(&self, contract: &ContractId) -> PathBuf {
        self.contract_dir(contract).join(TMP_DIR)
    }

    /// Whether `contract` already holds a uid, without allocating one. Read before
    /// [`ContractIsolation::uid_for`] by callers that must know whether that call
    /// allocates.
    pub fn has_uid(&self, contract: &ContractId) -> Result<bool> {
        if !self.can_separate_uids() || contract.is_no_contract() {
            return Ok(false);
        }
        Ok(self.map.read()?.contains_key(contract.as_str()))
    }

    /// The uid `contract` holds, without allocating.
    pub fn current_uid(&self, contract: &ContractId) -> Result<Option<u32>> {
        if !self.can_separate_uids() || contract.is_no_contract() {
            return Ok(None);
        }
        Ok(self.map.read()?.get(contract.as_str()).copied())
    }

    /// `contract`'s uid: the first free uid of the range on first sight (recorded as
    /// evidence), the same uid on every later call, across processes and restarts.
    /// `None` for the no-contract sentinel and when uids cannot be separated.
    pub fn uid_for(&self, contract: &ContractId) -> Result<Option<u32>> {
        if !self.can_separate_uids() || contract.is_no_contract() {
            return Ok(None);
        }
        let mut evidence = EvidenceLog::open(&self.state_dir)?;
        let lock = self.map.lock()?;
        let mut map = self.map.read()?;
        if let Some(uid) = map.get(contract.as_str()) {
            return Ok(Some(*uid));
        }
        let uid = first_free(self.uids, &map).ok_or(ContractError::UidRangeExhausted {
            min: self.uids.min(),
            max: self.uids.max(),
        })?;
        map.insert(contract.as_str().to_string(), uid);
        self.map.write(&lock, &map)?;
        drop(lock);
        evidence.append(&Event::UidAllocated {
            contract: contract.clone(),
            uid,
        })?;
        Ok(Some(uid))
    }

    fn open_root(&self, create: bool) -> Result<Option<OwnedFd>> {
        if create {
            layout::create_dirs(&self.root, ROOT_MODE)
                .map_err(|e| ContractError::io("mkdir", &self.root, e))?;
        }
        match open_trusted_dir(&self.root) {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT) if !create => Ok(None),
            Err(e) => Err(ContractError::io("open", &self.root, e)),
        }
    }

    /// Create (or re-assert) the Contract's tree root: 0700, owned by `uid`.
    fn ensure_contract_dir(&self, contract: &ContractId, uid: Option<u32>) -> Result<OwnedFd> {
        let root = self
            .open_root(true)?
            .ok_or_else(|| ContractError::io("open", &self.root, Errno::NOENT))?;
        ensure_dir_at(
            &root,
            OsStr::new(contract.as_str()),
            &self.contract_dir(contract),
            uid,
        )
    }

    /// Prepare the Contract's harness root, tmp and `.gitconfig`, and describe the floor
    /// its spawns run under. `memory_override` replaces the default `RLIMIT_DATA`.
    pub fn sandbox(
        &self,
        contract: &ContractId,
        runtime: &RuntimeKind,
        memory_override: Option<u64>,
    ) -> Result<SpawnSetup> {
        let uid = self.uid_for(contract)?;
        let home_path = self.contract_dir(contract);
        let home = self.ensure_contract_dir(contract, uid)?;
        let harness_path = home_path.join(HARNESS_DIR);
        let harness = ensure_dir_at(&home, OsStr::new(HARNESS_DIR), &harness_path, uid)?;
        let runtime_path = self.harness_config_dir(contract, runtime);
        ensure_dir_at(&harness, OsStr::new(runtime.as_str()), &runtime_path, uid)?;
        let tmp_path = self.tmp_dir(contract);
        ensure_dir_at(&home, OsStr::new(TMP_DIR), &tmp_path, uid)?;
        write_gitconfig(&home, &home_path, uid)?;
        let mut limits = self.limits;
        if let Some(bytes) = memory_override {
            limits.max_memory_bytes = bytes;
        }
        Ok(SpawnSetup::new(
            contract.clone(),
            runtime.clone(),
            home_path,
            runtime_path,
            tmp_path,
            SpawnFloor {
                uid,
                gid: uid,
                limits,
            },
        ))
    }

    /// Lay out what every Contract's tree hangs from, so that `contract`'s uid can reach
    /// its own tree on the first spawn and every later one; refuse, naming the directory
    /// and the fix, where it could not. In order:
    ///
    /// 1. open the 0700 parents an older jaula left (see `repair_legacy_parents` in
    ///    [`crate::layout`]), reported in the result;
    /// 2. check the directories that exist, so nothing is created beneath one that blocks;
    /// 3. create the workspace root (0711), the state directory (0700) and their missing
    ///    parents (0711), modes set explicitly whatever the umask;
    /// 4. check again, now that every directory on the way exists.
    ///
    /// Steps 1, 2 and 4 only apply when uids are separated (otherwise the spawn runs as
    /// the runner, which reaches everything it created).
    pub fn ensure_layout(&self, contract: &ContractId) -> Result<LayoutReport> {
        let separated = self.can_separate_uids() && !contract.is_no_contract();
        let mut repaired = Vec::new();
        if separated {
            repaired = layout::repair_legacy_parents(&self.root, &self.state_dir, self.runner_uid)
                .map_err(|e| {
                    ContractError::io("chmod", self.root.parent().unwrap_or(&self.root), e)
                })?;
            self.check_tenant_reach(contract)?;
        }
        layout::create_dirs(&self.root, ROOT_MODE)
            .map_err(|e| ContractError::io("mkdir", &self.root, e))?;
        crate::uids::ensure_state_dir(&self.state_dir)?;
        if separated {
            self.check_tenant_reach(contract)?;
        }
        Ok(LayoutReport { repaired })
    }

    /// Check that the Contract's uid can enter its workspace (every directory down to the
    /// workspace root that exists is searchable by it; see [`Self::ensure_layout`], which
    /// calls this before and after creating the layout). Nothing to
    /// check when the runner cannot separate uids: the spawn then runs as the runner. A
    /// Contract without a uid yet is checked as a uid that owns nothing, so the check
    /// allocates nothing.
    pub fn check_tenant_reach(&self, contract: &ContractId) -> Result<()> {
        if !self.can_separate_uids() || contract.is_no_contract() {
            return Ok(());
        }
        let uid = self.current_uid(contract)?.unwrap_or(reach::UNALLOCATED);
        // The spawn's gid is its uid (see `sandbox`).
        reach::check(uid, uid, &self.root)
    }

    /// Create `{contract}/{work_record}`, 0700, owned by the Contract's uid, and return
    /// its path. Allocation comes first, so an exhausted range or unwritable state dir
    /// leaves nothing on disk.
    pub fn prepare_workspace(
        &self,
        contract: &ContractId,
        work_record: &WorkRecordId,
    ) -> Result<PathBuf> {
        let uid = self.uid_for(contract)?;
        let home = self.ensure_contract_dir(contract, uid)?;
        let path = self.workspace_path(contract, work_record);
        ensure_dir_at(&home, OsStr::new(work_record.as_str()), &path, uid)?;
        Ok(path)
    }

    /// Check that `path` lies strictly inside `contract`'s tree, by components, and
    /// return the components below the contract directory.
    fn components_below_contract(&self, contract: &ContractId, path: &Path) -> Result<Vec<String>> {
        let outside = || ContractError::OutsideContractTree {
            path: path.to_path_buf(),
            contract: contract.to_string(),
            root: self.root.clone(),
        };
        let rel = path.strip_prefix(&self.root).map_err(|_| outside())?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_str().ok_or_else(outside)?.to_string()),
                Component::CurDir => {}
                _ => return Err(outside()),
            }
        }
        if parts.len() < 2 || parts[0] != contract.as_str() {
            return Err(outside());
        }
        Ok(parts.split_off(1))
    }

    /// Open `{contract}/{parts...}` one component at a time with `O_NOFOLLOW`.
    fn open_below_contract(&self, contract: &ContractId, parts: &[String]) -> Result<OwnedFd> {
        let root = self
            .open_root(false)?
            .ok_or_else(|| ContractError::io("open", &self.root, Errno::NOENT))?;
        let mut path = self.contract_dir(contract);
        let mut fd =
            open_dir_at(&root, OsStr::new(contract.as_str())).map_err(|e| not_real(e, &path))?;
        for part in parts {
            path.push(part);
            fd = open_dir_at(&fd, OsStr::new(part)).map_err(|e| not_real(e, &path))?;
        }
        Ok(fd)
    }

    /// Re-own the checkout at `path` (inside `contract`'s tree) to the Contract's uid,
    /// everything but `.git`; see [`crate::handover`]. A no-op (reported with uid none)
    /// when uids are not separated.
    pub fn hand_over(&self, contract: &ContractId, path: &Path) -> Result<HandoverReport> {
        let parts = self.components_below_contract(contract, path)?;
        let mut evidence = EvidenceLog::open(&self.state_dir)?;
        let uid = self.uid_for(contract)?;
        let counts = match uid {
            None => HandoverCounts::default(),
            Some(uid) => {
                let fd = self.open_below_contract(contract, &parts)?;
                handover::hand_over(&fd, path, uid, uid)?
            }
        };
        evidence.append(&Event::Handover {
            contract: contract.clone(),
            uid,
            counts: counts.clone(),
        })?;
        Ok(HandoverReport {
            contract: contract.clone(),
            uid,
            counts,
        })
    }

    /// The `.git` guard for one workspace, reached from the root without following any
    /// symlink the Contract may have planted along the way.
    pub fn check_git(&self, contract: &ContractId, work_record: &WorkRecordId) -> Result<()> {
        let path = self.workspace_path(contract, work_record);
        let fd = self.open_below_contract(contract, &[work_record.as_str().to_string()])?;
        handover::check_git_at(&fd, &path.join(GIT_DIR), self.runner_uid)
    }

    /// Delete `contract`'s tree without following symlinks, then retire its uid if the
    /// tree is really gone. Idempotent.
    pub fn wipe(&self, contract: &ContractId) -> Result<WipeReport> {
        let mut evidence = EvidenceLog::open(&self.state_dir)?;
        // Fail on a corrupt map before deleting anything, not after.
        self.map.read()?;
        let path = self.contract_dir(contract);
        let name = OsStr::new(contract.as_str());
        let mut failures = Vec::new();
        let (mut workspaces, mut harness_roots, mut complete) = (0, 0, true);
        if let Some(root) = self.open_root(false)? {
            (workspaces, harness_roots) = count_tree(&root, name);
            remove_tree(&root, name, &path, &mut failures);
            complete = match lstat_at(&root, name) {
                Err(Errno::NOENT) => true,
                Ok(_) => false,
                Err(e) => return Err(ContractError::io("lstat", &path, e)),
            };
        }
        let mut uid_retired = false;
        if complete {
            let lock = self.map.lock()?;
            let mut map = self.map.read()?;
            if map.remove(contract.as_str()).is_some() {
                self.map.write(&lock, &map)?;
                uid_retired = true;
            }
        } else {
            (workspaces, harness_roots) = (0, 0);
        }
        let report = WipeReport {
            contract: contract.clone(),
            workspaces_removed: workspaces,
            harness_roots_removed: harness_roots,
            uid_retired,
            complete,
            failures,
        };
        evidence.append(&Event::Wipe {
            contract: contract.clone(),
            workspaces_removed: report.workspaces_removed,
            harness_roots_removed: report.harness_roots_removed,
            uid_retired,
            complete,
            failures: report.failures.len(),
        })?;
        Ok(report)
    }

    /// Delete one workspace, leaving the rest of the Contract's tree.
    pub fn remove_workspace(
        &self,
        contract: &ContractId,
        work_record: &WorkRecordId,
    ) -> Result<WorkspaceRemoval> {
        let mut evidence = EvidenceLog::open(&self.state_dir)?;
        let path = self.workspace_path(contract, work_record);
        let name = OsStr::new(work_record.as_str());
        let mut failures = Vec::new();
        let mut existed = false;
        let mut removed = false;
        let home = match self.open_root(false)? {
            Some(root) => match open_dir_at(&root, OsStr::new(contract.as_str())) {
                Ok(fd) => Some(fd),
                Err(Errno::NOENT) => None,
                Err(e) => return Err(not_real(e, &self.contract_dir(contract))),
            },
            None => None,
        };
        if let Some(home) = home {
            // Only a real directory is a workspace; anything else under that name is
            // left for the wipe rather than guessed at.
            if matches!(lstat_at(&home, name), Ok(st) if file_type(&st) == FileType::Directory) {
                existed = true;
                remove_tree(&home, name, &path, &mut failures);
                removed = matches!(lstat_at(&home, name), Err(Errno::NOENT));
            }
        }
        evidence.append(&Event::WorkspaceRemoved {
            contract: contract.clone(),
            work_record: work_record.clone(),
            removed,
        })?;
        Ok(WorkspaceRemoval {
            contract: contract.clone(),
            work_record: work_record.clone(),
            existed,
            removed,
            failures,
        })
    }

    /// Every `(contract, work_record)` workspace on disk whose work record name is a
    /// canonical UUID. Strays are skipped, not reported: one odd directory must not fail
    /// the retention sweep for every other Contract.
    pub fn held(&self) -> Result<Vec<HeldWorkspace>> {
        let Some(root) = self.open_root(false)? else {
            return Ok(Vec::new());
        };
        let names = list(&root).map_err(|e| ContractError::io("readdir", &self.root, e))?;
        let mut held = Vec::new();
        for contract in names {
            let Some(contract) = contract.to_str().filter(|s| is_safe_segment(s)) else {
                continue;
            };
            let Ok(home) = open_dir_at(&root, OsStr::new(contract)) else {
                continue;
            };
            let Ok(entries) = list(&home) else { continue };
            for entry in entries {
                let Some(entry) = entry.to_str() else {
                    continue;
                };
                if !is_uuid(entry) || RESERVED_DIRS.contains(&entry) {
                    continue;
                }
                if matches!(lstat_at(&home, OsStr::new(entry)), Ok(st) if file_type(&st) == FileType::Directory)
                {
                    held.push(HeldWorkspace {
                        contract: contract.to_string(),
                        work_record: entry.to_string(),
                    });
                }
            }
        }
        held.sort();
        Ok(held)
    }

    /// Append a run to the evidence log (for the launcher that composes `contract run`).
    pub fn record_run(&self, run: RunRecord) -> Result<()> {
        EvidenceLog::open(&self.state_dir)?.append(&Event::Run(run))
    }
}

fn not_real(e: Errno, path: &Path) -> ContractError {
    match e {
        Errno::LOOP | Errno::NOTDIR => ContractError::NotARealDirectory {
            path: path.to_path_buf(),
        },
        e => ContractError::io("open", path, e),
    }
}

/// `mkdirat` + `openat(O_NOFOLLOW)` + `fchmod` + `fchown`, all on the fd: if the
/// Contract put a symlink where the directory belongs, the open fails and nothing is
/// chowned through it.
fn ensure_dir_at(parent: &OwnedFd, name: &OsStr, path: &Path, uid: Option<u32>) -> Result<OwnedFd> {
    match mkdirat(parent, name, Mode::from_raw_mode(DIR_MODE)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(ContractError::io("mkdir", path, e)),
    }
    let fd = open_dir_at(parent, name).map_err(|e| not_real(e, path))?;
    fchmod(&fd, Mode::from_raw_mode(DIR_MODE)).map_err(|e| ContractError::io("fchmod", path, e))?;
    if let Some(uid) = uid {
        fchown(&fd, Some(Uid::from_raw(uid)), Some(Gid::from_raw(uid)))
            .map_err(|e| ContractError::io("fchown", path, e))?;
    }
    Ok(fd)
}

/// Write `.gitconfig` as a fresh file renamed into place, so a hard link or anything
/// else the Contract left under that name is replaced, never written through.
fn write_gitconfig(home: &OwnedFd, home_path: &Path, uid: Option<u32>) -> Result<()> {
    let tmp_path = home_path.join(CONTRACT_GITCONFIG_TMP);
    match unlinkat(home, CONTRACT_GITCONFIG_TMP, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => return Err(ContractError::io("unlink", &tmp_path, e)),
    }
    let fd = openat(
        home,
        CONTRACT_GITCONFIG_TMP,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| ContractError::io("create", &tmp_path, e))?;
    if let Some(uid) = uid {
        fchown(&fd, Some(Uid::from_raw(uid)), Some(Gid::from_raw(uid)))
            .map_err(|e| ContractError::io("fchown", &tmp_path, e))?;
    }
    let mut file = File::from(fd);
    file.write_all(CONTRACT_GITCONFIG_BODY)
        .map_err(|e| ContractError::io("write", &tmp_path, e))?;
    drop(file);
    renameat(home, CONTRACT_GITCONFIG_TMP, home, CONTRACT_GITCONFIG)
        .map_err(|e| ContractError::io("rename", home_path.join(CONTRACT_GITCONFIG), e))
}

/// Workspaces and harness roots under `{root}/{name}`, counted before a wipe.
fn count_tree(root: &OwnedFd, name: &OsStr) -> (u64, u64) {
    let is_dir = |fd: &OwnedFd, n: &OsStr| matches!(lstat_at(fd, n), Ok(st) if file_type(&st) == FileType::Directory);
    let Ok(home) = open_dir_at(root, name) else {
        return (0, 0);
    };
    let Ok(entries) = list(&home) else {
        return (0, 0);
    };
    let workspaces = entries
        .iter()
        .filter(|e| {
            !RESERVED_DIRS.iter().any(|r| OsStr::new(r) == e.as_os_str()) && is_dir(&home, e)
        })
        .count() as u64;
    let harness_roots = match open_dir_at(&home, OsStr::new(HARNESS_DIR)) {
        Ok(h) => list(&h)
            .map(|es| es.iter().filter(|e| is_dir(&h, e)).count() as u64)
            .unwrap_or(0),
        Err(_) => 0,
    };
    (workspaces, harness_roots)
}
