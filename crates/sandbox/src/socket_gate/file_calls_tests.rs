use super::*;

#[test]
fn the_at_calls_decode_their_registers() {
    let args = [7u64, 0x1000, 0x2000, 0x3000, 0x400, 0];
    assert_eq!(
        FileCall::of(libc::SYS_openat, &args),
        Some(FileCall::Open {
            dir: 7,
            path: 0x1000,
            flags: 0x2000,
            mode: 0x3000
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_linkat, &args),
        Some(FileCall::Link {
            old_dir: 7,
            old: 0x1000,
            new_dir: 0x2000,
            new: 0x3000,
            flags: 0x400
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_symlinkat, &args),
        Some(FileCall::Symlink {
            target: 7,
            dir: 0x1000,
            path: 0x2000
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_renameat2, &args),
        Some(FileCall::Rename {
            old_dir: 7,
            old: 0x1000,
            new_dir: 0x2000,
            new: 0x3000,
            flags: 0x400
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_renameat, &args),
        Some(FileCall::Rename {
            old_dir: 7,
            old: 0x1000,
            new_dir: 0x2000,
            new: 0x3000,
            flags: 0
        })
    );
    // AT_FDCWD arrives as the low word of a 64-bit register.
    let cwd = [
        libc::AT_FDCWD as u32 as u64,
        0x1000,
        libc::AT_REMOVEDIR as u64,
        0,
        0,
        0,
    ];
    assert_eq!(
        FileCall::of(libc::SYS_unlinkat, &cwd),
        Some(FileCall::Unlink {
            dir: libc::AT_FDCWD,
            path: 0x1000,
            flags: libc::AT_REMOVEDIR
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_truncate, &[0x1000, u64::MAX, 0, 0, 0, 0]),
        Some(FileCall::Truncate {
            path: 0x1000,
            len: -1
        })
    );
    assert_eq!(FileCall::of(libc::SYS_connect, &args), None);
    assert_eq!(FileCall::of(libc::SYS_read, &args), None);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_legacy_calls_are_their_at_forms_from_the_working_directory() {
    let cwd = libc::AT_FDCWD;
    let args = [0x1000u64, 0x2000, 0o644, 0, 0, 0];
    assert_eq!(
        FileCall::of(libc::SYS_creat, &args),
        Some(FileCall::Open {
            dir: cwd,
            path: 0x1000,
            flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            mode: 0x2000
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_rmdir, &args),
        Some(FileCall::Unlink {
            dir: cwd,
            path: 0x1000,
            flags: libc::AT_REMOVEDIR
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_link, &args),
        Some(FileCall::Link {
            old_dir: cwd,
            old: 0x1000,
            new_dir: cwd,
            new: 0x2000,
            flags: 0
        })
    );
    assert_eq!(
        FileCall::of(libc::SYS_open, &args),
        Some(FileCall::Open {
            dir: cwd,
            path: 0x1000,
            flags: 0x2000,
            mode: 0o644
        })
    );
}

#[test]
fn a_trailing_slash_is_given_back_to_the_kernel_only_for_a_real_name() {
    let dir = tempfile::tempdir().unwrap();
    let parent =
        rustix::fs::open(dir.path(), OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
    let entry = |name: &[u8], dir_only| Entry {
        parent: parent.try_clone().unwrap(),
        name: name.to_vec(),
        dir_only,
    };
    assert_eq!(name_of(&entry(b"d", true)), b"d/");
    assert_eq!(name_of(&entry(b"d", false)), b"d");
    assert_eq!(name_of(&entry(b".", true)), b".");
    assert_eq!(
        entry_path(&entry(b"x", false)).unwrap(),
        dir.path().canonicalize().unwrap().join("x")
    );
    assert_eq!(
        entry_path(&entry(b".", true)).unwrap(),
        dir.path().canonicalize().unwrap()
    );
}
