//! Which Linux cage a launch gets: the bubblewrap view (with jaula's stage inside it) or
//! Landlock natively, from what was asked and what this host has. The probes are passed
//! in, so the whole decision table is a unit test.

use jaula_policy::BackendChoice;

use crate::bwrap::Availability;

/// The cage a launch gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// Landlock, seccomp and hardening on jaula itself.
    Native {
        /// Under `auto`: why bubblewrap was not taken (for `--verbose`).
        bwrap_unavailable: Option<Availability>,
    },
    /// The bubblewrap view, with this availability (its program resolved).
    Bwrap(Availability),
}

/// No cage can be built: the reasons, each only when it counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCage {
    /// What was asked for, which decides which reasons count.
    pub(crate) requested: BackendChoice,
    /// bubblewrap was probed and cannot build its namespace here.
    pub(crate) bwrap: Option<Availability>,
    /// Landlock's floor is not met (`landlock: <kernel status>`).
    pub(crate) landlock: Option<String>,
}

impl NoCage {
    /// Why bubblewrap cannot build its namespace, when that counted.
    pub fn bwrap_reason(&self) -> Option<String> {
        self.bwrap.as_ref().map(Availability::reason)
    }

    /// `landlock: <kernel status>`, when Landlock's floor not being met counted.
    pub fn landlock_reason(&self) -> Option<String> {
        self.landlock.clone()
    }

    /// One line naming every reason that counted.
    pub fn reason(&self) -> String {
        match (&self.bwrap, &self.landlock) {
            (Some(b), Some(l)) if self.requested == BackendChoice::Auto => {
                format!("{}; and {l}", b.reason())
            }
            (Some(b), _) => format!("bwrap backend: {}", b.reason()),
            (None, Some(l)) => l.clone(),
            (None, None) => "no cage available".to_owned(),
        }
    }

    /// What to do about it, first the remedies that keep a cage: give bubblewrap what it
    /// lacks or (when Landlock is here) choose Landlock by name; running uncaged is never
    /// offered here (the caller names `--allow-uncaged` last, as the way with no cage).
    pub fn remedy(&self) -> String {
        let bwrap = self.bwrap.as_ref().and_then(|b| match b {
            Availability::Unavailable(why) => Some(why.remedy()),
            Availability::Available { .. } => None,
        });
        match (bwrap, &self.landlock) {
            (Some(b), None) => format!("{b}, or pass --backend landlock (Landlock alone)"),
            (Some(b), Some(_)) => format!(
                "{b}; and a kernel with Landlock (Linux 5.13+, landlock in the lsm= boot list)"
            ),
            (None, Some(_)) => {
                "a kernel with Landlock (Linux 5.13+, landlock in the lsm= boot list), or \
                 --backend bwrap where bubblewrap works"
                    .to_owned()
            }
            (None, None) => String::new(),
        }
    }
}

/// Decide. `landlock_missing` is `None` when Landlock's floor is met, else the reason;
/// `probe_bwrap` runs only when the answer depends on it.
pub(crate) fn choose(
    requested: BackendChoice,
    landlock_missing: Option<String>,
    probe_bwrap: impl FnOnce() -> Availability,
) -> Result<Launcher, NoCage> {
    let no_cage = |bwrap, landlock| NoCage {
        requested,
        bwrap,
        landlock,
    };
    // One arm per choice, so a new one does not build until it is decided here.
    match requested {
        BackendChoice::Landlock => match landlock_missing {
            None => Ok(Launcher::Native {
                bwrap_unavailable: None,
            }),
            Some(l) => Err(no_cage(None, Some(l))),
        },
        BackendChoice::Bwrap => {
            let bwrap = probe_bwrap();
            match bwrap.is_available() {
                true => Ok(Launcher::Bwrap(bwrap)),
                false => Err(no_cage(Some(bwrap), landlock_missing)),
            }
        }
        BackendChoice::Auto => {
            let bwrap = probe_bwrap();
            match (bwrap.is_available(), landlock_missing) {
                (true, _) => Ok(Launcher::Bwrap(bwrap)),
                (false, None) => Ok(Launcher::Native {
                    bwrap_unavailable: Some(bwrap),
                }),
                (false, landlock) => Err(no_cage(Some(bwrap), landlock)),
            }
        }
    }
}

#[cfg(test)]
#[path = "choose_tests.rs"]
mod tests;
