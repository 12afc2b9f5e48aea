//! What the supervisor keeps of each calling thread while it lives: a pidfd (for the
//! caller's descriptors), its `/proc/<tid>` directory (for its working directory), its
//! thread group and its umask. Opening these for every call cost more than the rest of
//! the call's checks; kept, a call pays one `poll` of the pidfd to learn that the thread
//! is still the one they were taken from.
//!
//! Why each fact stays true:
//! - A thread id is reused only after its thread has exited, and a pidfd that pins exactly
//!   that thread (`PIDFD_THREAD`, or a group leader's) becomes readable when it exits: an
//!   entry whose pidfd is readable is dropped, and the id learnt afresh.
//! - The `/proc/<tid>` directory pins the thread, not its number: a lookup in it fails
//!   once the thread is gone, and never reaches another task.
//! - The umask changes only through `umask(2)`, which the gate's filter notifies: the
//!   supervisor sets the new mask for every known thread of the caller's group before the
//!   call runs. Threads share one mask unless they were made without `CLONE_FS` or left it
//!   with `unshare(CLONE_FS)` (no thread library does either); such a thread's files get
//!   its group's mask (docs/security.md). A thread seen for the first time takes the mask
//!   of a live known thread of its group, else the one `/proc/<tid>/status` shows: a
//!   notified `umask` of the group is then always seen, even one whose call has not run
//!   yet when `/proc` is read.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};

use super::caller_path::Caller;
use super::sys;

/// How many kept threads make the table look for exited ones to drop (each kept thread
/// holds two descriptors of the supervisor's); after a look, twice as many as are left.
const PRUNE_FLOOR: usize = 128;
/// The most threads kept at once, whatever the descriptor limit allows.
const MAX_KNOWN: usize = 4096;

/// One thread's kept facts.
#[derive(Debug)]
struct Task {
    pidfd: Arc<OwnedFd>,
    dir: Arc<OwnedFd>,
    tgid: u32,
    umask: libc::mode_t,
}

/// The threads that called, by thread id.
#[derive(Debug)]
pub(super) struct Tasks {
    known: HashMap<u32, Task>,
    /// The size at which exited threads are next dropped.
    prune_at: usize,
    /// The most kept at once: a quarter of the supervisor's descriptor limit (two each,
    /// and half the limit left for the calls' own), at most [`MAX_KNOWN`].
    bound: usize,
}

impl Default for Tasks {
    fn default() -> Tasks {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let bound = usize::try_from(limit / 4).unwrap_or(MAX_KNOWN);
        Tasks::bounded(bound.clamp(1, MAX_KNOWN))
    }
}

/// A caller and the pidfd of its process or thread (for `pidfd_getfd`).
pub(super) struct Known {
    pub(super) caller: Caller,
    pub(super) pidfd: Arc<OwnedFd>,
}

impl Tasks {
    /// The thread `tid`, from what is kept when it is still the thread it was taken from;
    /// else learnt now. A kernel that cannot pin a thread exactly (before `PIDFD_THREAD`,
    /// for a thread that does not lead its group) gets nothing kept: its facts are read
    /// for every call, as the caller's own path lookups would.
    pub(super) fn caller(&mut self, tid: u32) -> Result<Known, i32> {
        if let Some(task) = self.known.get(&tid) {
            if !sys::has_exited(task.pidfd.as_fd()) {
                return Ok(task.known(tid));
            }
            self.known.remove(&tid);
        }
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EAGAIN);
        let Some(pidfd) = sys::pidfd_for_exact_task(tid).map_err(errno)? else {
            let pidfd = sys::pidfd_for_task(tid).map_err(errno)?;
            return Ok(Known {
                caller: Caller::new(tid),
                pidfd: Arc::new(pidfd),
            });
        };
        let task = self.learn(tid, pidfd)?;
        let known = task.known(tid);
        self.make_room();
        self.known.insert(tid, task);
        Ok(known)
    }

    fn bounded(bound: usize) -> Tasks {
        Tasks {
            known: HashMap::new(),
            prune_at: PRUNE_FLOOR.min(bound),
            bound,
        }
    }

    /// Room for one more: past `prune_at` the exited threads are dropped, and past the
    /// bound live ones too (any: each is learnt again at its next call).
    fn make_room(&mut self) {
        if self.known.len() < self.prune_at {
            return;
        }
        self.known
            .retain(|_, task| !sys::has_exited(task.pidfd.as_fd()));
        while self.known.len() >= self.bound {
            let Some(tid) = self.known.keys().next().copied() else {
                break;
            };
            self.known.remove(&tid);
        }
        self.prune_at = (self.known.len() * 2).clamp(PRUNE_FLOOR.min(self.bound), self.bound);
    }

    /// Thread `tid` sets its umask to `mask`: so do the known threads of its group.
    pub(super) fn set_umask(&mut self, tid: u32, mask: libc::mode_t) {
        if self.caller(tid).is_err() {
            return;
        }
        let Some(tgid) = self.known.get(&tid).map(|t| t.tgid) else {
            return;
        };
        for task in self.known.values_mut().filter(|t| t.tgid == tgid) {
            task.umask = mask & 0o777;
        }
    }

    fn learn(&self, tid: u32, pidfd: OwnedFd) -> Result<Task, i32> {
        let errno = |e: rustix::io::Errno| e.raw_os_error();
        let dir = rustix::fs::open(
            format!("/proc/{tid}"),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        let status = rustix::fs::openat(
            &dir,
            "status",
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        let mut text = Vec::with_capacity(2048);
        std::io::Read::read_to_end(&mut std::fs::File::from(status), &mut text)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        // Still alive after the directory was opened: the directory is that thread's.
        if sys::has_exited(pidfd.as_fd()) {
            return Err(libc::ESRCH);
        }
        let (tgid, own_umask) = parse_status(&text).ok_or(libc::ESRCH)?;
        let umask = self
            .known
            .values()
            .find(|t| t.tgid == tgid && !sys::has_exited(t.pidfd.as_fd()))
            .map_or(own_umask, |sibling| sibling.umask);
        Ok(Task {
            pidfd: Arc::new(pidfd),
            dir: Arc::new(dir),
            tgid,
            umask,
        })
    }
}

impl Task {
    fn known(&self, tid: u32) -> Known {
        Known {
            caller: Caller::kept(tid, self.tgid, Arc::clone(&self.dir), self.umask),
            pidfd: Arc::clone(&self.pidfd),
        }
    }
}

/// The thread group and umask `/proc/<tid>/status` shows (a kernel before 4.7 shows no
/// umask: 0o022, the usual one).
pub(super) fn parse_status(text: &[u8]) -> Option<(u32, libc::mode_t)> {
    let text = std::str::from_utf8(text).ok()?;
    let tgid = text
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())?;
    let umask = text
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| libc::mode_t::from_str_radix(v.trim(), 8).ok())
        .unwrap_or(0o022);
    Some((tgid, umask))
}

#[cfg(test)]
#[path = "tasks_tests.rs"]
mod tests;
