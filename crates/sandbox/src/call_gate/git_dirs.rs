//! Repositories the cage makes: their config and hooks, guarded as git reads them.
//!
//! Only the git directories found at launch are protected paths. A cage that runs `git
//! init sub`, writes `core.fsmonitor` into `sub/.git/config` and `git add sub` would have
//! the owner's next uncaged `git status` run its command; so would a hook it leaves in
//! `sub/.git/hooks`. Every file call that makes or renames a name passes through the
//! supervisor, and every one that can change these rules' state holds its lock on names
//! exclusively (`file_calls::Held`), so the supervisor can keep, for every directory git
//! would take for a git directory, the rule that its config is only ever one it has
//! read:
//!
//! - a directory is *git-like* when it holds an entry `HEAD`, or both `objects` and
//!   `refs` (git's `is_git_directory` wants `HEAD` in the git directory and the other two
//!   in its common directory; this is a superset of both);
//! - in a git-like directory, `config` and `config.worktree` are never opened for writing,
//!   truncated, linked, made or exchanged; a rename onto one (git's and libgit2's
//!   `config.lock`) is answered by reading the source, admitting it with
//!   `jaula_policy::git_config::admit`, and installing the admitted bytes as a new file of
//!   the supervisor's own, so that no descriptor or hard link the caller kept can change
//!   it afterwards;
//! - in its `hooks` directory no name but a `*.sample` (git init's templates) is made,
//!   written or renamed onto; `hooks` itself is only ever made by `mkdir`;
//! - the call that makes a directory git-like (an entry `HEAD`, `objects` or `refs`)
//!   first admits and reinstalls the config files already there and refuses when `hooks`
//!   holds anything but samples: a config written first, with its descriptor kept, is not
//!   the one installed.
//!
//! A rebase the cage leaves stopped is carried on by the owner's `git rebase --continue`,
//! uncaged, from the state git keeps in the git directory:
//!
//! - its todo list (`rebase-merge/git-rebase-todo`, and `sequencer/todo` of cherry-pick
//!   and revert) is only installed by rename, admitted line by line
//!   (`jaula_policy::git_todo::admit`: no `exec` line), as a config is; git writes it
//!   through `git-rebase-todo.lock`; `rebase-merge` and `sequencer` are only made by
//!   `mkdir`, and the todo lists in a directory becoming git-like are admitted first;
//! - its merge strategy (`rebase-merge/strategy`, written in place by git) makes git run
//!   `git-merge-<strategy>`, a path relative to the worktree's top when the name holds a
//!   slash (`../../x` runs `git-merge-../../x`, that is `./x`, once a directory
//!   `git-merge-..` stands there). So no directory, symlink or node named `git-merge-*` is
//!   made anywhere; a strategy without a slash is looked up on the owner's `PATH`.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

/// The config files git reads from a git directory.
const CONFIG_NAMES: [&[u8]; 2] = [b"config", b"config.worktree"];
/// The entries whose making turns a directory into a git directory.
const MARKERS: [&[u8]; 3] = [b"HEAD", b"objects", b"refs"];
/// The largest config (or todo list) the supervisor reads; git writes a few hundred
/// bytes of config, and a todo list a line per commit.
const CONFIG_LIMIT: u64 = 1 << 20;
/// The directories of a git directory that hold a stopped rebase's or cherry-pick's state,
/// each with the name of its todo list.
const TODO_LISTS: [(&str, &[u8]); 2] =
    [("rebase-merge", b"git-rebase-todo"), ("sequencer", b"todo")];
/// The prefix of the program git runs for a merge strategy.
const STRATEGY_PREFIX: &[u8] = b"git-merge-";

/// What a call makes at a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Made {
    /// A regular file (made by an open, or a regular file renamed).
    File,
    Directory,
    /// A symlink, a node, a hard link, another rename's new name: anything but the two
    /// above.
    Other,
}

/// What the supervisor must do before a name is made or renamed onto.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Plan {
    /// Nothing of git's.
    Go,
    /// Refuse with this reason.
    Refuse(String),
    /// A rename onto a git directory's config: admit and install the source instead.
    Install,
    /// The call makes the directory git-like: admit what it holds first.
    Admit,
    /// An open that creates a git directory's missing config (libgit2 makes it empty
    /// before it installs one through `config.lock`): made empty, and handed to the caller
    /// read-only, so that nothing is written through it.
    CreateEmpty,
}

/// Whether making or removing a name `name` can change what git-rule checks of other
/// calls rest on (whether a directory is git-like, its config, hooks and rebase state):
/// such calls hold the supervisor's lock on names exclusively (`file_calls::Held`).
pub(super) fn is_git_state_name(name: &[u8]) -> bool {
    MARKERS.contains(&name)
        || CONFIG_NAMES.contains(&name)
        || name == b"hooks"
        || name == b".git"
        || is_state_dir_name(name)
        || TODO_LISTS.iter().any(|(_, list)| *list == name)
        || name.starts_with(STRATEGY_PREFIX)
}

fn exists(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    // Anything but a clean "not there" counts as there: the stricter answer.
    !matches!(
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW),
        Err(rustix::io::Errno::NOENT)
    )
}

/// Whether git could take `dir` for a git directory (or a common directory).
pub(super) fn is_git_like(dir: BorrowedFd<'_>) -> bool {
    exists(dir, b"HEAD") || (exists(dir, b"objects") && exists(dir, b"refs"))
}

/// Whether `dir` is the entry `name` of its parent, and that parent is git-like: the
/// directory reached by `..` still holds `dir` under that name (not a directory moved
/// away, or reached through another path).
fn is_named_in_git_dir(dir: BorrowedFd<'_>, name: &OsStr) -> Result<bool, i32> {
    let up = rustix::fs::openat(
        dir,
        "..",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)?;
    let here = rustix::fs::fstat(dir).map_err(errno)?;
    let named = match rustix::fs::statat(&up, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(e) => return Err(errno(e)),
    };
    Ok((named.st_dev, named.st_ino) == (here.st_dev, here.st_ino) && is_git_like(up.as_fd()))
}

/// Whether `dir` (whose path is `path`) is the `hooks` directory of a git-like directory.
fn is_hooks_dir(dir: BorrowedFd<'_>, path: &Path) -> Result<bool, i32> {
    if path.file_name() != Some(OsStr::new("hooks")) {
        return Ok(false);
    }
    is_named_in_git_dir(dir, OsStr::new("hooks"))
}

fn is_hook_name(name: &[u8]) -> bool {
    !name.ends_with(b".sample")
}

fn is_state_dir_name(name: &[u8]) -> bool {
    TODO_LISTS.iter().any(|(dir, _)| dir.as_bytes() == name)
}

/// Whether `name` in `dir` (whose path is `dir_path`) is a todo list of a git-like
/// directory: `git-rebase-todo` in its `rebase-merge`, `todo` in its `sequencer`.
fn is_todo_list(dir: BorrowedFd<'_>, dir_path: &Path, name: &[u8]) -> Result<bool, i32> {
    let Some(dir_name) = dir_path.file_name() else {
        return Ok(false);
    };
    if !TODO_LISTS
        .iter()
        .any(|(d, todo)| OsStr::new(d) == dir_name && *todo == name)
    {
        return Ok(false);
    }
    is_named_in_git_dir(dir, dir_name)
}

const TODO_BY_RENAME: &str =
    "a todo list of a git directory is installed only by renaming one jaula has read onto it";

/// The plan for making `name` (as `made`) in `dir`, whose path is `dir_path`.
pub(super) fn plan_new(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &[u8],
    made: Made,
    rename: bool,
) -> Result<Plan, i32> {
    if name == b"." || name == b".." {
        return Ok(Plan::Go);
    }
    if is_hook_name(name) && is_hooks_dir(dir, dir_path)? {
        return Ok(Plan::Refuse(format!(
            "{} is a git hook of a repository, which the owner's git would run",
            String::from_utf8_lossy(name)
        )));
    }
    if name.starts_with(STRATEGY_PREFIX) && made != Made::File {
        return Ok(Plan::Refuse(format!(
            "a directory, link or node named {} would let a stopped rebase's merge strategy \
             run a program of the cage's (git runs git-merge-<strategy> from the worktree's top)",
            String::from_utf8_lossy(name)
        )));
    }
    if is_todo_list(dir, dir_path, name)? {
        return Ok(if rename && made != Made::Directory {
            Plan::Install
        } else {
            Plan::Refuse(TODO_BY_RENAME.into())
        });
    }
    if is_state_dir_name(name) && (made != Made::Directory || rename) && is_git_like(dir) {
        return Ok(Plan::Refuse(format!(
            "{} of a git directory is only made empty, by mkdir",
            String::from_utf8_lossy(name)
        )));
    }
    if CONFIG_NAMES.contains(&name) {
        if !is_git_like(dir) {
            return Ok(Plan::Go);
        }
        return Ok(if rename && made != Made::Directory {
            Plan::Install
        } else if made == Made::File && !rename {
            Plan::CreateEmpty
        } else {
            Plan::Refuse(format!(
                "{} of a git directory is installed only by renaming a config jaula has read onto it",
                String::from_utf8_lossy(name)
            ))
        });
    }
    if name == b"hooks" && (made != Made::Directory || rename) && is_git_like(dir) {
        return Ok(Plan::Refuse(
            "the hooks directory of a git directory is only made empty, by mkdir".into(),
        ));
    }
    if MARKERS.contains(&name) && !is_git_like(dir) {
        let has = |n: &[u8]| n == name || exists(dir, n);
        if has(b"HEAD") || (has(b"objects") && has(b"refs")) {
            return Ok(Plan::Admit);
        }
    }
    Ok(Plan::Go)
}

/// Why writing to (truncating, linking, exchanging) the existing `name` in `dir` is
/// refused, if it is: a git directory's config, or a hook.
pub(super) fn refuse_write(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &[u8],
) -> Result<Option<String>, i32> {
    if CONFIG_NAMES.contains(&name) && is_git_like(dir) {
        return Ok(Some(format!(
            "{} of a git directory is installed only by renaming a config jaula has read onto it",
            String::from_utf8_lossy(name)
        )));
    }
    if name == b"hooks" && is_git_like(dir) {
        return Ok(Some("it is the hooks directory of a git directory".into()));
    }
    if is_state_dir_name(name) && is_git_like(dir) {
        return Ok(Some(format!(
            "it is the {} state directory of a git directory",
            String::from_utf8_lossy(name)
        )));
    }
    if is_todo_list(dir, dir_path, name)? {
        return Ok(Some(TODO_BY_RENAME.into()));
    }
    if is_hook_name(name) && is_hooks_dir(dir, dir_path)? {
        return Ok(Some(format!(
            "{} is a git hook of a repository, which the owner's git would run",
            String::from_utf8_lossy(name)
        )));
    }
    Ok(None)
}

/// The directory holding the found `file` at `path`, and its name there, when `file` is
/// that name now (a file reached through a procfs link has no `parent` of the caller's).
pub(super) fn holder(
    file: BorrowedFd<'_>,
    parent: Option<BorrowedFd<'_>>,
    path: &Path,
) -> Result<Option<(OwnedFd, PathBuf, Vec<u8>)>, i32> {
    let (Some(dir_path), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(None);
    };
    let name = name.as_bytes().to_vec();
    // Only the names git reads need the directory at all: the common case costs nothing.
    let wanted = CONFIG_NAMES.contains(&name.as_slice())
        || name == b"hooks"
        || is_state_dir_name(&name)
        || dir_path.file_name() == Some(OsStr::new("hooks"))
        || TODO_LISTS
            .iter()
            .any(|(d, todo)| dir_path.file_name() == Some(OsStr::new(d)) && *todo == name);
    if !wanted {
        return Ok(None);
    }
    let dir = match parent {
        Some(p) => rustix::fs::openat(
            p,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ),
        None => rustix::fs::open(
            dir_path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ),
    }
    .map_err(errno)?;
    let here = rustix::fs::fstat(file).map_err(errno)?;
    match rustix::fs::statat(&dir, name.as_slice(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) if (s.st_dev, s.st_ino) == (here.st_dev, here.st_ino) => {
            Ok(Some((dir, dir_path.to_path_buf(), name)))
        }
        _ => Ok(None),
    }
}

/// Read a regular file's bytes, at most [`CONFIG_LIMIT`]; `Err` names why not.
fn read_config(file: OwnedFd) -> Result<(Vec<u8>, u32), String> {
    let st = rustix::fs::fstat(&file).map_err(|e| e.to_string())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("it is not a regular file".into());
    }
    let mut bytes = Vec::new();
    std::fs::File::from(file)
        .take(CONFIG_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > CONFIG_LIMIT {
        return Err("it is larger than jaula reads".into());
    }
    Ok((bytes, st.st_mode & 0o666))
}

fn open_read(dir: BorrowedFd<'_>, name: &[u8]) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The config the caller renames onto `name` in the git-like `dir` (whose path is
/// `dir_path`), from `source_name` in `source_dir`: admitted against the file it replaces,
/// written as a new file, renamed over `name`, and the source name removed. `Err(Ok(_))`
/// is a refusal with its reason, `Err(Err(errno))` a failure.
pub(super) fn install(
    source_dir: BorrowedFd<'_>,
    source_name: &[u8],
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &[u8],
    worktree: jaula_policy::git_config::WorktreeJudge<'_>,
) -> Result<(), Result<String, i32>> {
    let source = match open_read(source_dir, source_name) {
        Ok(f) => f,
        Err(rustix::io::Errno::LOOP) => return Err(Ok("the source is a symbolic link".into())),
        Err(e) => return Err(Err(errno(e))),
    };
    let source_id = rustix::fs::fstat(&source).map_err(|e| Err(errno(e)))?;
    let current = match open_read(dir, name) {
        Ok(f) => {
            let st = rustix::fs::fstat(&f).map_err(|e| Err(errno(e)))?;
            if (st.st_dev, st.st_ino) == (source_id.st_dev, source_id.st_ino) {
                // A rename of a file onto itself changes nothing.
                return Ok(());
            }
            read_config(f).ok().map(|(bytes, _)| bytes)
        }
        Err(_) => None,
    };
    let (bytes, mode) = read_config(source).map_err(Ok)?;
    if CONFIG_NAMES.contains(&name) {
        jaula_policy::git_config::admit(&bytes, current.as_deref(), dir_path, worktree)
            .map_err(|refusal| Ok(refusal.to_string()))?;
    } else {
        // `plan_new` answers `Install` for a config or a todo list only.
        jaula_policy::git_todo::admit(&bytes).map_err(|refusal| Ok(refusal.to_string()))?;
    }
    write_fresh(dir, name, &bytes, mode).map_err(Err)?;
    rustix::fs::unlinkat(source_dir, source_name, AtFlags::empty()).map_err(|e| Err(errno(e)))
}

/// Before `dir` (at `dir_path`) becomes git-like: admit its config files as new ones
/// (nothing the caller kept open on them may write the installed file) and refuse when
/// `hooks` holds a hook.
pub(super) fn admit_new_git_dir(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    worktree: jaula_policy::git_config::WorktreeJudge<'_>,
) -> Result<(), Result<String, i32>> {
    for name in CONFIG_NAMES {
        let shown = String::from_utf8_lossy(name);
        let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => s,
            Err(rustix::io::Errno::NOENT) => continue,
            Err(e) => return Err(Err(errno(e))),
        };
        match st.st_mode & libc::S_IFMT {
            // git cannot read a directory as its config.
            libc::S_IFDIR => continue,
            libc::S_IFREG => {}
            _ => {
                return Err(Ok(format!(
                    "{shown} of the new git directory is not a regular file"
                )))
            }
        }
        let file = open_read(dir, name).map_err(|e| Err(errno(e)))?;
        let (bytes, mode) = read_config(file).map_err(|why| Ok(format!("{shown}: {why}")))?;
        jaula_policy::git_config::admit(&bytes, None, dir_path, worktree)
            .map_err(|refusal| Ok(refusal.to_string()))?;
        write_fresh(dir, name, &bytes, mode).map_err(Err)?;
    }
    for (state, todo) in TODO_LISTS {
        admit_new_todo_list(dir, state, todo)?;
    }
    let hooks = match rustix::fs::openat(
        dir,
        "hooks",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(h) => h,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(rustix::io::Errno::NOTDIR) => {
            // A plain file named hooks runs nothing; a symbolic link might lead to hooks.
            let st = rustix::fs::statat(dir, "hooks", AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| Err(errno(e)))?;
            if st.st_mode & libc::S_IFMT == libc::S_IFREG {
                return Ok(());
            }
            return Err(Ok(
                "hooks of the new git directory is not a directory (a symbolic link, a node)"
                    .into(),
            ));
        }
        Err(rustix::io::Errno::LOOP) => {
            return Err(Ok(
                "hooks of the new git directory is a symbolic link".into()
            ))
        }
        Err(e) => return Err(Err(errno(e))),
    };
    let entries = rustix::fs::Dir::read_from(&hooks).map_err(|e| Err(errno(e)))?;
    for entry in entries {
        let entry = entry.map_err(|e| Err(errno(e)))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." || !is_hook_name(name) {
            continue;
        }
        return Err(Ok(format!(
            "hooks/{} of the new git directory is a git hook, which the owner's git would run",
            String::from_utf8_lossy(name)
        )));
    }
    Ok(())
}

/// Before `dir` becomes git-like: admit the todo list `todo` in its `state` directory, if
/// there is one, and reinstall it as a new file (as a config is).
fn admit_new_todo_list(
    dir: BorrowedFd<'_>,
    state: &str,
    todo: &[u8],
) -> Result<(), Result<String, i32>> {
    let shown = format!("{state}/{}", String::from_utf8_lossy(todo));
    let held = match rustix::fs::openat(
        dir,
        state,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(h) => h,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(rustix::io::Errno::NOTDIR) => {
            let st = rustix::fs::statat(dir, state, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| Err(errno(e)))?;
            if st.st_mode & libc::S_IFMT == libc::S_IFREG {
                return Ok(());
            }
            return Err(Ok(format!(
                "{state} of the new git directory is not a directory (a symbolic link, a node)"
            )));
        }
        Err(rustix::io::Errno::LOOP) => {
            return Err(Ok(format!(
                "{state} of the new git directory is a symbolic link"
            )))
        }
        Err(e) => return Err(Err(errno(e))),
    };
    let st = match rustix::fs::statat(&held, todo, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(Err(errno(e))),
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Ok(format!(
            "{shown} of the new git directory is not a regular file"
        )));
    }
    let file = open_read(held.as_fd(), todo).map_err(|e| Err(errno(e)))?;
    let (bytes, mode) = read_config(file).map_err(|why| Ok(format!("{shown}: {why}")))?;
    jaula_policy::git_todo::admit(&bytes).map_err(|refusal| Ok(format!("{shown}: {refusal}")))?;
    write_fresh(held.as_fd(), todo, &bytes, mode).map_err(Err)
}

/// Where a `core.worktree` a cage sets may lead: only the shape `git submodule add` (and
/// `git clone --separate-git-dir` into a submodule) makes, judged physically, as git
/// resolves the value. The git directory lies beneath a `modules` directory of a git-like
/// directory; the worktree, resolved through every symlink, holds a `.git` file naming
/// that very git directory; and the policy lets a checkout write there (inside a writable
/// root, meeting no protected or sealed path). Anything else (a worktree that is the
/// launch repo's `.git`, the home through a symlink, `~/.config`) would have the owner's
/// next checkout write what the cage committed where the cage may not write.
pub(super) fn judge_worktree(
    policy: &jaula_policy::Policy,
    git_dir: &Path,
    joined: &Path,
) -> Result<(), String> {
    let real_git_dir = std::fs::canonicalize(git_dir)
        .map_err(|e| format!("whose git directory does not resolve ({e})"))?;
    let under_modules = real_git_dir.ancestors().skip(1).any(|a| {
        a.file_name() == Some(OsStr::new("modules"))
            && a.parent().is_some_and(|holder| {
                rustix::fs::open(
                    holder,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .is_ok_and(|fd| is_git_like(fd.as_fd()))
            })
    });
    if !under_modules {
        return Err("which only a submodule's git directory may set".into());
    }
    let place =
        std::fs::canonicalize(joined).map_err(|e| format!("which does not resolve ({e})"))?;
    let pointer = place.join(".git");
    let is_file = std::fs::symlink_metadata(&pointer).is_ok_and(|m| m.file_type().is_file());
    let names_back = is_file
        && std::fs::read_to_string(&pointer).is_ok_and(|text| {
            text.lines()
                .next()
                .and_then(|l| l.strip_prefix("gitdir:"))
                .map(|named| place.join(named.trim()))
                .and_then(|named| std::fs::canonicalize(named).ok())
                .is_some_and(|named| named == real_git_dir)
        });
    if !names_back {
        return Err(format!(
            "whose .git file does not name this git directory ({})",
            place.display()
        ));
    }
    policy.judge_worktree_place(&place)
}

/// Write `bytes` as a new file of the supervisor's own in `dir` and rename it over `name`.
fn write_fresh(dir: BorrowedFd<'_>, name: &[u8], bytes: &[u8], mode: u32) -> Result<(), i32> {
    use std::hash::BuildHasher;
    let mut made = None;
    for attempt in 0u32..8 {
        let token = std::collections::hash_map::RandomState::new().hash_one(attempt);
        let mut temp = b".jaula-".to_vec();
        temp.extend_from_slice(name);
        temp.extend_from_slice(format!("-{token:016x}").as_bytes());
        match rustix::fs::openat(
            dir,
            temp.as_slice(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        ) {
            Ok(f) => {
                made = Some((f, temp));
                break;
            }
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(errno(e)),
        }
    }
    let Some((file, temp)) = made else {
        return Err(libc::EEXIST);
    };
    let written = rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
        .map_err(errno)
        .and_then(|()| {
            std::fs::File::from(file)
                .write_all(bytes)
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
        })
        .and_then(|()| rustix::fs::renameat(dir, temp.as_slice(), dir, name).map_err(errno));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_slice(), AtFlags::empty());
    }
    written
}

fn errno(e: rustix::io::Errno) -> i32 {
    e.raw_os_error()
}

#[cfg(test)]
#[path = "git_dirs_tests.rs"]
mod tests;
