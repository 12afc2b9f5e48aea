use super::*;

const PROBE: &str = "JAULA_TESTKIT_UNPROVABLE_BASE";

#[test]
fn a_path_is_beneath_a_cage_wide_root_by_component() {
    let roots = cage_wide_roots();
    for root in &roots {
        assert_eq!(
            cage_wide_root_above(&root.join("ci-clone/target/tmp"), &roots).as_ref(),
            Some(root)
        );
    }
    let tmp = fs::canonicalize("/tmp").unwrap();
    let beside = PathBuf::from(format!("{}fs/ci-clone", tmp.display()));
    assert_eq!(cage_wide_root_above(&beside, &roots), None);
    assert_eq!(
        cage_wide_root_above(Path::new("/srv/jaula/target/tmp"), &roots),
        None
    );
    // This checkout's own scratch base is provable (the suite would not run otherwise).
    assert_eq!(
        unprovable_reason(Path::new(env!("CARGO_MANIFEST_DIR"))),
        None
    );
}

/// Not a test of its own: the child that
/// `a_scratch_tree_beneath_a_cage_wide_root_stops_the_suite_once` runs. Several tests
/// asking for a scratch tree at once, as a suite's threads do.
#[test]
fn child_scratch_beneath_a_cage_wide_root() {
    let Some(base) = std::env::var_os(PROBE) else {
        return;
    };
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let base = PathBuf::from(&base);
            std::thread::spawn(move || scratch_in(&base, "probe-"))
        })
        .collect();
    for thread in threads {
        let _ = thread.join();
    }
    panic!("scratch_in did not stop the test process");
}

#[test]
fn a_scratch_tree_beneath_a_cage_wide_root_stops_the_suite_once() {
    let var_tmp = fs::canonicalize("/var/tmp").unwrap();
    let base = var_tmp.join(format!("jaula-ci-clone-{}/target/tmp", std::process::id()));
    let out = crate::rerun::command(&crate::this_test!("child_scratch_beneath_a_cage_wide_root"))
        .env(PROBE, &base)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(UNPROVABLE_EXIT), "{stderr}");
    assert_eq!(
        stderr.matches("cannot prove the cage").count(),
        1,
        "{stderr}"
    );
    for said in [
        format!(
            "would be under {}, beneath {},",
            base.display(),
            var_tmp.display()
        ),
        "Remedy: clone jaula outside".to_string(),
        "CARGO_TARGET_DIR".to_string(),
    ] {
        assert!(stderr.contains(&said), "{said:?} not in {stderr}");
    }
    assert!(!stderr.contains("did not stop"), "{stderr}");
    assert!(
        !base.ancestors().nth(2).unwrap().exists(),
        "the stopped suite created its scratch base"
    );
}
