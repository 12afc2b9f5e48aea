use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn the_owner_class_alone_counts_for_the_owner_then_group_then_other() {
    // 0o070: the group may search, the owner may not (the kernel does not fall through).
    assert!(!permits(5, 9, 5, 7, 0o070, 1));
    assert!(permits(6, 7, 5, 7, 0o070, 1));
    assert!(!permits(6, 8, 5, 7, 0o070, 1));
    assert!(permits(6, 8, 5, 7, 0o001, 1));
    assert!(!permits(6, 8, 0, 0, 0o700, 1));
    assert!(permits(UNALLOCATED, UNALLOCATED, 0, 0, 0o711, 1));
    assert!(!permits(UNALLOCATED, UNALLOCATED, 0, 0, 0o750, 1));
}

fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

#[test]
fn a_closed_parent_is_named_and_an_absent_tail_is_jaulas_to_create() {
    let dir = scratch();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    // The scratch parents are the build's, searchable by everyone.
    let open = root.join("open/tenants");
    std::fs::create_dir_all(&open).unwrap();
    check(UNALLOCATED, UNALLOCATED, &open).unwrap();

    let closed = root.join("closed");
    std::fs::create_dir_all(closed.join("tenants")).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    let err = check(UNALLOCATED, UNALLOCATED, &closed.join("tenants")).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("enter its workspace under"), "{text}");
    assert!(
        text.contains(&format!("{} (mode 0700", closed.display())),
        "{text}"
    );
    assert!(text.contains("not searchable by it"), "{text}");
    assert!(
        text.contains(&format!("fix: chmod o+x {} ", closed.display())),
        "{text}"
    );

    // An absent workspace root is jaula's to create (searchable), but not beneath a
    // closed directory.
    check(UNALLOCATED, UNALLOCATED, &root.join("absent/x")).unwrap();
    assert!(check(UNALLOCATED, UNALLOCATED, &closed.join("absent/x")).is_err());
}
