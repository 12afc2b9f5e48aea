//! `jaula check`: can this machine cage a window, and with what.

use std::path::Path;

use clap::Args;
use jaula_policy::sources::BwrapHint;
use jaula_policy::{Platform, Sources};
use jaula_sandbox::{bwrap, landlock};

use crate::args::PolicyArgs;
use crate::commands::availability::{availability, Availability, SANDBOX_EXEC};
use crate::commands::{config_check, profile};
use crate::{context, Outcome, Report};

/// Report whether a cage is available on this machine; exit 0 when it is, 1 when not.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print {"available": BOOL, "reason": TEXT, ...} instead of one line.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &CheckArgs) -> Outcome {
    let sources = context::sources(&args.policy, None)?;
    let mut availability = availability(&sources);
    // `jaula run` refuses a config it cannot use, so with one no cage is available.
    let problems: Vec<String> = config_check::problems(&sources)
        .iter()
        .map(ToString::to_string)
        .collect();
    if let (true, Some(first)) = (availability.available, problems.first()) {
        availability = Availability {
            available: false,
            reason: format!("jaula run refuses the config: {first}"),
        };
    }
    // Likewise a repo it refuses (the home, `/`, a sealed root's neighbour): `check --repo`
    // answers for that repo's cage. Without `--repo` no repo is judged (a launcher calls
    // `check` from wherever it stands).
    if let (true, Some(_)) = (availability.available, &args.policy.repo) {
        if let Err(e) = sources.spec.resolve() {
            availability = Availability {
                available: false,
                reason: format!("jaula run refuses the repo: {e}"),
            };
        }
    }
    let layers = Layers::probe(&sources);
    let seatbelt = (Platform::host() == Platform::MacOs && availability.available)
        .then(|| SeatbeltCheck::probe(&args.policy));
    // `jaula run` refuses without its socket gate, so a cage is only available with one.
    if Platform::host() == Platform::Linux {
        if let (true, Err(reason)) = (availability.available, &layers.socket_gate) {
            availability = Availability {
                available: false,
                reason: format!("socket gate: {reason}"),
            };
        }
    }
    // On macOS the cage is sandbox-exec: present is not enough, it must run a profile.
    if let Some(Err(reason)) = seatbelt.as_ref().map(|s| &s.trivial) {
        availability = Availability {
            available: false,
            reason: format!("{SANDBOX_EXEC} does not run a trivial profile: {reason}"),
        };
    }
    let code = if availability.available { 0 } else { 1 };
    let found = Found {
        availability,
        sources: &sources,
        problems: &problems,
        layers: &layers,
        seatbelt: seatbelt.as_ref(),
    };
    if args.json {
        return Report::json(&as_json(&found), code);
    }
    Ok(Report::printed(as_text(&found), code))
}

/// What `check` found, for either answer.
struct Found<'a> {
    availability: Availability,
    sources: &'a jaula_policy::Sources,
    problems: &'a [String],
    layers: &'a Layers,
    seatbelt: Option<&'a SeatbeltCheck>,
}

/// The answer as JSON (`--json`).
fn as_json(found: &Found) -> serde_json::Value {
    let Found {
        availability,
        sources,
        problems,
        layers,
        seatbelt,
    } = found;
    serde_json::json!({
            "available": availability.available,
            "reason": availability.reason,
            "platform": Platform::host(),
            "bwrap_hint": match sources.bwrap {
                BwrapHint::Probe => "probe",
                BwrapHint::Works => "works",
                BwrapHint::DoesNotWork => "does-not-work",
            },
            "config": sources.config_path,
            "config_loaded": sources.config_loaded,
            "config_problems": problems,
            "landlock": layers.landlock,
            "seccomp": layers.seccomp,
            "bwrap": layers.bwrap,
            "socket_gate": match &layers.socket_gate {
                Ok(()) => "available".to_owned(),
                Err(e) => e.clone(),
            },
            "network": network_line(sources),
            "pid_namespace": PID_NS_LINE,
            "host_services": HOST_SERVICES_LINE,
            "seatbelt": seatbelt.map(SeatbeltCheck::json),
    })
}

/// The answer for people: the first line is the one launchers read; the layers follow.
fn as_text(found: &Found) -> String {
    let Found {
        availability,
        sources,
        problems,
        layers,
        seatbelt,
    } = found;
    let mut lines = vec![
        if availability.available {
            "cage available".to_owned()
        } else {
            "cage unavailable on this machine".to_owned()
        },
        format!("reason: {}", availability.reason),
    ];
    lines.extend(problems.iter().map(|p| format!("config problem: {p}")));
    if Platform::host() == Platform::Linux {
        // Landlock's report is a block of lines of its own.
        lines.push(
            layers
                .landlock
                .to_string()
                .trim_end_matches('\n')
                .to_owned(),
        );
        lines.push(format!("seccomp: {}", layers.seccomp));
        lines.push(format!("bwrap: {}", layers.bwrap));
        lines.push(match &layers.socket_gate {
            Ok(()) => "socket gate: available (host unix sockets refused unless allowed; \
                       unix datagram sockets refused)"
                .to_owned(),
            Err(e) => format!("socket gate: unavailable: {e}"),
        });
        lines.push(format!("pid namespace: {PID_NS_LINE}"));
        lines.push(format!("host services: {HOST_SERVICES_LINE}"));
    }
    if let Some(seatbelt) = seatbelt {
        lines.extend(seatbelt.lines());
    }
    lines.push(format!("network: {}", network_line(sources)));
    lines.join("\n") + "\n"
}

/// What `/proc` shows a caged process, per backend: the bwrap view has its own PID
/// namespace by default, but not under `line`'s prefix (a window's pids must mean the same
/// on the host); natively nothing hides host processes.
const PID_NS_LINE: &str = "bwrap view: the cage's own, with its own /proc (host command \
     lines hidden; `jaula run --no-pid-ns` and the `jaula line` prefix share the host's, \
     so a window's pids mean the same on the host); landlock (native): the host's, LIMIT: \
     every host process's command line is readable in /proc/<pid>/cmdline";

/// Which host sockets the bwrap view leaves out.
const HOST_SERVICES_LINE: &str = "bwrap view: /tmp and /var/tmp are the window's own \
     (<state home>/.runtime/tmp/<window>), /run/user/<uid> an empty tmpfs, TMUX and \
     TMUX_PANE scrubbed; landlock (native): the host's /tmp and /run/user, with TMUX and \
     TMUX_PANE scrubbed";

/// The network mode `jaula run` uses without `--network`, and the presets it knows.
fn network_line(sources: &Sources) -> String {
    let mode = match &sources.network.mode {
        Some(m) => format!("{m} (from {})", sources.config_path.display()),
        None => "host (default; the caged process reaches any address)".to_owned(),
    };
    let presets: Vec<&str> = jaula_policy::network::presets()
        .iter()
        .map(|p| p.name)
        .collect();
    format!(
        "{mode}; `jaula run --network none|allow` needs a network namespace; presets: {}",
        presets.join(", ")
    )
}

/// What each Linux layer can do on this kernel, for `check`.
struct Layers {
    landlock: landlock::Support,
    seccomp: String,
    bwrap: String,
    socket_gate: Result<(), String>,
}

impl Layers {
    fn probe(sources: &Sources) -> Layers {
        let bwrap = bwrap::probe(sources.bwrap, &bwrap::BwrapOptions::default()).reason();
        Layers {
            landlock: landlock::probe(),
            seccomp: seccomp_line(),
            bwrap,
            socket_gate: socket_gate_probe(),
        }
    }
}

#[cfg(target_os = "linux")]
fn seccomp_line() -> String {
    match (seccomp_in_kernel(), jaula_sandbox::seccomp::compile()) {
        (true, Ok(filter)) => format!(
            "available; {} deny rules, arch {:?}",
            jaula_policy::seccomp::deny_list().len(),
            filter.arch()
        ),
        (false, _) => {
            "not available in this kernel (no Seccomp field in /proc/self/status)".to_string()
        }
        (_, Err(e)) => format!("filter does not compile here: {e}"),
    }
}

#[cfg(not(target_os = "linux"))]
fn seccomp_line() -> String {
    "not on this system: seccomp is a Linux layer".to_string()
}

#[cfg(target_os = "linux")]
fn socket_gate_probe() -> Result<(), String> {
    jaula_sandbox::call_gate::probe().map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn socket_gate_probe() -> Result<(), String> {
    Err(
        "not on this system: the socket gate is a Linux layer (the Seatbelt profile's \
         network-outbound rules decide unix-socket connects)"
            .to_string(),
    )
}

/// What `sandbox-exec` did with a trivial profile and with this window's own.
#[derive(Debug)]
struct SeatbeltCheck {
    trivial: Result<(), String>,
    /// `None` without `--repo`: no window to render a profile for.
    window: Option<Result<(), String>>,
}

/// A profile every Seatbelt accepts: the probe tells a working sandbox-exec from a
/// missing, broken or refused one.
const TRIVIAL_PROFILE: &str = "(version 1)\n(allow default)\n";

/// What the probes run under the profile: it exists on every macOS.
const PROBE_COMMAND: &str = "/usr/bin/true";

impl SeatbeltCheck {
    fn probe(args: &PolicyArgs) -> SeatbeltCheck {
        let exec = Path::new(SANDBOX_EXEC);
        let probe = Path::new(PROBE_COMMAND);
        let trivial = probe_seatbelt(exec, TRIVIAL_PROFILE, probe);
        let window = args.repo.as_ref().map(|_| {
            let profile = profile::render(args, jaula_sandbox::seatbelt::ProfileNetwork::Host)
                .map_err(|e| e.to_string())?;
            probe_seatbelt(exec, &profile, probe)
        });
        SeatbeltCheck { trivial, window }
    }

    fn lines(&self) -> Vec<String> {
        let mut out = vec![match &self.trivial {
            Ok(()) => format!("seatbelt: {SANDBOX_EXEC} runs a trivial profile"),
            Err(e) => format!("seatbelt: {SANDBOX_EXEC} does not run a trivial profile: {e}"),
        }];
        out.push(match &self.window {
            None => "seatbelt: give --repo to check this window's own profile too".to_owned(),
            Some(Ok(())) => "seatbelt: this window's profile compiles and runs".to_owned(),
            Some(Err(e)) => format!("seatbelt: this window's profile is refused: {e}"),
        });
        out
    }

    fn json(&self) -> serde_json::Value {
        let answer = |r: &Result<(), String>| match r {
            Ok(()) => "runs".to_owned(),
            Err(e) => e.clone(),
        };
        serde_json::json!({
            "trivial_profile": answer(&self.trivial),
            "window_profile": self.window.as_ref().map(answer),
        })
    }
}

/// Run `sandbox_exec -p PROFILE probe`: `Ok` when it exits 0, else what went wrong (its
/// stderr says why a profile does not compile).
pub fn probe_seatbelt(sandbox_exec: &Path, profile: &str, probe: &Path) -> Result<(), String> {
    let out = std::process::Command::new(sandbox_exec)
        .arg("-p")
        .arg(profile)
        .arg(probe)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot execute {}: {e}", sandbox_exec.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(format!("{} ({})", out.status, stderr.trim()))
}

#[cfg(target_os = "linux")]
/// The kernel reports a `Seccomp:` line in /proc/self/status when CONFIG_SECCOMP is on.
fn seccomp_in_kernel() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
        .unwrap_or(false)
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
