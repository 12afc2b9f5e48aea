//! The Landlock layer as a [`Backend`]: its answer for a path is what the plan's own rules
//! grant it, not `decide`'s, so a disagreement shows.

use std::path::Path;

use jaula_policy::{Access, HostFs, Platform, Policy, Rule};

use super::{plan, Plan, PlanMode, PlanRule, Right, BWRAP_VIEW_DEVIATIONS, DEVIATIONS};
use crate::backend::{Backend, BackendError, Deviation, Verdict};

impl From<crate::landlock::LandlockError> for BackendError {
    fn from(e: crate::landlock::LandlockError) -> BackendError {
        BackendError::from_backend(e)
    }
}

/// The Landlock plan for one mode: natively (`jaula run --backend landlock`) or inside the
/// bubblewrap view.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LandlockBackend {
    /// Which plan to render and judge: native, or the one for inside the bwrap view.
    pub(crate) mode: PlanMode,
}

impl Default for LandlockBackend {
    fn default() -> LandlockBackend {
        LandlockBackend {
            mode: PlanMode::Native,
        }
    }
}

impl Backend for LandlockBackend {
    type Artifact = Plan;

    fn name(&self) -> &'static str {
        "landlock"
    }

    fn platform(&self) -> Platform {
        Platform::Linux
    }

    fn deviations(&self) -> &'static [Deviation] {
        match self.mode {
            PlanMode::Native => DEVIATIONS,
            PlanMode::BwrapView => BWRAP_VIEW_DEVIATIONS,
        }
    }

    fn render(&self, policy: &Policy, fs: &dyn HostFs) -> Result<Plan, BackendError> {
        Ok(plan(policy, self.mode, fs)?)
    }

    fn verdict(
        &self,
        policy: &Policy,
        plan: &Plan,
        fs: &dyn HostFs,
        path: &Path,
        access: Access,
    ) -> Result<Verdict, BackendError> {
        if access == Access::Connect {
            let allowed = policy.decide(path, access).allowed;
            return Ok(Verdict {
                allowed,
                summary: format!(
                    "{}; Landlock below ABI 9 has no connect right",
                    crate::backend::gate_says(allowed)
                ),
            });
        }
        let (mut allowed, mut why) = effect(plan, fs, path, access);
        // A protected path Landlock leaves writable is the named deviation; what closes it
        // is the gate's supervisor, which refuses the write itself: say both.
        if allowed && matches!(policy.decide(path, access).rule, Rule::Protected { .. }) {
            allowed = false;
            why.push_str(
                "; deviation protected-not-split, closed by the gate: its supervisor \
                 refuses this write (EACCES)",
            );
        }
        Ok(Verdict {
            allowed,
            summary: format!("{} ({why})", if allowed { "allowed" } else { "denied" }),
        })
    }
}

/// Why a path no rule covers may still be allowed by `decide`: Landlock rules hold open
/// descriptors, so the complement of a seal is granted entry by entry as the disk stands
/// when the cage starts, and a name that does not exist then has no rule (it stays denied
/// if made later). Empty when `target` exists.
fn absent_note(fs: &dyn HostFs, target: &Path) -> String {
    let missing = target.ancestors().take_while(|p| !fs.exists(p)).last();
    match missing {
        Some(top) => format!(
            ": {} does not exist, and Landlock grants only what exists when the cage starts; \
             a name made later stays denied",
            top.display()
        ),
        None => String::new(),
    }
}

/// What `plan` grants `path` for `access`, and the rule that grants it.
///
/// Landlock grants accumulate down the hierarchy: a path's rights are the union of the
/// rules on it and on its ancestors. Read needs read-file (or read-dir for a directory),
/// write needs write-file, create needs make-reg on the parent.
fn effect(plan: &Plan, fs: &dyn HostFs, path: &Path, access: Access) -> (bool, String) {
    let (target, needed) = match access {
        Access::Read if fs.is_dir(path) => (path, Right::ReadDir),
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
                "no rule grants {} on {} or above{}",
                needed.name(),
                target.display(),
                absent_note(fs, target)
            ),
        ),
    }
}
