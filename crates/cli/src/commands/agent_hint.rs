//! One line before a known agent CLI starts in a cage that hides its login, so "Not logged
//! in" is not a mystery. Only Claude Code on Linux, and only when every condition holds:
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

/// The hint for `program` in this cage, if one is due.
pub fn login_hint(
    program: &OsStr,
    policy: &Policy,
    env: &[(OsString, OsString)],
) -> Option<String> {
    if policy.platform() != Platform::Linux {
        return None;
    }
    if Path::new(program).file_name() != Some(OsStr::new("claude")) {
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

#[cfg(test)]
#[path = "agent_hint_tests.rs"]
mod tests;
