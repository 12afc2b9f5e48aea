//! A caller's path, resolved by the supervisor as the kernel would resolve it for the
//! caller: one component at a time from pinned directories, so every answer rests on
//! descriptors the caller can no longer swap.
//!
//! The supervisor shares the caller's root, mounts, credentials and Landlock domain, so an
//! ordinary component resolves for it exactly as for the caller. Only procfs knows who is
//! asking: `/proc/self` and `/proc/thread-self` name the supervisor when it follows them,
//! and so do the magic links beneath a process directory (`/proc/self/fd/N`, reached
//! through `/dev/stderr` or `/dev/fd/N`). So `self` and `thread-self` at the procfs root are
//! read as the caller's own ids, an ordinary symlink is expanded here from its text, a
//! procfs link is followed by the kernel from the (caller's) directory that holds it, and
//! the supervisor's own process directory is never entered: it may open anything of its
//! own, which the caller must not reach through it.

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags};

/// The kernel's limit on symlinks followed in one lookup (`MAXSYMLINKS`).
const MAX_LINKS: u32 = 40;
/// `PROC_SUPER_MAGIC`.
const PROC_MAGIC: u64 = 0x9fa0;
/// The inode of the procfs root (`PROC_ROOT_INO`).
const PROC_ROOT_INO: u64 = 1;

/// Whose path this is: the thread that made the call.
#[derive(Debug)]
pub(super) struct Caller {
    tid: u32,
    /// Its process id, read from procfs only when a path names `/proc/self` (unless kept).
    tgid: std::cell::OnceCell<u32>,
    /// Its `/proc/<tid>` directory and umask, when the supervisor keeps them (`tasks`).
    kept: Option<(std::sync::Arc<OwnedFd>, libc::mode_t)>,
}

/// A path with every component but the last resolved: the last name is looked up in
/// `parent` by the operation itself (made, removed, opened, or followed).
#[derive(Debug)]
pub(super) struct Entry {
    pub(crate) parent: OwnedFd,
    /// One component, never empty; `.` when the path names `parent` itself (`/`, `a/..`).
    pub(crate) name: Vec<u8>,
    /// The path ended with a slash: the entry must be a directory.
    pub(crate) dir_only: bool,
    /// The entry's path as the kernel names `parent` (with `name` joined), once asked:
    /// the guard's checks each need it, and each reading costs a `readlink`.
    pub(crate) path: std::cell::OnceCell<std::path::PathBuf>,
    /// The identity (device, inode) of `parent`, once asked.
    pub(crate) parent_id: std::cell::OnceCell<Option<(u64, u64)>>,
}

impl Entry {
    pub(crate) fn new(parent: OwnedFd, name: Vec<u8>, dir_only: bool) -> Entry {
        Entry {
            parent,
            name,
            dir_only,
            path: std::cell::OnceCell::new(),
            parent_id: std::cell::OnceCell::new(),
        }
    }
}

/// The last component, looked up.
#[derive(Debug)]
pub(super) enum Target {
    /// Nothing by that name: `entry` is where it would be made.
    Missing(Entry),
    /// An `O_PATH` descriptor of what the name is (after following, if asked), and of the
    /// directory that holds it (`None` when a procfs link led to it).
    Found {
        file: OwnedFd,
        parent: Option<OwnedFd>,
    },
}

fn errno(e: rustix::io::Errno) -> i32 {
    e.raw_os_error()
}

fn open_path(dir: BorrowedFd<'_>, name: &[u8], flags: OFlags) -> Result<OwnedFd, i32> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::CLOEXEC | flags,
        Mode::empty(),
    )
    .map_err(errno)
}

fn root() -> Result<OwnedFd, i32> {
    open_path(rustix::fs::CWD, b"/", OFlags::DIRECTORY)
}

fn components(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.split(|b| *b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
}

fn on_procfs(fd: BorrowedFd<'_>) -> bool {
    rustix::fs::fstatfs(fd).is_ok_and(|s| s.f_type as u64 == PROC_MAGIC)
}

fn is_proc_root(fd: BorrowedFd<'_>) -> bool {
    on_procfs(fd) && rustix::fs::fstat(fd).is_ok_and(|s| s.st_ino == PROC_ROOT_INO)
}

/// The kind bits of an `O_PATH` descriptor's file.
pub(super) fn file_type(fd: BorrowedFd<'_>) -> Result<u32, i32> {
    rustix::fs::fstat(fd)
        .map(|s| s.st_mode & libc::S_IFMT)
        .map_err(errno)
}

impl Caller {
    pub(crate) fn new(tid: u32) -> Caller {
        Caller {
            tid,
            tgid: std::cell::OnceCell::new(),
            kept: None,
        }
    }

    /// A caller whose process id, `/proc/<tid>` directory and umask the supervisor keeps.
    pub(crate) fn kept(
        tid: u32,
        tgid: u32,
        dir: std::sync::Arc<OwnedFd>,
        umask: libc::mode_t,
    ) -> Caller {
        Caller {
            tid,
            tgid: std::cell::OnceCell::from(tgid),
            kept: Some((dir, umask)),
        }
    }

    /// The caller's working directory, as an `O_PATH` descriptor.
    pub(crate) fn cwd(&self) -> Result<OwnedFd, i32> {
        match &self.kept {
            Some((dir, _)) => open_path(dir.as_fd(), b"cwd", OFlags::DIRECTORY),
            None => open_path(
                rustix::fs::CWD,
                format!("/proc/{}/cwd", self.tid).as_bytes(),
                OFlags::DIRECTORY,
            ),
        }
    }

    /// The caller's umask: kept, or read from `/proc/<tid>/status`. When it cannot be read
    /// (the supervisor is out of descriptors or memory) the call fails with that errno
    /// rather than make a file more open than the caller asked.
    pub(crate) fn umask(&self) -> Result<libc::mode_t, i32> {
        if let Some((_, mask)) = self.kept {
            return Ok(mask);
        }
        let status = std::fs::read(format!("/proc/{}/status", self.tid))
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        super::tasks::parse_status(&status)
            .map(|(_, mask)| mask)
            .ok_or(libc::ESRCH)
    }

    pub(crate) fn tid(&self) -> u32 {
        self.tid
    }

    fn tgid(&self) -> Result<u32, i32> {
        if let Some(t) = self.tgid.get() {
            return Ok(*t);
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.tid))
            .map_err(|e| e.raw_os_error().unwrap_or(libc::ESRCH))?;
        let tgid = status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or(libc::ESRCH)?;
        Ok(*self.tgid.get_or_init(|| tgid))
    }

    /// Resolve all of `path` but its last component, starting from `start` (the caller's
    /// working directory or `*at` descriptor; ignored for an absolute path).
    pub(crate) fn locate(&self, start: OwnedFd, path: &[u8]) -> Result<Entry, i32> {
        let mut links = 0;
        self.locate_counted(start, path, &mut links)
    }

    fn locate_counted(&self, start: OwnedFd, path: &[u8], links: &mut u32) -> Result<Entry, i32> {
        if path.is_empty() {
            return Err(libc::ENOENT);
        }
        let mut dir = if path[0] == b'/' { root()? } else { start };
        let dir_only = path.ends_with(b"/") || path.ends_with(b"/.") || path == b".";
        let mut queue: VecDeque<Vec<u8>> = components(path).map(<[u8]>::to_vec).collect();
        loop {
            let Some(name) = queue.pop_front() else {
                return Ok(Entry::new(dir, b".".to_vec(), true));
            };
            if let Some(alias) = self.proc_alias(dir.as_fd(), &name)? {
                for (i, part) in alias.into_iter().enumerate() {
                    queue.insert(i, part);
                }
                continue;
            }
            if queue.is_empty() && name != b".." {
                return Ok(Entry::new(dir, name, dir_only));
            }
            dir = self.step(dir, &name, links, &mut queue)?;
        }
    }

    /// Enter directory `name` of `dir`; a symlink's components are put in front of
    /// `queue` (and `dir` returned unchanged, or `/` for an absolute target).
    fn step(
        &self,
        dir: OwnedFd,
        name: &[u8],
        links: &mut u32,
        queue: &mut VecDeque<Vec<u8>>,
    ) -> Result<OwnedFd, i32> {
        match open_path(dir.as_fd(), name, OFlags::DIRECTORY | OFlags::NOFOLLOW) {
            Ok(next) => {
                self.refuse_own_process(next.as_fd(), dir.as_fd(), name)?;
                Ok(next)
            }
            Err(libc::ENOTDIR) => {
                let link = open_path(dir.as_fd(), name, OFlags::NOFOLLOW)?;
                if file_type(link.as_fd())? != libc::S_IFLNK {
                    return Err(libc::ENOTDIR);
                }
                *links += 1;
                if *links > MAX_LINKS {
                    return Err(libc::ELOOP);
                }
                if on_procfs(dir.as_fd()) {
                    // A procfs link (`fd/N`, `cwd`, `root`, `net`) in a directory of the
                    // caller's (or shared) procfs: the kernel follows it as for the caller.
                    return open_path(dir.as_fd(), name, OFlags::DIRECTORY);
                }
                let text = read_link(link.as_fd())?;
                let dir = if text.first() == Some(&b'/') {
                    root()?
                } else {
                    dir
                };
                for (i, part) in components(&text).enumerate() {
                    queue.insert(i, part.to_vec());
                }
                Ok(dir)
            }
            Err(e) => Err(e),
        }
    }

    /// `self` and `thread-self` at the procfs root, as the caller's own directories.
    fn proc_alias(&self, dir: BorrowedFd<'_>, name: &[u8]) -> Result<Option<Vec<Vec<u8>>>, i32> {
        if name != b"self" && name != b"thread-self" {
            return Ok(None);
        }
        if !is_proc_root(dir) {
            return Ok(None);
        }
        let tgid = self.tgid()?.to_string().into_bytes();
        Ok(Some(if name == b"self" {
            vec![tgid]
        } else {
            vec![tgid, b"task".to_vec(), self.tid.to_string().into_bytes()]
        }))
    }

    /// The supervisor's own `/proc/<pid>` (by any of its thread ids) is refused: the
    /// kernel lets a process reach all of its own files there, and the caller must not
    /// reach them through it.
    fn refuse_own_process(
        &self,
        entered: BorrowedFd<'_>,
        from: BorrowedFd<'_>,
        name: &[u8],
    ) -> Result<(), i32> {
        if !name.iter().all(u8::is_ascii_digit) || !is_proc_root(from) {
            return Ok(());
        }
        let status = rustix::fs::openat(
            entered,
            "status",
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(status), &mut text)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EACCES))?;
        let tgid = String::from_utf8_lossy(&text)
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:").map(|v| v.trim().to_owned()));
        if tgid.as_deref() == Some(&std::process::id().to_string()) {
            return Err(libc::EACCES);
        }
        Ok(())
    }

    /// Look `entry`'s name up. With `follow`, a symlink is followed (its target looked up
    /// in turn, up to the kernel's limit); without, the symlink itself is the target.
    pub(crate) fn lookup(&self, entry: Entry, follow: bool) -> Result<Target, i32> {
        let mut links = 0;
        let mut entry = entry;
        loop {
            if let Some(alias) = self.proc_alias(entry.parent.as_fd(), &entry.name)? {
                let path = alias.join(&b'/');
                entry = self.locate_counted(entry.parent, &path, &mut links)?;
                continue;
            }
            let file = match open_path(entry.parent.as_fd(), &entry.name, OFlags::NOFOLLOW) {
                Ok(f) => f,
                Err(libc::ENOENT) => return Ok(Target::Missing(entry)),
                Err(e) => return Err(e),
            };
            let kind = file_type(file.as_fd())?;
            if kind == libc::S_IFDIR && entry.name != b"." && entry.name != b".." {
                self.refuse_own_process(file.as_fd(), entry.parent.as_fd(), &entry.name)?;
            }
            if kind != libc::S_IFLNK || !(follow || entry.dir_only) {
                if entry.dir_only && kind != libc::S_IFDIR && kind != libc::S_IFLNK {
                    return Err(libc::ENOTDIR);
                }
                return Ok(Target::Found {
                    file,
                    parent: Some(entry.parent),
                });
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(libc::ELOOP);
            }
            if on_procfs(entry.parent.as_fd()) {
                let file = open_path(entry.parent.as_fd(), &entry.name, OFlags::empty())?;
                return Ok(Target::Found { file, parent: None });
            }
            let text = read_link(file.as_fd())?;
            let dir_only = entry.dir_only;
            entry = self.locate_counted(entry.parent, &text, &mut links)?;
            entry.dir_only |= dir_only;
        }
    }
}

/// The text of the symlink `link` (an `O_PATH | O_NOFOLLOW` descriptor).
fn read_link(link: BorrowedFd<'_>) -> Result<Vec<u8>, i32> {
    rustix::fs::readlinkat(link, "", Vec::new())
        .map(|c| c.into_bytes())
        .map_err(errno)
}

#[cfg(test)]
#[path = "caller_path_tests.rs"]
mod tests;
