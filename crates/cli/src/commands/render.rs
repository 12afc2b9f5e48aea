//! `jaula render`: print a backend's artifact for the policy.

use std::io::Write;

use clap::{Args, ValueEnum};
use jaula_policy::Platform;
use jaula_sandbox::bwrap;

use crate::args::PolicyArgs;
use crate::{context, Outcome};

/// Print what a backend would enforce: the Seatbelt profile, or the bubblewrap argv.
#[derive(Args, Debug)]
pub struct RenderArgs {
    /// Which artifact.
    #[arg(value_enum)]
    pub backend: RenderBackend,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print JSON ({"profile": TEXT} or {"argv": [...]}).
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum RenderBackend {
    /// The macOS Seatbelt (SBPL) profile.
    Seatbelt,
    /// The Linux bubblewrap argv prefix, shell-quoted.
    Bwrap,
}

pub fn run(args: &RenderArgs) -> Outcome {
    match args.backend {
        RenderBackend::Seatbelt => {
            let sources = context::sources(&args.policy, Some(Platform::MacOs))?;
            let policy = context::resolve(&sources, &args.policy)?;
            let profile = jaula_sandbox::seatbelt::render_profile(&policy)?;
            if args.json {
                context::print_json(&serde_json::json!({ "profile": profile }))?;
            } else {
                std::io::stdout().write_all(profile.as_bytes())?;
            }
        }
        RenderBackend::Bwrap => {
            let sources = context::sources(&args.policy, Some(Platform::Linux))?;
            let policy = context::resolve(&sources, &args.policy)?;
            let argv =
                bwrap::render_argv(&policy, &bwrap::BwrapOptions::default(), &bwrap::RealDisk)?;
            if args.json {
                let argv = argv
                    .iter()
                    .map(|a| context::json_path(std::path::Path::new(a)))
                    .collect::<Result<Vec<_>, _>>()?;
                context::print_json(&serde_json::json!({ "argv": argv }))?;
            } else {
                let mut line = bwrap::shell_join(&argv);
                line.push(b'\n');
                std::io::stdout().write_all(&line)?;
            }
        }
    }
    Ok(0)
}
