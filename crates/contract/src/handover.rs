//! Hand-over of a checkout to its Contract, and the `.git` guard.
//!
//! The runner clones and commits as itself, so every git write lands runner-owned in a
//! Contract-owned tree; before the Contract's next process runs, the checkout is
//! re-owned to the Contract's uid, except `.git`.
//!
//! `.git` is the one part of a checkout the runner's own git reads as *instructions*:
//! a hook in `.git/hooks`, or `core.fsmonitor`, `core.hooksPath`, `filter.*.clean` in
//! `.git/config`, runs as the runner (with CAP_SETUID, CAP_CHOWN, every other tenant's
//! tree and the git credential) on its next `git status`. Overriding settings with `-c`
//! cannot close it, because filters and textconv drivers are selected by a committed
//! `.gitattributes` and cannot be enumerated. So `.git` stays runner-owned with no
//! group/other write bit (git creates entries `0777 & ~umask`, and a runner started with
//! umask 000 would otherwise leave them world-writable).
//!
//! Ownership alone is not the boundary: the Contract owns the directory containing
//! `.git`, and rename(2) needs only write+search on the parent, so it can move `.git`
//! aside and plant its own. The guard ([`check_git_dir`]) re-checks before every runner
//! git call that `.git` is still a runner-owned real directory; it must run while no
//! process of the Contract is alive, or the swap can land between check and use.

use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;

use rustix::fs::{chmodat, chownat, fchmod, fchown, fstat, AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;
use rustix::process::{Gid, Uid};
use serde::Serialize;

use crate::dirfd::{file_type, list, lstat_at, open_path_at, reopen_dir};
use crate::error::{ContractError, Result};

/// The runner's git metadata directory name.
pub const GIT_DIR: &str = ".git";

/// A hostile tree can be arbitrarily deep; each level holds one fd. Past this depth the
/// hand-over fails rather than exhausting the runner's descriptors.
const MAX_DEPTH: usize = 512;

/// What one hand-over did. Counts only: never names or contents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HandoverCounts {
    /// Directories and files re-owned to the Contract's uid.
    pub reowned: u64,
    /// Symlinks met and left alone (never followed, never re-owned).
    pub symlinks_skipped: u64,
    /// Non-directories with more than one link and not already the Contract's: the other
    /// link may be outside the workspace, so re-owning the inode could hand over a file
    /// the workspace never contained.
    pub hardlinks_skipped: u64,
    /// Entries on another filesystem (a mount inside the tree), not crossed.
    pub other_filesystem_skipped: u64,
    /// Entries that disappeared between listing and opening.
    pub vanished: u64,
    /// `.git` entries whose group/other write bits were cleared.
    pub git_entries_tightened: u64,
}

struct Walk {
    uid: Uid,
    gid: Gid,
    dev: u64,
    counts: HandoverCounts,
}

/// Re-own everything under the open directory `top` (at `path`, for errors) to
/// `uid:gid`, except entries named `.git`, which are tightened instead.
pub(crate) fn hand_over(top: &OwnedFd, path: &Path, uid: u32, gid: u32) -> Result<HandoverCounts> {
    let st = fstat(top).map_err(|e| ContractError::io("fstat", path, e))?;
    let mut walk = Walk {
        uid: Uid::from_raw(uid),
        gid: Gid::from_raw(gid),
        dev: st.st_dev,
        counts: HandoverCounts::default(),
    };
    fchown(top, Some(walk.uid), Some(walk.gid))
        .map_err(|e| ContractError::io("fchown", path, e))?;
    walk.counts.reowned += 1;
    walk.dir(top, path, 0)?;
    Ok(walk.counts)
}

impl Walk {
    fn dir(&mut self, dir: &OwnedFd, path: &Path, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(ContractError::io("walk", path, Errno::LOOP));
        }
        let names = list(dir).map_err(|e| ContractError::io("readdir", path, e))?;
        for name in names {
            let child = path.join(&name);
            if name == GIT_DIR {
                tighten_git(dir, &name, &child, &mut self.counts)?;
                continue;
            }
            let handle = match open_path_at(dir, &name) {
                Ok(h) => h,
                Err(Errno::NOENT) => {
                    self.counts.vanished += 1;
                    continue;
                }
                Err(e) => return Err(ContractError::io("open", &child, e)),
            };
            let st = fstat(&handle).map_err(|e| ContractError::io("fstat", &child, e))?;
            let kind = file_type(&st);
            if kind == FileType::Symlink {
                self.counts.symlinks_skipped += 1;
                continue;
            }
            if st.st_dev != self.dev {
                self.counts.other_filesystem_skipped += 1;
                continue;
            }
            if kind == FileType::Directory {
                let sub = reopen_dir(&handle).map_err(|e| ContractError::io("open", &child, e))?;
                fchown(&sub, Some(self.uid), Some(self.gid))
                    .map_err(|e| ContractError::io("fchown", &child, e))?;
                self.counts.reowned += 1;
                self.dir(&sub, &child, depth + 1)?;
            } else {
                if st.st_nlink > 1 && st.st_uid != self.uid.as_raw() {
                    self.counts.hardlinks_skipped += 1;
                    continue;
                }
                chownat(
                    &handle,
                    "",
                    Some(self.uid),
                    Some(self.gid),
                    AtFlags::EMPTY_PATH,
                )
                .map_err(|e| ContractError::io("fchownat", &child, e))?;
                self.counts.reowned += 1;
            }
        }
        Ok(())
    }
}

/// Clear group/other write on `.git` and everything below it, never following a
/// symlink. Entries are chmodded through `/proc/self/fd/N` of an `O_PATH` handle whose
/// `fstat` said "not a symlink": that magic link names the inode itself, and
/// `fchmod` does not accept `O_PATH` descriptors.
fn tighten_git<Fd: AsFd>(
    parent: Fd,
    name: &OsStr,
    path: &Path,
    counts: &mut HandoverCounts,
) -> Result<()> {
    let handle = match open_path_at(parent, name) {
        Ok(h) => h,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(ContractError::io("open", path, e)),
    };
    tighten_entry(&handle, path, counts, 0)
}

fn tighten_entry(
    handle: &OwnedFd,
    path: &Path,
    counts: &mut HandoverCounts,
    depth: usize,
) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(ContractError::io("walk", path, Errno::LOOP));
    }
    let st = fstat(handle).map_err(|e| ContractError::io("fstat", path, e))?;
    let kind = file_type(&st);
    if kind == FileType::Symlink {
        return Ok(());
    }
    let mode = st.st_mode & 0o7777;
    if kind == FileType::Directory {
        let dir = reopen_dir(handle).map_err(|e| ContractError::io("open", path, e))?;
        if mode & 0o022 != 0 {
            fchmod(&dir, Mode::from_raw_mode(mode & !0o022))
                .map_err(|e| ContractError::io("fchmod", path, e))?;
            counts.git_entries_tightened += 1;
        }
        let names = list(&dir).map_err(|e| ContractError::io("readdir", path, e))?;
        for name in names {
            let child = path.join(&name);
            let sub = match open_path_at(&dir, &name) {
                Ok(h) => h,
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(ContractError::io("open", &child, e)),
            };
            tighten_entry(&sub, &child, counts, depth + 1)?;
        }
    } else if mode & 0o022 != 0 {
        let magic = format!("/proc/self/fd/{}", handle.as_raw_fd());
        chmodat(
            CWD,
            magic.as_str(),
            Mode::from_raw_mode(mode & !0o022),
            AtFlags::empty(),
        )
        .map_err(|e| ContractError::io("chmod", path, e))?;
        counts.git_entries_tightened += 1;
    }
    Ok(())
}

/// The `.git` guard on an open workspace directory: `.git` must be a real directory
/// (not a symlink, not a `gitdir:` file), owned by `runner_uid`, and not writable by
/// group or others.
pub(crate) fn check_git_at<Fd: AsFd>(
    workspace: Fd,
    git_path: &Path,
    runner_uid: u32,
) -> Result<()> {
    let refuse = |reason: String| ContractError::GitGuard {
        path: git_path.to_path_buf(),
        reason,
    };
    let st = match lstat_at(workspace, OsStr::new(GIT_DIR)) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Err(refuse("there is no .git".into())),
        Err(e) => return Err(ContractError::io("lstat", git_path, e)),
    };
    match file_type(&st) {
        FileType::Directory => {}
        FileType::Symlink => return Err(refuse("it is a symlink".into())),
        other => {
            return Err(refuse(format!(
                "it is a {other:?}, not a directory (a gitdir file can point anywhere)"
            )))
        }
    }
    if st.st_uid != runner_uid {
        return Err(refuse(format!(
            "it is owned by uid {}, not the runner's uid {runner_uid}: a replacement, not the runner's checkout",
            st.st_uid
        )));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(refuse(format!(
            "it is writable by group or others (mode {:o})",
            st.st_mode & 0o7777
        )));
    }
    Ok(())
}

/// [`check_git_at`] for a workspace given by path. The workspace itself must not be a
/// symlink: one pointing at another tenant's checkout would pass the ownership test
/// with that tenant's `.git`.
pub fn check_git_dir(workspace: &Path, runner_uid: u32) -> Result<()> {
    let fd = rustix::fs::openat(
        CWD,
        workspace,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => ContractError::NotARealDirectory {
            path: workspace.to_path_buf(),
        },
        e => ContractError::io("open", workspace, e),
    })?;
    check_git_at(&fd, &workspace.join(GIT_DIR), runner_uid)
}
