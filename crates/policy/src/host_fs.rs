//! The one interface through which a policy and its backends ask the host's filesystem
//! what is there: resolving a policy (which writable roots and channel tokens exist), the
//! bubblewrap renderer (what a mount would land on) and the Landlock planner (what each
//! directory along a sealed path holds). Behind a trait so that each of them stays a
//! function of (policy, answers) and a test can describe any host with a fake.
//!
//! Resolution reads through it too: symlinks ([`HostFs::read_link`], walked by
//! [`crate::paths::canonicalize_lenient_on`]), the config file and the repo's git pointer
//! files ([`HostFs::read`]). Only [`RealHostFs`] asks the kernel.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

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

    /// The names directly inside `dir`, in any order; an entry that cannot be read is
    /// skipped, as iterating `read_dir` with `filter_map(Result::ok)` skips it.
    fn names(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        Ok(self.list(dir)?.into_iter().map(|(name, _)| name).collect())
    }
    /// A symlink's target as written (`readlink`). Anything else fails as the kernel
    /// fails it: `InvalidInput` (`EINVAL`) for an entry that is not a link, `NotFound` for
    /// nothing there; the resolver tells "exists" from "absent" by that difference.
    /// The default answers from [`kind`](Self::kind), for a host that describes no links.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        match self.kind(path)? {
            None => Err(io::ErrorKind::NotFound.into()),
            Some(EntryKind::Symlink) => Err(io::Error::other("this host names no link targets")),
            Some(_) => Err(io::ErrorKind::InvalidInput.into()),
        }
    }
    /// `path` made absolute and free of symlinks, failing where a component is absent or
    /// not a directory (`realpath`). The default walks [`read_link`](Self::read_link)'s
    /// answers exactly as glibc does; a relative path fails, since no working directory
    /// is asked of a host.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        if !path.is_absolute() {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        crate::host_fs::resolve::realpath(path, self)
    }
    /// The bytes of the file at `path`, following symlinks. The default is for a host
    /// that describes no contents: `NotFound` where nothing is, an error otherwise.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.resolved_kind(path)? {
            None => Err(io::ErrorKind::NotFound.into()),
            Some(_) => Err(io::Error::other("this host describes no file contents")),
        }
    }
    /// [`read`](Self::read) as UTF-8 text; other bytes fail with `InvalidData`, as
    /// `std::fs::read_to_string` fails.
    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        String::from_utf8(self.read(path)?).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
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

    fn names(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        Ok(std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .collect())
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::read_link(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
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

/// How a path resolves on a host (symlinks followed as the kernel does), asked of a
/// [`HostFs`]: the policy's and the planting guard's resolver.
pub(crate) mod resolve;

#[cfg(test)]
#[path = "host_fs_tests.rs"]
mod tests;
