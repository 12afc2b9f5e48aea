//! Handing a [`LaunchPlan`] to the stage jaula starts: a sealed memfd on a fixed descriptor.
//!
//! The plan is written into a memfd, which is then sealed against every change
//! (`F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK`, then `F_SEAL_SEAL` so no seal can be
//! lifted or added), and the child finds it on [`PLAN_FD`]. The number is fixed, never
//! passed in a flag or a variable: nothing on a command line or in an environment a user
//! (or a caged process, writing a later launcher's environment) controls can point jaula
//! at another plan. The reader insists on a memfd carrying all four seals, so a plain file
//! or pipe left on that number is refused rather than read.
//!
//! A stage started by hand with a forged memfd gains nothing: it only confines the process
//! that started it, and any cage that process is already in still holds (Landlock domains
//! and seccomp filters stack, and only ever narrow).

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::fs::{MemfdFlags, SealFlags};

use crate::launch_plan::{LaunchPlan, PlanError};

/// Where a stage finds its plan. High enough to stay clear of the descriptors callers pass
/// through with `--keep-fd` and shells keep for themselves (3..9, 10.., bash's 255), and
/// below the usual 1024 `RLIMIT_NOFILE` soft limit.
pub const PLAN_FD: RawFd = 1000;

/// A plan that larger is not one jaula wrote (a policy is a few kilobytes; a big home
/// a few hundred).
const MAX_PLAN_BYTES: u64 = 64 << 20;

/// The seals a plan's memfd must carry: contents, size and the seal set itself fixed.
fn required_seals() -> SealFlags {
    SealFlags::WRITE | SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL
}

/// A plan written and sealed, ready to be handed to a child.
#[derive(Debug)]
pub struct SealedPlan {
    fd: OwnedFd,
}

impl SealedPlan {
    /// Write `plan` into a new memfd and seal it. The memfd is close-on-exec: only
    /// [`SealedPlan::hand_to`] places it in a child.
    pub fn new(plan: &LaunchPlan) -> Result<SealedPlan, PlanError> {
        // Said here, in words: a failed dup2 in the child reaches the parent as a bare
        // EBADF on the program's name.
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        if limit.is_some_and(|n| n <= PLAN_FD as u64) {
            return Err(PlanError::NoRoom {
                fd: PLAN_FD,
                limit: limit.unwrap_or_default(),
            });
        }
        let bytes = plan.to_bytes()?;
        let fd = rustix::fs::memfd_create(
            "jaula-launch-plan",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )
        .map_err(std::io::Error::from)?;
        let mut file = std::fs::File::from(fd);
        file.write_all(&bytes)?;
        // Back to the start: the child's copy shares this offset, and a reader that does
        // not seek (`cat` on the inherited descriptor while debugging) should see the whole plan.
        file.seek(SeekFrom::Start(0))?;
        rustix::fs::fcntl_add_seals(&file, required_seals()).map_err(std::io::Error::from)?;
        Ok(SealedPlan { fd: file.into() })
    }

    /// Place the plan on [`PLAN_FD`] in the child `command` starts (at its exec, after
    /// std has set up the child's stdio). `dup2` clears close-on-exec on the copy; when
    /// the memfd already sits on that number the flag is cleared instead. The caller keeps
    /// `self` alive until the child has been spawned.
    pub fn hand_to(&self, command: &mut Command) {
        let source = self.fd.as_raw_fd();
        // SAFETY: the closure runs in the forked child before exec and only makes two
        // async-signal-safe system calls (dup2, fcntl) on descriptor numbers; it touches
        // no memory shared with the parent and takes no lock. `source` is open in the
        // child: `self` outlives the spawn (documented above) and fork copies the table.
        unsafe {
            command.pre_exec(move || {
                if source == PLAN_FD {
                    if libc::fcntl(PLAN_FD, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(source, PLAN_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Read the plan this stage inherited on [`PLAN_FD`], then close that descriptor so the
/// command never sees it.
pub fn take_inherited() -> Result<LaunchPlan, PlanError> {
    let not_inherited = |reason: String| PlanError::NotInherited {
        fd: PLAN_FD,
        reason,
    };
    // SAFETY: the borrow lasts for this one call; F_GETFD on a number that is not open only
    // fails with EBADF, which is the answer we want.
    rustix::io::fcntl_getfd(unsafe { BorrowedFd::borrow_raw(PLAN_FD) })
        .map_err(|e| not_inherited(std::io::Error::from(e).to_string()))?;
    // SAFETY: the descriptor is open (checked above) and is this stage's plan by the
    // convention of this module; nothing else in jaula owns it, and taking ownership closes
    // it when read.
    let fd = unsafe { OwnedFd::from_raw_fd(PLAN_FD) };
    read_sealed(fd)
}

/// Read a plan from `fd`, which must be a memfd carrying every required seal.
fn read_sealed(fd: OwnedFd) -> Result<LaunchPlan, PlanError> {
    let not_inherited = |reason: String| PlanError::NotInherited {
        fd: fd.as_raw_fd(),
        reason,
    };
    // F_GET_SEALS fails with EINVAL on anything that is not a memfd (or shmem file).
    let seals = rustix::fs::fcntl_get_seals(&fd)
        .map_err(|e| not_inherited(format!("not a sealed memfd ({e})")))?;
    if !seals.contains(required_seals()) {
        return Err(not_inherited(format!(
            "the memfd is not sealed against change (seals {seals:?})"
        )));
    }
    let mut file = std::fs::File::from(fd);
    // The writer left the offset at the end; the seals make the contents final.
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.take(MAX_PLAN_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PLAN_BYTES {
        return Err(PlanError::Malformed(format!(
            "larger than {MAX_PLAN_BYTES} bytes"
        )));
    }
    LaunchPlan::from_bytes(&bytes)
}

#[cfg(test)]
#[path = "plan_fd_tests.rs"]
mod tests;
