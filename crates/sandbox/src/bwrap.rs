//! The bubblewrap backend: a [`Policy`](jaula_policy::Policy) rendered as a mount view.
//!
//! The cage is a list of bubblewrap mount operations read top to bottom: a read-only bind
//! of `/`, the working set bound writable over it, the cage's own configuration bound
//! read-only again, and finally the seals: an empty read-only tmpfs over each sealed
//! directory and `/dev/null` over each sealed file. bubblewrap applies them in order and a
//! later mount covers an earlier one, so the order of the argv is the guarantee.
//!
//! - [`render_argv`]: the prefix (the caller appends the command), a pure function of the
//!   policy and of what a [`Disk`] answers.
//! - [`shell_join`]: that prefix as one shell line, byte-for-byte Python's `shlex.join`.
//! - [`probe`]: whether bubblewrap can build a namespace here.
//! - [`MountView`] / [`view_effect`]: a model of the mount view the argv builds, to explain
//!   which operation governs a path.

mod disk;
mod probe;
mod quote;
mod render;
mod view;

use std::ffi::OsString;
use std::path::PathBuf;

pub use disk::{Disk, RealDisk};
pub use probe::{
    find_program, probe, probe_with, Availability, AvailableBasis, Unavailable, PROBE_TIMEOUT,
};
pub use quote::{shell_join, shell_quote};
pub use render::{base_argv, option_flags, render_argv, BASE_FLAGS};
pub use view::{view_effect, MountView, ViewEffect};

/// How the cage is launched, beyond the policy.
///
/// Both flags are off by default, as in the seed, for reasons that still hold:
///
/// - `proc_fs` (`--unshare-pid --proc /proc`): a fresh `/proc` only means something inside
///   a new PID namespace, and in one a process sees namespace-local pids. Agent runtimes
///   write their own pid into shared state files (a gateway's pid file) that a host-side
///   tool later signals; a namespace-local pid there would make the host kill an
///   unrelated process. Without it, `/proc` is the host's, read-only through the bind of
///   `/`.
/// - `die_with_parent` (`--die-with-parent`): some agents start long-lived helpers (the
///   bus hub) detached on purpose so that they outlive the window that started them;
///   tying the namespace to its launching pane would tear those down for every window.
///   macOS's `sandbox-exec` has no such tie either, so leaving it off keeps the two cages'
///   lifetimes alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BwrapOptions {
    /// The bubblewrap program as written into the argv: a name looked up on `PATH` when the
    /// line runs, or a path. The probe resolves it to an absolute path.
    pub program: OsString,
    /// Give the cage its own PID namespace and `/proc`.
    pub proc_fs: bool,
    /// Kill the cage when the process that launched it dies.
    pub die_with_parent: bool,
    /// `--unshare-net`: a network namespace of the cage's own, with only `lo` (bubblewrap
    /// brings it up). `jaula run --network none|allow`.
    pub unshare_net: bool,
}

impl Default for BwrapOptions {
    fn default() -> BwrapOptions {
        BwrapOptions {
            program: OsString::from("bwrap"),
            proc_fs: false,
            die_with_parent: false,
            unshare_net: false,
        }
    }
}

/// Why an argv could not be rendered or modelled. Nothing is written anywhere on error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BwrapError {
    #[error("the bubblewrap program name is empty")]
    EmptyProgram,
    /// bubblewrap resolves mount destinations inside the new root; a relative one would
    /// land wherever its working directory happens to be.
    #[error("{what} is not an absolute path: {path:?}")]
    NotAbsolute { what: &'static str, path: PathBuf },
    /// execve(2) argv entries are C strings: a NUL would silently truncate the path.
    #[error("{what} contains a NUL byte, which no argv can carry: {path:?}")]
    NulByte { what: &'static str, path: PathBuf },
    /// [`MountView`] only models the operations [`render_argv`] emits.
    #[error("cannot model bubblewrap argument {arg:?} at position {index}")]
    UnknownArgument { arg: OsString, index: usize },
    #[error("bubblewrap option {option} at position {index} is missing its arguments")]
    MissingArgument { option: String, index: usize },
}

#[cfg(test)]
#[path = "bwrap_tests.rs"]
mod tests;
