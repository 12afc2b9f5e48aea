//! Symlink resolution one component at a time, remembering every resolved prefix.
//!
//! A policy names some hundred paths under a handful of directories (the home, the repo,
//! the state home). glibc's `realpath` resolves each from `/` again, one `readlink` per
//! component, and the lenient fallback repeats that for every shorter prefix of an absent
//! path: about 750 `readlink` calls per launch on a real home. This walker asks the
//! host ([`HostFs::read_link`], the kernel for [`crate::RealHostFs`]) once per distinct
//! prefix (one `readlink`, which answers "not a link" with `EINVAL`, "absent" with
//! `ENOENT`/`ENOTDIR`) and answers every later path below it from a cache. Its answers are exactly `std::fs::canonicalize`'s (glibc `realpath`): the
//! unit tests hold it to that oracle over generated trees.
//!
//! The cache is only valid while the filesystem holds still, so it lives for one policy
//! resolution ([`with_cache`]) and is dropped with it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::host_fs::HostFs;

/// glibc's `__eloop_threshold()` (`MAXSYMLINKS`, 40): more links in one resolution fail
/// with `ELOOP`, which is what makes a loop end.
const MAX_LINKS: u32 = 40;

/// A resolved prefix: its symlink-free path and how many links it took to get there
/// (counted against [`MAX_LINKS`] as `realpath` counts them, per whole path).
#[derive(Clone)]
struct Resolved {
    path: PathBuf,
    links: u32,
}

/// Lexical absolute prefix → its resolution, or `None` when it does not resolve.
type Cache = HashMap<PathBuf, Option<Resolved>>;

/// Path → what `readlink` said of it: `Some(target)` for a link, `None` for anything else
/// (not a link, absent, unreadable). [`read_link`]'s memory: the protected paths' walk
/// (`protect.rs`, which also records every link it meets) asks the same prefixes of the
/// home again for each of some sixty targets.
type Links = HashMap<PathBuf, Option<PathBuf>>;

thread_local! {
    static CACHE: RefCell<Option<Cache>> = const { RefCell::new(None) };
    static LINKS: RefCell<Option<Links>> = const { RefCell::new(None) };
}

/// Run `f` with a resolution cache shared by every [`lenient`] call it makes, on this
/// thread. Nested calls share the outer cache. The cache is gone when `f` returns (or
/// unwinds), so no later call sees a stale answer.
pub(crate) fn with_cache<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            if self.0 {
                CACHE.with(|c| *c.borrow_mut() = None);
                LINKS.with(|c| *c.borrow_mut() = None);
            }
        }
    }
    let installed = CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.is_some() {
            false
        } else {
            *cache = Some(Cache::new());
            LINKS.with(|l| *l.borrow_mut() = Some(Links::new()));
            true
        }
    });
    let _reset = Reset(installed);
    f()
}

/// Resolve the lexically normalised absolute `path`: the longest prefix that resolves,
/// symlink-free, with the rest appended as written. This is `canonicalize_lenient`'s
/// contract; the caller has already normalised the path. Inside [`with_cache`] the
/// answers are remembered whatever `fs` asks them: one resolution asks one host.
pub(crate) fn lenient<F: HostFs + ?Sized>(path: &Path, fs: &F) -> PathBuf {
    CACHE.with(|c| match c.borrow_mut().as_mut() {
        Some(cache) => lenient_with(path, cache, fs),
        None => lenient_with(path, &mut Cache::new(), fs),
    })
}

/// `fs.read_link(path).ok()`, asked once per path inside [`with_cache`] (the same one
/// filesystem view as the prefixes above), every time outside.
pub(crate) fn read_link<F: HostFs + ?Sized>(path: &Path, fs: &F) -> Option<PathBuf> {
    LINKS.with(|l| match l.borrow_mut().as_mut() {
        Some(links) => links
            .entry(path.to_path_buf())
            .or_insert_with(|| fs.read_link(path).ok())
            .clone(),
        None => fs.read_link(path).ok(),
    })
}

/// `realpath(path)` for an absolute `path`, from `fs`'s answers, uncached: the walk of a
/// link's target text from `/`, with the same directory checks (a trailing `/`, `.` or
/// `..` after a file fails).
pub(crate) fn realpath<F: HostFs + ?Sized>(path: &Path, fs: &F) -> io::Result<PathBuf> {
    let root = Resolved {
        path: PathBuf::from("/"),
        links: 0,
    };
    Ok(follow(root, path.as_os_str().as_bytes(), fs)?.path)
}

fn lenient_with<F: HostFs + ?Sized>(path: &Path, cache: &mut Cache, fs: &F) -> PathBuf {
    let names: Vec<&OsStr> = normal_names(path);
    let mut current = Resolved {
        path: PathBuf::from("/"),
        links: 0,
    };
    let mut prefix = PathBuf::from("/");
    for (i, name) in names.iter().enumerate() {
        prefix.push(name);
        let next = match cache.get(&prefix) {
            Some(known) => known.clone(),
            None => {
                let found = step(&current, name, fs).ok();
                cache.insert(prefix.clone(), found.clone());
                found
            }
        };
        match next {
            Some(resolved) => current = resolved,
            None => {
                let mut out = current.path;
                out.extend(&names[i..]);
                return out;
            }
        }
    }
    current.path
}

/// The normal components of an absolute, lexically normalised path.
fn normal_names(path: &Path) -> Vec<&OsStr> {
    path.components()
        .filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect()
}

/// Resolve `name` inside the resolved directory `dir`, following it if it is a link.
fn step<F: HostFs + ?Sized>(dir: &Resolved, name: &OsStr, fs: &F) -> io::Result<Resolved> {
    let candidate = dir.path.join(name);
    match fs.read_link(&candidate) {
        Ok(target) => {
            let links = dir.links + 1;
            if links > MAX_LINKS {
                return Err(io::Error::other("too many levels of symbolic links"));
            }
            let start = Resolved {
                path: dir.path.clone(),
                links,
            };
            follow(start, target.as_os_str().as_bytes(), fs)
        }
        // EINVAL: it exists and is not a link. Anything else (ENOENT, ENOTDIR, EACCES):
        // it does not resolve, as realpath would fail on it.
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(Resolved {
            path: candidate,
            links: dir.links,
        }),
        Err(e) => Err(e),
    }
}

/// Walk a link's target text from `from` (the link's own directory). Parsed by hand,
/// not with `Path::components`, because `realpath` treats `x/.` and a trailing `x/` as
/// "x must be a directory", which `components` would silently drop.
fn follow<F: HostFs + ?Sized>(from: Resolved, target: &[u8], fs: &F) -> io::Result<Resolved> {
    let mut current = if target.first() == Some(&b'/') {
        Resolved {
            path: PathBuf::from("/"),
            links: from.links,
        }
    } else {
        from
    };
    let parts: Vec<&[u8]> = target.split(|b| *b == b'/').collect();
    for (i, part) in parts.iter().enumerate() {
        match *part {
            b"" | b"." => {}
            b".." => {
                current.path.pop();
            }
            name => {
                current = step(&current, OsStr::from_bytes(name), fs)?;
                if needs_directory(&parts[i + 1..]) && !fs.is_dir(&current.path) {
                    return Err(io::Error::other("not a directory"));
                }
            }
        }
    }
    Ok(current)
}

/// Whether what follows a component in a link target makes `realpath` check that the
/// component is a directory: nothing but slashes, or a `.`/`..` next (glibc's
/// `suffix_requires_dir_check`). A normal next component needs no check: looking it up
/// beneath a non-directory fails by itself.
fn needs_directory(rest: &[&[u8]]) -> bool {
    if rest.is_empty() {
        return false;
    }
    match rest.iter().find(|p| !p.is_empty()) {
        None => true,
        Some(next) => *next == b"." || *next == b"..",
    }
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
