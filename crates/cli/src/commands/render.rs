//! `jaula render`: print a backend's artifact for the policy.

use clap::{Args, ValueEnum};
use jaula_policy::Platform;
use jaula_sandbox::bwrap;

use crate::args::PolicyArgs;
use crate::commands::profile;
use crate::error::CliError;
use crate::{context, Outcome, Report};

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
    /// jaula's seccomp deny-list as an OCI/Docker seccomp profile (JSON), for a container
    /// runtime's Localhost profile; needs no policy flags.
    SeccompJson,
}

pub fn run(args: &RenderArgs) -> Outcome {
    match args.backend {
        RenderBackend::Seatbelt => profile::print(
            &args.policy,
            jaula_sandbox::seatbelt::ProfileNetwork::Host,
            args.json,
        ),
        RenderBackend::Bwrap => {
            let sources = context::sources(&args.policy, Some(Platform::Linux))?;
            let policy = context::resolve(&sources, &args.policy)?;
            let argv = bwrap::render_argv(
                &policy,
                &bwrap::BwrapOptions::default(),
                &jaula_policy::RealHostFs,
            )?;
            if args.json {
                let argv = argv
                    .iter()
                    .map(|a| context::json_path(std::path::Path::new(a)))
                    .collect::<Result<Vec<_>, _>>()?;
                return Report::json(&serde_json::json!({ "argv": argv }), 0);
            }
            let mut line = bwrap::shell_join(&argv);
            line.push(b'\n');
            Ok(Report::printed(line, 0))
        }
        RenderBackend::SeccompJson => {
            let profile = jaula_kube::seccomp_oci::native_profile().ok_or_else(|| {
                CliError::from(crate::error::UsageError::NoSeccompHere {
                    os: std::env::consts::OS,
                    arch: std::env::consts::ARCH,
                })
            })?;
            let text = jaula_kube::seccomp_oci::to_json(&profile)
                .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
            Ok(Report::printed(text, 0))
        }
    }
}
