//! One line before a known agent CLI starts in a cage that hides its login, so "Not logged
//! in" is not a mystery. Claude Code is recognised however it is started: as the command,
//! behind a wrapper (`timeout 30 claude`, `env X=1 claude`), inside a shell string
//! (`sh -c 'claude -p hi'`) or in a script the command names (`./agent.sh`, a `#!` file of
//! at most 64 KiB). Only Claude Code on Linux, and only when every condition holds:
//! its OAuth login file (`~/.claude/.credentials.json`) exists on the host and the policy
//! seals it, and nothing else would log it in (no model key or token in the environment
//! the cage gets, no relocated config directory, no `apiKeyHelper` in its settings). Any
//! doubt means no hint: a wrong hint would send the user to fix what works.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use jaula_policy::{Access, Platform, Policy};

/// Where Claude Code keeps its OAuth login outside macOS (sealed by default:
/// `defaults::CREDENTIAL_FILES`), and what authenticates it instead.
const CLAUDE_LOGIN: &str = ".claude/.credentials.json";
const CLAUDE_SETTINGS: &str = ".claude/settings.json";
const CLAUDE_AUTH_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CONFIG_DIR",
];

/// The largest script read to find `claude` in it: a wrapper is a few lines, and a large
/// file is not worth reading before every launch.
const SCRIPT_LIMIT: u64 = 64 * 1024;

/// The hint for `command` (the caged argv) in this cage, if one is due.
pub fn login_hint(
    command: &[OsString],
    policy: &Policy,
    env: &[(OsString, OsString)],
) -> Option<String> {
    if policy.platform() != Platform::Linux {
        return None;
    }
    if !runs_claude(command, env) {
        return None;
    }
    let login = policy.home().join(CLAUDE_LOGIN);
    if !login.is_file() || policy.decide(&login, Access::Read).allowed {
        return None;
    }
    let has_env = |name: &str| env.iter().any(|(k, v)| k == name && !v.is_empty());
    if CLAUDE_AUTH_ENV.iter().any(|name| has_env(name)) {
        return None;
    }
    // Unreadable settings count as holding a helper: no hint on doubt.
    let settings = policy.home().join(CLAUDE_SETTINGS);
    match std::fs::read_to_string(&settings) {
        Ok(text) if text.contains("apiKeyHelper") => return None,
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    Some(
        "jaula: claude: its login (~/.claude/.credentials.json, which also holds the refresh \
         token) is sealed in the cage, so it will say \"Not logged in\"; hand it the \
         short-lived access token alone with --hand-access-token claude, or a token: \
         CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`, or ANTHROPIC_API_KEY (README, \
         \"Agents in the cage\")"
            .to_owned(),
    )
}

/// Whether `command` starts Claude Code: a word of an argument (split as a shell would,
/// roughly) names a program `claude`, or the command or an argument is a short `#!` script
/// with such a word in it. `env`'s `PATH` finds a bare command name.
fn runs_claude(command: &[OsString], env: &[(OsString, OsString)]) -> bool {
    if command
        .iter()
        .any(|arg| names_claude(&arg.to_string_lossy()))
    {
        return true;
    }
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    command.iter().enumerate().any(|(i, arg)| {
        let file = match (i, path_var.as_deref()) {
            (0, Some(path)) if !arg.to_string_lossy().contains('/') => std::env::split_paths(path)
                .map(|d| d.join(arg))
                .find(|p| p.is_file()),
            _ => Some(Path::new(arg).to_path_buf()),
        };
        file.and_then(|f| script_text(&f))
            .is_some_and(|text| names_claude(&text))
    })
}

/// Whether a word of `text` is a path or name whose last component is `claude`.
fn names_claude(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || ";|&()<>'\"`$={}".contains(c))
        .any(|word| Path::new(word).file_name() == Some(OsStr::new("claude")))
}

/// The text of `path` when it is a regular file of at most [`SCRIPT_LIMIT`] bytes that
/// starts with `#!`: never a FIFO or a device, which a read could block on.
fn script_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > SCRIPT_LIMIT {
        return None;
    }
    let text = std::fs::read(path).ok()?;
    text.starts_with(b"#!")
        .then(|| String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
#[path = "agent_hint_tests.rs"]
mod tests;
