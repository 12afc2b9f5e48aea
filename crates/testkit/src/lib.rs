//! Shared fixtures for jaula's tests: one copy of what every test crate needs.
//!
//! - [`bench_home`]: the homes `bench/` measures in (the `jaula-scratch-home` binary).
//! - [`ci`]: the skip-or-fail rule (a missing kernel feature or tool skips with a printed
//!   reason, but fails under `CI=true`) and the root check.
//! - [`scratch`](mod@scratch): scratch trees under the caller's `CARGO_TARGET_TMPDIR`, never `/tmp`;
//!   a suite whose `CARGO_TARGET_TMPDIR` lies beneath `/tmp` or `/var/tmp` stops with one message
//!   (every Linux cage makes `/tmp` writable, so a fixture there proves nothing).
//! - [`identity`]: root and the unprivileged uid 65534, and handing a tree to one of them.
//! - [`tools`]: whether the host has the programs a test drives.
//! - [`fixture`]: the credential home (present and absent secrets, caches, a repo).
//! - [`probe`]: the probe harness that judges a cage by its effect on the host.
//! - [`net`]: loopback servers for the network tests.
//! - [`output`]: a finished command's output in assertions.
//! - [`process`]: a process started beside the cage, killed and reaped on drop.
//! - [`rerun`]: one test of the running binary re-run as a child ([`this_test!`] names it).
//! - [`shared_dir`]: host directories several tests hold at once (`/run/user/UID`).
//!
//! This crate is test code (`publish = false`): a broken fixture panics, on purpose.
#![deny(missing_docs)]

pub mod bench_home;
pub mod ci;
pub mod fixture;
pub mod identity;
pub mod layout;
pub mod net;
pub mod output;
pub mod probe;
pub mod process;
pub mod rerun;
pub mod scratch;
pub mod shared_dir;
pub mod tools;

pub use ci::{cage_or_skip, is_root, require_root, skip_or_fail, under_ci};
pub use fixture::{
    build_home, marker, write_marker, Home, CREATE_PATHS, EXTRA_DIRS, PRESENT_FILES,
};
pub use identity::{accounts, chown_tree, chown_tree_except, Backend, User, NOBODY};
pub use process::{copy_program, proc_pids, spawn_ready, Ready, Reaped};
#[cfg(target_os = "linux")]
pub use process::{make_fifos, wait_until_gone};
pub use scratch::{open_to_others, scratch_in};
pub use shared_dir::SharedDir;
pub use tools::{find_tool, have, missing_tool, tools_or_skip, HOST_PATH};

/// A fresh scratch directory under the calling test crate's `CARGO_TARGET_TMPDIR`:
/// `scratch!("prefix-")` gives `(TempDir, canonical root)`. A macro because only the test
/// crate itself sees that variable at compile time.
#[macro_export]
macro_rules! scratch {
    ($prefix:expr) => {
        $crate::scratch_in(::std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), $prefix)
    };
}

/// The harness name of the test function `name` written in the calling module:
/// `this_test!("child_entry")` in `tests/all/floor.rs` gives `floor::child_entry`, what
/// `--exact` needs to re-run it as a child (see [`rerun`]).
#[macro_export]
macro_rules! this_test {
    ($name:expr) => {
        $crate::rerun::harness_name(module_path!(), $name)
    };
}

/// Two tests from one case that takes a [`User`]: the first named test runs it as root,
/// the second as the unprivileged uid (`as_each_user!(case => case_as_root,
/// case_as_nobody);`). Every live suite checks both identities; the names stay explicit
/// so a reader finds each test by the name the harness prints.
#[macro_export]
macro_rules! as_each_user {
    ($case:ident => $as_root:ident, $as_nobody:ident) => {
        #[test]
        fn $as_root() {
            $case($crate::User::Root);
        }

        #[test]
        fn $as_nobody() {
            $case($crate::User::Nobody);
        }
    };
}

/// One `#[test]` per (case, arguments): each runs alone, under its own name
/// (`case_tests! { hook_bwrap_root => hook_case("bwrap", User::Root); }`). A live suite
/// runs each case on every backend and as every user; the names stay explicit so a
/// reader finds each test by the name the harness prints.
#[macro_export]
macro_rules! case_tests {
    ($($name:ident => $case:ident($($arg:expr),* $(,)?);)*) => {
        $(#[test]
        fn $name() {
            $case($($arg),*);
        })*
    };
}
