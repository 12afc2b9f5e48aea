//! The contract crate's integration tests, one module a suite, linked into ONE test
//! binary. A test's name is `suite::test`; a child that re-runs one test of this binary
//! names it with `jaula_testkit::this_test!`.
//!
//! Contract mode is Linux-only: nothing here builds elsewhere.

#[cfg(target_os = "linux")]
mod common;

#[cfg(target_os = "linux")]
mod floor;
#[cfg(target_os = "linux")]
mod handover_live;
#[cfg(target_os = "linux")]
mod layout;
#[cfg(target_os = "linux")]
mod uid_faults;
#[cfg(target_os = "linux")]
mod wipe_faults;
