//! `jaula run`: run a command confined by the policy, with every layer this kernel has.

// The Linux launch: Landlock, seccomp, the bwrap view, the socket gate, network namespaces.
#[cfg(target_os = "linux")]
use jaula_policy::limits::ResourceLimits;
#[cfg(target_os = "linux")]
use jaula_policy::network::{DomainRules, NetworkMode};
#[cfg(target_os = "linux")]
use jaula_policy::{CageProfile, EnvVars, Platform, Policy, Sources};
#[cfg(target_os = "linux")]
use jaula_sandbox::backend::{Launcher, NoCage};
#[cfg(target_os = "linux")]
use jaula_sandbox::exit::exit_like;
#[cfg(target_os = "linux")]
use jaula_sandbox::landlock::PlanMode;
#[cfg(target_os = "linux")]
use jaula_sandbox::launch::set_resource_limits;
#[cfg(target_os = "linux")]
use jaula_sandbox::launch_plan::{LaunchPlan, NetworkPlan, Reports, PLAN_VERSION};
#[cfg(target_os = "linux")]
use jaula_sandbox::plan_fd;
#[cfg(target_os = "linux")]
use jaula_sandbox::start::{self, AllowStage, Stage, StartError, StartOptions};
#[cfg(target_os = "linux")]
use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::os::fd::RawFd;
#[cfg(target_os = "linux")]
use std::process::Command;

#[cfg(target_os = "linux")]
use crate::args::PolicyArgs;
#[cfg(target_os = "linux")]
use crate::commands::availability::{DISABLED, ENABLE};
use crate::commands::run_args::RunArgs;
#[cfg(target_os = "linux")]
use crate::commands::run_args::{
    allow_addresses, network_settings, resolve_overrides, scrubbed_env_from, Backend,
};
#[cfg(target_os = "linux")]
use crate::commands::{
    agent_hint, backend_notice, config_check, network_notice, run_stage, tmp_notice,
};
#[cfg(target_os = "linux")]
use crate::context;
#[cfg(target_os = "linux")]
use crate::error::{CliError, Refusal};
use crate::Outcome;
#[cfg(target_os = "linux")]
use jaula_sandbox::bwrap;

/// On macOS: the Seatbelt launch (`run_seatbelt`).
#[cfg(not(target_os = "linux"))]
pub fn run(args: &RunArgs) -> Outcome {
    #[cfg(target_os = "macos")]
    return crate::commands::run_seatbelt::run(args);
    #[cfg(not(target_os = "macos"))]
    {
        let _ = args;
        Err(crate::error::Refusal::NoCageForSystem {
            os: std::env::consts::OS,
        }
        .into())
    }
}

/// Everything `run` resolved from its arguments, once.
#[cfg(target_os = "linux")]
struct Planned {
    plan: LaunchPlan,
    policy_args: PolicyArgs,
    sources: Sources,
    backend: Backend,
    rules: DomainRules,
}

/// Arguments -> plan -> launch.
#[cfg(target_os = "linux")]
pub fn run(args: &RunArgs) -> Outcome {
    match plan(args)? {
        Ok(planned) => launch(args, planned),
        Err(Disabled) => uncaged(args, DISABLED, ENABLE),
    }
}

/// The owner switched the cage off (`CITY_CAGE=0`, config `cage.enabled = false`).
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct Disabled;

/// Gather the sources, resolve the policy, scrub the environment and settle the network:
/// the launch plan, and what the outer stage needs beside it. `Ok(Err(reason))`: the cage
/// is disabled.
#[cfg(target_os = "linux")]
fn plan(args: &RunArgs) -> Result<Result<Planned, Disabled>, CliError> {
    plan_in(args, std::env::vars_os().collect())
}

/// [`plan`], for a launch given the environment `vars` rather than this process's own:
/// they are both the sources' environment (`CITY_CAGE`, `JAULA_CONFIG`, ...) and the one
/// the command gets, scrubbed.
#[cfg(target_os = "linux")]
fn plan_in(
    args: &RunArgs,
    vars: Vec<(OsString, OsString)>,
) -> Result<Result<Planned, Disabled>, CliError> {
    let mut policy_args = args.policy.clone();
    let defaulted = policy_args.repo.is_none();
    if defaulted {
        policy_args.repo = Some(std::env::current_dir().map_err(CliError::Cwd)?);
    }
    let mut flags = policy_args.flags(Some(Platform::Linux));
    if args.tenant {
        flags.profile = CageProfile::Contract;
    }
    let mut sources = context::sources_with(&flags, &EnvVars::from_pairs(vars.iter().cloned()))?;
    // The command's own tool family counts as present, wherever the command lives: its
    // cache root (an agent's `~/.codex`) is created even when it is not on the PATH.
    sources.spec.launched = Some(std::path::PathBuf::from(&args.command[0]));
    if let Some(problem) = config_check::problems(&sources).into_iter().next() {
        return Err(CliError::Config(problem));
    }
    if !sources.enabled {
        return Ok(Err(Disabled));
    }
    if args.keep_fd.contains(&plan_fd::PLAN_FD) {
        return Err(CliError::Usage(format!(
            "--keep-fd {}: jaula hands its launch plan to its own stages on that descriptor",
            plan_fd::PLAN_FD
        )));
    }
    let policy = context::resolve(&sources, &policy_args).map_err(|e| {
        e.for_defaulted_repo(defaulted, "run", crate::commands::run_args::RUN_ADVICE)
    })?;
    if args.no_socket_gate {
        eprintln!(
            "jaula: warning: --no-socket-gate: host unix sockets (tmux, docker, D-Bus, key \
             agents) are reachable from this cage, and protected paths it can write are only \
             reported after the command"
        );
    }
    create_absent_roots(&policy, args.verbose);
    let mut env = scrubbed_env_from(args, &sources, policy.unix_sockets(), vars)?;
    hand_access_tokens(args, &sources, &policy, &mut env).map_err(Refusal::from)?;
    if let Some(hint) = agent_hint::login_hint(&args.command, &policy, &env) {
        eprintln!("{hint}");
    }
    if let Some(hint) = crate::commands::nested_sandbox::nested_sandbox_hint(&args.command, &env) {
        eprintln!("{hint}");
    }
    let backend = match args.backend {
        Some(b) => b,
        None => configured_backend(&sources)?,
    };
    let (mode, rules) = network_settings(args, &sources)?;
    // `--log`: opened here, before anything is confined, and inherited by the stage whose
    // socket gate supervisor writes the refused writes there, and under `none` the closed
    // network's refusals (`allow`'s proxy opens the file itself for its own records).
    let log_fd = match &args.network_log {
        // The supervisor writes only to a regular file (a pipe nobody drains would stall
        // the gate; the stage refuses anything else): `allow`'s proxy, which opens the
        // file itself, may still log to a FIFO, without the refused writes.
        Some(path) if mode == NetworkMode::Allow && !regular_or_absent(path) => None,
        Some(path) if !args.no_socket_gate => Some(open_stage_log(path)?),
        _ => None,
    };
    let plan = LaunchPlan {
        version: PLAN_VERSION,
        policy,
        stage: PlanMode::Native,
        network: NetworkPlan {
            mode,
            fallback: sources.network.none_without_namespace == Some(true),
            handoff_fd: None,
            proxy_localhost: false,
            dns_fds: Vec::new(),
            log_fd,
        },
        env,
        limits: ResourceLimits {
            max_processes: args.max_procs,
            max_data_bytes: args.max_data,
        },
        cgroup_fd: None,
        identity: None,
        keep_fds: args.keep_fd.clone(),
        record_fd: None,
        socket_gate: !args.no_socket_gate,
        // A tenant's spawn is not reported on: nobody runs a tenant's tree uncaged later,
        // and the runner keeps its own evidence (crates/contract).
        reports: Reports {
            planting: !args.tenant,
            network_none: true,
        },
        verbose: args.verbose,
        command: args.command.clone(),
    };
    Ok(Ok(Planned {
        plan,
        policy_args,
        sources,
        backend,
        rules,
    }))
}

/// Choose the cage and start it: in-process natively, or the stage inside bubblewrap's
/// view, or (`allow`) a stage child beside the proxy.
#[cfg(target_os = "linux")]
fn launch(args: &RunArgs, planned: Planned) -> Outcome {
    let Planned {
        plan,
        policy_args,
        sources,
        backend,
        rules,
    } = planned;
    // Step 1 of the launch sequence, here, before any stage is started: every process after
    // this one inherits the limits. (The cgroup and the identity are a Contract's, set in
    // the stage its runner starts.) With the socket gate the command's own process sets
    // them instead, so its supervisor keeps this process's.
    if !plan.socket_gate {
        set_resource_limits(&plan.limits).map_err(Refusal::Launch)?;
    }
    let mode = plan.network.mode;
    if args.verbose {
        eprintln!("jaula: network: {}", describe_mode(mode, &rules));
    } else if args.quiet || sources.run.quiet == Some(true) {
        // `--quiet` or config `run.quiet`: the owner knows the mode.
    } else if let Some(line) = network_notice::at_start(mode, rules.allow().len()) {
        eprintln!("{line}");
    }
    let options = StartOptions {
        requested: backend.into(),
        bwrap: sources.bwrap,
        proc_fs: !args.no_pid_ns,
        // `--window` defaults to the literal "window": that default means "not given".
        window: (policy_args.window != "window").then(|| policy_args.window.clone()),
        own_binary: std::env::current_exe().map_err(CliError::OwnBinary)?,
        cwd: std::env::current_dir().map_err(CliError::Cwd)?,
    };
    let launcher = start::choose_cage(&plan, &options);
    // No silent downgrade: `auto` without the bubblewrap view says so, once, whatever mode.
    if let Ok(Launcher::Native {
        bwrap_unavailable: Some(bwrap),
    }) = &launcher
    {
        if let Some(line) = backend_notice::landlock_alone(bwrap) {
            eprintln!("{line}");
        }
    }
    let mut plan = plan;
    if plan.socket_gate && !args.tenant {
        if let Ok(launcher) = &launcher {
            plan.record_fd = open_record(&plan, launcher, options.window.clone());
        }
    }
    if mode == NetworkMode::Allow {
        return run_allow(args, plan, launcher, &options, &sources, rules);
    }
    match launcher {
        Ok(Launcher::Bwrap(availability)) => {
            let stage = Stage::in_view(&plan, &availability, &options)?;
            if args.tenant {
                return Err(stage.exec().into());
            }
            let status = stage.run_reporting(&plan.policy, args.verbose)?;
            let hidden = hidden_tmp(&plan, &options.cwd);
            if let Some(line) = tmp_notice::after_exit(status, &hidden) {
                eprintln!("{line}");
            }
            leave_as(status, mode)
        }
        Ok(Launcher::Native { .. }) => {
            // The socket gate's supervisor waits for the command and reports itself; the
            // limits are in force already (above).
            if plan.socket_gate || args.tenant {
                return run_stage::launch_here(&plan);
            }
            // With `--no-socket-gate` nobody would be left to report: this jaula starts the
            // confined stage as its child and waits.
            let stage_plan = LaunchPlan {
                reports: Reports::default(),
                ..plan.clone()
            };
            let stage = Stage::native(&stage_plan, &options.own_binary, &options.cwd)?;
            let status = stage.run_reporting(&plan.policy, args.verbose)?;
            leave_as(status, mode)
        }
        Err(no_cage) => uncaged(args, &no_cage.reason(), &no_cage.remedy()),
    }
}

/// The command's arguments that name a file on the host's `/tmp` which bubblewrap's view
/// hides behind the window's own (`tmp_notice` names them if the command fails).
#[cfg(target_os = "linux")]
fn hidden_tmp(plan: &LaunchPlan, cwd: &std::path::Path) -> Vec<std::path::PathBuf> {
    plan.command[1..]
        .iter()
        .filter_map(|a| bwrap::hidden_by_private_tmp(&plan.policy, cwd, a))
        .collect()
}

/// Leave as the stage left, after the `--network none` reminder when it failed.
#[cfg(target_os = "linux")]
fn leave_as(status: std::process::ExitStatus, mode: NetworkMode) -> Outcome {
    if let Some(note) = (mode == NetworkMode::None)
        .then(|| network_notice::after_none(status))
        .flatten()
    {
        eprintln!("{note}");
    }
    exit_like(status)
}

#[cfg(target_os = "linux")]
/// Make the absent cache roots the policy marks for creation, before either backend is
/// built: neither can grant a path that does not exist (docs/security.md, "First run").
fn create_absent_roots(policy: &Policy, verbose: bool) {
    let created = jaula_sandbox::absent_roots::create_absent_roots(policy);
    for failure in &created.failed {
        eprintln!("jaula: warning: {failure}; writes beneath it are refused in the cage");
    }
    if verbose && !created.made.is_empty() {
        let made: Vec<String> = created
            .made
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        eprintln!("jaula: created (0700): {}", made.join(" "));
    }
}

#[cfg(target_os = "linux")]
fn configured_backend(sources: &Sources) -> Result<Backend, CliError> {
    use jaula_policy::config::RunBackend;
    // Checked as the file was read: only the three names reach here.
    Ok(match sources.run.backend {
        None | Some(RunBackend::Auto) => Backend::Auto,
        Some(RunBackend::Landlock) => Backend::Landlock,
        Some(RunBackend::Bwrap) => Backend::Bwrap,
    })
}

#[cfg(target_os = "linux")]
fn describe_mode(mode: NetworkMode, rules: &DomainRules) -> String {
    match mode {
        NetworkMode::Host => "host (the host's network, unrestricted)".to_owned(),
        NetworkMode::None => "none (a network namespace with only loopback)".to_owned(),
        NetworkMode::Allow => format!(
            "allow (only jaula's proxy; {} allow and {} deny patterns)",
            rules.allow().len(),
            rules.deny().len()
        ),
    }
}

/// `--network allow`: the cage runs as a child in its own network namespace and hands
/// its loopback listener out; this process serves the proxy on it until the child exits,
/// then mirrors the child's exit status or signal. Where no namespace can be made the
/// child refuses (exit 126): there is no fallback, since a port rule would admit any host.
#[cfg(target_os = "linux")]
fn run_allow(
    args: &RunArgs,
    plan: LaunchPlan,
    launcher: Result<Launcher, NoCage>,
    options: &StartOptions,
    sources: &Sources,
    rules: DomainRules,
) -> Outcome {
    let proxy_localhost = rules.decide("localhost").allowed;
    let hidden_tmp = match &launcher {
        Ok(Launcher::Bwrap(_)) => hidden_tmp(&plan, &options.cwd),
        _ => Vec::new(),
    };
    let mut config = jaula_proxy::ProxyConfig::new(rules);
    config.resolve = resolve_overrides(sources)?.into_iter().collect();
    config.allow_addresses = allow_addresses(args, sources)?;
    config.log = args.network_log.clone();
    let proxy = jaula_proxy::Proxy::new(config)?;
    let (child, forward, listeners, dns, snapshot, held, lifetime) =
        match start::start_allow(&plan, launcher, options, proxy_localhost)? {
            AllowStage::Serving {
                child,
                forward,
                listeners,
                dns,
                snapshot,
                held,
                lifetime,
            } => (child, forward, listeners, dns, snapshot, held, lifetime),
            AllowStage::Ended(status) => exit_like(status),
        };
    let steered = match listeners.steered {
        Some(s) => vec![
            jaula_proxy::SteeredListener::tls(s.tls),
            jaula_proxy::SteeredListener::http(s.http),
        ],
        None => Vec::new(),
    };
    let served = jaula_proxy::Served {
        listener: listeners.proxy,
        steered,
        dns,
    };
    // The proxy lives in a process of its own, as long as the cage's processes do; this
    // one leaves with the command (`allow_proxy`).
    let stage = crate::commands::allow_proxy::Stage {
        child,
        forward,
        served,
        snapshot,
        held,
        lifetime,
        hidden_tmp,
    };
    crate::commands::allow_proxy::run(stage, proxy, &plan.policy)
}

/// This cage's record for `jaula ps` and `jaula stop`, inherited by the stage whose
/// supervisor appends to it. Bookkeeping, not a layer: one that cannot be made costs the
/// cage its line in `jaula ps`, said here, not the launch.
#[cfg(target_os = "linux")]
fn open_record(plan: &LaunchPlan, launcher: &Launcher, window: Option<String>) -> Option<RawFd> {
    use jaula_sandbox::cage_record::{self, Opening};
    let backend = match launcher {
        Launcher::Bwrap(_) => "bwrap",
        Launcher::Native { .. } => "landlock",
    };
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // The ended cages' records go first: each would cost every later supervisor a look.
    cage_record::prune_ended(plan.policy.state_home());
    let made = cage_record::this_process().and_then(|launcher| {
        let opening = Opening {
            window,
            repo: plan.policy.repo().to_path_buf(),
            backend: backend.to_owned(),
            started_unix,
            command: plan
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            launcher,
        };
        let (_, file) = cage_record::create(plan.policy.state_home(), &opening)?;
        rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())?;
        Ok(std::os::fd::IntoRawFd::into_raw_fd(file))
    });
    match made {
        Ok(fd) => Some(fd),
        Err(e) => {
            eprintln!("jaula: warning: cannot record this cage for jaula ps: {e}");
            None
        }
    }
}

/// Whether `path` is a regular file (after symlinks) or does not exist yet.
#[cfg(target_os = "linux")]
fn regular_or_absent(path: &std::path::Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Open the `--log` file for a stage to inherit: close-on-exec cleared,
/// ownership handed to the plan's descriptor number (the stage takes it back, and sets
/// close-on-exec again, so the command never holds it).
#[cfg(target_os = "linux")]
fn open_stage_log(path: &std::path::Path) -> Result<RawFd, CliError> {
    let file = jaula_proxy::open_log(path)?;
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())
        .map_err(|e| CliError::PassLog(e.into()))?;
    Ok(std::os::fd::IntoRawFd::into_raw_fd(file))
}

/// `--hand-access-token` and `env.hand_access_token`: each agent's access token joins the
/// cage's environment, read here, outside the cage, as the owner. The flag is asked of this
/// one command and is obeyed whatever the command is; a config entry holds for every run,
/// so it hands the token only to a command that is that agent (`claude ...`, not
/// `jaula run -- true` nor another agent).
#[cfg(target_os = "linux")]
fn hand_access_tokens(
    args: &RunArgs,
    sources: &Sources,
    policy: &Policy,
    env: &mut Vec<(OsString, OsString)>,
) -> Result<(), crate::commands::access_token::TokenError> {
    use crate::commands::access_token::{add_to_env, notice, read_token, TokenAgent};
    let from_config = sources
        .env
        .hand_access_token
        .iter()
        .map(|&name| TokenAgent::from(name))
        .filter(|agent| agent.is_started_by(&args.command[0]));
    let mut agents: Vec<TokenAgent> = args.hand_access_token.to_vec();
    agents.extend(from_config);
    agents.sort();
    agents.dedup();
    for agent in agents {
        let now = std::time::SystemTime::now();
        let handed = read_token(agent, policy.home(), now)?;
        add_to_env(env, &handed)?;
        eprintln!("{}", notice(agent, &handed, now));
    }
    Ok(())
}

/// No cage: refuse (exit 126) with the reason and what would give a cage back, unless the
/// user asked to run anyway.
#[cfg(target_os = "linux")]
fn uncaged(args: &RunArgs, reason: &str, remedy: &str) -> Outcome {
    if !args.allow_uncaged {
        return Err(Refusal::Uncaged {
            reason: reason.to_owned(),
            remedy: remedy.to_owned(),
        }
        .into());
    }
    eprintln!("jaula: WARNING: running UNCAGED: {reason}");
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    let source = std::os::unix::process::CommandExt::exec(&mut cmd);
    Err(Refusal::Command {
        program: args.command[0].clone(),
        source,
    }
    .into())
}

/// A `jaula run` command line, as `jaula run` itself parses it: how a command that starts a
/// cage for someone else (`jaula contract run`) turns the one argv builder's output
/// ([`jaula_policy::run_argv`]) into the arguments of [`plan_for_spawn`].
#[cfg(target_os = "linux")]
pub(crate) fn parse_run_argv(argv: &[OsString]) -> Result<RunArgs, CliError> {
    #[derive(clap::Parser)]
    struct RunLine {
        #[command(subcommand)]
        run: RunOnly,
    }
    #[derive(clap::Subcommand)]
    enum RunOnly {
        Run(Box<RunArgs>),
    }
    use clap::Parser;
    RunLine::try_parse_from(argv)
        .map(|line| {
            let RunOnly::Run(args) = line.run;
            *args
        })
        .map_err(|e| CliError::Usage(format!("the tenant cage's command line: {e}")))
}

/// The plan of a launch that another command starts and outlives (`jaula contract run`),
/// for the environment `vars` it would have given `jaula run`. `Ok(Err(reason))`: there is
/// no cage to start (it is disabled, or the network mode needs jaula's proxy beside it,
/// which only `jaula run` itself runs).
#[cfg(target_os = "linux")]
pub(crate) fn plan_for_spawn(
    args: &RunArgs,
    vars: Vec<(OsString, OsString)>,
) -> Result<Result<LaunchPlan, String>, CliError> {
    let planned = match plan_in(args, vars)? {
        Ok(planned) => planned,
        Err(Disabled) => return Ok(Err(DISABLED.to_owned())),
    };
    if planned.plan.network.mode == NetworkMode::Allow {
        return Ok(Err(
            "network mode allow needs jaula's proxy running beside the cage, which a \
             contract run does not start; use network mode none or host for Contracts"
                .to_owned(),
        ));
    }
    Ok(Ok(planned.plan))
}

/// Start `plan` in a `jaula stage` child in `cwd` and wait for it, for a caller that must
/// outlive the command (`jaula contract run` records it afterwards). The child runs every
/// step of the launch sequence, the plan's cgroup and identity included, so this process
/// keeps its own uid, limits and cgroup. The plan's descriptors (the cgroup's) must be
/// inheritable.
#[cfg(target_os = "linux")]
pub(crate) fn spawn_stage_and_wait(
    plan: &LaunchPlan,
    cwd: &std::path::Path,
) -> Result<std::process::ExitStatus, CliError> {
    let own_binary = std::env::current_exe().map_err(CliError::OwnBinary)?;
    let stage = Stage::native(plan, &own_binary, cwd)?;
    stage.run().map_err(|e| match e {
        StartError::Start { program, source } => CliError::StartStageIn {
            program,
            cwd: cwd.to_owned(),
            source,
        },
        other => other.into(),
    })
}
