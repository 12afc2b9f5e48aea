//! `jaula contract`: the config file's `[contract]` section handed to the contract commands.

use crate::args::PolicyArgs;
use crate::commands::contract::{run_with_config, ContractArgs};
use crate::error::CliError;
use crate::{context, Outcome};

pub fn run(args: &ContractArgs) -> Outcome {
    let section = match context::sources(&no_policy_flags(), None) {
        Ok(sources) => sources.contract,
        // No home to find a default config in: flags and JAULA_CONTRACT_* still work.
        Err(CliError::Policy(jaula_policy::PolicyError::NoHome)) => Default::default(),
        Err(e) => return Err(e),
    };
    run_with_config(args, &section)
}

fn no_policy_flags() -> PolicyArgs {
    PolicyArgs {
        repo: None,
        window: "window".to_string(),
        home: None,
        token_file: None,
        mounts: Default::default(),
        deny: Vec::new(),
        allow_write: Vec::new(),
        state_home: None,
        config: None,
        allow_unix_socket: Vec::new(),
        allow_unix_preset: Vec::new(),
        unprotect: Vec::new(),
        protect_path_dirs: false,
    }
}
