//! What one protection covers: a file, a directory and all beneath it, or only a
//! directory's own entry. Apart from the policy that holds protections, so the built-in
//! lists (`defaults`) and the policy can both name it without importing each other.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::paths::is_within;

/// What a protection covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtectKind {
    /// Exactly this file.
    File,
    /// This directory and everything beneath it.
    Directory,
    /// Only this directory's own entry: it cannot be renamed, removed or replaced, while
    /// everything beneath it stays as writable as its root makes it (`.git`: git must
    /// still write objects, refs and `index.lock`).
    Entry,
}

impl ProtectKind {
    /// Whether a protection of this kind at `root` covers a write to `path`.
    pub fn covers(self, root: &Path, path: &Path) -> bool {
        match self {
            ProtectKind::File | ProtectKind::Entry => path == root,
            ProtectKind::Directory => is_within(path, root),
        }
    }
}
