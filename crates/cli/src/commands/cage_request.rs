//! What `jaula run` asks the sandbox crate for: its arguments, the config file and the
//! environment settled into one typed [`CageRequest`], on either platform. The sandbox
//! crate plans and starts the cage from it (`jaula_sandbox::cage`); the settled network,
//! whose lists only the proxy reads, comes back beside it.

use std::ffi::OsString;
use std::path::PathBuf;

use jaula_policy::network::SettledNetwork;
use jaula_policy::{CageProfile, EnvVars, Platform, Sources};
use jaula_sandbox::cage::{CageRequest, NetworkRequest};

use crate::commands::run_args::{network_flags, scrubbed_env_from, RunArgs, RUN_ADVICE};
use crate::context;
use crate::error::{CliError, UsageError};

/// A request, and what the caller still needs beside it: the sources (`run.quiet`) and
/// the settled network the proxy enforces.
#[derive(Debug)]
pub struct Asked {
    /// What the sandbox crate plans and starts.
    pub request: CageRequest,
    /// The sources the policy was resolved from (Linux reads `run.quiet`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub sources: Sources,
    /// The network settled from the flags and the config: the mode, and for the proxy
    /// its domain rules, overrides and addresses.
    pub network: SettledNetwork,
}

/// The owner switched the cage off (`CITY_CAGE=0`, config `cage.enabled = false`).
#[derive(Debug)]
pub struct Disabled;

/// Gather the sources, resolve the policy for `platform`, scrub the environment and settle
/// the network. `vars` is both the sources' environment (`CITY_CAGE`, `JAULA_CONFIG`, ...)
/// and the one the command gets, scrubbed; `cwd` is where the command starts (the repo,
/// when `--repo` is not given).
pub fn ask(
    args: &RunArgs,
    platform: Platform,
    vars: Vec<(OsString, OsString)>,
    cwd: PathBuf,
) -> Result<Result<Asked, Disabled>, CliError> {
    let mut policy_args = args.policy.clone();
    let defaulted = policy_args.repo.is_none();
    if defaulted {
        policy_args.repo = Some(cwd.clone());
    }
    let mut flags = policy_args.flags(Some(platform));
    if args.tenant {
        flags.profile = CageProfile::Contract;
    }
    let mut sources = context::sources_with(&flags, &EnvVars::from_pairs(vars.iter().cloned()))?;
    if platform == Platform::Linux {
        // The command's own tool family counts as present, wherever the command lives: its
        // cache root (an agent's `~/.codex`) is created even when it is not on the PATH.
        sources.spec.launched = Some(PathBuf::from(&args.command[0]));
        if let Some(problem) = crate::commands::config_check::problems(&sources)
            .into_iter()
            .next()
        {
            return Err(problem.into());
        }
    }
    if !sources.enabled {
        return Ok(Err(Disabled));
    }
    let network = network_flags(args)
        .settle(&sources.network, platform)
        .map_err(UsageError::from)?;
    #[cfg(target_os = "linux")]
    if args.keep_fd.contains(&jaula_sandbox::plan_fd::PLAN_FD) {
        let fd = jaula_sandbox::plan_fd::PLAN_FD;
        return Err(UsageError::PlanDescriptor { fd }.into());
    }
    let policy = context::resolve(&sources, &policy_args)
        .map_err(|e| e.for_defaulted_repo(defaulted, "run", RUN_ADVICE))?;
    #[cfg(target_os = "linux")]
    linux::before_scrub(args, &policy);
    #[allow(unused_mut)] // Linux adds the access tokens.
    let mut env = scrubbed_env_from(args, &sources, policy.unix_sockets(), vars)?;
    #[cfg(target_os = "linux")]
    linux::after_scrub(args, &sources, &policy, &mut env)?;
    let request = CageRequest {
        backend: args.backend.or(sources.run.backend).unwrap_or_default(),
        network: NetworkRequest {
            mode: network.mode,
            fallback: network.fallback,
            proxy_localhost: network.proxy_localhost,
            log: args.net.network_log.clone(),
        },
        env,
        limits: jaula_policy::limits::ResourceLimits {
            max_processes: args.max_procs,
            max_data_bytes: args.max_data,
        },
        keep_fds: args.keep_fd.clone(),
        socket_gate: !args.no_socket_gate,
        tenant: args.tenant,
        pid_namespace: !args.no_pid_ns,
        // `--window` defaults to the literal "window": that default means "not given".
        window: (policy_args.window != "window").then(|| policy_args.window.clone()),
        bwrap: sources.bwrap,
        verbose: args.verbose,
        cwd,
        command: args.command.clone(),
        policy,
    };
    Ok(Ok(Asked {
        request,
        sources,
        network,
    }))
}

/// The proxy of a mode that has one, configured from the settled network and `--log`.
pub fn proxy_for(args: &RunArgs, network: SettledNetwork) -> Result<jaula_proxy::Proxy, CliError> {
    let mut config = jaula_proxy::ProxyConfig::new(network.rules);
    config.resolve = network.resolve.into_iter().collect();
    config.allow_addresses = network.allow_addresses;
    config.log = args.net.network_log.clone();
    Ok(jaula_proxy::Proxy::new(config)?)
}

/// What only the Linux launch does while it settles the request.
#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsString;

    use jaula_policy::{Policy, Sources};

    use crate::commands::run_args::RunArgs;
    use crate::error::{CliError, Refusal};

    /// The `--no-socket-gate` warning, and the absent cache roots the policy marks for
    /// creation, made before either backend is built: neither can grant a path that does
    /// not exist (docs/security.md, "First run").
    pub(super) fn before_scrub(args: &RunArgs, policy: &Policy) {
        if args.no_socket_gate {
            eprintln!(
                "jaula: warning: --no-socket-gate: host unix sockets (tmux, docker, D-Bus, \
                 key agents) are reachable from this cage, and protected paths it can write \
                 are only reported after the command"
            );
        }
        let created = jaula_sandbox::absent_roots::create_absent_roots(policy);
        for failure in &created.failed {
            eprintln!("jaula: warning: {failure}; writes beneath it are refused in the cage");
        }
        if args.verbose && !created.made.is_empty() {
            let made: Vec<String> = created
                .made
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            eprintln!("jaula: created (0700): {}", made.join(" "));
        }
    }

    /// The access tokens handed in, and the hints about the command.
    pub(super) fn after_scrub(
        args: &RunArgs,
        sources: &Sources,
        policy: &Policy,
        env: &mut Vec<(OsString, OsString)>,
    ) -> Result<(), CliError> {
        hand_access_tokens(args, sources, policy, env).map_err(Refusal::from)?;
        if let Some(hint) = crate::commands::agent_hint::login_hint(&args.command, policy, env) {
            eprintln!("{hint}");
        }
        if let Some(hint) = crate::commands::nested_sandbox::nested_sandbox_hint(&args.command, env)
        {
            eprintln!("{hint}");
        }
        Ok(())
    }

    /// `--hand-access-token` and `env.hand_access_token`: each agent's access token joins
    /// the cage's environment, read here, outside the cage, as the owner. The flag is asked
    /// of this one command and is obeyed whatever the command is; a config entry holds for
    /// every run, so it hands the token only to a command that is that agent (`claude
    /// ...`, not `jaula run -- true` nor another agent).
    fn hand_access_tokens(
        args: &RunArgs,
        sources: &Sources,
        policy: &Policy,
        env: &mut Vec<(OsString, OsString)>,
    ) -> Result<(), crate::access_token::TokenError> {
        use crate::access_token::{add_to_env, notice, read_token, TokenAgent};
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
}
