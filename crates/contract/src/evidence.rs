//! The append-only evidence log: one JSON line per allocation, hand-over, run, wipe and
//! workspace removal. Ids, uids and counts only, never file contents or environment
//! values: the log outlives the tenant and is read by people who must not see its data.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::error::{ContractError, Result};
use crate::floor::LimitInForce;
use crate::handover::HandoverCounts;
use crate::ids::{ContractId, WorkRecordId};
use crate::uids::ensure_state_dir;

/// The log's file name in the state directory.
pub const EVIDENCE_FILE: &str = "contract-evidence.jsonl";

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A Contract was given a uid for the first time.
    UidAllocated {
        /// The Contract.
        contract: ContractId,
        /// Its new uid.
        uid: u32,
    },
    /// A checkout was re-owned to its Contract.
    Handover {
        /// The Contract.
        contract: ContractId,
        /// The uid it was re-owned to (none: nothing was re-owned).
        uid: Option<u32>,
        /// What the walk did.
        #[serde(flatten)]
        counts: HandoverCounts,
    },
    /// A command ran under a Contract's floor.
    Run(RunRecord),
    /// A Contract's tree was wiped (or a wipe was attempted).
    Wipe {
        /// The Contract.
        contract: ContractId,
        /// Workspaces deleted.
        workspaces_removed: u64,
        /// Harness roots deleted.
        harness_roots_removed: u64,
        /// Whether the uid went back to the pool.
        uid_retired: bool,
        /// Whether the tree is gone.
        complete: bool,
        /// How many entries could not be removed.
        failures: usize,
    },
    /// One workspace was removed.
    WorkspaceRemoved {
        /// The Contract.
        contract: ContractId,
        /// The work record.
        work_record: WorkRecordId,
        /// Whether it is gone.
        removed: bool,
    },
}

/// What `contract run` records about one command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunRecord {
    /// The Contract.
    pub contract: ContractId,
    /// The command line as run.
    pub argv: Vec<String>,
    /// The uid it ran as (none: the runner's own).
    pub uid: Option<u32>,
    /// The limits in force.
    pub limits: Vec<LimitInForce>,
    /// The confinement layers in force (`landlock`, `seccomp`, `bwrap`, `cgroup`, ...).
    pub layers: Vec<String>,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal, when one killed it.
    pub signal: Option<i32>,
    /// Why the command never started (the tree, hand-over, cgroup or spawn failed), so a
    /// refused run leaves its line too. Absent when it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

#[derive(Serialize)]
struct Line<'a> {
    ts: u64,
    #[serde(flatten)]
    event: &'a Event,
}

/// An open handle on the log. Opening it first is how an operation learns, before it
/// changes anything, that the state directory cannot record it.
#[derive(Debug)]
pub struct EvidenceLog {
    file: File,
    path: PathBuf,
}

impl EvidenceLog {
    /// Open (creating 0600) the log in `state_dir`.
    pub fn open(state_dir: &Path) -> Result<EvidenceLog> {
        ensure_state_dir(state_dir)?;
        let path = state_dir.join(EVIDENCE_FILE);
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(|e| ContractError::state(&path, e))?;
        Ok(EvidenceLog { file, path })
    }

    /// Append one line with a single `write(2)` on an `O_APPEND` fd, so lines from
    /// concurrent runners never interleave, then fsync it: evidence that a crash can
    /// take back is not evidence.
    pub fn append(&mut self, event: &Event) -> Result<()> {
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut line = serde_json::to_vec(&Line { ts, event })
            .map_err(|e| ContractError::state(&self.path, std::io::Error::other(e)))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| ContractError::state(&self.path, e))
    }
}
