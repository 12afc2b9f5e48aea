//! Caged peers: a socket that another live cage of the same owner bound is reachable from
//! this cage, because its server runs caged too.
//!
//! Each window cage's supervisor appends a [`Line::Bound`] to the cage's record (under the
//! state home, which no cage can write) for every pathname socket it binds for the cage:
//! the socket file's device and inode, the socket's own inode and its `SO_COOKIE`. A
//! connect that neither the cage's own sockets nor the policy admit is then looked up
//! there. A record alone admits nothing: the kernel is asked (sock_diag, by the socket's
//! inode *and* cookie) whether that very socket still exists and is still bound to the
//! very file the caller's path resolved to. A live socket holds its file's inode, so the
//! inode number cannot pass to another file while it lives; a closed socket's cookie never
//! answers again. A host process that binds the same path later is refused, as is a host
//! socket renamed over the peer's.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::cage_record::{self, BoundSocket, Line, Opening, ProcessId};

/// The kernel's own identity of a socket file: (major, minor, inode).
pub(crate) type FileId = (u32, u32, u64);

/// The live cage that bound a socket, as its record says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binder {
    /// The record's file.
    pub record: PathBuf,
    /// What the cage is (window, repo, ...), if its first line could be read.
    pub opening: Option<Opening>,
    /// Its supervisor, once started.
    pub supervisor: Option<ProcessId>,
    /// The socket, as recorded.
    pub socket: BoundSocket,
}

impl Binder {
    /// "the cage of window W (repo R, supervisor pid P)", for `jaula explain`.
    pub fn describe(&self) -> String {
        let mut text = match self.opening.as_ref().and_then(|o| o.window.as_deref()) {
            Some(window) => format!("the cage of window {window}"),
            None => "a cage without a window name".to_owned(),
        };
        let mut parts = Vec::new();
        if let Some(opening) = &self.opening {
            parts.push(format!("repo {}", opening.repo.display()));
        }
        if let Some(supervisor) = &self.supervisor {
            parts.push(format!("supervisor pid {}", supervisor.pid));
        }
        if !parts.is_empty() {
            text.push_str(&format!(" ({})", parts.join(", ")));
        }
        text
    }
}

/// The cage among `records` that bound the socket file `file`, as far as `alive` confirms:
/// it is asked of each recorded socket on that file, newest first, and must say whether
/// that socket still exists and is bound to that file. Records of cages that have ended
/// are skipped. Pure, so the choice can be tested without a kernel.
pub(crate) fn find_binder(
    records: &[(PathBuf, Vec<Line>)],
    file: FileId,
    mut alive: impl FnMut(&BoundSocket) -> bool,
) -> Option<Binder> {
    for (path, lines) in records.iter().rev() {
        if lines.iter().any(|l| matches!(l, Line::Ended)) {
            continue;
        }
        let found = lines.iter().rev().find_map(|line| match line {
            Line::Bound(s) if (s.dev_major, s.dev_minor, s.ino) == file && alive(s) => Some(*s),
            _ => None,
        });
        if let Some(socket) = found {
            return Some(Binder {
                record: path.clone(),
                opening: lines.iter().find_map(|l| match l {
                    Line::Opened(o) => Some(o.clone()),
                    _ => None,
                }),
                supervisor: lines.iter().find_map(|l| match l {
                    Line::Supervisor(p) => Some(*p),
                    _ => None,
                }),
                socket,
            });
        }
    }
    None
}

/// Whether `socket` still exists (the same socket: its cookie) and is bound to the file it
/// was recorded with. Asked of the kernel through `diag`, in its network namespace.
pub(crate) fn still_bound(diag: BorrowedFd<'_>, socket: &BoundSocket) -> bool {
    let Ok(ino) = u32::try_from(socket.socket_ino) else {
        return false;
    };
    match super::sys::unix_socket_file(diag, ino, Some(socket.cookie)) {
        Ok(Some((dev, file_ino))) => {
            (dev >> 20, dev & 0xf_ffff, u64::from(file_ino))
                == (socket.dev_major, socket.dev_minor, socket.ino)
        }
        _ => false,
    }
}

/// The live cage recorded under `state_home` that bound the socket file `file`, confirmed
/// by the kernel through `diag`. Paid on every connect that would otherwise be refused,
/// so a record is parsed whole only when one of its `bound` lines names `file`: the
/// others are skipped on their text (an ended record, one without a `bound` line).
pub(crate) fn binder_of(diag: BorrowedFd<'_>, state_home: &Path, file: FileId) -> Option<Binder> {
    use rustix::fs::{Mode, OFlags};
    let live = state_home.join(cage_record::LIVE_DIR);
    // Each record is opened from the directory's descriptor: one path walk, not one a
    // record.
    let dir = rustix::fs::open(
        &live,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut names: Vec<std::ffi::CString> = rustix::fs::Dir::read_from(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.to_bytes().ends_with(b".jsonl"))
        .collect();
    // Newest first, as `find_binder` would take them.
    names.sort_unstable_by(|a, b| b.cmp(a));
    for name in names {
        let Ok(fd) = rustix::fs::openat(
            &dir,
            name.as_c_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let mut text = String::new();
        if std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut text).is_err() {
            continue;
        }
        if !names_file(&text, file) {
            continue;
        }
        let lines: Vec<Line> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let path = live.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
        if let Some(binder) = find_binder(&[(path, lines)], file, |s| still_bound(diag, s)) {
            return Some(binder);
        }
    }
    None
}

/// Whether a record's text, not ended, has a `bound` line on `file` (as `append` writes
/// them: one JSON value a line, `{"bound":...}` and `"ended"`).
fn names_file(text: &str, file: FileId) -> bool {
    if text.lines().any(|l| l == "\"ended\"") {
        return false;
    }
    text.lines()
        .filter(|l| l.starts_with("{\"bound\""))
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .any(|l| matches!(l, Line::Bound(s) if (s.dev_major, s.dev_minor, s.ino) == file))
}

/// For `jaula explain PATH --connect`: the live cage of this owner (recorded under
/// `state_home`) whose socket `path` is, after the same kernel check the supervisor
/// makes. `path` is followed through symlinks, as a connect would. Only sockets of this
/// process's network namespace can be confirmed. `Ok(None)` when `path` is no socket, or
/// no live cage bound it.
pub fn cage_that_bound(state_home: &Path, path: &Path) -> io::Result<Option<Binder>> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path)?;
    if !meta.file_type().is_socket() {
        return Ok(None);
    }
    let dev = meta.dev();
    let file = (libc::major(dev), libc::minor(dev), meta.ino());
    let diag = super::sys::open_sock_diag()?;
    Ok(binder_of(diag.as_fd(), state_home, file))
}

#[cfg(test)]
#[path = "peers_tests.rs"]
mod tests;
