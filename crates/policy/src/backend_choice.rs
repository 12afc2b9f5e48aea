//! Which Linux cage a launch asks for: one name for `jaula run --backend`, the config's
//! `[run] backend` and the sandbox crate's chooser, so the three cannot drift apart.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

/// The Linux backend asked for. What a launch actually gets also depends on what the host
/// has; the sandbox crate decides that (`jaula_sandbox::backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// bubblewrap's mount view where user namespaces work, else Landlock alone.
    #[default]
    Auto,
    /// Landlock, seccomp and the hardening steps, natively; no cage when Landlock's floor
    /// is not met.
    Landlock,
    /// bubblewrap's mount view with jaula's inner stage inside it; no cage when bubblewrap
    /// cannot build its namespace here.
    Bwrap,
}

impl BackendChoice {
    /// The names `--backend` and config `run.backend` accept, in help-text order.
    pub const NAMES: [&'static str; 3] = ["auto", "landlock", "bwrap"];

    /// The name `--backend` takes for this choice.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Landlock => "landlock",
            BackendChoice::Bwrap => "bwrap",
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`BackendChoice::NAMES`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown backend {value:?} (expected one of: auto, landlock, bwrap)")]
pub struct UnknownBackend {
    /// The name given.
    pub value: String,
}

impl FromStr for BackendChoice {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<BackendChoice, UnknownBackend> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "landlock" => Ok(BackendChoice::Landlock),
            "bwrap" => Ok(BackendChoice::Bwrap),
            other => Err(UnknownBackend {
                value: other.to_owned(),
            }),
        }
    }
}

#[cfg(test)]
#[path = "backend_choice_tests.rs"]
mod tests;
