//! The supervisor: answers the cage's `connect` and `bind` calls by making them itself.
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
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use jaula_policy::{Access, Policy};

use super::caller_path::{Caller, Target};
use super::file_calls::{
    self, Blocking, FileAnswer, FileCall, FileCalls, Guard, ProtectedFiles, Reports,
};
use super::git_dirs::Made;
use super::peers::{self, FileId};
use super::sys;
use super::tasks::Tasks;
use crate::cage_record::{self, BoundSocket, Line};

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

    /// A `connect` or `bind`: the caller's socket and address read (the socket through its
    /// pidfd, the address from its memory); a pathname bind made by the supervisor where
    /// the caller asked, a pathname connect admitted only to an allowed or peer's socket
    /// and made to the pinned file; every other address passed through once confirmed.
    fn answer_socket_call(
        &self,
        notif: &libc::seccomp_notif,
        caller: &Caller,
        pidfd: BorrowedFd<'_>,
        pending: &Pending,
    ) -> Answer {
        let (tid, args, nr) = (notif.pid, notif.data.args, i64::from(notif.data.nr));
        let fd = args[0] as i32;
        let socket = match sys::pidfd_getfd(pidfd, fd) {
            Ok(s) => s,
            Err(e) => return Answer::Now(Err(e.raw_os_error().unwrap_or(libc::EBADF))),
        };
        let len = args[2] as u32 as usize;
        if len > std::mem::size_of::<libc::sockaddr_storage>() {
            return Answer::Now(Err(libc::EINVAL));
        }
        let addr = match sys::read_memory(tid, args[1], len) {
            Ok(a) => a,
            Err(e) if e.raw_os_error() == Some(libc::ENOMEM) => {
                return Answer::Now(Err(libc::ENOMEM))
            }
            Err(_) => return Answer::Now(Err(libc::EFAULT)),
        };
        let domain = match sys::socket_domain(socket.as_fd()) {
            Ok(d) => d,
            Err(e) => return Answer::Now(Err(e.raw_os_error().unwrap_or(libc::ENOTSOCK))),
        };
        let pathname = (domain == libc::AF_UNIX)
            .then(|| unix_pathname(&addr))
            .flatten();
        if nr == libc::SYS_bind {
            self.count(|c| c.binds += 1);
            let result = match pathname {
                Some(path) => self.bind_pathname(caller, pending, &socket, &addr, path),
                None => pending
                    .confirm()
                    .and_then(|()| sys::bind_raw(socket.as_fd(), &addr)),
            };
            return Answer::Now(result.map(|()| 0));
        }
        self.count(|c| c.connects += 1);
        let pin = match pathname.map(|path| self.admit(caller, path)).transpose() {
            Ok(pin) => pin,
            Err(errno) => return Answer::Now(Err(errno)),
        };
        if let Err(errno) = pending.confirm() {
            return Answer::Now(Err(errno));
        }
        match pin {
            Some(pin) => {
                let target = proc_fd_address(pin.as_raw_fd());
                self.connect(notif.id, socket, target, Some(pin))
            }
            None => self.connect(notif.id, socket, addr, None),
        }
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

    /// Resolve `path` as the caller's connect would (from its working directory,
    /// following symlinks), pin it, and decide. `Ok` holds the pinned socket file.
    fn admit(&self, caller: &Caller, path: &[u8]) -> Result<OwnedFd, i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EACCES);
        let start = if path.first() == Some(&b'/') {
            sys::open_path(Path::new("/"), libc::O_PATH | libc::O_DIRECTORY).map_err(errno)?
        } else {
            caller.cwd()?
        };
        let pin = match caller.lookup(caller.locate(start, path)?, true)? {
            Target::Found { file, .. } => file,
            Target::Missing(_) => return Err(libc::ENOENT),
        };
        let st = sys::fstat(pin.as_fd()).map_err(errno)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            return Err(libc::ECONNREFUSED);
        }
        let id = (libc::major(st.st_dev), libc::minor(st.st_dev), st.st_ino);
        if self.bound.lock().is_ok_and(|bound| bound.contains(&id)) {
            return Ok(pin);
        }
        // The pinned file's own path decides, not the name the caller used.
        let real = std::fs::read_link(format!("/proc/self/fd/{}", pin.as_raw_fd()))
            .map_err(|_| libc::EACCES)?;
        let decision = self.policy.decide(&real, Access::Connect);
        if decision.allowed {
            return Ok(pin);
        }
        // Last, since it reads every record: a socket another live cage of this owner
        // bound. Only a window cage looks (one with a record): a tenant's cage reaches
        // its own sockets and the allowed ones, nothing of the owner's windows.
        if self.record.is_some()
            && self.diag.lock().is_ok_and(|diag| {
                peers::binder_of(diag.as_fd(), self.policy.state_home(), id).is_some()
            })
        {
            return Ok(pin);
        }
        self.reports.count();
        if self.reports.first(real.clone()) {
            eprintln!(
                "jaula: refused connect to {}: {}",
                real.display(),
                decision.rule.describe(self.policy.home())
            );
        }
        Err(libc::EACCES)
    }

    fn connect(&self, id: u64, socket: OwnedFd, addr: Vec<u8>, pin: Option<OwnedFd>) -> Answer {
        // Under `none`, a connect to the DNS stub's addresses beyond its UDP port 53 gets
        // the closed network's answer at once (see `unreachable::stub_answer`).
        let sock_type = || sys::socket_type(socket.as_fd()).ok();
        if let Some(errno) = super::unreachable::gate_answer(&addr, sock_type) {
            super::unreachable::note(&addr, Err(errno));
            return Answer::Now(Err(errno));
        }
        // A blocking connect can wait for a full backlog or a TCP handshake: finish it on a
        // worker thread, so one slow peer cannot stall every other call of the cage.
        if matches!(sys::is_nonblocking(socket.as_fd()), Ok(true)) {
            let result = sys::connect_raw(socket.as_fd(), &addr);
            super::unreachable::note(&addr, result);
            return Answer::Now(result.map(|()| 0));
        }
        let listener = Arc::clone(&self.listener);
        let job = Box::new(move || {
            let result = sys::connect_raw(socket.as_fd(), &addr);
            super::unreachable::note(&addr, result);
            drop(pin);
            send(listener.as_fd(), id, result.map(|()| 0));
        });
        match self.workers.run(job) {
            Ok(()) => Answer::Later,
            Err(errno) => Answer::Now(Err(errno)),
        }
    }

    /// Bind the caller's socket to its own address from the caller's working directory,
    /// with its umask, then learn which file the kernel created. The address is passed
    /// unchanged, so `getsockname` later returns what the caller asked for (Python's
    /// multiprocessing hands that name to its clients). The file is then asked of the
    /// socket itself (sock_diag by the socket's inode), never looked up by name, which the
    /// cage could have swapped for a host socket.
    ///
    /// The name is checked first, as every creation is (the planting guard: a protected
    /// name, or one on the way to a protected path). The kernel resolves the address again
    /// after the check, but the bind holds the lock on names exclusively, so no gated call
    /// changes a name (a rename, a symlink, a removal) until it is made. Without
    /// taken-over splits the bind is then made here: Landlock's `MAKE_SOCK` applies to this
    /// process as to the cage. With them, this process may make sockets where the cage may
    /// not (in a split directory's sealed or protected entries), so the place is decided
    /// from pinned directories, and the bind is made
    /// where the kernel cannot be steered: in this thread only when the address names,
    /// without a symlink or `..`, an entry directly inside a widened directory (whose
    /// every ancestor no cage can rename or remove: read-only to it, or widened, which
    /// the gate never moves); otherwise on a thread of its own inside the command's nested
    /// domain, where Landlock answers exactly as for the cage.
    fn bind_pathname(
        &self,
        caller: &Caller,
        pending: &Pending,
        socket: &OwnedFd,
        addr: &[u8],
        path: &[u8],
    ) -> Result<(), i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EACCES);
        let cwd = caller.cwd()?;
        let mask = caller.umask()?;
        // A socket is a name like any other: at a protected path (`.envrc`,
        // `.git/commondir`) or on the way to one (`.claude`) it is refused as a file would
        // be, or the owner's tools find a socket where they read their settings; and a
        // socket named `objects` or `refs` can make a directory git-like, so git's rules
        // apply too. The kernel resolves the address again when it binds, but no other
        // gated call (the only way to change a name) runs before it does.
        let start = if path.first() == Some(&b'/') {
            sys::open_path(Path::new("/"), libc::O_PATH | libc::O_DIRECTORY).map_err(errno)?
        } else {
            caller.cwd()?
        };
        let entry = caller.locate(start, path)?;
        let widened = self.split.as_ref().map_or(&[][..], |s| &s.widened[..]);
        // A bind is made by the kernel from the address, resolved again after these
        // checks: no other call may change a name until it is done.
        let _names = self.names.write().map_err(|_| libc::EAGAIN)?;
        let mut guard = Guard {
            policy: &self.policy,
            files: &self.protected_files,
            reports: &self.reports,
            widened,
        };
        let named = guard.check_entry(&entry, Access::Create, "bind of")?;
        guard.check_on_the_way(&entry, "bind of")?;
        guard.check_git_new(&entry, &named, Made::Other, "bind of")?;
        pending.confirm()?;
        match self.split.as_ref() {
            None => self.bind_here(cwd.as_fd(), mask, socket, addr)?,
            Some(split) => {
                let parent = file_calls::path_of(entry.parent.as_fd())?;
                let cwd_path = file_calls::path_of(cwd.as_fd())?;
                if split.widened.contains(&parent) && names_entry_of(&cwd_path, path, &parent) {
                    self.bind_here(cwd.as_fd(), mask, socket, addr)?;
                } else {
                    bind_in_command_domain(&split.command, cwd.as_fd(), mask, socket, addr)?;
                }
            }
        }
        if let Ok(st) = sys::fstat(socket.as_fd()) {
            let found = self.diag.lock().ok().and_then(|diag| {
                sys::unix_socket_file(diag.as_fd(), st.st_ino as u32, None)
                    .ok()
                    .flatten()
            });
            if let Some((dev, ino)) = found {
                // The kernel's internal dev_t: 12 bits of major above 20 bits of minor.
                let file = (dev >> 20, dev & 0xf_ffff, u64::from(ino));
                if let Ok(mut bound) = self.bound.lock() {
                    bound.insert(file);
                }
                self.record_bound(socket, st.st_ino, file);
            }
        }
        Ok(())
    }

    /// The bind on this thread, from `cwd` and with `mask`.
    fn bind_here(
        &self,
        cwd: BorrowedFd<'_>,
        mask: libc::mode_t,
        socket: &OwnedFd,
        addr: &[u8],
    ) -> Result<(), i32> {
        sys::fchdir(cwd).map_err(|e| e.raw_os_error().unwrap_or(libc::EACCES))?;
        let old = sys::set_umask(mask);
        let result = sys::bind_raw(socket.as_fd(), addr);
        sys::set_umask(old);
        let _ = sys::fchdir(self.home_dir.as_fd());
        result
    }

    /// Write a socket the cage bound into its record, for the owner's other cages. Before
    /// the caller's bind returns, so a peer told of the socket by the caller finds it.
    /// Bookkeeping: a socket that cannot be recorded is only unreachable from the peers.
    fn record_bound(&self, socket: &OwnedFd, socket_ino: u64, file: FileId) {
        let Some(Ok(mut record)) = self.record.as_ref().map(Mutex::lock) else {
            return;
        };
        let Ok(cookie) = sys::socket_cookie(socket.as_fd()) else {
            return;
        };
        let line = Line::Bound(BoundSocket {
            dev_major: file.0,
            dev_minor: file.1,
            ino: file.2,
            socket_ino,
            cookie,
        });
        let _ = cage_record::append(&mut record, &line);
    }
}

/// Whether `path` (the caller's address, relative to `cwd` unless absolute) names an
/// entry directly inside `parent` in plain words: no `..`, and `parent` reached by the very
/// names written (the pinned lookup found no symlink on the way, or its real path would
/// differ from the words).
fn names_entry_of(cwd: &Path, path: &[u8], parent: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(path));
    let full = cwd.join(path);
    !full
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
        && full.file_name().is_some()
        && full.parent() == Some(parent)
}

/// Bind on a thread of its own that entered the command's nested domain, with its own
/// working directory and umask (`unshare(CLONE_FS)`), so Landlock answers the bind as it
/// would the command's own.
fn bind_in_command_domain(
    domain: &crate::landlock::WritesDomain,
    cwd: BorrowedFd<'_>,
    mask: libc::mode_t,
    socket: &OwnedFd,
    addr: &[u8],
) -> Result<(), i32> {
    let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EACCES);
    std::thread::scope(|scope| {
        let bind = scope.spawn(|| -> Result<(), i32> {
            sys::unshare_fs().map_err(errno)?;
            domain.enter().map_err(|_| libc::EACCES)?;
            sys::fchdir(cwd).map_err(errno)?;
            sys::set_umask(mask);
            sys::bind_raw(socket.as_fd(), addr)
        });
        bind.join().unwrap_or(Err(libc::EAGAIN))
    })
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

/// The path of a unix pathname address (`sun_path` up to its NUL); `None` for an
/// abstract address (leading NUL), an unnamed one, or anything too short.
pub(crate) fn unix_pathname(addr: &[u8]) -> Option<&[u8]> {
    let path = addr.get(2..)?;
    if path.first().is_none_or(|b| *b == 0) {
        return None;
    }
    Some(match path.iter().position(|b| *b == 0) {
        Some(end) => &path[..end],
        None => path,
    })
}

/// A `sockaddr_un` for `path` (no trailing NUL needed: the length bounds it).
pub(crate) fn unix_address(path: &[u8]) -> Vec<u8> {
    let mut addr = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    addr.extend_from_slice(path);
    addr
}

fn proc_fd_address(fd: i32) -> Vec<u8> {
    unix_address(format!("/proc/self/fd/{fd}").as_bytes())
}

#[cfg(test)]
#[path = "supervisor_tests.rs"]
mod tests;
