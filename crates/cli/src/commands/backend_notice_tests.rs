use super::*;

#[test]
fn a_missing_program_names_the_package_and_the_flag_that_silences_it() {
    let line = landlock_alone(&Availability::Unavailable(Unavailable::NotFound {
        program: "bwrap".into(),
    }))
    .unwrap();
    assert!(
        line.starts_with("jaula: caging with Landlock alone ("),
        "{line}"
    );
    assert!(line.contains(MISSING_LAYERS), "{line}");
    assert!(line.contains("bwrap not found on PATH"), "{line}");
    assert!(line.contains("apt-get install bubblewrap"), "{line}");
    assert!(line.contains("--backend landlock"), "{line}");
    assert!(!line.contains("allow-uncaged"), "{line}");
    assert!(!line.contains('\n'), "one line: {line}");
}

#[test]
fn a_refused_namespace_names_the_kernel_switch_not_the_package() {
    let line = landlock_alone(&Availability::Unavailable(Unavailable::Failed {
        program: "/usr/bin/bwrap".into(),
        status: "exit status: 1".into(),
        stderr: "bwrap: setting up uid map: Permission denied".into(),
    }))
    .unwrap();
    assert!(line.contains("could not build a namespace"), "{line}");
    assert!(line.contains("unprivileged user namespaces"), "{line}");
    assert!(!line.contains("apt-get"), "{line}");
    assert!(line.contains("--backend landlock"), "{line}");
}

#[test]
fn no_line_when_the_view_is_there_or_the_owner_declared_it_away() {
    assert_eq!(
        landlock_alone(&Availability::Unavailable(Unavailable::Declared)),
        None
    );
    assert_eq!(
        landlock_alone(&Availability::Available {
            program: "/usr/bin/bwrap".into(),
            basis: jaula_sandbox::bwrap::AvailableBasis::Probed,
        }),
        None
    );
}
