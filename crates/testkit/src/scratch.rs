//! Scratch trees: under the build's target directory, never `/tmp`.
//!
//! A live test proves the cage by what it refuses outside its writable roots, so a scratch
//! tree must lie outside every cage's: a checkout beneath `/tmp` or `/var/tmp` (writable in
//! every Linux cage) puts `target/` there, and every "the cage refused a write outside"
//! would read as a leak. There the suite stops at its first scratch tree, with one message
//! that says why and what to do ([`stop_unless_provable`]).

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use jaula_policy::defaults::system_writable_for;
use jaula_policy::Platform;

/// The exit status of a test process stopped by [`stop_unless_provable`].
pub const UNPROVABLE_EXIT: i32 = 2;

/// The writable roots every cage on this platform has (`/tmp`, `/var/tmp`, `/dev`,
/// `/run/user` on Linux; their `/private` paths on macOS), from jaula's own defaults.
pub fn cage_wide_roots() -> Vec<PathBuf> {
    let platform = if cfg!(target_os = "macos") {
        Platform::MacOs
    } else {
        Platform::Linux
    };
    system_writable_for(platform)
        .iter()
        .map(|root| fs::canonicalize(root).unwrap_or_else(|_| PathBuf::from(root)))
        .collect()
}

/// The cage-wide writable root `path` (canonical) lies beneath, if any; by component, so
/// `/tmpfs` is not beneath `/tmp`.
pub fn cage_wide_root_above(path: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    roots.iter().find(|root| path.starts_with(root)).cloned()
}

/// `path` made canonical as far as it exists, the rest appended as given: where it would
/// be, without creating it.
fn canonical_as_far_as_exists(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    for dir in path.ancestors() {
        if let Ok(real) = fs::canonicalize(dir) {
            return rest
                .iter()
                .rev()
                .fold(real, |acc, c: &Component| acc.join(c));
        }
        if let Some(last) = dir.components().next_back() {
            rest.push(last);
        }
    }
    path.to_path_buf()
}

/// Why the suite cannot prove the cage with scratch trees under `base`, and the remedy; or
/// `None` where it can.
pub fn unprovable_reason(base: &Path) -> Option<String> {
    let roots = cage_wide_roots();
    let base = canonical_as_far_as_exists(base);
    let root = cage_wide_root_above(&base, &roots)?;
    let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    Some(format!(
        "jaula's live tests cannot prove the cage from this checkout: their scratch trees \
         would be under {}, beneath {}, which every cage may write, so each write a cage \
         must refuse outside its writable roots would succeed there and fail the test as \
         if the cage leaked. The suite stops here instead. Remedy: clone jaula outside {} \
         (for example under /root or /srv), or point CARGO_TARGET_DIR at a directory \
         outside them.",
        base.display(),
        root.display(),
        names.join(", ")
    ))
}

/// Stop the whole test process, with one message on stderr naming the reason and the
/// remedy, when scratch trees under `base` would lie beneath a writable root of every
/// cage. The message goes to the real stderr (the harness captures only `eprintln!`) and
/// is written once, however many tests get here at the same time: the others wait for
/// the exit.
pub fn stop_unless_provable(base: &Path) {
    let Some(reason) = unprovable_reason(base) else {
        return;
    };
    static STOP: std::sync::Once = std::sync::Once::new();
    STOP.call_once(|| {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "\n{reason}\n");
        let _ = err.flush();
        std::process::exit(UNPROVABLE_EXIT);
    });
}

/// A fresh directory named `prefix…` under `base` (a test crate's `CARGO_TARGET_TMPDIR`;
/// see [`crate::scratch!`]), with its canonical path: the cage resolves paths canonically,
/// so a test must name them the same way. Removed when the `TempDir` drops. Stops the test
/// process first where `base` lies beneath a writable root of every cage
/// ([`stop_unless_provable`]).
pub fn scratch_in(base: &Path, prefix: &str) -> (tempfile::TempDir, PathBuf) {
    stop_unless_provable(base);
    fs::create_dir_all(base).unwrap();
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// Make every directory from `/` down to `path` searchable by others, so an unprivileged
/// cage is not refused by plain permissions (which would make a live matrix prove nothing).
/// Only directories inside `target` (the build's target directory) may be changed: a
/// closed directory above it fails the test rather than being opened.
pub fn open_to_others(path: &Path, target: &Path) {
    let target = fs::canonicalize(target).unwrap();
    for dir in path.ancestors().skip(1) {
        let meta = fs::metadata(dir).unwrap();
        if meta.mode() & 0o001 != 0 {
            continue;
        }
        assert!(
            dir.starts_with(&target),
            "{} is not searchable by others; an unprivileged uid cannot reach the scratch tree",
            dir.display()
        );
        fs::set_permissions(dir, fs::Permissions::from_mode(meta.mode() | 0o011)).unwrap();
    }
}

#[cfg(test)]
#[path = "scratch_tests.rs"]
mod tests;
