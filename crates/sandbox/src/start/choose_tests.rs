use std::cell::Cell;

use super::*;
use crate::bwrap::{AvailableBasis, Unavailable};

fn works() -> Availability {
    Availability::Available {
        program: "/usr/bin/bwrap".into(),
        basis: AvailableBasis::Probed,
    }
}

fn fails() -> Availability {
    Availability::Unavailable(Unavailable::Declared)
}

const NO_LANDLOCK: &str = "landlock: not supported by this kernel";

fn missing(ok: bool) -> Option<String> {
    (!ok).then(|| NO_LANDLOCK.to_owned())
}

#[test]
fn landlock_by_name_never_probes_bubblewrap() {
    let probed = Cell::new(false);
    let probe = || {
        probed.set(true);
        works()
    };
    assert_eq!(
        choose(BackendChoice::Landlock, None, probe),
        Ok(Launcher::Native {
            bwrap_unavailable: None
        })
    );
    assert!(!probed.get());
    let err = choose(BackendChoice::Landlock, missing(false), works).unwrap_err();
    assert_eq!(err.reason(), NO_LANDLOCK);
}

#[test]
fn the_whole_table() {
    for requested in [BackendChoice::Auto, BackendChoice::Bwrap] {
        for landlock_ok in [true, false] {
            // bubblewrap works: always the view, whatever Landlock says.
            assert_eq!(
                choose(requested, missing(landlock_ok), works),
                Ok(Launcher::Bwrap(works())),
                "{requested:?} landlock {landlock_ok}"
            );
        }
    }
    // bubblewrap fails: auto falls back to Landlock, and says why.
    assert_eq!(
        choose(BackendChoice::Auto, None, fails),
        Ok(Launcher::Native {
            bwrap_unavailable: Some(fails())
        })
    );
    // ... unless Landlock is missing too: both reasons.
    let err = choose(BackendChoice::Auto, missing(false), fails).unwrap_err();
    assert_eq!(
        err.reason(),
        format!("{}; and {NO_LANDLOCK}", fails().reason())
    );
    assert_eq!(err.landlock.as_deref(), Some(NO_LANDLOCK));
    // bwrap by name never falls back.
    for landlock_ok in [true, false] {
        let err = choose(BackendChoice::Bwrap, missing(landlock_ok), fails).unwrap_err();
        assert_eq!(err.reason(), format!("bwrap backend: {}", fails().reason()));
        assert_eq!(err.bwrap, Some(fails()));
    }
}

/// Each refusal's remedy keeps a cage: the package or the kernel switch bubblewrap lacks,
/// or Landlock by name; never running uncaged.
#[test]
fn remedies_keep_a_cage() {
    let not_found = || {
        Availability::Unavailable(Unavailable::NotFound {
            program: "bwrap".into(),
        })
    };
    let err = choose(BackendChoice::Bwrap, None, not_found).unwrap_err();
    let remedy = err.remedy();
    assert!(
        remedy.starts_with("install bubblewrap (apt-get install bubblewrap)"),
        "{remedy}"
    );
    assert!(remedy.contains("--backend landlock"), "{remedy}");
    let refused = || {
        Availability::Unavailable(Unavailable::Failed {
            program: "/usr/bin/bwrap".into(),
            status: "exit status: 1".into(),
            stderr: String::new(),
        })
    };
    let remedy = choose(BackendChoice::Bwrap, None, refused)
        .unwrap_err()
        .remedy();
    assert!(remedy.contains("unprivileged user namespaces"), "{remedy}");
    assert!(!remedy.contains("apt-get"), "{remedy}");
    // Neither layer: both remedies, and no Landlock flag to fall back on.
    let remedy = choose(BackendChoice::Auto, missing(false), not_found)
        .unwrap_err()
        .remedy();
    assert!(
        remedy.contains("apt-get install bubblewrap") && remedy.contains("Landlock"),
        "{remedy}"
    );
    assert!(!remedy.contains("--backend landlock"), "{remedy}");
    let remedy = choose(BackendChoice::Landlock, missing(false), works)
        .unwrap_err()
        .remedy();
    assert!(remedy.contains("Linux 5.13+"), "{remedy}");
    for r in [
        choose(BackendChoice::Bwrap, None, not_found)
            .unwrap_err()
            .remedy(),
        choose(BackendChoice::Auto, missing(false), refused)
            .unwrap_err()
            .remedy(),
    ] {
        assert!(!r.contains("uncaged"), "{r}");
    }
}
