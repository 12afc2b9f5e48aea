//! What a [`Plan`] grants one path, for `jaula explain`: computed from the plan's own rules,
//! not from `decide`, so a disagreement shows.

use std::path::Path;

use jaula_policy::Access;

use super::{Plan, PlanRule, Right};

/// Landlock grants accumulate down the hierarchy: a path's rights are the union of the
/// rules on it and on its ancestors. Read needs read-file (or read-dir for a directory),
/// write needs write-file, create needs make-reg on the parent.
pub fn effect(plan: &Plan, path: &Path, access: Access) -> (bool, String) {
    let (target, needed) = match access {
        Access::Read if path.is_dir() => (path, Right::ReadDir),
        Access::Read => (path, Right::ReadFile),
        Access::Write => (path, Right::WriteFile),
        Access::Create => (path.parent().unwrap_or(path), Right::MakeReg),
        Access::Connect => return (false, "connect is decided by the socket gate".to_owned()),
    };
    let granting: Vec<&PlanRule> = plan
        .rules
        .iter()
        .filter(|r| target.starts_with(&r.path) && r.rights.has(needed))
        .collect();
    match granting.last() {
        Some(rule) => {
            let reasons: Vec<String> = rule.reasons.iter().map(|r| r.to_string()).collect();
            (
                true,
                format!(
                    "{} granted on {} [{}]",
                    needed.name(),
                    rule.path.display(),
                    reasons.join("; ")
                ),
            )
        }
        None => (
            false,
            format!(
                "no rule grants {} on {} or above",
                needed.name(),
                target.display()
            ),
        ),
    }
}
