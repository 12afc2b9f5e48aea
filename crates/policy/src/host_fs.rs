//! The one interface through which a policy and its backends ask the host's filesystem
//! what is there: resolving a policy (which writable roots and channel tokens exist), the
//! bubblewrap renderer (what a mount would land on) and the Landlock planner (what each
//! directory along a sealed path holds). Behind a trait so that each of them stays a
//! function of (policy, answers) and a test can describe any host with a fake.
//!
//! Symlinks are resolved separately, by [`crate::paths::canonicalize_lenient`], while a
//! policy is resolved: the answers here are about paths already made canonical.

use std::ffi::OsString;
use std::io;
use std::path::Path;

/// The type of a filesystem entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A directory: a rule on it covers what lies beneath.
    Directory,
    /// A regular file.
    File,
    /// A symbolic link, not followed.
    Symlink,
    /// Devices, sockets, FIFOs: non-directories to every backend.
    Other,
}

/// What a policy or a backend may ask about the host's filesystem. Every question is
/// read-only.
pub trait HostFs {
    /// What `path` is, without following a final symlink (`lstat`); `None` when nothing
    /// is there.
    fn kind(&self, path: &Path) -> io::Result<Option<EntryKind>>;
    /// What `path` resolves to, following symlinks (`stat`), as a mount or an open would
    /// see it; `None` when nothing is there (a dangling link included).
    fn resolved_kind(&self, path: &Path) -> io::Result<Option<EntryKind>>;
    /// The entries directly inside `dir` (not `.` and `..`), in any order, each as
    /// `lstat` sees it (never the type of a symlink's target).
    fn list(&self, dir: &Path) -> io::Result<Vec<(OsString, EntryKind)>>;

    /// Whether `path` names something once symlinks are followed. A path that cannot be
    /// examined for any reason other than "it is not there" counts as existing, so a seal
    /// is still rendered for it and a backend that cannot apply it refuses to start.
    fn exists(&self, path: &Path) -> bool {
        !matches!(self.resolved_kind(path), Ok(None))
    }
    /// Whether `path` resolves to a directory.
    fn is_dir(&self, path: &Path) -> bool {
        matches!(self.resolved_kind(path), Ok(Some(EntryKind::Directory)))
    }
    /// Whether `path` resolves to a regular file.
    fn is_file(&self, path: &Path) -> bool {
        matches!(self.resolved_kind(path), Ok(Some(EntryKind::File)))
    }
    /// Whether `path` itself is a symbolic link (not followed).
    fn is_symlink(&self, path: &Path) -> bool {
        matches!(self.kind(path), Ok(Some(EntryKind::Symlink)))
    }
    /// Whether nothing, not even a dangling symlink, is at `path` (an entry that cannot be
    /// examined counts as absent, as `symlink_metadata(..).is_err()` does).
    fn is_absent(&self, path: &Path) -> bool {
        !matches!(self.kind(path), Ok(Some(_)))
    }
}

/// The host's own filesystem, asked through the kernel.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealHostFs;

impl HostFs for RealHostFs {
    fn kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        absent_as_none(std::fs::symlink_metadata(path).map(|m| kind_of(m.file_type())))
    }

    fn resolved_kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        absent_as_none(std::fs::metadata(path).map(|m| kind_of(m.file_type())))
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<(OsString, EntryKind)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            // `file_type` comes from `d_type` when the filesystem fills it and from `lstat`
            // otherwise: never from the symlink's target.
            out.push((entry.file_name(), kind_of(entry.file_type()?)));
        }
        Ok(out)
    }
}

fn kind_of(file_type: std::fs::FileType) -> EntryKind {
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Directory
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

/// ENOENT, or ENOTDIR (a component of the path is a file): nothing is at the path.
fn absent_as_none(answer: io::Result<EntryKind>) -> io::Result<Option<EntryKind>> {
    match answer {
        Ok(kind) => Ok(Some(kind)),
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(ENOTDIR) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// `ENOTDIR`: 20 on every kernel jaula builds for (Linux and macOS). Written out rather
/// than taken from libc so that the pure model depends on no system crate.
const ENOTDIR: i32 = 20;

#[cfg(test)]
#[path = "host_fs_tests.rs"]
mod tests;
