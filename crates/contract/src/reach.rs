//! Can a Contract's uid get where its spawn goes? Checked before the spawn, from the
//! permission bits of every directory on the way.
//!
//! The spawn starts in the workspace and becomes the tenant's uid and gid (no
//! supplementary groups) before its command runs; from then on every absolute path into
//! the workspace is walked with the tenant's rights. When a parent of the workspace root
//! is 0700 root, the tenant's command meets a bare `EACCES` that names neither the cause
//! nor the path. Looking first lets the refusal say which directory, whose, and why.
//! (The jaula binary itself is executed by the runner, before the switch: where it is
//! installed does not matter to the tenant.)
//!
//! The check reads mode bits only: a POSIX ACL or an LSM may still refuse (or allow)
//! where the bits say otherwise, and then the spawn's own error, which names both steps,
//! is what the caller sees.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{ContractError, Result};

/// A uid and gid no file is owned by: the stand-in for a Contract whose uid is not
/// allocated yet (a fresh uid owns nothing outside its own tree), so only the "other"
/// bits count for it.
pub const UNALLOCATED: u32 = u32::MAX;

/// What the refusal says the spawn was doing.
const STEP: &str = "enter its workspace under";

const EXECUTE_OR_SEARCH: u32 = 0o1;

/// Whether `uid`/`gid` (no supplementary groups, not root) holds the permission `bit`
/// (1 = execute/search) on a file with this owner, group and mode. As the kernel decides
/// it: the owner class alone counts for the owner, then the group class, then other.
pub fn permits(uid: u32, gid: u32, owner: u32, group: u32, mode: u32, bit: u32) -> bool {
    let class = if owner == uid {
        mode >> 6
    } else if group == gid {
        mode >> 3
    } else {
        mode
    };
    class & bit != 0
}

/// Check that `uid`/`gid` can search every directory down to the absolute `target` (the
/// workspace root, or a directory beneath which it will be created).
pub fn check(uid: u32, gid: u32, target: &Path) -> Result<()> {
    let uid_text = if uid == UNALLOCATED {
        "of a new Contract".to_string()
    } else {
        uid.to_string()
    };
    let mut on_the_way: Vec<PathBuf> = target.ancestors().map(Path::to_path_buf).collect();
    on_the_way.reverse();
    for path in on_the_way {
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            // The workspace root and its missing parents are created by jaula 0711,
            // whatever the umask, and checked again once they exist (see
            // `ContractIsolation::ensure_layout`).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(ContractError::ReachCheck {
                    uid: uid_text.clone(),
                    step: STEP,
                    target: target.to_path_buf(),
                    path: path.clone(),
                    source,
                })
            }
        };
        let refuse = |why: &'static str| ContractError::TenantCannotReach {
            uid: uid_text.clone(),
            step: STEP,
            target: target.to_path_buf(),
            blocked: path.clone(),
            mode: meta.mode() & 0o7777,
            owner: meta.uid(),
            group: meta.gid(),
            why,
        };
        let allowed = permits(
            uid,
            gid,
            meta.uid(),
            meta.gid(),
            meta.mode(),
            EXECUTE_OR_SEARCH,
        );
        if !allowed {
            return Err(refuse("is not searchable by it"));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
