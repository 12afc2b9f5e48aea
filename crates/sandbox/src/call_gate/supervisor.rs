//! The supervisor: answers the cage's guarded calls by making them itself, one module per
//! family: `connect` and `bind` in `socket_calls`, the creation and opening of named files
//! in `file_calls` (the planting guard), a new namespace refused here.
//!
//! It runs in the launching process after the fork, inside the cage's Landlock domain and
//! network namespace (the domain is entered before the fork), so a call it makes on the
//! cage's behalf meets every rule the cage's own call would: Landlock's `MAKE_SOCK`, its
//! TCP rules and its abstract-socket scope. The one difference: where the plan splits a
//! writable directory for writes, this process has it whole and the command a nested
//! domain with the split (`Plan::gate_split`); beneath such a directory the guard answers
//! for the split, and `bind_pathname` places its binds so the kernel cannot be steered. What it adds is one check
//! Landlock below ABI 9 cannot make: a pathname socket is reached only when the cage bound
//! it itself, the policy allows it, or a live cage of the same owner bound it (`peers`).
//!
//! Every answer rests on copies the caller can no longer change: the address is read once
//! into this process, the caller's socket is taken by `pidfd_getfd` (the same open file
//! description, so connecting it connects the caller), and a pathname is resolved once to
//! an `O_PATH` descriptor that the connect then goes through (`/proc/self/fd/N`), so a
//! rename or symlink swap after the check changes nothing.

use std::collections::HashSet;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use jaula_policy::Policy;

use super::file_calls::{
    Blocking, FileAnswer, FileCall, FileCalls, Guard, ProtectedFiles, Reports,
};
use super::peers::FileId;
use super::sys;
use super::tasks::Tasks;

/// What the supervisor answered, for `jaula run -v`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GateCounts {
    /// `connect` calls (any socket family: the filter cannot tell them apart).
    pub(crate) connects: u64,
    /// `bind` calls (any family).
    pub(crate) binds: u64,
    /// Calls on named files: opens for writing, renames, links, removals, new names.
    pub(crate) files: u64,
    /// Of all those, the ones refused.
    pub(crate) refused: u64,
    /// `unshare` and `clone` asking for a new namespace, every one refused: a sandbox of
    /// the command's own (bubblewrap) trying to start.
    pub(crate) namespaces: u64,
}

impl GateCounts {
    /// The one line `jaula run` prints when the command ends after a namespace was refused,
    /// if one was.
    pub(crate) fn nested_sandbox_line(&self) -> Option<String> {
        (self.namespaces > 0).then(|| {
            format!(
                "jaula: the command tried to create new namespaces ({} refused): a sandbox of \
                 its own (bubblewrap, as under Codex) cannot start inside the cage; run it \
                 with that sandbox off (codex --sandbox danger-full-access), jaula is the \
                 sandbox (README, \"Agents in the cage\")",
                self.namespaces
            )
        })
    }
}

impl std::fmt::Display for GateCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "answered {} connect(s), {} bind(s) and {} call(s) on named files; refused {}",
            self.connects, self.binds, self.files, self.refused
        )?;
        if self.namespaces > 0 {
            write!(f, "; refused {} new namespace(s)", self.namespaces)?;
        }
        Ok(())
    }
}

/// The supervisor's state, shared by the threads that serve the cage's calls (see
/// [`Supervisor::serve_until_hang_up`]): what never changes after the start, and what
/// does behind a lock each.
pub(crate) struct Supervisor {
    listener: Arc<OwnedFd>,
    /// One sock_diag socket: a query and its answer must not interleave with another's.
    diag: Mutex<OwnedFd>,
    /// This process's working directory, restored after each bind.
    home_dir: OwnedFd,
    policy: Policy,
    /// The protected paths as files, taken when the supervisor starts (before the
    /// command runs).
    protected_files: ProtectedFiles,
    /// Socket files the cage bound through this supervisor.
    bound: Mutex<HashSet<FileId>>,
    /// The cage's record (a window cage's; a tenant has none), where each bound socket is
    /// written for the owner's other cages, and whose presence lets this cage reach
    /// theirs.
    record: Option<Mutex<std::fs::File>>,
    reports: Reports,
    counts: Mutex<GateCounts>,
    workers: Workers,
    /// The plan's write splits this supervisor's Landlock domain grants whole, if any.
    split: Option<super::TakenSplit>,
    /// The filter's namespace calls (`unshare`, `clone`): only ever notified when they ask
    /// for a namespace, and always refused.
    gate_calls: super::filter::GateSyscalls,
    /// What is kept of each calling thread while it lives.
    tasks: Mutex<Tasks>,
    /// Held shared by a call that only makes, writes or removes an ordinary name, and
    /// exclusively by one that can change what another call's checks rest on (see
    /// `file_calls::Held`).
    names: RwLock<()>,
}

/// What to do with one notification. Every notification gets an answer: only a caller
/// that is gone (the kernel says `ENOENT` for its id) is left without one, since nobody
/// waits for it. When the supervisor cannot act (no descriptor, no memory, no worker) the
/// caller gets that errno, never silence.
enum Answer {
    Now(Result<i64, i32>),
    /// A call that may block (a connect, an open that waits for a FIFO's reader, a lease
    /// break or a device), handed to a worker thread, which answers it.
    Later,
    /// A file opened for the caller: installed in it as the call's result.
    File(OwnedFd, bool),
    /// A call only observed (`umask`): it runs as the caller made it.
    Continue,
}

/// The notification being answered.
pub(super) struct Pending {
    listener: Arc<OwnedFd>,
    id: u64,
}

impl Pending {
    /// `Ok` while the caller still waits in its call. Called after the supervisor has read
    /// what it needs of the caller by thread id (its memory, `/proc/<tid>`) and before it
    /// acts: a thread id is reused only after its thread has gone, and the call of a
    /// thread that has gone is no longer pending, so a valid notification proves that
    /// every read was of the caller.
    pub(super) fn confirm(&self) -> Result<(), i32> {
        match sys::notif_id_valid(self.listener.as_fd(), self.id) {
            Ok(true) => Ok(()),
            Ok(false) => Err(libc::ENOENT),
            Err(e) => Err(errno_or(&e, libc::EAGAIN)),
        }
    }
}

/// The errno of a failed step, or `fallback` when the error carries none.
fn errno_or(e: &io::Error, fallback: i32) -> i32 {
    e.raw_os_error().unwrap_or(fallback)
}

impl Supervisor {
    pub(super) fn new(
        listener: OwnedFd,
        diag: OwnedFd,
        policy: Policy,
        split: Option<super::TakenSplit>,
        record: Option<std::fs::File>,
    ) -> io::Result<Self> {
        let home_dir = sys::open_path(Path::new("."), libc::O_PATH | libc::O_DIRECTORY)?;
        // Only speed depends on it: an older kernel (before 6.6) answers as before.
        let _ = sys::notif_set_sync_wake_up(listener.as_fd());
        let gate_calls = super::filter::GateSyscalls::native()
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOSYS))?;
        Ok(Supervisor {
            listener: Arc::new(listener),
            diag: Mutex::new(diag),
            home_dir,
            protected_files: ProtectedFiles::of(&policy),
            policy,
            bound: Mutex::default(),
            record: record.map(Mutex::new),
            reports: Reports::default(),
            counts: Mutex::default(),
            workers: Workers::new(MAX_WORKERS),
            split,
            gate_calls,
            tasks: Mutex::default(),
            names: RwLock::new(()),
        })
    }

    /// The counters so far.
    pub(crate) fn counts(&self) -> GateCounts {
        let counts = self.counts.lock().map_or_else(|e| *e.into_inner(), |c| *c);
        GateCounts {
            refused: self.reports.refused(),
            ..counts
        }
    }

    /// Add to one counter.
    fn count(&self, which: impl FnOnce(&mut GateCounts)) {
        if let Ok(mut counts) = self.counts.lock() {
            which(&mut counts);
        }
    }

    pub(crate) fn listener(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }

    /// Receive and answer one notification. An error here is the listener's own; a
    /// caller that died meanwhile is not an error.
    pub(crate) fn serve_one(&self) -> io::Result<()> {
        let notif = match sys::notif_recv(self.listener.as_fd()) {
            Ok(n) => n,
            // The caller died between the wake-up and the receive, or a signal came.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.answer_and_send(&notif);
        Ok(())
    }

    /// Receive and answer notifications, waiting in the receive, until no process is left
    /// under the filter (the receive then fails at once and the listener reports hang-up)
    /// or the listener fails (`Err`: the cage must not go on). For a thread of its own
    /// (`unshare(CLONE_FS)` first: see [`file_calls::Held`] for what the threads share).
    pub(crate) fn serve_until_hang_up(&self) -> io::Result<()> {
        loop {
            // Every serving thread waits in the receive, and the kernel wakes them all for
            // each notification (one gets it). Taking turns behind a mutex instead cost
            // more: 79-89 against 69-75 µs per call on an idle 2-vCPU VM, since each turn
            // wakes a thread on the other, idle CPU, where the sync wake-up keeps the
            // woken ones on the caller's.
            match sys::notif_recv(self.listener.as_fd()) {
                Ok(notif) => self.answer_and_send(&notif),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // A caller that died between the wake-up and the receive, or nobody left.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    if sys::has_hung_up(self.listener.as_fd()) {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn answer_and_send(&self, notif: &libc::seccomp_notif) {
        match self.answer(notif) {
            Answer::Now(result) => send(self.listener.as_fd(), notif.id, result),
            Answer::File(fd, cloexec) => send_file(self.listener.as_fd(), notif.id, &fd, cloexec),
            Answer::Continue => {
                // The caller may be gone; nothing waits then.
                let _ = sys::notif_continue(self.listener.as_fd(), notif.id);
            }
            Answer::Later => {}
        }
    }

    fn answer(&self, notif: &libc::seccomp_notif) -> Answer {
        // A new namespace is refused as the deny-list refuses it, whoever asks: nothing of
        // the caller needs reading, and the call never runs.
        if self.gate_calls.is_namespace_call(i64::from(notif.data.nr)) {
            self.count(|c| c.namespaces += 1);
            return Answer::Now(Err(libc::EPERM));
        }
        let tid = notif.pid;
        let args = notif.data.args;
        let nr = i64::from(notif.data.nr);
        if nr == i64::from(self.gate_calls.umask) {
            if let Ok(mut tasks) = self.tasks.lock() {
                tasks.set_umask(tid, args[0] as libc::mode_t);
            }
            return Answer::Continue;
        }
        // A failure here is answered with its errno (EMFILE, ENFILE, ENOMEM): the caller
        // fails the call instead of hanging. If the caller is gone instead (ESRCH), the
        // kernel refuses the answer, which is harmless.
        let known = match self
            .tasks
            .lock()
            .map_err(|_| libc::EAGAIN)
            .and_then(|mut t| t.caller(tid))
        {
            Ok(k) => k,
            Err(errno) => return Answer::Now(Err(errno)),
        };
        let (caller, pidfd) = (known.caller, known.pidfd);
        let pending = Pending {
            listener: Arc::clone(&self.listener),
            id: notif.id,
        };
        if let Some(call) = FileCall::of(nr, &args) {
            self.count(|c| c.files += 1);
            let confirm = || pending.confirm();
            let mut calls = FileCalls {
                caller: &caller,
                pidfd: pidfd.as_fd(),
                confirm: &confirm,
                names: &self.names,
                guard: Guard {
                    policy: &self.policy,
                    files: &self.protected_files,
                    reports: &self.reports,
                    widened: self.split.as_ref().map_or(&[], |s| &s.widened[..]),
                },
            };
            return match calls.answer(call) {
                FileAnswer::Done(result) => Answer::Now(result),
                FileAnswer::Opened(fd, cloexec) => Answer::File(fd, cloexec),
                FileAnswer::Later(blocking) => self.finish_later(notif.id, blocking),
            };
        }
        self.answer_socket_call(notif, &caller, pidfd.as_fd(), &pending)
    }

    /// Finish a file call that waits (a FIFO's reader, a lease break, a device) on a
    /// worker; with every worker busy, the caller gets `EAGAIN` now.
    fn finish_later(&self, id: u64, blocking: Blocking) -> Answer {
        let listener = Arc::clone(&self.listener);
        let job = Box::new(move || match blocking.finish() {
            FileAnswer::Opened(fd, cloexec) => send_file(listener.as_fd(), id, &fd, cloexec),
            FileAnswer::Done(result) => send(listener.as_fd(), id, result),
            // `finish` makes the call itself; it never defers again.
            FileAnswer::Later(_) => send(listener.as_fd(), id, Err(libc::EAGAIN)),
        });
        match self.workers.run(job) {
            Ok(()) => Answer::Later,
            Err(errno) => Answer::Now(Err(errno)),
        }
    }
}
/// Answer notification `id` with `result`. ENOENT is the caller's death: nothing to
/// answer. The ioctl takes the listener's lock interruptibly, so EINTR is tried again
/// rather than leave the caller waiting.
fn send(listener: BorrowedFd<'_>, id: u64, result: Result<i64, i32>) {
    let (val, errno) = match result {
        Ok(v) => (v, 0),
        Err(e) => (0, e),
    };
    while let Err(e) = sys::notif_send(listener, id, val, errno) {
        if e.raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
}

/// Install `fd` in the caller as its call's result; if it cannot be installed (its
/// descriptor table is full, say), the call fails with that errno.
///
/// Installed first, answered after: with the sync wake-up each step is one plain
/// hand-off (about 13 µs for both on a 2-vCPU VM, against 64 µs for the one-step
/// `SECCOMP_ADDFD_FLAG_SEND`, whose caller must install the file and wake the supervisor
/// again). The one cost: a caller interrupted by a signal between the two steps keeps the
/// installed descriptor without learning its number (its call is restarted and opens
/// again), a descriptor of a file it was allowed to open.
fn send_file(listener: BorrowedFd<'_>, id: u64, fd: &OwnedFd, cloexec: bool) {
    loop {
        match sys::notif_addfd(listener, id, fd.as_fd(), cloexec) {
            Ok(number) => return send(listener, id, Ok(i64::from(number))),
            Err(e) => match e.raw_os_error() {
                Some(libc::ENOENT) => return,
                Some(libc::EINTR) => continue,
                errno => return send(listener, id, Err(errno.unwrap_or(libc::EIO))),
            },
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The most worker threads the supervisor keeps. A worker is held for as long as its call
/// waits (a peer's backlog, a FIFO's reader, a lease break: 45 s by default), and each
/// holds the caller's socket or pinned file; the threads count against the uid's
/// `RLIMIT_NPROC` and the cgroup's `pids.max`, which the cage shares. A cage that pins
/// calls on purpose can hold this many threads and no more, while real work rarely has
/// more than a handful waiting at once (a blocking call that nobody holds up ends in
/// microseconds). At the bound a call that would block fails with `EAGAIN` at once,
/// rather than queue behind calls that may wait for ever (a queued connect could be the
/// one that would have released a waiting FIFO writer).
pub(super) const MAX_WORKERS: usize = 64;

/// Threads that finish calls that may block. A thread is started only when none is idle,
/// up to a bound, and stays for the next job: starting one per connect cost more than the
/// connect itself.
struct Workers {
    shared: Arc<(std::sync::Mutex<WorkQueue>, std::sync::Condvar)>,
    bound: usize,
}

#[derive(Default)]
struct WorkQueue {
    jobs: std::collections::VecDeque<Job>,
    idle: usize,
    threads: usize,
}

impl Workers {
    fn new(bound: usize) -> Workers {
        Workers {
            shared: Arc::default(),
            bound,
        }
    }

    /// Hand `job` to an idle worker, or to a new one below the bound. `Err` is the errno
    /// to answer with instead (`EAGAIN` at the bound, or the thread's spawn failure):
    /// the job is then dropped, never run after its caller was answered.
    fn run(&self, job: Job) -> Result<(), i32> {
        let (lock, ready) = &*self.shared;
        let mut queue = lock.lock().map_err(|_| libc::EAGAIN)?;
        if queue.idle > queue.jobs.len() {
            queue.jobs.push_back(job);
            ready.notify_one();
            return Ok(());
        }
        if queue.threads >= self.bound {
            return Err(libc::EAGAIN);
        }
        let shared = Arc::clone(&self.shared);
        // Spawned under the lock: the new thread waits for it before it looks for work,
        // and a failed spawn leaves no job in the queue.
        std::thread::Builder::new()
            .name("jaula-gate-worker".into())
            .spawn(move || worker(&shared))
            .map_err(|e| errno_or(&e, libc::EAGAIN))?;
        queue.threads += 1;
        queue.jobs.push_back(job);
        Ok(())
    }
}

fn worker(shared: &(std::sync::Mutex<WorkQueue>, std::sync::Condvar)) {
    let (lock, ready) = shared;
    let Ok(mut queue) = lock.lock() else { return };
    loop {
        if let Some(job) = queue.jobs.pop_front() {
            drop(queue);
            job();
            queue = match lock.lock() {
                Ok(guard) => guard,
                Err(_) => return,
            };
            continue;
        }
        queue.idle += 1;
        queue = match ready.wait(queue) {
            Ok(guard) => guard,
            Err(_) => return,
        };
        queue.idle -= 1;
    }
}

mod socket_calls;

#[cfg(test)]
#[path = "supervisor_tests.rs"]
mod tests;
