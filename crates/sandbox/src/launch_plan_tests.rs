use std::path::PathBuf;

use jaula_policy::{Platform, PolicySpec};

use super::*;

/// A plan for a policy resolved in a scratch home.
pub(crate) fn sample_plan() -> (tempfile::TempDir, LaunchPlan) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let repo: PathBuf = home.join("src").join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let policy = PolicySpec::with_defaults(Platform::Linux, home, repo)
        .resolve()
        .unwrap();
    let plan = LaunchPlan {
        version: PLAN_VERSION,
        policy,
        stage: PlanMode::BwrapView,
        network: NetworkPlan {
            mode: NetworkMode::Allow,
            fallback: false,
            handoff_fd: Some(7),
            proxy_localhost: true,
            dns_fds: vec![8, 9],
            log_fd: Some(10),
        },
        env: vec![("PATH".into(), "/usr/bin".into())],
        limits: ResourceLimits {
            max_processes: Some(64),
            max_data_bytes: None,
        },
        cgroup_fd: Some(11),
        identity: Some(crate::identity::Identity {
            uid: 65534,
            gid: 65534,
        }),
        keep_fds: vec![5],
        record_fd: None,
        socket_gate: true,
        reports: Reports {
            planting: false,
            network_none: true,
        },
        verbose: false,
        command: vec!["true".into()],
    };
    (dir, plan)
}

fn json(plan: &LaunchPlan) -> serde_json::Value {
    serde_json::from_slice(&plan.to_bytes().unwrap()).unwrap()
}

#[test]
fn a_plan_survives_the_round_trip_whole() {
    let (_dir, plan) = sample_plan();
    let back = LaunchPlan::from_bytes(&plan.to_bytes().unwrap()).unwrap();
    assert_eq!(back, plan);
}

#[test]
fn non_utf8_arguments_and_environment_survive() {
    use std::os::unix::ffi::OsStringExt;
    let (_dir, mut plan) = sample_plan();
    plan.command = vec!["printf".into(), OsString::from_vec(vec![0xff, b'a', 0])];
    plan.env.push((
        OsString::from_vec(vec![b'X', 0xfe]),
        OsString::from_vec(vec![0x80]),
    ));
    let back = LaunchPlan::from_bytes(&plan.to_bytes().unwrap()).unwrap();
    assert_eq!(back, plan);
}

#[test]
fn another_version_is_refused_by_name() {
    let (_dir, plan) = sample_plan();
    let mut value = json(&plan);
    value["version"] = serde_json::json!(PLAN_VERSION + 1);
    let err = LaunchPlan::from_bytes(&serde_json::to_vec(&value).unwrap()).unwrap_err();
    assert!(
        matches!(err, PlanError::Version { found, expected } if found == PLAN_VERSION + 1 && expected == PLAN_VERSION),
        "{err}"
    );
    assert!(err.to_string().contains("format version"), "{err}");
}

#[test]
fn garbage_and_truncation_are_malformed() {
    let (_dir, plan) = sample_plan();
    let bytes = plan.to_bytes().unwrap();
    for bad in [&b"not json"[..], &bytes[..bytes.len() / 2], b"", b"{}"] {
        let err = LaunchPlan::from_bytes(bad).unwrap_err();
        assert!(matches!(err, PlanError::Malformed(_)), "{err}");
    }
}

#[test]
fn unknown_fields_are_refused_not_ignored() {
    // A field this binary does not know could carry a layer it would silently drop.
    let (_dir, plan) = sample_plan();
    let mut value = json(&plan);
    value["network"]["unshare_everything"] = serde_json::json!(true);
    let err = LaunchPlan::from_bytes(&serde_json::to_vec(&value).unwrap()).unwrap_err();
    assert!(matches!(err, PlanError::Malformed(_)), "{err}");
    let mut value = json(&plan);
    value["extra_layer"] = serde_json::json!(1);
    let err = LaunchPlan::from_bytes(&serde_json::to_vec(&value).unwrap()).unwrap_err();
    assert!(matches!(err, PlanError::Malformed(_)), "{err}");
}

#[test]
fn a_missing_layer_field_is_malformed_not_defaulted() {
    let (_dir, plan) = sample_plan();
    let mut value = json(&plan);
    value.as_object_mut().unwrap().remove("socket_gate");
    let err = LaunchPlan::from_bytes(&serde_json::to_vec(&value).unwrap()).unwrap_err();
    assert!(matches!(err, PlanError::Malformed(_)), "{err}");
}

#[test]
fn a_plan_without_a_command_is_refused() {
    let (_dir, mut plan) = sample_plan();
    plan.command.clear();
    let err = LaunchPlan::from_bytes(&plan.to_bytes().unwrap()).unwrap_err();
    assert!(matches!(err, PlanError::NoCommand), "{err}");
}

#[test]
fn a_policy_with_a_non_utf8_repo_survives() {
    use std::os::unix::ffi::OsStringExt;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let repo = home.join(OsString::from_vec(b"r\xe9po".to_vec()));
    std::fs::create_dir_all(&repo).unwrap();
    let (_keep, mut plan) = sample_plan();
    plan.policy = PolicySpec::with_defaults(Platform::Linux, home, repo.clone())
        .resolve()
        .unwrap();
    let back = LaunchPlan::from_bytes(&plan.to_bytes().unwrap()).unwrap();
    assert_eq!(back.policy.repo(), repo);
    assert_eq!(back, plan);
}
