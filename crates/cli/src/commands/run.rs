//! `jaula run`: run a command confined by the policy, with every layer this kernel has.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::process::Command;

use clap::{Args, ValueEnum};
use jaula_policy::{CageProfile, Platform, Policy, Sources};
use jaula_sandbox::bwrap;
use jaula_sandbox::hardening::env::{scrub_env, EnvPattern, EnvRules};
use jaula_sandbox::hardening::HardeningOptions;
use jaula_sandbox::landlock::{self, Floor, PlanMode, RealFs};
use jaula_sandbox::launch::{
    confine_and_exec, enter_cgroup, set_resource_limits, Confinement, ResourceLimits,
};

use crate::args::PolicyArgs;
use crate::error::CliError;
use crate::{context, Outcome};

/// Exit status when jaula refuses to start the command (the shell's "cannot execute").
pub const REFUSED: i32 = 126;

/// Run CMD confined: writes only to the working set, credentials sealed, seccomp and
/// process hardening applied, credential environment variables scrubbed.
///
/// Backends: `landlock` confines jaula itself (Landlock + seccomp + hardening, no privilege,
/// no external binary) and execs CMD in its place; `bwrap` builds bubblewrap's mount view
/// (which also hides the names of sealed entries) and applies the same layers inside it;
/// `auto` takes bwrap where user namespaces work, else landlock. If no cage can be built,
/// jaula refuses (exit 126) unless --allow-uncaged is given.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Which enforcement to use (default: the config's `run.backend`, else auto).
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// bwrap backend: give the cage its own PID namespace and /proc (breaks host-side pid
    /// files that agents write; see docs/security.md).
    #[arg(long)]
    pub pid_ns: bool,
    /// Pass this inherited file descriptor through to CMD (repeatable); all others above 2
    /// are closed at exec.
    #[arg(long = "keep-fd", value_name = "FD")]
    pub keep_fd: Vec<RawFd>,
    /// Keep a variable the default scrub would remove (name or PREFIX_* pattern; repeatable).
    #[arg(long = "keep-env", value_name = "PATTERN")]
    pub keep_env: Vec<String>,
    /// Scrub one more variable (name or PREFIX_* pattern; repeatable).
    #[arg(long = "scrub-env", value_name = "PATTERN")]
    pub scrub_env: Vec<String>,
    /// Run CMD unconfined (with a warning) when no cage can be built, instead of refusing.
    #[arg(long)]
    pub allow_uncaged: bool,
    /// Print the layers in force (rights, scopes, filters) on stderr before exec.
    #[arg(short, long)]
    pub verbose: bool,
    /// Start from a tenant's writable set (only the repo, /dev and --allow-write paths; no
    /// home caches, no shared /tmp), as `jaula contract run` does.
    #[arg(long)]
    pub tenant: bool,
    /// Set RLIMIT_NPROC (soft and hard) before confining.
    #[arg(long, value_name = "N")]
    pub max_procs: Option<u64>,
    /// Set RLIMIT_DATA in bytes (soft and hard) before confining (not RLIMIT_AS: V8
    /// reserves gigabytes of address space at start-up).
    #[arg(long, value_name = "BYTES")]
    pub max_data: Option<u64>,
    /// Internal (`jaula contract run`): move into the cgroup whose `cgroup.procs` is open
    /// on this descriptor before confining.
    #[arg(long, hide = true, value_name = "FD")]
    pub cgroup_fd: Option<RawFd>,
    /// Internal: jaula's own stage inside the bubblewrap view.
    #[arg(long, hide = true)]
    pub inner_stage: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Auto,
    Landlock,
    Bwrap,
}

pub fn run(args: &RunArgs) -> Outcome {
    let mut policy_args = args.policy.clone();
    if policy_args.repo.is_none() {
        policy_args.repo = Some(std::env::current_dir().map_err(CliError::Cwd)?);
    }
    let mut flags = policy_args.flags(Some(Platform::Linux));
    if args.tenant {
        flags.profile = CageProfile::Contract;
    }
    let sources = context::sources_from(&flags)?;
    if !sources.enabled {
        return uncaged(
            args,
            "the cage is disabled (CITY_CAGE=0 or config cage.enabled = false)",
        );
    }
    let policy = context::resolve(&sources, &policy_args)?;
    let env = scrubbed_env(args, &sources)?;
    let limits = ResourceLimits {
        max_processes: args.max_procs,
        max_data_bytes: args.max_data,
    };
    if let Err(e) = set_resource_limits(&limits) {
        eprintln!("jaula: {e}");
        return Ok(REFUSED);
    }
    if let Some(fd) = args.cgroup_fd {
        if let Err(e) = enter_cgroup(fd) {
            eprintln!("jaula: cannot enter the contract's cgroup: {e}");
            return Ok(REFUSED);
        }
    }
    let backend = match args.backend {
        Some(b) => b,
        None => configured_backend(&sources)?,
    };
    if args.inner_stage {
        return confine(args, &policy, env, PlanMode::BwrapView);
    }
    let landlock_ok = landlock::probe().floor_met;
    let bwrap_probe = || bwrap::probe(sources.bwrap, &bwrap_options(args));
    match backend {
        Backend::Landlock if landlock_ok => confine(args, &policy, env, PlanMode::Native),
        Backend::Landlock => uncaged(args, &landlock_missing()),
        Backend::Bwrap | Backend::Auto => match bwrap_probe() {
            a if a.is_available() => exec_bwrap(args, &policy_args, &policy, env, &a),
            a if backend == Backend::Auto && landlock_ok => {
                if args.verbose {
                    eprintln!("jaula: bwrap unavailable ({}); using landlock", a.reason());
                }
                confine(args, &policy, env, PlanMode::Native)
            }
            a if backend == Backend::Auto => {
                uncaged(args, &format!("{}; and {}", a.reason(), landlock_missing()))
            }
            a => uncaged(args, &format!("bwrap backend: {}", a.reason())),
        },
    }
}

fn landlock_missing() -> String {
    format!("landlock: {}", landlock::probe().kernel)
}

fn configured_backend(sources: &Sources) -> Result<Backend, CliError> {
    match sources.run.backend.as_deref() {
        None => Ok(Backend::Auto),
        Some(name) => Backend::from_str(name, true).map_err(|_| {
            CliError::Usage(format!(
                "config {}: run.backend = {name:?} is not one of auto, landlock, bwrap",
                sources.config_path.display()
            ))
        }),
    }
}

fn bwrap_options(args: &RunArgs) -> bwrap::BwrapOptions {
    bwrap::BwrapOptions {
        proc_fs: args.pid_ns,
        ..bwrap::BwrapOptions::default()
    }
}

/// The environment CMD gets: this process's, less the credential variables.
fn scrubbed_env(args: &RunArgs, sources: &Sources) -> Result<Vec<(OsString, OsString)>, CliError> {
    let pattern = |text: &String| {
        EnvPattern::parse(text)
            .map_err(|e| CliError::Usage(format!("bad environment pattern {text:?}: {e}")))
    };
    let mut rules = EnvRules::new();
    for p in sources.env.keep.iter().chain(&args.keep_env) {
        rules = rules.keep(pattern(p)?);
    }
    for p in sources.env.scrub.iter().chain(&args.scrub_env) {
        rules = rules.scrub(pattern(p)?);
    }
    let scrubbed = scrub_env(std::env::vars_os(), &rules);
    if args.verbose && !args.inner_stage && !scrubbed.removed_names.is_empty() {
        let names: Vec<_> = scrubbed
            .removed_names
            .iter()
            .map(|n| n.to_string_lossy())
            .collect();
        eprintln!("jaula: scrubbed from the environment: {}", names.join(" "));
    }
    Ok(scrubbed.kept)
}

fn command(args: &RunArgs, env: Vec<(OsString, OsString)>) -> Command {
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]).env_clear().envs(env);
    cmd
}

/// Landlock + seccomp + hardening on this process, then exec CMD in its place.
fn confine(
    args: &RunArgs,
    policy: &Policy,
    env: Vec<(OsString, OsString)>,
    mode: PlanMode,
) -> Outcome {
    let plan = match landlock::plan(policy, mode, &RealFs) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("jaula: refusing to run: the landlock plan failed: {e}");
            return Ok(REFUSED);
        }
    };
    let support = landlock::probe();
    // Inside bwrap's view the mount namespace already seals; a kernel without Landlock
    // there is reported, not refused. Natively Landlock is the cage: refuse without it.
    let landlock = if support.floor_met {
        Some((&plan, Floor::FsV1))
    } else if mode == PlanMode::BwrapView {
        eprintln!(
            "jaula: warning: {}: the bwrap view is the only filesystem layer",
            landlock_missing()
        );
        None
    } else {
        return uncaged(args, &landlock_missing());
    };
    let mut hardening = HardeningOptions::new();
    for fd in &args.keep_fd {
        hardening = hardening.keep_fd(*fd);
    }
    let confinement = Confinement {
        hardening,
        landlock,
        seccomp: true,
    };
    let verbose = args.verbose;
    let backend = if mode == PlanMode::Native {
        "landlock"
    } else {
        "bwrap (inner stage)"
    };
    let err = confine_and_exec(&mut command(args, env), &confinement, |report| {
        if verbose {
            eprintln!("jaula: backend {backend}; layers in force:\n{report}");
        }
    });
    eprintln!("jaula: {err}");
    Ok(err.exit_code())
}

/// Exec bubblewrap with the rendered view and jaula's own inner stage inside it.
fn exec_bwrap(
    args: &RunArgs,
    policy_args: &PolicyArgs,
    policy: &Policy,
    env: Vec<(OsString, OsString)>,
    availability: &bwrap::Availability,
) -> Outcome {
    context::ensure_protected_dirs(policy)?;
    let mut argv = bwrap::render_argv(policy, &bwrap_options(args), &bwrap::RealDisk)?;
    if let Some(program) = availability.program() {
        argv[0] = program.as_os_str().to_os_string();
    }
    let cwd = std::env::current_dir().map_err(CliError::Cwd)?;
    argv.extend(["--chdir".into(), cwd.into_os_string()]);
    let me = std::env::current_exe()
        .map_err(|e| CliError::Launch(format!("cannot find jaula's own binary: {e}")))?;
    argv.extend([
        "--".into(),
        me.into_os_string(),
        "run".into(),
        "--inner-stage".into(),
    ]);
    argv.extend(inner_stage_args(args, policy_args, policy));
    argv.push("--".into());
    argv.extend(args.command.iter().cloned());
    if args.verbose {
        eprintln!(
            "jaula: backend bwrap: {}",
            String::from_utf8_lossy(&bwrap::shell_join(&argv))
        );
    }
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).env_clear().envs(env);
    let err = std::os::unix::process::CommandExt::exec(&mut cmd);
    eprintln!("jaula: cannot execute {}: {err}", argv[0].to_string_lossy());
    Ok(REFUSED)
}

/// The inner stage re-resolves the same policy inside the view: the outer stage's resolved
/// paths are passed explicitly so both stages agree whatever the environment says.
fn inner_stage_args(args: &RunArgs, policy_args: &PolicyArgs, policy: &Policy) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut flag = |name: &str, value: OsString| {
        out.push(name.into());
        out.push(value);
    };
    flag("--backend", "bwrap".into());
    flag("--repo", policy.repo().into());
    flag("--home", policy.home().into());
    flag("--state-home", policy.state_home().into());
    if let Some(t) = policy.token_file() {
        flag("--token-file", t.into());
    }
    flag("--mounts", policy_args.mounts.clone());
    if let Some(c) = &policy_args.config {
        flag("--config", c.clone().into());
    }
    for d in &policy_args.deny {
        flag("--deny", d.clone().into());
    }
    for w in &policy_args.allow_write {
        flag("--allow-write", w.clone().into());
    }
    for fd in &args.keep_fd {
        flag("--keep-fd", fd.to_string().into());
    }
    for k in &args.keep_env {
        flag("--keep-env", k.into());
    }
    for s in &args.scrub_env {
        flag("--scrub-env", s.into());
    }
    if args.verbose {
        out.push("--verbose".into());
    }
    if args.tenant {
        out.push("--tenant".into());
    }
    out
}

/// No cage: refuse (exit 126) with the reason, unless the user asked to run anyway.
fn uncaged(args: &RunArgs, reason: &str) -> Outcome {
    if !args.allow_uncaged {
        eprintln!("jaula: refusing to run uncaged: {reason} (pass --allow-uncaged to run anyway)");
        return Ok(REFUSED);
    }
    eprintln!("jaula: WARNING: running UNCAGED: {reason}");
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    let err = std::os::unix::process::CommandExt::exec(&mut cmd);
    eprintln!(
        "jaula: cannot execute {}: {err}",
        args.command[0].to_string_lossy()
    );
    Ok(if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        REFUSED
    })
}
