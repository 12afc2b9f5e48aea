//! The socket family of the gate's calls: `connect` and `bind`. A pathname connect is
//! admitted only to a socket the cage bound, one the policy allows, or one a live cage of
//! the same owner bound (`peers`), and is made through the pinned file; a pathname bind is
//! made here, where the caller asked, with its umask, and recorded; every other address is
//! passed through once the call is confirmed. The file family is `file_calls`.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Mutex};

use jaula_policy::Access;

use super::{send, Answer, Pending, Supervisor};
use crate::cage_record::{self, BoundSocket, Line};
use crate::call_gate::caller_path::{Caller, Target};
use crate::call_gate::file_calls::{self, Guard};
use crate::call_gate::git_dirs::Made;
use crate::call_gate::peers::{self, FileId};
use crate::call_gate::sys;

impl Supervisor {
    /// A `connect` or `bind`: the caller's socket and address read (the socket through its
    /// pidfd, the address from its memory); a pathname bind made by the supervisor where
    /// the caller asked, a pathname connect admitted only to an allowed or peer's socket
    /// and made to the pinned file; every other address passed through once confirmed.
    pub(super) fn answer_socket_call(
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
        if let Some(errno) = crate::call_gate::unreachable::gate_answer(&addr, sock_type) {
            crate::call_gate::unreachable::note(&addr, Err(errno));
            return Answer::Now(Err(errno));
        }
        // A blocking connect can wait for a full backlog or a TCP handshake: finish it on a
        // worker thread, so one slow peer cannot stall every other call of the cage.
        if matches!(sys::is_nonblocking(socket.as_fd()), Ok(true)) {
            let result = sys::connect_raw(socket.as_fd(), &addr);
            crate::call_gate::unreachable::note(&addr, result);
            return Answer::Now(result.map(|()| 0));
        }
        let listener = Arc::clone(&self.listener);
        let job = Box::new(move || {
            let result = sys::connect_raw(socket.as_fd(), &addr);
            crate::call_gate::unreachable::note(&addr, result);
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
#[path = "socket_calls_tests.rs"]
mod tests;
