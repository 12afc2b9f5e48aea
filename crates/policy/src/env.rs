//! Credential environment scrub: which variables a caged process inherits.
//!
//! A caged agent is assumed hostile (prompt injection, a malicious build script), and its
//! environment is the cheapest thing to steal: `env | curl …` needs no file access at all,
//! so Landlock and the mount view cannot help. The owner's shell environment routinely
//! holds cloud keys, forge tokens, registry tokens, database URLs and agent sockets. This
//! module decides, from data, which of those the caged process never sees.
//!
//! The decision is pure ([`scrub_env`] takes the variables and returns the kept ones plus
//! the removed *names*); the launcher hands [`ScrubbedEnv::kept`] to `execve`. Values are
//! never printed, serialised or formatted with `Debug`: reports carry names only.
//!
//! Precedence, highest first:
//! 1. the user's own rules (`--keep-env`, `--scrub-env`, config): the most specific
//!    matching pattern wins (an exact name beats a pattern, a longer literal beats a
//!    shorter one), and a keep/scrub tie goes to scrub (fail closed). So a user keep wins
//!    over the default scrub, and a user scrub wins over a default keep;
//! 2. the default keep list ([`default_keep_table`]): the agent's own model API keys, which
//!    the generic patterns below would otherwise remove;
//! 3. the default scrub list ([`default_scrub_table`]);
//! 4. anything else is kept.
//!
//! Matching is ASCII case-insensitive: `github_token` carries the same credential as
//! `GITHUB_TOKEN`, and a scrub list that missed it would fail open.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::Command;
use std::str::FromStr;

use serde::{Deserialize, Serialize, Serializer};

/// Variables removed by default, as `(pattern, reason)`. A `*` matches any run of
/// characters. Exact names that a generic pattern also covers are listed when the
/// specific reason is worth documenting.
const DEFAULT_SCRUB: &[(&str, &str)] = &[
    // Generic patterns: the naming conventions credentials follow across vendors.
    ("*SECRET*", "any secret by name: CLIENT_SECRET, SECRET_KEY, JWT_SECRET, AWS_SECRET_ACCESS_KEY"),
    ("*PASSWORD*", "passwords: PGPASSWORD, DOCKER_PASSWORD, TWINE_PASSWORD, *_PASSWORD_FILE, PASSWORD_STORE_DIR"),
    ("*PASSWD*", "passwords spelled the Unix way"),
    ("*_PWD", "MYSQL_PWD and friends (PWD and OLDPWD have no underscore before PWD and stay)"),
    ("*_TOKEN", "bearer tokens: GH_TOKEN, GITHUB_TOKEN, GITLAB_TOKEN, NPM_TOKEN, VAULT_TOKEN, HF_TOKEN, CI_JOB_TOKEN"),
    ("*_TOKEN_*", "tokens with a qualifier: TF_TOKEN_<host>, POETRY_PYPI_TOKEN_<repo>, *_TOKEN_FILE"),
    ("TOKEN", "a bare token"),
    ("*_API_KEY", "third-party API keys (HEROKU_API_KEY, SENDGRID_API_KEY); model keys are kept below"),
    ("*_APIKEY", "API keys spelled without an underscore"),
    ("*_ACCESS_KEY", "access keys (AZURE_STORAGE_ACCESS_KEY, MINIO_ACCESS_KEY)"),
    ("*_ACCESS_KEY_ID", "the identifier half of a key pair (AWS_ACCESS_KEY_ID); useless alone, removed with its secret"),
    ("*_PRIVATE_KEY", "private keys passed inline (signing keys, deploy keys)"),
    ("*_CREDENTIAL", "a credential by name"),
    ("*_CREDENTIALS", "credentials by name, or a path to them (GOOGLE_APPLICATION_CREDENTIALS)"),
    ("*_PAT", "personal access tokens: GITHUB_PAT, AZURE_DEVOPS_EXT_PAT"),
    ("*_DSN", "data source names usually embed a database password"),
    ("*_CONNECTION_STRING", "connection strings embed keys (AZURE_STORAGE_CONNECTION_STRING)"),
    ("*_WEBHOOK_URL", "a webhook URL is its own secret (SLACK_WEBHOOK_URL)"),
    // Cloud providers.
    ("AWS_*", "AWS keys, session tokens and pointers to credential files (AWS_SHARED_CREDENTIALS_FILE, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_CONTAINER_CREDENTIALS_FULL_URI); AWS_PROFILE only selects them"),
    ("AZURE_*", "Azure service principal secrets, certificates, federated token files and storage keys"),
    ("CLOUDSDK_*", "gcloud configuration, including CLOUDSDK_AUTH_ACCESS_TOKEN_FILE and the config directory holding its tokens"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "path to a Google service-account key: tools inside the cage would authenticate with it"),
    ("DIGITALOCEAN_ACCESS_TOKEN", "DigitalOcean API token"),
    ("HEROKU_API_KEY", "Heroku API key"),
    ("KUBECONFIG", "points kubectl at cluster credentials; inside the cage it would act as the owner on the cluster"),
    // Forges and CI.
    ("GH_TOKEN", "GitHub CLI token"),
    ("GITHUB_TOKEN", "GitHub token (Actions, gh, many tools)"),
    ("GH_ENTERPRISE_TOKEN", "GitHub Enterprise token"),
    ("GITLAB_TOKEN", "GitLab token"),
    ("GL_TOKEN", "GitLab CLI token"),
    ("CI_JOB_TOKEN", "GitLab CI job token"),
    ("CI_JOB_JWT*", "GitLab CI job identity tokens (CI_JOB_JWT, CI_JOB_JWT_V2)"),
    ("GIT_ASKPASS", "a helper that answers git's credential prompts for the owner"),
    ("VSCODE_GIT_IPC_HANDLE", "VS Code's git credential socket: it answers with the owner's forge credentials"),
    ("VSCODE_GIT_ASKPASS_*", "VS Code's askpass helper that talks to that socket"),
    // Package registries.
    ("NPM_TOKEN", "npm publish token"),
    ("NODE_AUTH_TOKEN", "npm/yarn registry token (setup-node)"),
    ("NPM_CONFIG_*AUTH*", "npm registry auth given as config (npm_config__auth, npm_config_//host/:_authToken)"),
    ("CARGO_REGISTRY_TOKEN", "crates.io publish token"),
    ("CARGO_REGISTRIES_*_TOKEN", "tokens for alternative Cargo registries"),
    ("PYPI_TOKEN", "PyPI upload token"),
    ("TWINE_PASSWORD", "PyPI upload password or token for twine"),
    ("UV_PUBLISH_TOKEN", "PyPI upload token for uv"),
    ("POETRY_PYPI_TOKEN_*", "PyPI upload tokens for poetry"),
    ("DOCKER_PASSWORD", "container registry password"),
    ("DOCKER_AUTH_CONFIG", "inline container registry credentials (GitLab runner format)"),
    ("DOCKER_CONFIG", "points docker at a config directory whose config.json holds registry auths"),
    ("HF_TOKEN", "Hugging Face token (can write to the owner's models and datasets)"),
    ("HUGGING_FACE_HUB_TOKEN", "Hugging Face token, older name"),
    // Databases.
    ("DATABASE_URL", "database URL, usually with a password in it"),
    ("*_DATABASE_URL", "more database URLs (TEST_DATABASE_URL, SHADOW_DATABASE_URL)"),
    ("PGPASSWORD", "PostgreSQL password"),
    ("PGPASSFILE", "path to PostgreSQL's password file"),
    ("MYSQL_PWD", "MySQL password"),
    ("REDIS_PASSWORD", "Redis password"),
    ("REDIS_URL", "Redis URL, often with a password in it"),
    ("MONGODB_URI", "MongoDB URI, usually with a password in it"),
    ("MONGO_URL", "MongoDB URL, usually with a password in it"),
    // Secret stores and agents.
    ("VAULT_TOKEN", "HashiCorp Vault token"),
    ("OP_SESSION_*", "1Password CLI session tokens"),
    ("BW_SESSION", "Bitwarden CLI session key"),
    ("SSH_AUTH_SOCK", "the owner's ssh-agent: any process that can reach it signs as the owner"),
    ("GPG_AGENT_INFO", "the owner's gpg-agent socket"),
    ("NETRC", "path to a .netrc holding machine passwords"),
    // Host services that act on request (escape by proxy).
    ("TMUX", "the owner's tmux server socket: `tmux new-window CMD` would run CMD outside the cage"),
    ("TMUX_PANE", "names the owner's tmux pane for `tmux send-keys`; meaningless without TMUX"),
];

/// Variables kept by default although a scrub pattern matches them, as `(pattern, reason)`:
/// the caged agent's own model credentials (it cannot work without them) and plain
/// configuration that happens to share a scrubbed prefix.
const DEFAULT_KEEP: &[(&str, &str)] = &[
    (
        "ANTHROPIC_API_KEY",
        "Claude Code's model key: the agent needs it to run",
    ),
    (
        "ANTHROPIC_AUTH_TOKEN",
        "Claude Code's bearer token for a gateway or proxy",
    ),
    (
        "CLAUDE_CODE_OAUTH_TOKEN",
        "Claude Code's long-lived subscription token",
    ),
    (
        "AWS_BEARER_TOKEN_BEDROCK",
        "Claude Code's Amazon Bedrock API key (model access only)",
    ),
    ("OPENAI_API_KEY", "Codex and other OpenAI clients"),
    ("CODEX_API_KEY", "Codex's non-interactive key"),
    (
        "AZURE_OPENAI_API_KEY",
        "Codex or other agents on Azure OpenAI",
    ),
    ("GEMINI_API_KEY", "Gemini CLI's model key"),
    (
        "GOOGLE_API_KEY",
        "Gemini CLI's key for Vertex AI express mode",
    ),
    ("OPENROUTER_API_KEY", "model router key"),
    ("MISTRAL_API_KEY", "Mistral models"),
    ("DEEPSEEK_API_KEY", "DeepSeek models"),
    ("MOONSHOT_API_KEY", "Moonshot (Kimi) models"),
    ("KIMI_API_KEY", "Kimi CLI's model key"),
    ("GROQ_API_KEY", "Groq-hosted models"),
    ("XAI_API_KEY", "xAI (Grok) models"),
    ("TOGETHER_API_KEY", "Together-hosted models"),
    ("FIREWORKS_API_KEY", "Fireworks-hosted models"),
    ("CEREBRAS_API_KEY", "Cerebras-hosted models"),
    ("DASHSCOPE_API_KEY", "Alibaba DashScope (Qwen) models"),
    ("ZAI_API_KEY", "Z.ai (GLM) models"),
    ("CURSOR_API_KEY", "Cursor's agent CLI key"),
    ("AMP_API_KEY", "Amp's agent CLI key"),
    (
        "AWS_CA_BUNDLE",
        "a CA bundle path for TLS behind a corporate proxy, not a credential",
    ),
    (
        "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
        "a CA bundle path for TLS behind a corporate proxy, not a credential",
    ),
    ("AWS_REGION", "a region name, not a credential"),
    ("AWS_DEFAULT_REGION", "a region name, not a credential"),
];

/// The default scrub list as `(pattern, reason)` pairs, for documentation and
/// `jaula explain`.
pub fn default_scrub_table() -> &'static [(&'static str, &'static str)] {
    DEFAULT_SCRUB
}

/// The default keep list (exceptions to the scrub list) as `(pattern, reason)` pairs.
pub fn default_keep_table() -> &'static [(&'static str, &'static str)] {
    DEFAULT_KEEP
}

/// A variable-name pattern: an exact name (`GITHUB_TOKEN`) or a glob whose `*` matches any
/// run of characters (`AWS_*`, `*_TOKEN`, `CARGO_REGISTRIES_*_TOKEN`). Matching is ASCII
/// case-insensitive.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EnvPattern {
    text: String,
}

/// Why a `--keep-env`/`--scrub-env` pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvPatternError {
    /// Nothing was written.
    #[error("an environment pattern cannot be empty")]
    Empty,
    /// A `=`: probably `NAME=value` written where a name belongs.
    #[error("environment pattern {pattern:?} contains '=', which no variable name can")]
    ContainsEquals {
        /// The pattern as given.
        pattern: String,
    },
    /// A NUL byte, which no environment entry can carry.
    #[error("environment pattern {pattern:?} contains a NUL byte")]
    ContainsNul {
        /// The pattern as given.
        pattern: String,
    },
}

impl EnvPattern {
    /// Parses a user-supplied name or pattern.
    pub fn parse(text: &str) -> Result<Self, EnvPatternError> {
        if text.is_empty() {
            return Err(EnvPatternError::Empty);
        }
        if text.contains('=') {
            return Err(EnvPatternError::ContainsEquals {
                pattern: text.to_owned(),
            });
        }
        if text.contains('\0') {
            return Err(EnvPatternError::ContainsNul {
                pattern: text.to_owned(),
            });
        }
        Ok(Self {
            text: text.to_owned(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `name` matches (ASCII case-insensitive).
    pub fn matches(&self, name: &OsStr) -> bool {
        glob_matches(self.text.as_bytes(), name.as_bytes())
    }

    fn specificity(&self) -> Specificity {
        specificity(&self.text)
    }
}

impl fmt::Debug for EnvPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EnvPattern({:?})", self.text)
    }
}

impl fmt::Display for EnvPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for EnvPattern {
    type Err = EnvPatternError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl TryFrom<String> for EnvPattern {
    type Error = EnvPatternError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<EnvPattern> for String {
    fn from(pattern: EnvPattern) -> Self {
        pattern.text
    }
}

/// How specific a pattern is: exact names first, then by the number of literal bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Specificity {
    exact: bool,
    literal: usize,
}

fn specificity(pattern: &str) -> Specificity {
    Specificity {
        exact: !pattern.contains('*'),
        literal: pattern.bytes().filter(|b| *b != b'*').count(),
    }
}

/// Glob match where `*` matches any (possibly empty) run of bytes, ASCII case-insensitive.
/// Works on bytes so a non-UTF-8 name is matched, not skipped.
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // Position of the last `*` seen and the name position it is currently absorbing up to.
    let mut backtrack: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                backtrack = Some((p, n));
                p += 1;
            }
            Some(c) if c.eq_ignore_ascii_case(&name[n]) => {
                p += 1;
                n += 1;
            }
            _ => match backtrack {
                Some((star, absorbed)) => {
                    p = star + 1;
                    n = absorbed + 1;
                    backtrack = Some((star, absorbed + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|c| *c == b'*')
}

/// The user's additions to the default lists, plus a switch for the defaults themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvRules {
    /// Apply [`default_scrub_table`] and [`default_keep_table`]. On by default.
    pub defaults: bool,
    /// Names or patterns to keep (`--keep-env`).
    pub keep: Vec<EnvPattern>,
    /// Names or patterns to remove (`--scrub-env`).
    pub scrub: Vec<EnvPattern>,
}

impl Default for EnvRules {
    fn default() -> Self {
        Self {
            defaults: true,
            keep: Vec::new(),
            scrub: Vec::new(),
        }
    }
}

/// What happens to one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvAction {
    /// Passed to the caged program.
    Keep,
    /// Removed before `exec`.
    Scrub,
}

/// The rule that decided a variable's fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EnvRule {
    /// A user `keep` pattern.
    UserKeep {
        /// The matching pattern.
        pattern: EnvPattern,
    },
    /// A user `scrub` pattern.
    UserScrub {
        /// The matching pattern.
        pattern: EnvPattern,
    },
    /// An entry of [`default_keep_table`].
    DefaultKeep {
        /// The matching pattern.
        pattern: &'static str,
        /// Why the default keeps it.
        reason: &'static str,
    },
    /// An entry of [`default_scrub_table`].
    DefaultScrub {
        /// The matching pattern.
        pattern: &'static str,
        /// What the variable would leak.
        reason: &'static str,
    },
    /// No rule matched: ordinary variables are passed through.
    NoRule,
}

/// The decision for one name, with the rule that made it (for `jaula explain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDecision {
    /// Kept or scrubbed.
    pub action: EnvAction,
    /// The rule that decided.
    pub rule: EnvRule,
}

impl EnvRules {
    /// The defaults with no user additions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a user keep pattern.
    pub fn keep(mut self, pattern: EnvPattern) -> Self {
        self.keep.push(pattern);
        self
    }

    /// Adds a user scrub pattern.
    pub fn scrub(mut self, pattern: EnvPattern) -> Self {
        self.scrub.push(pattern);
        self
    }

    /// Turns the default lists off: only the user's rules apply.
    pub fn without_defaults(mut self) -> Self {
        self.defaults = false;
        self
    }

    /// Decides one variable by name. See the module documentation for the precedence.
    pub fn decide(&self, name: &OsStr) -> EnvDecision {
        if let Some(decision) = self.decide_by_user_rules(name) {
            return decision;
        }
        if self.defaults {
            if let Some((pattern, reason)) = first_match(DEFAULT_KEEP, name) {
                return EnvDecision {
                    action: EnvAction::Keep,
                    rule: EnvRule::DefaultKeep { pattern, reason },
                };
            }
            if let Some((pattern, reason)) = first_match(DEFAULT_SCRUB, name) {
                return EnvDecision {
                    action: EnvAction::Scrub,
                    rule: EnvRule::DefaultScrub { pattern, reason },
                };
            }
        }
        EnvDecision {
            action: EnvAction::Keep,
            rule: EnvRule::NoRule,
        }
    }

    fn decide_by_user_rules(&self, name: &OsStr) -> Option<EnvDecision> {
        let best_keep = most_specific(&self.keep, name);
        let best_scrub = most_specific(&self.scrub, name);
        let scrub = |pattern: &EnvPattern| EnvDecision {
            action: EnvAction::Scrub,
            rule: EnvRule::UserScrub {
                pattern: pattern.clone(),
            },
        };
        let keep = |pattern: &EnvPattern| EnvDecision {
            action: EnvAction::Keep,
            rule: EnvRule::UserKeep {
                pattern: pattern.clone(),
            },
        };
        match (best_keep, best_scrub) {
            (None, None) => None,
            (Some(k), None) => Some(keep(k)),
            (None, Some(s)) => Some(scrub(s)),
            // A tie goes to scrub: when the user said both, removing is the safe reading.
            (Some(k), Some(s)) if k.specificity() > s.specificity() => Some(keep(k)),
            (Some(_), Some(s)) => Some(scrub(s)),
        }
    }
}

fn most_specific<'a>(patterns: &'a [EnvPattern], name: &OsStr) -> Option<&'a EnvPattern> {
    patterns
        .iter()
        .filter(|pattern| pattern.matches(name))
        .max_by_key(|pattern| pattern.specificity())
}

fn first_match(
    table: &'static [(&'static str, &'static str)],
    name: &OsStr,
) -> Option<(&'static str, &'static str)> {
    table
        .iter()
        .copied()
        .find(|(pattern, _)| glob_matches(pattern.as_bytes(), name.as_bytes()))
}

/// The environment a caged process receives, and the names that were withheld.
///
/// `Debug`, `Display` and `Serialize` show names only: a value never reaches a log.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ScrubbedEnv {
    /// The variables to pass, in their original order, bytes untouched.
    pub kept: Vec<(OsString, OsString)>,
    /// The names removed, in first-seen order, without duplicates.
    pub removed_names: Vec<OsString>,
}

impl ScrubbedEnv {
    /// Makes `command` run with exactly the kept variables (the inherited environment is
    /// cleared first, so nothing scrubbed can slip through `Command`'s inheritance).
    pub fn apply_to(&self, command: &mut Command) {
        command.env_clear();
        command.envs(self.kept.iter().map(|(name, value)| (name, value)));
    }

    fn kept_names(&self) -> impl Iterator<Item = &OsStr> {
        self.kept.iter().map(|(name, _)| name.as_os_str())
    }
}

impl fmt::Debug for ScrubbedEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScrubbedEnv")
            .field("kept_names", &self.kept_names().collect::<Vec<_>>())
            .field("removed_names", &self.removed_names)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for ScrubbedEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.removed_names.is_empty() {
            return write!(f, "no credential variables removed");
        }
        write!(
            f,
            "removed {} credential variable{}:",
            self.removed_names.len(),
            if self.removed_names.len() == 1 {
                ""
            } else {
                "s"
            }
        )?;
        for name in &self.removed_names {
            write!(f, " {}", name.to_string_lossy())?;
        }
        Ok(())
    }
}

impl Serialize for ScrubbedEnv {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Names {
            kept_names: Vec<String>,
            removed_names: Vec<String>,
        }
        Names {
            kept_names: self
                .kept_names()
                .map(|name| name.to_string_lossy().into_owned())
                .collect(),
            removed_names: self
                .removed_names
                .iter()
                .map(|name| name.to_string_lossy().into_owned())
                .collect(),
        }
        .serialize(serializer)
    }
}

/// Splits `vars` into what a caged process may inherit and the names withheld.
pub fn scrub_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    rules: &EnvRules,
) -> ScrubbedEnv {
    let mut scrubbed = ScrubbedEnv::default();
    for (name, value) in vars {
        match rules.decide(&name).action {
            EnvAction::Keep => scrubbed.kept.push((name, value)),
            EnvAction::Scrub => {
                if !scrubbed.removed_names.contains(&name) {
                    scrubbed.removed_names.push(name);
                }
            }
        }
    }
    scrubbed
}

/// Split `a:b::c` into `[a, b, c]`, byte-exact (paths need not be UTF-8).
pub fn split_colon_list(value: &OsStr) -> Vec<PathBuf> {
    value
        .as_bytes()
        .split(|b| *b == b':')
        .filter(|part| !part.is_empty())
        .map(|part| PathBuf::from(OsStr::from_bytes(part)))
        .collect()
}

/// A snapshot of the environment, so the merge is a pure function of its inputs.
#[derive(Clone, Debug, Default)]
pub struct EnvVars(BTreeMap<OsString, OsString>);

impl EnvVars {
    /// This process's environment, as it is now.
    pub fn from_process() -> EnvVars {
        EnvVars(std::env::vars_os().collect())
    }

    /// A given environment (tests, and callers that build one).
    pub fn from_pairs<K: Into<OsString>, V: Into<OsString>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> EnvVars {
        EnvVars(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The variable's value, empty included.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.0.get(OsStr::new(name)).map(|v| v.as_os_str())
    }

    /// The value, treating an empty one as unset (as launchers have always meant it).
    pub(crate) fn non_empty(&self, name: &str) -> Option<&OsStr> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// A colon-separated list of paths, empty entries skipped.
    pub(crate) fn colon_list(&self, name: &str) -> Vec<PathBuf> {
        self.get(name).map(split_colon_list).unwrap_or_default()
    }
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
