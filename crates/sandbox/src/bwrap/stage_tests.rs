use std::ffi::OsString;
use std::path::PathBuf;

use jaula_policy::{Platform, PolicySpec};

use super::*;
use crate::bwrap::AvailableBasis;
use jaula_policy::RealHostFs;

fn scratch_policy() -> (tempfile::TempDir, Policy) {
    // Beside the target dir, never under /tmp: the view replaces /tmp.
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("stage-")
        .tempdir_in(&base)
        .unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (home, repo) = (root.join("home"), root.join("home/repo"));
    std::fs::create_dir_all(&repo).unwrap();
    let policy = PolicySpec::with_defaults(Platform::Linux, home, repo)
        .resolve()
        .unwrap();
    (dir, policy)
}

fn available() -> Availability {
    Availability::Available {
        program: "/usr/bin/bwrap".into(),
        basis: AvailableBasis::Probed,
    }
}

fn stage() -> Vec<OsString> {
    vec!["/opt/jaula".into(), "stage".into()]
}

#[test]
fn the_argv_ends_in_the_stage_started_where_the_caller_stood() {
    let (_dir, policy) = scratch_policy();
    let cwd = policy.repo().to_path_buf();
    let argv = stage_argv(
        &policy,
        &BwrapOptions::default(),
        &available(),
        &RealHostFs,
        OsStr::new("true"),
        &cwd,
        &stage(),
    )
    .unwrap();
    assert_eq!(argv[0], "/usr/bin/bwrap", "the probed program, absolute");
    let n = argv.len();
    assert_eq!(
        argv[n - 5..],
        [
            OsString::from("--chdir"),
            cwd.clone().into_os_string(),
            "--".into(),
            "/opt/jaula".into(),
            "stage".into(),
        ]
    );
}

#[test]
fn a_command_beneath_tmp_is_bound_read_only_at_its_own_path() {
    let (_dir, policy) = scratch_policy();
    let tmp = tempfile::Builder::new()
        .prefix("jaula-stage-cmd-")
        .tempdir_in("/tmp")
        .unwrap();
    let tool = std::fs::canonicalize(tmp.path()).unwrap().join("tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    let argv = stage_argv(
        &policy,
        &BwrapOptions::default(),
        &available(),
        &RealHostFs,
        tool.as_os_str(),
        policy.repo(),
        &stage(),
    )
    .unwrap();
    let bound = argv
        .windows(3)
        .any(|w| w[0] == "--ro-bind-try" && w[1] == tool.as_os_str() && w[2] == tool.as_os_str());
    assert!(bound, "{argv:?}");
    // A bare name is looked up on PATH, outside /tmp: nothing to bind.
    let bare = stage_argv(
        &policy,
        &BwrapOptions::default(),
        &available(),
        &RealHostFs,
        OsStr::new("tool"),
        policy.repo(),
        &stage(),
    )
    .unwrap();
    assert!(!bare.iter().any(|a| a == tool.as_os_str()), "{bare:?}");
}

/// A file on the host's /tmp is hidden by the view's own /tmp; a bare word, a path that
/// does not exist, a path outside /tmp and the repo's own files are not.
#[test]
fn hidden_by_private_tmp_names_only_host_tmp_files_the_view_hides() {
    let (_dir, policy) = scratch_policy();
    let host_tmp = tempfile::Builder::new()
        .prefix("jaula-hidden-")
        .tempdir_in("/tmp")
        .unwrap();
    let script = std::fs::canonicalize(host_tmp.path())
        .unwrap()
        .join("work.sh");
    std::fs::write(&script, "true\n").unwrap();
    let cwd = policy.repo().to_path_buf();
    assert_eq!(
        hidden_by_private_tmp(&policy, &cwd, script.as_os_str()),
        Some(script.clone())
    );
    let missing = script.with_file_name("absent.sh");
    for arg in [
        OsString::from("work.sh"),
        OsString::from("-c"),
        missing.into_os_string(),
        policy.repo().as_os_str().to_owned(),
        "/etc/hostname".into(),
    ] {
        assert_eq!(hidden_by_private_tmp(&policy, &cwd, &arg), None, "{arg:?}");
    }
    // Relative to a working directory beneath /tmp, which the view binds: visible.
    assert_eq!(
        hidden_by_private_tmp(&policy, script.parent().unwrap(), OsStr::new("./work.sh")),
        None
    );
}
