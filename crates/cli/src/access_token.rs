//! `--hand-access-token AGENT`: give a caged agent the short-lived access token from its
//! owner's login, and nothing else of that login.
//!
//! Claude Code keeps its OAuth login in `~/.claude/.credentials.json`: an access token that
//! expires within hours, and a refresh token that mints new ones for the owner's account
//! for months. The file is sealed in every cage, because the refresh token is the prize. The
//! access token alone is what the agent needs to call its model, and Claude Code takes one
//! from `CLAUDE_CODE_OAUTH_TOKEN`. So jaula reads the file outside the cage, as the owner,
//! and hands in only the access token: a caged agent that leaks it leaks hours of model
//! access, not the account. When it expires the agent stops authenticating; the next
//! `jaula run` hands in the token the owner's own `claude` has refreshed by then.

// Only the flag's parser is used on macOS, where `run` refuses the flag (the login lives
// in the Keychain there): the token reading is the Linux launch's.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

/// The agents whose login jaula knows how to split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum TokenAgent {
    /// Claude Code: `accessToken` of `~/.claude/.credentials.json`, as
    /// `CLAUDE_CODE_OAUTH_TOKEN`.
    Claude,
}

impl From<jaula_policy::config::TokenAgentName> for TokenAgent {
    /// A config value (`env.hand_access_token`), checked as the file was read.
    fn from(name: jaula_policy::config::TokenAgentName) -> TokenAgent {
        match name {
            jaula_policy::config::TokenAgentName::Claude => TokenAgent::Claude,
        }
    }
}

impl TokenAgent {
    /// The agent's name, as the flag and the config spell it.
    pub fn name(self) -> &'static str {
        match self {
            TokenAgent::Claude => "claude",
        }
    }

    /// The program the agent is started as; a config entry hands the token only to a
    /// command that is this program.
    pub fn program(self) -> &'static str {
        match self {
            TokenAgent::Claude => "claude",
        }
    }

    /// Whether `command` (a command's argv\[0\]: a bare name or a path) starts this
    /// agent: its last component is the agent's program. `sh -c claude` or `env claude`
    /// is not: a token follows a config entry only to the agent it belongs to.
    pub fn is_started_by(self, command: &std::ffi::OsStr) -> bool {
        Path::new(command)
            .file_name()
            .is_some_and(|name| name == self.program())
    }
}

/// Where Claude Code keeps its login outside macOS, relative to the home.
const CLAUDE_LOGIN: &str = ".claude/.credentials.json";
/// The variable Claude Code reads an OAuth access token from.
const CLAUDE_TOKEN_VAR: &str = "CLAUDE_CODE_OAUTH_TOKEN";
/// A token with less left than this is not worth handing in: the agent would stop
/// authenticating moments after it starts.
pub const MIN_REMAINING: Duration = Duration::from_secs(60);

/// A token ready to go into the cage's environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandedToken {
    pub variable: &'static str,
    pub token: String,
    pub expires_at: SystemTime,
}

/// Why no token can be handed in. `jaula run` refuses to start (126) on each: the owner
/// asked for a logged-in agent, and a silently logged-out one would fail later, obscurely.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("{path} is not a Claude Code login (no claudeAiOauth.accessToken and expiresAt)")]
    NotALogin { path: PathBuf },
    #[error(
        "the access token in {path} {}; run `claude` outside the cage once so it refreshes \
         its login, then try again",
        time_left(*.left)
    )]
    Expired { path: PathBuf, left: i64 },
    #[error("{variable} is already set in the environment; drop it or the flag, not both")]
    AlreadySet { variable: &'static str },
}

/// How long a token has, in words: an expired one is said to be expired (never "has -10 s
/// left"), a nearly expired one with the floor it misses.
fn time_left(left: i64) -> String {
    match left {
        i64::MIN..=-1 => format!("expired {} s ago", left.unsigned_abs()),
        0 => "has just expired".to_owned(),
        _ => format!(
            "has only {left} s left (want at least {} s)",
            MIN_REMAINING.as_secs()
        ),
    }
}

#[derive(Deserialize)]
struct ClaudeLogin {
    #[serde(rename = "claudeAiOauth")]
    oauth: ClaudeOauth,
}

#[derive(Deserialize)]
struct ClaudeOauth {
    #[serde(rename = "accessToken")]
    access_token: String,
    /// Milliseconds since the Unix epoch.
    #[serde(rename = "expiresAt")]
    expires_at_ms: i64,
}

/// Read `agent`'s login under `home` and take its access token, checked against `now`.
pub fn read_token(
    agent: TokenAgent,
    home: &Path,
    now: SystemTime,
) -> Result<HandedToken, TokenError> {
    match agent {
        TokenAgent::Claude => {
            let path = home.join(CLAUDE_LOGIN);
            let text = std::fs::read_to_string(&path).map_err(|e| TokenError::Unreadable {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            claude_token(&text, &path, now)
        }
    }
}

/// The access token of a Claude Code login file's `text`; the refresh token is never read
/// into a field, so it cannot travel further than this parse.
pub fn claude_token(text: &str, path: &Path, now: SystemTime) -> Result<HandedToken, TokenError> {
    let not_a_login = || TokenError::NotALogin {
        path: path.to_owned(),
    };
    let login: ClaudeLogin = serde_json::from_str(text).map_err(|_| not_a_login())?;
    let token = login.oauth.access_token;
    if token.is_empty() || token.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(not_a_login());
    }
    let expires_at = u64::try_from(login.oauth.expires_at_ms)
        .ok()
        .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
        .ok_or_else(not_a_login)?;
    let left = match expires_at.duration_since(now) {
        Ok(left) => i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
        Err(past) => -i64::try_from(past.duration().as_secs()).unwrap_or(i64::MAX),
    };
    if left < MIN_REMAINING.as_secs() as i64 {
        return Err(TokenError::Expired {
            path: path.to_owned(),
            left,
        });
    }
    Ok(HandedToken {
        variable: CLAUDE_TOKEN_VAR,
        token,
        expires_at,
    })
}

/// Add `handed` to the cage's environment `env`, refusing to replace a value the owner set
/// (two credentials for one agent is a mistake worth stopping on).
pub fn add_to_env(
    env: &mut Vec<(OsString, OsString)>,
    handed: &HandedToken,
) -> Result<(), TokenError> {
    if env.iter().any(|(k, _)| k == handed.variable) {
        return Err(TokenError::AlreadySet {
            variable: handed.variable,
        });
    }
    env.push((handed.variable.into(), handed.token.clone().into()));
    Ok(())
}

/// The one line `jaula run` prints when it hands a token in.
pub fn notice(agent: TokenAgent, handed: &HandedToken, now: SystemTime) -> String {
    let minutes = handed
        .expires_at
        .duration_since(now)
        .map(|d| d.as_secs() / 60)
        .unwrap_or(0);
    let name = agent.name();
    format!(
        "jaula: handing {name} its access token as {} (expires in {minutes} min; the refresh \
         token stays sealed)",
        handed.variable
    )
}

#[cfg(test)]
#[path = "access_token_tests.rs"]
mod tests;
