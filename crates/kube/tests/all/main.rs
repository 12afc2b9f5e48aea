//! The kube crate's integration tests, one module a suite, linked into ONE test binary.
//! A test's name is `suite::test`. The golden files and the schema validator stay in
//! `tests/` beside this folder.

mod common;

mod golden;
mod pss;
mod schemas;
