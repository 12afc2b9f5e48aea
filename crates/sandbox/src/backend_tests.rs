use std::collections::HashSet;

use super::*;
use crate::backends::{all, named};
use crate::test_support::scratch;

#[test]
fn every_backend_is_listed_once_with_deviations_named_once() {
    let backends = all();
    let names: HashSet<&str> = backends.iter().map(|b| b.name()).collect();
    assert_eq!(names, HashSet::from(["seatbelt", "bwrap", "landlock"]));
    assert_eq!(names.len(), backends.len());
    for b in &backends {
        let mut seen = HashSet::new();
        for d in b.deviations() {
            assert!(seen.insert(d.name), "{}: {} listed twice", b.name(), d.name);
            assert!(
                !d.why.trim().is_empty(),
                "{}: {} has no reason",
                b.name(),
                d.name
            );
        }
        assert!(named(b.name()).is_some());
    }
    assert!(named("docker").is_none());
}

#[test]
fn the_bwrap_view_plan_lists_only_what_the_view_does_not_hide() {
    let view = crate::landlock::LandlockBackend {
        mode: crate::landlock::PlanMode::BwrapView,
    };
    let names: Vec<&str> = Backend::deviations(&view).iter().map(|d| d.name).collect();
    assert_eq!(names, ["metadata-writes"]);
}

/// A home with an `.ssh` directory and a repo at `~/src/repo`, made under `root`.
fn home_with_repo(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let home = root.join("home");
    let repo = home.join("src/repo");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    (home, repo)
}

/// Each backend answers from its own artifact, and on the plainest paths all of them
/// agree with `decide`: a credential is unreadable, the repo writable, the home readable
/// but not writable, a socket in a sealed root unreachable.
#[test]
fn every_backend_answers_from_its_artifact_as_decide_does_on_plain_paths() {
    let (_dir, root) = scratch("backend-");
    let (home, repo) = home_with_repo(&root);
    std::fs::write(home.join(".ssh/id"), "secret").unwrap();
    std::fs::write(home.join("notes.txt"), "notes").unwrap();
    std::fs::write(repo.join("README.md"), "readme").unwrap();
    let cases = [
        (home.join(".ssh/id"), Access::Read, false),
        (repo.join("README.md"), Access::Write, true),
        (home.join("notes.txt"), Access::Read, true),
        (home.join("notes.txt"), Access::Write, false),
        (home.join(".ssh/agent.sock"), Access::Connect, false),
    ];
    for backend in all() {
        let spec =
            jaula_policy::PolicySpec::with_defaults(backend.platform(), home.clone(), repo.clone());
        let policy = spec.resolve().unwrap();
        for (path, access, allowed) in &cases {
            let verdict = backend
                .render_and_judge(&policy, &jaula_policy::RealHostFs, path, *access)
                .unwrap();
            assert_eq!(policy.decide(path, *access).allowed, *allowed);
            assert_eq!(
                verdict.allowed,
                *allowed,
                "{} {access} {}: {}",
                backend.name(),
                path.display(),
                verdict.summary
            );
            assert!(!verdict.summary.is_empty());
        }
    }
}

/// A path that does not exist is readable by `decide` but has no Landlock rule: the
/// verdict names the missing entry and why Landlock cannot grant it.
#[test]
fn landlock_says_why_an_absent_path_is_denied() {
    let (_dir, root) = scratch("backend-");
    let (home, repo) = home_with_repo(&root);
    let policy = jaula_policy::PolicySpec::with_defaults(Platform::Linux, home, repo)
        .resolve()
        .unwrap();
    let absent = Path::new("/jaula-absent-top/zz");
    assert!(!absent.parent().unwrap().exists());
    let landlock = named("landlock").unwrap();
    let verdict = landlock
        .render_and_judge(&policy, &jaula_policy::RealHostFs, absent, Access::Read)
        .unwrap();
    assert!(policy.decide(absent, Access::Read).allowed);
    assert!(!verdict.allowed);
    assert!(
        verdict.summary.contains(
            "/jaula-absent-top does not exist, and Landlock grants only what exists when \
             the cage starts"
        ),
        "{}",
        verdict.summary
    );
    // An existing path that is denied gets no such note.
    let etc = landlock
        .render_and_judge(
            &policy,
            &jaula_policy::RealHostFs,
            Path::new("/etc"),
            Access::Write,
        )
        .unwrap();
    assert!(!etc.summary.contains("does not exist"), "{}", etc.summary);
}
