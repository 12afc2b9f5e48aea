use std::collections::HashSet;

use super::*;

#[test]
fn every_backend_is_listed_once_with_deviations_named_once() {
    let backends = all();
    let names: HashSet<&str> = backends.iter().map(|b| b.name()).collect();
    assert_eq!(names, HashSet::from(["seatbelt", "bwrap", "landlock"]));
    assert_eq!(names.len(), backends.len());
    for b in &backends {
        let mut seen = HashSet::new();
        for d in b.deviations() {
            assert!(seen.insert(d.name), "{}: {} listed twice", b.name(), d.name);
            assert!(
                !d.why.trim().is_empty(),
                "{}: {} has no reason",
                b.name(),
                d.name
            );
        }
        assert!(named(b.name()).is_some());
    }
    assert!(named("docker").is_none());
}

#[test]
fn the_bwrap_view_plan_lists_only_what_the_view_does_not_hide() {
    let view = crate::landlock::LandlockBackend {
        mode: crate::landlock::PlanMode::BwrapView,
    };
    let names: Vec<&str> = Backend::deviations(&view).iter().map(|d| d.name).collect();
    assert_eq!(names, ["metadata-writes"]);
}
