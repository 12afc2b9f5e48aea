//! The uid range and the persisted `contract -> uid` map.
//!
//! One uid is the whole isolation boundary between two Contracts, so the map is written
//! as if a crash or a second runner could happen at any instruction: a flock serialises
//! read-modify-write across processes, and the new map reaches its name only by
//! `rename(2)` of a fully written, fsynced temp file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use jaula_policy::uid_range::{UidRange, RESERVED_TOP};
use rustix::fs::{flock, FlockOperation};

use crate::error::{ContractError, Result};
use crate::ids::is_safe_segment;
use crate::ids::NO_CONTRACT;

/// File names inside the state directory.
pub const UID_MAP_FILE: &str = "contract-uids.json";
const UID_MAP_TMP: &str = "contract-uids.json.tmp";
const UID_LOCK_FILE: &str = "contract-uids.lock";

/// The persisted map in one state directory.
#[derive(Clone, Debug)]
pub struct UidMap {
    state_dir: PathBuf,
}

/// The state directory's own mode: the map says which uid owns which tenant's files, and
/// nobody but the runner needs to know.
pub(crate) const STATE_MODE: u32 = 0o700;

/// The state directory is created 0700, its missing parents 0711: it often shares them with
/// the workspace root (`/var/lib/jaula`), which every Contract uid must pass through.
pub(crate) fn ensure_state_dir(state_dir: &Path) -> Result<()> {
    crate::layout::create_dirs(state_dir, STATE_MODE)
        .map_err(|e| ContractError::state(state_dir, e))
}

/// Held while the map is read, changed and written. Dropping it closes the fd, which
/// releases the flock.
pub struct UidMapLock {
    _file: File,
}

impl UidMap {
    /// The map kept in `state_dir`.
    pub fn new(state_dir: impl Into<PathBuf>) -> UidMap {
        UidMap {
            state_dir: state_dir.into(),
        }
    }

    /// The map file.
    pub fn path(&self) -> PathBuf {
        self.state_dir.join(UID_MAP_FILE)
    }

    /// Take the cross-process lock. Two runners sharing a state volume would otherwise
    /// both read the same map and hand one uid to two Contracts.
    pub fn lock(&self) -> Result<UidMapLock> {
        ensure_state_dir(&self.state_dir)?;
        let path = self.state_dir.join(UID_LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(|e| ContractError::state(&path, e))?;
        flock(&file, FlockOperation::LockExclusive).map_err(|e| ContractError::state(&path, e))?;
        Ok(UidMapLock { _file: file })
    }

    /// Read and validate the map; a missing file is an empty map. Anything unparsable,
    /// any value that is not a uid, any key that is not a contract segment, and any uid
    /// held twice is corruption: guessing would risk handing a live uid to a second
    /// Contract.
    pub fn read(&self) -> Result<BTreeMap<String, u32>> {
        let path = self.path();
        let mut text = String::new();
        match File::open(&path) {
            Ok(mut f) => {
                f.read_to_string(&mut text)
                    .map_err(|e| ContractError::state(&path, e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(ContractError::state(&path, e)),
        }
        parse_map(&text).map_err(|reason| ContractError::CorruptUidMap { path, reason })
    }

    /// Replace the map. Requires the lock (by reference, so callers cannot forget it).
    pub fn write(&self, _lock: &UidMapLock, map: &BTreeMap<String, u32>) -> Result<()> {
        let tmp = self.state_dir.join(UID_MAP_TMP);
        let path = self.path();
        let mut body = serde_json::to_vec_pretty(map)
            .map_err(|e| ContractError::state(&tmp, std::io::Error::other(e)))?;
        body.push(b'\n');
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&tmp)
            .map_err(|e| ContractError::state(&tmp, e))?;
        file.write_all(&body)
            .map_err(|e| ContractError::state(&tmp, e))?;
        // Without the fsync, ext4/xfs may commit the rename before the data, and a power
        // cut leaves a zero-length map under the real name.
        file.sync_all().map_err(|e| ContractError::state(&tmp, e))?;
        drop(file);
        fs::rename(&tmp, &path).map_err(|e| ContractError::state(&path, e))?;
        // The rename itself lives in the directory; fsync it so it survives a crash.
        File::open(&self.state_dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| ContractError::state(&self.state_dir, e))?;
        Ok(())
    }
}

pub(crate) fn parse_map(text: &str) -> std::result::Result<BTreeMap<String, u32>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let object = value
        .as_object()
        .ok_or_else(|| "not a JSON object".to_string())?;
    let mut map = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (key, value) in object {
        if !is_safe_segment(key) || key == NO_CONTRACT {
            return Err(format!("key {key:?} is not a contract id"));
        }
        let uid = value
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v != 0 && *v < RESERVED_TOP)
            .ok_or_else(|| format!("value for {key:?} is not a usable uid: {value}"))?;
        if !seen.insert(uid) {
            return Err(format!("uid {uid} is held by two contracts"));
        }
        map.insert(key.clone(), uid);
    }
    Ok(map)
}

/// The first uid of `range` no entry of `map` holds.
pub(crate) fn first_free(range: UidRange, map: &BTreeMap<String, u32>) -> Option<u32> {
    let taken: BTreeSet<u32> = map.values().copied().collect();
    (range.min()..=range.max()).find(|uid| !taken.contains(uid))
}

#[cfg(test)]
#[path = "uids_tests.rs"]
mod tests;
