//! Deleting a Contract-owned tree without following symlinks and without crossing into
//! another filesystem. Names are resolved relative to directory fds with `O_NOFOLLOW`,
//! so a symlink swapped in mid-walk is unlinked as a link, never traversed.

use std::ffi::{CStr, CString, OsStr};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::fs::{fstat, unlinkat, AtFlags, FileType};
use rustix::io::Errno;
use serde::Serialize;

use crate::dirfd::{
    child_path, file_type, listing_buffer, lstat_at, open_dir_at, walker_count, Listing,
};

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
        may_split: true,
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
    /// Whether this walk may still share a directory's entries out among threads: only
    /// once per removal, at the first directory holding several subdirectories (a
    /// Contract's tree is one or two directories deep before it fans out).
    may_split: bool,
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
                Ok(listing) => self.children(&dir, &listing, &path, depth + 1),
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

impl Removal<'_> {
    /// Remove every entry of `listing` (the directory `dir` at `path`). The first time a
    /// directory holds several subdirectories, its entries are shared out among threads
    /// (see [`walker_count`]): each takes the next unclaimed entry and removes it whole,
    /// so every entry is removed by exactly one of them, and their failures are all
    /// reported.
    fn children(&mut self, dir: &OwnedFd, listing: &Listing, path: &Path, depth: usize) {
        let workers = if self.may_split {
            walker_count(listing.iter().map(|(_, kind)| kind))
        } else {
            1
        };
        if workers <= 1 {
            for (child, kind) in listing.iter() {
                self.entry(dir, child, kind, path, depth);
            }
            return;
        }
        self.may_split = false;
        let entries: Vec<(&CStr, FileType)> = listing.iter().collect();
        let next = AtomicUsize::new(0);
        let work = |removal: &mut Removal| {
            while let Some(&(child, kind)) = entries.get(next.fetch_add(1, Ordering::Relaxed)) {
                removal.entry(dir, child, kind, path, depth);
            }
        };
        let dev = self.dev;
        std::thread::scope(|scope| {
            // A helper that cannot be started only means fewer helpers.
            let helpers: Vec<_> = (1..workers)
                .filter_map(|_| {
                    std::thread::Builder::new()
                        .spawn_scoped(scope, || {
                            let mut out = Vec::new();
                            work(&mut Removal {
                                dev,
                                buf: listing_buffer(),
                                out: &mut out,
                                may_split: false,
                            });
                            out
                        })
                        .ok()
                })
                .collect();
            work(self);
            for helper in helpers {
                match helper.join() {
                    Ok(failures) => self.out.extend(failures),
                    Err(_) => self.out.push(RemovalFailure {
                        path: path.to_path_buf(),
                        error: "a removal thread panicked; what it had left is still there".into(),
                    }),
                }
            }
        });
    }
}
