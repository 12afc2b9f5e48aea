//! What this crate's unit tests share: a decision log to write, and reading it back.

use std::path::{Path, PathBuf};

/// A fresh temporary directory, and the path of a decision log inside it (not yet
/// written); removed when the `TempDir` drops.
pub(crate) fn scratch_log() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    (dir, log)
}

/// The decision log at `path`, one JSON value a line.
pub(crate) fn log_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Each field of `expected` (a JSON object) has its value in the logged `line`.
pub(crate) fn assert_fields(line: &serde_json::Value, expected: serde_json::Value) {
    let Some(fields) = expected.as_object() else {
        panic!("expected fields as a JSON object, got {expected}")
    };
    for (field, want) in fields {
        assert_eq!(&line[field], want, "{field} in {line}");
    }
}
