//! `jaula run` under Seatbelt (macOS): the command runs under
//! `/usr/bin/sandbox-exec -p PROFILE`, with the profile `jaula profile` prints for the same
//! flags.
//!
//! The arguments become the same typed request as on Linux (`cage_request`), and the
//! sandbox crate plans it (`jaula_sandbox::cage::macos`): that part is platform-neutral,
//! so it runs and is tested on the Linux machines that build jaula. An [`Executor`] takes
//! the last step. The one production executor (macOS only) starts the cage through
//! `jaula_sandbox::cage`, and under `--network allow` serves the proxy on the loopback
//! port the profile names until the command exits. The tests' executor records.

use std::ffi::OsString;
use std::path::PathBuf;

use jaula_policy::{BackendChoice, Platform};
use jaula_sandbox::cage::macos::{self, Prepared, SeatbeltLaunchError};
use jaula_sandbox::cage::Chosen;

use crate::commands::cage_request::{self, Asked, Disabled};
use crate::commands::run_args::RunArgs;
use crate::error::{CliError, Refusal};
use crate::Outcome;

/// The last step of the launch. Returns only when it could not run the command (or, with a
/// proxy, with the command's exit status).
pub trait Executor {
    /// Start `prepared`; `proxy` under `--network allow`, to serve on its listener.
    fn launch(&mut self, prepared: Prepared, proxy: Option<jaula_proxy::Proxy>) -> Outcome;
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
            sandbox_exec: std::path::Path::new(macos::SANDBOX_EXEC).exists(),
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
    let asked = cage_request::ask(
        args,
        Platform::MacOs,
        inputs.env.clone(),
        inputs.cwd.clone(),
    )?;
    let (reason, remedy) = match asked {
        Ok(Asked {
            request, network, ..
        }) => match macos::prepare(request, inputs.sandbox_exec).map_err(refusal)? {
            Chosen::Cage(prepared) => {
                let proxy = match network.mode.through_proxy() {
                    true => Some(cage_request::proxy_for(args, network)?),
                    false => None,
                };
                return executor.launch(prepared, proxy);
            }
            Chosen::NoCage { reason, remedy } => (reason, remedy),
        },
        Err(Disabled) => (
            crate::commands::availability::DISABLED.to_owned(),
            crate::commands::availability::ENABLE.to_owned(),
        ),
    };
    // As on Linux: no cage means exit 126, unless the user asked to run anyway.
    if args.allow_uncaged {
        eprintln!("jaula: WARNING: running UNCAGED: {reason}");
        return executor.uncaged(&args.command);
    }
    Err(Refusal::Uncaged { reason, remedy }.into())
}

/// The Seatbelt launch's failures, as the refusals `jaula run` reports (exit 126).
fn refusal(e: SeatbeltLaunchError) -> CliError {
    match e {
        SeatbeltLaunchError::PrivateTmp(reason) => Refusal::PrivateTmp {
            what: "temporary directory",
            reason,
        }
        .into(),
        other => CliError::Cage(other.into()),
    }
}

/// Flags whose layer is a Linux one: refused with what to do instead, never ignored.
fn linux_only_flag(args: &RunArgs) -> Option<Refusal> {
    let linux = |flag, why| Some(Refusal::LinuxOnlyFlag { flag, why });
    match args.backend {
        Some(BackendChoice::Landlock) => {
            return linux("--backend landlock", "Landlock is a Linux LSM")
        }
        Some(BackendChoice::Bwrap) => {
            return linux("--backend bwrap", "bubblewrap needs Linux namespaces")
        }
        Some(BackendChoice::Auto) | None => {}
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

/// The real last step: start the cage (harden this process, then exec `sandbox-exec`, or
/// spawn it and serve the proxy until it exits).
#[cfg(target_os = "macos")]
struct SandboxExec;

#[cfg(target_os = "macos")]
impl Executor for SandboxExec {
    fn launch(&mut self, prepared: Prepared, proxy: Option<jaula_proxy::Proxy>) -> Outcome {
        use jaula_sandbox::cage::Started;
        let duty = match jaula_sandbox::cage::start(prepared)? {
            Started::Proxy(duty) => *duty,
            Started::Ended { status, .. } => jaula_sandbox::exit::exit_like(status),
        };
        let Some(proxy) = proxy else {
            return Err(CliError::UnaskedProxy);
        };
        let served = jaula_proxy::Served {
            listener: duty.listener,
            steered: Vec::new(),
            dns: Vec::new(),
        };
        let held = duty.held;
        let done =
            jaula_proxy::supervise(duty.child, served, proxy, jaula_proxy::to_child, || {
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
