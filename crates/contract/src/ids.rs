//! The names that become path segments: contract ids, work record ids, runtime kinds.
//!
//! Each is validated before it touches the filesystem, so a hostile or malformed id can
//! never name `..`, an absolute path, or a directory the layout reserves.

use std::fmt;

use serde::Serialize;

use crate::error::{ContractError, Result};

/// The tree of a Work Record bound to no Contract. It gets a directory of its own, so it
/// never shares somebody else's, but no uid: there is no tenant to draw the OS line
/// around, and refusing such runs would break every flow that predates Contracts.
pub const NO_CONTRACT: &str = "no-contract";

/// The per-Contract directory holding one harness root per runtime kind.
pub const HARNESS_DIR: &str = "harness";
/// The per-Contract `TMPDIR`.
pub const TMP_DIR: &str = "tmp";
/// Directories directly under a Contract's tree that are not workspaces.
pub const RESERVED_DIRS: [&str; 2] = [HARNESS_DIR, TMP_DIR];

/// Platform ids are UUIDs, but any `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` is a safe single
/// segment: it cannot be empty, `.`, `..`, hidden, or contain a separator.
pub(crate) fn is_safe_segment(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn is_runtime_kind(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 32
        && bytes[0].is_ascii_lowercase()
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

/// Canonical hyphenated UUID text (8-4-4-4-12 hex digits, either case).
///
/// Stricter than Python's `UUID()`, which also takes braces, `urn:uuid:` and bare hex: a
/// name the control plane would have to normalise is a stray, not a workspace.
pub fn is_uuid(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// A validated contract id: the directory name of the Contract's tree.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ContractId(String);

impl ContractId {
    /// Validate `raw`. Surrounding whitespace is ignored and an empty id means
    /// [`NO_CONTRACT`], as in the runner that defined this layout.
    pub fn parse(raw: &str) -> Result<ContractId> {
        let trimmed = raw.trim();
        let segment = if trimmed.is_empty() {
            NO_CONTRACT
        } else {
            trimmed
        };
        if !is_safe_segment(segment) {
            return Err(ContractError::InvalidContractId(raw.to_string()));
        }
        Ok(ContractId(segment.to_string()))
    }

    /// The sentinel for a Work Record with no Contract.
    pub fn no_contract() -> ContractId {
        ContractId(NO_CONTRACT.to_string())
    }

    /// Whether this is the no-contract sentinel, which never holds a uid.
    pub fn is_no_contract(&self) -> bool {
        self.0 == NO_CONTRACT
    }

    /// The segment.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A validated work record id: the directory name of one workspace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct WorkRecordId(String);

impl WorkRecordId {
    /// Validate `raw`: a safe segment that is not one of [`RESERVED_DIRS`] (a work record
    /// called `tmp` would otherwise be the Contract's `TMPDIR`).
    pub fn parse(raw: &str) -> Result<WorkRecordId> {
        if !is_safe_segment(raw) {
            return Err(ContractError::InvalidWorkRecordId {
                value: raw.to_string(),
                reason: "must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
            });
        }
        if RESERVED_DIRS.contains(&raw) {
            return Err(ContractError::InvalidWorkRecordId {
                value: raw.to_string(),
                reason: "names a directory reserved for the Contract's harness or tmp",
            });
        }
        Ok(WorkRecordId(raw.to_string()))
    }

    /// The segment.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for WorkRecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A validated runtime kind (`codex`, `claude`, ...): the name of a harness root.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct RuntimeKind(String);

impl RuntimeKind {
    /// Validate `raw` against `[a-z][a-z0-9_]{0,31}`.
    pub fn parse(raw: &str) -> Result<RuntimeKind> {
        if !is_runtime_kind(raw) {
            return Err(ContractError::InvalidRuntimeKind(raw.to_string()));
        }
        Ok(RuntimeKind(raw.to_string()))
    }

    /// The segment.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The variable that points this harness at its config root, if jaula knows the
    /// harness: both CLIs otherwise default to `~/.codex` / `~/.claude`, i.e. a
    /// directory shared by every Contract on the host.
    pub fn config_env_var(&self) -> Option<&'static str> {
        match self.0.as_str() {
            "codex" => Some("CODEX_HOME"),
            "claude" | "claude_code" => Some("CLAUDE_CONFIG_DIR"),
            _ => None,
        }
    }
}

impl fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
