//! Path helpers: `~` expansion, lenient canonicalisation and component-wise containment.
//!
//! Every comparison in jaula goes through [`is_within`], which compares whole components
//! (`/home/a` is not inside `/home/ab`), and every declared path goes through
//! [`canonicalize_lenient`] first, so a symlink cannot make a sealed root look like an
//! unsealed one.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::host_fs::{HostFs, RealHostFs};

/// Expand a leading `~` or `~/` against `home`. Other `~user` forms are left as they are:
/// jaula never looks up another user's home.
pub fn expand_tilde(path: &Path, home: &Path) -> PathBuf {
    let mut components = path.components();
    match components.next() {
        Some(Component::Normal(first)) if first == "~" => {
            let mut out = home.to_path_buf();
            out.extend(components);
            out
        }
        _ => path.to_path_buf(),
    }
}

/// Normalise an absolute path lexically: drop `.` components, apply `..` by popping, drop
/// trailing slashes. Only sound on paths whose symlinks are already resolved; callers that
/// hold an unresolved path use [`canonicalize_lenient`] instead.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Resolve `path` to an absolute, symlink-free path, even when its tail does not exist.
///
/// The longest existing prefix is resolved as `realpath` would resolve it; the missing
/// rest is appended lexically. This is what a seal needs: `~/.aws` must name the same
/// place whether or not the owner has created it yet, and a symlinked `~/.config` must
/// seal its target. A relative path is taken relative to `base` (the caller's working
/// directory). Inside a policy resolution, prefixes resolved once are not asked again
/// (see `resolve.rs`).
pub fn canonicalize_lenient(path: &Path, base: &Path) -> PathBuf {
    canonicalize_lenient_on(path, base, &RealHostFs)
}

/// [`canonicalize_lenient`], asking `fs` what each prefix is.
pub fn canonicalize_lenient_on<F: HostFs + ?Sized>(path: &Path, base: &Path, fs: &F) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let absolute = normalize_lexically(&absolute);
    if absolute.is_absolute() {
        return crate::host_fs::resolve::lenient(&absolute, fs);
    }
    // A relative base (never jaula's own use): the kernel resolves against the process's
    // working directory (a host without one fails every prefix: the path as written).
    let mut missing: Vec<OsString> = Vec::new();
    let mut cursor = absolute.as_path();
    loop {
        if let Ok(real) = fs.canonicalize(cursor) {
            let mut out = real;
            for name in missing.iter().rev() {
                out.push(name);
            }
            return out;
        }
        match (cursor.parent(), cursor.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                cursor = parent;
            }
            _ => return absolute,
        }
    }
}

/// Whether `path` equals `root` or lies beneath it, compared component by component.
pub fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// Render `path` for people: `~/...` when it lies inside `home`, absolute otherwise.
pub fn display_with_tilde(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
