//! A window's own temporary directories: one pair per window under the state home,
//! created and opened without following a symlink. bubblewrap's view binds them on `/tmp`
//! and `/var/tmp` by descriptor; under Seatbelt the first is the command's `TMPDIR`
//! (`crate::seatbelt::cage_tmp_dir`). Their names are here, so neither backend takes them
//! from the other.
//!
//! Why not the host's `/tmp`: a read-only or writable bind of it leaves every pathname unix
//! socket in it reachable, because connect(2) needs no write access to the file system.
//! The owner's tmux server (`/tmp/tmux-UID/default`) then runs `tmux new-window CMD`
//! outside the cage, and X11 (`/tmp/.X11-unix/X0`) takes keystrokes for the desktop.
//!
//! Why a directory rather than an ephemeral tmpfs: the owner can find what a window left
//! (`<state home>/.runtime/tmp/<window>/tmp`) after it has gone.
//!
//! Why by descriptor (`--bind-fd`): the state home is writable by every window, caged or
//! not. A path checked here and bound later by bubblewrap could be swapped for a symlink
//! (to `~/.ssh`, say) in between, and the next cage would write through it. A descriptor
//! opened with `O_NOFOLLOW` at each step pins the directory that was checked.

// The descriptors are handed to bubblewrap by the Linux launch (`start`) alone.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// Where the per-window directories live, relative to the state home.
pub(crate) const PRIVATE_TMP_DIR: &str = ".runtime/tmp";
/// The directories inside one window's, bound on `/tmp` and `/var/tmp`.
pub(crate) const TMP_NAME: &str = "tmp";
/// The directory bound on `/var/tmp`.
pub(crate) const VAR_TMP_NAME: &str = "var-tmp";

/// One window's private temporary directories, open and ready to be inherited by
/// bubblewrap. Dropping it closes the descriptors.
#[derive(Debug)]
pub struct PrivateTmp {
    window_dir: PathBuf,
    tmp: OwnedFd,
    var_tmp: OwnedFd,
}

/// Why the private directories could not be made. Nothing is bound when this happens:
/// the caller refuses to start the cage rather than fall back to the host's `/tmp`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrivateTmpError {
    /// The window name cannot be one path component.
    #[error("window name {0:?} cannot name a directory (empty, '.', '..' or contains '/' or NUL)")]
    BadWindowName(String),
    /// The state home could not be opened as a directory.
    #[error("cannot open the state home {path}: {source}")]
    StateHome {
        /// The state home.
        path: PathBuf,
        /// What the kernel answered.
        source: Errno,
    },
    /// ELOOP or ENOTDIR here: a symlink or a file stood where a directory was expected
    /// (`O_NOFOLLOW | O_DIRECTORY` refuses a symlink to a directory with ENOTDIR).
    #[error("cannot create or open {path} without following a symlink: {source}")]
    Open {
        /// The directory.
        path: PathBuf,
        /// What the kernel answered.
        source: Errno,
    },
    /// A directory on the way is someone else's: another user could read or plant files
    /// in the window's `/tmp`.
    #[error("{path} is owned by uid {owner}, not by uid {me} who runs the cage")]
    NotOwned {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// The uid running the cage.
        me: u32,
    },
    /// The directory could not be made 0700.
    #[error("cannot make {path} private (mode 0700): {source}")]
    Chmod {
        /// The directory.
        path: PathBuf,
        /// What the kernel answered.
        source: Errno,
    },
    /// Clearing close-on-exec on the directory's descriptor failed.
    #[error("cannot keep the descriptor of {path} open for bubblewrap: {source}")]
    Inherit {
        /// The directory.
        path: PathBuf,
        /// What the kernel answered.
        source: Errno,
    },
}

impl PrivateTmp {
    /// Create (when missing, the state home too) and open
    /// `<state_home>/.runtime/tmp/<window>/{tmp,var-tmp}`,
    /// each component created mode 0700 and opened with `O_NOFOLLOW | O_DIRECTORY`
    /// relative to its parent's descriptor. The window's directory and the two inside it
    /// must belong to the caller and are set to 0700; the two descriptors are left open
    /// across exec for bubblewrap's `--bind-fd`.
    pub fn open(state_home: &Path, window: &str) -> Result<PrivateTmp, PrivateTmpError> {
        check_component(window)?;
        // The state home is the owner's own path (resolved by the policy), created like
        // the launcher would when a first window starts before anything else wrote there.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state_home)
            .map_err(|e| PrivateTmpError::StateHome {
                path: state_home.to_path_buf(),
                source: Errno::from_io_error(&e).unwrap_or(Errno::IO),
            })?;
        let home = rustix::fs::open(
            state_home,
            OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::RDONLY,
            Mode::empty(),
        )
        .map_err(|source| PrivateTmpError::StateHome {
            path: state_home.to_path_buf(),
            source,
        })?;
        let mut path = state_home.to_path_buf();
        let mut dir = home;
        for part in Path::new(PRIVATE_TMP_DIR).iter() {
            path.push(part);
            dir = make_and_open(&dir, part, &path)?;
        }
        path.push(window);
        let window_dir = path.clone();
        let win = make_and_open(&dir, OsStr::new(window), &path)?;
        make_private(&win, &path)?;
        let tmp = open_private_child(&win, &window_dir, TMP_NAME)?;
        let var_tmp = open_private_child(&win, &window_dir, VAR_TMP_NAME)?;
        Ok(PrivateTmp {
            window_dir,
            tmp,
            var_tmp,
        })
    }

    /// `<state_home>/.runtime/tmp/<window>`: where the owner finds what the window left.
    pub(crate) fn window_dir(&self) -> &Path {
        &self.window_dir
    }

    /// The descriptors to pass to [`crate::bwrap::BwrapOptions::private_tmp`].
    pub(crate) fn fds(&self) -> PrivateTmpFds {
        PrivateTmpFds {
            tmp: self.tmp.as_raw_fd(),
            var_tmp: self.var_tmp.as_raw_fd(),
        }
    }
}

/// The descriptors bubblewrap binds on `/tmp` and `/var/tmp` (`--bind-fd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PrivateTmpFds {
    /// The window's own `tmp`, bound on `/tmp`.
    pub(crate) tmp: RawFd,
    /// The window's own `var-tmp`, bound on `/var/tmp`.
    pub(crate) var_tmp: RawFd,
}

/// The window directory's name on disk for a window named `window`, or, when the caller
/// gave none, one derived from the repo path: `repo-<basename>-<16 hex digits of FNV-1a>`.
/// Stable across runs and versions (the hash is spelled out here, not `DefaultHasher`), so
/// the owner finds the same directory again; distinct for two repos with one basename.
pub fn window_dir_name(window: Option<&str>, repo: &Path) -> String {
    match window {
        Some(w) => sanitize_window(w),
        None => {
            let base = repo
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!(
                "repo-{}-{:016x}",
                sanitize_window(&base),
                fnv1a(repo.as_os_str().as_bytes())
            )
        }
    }
}

/// `[^A-Za-z0-9_-]` → `-`, one per character; empty → `window`. The one rule for a window
/// name on disk: the private /tmp here and the macOS profile file `jaula line` writes.
pub fn sanitize_window(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "window".to_string()
    } else {
        cleaned
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn check_component(name: &str) -> Result<(), PrivateTmpError> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(PrivateTmpError::BadWindowName(name.to_string()));
    }
    Ok(())
}

/// mkdirat (0700, EEXIST is fine), then open it without following a symlink.
fn make_and_open(parent: &OwnedFd, name: &OsStr, path: &Path) -> Result<OwnedFd, PrivateTmpError> {
    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(source) => {
            return Err(PrivateTmpError::Open {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    rustix::fs::openat(
        parent,
        name,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
        Mode::empty(),
    )
    .map_err(|source| PrivateTmpError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// Owned by the caller and mode 0700: another uid's directory here could have been made
/// to read what the cage writes, and a wider mode would let other users in.
fn make_private(dir: &OwnedFd, path: &Path) -> Result<(), PrivateTmpError> {
    let stat = rustix::fs::fstat(dir).map_err(|source| PrivateTmpError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let me = rustix::process::geteuid().as_raw();
    if stat.st_uid != me {
        return Err(PrivateTmpError::NotOwned {
            path: path.to_path_buf(),
            owner: stat.st_uid,
            me,
        });
    }
    if stat.st_mode & 0o7777 != 0o700 {
        rustix::fs::fchmod(dir, Mode::from_raw_mode(0o700)).map_err(|source| {
            PrivateTmpError::Chmod {
                path: path.to_path_buf(),
                source,
            }
        })?;
    }
    Ok(())
}

fn open_private_child(
    win: &OwnedFd,
    window_dir: &Path,
    name: &str,
) -> Result<OwnedFd, PrivateTmpError> {
    let path = window_dir.join(name);
    let fd = make_and_open(win, OsStr::new(name), &path)?;
    make_private(&fd, &path)?;
    // bubblewrap must inherit it; nothing else is spawned between here and its exec.
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::empty())
        .map_err(|source| PrivateTmpError::Inherit { path, source })?;
    Ok(fd)
}

#[cfg(test)]
#[path = "window_tmp_tests.rs"]
mod tests;
