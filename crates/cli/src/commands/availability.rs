//! Whether a cage can be built on this machine, and why (not): the answer `check` reports
//! and `line` acts on (an empty prefix when there is none).

use std::path::Path;

use jaula_policy::{Platform, Sources};
use jaula_sandbox::{bwrap, landlock};

/// The absolute path of Seatbelt's launcher; never looked up on PATH, which the caller
/// (or a planted directory early in PATH) controls.
pub use jaula_sandbox::cage::macos::SANDBOX_EXEC;

/// Why `run` has no cage when the owner switched it off, and how to switch it back on.
pub const DISABLED: &str = "the cage is disabled (CITY_CAGE=0 or config cage.enabled = false)";
pub const ENABLE: &str = "unset CITY_CAGE=0 (or set config cage.enabled = true)";

/// Whether a window can be caged here, and why (not).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Availability {
    pub available: bool,
    pub reason: String,
}

/// Whether a cage can be built here: CITY_CAGE=0 turns it off; macOS needs sandbox-exec; Linux needs
/// bubblewrap to really build a namespace (or the launcher's hint that it does).
pub fn availability(sources: &Sources) -> Availability {
    if !sources.enabled {
        return Availability {
            available: false,
            reason: "disabled by CITY_CAGE=0 or the config file".to_string(),
        };
    }
    match Platform::host() {
        Platform::MacOs => {
            let available = Path::new(SANDBOX_EXEC).exists();
            Availability {
                available,
                reason: if available {
                    format!("{SANDBOX_EXEC} present")
                } else {
                    format!("{SANDBOX_EXEC} missing")
                },
            }
        }
        _ => {
            let options = bwrap::BwrapOptions::default();
            let probe = match probe_cache_path(sources) {
                Some(cache) => bwrap::probe_cached(sources.bwrap, &options, &cache),
                None => bwrap::probe(sources.bwrap, &options),
            };
            let landlock = landlock::probe();
            match (probe.is_available(), landlock.floor_met) {
                (true, _) => Availability {
                    available: true,
                    reason: format!("bwrap view plus landlock ({})", landlock.kernel),
                },
                (false, true) => Availability {
                    available: true,
                    reason: format!("landlock ({}); bwrap: {}", landlock.kernel, probe.reason()),
                },
                (false, false) => Availability {
                    available: false,
                    reason: format!("bwrap: {}; landlock: {}", probe.reason(), landlock.kernel),
                },
            }
        }
    }
}

/// Where `jaula run` keeps the bubblewrap probe's answer for this home, so `line` (run
/// once per window a launcher opens) and `check` reuse it instead of building a throwaway
/// namespace each time. `None` where the state home is not an absolute path yet (it is
/// then resolved against the repo, which `line` has not looked at): probe uncached.
fn probe_cache_path(sources: &Sources) -> Option<std::path::PathBuf> {
    let spec = &sources.spec;
    let state_home = match &spec.state_home {
        Some(p) if p.is_absolute() => p.clone(),
        Some(_) => return None,
        None if spec.home.is_absolute() => {
            spec.home.join(jaula_policy::defaults::DEFAULT_STATE_HOME)
        }
        None => return None,
    };
    let cwd = std::env::current_dir().ok()?;
    let state_home = jaula_policy::paths::canonicalize_lenient(&state_home, &cwd);
    Some(state_home.join(jaula_sandbox::planting::PROBE_CACHE_FILE))
}
