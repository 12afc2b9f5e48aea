//! From flags and environment to a resolved policy: the one path every command takes.

use jaula_policy::{EnvVars, FileRule, FileRuleSource, Platform, Policy, Sources};

use crate::args::PolicyArgs;
use crate::error::{CliError, NotJson};

/// Gather the sources (defaults, config file, environment, flags) for `platform`.
pub fn sources(args: &PolicyArgs, platform: Option<Platform>) -> Result<Sources, CliError> {
    sources_from(&args.flags(platform))
}

/// Gather the sources for already-built flags. The running jaula binary is protected in
/// the cage it builds: replaced from inside, it would be the next cage; and so is what
/// this uid's user manager and session bus run from `/run/user/UID`.
pub fn sources_from(flags: &jaula_policy::CageFlags) -> Result<Sources, CliError> {
    sources_with(flags, &EnvVars::from_process())
}

/// [`sources_from`] with a given environment instead of this process's own.
pub fn sources_with(flags: &jaula_policy::CageFlags, env: &EnvVars) -> Result<Sources, CliError> {
    let cwd = std::env::current_dir().map_err(CliError::Cwd)?;
    let mut flags = flags.clone();
    if flags.launcher_exe.is_none() {
        flags.launcher_exe = std::env::current_exe().ok();
    }
    if flags.owner_uid.is_none() {
        flags.owner_uid = Some(rustix::process::getuid().as_raw());
    }
    Ok(Sources::gather(&flags, env, &cwd)?)
}

/// Resolve the spec, requiring `--repo` (exit 2 without it, as launchers expect), and print the
/// resolver's warnings on stderr.
pub fn resolve(sources: &Sources, args: &PolicyArgs) -> Result<Policy, CliError> {
    if args.repo.is_none() {
        return Err(CliError::RepoRequired);
    }
    let policy = sources.spec.resolve()?;
    for warning in policy.warnings() {
        eprintln!("jaula: {warning}");
    }
    Ok(policy)
}

/// A path as a JSON string, refusing bytes JSON cannot hold rather than mangling them.
pub fn json_path(path: &std::path::Path) -> Result<serde_json::Value, CliError> {
    path.to_str()
        .map(|s| serde_json::Value::String(s.to_string()))
        .ok_or_else(|| NotJson::Path(path.to_path_buf()).into())
}

/// The `jaula run` flags that resolve the very cage `policy` is, wherever that command
/// runs later (the prefix `line` prints): its resolved repo, home, state home and token,
/// plus the declared extras of `args`.
pub fn run_argv(policy: &Policy, args: &PolicyArgs) -> jaula_policy::run_argv::RunArgv {
    jaula_policy::run_argv::RunArgv {
        repo: Some(policy.repo().to_path_buf()),
        home: Some(policy.home().to_path_buf()),
        state_home: Some(policy.state_home().to_path_buf()),
        token_file: policy.file_rules().iter().find_map(|r| match r {
            FileRule::ReadableInSeal {
                path,
                source: FileRuleSource::WindowToken,
            } => Some(path.clone()),
            _ => None,
        }),
        mounts: args.mounts.clone(),
        config: args.config.clone(),
        deny: args.deny.clone(),
        allow_write: args.allow_write.clone(),
        allow_unix_socket: args.allow_unix_socket.clone(),
        allow_unix_preset: args.allow_unix_preset.clone(),
        unprotect: args.unprotect.clone(),
        protect_path_dirs: args.protect_path_dirs,
        ..Default::default()
    }
}
