//! Before caging: create the absent writable roots the policy marks `created_at_launch`
//! (`~/.npm`, `~/.cargo`, `~/.cache`, the state home, ...).
//!
//! Neither Linux backend can grant a path that does not exist (bubblewrap's `--bind-try`
//! skips it, a Landlock rule needs an open descriptor), and the home is read-only in the
//! cage, so on a fresh account a tool's first `mkdir ~/.npm` would fail. Creating the root
//! from outside, as the caller, before the cage is built, makes both backends grant it.
//!
//! Each missing directory is made one component at a time beneath the home, mode 0700
//! (the most private mode any tool would choose; tools never need these shared), and an
//! existing component must be a real directory: a symlink found on the way (planted since
//! the policy was resolved) stops that root, so nothing is ever created outside the home.
//! Only when the home belongs to the caller: root running a cage for another account's
//! home would otherwise leave root-owned directories that account's own tools cannot use.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use jaula_policy::{EntryKind, HostFs, Policy};

/// Why an absent root was not created. The run goes on: writes beneath it are refused, as
/// they were before jaula created anything.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AbsentRootError {
    /// The home belongs to another uid (root caging another account): directories made
    /// now would be root's, and that account's own tools could not use them.
    #[error(
        "not creating {}: the home {} belongs to uid {owner}, not to this process's uid {uid}",
        .root.display(), .home.display()
    )]
    HomeNotOwned {
        /// The root left absent.
        root: PathBuf,
        /// The home it lies beneath.
        home: PathBuf,
        /// The home's owner.
        owner: u32,
        /// This process's effective uid.
        uid: u32,
    },
    /// A component on the way is not a real directory (a file, or a symlink planted since
    /// the policy was resolved), so nothing is made through it.
    #[error("not creating {}: {} exists and is not a directory", .root.display(), .entry.display())]
    NotADirectory {
        /// The root left absent.
        root: PathBuf,
        /// The component that is not a directory.
        entry: PathBuf,
    },
    /// `mkdir` (or reading the home's metadata) failed.
    #[error("cannot create {}: {source}", .path.display())]
    Create {
        /// The directory that could not be made, or the home when its owner could not be
        /// read.
        path: PathBuf,
        /// The error the kernel gave.
        source: std::io::Error,
    },
}

/// What was done: the directories made (in order) and the roots left absent.
#[derive(Debug, Default)]
pub struct Created {
    /// Each directory made, parents before children.
    pub made: Vec<PathBuf>,
    /// One entry per root that is still absent, with the reason.
    pub failed: Vec<AbsentRootError>,
}

/// Create every root of `policy.roots_to_create()` that is still missing.
pub fn create_absent_roots(policy: &Policy) -> Created {
    let mut created = Created::default();
    let home = policy.home();
    let uid = rustix::process::geteuid().as_raw();
    for root in policy.roots_to_create() {
        let owner = match std::fs::metadata(home) {
            Ok(meta) => meta.uid(),
            Err(source) => {
                created.failed.push(AbsentRootError::Create {
                    path: home.to_path_buf(),
                    source,
                });
                continue;
            }
        };
        if owner != uid {
            created.failed.push(AbsentRootError::HomeNotOwned {
                root: root.path.clone(),
                home: home.to_path_buf(),
                owner,
                uid,
            });
            continue;
        }
        if let Err(e) = create_beneath(home, &root.path, &mut created.made) {
            created.failed.push(e);
        }
    }
    created
}

/// Make `root` and its missing ancestors below `home`, never following a symlink.
fn create_beneath(
    home: &Path,
    root: &Path,
    made: &mut Vec<PathBuf>,
) -> Result<(), AbsentRootError> {
    let Ok(rest) = root.strip_prefix(home) else {
        return Ok(()); // the policy only marks roots beneath the home
    };
    let mut path = home.to_path_buf();
    for component in rest.components() {
        let Component::Normal(name) = component else {
            return Ok(()); // canonical paths hold no `..`; nothing to make otherwise
        };
        path.push(name);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_dir() => continue,
            Ok(_) => {
                return Err(AbsentRootError::NotADirectory {
                    root: root.to_path_buf(),
                    entry: path,
                })
            }
            Err(_) => {}
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => made.push(path.clone()),
            // Made by someone else meanwhile: acceptable only if it is a real directory.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let is_dir = std::fs::symlink_metadata(&path)
                    .map(|m| m.file_type().is_dir())
                    .unwrap_or(false);
                if !is_dir {
                    return Err(AbsentRootError::NotADirectory {
                        root: root.to_path_buf(),
                        entry: path,
                    });
                }
            }
            Err(source) => return Err(AbsentRootError::Create { path, source }),
        }
    }
    Ok(())
}

/// The disk as `jaula run` will see it once it has created the policy's absent roots:
/// the real one, plus each root to create (and its missing ancestors below the home) as an
/// empty directory. `jaula explain` renders both backends against this, so its answer for
/// `~/.cache/pip/x` on a fresh account is what the run will do, not what the disk says now.
pub struct AfterCreation<'a, D> {
    real: D,
    planned: Vec<PathBuf>,
    _policy: std::marker::PhantomData<&'a Policy>,
}

impl<'a, D> AfterCreation<'a, D> {
    /// The view of `real` once every root `policy` creates at launch exists.
    pub fn new(policy: &'a Policy, real: D) -> Self {
        let home = policy.home();
        let mut planned = Vec::new();
        for root in policy.roots_to_create() {
            for dir in root.path.ancestors() {
                if dir == home || !dir.starts_with(home) {
                    break;
                }
                if !planned.iter().any(|p: &PathBuf| p == dir) {
                    planned.push(dir.to_path_buf());
                }
            }
        }
        AfterCreation {
            real,
            planned,
            _policy: std::marker::PhantomData,
        }
    }

    fn is_planned(&self, path: &Path) -> bool {
        self.planned.iter().any(|p| p == path)
    }
}

impl<D: HostFs> HostFs for AfterCreation<'_, D> {
    fn kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        match self.real.kind(path)? {
            None if self.is_planned(path) => Ok(Some(EntryKind::Directory)),
            other => Ok(other),
        }
    }
    fn resolved_kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        match self.real.resolved_kind(path)? {
            None if self.is_planned(path) => Ok(Some(EntryKind::Directory)),
            other => Ok(other),
        }
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(OsString, EntryKind)>> {
        let mut entries = if self.real.kind(dir)?.is_some() {
            self.real.list(dir)?
        } else {
            Vec::new()
        };
        for p in &self.planned {
            if p.parent() == Some(dir) {
                if let Some(name) = p.file_name() {
                    if !entries.iter().any(|(n, _)| n == name) {
                        entries.push((name.to_os_string(), EntryKind::Directory));
                    }
                }
            }
        }
        Ok(entries)
    }
}

#[cfg(test)]
#[path = "absent_roots_tests.rs"]
mod tests;
