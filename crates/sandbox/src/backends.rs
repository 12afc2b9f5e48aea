//! The list of backends: the one place that names each, for `jaula explain`, `jaula
//! render`, the conformance suites and the generated deviation tables of
//! `docs/security.md`, which loop over [`all`]. Apart from the shape they share
//! ([`crate::backend`]), which every backend imports, so the two never import each other.

use crate::backend::AnyBackend;

/// Every backend with the options `jaula explain` and `jaula render` use: the Seatbelt
/// profile in `host` network mode, the bare bubblewrap view, Landlock's native plan.
pub fn all() -> Vec<Box<dyn AnyBackend>> {
    vec![
        Box::new(crate::seatbelt::SeatbeltBackend::default()),
        Box::new(crate::bwrap::BwrapBackend::default()),
        Box::new(crate::landlock::LandlockBackend::default()),
    ]
}

/// The backend named `name` in [`all`].
pub fn named(name: &str) -> Option<Box<dyn AnyBackend>> {
    all().into_iter().find(|b| b.name() == name)
}
