//! `jaula run`'s arguments, and what they settle together with the config file: the
//! network mode and lists, the environment. Shared by the Linux launch (`run`), the macOS
//! one (`run_seatbelt`) and `profile` (the network modes), so none of those imports
//! another.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::PathBuf;

use clap::Args;
use jaula_policy::env::{scrub_env, EnvPattern, EnvRules};
use jaula_policy::network::{NetworkFlags, NetworkMode};
use jaula_policy::{BackendChoice, Sources};

use crate::access_token::TokenAgent;
use crate::args::PolicyArgs;
use crate::error::{CliError, UsageError};

/// What to do when the working directory `run` defaulted the repo to is unsafe to cage.
pub const RUN_ADVICE: &str = "cd into the repo, or pass --repo DIR";

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
    #[arg(long, value_name = "BACKEND", value_parser = named::<BackendChoice>(&BackendChoice::NAMES))]
    pub backend: Option<BackendChoice>,
    /// bwrap backend: give the cage its own PID namespace and /proc. The default; kept so
    /// older command lines still parse.
    #[arg(long, overrides_with = "no_pid_ns")]
    pub pid_ns: bool,
    /// bwrap backend: share the host's PID namespace and /proc, so host command lines are
    /// readable from the cage again (for agents that write their pid for host-side tools,
    /// or tools that inspect host processes; see docs/security.md).
    #[arg(long, overrides_with = "pid_ns")]
    pub no_pid_ns: bool,
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
    /// Hand AGENT the short-lived access token from its owner's login, read outside the
    /// cage, while the login file and its refresh token stay sealed (claude: the
    /// `accessToken` of ~/.claude/.credentials.json as CLAUDE_CODE_OAUTH_TOKEN; Linux).
    /// Refuses to start when the token is missing or expires within a minute.
    #[arg(long = "hand-access-token", value_name = "AGENT", value_enum)]
    pub hand_access_token: Vec<TokenAgent>,
    /// Run CMD unconfined (with a warning) when no cage can be built, instead of refusing.
    #[arg(long)]
    pub allow_uncaged: bool,
    /// Turn the gate off: every host unix socket the uid can reach (the tmux server,
    /// Docker, the session bus, key agents) becomes reachable from the cage again, unix
    /// datagram sockets work, and a protected path (git hooks and config, .envrc, ...)
    /// that a backend cannot keep read-only is only reported after the command. For a tool
    /// the gate breaks; prints a warning.
    #[arg(long)]
    pub no_socket_gate: bool,
    /// Print the layers in force (rights, scopes, filters) on stderr before exec.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// No network line at start (`jaula: network none: ...`; config `run.quiet = true`).
    /// Refusals, warnings and what the cage refused are still said.
    #[arg(short, long)]
    pub quiet: bool,
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
    #[command(flatten)]
    pub net: NetworkArgs,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// The network flags: `jaula run` takes them, and `jaula line` carries them into a
/// window's prefix as given (`run` checks them when the window starts).
#[derive(Args, Debug, Clone, Default)]
pub struct NetworkArgs {
    /// Network: `host` (default, unchanged), `none` (only the cage's own loopback) or
    /// `allow` (only jaula's proxy, which admits --allow-domain/--allow-preset names).
    /// Default: the config's `network.mode`, else host.
    #[arg(long, value_name = "MODE", value_parser = named::<NetworkMode>(&NetworkMode::NAMES))]
    pub network: Option<NetworkMode>,
    /// With --network allow: a host name or `*.suffix` pattern the proxy admits
    /// (repeatable; adds to the config's `network.allow_domain`).
    #[arg(long = "allow-domain", value_name = "NAME")]
    pub allow_domain: Vec<String>,
    /// With --network allow: a pattern refused even when allowed; wins over every allow
    /// (repeatable).
    #[arg(long = "deny-domain", value_name = "NAME")]
    pub deny_domain: Vec<String>,
    /// With --network allow: a built-in list to admit: model-apis, github, rust, python,
    /// javascript, go (repeatable).
    #[arg(long = "allow-preset", value_name = "NAME")]
    pub allow_preset: Vec<String>,
    /// With --network allow: a loopback, link-local or private address (or ADDR/PREFIX
    /// block) that names admitted by an exact --allow-domain entry may reach; refused by
    /// default (repeatable).
    #[arg(long = "allow-address", value_name = "ADDR[/PREFIX]")]
    pub allow_address: Vec<String>,
    /// Append every refused write, and every network decision of --network allow or none,
    /// to FILE as a JSON line, each refusal with the rule that refused it
    /// (`--network-log` is the older name).
    #[arg(long = "log", visible_alias = "network-log", value_name = "FILE")]
    pub network_log: Option<PathBuf>,
}

/// A clap parser for a choice the policy crate defines (`NAMES` for the help text and
/// the shell's completion, `FromStr` to read it): one enum for the flag, the config file
/// and the crates that act on it, instead of a copy per layer.
pub fn named<T>(names: &'static [&'static str]) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(names.iter().copied()).try_map(|s| s.parse::<T>())
}

/// The network flags as written, for the policy crate to settle over the config's
/// `[network]` ([`NetworkFlags::settle`]): nothing about a mode is decided here.
pub fn network_flags(args: &RunArgs) -> NetworkFlags {
    NetworkFlags {
        mode: args.net.network,
        allow_domains: args.net.allow_domain.clone(),
        deny_domains: args.net.deny_domain.clone(),
        presets: args.net.allow_preset.clone(),
        allow_addresses: args.net.allow_address.clone(),
        log: args.net.network_log.is_some(),
        socket_gate: !args.no_socket_gate,
    }
}

/// The command's environment: `vars` with the credential variables scrubbed, except the
/// variables that name one of the allowed host `sockets`.
pub fn scrubbed_env_from(
    args: &RunArgs,
    sources: &Sources,
    sockets: &[jaula_policy::AllowedSocket],
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<(OsString, OsString)>, CliError> {
    let pattern = |text: &String| {
        EnvPattern::parse(text).map_err(|source| UsageError::EnvPattern {
            text: text.clone(),
            source,
        })
    };
    let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
    let mut rules = EnvRules::new();
    // The ssh-agent preset is the owner's statement that the cage may use the agent; the
    // variable naming its socket is how every ssh client finds it.
    let keeps_agent = sources.spec.allowed_sockets.iter().any(|(_, source)| {
        *source == jaula_policy::SocketSource::Preset(jaula_policy::UnixPreset::SshAgent)
    });
    if keeps_agent {
        rules = rules.keep(pattern(&"SSH_AUTH_SOCK".to_owned())?);
    }
    // So is a socket allowed by path: the variable that names it (SSH_AUTH_SOCK, TMUX,
    // GPG_AGENT_INFO) is kept, as the preset keeps its own.
    for name in jaula_policy::sockets::variables_naming(vars.iter().cloned(), sockets) {
        rules = rules.keep(pattern(&name.to_owned())?);
    }
    // The config's patterns were checked as the file was read; the flags' are here.
    for p in &sources.env.keep {
        rules = rules.keep(p.clone());
    }
    for p in &args.keep_env {
        rules = rules.keep(pattern(p)?);
    }
    for p in &sources.env.scrub {
        rules = rules.scrub(p.clone());
    }
    for p in &args.scrub_env {
        rules = rules.scrub(pattern(p)?);
    }
    let scrubbed = scrub_env(vars, &rules);
    if args.verbose && !scrubbed.removed_names.is_empty() {
        let names: Vec<_> = scrubbed
            .removed_names
            .iter()
            .map(|n| n.to_string_lossy())
            .collect();
        eprintln!("jaula: scrubbed from the environment: {}", names.join(" "));
    }
    Ok(scrubbed.kept)
}
