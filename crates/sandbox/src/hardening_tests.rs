use super::*;

#[test]
fn cap_last_cap_parses_the_proc_text() {
    assert_eq!(parse_cap_last_cap("40\n"), Some(40));
    assert_eq!(parse_cap_last_cap(" 63 "), Some(63));
    // capset's sets are 64 bits wide: a larger number cannot be real.
    assert_eq!(parse_cap_last_cap("64"), None);
    assert_eq!(parse_cap_last_cap(""), None);
    assert_eq!(parse_cap_last_cap("forty"), None);
}

#[test]
fn probing_finds_the_last_capability_on_older_and_newer_kernels() {
    assert_eq!(probe_cap_last_cap(40, |cap| cap <= 40), 40);
    assert_eq!(probe_cap_last_cap(40, |cap| cap <= 37), 37);
    assert_eq!(probe_cap_last_cap(40, |cap| cap <= 43), 43);
    assert_eq!(probe_cap_last_cap(40, |_| true), 63);
}

#[test]
fn cloexec_ranges_cover_everything_above_2_except_kept() {
    assert_eq!(cloexec_ranges(&[]), vec![(3, u32::MAX)]);
    assert_eq!(cloexec_ranges(&[0, 1, 2]), vec![(3, u32::MAX)]);
    assert_eq!(cloexec_ranges(&[3]), vec![(4, u32::MAX)]);
    assert_eq!(
        cloexec_ranges(&[9, 5, 6, 5]),
        vec![(3, 4), (7, 8), (10, u32::MAX)]
    );
}

proptest::proptest! {
    #[test]
    fn cloexec_ranges_mark_exactly_the_unkept(
        keep in proptest::collection::vec(0u32..64, 0..8),
        probe in 0u32..80,
    ) {
        let ranges = cloexec_ranges(&keep);
        let marked = ranges.iter().any(|(a, b)| *a <= probe && probe <= *b);
        proptest::prop_assert_eq!(marked, probe > 2 && !keep.contains(&probe));
        for (a, b) in &ranges {
            proptest::prop_assert!(a <= b);
        }
    }
}

#[test]
fn locked_securebits_are_the_pure_capability_mode() {
    // NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and their locks, KEEP_CAPS off but
    // locked: 0b1110_1111.
    assert_eq!(LOCKED_SECUREBITS, 0xef);
    assert_eq!(LOCKED_SECUREBITS & (1 << 4), 0, "KEEP_CAPS must stay off");
}

#[cfg(target_os = "linux")]
#[test]
fn keep_fds_are_validated_before_anything_changes() {
    use std::os::fd::AsRawFd;
    assert!(matches!(
        linux::validate_keep_fds(&[-1]),
        Err(HardeningError::InvalidKeepFd { fd: -1 })
    ));
    let file = tempfile::tempfile().unwrap();
    let open = file.as_raw_fd();
    assert_eq!(
        linux::validate_keep_fds(&[open, 1]).unwrap(),
        vec![open as u32, 1]
    );
    // Above fs.nr_open (at most 2^30), so no parallel test can have it open.
    assert!(matches!(
        linux::validate_keep_fds(&[2_000_000_000]),
        Err(HardeningError::KeepFdNotOpen { fd: 2_000_000_000 })
    ));
}

fn sample_report() -> HardeningReport {
    let mut report = HardeningReport {
        cap_last_cap: 40,
        cap_last_cap_source: CapLastCapSource::Procfs,
        steps: Vec::new(),
    };
    report.push(
        Step::BoundingSet,
        (Outcome::NotPermitted, "41 capabilities left".to_owned()),
    );
    report.push(Step::NoNewPrivs, (Outcome::Applied, "set".to_owned()));
    report
}

#[test]
fn report_displays_one_line_per_step() {
    let text = sample_report().to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "process hardening (capabilities 0..=40, /proc/sys/kernel/cap_last_cap):"
    );
    assert!(lines[1].contains("bounding set") && lines[1].contains("not needed"));
    assert!(lines[1].ends_with("41 capabilities left"));
    assert!(lines[2].contains("no_new_privs") && lines[2].contains("applied"));
    assert_eq!(lines.len(), 3);
}

#[test]
fn report_serializes_steps_in_order() {
    let json = serde_json::to_value(sample_report()).unwrap();
    assert_eq!(json["cap_last_cap"], 40);
    assert_eq!(json["cap_last_cap_source"], "procfs");
    assert_eq!(json["steps"][0]["step"], "bounding_set");
    assert_eq!(json["steps"][0]["outcome"], "not_permitted");
    assert_eq!(json["steps"][1]["step"], "no_new_privs");
    assert_eq!(
        sample_report().step(Step::NoNewPrivs).unwrap().outcome,
        Outcome::Applied
    );
    assert!(sample_report().step(Step::CoreDumps).is_none());
}

#[test]
fn errors_name_the_offending_value() {
    let error = HardeningError::KeepFdNotOpen { fd: 7 };
    assert_eq!(
        error.to_string(),
        "--keep-fd 7: no such open file descriptor"
    );
    let error = HardeningError::DropBoundingSet {
        cap: 21,
        source: std::io::Error::from_raw_os_error(libc::EPERM),
    };
    assert!(error.to_string().contains("capability 21"));
}

/// The /proc/self/fd fallback (kernels before 5.11) cannot be forced through `harden` on
/// this kernel, so it runs on its own, in a re-executed child: it changes descriptor
/// flags process-wide.
#[cfg(target_os = "linux")]
#[test]
fn procfs_fallback_marks_every_unkept_descriptor_close_on_exec() {
    use std::os::fd::AsRawFd;
    const CHILD: &str = "JAULA_HARDENING_UNIT_FALLBACK_CHILD";
    let name = "hardening::tests::procfs_fallback_marks_every_unkept_descriptor_close_on_exec";
    let cloexec = |fd: RawFd| {
        // SAFETY: F_GETFD only reads the flags of a descriptor this test holds open.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert!(flags >= 0, "fd {fd} not open");
        flags & libc::FD_CLOEXEC != 0
    };
    let clear_cloexec = |fd: RawFd| {
        // SAFETY: F_SETFD only changes the close-on-exec flag of a descriptor this test
        // holds open.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
    };
    if std::env::var_os(CHILD).is_some() {
        let files: Vec<std::fs::File> = (0..3).map(|_| tempfile::tempfile().unwrap()).collect();
        let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
        for fd in &fds {
            clear_cloexec(*fd);
        }
        let kept = fds[1] as u32;
        let marked = linux::mark_listed_fds_cloexec(&[kept]).unwrap();
        assert!(marked >= 2, "marked {marked}");
        assert!(cloexec(fds[0]));
        assert!(!cloexec(fds[1]), "the kept descriptor stays inheritable");
        assert!(cloexec(fds[2]));
        assert!(!cloexec(1), "stdout is never touched");
        return;
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn status_capability_lines_parse_and_a_missing_line_is_said() {
    let text = "Name:\tjaula\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n\
                CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000104\n";
    let caps = parse_status_caps(text).unwrap();
    assert_eq!(caps.bounding, 0x1ff_ffff_ffff);
    assert_eq!(caps.ambient, Some(0x104));
    assert_eq!(caps_in(caps.ambient.unwrap(), 40), vec![2, 8]);
    assert_eq!(caps_in(caps.bounding, 40).len(), 41);
    // A kernel without an ambient set has no CapAmb line; no CapBnd means "ask prctl".
    let old = "CapBnd:\t0000003fffffffff\n";
    assert_eq!(parse_status_caps(old).unwrap().ambient, None);
    assert_eq!(parse_status_caps("Name:\tx\n"), None);
    assert_eq!(parse_status_caps("CapBnd:\tnot-hex\n"), None);
}

#[cfg(target_os = "linux")]
#[test]
fn status_and_prctl_agree_on_this_process() {
    // The fast read must report what PR_CAPBSET_READ / PR_CAP_AMBIENT_IS_SET report.
    let caps =
        parse_status_caps(&std::fs::read_to_string("/proc/thread-self/status").unwrap()).unwrap();
    for cap in 0..=COMPILED_CAP_LAST_CAP {
        let bit = rustix::thread::CapabilitySet::from_bits_retain(1u64 << cap);
        let in_bounding = rustix::thread::capability_is_in_bounding_set(bit).unwrap();
        assert_eq!(in_bounding, caps.bounding & (1 << cap) != 0, "cap {cap}");
        let in_ambient = rustix::thread::capability_is_in_ambient_set(bit).unwrap();
        assert_eq!(
            in_ambient,
            caps.ambient.unwrap() & (1 << cap) != 0,
            "cap {cap}"
        );
    }
}
