//! Can a Contract's uid get where its spawn goes? Checked before the spawn, from the
//! permission bits of every directory on the way.
//!
//! The spawn changes to the tenant's uid and gid (no supplementary groups), changes into
//! the workspace and executes the jaula binary. When a parent of the workspace root is
//! 0700 root, or the binary sits under `/root`, the kernel refuses with a bare `EACCES`
//! from inside the half-started child, which names neither the step nor the path. Looking
//! first lets the refusal say which directory, whose, and why.
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

/// What the spawn does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Change into a directory beneath it: every directory down to it must be searchable.
    EnterWorkspaceUnder,
    /// Execute it: every directory on the way searchable, the file executable.
    Execute,
}

impl Step {
    fn label(self) -> &'static str {
        match self {
            Step::EnterWorkspaceUnder => "enter its workspace under",
            Step::Execute => "execute",
        }
    }
}

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

/// Check that `uid`/`gid` can do `step` on the absolute `target`.
pub fn check(uid: u32, gid: u32, target: &Path, step: Step) -> Result<()> {
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
            // The workspace root and its missing parents are created by jaula, searchable
            // (0711 and 0755): nothing below an absent directory can block the tenant.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && step == Step::EnterWorkspaceUnder =>
            {
                return Ok(())
            }
            Err(source) => {
                return Err(ContractError::ReachCheck {
                    uid: uid_text.clone(),
                    step: step.label(),
                    target: target.to_path_buf(),
                    path: path.clone(),
                    source,
                })
            }
        };
        let refuse = |why: &'static str| ContractError::TenantCannotReach {
            uid: uid_text.clone(),
            step: step.label(),
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
        let is_target = path == target;
        if is_target && step == Step::Execute {
            if !meta.is_file() {
                return Err(refuse("is not a regular file"));
            }
            if !allowed {
                return Err(refuse("is not executable by it"));
            }
        } else if !allowed {
            return Err(refuse("is not searchable by it"));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
