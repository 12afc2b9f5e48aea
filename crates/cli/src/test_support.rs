//! What this crate's unit tests share.

use std::path::{Path, PathBuf};

/// A fresh scratch directory named `prefix…` under the workspace's `target/test-scratch`,
/// with its canonical path; removed when the `TempDir` drops. Never under `/tmp`, which
/// every Linux cage makes writable.
pub(crate) fn scratch(prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    jaula_testkit::scratch_in(&base, prefix)
}
