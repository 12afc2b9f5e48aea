//! `jaula run` under Seatbelt (macOS): the command runs under
//! `/usr/bin/sandbox-exec -p PROFILE`, with the profile `jaula profile` prints for the same
//! flags.
//!
//! The whole launch up to its last step is platform-neutral, so it runs and is tested on
//! the Linux machines that build jaula: [`plan`] resolves the macOS policy, the network
//! mode, the environment and the profile into a [`SeatbeltLaunch`]; an [`Executor`]
//! performs it. The one production executor (macOS only) applies the process hardening
//! and execs `sandbox-exec`, or, under `--network allow`, spawns it and serves the proxy
//! on the loopback port the profile names until it exits. The tests' executor records.

use std::ffi::OsString;
use std::net::TcpListener;
use std::path::PathBuf;

use jaula_policy::network::{proxy_env_at, NetworkMode};
use jaula_policy::{CageProfile, Platform};
use jaula_sandbox::bwrap;
use jaula_sandbox::seatbelt::process::Hardening;
use jaula_sandbox::seatbelt::{self, ProfileNetwork};

use crate::commands::availability::SANDBOX_EXEC;
use crate::commands::run_args::{
    allow_addresses, network_settings, resolve_overrides, scrubbed_env_from, Backend, RunArgs,
};
use crate::error::{CliError, Refusal};
use crate::{context, Outcome};

/// Everything the last step needs, decided before it.
#[derive(Debug)]
pub struct SeatbeltLaunch {
    /// `/usr/bin/sandbox-exec -p PROFILE CMD ARGS...`.
    pub argv: Vec<OsString>,
    /// The whole environment of the command (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// The profile text, also `argv[2]`.
    pub profile: String,
    /// The window's private temporary directory, created, and the command's `TMPDIR`.
    pub tmpdir: PathBuf,
    pub hardening: Hardening,
    // Read by the macOS executor only.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub verbose: bool,
    /// `--network allow`: the proxy and the loopback listener the profile admits.
    pub proxy: Option<ProxyStage>,
}

/// jaula's proxy, ready to serve on a loopback listener outside the cage.
pub struct ProxyStage {
    pub listener: TcpListener,
    pub port: u16,
    // Served by the macOS executor only.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub proxy: jaula_proxy::Proxy,
}

impl std::fmt::Debug for ProxyStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyStage")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// The last step of the launch. Returns only when it could not run the command (or, with a
/// proxy, with the command's exit status).
pub trait Executor {
    fn launch(&mut self, launch: SeatbeltLaunch) -> Outcome;
    /// `--allow-uncaged` when no cage can be built: run `command` as it is, inheriting
    /// jaula's environment (as on Linux).
    fn uncaged(&mut self, command: &[OsString]) -> Outcome;
}

/// What the launch reads from its surroundings, passed in so a test can fix it.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// The environment jaula was started with.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory (the repo when `--repo` is not given).
    pub cwd: PathBuf,
    /// Whether `/usr/bin/sandbox-exec` exists.
    pub sandbox_exec: bool,
}

impl Inputs {
    // The macOS `run` reads the real surroundings; tests build their own.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub fn from_process() -> Result<Inputs, CliError> {
        Ok(Inputs {
            env: std::env::vars_os().collect(),
            cwd: std::env::current_dir().map_err(CliError::Cwd)?,
            sandbox_exec: std::path::Path::new(SANDBOX_EXEC).exists(),
        })
    }
}

/// `jaula run` on macOS.
#[cfg(target_os = "macos")]
pub fn run(args: &RunArgs) -> Outcome {
    run_with(args, &Inputs::from_process()?, &mut SandboxExec)
}

/// The launch with `executor` as its last step.
pub fn run_with(args: &RunArgs, inputs: &Inputs, executor: &mut dyn Executor) -> Outcome {
    if let Some(refusal) = linux_only_flag(args) {
        return Err(refusal.into());
    }
    match plan(args, inputs)? {
        Planned::Launch(launch) => executor.launch(*launch),
        Planned::Refused(refusal) => Err(refusal.into()),
        // As on Linux: no cage means exit 126, unless the user asked to run anyway.
        Planned::Uncaged { reason, .. } if args.allow_uncaged => {
            eprintln!("jaula: WARNING: running UNCAGED: {reason}");
            executor.uncaged(&args.command)
        }
        Planned::Uncaged { reason, remedy } => Err(Refusal::Uncaged { reason, remedy }.into()),
    }
}

/// What [`plan`] decided.
#[derive(Debug)]
pub enum Planned {
    Launch(Box<SeatbeltLaunch>),
    /// The launch cannot go on.
    Refused(Refusal),
    /// No cage here (disabled, or no sandbox-exec): exit 126 unless `--allow-uncaged`.
    /// `remedy`: what would give the cage back (empty when jaula knows of nothing).
    Uncaged {
        reason: String,
        remedy: String,
    },
}

/// Flags whose layer is a Linux one: refused with what to do instead, never ignored.
fn linux_only_flag(args: &RunArgs) -> Option<Refusal> {
    let linux = |flag, why| Some(Refusal::LinuxOnlyFlag { flag, why });
    match args.backend {
        Some(Backend::Landlock) => return linux("--backend landlock", "Landlock is a Linux LSM"),
        Some(Backend::Bwrap) => {
            return linux("--backend bwrap", "bubblewrap needs Linux namespaces")
        }
        Some(Backend::Auto) | None => {}
    }
    if !args.hand_access_token.is_empty() {
        return linux(
            "--hand-access-token",
            "Claude Code keeps its macOS login in the Keychain, not in a file jaula reads; \
             give it CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`",
        );
    }
    if args.no_socket_gate {
        return linux(
            "--no-socket-gate",
            "the socket gate is a Linux layer; Seatbelt's profile decides unix-socket \
             connects (allow one with --allow-unix-socket)",
        );
    }
    None
}

/// Resolve everything the launch needs. Creates the window's private temporary directory
/// (and, under `--network allow`, binds the proxy's loopback listener); nothing else.
pub fn plan(args: &RunArgs, inputs: &Inputs) -> Result<Planned, CliError> {
    let mut policy_args = args.policy.clone();
    let defaulted = policy_args.repo.is_none();
    if defaulted {
        policy_args.repo = Some(inputs.cwd.clone());
    }
    let mut flags = policy_args.flags(Some(Platform::MacOs));
    if args.tenant {
        flags.profile = CageProfile::Contract;
    }
    let sources = context::sources_from(&flags)?;
    if !sources.enabled {
        return Ok(Planned::Uncaged {
            reason: crate::commands::availability::DISABLED.to_owned(),
            remedy: crate::commands::availability::ENABLE.to_owned(),
        });
    }
    if !inputs.sandbox_exec {
        return Ok(Planned::Uncaged {
            reason: format!("{SANDBOX_EXEC} is missing"),
            remedy: String::new(),
        });
    }
    let policy = context::resolve(&sources, &policy_args).map_err(|e| {
        e.for_defaulted_repo(defaulted, "run", crate::commands::run_args::RUN_ADVICE)
    })?;
    let (mode, rules) = network_settings(args, &sources)?;
    if mode != NetworkMode::Allow && args.network_log.is_some() {
        // Linux logs what the socket gate and the namespace's DNS stub refuse; Seatbelt
        // refuses in the kernel and tells nobody (on macOS only `allow`'s proxy logs).
        return Err(CliError::Usage(format!(
            "--log with --network {mode} is Linux only: on macOS nothing sees the refusals"
        )));
    }
    let mut env = scrubbed_env_from(
        args,
        &sources,
        policy.unix_sockets(),
        inputs.env.iter().cloned(),
    )?;

    // The window's own temporary directory, as the bwrap view's /tmp: what the command
    // leaves there is found again under the state home, apart from the host's.
    let given = (policy_args.window != "window").then_some(policy_args.window.as_str());
    let name = bwrap::window_dir_name(given, policy.repo());
    // Created as the bwrap view's is (0700, owned, no symlink followed); the descriptors it
    // opens for bubblewrap are closed again at once: only the path is needed here.
    if let Err(e) = bwrap::PrivateTmp::open(policy.state_home(), &name) {
        return Ok(Planned::Refused(Refusal::PrivateTmp {
            what: "temporary directory",
            reason: e.to_string(),
        }));
    }
    let tmpdir = seatbelt::cage_tmp_dir(&policy, given);
    set_var(&mut env, "TMPDIR", tmpdir.clone().into_os_string());

    let proxy = match mode {
        NetworkMode::Allow => {
            let proxy_localhost = rules.decide("localhost").allowed;
            let mut config = jaula_proxy::ProxyConfig::new(rules);
            config.resolve = resolve_overrides(&sources)?.into_iter().collect();
            config.allow_addresses = allow_addresses(args, &sources)?;
            config.log = args.network_log.clone();
            let proxy = jaula_proxy::Proxy::new(config)?;
            // Port 0: the kernel picks a free one, and the profile is rendered with it.
            let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(CliError::ProxyBind)?;
            let port = listener.local_addr().map_err(CliError::ProxyBind)?.port();
            for (name, value) in proxy_env_at(port, proxy_localhost) {
                set_var(&mut env, &name, value.into());
            }
            Some(ProxyStage {
                listener,
                port,
                proxy,
            })
        }
        NetworkMode::Host | NetworkMode::None => None,
    };
    let network = match (&proxy, mode) {
        (Some(p), _) => ProfileNetwork::Proxy { port: p.port },
        (None, NetworkMode::None) => ProfileNetwork::None,
        (None, _) => ProfileNetwork::Host,
    };
    let options = seatbelt::ProfileOptions { network };
    let profile = seatbelt::render_profile_with(&policy, &options)?;

    let mut argv: Vec<OsString> = vec![SANDBOX_EXEC.into(), "-p".into(), profile.clone().into()];
    argv.extend(args.command.iter().cloned());
    Ok(Planned::Launch(Box::new(SeatbeltLaunch {
        argv,
        env,
        profile,
        tmpdir,
        hardening: Hardening {
            keep_fds: args.keep_fd.clone(),
            max_processes: args.max_procs,
            max_data_bytes: args.max_data,
        },
        verbose: args.verbose,
        proxy,
    })))
}

/// Set `name` to `value`, replacing any earlier value.
fn set_var(env: &mut Vec<(OsString, OsString)>, name: &str, value: OsString) {
    env.retain(|(n, _)| n != name);
    env.push((name.into(), value));
}

/// The real last step: harden this process, then exec `sandbox-exec` (or spawn it and
/// serve the proxy until it exits).
#[cfg(target_os = "macos")]
struct SandboxExec;

#[cfg(target_os = "macos")]
impl Executor for SandboxExec {
    fn launch(&mut self, launch: SeatbeltLaunch) -> Outcome {
        use std::os::unix::process::CommandExt;
        use std::process::Command;
        let steps = jaula_sandbox::seatbelt::process::harden(&launch.hardening)
            .map_err(Refusal::Hardening)?;
        if launch.verbose {
            eprintln!("jaula: seatbelt: {SANDBOX_EXEC} -p with this profile:");
            eprint!("{}", launch.profile);
            eprintln!("jaula: TMPDIR: {}", launch.tmpdir.display());
            for step in steps {
                eprintln!("jaula: hardening: {step}");
            }
        }
        let mut cmd = Command::new(&launch.argv[0]);
        cmd.args(&launch.argv[1..]).env_clear().envs(launch.env);
        let start = |source| Refusal::Start {
            program: SANDBOX_EXEC.into(),
            source,
        };
        let Some(stage) = launch.proxy else {
            return Err(start(cmd.exec()).into());
        };
        // Held from before the spawn until the proxy's handlers are in place: a SIGTERM in
        // between must reach the cage, not kill this process and leave the cage running.
        let held = jaula_sandbox::child::HeldSignals::hold().map_err(start)?;
        held.unblock_in_child(&mut cmd);
        let child = cmd.spawn().map_err(start)?;
        let served = jaula_proxy::Served {
            listener: stage.listener,
            steered: Vec::new(),
            dns: Vec::new(),
        };
        let done =
            jaula_proxy::supervise(child, served, stage.proxy, jaula_proxy::to_child, || {
                held.release()
            })?;
        if !done.summary.is_empty() {
            eprintln!("{}", done.summary);
        }
        jaula_sandbox::exit::exit_like(done.status)
    }

    fn uncaged(&mut self, command: &[OsString]) -> Outcome {
        use std::os::unix::process::CommandExt;
        let source = std::process::Command::new(&command[0])
            .args(&command[1..])
            .exec();
        Err(Refusal::Command {
            program: command[0].clone(),
            source,
        }
        .into())
    }
}

#[cfg(test)]
#[path = "run_seatbelt_tests.rs"]
mod tests;
