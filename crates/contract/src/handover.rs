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

use std::ffi::{CStr, OsStr};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rustix::fs::{
    chmodat, chownat, fchmod, fchown, fstat, AtFlags, FileType, Mode, OFlags, RawDir, Stat, CWD,
};
use rustix::io::Errno;
use rustix::process::{geteuid, Gid, Uid};
use serde::Serialize;

use crate::dirfd::{
    child_path, file_type, is_dot_or_dotdot, list, listing_buffer, lstat_at, open_dir_at,
    open_path_at, reopen_dir, walker_count, Listing,
};
use crate::error::{ContractError, Result};

#[cfg(test)]
#[path = "handover_tests.rs"]
mod tests;

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
    /// Who may own a directory whose names the walk trusts to stay put: this process
    /// (the runner) or root.
    runner: Uid,
    counts: HandoverCounts,
    /// One listing buffer per depth, reused by every directory at that depth.
    buffers: Vec<Vec<MaybeUninit<u8>>>,
}

/// Re-own everything under the open directory `top` (at `path`, for errors) to
/// `uid:gid`, except entries named `.git`, which are tightened instead.
///
/// Directories are re-owned after their contents (post-order): while a directory is
/// walked it still belongs to the runner, so the Contract cannot rename, replace or add
/// names in it, and each of its files is re-owned by name (one `fstatat`, one
/// `fchownat`, as `chown -R` does by name alone) with nothing to race. A directory the
/// Contract can already change (its own from an earlier hand-over, or group/other
/// writable) is taken first (see [`Taken`]): owned by the runner, group and other write
/// cleared, so its names hold still too; its mode is given back once it is walked. A
/// handle pinned on a name is not enough there: it pins the inode but not its link
/// count, and a hard link to a file outside, renamed away between the open and the
/// `fstat`, leaves that file with one link, the outside one.
///
/// The entries of `top` are shared out among threads (see [`walker_count`]), each
/// taking the next unclaimed entry and walking it whole; every entry is
/// claimed exactly once, so the counts add up exactly. `top` itself is re-owned last,
/// once every worker is done.
pub(crate) fn hand_over(top: &OwnedFd, path: &Path, uid: u32, gid: u32) -> Result<HandoverCounts> {
    let st = fstat(top).map_err(|e| ContractError::io("fstat", path, e))?;
    let fresh = || Walk {
        uid: Uid::from_raw(uid),
        gid: Gid::from_raw(gid),
        dev: st.st_dev,
        runner: geteuid(),
        counts: HandoverCounts::default(),
        buffers: Vec::new(),
    };
    let taken = Taken::if_unstable(top, &st, geteuid(), path)?;
    let listing = Listing::read(top, &mut listing_buffer())
        .map_err(|e| ContractError::io("readdir", path, e))?;
    let entries: Vec<(&CStr, FileType)> = listing.iter().collect();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let work = |mut walk: Walk| -> Result<HandoverCounts> {
        while !failed.load(Ordering::Relaxed) {
            let Some(&(name, kind)) = entries.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            if let Err(e) = walk.entry(top, name, kind, path, 0) {
                failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(walk.counts)
    };
    let results = std::thread::scope(|scope| {
        // A helper that cannot be started only means fewer helpers.
        let helpers: Vec<_> = (1..walker_count(entries.iter().map(|(_, kind)| *kind)))
            .filter_map(|_| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, || work(fresh()))
                    .ok()
            })
            .collect();
        let mut results = vec![work(fresh())];
        for helper in helpers {
            results.push(helper.join().unwrap_or_else(|_| {
                Err(ContractError::io(
                    "walk",
                    path,
                    std::io::Error::other("a hand-over thread panicked"),
                ))
            }));
        }
        results
    });
    let mut counts = HandoverCounts::default();
    for result in results {
        counts.add(&result?);
    }
    drop(taken);
    fchown(top, Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)))
        .map_err(|e| ContractError::io("fchown", path, e))?;
    counts.reowned += 1;
    Ok(counts)
}

impl HandoverCounts {
    fn add(&mut self, other: &HandoverCounts) {
        self.reowned += other.reowned;
        self.symlinks_skipped += other.symlinks_skipped;
        self.hardlinks_skipped += other.hardlinks_skipped;
        self.other_filesystem_skipped += other.other_filesystem_skipped;
        self.vanished += other.vanished;
        self.git_entries_tightened += other.git_entries_tightened;
    }
}

/// Whether only the runner (or root) can change which inode a name in the directory
/// `st` names: it is owned by one of them and has no group or other write bit. With a
/// POSIX ACL the group bits are the ACL's mask, which caps every named entry, so a
/// clear group write bit means no ACL entry grants write either. A Contract's processes
/// hold no capability that overrides this (they run as an unprivileged uid).
fn names_are_stable(st: &Stat, runner: Uid) -> bool {
    owner_alone_can_rename(st.st_uid, st.st_mode, runner.as_raw())
}

/// [`names_are_stable`] on the owner and mode bits alone.
fn owner_alone_can_rename(owner: u32, mode: u32, runner: u32) -> bool {
    (owner == 0 || owner == runner) && mode & 0o022 == 0
}

/// A directory whose names the Contract could change, taken for the walk: owned by the
/// runner and without group or other write, so that only the runner can rename, replace
/// or add names in it while it is walked (the kernel checks rename and link against the
/// directory's mode under the same lock `fchmod` takes, so none that starts after the
/// take gets through). Dropping it gives the directory its mode back; its owner is the
/// Contract's again when the walk re-owns it. A Contract's process that writes there
/// during the hand-over is refused meanwhile.
struct Taken<'a> {
    dir: &'a OwnedFd,
    mode: Mode,
}

impl<'a> Taken<'a> {
    /// Take `dir` (whose `fstat` is `st`) unless its names are stable already.
    fn if_unstable(
        dir: &'a OwnedFd,
        st: &Stat,
        runner: Uid,
        path: &Path,
    ) -> Result<Option<Taken<'a>>> {
        if names_are_stable(st, runner) {
            return Ok(None);
        }
        let mode = Mode::from_raw_mode(st.st_mode & 0o7777);
        if st.st_uid != 0 && st.st_uid != runner.as_raw() {
            fchown(dir, Some(runner), None).map_err(|e| ContractError::io("fchown", path, e))?;
        }
        let taken = Taken { dir, mode };
        fchmod(dir, Mode::from_raw_mode(mode.as_raw_mode() & !0o022))
            .map_err(|e| ContractError::io("fchmod", path, e))?;
        Ok(Some(taken))
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        // Best effort on an error path too; the walk re-owns the directory after this.
        let _ = fchmod(self.dir, self.mode);
    }
}

impl Walk {
    /// Walk the open directory `dir`, whose `fstat` is `st`.
    fn dir(&mut self, dir: &OwnedFd, st: &Stat, path: &Path, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(ContractError::io("walk", path, Errno::LOOP));
        }
        if self.buffers.len() <= depth {
            self.buffers.resize_with(depth + 1, Vec::new);
        }
        let mut buf = std::mem::take(&mut self.buffers[depth]);
        if buf.is_empty() {
            buf = listing_buffer();
        }
        let result = Taken::if_unstable(dir, st, self.runner, path)
            .and_then(|_taken| self.entries(dir, path, depth, &mut buf));
        self.buffers[depth] = buf;
        result
    }

    /// Re-own each entry of `dir` as it is listed: re-owning changes inodes, never the
    /// directory's names, so the stream is not one the walk is modifying.
    fn entries(
        &mut self,
        dir: &OwnedFd,
        path: &Path,
        depth: usize,
        buf: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        let mut listing = RawDir::new(dir, buf);
        while let Some(entry) = listing.next() {
            let entry = entry.map_err(|e| ContractError::io("readdir", path, e))?;
            let name = entry.file_name();
            if !is_dot_or_dotdot(name) {
                self.entry(dir, name, entry.file_type(), path, depth)?;
            }
        }
        Ok(())
    }

    /// One entry of `dir` (its names stable, or taken), listed with type `listed` (a
    /// hint: see [`Listing`]).
    fn entry(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        listed: FileType,
        path: &Path,
        depth: usize,
    ) -> Result<()> {
        if name.to_bytes() == GIT_DIR.as_bytes() {
            let child = child_path(path, name);
            return tighten_git(
                dir,
                OsStr::from_bytes(name.to_bytes()),
                &child,
                &mut self.counts,
            );
        }
        match listed {
            FileType::Directory => self.subdir(dir, name, path, depth),
            FileType::Symlink => {
                self.counts.symlinks_skipped += 1;
                Ok(())
            }
            _ => self.file_by_name(dir, name, path, depth, true),
        }
    }

    /// An entry listed as a directory: opened as one with `O_NOFOLLOW`, so a symlink or
    /// non-directory found there instead (a listing's type is a hint) is refused and
    /// looked at by name.
    fn subdir(&mut self, dir: &OwnedFd, name: &CStr, path: &Path, depth: usize) -> Result<()> {
        let sub = match open_dir_at(dir, name) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                self.counts.vanished += 1;
                return Ok(());
            }
            Err(Errno::NOTDIR | Errno::LOOP) => {
                return self.file_by_name(dir, name, path, depth, false)
            }
            Err(e) => return Err(ContractError::io("open", child_path(path, name), e)),
        };
        let child = child_path(path, name);
        let st = fstat(&sub).map_err(|e| ContractError::io("fstat", &child, e))?;
        self.walk_subdir(&sub, &st, &child, depth)
    }

    /// Walk the open directory `sub`, then re-own it; unless it is on another filesystem.
    fn walk_subdir(&mut self, sub: &OwnedFd, st: &Stat, path: &Path, depth: usize) -> Result<()> {
        if st.st_dev != self.dev {
            self.counts.other_filesystem_skipped += 1;
            return Ok(());
        }
        self.dir(sub, st, path, depth + 1)?;
        fchown(sub, Some(self.uid), Some(self.gid))
            .map_err(|e| ContractError::io("fchown", path, e))?;
        self.counts.reowned += 1;
        Ok(())
    }

    /// A non-directory in a directory whose names cannot change under the walk (stable,
    /// see [`names_are_stable`], or taken, see [`Taken`]): the name that was `stat`ed is
    /// the inode re-owned. `may_enter`: a directory found under the name is walked; false
    /// when opening it as one has just failed, so the name changed meanwhile (only the
    /// runner can do that) and is counted as vanished rather than tried again.
    fn file_by_name(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        path: &Path,
        depth: usize,
        may_enter: bool,
    ) -> Result<()> {
        let st = match lstat_at(dir, name) {
            Ok(st) => st,
            Err(Errno::NOENT) => {
                self.counts.vanished += 1;
                return Ok(());
            }
            Err(e) => return Err(ContractError::io("lstat", child_path(path, name), e)),
        };
        match file_type(&st) {
            FileType::Symlink => self.counts.symlinks_skipped += 1,
            // Listed with an unknown type: open it as the directory it is.
            FileType::Directory if may_enter => return self.subdir(dir, name, path, depth),
            FileType::Directory => self.counts.vanished += 1,
            _ if st.st_dev != self.dev => self.counts.other_filesystem_skipped += 1,
            _ if self.foreign_hardlink(&st) => self.counts.hardlinks_skipped += 1,
            _ => {
                chownat(
                    dir,
                    name,
                    Some(self.uid),
                    Some(self.gid),
                    AtFlags::SYMLINK_NOFOLLOW,
                )
                .map_err(|e| ContractError::io("fchownat", child_path(path, name), e))?;
                self.counts.reowned += 1;
            }
        }
        Ok(())
    }

    /// A non-directory with another link, not already the Contract's: the other link may
    /// be outside the workspace.
    fn foreign_hardlink(&self, st: &Stat) -> bool {
        st.st_nlink > 1 && st.st_uid != self.uid.as_raw()
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

/// `check_git_at` for a workspace given by path. The workspace itself must not be a
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
