//! The sandbox crate's integration tests, one module a suite, linked into ONE test binary
//! (one link instead of six). A test's name is `suite::test`.
//!
//! The live suites apply Landlock, seccomp and hardening to a CHILD: the test re-runs one
//! test of this binary (named with `jaula_testkit::this_test!`), so nothing is ever
//! applied to this shared process.

mod bwrap_live;
mod docs_sync;
mod seatbelt_conformance;

// Linux layers (or Linux-only syscalls and flags): nothing to build elsewhere.
#[cfg(target_os = "linux")]
mod hardening_live;
#[cfg(target_os = "linux")]
mod landlock_live;
#[cfg(target_os = "linux")]
mod seccomp_live;
