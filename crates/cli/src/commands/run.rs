//! `jaula run`: run a command confined by the policy, with every layer this platform has.
//!
//! The arguments become a typed request (`cage_request`); the sandbox crate plans it and
//! starts the cage (`jaula_sandbox::cage`); this module says what the owner should know
//! around the launch and serves `--network allow`'s proxy. On macOS the same steps are
//! `run_seatbelt`'s, with a seam for its tests.

#[cfg(target_os = "linux")]
use jaula_policy::network::{NetworkMode, SettledNetwork};
#[cfg(target_os = "linux")]
use jaula_policy::{Platform, Sources};
#[cfg(target_os = "linux")]
use jaula_sandbox::cage::{self, Chosen, Started};
#[cfg(target_os = "linux")]
use jaula_sandbox::exit::exit_like;
#[cfg(target_os = "linux")]
use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::process::Command;

#[cfg(target_os = "linux")]
use crate::commands::availability::{DISABLED, ENABLE};
#[cfg(target_os = "linux")]
use crate::commands::cage_request::{self, Asked, Disabled};
use crate::commands::run_args::RunArgs;
#[cfg(target_os = "linux")]
use crate::commands::{backend_notice, network_notice, run_stage, tmp_notice};
#[cfg(target_os = "linux")]
use crate::error::{CliError, Refusal};
use crate::Outcome;

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

/// Arguments -> request -> the cage, started; the notices around it.
#[cfg(target_os = "linux")]
pub fn run(args: &RunArgs) -> Outcome {
    let cwd = std::env::current_dir().map_err(CliError::Cwd)?;
    let vars = std::env::vars_os().collect();
    let Asked {
        request,
        sources,
        network,
    } = match cage_request::ask(args, Platform::Linux, vars, cwd)? {
        Ok(asked) => asked,
        Err(Disabled) => return uncaged(args, DISABLED, ENABLE),
    };
    let mode = request.network.mode;
    say_network(args, &sources, &network);
    // The proxy reports on the protected paths once the cage has ended.
    let policy = mode.through_proxy().then(|| request.policy.clone());
    let prepared = match cage::prepare(request)? {
        Chosen::Cage(prepared) => prepared,
        Chosen::NoCage { reason, remedy } => return uncaged(args, &reason, &remedy),
    };
    // No silent downgrade: `auto` without the bubblewrap view says so, once, whatever mode.
    if let Some(line) = prepared
        .bwrap_unavailable()
        .and_then(backend_notice::landlock_alone)
    {
        eprintln!("{line}");
    }
    if let Some(e) = prepared.record_failed() {
        eprintln!("jaula: warning: cannot record this cage for jaula ps: {e}");
    }
    let proxy = match policy {
        Some(policy) => Some((cage_request::proxy_for(args, network)?, policy)),
        None => None,
    };
    match cage::start(prepared)? {
        // The socket gate's supervisor waits for the command and reports itself.
        Started::Here(plan) => run_stage::launch_here(&plan),
        Started::Ended { status, hidden_tmp } => {
            if let Some(line) = tmp_notice::after_exit(status, &hidden_tmp) {
                eprintln!("{line}");
            }
            leave_as(status, mode)
        }
        // The proxy lives in a process of its own, as long as the cage's processes do;
        // this one leaves with the command (`allow_proxy`).
        Started::Proxy(duty) => match proxy {
            Some((proxy, policy)) => crate::commands::allow_proxy::run(*duty, proxy, &policy),
            None => Err(CliError::UnaskedProxy),
        },
    }
}

/// The network line at start: the mode and its lists with `-v`, else the short notice,
/// unless `--quiet` or config `run.quiet` (the owner knows the mode).
#[cfg(target_os = "linux")]
fn say_network(args: &RunArgs, sources: &Sources, network: &SettledNetwork) {
    let (allowed, denied) = (network.rules.allow().len(), network.rules.deny().len());
    if args.verbose {
        eprintln!("jaula: network: {}", network.mode.summary(allowed, denied));
    } else if args.quiet || sources.run.quiet == Some(true) {
    } else if let Some(line) = network.mode.start_notice(allowed) {
        eprintln!("{line}");
    }
}

/// Leave as the stage left, after the `--network none` reminder when it failed.
#[cfg(target_os = "linux")]
fn leave_as(status: std::process::ExitStatus, mode: NetworkMode) -> Outcome {
    if let Some(note) = mode
        .loopback_only()
        .then(|| network_notice::after_none(status))
        .flatten()
    {
        eprintln!("{note}");
    }
    exit_like(status)
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
/// ([`jaula_policy::run_argv`]) into the arguments of [`cage_request::ask`].
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
        .map_err(|e| crate::error::UsageError::TenantCommandLine(e).into())
}
