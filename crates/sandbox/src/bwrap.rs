//! The bubblewrap backend: a [`Policy`](jaula_policy::Policy) rendered as a mount view.
//!
//! The cage is a list of bubblewrap mount operations read top to bottom: a read-only bind
//! of `/`, the working set bound writable over it, the cage's own configuration bound
//! read-only again, and finally the seals: an empty read-only tmpfs over each sealed
//! directory and `/dev/null` over each sealed file. bubblewrap applies them in order and a
//! later mount covers an earlier one, so the order of the argv is the guarantee.
//!
//! - [`render_argv`]: the prefix (the caller appends the command), a pure function of the
//!   policy and of what the host's filesystem ([`jaula_policy::HostFs`]) answers.
//! - [`shell_join`]: that prefix as one shell line, byte-for-byte Python's `shlex.join`.
//! - [`probe`]: whether bubblewrap can build a namespace here.
//! - [`MountView`]: a model of the mount view the argv builds, to explain which operation
//!   governs a path.
//! - the window's own `/tmp` and `/var/tmp` ([`crate::window_tmp`]) are bound by
//!   descriptor, so the host's sockets there stay out of the view.

mod backend;
mod probe;
mod probe_cache;
mod quote;
mod render;
mod stage;
mod view;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::window_tmp::PrivateTmpFds;

pub(crate) use backend::BwrapBackend;
pub use backend::DEVIATIONS;
pub use probe::{probe, Availability, AvailableBasis, Unavailable};
pub use probe_cache::probe_cached;
pub use quote::shell_join;
#[cfg(any(target_os = "linux", test))]
pub(crate) use quote::shell_lines;
pub use render::render_argv;
pub(crate) use render::{option_flags, BASE_FLAGS};
pub use stage::{describe_pid_ns, hidden_by_private_tmp};
#[cfg(target_os = "linux")]
pub(crate) use stage::{private_view, stage_argv};
pub use view::{MountView, ViewEffect};

#[cfg(test)]
use probe::{find_program, probe_with};
#[cfg(test)]
use quote::shell_quote;
#[cfg(test)]
use render::base_argv;

/// How the cage is launched, beyond the policy.
///
/// - `proc_fs` (`--unshare-pid --proc /proc`), **on by default**: the cage gets its own PID
///   namespace and a `/proc` that lists only its own processes. Without it `/proc` is the
///   host's (read-only through the bind of `/`), and `/proc/<pid>/cmdline` is readable for
///   every host process without any ptrace right: a host `mysql --password=…` hands its
///   password to the cage. Turned off (`jaula run --no-pid-ns`) for
///   what it breaks: an agent runtime that writes its own pid into shared state for a
///   host-side tool to signal (inside the namespace that pid names an unrelated host
///   process), and host-side `ps`, `kill` or debugging of host processes from inside the
///   cage. Helpers started detached still outlive the command: bubblewrap's init inside the
///   namespace stays until its last child exits (observed with bubblewrap 0.8).
/// - `die_with_parent` (`--die-with-parent`), off: some agents start long-lived helpers
///   (the bus hub) detached on purpose so that they outlive the window that started them;
///   tying the namespace to its launching pane would tear those down for every window.
///   macOS's `sandbox-exec` has no such tie either, so leaving it off keeps the two cages'
///   lifetimes alike.
/// - `private_tmp`: bind these open directories on `/tmp` and `/var/tmp` instead of the
///   host's (see [`crate::window_tmp::PrivateTmp`]); `None` keeps the host's own.
/// - `private_run_user`: an empty tmpfs on `/run/user` holding one empty 0700 directory,
///   `/run/user/<uid>`, instead of the host's: `XDG_RUNTIME_DIR` stays a writable
///   directory, but the owner's session bus, docker, podman, pipewire and gpg-agent
///   sockets are not in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BwrapOptions {
    /// The bubblewrap program as written into the argv: a name looked up on `PATH` when the
    /// line runs, or a path. The probe resolves it to an absolute path.
    pub(crate) program: OsString,
    /// Give the cage its own PID namespace and `/proc`.
    pub(crate) proc_fs: bool,
    /// Kill the cage when the process that launched it dies.
    pub(crate) die_with_parent: bool,
    /// `--unshare-net`: a network namespace of the cage's own, with only `lo` (bubblewrap
    /// brings it up). `jaula run --network none|allow`.
    pub(crate) unshare_net: bool,
    /// `--cap-add CAP_NET_BIND_SERVICE` after the base's `--cap-drop ALL`, for
    /// `--network allow`: jaula's inner stage, started by root, binds the steering
    /// listeners on ports 443 and 80 of bubblewrap's network namespace. (An unprivileged
    /// stage cannot use it there, since bubblewrap runs it in a nested user namespace,
    /// and makes a namespace of its own instead.) The stage drops it with every other
    /// capability before the command runs, so the command never holds it.
    pub(crate) net_bind_service: bool,
    /// The cage's own `/tmp` and `/var/tmp`, by descriptor.
    pub(crate) private_tmp: Option<PrivateTmpFds>,
    /// The uid whose empty `/run/user/<uid>` replaces the host's `/run/user`.
    pub(crate) private_run_user: Option<u32>,
}

impl Default for BwrapOptions {
    fn default() -> BwrapOptions {
        BwrapOptions {
            program: OsString::from("bwrap"),
            proc_fs: true,
            die_with_parent: false,
            unshare_net: false,
            net_bind_service: false,
            private_tmp: None,
            private_run_user: None,
        }
    }
}

/// Why an argv could not be rendered or modelled. Nothing is written anywhere on error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BwrapError {
    /// No bubblewrap program was named.
    #[error("the bubblewrap program name is empty")]
    EmptyProgram,
    /// bubblewrap resolves mount destinations inside the new root; a relative one would
    /// land wherever its working directory happens to be.
    #[error("{what} is not an absolute path: {path:?}")]
    NotAbsolute {
        /// Which path (a sealed root, a writable root, the repo, ...).
        what: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// execve(2) argv entries are C strings: a NUL would silently truncate the path.
    #[error("{what} contains a NUL byte, which no argv can carry: {path:?}")]
    NulByte {
        /// Which path.
        what: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// [`MountView`] only models the operations [`render_argv`] emits.
    #[error("cannot model bubblewrap argument {arg:?} at position {index}")]
    UnknownArgument {
        /// The argument.
        arg: OsString,
        /// Its position in the argv.
        index: usize,
    },
    /// The argv ends before an option's operands (a truncated or hand-edited argv).
    #[error("bubblewrap option {option} at position {index} is missing its arguments")]
    MissingArgument {
        /// The option.
        option: String,
        /// Its position in the argv.
        index: usize,
    },
}

#[cfg(test)]
#[path = "bwrap_tests.rs"]
mod tests;
