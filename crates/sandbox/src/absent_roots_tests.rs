use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use jaula_policy::{Platform, Policy, PolicySpec, WriteSource};

use super::create_absent_roots;
use crate::test_support::scratch;

fn policy(root: &Path, create: bool) -> Policy {
    let home = root.join("home");
    let repo = root.join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, home, repo);
    spec.create_absent_roots = create;
    spec.resolve().unwrap()
}

#[test]
fn a_fresh_home_gets_every_cache_root_private_and_owned_by_the_caller() {
    let (_keep, root) = scratch("absent-roots-");
    let policy = policy(&root, true);
    let home = policy.home().to_path_buf();
    let to_create: Vec<PathBuf> = policy.roots_to_create().map(|a| a.path.clone()).collect();
    for rel in [".npm", ".cargo", ".cache", ".local/share", ".agents-city"] {
        assert!(to_create.contains(&home.join(rel)), "{rel} not planned");
    }
    let created = create_absent_roots(&policy);
    assert!(created.failed.is_empty(), "{:?}", created.failed);
    let uid = rustix::process::geteuid().as_raw();
    for rel in [
        ".npm",
        ".cargo",
        ".cache",
        ".local",
        ".local/share",
        ".agents-city",
    ] {
        let meta = fs::symlink_metadata(home.join(rel)).unwrap();
        assert!(meta.is_dir(), "{rel}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{rel}");
        assert_eq!(meta.uid(), uid, "{rel}");
    }
    // Sealed and protected paths are never made, even beneath a created root.
    for rel in [
        ".ssh",
        ".aws",
        ".cargo/credentials.toml",
        ".config/jaula",
        ".config/gh",
    ] {
        assert!(
            fs::symlink_metadata(home.join(rel)).is_err(),
            "{rel} was created"
        );
    }
    // A second run finds nothing to do.
    let again = create_absent_roots(&policy);
    assert!(again.made.is_empty() && again.failed.is_empty());
}

#[test]
fn nothing_is_created_with_the_switch_off_and_decide_refuses_beneath() {
    let (_keep, root) = scratch("absent-roots-");
    let policy = policy(&root, false);
    assert_eq!(policy.roots_to_create().count(), 0);
    let created = create_absent_roots(&policy);
    assert!(created.made.is_empty());
    let npm = policy.home().join(".npm");
    assert!(!npm.exists());
    let d = policy.decide(&npm.join("_cacache"), jaula_policy::Access::Create);
    assert!(!d.allowed, "{d:?}");
    assert!(
        matches!(d.rule, jaula_policy::Rule::AbsentWritableRoot { ref root, source: WriteSource::HomeCache } if *root == npm),
        "{d:?}"
    );
}

#[test]
fn a_symlink_planted_on_the_way_stops_the_root_and_nothing_lands_outside() {
    let (_keep, root) = scratch("absent-roots-");
    let policy = policy(&root, true);
    let outside = root.join("outside");
    fs::create_dir_all(&outside).unwrap();
    // Planted after resolution: `.local` now points outside the home.
    std::os::unix::fs::symlink(&outside, policy.home().join(".local")).unwrap();
    let created = create_absent_roots(&policy);
    assert!(
        fs::read_dir(&outside).unwrap().next().is_none(),
        "created outside the home"
    );
    assert!(
        created
            .failed
            .iter()
            .any(|e| e.to_string().contains(".local") && e.to_string().contains("not a directory")),
        "{:?}",
        created.failed
    );
}

#[test]
fn a_home_owned_by_someone_else_is_left_alone() {
    let (_keep, root) = scratch("absent-roots-");
    let policy = policy(&root, true);
    let uid = rustix::process::geteuid().as_raw();
    if uid != 0 {
        return eprintln!("skipping: chown to another uid needs root");
    }
    std::os::unix::fs::chown(policy.home(), Some(65534), Some(65534)).unwrap();
    let created = create_absent_roots(&policy);
    assert!(created.made.is_empty());
    assert!(!created.failed.is_empty());
    assert!(created.failed[0]
        .to_string()
        .contains("belongs to uid 65534"));
}
