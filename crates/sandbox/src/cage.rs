//! One shape for starting a cage, on every platform: a typed [`CageRequest`] goes in, the
//! platform's module plans it and starts it, and what came of it comes back as data for
//! the caller to print.
//!
//! - [`linux`]: the backend chosen from the request and what this host has (bubblewrap's
//!   view or Landlock natively), the launch plan with every descriptor it hands on, and
//!   where that plan runs (in this process, in a stage inside the view, in a stage child).
//! - [`macos`]: the Seatbelt profile, the window's private temporary directory and the
//!   `sandbox-exec` command line, planned on any platform (so Linux tests it) and started
//!   on macOS.
//!
//! Both answer [`prepare`](linux::prepare) with [`Chosen`]: a cage ready to start, or no
//! cage with the reason and the remedy. Starting one gives [`Started`]. The caller (the
//! CLI) resolves the policy, settles the network lists and the environment before, and
//! prints every notice and serves `--network allow`'s proxy after; nothing here prints
//! except what `verbose` asks for.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::PathBuf;

use jaula_policy::limits::ResourceLimits;
use jaula_policy::network::NetworkMode;
use jaula_policy::sources::BwrapHint;
use jaula_policy::{BackendChoice, Policy};

#[cfg(target_os = "linux")]
pub mod linux;
pub mod macos;

#[cfg(target_os = "linux")]
pub use linux::Prepared;
#[cfg(target_os = "macos")]
pub use macos::Prepared;

/// Why a cage could not be planned or started. Nothing ran.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CageError {
    /// Linux: the stage could not be prepared or started.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Linux(#[from] crate::start::StartError),
    /// macOS: the Seatbelt launch could not be planned or started.
    #[error(transparent)]
    Seatbelt(#[from] macos::SeatbeltLaunchError),
}

/// Plan `request` and choose its cage on this platform.
#[cfg(target_os = "linux")]
pub fn prepare(request: CageRequest) -> Result<Chosen<Prepared>, CageError> {
    Ok(linux::prepare(request)?)
}

/// Plan `request` and choose its cage on this platform.
#[cfg(target_os = "macos")]
pub fn prepare(request: CageRequest) -> Result<Chosen<Prepared>, CageError> {
    let sandbox_exec = std::path::Path::new(macos::SANDBOX_EXEC).exists();
    Ok(macos::prepare(request, sandbox_exec)?)
}

/// Start a prepared cage. Returns when the command ended in a stage this process waited
/// for, when the caller must take over (apply the plan here, serve the proxy), or with
/// the failure; a cage that becomes this process does not return otherwise.
#[cfg(any(target_os = "linux", target_os = "macos"))]
pub fn start(prepared: Prepared) -> Result<Started, CageError> {
    Ok(prepared.start()?)
}

/// Everything a launch needs from its caller, typed. The plumbing (the plan's format
/// version, hand-off and DNS descriptors, the cage's record, the log's descriptor) is the
/// platform module's to fill, never the caller's.
#[derive(Clone, Debug)]
pub struct CageRequest {
    /// The policy, resolved for this platform.
    pub policy: Policy,
    /// The Linux backend asked for (`--backend`, config `run.backend`). macOS has one
    /// cage and takes only [`BackendChoice::Auto`].
    pub backend: BackendChoice,
    /// The network mode and what it needs.
    pub network: NetworkRequest,
    /// The command's whole environment, credential variables already scrubbed.
    pub env: Vec<(OsString, OsString)>,
    /// The command's resource limits.
    pub limits: ResourceLimits,
    /// Inherited descriptors passed through to the command; every other one above 2 is
    /// closed before `exec`.
    pub keep_fds: Vec<RawFd>,
    /// Linux: the socket gate supervises the command's socket and file calls (off only
    /// with `--no-socket-gate`).
    pub socket_gate: bool,
    /// A tenant's cage (`--tenant`): nothing reports after it, and the launching process
    /// becomes the cage rather than waiting for it.
    pub tenant: bool,
    /// Linux, bubblewrap's view: a PID namespace and `/proc` of the cage's own.
    pub pid_namespace: bool,
    /// The window name the caller gave, if any: it names the private `/tmp`.
    pub window: Option<String>,
    /// Linux: where bubblewrap is, or that it is known not to work here.
    pub bwrap: BwrapHint,
    /// Print the layers in force before `exec`.
    pub verbose: bool,
    /// Where the command starts.
    pub cwd: PathBuf,
    /// The command and its arguments; never empty.
    pub command: Vec<OsString>,
}

/// The network part of a [`CageRequest`].
#[derive(Clone, Debug)]
pub struct NetworkRequest {
    /// `host`, `none` or `allow`.
    pub mode: NetworkMode,
    /// Linux, `none`: close the network without a namespace (Landlock TCP rules and a
    /// seccomp filter of socket families) even where a namespace could be made (config
    /// `network.none_without_namespace`).
    pub fallback: bool,
    /// `allow`: the proxy admits `localhost`, so the proxy variables do not exempt it.
    pub proxy_localhost: bool,
    /// `--log`: where refusals are recorded. On Linux the socket gate's supervisor writes
    /// the refused writes there, and under `none` the closed network's refusals; under
    /// `allow` the proxy keeps its own records there.
    pub log: Option<PathBuf>,
}

/// What [`prepare`](linux::prepare) decided.
#[derive(Debug)]
pub enum Chosen<P> {
    /// A cage, ready to start.
    Cage(P),
    /// No cage can be built here: the caller refuses (exit 126) or, when asked to, runs
    /// the command as it is.
    NoCage {
        /// Every reason that counted, in one line.
        reason: String,
        /// What would give a cage back (empty when nothing is known to).
        remedy: String,
    },
}

/// What came of starting a cage (when the process did not become the command).
#[derive(Debug)]
pub enum Started {
    /// The command ran in a stage this process waited for, and ended; the planting report
    /// is made. `hidden_tmp`: the command's arguments that name a file of the host's
    /// `/tmp` which the cage's private `/tmp` hid (for the caller's notice).
    Ended {
        /// How the stage ended.
        status: std::process::ExitStatus,
        /// Arguments naming host `/tmp` files the cage could not see.
        hidden_tmp: Vec<PathBuf>,
    },
    /// Linux: apply this plan to this very process and `exec` the command (the caller's
    /// stage runner, which attaches its after-exit notices).
    #[cfg(target_os = "linux")]
    Here(Box<crate::launch_plan::LaunchPlan>),
    /// `--network allow`: the cage runs; the caller serves the proxy on its listeners.
    Proxy(Box<ProxyDuty>),
}

/// `--network allow`'s cage, running: what the proxy serves, and what its process waits
/// for. On Linux the stage bound the listeners inside its own network namespace and handed
/// them out; on macOS the profile admits exactly the one loopback port bound here.
pub struct ProxyDuty {
    /// The stage (bubblewrap, `jaula stage` or `sandbox-exec`), to wait for.
    pub child: std::process::Child,
    /// Where forwarded signals go (past bubblewrap to the stage).
    pub forward: crate::child::Forward,
    /// The proxy's listener.
    pub listener: std::net::TcpListener,
    /// Linux: the TLS and HTTP steering listeners, when the stage could bind them.
    pub steered: Option<(std::net::TcpListener, std::net::TcpListener)>,
    /// Linux: the DNS stub's sockets (empty when the stage ended between the messages).
    pub dns: Vec<std::net::UdpSocket>,
    /// SIGTERM, SIGHUP, SIGINT and SIGQUIT, blocked since before the spawn: release once
    /// the proxy's handlers are in place.
    pub held: crate::child::HeldSignals,
    /// Linux: the protected paths as they were before the stage started.
    #[cfg(target_os = "linux")]
    pub snapshot: crate::planting::Snapshot,
    /// Linux: the proxy's end of the hand-off, which hangs up when the cage's last process
    /// has ended (the proxy serves the helpers the command left running until then).
    #[cfg(target_os = "linux")]
    pub lifetime: std::os::unix::net::UnixStream,
    /// The command's arguments that name a host `/tmp` file the view hides.
    pub hidden_tmp: Vec<PathBuf>,
}

impl std::fmt::Debug for ProxyDuty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyDuty")
            .field("child", &self.child.id())
            .field("listener", &self.listener.local_addr().ok())
            .field("steered", &self.steered.is_some())
            .field("dns", &self.dns.len())
            .finish_non_exhaustive()
    }
}
