//! One line before an agent whose own sandbox cannot start in the cage. Codex runs every
//! command it executes under its own sandbox, bubblewrap on Linux, which needs new
//! namespaces; the cage refuses those (seccomp's namespace rules), so bwrap fails with "No
//! permissions to create new namespace" and so does every shell command Codex runs. jaula
//! is the sandbox: Codex is useful in the cage with its own turned off
//! (`--sandbox danger-full-access`), and this says so when a command starts Codex with it
//! on.
//!
//! The gate's supervisor sees the refused namespace itself and `jaula run` says so when the
//! command ends, whatever the program (`call_gate`'s namespace calls). This line is the
//! one before: an interactive Codex would run its whole session with every command
//! failing, so the switch to turn its sandbox off is named as it starts, from what its
//! command line and config say it will do (and under `--no-socket-gate`, where nothing
//! sees the refusal).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Codex's value of `--sandbox` / `sandbox_mode` that runs commands without its sandbox.
const CODEX_OFF: &str = "danger-full-access";
/// The flag that turns off both the approvals and the sandbox.
const CODEX_BYPASS: &str = "--dangerously-bypass-approvals-and-sandbox";
/// Subcommands that run no model-generated command, so no sandbox either.
const CODEX_NO_COMMANDS: &[&str] = &[
    "login",
    "logout",
    "mcp",
    "plugin",
    "completion",
    "update",
    "doctor",
    "apply",
    "a",
    "features",
    "help",
    "debug",
    "archive",
    "unarchive",
    "delete",
    "queue",
    "cloud",
    "--version",
    "-V",
    "--help",
    "-h",
];

/// The line for `argv` (the caged command), when it starts an agent whose own sandbox
/// cannot start in the cage. `env` is the cage's environment (`CODEX_HOME`, `HOME`).
pub fn nested_sandbox_hint(argv: &[OsString], env: &[(OsString, OsString)]) -> Option<String> {
    let (program, args) = argv.split_first()?;
    if Path::new(program).file_name() != Some(OsStr::new("codex")) {
        return None;
    }
    if codex_sandbox_is_off(args, env) {
        return None;
    }
    Some(format!(
        "jaula: codex runs each command under its own sandbox (bubblewrap), which cannot \
         start in this cage (new namespaces are refused), so its commands would fail; start \
         it with --sandbox {CODEX_OFF} (or sandbox_mode = \"{CODEX_OFF}\" in \
         ~/.codex/config.toml): jaula is the sandbox (README, \"Agents in the cage\")"
    ))
}

/// Whether this Codex command runs its commands without its own sandbox, or runs none:
/// the flags first (they win over the config), then the top level of its config file.
fn codex_sandbox_is_off(args: &[OsString], env: &[(OsString, OsString)]) -> bool {
    let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    let mut mode: Option<&str> = None;
    for (i, arg) in args.iter().enumerate() {
        if *arg == "--" {
            break;
        }
        if *arg == CODEX_BYPASS || CODEX_NO_COMMANDS.contains(arg) {
            return true;
        }
        let next = args.get(i + 1).copied();
        match *arg {
            "-s" | "--sandbox" => mode = next,
            "-c" | "--config" => {
                if let Some(value) = next.and_then(|kv| kv.strip_prefix("sandbox_mode=")) {
                    mode = Some(value.trim_matches(['"', '\'']));
                }
            }
            other => {
                if let Some(value) = other.strip_prefix("--sandbox=") {
                    mode = Some(value);
                }
            }
        }
    }
    match mode {
        Some(mode) => mode == CODEX_OFF,
        None => config_mode(env).as_deref() == Some(CODEX_OFF),
    }
}

/// The top-level `sandbox_mode` of `$CODEX_HOME/config.toml` (default `~/.codex`), read as
/// Codex reads it before any profile; `None` when there is none or it cannot be read.
fn config_mode(env: &[(OsString, OsString)]) -> Option<String> {
    let var = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let dir = var("CODEX_HOME").or_else(|| var("HOME").map(|h| h.join(".codex")))?;
    let text = std::fs::read_to_string(dir.join("config.toml")).ok()?;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            break;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() == "sandbox_mode" {
            let value = value.split('#').next().unwrap_or("").trim();
            return Some(value.trim_matches(['"', '\'']).to_owned());
        }
    }
    None
}

#[cfg(test)]
#[path = "nested_sandbox_tests.rs"]
mod tests;
