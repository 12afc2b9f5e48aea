use std::ffi::OsString;
use std::path::PathBuf;

use jaula_policy::{Platform, PolicySpec};

use super::*;
use crate::bwrap::AvailableBasis;
use crate::test_support::scratch;
use jaula_policy::RealHostFs;

fn scratch_policy() -> (tempfile::TempDir, Policy) {
    let (dir, root) = scratch("stage-");
    let (home, repo) = (root.join("home"), root.join("home/repo"));
    std::fs::create_dir_all(&repo).unwrap();
    let policy = PolicySpec::with_defaults(Platform::Linux, home, repo)
        .resolve()
        .unwrap();
    (dir, policy)
}

/// The argv that starts the stage `/opt/jaula stage` for `command0` in `cwd`, with the
/// default options and a probed `/usr/bin/bwrap`.
fn argv_for(policy: &Policy, command0: &OsStr, cwd: &Path) -> Vec<OsString> {
    let available = Availability::Available {
        program: "/usr/bin/bwrap".into(),
        basis: AvailableBasis::Probed,
    };
    let stage = [OsString::from("/opt/jaula"), "stage".into()];
    let options = BwrapOptions::default();
    stage_argv(
        policy,
        &options,
        &available,
        &RealHostFs,
        command0,
        cwd,
        &stage,
    )
    .unwrap()
}

/// A file `name` holding `text` in a fresh directory on the host's `/tmp`, by its
/// canonical path.
fn host_tmp_file(prefix: &str, name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .unwrap();
    let file = std::fs::canonicalize(dir.path()).unwrap().join(name);
    std::fs::write(&file, text).unwrap();
    (dir, file)
}

#[test]
fn the_argv_ends_in_the_stage_started_where_the_caller_stood() {
    let (_dir, policy) = scratch_policy();
    let cwd = policy.repo().to_path_buf();
    let argv = argv_for(&policy, OsStr::new("true"), &cwd);
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
    let (_tmp, tool) = host_tmp_file("jaula-stage-cmd-", "tool", "#!/bin/sh\n");
    let argv = argv_for(&policy, tool.as_os_str(), policy.repo());
    let bound = argv
        .windows(3)
        .any(|w| w[0] == "--ro-bind-try" && w[1] == tool.as_os_str() && w[2] == tool.as_os_str());
    assert!(bound, "{argv:?}");
    // A bare name is looked up on PATH, outside /tmp: nothing to bind.
    let bare = argv_for(&policy, OsStr::new("tool"), policy.repo());
    assert!(!bare.iter().any(|a| a == tool.as_os_str()), "{bare:?}");
}

/// A file on the host's /tmp is hidden by the view's own /tmp; a bare word, a path that
/// does not exist, a path outside /tmp and the repo's own files are not.
#[test]
fn hidden_by_private_tmp_names_only_host_tmp_files_the_view_hides() {
    let (_dir, policy) = scratch_policy();
    let (_host_tmp, script) = host_tmp_file("jaula-hidden-", "work.sh", "true\n");
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
