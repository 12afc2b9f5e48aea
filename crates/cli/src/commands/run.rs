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
use jaula_policy::{CageProfile, Platform, Policy};
#[cfg(target_os = "linux")]
use jaula_sandbox::bwrap;
#[cfg(target_os = "linux")]
use jaula_sandbox::hardening::HardeningOptions;
#[cfg(target_os = "linux")]
use jaula_sandbox::landlock::{self, Floor, PlanMode, RealFs};
#[cfg(target_os = "linux")]
use jaula_sandbox::launch::{
    confine_and_exec, enter_cgroup, exit_like, set_resource_limits, Confinement, Gate,
    ResourceLimits,
};
#[cfg(target_os = "linux")]
use jaula_sandbox::network::netns;
#[cfg(target_os = "linux")]
use jaula_sandbox::planting::{self, Snapshot};
#[cfg(target_os = "linux")]
use std::path::Path;
#[cfg(target_os = "linux")]
use std::process::Command;

use crate::args::PolicyArgs;
#[cfg(target_os = "linux")]
use crate::commands::network_notice;
#[cfg(target_os = "linux")]
use crate::commands::none_log;
#[cfg(target_os = "linux")]
use crate::context;
use crate::error::CliError;
use crate::Outcome;

/// Exit status when jaula refuses to start the command (the shell's "cannot execute").
pub const REFUSED: i32 = 126;

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
    /// Internal (`jaula contract run`): move into the cgroup whose `cgroup.procs` is open
    /// on this descriptor before confining.
    #[arg(long, hide = true, value_name = "FD")]
    pub cgroup_fd: Option<RawFd>,
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
    /// With --network allow or none: append every network decision to FILE as a JSON
    /// line, each refusal with the rule that refused it (`--network-log` is the older
    /// name).
    #[arg(long = "log", visible_alias = "network-log", value_name = "FILE")]
    pub network_log: Option<PathBuf>,
    /// Internal (tests): the proxy resolves HOST to ADDR:PORT without DNS (repeatable).
    #[arg(long = "network-resolve", value_name = "HOST=ADDR:PORT", hide = true)]
    pub network_resolve: Vec<String>,
    /// Internal: the descriptor over which the caged stage hands its loopback listener to
    /// the proxy.
    #[arg(long = "network-handoff-fd", value_name = "FD", hide = true)]
    pub network_handoff_fd: Option<RawFd>,
    /// Internal: a DNS stub socket that the launching jaula bound in the cage's namespace
    /// before starting bubblewrap (repeatable).
    #[arg(long = "network-dns-fd", value_name = "FD", hide = true)]
    pub network_dns_fd: Vec<RawFd>,
    /// Internal: `--log` under `none`, opened by the launching jaula before bubblewrap.
    #[arg(long = "network-log-fd", value_name = "FD", hide = true)]
    pub network_log_fd: Option<RawFd>,
    /// Internal (tests): with --network none natively, apply the no-namespace fallback
    /// (Landlock TCP + seccomp socket families) even where a namespace could be made.
    #[arg(long = "network-fallback", hide = true)]
    pub network_fallback: bool,
    /// Internal: the allow list admits `localhost`, so it is not put in NO_PROXY.
    #[arg(long = "network-proxy-localhost", hide = true)]
    pub network_proxy_localhost: bool,
    /// Internal: jaula's own stage inside the bubblewrap view.
    #[arg(long, hide = true)]
    pub inner_stage: bool,
    /// Internal: the native stage, re-executed by a parent jaula that waits for it and
    /// then reports changed protected paths.
    #[arg(long, hide = true)]
    pub planting_child: bool,
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

#[cfg(target_os = "linux")]
pub fn run(args: &RunArgs) -> Outcome {
    let mut policy_args = args.policy.clone();
    if policy_args.repo.is_none() {
        policy_args.repo = Some(std::env::current_dir().map_err(CliError::Cwd)?);
    }
    let mut flags = policy_args.flags(Some(Platform::Linux));
    if args.tenant {
        flags.profile = CageProfile::Contract;
    }
    let sources = context::sources_from(&flags)?;
    if let Some(problem) = crate::commands::config_check::problems(&sources)
        .into_iter()
        .next()
    {
        return Err(CliError::Config(problem));
    }
    if !sources.enabled {
        return uncaged(
            args,
            "the cage is disabled (CITY_CAGE=0 or config cage.enabled = false)",
        );
    }
    let policy = context::resolve(&sources, &policy_args)?;
    if args.no_socket_gate && !args.inner_stage && args.network_handoff_fd.is_none() {
        eprintln!(
            "jaula: warning: --no-socket-gate: host unix sockets (tmux, docker, D-Bus, key \
             agents) are reachable from this cage, and protected paths it can write are only \
             reported after the command"
        );
    }
    if !args.inner_stage && !args.planting_child && args.network_handoff_fd.is_none() {
        create_absent_roots(&policy, args.verbose);
    }
    let mut env = scrubbed_env(args, &sources)?;
    if !args.inner_stage && !args.planting_child && args.network_handoff_fd.is_none() {
        if let Err(refusal) = hand_access_tokens(args, &sources, &policy, &mut env) {
            eprintln!("jaula: refusing to run: --hand-access-token: {refusal}");
            return Ok(REFUSED);
        }
        if let Some(hint) = crate::commands::agent_hint::login_hint(&args.command[0], &policy, &env)
        {
            eprintln!("{hint}");
        }
    }
    let limits = ResourceLimits {
        max_processes: args.max_procs,
        max_data_bytes: args.max_data,
    };
    if let Err(e) = set_resource_limits(&limits) {
        eprintln!("jaula: {e}");
        return Ok(REFUSED);
    }
    // The planting child inherits the cgroup its parent entered (and the descriptor was
    // consumed there).
    if let Some(fd) = args.cgroup_fd.filter(|_| !args.planting_child) {
        if let Err(e) = enter_cgroup(fd) {
            eprintln!("jaula: cannot enter the contract's cgroup: {e}");
            return Ok(REFUSED);
        }
    }
    let backend = match args.backend {
        Some(b) => b,
        None => configured_backend(&sources)?,
    };
    let (mode, rules) = network_settings(args, &sources)?;
    if args.inner_stage {
        return confine(args, &policy, env, PlanMode::BwrapView, mode);
    }
    if args.network_handoff_fd.is_some() {
        // The native `allow` stage, spawned by the supervising jaula below.
        return confine(args, &policy, env, PlanMode::Native, mode);
    }
    if args.verbose {
        eprintln!("jaula: network: {}", describe_mode(mode, &rules));
    } else if let Some(line) = network_notice::at_start(mode, rules.allow().len()) {
        // Said once, by the outermost jaula (a planting child is its re-execution).
        if !args.planting_child {
            eprintln!("{line}");
        }
    }
    let landlock_ok = landlock::probe().floor_met;
    if mode == NetworkMode::Allow {
        return run_allow(args, &policy_args, &policy, env, backend, &sources, rules);
    }
    let bwrap_probe = || {
        bwrap::probe_cached(
            sources.bwrap,
            &bwrap_options(args, mode),
            &bwrap_probe_cache(&policy),
        )
    };
    match backend {
        Backend::Landlock if landlock_ok => native(args, &policy, env, mode),
        Backend::Landlock => uncaged(args, &landlock_missing()),
        Backend::Bwrap | Backend::Auto => match bwrap_probe() {
            a if a.is_available() => exec_bwrap(args, &policy_args, &policy, env, &a, mode),
            a if backend == Backend::Auto && landlock_ok => {
                if args.verbose {
                    eprintln!("jaula: bwrap unavailable ({}); using landlock", a.reason());
                }
                native(args, &policy, env, mode)
            }
            a if backend == Backend::Auto => {
                uncaged(args, &format!("{}; and {}", a.reason(), landlock_missing()))
            }
            a => uncaged(args, &format!("bwrap backend: {}", a.reason())),
        },
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
fn landlock_missing() -> String {
    format!("landlock: {}", landlock::probe().kernel)
}

#[cfg(target_os = "linux")]
fn configured_backend(sources: &Sources) -> Result<Backend, CliError> {
    match sources.run.backend.as_deref() {
        None => Ok(Backend::Auto),
        Some(name) => Backend::from_str(name, true).map_err(|_| {
            CliError::Config(format!(
                "config {}: run.backend = {name:?} is not one of auto, landlock, bwrap",
                sources.config_path.display()
            ))
        }),
    }
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

/// The cage's own `/tmp`, `/var/tmp` and `/run/user/UID` in the bwrap view, wherever the
/// policy makes the host's writable (a window; a tenant never gets them): the host's hold
/// the owner's tmux, X11, D-Bus, docker and agent sockets, which connect(2) reaches
/// through any bind. Err is the reason to refuse: never fall back to the host's `/tmp`.
#[cfg(target_os = "linux")]
fn private_view(
    args: &RunArgs,
    policy: &Policy,
    policy_args: &PolicyArgs,
    options: &mut bwrap::BwrapOptions,
) -> Result<Option<bwrap::PrivateTmp>, String> {
    if args.verbose {
        eprintln!("jaula: pid namespace: {}", describe_pid_ns(options.proc_fs));
    }
    let writable = |p: &str| policy.writable().iter().any(|w| w.path == Path::new(p));
    if writable("/run/user") {
        // The real uid: the one bubblewrap maps into its user namespace, and the one the
        // owner's XDG_RUNTIME_DIR is named after.
        let uid = rustix::process::getuid().as_raw();
        options.private_run_user = Some(uid);
        if args.verbose {
            eprintln!(
                "jaula: /run/user: the cage's own, empty /run/user/{uid} (the host's bus, \
                 docker, podman and agent sockets are not in the view)"
            );
        }
    }
    if !writable("/tmp") {
        return Ok(None);
    }
    // `--window` defaults to the literal "window": that default means "not given".
    let given = (policy_args.window != "window").then_some(policy_args.window.as_str());
    let name = bwrap::window_dir_name(given, policy.repo());
    let tmp = bwrap::PrivateTmp::open(policy.state_home(), &name)
        .map_err(|e| format!("cannot make the cage's private /tmp: {e}"))?;
    options.private_tmp = Some(tmp.fds());
    if args.verbose {
        eprintln!(
            "jaula: /tmp and /var/tmp: the cage's own, {dir}/{} and {dir}/{} (the host's are \
             not in the view)",
            bwrap::TMP_NAME,
            bwrap::VAR_TMP_NAME,
            dir = tmp.window_dir().display()
        );
    }
    Ok(Some(tmp))
}

/// What `/proc` shows the caged process, for `-v` (bwrap) and the native backend.
#[cfg(target_os = "linux")]
pub fn describe_pid_ns(own: bool) -> &'static str {
    if own {
        "the cage's own, with its own /proc: host processes and their command lines are \
         not visible"
    } else {
        "the host's (LIMIT): /proc lists every host process, and their command lines \
         (/proc/<pid>/cmdline) are readable; never pass secrets in argv"
    }
}

/// The mode and validated lists: flags over the config's `[network]`. The config's lists
/// only count when the mode is `allow` (a config can hold an allow list and a single run
/// still ask for `none`); lists given as flags with another mode are refused.
pub(crate) fn network_settings(
    args: &RunArgs,
    sources: &Sources,
) -> Result<(NetworkMode, DomainRules), CliError> {
    let config = &sources.network;
    let mode = match (args.network, &config.mode) {
        (Some(m), _) => m.into(),
        (None, Some(name)) => name.parse::<NetworkMode>().map_err(|e| {
            CliError::Config(format!("config {}: {e}", sources.config_path.display()))
        })?,
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
            .extend(config.allow_domain.iter().cloned());
        spec.deny_domains.extend(config.deny_domain.iter().cloned());
        spec.presets.extend(config.allow_preset.iter().cloned());
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

pub(crate) fn resolve_overrides(args: &RunArgs) -> Result<Vec<(String, SocketAddr)>, CliError> {
    args.network_resolve
        .iter()
        .map(|entry| {
            let bad =
                || CliError::Usage(format!("--network-resolve {entry:?}: want HOST=ADDR:PORT"));
            let (host, addr) = entry.split_once('=').ok_or_else(bad)?;
            let host = jaula_sandbox::network::normalize_host(host).ok_or_else(bad)?;
            Ok((host, addr.parse().map_err(|_| bad())?))
        })
        .collect()
}

/// `--allow-address` and the config's `network.allow_address`, each checked where it was
/// written. The config's list counts only in `allow` mode, like its other lists.
pub(crate) fn allow_addresses(
    args: &RunArgs,
    sources: &Sources,
) -> Result<Vec<jaula_proxy::AddressRange>, CliError> {
    let from_config = sources.network.allow_address.iter().map(|a| {
        let origin = format!(
            "config {}: network.allow_address",
            sources.config_path.display()
        );
        (origin, a)
    });
    let from_flags = args
        .allow_address
        .iter()
        .map(|a| ("--allow-address".to_owned(), a));
    from_config
        .chain(from_flags)
        .map(|(origin, a)| {
            a.parse()
                .map_err(|e| CliError::Usage(format!("{origin}: {e}")))
        })
        .collect()
}

/// `--network allow`: the cage runs as a child in its own network namespace and hands
/// its loopback listener out; this process serves the proxy on it until the child exits,
/// then mirrors the child's exit status or signal. Where no namespace can be made the
/// child refuses (exit 126): there is no fallback, since a port rule would admit any host.
#[cfg(target_os = "linux")]
fn run_allow(
    args: &RunArgs,
    policy_args: &PolicyArgs,
    policy: &Policy,
    env: Vec<(OsString, OsString)>,
    backend: Backend,
    sources: &Sources,
    rules: DomainRules,
) -> Outcome {
    let proxy_localhost = rules.decide("localhost").allowed;
    let mut config = jaula_proxy::ProxyConfig::new(rules);
    config.resolve = resolve_overrides(args)?.into_iter().collect();
    config.allow_addresses = allow_addresses(args, sources)?;
    config.log = args.network_log.clone();
    let proxy = jaula_proxy::Proxy::new(config).map_err(|e| CliError::Launch(e.to_string()))?;
    let (channel, stage_end) =
        netns::handoff_pair().map_err(|e| CliError::Launch(e.to_string()))?;
    let mut stage_flags: Vec<OsString> = vec![
        "--network".into(),
        "allow".into(),
        "--network-handoff-fd".into(),
        std::os::fd::AsRawFd::as_raw_fd(&stage_end)
            .to_string()
            .into(),
    ];
    if proxy_localhost {
        stage_flags.push("--network-proxy-localhost".into());
    }
    let landlock_ok = landlock::probe().floor_met;
    let probe = match backend {
        Backend::Landlock => None,
        _ => Some(bwrap::probe_cached(
            sources.bwrap,
            &bwrap_options(args, NetworkMode::Allow),
            &bwrap_probe_cache(policy),
        )),
    };
    let mut options = bwrap_options(args, NetworkMode::Allow);
    let mut _private_tmp = None;
    let mut netns_setup = None;
    let mut cmd = match probe {
        Some(a) if a.is_available() => {
            match private_view(args, policy, policy_args, &mut options) {
                Ok(p) => _private_tmp = p,
                Err(reason) => return refuse(&reason),
            }
            // The namespace and the DNS stub are made by the child that execs bubblewrap
            // (see NetnsInChild); the stage passes the stub on with its listener.
            let setup = netns::NetnsInChild::prepare(Some(stub_addresses()))
                .map_err(|e| CliError::Launch(e.to_string()))?;
            options.unshare_net = false;
            stage_flags.extend(dns_fd_flags(Some(&setup)));
            netns_setup = Some(setup);
            let argv = bwrap_argv(
                args,
                policy_args,
                policy,
                &options,
                &a,
                NetworkMode::Allow,
                stage_flags,
            )?;
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            if let Some(setup) = &netns_setup {
                setup.install(&mut cmd);
            }
            cmd
        }
        Some(a) if backend == Backend::Bwrap || !landlock_ok => {
            return refuse(&format!(
                "--network allow needs a network namespace; bwrap: {}{}",
                a.reason(),
                if landlock_ok {
                    String::new()
                } else {
                    format!("; {}", landlock_missing())
                }
            ));
        }
        _ if !landlock_ok => return refuse(&landlock_missing()),
        _ => {
            let mut cmd = Command::new(own_binary()?);
            cmd.arg("run");
            cmd.args(inner_stage_args(
                args,
                policy_args,
                policy,
                "landlock",
                NetworkMode::Allow,
            ));
            cmd.args(stage_flags);
            cmd.arg("--").args(&args.command);
            cmd
        }
    };
    cmd.env_clear().envs(env);
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
        .filter_map(|name| TokenAgent::from_config(name));
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

/// The environment CMD gets: this process's, less the credential variables.
#[cfg(target_os = "linux")]
fn scrubbed_env(args: &RunArgs, sources: &Sources) -> Result<Vec<(OsString, OsString)>, CliError> {
    scrubbed_env_from(args, sources, std::env::vars_os())
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
    for p in sources.env.keep.iter().chain(&args.keep_env) {
        rules = rules.keep(pattern(p)?);
    }
    for p in sources.env.scrub.iter().chain(&args.scrub_env) {
        rules = rules.scrub(pattern(p)?);
    }
    let scrubbed = scrub_env(vars, &rules);
    if args.verbose && !args.inner_stage && !scrubbed.removed_names.is_empty() {
        let names: Vec<_> = scrubbed
            .removed_names
            .iter()
            .map(|n| n.to_string_lossy())
            .collect();
        eprintln!("jaula: scrubbed from the environment: {}", names.join(" "));
    }
    Ok(scrubbed.kept)
}

#[cfg(target_os = "linux")]
fn command(args: &RunArgs, env: Vec<(OsString, OsString)>) -> Command {
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]).env_clear().envs(env);
    cmd
}

/// Landlock + seccomp + hardening on this process, then exec CMD in its place.
#[cfg(target_os = "linux")]
fn confine(
    args: &RunArgs,
    policy: &Policy,
    mut env: Vec<(OsString, OsString)>,
    mode: PlanMode,
    network: NetworkMode,
) -> Outcome {
    let (restrict_sockets, dns_stub) = match network_stage(args, mode, network) {
        Ok(stage) => {
            for (k, v) in stage.env {
                env.retain(|(name, _)| name != k.as_str());
                env.push((k.into(), v.into()));
            }
            (stage.restrict_sockets, stage.dns_stub)
        }
        Err(reason) => return refuse(&reason),
    };
    // `--log` under `none`: opened (or taken from the launching jaula) before Landlock,
    // so the supervisor can write it wherever it is; every refusal goes there as it
    // happens.
    if network == NetworkMode::None && !args.no_socket_gate {
        match none_log_file(args) {
            Ok(Some(file)) => {
                jaula_sandbox::network::none_log::set_sink(none_log::sink(file));
            }
            Ok(None) => {}
            Err(reason) => return refuse(&reason),
        }
    }
    // Before the plan: the evidence log (and its directory) must exist when the Landlock
    // rules are listed, or the supervisor could not read back what it snapshots there.
    let after_exit = if args.no_socket_gate {
        None
    } else {
        with_network_note(planting_hook(args, policy, mode), args, mode, network)
    };
    let plan = match landlock::plan(policy, mode, &RealFs) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("jaula: refusing to run: the landlock plan failed: {e}");
            return Ok(REFUSED);
        }
    };
    if args.verbose {
        eprintln!("jaula: {}", plan.summary());
    }
    let support = landlock::probe();
    // Inside bwrap's view the mount namespace already seals; a kernel without Landlock
    // there is reported, not refused. Natively Landlock is the cage: refuse without it.
    let landlock = if support.floor_met {
        Some((&plan, Floor::FsV1))
    } else if mode == PlanMode::BwrapView {
        eprintln!(
            "jaula: warning: {}: the bwrap view is the only filesystem layer",
            landlock_missing()
        );
        None
    } else {
        return uncaged(args, &landlock_missing());
    };
    let mut hardening = HardeningOptions::new();
    for fd in &args.keep_fd {
        hardening = hardening.keep_fd(*fd);
    }
    let confinement = Confinement {
        hardening,
        landlock,
        seccomp: true,
        restrict_sockets,
        gate: (!args.no_socket_gate).then(|| Gate {
            policy: policy.clone(),
            after_exit,
            dns_stub,
        }),
    };

    let verbose = args.verbose;
    let backend = if mode == PlanMode::Native {
        "landlock"
    } else {
        "bwrap (inner stage)"
    };
    if verbose && mode == PlanMode::Native {
        eprintln!("jaula: pid namespace: {}", describe_pid_ns(false));
    }
    let err = confine_and_exec(&mut command(args, env), confinement, |report| {
        if verbose {
            eprintln!("jaula: backend {backend}; layers in force:\n{report}");
        }
    });
    eprintln!("jaula: {err}");
    Ok(err.exit_code())
}

#[cfg(target_os = "linux")]
struct NetworkStage {
    env: Vec<(String, String)>,
    restrict_sockets: bool,
    /// `none`: the DNS stub's sockets, for the socket gate's supervisor.
    dns_stub: Vec<std::net::UdpSocket>,
}

/// The network steps of the stage that execs the command, before it is confined.
///
/// - `none`, native: a namespace of its own; where none can be made, the socket
///   restriction (Landlock TCP + seccomp families) instead. In bwrap's view bubblewrap
///   already made the namespace.
/// - `allow`: natively a namespace first (required: no fallback); then, in both
///   backends, bind the proxy's listener and the steering listeners on the namespace's
///   loopback and hand them out.
#[cfg(target_os = "linux")]
fn network_stage(
    args: &RunArgs,
    plan: PlanMode,
    network: NetworkMode,
) -> Result<NetworkStage, String> {
    let mut stage = NetworkStage {
        env: Vec::new(),
        restrict_sockets: false,
        dns_stub: Vec::new(),
    };
    match (network, plan) {
        (NetworkMode::Host, _) => {}
        // In the view no process of jaula's can bind the stub: only the sockets the
        // launching jaula bound are served.
        (NetworkMode::None, PlanMode::BwrapView) if args.network_dns_fd.is_empty() => {}
        (NetworkMode::None, PlanMode::BwrapView) => {
            stage.dns_stub = none_stub(args, &args.network_dns_fd);
        }
        (NetworkMode::None, _) if args.network_fallback => stage.restrict_sockets = true,
        (NetworkMode::None, _) => match netns::enter_loopback_netns() {
            Ok(kind) => {
                if args.verbose {
                    eprintln!("jaula: network none: namespace {kind:?}");
                }
                stage.dns_stub = none_stub(args, &[]);
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
            let Some(fd) = args.network_handoff_fd else {
                return Err("--network allow stage started without its hand-off".to_owned());
            };
            let channel = netns::take_handoff_fd(fd).map_err(|e| e.to_string())?;
            if plan == PlanMode::Native {
                netns::enter_loopback_netns().map_err(|e| {
                    format!("--network allow needs a network namespace and none can be made: {e}")
                })?;
            }
            // In bwrap's view an unprivileged stage cannot bind the web ports in bwrap's
            // namespace (see enter_loopback_netns_with_userns) and makes one of its own;
            // root cannot map itself into a new user namespace without CAP_SETFCAP
            // (Linux 5.12+) and binds them in bwrap's, by bwrap's --cap-add.
            let root = rustix::process::geteuid().is_root();
            let nested = match plan {
                PlanMode::Native => Ok(false),
                _ if root => Ok(false),
                _ => match netns::enter_loopback_netns_with_userns() {
                    Ok(_) => Ok(true),
                    Err(e) if e.changed_nothing() => Err(e.to_string()),
                    Err(e) => return Err(format!("--network allow: {e}")),
                },
            };
            let own_namespace = matches!(nested, Ok(true));
            let mut listeners = netns::CageListeners::bind()
                .map_err(|e| format!("cannot listen on the cage's loopback: {e}"))?;
            if let Err(e) =
                nested.and_then(|_| listeners.bind_steering().map_err(|e| e.to_string()))
            {
                eprintln!(
                    "jaula: network allow: no steering for clients that ignore the proxy \
                     variables ({e}); they reach nothing"
                );
            }
            listeners.send(&channel).map_err(|e| e.to_string())?;
            // The stub must answer in the namespace the command runs in: a nested one made
            // just now binds its own; otherwise the sockets bubblewrap's parent bound are
            // taken (natively there are none, and the stage binds them here).
            let dns_fds: &[RawFd] = if own_namespace {
                // The parent's sockets serve the outer namespace: close them here.
                if !args.network_dns_fd.is_empty() {
                    drop(netns::stub_sockets(&stub_addresses(), &args.network_dns_fd));
                }
                &[]
            } else {
                &args.network_dns_fd
            };
            // Without the stub a client that ignores the proxy variables fails to resolve,
            // as it did before the stub existed: warn, and hand out none.
            let stub = netns::stub_sockets(&stub_addresses(), dns_fds).unwrap_or_else(|e| {
                eprintln!("jaula: warning: network allow: {e}; names do not resolve");
                Vec::new()
            });
            netns::send_dns_sockets(&channel, &stub).map_err(|e| e.to_string())?;
            stage.env = netns::proxy_env(args.network_proxy_localhost);
        }
    }
    Ok(stage)
}

/// Where the cage's DNS stub answers: the nameservers of the host's `/etc/resolv.conf`,
/// which the cage reads too (an unreadable file reads as none listed, as glibc does).
#[cfg(target_os = "linux")]
fn stub_addresses() -> jaula_sandbox::network::dns_stub::StubAddresses {
    let text = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    jaula_sandbox::network::dns_stub::stub_addresses(&text)
}

/// The `none` stub's sockets: taken from `fds` (bound by the jaula that started
/// bubblewrap) or bound here. Only with the socket gate, whose supervisor serves them. A
/// stub that cannot be set up costs the names in the exit summary, not the cage: warn.
#[cfg(target_os = "linux")]
fn none_stub(args: &RunArgs, fds: &[RawFd]) -> Vec<std::net::UdpSocket> {
    if args.no_socket_gate {
        return Vec::new();
    }
    match netns::stub_sockets(&stub_addresses(), fds) {
        Ok(sockets) => {
            if args.verbose {
                let at: Vec<String> = sockets
                    .iter()
                    .filter_map(|s| s.local_addr().ok())
                    .map(|a| a.to_string())
                    .collect();
                eprintln!(
                    "jaula: network none: DNS stub on {} (answers REFUSED, names recorded)",
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

/// Run bubblewrap with the rendered view and jaula's own inner stage inside it, wait for
/// it, report the protected paths the view could not cover (absent ones) if they changed,
/// and leave as it left.
#[cfg(target_os = "linux")]
fn exec_bwrap(
    args: &RunArgs,
    policy_args: &PolicyArgs,
    policy: &Policy,
    env: Vec<(OsString, OsString)>,
    availability: &bwrap::Availability,
    mode: NetworkMode,
) -> Outcome {
    let mut options = bwrap_options(args, mode);
    // Held open until the exec: bubblewrap binds these descriptors.
    let _private_tmp = match private_view(args, policy, policy_args, &mut options) {
        Ok(p) => p,
        Err(reason) => return refuse(&reason),
    };
    // `none`: the namespace is made before bubblewrap starts, by the child that execs it,
    // with the DNS stub bound for the inner stage's supervisor (see NetnsInChild).
    let netns_setup = match mode {
        NetworkMode::None => {
            let stub = (!args.no_socket_gate).then(stub_addresses);
            options.unshare_net = false;
            Some(netns::NetnsInChild::prepare(stub).map_err(|e| CliError::Launch(e.to_string()))?)
        }
        _ => None,
    };
    let mut extra = dns_fd_flags(netns_setup.as_ref());
    // `--log` under `none`: opened here, outside everything, and inherited by the inner
    // stage's supervisor, which writes it (held open until bubblewrap has started).
    let _none_log = match (mode, &args.network_log) {
        (NetworkMode::None, Some(path)) if !args.no_socket_gate => {
            let file = jaula_proxy::open_log(path).map_err(|e| CliError::Launch(e.to_string()))?;
            rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())
                .map_err(|e| CliError::Launch(format!("cannot pass the log on: {e}")))?;
            extra.extend([
                "--network-log-fd".into(),
                std::os::fd::AsRawFd::as_raw_fd(&file).to_string().into(),
            ]);
            Some(file)
        }
        _ => None,
    };
    let argv = bwrap_argv(
        args,
        policy_args,
        policy,
        &options,
        availability,
        mode,
        extra,
    )?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).env_clear().envs(env);
    if let Some(setup) = &netns_setup {
        setup.install(&mut cmd);
    }
    if args.tenant {
        let err = std::os::unix::process::CommandExt::exec(&mut cmd);
        eprintln!("jaula: cannot execute {}: {err}", argv[0].to_string_lossy());
        return Ok(REFUSED);
    }
    wait_and_report(&mut cmd, policy, args.verbose, mode)
}

/// The `--log` file under `none`: the one the launching jaula passed down
/// (`--network-log-fd`), or the one named, opened here (the outermost jaula natively).
#[cfg(target_os = "linux")]
fn none_log_file(args: &RunArgs) -> Result<Option<std::fs::File>, String> {
    if let Some(fd) = args.network_log_fd {
        return netns::take_log_fd(fd).map(Some).map_err(|e| e.to_string());
    }
    match &args.network_log {
        Some(path) if !args.inner_stage => jaula_proxy::open_log(path)
            .map(Some)
            .map_err(|e| e.to_string()),
        _ => Ok(None),
    }
}

/// `--network-dns-fd N` for each descriptor the stage receives a stub socket on.
#[cfg(target_os = "linux")]
fn dns_fd_flags(setup: Option<&netns::NetnsInChild>) -> Vec<OsString> {
    setup
        .map(|s| s.dns_fds())
        .unwrap_or_default()
        .into_iter()
        .flat_map(|fd| ["--network-dns-fd".into(), fd.to_string().into()])
        .collect()
}

/// Natively Landlock cannot stop the creation of an absent protected path, nor any write
/// to one it does not split around, so the protected paths are snapshotted before the
/// command runs and reported on after it ends. The socket gate's supervisor already waits
/// for the command and does the reporting; with `--no-socket-gate` there is no supervisor,
/// so this jaula re-executes itself as the confined stage (`--planting-child`) and waits.
#[cfg(target_os = "linux")]
fn native(
    args: &RunArgs,
    policy: &Policy,
    env: Vec<(OsString, OsString)>,
    mode: NetworkMode,
) -> Outcome {
    let mut argv = std::env::args_os();
    let me = argv.next();
    let subcommand = argv.next();
    // A tenant's spawn is not reported on: nobody runs a tenant's tree uncaged later, and
    // the runner keeps its own evidence (crates/contract).
    if !args.no_socket_gate
        || args.planting_child
        || args.tenant
        || subcommand.as_deref() != Some(std::ffi::OsStr::new("run"))
    {
        return confine(args, policy, env, PlanMode::Native, mode);
    }
    let mut cmd = Command::new(own_binary()?);
    if let Some(me) = me {
        std::os::unix::process::CommandExt::arg0(&mut cmd, me);
    }
    cmd.arg("run").arg("--planting-child").args(argv);
    wait_and_report(&mut cmd, policy, args.verbose, mode)
}

/// The planting report the socket gate's supervisor makes after the command: the snapshot
/// and the evidence log are taken now, before this process confines itself.
#[cfg(target_os = "linux")]
fn planting_hook(
    args: &RunArgs,
    policy: &Policy,
    mode: PlanMode,
) -> Option<Box<dyn FnOnce(std::process::ExitStatus)>> {
    let reports = mode == PlanMode::Native
        && !args.tenant
        && !args.planting_child
        && args.network_handoff_fd.is_none();
    if !reports {
        return None;
    }
    // The log first: opening it may create it, which must not show as a change.
    let log = planting::EvidenceLog::open(policy);
    let snapshot = Snapshot::take(policy);
    if args.verbose {
        eprintln!(
            "jaula: planting guard: {} protected paths snapshotted; changes are reported \
             after the command exits (evidence: {})",
            snapshot.len(),
            planting::evidence_path(policy).display()
        );
    }
    let policy = policy.clone();
    Some(Box::new(move |_status| {
        planting::report_after_into(&snapshot, &policy, log);
    }))
}

#[cfg(target_os = "linux")]
/// Natively the socket gate's supervisor is the one that sees the command end: add the
/// `--network none` reminder to what it runs then (the bwrap and `allow` paths print it
/// from the jaula that waits).
fn with_network_note(
    hook: Option<Box<dyn FnOnce(std::process::ExitStatus)>>,
    args: &RunArgs,
    mode: PlanMode,
    network: NetworkMode,
) -> Option<Box<dyn FnOnce(std::process::ExitStatus)>> {
    let notes =
        network == NetworkMode::None && !args.planting_child && args.network_handoff_fd.is_none();
    if !notes {
        return hook;
    }
    // The refused addresses are known only to this process, the gate's supervisor (in the
    // bwrap view, the inner stage); the failure reminder is printed by the outermost
    // jaula, which under bwrap is the one waiting for bwrap.
    let remind = mode == PlanMode::Native;
    Some(Box::new(move |status| {
        if let Some(hook) = hook {
            hook(status);
        }
        let lookups = jaula_sandbox::network::dns_stub::refused_lookups();
        let refused = jaula_sandbox::socket_gate::unreachable_destinations();
        if let Some(note) = network_notice::refused_under_none(&lookups, &refused) {
            eprintln!("{note}");
        }
        if let Some(note) = remind.then(|| network_notice::after_none(status)).flatten() {
            eprintln!("{note}");
        }
    }))
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

#[cfg(target_os = "linux")]
fn command_beneath_private_dirs(program: &OsString, cwd: &std::path::Path) -> Option<PathBuf> {
    let path = std::path::Path::new(program);
    if path.components().count() < 2 {
        return None; // a bare name is found on PATH, outside /tmp
    }
    beneath_private_dirs(&cwd.join(path))
}

/// `path`, canonical, when it lies beneath a directory the bwrap view replaces with the
/// window's own (/tmp, /var/tmp).
#[cfg(target_os = "linux")]
fn beneath_private_dirs(path: &std::path::Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    let replaced = [
        std::path::Path::new("/tmp"),
        std::path::Path::new("/var/tmp"),
    ];
    replaced
        .iter()
        .any(|dir| real.starts_with(dir) && real != *dir)
        .then_some(real)
}

/// bubblewrap's argv with jaula's inner stage (and `extra` flags for it) as the command.
#[cfg(target_os = "linux")]
fn bwrap_argv(
    args: &RunArgs,
    policy_args: &PolicyArgs,
    policy: &Policy,
    options: &bwrap::BwrapOptions,
    availability: &bwrap::Availability,
    mode: NetworkMode,
    extra: Vec<OsString>,
) -> Result<Vec<OsString>, CliError> {
    context::ensure_protected_dirs(policy)?;
    let mut argv = bwrap::render_argv(policy, options, &bwrap::RealDisk)?;
    if let Some(program) = availability.program() {
        argv[0] = program.as_os_str().to_os_string();
    }
    let cwd = std::env::current_dir().map_err(CliError::Cwd)?;
    // The command itself, named by a path beneath a directory the view replaces with the
    // window's own (/tmp, /var/tmp): bound read-only at its own path, or it could not even
    // be started. Only the file: what it reads from there stays the window's.
    if let Some(program) = command_beneath_private_dirs(&args.command[0], &cwd) {
        argv.extend([
            "--ro-bind-try".into(),
            program.clone().into_os_string(),
            program.into_os_string(),
        ]);
    }
    // The working directory, when it lies beneath /tmp or /var/tmp and outside every
    // writable root: bound read-only at its own path, so the command starts where the
    // caller stood (the private /tmp has no such directory).
    let in_writable = policy
        .writable()
        .iter()
        .any(|w| !matches!(w.path.to_str(), Some("/tmp" | "/var/tmp")) && cwd.starts_with(&w.path));
    if !in_writable {
        if let Some(dir) = beneath_private_dirs(&cwd) {
            argv.extend([
                "--ro-bind-try".into(),
                dir.clone().into_os_string(),
                dir.into_os_string(),
            ]);
        }
    }
    argv.extend(["--chdir".into(), cwd.into_os_string()]);
    argv.extend([
        "--".into(),
        own_binary()?.into_os_string(),
        "run".into(),
        "--inner-stage".into(),
    ]);
    argv.extend(inner_stage_args(args, policy_args, policy, "bwrap", mode));
    argv.extend(extra);
    argv.push("--".into());
    argv.extend(args.command.iter().cloned());
    if args.verbose {
        eprintln!(
            "jaula: backend bwrap, one mount a line:\n  {}",
            String::from_utf8_lossy(&bwrap::shell_lines(&argv))
        );
    }
    Ok(argv)
}

/// The inner stage re-resolves the same policy inside the view: the outer stage's resolved
/// paths are passed explicitly so both stages agree whatever the environment says.
#[cfg(target_os = "linux")]
fn inner_stage_args(
    args: &RunArgs,
    policy_args: &PolicyArgs,
    policy: &Policy,
    backend: &str,
    mode: NetworkMode,
) -> Vec<OsString> {
    let mut out = context::policy_flags(policy, policy_args);
    let mut flag = |name: &str, value: OsString| {
        out.push(name.into());
        out.push(value);
    };
    flag("--backend", backend.into());
    if mode == NetworkMode::None {
        flag("--network", "none".into());
    }
    for fd in &args.keep_fd {
        flag("--keep-fd", fd.to_string().into());
    }
    for k in &args.keep_env {
        flag("--keep-env", k.into());
    }
    for s in &args.scrub_env {
        flag("--scrub-env", s.into());
    }
    if args.verbose {
        out.push("--verbose".into());
    }
    if args.tenant {
        out.push("--tenant".into());
    }
    if args.no_socket_gate {
        out.push("--no-socket-gate".into());
    }
    out
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
