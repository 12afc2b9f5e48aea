//! Launch: confine the current process, then `exec` the command in its place.
//!
//! [`launch`] is the one sequence: it takes a resolved [`LaunchPlan`] and runs the steps
//! in the one order the kernel allows, one line each (rlimits, cgroup, identity, network
//! namespace, then `confine_and_exec`: hardening, Landlock, the socket gate, seccomp,
//! exec). The command replaces jaula (same pid), so exit codes, signals and the pid files
//! agents write keep working unchanged.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

use serde::Serialize;

use crate::hardening::{self, HardeningOptions, HardeningReport};
use crate::landlock::{self, AbiFloor, Enforcement, Plan, PlanMode};
use crate::launch_plan::LaunchPlan;
use crate::network::netns::{self, NetnsError, SocketRestriction};
use crate::seccomp::{self, SeccompReport};
use jaula_policy::limits::ResourceLimits;
use jaula_policy::network::NetworkMode;

use crate::exit::exit_like;

/// The layers to apply before `exec`.
pub(crate) struct Confinement<'a> {
    /// What process hardening may leave alone (kept descriptors).
    pub(crate) hardening: HardeningOptions,
    /// `None` only in bwrap mode on a kernel without Landlock (reported, never silent).
    pub(crate) landlock: Option<(&'a Plan, AbiFloor)>,
    /// Install the seccomp deny-list before `exec`.
    pub(crate) seccomp: bool,
    /// `--network none` where no network namespace could be made: refuse TCP through
    /// Landlock and every non-unix socket family through a second seccomp filter.
    pub(crate) restrict_sockets: bool,
    /// The socket gate: when set, the launch forks, the command runs as a child under the
    /// gate's filter and this process supervises it (see [`crate::call_gate`]).
    pub(crate) gate: Option<Gate>,
    /// With the gate: the plan's write splits its supervisor takes over (`landlock` is then
    /// the supervisor's wider plan, and the command enters `command_writes` on top).
    pub(crate) gate_split: Option<&'a landlock::GateSplit>,
}

/// What the socket gate needs from the caller.
pub(crate) struct Gate {
    /// Decides `Access::Connect` for a pathname socket the cage did not bind.
    pub(crate) policy: jaula_policy::Policy,
    /// Runs in the supervisor after the command ended, before it leaves with the same
    /// status (the planting report).
    pub(crate) after_exit: Option<Box<dyn FnOnce(std::process::ExitStatus)>>,
    /// `--network none`: the DNS stub's sockets in the cage's namespace. The supervisor
    /// answers them (NXDOMAIN, each name recorded: see [`crate::network::dns_stub`]); the
    /// child closes its copies before it execs the command.
    pub(crate) dns_stub: Vec<std::net::UdpSocket>,
    /// `-v`: say what the supervisor answered when the command has ended.
    pub(crate) verbose: bool,
    /// The command's resource limits: set in the command's process only, never in the
    /// supervisor's.
    pub(crate) limits: ResourceLimits,
    /// This cage's record, for `jaula ps` and `jaula stop`: the supervisor says there who
    /// it is, and that it ended.
    pub(crate) record: Option<std::fs::File>,
    /// `--network allow`: the hand-off channel to the proxy, held by the supervisor alone
    /// until it ends, so the proxy's process sees it close when the cage's last process
    /// has ended and serves the helpers the command left running until then.
    pub(crate) proxy_lifetime: Option<OwnedFd>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("allowed_sockets", &self.policy.unix_sockets())
            .field("after_exit", &self.after_exit.is_some())
            .field("dns_stub", &self.dns_stub.len())
            .finish()
    }
}

impl std::fmt::Debug for Confinement<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confinement")
            .field("hardening", &self.hardening)
            .field("landlock", &self.landlock.is_some())
            .field("seccomp", &self.seccomp)
            .field("restrict_sockets", &self.restrict_sockets)
            .field("gate", &self.gate)
            .field("gate_split", &self.gate_split.map(|s| &s.widened))
            .finish()
    }
}

/// What was in force when `exec` was called.
#[derive(Debug, Serialize)]
pub struct LaunchReport {
    /// Each hardening step and its outcome.
    pub(crate) hardening: HardeningReport,
    /// What Landlock enforced, when it was applied.
    pub(crate) landlock: Option<Enforcement>,
    /// The seccomp filter installed, when it was.
    pub(crate) seccomp: Option<SeccompReport>,
    /// The no-namespace socket restriction of `--network none`, when it was needed.
    pub(crate) sockets: Option<SocketRestriction>,
    /// Whether the socket gate supervises the command's connect and bind calls.
    pub(crate) socket_gate: bool,
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
        if self.socket_gate {
            writeln!(
                f,
                "socket gate: connect/bind answered by a supervisor (pathname unix sockets: \
                 the cage's own or allowed ones only); unix datagram sockets refused"
            )?;
        } else {
            writeln!(f, "socket gate: not applied")?;
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
    /// A hardening step failed.
    #[error("process hardening failed: {0}")]
    Hardening(#[from] hardening::HardeningError),
    /// The Landlock ruleset could not be built or enforced.
    #[error("landlock could not be enforced: {0}")]
    Landlock(#[from] landlock::LandlockError),
    /// A seccomp filter could not be built or installed.
    #[error("seccomp could not be installed: {0}")]
    Seccomp(#[from] seccomp::SeccompError),
    /// A network namespace, its loopback or a hand-off failed.
    #[error("network layer: {0}")]
    Network(#[from] NetnsError),
    /// The socket gate's filter or supervisor could not be set up.
    #[error("the socket gate could not be set up: {0}")]
    Gate(#[from] crate::call_gate::GateError),
    /// Other threads exist: the socket gate's fork would copy locks held by threads that
    /// do not exist in the child.
    #[error("the launch must fork from a single-threaded process, found {0} threads")]
    Threads(usize),
    /// `fork` failed.
    #[error("cannot fork the command: {0}")]
    Fork(std::io::Error),
    /// The signals the socket gate's supervisor forwards could not be blocked (before the
    /// fork) or unblocked again (in the child, before the command).
    #[error("cannot set the signal mask around the socket gate's fork: {0}")]
    SignalMask(std::io::Error),
    /// A resource limit could not be set.
    #[error("cannot set {name}: {source}")]
    Limit {
        /// The limit (`RLIMIT_NPROC`, ...).
        name: &'static str,
        /// What the kernel answered.
        source: std::io::Error,
    },
    /// A layer the plan requires is unavailable here (the reason says which).
    #[error("refusing to run: {0}")]
    Refused(String),
    /// Moving into the contract's cgroup failed.
    #[error("cannot enter the contract's cgroup: {0}")]
    Cgroup(std::io::Error),
    /// Switching to the contract's uid and gid failed.
    #[error("cannot become the contract's identity: {0}")]
    Identity(#[from] crate::identity::IdentityError),
    /// `execve` of the command failed after every layer was in force.
    #[error("cannot execute {}: {source}", .program.to_string_lossy())]
    Exec {
        /// The command as given.
        program: OsString,
        /// What the kernel answered.
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

/// Apply `limits` to this process. Lowering a limit needs no privilege.
pub fn set_resource_limits(limits: &ResourceLimits) -> Result<(), LaunchError> {
    use rustix::process::Resource;
    crate::limits::set_all(&[
        (Resource::Nproc, "RLIMIT_NPROC", limits.max_processes),
        (Resource::Data, "RLIMIT_DATA", limits.max_data_bytes),
    ])
    .map(|_| ())
    .map_err(|(name, source)| LaunchError::Limit { name, source })
}

/// Move this process into the cgroup whose `cgroup.procs` the runner opened on `fd`
/// (inherited across exec), then close it. Writing `0` names the writer; the kernel checks
/// the opener's credentials, so the runner's descriptor lets a tenant uid move itself.
pub(crate) fn enter_cgroup(fd: std::os::fd::RawFd) -> std::io::Result<()> {
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

/// After-the-command work for the socket gate's supervisor (the planting report, the
/// `--network none` notes): built by the caller, run with the command's status.
pub type AfterExit = Box<dyn FnOnce(std::process::ExitStatus)>;

/// Steps 1 to 3 of [`launch`]: the limits, then (a Contract's spawn) the cgroup and the
/// identity, all before anything is forked, so every process after this one inherits them.
fn enter_limits(plan: &LaunchPlan) -> Result<(), LaunchError> {
    // With the gate the command's process sets them after the fork (`fork_supervised`).
    if !plan.socket_gate {
        set_resource_limits(&plan.limits)?;
    }
    if let Some(fd) = plan.cgroup_fd {
        enter_cgroup(fd).map_err(LaunchError::Cgroup)?;
    }
    if let Some(identity) = plan.identity {
        crate::identity::become_identity(identity)?;
    }
    Ok(())
}

/// The one launch sequence: apply `plan` to this process and `exec` its command. Returns
/// only on failure; nothing of the command has run then.
///
/// `after_exit` runs in the socket gate's supervisor after the
/// command ends; `on_ready` sees what is in force just before `exec` (`--verbose`).
pub fn launch(
    plan: &LaunchPlan,
    after_exit: Option<AfterExit>,
    on_ready: impl FnOnce(&LaunchReport),
) -> LaunchError {
    // 1. rlimits, 2. cgroup, 3. identity.
    if let Err(e) = enter_limits(plan) {
        return e;
    }
    // 4. The network namespace (and under `allow` the proxy listener, bound inside it).
    let network = match enter_network(plan) {
        Ok(n) => n,
        Err(e) => return e,
    };
    // The Landlock rules, listed in this stage's own view of the filesystem (inside
    // bubblewrap the sealed paths are tmpfs): a backend artifact, not a second resolution.
    let rules = match landlock_rules(plan) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let split = gate_split(plan, rules.as_ref());
    let (mut command, mut confinement) = confinement(plan, network, rules.as_ref(), after_exit);
    if let Some(split) = &split {
        confinement.landlock = Some((&split.supervisor, AbiFloor::FsV1));
        confinement.gate_split = Some(split);
    }
    // 5. hardening, 6. Landlock, 7. the socket gate, 8. seccomp, 9. exec.
    confine_and_exec(&mut command, confinement, on_ready)
}

/// The command with its final environment, and the layers steps 5 to 8 apply.
fn confinement<'a>(
    plan: &LaunchPlan,
    network: NetworkStage,
    rules: Option<&'a Plan>,
    after_exit: Option<AfterExit>,
) -> (Command, Confinement<'a>) {
    let mut env = plan.env.clone();
    for (name, value) in network.env {
        env.retain(|(k, _)| k.as_os_str() != name.as_str());
        env.push((name.into(), value.into()));
    }
    let mut command = Command::new(&plan.command[0]);
    command.args(&plan.command[1..]).env_clear().envs(env);
    let mut hardening = HardeningOptions::new();
    for fd in &plan.keep_fds {
        hardening = hardening.keep_fd(*fd);
    }
    let confinement = Confinement {
        hardening,
        landlock: rules.map(|r| (r, AbiFloor::FsV1)),
        seccomp: true,
        restrict_sockets: network.restrict_sockets,
        gate: plan.socket_gate.then(|| Gate {
            policy: plan.policy.clone(),
            after_exit,
            dns_stub: network.dns_stub,
            verbose: plan.verbose,
            limits: plan.limits,
            record: plan.record_fd.and_then(take_record),
            proxy_lifetime: network.handoff,
        }),
        gate_split: None,
    };
    (command, confinement)
}

/// The cage's record, inherited on `fd`. Bookkeeping, not a layer: a record that cannot
/// be taken costs `jaula ps` this cage's line, said here, not the launch.
fn take_record(fd: std::os::fd::RawFd) -> Option<std::fs::File> {
    match netns::take_log_fd(fd) {
        Ok(file) => Some(file),
        Err(e) => {
            eprintln!("jaula: warning: the cage's record: {e}; jaula ps will not list it");
            None
        }
    }
}

/// The plan's Landlock rules. `None` only in the bwrap view on a kernel without Landlock,
/// where the mount view is the filesystem layer (said on stderr); natively Landlock is the
/// cage, and its absence a refusal.
fn landlock_rules(plan: &LaunchPlan) -> Result<Option<Plan>, LaunchError> {
    let support = landlock::probe();
    if !support.floor_met {
        if plan.stage == PlanMode::BwrapView {
            eprintln!(
                "jaula: warning: landlock: {}: the bwrap view is the only filesystem layer",
                support.kernel
            );
            return Ok(None);
        }
        return Err(LaunchError::Refused(format!(
            "landlock: {}",
            support.kernel
        )));
    }
    let rules = landlock::plan(&plan.policy, plan.stage, &jaula_policy::RealHostFs)
        .map_err(|e| LaunchError::Refused(format!("the landlock plan failed: {e}")))?;
    if plan.verbose {
        eprintln!("jaula: {}", rules.summary());
    }
    Ok(Some(rules))
}

/// Under the socket gate, the plan's write splits taken over by its supervisor (see
/// [`Plan::gate_split`]); `None` without the gate, which keeps the split for everyone.
fn gate_split(plan: &LaunchPlan, rules: Option<&Plan>) -> Option<landlock::GateSplit> {
    let split = rules.filter(|_| plan.socket_gate)?.gate_split()?;
    if plan.verbose {
        let dirs: Vec<String> = split
            .widened
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        eprintln!(
            "jaula: landlock: the socket gate's supervisor takes the write splits over (new \
             entries there are its to decide); the command keeps them in a nested domain of \
             {} write rules: {}",
            split.command_writes.rules.len(),
            dirs.join(" ")
        );
    }
    Some(split)
}

/// What step 4 leaves for the later ones.
struct NetworkStage {
    env: Vec<(String, String)>,
    restrict_sockets: bool,
    /// `none`: the DNS stub's sockets, for the socket gate's supervisor.
    dns_stub: Vec<std::net::UdpSocket>,
    /// `allow`: the hand-off channel, for the socket gate's supervisor to hold.
    handoff: Option<OwnedFd>,
}

/// Step 3, the network:
/// - `none`, native: a namespace of its own, with the DNS stub; where none can be made,
///   the socket restriction (Landlock TCP + seccomp families) instead. In bwrap's view
///   the jaula that started bubblewrap made the namespace and bound the stub.
/// - `allow`: natively a namespace first (required: no fallback); then, in both
///   backends, bind the proxy's listener and the steering listeners on the namespace's
///   loopback, and hand them and the stub's sockets out to the proxy.
fn enter_network(plan: &LaunchPlan) -> Result<NetworkStage, LaunchError> {
    let mut stage = NetworkStage {
        env: Vec::new(),
        restrict_sockets: false,
        dns_stub: Vec::new(),
        handoff: None,
    };
    let network = &plan.network;
    match (network.mode, plan.stage) {
        (NetworkMode::Host, _) => {}
        // In the view no process of jaula's can bind the stub: only the sockets the
        // launching jaula bound are served.
        (NetworkMode::None, PlanMode::BwrapView) if network.dns_fds.is_empty() => {}
        (NetworkMode::None, PlanMode::BwrapView) => {
            stage.dns_stub = none_stub(plan, &network.dns_fds);
        }
        (NetworkMode::None, _) if network.fallback => stage.restrict_sockets = true,
        (NetworkMode::None, _) => match netns::enter_loopback_netns() {
            Ok(kind) => {
                if plan.verbose {
                    eprintln!("jaula: network none: namespace {kind:?}");
                }
                stage.dns_stub = none_stub(plan, &[]);
            }
            Err(e) => {
                eprintln!(
                    "jaula: network none: {e}; refusing TCP with landlock and non-unix \
                     sockets with seccomp instead (no loopback inside either)"
                );
                stage.restrict_sockets = true;
            }
        },
        (NetworkMode::Allow, _) => {
            let Some(fd) = network.handoff_fd else {
                return Err(LaunchError::Refused(
                    "--network allow stage started without its hand-off".to_owned(),
                ));
            };
            let channel = netns::take_handoff_fd(fd)?;
            if plan.stage == PlanMode::Native {
                netns::enter_loopback_netns().map_err(|e| {
                    LaunchError::Refused(format!(
                        "--network allow needs a network namespace and none can be made: {e}"
                    ))
                })?;
            }
            enter_allow(plan, &channel)?;
            stage.env = netns::proxy_env(network.proxy_localhost);
            stage.handoff = Some(channel);
        }
    }
    Ok(stage)
}

/// `allow`, after the namespace: bind the listeners and the stub, hand them out.
///
/// In bwrap's view an unprivileged stage cannot bind the web ports in bwrap's namespace
/// (see `enter_loopback_netns_with_userns`) and makes one of its own; root cannot map
/// itself into a new user namespace without CAP_SETFCAP (Linux 5.12+) and binds them in
/// bwrap's, by bwrap's `--cap-add`.
fn enter_allow(plan: &LaunchPlan, channel: &impl std::os::fd::AsFd) -> Result<(), LaunchError> {
    let root = rustix::process::geteuid().is_root();
    let nested = match plan.stage {
        PlanMode::Native => Ok(false),
        _ if root => Ok(false),
        _ => match netns::enter_loopback_netns_with_userns() {
            Ok(_) => Ok(true),
            Err(e) if e.changed_nothing() => Err(e.to_string()),
            Err(e) => return Err(LaunchError::Refused(format!("--network allow: {e}"))),
        },
    };
    let own_namespace = matches!(nested, Ok(true));
    let mut listeners = netns::CageListeners::bind()
        .map_err(|e| LaunchError::Refused(format!("cannot listen on the cage's loopback: {e}")))?;
    if let Err(e) = nested.and_then(|_| listeners.bind_steering().map_err(|e| e.to_string())) {
        eprintln!(
            "jaula: network allow: no steering for clients that ignore the proxy variables \
             ({e}); they reach nothing"
        );
    }
    listeners.send(channel)?;
    // The stub must answer in the namespace the command runs in: a nested one made just
    // now binds its own; otherwise the sockets bubblewrap's parent bound are taken
    // (natively there are none, and the stage binds them here).
    let addresses = netns::stub_addresses();
    let fds: &[std::os::fd::RawFd] = if own_namespace {
        // The parent's sockets serve the outer namespace: close them here.
        if !plan.network.dns_fds.is_empty() {
            drop(netns::stub_sockets(&addresses, &plan.network.dns_fds));
        }
        &[]
    } else {
        &plan.network.dns_fds
    };
    // Without the stub a client that ignores the proxy variables fails to resolve, as it
    // did before the stub existed: warn, and hand out none.
    let stub = netns::stub_sockets(&addresses, fds).unwrap_or_else(|e| {
        eprintln!("jaula: warning: network allow: {e}; names do not resolve");
        Vec::new()
    });
    netns::send_dns_sockets(channel, &stub)?;
    Ok(())
}

/// The `none` stub's sockets: taken from `fds` (bound by the jaula that started
/// bubblewrap) or bound here. Only with the socket gate, whose supervisor serves them. A
/// stub that cannot be set up costs the names in the exit summary, not the cage: warn.
fn none_stub(plan: &LaunchPlan, fds: &[std::os::fd::RawFd]) -> Vec<std::net::UdpSocket> {
    if !plan.socket_gate {
        return Vec::new();
    }
    match netns::stub_sockets(&netns::stub_addresses(), fds) {
        Ok(sockets) => {
            if plan.verbose {
                let at: Vec<String> = sockets
                    .iter()
                    .filter_map(|s| s.local_addr().ok())
                    .map(|a| a.to_string())
                    .collect();
                eprintln!(
                    "jaula: network none: DNS stub on {} (answers NXDOMAIN, names recorded)",
                    at.join(" ")
                );
            }
            sockets
        }
        Err(e) => {
            eprintln!("jaula: warning: network none: {e}; names looked up are not recorded");
            Vec::new()
        }
    }
}

/// Confine this process and `exec` `command`. Returns only on failure.
///
/// Must run on the thread that execs, before any other thread could act for the caged
/// command: capabilities, no_new_privs, Landlock domains (below ABI 8) and seccomp filters
/// are per-thread, and `execve` ends every other thread. `on_ready` sees what is in force
/// just before `exec` (for `--verbose`).
///
/// With a socket gate the process forks after the Landlock step: the child finishes the
/// sequence and execs, this process supervises it and leaves with its status; it never
/// returns then, except with an error from before the fork.
pub(crate) fn confine_and_exec(
    command: &mut Command,
    confinement: Confinement<'_>,
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

/// The steps, in the order the kernel needs them. Returns in the process that execs.
fn confine(confinement: Confinement<'_>) -> Result<LaunchReport, LaunchError> {
    // 1. Capabilities, securebits, no_new_privs, core dumps, inherited fds. First: as root a
    //    capable process could undo the layers below (CAP_SYS_ADMIN, CAP_SYS_PTRACE read
    //    /proc/<pid>/environ past Landlock), and no_new_privs is what lets an unprivileged
    //    process install the two filters at all.
    let hardening = hardening::harden(&confinement.hardening)?;
    // 2. Landlock: filesystem rights and scopes, on this thread and everything it execs,
    //    and on the gate's supervisor, which acts for the cage from inside its domain.
    let landlock = match confinement.landlock {
        Some((plan, floor)) => Some(landlock::restrict_self(plan, floor)?),
        None => None,
    };
    // 3. The gate's own descriptors, while this process may still open a netlink socket.
    let gate = match &confinement.gate {
        Some(_) => Some(crate::call_gate::prepare()?.take_split(confinement.gate_split)?),
        None => None,
    };
    // 4. The `none` fallback: its own Landlock domain (TCP) and seccomp filter (socket
    //    families), stacked on the ones above and below; the strictest answer wins. The
    //    supervisor takes it too, so a connect it makes for the cage meets the same rules.
    let sockets = if confinement.restrict_sockets {
        Some(netns::restrict_sockets()?)
    } else {
        None
    };
    // 5. The socket gate: fork; the child installs the notification filter and goes on,
    //    this process answers its calls until it ends.
    let socket_gate = match (gate, confinement.gate) {
        (Some(launch), Some(settings)) => {
            fork_supervised(launch, settings)?;
            true
        }
        _ => false,
    };
    // 6. seccomp last: its deny-list refuses syscalls (mount API, keyctl, ...) that no
    //    earlier step needs, and it must see the final thread state.
    let seccomp = if confinement.seccomp && socket_gate {
        // The gate's filter refuses new namespaces itself, where its supervisor sees them.
        Some(seccomp::install_without(crate::call_gate::enforces)?)
    } else if confinement.seccomp {
        Some(seccomp::install()?)
    } else {
        None
    };
    Ok(LaunchReport {
        hardening,
        landlock,
        seccomp,
        sockets,
        socket_gate,
    })
}

/// Fork the supervisor, which forks the command. Returns in the command's process, with
/// the gate's filter installed. This process waits for the command's status and leaves
/// with it; the supervisor serves the cage until its last process has ended (see
/// `call_gate::lifetime`).
fn fork_supervised(
    launch: crate::call_gate::GateLaunch,
    settings: Gate,
) -> Result<(), LaunchError> {
    let threads = std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(1);
    if threads != 1 {
        return Err(LaunchError::Threads(threads));
    }
    let blocked = crate::call_gate::block_forwarded().map_err(LaunchError::SignalMask)?;
    let (report_out, report_in) = crate::call_gate::status_pipe().map_err(LaunchError::Fork)?;
    // SAFETY: the process has one thread (checked above), so the child is a complete copy
    // with no lock held by a thread that does not exist in it.
    let supervisor = unsafe { libc::fork() };
    if supervisor < 0 {
        return Err(LaunchError::Fork(std::io::Error::last_os_error()));
    }
    if supervisor > 0 {
        // The waiter holds nothing of the gate: no listener, no stub socket.
        drop((launch, settings, report_in));
        wait_and_leave(supervisor, report_out, &blocked)
    }
    drop(report_out);
    let release = crate::call_gate::Release::new(report_in).map_err(LaunchError::Fork)?;
    supervise_command(launch, settings, release, &blocked)
}

/// In the supervisor: fork the command, which returns `Ok` in its own process with the
/// gate's filter installed; this process answers the cage's calls until its last process
/// has ended, then leaves.
fn supervise_command(
    launch: crate::call_gate::GateLaunch,
    settings: Gate,
    release: crate::call_gate::Release,
    blocked: &crate::call_gate::Blocked,
) -> Result<(), LaunchError> {
    let Gate {
        policy,
        after_exit,
        dns_stub,
        verbose,
        limits,
        mut record,
        proxy_lifetime,
    } = settings;
    supervisor_limits();
    if let Some(file) = record.as_mut() {
        note_supervisor(file);
    }
    // Every process the command leaves behind is reparented here, so the supervisor stays
    // their ancestor (ptrace access under Yama) and reaps them.
    if let Err(e) = crate::call_gate::set_child_subreaper() {
        eprintln!("jaula: the socket gate could not be set up: child subreaper: {e}");
        release.refuse(126);
        std::process::exit(126);
    }
    // SAFETY: still one thread (this process was forked from a single-threaded one and has
    // started none); the child runs this program's own code to exec.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!(
            "jaula: cannot fork the command: {}",
            std::io::Error::last_os_error()
        );
        release.refuse(126);
        std::process::exit(126);
    }
    if pid == 0 {
        blocked.restore().map_err(LaunchError::SignalMask)?;
        // The stub's sockets and the status pipe are the supervisor's alone: a cage holding
        // a stub socket could answer its own lookups past the record.
        drop((dns_stub, release, record, proxy_lifetime));
        // The command's limits are its own: the supervisor keeps the launcher's, so the
        // cage cannot starve it of descriptors, memory or processes.
        set_resource_limits(&limits)?;
        launch.in_child()?;
        landlock::scope_signals_below_parent()?;
        return Ok(());
    }
    let serving = Serving {
        release,
        after_exit,
        verbose,
        dns_stub,
        record,
        proxy_lifetime,
    };
    serve_cage(launch, pid, policy, serving, blocked)
}

/// What the supervisor holds while it serves: the command's status pipe, the after-exit
/// report, the DNS stub's sockets, the cage record and the proxy's lifetime channel (held
/// until this process leaves; see [`Gate`]).
struct Serving {
    release: crate::call_gate::Release,
    after_exit: Option<Box<dyn FnOnce(std::process::ExitStatus)>>,
    verbose: bool,
    dns_stub: Vec<std::net::UdpSocket>,
    record: Option<std::fs::File>,
    proxy_lifetime: Option<OwnedFd>,
}

/// Answer the cage's calls until its last process has ended, then leave: 0 when the gate
/// held to the end, 126 when it could not be set up or failed.
fn serve_cage(
    launch: crate::call_gate::GateLaunch,
    pid: libc::pid_t,
    policy: jaula_policy::Policy,
    serving: Serving,
    blocked: &crate::call_gate::Blocked,
) -> ! {
    let Serving {
        release,
        after_exit,
        verbose,
        dns_stub,
        mut record,
        proxy_lifetime: _held_until_exit,
    } = serving;
    // A second descriptor of the record for the supervisor's bound sockets (the same
    // open file, appended to in whole lines); this one stays for the `Ended` line.
    let peers_record = record.as_ref().and_then(|f| f.try_clone().ok());
    let supervisor = match launch.in_parent(pid, policy, peers_record) {
        Ok(s) => s,
        // The command's process failed its own setup and said why on stderr: leave as it
        // left.
        Err(crate::call_gate::GateError::ChildEnded) => {
            match crate::call_gate::wait_child(pid) {
                Ok(status) => release_with(release, status),
                Err(_) => release.refuse(126),
            }
            std::process::exit(0);
        }
        Err(e) => {
            // Nothing of the command has run: its process waits for the hand-off. Stop it.
            crate::call_gate::kill_child(pid);
            eprintln!("jaula: the socket gate could not be set up: {e}");
            release.refuse(126);
            std::process::exit(126);
        }
    };
    // Where the stub answers, for the gate's answer to connects there.
    crate::call_gate::set_stub_addresses(
        dns_stub
            .iter()
            .filter_map(|s| s.local_addr().ok())
            .map(|a| a.ip())
            .collect(),
    );
    // Threads only now: the forks above needed a single-threaded process.
    for socket in dns_stub {
        let _ = std::thread::Builder::new()
            .name("jaula-dns-stub".into())
            .spawn(move || crate::network::dns_stub::serve_refusing(socket));
    }
    let mut ended = CommandEnd {
        release: Some(release),
        after_exit,
        verbose,
    };
    match crate::call_gate::supervise(supervisor, pid, blocked, &mut ended) {
        Ok(()) => {
            if let Some(file) = record.as_mut() {
                let _ = crate::cage_record::append(file, &crate::cage_record::Line::Ended);
            }
            std::process::exit(0)
        }
        Err(e) => {
            if ended.release.is_some() {
                crate::call_gate::kill_child(pid);
                eprintln!("jaula: the socket gate failed while the command ran: {e}");
                ended.refuse(126);
            }
            std::process::exit(126);
        }
    }
}

/// The supervisor's lines in the cage record: who it is, and its name (best effort: a
/// record that cannot be written leaves `jaula ps` with less to say, not the cage open).
fn note_supervisor(file: &mut std::fs::File) {
    if let Ok(me) = crate::cage_record::this_process() {
        let _ = crate::cage_record::append(file, &crate::cage_record::Line::Supervisor(me));
    }
    if let Ok(name) = crate::cage_record::name_this_process() {
        let _ = crate::cage_record::append(file, &crate::cage_record::Line::Named(name));
    }
}

/// In the waiter: leave as the command left, once the supervisor says how.
fn wait_and_leave(
    supervisor: libc::pid_t,
    report: std::os::fd::OwnedFd,
    blocked: &crate::call_gate::Blocked,
) -> ! {
    // The cage shares this process's Landlock domain below ABI 6 (no nested domain): keep
    // its memory and descriptors out of the cage's reach, as the supervisor's are.
    let _ = crate::call_gate::set_not_dumpable();
    match crate::call_gate::wait_for_command(supervisor, report, blocked) {
        Ok(crate::call_gate::Waited::Command(status)) => exit_like(status),
        Ok(crate::call_gate::Waited::SupervisorEnded(status)) => {
            eprintln!(
                "jaula: the socket gate's supervisor ended ({status}) before the command did; \
                 the cage's gated calls fail from now on"
            );
            std::process::exit(126)
        }
        Err(e) => {
            eprintln!("jaula: cannot wait for the command: {e}");
            std::process::exit(126)
        }
    }
}

/// The supervisor's own limits, set by jaula rather than left as the launcher had them: as
/// many descriptors as the hard limit allows (every notification may need a few), no file
/// size limit it could die of (SIGXFSZ is ignored, so a write past one fails instead).
fn supervisor_limits() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    for resource in [Resource::Nofile, Resource::Fsize] {
        let mut limit = getrlimit(resource);
        limit.current = limit.maximum;
        let _ = setrlimit(resource, limit);
    }
    // SAFETY: setting a signal's disposition to SIG_IGN touches only this process.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// What the supervisor does when the command ends: the caller's reports (planting,
/// `-v`), then the status handed to the waiter.
struct CommandEnd {
    release: Option<crate::call_gate::Release>,
    after_exit: Option<AfterExit>,
    verbose: bool,
}

impl CommandEnd {
    fn refuse(&mut self, code: i32) {
        if let Some(release) = self.release.take() {
            release.refuse(code);
        }
    }
}

impl crate::call_gate::CommandEnded for CommandEnd {
    fn command_ended(
        &mut self,
        status: std::process::ExitStatus,
        counts: crate::call_gate::GateCounts,
    ) {
        if let Some(hook) = self.after_exit.take() {
            hook(status);
        }
        if let Some(line) = counts.nested_sandbox_line() {
            eprintln!("{line}");
        }
        if self.verbose {
            eprintln!("jaula: socket gate: {counts}");
        }
        if let Some(release) = self.release.take() {
            release_with(release, status);
        }
    }
}

fn release_with(mut release: crate::call_gate::Release, status: std::process::ExitStatus) {
    release.command_ended(status);
}
