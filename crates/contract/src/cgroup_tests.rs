use super::*;

fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

fn mountinfo_for(mount: &Path) -> String {
    format!(
        "30 25 0:26 / /proc rw - proc proc rw\n\
         35 25 0:30 / {} rw,nosuid - cgroup2 cgroup2 rw\n",
        mount.display()
    )
}

#[test]
fn mount_point_is_found_and_unescaped() {
    let info = "35 25 0:30 / /sys/fs/cgroup/with\\040space rw - cgroup2 cgroup2 rw\n";
    assert_eq!(
        cgroup2_mount(info),
        Some(PathBuf::from("/sys/fs/cgroup/with space"))
    );
    assert_eq!(
        cgroup2_mount("1 2 0:1 / /sys/fs/cgroup/memory rw - cgroup cgroup rw\n"),
        None
    );
}

#[test]
fn no_cgroup2_or_no_controllers_is_unavailable_with_a_reason() {
    assert!(matches!(
        detect_in("", "0::/\n"),
        CgroupStatus::Unavailable { reason } if reason.contains("no cgroup2")
    ));
    let dir = scratch();
    fs::write(dir.path().join("cgroup.controllers"), "hugetlb\n").unwrap();
    match detect_in(&mountinfo_for(dir.path()), "0::/\n") {
        CgroupStatus::Unavailable { reason } => assert!(reason.contains("memory"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn delegated_parent_is_found_above_the_runners_leaf() {
    let dir = scratch();
    let svc = dir.path().join("svc");
    let leaf = svc.join("runner");
    fs::create_dir_all(&leaf).unwrap();
    fs::write(leaf.join("cgroup.controllers"), "cpu memory pids\n").unwrap();
    fs::write(leaf.join("cgroup.subtree_control"), "").unwrap();
    fs::write(svc.join("cgroup.subtree_control"), "memory pids\n").unwrap();
    assert_eq!(
        detect_in(&mountinfo_for(dir.path()), "0::/svc/runner\n"),
        CgroupStatus::Delegated { parent: svc }
    );
}

#[test]
fn create_refuses_reuse_and_unsafe_names() {
    let dir = scratch();
    let name = "c1";
    let cg = dir.path().join(name);
    fs::create_dir(&cg).unwrap();
    fs::write(cg.join("cgroup.procs"), "").unwrap();
    let limits = ContractLimits {
        max_processes: 64,
        max_memory_bytes: 1 << 30,
    };
    assert!(
        ContractCgroup::create(dir.path(), name, &limits).is_err(),
        "reused an existing cgroup"
    );
    assert_eq!(
        fs::read_to_string(cg.join("cgroup.procs")).unwrap(),
        "",
        "wrote into a reused cgroup"
    );
    assert!(ContractCgroup::create(dir.path(), "../x", &limits).is_err());
    assert!(!dir.path().join("../x").exists());
}
