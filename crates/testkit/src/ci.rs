//! The skip rule: a test that needs something the host lacks says so and returns, except
//! under `CI=true`, where the runner is built to have everything and a skip would hide a
//! check that never ran.

/// Whether this run is CI's (`CI=true`), where no test may skip.
pub fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// Print why a test cannot run here, or panic under `CI=true`.
pub fn skip_or_fail(reason: &str) {
    if under_ci() {
        panic!("CI=true and this test cannot run: {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

/// Whether the test process runs as root (effective uid 0).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// True as root; otherwise [`skip_or_fail`] with `what` and false.
pub fn require_root(what: &str) -> bool {
    if is_root() {
        return true;
    }
    skip_or_fail(&format!("{what} needs root"));
    false
}

/// True when a trial cage (`jaula run --backend B -- true`, say) ran; otherwise
/// [`skip_or_fail`] with jaula's own reason, and false: a host that cannot build this
/// backend's cage skips the suite, except under CI.
pub fn cage_or_skip(backend: &str, trial: &std::process::Output) -> bool {
    if trial.status.success() {
        return true;
    }
    skip_or_fail(&format!(
        "jaula run --backend {backend} cannot cage here: {}",
        String::from_utf8_lossy(&trial.stderr).trim()
    ));
    false
}
