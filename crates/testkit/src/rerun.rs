//! Re-running one test of the running test binary as a child: how a live suite applies
//! Landlock, seccomp, rlimits or an identity to a process of its own, never to the shared
//! test process (those are per process, or per thread, and cannot be undone).
//!
//! A crate's integration tests are linked into one binary (`tests/all/main.rs`), so a
//! test's harness name is `suite::test`, not the function's bare name: [`crate::this_test!`]
//! builds it from where the call stands.

use std::ffi::OsString;
use std::process::Command;

/// The harness name of `test` written in the module `module_path` (as `module_path!()`
/// gives it, crate name first): the path without the crate's own name.
pub fn harness_name(module_path: &str, test: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, module)) => format!("{module}::{test}"),
        None => test.to_string(),
    }
}

/// The argv that runs exactly the test `name` (a harness name) of this binary, alone, on
/// one thread, with its output shown: `[this binary, name, --exact, --nocapture,
/// --test-threads=1]`.
pub fn argv(name: &str) -> Vec<OsString> {
    let me = std::env::current_exe().unwrap();
    vec![
        me.into_os_string(),
        name.into(),
        "--exact".into(),
        "--nocapture".into(),
        "--test-threads=1".into(),
    ]
}

/// [`argv`] as a command, ready for the caller's environment and pipes.
pub fn command(name: &str) -> Command {
    let argv = argv(name);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    cmd
}

#[cfg(test)]
#[path = "rerun_tests.rs"]
mod tests;
