//! The planting guard's half of the gate: the calls that write, make or remove a named
//! file, performed by the supervisor on the caller's behalf.
//!
//! Native Landlock grants by directory: inside a writable repository it cannot deny
//! `.git/config`, a new `.git/hooks/pre-commit` or a new `.envrc`, and the bwrap view
//! cannot keep an absent protected path from being created. The supervisor can. It
//! resolves the caller's path one component at a time ([`Caller`]), asks
//! `Policy::decide` about the file that was actually found (or the name that would be
//! made), and refuses with `EACCES` when the answer is `Rule::Protected`; otherwise it
//! makes the call itself from the pinned directory, so nothing the caller changes after
//! the check is what gets written. An opened file is handed to the caller with
//! `SECCOMP_IOCTL_NOTIF_ADDFD`. Landlock's own rules still apply: the supervisor is in the
//! cage's domain, except that it has each write-split directory whole (the command keeps
//! the split in a nested domain: `Plan::gate_split`); beneath those the guard refuses
//! whatever `decide` denies, not only protected paths, and never moves or removes one.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use jaula_policy::{Access, Policy, Rule};
use rustix::fs::{AtFlags, Mode, OFlags};

use super::caller_path::{file_type, Caller, Entry, Target};
use super::git_dirs::{self, Made, Plan};
use super::sys;
use super::write_refusals::{self, WriteRule};

/// A notified call on a path, decoded from its registers. Pointers are the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FileCall {
    Open {
        dir: i32,
        path: u64,
        flags: i32,
        mode: u32,
    },
    MakeDir {
        dir: i32,
        path: u64,
        mode: u32,
    },
    MakeNode {
        dir: i32,
        path: u64,
        mode: u32,
        dev: u64,
    },
    Symlink {
        target: u64,
        dir: i32,
        path: u64,
    },
    Link {
        old_dir: i32,
        old: u64,
        new_dir: i32,
        new: u64,
        flags: i32,
    },
    Unlink {
        dir: i32,
        path: u64,
        flags: i32,
    },
    Truncate {
        path: u64,
        len: i64,
    },
    Rename {
        old_dir: i32,
        old: u64,
        new_dir: i32,
        new: u64,
        flags: u32,
    },
}

impl FileCall {
    /// The call `nr` with `args`, or `None` for a call this module does not answer.
    pub(crate) fn of(nr: i64, args: &[u64; 6]) -> Option<FileCall> {
        let int = |i: usize| args[i] as i32;
        #[cfg(target_arch = "x86_64")]
        if let Some(call) = FileCall::legacy(nr, args) {
            return Some(call);
        }
        Some(match nr {
            libc::SYS_openat => FileCall::Open {
                dir: int(0),
                path: args[1],
                flags: int(2),
                mode: args[3] as u32,
            },
            libc::SYS_mkdirat => FileCall::MakeDir {
                dir: int(0),
                path: args[1],
                mode: args[2] as u32,
            },
            libc::SYS_mknodat => FileCall::MakeNode {
                dir: int(0),
                path: args[1],
                mode: args[2] as u32,
                dev: args[3],
            },
            libc::SYS_symlinkat => FileCall::Symlink {
                target: args[0],
                dir: int(1),
                path: args[2],
            },
            libc::SYS_linkat => FileCall::Link {
                old_dir: int(0),
                old: args[1],
                new_dir: int(2),
                new: args[3],
                flags: int(4),
            },
            libc::SYS_unlinkat => FileCall::Unlink {
                dir: int(0),
                path: args[1],
                flags: int(2),
            },
            libc::SYS_truncate => FileCall::Truncate {
                path: args[0],
                len: args[1] as i64,
            },
            libc::SYS_renameat => FileCall::Rename {
                old_dir: int(0),
                old: args[1],
                new_dir: int(2),
                new: args[3],
                flags: 0,
            },
            libc::SYS_renameat2 => FileCall::Rename {
                old_dir: int(0),
                old: args[1],
                new_dir: int(2),
                new: args[3],
                flags: args[4] as u32,
            },
            _ => return None,
        })
    }

    #[cfg(target_arch = "x86_64")]
    fn legacy(nr: i64, args: &[u64; 6]) -> Option<FileCall> {
        let cwd = libc::AT_FDCWD;
        Some(match nr {
            libc::SYS_open => FileCall::Open {
                dir: cwd,
                path: args[0],
                flags: args[1] as i32,
                mode: args[2] as u32,
            },
            libc::SYS_creat => FileCall::Open {
                dir: cwd,
                path: args[0],
                flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
                mode: args[1] as u32,
            },
            libc::SYS_mkdir => FileCall::MakeDir {
                dir: cwd,
                path: args[0],
                mode: args[1] as u32,
            },
            libc::SYS_mknod => FileCall::MakeNode {
                dir: cwd,
                path: args[0],
                mode: args[1] as u32,
                dev: args[2],
            },
            libc::SYS_symlink => FileCall::Symlink {
                target: args[0],
                dir: cwd,
                path: args[1],
            },
            libc::SYS_link => FileCall::Link {
                old_dir: cwd,
                old: args[0],
                new_dir: cwd,
                new: args[1],
                flags: 0,
            },
            libc::SYS_unlink => FileCall::Unlink {
                dir: cwd,
                path: args[0],
                flags: 0,
            },
            libc::SYS_rmdir => FileCall::Unlink {
                dir: cwd,
                path: args[0],
                flags: libc::AT_REMOVEDIR,
            },
            libc::SYS_rename => FileCall::Rename {
                old_dir: cwd,
                old: args[0],
                new_dir: cwd,
                new: args[1],
                flags: 0,
            },
            _ => return None,
        })
    }
}

/// How a file call ends.
pub(super) enum FileAnswer {
    /// The call's return value, or its errno.
    Done(Result<i64, i32>),
    /// An opened file for the caller, and whether its new number is close-on-exec.
    Opened(OwnedFd, bool),
    /// The call would block: finished on a worker, so one waiting caller does not stall
    /// every other call of the cage.
    Later(Blocking),
}

/// A call that waits for someone else: a FIFO's reader, a lease holder (an open for
/// writing breaks a read lease and waits up to `/proc/sys/fs/lease-break-time`, 45 s by
/// default, in `break_lease`), or a device's own open.
#[derive(Debug)]
pub(super) enum Blocking {
    /// Reopen the pinned `file` with the caller's `flags` and hand it to the caller.
    Open { file: OwnedFd, flags: i32 },
    /// Reopen the pinned regular `file` for writing and truncate it to `len`.
    Truncate { file: OwnedFd, len: u64 },
}

impl Blocking {
    /// Make the call, waiting as long as the kernel waits for the caller's own.
    pub(super) fn finish(self) -> FileAnswer {
        match self {
            Blocking::Open { file, flags } => match reopen(file.as_fd(), flags) {
                Ok(fd) => FileAnswer::Opened(fd, flags & libc::O_CLOEXEC != 0),
                Err(e) => FileAnswer::Done(Err(e)),
            },
            Blocking::Truncate { file, len } => FileAnswer::Done(
                reopen(file.as_fd(), libc::O_WRONLY)
                    .and_then(|w| rustix::fs::ftruncate(&w, len).map_err(errno))
                    .map(|()| 0),
            ),
        }
    }
}

/// The file identity the kernel gives an inode: (device, inode).
pub(super) type FileId = (u64, u64);

/// The protected paths as the files they were at launch, so that another name for one (a
/// bind mount of the repo elsewhere, a hard link the owner made) is still known.
#[derive(Debug, Default)]
pub(super) struct ProtectedFiles {
    /// Every protected path that existed: the file itself is protected.
    pub(crate) whole: HashMap<FileId, PathBuf>,
    /// The protected directories: every name directly inside them is protected.
    pub(crate) parents: HashMap<FileId, PathBuf>,
    /// Each name on the way to a protected path, as (the directory holding it, its name):
    /// only a directory may be made there, whatever path the directory is reached by.
    pub(crate) on_the_way: HashMap<(FileId, Vec<u8>), PathBuf>,
    /// The same names by path (every strict ancestor of a protected path, present or
    /// not), each with the first protected path beneath it: one lookup per creation.
    pub(crate) on_the_way_paths: HashMap<PathBuf, PathBuf>,
}

impl ProtectedFiles {
    pub(crate) fn of(policy: &Policy) -> ProtectedFiles {
        let mut out = ProtectedFiles::default();
        for protected in policy.protected() {
            let Ok(meta) = std::fs::symlink_metadata(&protected.path) else {
                continue;
            };
            // Only files of the owner's own: a protected path that is also sealed is
            // `/dev/null` in the bwrap view, whose identity every cage shares.
            let kind = meta.file_type();
            if !(kind.is_file() || kind.is_dir() || kind.is_symlink()) {
                continue;
            }
            let id = (meta.dev(), meta.ino());
            out.whole.insert(id, protected.path.clone());
            if protected.kind == jaula_policy::ProtectKind::Directory && meta.is_dir() {
                out.parents.insert(id, protected.path.clone());
                let mut budget = DIR_ENTRY_LIMIT;
                record_beneath(&protected.path, 0, &mut budget, &mut out.whole);
            }
        }
        // Also for the absent ones: `.claude` of `.claude/settings.json` is on the way to
        // a protected path while neither exists.
        // And the directories an owner's link leaves through `..` on its way to one
        // (`scripts` of `~/.config/nvim -> <repo>/scripts/../nvim`).
        let ancestors = policy.protected().iter().flat_map(|protected| {
            protected
                .path
                .ancestors()
                .skip(1)
                .map(move |a| (a, &protected.path))
        });
        let standing = policy
            .standing_directories()
            .iter()
            .map(|s| (s.path.as_path(), &s.protected));
        let mut seen = std::collections::HashSet::new();
        for (on_the_way, protected) in ancestors.chain(standing) {
            let (Some(dir), Some(name)) = (on_the_way.parent(), on_the_way.file_name()) else {
                continue;
            };
            if !seen.insert(on_the_way.to_path_buf()) {
                continue;
            }
            out.on_the_way_paths
                .insert(on_the_way.to_path_buf(), protected.clone());
            // Resolved paths: the directory is not reached through a link.
            if let Ok(meta) = std::fs::metadata(dir) {
                out.on_the_way
                    .entry(((meta.dev(), meta.ino()), name.as_bytes().to_vec()))
                    .or_insert_with(|| protected.clone());
            }
        }
        out
    }
}

/// How deep a protected directory is walked for the files it holds, and how many entries
/// in all: the after-run report's bounds (`planting.rs`), so a large one costs no more.
const DIR_DEPTH: usize = 4;
const DIR_ENTRY_LIMIT: usize = 1024;

/// The files already inside protected directory `dir`, by identity: a hard link the owner
/// made (`ln scripts/pre-commit .git/hooks/pre-commit`) is the same file under a name no
/// protected path covers, and a symlink there (`pre-commit -> ../../scripts/pre-commit`)
/// runs the file it reaches. Writing either through its other name plants the hook.
fn record_beneath(
    dir: &std::path::Path,
    depth: usize,
    budget: &mut usize,
    whole: &mut HashMap<FileId, PathBuf>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        if kind.is_dir() {
            if depth + 1 < DIR_DEPTH {
                record_beneath(&path, depth + 1, budget, whole);
            }
            continue;
        }
        // A symlink: what it resolves to now (only a regular file: a sealed path's
        // `/dev/null` is every cage's).
        let target = if kind.is_symlink() {
            std::fs::metadata(&path).ok()
        } else {
            Some(meta)
        };
        if let Some(m) = target.filter(|m| m.is_file()) {
            whole.entry((m.dev(), m.ino())).or_insert(path);
        }
    }
}

fn id_of(fd: BorrowedFd<'_>) -> Option<FileId> {
    rustix::fs::fstat(fd).ok().map(|s| (s.st_dev, s.st_ino))
}

/// The identity of the directory holding `entry`, asked once per call.
fn parent_id(entry: &Entry) -> Option<FileId> {
    *entry.parent_id.get_or_init(|| id_of(entry.parent.as_fd()))
}

/// The refusals the supervisor's threads have counted, and the paths they have named on
/// stderr (each once).
#[derive(Debug, Default)]
pub(super) struct Reports {
    named: std::sync::Mutex<std::collections::HashSet<PathBuf>>,
    refused: std::sync::atomic::AtomicU64,
}

impl Reports {
    /// One more refusal.
    pub(super) fn count(&self) {
        self.refused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether `key` is named for the first time (the caller then prints it).
    pub(super) fn first(&self, key: PathBuf) -> bool {
        self.named.lock().is_ok_and(|mut named| named.insert(key))
    }

    /// The refusals so far.
    pub(super) fn refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// What the guard decided and printed, shared with the connect side.
pub(super) struct Guard<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) files: &'a ProtectedFiles,
    pub(crate) reports: &'a Reports,
    /// The write-split directories this supervisor's Landlock domain grants whole (see
    /// `Plan::gate_split`): beneath them the guard answers for the split, so it refuses
    /// whatever `decide` denies, and it never moves or removes one of them.
    pub(crate) widened: &'a [PathBuf],
}

impl Guard<'_> {
    /// `EACCES` when the file `fd` (at `path`), or the directory holding it, is a
    /// protected one under another name.
    fn check_ids(
        &mut self,
        path: &std::path::Path,
        file: Option<BorrowedFd<'_>>,
        parent: impl FnOnce() -> Option<FileId>,
        verb: &str,
    ) -> Result<(), i32> {
        let held = file
            .and_then(id_of)
            .and_then(|id| self.files.whole.get(&id))
            .or_else(|| parent().and_then(|id| self.files.parents.get(&id)));
        let Some(protected) = held else {
            return Ok(());
        };
        self.reports.count();
        let detail = format!(
            "it is within the protected path {} under another name",
            protected.display()
        );
        if self.reports.first(path.to_path_buf()) {
            eprintln!("jaula: refused {verb} {}: {detail}", path.display());
        }
        let protected = protected.clone();
        self.note_protected(path, verb, WriteRule::Protected, detail, &protected);
        Err(libc::EACCES)
    }

    /// The checks for an entry that is made, removed or renamed: its path, and the file it
    /// names now (if any) and the directory holding it by identity.
    pub(super) fn check_entry(
        &mut self,
        entry: &Entry,
        access: Access,
        verb: &str,
    ) -> Result<PathBuf, i32> {
        let path = entry_path(entry)?;
        self.check(&path, access, verb)?;
        // Only a missing name has no identity to check: any other failure (no descriptor
        // left, no memory) refuses the call rather than skip the check.
        let existing = match rustix::fs::openat(
            entry.parent.as_fd(),
            entry.name.as_slice(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(f) => Some(f),
            Err(rustix::io::Errno::NOENT) => None,
            Err(e) => return Err(errno(e)),
        };
        let parent = || {
            (entry.name != b"." && entry.name != b"..")
                .then(|| parent_id(entry))
                .flatten()
        };
        self.check_ids(&path, existing.as_ref().map(|f| f.as_fd()), parent, verb)?;
        Ok(path)
    }

    /// [`Guard::check_entry`] for a creation at an entry the caller's lookup just found
    /// missing: there is no file to know by identity, only the directory. (The creation
    /// is made `O_EXCL`: a name another call made meanwhile fails it, and the lookup runs
    /// again.)
    fn check_missing_entry(&mut self, entry: &Entry, verb: &str) -> Result<PathBuf, i32> {
        let path = entry_path(entry)?;
        self.check(&path, Access::Create, verb)?;
        self.check_ids(&path, None, || parent_id(entry), verb)?;
        Ok(path)
    }

    /// `EACCES` when a name other than a directory (a symlink, a file, a node, a socket, a
    /// hard link) would be made at `entry` while a protected path lies beneath that name:
    /// `ln -s mine .claude` then `.claude/settings.json` written into `mine/` leaves the
    /// owner's `.claude/settings.json` resolving to the cage's file, though no protected
    /// path was ever named. A real directory may be made there: what is then made inside
    /// it is checked by path as usual. By path, and by (directory, name) for the names
    /// that existed at launch, so another mount of the repo is no way around it.
    pub(super) fn check_on_the_way(&mut self, entry: &Entry, verb: &str) -> Result<(), i32> {
        if entry.name == b"." || entry.name == b".." {
            return Ok(());
        }
        let path = entry_path(entry)?;
        let held = match self.files.on_the_way_paths.get(&path).cloned() {
            Some(held) => held,
            None => {
                let Some(dir) = parent_id(entry) else {
                    return Err(libc::EACCES);
                };
                match self.files.on_the_way.get(&(dir, entry.name.clone())) {
                    Some(held) => held.clone(),
                    None => return Ok(()),
                }
            }
        };
        self.reports.count();
        let detail = format!(
            "only a directory may stand on the way to the protected path {}",
            held.display()
        );
        if self.reports.first(path.clone()) {
            eprintln!("jaula: refused {verb} {}: {detail}", path.display());
        }
        self.note_protected(&path, verb, WriteRule::PlantingGuard, detail, &held);
        Err(libc::EACCES)
    }

    /// The checks for a file that is written, truncated or linked: its path, and it and
    /// its directory by identity.
    fn check_file(
        &mut self,
        file: BorrowedFd<'_>,
        parent: Option<BorrowedFd<'_>>,
        verb: &str,
    ) -> Result<PathBuf, i32> {
        let path = path_of(file)?;
        self.check(&path, Access::Write, verb)?;
        self.check_ids(&path, Some(file), || parent.and_then(id_of), verb)?;
        if let Some((dir, dir_path, name)) = git_dirs::holder(file, parent, &path)? {
            if let Some(why) = git_dirs::refuse_write(dir.as_fd(), &dir_path, &name)? {
                return Err(self.refuse_git(&path, verb, &why));
            }
        }
        Ok(path)
    }

    /// `EACCES` and one stderr line (once per path) when `path` is protected for `access`,
    /// or lies in a widened directory and `decide` denies it for any reason (Landlock gave
    /// this process the whole directory: the split that kept sealed entries out is this).
    fn check(&mut self, path: &std::path::Path, access: Access, verb: &str) -> Result<(), i32> {
        let decision = self.policy.decide(path, access);
        let protected = matches!(decision.rule, Rule::Protected { .. });
        if decision.allowed || !(protected || self.is_widened(path)) {
            return Ok(());
        }
        self.reports.count();
        let refusal = write_refusals::from_decision(
            self.policy,
            path,
            access,
            write_refusals::call_of(verb),
            &decision,
        );
        if self.reports.first(path.to_path_buf()) {
            eprintln!(
                "jaula: refused {verb} {}: {}",
                path.display(),
                refusal.detail
            );
        }
        write_refusals::note(refusal);
        Err(libc::EACCES)
    }
}

impl Guard<'_> {
    /// `EACCES` and one stderr line (once per path and reason) for a git rule (see
    /// `git_dirs`).
    fn refuse_git(&mut self, path: &std::path::Path, verb: &str, why: &str) -> i32 {
        self.reports.count();
        let mut key = path.as_os_str().to_owned();
        key.push("\0");
        key.push(why);
        if self.reports.first(PathBuf::from(key)) {
            eprintln!("jaula: refused {verb} {}: {why}", path.display());
        }
        write_refusals::note(write_refusals::WriteRefusal {
            path: path.to_path_buf(),
            call: write_refusals::call_of(verb),
            rule: WriteRule::PlantingGuard,
            detail: why.to_owned(),
            allow_with: Vec::new(),
        });
        libc::EACCES
    }

    /// The git rules for making `entry` (at `path`) as `made`: refused where git would
    /// read it as config or a hook; a directory that the call makes git-like has its
    /// config admitted and reinstalled first (see `git_dirs`).
    pub(super) fn check_git_new(
        &mut self,
        entry: &Entry,
        path: &std::path::Path,
        made: Made,
        verb: &str,
    ) -> Result<(), i32> {
        match self.plan_git_new(entry, path, made, verb)? {
            Plan::Go => Ok(()),
            // Only an open makes an empty config, only a rename installs one.
            _ => Err(self.refuse_git(
                path,
                verb,
                "a git directory's config is installed only by renaming a config jaula has read onto it",
            )),
        }
    }

    /// [`Guard::check_git_new`]'s plan, with [`Plan::CreateEmpty`] left to the caller.
    fn plan_git_new(
        &mut self,
        entry: &Entry,
        path: &std::path::Path,
        made: Made,
        verb: &str,
    ) -> Result<Plan, i32> {
        if entry.name == b"." || entry.name == b".." {
            return Ok(Plan::Go);
        }
        // `path` is the directory's path with the name joined (`entry_path`).
        let dir_path = path.parent().ok_or(libc::EACCES)?.to_path_buf();
        match git_dirs::plan_new(entry.parent.as_fd(), &dir_path, &entry.name, made, false)? {
            Plan::Refuse(why) => Err(self.refuse_git(path, verb, &why)),
            Plan::Admit => self
                .admit_git_dir(entry.parent.as_fd(), &dir_path, path, verb)
                .map(|()| Plan::Go),
            plan => Ok(plan),
        }
    }

    fn admit_git_dir(
        &mut self,
        dir: BorrowedFd<'_>,
        dir_path: &std::path::Path,
        path: &std::path::Path,
        verb: &str,
    ) -> Result<(), i32> {
        let policy = self.policy;
        let judge = |git_dir: &std::path::Path, joined: &std::path::Path| {
            git_dirs::judge_worktree(policy, git_dir, joined)
        };
        match git_dirs::admit_new_git_dir(dir, dir_path, &judge) {
            Ok(()) => Ok(()),
            Err(Ok(why)) => Err(self.refuse_git(path, verb, &why)),
            Err(Err(e)) => Err(e),
        }
    }

    /// The git rules for a rename onto `to` from `from`: `Ok(true)` when the rename was
    /// made here (a config admitted and installed), `Ok(false)` when the caller's rename
    /// may go ahead.
    fn rename_git(&mut self, from: &Entry, to: &Entry, flags: u32) -> Result<bool, i32> {
        let exchange = flags & libc::RENAME_EXCHANGE != 0;
        // A whiteout is a device left at the source name (unprivileged since Linux 5.8):
        // at a git directory's config it would stand where git reads one.
        if flags & libc::RENAME_WHITEOUT != 0 && from.name != b"." && from.name != b".." {
            let dir_path = path_of(from.parent.as_fd())?;
            if let Some(why) = git_dirs::refuse_write(from.parent.as_fd(), &dir_path, &from.name)? {
                return Err(self.refuse_git(&entry_path(from)?, "rename of", &why));
            }
        }
        if exchange {
            // Both names stay; both contents change.
            for entry in [from, to] {
                if entry.name == b"." || entry.name == b".." {
                    continue;
                }
                let dir_path = path_of(entry.parent.as_fd())?;
                if let Some(why) =
                    git_dirs::refuse_write(entry.parent.as_fd(), &dir_path, &entry.name)?
                {
                    return Err(self.refuse_git(&entry_path(entry)?, "rename of", &why));
                }
            }
            return Ok(false);
        }
        if to.name == b"." || to.name == b".." || from.name == b"." || from.name == b".." {
            return Ok(false);
        }
        let made = match rustix::fs::statat(
            from.parent.as_fd(),
            from.name.as_slice(),
            AtFlags::SYMLINK_NOFOLLOW,
        ) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => Made::Directory,
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFREG => Made::File,
            _ => Made::Other,
        };
        let path = entry_path(to)?;
        let dir_path = path.parent().ok_or(libc::EACCES)?.to_path_buf();
        match git_dirs::plan_new(to.parent.as_fd(), &dir_path, &to.name, made, true)? {
            Plan::Go => Ok(false),
            // Only an open makes an empty config.
            Plan::CreateEmpty => Err(libc::EACCES),
            Plan::Refuse(why) => Err(self.refuse_git(&path, "rename onto", &why)),
            Plan::Admit => self
                .admit_git_dir(to.parent.as_fd(), &dir_path, &path, "rename onto")
                .map(|()| false),
            Plan::Install => {
                if flags & !libc::RENAME_NOREPLACE != 0 {
                    return Err(libc::EINVAL);
                }
                if flags & libc::RENAME_NOREPLACE != 0
                    && rustix::fs::statat(
                        to.parent.as_fd(),
                        to.name.as_slice(),
                        AtFlags::SYMLINK_NOFOLLOW,
                    )
                    .is_ok()
                {
                    return Err(libc::EEXIST);
                }
                let policy = self.policy;
                let judge = |git_dir: &std::path::Path, joined: &std::path::Path| {
                    git_dirs::judge_worktree(policy, git_dir, joined)
                };
                match git_dirs::install(
                    from.parent.as_fd(),
                    &from.name,
                    to.parent.as_fd(),
                    &dir_path,
                    &to.name,
                    &judge,
                ) {
                    Ok(()) => Ok(true),
                    Err(Ok(why)) => Err(self.refuse_git(&path, "rename onto", &why)),
                    Err(Err(e)) => Err(e),
                }
            }
        }
    }
}

impl Guard<'_> {
    /// Note a refusal because of the protected path `protected` for the exit summary.
    fn note_protected(
        &mut self,
        path: &std::path::Path,
        verb: &str,
        rule: WriteRule,
        detail: String,
        protected: &std::path::Path,
    ) {
        write_refusals::note(write_refusals::for_protected(
            self.policy,
            path,
            write_refusals::call_of(verb),
            rule,
            detail,
            protected,
        ));
    }

    /// The kernel's `errno` for a call the guard let through on `entry` (made, removed or
    /// renamed): noted when it is the cage's refusal, which says whether it was.
    fn kernel_on_entry(&mut self, errno: i32, entry: &Entry, access: Access, verb: &str) -> bool {
        write_refusals::may_be_the_cage(errno)
            && entry_path(entry).is_ok_and(|path| {
                self.kernel_refused(errno, &path, entry.parent.as_fd(), access, verb)
            })
    }

    /// The kernel's `errno` for a write to (or truncation of) the found `file`: noted when
    /// it is the cage's refusal.
    fn kernel_on_file(&mut self, errno: i32, file: BorrowedFd<'_>, access: Access, verb: &str) {
        if write_refusals::may_be_the_cage(errno) {
            if let Ok(path) = path_of(file) {
                self.kernel_refused(errno, &path, file, access, verb);
            }
        }
    }

    /// A write to `path` the kernel refused (`EACCES` or `EROFS`); `checked` is what its
    /// permission bits are read from (the file, or the directory for a new name). Only
    /// refused calls come here: `decide` says whether the cage's rules refuse it, and an
    /// `EACCES` the file's own permissions would give uncaged too (`faccessat`, which
    /// Landlock does not restrict) is not the cage's.
    fn kernel_refused(
        &mut self,
        errno: i32,
        path: &std::path::Path,
        checked: BorrowedFd<'_>,
        access: Access,
        verb: &str,
    ) -> bool {
        if errno == libc::EACCES && permissions_refuse(checked) {
            return false;
        }
        let call = write_refusals::call_of(verb);
        // A lock file beside a protected file (`~/.gitconfig.lock` for `git config
        // --global`, which renames it onto `~/.gitconfig`): the write meant is the
        // protected file's, and that is what the refusal names.
        if access == Access::Create {
            if let Some(target) = lock_target(path) {
                let decision = self.policy.decide(&target, Access::Write);
                if matches!(decision.rule, Rule::Protected { .. }) {
                    let mut refusal = write_refusals::from_decision(
                        self.policy,
                        &target,
                        Access::Write,
                        "write",
                        &decision,
                    );
                    if !self.policy.decide(path, access).allowed {
                        if let Some(dir) = path.parent() {
                            if !refusal.allow_with.iter().any(|(_, p)| p == dir) {
                                refusal
                                    .allow_with
                                    .push(("--allow-write", dir.to_path_buf()));
                            }
                        }
                    }
                    if self.reports.first(target.clone()) {
                        eprintln!(
                            "jaula: refused write to {} (through its lock file {}): {}",
                            target.display(),
                            path.display(),
                            refusal.detail
                        );
                    }
                    write_refusals::note(refusal);
                    return true;
                }
            }
        }
        let decision = self.policy.decide(path, access);
        if decision.allowed {
            return false;
        }
        write_refusals::note(write_refusals::from_decision(
            self.policy,
            path,
            access,
            call,
            &decision,
        ));
        true
    }

    /// Whether `path` is a widened directory or beneath one.
    fn is_widened(&self, path: &std::path::Path) -> bool {
        self.widened.iter().any(|w| path.starts_with(w))
    }

    /// `EACCES` when a rename or removal would move or remove a widened directory (or a
    /// directory holding one): each holds, or may come to hold, a sealed or protected
    /// path that the split kept in place, and the supervisor's binds rely on their
    /// names staying what they are.
    fn check_widened_holder(&mut self, path: &std::path::Path, verb: &str) -> Result<(), i32> {
        let Some(held) = self.widened.iter().find(|w| w.starts_with(path)) else {
            return Ok(());
        };
        self.reports.count();
        let detail = format!("{} holds a sealed or protected path", held.display());
        if self.reports.first(path.to_path_buf()) {
            eprintln!("jaula: refused {verb} {}: {detail}", path.display());
        }
        write_refusals::note(write_refusals::WriteRefusal {
            path: path.to_path_buf(),
            call: write_refusals::call_of(verb),
            rule: WriteRule::PlantingGuard,
            detail,
            allow_with: Vec::new(),
        });
        Err(libc::EACCES)
    }

    /// `EACCES` when a rename would move a tree that holds a protected path, or put one
    /// where it would hold one: `mv prepared ~/.local/share` with a planted
    /// `applications/` inside creates the protected path without ever naming it.
    fn check_holder(&mut self, path: &std::path::Path, verb: &str) -> Result<(), i32> {
        let Some(held) = self
            .policy
            .protected()
            .iter()
            .find(|p| p.path != path && p.path.starts_with(path))
        else {
            return Ok(());
        };
        self.reports.count();
        let detail = format!("it would hold the protected path {}", held.path.display());
        if self.reports.first(path.to_path_buf()) {
            eprintln!("jaula: refused {verb} {}: {detail}", path.display());
        }
        let held = held.path.clone();
        self.note_protected(path, verb, WriteRule::Protected, detail, &held);
        Err(libc::EACCES)
    }
}

/// `X` for a lock file `X.lock`.
fn lock_target(path: &std::path::Path) -> Option<PathBuf> {
    let name = path.file_name()?.as_bytes();
    let stem = name.strip_suffix(b".lock").filter(|s| !s.is_empty())?;
    Some(path.with_file_name(OsStr::from_bytes(stem)))
}

/// Whether the permission bits of `file` (a descriptor of the supervisor's) refuse this
/// process write access, as they would refuse the caller, who runs as the same user.
fn permissions_refuse(file: BorrowedFd<'_>) -> bool {
    rustix::fs::accessat(
        rustix::fs::CWD,
        reopen_path(file),
        rustix::fs::Access::WRITE_OK,
        AtFlags::EACCESS,
    ) == Err(rustix::io::Errno::ACCESS)
}

fn errno(e: rustix::io::Errno) -> i32 {
    e.raw_os_error()
}

/// The path the kernel reports for a descriptor of the supervisor's.
pub(super) fn path_of(fd: BorrowedFd<'_>) -> Result<PathBuf, i32> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|_| libc::EACCES)
}

fn entry_path(entry: &Entry) -> Result<PathBuf, i32> {
    if let Some(path) = entry.path.get() {
        return Ok(path.clone());
    }
    let dir = path_of(entry.parent.as_fd())?;
    let path = if entry.name == b"." {
        dir
    } else {
        dir.join(OsStr::from_bytes(&entry.name))
    };
    Ok(entry.path.get_or_init(|| path).clone())
}

/// The entry's name as the kernel should see it: with its trailing slash, which asks
/// that the entry be a directory.
fn name_of(entry: &Entry) -> Vec<u8> {
    let mut name = entry.name.clone();
    if entry.dir_only && name != b"." && name != b".." {
        name.push(b'/');
    }
    name
}

/// `/proc/self/fd/N` for a descriptor of the supervisor's: reopening through it opens the
/// pinned file itself, whatever its name is by now.
fn reopen_path(fd: BorrowedFd<'_>) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

/// Reopen the pinned `file` with the caller's `flags` (creation flags already handled).
fn reopen(file: BorrowedFd<'_>, flags: i32) -> Result<OwnedFd, i32> {
    let keep = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC);
    // O_NOCTTY: the supervisor must never take the caller's terminal as its own.
    let flags = OFlags::from_bits_retain(keep as u32) | OFlags::CLOEXEC | OFlags::NOCTTY;
    rustix::fs::open(reopen_path(file), flags, Mode::empty()).map_err(errno)
}

/// Whether an open the supervisor made with `O_NONBLOCK` added (the caller did not ask
/// for it) must be made again without it, on a worker: `EWOULDBLOCK` is `break_lease`
/// refusing to wait for a lease holder (fs/locks.c), `ENXIO` a FIFO that has no reader yet
/// (fs/fifo.c, `fifo_open`).
fn would_block(e: i32) -> bool {
    e == libc::EWOULDBLOCK || e == libc::ENXIO
}

/// Clear the `O_NONBLOCK` the supervisor added to an open of its own: the caller's file
/// must behave as its own open would have made it.
fn clear_nonblock(fd: &OwnedFd) -> Result<(), i32> {
    let flags = rustix::fs::fcntl_getfl(fd).map_err(errno)?;
    rustix::fs::fcntl_setfl(fd, flags - OFlags::NONBLOCK).map_err(errno)
}

/// Character devices whose open never waits: the memory devices (`/dev/null`, `/dev/zero`,
/// `/dev/full`, `/dev/random`, `/dev/urandom`: major 1) and pseudo-terminal slaves (major
/// 136-143: a pty has no carrier to wait for). Any other device's open may wait (a serial
/// line for its carrier, a tape for its medium) and is made on a worker.
fn never_blocks(file: BorrowedFd<'_>) -> bool {
    rustix::fs::fstat(file).is_ok_and(|st| {
        let major = rustix::fs::major(st.st_rdev);
        major == 1 || (136..=143).contains(&major)
    })
}

/// Open the found, checked `file` (of kind `kind`) for the caller: now when the open
/// cannot wait, on a worker when it can. A regular file is opened with `O_NONBLOCK` first,
/// which makes the kernel refuse instead of waiting for a lease break; only then does the
/// call go to a worker, where the open waits as the caller's own would have.
///
/// A refusal comes back with `file`, which names what was refused.
fn open_found(file: OwnedFd, kind: u32, flags: i32) -> Result<FileAnswer, (i32, OwnedFd)> {
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let now = |file: OwnedFd, flags: i32| match reopen(file.as_fd(), flags) {
        Ok(fd) => Ok(FileAnswer::Opened(fd, cloexec)),
        Err(e) => Err((e, file)),
    };
    if flags & libc::O_NONBLOCK != 0 {
        // The caller asked for it: the kernel refuses rather than waits, as it would for
        // the caller (EWOULDBLOCK for a lease, ENXIO for a FIFO without a reader).
        return now(file, flags);
    }
    match kind {
        libc::S_IFREG => match reopen(file.as_fd(), flags | libc::O_NONBLOCK) {
            Ok(fd) => match clear_nonblock(&fd) {
                Ok(()) => Ok(FileAnswer::Opened(fd, cloexec)),
                Err(e) => Err((e, file)),
            },
            Err(e) if would_block(e) => Ok(FileAnswer::Later(Blocking::Open { file, flags })),
            Err(e) => Err((e, file)),
        },
        libc::S_IFDIR | libc::S_IFSOCK => now(file, flags),
        libc::S_IFCHR if never_blocks(file.as_fd()) => now(file, flags),
        // FIFOs (waiting for a reader), other devices.
        _ => Ok(FileAnswer::Later(Blocking::Open { file, flags })),
    }
}

/// Answers one file call for `caller` (`pidfd` is its process, for `*at` descriptors).
pub(super) struct FileCalls<'a, 'g> {
    pub(crate) caller: &'a Caller,
    pub(crate) pidfd: BorrowedFd<'a>,
    /// `Ok` while the caller still waits in its call: asked after everything of the
    /// caller is read and before the supervisor acts (see `supervisor::Pending`).
    pub(crate) confirm: &'a dyn Fn() -> Result<(), i32>,
    /// The supervisor's lock on names (see [`Held`]).
    pub(crate) names: &'a std::sync::RwLock<()>,
    pub(crate) guard: Guard<'g>,
}

/// A call's hold on the supervisor's lock on names, from before its checks until after
/// it acts. The supervisor serves calls on several threads at once, and a check is only
/// as good as the state it looked at: whether a directory is git-like, what a name on the
/// way is, which names exist. So a call that can change that state for another call's
/// check holds the lock exclusively: a rename, a hard link, a symlink, a directory's
/// removal, and the making or removal of a name git reads (`git_dirs::is_git_state_name`:
/// `HEAD`, `objects`, `refs`, `config`, `hooks`, a todo list, `.git`, ...), and a bind
/// (the kernel resolves the address again after the check). Any other call (the making,
/// writing, truncation or removal of an ordinary name) holds it shared: what it changes
/// no other check reads, and it reads nothing another shared call changes. Everything
/// else a call rests on is pinned (its directories and file by descriptor).
pub(super) enum Held<'a> {
    Shared(#[allow(dead_code)] std::sync::RwLockReadGuard<'a, ()>),
    Exclusive(#[allow(dead_code)] std::sync::RwLockWriteGuard<'a, ()>),
}

/// Take the lock on names, exclusively when asked.
pub(super) fn hold(names: &std::sync::RwLock<()>, exclusive: bool) -> Result<Held<'_>, i32> {
    // A thread that panicked while holding it left nothing half-done that another check
    // reads (each call's state is its own): go on.
    Ok(if exclusive {
        Held::Exclusive(names.write().unwrap_or_else(|e| e.into_inner()))
    } else {
        Held::Shared(names.read().unwrap_or_else(|e| e.into_inner()))
    })
}

/// Attempts at an open whose last name changes under it (made or replaced by the caller
/// between the lookup and the open) before the caller gets `EAGAIN`.
const OPEN_ATTEMPTS: usize = 8;

impl FileCalls<'_, '_> {
    pub(crate) fn answer(&mut self, call: FileCall) -> FileAnswer {
        let done = |r: Result<(), i32>| FileAnswer::Done(r.map(|()| 0));
        match call {
            FileCall::Open {
                dir,
                path,
                flags,
                mode,
            } => match self.open(dir, path, flags, mode) {
                Ok(answer) => answer,
                Err(e) => FileAnswer::Done(Err(e)),
            },
            FileCall::MakeDir { dir, path, mode } => {
                done(
                    self.make(dir, path, Made::Directory, false, |parent, name| {
                        rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(mode)).map_err(errno)
                    }),
                )
            }
            FileCall::MakeNode {
                dir,
                path,
                mode,
                dev,
            } => done(self.make(dir, path, Made::Other, false, |parent, name| {
                let kind = rustix::fs::FileType::from_raw_mode(mode);
                rustix::fs::mknodat(parent, name, kind, Mode::from_raw_mode(mode), dev)
                    .map_err(errno)
            })),
            FileCall::Symlink { target, dir, path } => {
                let target = match self.read_path(target) {
                    Ok(t) => t,
                    Err(e) => return FileAnswer::Done(Err(e)),
                };
                done(self.make(dir, path, Made::Other, true, |parent, name| {
                    rustix::fs::symlinkat(target.as_slice(), parent, name).map_err(errno)
                }))
            }
            FileCall::Link {
                old_dir,
                old,
                new_dir,
                new,
                flags,
            } => done(self.link(old_dir, old, new_dir, new, flags)),
            FileCall::Unlink { dir, path, flags } => done(self.unlink(dir, path, flags)),
            FileCall::Truncate { path, len } => self
                .truncate(path, len)
                .unwrap_or_else(|e| FileAnswer::Done(Err(e))),
            FileCall::Rename {
                old_dir,
                old,
                new_dir,
                new,
                flags,
            } => done(self.rename(old_dir, old, new_dir, new, flags)),
        }
    }

    fn read_path(&self, ptr: u64) -> Result<Vec<u8>, i32> {
        sys::read_cstring(self.caller.tid(), ptr)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EFAULT))
    }

    /// The directory a caller's `*at` path starts from: its working directory for
    /// `AT_FDCWD`, else its descriptor. Not opened for an absolute path.
    fn start(&self, dir: i32, path: &[u8]) -> Result<OwnedFd, i32> {
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EBADF);
        if path.first() == Some(&b'/') {
            return sys::open_path(std::path::Path::new("/"), libc::O_PATH | libc::O_DIRECTORY)
                .map_err(errno);
        }
        if dir == libc::AT_FDCWD {
            self.caller.cwd()
        } else {
            sys::pidfd_getfd(self.pidfd, dir).map_err(errno)
        }
    }

    fn locate(&self, dir: i32, ptr: u64) -> Result<Entry, i32> {
        let path = self.read_path(ptr)?;
        let start = self.start(dir, &path)?;
        self.caller.locate(start, &path)
    }

    fn open(&mut self, dir: i32, ptr: u64, flags: i32, mode: u32) -> Result<FileAnswer, i32> {
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let path = self.read_path(ptr)?;
        let create = flags & libc::O_CREAT != 0;
        let exclusive = create && flags & libc::O_EXCL != 0;
        let tmpfile = flags & libc::O_TMPFILE == libc::O_TMPFILE;
        // The kernel does not follow a last symlink under O_NOFOLLOW or O_CREAT|O_EXCL.
        let follow = flags & libc::O_NOFOLLOW == 0 && !exclusive;
        let mut hold_exclusive = false;
        for _ in 0..OPEN_ATTEMPTS {
            let _held = hold(self.names, hold_exclusive)?;
            let start = self.start(dir, &path)?;
            let entry = self.caller.locate(start, &path)?;
            match self.caller.lookup(entry, follow || tmpfile)? {
                Target::Missing(entry) => {
                    if !create || tmpfile {
                        return Err(libc::ENOENT);
                    }
                    if entry.dir_only {
                        return Err(libc::EISDIR);
                    }
                    if !hold_exclusive && git_dirs::is_git_state_name(&entry.name) {
                        hold_exclusive = true;
                        continue;
                    }
                    let path = self.guard.check_missing_entry(&entry, "create of")?;
                    self.guard.check_on_the_way(&entry, "create of")?;
                    if self
                        .guard
                        .plan_git_new(&entry, &path, Made::File, "create of")?
                        == Plan::CreateEmpty
                    {
                        (self.confirm)()?;
                        return self.create_empty_config(&entry, flags, mode);
                    }
                    // O_EXCL: the name was missing at the lookup. Whatever stands there
                    // now was made meanwhile (a FIFO, a symlink, a file): look again, and
                    // the lookup finds it and checks it as any found file. A file this
                    // open makes cannot make it wait, so nothing else is added.
                    (self.confirm)()?;
                    let made = with_caller_umask(self.caller, || {
                        rustix::fs::openat(
                            entry.parent.as_fd(),
                            entry.name.as_slice(),
                            OFlags::from_bits_retain(flags as u32)
                                | OFlags::EXCL
                                | OFlags::NOFOLLOW
                                | OFlags::NOCTTY
                                | OFlags::CLOEXEC,
                            Mode::from_raw_mode(mode),
                        )
                        .map_err(errno)
                    })?;
                    match made {
                        Err(libc::EEXIST) if !exclusive => continue,
                        Err(e) => {
                            self.guard
                                .kernel_on_entry(e, &entry, Access::Create, "create of");
                            return Err(e);
                        }
                        Ok(fd) => return Ok(FileAnswer::Opened(fd, cloexec)),
                    }
                }
                Target::Found { file, parent } => {
                    if exclusive {
                        return Err(libc::EEXIST);
                    }
                    let kind = file_type(file.as_fd())?;
                    if kind == libc::S_IFLNK {
                        return Err(libc::ELOOP);
                    }
                    let verb = if tmpfile {
                        // An unnamed file made in the directory: inside a widened one,
                        // only where decide lets the directory be written (never the
                        // sealed broker's).
                        let dir = path_of(file.as_fd())?;
                        if self.guard.is_widened(&dir) {
                            self.guard.check(&dir, Access::Write, "temporary file in")?;
                        }
                        "temporary file in"
                    } else {
                        let parent = parent.as_ref().map(|p| p.as_fd());
                        self.guard.check_file(file.as_fd(), parent, "write to")?;
                        "write to"
                    };
                    (self.confirm)()?;
                    return open_found(file, kind, flags).map_err(|(e, file)| {
                        self.guard
                            .kernel_on_file(e, file.as_fd(), Access::Write, verb);
                        e
                    });
                }
            }
        }
        Err(libc::EAGAIN)
    }

    /// A git directory's missing config, made empty and opened read-only for the caller
    /// (see `Plan::CreateEmpty`): a write through it fails with `EBADF`.
    fn create_empty_config(
        &mut self,
        entry: &Entry,
        flags: i32,
        mode: u32,
    ) -> Result<FileAnswer, i32> {
        let fd = with_caller_umask(self.caller, || {
            rustix::fs::openat(
                entry.parent.as_fd(),
                entry.name.as_slice(),
                OFlags::RDONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::NOCTTY
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(mode & 0o666),
            )
            .map_err(errno)
        })??;
        Ok(FileAnswer::Opened(fd, flags & libc::O_CLOEXEC != 0))
    }

    /// Make a new name (directory, node, symlink) unless it is protected, or, for anything
    /// but a directory, on the way to a protected path.
    fn make(
        &mut self,
        dir: i32,
        ptr: u64,
        made: Made,
        symlink: bool,
        make: impl FnOnce(BorrowedFd<'_>, &[u8]) -> Result<(), i32>,
    ) -> Result<(), i32> {
        let entry = self.locate(dir, ptr)?;
        // A symlink changes what paths resolve to.
        let _held = hold(
            self.names,
            symlink || git_dirs::is_git_state_name(&entry.name),
        )?;
        let path = self
            .guard
            .check_entry(&entry, Access::Create, "create of")?;
        if made != Made::Directory {
            self.guard.check_on_the_way(&entry, "create of")?;
        }
        self.guard.check_git_new(&entry, &path, made, "create of")?;
        let name = name_of(&entry);
        (self.confirm)()?;
        with_caller_umask(self.caller, || make(entry.parent.as_fd(), &name))?.inspect_err(|&e| {
            self.guard
                .kernel_on_entry(e, &entry, Access::Create, "create of");
        })
    }

    fn link(
        &mut self,
        old_dir: i32,
        old: u64,
        new_dir: i32,
        new: u64,
        flags: i32,
    ) -> Result<(), i32> {
        // A second name for a file can make a protected one, or a name git reads.
        let _held = hold(self.names, true)?;
        let old_path = self.read_path(old)?;
        let (source, source_dir) = if old_path.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
            let fd = sys::pidfd_getfd(self.pidfd, old_dir)
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EBADF))?;
            (fd, None)
        } else {
            let start = self.start(old_dir, &old_path)?;
            let entry = self.caller.locate(start, &old_path)?;
            match self
                .caller
                .lookup(entry, flags & libc::AT_SYMLINK_FOLLOW != 0)?
            {
                Target::Missing(_) => return Err(libc::ENOENT),
                Target::Found { file, parent } => (file, parent),
            }
        };
        if file_type(source.as_fd())? == libc::S_IFDIR {
            return Err(libc::EPERM);
        }
        // A second name for a protected file would be a door to write it.
        let source_dir = source_dir.as_ref().map(|d| d.as_fd());
        self.guard
            .check_file(source.as_fd(), source_dir, "link of")?;
        let entry = self.locate(new_dir, new)?;
        let path = self
            .guard
            .check_entry(&entry, Access::Create, "create of")?;
        self.guard.check_on_the_way(&entry, "create of")?;
        self.guard
            .check_git_new(&entry, &path, Made::Other, "create of")?;
        (self.confirm)()?;
        rustix::fs::linkat(
            rustix::fs::CWD,
            reopen_path(source.as_fd()),
            entry.parent.as_fd(),
            name_of(&entry),
            AtFlags::SYMLINK_FOLLOW,
        )
        .map_err(|e| {
            let e = errno(e);
            self.guard
                .kernel_on_entry(e, &entry, Access::Create, "create of");
            e
        })
    }

    fn unlink(&mut self, dir: i32, ptr: u64, flags: i32) -> Result<(), i32> {
        let entry = self.locate(dir, ptr)?;
        let _held = hold(
            self.names,
            flags & libc::AT_REMOVEDIR != 0 || git_dirs::is_git_state_name(&entry.name),
        )?;
        self.guard
            .check_entry(&entry, Access::Write, "removal of")?;
        if entry.name != b"." && entry.name != b".." {
            self.guard
                .check_widened_holder(&entry_path(&entry)?, "removal of")?;
        }
        (self.confirm)()?;
        rustix::fs::unlinkat(
            entry.parent.as_fd(),
            name_of(&entry),
            AtFlags::from_bits_retain(flags as u32),
        )
        .map_err(|e| {
            let e = errno(e);
            self.guard
                .kernel_on_entry(e, &entry, Access::Write, "removal of");
            e
        })
    }

    fn truncate(&mut self, ptr: u64, len: i64) -> Result<FileAnswer, i32> {
        let _held = hold(self.names, false)?;
        let entry = self.locate(libc::AT_FDCWD, ptr)?;
        let (file, parent) = match self.caller.lookup(entry, true)? {
            Target::Missing(_) => return Err(libc::ENOENT),
            Target::Found { file, parent } => (file, parent),
        };
        match file_type(file.as_fd())? {
            libc::S_IFDIR => return Err(libc::EISDIR),
            libc::S_IFREG => {}
            _ => return Err(libc::EINVAL),
        }
        let len = u64::try_from(len).map_err(|_| libc::EINVAL)?;
        let parent = parent.as_ref().map(|p| p.as_fd());
        self.guard
            .check_file(file.as_fd(), parent, "truncation of")?;
        (self.confirm)()?;
        // O_NONBLOCK: a leased file's open would wait for the lease break (truncate(2)
        // itself calls break_lease too); that wait is a worker's.
        let writable = match reopen(file.as_fd(), libc::O_WRONLY | libc::O_NONBLOCK) {
            Ok(w) => w,
            Err(e) if would_block(e) => {
                return Ok(FileAnswer::Later(Blocking::Truncate { file, len }))
            }
            Err(e) => {
                self.guard
                    .kernel_on_file(e, file.as_fd(), Access::Write, "truncation of");
                return Err(e);
            }
        };
        rustix::fs::ftruncate(&writable, len).map_err(errno)?;
        Ok(FileAnswer::Done(Ok(0)))
    }

    /// Rename between pinned parents unless a side is protected: the move of a protected
    /// path, its replacement, or a rename that makes one.
    fn rename(
        &mut self,
        old_dir: i32,
        old: u64,
        new_dir: i32,
        new: u64,
        flags: u32,
    ) -> Result<(), i32> {
        let _held = hold(self.names, true)?;
        let from = self.locate(old_dir, old)?;
        let to = self.locate(new_dir, new)?;
        let exchange = flags & libc::RENAME_EXCHANGE != 0;
        for (entry, verb) in [
            (&from, "rename of"),
            (&to, if exchange { "rename of" } else { "rename onto" }),
        ] {
            if entry.name == b"." || entry.name == b".." {
                continue;
            }
            self.guard.check_entry(entry, Access::Write, verb)?;
            let path = entry_path(entry)?;
            self.guard.check_holder(&path, verb)?;
            self.guard.check_on_the_way(entry, verb)?;
            self.guard.check_widened_holder(&path, verb)?;
        }
        (self.confirm)()?;
        if self.guard.rename_git(&from, &to, flags)? {
            return Ok(());
        }
        sys::renameat2(
            from.parent.as_fd(),
            &name_of(&from),
            to.parent.as_fd(),
            &name_of(&to),
            flags,
        )
        .inspect_err(|&e| {
            // Landlock refuses a rename whichever side it may not write: the new name
            // first, since that is where the write lands.
            let to_access = if exchange {
                Access::Write
            } else {
                Access::Create
            };
            if !self.guard.kernel_on_entry(e, &to, to_access, "rename onto") {
                self.guard
                    .kernel_on_entry(e, &from, Access::Write, "rename of");
            }
        })
    }
}

/// Run `make` with the caller's umask, as the kernel would apply it to the caller's own
/// call. Each serving thread has a umask of its own (`unshare(CLONE_FS)`), and a worker
/// only reopens a pinned file, so switching it touches no other call.
fn with_caller_umask<T>(caller: &Caller, make: impl FnOnce() -> T) -> Result<T, i32> {
    let mask = caller.umask()?;
    let old = sys::set_umask(mask);
    let out = make();
    sys::set_umask(old);
    Ok(out)
}

#[cfg(test)]
#[path = "file_calls_tests.rs"]
mod tests;
