//! `jaula line`: the launch prefix one window's shell command is prefixed with.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use jaula_policy::{Platform, Policy, PolicySpec};
use jaula_sandbox::bwrap;

use crate::access_token::TokenAgent;
use crate::args::PolicyArgs;
use crate::commands::availability::{availability, SANDBOX_EXEC};
use crate::commands::run_args::NetworkArgs;
use crate::error::CliError;
use crate::{context, Outcome, Report};
use jaula_policy::network::NetworkMode;

/// Print the launch prefix for one window: `jaula run [flags] -- ` on Linux (bubblewrap's
/// view plus Landlock, seccomp and hardening, or Landlock alone where user namespaces do
/// not work; with --no-pid-ns, so a pid the window writes down names it on the host),
/// `sandbox-exec -f PROFILE` on macOS, or nothing when no cage is available here or
/// CITY_CAGE=0 (the window then launches uncaged, as before the cage existed).
#[derive(Args, Debug)]
pub struct LineArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub launch: LineLaunchArgs,
    /// Print {"available": BOOL, "prefix": TEXT} instead of the bare prefix.
    #[arg(long)]
    pub json: bool,
}

/// The `jaula run` options a window needs beyond the policy, carried into the prefix as
/// given (`run` checks them when the window starts, as it checks its own flags). Linux
/// only: the macOS prefix is `sandbox-exec`, which has neither.
#[derive(Args, Debug, Clone, Default)]
pub struct LineLaunchArgs {
    #[command(flatten)]
    pub net: NetworkArgs,
    /// Hand AGENT its short-lived access token in this window (as `jaula run
    /// --hand-access-token`; give it only on the line of the window that runs AGENT).
    #[arg(long = "hand-access-token", value_name = "AGENT", value_enum)]
    pub hand_access_token: Vec<TokenAgent>,
}

impl LineLaunchArgs {
    /// Whether any option was given: the macOS prefix cannot carry one.
    fn any(&self) -> bool {
        let net = &self.net;
        net.network.is_some()
            || !net.allow_domain.is_empty()
            || !net.deny_domain.is_empty()
            || !net.allow_preset.is_empty()
            || !net.allow_address.is_empty()
            || net.network_log.is_some()
            || !self.hand_access_token.is_empty()
    }
}

pub fn run(args: &LineArgs) -> Outcome {
    let platform = Platform::host();
    let sources = context::sources(&args.policy, Some(platform))?;
    let availability = availability(&sources);
    // No cage available means an empty prefix, before --repo is looked at: the launcher
    // then starts the window as it always did (docs/compatibility.md).
    let prefix: Vec<u8> = if !availability.available {
        Vec::new()
    } else {
        let policy = context::resolve(&sources, &args.policy)?;
        match platform {
            Platform::MacOs if args.launch.any() => {
                return Err(crate::error::UsageError::RunOptionsOnMacOsLine.into())
            }
            Platform::MacOs => {
                let path = write_profile(&policy, &args.policy.window)?;
                let argv = [SANDBOX_EXEC.into(), "-f".into(), path.into_os_string()];
                let mut line = bwrap::shell_join(&argv);
                line.push(b' ');
                line
            }
            _ => {
                let mut line = bwrap::shell_join(&run_prefix(&policy, &sources.spec, args)?);
                line.push(b' ');
                line
            }
        }
    };
    if args.json {
        let text =
            String::from_utf8(prefix).map_err(|_| CliError::from(crate::error::NotJson::Prefix))?;
        return Report::json(
            &serde_json::json!({
                "available": availability.available,
                "reason": availability.reason,
                "prefix": text,
            }),
            0,
        );
    }
    Ok(Report::printed(prefix, 0))
}

/// `jaula run` with this window's resolved policy flags and `--no-pid-ns`, ending in `--`:
/// the launcher appends the command, and `run` applies every layer this kernel has when it
/// starts.
fn run_prefix(
    policy: &Policy,
    spec: &PolicySpec,
    line: &LineArgs,
) -> Result<Vec<OsString>, CliError> {
    let args = &line.policy;
    let me = std::env::current_exe().map_err(CliError::OwnBinary)?;
    // Every source's extras are baked in (config, environment and flags, already merged),
    // so the prefix means the same cage whatever environment the launcher runs it in.
    let baked = PolicyArgs {
        deny: spec.extra_sealed.clone(),
        allow_write: spec.extra_writable.clone(),
        ..args.clone()
    };
    let mut run = context::run_argv(policy, &baked);
    // The window names the cage's private /tmp in the bwrap view, so each window finds its
    // own files again.
    run.window = (args.window != "window").then(|| args.window.clone());
    // No PID namespace, as under the seed's cage: a window's runtime gateway writes its own
    // pid into <runtime>/gateways/<actor>.pid and a host-side tool signals that pid later;
    // inside a namespace it would be namespace-local and name an unrelated host process.
    // The price is the host's /proc: other host processes' command lines are readable from
    // the cage, as they always are under --backend landlock. It does not give the tmux
    // server back: that is the environment scrub's (no --keep-env, so TMUX and TMUX_PANE
    // stay scrubbed) and the private /tmp's, and neither changes here.
    run.no_pid_ns = true;
    let launch = &line.launch;
    run.network = launch.net.network.map(NetworkMode::name);
    run.allow_domain = launch.net.allow_domain.clone();
    run.deny_domain = launch.net.deny_domain.clone();
    run.allow_preset = launch.net.allow_preset.clone();
    run.allow_address = launch.net.allow_address.clone();
    run.network_log = launch.net.network_log.clone();
    run.hand_access_token = launch.hand_access_token.iter().map(|a| a.name()).collect();
    Ok(run.argv(me, Vec::<OsString>::new()))
}

/// Write the window's profile under the state home's cage directory, mode 0600, atomically:
/// a temp file renamed over the old one, so a planted symlink is replaced, never followed,
/// and a crash never leaves half a profile.
fn write_profile(policy: &Policy, window: &str) -> Result<PathBuf, CliError> {
    use std::os::unix::fs::DirBuilderExt;
    // The profile `jaula profile` prints for the same flags: host network (a launcher's line
    // has no proxy).
    let profile = jaula_sandbox::seatbelt::render_profile(policy)?;
    let dir = policy
        .state_home()
        .join(jaula_policy::defaults::CAGE_PROFILE_DIR);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CliError::Write { path, source }
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(io(&dir))?;
    let target = dir.join(format!(
        "{}.sb",
        jaula_sandbox::window_tmp::sanitize_window(window)
    ));
    let mut tmp = tempfile::Builder::new()
        .prefix(".profile-")
        .tempfile_in(&dir)
        .map_err(io(&dir))?;
    tmp.write_all(profile.as_bytes()).map_err(io(tmp.path()))?;
    tmp.as_file().sync_all().map_err(io(tmp.path()))?;
    tmp.persist(&target).map_err(|e| CliError::Write {
        path: target.clone(),
        source: e.error,
    })?;
    Ok(target)
}

#[cfg(test)]
#[path = "line_tests.rs"]
mod tests;
