//! `jaula run`: run a command confined by the policy, with every layer this kernel has.

// The Linux launch: Landlock, seccomp, the bwrap view, the socket gate, network namespaces.
#[cfg(target_os = "linux")]
use jaula_policy::{CageProfile, EnvVars, Platform, Policy, Sources};
#[cfg(target_os = "linux")]
use jaula_sandbox::backend::{self, Launcher, NoCage};
#[cfg(target_os = "linux")]
use jaula_sandbox::bwrap;
#[cfg(target_os = "linux")]
use jaula_sandbox::landlock::{self, PlanMode};
#[cfg(target_os = "linux")]
use jaula_sandbox::launch::{exit_like, set_resource_limits, ResourceLimits};
#[cfg(target_os = "linux")]
use jaula_sandbox::launch_plan::{LaunchPlan, NetworkPlan, Reports, PLAN_VERSION};
#[cfg(target_os = "linux")]
use jaula_sandbox::network::netns;
#[cfg(target_os = "linux")]
use jaula_sandbox::network::{DomainRules, NetworkMode};
#[cfg(target_os = "linux")]
use jaula_sandbox::plan_fd::{self, SealedPlan};
#[cfg(target_os = "linux")]
use jaula_sandbox::planting::{self, Snapshot};
#[cfg(target_os = "linux")]
use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::os::fd::RawFd;
#[cfg(target_os = "linux")]
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::process::Command;

#[cfg(target_os = "linux")]
use crate::args::PolicyArgs;
use crate::commands::run_args::RunArgs;
#[cfg(target_os = "linux")]
use crate::commands::run_args::{
    allow_addresses, network_settings, resolve_overrides, scrubbed_env_from, Backend,
};
#[cfg(target_os = "linux")]
use crate::commands::{agent_hint, config_check, network_notice, run_stage};
#[cfg(target_os = "linux")]
use crate::context;
#[cfg(target_os = "linux")]
use crate::error::{CliError, Refusal};
use crate::Outcome;

/// The hidden subcommand jaula starts its own stages with (inside the bubblewrap view, the
/// `--network allow` child, the child a planting-reporting parent waits for). It takes no
/// arguments: its whole input is the launch plan on an inherited descriptor.
#[cfg(target_os = "linux")]
pub const STAGE_SUBCOMMAND: &str = "stage";

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
        Err(reason) => uncaged(args, &reason),
    }
}

/// Gather the sources, resolve the policy, scrub the environment and settle the network:
/// the launch plan, and what the outer stage needs beside it. `Ok(Err(reason))`: the cage
/// is disabled.
#[cfg(target_os = "linux")]
fn plan(args: &RunArgs) -> Result<Result<Planned, String>, CliError> {
    plan_in(args, std::env::vars_os().collect())
}

/// [`plan`], for a launch given the environment `vars` rather than this process's own:
/// they are both the sources' environment (`CITY_CAGE`, `JAULA_CONFIG`, ...) and the one
/// the command gets, scrubbed.
#[cfg(target_os = "linux")]
fn plan_in(
    args: &RunArgs,
    vars: Vec<(OsString, OsString)>,
) -> Result<Result<Planned, String>, CliError> {
    let mut policy_args = args.policy.clone();
    if policy_args.repo.is_none() {
        policy_args.repo = Some(std::env::current_dir().map_err(CliError::Cwd)?);
    }
    let mut flags = policy_args.flags(Some(Platform::Linux));
    if args.tenant {
        flags.profile = CageProfile::Contract;
    }
    let sources = context::sources_with(&flags, &EnvVars::from_pairs(vars.iter().cloned()))?;
    if let Some(problem) = config_check::problems(&sources).into_iter().next() {
        return Err(CliError::Config(problem));
    }
    if !sources.enabled {
        return Ok(Err(
            "the cage is disabled (CITY_CAGE=0 or config cage.enabled = false)".to_owned(),
        ));
    }
    if args.keep_fd.contains(&plan_fd::PLAN_FD) {
        return Err(CliError::Usage(format!(
            "--keep-fd {}: jaula hands its launch plan to its own stages on that descriptor",
            plan_fd::PLAN_FD
        )));
    }
    let policy = context::resolve(&sources, &policy_args)?;
    if args.no_socket_gate {
        eprintln!(
            "jaula: warning: --no-socket-gate: host unix sockets (tmux, docker, D-Bus, key \
             agents) are reachable from this cage, and protected paths it can write are only \
             reported after the command"
        );
    }
    create_absent_roots(&policy, args.verbose);
    let mut env = scrubbed_env_from(args, &sources, vars)?;
    hand_access_tokens(args, &sources, &policy, &mut env).map_err(Refusal::from)?;
    if let Some(hint) = agent_hint::login_hint(&args.command[0], &policy, &env) {
        eprintln!("{hint}");
    }
    let backend = match args.backend {
        Some(b) => b,
        None => configured_backend(&sources)?,
    };
    let (mode, rules) = network_settings(args, &sources)?;
    // `--log` under `none`: opened here, before anything is confined, and inherited by the
    // stage whose socket gate supervisor writes it (`allow`'s proxy opens its own).
    let log_fd = match (mode, &args.network_log) {
        (NetworkMode::None, Some(path)) => Some(open_none_log(path)?),
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
    // the stage `spawn_stage_and_wait` starts.)
    set_resource_limits(&plan.limits).map_err(Refusal::Launch)?;
    let mode = plan.network.mode;
    if args.verbose {
        eprintln!("jaula: network: {}", describe_mode(mode, &rules));
    } else if let Some(line) = network_notice::at_start(mode, rules.allow().len()) {
        eprintln!("{line}");
    }
    let landlock = landlock::probe();
    let landlock_missing = (!landlock.floor_met).then(|| format!("landlock: {}", landlock.kernel));
    let launcher = backend::choose(backend.into(), landlock_missing, || {
        bwrap::probe_cached(
            sources.bwrap,
            &bwrap_options(args, mode),
            &bwrap_probe_cache(&plan.policy),
        )
    });
    if mode == NetworkMode::Allow {
        return run_allow(args, &policy_args, plan, launcher, &sources, rules);
    }
    match launcher {
        Ok(Launcher::Bwrap(a)) => exec_bwrap(args, &policy_args, plan, &a),
        Ok(Launcher::Native { bwrap_unavailable }) => {
            if let (Some(a), true) = (bwrap_unavailable, args.verbose) {
                eprintln!("jaula: bwrap unavailable ({}); using landlock", a.reason());
            }
            native(args, plan)
        }
        Err(no_cage) => uncaged(args, &no_cage.reason()),
    }
}

/// Where the bubblewrap probe's "yes" is kept between launches: the state home's cage
/// profile directory, read-only to every cage (see `bwrap::probe_cached`).
#[cfg(target_os = "linux")]
fn bwrap_probe_cache(policy: &Policy) -> std::path::PathBuf {
    policy.state_home().join(planting::PROBE_CACHE_FILE)
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
fn bwrap_options(args: &RunArgs, mode: NetworkMode) -> bwrap::BwrapOptions {
    bwrap::BwrapOptions {
        proc_fs: !args.no_pid_ns,
        unshare_net: mode != NetworkMode::Host,
        // A root stage binds the steering listeners on 443 and 80, then drops it.
        net_bind_service: mode == NetworkMode::Allow,
        ..bwrap::BwrapOptions::default()
    }
}

/// The cage's own `/tmp`, `/var/tmp` and `/run/user/UID` in the view (see
/// `bwrap::private_view`), or the refusal to run without them.
#[cfg(target_os = "linux")]
fn private_view(
    args: &RunArgs,
    policy: &Policy,
    policy_args: &PolicyArgs,
    options: &mut bwrap::BwrapOptions,
) -> Result<Option<bwrap::PrivateTmp>, Refusal> {
    // `--window` defaults to the literal "window": that default means "not given".
    let given = (policy_args.window != "window").then_some(policy_args.window.as_str());
    bwrap::private_view(policy, given, options, args.verbose).map_err(|e| Refusal::PrivateTmp {
        what: "/tmp",
        reason: e.to_string(),
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
    policy_args: &PolicyArgs,
    plan: LaunchPlan,
    launcher: Result<Launcher, NoCage>,
    sources: &Sources,
    rules: DomainRules,
) -> Outcome {
    let proxy_localhost = rules.decide("localhost").allowed;
    let mut config = jaula_proxy::ProxyConfig::new(rules);
    config.resolve = resolve_overrides(sources)?.into_iter().collect();
    config.allow_addresses = allow_addresses(args, sources)?;
    config.log = args.network_log.clone();
    let proxy = jaula_proxy::Proxy::new(config)?;
    let (channel, stage_end) = netns::handoff_pair()?;
    // The stage binds the listener and hands it back; this jaula reports after it ends.
    let mut stage = LaunchPlan {
        network: NetworkPlan {
            handoff_fd: Some(std::os::fd::AsRawFd::as_raw_fd(&stage_end)),
            proxy_localhost,
            ..plan.network.clone()
        },
        reports: Reports::default(),
        ..plan.clone()
    };
    let mut options = bwrap_options(args, NetworkMode::Allow);
    let mut _private_tmp = None;
    let mut netns_setup = None;
    let mut cmd = match launcher {
        Ok(Launcher::Bwrap(a)) => {
            _private_tmp = private_view(args, &plan.policy, policy_args, &mut options)?;
            stage.stage = PlanMode::BwrapView;
            // The namespace and the DNS stub are made by the child that execs bubblewrap
            // (see NetnsInChild); the stage passes the stub on with its listeners.
            let setup = netns::NetnsInChild::prepare(Some(netns::stub_addresses()))?;
            options.unshare_net = false;
            stage.network.dns_fds = setup.dns_fds();
            let argv = bwrap_argv(args, &plan.policy, &options, &a)?;
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            setup.install(&mut cmd);
            netns_setup = Some(setup);
            cmd
        }
        Ok(Launcher::Native { .. }) => stage_command()?,
        // No uncaged fallback here: a port rule would admit any host.
        Err(NoCage {
            bwrap: Some(a),
            landlock,
            ..
        }) => {
            return Err(Refusal::AllowNeedsNamespace {
                bwrap: a.reason(),
                landlock: landlock.map(|l| format!("; {l}")).unwrap_or_default(),
            }
            .into());
        }
        Err(no_cage) => {
            return Err(Refusal::NoCage {
                reason: no_cage.reason(),
            }
            .into())
        }
    };
    let sealed = SealedPlan::new(&stage)?;
    sealed.hand_to(&mut cmd);
    cmd.env_clear().envs(plan.env.iter().cloned());
    let policy = &plan.policy;
    let snapshot = Snapshot::take(policy);
    let child = cmd.spawn().map_err(|source| Refusal::Start {
        program: cmd.get_program().to_owned(),
        source,
    })?;
    drop(stage_end);
    drop(sealed);
    drop(netns_setup);
    let listeners = match netns::CageListeners::recv(&channel) {
        Ok(Some(l)) => l,
        // The stage failed before it could bind (it said why on stderr): mirror its exit.
        Ok(None) | Err(_) => {
            let mut child = child;
            let status = child.wait().map_err(CliError::WaitStage)?;
            planting::report_after(&snapshot, policy);
            exit_like(status)
        }
    };
    // A stage that ends between the two messages hands out no stub: nothing to answer.
    let dns = netns::recv_dns_sockets(&channel).unwrap_or_default();
    drop(channel);
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
    let done = jaula_proxy::supervise(child, served, proxy)?;
    if !done.summary.is_empty() {
        eprintln!("{}", done.summary);
    }
    let proxy_saw_requests = done.summary.allowed > 0 || !done.summary.is_empty();
    if let Some(note) = network_notice::after_allow(done.status, proxy_saw_requests) {
        eprintln!("{note}");
    }
    planting::report_after(&snapshot, policy);
    exit_like(done.status)
}

/// `jaula stage`, this very binary: it reads the plan handed to it and nothing else.
#[cfg(target_os = "linux")]
fn stage_command() -> Result<Command, CliError> {
    let mut cmd = Command::new(own_binary()?);
    cmd.arg(STAGE_SUBCOMMAND);
    Ok(cmd)
}

#[cfg(target_os = "linux")]
fn own_binary() -> Result<PathBuf, CliError> {
    std::env::current_exe().map_err(CliError::OwnBinary)
}

/// Open the `--log` file of `--network none` for a stage to inherit: close-on-exec cleared,
/// ownership handed to the plan's descriptor number (the stage takes it back, and sets
/// close-on-exec again, so the command never holds it).
#[cfg(target_os = "linux")]
fn open_none_log(path: &std::path::Path) -> Result<RawFd, CliError> {
    let file = jaula_proxy::open_log(path)?;
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())
        .map_err(|e| CliError::PassLog(e.into()))?;
    Ok(std::os::fd::IntoRawFd::into_raw_fd(file))
}

/// `--hand-access-token` and `env.hand_access_token`: each agent's access token joins the
/// cage's environment, read here, outside the cage, as the owner.
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
        .map(|&name| TokenAgent::from(name));
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

/// Run bubblewrap with the rendered view and jaula's own stage inside it (the plan on its
/// descriptor), wait for it, report the protected paths the view could not cover (absent
/// ones) if they changed, and leave as it left.
#[cfg(target_os = "linux")]
fn exec_bwrap(
    args: &RunArgs,
    policy_args: &PolicyArgs,
    plan: LaunchPlan,
    availability: &bwrap::Availability,
) -> Outcome {
    let mode = plan.network.mode;
    let mut options = bwrap_options(args, mode);
    // Held open until the exec: bubblewrap binds these descriptors.
    let _private_tmp = private_view(args, &plan.policy, policy_args, &mut options)?;
    // `none`: the namespace is made before bubblewrap starts, by the child that execs it,
    // with the DNS stub bound for the inner stage's supervisor (see NetnsInChild).
    let mut stage = LaunchPlan {
        stage: PlanMode::BwrapView,
        ..plan.clone()
    };
    let netns_setup = match mode {
        NetworkMode::None => {
            let stub = plan.socket_gate.then(netns::stub_addresses);
            options.unshare_net = false;
            let setup = netns::NetnsInChild::prepare(stub)?;
            stage.network.dns_fds = setup.dns_fds();
            Some(setup)
        }
        _ => None,
    };
    let argv = bwrap_argv(args, &plan.policy, &options, availability)?;
    let sealed = SealedPlan::new(&stage)?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(plan.env.iter().cloned());
    sealed.hand_to(&mut cmd);
    if let Some(setup) = &netns_setup {
        setup.install(&mut cmd);
    }
    if args.tenant {
        let source = std::os::unix::process::CommandExt::exec(&mut cmd);
        return Err(Refusal::Start {
            program: argv[0].clone(),
            source,
        }
        .into());
    }
    wait_and_report(&mut cmd, &plan.policy, args.verbose, mode)
}

/// Natively Landlock cannot stop the creation of an absent protected path, nor any write
/// to one it does not split around, so the protected paths are snapshotted before the
/// command runs and reported on after it ends. The socket gate's supervisor already waits
/// for the command and does the reporting; with `--no-socket-gate` there is no supervisor,
/// so this jaula starts the confined stage as its child and waits.
#[cfg(target_os = "linux")]
fn native(args: &RunArgs, plan: LaunchPlan) -> Outcome {
    if plan.socket_gate || args.tenant {
        // The limits are in force already (`launch`).
        return run_stage::launch_here(&plan);
    }
    let stage = LaunchPlan {
        reports: Reports::default(),
        ..plan.clone()
    };
    let sealed = SealedPlan::new(&stage)?;
    let mut cmd = stage_command()?;
    sealed.hand_to(&mut cmd);
    wait_and_report(&mut cmd, &plan.policy, args.verbose, plan.network.mode)
}

#[cfg(target_os = "linux")]
fn wait_and_report(
    cmd: &mut Command,
    policy: &Policy,
    verbose: bool,
    network: NetworkMode,
) -> Outcome {
    let snapshot = Snapshot::take(policy);
    if verbose {
        eprintln!(
            "jaula: planting guard: {} protected paths snapshotted; changes are reported \
             after the command exits (evidence: {})",
            snapshot.len(),
            planting::evidence_path(policy).display()
        );
    }
    let status = jaula_sandbox::child::spawn_and_wait(cmd).map_err(|source| Refusal::Start {
        program: cmd.get_program().to_owned(),
        source,
    })?;
    planting::report_after(&snapshot, policy);
    if let Some(note) = (network == NetworkMode::None)
        .then(|| network_notice::after_none(status))
        .flatten()
    {
        eprintln!("{note}");
    }
    exit_like(status)
}

/// bubblewrap's argv with jaula's own stage as the command (it reads the plan handed to it).
#[cfg(target_os = "linux")]
fn bwrap_argv(
    args: &RunArgs,
    policy: &Policy,
    options: &bwrap::BwrapOptions,
    availability: &bwrap::Availability,
) -> Result<Vec<OsString>, CliError> {
    context::ensure_protected_dirs(policy)?;
    let cwd = std::env::current_dir().map_err(CliError::Cwd)?;
    let stage = [own_binary()?.into_os_string(), STAGE_SUBCOMMAND.into()];
    let argv = bwrap::stage_argv(
        policy,
        options,
        availability,
        &jaula_policy::RealHostFs,
        &args.command[0],
        &cwd,
        &stage,
    )?;
    if args.verbose {
        eprintln!(
            "jaula: backend bwrap, one mount a line:\n  {}",
            String::from_utf8_lossy(&bwrap::shell_lines(&argv))
        );
    }
    Ok(argv)
}

/// No cage: refuse (exit 126) with the reason, unless the user asked to run anyway.
#[cfg(target_os = "linux")]
fn uncaged(args: &RunArgs, reason: &str) -> Outcome {
    if !args.allow_uncaged {
        return Err(Refusal::Uncaged {
            reason: reason.to_owned(),
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
/// ([`jaula_sandbox::run_argv`]) into the arguments of [`plan_for_spawn`].
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
        Err(reason) => return Ok(Err(reason)),
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
    let sealed = SealedPlan::new(plan)?;
    let mut cmd = stage_command()?;
    cmd.current_dir(cwd);
    sealed.hand_to(&mut cmd);
    jaula_sandbox::child::spawn_and_wait(&mut cmd).map_err(|source| CliError::StartStageIn {
        program: cmd.get_program().to_owned(),
        cwd: cwd.to_owned(),
        source,
    })
}
