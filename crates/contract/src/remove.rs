//! Deleting a Contract-owned tree without following symlinks and without crossing into
//! another filesystem. Names are resolved relative to directory fds with `O_NOFOLLOW`,
//! so a symlink swapped in mid-walk is unlinked as a link, never traversed.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{unlinkat, AtFlags, FileType};
use rustix::io::Errno;
use serde::Serialize;

use crate::dirfd::{file_type, list, lstat_at, open_dir_at};

const MAX_DEPTH: usize = 512;

/// One entry a removal could not delete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RemovalFailure {
    /// The entry.
    pub path: PathBuf,
    /// The kernel's answer (EPERM for an immutable file, EBUSY for a mount point, ...).
    pub error: String,
}

fn fail(out: &mut Vec<RemovalFailure>, path: &Path, e: Errno) {
    out.push(RemovalFailure {
        path: path.to_path_buf(),
        error: std::io::Error::from(e).to_string(),
    });
}

/// Remove `name` in `parent` (at `path`) and everything under it. Failures are collected
/// and the walk goes on, so one stuck file does not leave the rest of the tree behind;
/// whether the top is really gone is for the caller to check afterwards.
pub(crate) fn remove_tree(
    parent: &OwnedFd,
    name: &OsStr,
    path: &Path,
    out: &mut Vec<RemovalFailure>,
) {
    let st = match lstat_at(parent, name) {
        Ok(st) => st,
        Err(Errno::NOENT) => return,
        Err(e) => return fail(out, path, e),
    };
    remove_entry(parent, name, path, st.st_dev, out, 0);
}

fn remove_entry(
    parent: &OwnedFd,
    name: &OsStr,
    path: &Path,
    dev: u64,
    out: &mut Vec<RemovalFailure>,
    depth: usize,
) {
    // Unlink first: most entries are not directories, and `unlinkat` without REMOVEDIR
    // never follows a symlink and never removes a directory (Linux answers EISDIR), so a
    // file costs one system call, as in `rm -rf`, with nothing to race.
    match unlinkat(parent, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => return,
        Err(Errno::ISDIR) => {}
        Err(e) => return fail(out, path, e),
    }
    let st = match lstat_at(parent, name) {
        Ok(st) => st,
        Err(Errno::NOENT) => return,
        Err(e) => return fail(out, path, e),
    };
    if file_type(&st) != FileType::Directory {
        // Swapped for a non-directory since the unlink: unlink that, once.
        match unlinkat(parent, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => fail(out, path, e),
        }
        return;
    }
    // A mount inside the tree (st_dev differs) is not descended into: its contents are
    // not the Contract's to lose, and rmdir of the mount point then fails with EBUSY,
    // which is reported rather than hidden.
    if st.st_dev == dev {
        if depth >= MAX_DEPTH {
            return fail(out, path, Errno::LOOP);
        }
        match open_dir_at(parent, name) {
            Ok(dir) => match list(&dir) {
                Ok(names) => {
                    for child in names {
                        let child_path = path.join(&child);
                        remove_entry(&dir, &child, &child_path, dev, out, depth + 1);
                    }
                }
                Err(e) => fail(out, path, e),
            },
            Err(Errno::NOENT) => return,
            Err(e) => return fail(out, path, e),
        }
    }
    match unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => fail(out, path, e),
    }
}
