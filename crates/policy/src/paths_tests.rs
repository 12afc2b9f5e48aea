use super::*;
use std::os::unix::ffi::OsStrExt;

#[test]
fn containment_is_by_component_not_by_string_prefix() {
    assert!(is_within(Path::new("/home/a/x"), Path::new("/home/a")));
    assert!(is_within(Path::new("/home/a"), Path::new("/home/a")));
    assert!(!is_within(Path::new("/home/ab"), Path::new("/home/a")));
    assert!(!is_within(Path::new("/home/ab/x"), Path::new("/home/a")));
    assert!(!is_within(Path::new("/home"), Path::new("/home/a")));
}

#[test]
fn tilde_expands_only_as_a_whole_first_component() {
    let home = Path::new("/h/me");
    assert_eq!(expand_tilde(Path::new("~"), home), PathBuf::from("/h/me"));
    assert_eq!(
        expand_tilde(Path::new("~/.ssh"), home),
        PathBuf::from("/h/me/.ssh")
    );
    assert_eq!(
        expand_tilde(Path::new("~other/x"), home),
        PathBuf::from("~other/x")
    );
    assert_eq!(
        expand_tilde(Path::new("/a/~/b"), home),
        PathBuf::from("/a/~/b")
    );
}

#[test]
fn lexical_normalisation_drops_dots_and_applies_parents() {
    assert_eq!(
        normalize_lexically(Path::new("/a/./b/../c/")),
        PathBuf::from("/a/c")
    );
    assert_eq!(normalize_lexically(Path::new("/..")), PathBuf::from("/"));
}

#[test]
fn lenient_canonicalisation_resolves_the_existing_prefix_through_symlinks() {
    let scratch = crate::test_scratch();
    let real = scratch.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, scratch.path().join("link")).unwrap();
    let base = std::fs::canonicalize(scratch.path()).unwrap();
    let resolved = canonicalize_lenient(&scratch.path().join("link/absent/deeper"), &base);
    assert_eq!(resolved, base.join("real/absent/deeper"));
    let relative = canonicalize_lenient(Path::new("link/x"), &base);
    assert_eq!(relative, base.join("real/x"));
}

#[test]
fn awkward_bytes_survive_canonicalisation() {
    let scratch = crate::test_scratch();
    let base = std::fs::canonicalize(scratch.path()).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"we\"ird \\ na\nme\xff");
    let dir = base.join(name);
    std::fs::create_dir(&dir).unwrap();
    assert_eq!(canonicalize_lenient(&dir, &base), dir);
    assert_eq!(
        canonicalize_lenient(&dir.join("missing"), &base),
        dir.join("missing")
    );
}

#[test]
fn tilde_display_uses_components() {
    let home = Path::new("/h/me");
    assert_eq!(display_with_tilde(Path::new("/h/me/.ssh"), home), "~/.ssh");
    assert_eq!(display_with_tilde(Path::new("/h/meow"), home), "/h/meow");
    assert_eq!(display_with_tilde(Path::new("/h/me"), home), "~");
}
