//! What the renderer asks the filesystem, behind a trait so rendering stays a pure
//! function of (policy, answers) and unit tests can describe any host.

use std::io;
use std::path::Path;

/// The two questions the renderer asks about a path.
pub trait Disk {
    /// Whether `path` names something, as bubblewrap's own `stat(2)` will see it: symlinks
    /// are followed, so a dangling link does not exist. bubblewrap's `-try` binds skip a
    /// source that does not resolve, and its mounts land on the target a link names, so
    /// this is the answer that predicts what bubblewrap does.
    fn exists(&self, path: &Path) -> bool;
    /// Whether `path` resolves to a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Whether `path` itself is a symbolic link (not followed). bubblewrap cannot mount
    /// onto one whose absolute target lies outside the new root's view of it, so a
    /// protected link (a dotfiles `~/.config/nvim`) is left to the planting report.
    fn is_symlink(&self, _path: &Path) -> bool {
        false
    }
}

/// The real filesystem.
///
/// A path that cannot be examined for any reason other than "it is not there" counts as
/// existing: a seal is then rendered, and if bubblewrap cannot mount it either, the cage
/// refuses to start instead of starting without it.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealDisk;

impl Disk for RealDisk {
    fn exists(&self, path: &Path) -> bool {
        match std::fs::metadata(path) {
            Ok(_) => true,
            Err(e) => !is_absent(&e),
        }
    }

    fn is_dir(&self, path: &Path) -> bool {
        std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false)
    }

    fn is_symlink(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false)
    }
}

/// ENOENT, or ENOTDIR (a component of the path is a file): nothing is at the path.
fn is_absent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}
