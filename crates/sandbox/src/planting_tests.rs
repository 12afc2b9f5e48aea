use std::fs;
use std::path::{Path, PathBuf};

use jaula_policy::{Platform, Policy, PolicySpec, ProtectedSource};

use super::ChangeKind::{Created, Modified, Removed, Replaced, Unchecked};
use super::{
    compare_file, evidence_path, report_after, Change, ChangeKind, Content, Meta, Snapshot,
    DIR_ENTRY_LIMIT,
};
use crate::test_support::scratch;
use jaula_policy::ProtectedSource::{GitConfig, GitDirectory, GitHooks, RepoToolSettings};

fn policy(root: &Path) -> Policy {
    let home = root.join("home");
    let repo = root.join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    fs::write(repo.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    PolicySpec::with_defaults(Platform::Linux, home, repo)
        .resolve()
        .unwrap()
}

fn kinds(snapshot: &Snapshot) -> Vec<(PathBuf, ChangeKind, ProtectedSource)> {
    snapshot
        .changes()
        .into_iter()
        .map(|c| (c.path, c.change, c.source))
        .collect()
}

/// Each expected change is among those `got` reports.
fn assert_reported<const N: usize>(
    got: &[(PathBuf, ChangeKind, ProtectedSource)],
    expected: [(PathBuf, ChangeKind, ProtectedSource); N],
) {
    for change in &expected {
        assert!(got.contains(change), "{change:?} not reported: {got:?}");
    }
}

#[test]
fn nothing_changed_reports_nothing() {
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let snap = Snapshot::take(&p);
    // Work git does beneath the entry is not a change of the entry.
    let git = root.join("repo/.git");
    fs::write(git.join("index.lock"), "x").unwrap();
    fs::create_dir_all(git.join("objects/ab")).unwrap();
    assert_eq!(kinds(&snap), vec![]);
}

#[test]
fn creation_removal_and_modification_are_each_reported() {
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let repo = root.join("repo");
    let snap = Snapshot::take(&p);
    fs::create_dir_all(repo.join(".vscode")).unwrap();
    fs::write(repo.join(".vscode/tasks.json"), "{}").unwrap();
    fs::write(repo.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    fs::remove_file(repo.join(".git/hooks/pre-commit.sample")).unwrap();
    fs::write(repo.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
    let got = kinds(&snap);
    assert_reported(
        &got,
        [
            (repo.join(".git/config"), Modified, GitConfig),
            (repo.join(".git/hooks/pre-commit"), Created, GitHooks),
            (repo.join(".git/hooks/pre-commit.sample"), Removed, GitHooks),
            // A directory created whole is one line, not one per file inside it.
            (repo.join(".vscode"), Created, RepoToolSettings),
        ],
    );
    assert!(!got
        .iter()
        .any(|(p, ..)| *p == repo.join(".vscode/tasks.json")));
}

#[test]
fn same_size_same_mtime_rewrites_and_replacements_still_show() {
    use std::os::unix::fs::MetadataExt;
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let repo = root.join("repo");
    let config = repo.join(".git/config");
    let before = fs::metadata(&config).unwrap();
    let snap = Snapshot::take(&p);
    // Same length, mtime put back: the content (and ctime) still differ.
    fs::write(&config, "[evil]\n").unwrap();
    let mtime = std::time::UNIX_EPOCH
        + std::time::Duration::new(before.mtime() as u64, before.mtime_nsec() as u32);
    fs::File::options()
        .write(true)
        .open(&config)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(kinds(&snap), vec![(config.clone(), Modified, GitConfig)]);

    // `.git` moved away and another put in its place: a replaced entry.
    let snap = Snapshot::take(&p);
    fs::rename(repo.join(".git"), repo.join(".git-old")).unwrap();
    fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    fs::write(&config, "[core]\n").unwrap();
    let got = kinds(&snap);
    assert_reported(
        &got,
        [
            (repo.join(".git"), Replaced, GitDirectory),
            (repo.join(".git/hooks"), Replaced, GitHooks),
        ],
    );
}

#[test]
fn a_huge_directory_is_walked_only_to_its_bound() {
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let hooks = root.join("repo/.git/hooks");
    for i in 0..DIR_ENTRY_LIMIT + 10 {
        fs::write(hooks.join(format!("h{i:05}")), "x").unwrap();
    }
    let snap = Snapshot::take(&p);
    // A change within the bound is seen; past the bound nothing is invented.
    fs::write(hooks.join("h00000"), "changed").unwrap();
    fs::write(hooks.join("zzz-new"), "x").unwrap();
    let got = kinds(&snap);
    assert_reported(&got, [(hooks.join("h00000"), Modified, GitHooks)]);
    assert!(!got.iter().any(|(p, ..)| *p == hooks.join("zzz-new")));
}

#[test]
fn the_report_appends_one_evidence_line_per_change() {
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let snap = Snapshot::take(&p);
    fs::write(root.join("repo/.envrc"), "evil\n").unwrap();
    fs::write(root.join("repo/.mcp.json"), "{}\n").unwrap();
    let changes = report_after(&snap, &p);
    assert_eq!(changes.len(), 2);
    let log = evidence_path(&p);
    assert!(log.starts_with(p.state_home()));
    let text = fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let mcp = root.join("repo/.mcp.json");
    for (field, want) in [
        ("event", "protected-path-changed"),
        ("change", "created"),
        ("source", "repo-tool-settings"),
        ("path", mcp.to_str().unwrap()),
    ] {
        assert_eq!(first[field], want, "{field} in {first}");
    }
    // The log sits in the protected cage profile directory: no cage may write it.
    assert!(!p.decide(&log, jaula_policy::Access::Write).allowed);
    assert!(!p.decide(&log, jaula_policy::Access::Create).allowed);
}

#[test]
fn a_symlink_planted_as_the_evidence_log_is_not_followed() {
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let log = evidence_path(&p);
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    let target = root.join("elsewhere");
    std::os::unix::fs::symlink(&target, &log).unwrap();
    let snap = Snapshot::take(&p);
    fs::write(root.join("repo/.envrc"), "evil\n").unwrap();
    assert_eq!(report_after(&snap, &p).len(), 1);
    assert!(!target.exists());
}

/// Another window's launch appends to the evidence log and rewrites the probe cache (via
/// a temporary file) in the protected cage profile directory while this cage runs: that
/// is jaula's own bookkeeping, not a change to report. Anything else there still is.
#[test]
fn jaulas_own_files_in_the_cage_profile_directory_are_not_reported() {
    let (_d, root) = scratch("planting-");
    let p = policy(&root);
    let cage_dir = p.state_home().join(".runtime/cage");
    fs::create_dir_all(&cage_dir).unwrap();
    fs::write(evidence_path(&p), "{}\n").unwrap();
    fs::write(p.state_home().join(super::PROBE_CACHE_FILE), "old\n").unwrap();
    let snap = Snapshot::take(&p);
    fs::write(evidence_path(&p), "{}\n{}\n").unwrap();
    fs::write(cage_dir.join(".bwrap-probe.4242.tmp"), "new\n").unwrap();
    fs::rename(
        cage_dir.join(".bwrap-probe.4242.tmp"),
        p.state_home().join(super::PROBE_CACHE_FILE),
    )
    .unwrap();
    fs::write(cage_dir.join(".bwrap-probe.77.tmp"), "left over\n").unwrap();
    assert_eq!(kinds(&snap), vec![]);

    fs::write(cage_dir.join("window.sb"), "(allow default)\n").unwrap();
    fs::write(cage_dir.join(".planting.jsonl.tmp"), "x").unwrap();
    let changed: Vec<PathBuf> = kinds(&snap).into_iter().map(|(path, ..)| path).collect();
    assert_eq!(
        changed,
        vec![
            cage_dir.join(".planting.jsonl.tmp"),
            cage_dir.join("window.sb")
        ]
    );
}

/// A content read that failed (the reporter out of descriptors) is not a change: the
/// report says it could not check, unless the file's own metadata shows a change anyway.
#[test]
fn an_unreadable_content_is_unchecked_not_modified() {
    let (_keep, dir) = scratch("planting-");
    let path = dir.join("f");
    fs::write(&path, "owner's\n").unwrap();
    let meta = fs::symlink_metadata(&path).unwrap();
    let before = Meta::read(&path, &meta);
    assert!(matches!(before.content, Content::Bytes(_)));
    let unread = Meta {
        content: Content::Unreadable,
        ..before.clone()
    };
    assert_eq!(compare_file(Some(&before), Some(&unread)), Some(Unchecked));
    assert_eq!(compare_file(Some(&unread), Some(&before)), Some(Unchecked));
    assert_eq!(compare_file(Some(&unread), Some(&unread)), None);
    let grown = Meta {
        size: before.size + 1,
        ..unread.clone()
    };
    assert_eq!(compare_file(Some(&before), Some(&grown)), Some(Modified));
    let line = Change {
        path: path.clone(),
        change: Unchecked,
        protected: path,
        source: GitConfig,
    }
    .to_string();
    assert!(
        line.starts_with("jaula: could not check protected path"),
        "{line}"
    );
    assert!(!line.contains("changed"), "{line}");
}
