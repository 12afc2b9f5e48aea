//! Scratch trees: under the build's target directory, never `/tmp`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A fresh directory named `prefix…` under `base` (a test crate's `CARGO_TARGET_TMPDIR`;
/// see [`crate::scratch!`]), with its canonical path: the cage resolves paths canonically,
/// so a test must name them the same way. Removed when the `TempDir` drops.
pub fn scratch_in(base: &Path, prefix: &str) -> (tempfile::TempDir, PathBuf) {
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
