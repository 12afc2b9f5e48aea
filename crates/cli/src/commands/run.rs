//! `jaula run`: run a command confined by the policy, with every layer this kernel has.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use jaula_policy::Sources;
use jaula_sandbox::hardening::env::{scrub_env, EnvPattern, EnvRules};
use jaula_sandbox::network::{DomainRules, NetworkMode, NetworkSpec};

// The Linux launch: Landlock, seccomp, the bwrap view, the socket gate, network namespaces.
#[cfg(target_os = "linux")]
use jaula_policy::{CageProfile, EnvVars, Platform, Policy};
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
use jaula_sandbox::plan_fd::{self, SealedPlan};
#[cfg(target_os = "linux")]
use jaula_sandbox::planting::{self, Snapshot};
#[cfg(target_os = "linux")]
use std::process::Command;

use crate::args::PolicyArgs;
#[cfg(target_os = "linux")]
use crate::commands::{network_notice, run_stage};
#[cfg(target_os = "linux")]
use crate::context;
use crate::error::CliError;
use crate::Outcome;

/// Exit status when jaula refuses to start the command (the shell's "cannot execute").
pub const REFUSED: i32 = 126;

/// The hidden subcommand jaula starts its own stages with (inside the bubblewrap view, the
/// `--network allow` child, the child a planting-reporting parent waits for). It takes no
/// arguments: its whole input is the launch plan on an inherited descriptor.
#[cfg(target_os = "linux")]
pub const STAGE_SUBCOMMAND: &str = "stage";

/// Run CMD confined: writes only to the working set, credentials sealed, seccomp and
/// process hardening applied, credential environment variables scrubbed.
///
/// Backends: `landlock` confines jaula itself (Landlock + seccomp + hardening, no privilege,
/// no external binary) and execs CMD in its place; `bwrap` builds bubblewrap's mount view
/// (which also hides the names of sealed entries) and applies the same layers inside it;
/// `auto` takes bwrap where user namespaces work, else landlock. If no cage can be built,
/// jaula refuses (exit 126) unless --allow-uncaged is given.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Which enforcement to use (default: the config's `run.backend`, else auto).
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// bwrap backend: give the cage its own PID namespace and /proc. The default; kept so
    /// older command lines still parse.
    #[arg(long, overrides_with = "no_pid_ns")]
    pub pid_ns: bool,
    /// bwrap backend: share the host's PID namespace and /proc, so host command lines are
    /// readable from the cage again (for agents that write their pid for host-side tools,
    /// or tools that inspect host processes; see docs/security.md).
    #[arg(long, overrides_with = "pid_ns")]
    pub no_pid_ns: bool,
    /// Pass this inherited file descriptor through to CMD (repeatable); all others above 2
    /// are closed at exec.
    #[arg(long = "keep-fd", value_name = "FD")]
    pub keep_fd: Vec<RawFd>,
    /// Keep a variable the default scrub would remove (name or PREFIX_* pattern; repeatable).
    #[arg(long = "keep-env", value_name = "PATTERN")]
    pub keep_env: Vec<String>,
    /// Scrub one more variable (name or PREFIX_* pattern; repeatable).
    #[arg(long = "scrub-env", value_name = "PATTERN")]
    pub scrub_env: Vec<String>,
    /// Hand AGENT the short-lived access token from its owner's login, read outside the
    /// cage, while the login file and its refresh token stay sealed (claude: the
    /// `accessToken` of ~/.claude/.credentials.json as CLAUDE_CODE_OAUTH_TOKEN; Linux).
    /// Refuses to start when the token is missing or expires within a minute.
    #[arg(long = "hand-access-token", value_name = "AGENT", value_enum)]
    pub hand_access_token: Vec<crate::commands::access_token::TokenAgent>,
    /// Run CMD unconfined (with a warning) when no cage can be built, instead of refusing.
    #[arg(long)]
    pub allow_uncaged: bool,
    /// Turn the gate off: every host unix socket the uid can reach (the tmux server,
    /// Docker, the session bus, key agents) becomes reachable from the cage again, unix
    /// datagram sockets work, and a protected path (git hooks and config, .envrc, ...)
    /// that a backend cannot keep read-only is only reported after the command. For a tool
    /// the gate breaks; prints a warning.
    #[arg(long)]
    pub no_socket_gate: bool,
    /// Print the layers in force (rights, scopes, filters) on stderr before exec.
    #[arg(short, long)]
    pub verbose: bool,
    /// Start from a tenant's writable set (only the repo, /dev and --allow-write paths; no
    /// home caches, no shared /tmp), as `jaula contract run` does.
    #[arg(long)]
    pub tenant: bool,
    /// Set RLIMIT_NPROC (soft and hard) before confining.
    #[arg(long, value_name = "N")]
    pub max_procs: Option<u64>,
    /// Set RLIMIT_DATA in bytes (soft and hard) before confining (not RLIMIT_AS: V8
    /// reserves gigabytes of address space at start-up).
    #[arg(long, value_name = "BYTES")]
    pub max_data: Option<u64>,
    /// Network: `host` (default, unchanged), `none` (only the cage's own loopback) or
    /// `allow` (only jaula's proxy, which admits --allow-domain/--allow-preset names).
    /// Default: the config's `network.mode`, else host.
    #[arg(long, value_enum, value_name = "MODE")]
    pub network: Option<NetworkArg>,
    /// With --network allow: a host name or `*.suffix` pattern the proxy admits
    /// (repeatable; adds to the config's `network.allow_domain`).
    #[arg(long = "allow-domain", value_name = "NAME")]
    pub allow_domain: Vec<String>,
    /// With --network allow: a pattern refused even when allowed; wins over every allow
    /// (repeatable).
    #[arg(long = "deny-domain", value_name = "NAME")]
    pub deny_domain: Vec<String>,
    /// With --network allow: a built-in list to admit: model-apis, github, rust, python,
    /// javascript, go (repeatable).
    #[arg(long = "allow-preset", value_name = "NAME")]
    pub allow_preset: Vec<String>,
    /// With --network allow: a loopback, link-local or private address (or ADDR/PREFIX
    /// block) that names admitted by an exact --allow-domain entry may reach; refused by
    /// default (repeatable).
    #[arg(long = "allow-address", value_name = "ADDR[/PREFIX]")]
    pub allow_address: Vec<String>,
    /// With --network allow: append every network decision to FILE as a JSON line, each
    /// refusal with the rule that refused it (`--network-log` is the older name).
    #[arg(long = "log", visible_alias = "network-log", value_name = "FILE")]
    pub network_log: Option<PathBuf>,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkArg {
    Host,
    None,
    Allow,
}

impl From<NetworkArg> for NetworkMode {
    fn from(a: NetworkArg) -> NetworkMode {
        match a {
            NetworkArg::Host => NetworkMode::Host,
            NetworkArg::None => NetworkMode::None,
            NetworkArg::Allow => NetworkMode::Allow,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Auto,
    Landlock,
    Bwrap,
}

#[cfg(target_os = "linux")]
impl From<Backend> for backend::Requested {
    fn from(b: Backend) -> backend::Requested {
        match b {
            Backend::Auto => backend::Requested::Auto,
            Backend::Landlock => backend::Requested::Landlock,
            Backend::Bwrap => backend::Requested::Bwrap,
        }
    }
}

/// On macOS: the Seatbelt launch (`run_seatbelt`).
#[cfg(not(target_os = "linux"))]
pub fn run(args: &RunArgs) -> Outcome {
    #[cfg(target_os = "macos")]
    return crate::commands::run_seatbelt::run(args);
    #[cfg(not(target_os = "macos"))]
    {
        let _ = args;
        eprintln!(
            "jaula: refusing to run: no cage exists for {} (Linux and macOS only)",
            std::env::consts::OS
        );
        Ok(REFUSED)
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
    if let Some(problem) = crate::commands::config_check::problems(&sources)
        .into_iter()
        .next()
    {
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
    if let Err(refusal) = hand_access_tokens(args, &sources, &policy, &mut env) {
        return Err(CliError::Launch(format!(
            "refusing to run: --hand-access-token: {refusal}"
        )));
    }
    if let Some(hint) = crate::commands::agent_hint::login_hint(&args.command[0], &policy, &env) {
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
    if let Err(e) = set_resource_limits(&plan.limits) {
        eprintln!("jaula: {e}");
        return Ok(REFUSED);
    }
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
/// `bwrap::private_view`); Err is the reason to refuse.
#[cfg(target_os = "linux")]
fn private_view(
    args: &RunArgs,
    policy: &Policy,
    policy_args: &PolicyArgs,
    options: &mut bwrap::BwrapOptions,
) -> Result<Option<bwrap::PrivateTmp>, String> {
    // `--window` defaults to the literal "window": that default means "not given".
    let given = (policy_args.window != "window").then_some(policy_args.window.as_str());
    bwrap::private_view(policy, given, options, args.verbose)
        .map_err(|e| format!("cannot make the cage's private /tmp: {e}"))
}

/// The mode and validated lists: flags over the config's `[network]`. The config's lists
/// only count when the mode is `allow` (a config can hold an allow list and a single run
/// still ask for `none`); lists given as flags with another mode are refused.
pub(crate) fn network_settings(
    args: &RunArgs,
    sources: &Sources,
) -> Result<(NetworkMode, DomainRules), CliError> {
    let config = &sources.network;
    let mode = match (args.network, config.mode) {
        (Some(m), _) => m.into(),
        (None, Some(mode)) => mode,
        (None, None) => NetworkMode::Host,
    };
    let mut spec = NetworkSpec {
        mode,
        allow_domains: args.allow_domain.clone(),
        deny_domains: args.deny_domain.clone(),
        presets: args.allow_preset.clone(),
    };
    if mode == NetworkMode::Allow {
        spec.allow_domains
            .extend(config.allow_domain.iter().map(ToString::to_string));
        spec.deny_domains
            .extend(config.deny_domain.iter().map(ToString::to_string));
        spec.presets
            .extend(config.allow_preset.iter().map(|p| p.name.to_owned()));
    } else if !args.allow_address.is_empty() {
        return Err(CliError::Usage(format!(
            "--allow-address given with network mode {mode}; only --network allow has a \
             proxy to open it"
        )));
    }
    if args.network_log.is_some() && mode == NetworkMode::Host {
        return Err(CliError::Usage(
            "--log given with network mode host; only --network none and --network allow \
             refuse anything that could be logged"
                .to_owned(),
        ));
    }
    if args.network_log.is_some() && mode == NetworkMode::None && args.no_socket_gate {
        return Err(CliError::Usage(
            "--log with --network none needs the socket gate, whose supervisor sees the \
             refusals; drop --no-socket-gate"
                .to_owned(),
        ));
    }
    allow_addresses(args, sources)?;
    let rules = spec
        .resolve()
        .map_err(|e| CliError::Usage(format!("network: {e}")))?;
    Ok((mode, rules))
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

/// The config's `network.resolve`: names the proxy answers without DNS (each checked as
/// the file was read).
pub(crate) fn resolve_overrides(sources: &Sources) -> Result<Vec<(String, SocketAddr)>, CliError> {
    Ok(sources
        .network
        .resolve
        .iter()
        .map(|entry| (entry.host.clone(), entry.addr))
        .collect())
}

/// `--allow-address` and the config's `network.allow_address` (checked as the file was
/// read). The config's list counts only in `allow` mode, like its other lists.
pub(crate) fn allow_addresses(
    args: &RunArgs,
    sources: &Sources,
) -> Result<Vec<jaula_proxy::AddressRange>, CliError> {
    let mut out = sources.network.allow_address.clone();
    for a in &args.allow_address {
        out.push(
            a.parse()
                .map_err(|e| CliError::Usage(format!("--allow-address: {e}")))?,
        );
    }
    Ok(out)
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
    let proxy = jaula_proxy::Proxy::new(config).map_err(|e| CliError::Launch(e.to_string()))?;
    let (channel, stage_end) =
        netns::handoff_pair().map_err(|e| CliError::Launch(e.to_string()))?;
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
            match private_view(args, &plan.policy, policy_args, &mut options) {
                Ok(p) => _private_tmp = p,
                Err(reason) => return refuse(&reason),
            }
            stage.stage = PlanMode::BwrapView;
            // The namespace and the DNS stub are made by the child that execs bubblewrap
            // (see NetnsInChild); the stage passes the stub on with its listeners.
            let setup = netns::NetnsInChild::prepare(Some(netns::stub_addresses()))
                .map_err(|e| CliError::Launch(e.to_string()))?;
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
            return refuse(&format!(
                "--network allow needs a network namespace; bwrap: {}{}",
                a.reason(),
                landlock.map(|l| format!("; {l}")).unwrap_or_default()
            ));
        }
        Err(no_cage) => return refuse(&no_cage.reason()),
    };
    let sealed = SealedPlan::new(&stage).map_err(|e| CliError::Launch(e.to_string()))?;
    sealed.hand_to(&mut cmd);
    cmd.env_clear().envs(plan.env.iter().cloned());
    let policy = &plan.policy;
    let snapshot = Snapshot::take(policy);
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "jaula: cannot execute {}: {e}",
                cmd.get_program().to_string_lossy()
            );
            return Ok(REFUSED);
        }
    };
    drop(stage_end);
    drop(sealed);
    drop(netns_setup);
    let listeners = match netns::CageListeners::recv(&channel) {
        Ok(Some(l)) => l,
        // The stage failed before it could bind (it said why on stderr): mirror its exit.
        Ok(None) | Err(_) => {
            let mut child = child;
            let status = child.wait().map_err(|e| CliError::Launch(e.to_string()))?;
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
    let done = jaula_proxy::supervise(child, served, proxy)
        .map_err(|e| CliError::Launch(e.to_string()))?;
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
fn refuse(reason: &str) -> Outcome {
    eprintln!("jaula: refusing to run: {reason}");
    Ok(REFUSED)
}

#[cfg(target_os = "linux")]
fn own_binary() -> Result<PathBuf, CliError> {
    std::env::current_exe()
        .map_err(|e| CliError::Launch(format!("cannot find jaula's own binary: {e}")))
}

/// Open the `--log` file of `--network none` for a stage to inherit: close-on-exec cleared,
/// ownership handed to the plan's descriptor number (the stage takes it back, and sets
/// close-on-exec again, so the command never holds it).
#[cfg(target_os = "linux")]
fn open_none_log(path: &std::path::Path) -> Result<RawFd, CliError> {
    let file = jaula_proxy::open_log(path).map_err(|e| CliError::Launch(e.to_string()))?;
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())
        .map_err(|e| CliError::Launch(format!("cannot pass the log on: {e}")))?;
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

/// The command's environment: `vars` with the credential variables scrubbed.
pub(crate) fn scrubbed_env_from(
    args: &RunArgs,
    sources: &Sources,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<(OsString, OsString)>, CliError> {
    let pattern = |text: &String| {
        EnvPattern::parse(text)
            .map_err(|e| CliError::Usage(format!("bad environment pattern {text:?}: {e}")))
    };
    let mut rules = EnvRules::new();
    // The ssh-agent preset is the owner's statement that the cage may use the agent; the
    // variable naming its socket is how every ssh client finds it.
    let keeps_agent = sources.spec.allowed_sockets.iter().any(|(_, source)| {
        *source == jaula_policy::SocketSource::Preset(jaula_policy::UnixPreset::SshAgent)
    });
    if keeps_agent {
        rules = rules.keep(pattern(&"SSH_AUTH_SOCK".to_owned())?);
    }
    // The config's patterns were checked as the file was read; the flags' are here.
    for p in &sources.env.keep {
        rules = rules.keep(p.clone());
    }
    for p in &args.keep_env {
        rules = rules.keep(pattern(p)?);
    }
    for p in &sources.env.scrub {
        rules = rules.scrub(p.clone());
    }
    for p in &args.scrub_env {
        rules = rules.scrub(pattern(p)?);
    }
    let scrubbed = scrub_env(vars, &rules);
    if args.verbose && !scrubbed.removed_names.is_empty() {
        let names: Vec<_> = scrubbed
            .removed_names
            .iter()
            .map(|n| n.to_string_lossy())
            .collect();
        eprintln!("jaula: scrubbed from the environment: {}", names.join(" "));
    }
    Ok(scrubbed.kept)
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
    let _private_tmp = match private_view(args, &plan.policy, policy_args, &mut options) {
        Ok(p) => p,
        Err(reason) => return refuse(&reason),
    };
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
            let setup =
                netns::NetnsInChild::prepare(stub).map_err(|e| CliError::Launch(e.to_string()))?;
            stage.network.dns_fds = setup.dns_fds();
            Some(setup)
        }
        _ => None,
    };
    let argv = bwrap_argv(args, &plan.policy, &options, availability)?;
    let sealed = SealedPlan::new(&stage).map_err(|e| CliError::Launch(e.to_string()))?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(plan.env.iter().cloned());
    sealed.hand_to(&mut cmd);
    if let Some(setup) = &netns_setup {
        setup.install(&mut cmd);
    }
    if args.tenant {
        let err = std::os::unix::process::CommandExt::exec(&mut cmd);
        eprintln!("jaula: cannot execute {}: {err}", argv[0].to_string_lossy());
        return Ok(REFUSED);
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
    let sealed = SealedPlan::new(&stage).map_err(|e| CliError::Launch(e.to_string()))?;
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
    let status = match jaula_sandbox::child::spawn_and_wait(cmd) {
        Ok(status) => status,
        Err(e) => {
            eprintln!(
                "jaula: cannot execute {}: {e}",
                cmd.get_program().to_string_lossy()
            );
            return Ok(REFUSED);
        }
    };
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
        eprintln!("jaula: refusing to run uncaged: {reason} (pass --allow-uncaged to run anyway)");
        return Ok(REFUSED);
    }
    eprintln!("jaula: WARNING: running UNCAGED: {reason}");
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    let err = std::os::unix::process::CommandExt::exec(&mut cmd);
    eprintln!(
        "jaula: cannot execute {}: {err}",
        args.command[0].to_string_lossy()
    );
    Ok(if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        REFUSED
    })
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
    let sealed = SealedPlan::new(plan).map_err(|e| CliError::Launch(e.to_string()))?;
    let mut cmd = stage_command()?;
    cmd.current_dir(cwd);
    sealed.hand_to(&mut cmd);
    jaula_sandbox::child::spawn_and_wait(&mut cmd).map_err(|e| {
        CliError::Launch(format!(
            "cannot start jaula's stage {} in {}: {e}",
            cmd.get_program().to_string_lossy(),
            cwd.display()
        ))
    })
}
