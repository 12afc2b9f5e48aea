//! What this crate's unit tests share.

use std::path::{Path, PathBuf};

/// A fresh scratch directory named `prefix…` under the workspace's `target/test-scratch`,
/// with its canonical path (the backends resolve paths canonically, so a test must name
/// them the same way); removed when the `TempDir` drops. Never under `/tmp`: every Linux
/// cage keeps `/tmp` writable and bubblewrap's view replaces it, so a scratch tree there
/// would prove nothing.
pub(crate) fn scratch(prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    jaula_testkit::scratch_in(&base, prefix)
}

/// A cage record's first line: repo `/r`, launched by pid 1 that started at tick
/// `launcher_start`.
#[cfg(target_os = "linux")]
pub(crate) fn opening(
    window: Option<&str>,
    backend: &str,
    started_unix: u64,
    command: &[&str],
    launcher_start: u64,
) -> crate::cage_record::Opening {
    crate::cage_record::Opening {
        window: window.map(String::from),
        repo: "/r".into(),
        backend: backend.into(),
        started_unix,
        command: command.iter().map(|word| word.to_string()).collect(),
        launcher: crate::cage_record::ProcessId {
            pid: 1,
            start_ticks: launcher_start,
        },
    }
}

/// `policy` with one file rule of each kind, for paths no default names: `keep` readable
/// inside its seal (as a window's token is), `notes` writable (matched as `matching`, as
/// Claude's state is), and each `secret.key` under `tenants` sealed (as channel tokens
/// are), `existing` naming those already there.
pub(crate) fn with_each_file_rule_kind(
    policy: jaula_policy::Policy,
    keep: &Path,
    notes: &Path,
    matching: jaula_policy::FileMatch,
    tenants: &Path,
    existing: Vec<PathBuf>,
) -> jaula_policy::Policy {
    use jaula_policy::{FileRule, FileRuleSource};
    policy
        .with_file_rule(FileRule::ReadableInSeal {
            path: keep.to_path_buf(),
            source: FileRuleSource::WindowToken,
        })
        .with_file_rule(FileRule::WritableFile {
            path: notes.to_path_buf(),
            matching,
            source: FileRuleSource::ClaudeState,
        })
        .with_file_rule(FileRule::SealedPattern {
            dir: tenants.to_path_buf(),
            name: "secret.key".to_string(),
            existing,
            source: FileRuleSource::ChannelTokens,
        })
}
