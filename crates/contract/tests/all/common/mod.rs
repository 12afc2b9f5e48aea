//! Shared helpers for the integration tests.
#![allow(dead_code, unused_imports)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use jaula_contract::{ContractIsolation, IsolationConfig};
use jaula_policy::limits::ContractLimits;
use jaula_policy::uid_range::UidRange;

pub use jaula_testkit::require_root;

/// A fresh scratch dir under the target tmpdir, never under /tmp (which every cage can
/// write and every uid can list).
pub fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("contract");
    jaula_testkit::scratch_in(&base, ".tmp").0
}

pub const UID_MIN: u32 = 200000;
pub const UID_MAX: u32 = 200999;

pub fn config(dir: &Path, separate: Option<bool>) -> IsolationConfig {
    IsolationConfig {
        workspace_root: dir.join("root"),
        state_dir: dir.join("state"),
        uids: UidRange::new(UID_MIN, UID_MAX).unwrap(),
        limits: ContractLimits {
            max_processes: 256,
            max_memory_bytes: 1 << 30,
        },
        separate_uids: separate,
    }
}

pub fn isolation_at(dir: &Path, separate: Option<bool>) -> ContractIsolation {
    ContractIsolation::new(config(dir, separate)).unwrap()
}

pub fn owner(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().uid()
}

pub fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// Every path under `dir`, including `dir`, without following symlinks.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let p = out[i].clone();
        if std::fs::symlink_metadata(&p)
            .map(|m| m.is_dir())
            .unwrap_or(false)
        {
            for e in std::fs::read_dir(&p).unwrap() {
                out.push(e.unwrap().path());
            }
        }
        i += 1;
    }
    out
}

/// The evidence log's lines, parsed.
pub fn evidence(state: &Path) -> Vec<serde_json::Value> {
    match std::fs::read_to_string(state.join(jaula_contract::EVIDENCE_FILE)) {
        Ok(text) => text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        Err(_) => Vec::new(),
    }
}
