//! The supervisor: answers the cage's `connect` and `bind` calls by making them itself.
//!
//! It runs in the launching process after the fork, inside the same Landlock domain and
//! network namespace as the cage (the domain is entered before the fork), so a call it
//! makes on the cage's behalf meets every rule the cage's own call would: Landlock's
//! `MAKE_SOCK`, its TCP rules and its abstract-socket scope. What it adds is one check
//! Landlock below ABI 9 cannot make: a pathname socket is reached only when the cage bound
//! it itself or the policy allows it.
//!
//! Every answer rests on copies the caller can no longer change: the address is read once
//! into this process, the caller's socket is taken by `pidfd_getfd` (the same open file
//! description, so connecting it connects the caller), and a pathname is resolved once to
//! an `O_PATH` descriptor that the connect then goes through (`/proc/self/fd/N`), so a
//! rename or symlink swap after the check changes nothing.

use std::collections::HashSet;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jaula_policy::{Access, Policy};

use super::sys;

/// The kernel's own identity of a bound socket's file: (major, minor, inode).
type FileId = (u32, u32, u64);

/// Counters for `-v` and the benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GateCounts {
    pub connects: u64,
    pub binds: u64,
    pub renames: u64,
    pub refused: u64,
}

pub struct Supervisor {
    listener: Arc<OwnedFd>,
    diag: OwnedFd,
    /// This process's working directory, restored after each bind.
    home_dir: OwnedFd,
    policy: Policy,
    /// Socket files the cage bound through this supervisor.
    bound: HashSet<FileId>,
    reported: HashSet<PathBuf>,
    counts: GateCounts,
    workers: Workers,
}

/// What to do with one notification.
enum Answer {
    Now(Result<i64, i32>),
    /// A blocking connect, finished by a worker thread.
    Later,
    /// The caller is gone.
    Nobody,
}

impl Supervisor {
    pub(super) fn new(listener: OwnedFd, diag: OwnedFd, policy: Policy) -> io::Result<Self> {
        let home_dir = sys::open_path(Path::new("."), libc::O_PATH | libc::O_DIRECTORY)?;
        Ok(Supervisor {
            listener: Arc::new(listener),
            diag,
            home_dir,
            policy,
            bound: HashSet::new(),
            reported: HashSet::new(),
            counts: GateCounts::default(),
            workers: Workers::default(),
        })
    }

    pub fn counts(&self) -> GateCounts {
        self.counts
    }

    pub fn listener(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }

    /// Receive and answer one notification. An error here is the listener's own; a
    /// caller that died meanwhile is not an error.
    pub fn serve_one(&mut self) -> io::Result<()> {
        let notif = match sys::notif_recv(self.listener.as_fd()) {
            Ok(n) => n,
            // The caller died between the wake-up and the receive, or a signal came.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) => return Ok(()),
            Err(e) => return Err(e),
        };
        let answer = self.answer(&notif);
        if let Answer::Now(result) = answer {
            let (val, errno) = match result {
                Ok(v) => (v, 0),
                Err(e) => (0, e),
            };
            // ENOENT: the caller died while we worked; nothing to answer.
            let _ = sys::notif_send(self.listener.as_fd(), notif.id, val, errno);
        }
        Ok(())
    }

    fn answer(&mut self, notif: &libc::seccomp_notif) -> Answer {
        let tid = notif.pid;
        let args = notif.data.args;
        let Ok(pidfd) = sys::pidfd_for_task(tid) else {
            return Answer::Nobody;
        };
        // After the pidfd: if the id is still valid, `tid` was the caller when the pidfd
        // was opened, so everything read through it below is the caller's.
        if !sys::notif_id_valid(self.listener.as_fd(), notif.id) {
            return Answer::Nobody;
        }
        let nr = i64::from(notif.data.nr);
        if let Some(call) = RenameCall::of(nr, &args) {
            self.counts.renames += 1;
            return Answer::Now(self.rename(tid, &pidfd, call).map(|()| 0));
        }
        let fd = args[0] as i32;
        let socket = match sys::pidfd_getfd(pidfd.as_fd(), fd) {
            Ok(s) => s,
            Err(e) => return Answer::Now(Err(e.raw_os_error().unwrap_or(libc::EBADF))),
        };
        let len = args[2] as u32 as usize;
        if len > std::mem::size_of::<libc::sockaddr_storage>() {
            return Answer::Now(Err(libc::EINVAL));
        }
        let Ok(addr) = sys::read_memory(tid, args[1], len) else {
            return Answer::Now(Err(libc::EFAULT));
        };
        let domain = match sys::socket_domain(socket.as_fd()) {
            Ok(d) => d,
            Err(e) => return Answer::Now(Err(e.raw_os_error().unwrap_or(libc::ENOTSOCK))),
        };
        let pathname = (domain == libc::AF_UNIX)
            .then(|| unix_pathname(&addr))
            .flatten();
        if nr == libc::SYS_bind {
            self.counts.binds += 1;
            let result = match pathname {
                Some(_) => self.bind_pathname(tid, &socket, &addr),
                None => sys::bind_raw(socket.as_fd(), &addr),
            };
            return Answer::Now(result.map(|()| 0));
        }
        self.counts.connects += 1;
        match pathname {
            Some(path) => match self.admit(tid, path) {
                Ok(pin) => {
                    let target = proc_fd_address(pin.as_raw_fd());
                    self.connect(notif.id, socket, target, Some(pin))
                }
                Err(errno) => Answer::Now(Err(errno)),
            },
            None => self.connect(notif.id, socket, addr, None),
        }
    }

    /// Resolve `path` as the caller's connect would (from its working directory,
    /// following symlinks), pin it, and decide. `Ok` holds the pinned socket file.
    fn admit(&mut self, tid: u32, path: &[u8]) -> Result<OwnedFd, i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EACCES);
        let cwd = sys::open_path(
            Path::new(&format!("/proc/{tid}/cwd")),
            libc::O_PATH | libc::O_DIRECTORY,
        )
        .map_err(errno)?;
        let pin = sys::open_at(cwd.as_fd(), path, libc::O_PATH).map_err(errno)?;
        let st = sys::fstat(pin.as_fd()).map_err(errno)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            return Err(libc::ECONNREFUSED);
        }
        let id = (libc::major(st.st_dev), libc::minor(st.st_dev), st.st_ino);
        if self.bound.contains(&id) {
            return Ok(pin);
        }
        // The pinned file's own path decides, not the name the caller used.
        let real = std::fs::read_link(format!("/proc/self/fd/{}", pin.as_raw_fd()))
            .map_err(|_| libc::EACCES)?;
        let decision = self.policy.decide(&real, Access::Connect);
        if decision.allowed {
            return Ok(pin);
        }
        self.counts.refused += 1;
        if self.reported.insert(real.clone()) {
            eprintln!(
                "jaula: refused connect to {}: {}",
                real.display(),
                decision.rule.describe(self.policy.home())
            );
        }
        Err(libc::EACCES)
    }

    fn connect(&mut self, id: u64, socket: OwnedFd, addr: Vec<u8>, pin: Option<OwnedFd>) -> Answer {
        // A blocking connect can wait for a full backlog or a TCP handshake: finish it on a
        // worker thread, so one slow peer cannot stall every other call of the cage.
        if matches!(sys::is_nonblocking(socket.as_fd()), Ok(true)) {
            return Answer::Now(sys::connect_raw(socket.as_fd(), &addr).map(|()| 0));
        }
        let listener = Arc::clone(&self.listener);
        let job = Box::new(move || {
            let result = sys::connect_raw(socket.as_fd(), &addr);
            drop(pin);
            let (val, errno) = match result {
                Ok(()) => (0, 0),
                Err(e) => (0, e),
            };
            let _ = sys::notif_send(listener.as_fd(), id, val, errno);
        });
        match self.workers.run(job) {
            Ok(()) => Answer::Later,
            Err(()) => Answer::Now(Err(libc::EAGAIN)),
        }
    }

    /// Rename from pinned parent directories, unless a side is a protected path. The
    /// names are read once; each parent is resolved once, as the kernel would (following
    /// symlinks), and the rename is made relative to those descriptors, so a swap after the
    /// check moves nothing that was not checked. Landlock's own rules (REFER, MAKE_*,
    /// REMOVE_*) apply to this process as to the cage.
    fn rename(&mut self, tid: u32, pidfd: &OwnedFd, call: RenameCall) -> Result<(), i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EACCES);
        let mut sides = Vec::with_capacity(2);
        for (dirfd, name_ptr) in [(call.old_dir, call.old), (call.new_dir, call.new)] {
            let path = sys::read_cstring(tid, name_ptr).map_err(errno)?;
            let dir = self.caller_dir(tid, pidfd, dirfd)?;
            let (parent, last) = split_last(&path).ok_or(libc::ENOENT)?;
            let parent_fd = sys::open_at(dir.as_fd(), parent, libc::O_PATH | libc::O_DIRECTORY)
                .map_err(errno)?;
            sides.push((parent_fd, last.to_vec()));
        }
        let exchange = call.flags & libc::RENAME_EXCHANGE != 0;
        for (i, (parent_fd, last)) in sides.iter().enumerate() {
            let name = trim_slashes(last);
            if name.is_empty() || name == b"." || name == b".." {
                continue;
            }
            let dir = std::fs::read_link(format!("/proc/self/fd/{}", parent_fd.as_raw_fd()))
                .map_err(|_| libc::EACCES)?;
            let path = dir.join(std::ffi::OsStr::from_bytes(name));
            let decision = self.policy.decide(&path, Access::Write);
            if !decision.allowed && matches!(decision.rule, jaula_policy::Rule::Protected { .. }) {
                self.counts.refused += 1;
                let what = if i == 0 || exchange { "of" } else { "onto" };
                eprintln!(
                    "jaula: refused rename {what} {}: {}",
                    path.display(),
                    decision.rule.describe(self.policy.home())
                );
                return Err(libc::EACCES);
            }
        }
        let (old_parent, old_name) = &sides[0];
        let (new_parent, new_name) = &sides[1];
        sys::renameat2(
            old_parent.as_fd(),
            old_name,
            new_parent.as_fd(),
            new_name,
            call.flags,
        )
    }

    /// The directory a caller's `*at` path is relative to: its working directory for
    /// `AT_FDCWD`, else its descriptor.
    fn caller_dir(&self, tid: u32, pidfd: &OwnedFd, dirfd: i32) -> Result<OwnedFd, i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EBADF);
        if dirfd == libc::AT_FDCWD {
            sys::open_path(
                Path::new(&format!("/proc/{tid}/cwd")),
                libc::O_PATH | libc::O_DIRECTORY,
            )
            .map_err(errno)
        } else {
            sys::pidfd_getfd(pidfd.as_fd(), dirfd).map_err(errno)
        }
    }

    /// Bind the caller's socket to its own address from the caller's working directory,
    /// with its umask, then learn which file the kernel created. The address is passed
    /// unchanged, so `getsockname` later returns what the caller asked for (Python's
    /// multiprocessing hands that name to its clients). Nothing is checked before the bind
    /// (Landlock's `MAKE_SOCK` applies to this process as to the cage), so nothing can be
    /// raced; the file is then asked of the socket itself (sock_diag by the socket's
    /// inode), never looked up by name, which the cage could have swapped for a host socket.
    fn bind_pathname(&mut self, tid: u32, socket: &OwnedFd, addr: &[u8]) -> Result<(), i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EACCES);
        let cwd = sys::open_path(
            Path::new(&format!("/proc/{tid}/cwd")),
            libc::O_PATH | libc::O_DIRECTORY,
        )
        .map_err(errno)?;
        let mask = caller_umask(tid).unwrap_or(0o022);
        sys::fchdir(cwd.as_fd()).map_err(errno)?;
        let old = sys::set_umask(mask);
        let result = sys::bind_raw(socket.as_fd(), addr);
        sys::set_umask(old);
        let _ = sys::fchdir(self.home_dir.as_fd());
        result?;
        if let Ok(st) = sys::fstat(socket.as_fd()) {
            if let Ok(Some((dev, ino))) = sys::unix_socket_file(self.diag.as_fd(), st.st_ino as u32)
            {
                // The kernel's internal dev_t: 12 bits of major above 20 bits of minor.
                self.bound
                    .insert((dev >> 20, dev & 0xf_ffff, u64::from(ino)));
            }
        }
        Ok(())
    }
}

/// One of the rename calls, as `renameat2` arguments.
#[derive(Clone, Copy, Debug)]
struct RenameCall {
    old_dir: i32,
    old: u64,
    new_dir: i32,
    new: u64,
    flags: libc::c_uint,
}

impl RenameCall {
    fn of(nr: i64, args: &[u64; 6]) -> Option<RenameCall> {
        #[cfg(target_arch = "x86_64")]
        if nr == libc::SYS_rename {
            return Some(RenameCall {
                old_dir: libc::AT_FDCWD,
                old: args[0],
                new_dir: libc::AT_FDCWD,
                new: args[1],
                flags: 0,
            });
        }
        let flags = if nr == libc::SYS_renameat2 {
            args[4] as libc::c_uint
        } else if nr == libc::SYS_renameat {
            0
        } else {
            return None;
        };
        Some(RenameCall {
            old_dir: args[0] as i32,
            old: args[1],
            new_dir: args[2] as i32,
            new: args[3],
            flags,
        })
    }
}

/// `a/b/c` → (`a/b`, `c`); `c` → (`.`, `c`); `/c` → (`/`, `c`); `a/b/` → (`a`, `b/`): the
/// trailing slash stays on the last name, where the kernel reads it (the entry must be a
/// directory). `None` for an empty path.
fn split_last(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let trimmed = trim_slashes(path);
    if trimmed.is_empty() {
        return if path.is_empty() {
            None
        } else {
            Some((b"/", b"."))
        };
    }
    Some(match trimmed.iter().rposition(|b| *b == b'/') {
        Some(0) => (b"/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (b".", path),
    })
}

fn trim_slashes(name: &[u8]) -> &[u8] {
    let end = name.iter().rposition(|b| *b != b'/').map_or(0, |i| i + 1);
    &name[..end]
}

type Job = Box<dyn FnOnce() + Send>;

/// Threads that finish blocking connects. A thread is started only when none is idle, and
/// stays for the next job: starting one per connect cost more than the connect itself.
#[derive(Default)]
struct Workers {
    shared: Arc<(std::sync::Mutex<WorkQueue>, std::sync::Condvar)>,
}

#[derive(Default)]
struct WorkQueue {
    jobs: std::collections::VecDeque<Job>,
    idle: usize,
}

impl Workers {
    fn run(&self, job: Job) -> Result<(), ()> {
        let (lock, ready) = &*self.shared;
        let mut queue = lock.lock().map_err(|_| ())?;
        queue.jobs.push_back(job);
        if queue.idle >= queue.jobs.len() {
            ready.notify_one();
            return Ok(());
        }
        drop(queue);
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("jaula-gate-connect".into())
            .spawn(move || worker(&shared))
            .map(|_| ())
            .map_err(|_| ())
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
                Ok(q) => q,
                Err(_) => return,
            };
            continue;
        }
        queue.idle += 1;
        queue = match ready.wait(queue) {
            Ok(q) => q,
            Err(_) => return,
        };
        queue.idle -= 1;
    }
}

/// The path of a unix pathname address (`sun_path` up to its NUL); `None` for an
/// abstract address (leading NUL), an unnamed one, or anything too short.
pub fn unix_pathname(addr: &[u8]) -> Option<&[u8]> {
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
pub fn unix_address(path: &[u8]) -> Vec<u8> {
    let mut addr = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    addr.extend_from_slice(path);
    addr
}

fn proc_fd_address(fd: i32) -> Vec<u8> {
    unix_address(format!("/proc/self/fd/{fd}").as_bytes())
}

fn caller_umask(tid: u32) -> Option<libc::mode_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    libc::mode_t::from_str_radix(value.trim(), 8).ok()
}

#[cfg(test)]
#[path = "supervisor_tests.rs"]
mod tests;
