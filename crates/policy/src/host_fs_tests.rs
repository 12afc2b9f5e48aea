use std::path::Path;

use super::*;

#[test]
fn real_host_fs_tells_a_link_from_its_target() {
    let dir = crate::test_scratch();
    let root = dir.path();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("f"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("d"), root.join("to-d")).unwrap();
    std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
    let fs = RealHostFs;

    assert_eq!(
        fs.kind(&root.join("to-d")).unwrap(),
        Some(EntryKind::Symlink)
    );
    assert_eq!(
        fs.resolved_kind(&root.join("to-d")).unwrap(),
        Some(EntryKind::Directory)
    );
    assert!(fs.is_dir(&root.join("to-d")) && fs.is_symlink(&root.join("to-d")));
    assert!(fs.is_file(&root.join("f")) && !fs.is_dir(&root.join("f")));
    // A dangling link is an entry, but a mount or an open finds nothing there.
    assert!(!fs.exists(&root.join("dangling")) && !fs.is_absent(&root.join("dangling")));
    assert!(fs.is_absent(&root.join("none")) && !fs.exists(&root.join("none")));
    // A component that is a file: absent, not an error (ENOTDIR).
    assert_eq!(fs.kind(&root.join("f/below")).unwrap(), None);

    let mut names: Vec<_> = fs.list(root).unwrap();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        names,
        vec![
            ("d".into(), EntryKind::Directory),
            ("dangling".into(), EntryKind::Symlink),
            ("f".into(), EntryKind::File),
            ("to-d".into(), EntryKind::Symlink),
        ]
    );
    assert!(fs.list(Path::new("/nonexistent-jaula-dir")).is_err());
}

#[test]
fn enotdir_is_the_kernels_value() {
    let dir = crate::test_scratch();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let err = std::fs::metadata(file.join("below")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(ENOTDIR));
}

#[test]
fn a_fake_host_answers_realpath_and_reads_from_its_own_entries() {
    let fs = crate::test_support::MemFs::default()
        .file("/fake/real/file", "text")
        .link("/fake/abs", "/fake/real")
        .link("/fake/rel", "real/../real")
        .link("/fake/loop", "loop");
    let canon = |p: &str| fs.canonicalize(Path::new(p)).ok();
    assert_eq!(canon("/fake/abs/file"), Some("/fake/real/file".into()));
    assert_eq!(canon("/fake/rel/./file"), Some("/fake/real/file".into()));
    // A file named as a directory, an absent name, a loop and a relative path fail.
    for bad in [
        "/fake/abs/file/",
        "/fake/abs/none",
        "/fake/loop",
        "fake/abs",
    ] {
        assert_eq!(canon(bad), None, "{bad}");
    }
    assert_eq!(
        fs.read_to_string(Path::new("/fake/rel/file")).unwrap(),
        "text"
    );
    assert_eq!(
        fs.resolved_kind(Path::new("/fake/abs")).unwrap(),
        Some(EntryKind::Directory)
    );
    // None of it is on the real disk.
    assert!(RealHostFs.read(Path::new("/fake/real/file")).is_err());
}
