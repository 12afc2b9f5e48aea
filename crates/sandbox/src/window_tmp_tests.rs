use super::*;
use crate::test_support::scratch;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn fd_path(fd: RawFd) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap()
}

#[test]
fn creates_the_window_pair_private_and_inheritable() {
    let (_d, root) = scratch("private-tmp-");
    let state = root.join("state");
    let tmp = PrivateTmp::open(&state, "w1").unwrap();
    let win = state.join(".runtime/tmp/w1");
    assert_eq!(tmp.window_dir(), win);
    for name in [TMP_NAME, VAR_TMP_NAME] {
        let meta = std::fs::symlink_metadata(win.join(name)).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o700, "{name}");
    }
    assert_eq!(
        std::fs::metadata(&win).unwrap().permissions().mode() & 0o7777,
        0o700
    );
    let fds = tmp.fds();
    assert_eq!(fd_path(fds.tmp), win.join(TMP_NAME));
    assert_eq!(fd_path(fds.var_tmp), win.join(VAR_TMP_NAME));
    for fd in [fds.tmp, fds.var_tmp] {
        let flags = rustix::io::fcntl_getfd(borrow_fd(fd)).unwrap();
        assert!(
            !flags.contains(rustix::io::FdFlags::CLOEXEC),
            "bubblewrap inherits it"
        );
    }
    // A second launch of the same window reuses (and re-tightens) the pair.
    std::fs::set_permissions(win.join(TMP_NAME), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(win.join(TMP_NAME).join("left"), "x").unwrap();
    drop(tmp);
    let again = PrivateTmp::open(&state, "w1").unwrap();
    assert_eq!(
        std::fs::metadata(win.join(TMP_NAME))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o700
    );
    assert!(
        win.join(TMP_NAME).join("left").exists(),
        "what a window left stays"
    );
    drop(again);
}

fn borrow_fd(fd: RawFd) -> std::os::fd::BorrowedFd<'static> {
    // The descriptor is owned by a PrivateTmp that outlives every use in these tests.
    // SAFETY: the fd is open for the duration of the borrow (see above).
    unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
}

#[test]
fn a_planted_symlink_is_never_followed_at_any_step() {
    for planted in [
        ".runtime",
        ".runtime/tmp",
        ".runtime/tmp/w1",
        ".runtime/tmp/w1/tmp",
    ] {
        let (_d, root) = scratch("private-tmp-");
        let state = root.join("state");
        let victim = root.join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        let link = state.join(planted);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = PrivateTmp::open(&state, "w1").unwrap_err();
        assert!(
            matches!(&err, PrivateTmpError::Open { path, source }
                if *path == link && [Errno::LOOP, Errno::NOTDIR].contains(source)),
            "{planted}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(&victim).unwrap().count(),
            0,
            "{planted}: wrote through"
        );
    }
}

#[test]
fn a_file_where_a_directory_belongs_is_refused() {
    let (_d, root) = scratch("private-tmp-");
    let state = root.join("state");
    std::fs::create_dir_all(state.join(".runtime/tmp")).unwrap();
    std::fs::write(state.join(".runtime/tmp/w1"), "x").unwrap();
    let err = PrivateTmp::open(&state, "w1").unwrap_err();
    assert!(
        matches!(
            err,
            PrivateTmpError::Open {
                source: Errno::NOTDIR,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn another_users_window_dir_is_refused() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: chown to another uid needs root");
        return;
    }
    let (_d, root) = scratch("private-tmp-");
    let state = root.join("state");
    let win = state.join(".runtime/tmp/w1");
    std::fs::create_dir_all(&win).unwrap();
    std::os::unix::fs::chown(&win, Some(65534), Some(65534)).unwrap();
    let err = PrivateTmp::open(&state, "w1").unwrap_err();
    assert!(
        matches!(&err, PrivateTmpError::NotOwned { owner: 65534, .. }),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&win).unwrap().uid(), 65534);
}

#[test]
fn window_names_that_escape_their_directory_are_refused() {
    let (_d, root) = scratch("private-tmp-");
    for bad in ["", ".", "..", "a/b", "a\0b"] {
        assert!(
            matches!(
                PrivateTmp::open(&root, bad),
                Err(PrivateTmpError::BadWindowName(_))
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn window_dir_names_are_sanitised_or_derived_from_the_repo() {
    assert_eq!(
        window_dir_name(Some("repo:1 main"), Path::new("/r")),
        "repo-1-main"
    );
    assert_eq!(window_dir_name(Some("../x"), Path::new("/r")), "---x");
    let a = window_dir_name(None, Path::new("/home/o/src/app"));
    let b = window_dir_name(None, Path::new("/home/o/work/app"));
    assert!(
        a.starts_with("repo-app-") && b.starts_with("repo-app-"),
        "{a} {b}"
    );
    assert_ne!(a, b, "two repos with one basename get two directories");
    assert_eq!(
        a,
        window_dir_name(None, Path::new("/home/o/src/app")),
        "stable"
    );
    // FNV-1a 64 of the path, spelled out: a change here would orphan every window's files.
    assert_eq!(
        window_dir_name(None, Path::new("/a")),
        "repo-a-07d66707b49cd92d"
    );
}
