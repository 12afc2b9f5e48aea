use super::*;

fn options(program: &Path) -> BwrapOptions {
    BwrapOptions {
        program: program.as_os_str().to_owned(),
        ..BwrapOptions::default()
    }
}

/// A stand-in bubblewrap that counts its runs in `count` and exits with `code`.
///
/// Written by `cp`, never opened for writing by this process: another test thread's fork
/// would inherit such a descriptor until its exec, and executing the script meanwhile
/// fails with ETXTBSY (the probe would then read as "unavailable").
fn fake_bwrap(dir: &Path, code: i32) -> PathBuf {
    let program = dir.join("bwrap");
    let source = dir.join("bwrap.txt");
    let count = dir.join("count");
    std::fs::write(
        &source,
        format!(
            "#!/bin/sh\necho run >> '{}'\nexit {code}\n",
            count.display()
        ),
    )
    .unwrap();
    let copied = std::process::Command::new("cp")
        .arg(&source)
        .arg(&program)
        .status()
        .unwrap();
    assert!(copied.success());
    let made = std::process::Command::new("chmod")
        .arg("0755")
        .arg(&program)
        .status()
        .unwrap();
    assert!(made.success());
    program
}

/// Why the probe's answer believes bubblewrap works; `None` for "unavailable".
fn basis(answer: &Availability) -> Option<AvailableBasis> {
    match answer {
        Availability::Available { basis, .. } => Some(*basis),
        Availability::Unavailable(_) => None,
    }
}

/// A scratch directory holding a stand-in bubblewrap that exits with `code`, and the path
/// its probe's answer is cached at.
fn with_fake_bwrap(code: i32) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let program = fake_bwrap(dir.path(), code);
    let cache = dir.path().join("probe");
    (dir, program, cache)
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("count"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_yes_is_kept_and_reused_until_the_binary_changes() {
    let (dir, program, cache) = with_fake_bwrap(0);
    let opts = options(&program);
    let first = probe_cached(BwrapHint::Probe, &opts, &cache);
    assert_eq!(basis(&first), Some(AvailableBasis::Probed));
    assert_eq!(runs(dir.path()), 1);
    let text = std::fs::read_to_string(&cache).unwrap();
    assert!(
        text.starts_with(HEADER) && text.ends_with("available\n"),
        "{text}"
    );
    for _ in 0..3 {
        let again = probe_cached(BwrapHint::Probe, &opts, &cache);
        assert_eq!(basis(&again), Some(AvailableBasis::Cached));
    }
    assert_eq!(runs(dir.path()), 1, "answered from the cache");
    // Another binary at the same path (new inode, size, times): probed again.
    std::fs::remove_file(&program).unwrap();
    let program = fake_bwrap(dir.path(), 0);
    std::fs::write(&program, std::fs::read(&program).unwrap().repeat(2)).unwrap();
    let third = probe_cached(BwrapHint::Probe, &options(&program), &cache);
    assert_eq!(basis(&third), Some(AvailableBasis::Probed));
    assert_eq!(runs(dir.path()), 2);
}

#[test]
fn a_no_is_never_kept_and_a_forged_file_is_not_a_yes() {
    let (dir, program, cache) = with_fake_bwrap(1);
    let opts = options(&program);
    for n in 1..=2 {
        assert!(!probe_cached(BwrapHint::Probe, &opts, &cache).is_available());
        assert_eq!(runs(dir.path()), n, "probed every time");
        assert!(!cache.exists(), "a failure is not written");
    }
    // A file that says "available" with another key is not taken.
    std::fs::write(&cache, format!("{HEADER}\navailable\n")).unwrap();
    assert!(!probe_cached(BwrapHint::Probe, &opts, &cache).is_available());
    assert_eq!(runs(dir.path()), 3);
}

#[test]
fn the_key_names_the_options_the_probe_tests() {
    let (_dir, program, _) = with_fake_bwrap(0);
    let plain = cache_key(&program, &options(&program)).unwrap();
    let with_pid = cache_key(
        &program,
        &BwrapOptions {
            proc_fs: !options(&program).proc_fs,
            ..options(&program)
        },
    )
    .unwrap();
    assert_ne!(plain, with_pid);
    assert!(plain.contains(&format!("euid {}", rustix::process::geteuid().as_raw())));
}

/// `line` probes the base view and `run` its own flags: both answers are kept side by
/// side, so neither evicts the other, and the file keeps at most [`MAX_ENTRIES`].
#[test]
fn answers_for_different_flags_are_kept_side_by_side() {
    let (dir, program, cache) = with_fake_bwrap(0);
    let base = options(&program);
    let no_net = BwrapOptions {
        unshare_net: true,
        ..options(&program)
    };
    probe_cached(BwrapHint::Probe, &base, &cache);
    probe_cached(BwrapHint::Probe, &no_net, &cache);
    assert_eq!(runs(dir.path()), 2);
    for opts in [&base, &no_net, &base] {
        let again = probe_cached(BwrapHint::Probe, opts, &cache);
        assert_eq!(basis(&again), Some(AvailableBasis::Cached));
    }
    assert_eq!(runs(dir.path()), 2);
    let text = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(entries(&text).len(), 2, "{text}");

    let many: Vec<String> = (0..MAX_ENTRIES + 3)
        .map(|i| format!("{HEADER}\nentry {i}\navailable\n"))
        .collect();
    let mut text = String::new();
    for key in many.iter().cloned() {
        text = with_entry(entries(&text), key);
    }
    let kept = entries(&text);
    assert_eq!(kept.len(), MAX_ENTRIES);
    assert_eq!(kept.last(), many.last());
    assert_eq!(kept.first(), Some(&many[3]));
}
