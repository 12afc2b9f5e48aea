//! `jaula profile`: print the macOS Seatbelt profile for one window.

use clap::Args;
use jaula_policy::Platform;
use jaula_sandbox::seatbelt::{ProfileNetwork, ProfileOptions};

use crate::args::PolicyArgs;
use crate::commands::run_args::named;
use crate::error::{CliError, UsageError};
use crate::{context, Outcome, Report};
use jaula_policy::network::NetworkMode;

/// Print the Seatbelt (SBPL) profile for one window, for any host: the one `jaula run`
/// hands to `/usr/bin/sandbox-exec` on macOS for the same flags.
#[derive(Args, Debug)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The network mode to render: `host` (default), `none` (no IP destination) or
    /// `allow` (only the proxy's loopback port, given with --proxy-port).
    #[arg(long, value_name = "MODE", value_parser = named::<NetworkMode>(&NetworkMode::NAMES))]
    pub network: Option<NetworkMode>,
    /// With --network allow: the loopback port jaula's proxy listens on (`jaula run`
    /// picks one when it starts the proxy).
    #[arg(long, value_name = "PORT")]
    pub proxy_port: Option<u16>,
    /// Print {"profile": TEXT} instead of the bare profile.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ProfileArgs) -> Outcome {
    let network = profile_network(args.network, args.proxy_port)?;
    print(&args.policy, network, args.json)
}

/// `--network` and `--proxy-port` as the profile's network rules: `allow` needs the port,
/// and a port means nothing in the other modes.
pub fn profile_network(
    mode: Option<NetworkMode>,
    port: Option<u16>,
) -> Result<ProfileNetwork, CliError> {
    let mode = mode.unwrap_or_default();
    match (mode.through_proxy(), port) {
        (true, Some(0) | None) => Err(UsageError::ProxyPortNeeded.into()),
        (false, Some(_)) => Err(UsageError::ProxyPortWithoutAllow.into()),
        (_, port) => Ok(ProfileNetwork::for_mode(mode, port)),
    }
}

/// Resolve the macOS cage for these flags and render its profile.
pub fn render(policy_args: &PolicyArgs, network: ProfileNetwork) -> Result<String, CliError> {
    let sources = context::sources(policy_args, Some(Platform::MacOs))?;
    let policy = context::resolve(&sources, policy_args)?;
    let options = ProfileOptions { network };
    Ok(jaula_sandbox::seatbelt::render_profile_with(
        &policy, &options,
    )?)
}

/// Resolve the macOS cage for these flags and print its profile (also `render seatbelt`).
pub fn print(policy_args: &PolicyArgs, network: ProfileNetwork, json: bool) -> Outcome {
    let profile = render(policy_args, network)?;
    if json {
        return Report::json(&serde_json::json!({ "profile": profile }), 0);
    }
    Ok(Report::printed(profile, 0))
}
