//! The ids of contract mode as clap value parsers: a bad id is a wrong command line, so
//! clap refuses it (exit 2, with the usage hint) before anything is opened, and the
//! message names the rule the id broke. Contract mode is Linux only, and so are they.

use jaula_contract::{ContractId, RuntimeKind, WorkRecordId};
use jaula_policy::uid_range::UidRange;

/// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`: one path segment, never `.`, `..` or hidden.
const SEGMENT_RULE: &str = "one path segment matching [A-Za-z0-9][A-Za-z0-9._-]{0,63}";

/// A contract id; the empty one is the no-contract sentinel.
pub fn contract_id(text: &str) -> Result<ContractId, String> {
    ContractId::parse(text).map_err(|e| format!("{e}; a contract id is {SEGMENT_RULE}"))
}

/// A work record id (not `harness` or `tmp`, which the Contract's tree reserves).
pub fn work_record_id(text: &str) -> Result<WorkRecordId, String> {
    // The library's message already names the rule it applied.
    WorkRecordId::parse(text).map_err(|e| e.to_string())
}

/// A harness runtime kind (`codex`, `claude`, ...).
pub fn runtime_kind(text: &str) -> Result<RuntimeKind, String> {
    RuntimeKind::parse(text)
        .map_err(|e| format!("{e}; a runtime kind matches [a-z][a-z0-9_]{{0,31}}"))
}

/// `--uid-range MIN-MAX`, checked as given; kept as text, since the environment and the
/// config file give the same setting as text and one resolver orders the three.
pub fn uid_range(text: &str) -> Result<String, String> {
    UidRange::parse(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
