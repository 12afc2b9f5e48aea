//! The CLI's errors, rendered once, plainly, by `main`, with the exit code each one means.

use std::ffi::OsString;
use std::path::PathBuf;

/// Exit status when jaula refuses to start the command (the shell's "cannot execute").
pub const REFUSED: i32 = 126;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad usage the parser could not catch: exit 2.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// A command that takes no working directory as its repo was given none: exit 2, said
    /// word for word as launchers match it (docs/compatibility.md), with no `jaula: `.
    #[error("--repo is required")]
    RepoRequired,
    /// A config file value jaula cannot use with the others: the file is not bad usage of
    /// the command line, so not exit 2.
    #[error(transparent)]
    Config(#[from] ConfigProblem),
    /// jaula will not start the command; the refusal knows its own exit code.
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Policy(#[from] jaula_policy::PolicyError),
    /// The repo was not given and the working directory it defaulted to is unsafe to cage
    /// (the home, `/`, ...): said with what to pass instead.
    #[error("{source}; {command} takes the working directory as the repo: {advice}")]
    UnsafeWorkingDir {
        source: jaula_policy::PolicyError,
        command: &'static str,
        advice: &'static str,
    },
    #[error(transparent)]
    Seatbelt(#[from] jaula_sandbox::seatbelt::SeatbeltError),
    #[error(transparent)]
    Bwrap(#[from] jaula_sandbox::bwrap::BwrapError),
    /// A backend could not render its artifact or answer for a path (`jaula explain`).
    #[error(transparent)]
    Backend(#[from] jaula_sandbox::backend::BackendError),
    /// A `jaula contract` command failed (contract mode is Linux only). Boxed: the
    /// contract errors are large, and every command returns this type.
    /// `jaula contract`: the library refused.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Contract(#[from] jaula_contract::ContractError),
    /// `jaula contract render`: the Kubernetes rendering refused.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Kube(#[from] jaula_kube::KubeError),
    /// `jaula contract run`: the cgroup descriptor could not be handed to the spawn.
    #[error("cannot pass the Contract's cgroup to its spawn (dup): {0}")]
    CgroupFd(std::io::Error),
    /// `jaula contract run`: there is no cage to start for the tenant (it is disabled).
    #[error("refusing to start the tenant cage: {reason}")]
    TenantCageDisabled {
        /// How the owner switched the cage off.
        reason: &'static str,
    },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the current directory: {0}")]
    Cwd(std::io::Error),
    /// `jaula stop` could not signal a cage's supervisor, or it did not end.
    #[error("cannot stop the cage of window {window}: {source}")]
    StopCage {
        window: String,
        source: std::io::Error,
    },
    /// `/proc/self/exe` did not answer: jaula names itself in the prefixes it prints and
    /// starts itself as its own stage.
    #[error("cannot find jaula's own binary: {0}")]
    OwnBinary(std::io::Error),
    /// `--json` asked for what JSON cannot hold.
    #[error(transparent)]
    NotJson(#[from] NotJson),
    /// `--network allow`: the proxy could not be configured or its log opened.
    #[error(transparent)]
    Proxy(#[from] jaula_proxy::ProxyError),
    /// `--network allow` on macOS: the proxy's loopback listener could not be bound.
    #[error("cannot bind the proxy: {0}")]
    ProxyBind(std::io::Error),
    /// `--network allow`: serving the proxy while the cage ran failed.
    #[error(transparent)]
    Supervise(#[from] jaula_proxy::SuperviseError),
    /// The network namespace, its hand-off channel or its inherited log failed.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Netns(#[from] jaula_sandbox::network::netns::NetnsError),
    /// The launch plan could not be sealed for a stage.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Plan(#[from] jaula_sandbox::launch_plan::PlanError),
    /// The stage that runs the plan (bubblewrap's view, or jaula's own stage) could not be
    /// prepared or started.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Start(#[from] jaula_sandbox::start::StartError),
    /// The cage could not be planned or started (`jaula_sandbox::cage`).
    #[error(transparent)]
    Cage(#[from] jaula_sandbox::cage::CageError),
    /// The sandbox crate handed back a proxy to serve for a launch that asked for none: a
    /// bug, refused rather than served with rules nobody gave.
    #[error("internal error: the cage asks for a proxy, but its network mode is not allow")]
    UnaskedProxy,
    #[error("cannot print: {0}")]
    Output(#[from] std::io::Error),
}

impl CliError {
    /// `self`, with what to do instead when it refuses a working directory that `command`
    /// took as the repo because `--repo` was not given (`defaulted`).
    pub fn for_defaulted_repo(
        self,
        defaulted: bool,
        command: &'static str,
        advice: &'static str,
    ) -> CliError {
        match self {
            CliError::Policy(source) if defaulted && source.is_unsafe_repo() => {
                CliError::UnsafeWorkingDir {
                    source,
                    command,
                    advice,
                }
            }
            other => other,
        }
    }

    /// The inspection and launcher commands (`line`, `profile`, `check`, `explain`,
    /// `render`, the contract commands other than `run`): 2 for usage, 1 otherwise, the
    /// statuses a tmux launcher already handles (docs/compatibility.md).
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) | CliError::RepoRequired => 2,
            CliError::Refused(r) => r.exit_code(),
            _ => 1,
        }
    }

    /// The commands that run something (`run`, `contract run`): 2 for usage, and 126 for
    /// every refusal to cage (an unsafe repo, a bad config, a failed launch), so a caller
    /// can tell "jaula refused" from any status of the command itself.
    pub fn refusal_code(&self) -> i32 {
        match self {
            CliError::Usage(_) | CliError::RepoRequired => 2,
            CliError::Refused(r) => r.exit_code(),
            _ => REFUSED,
        }
    }
}

/// One value of the config file that jaula cannot use together with the others.
#[derive(Debug, thiserror::Error)]
#[error("config {}: network: {problem}", file.display())]
pub struct ConfigProblem {
    /// The config file.
    pub file: PathBuf,
    /// What is wrong with its `[network]` lists.
    pub problem: jaula_policy::network::NetworkError,
}

/// What `--json` cannot print.
#[derive(Debug, thiserror::Error)]
pub enum NotJson {
    /// A path whose bytes are not UTF-8: refused rather than mangled.
    #[error("{} is not UTF-8 and cannot be printed as JSON", .0.display())]
    Path(PathBuf),
    /// `jaula line --json` of a prefix that is not UTF-8.
    #[error("the prefix is not UTF-8 and cannot be printed as JSON")]
    Prefix,
    /// The report did not encode.
    #[error("{0}")]
    Encode(serde_json::Error),
}

/// Flags that parse one by one but not together, or values clap cannot check: exit 2.
/// Each carries what it needs to say what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// `jaula profile --network allow` without the proxy's port.
    #[error("--network allow needs --proxy-port PORT (the proxy's loopback port, not 0)")]
    ProxyPortNeeded,
    /// `--proxy-port` in a mode with no proxy.
    #[error("--proxy-port only means something with --network allow")]
    ProxyPortWithoutAllow,
    /// `--keep-fd` of the descriptor jaula hands its plan on.
    #[error("--keep-fd {fd}: jaula hands its launch plan to its own stages on that descriptor")]
    PlanDescriptor {
        /// The descriptor.
        fd: std::os::fd::RawFd,
    },
    /// The network flags do not make one network with the config (a bad pattern or
    /// address, a list or `--log` the mode cannot use): the policy crate says which.
    #[error(transparent)]
    Network(#[from] jaula_policy::network::SettleError),
    /// A `--keep-env` or `--scrub-env` pattern that is not a name or `PREFIX_*`.
    #[error("bad environment pattern {text:?}: {source}")]
    EnvPattern {
        /// The pattern given.
        text: String,
        /// Why it is not one.
        source: jaula_policy::env::EnvPatternError,
    },
    /// The command line a Contract's cage is started with does not parse (a jaula bug).
    #[error("the tenant cage's command line: {0}")]
    TenantCommandLine(clap::Error),
    /// `jaula line` on macOS with `jaula run` options a `sandbox-exec` line cannot carry.
    #[error(
        "--network, the domain lists, --log and --hand-access-token are `jaula run` options; \
         a macOS line is sandbox-exec's and carries none of them"
    )]
    RunOptionsOnMacOsLine,
    /// `jaula render seccomp-json` where no seccomp filter exists.
    #[error("no seccomp filter exists for {os}/{arch}")]
    NoSeccompHere {
        /// This system.
        os: &'static str,
        /// This architecture.
        arch: &'static str,
    },
}

/// Why jaula did not start the command, and the exit status that says so: 126, except
/// where the shell's own convention says 127 (the command was not found).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// No cage can be built here (or it is disabled) and `--allow-uncaged` was not given.
    /// What would build one comes first; running with no cage at all is named last.
    #[error(
        "refusing to run uncaged: {reason}{}; --allow-uncaged runs the command with no cage \
         at all",
        if .remedy.is_empty() { String::new() } else { format!("; to cage it: {}", .remedy) }
    )]
    Uncaged { reason: String, remedy: String },
    /// The cage's own `/tmp` (bubblewrap's view) or `TMPDIR` (Seatbelt) cannot be made.
    #[error("refusing to run: cannot make the cage's private {what}: {reason}")]
    PrivateTmp { what: &'static str, reason: String },
    /// A flag whose layer only Linux has, given on macOS: refused, never ignored.
    #[error(
        "refusing to run: {flag} has no macOS meaning ({why}); on macOS jaula runs the \
         command under Seatbelt ({exec})",
        exec = jaula_sandbox::cage::macos::SANDBOX_EXEC
    )]
    LinuxOnlyFlag {
        flag: &'static str,
        why: &'static str,
    },
    /// `jaula run` on a system jaula has no cage for.
    #[error("refusing to run: no cage exists for {os} (Linux and macOS only)")]
    NoCageForSystem { os: &'static str },
    /// `jaula contract` off Linux.
    #[error(
        "refusing to run: contract mode needs Linux (a tenant's own uid, its 0700 tree \
         handed over with O_PATH and AT_EMPTY_PATH, cgroup limits); it has no sound {os} \
         design yet (docs/security.md, \"Linux and macOS\")"
    )]
    ContractModeNeedsLinux { os: &'static str },
    /// `--hand-access-token`: the agent's login gives no token worth handing in.
    #[error("refusing to run: --hand-access-token: {0}")]
    AccessToken(#[from] crate::access_token::TokenError),
    /// `jaula stage` found no usable launch plan on its descriptor.
    #[cfg(target_os = "linux")]
    #[error("refusing to run: {0}")]
    NoPlan(jaula_sandbox::launch_plan::PlanError),
    /// `jaula stage`: the inherited `--log` file cannot be taken.
    #[cfg(target_os = "linux")]
    #[error("refusing to run: {0}")]
    NoneLog(jaula_sandbox::network::netns::NetnsError),
    /// The launch sequence stopped before the command ran (its own exit code: 127 when
    /// the command was not found).
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Launch(#[from] jaula_sandbox::launch::LaunchError),
    /// Process hardening before `sandbox-exec` failed (macOS).
    #[error("refusing to run: {0}")]
    Hardening(jaula_sandbox::seatbelt::process::HardeningError),
    /// What jaula starts around the command (bubblewrap, its own stage, `sandbox-exec`)
    /// could not be started: 126 whatever the cause, the command itself was not looked at.
    #[error("cannot execute {}: {source}", .program.to_string_lossy())]
    Start {
        program: OsString,
        source: std::io::Error,
    },
    /// `--allow-uncaged`: the command itself could not be executed (127 when not found).
    #[error("cannot execute {}: {source}", .program.to_string_lossy())]
    Command {
        program: OsString,
        source: std::io::Error,
    },
}

impl Refusal {
    pub fn exit_code(&self) -> i32 {
        match self {
            Refusal::Command { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            #[cfg(target_os = "linux")]
            Refusal::Launch(e) => e.exit_code(),
            _ => REFUSED,
        }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
