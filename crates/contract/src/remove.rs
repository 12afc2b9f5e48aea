//! Deleting a Contract-owned tree without following symlinks and without crossing into
//! another filesystem. Names are resolved relative to directory fds with `O_NOFOLLOW`,
//! so a symlink swapped in mid-walk is unlinked as a link, never traversed.

use std::ffi::{CStr, CString, OsStr};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{fstat, unlinkat, AtFlags, FileType};
use rustix::io::Errno;
use serde::Serialize;

use crate::fsat::{child_path, file_type, listing_buffer, lstat_at, open_dir_at, Listing};

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
    let Ok(name) = CString::new(name.as_bytes()) else {
        return fail(out, path, Errno::INVAL);
    };
    let mut removal = Removal {
        dev: st.st_dev,
        buf: listing_buffer(),
        out,
    };
    let parent_path = path.parent().unwrap_or(path);
    removal.entry(parent, &name, file_type(&st), parent_path, 0);
}

/// One removal walk: the filesystem it stays on, the one listing buffer every directory
/// reuses (each listing is collected whole before its entries are removed), and the
/// failures so far.
struct Removal<'a> {
    dev: u64,
    buf: Vec<MaybeUninit<u8>>,
    out: &'a mut Vec<RemovalFailure>,
}

impl Removal<'_> {
    /// Remove `name` in `parent` (the directory at `parent_path`); `listed` is the type the
    /// listing gave, a hint for which system call to try first.
    fn entry(
        &mut self,
        parent: &OwnedFd,
        name: &CStr,
        listed: FileType,
        parent_path: &Path,
        depth: usize,
    ) {
        // Unlink first unless it was listed as a directory: `unlinkat` without REMOVEDIR
        // never follows a symlink and never removes a directory (Linux answers EISDIR), so
        // a file costs one system call, as in `rm -rf`, with nothing to race.
        if listed != FileType::Directory {
            match unlinkat(parent, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => return,
                Err(Errno::ISDIR) => {}
                Err(e) => return fail(self.out, &child_path(parent_path, name), e),
            }
        }
        // `O_DIRECTORY | O_NOFOLLOW`: a symlink or file swapped in since is refused here,
        // never entered.
        let dir = match open_dir_at(parent, name) {
            Ok(dir) => dir,
            Err(Errno::NOENT) => return,
            Err(Errno::NOTDIR | Errno::LOOP) => {
                // Swapped for a non-directory since the listing: unlink that, once.
                match unlinkat(parent, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => {}
                    Err(e) => fail(self.out, &child_path(parent_path, name), e),
                }
                return;
            }
            Err(e) => return fail(self.out, &child_path(parent_path, name), e),
        };
        let path = child_path(parent_path, name);
        match fstat(&dir) {
            // A mount inside the tree (st_dev differs) is not descended into: its
            // contents are not the Contract's to lose, and rmdir of the mount point then
            // fails with EBUSY, which is reported rather than hidden.
            Ok(st) if st.st_dev != self.dev => {}
            Ok(_) if depth >= MAX_DEPTH => return fail(self.out, &path, Errno::LOOP),
            Ok(_) => match Listing::read(&dir, &mut self.buf) {
                Ok(listing) => {
                    for (child, kind) in listing.iter() {
                        self.entry(&dir, child, kind, &path, depth + 1);
                    }
                }
                Err(e) => fail(self.out, &path, e),
            },
            Err(e) => return fail(self.out, &path, e),
        }
        drop(dir);
        match unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => fail(self.out, &path, e),
        }
    }
}
