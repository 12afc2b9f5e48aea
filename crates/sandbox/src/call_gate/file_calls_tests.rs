use super::*;

#[test]
fn the_at_calls_decode_their_registers() {
    let args = [7u64, 0x1000, 0x2000, 0x3000, 0x400, 0];
    let rename = |flags| FileCall::Rename {
        old_dir: 7,
        old: 0x1000,
        new_dir: 0x2000,
        new: 0x3000,
        flags,
    };
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
        Some(rename(0x400))
    );
    assert_eq!(FileCall::of(libc::SYS_renameat, &args), Some(rename(0)));
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
    let entry =
        |name: &[u8], dir_only| Entry::new(parent.try_clone().unwrap(), name.to_vec(), dir_only);
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

/// A guard over the default policy for `repo` in `home`, and an entry `name` in `dir`.
fn on_the_way(
    policy: &jaula_policy::Policy,
    files: &ProtectedFiles,
    dir: &std::path::Path,
    name: &str,
) -> Result<(), i32> {
    let reports = Reports::default();
    let mut guard = Guard {
        policy,
        files,
        reports: &reports,
        widened: &[],
    };
    let entry = Entry::new(
        rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap(),
        name.as_bytes().to_vec(),
        false,
    );
    let answer = guard.check_on_the_way(&entry, "create of");
    assert_eq!(reports.refused(), u64::from(answer.is_err()));
    answer
}

#[test]
fn only_a_directory_may_stand_on_the_way_to_a_protected_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, repo) = (root.join("home"), root.join("repo"));
    std::fs::create_dir_all(home.join(".local/share")).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    let policy = jaula_policy::PolicySpec::with_defaults(
        jaula_policy::Platform::Linux,
        home.clone(),
        repo.clone(),
    )
    .resolve()
    .unwrap();
    let files = ProtectedFiles::of(&policy);
    // `.claude` (absent) holds `.claude/settings.json`; `~/.local/share` and `~/.local`
    // hold `applications`; `.gemini` holds `settings.json`.
    assert_eq!(
        on_the_way(&policy, &files, &repo, ".claude"),
        Err(libc::EACCES)
    );
    assert_eq!(
        on_the_way(&policy, &files, &repo, ".gemini"),
        Err(libc::EACCES)
    );
    assert_eq!(
        on_the_way(&policy, &files, &home.join(".local"), "share"),
        Err(libc::EACCES)
    );
    assert_eq!(
        on_the_way(&policy, &files, &home, ".local"),
        Err(libc::EACCES)
    );
    // A protected path itself, and names beside or beneath one, are other checks' business.
    assert_eq!(on_the_way(&policy, &files, &repo, ".envrc"), Ok(()));
    assert_eq!(on_the_way(&policy, &files, &repo, "src"), Ok(()));
    assert_eq!(on_the_way(&policy, &files, &repo, "."), Ok(()));
    // Known by (directory, name) too, for the names whose directory existed at launch: what
    // another mount of the repo would be checked by.
    let id = std::fs::metadata(&repo).unwrap();
    let key = ((id.dev(), id.ino()), b".claude".to_vec());
    assert!(files
        .on_the_way
        .get(&key)
        .is_some_and(|p| p.starts_with(repo.join(".claude"))));
}

#[test]
fn a_lock_file_names_the_file_it_locks() {
    assert_eq!(
        lock_target(std::path::Path::new("/h/.gitconfig.lock")),
        Some(PathBuf::from("/h/.gitconfig"))
    );
    assert_eq!(lock_target(std::path::Path::new("/h/.lock")), None);
    assert_eq!(lock_target(std::path::Path::new("/h/config")), None);
    assert_eq!(lock_target(std::path::Path::new("/")), None);
}
