//! A [`CageRequest`] on Linux: the launch plan, the backend chosen from the request and
//! what this host has, and where the plan runs.
//!
//! [`prepare`] fills the plan's plumbing (the format version, the log's and the cage
//! record's descriptors) and chooses: bubblewrap's view, Landlock natively, or no cage.
//! [`Prepared::start`] sets the limits and starts the plan where it must run: in this
//! process ([`Started::Here`]), in jaula's stage inside the view, in a stage child this
//! process waits for to report after it, or beside `--network allow`'s proxy. A Contract's
//! spawn, which the runner outlives, is [`spawn_tenant`].

use std::os::fd::{IntoRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use super::{CageRequest, Chosen, ProxyDuty, Started};
use crate::bwrap::{self, Availability};
use crate::identity::Identity;
use crate::landlock::PlanMode;
use crate::launch::set_resource_limits;
use crate::launch_plan::{LaunchPlan, NetworkPlan, Reports, PLAN_VERSION};
use crate::start::{self, AllowStage, Launcher, NoCage, Stage, StartError, StartOptions};

/// A Linux cage, planned and chosen, not started yet.
#[derive(Debug)]
pub struct Prepared {
    plan: LaunchPlan,
    launcher: Launcher,
    options: StartOptions,
    tenant: bool,
    record_failed: Option<std::io::Error>,
}

/// Plan `request` and choose its cage. With no cage here the answer is
/// [`Chosen::NoCage`], except under `--network allow`, which has no uncaged way to run:
/// without a network namespace a port rule would admit any host.
pub fn prepare(request: CageRequest) -> Result<Chosen<Prepared>, StartError> {
    let options = StartOptions {
        requested: request.backend,
        bwrap: request.bwrap,
        proc_fs: request.pid_namespace,
        window: request.window.clone(),
        own_binary: std::env::current_exe().map_err(StartError::OwnBinary)?,
        cwd: request.cwd.clone(),
    };
    let tenant = request.tenant;
    let log = request.network.log.clone();
    let mut plan = plan_for(request);
    let launcher = match start::choose_cage(&plan, &options) {
        Ok(launcher) => launcher,
        Err(no_cage) if plan.network.mode.through_proxy() => return Err(allow_refusal(no_cage)),
        Err(no_cage) => {
            return Ok(Chosen::NoCage {
                reason: no_cage.reason(),
                remedy: no_cage.remedy(),
            })
        }
    };
    if let Some(path) = log.filter(|path| logs_in_stage(&plan, path)) {
        plan.network.log_fd = Some(open_stage_log(&path)?);
    }
    // Bookkeeping, not a layer: a record that cannot be made costs the cage its line in
    // `jaula ps` (the caller says so), not the launch.
    let mut record_failed = None;
    if plan.socket_gate && !tenant {
        let window = options.window.clone();
        match crate::cage_record::open_for_stage(&plan, backend_name(&launcher), window) {
            Ok(fd) => plan.record_fd = Some(fd),
            Err(e) => record_failed = Some(e),
        }
    }
    Ok(Chosen::Cage(Prepared {
        plan,
        launcher,
        options,
        tenant,
        record_failed,
    }))
}

/// The plan of `request`, with no descriptor handed on yet.
fn plan_for(request: CageRequest) -> LaunchPlan {
    LaunchPlan {
        version: PLAN_VERSION,
        policy: request.policy,
        stage: PlanMode::Native,
        network: NetworkPlan {
            mode: request.network.mode,
            fallback: request.network.fallback,
            handoff_fd: None,
            proxy_localhost: request.network.proxy_localhost,
            dns_fds: Vec::new(),
            log_fd: None,
        },
        env: request.env,
        limits: request.limits,
        cgroup_fd: None,
        identity: None,
        keep_fds: request.keep_fds,
        record_fd: None,
        socket_gate: request.socket_gate,
        // A tenant's spawn is not reported on: nobody runs a tenant's tree uncaged later,
        // and the runner keeps its own evidence (crates/contract).
        reports: Reports {
            planting: !request.tenant,
            network_none: true,
        },
        verbose: request.verbose,
        command: request.command,
    }
}

/// The refusal of `--network allow` where no cage with a network namespace can be built.
fn allow_refusal(no_cage: NoCage) -> StartError {
    match no_cage.bwrap_reason() {
        Some(bwrap) => StartError::AllowNeedsNamespace {
            bwrap,
            landlock: no_cage
                .landlock_reason()
                .map(|l| format!("; {l}"))
                .unwrap_or_default(),
        },
        None => StartError::NoCage {
            reason: no_cage.reason(),
        },
    }
}

/// The name `jaula ps` shows for the cage `launcher` builds.
fn backend_name(launcher: &Launcher) -> &'static str {
    match launcher {
        Launcher::Bwrap(_) => "bwrap",
        Launcher::Native { .. } => "landlock",
    }
}

/// Whether the stage writes `--log` itself: its socket gate supervisor records the refused
/// writes there (and under `none` the closed network's refusals). Not with
/// `--no-socket-gate` (nobody would write it), and under `allow` not for a file that is
/// not regular: the supervisor writes only to a regular file (a FIFO nobody drains would
/// stall the gate), while `allow`'s proxy, which opens the file itself, may log to one.
fn logs_in_stage(plan: &LaunchPlan, path: &Path) -> bool {
    let regular_or_absent = match std::fs::metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    plan.socket_gate && (!plan.network.mode.through_proxy() || regular_or_absent)
}

/// Open the `--log` file (append, created 0600) for the stage to inherit: close-on-exec
/// cleared, ownership handed to the plan's descriptor number (the stage takes it back and
/// sets close-on-exec again, so the command never holds it).
fn open_stage_log(path: &Path) -> Result<RawFd, StartError> {
    use std::os::unix::fs::OpenOptionsExt;
    let log_error = |source| StartError::Log {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(log_error)?;
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())
        .map_err(|e| log_error(e.into()))?;
    Ok(file.into_raw_fd())
}

impl Prepared {
    /// Under `auto`: why bubblewrap's view was not taken, when the cage is Landlock alone
    /// for that reason (the caller says so: no silent downgrade).
    pub fn bwrap_unavailable(&self) -> Option<&Availability> {
        match &self.launcher {
            Launcher::Native { bwrap_unavailable } => bwrap_unavailable.as_ref(),
            Launcher::Bwrap(_) => None,
        }
    }

    /// Why this cage has no record for `jaula ps`, when it could not be made.
    pub fn record_failed(&self) -> Option<&std::io::Error> {
        self.record_failed.as_ref()
    }

    /// The plan as it will run.
    pub fn plan(&self) -> &LaunchPlan {
        &self.plan
    }

    /// Start the cage: the resource limits first (every process after this one inherits
    /// them; with the socket gate the command's own process sets them instead, so its
    /// supervisor keeps this one's), then the plan where it runs. A tenant's cage under
    /// bubblewrap becomes this process (returns only with the failure).
    pub fn start(self) -> Result<Started, StartError> {
        let Prepared {
            plan,
            launcher,
            options,
            tenant,
            ..
        } = self;
        if !plan.socket_gate {
            set_resource_limits(&plan.limits).map_err(StartError::Limits)?;
        }
        if plan.network.mode.through_proxy() {
            return start_beside_proxy(&plan, launcher, &options);
        }
        match launcher {
            Launcher::Bwrap(availability) => {
                let stage = Stage::in_view(&plan, &availability, &options)?;
                if tenant {
                    return Err(stage.exec());
                }
                let status = stage.run_reporting(&plan.policy, plan.verbose)?;
                Ok(Started::Ended {
                    status,
                    hidden_tmp: hidden_tmp(&plan, &options.cwd),
                })
            }
            // The socket gate's supervisor waits for the command and reports itself.
            Launcher::Native { .. } if plan.socket_gate || tenant => {
                Ok(Started::Here(Box::new(plan)))
            }
            // With `--no-socket-gate` nobody would be left to report: this process starts
            // the confined stage as its child and waits.
            Launcher::Native { .. } => {
                let stage_plan = LaunchPlan {
                    reports: Reports::default(),
                    ..plan.clone()
                };
                let stage = Stage::native(&stage_plan, &options.own_binary, &options.cwd)?;
                let status = stage.run_reporting(&plan.policy, plan.verbose)?;
                Ok(Started::Ended {
                    status,
                    hidden_tmp: Vec::new(),
                })
            }
        }
    }
}

/// `--network allow`: the cage runs as a stage child in its own network namespace and
/// hands its loopback listeners out, for the caller's proxy to serve.
fn start_beside_proxy(
    plan: &LaunchPlan,
    launcher: Launcher,
    options: &StartOptions,
) -> Result<Started, StartError> {
    let hidden_tmp = match &launcher {
        Launcher::Bwrap(_) => hidden_tmp(plan, &options.cwd),
        Launcher::Native { .. } => Vec::new(),
    };
    match start::start_allow(plan, launcher, options)? {
        AllowStage::Ended(status) => Ok(Started::Ended {
            status,
            hidden_tmp: Vec::new(),
        }),
        AllowStage::Serving {
            child,
            forward,
            listeners,
            dns,
            snapshot,
            held,
            lifetime,
        } => Ok(Started::Proxy(Box::new(ProxyDuty {
            child,
            forward,
            listener: listeners.proxy,
            steered: listeners.steered.map(|s| (s.tls, s.http)),
            dns,
            held,
            snapshot,
            lifetime,
            hidden_tmp,
        }))),
    }
}

/// The command's arguments that name a file on the host's `/tmp` which bubblewrap's view
/// hides behind the window's own.
fn hidden_tmp(plan: &LaunchPlan, cwd: &Path) -> Vec<PathBuf> {
    plan.command[1..]
        .iter()
        .filter_map(|a| bwrap::hidden_by_private_tmp(&plan.policy, cwd, a))
        .collect()
}

/// Where a Contract's cage starts, beside what [`CageRequest`] says: the cgroup its stage
/// moves into and the uid and gid it becomes, before anything else.
#[derive(Clone, Debug, Default)]
pub struct TenantPlacement {
    /// The inherited descriptor of the cgroup's `cgroup.procs`, opened by the runner.
    pub cgroup_fd: Option<RawFd>,
    /// The uid and gid the stage becomes. `None`: the caller's own.
    pub identity: Option<Identity>,
}

/// Start a tenant's cage in a `jaula stage` child natively and wait for it, for a runner
/// that must outlive the command (`jaula contract run` records it afterwards). The child
/// runs every step of the launch sequence, the placement's cgroup and identity included,
/// so this process keeps its own uid, limits and cgroup. `--network allow` is refused: its
/// proxy runs only beside `jaula run` itself.
pub fn spawn_tenant(
    request: CageRequest,
    placement: TenantPlacement,
) -> Result<ExitStatus, StartError> {
    if request.network.mode.through_proxy() {
        return Err(StartError::AllowNeedsProxy);
    }
    let own_binary = std::env::current_exe().map_err(StartError::OwnBinary)?;
    let cwd = request.cwd.clone();
    let plan = LaunchPlan {
        cgroup_fd: placement.cgroup_fd,
        identity: placement.identity,
        ..plan_for(request)
    };
    Stage::native(&plan, &own_binary, &cwd)?
        .run()
        .map_err(|e| match e {
            StartError::Start { program, source } => StartError::StartIn {
                program,
                cwd,
                source,
            },
            other => other,
        })
}
