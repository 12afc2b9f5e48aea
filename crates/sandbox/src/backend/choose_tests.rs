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
        choose(Requested::Landlock, None, probe),
        Ok(Launcher::Native {
            bwrap_unavailable: None
        })
    );
    assert!(!probed.get());
    let err = choose(Requested::Landlock, missing(false), works).unwrap_err();
    assert_eq!(err.reason(), NO_LANDLOCK);
}

#[test]
fn the_whole_table() {
    for requested in [Requested::Auto, Requested::Bwrap] {
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
        choose(Requested::Auto, None, fails),
        Ok(Launcher::Native {
            bwrap_unavailable: Some(fails())
        })
    );
    // ... unless Landlock is missing too: both reasons.
    let err = choose(Requested::Auto, missing(false), fails).unwrap_err();
    assert_eq!(
        err.reason(),
        format!("{}; and {NO_LANDLOCK}", fails().reason())
    );
    assert_eq!(err.landlock.as_deref(), Some(NO_LANDLOCK));
    // bwrap by name never falls back.
    for landlock_ok in [true, false] {
        let err = choose(Requested::Bwrap, missing(landlock_ok), fails).unwrap_err();
        assert_eq!(err.reason(), format!("bwrap backend: {}", fails().reason()));
        assert_eq!(err.bwrap, Some(fails()));
    }
}
