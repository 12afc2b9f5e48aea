//! The process hardening that exists on macOS, applied to jaula's own process just before
//! it execs (or spawns) `/usr/bin/sandbox-exec`: everything here is inherited across
//! `exec`, so no step needs to run between `fork` and `exec`.
//!
//! What Linux adds and macOS has no counterpart for (capabilities, securebits,
//! `no_new_privs`, seccomp, Landlock scopes) is listed in docs/security.md's
//! Linux-vs-macOS table. Written with portable calls (`setrlimit`, `fcntl`) so it builds
//! and is unit-tested on Linux too.

use std::io;
use std::os::fd::{BorrowedFd, RawFd};

use serde::Serialize;

/// What to apply before the exec.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Hardening {
    /// Inherited descriptors above 2 that stay open for the command (`--keep-fd`).
    pub keep_fds: Vec<RawFd>,
    /// `RLIMIT_NPROC`, soft and hard.
    pub max_processes: Option<u64>,
    /// `RLIMIT_DATA` in bytes, soft and hard.
    pub max_data_bytes: Option<u64>,
}

/// A step that could not be applied: jaula refuses to run (fail closed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HardeningError {
    /// `setrlimit(2)` refused a limit (above the hard limit an unprivileged process has).
    #[error("cannot set {name}: {source}")]
    Limit {
        /// The limit, as `RLIMIT_*`.
        name: &'static str,
        /// The kernel's error.
        #[source]
        source: io::Error,
    },
    /// A descriptor to keep is not open (or is 0, 1 or 2, which are always kept): a typo
    /// that would otherwise leave the command without what it expects.
    #[error("--keep-fd {fd} is not an open descriptor above 2")]
    KeepFd {
        /// The descriptor asked for.
        fd: RawFd,
    },
    /// The inherited descriptors could not be listed or marked, so some could leak into
    /// the cage.
    #[error("cannot list or mark the inherited descriptors close-on-exec: {0}")]
    Descriptors(#[source] io::Error),
}

/// Apply `hardening` to this process: core dumps off (a dump of a caged process would land
/// outside the cage with whatever it read), the resource limits, and every inherited
/// descriptor above 2 marked close-on-exec except the kept ones (a descriptor the owner's
/// terminal or launcher leaked would hand the cage whatever it is open on). Returns one
/// line per step for `--verbose`.
pub fn harden(hardening: &Hardening) -> Result<Vec<String>, HardeningError> {
    use rustix::process::Resource;
    let mut report = Vec::new();
    let set = crate::limits::set_all(&[
        (Resource::Core, "RLIMIT_CORE", Some(0)),
        (Resource::Nproc, "RLIMIT_NPROC", hardening.max_processes),
        (Resource::Data, "RLIMIT_DATA", hardening.max_data_bytes),
    ])
    .map_err(|(name, source)| HardeningError::Limit { name, source })?;
    report.extend(set.iter().map(|(name, v)| format!("{name} {v}/{v}")));
    for &fd in &hardening.keep_fds {
        if fd < 3 || !is_open(fd) {
            return Err(HardeningError::KeepFd { fd });
        }
    }
    let marked = mark_inherited_cloexec(&hardening.keep_fds)?;
    report.push(format!(
        "inherited descriptors: {marked} marked close-on-exec, kept {:?}",
        hardening.keep_fds
    ));
    Ok(report)
}

fn is_open(fd: RawFd) -> bool {
    // SAFETY: the borrow lasts for this one call; fcntl(F_GETFD) on a number that is not
    // an open descriptor only fails with EBADF, which is the answer we want.
    rustix::io::fcntl_getfd(unsafe { BorrowedFd::borrow_raw(fd) }).is_ok()
}

/// Mark every open descriptor above 2 that is not in `keep` close-on-exec; returns how
/// many were open. The candidates are every number below the soft `RLIMIT_NOFILE`
/// (capped): listing `/dev/fd` would itself open one, and macOS has no `close_range`.
fn mark_inherited_cloexec(keep: &[RawFd]) -> Result<usize, HardeningError> {
    use rustix::io::{fcntl_getfd, fcntl_setfd, FdFlags};
    use rustix::process::{getrlimit, Resource};
    // Beyond this, a descriptor could only come from a raised limit; 64 Ki numbers take
    // well under a millisecond of fcntl calls that fail with EBADF.
    const CAP: u64 = 65_536;
    let limit = getrlimit(Resource::Nofile).current.unwrap_or(CAP).min(CAP);
    let last = RawFd::try_from(limit).unwrap_or(RawFd::MAX);
    let mut marked = 0;
    for fd in 3..last {
        if keep.contains(&fd) {
            continue;
        }
        // SAFETY: the borrow lasts for these two calls; on a number that is not open both
        // fail with EBADF and nothing is touched. Setting FD_CLOEXEC on a descriptor this
        // process owns elsewhere (std's own are already close-on-exec) changes nothing
        // before the exec.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let Ok(flags) = fcntl_getfd(borrowed) else {
            continue;
        };
        match fcntl_setfd(borrowed, flags | FdFlags::CLOEXEC) {
            Ok(()) => marked += 1,
            // Closed between the two calls (by another thread: the launcher is single-
            // threaded, a test process is not): nothing is left to mark.
            Err(rustix::io::Errno::BADF) => {}
            Err(e) => return Err(HardeningError::Descriptors(e.into())),
        }
    }
    Ok(marked)
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
