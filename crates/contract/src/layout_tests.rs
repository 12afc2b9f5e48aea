use super::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(base).unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// The parents `repair_legacy_parents` repaired.
fn repaired(root: &Path, state_dir: &Path, runner_uid: u32) -> Vec<PathBuf> {
    repair_legacy_parents(root, state_dir, runner_uid).unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

fn sub(base: &Path, name: &str) -> PathBuf {
    let dir = base.join(name);
    fs::create_dir(&dir).unwrap();
    dir
}

fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// What an older jaula left: `jaula/` 0700 (made by `mkdir -p` with the state directory's
/// mode) holding the 0711 workspace root and the 0700 state directory.
fn legacy(base: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let jaula = base.join("jaula");
    for (dir, m) in [
        (&jaula, 0o700),
        (&jaula.join("contracts"), 0o711),
        (&jaula.join("state"), 0o700),
    ] {
        fs::create_dir(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(m)).unwrap();
    }
    (jaula.clone(), jaula.join("contracts"), jaula.join("state"))
}

#[test]
fn missing_parents_are_searchable_and_the_leaf_gets_its_own_mode() {
    let (_keep, base) = scratch();
    let state = base.join("var/lib/jaula/state");
    create_dirs(&state, 0o700).unwrap();
    for dir in ["var", "var/lib", "var/lib/jaula"] {
        assert_eq!(mode(&base.join(dir)), PARENT_MODE, "{dir}");
    }
    assert_eq!(mode(&state), 0o700);
    // The sibling reuses the parent as it is, and an existing leaf is left alone.
    let root = base.join("var/lib/jaula/contracts");
    create_dirs(&root, PARENT_MODE).unwrap();
    assert_eq!(mode(&root), PARENT_MODE);
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    create_dirs(&root, PARENT_MODE).unwrap();
    assert_eq!(
        mode(&root),
        0o755,
        "an existing directory is the operator's"
    );
}

#[test]
fn an_older_jaulas_closed_parent_is_opened_for_search_only() {
    let (_keep, base) = scratch();
    let (jaula, root, state) = legacy(&base);
    assert_eq!(repaired(&root, &state, me()), vec![jaula.clone()]);
    assert_eq!(mode(&jaula), PARENT_MODE);
    assert_eq!(
        mode(&state),
        0o700,
        "the state directory stays the runner's"
    );
    // Nothing left to repair.
    assert!(repaired(&root, &state, me()).is_empty());
}

#[test]
fn a_chain_of_closed_parents_jaula_made_is_opened_up_to_the_first_that_holds_more() {
    let (_keep, base) = scratch();
    let outer = base.join("srv");
    fs::create_dir(&outer).unwrap();
    let (jaula, root, state) = legacy(&outer);
    fs::set_permissions(&outer, fs::Permissions::from_mode(0o700)).unwrap();
    let base_mode = mode(&base);
    assert_eq!(
        repaired(&root, &state, me()),
        vec![jaula.clone(), outer.clone()]
    );
    assert_eq!(mode(&outer), PARENT_MODE);
    // `base` holds only `srv` too, but it is not 0700: the walk stops there.
    assert_ne!(base_mode, 0o700);
    assert_eq!(mode(&base), base_mode);
}

#[test]
fn a_closed_directory_that_is_not_only_jaulas_is_left_to_the_operator() {
    let (_keep, base) = scratch();
    // Holds something else.
    let (jaula, root, state) = legacy(&sub(&base, "a"));
    fs::write(jaula.join("other"), "").unwrap();
    assert!(repaired(&root, &state, me()).is_empty());
    assert_eq!(mode(&jaula), 0o700);

    // Not the runner's.
    let (jaula, root, state) = legacy(&sub(&base, "b"));
    assert!(repaired(&root, &state, me().wrapping_add(1)).is_empty());
    assert_eq!(mode(&jaula), 0o700);

    // Not exactly 0700.
    let (jaula, root, state) = legacy(&sub(&base, "c"));
    fs::set_permissions(&jaula, fs::Permissions::from_mode(0o750)).unwrap();
    assert!(repaired(&root, &state, me()).is_empty());
    assert_eq!(mode(&jaula), 0o750);

    // The root and the state directory are not siblings: their parents are the operator's.
    let (jaula, root, _) = legacy(&sub(&base, "d"));
    let elsewhere = base.join("state-elsewhere/state");
    assert!(repaired(&root, &elsewhere, me()).is_empty());
    assert_eq!(mode(&jaula), 0o700);

    // A symlink in the parent's place is not followed.
    let (real, _, _) = legacy(&sub(&base, "e"));
    let link = base.join("e-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(repaired(&link.join("contracts"), &link.join("state"), me()).is_empty());
    assert_eq!(mode(&real), 0o700);
}
