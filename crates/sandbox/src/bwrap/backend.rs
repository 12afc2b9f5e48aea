//! The bubblewrap view as a [`Backend`]: its answer for a path is the mount operation of
//! the rendered argv that governs it ([`MountView`]), and for a connect the socket gate's,
//! which decides connects in this backend.

use std::ffi::OsString;
use std::path::Path;

use jaula_policy::{Access, HostFs, Platform, Policy};

use super::{render_argv, BwrapOptions, MountView};
use crate::backend::{gate_says, Backend, BackendError, Deviation, Verdict};

impl From<crate::bwrap::BwrapError> for BackendError {
    fn from(e: crate::bwrap::BwrapError) -> BackendError {
        BackendError::from_backend(e)
    }
}

/// The bare view `jaula render bwrap` prints, rendered with these options.
#[derive(Clone, Debug, Default)]
pub(crate) struct BwrapBackend {
    /// The launch options the argv is rendered with (`/proc`, private `/tmp`, ...).
    pub(crate) options: BwrapOptions,
}

/// Every known deviation of the bubblewrap view (the bare argv, and `jaula run --backend
/// bwrap`, which runs Landlock's bwrap-view plan inside it) from `decide`. Each is pinned
/// by a probe of `crates/sandbox/tests/bwrap_live.rs` or `crates/cli/tests/conformance.rs`.
pub const DEVIATIONS: &[Deviation] = &[
    Deviation {
        name: "absent-sealed-creatable",
        looser: true,
        why: "a mount needs an existing target, so a sealed path absent at launch inside a \
              writable root (a credential file, a credential directory, a channel token \
              created later) is not covered and can be created; it holds only what the cage \
              wrote, and the inner Landlock stage grants writable roots whole (no split)",
    },
    Deviation {
        name: "absent-protected-creatable",
        looser: true,
        why: "in the bare argv a protected path absent at launch is not mounted read-only \
              (a mount point would be left on the host as a placeholder), so it can be \
              created beneath a writable root; jaula run creates jaula's own protected \
              directories first and its gate refuses the planting-guard paths",
    },
    Deviation {
        name: "absent-writable-root-skipped",
        looser: false,
        why: "in the bare argv an absent writable root is skipped by --bind-try and $HOME is \
              read-only, so the root cannot be created from inside; jaula run creates it \
              before bubblewrap starts",
    },
    Deviation {
        name: "declared-file-seal-is-directory",
        looser: false,
        why: "a declared-file seal that is a directory on disk gets a read-only tmpfs \
              (/dev/null cannot be bound on a directory), which also hides its entries",
    },
    Deviation {
        name: "own-dev",
        looser: false,
        why: "/dev is the cage's own device tree (--dev): a create succeeds there but never \
              reaches the host's /dev",
    },
    Deviation {
        name: "private-tmp",
        looser: false,
        why: "under jaula run /tmp and /var/tmp are the window's own directories (in the \
              state home's .runtime/tmp), so nothing lands in the host's, whose sockets stay \
              out of reach",
    },
];

impl Backend for BwrapBackend {
    /// The argv prefix (the command is appended by the caller).
    type Artifact = Vec<OsString>;

    fn name(&self) -> &'static str {
        "bwrap"
    }

    fn platform(&self) -> Platform {
        Platform::Linux
    }

    fn deviations(&self) -> &'static [Deviation] {
        DEVIATIONS
    }

    fn render(&self, policy: &Policy, fs: &dyn HostFs) -> Result<Vec<OsString>, BackendError> {
        Ok(render_argv(policy, &self.options, fs)?)
    }

    fn verdict(
        &self,
        policy: &Policy,
        argv: &Vec<OsString>,
        fs: &dyn HostFs,
        path: &Path,
        access: Access,
    ) -> Result<Verdict, BackendError> {
        let effect = MountView::from_argv(argv, fs)?
            .with_display_home(policy.home())
            .effect(path, access);
        let note = run_private_note(policy, path);
        if access != Access::Connect {
            let reach = if effect.reaches_host {
                "reaches the host"
            } else {
                "does not reach the host"
            };
            return Ok(Verdict {
                allowed: effect.reaches_host,
                summary: format!("{reach} ({}){note}", effect.op),
            });
        }
        // A connect is not a file access: the socket gate decides it, from `decide` plus
        // the cage's own bound sockets, which only exist at run time.
        let allowed = policy.decide(path, access).allowed;
        let shows = if effect.reaches_host {
            "shows the host's file"
        } else {
            "does not show the host's file"
        };
        Ok(Verdict {
            allowed,
            summary: format!(
                "{}; the view {shows} ({}){note}",
                gate_says(allowed),
                effect.op
            ),
        })
    }
}

/// The argv modelled here is the bare view (`jaula render bwrap`); `jaula run` replaces
/// the host's `/tmp`, `/var/tmp` and `/run/user` with the window's own wherever the policy
/// makes them writable, so an access beneath them lands there, not on the host.
fn run_private_note(policy: &Policy, path: &Path) -> &'static str {
    let writable = |root: &str| policy.writable().iter().any(|w| w.path == Path::new(root));
    let beneath = |root: &str| path.starts_with(root) && path != Path::new(root);
    if (beneath("/tmp") && writable("/tmp")) || (beneath("/var/tmp") && writable("/var/tmp")) {
        "; under `jaula run` the window's own directory (<state home>/.runtime/tmp/WINDOW) \
         stands there instead, so the access lands in it, not on the host"
    } else if beneath("/run/user") && writable("/run/user") {
        "; under `jaula run` the cage's own empty /run/user/UID stands there instead, so the \
         access lands in it, not on the host"
    } else {
        ""
    }
}
