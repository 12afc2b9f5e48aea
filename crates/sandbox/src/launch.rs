//! Launch: confine the current process, then `exec` the command in its place.
//!
//! The steps run in the one order the kernel allows, one line each, in
//! [`confine_and_exec`]. The command replaces jaula (same pid), so exit codes, signals and
//! the pid files agents write keep working unchanged.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use serde::Serialize;

use crate::hardening::{self, HardeningOptions, HardeningReport};
use crate::landlock::{self, Enforcement, Floor, Plan};
use crate::network::netns::{self, NetnsError, SocketRestriction};
use crate::seccomp::{self, SeccompReport};

/// The layers to apply before `exec`.
#[derive(Debug)]
pub struct Confinement<'a> {
    pub hardening: HardeningOptions,
    /// `None` only in bwrap mode on a kernel without Landlock (reported, never silent).
    pub landlock: Option<(&'a Plan, Floor)>,
    pub seccomp: bool,
    /// `--network none` where no network namespace could be made: refuse TCP through
    /// Landlock and every non-unix socket family through a second seccomp filter.
    pub restrict_sockets: bool,
}

/// What was in force when `exec` was called.
#[derive(Debug, Serialize)]
pub struct LaunchReport {
    pub hardening: HardeningReport,
    pub landlock: Option<Enforcement>,
    pub seccomp: Option<SeccompReport>,
    pub sockets: Option<SocketRestriction>,
}

impl std::fmt::Display for LaunchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.hardening)?;
        match &self.landlock {
            Some(l) => writeln!(f, "{l}")?,
            None => writeln!(f, "landlock: not applied")?,
        }
        if let Some(s) = &self.sockets {
            writeln!(
                f,
                "network: no namespace; non-unix sockets refused by seccomp{}",
                if s.landlock_tcp {
                    ", TCP bind/connect by landlock"
                } else {
                    " (landlock TCP rules unavailable)"
                }
            )?;
        }
        match &self.seccomp {
            Some(s) => write!(f, "{s}"),
            None => write!(f, "seccomp: not applied"),
        }
    }
}

/// Why the command did not start. Every variant means nothing ran unconfined.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    #[error("process hardening failed: {0}")]
    Hardening(#[from] hardening::HardeningError),
    #[error("landlock could not be enforced: {0}")]
    Landlock(#[from] landlock::LandlockError),
    #[error("seccomp could not be installed: {0}")]
    Seccomp(#[from] seccomp::SeccompError),
    #[error("network layer: {0}")]
    Network(#[from] NetnsError),
    #[error("cannot set {name}: {source}")]
    Limit {
        name: &'static str,
        source: std::io::Error,
    },
    #[error("cannot execute {}: {source}", .program.to_string_lossy())]
    Exec {
        program: OsString,
        source: std::io::Error,
    },
}

impl LaunchError {
    /// The shell's convention: 127 when the command was not found, 126 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            LaunchError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                127
            }
            _ => 126,
        }
    }
}

/// Resource ceilings set (soft and hard) before confining, inherited by the command.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ResourceLimits {
    /// `RLIMIT_NPROC`: counted per real uid across the host, so per tenant with one uid each.
    pub max_processes: Option<u64>,
    /// `RLIMIT_DATA`, bytes. Not `RLIMIT_AS`: V8 reserves gigabytes of address space at
    /// start-up, and an address-space ceiling kills node before it runs.
    pub max_data_bytes: Option<u64>,
}

/// Apply `limits` to this process. Lowering a limit needs no privilege.
pub fn set_resource_limits(limits: &ResourceLimits) -> Result<(), LaunchError> {
    use rustix::process::{setrlimit, Resource, Rlimit};
    for (resource, name, value) in [
        (Resource::Nproc, "RLIMIT_NPROC", limits.max_processes),
        (Resource::Data, "RLIMIT_DATA", limits.max_data_bytes),
    ] {
        if let Some(v) = value {
            setrlimit(
                resource,
                Rlimit {
                    current: Some(v),
                    maximum: Some(v),
                },
            )
            .map_err(|e| LaunchError::Limit {
                name,
                source: e.into(),
            })?;
        }
    }
    Ok(())
}

/// Move this process into the cgroup whose `cgroup.procs` the runner opened on `fd`
/// (inherited across exec), then close it. Writing `0` names the writer; the kernel checks
/// the opener's credentials, so the runner's descriptor lets a tenant uid move itself.
pub fn enter_cgroup(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    use std::os::fd::{FromRawFd, OwnedFd};
    if fd < 3 {
        return Err(std::io::Error::other(format!(
            "descriptor {fd} is not a cgroup.procs"
        )));
    }
    rustix::io::fcntl_getfd(
        // SAFETY: the borrow lasts for this one call; fcntl(F_GETFD) on a number that is not
        // an open descriptor only fails with EBADF, which is the check we want.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) },
    )?;
    // SAFETY: `fd` is open (checked above), was handed to this process for this purpose by
    // `jaula contract run`, and nothing else in jaula owns or uses it; taking ownership
    // closes it once written.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    rustix::io::write(&owned, b"0")?;
    Ok(())
}

/// Confine this process and `exec` `command`. Returns only on failure.
///
/// Must run on the thread that execs, before any other thread could act for the caged
/// command: capabilities, no_new_privs, Landlock domains (below ABI 8) and seccomp filters
/// are per-thread, and `execve` ends every other thread. `on_ready` sees what is in force
/// just before `exec` (for `--verbose`).
pub fn confine_and_exec(
    command: &mut Command,
    confinement: &Confinement<'_>,
    on_ready: impl FnOnce(&LaunchReport),
) -> LaunchError {
    match confine(confinement) {
        Ok(report) => {
            on_ready(&report);
            let source = command.exec();
            LaunchError::Exec {
                program: command.get_program().to_os_string(),
                source,
            }
        }
        Err(e) => e,
    }
}

/// The steps, in the order the kernel needs them.
fn confine(confinement: &Confinement<'_>) -> Result<LaunchReport, LaunchError> {
    // 1. Capabilities, securebits, no_new_privs, core dumps, inherited fds. First: as root a
    //    capable process could undo the layers below (CAP_SYS_ADMIN, CAP_SYS_PTRACE read
    //    /proc/<pid>/environ past Landlock), and no_new_privs is what lets an unprivileged
    //    process install the two filters at all.
    let hardening = hardening::harden(&confinement.hardening)?;
    // 2. Landlock: filesystem rights and scopes, on this thread and everything it execs.
    let landlock = match confinement.landlock {
        Some((plan, floor)) => Some(landlock::restrict_self(plan, floor)?),
        None => None,
    };
    // 3. The `none` fallback: its own Landlock domain (TCP) and seccomp filter (socket
    //    families), stacked on the ones above and below; the strictest answer wins.
    let sockets = if confinement.restrict_sockets {
        Some(netns::restrict_sockets()?)
    } else {
        None
    };
    // 4. seccomp last: its deny-list refuses syscalls (mount API, keyctl, ...) that no
    //    earlier step needs, and it must see the final thread state.
    let seccomp = if confinement.seccomp {
        Some(seccomp::install()?)
    } else {
        None
    };
    Ok(LaunchReport {
        hardening,
        landlock,
        seccomp,
        sockets,
    })
}

/// Leave as `status` says the child left: the same exit code, or the same signal (the
/// default disposition restored first, so a shell sees "killed by SIGTERM", not 143).
pub fn exit_like(status: std::process::ExitStatus) -> ! {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        // SAFETY: restoring SIG_DFL for one signal and raising it touches no memory; if
        // the signal does not end the process (e.g. SIGCHLD), the exit below does.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        std::process::exit(128 + signal);
    }
    std::process::exit(status.code().unwrap_or(126))
}
