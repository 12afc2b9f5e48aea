//! Directory-file-descriptor primitives. Every walk of a Contract's tree goes through
//! these: the Contract owns (and may be concurrently rewriting) what is walked, so a name
//! is resolved exactly once, relative to a directory fd, with `O_NOFOLLOW`, and every
//! later operation acts on the fd it produced, never on the name again.

use std::ffi::{CStr, OsStr, OsString};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{openat, statat, AtFlags, Dir, FileType, Mode, OFlags, RawDir, Stat, CWD};
use rustix::io::Errno;
use rustix::path::Arg;

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
pub(crate) fn open_dir_at<Fd: AsFd, P: Arg>(dir: Fd, name: P) -> Result<OwnedFd, Errno> {
    openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// An `O_PATH` handle on `name` itself, never its symlink target: the thing we `fstat`
/// is the thing we later `fchownat(fd, "", AT_EMPTY_PATH)`, with no window between.
pub(crate) fn open_path_at<Fd: AsFd, P: Arg>(dir: Fd, name: P) -> Result<OwnedFd, Errno> {
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

pub(crate) fn lstat_at<Fd: AsFd, P: Arg>(dir: Fd, name: P) -> Result<Stat, Errno> {
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

/// Bytes one `getdents64` call may fill. A name is at most 255 bytes, so any entry fits;
/// 32 KiB holds about a thousand typical entries, so most directories take one call plus
/// the one that says "no more", as in `chown -R` and `rm -rf`.
pub(crate) const LISTING_BUFFER: usize = 32 * 1024;

/// A buffer for [`RawDir`], reused across the directories of one walk so that listing
/// allocates nothing per entry (the names are read in place).
pub(crate) fn listing_buffer() -> Vec<MaybeUninit<u8>> {
    vec![MaybeUninit::uninit(); LISTING_BUFFER]
}

/// `.` or `..`, which every walk skips.
pub(crate) fn is_dot_or_dotdot(name: &CStr) -> bool {
    matches!(name.to_bytes(), b"." | b"..")
}

/// The path of `name` in the directory at `parent`, built only when an error or a report
/// needs it: a walk of 100,000 entries must not allocate a path per entry.
pub(crate) fn child_path(parent: &Path, name: &CStr) -> PathBuf {
    parent.join(OsStr::from_bytes(name.to_bytes()))
}

/// The names in `dir` (without `.` and `..`) with their listed types, collected before
/// anything is changed, in two allocations per directory rather than one per name. The
/// listed type (`d_type`, possibly `Unknown`) only picks the cheaper path: every decision
/// is made on a `stat` of the thing then acted on, or on an open that refuses the wrong
/// kind.
#[derive(Default)]
pub(crate) struct Listing {
    /// Every name, each followed by its NUL.
    bytes: Vec<u8>,
    /// Where each name ends (one past its NUL) in `bytes`, and its listed type.
    ends: Vec<(usize, FileType)>,
}

impl Listing {
    /// Read all of `dir`, reusing `buf` for the `getdents64` calls.
    pub(crate) fn read<Fd: AsFd>(dir: Fd, buf: &mut [MaybeUninit<u8>]) -> Result<Self, Errno> {
        let mut listing = Listing::default();
        let mut raw = RawDir::new(dir, buf);
        while let Some(entry) = raw.next() {
            let entry = entry?;
            let name = entry.file_name();
            if is_dot_or_dotdot(name) {
                continue;
            }
            listing.bytes.extend_from_slice(name.to_bytes_with_nul());
            listing.ends.push((listing.bytes.len(), entry.file_type()));
        }
        Ok(listing)
    }

    /// Each name with its listed type.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&CStr, FileType)> + '_ {
        let mut start = 0;
        self.ends.iter().filter_map(move |&(end, kind)| {
            let name = CStr::from_bytes_with_nul(&self.bytes[start..end]).ok();
            start = end;
            name.map(|n| (n, kind))
        })
    }
}

/// Most threads one walk (hand-over or removal) uses. Both are bound by system calls on
/// separate inodes in separate directories, so they scale with cores; past a few, the
/// shared locks and the cost of the threads win.
const MAX_WALKERS: usize = 4;

/// How many threads to share out a directory's entries among: one per subdirectory in
/// it, up to the cores there are and [`MAX_WALKERS`]. Files alone are few at the top of a
/// tree, and a thread costs more than it saves on them.
pub(crate) fn walker_count(kinds: impl Iterator<Item = FileType>) -> usize {
    let dirs = kinds.filter(|kind| *kind == FileType::Directory).count();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    dirs.min(cores).clamp(1, MAX_WALKERS)
}
