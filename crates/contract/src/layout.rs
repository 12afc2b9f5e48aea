//! The directories above the Contracts' trees: the workspace root, the state directory and
//! every missing parent of either, created with modes that let each Contract uid reach its
//! own tree and nothing else. With the defaults:
//!
//! ```text
//! /var/lib/jaula/              0711, the runner's: any parent jaula creates (search, no listing)
//! /var/lib/jaula/contracts/    0711, the runner's: the workspace root (search, no listing)
//! /var/lib/jaula/contracts/C/  0700, C's uid: C's tree (see crate::isolation)
//! /var/lib/jaula/state/        0700, the runner's: uid map, lock, evidence log
//! ```
//!
//! Every mode is set on the new directory itself after `mkdir`, not left to the umask: a
//! root shell with umask 077 would otherwise make the parents 0700 and lock every tenant
//! out of its own tree. Directories that already exist are the operator's and are left as
//! they are (the reachability check names one that blocks), except the 0700 parents an
//! older jaula made (`repair_legacy_parents`).

use std::ffi::OsStr;
use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

/// Parents jaula creates: every uid may pass through them, none may list them.
pub const PARENT_MODE: u32 = 0o711;

/// What an older jaula left on the state directory's missing parents: it created them
/// with the state directory's own mode.
const LEGACY_MODE: u32 = 0o700;

/// Create `path` with `mode` and each missing parent with [`PARENT_MODE`], each set
/// explicitly on the directory just made. An existing `path` is left as it is, and so is
/// one another process creates in between (it set its own mode the same way).
pub(crate) fn create_dirs(path: &Path, mode: u32) -> io::Result<()> {
    let mut missing = Vec::new();
    for dir in path.ancestors() {
        match std::fs::symlink_metadata(dir) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(dir),
            Err(e) => return Err(e),
        }
    }
    for dir in missing.into_iter().rev() {
        let dir_mode = if dir == path { mode } else { PARENT_MODE };
        match DirBuilder::new().mode(dir_mode).create(dir) {
            Ok(()) => set_mode(dir, dir_mode)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Set `mode` on the directory at `path` through a descriptor opened without following a
/// symlink in its last component, so a name swapped in between is refused, not chmodded.
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW;
    let dir = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    // fchmod(2), on the directory just opened.
    dir.set_permissions(Permissions::from_mode(mode))
}

/// The parents an older jaula created 0700 and which hold nothing but jaula's own layout,
/// opened to [`PARENT_MODE`]; returns what was changed.
///
/// Before this module, the state directory was created with `mkdir -p` semantics at mode
/// 0700, and its missing parents with it: with the defaults, `/var/lib/jaula` became 0700
/// and no Contract uid could reach `/var/lib/jaula/contracts` again. Such a directory is
/// recognised by all of: it is the workspace root's parent and the state directory's
/// (or, going up, a parent whose only entry is the one below it), it is a real directory
/// owned by the runner, its mode is exactly 0700, and it holds nothing but those entries.
/// Only the search bits are added, so what it holds stays unlisted; any other closed
/// directory is the operator's to open, and the reachability check names it with the fix.
pub(crate) fn repair_legacy_parents(
    root: &Path,
    state_dir: &Path,
    runner_uid: u32,
) -> io::Result<Vec<PathBuf>> {
    let mut repaired = Vec::new();
    let (Some(parent), Some(state_parent)) = (root.parent(), state_dir.parent()) else {
        return Ok(repaired);
    };
    // Path equality is by component.
    if parent != state_parent {
        return Ok(repaired);
    }
    let mut expected: Vec<&OsStr> = [root.file_name(), state_dir.file_name()]
        .into_iter()
        .flatten()
        .collect();
    let mut dir = parent;
    while is_legacy_parent(dir, runner_uid, &expected)? {
        set_mode(dir, PARENT_MODE)?;
        repaired.push(dir.to_path_buf());
        let (Some(up), Some(name)) = (dir.parent(), dir.file_name()) else {
            break;
        };
        expected = vec![name];
        dir = up;
    }
    Ok(repaired)
}

fn is_legacy_parent(dir: &Path, runner_uid: u32, expected: &[&OsStr]) -> io::Result<bool> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() || meta.uid() != runner_uid || meta.mode() & 0o7777 != LEGACY_MODE {
        return Ok(false);
    }
    let mut any = false;
    for entry in std::fs::read_dir(dir)? {
        if !expected.contains(&entry?.file_name().as_os_str()) {
            return Ok(false);
        }
        any = true;
    }
    Ok(any)
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
