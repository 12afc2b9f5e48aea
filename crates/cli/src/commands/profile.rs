//! `jaula profile`: print the macOS Seatbelt profile for one window.

use std::io::Write;

use clap::Args;
use jaula_policy::Platform;

use crate::args::PolicyArgs;
use crate::{context, Outcome};

/// Print the Seatbelt (SBPL) profile for one window, for any host.
#[derive(Args, Debug)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print {"profile": TEXT} instead of the bare profile.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ProfileArgs) -> Outcome {
    print(&args.policy, args.json)
}

/// Resolve the macOS cage for these flags and print its profile (also `render seatbelt`).
pub fn print(policy_args: &PolicyArgs, json: bool) -> Outcome {
    let sources = context::sources(policy_args, Some(Platform::MacOs))?;
    let policy = context::resolve(&sources, policy_args)?;
    let profile = jaula_sandbox::seatbelt::render_profile(&policy)?;
    if json {
        context::print_json(&serde_json::json!({ "profile": profile }))?;
    } else {
        std::io::stdout().write_all(profile.as_bytes())?;
    }
    Ok(0)
}
