//! Directory-file-descriptor primitives. Every walk of a Contract's tree goes through
//! these: the Contract owns (and may be concurrently rewriting) what is walked, so a name
//! is resolved exactly once, relative to a directory fd, with `O_NOFOLLOW`, and every
//! later operation acts on the fd it produced, never on the name again.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{openat, statat, AtFlags, Dir, FileType, Mode, OFlags, Stat, CWD};
use rustix::io::Errno;

/// Open an already-trusted directory (the workspace root, chosen by the operator).
pub(crate) fn open_trusted_dir(path: &Path) -> Result<OwnedFd, Errno> {
    openat(
        CWD,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Open `name` in `dir` as a directory, refusing a symlink (`ELOOP`) or non-directory
/// (`ENOTDIR`) in its place.
pub(crate) fn open_dir_at<Fd: AsFd>(dir: Fd, name: &OsStr) -> Result<OwnedFd, Errno> {
    openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// An `O_PATH` handle on `name` itself, never its symlink target: the thing we `fstat`
/// is the thing we later `fchownat(fd, "", AT_EMPTY_PATH)`, with no window between.
pub(crate) fn open_path_at<Fd: AsFd>(dir: Fd, name: &OsStr) -> Result<OwnedFd, Errno> {
    openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Re-open an `O_PATH` handle on a directory as a readable directory: `openat(fd, ".")`
/// reaches the same inode, so a rename of the name in between cannot redirect it.
pub(crate) fn reopen_dir(path_fd: &OwnedFd) -> Result<OwnedFd, Errno> {
    openat(
        path_fd,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

pub(crate) fn lstat_at<Fd: AsFd>(dir: Fd, name: &OsStr) -> Result<Stat, Errno> {
    statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
}

pub(crate) fn file_type(st: &Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

/// The names in `dir`, without `.` and `..`. Collected before anything is changed, so a
/// walk never reads a directory stream it is itself modifying.
pub(crate) fn list<Fd: AsFd>(dir: Fd) -> Result<Vec<OsString>, Errno> {
    let mut stream = Dir::read_from(dir)?;
    let mut names = Vec::new();
    while let Some(entry) = stream.read() {
        let entry = entry?;
        let bytes = entry.file_name().to_bytes();
        if bytes != b"." && bytes != b".." {
            names.push(OsStr::from_bytes(bytes).to_os_string());
        }
    }
    Ok(names)
}
