//! `jaula contract` where contract mode does not exist (every system but Linux): it parses
//! whatever it is given and refuses with exit 126, saying why.

use std::ffi::OsString;

use clap::Args;

use crate::error::Refusal;
use crate::Outcome;

/// Contract mode: per-tenant uids, trees, hand-over and wipe (Linux only).
#[derive(Args, Debug)]
pub struct ContractArgs {
    /// The contract subcommand and its flags (refused on this system).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub rest: Vec<OsString>,
}

impl ContractArgs {
    /// Every contract subcommand is refused here, and every refusal exits 126.
    pub fn runs_a_command(&self) -> bool {
        true
    }
}

pub fn run(_args: &ContractArgs) -> Outcome {
    Err(Refusal::ContractModeNeedsLinux {
        os: std::env::consts::OS,
    }
    .into())
}
