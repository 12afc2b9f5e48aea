//! The system calls the gate needs and nothing else wraps: the seccomp listener and its
//! ioctls, pidfds, reading the caller's memory, and one sock_diag query.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use seccompiler::sock_filter;

fn cvt(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn owned(ret: libc::c_long) -> io::Result<OwnedFd> {
    let fd = cvt(ret)?;
    let fd = RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the kernel just returned `fd` as a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Install `program` on the calling thread and get the listener of its notifications.
/// no_new_privs must already be set.
pub(crate) fn install_filter_with_listener(program: &[sock_filter]) -> io::Result<OwnedFd> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points at `program`, which outlives the call; the kernel copies the
    // instructions before returning. seccompiler's sock_filter has libc's layout.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        )
    };
    owned(ret)
}

/// A pidfd for the task `tid` (a thread id, as notifications carry). PIDFD_THREAD
/// (Linux 6.9) takes any thread; before it only a thread-group leader is accepted, so a
/// non-leader falls back to its group's pidfd, which pins the same process.
pub(crate) fn pidfd_for_task(tid: u32) -> io::Result<OwnedFd> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    let open = |pid: libc::pid_t, flags: libc::c_uint| {
        // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1.
        owned(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) })
    };
    let pid = libc::pid_t::try_from(tid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    match open(pid, PIDFD_THREAD) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match open(pid, 0) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => open(thread_group_of(tid)?, 0),
            other => other,
        },
        other => other,
    }
}

fn thread_group_of(tid: u32) -> io::Result<libc::pid_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))
}

/// A duplicate of descriptor `fd` of the process behind `pidfd`: the same open file
/// description, so a `connect` on it connects the caller's socket.
pub(crate) fn pidfd_getfd(pidfd: BorrowedFd<'_>, fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd takes integers only and returns a new descriptor or -1.
    owned(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) })
}

/// The next notification. The kernel requires the buffer to be zeroed.
pub(crate) fn notif_recv(listener: BorrowedFd<'_>) -> io::Result<libc::seccomp_notif> {
    // SAFETY: seccomp_notif is plain integers; all-zero is a valid value.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one seccomp_notif into `notif`, which is that size.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &mut notif as *mut libc::seccomp_notif,
        )
    };
    cvt(ret.into())?;
    Ok(notif)
}

/// Whether notification `id` is still pending: its caller has not died (or been
/// replaced by a process reusing its pid) since it was received. `Err` when the kernel
/// could not tell (its lock is taken interruptibly: EINTR), which is not a dead caller.
pub(crate) fn notif_id_valid(listener: BorrowedFd<'_>, id: u64) -> io::Result<bool> {
    // SAFETY: the ioctl reads one u64 from `id`.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &id as *const u64,
        )
    };
    match cvt(ret.into()) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Answer notification `id`: the call returns `val`, or fails with `errno` when not 0.
pub(crate) fn notif_send(
    listener: BorrowedFd<'_>,
    id: u64,
    val: i64,
    errno: i32,
) -> io::Result<()> {
    send_response(
        listener,
        &libc::seccomp_notif_resp {
            id,
            val,
            error: -errno,
            flags: 0,
        },
    )
}

fn send_response(listener: BorrowedFd<'_>, resp: &libc::seccomp_notif_resp) -> io::Result<()> {
    // SAFETY: the ioctl reads one seccomp_notif_resp from `resp`.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            resp as *const libc::seccomp_notif_resp,
        )
    };
    cvt(ret.into()).map(|_| ())
}

/// Ask the kernel to wake the supervisor on the caller's CPU, and the caller on the
/// supervisor's (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6): a gated call is a strict
/// hand-off, one side sleeps while the other runs, and the cross-CPU wake-up was half of
/// its cost. `Err` on an older kernel, where calls only take longer.
pub(crate) fn notif_set_sync_wake_up(listener: BorrowedFd<'_>) -> io::Result<()> {
    const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
    // SAFETY: the ioctl takes its flags by value and touches no memory of ours.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
        )
    };
    cvt(ret.into()).map(|_| ())
}

/// Let notification `id`'s call run as the caller made it
/// (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): only for a call the supervisor merely observes
/// (`umask`), never for one it decides on, since the kernel reads the arguments again.
pub(crate) fn notif_continue(listener: BorrowedFd<'_>, id: u64) -> io::Result<()> {
    send_response(
        listener,
        &libc::seccomp_notif_resp {
            id,
            val: 0,
            error: 0,
            flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        },
    )
}

/// A pidfd that pins exactly the task `tid` (`PIDFD_THREAD`, Linux 6.9, or a thread-group
/// leader's own pidfd), so that it reports that task's exit and no other's; `None` when
/// the kernel can only give the group's.
pub(crate) fn pidfd_for_exact_task(tid: u32) -> io::Result<Option<OwnedFd>> {
    let open = |pid: libc::pid_t, flags: libc::c_uint| {
        // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1.
        owned(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) })
    };
    let pid = libc::pid_t::try_from(tid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    match open(pid, libc::PIDFD_THREAD) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match open(pid, 0) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(None),
            other => other.map(Some),
        },
        other => other.map(Some),
    }
}

/// Whether the task behind `pidfd` has exited (its pidfd is readable then).
pub(crate) fn has_exited(pidfd: BorrowedFd<'_>) -> bool {
    // A poll that fails says nothing about the task: treat it as gone, which only costs a
    // fresh look.
    poll_now(pidfd, libc::POLLIN).is_none_or(|revents| revents != 0)
}

/// The events `fd` reports now (without waiting), or `None` when the poll fails.
fn poll_now(fd: BorrowedFd<'_>, events: libc::c_short) -> Option<libc::c_short> {
    let mut fds = [libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    }];
    // SAFETY: `fds` is one valid pollfd that outlives the call; a zero timeout never waits.
    let ret = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    (ret >= 0).then_some(fds[0].revents)
}

/// Whether the listener reports hang-up: no process is left under its filter.
pub(crate) fn has_hung_up(listener: BorrowedFd<'_>) -> bool {
    poll_now(listener, 0)
        .is_none_or(|revents| revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0)
}

/// `len` bytes at `addr` in task `tid`'s memory.
pub(crate) fn read_memory(tid: u32, addr: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Ok(buf);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: len,
    };
    let pid = libc::pid_t::try_from(tid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: `local` covers `buf`, which is `len` bytes and outlives the call; the remote
    // side is only read, in the other process, and faults there come back as EFAULT.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    let n = cvt(n as libc::c_long)? as usize;
    if n != len {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(buf)
}

fn int_sockopt(fd: BorrowedFd<'_>, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`, which is that size.
    let ret = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    cvt(ret.into())?;
    Ok(value)
}

/// The address family the socket was created with.
pub(crate) fn socket_domain(fd: BorrowedFd<'_>) -> io::Result<libc::c_int> {
    int_sockopt(fd, libc::SO_DOMAIN)
}

/// The socket's type (`SOCK_STREAM`, `SOCK_DGRAM`, ...), without the creation flags.
pub(crate) fn socket_type(fd: BorrowedFd<'_>) -> io::Result<libc::c_int> {
    int_sockopt(fd, libc::SO_TYPE)
}

/// Whether the open file description has O_NONBLOCK (shared with the caller's copy).
pub(crate) fn is_nonblocking(fd: BorrowedFd<'_>) -> io::Result<bool> {
    // SAFETY: F_GETFL takes no pointer.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    Ok(cvt(flags.into())? as libc::c_int & libc::O_NONBLOCK != 0)
}

/// `connect(2)` with raw address bytes; the errno on failure.
pub(crate) fn connect_raw(fd: BorrowedFd<'_>, addr: &[u8]) -> Result<(), i32> {
    sock_call(fd, addr, libc::connect)
}

/// `bind(2)` with raw address bytes; the errno on failure.
pub(crate) fn bind_raw(fd: BorrowedFd<'_>, addr: &[u8]) -> Result<(), i32> {
    sock_call(fd, addr, libc::bind)
}

type SockCall = unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> i32;

fn sock_call(fd: BorrowedFd<'_>, addr: &[u8], call: SockCall) -> Result<(), i32> {
    // The kernel copies the address into a sockaddr_storage: give it an aligned one.
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::sockaddr_storage>();
    if addr.len() > size {
        return Err(libc::EINVAL);
    }
    // SAFETY: `addr.len()` bytes fit in `storage` (checked above); the regions are distinct.
    unsafe {
        std::ptr::copy_nonoverlapping(
            addr.as_ptr(),
            (&mut storage as *mut libc::sockaddr_storage).cast::<u8>(),
            addr.len(),
        )
    };
    // SAFETY: `storage` holds `addr.len()` initialised bytes and outlives the call.
    let ret = unsafe {
        call(
            fd.as_raw_fd(),
            (&storage as *const libc::sockaddr_storage).cast(),
            addr.len() as libc::socklen_t,
        )
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    }
}

/// `open(path, flags)`.
pub(crate) fn open_path(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `path` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
    owned(fd.into())
}

/// `fstat`.
pub(crate) fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // SAFETY: all-zero is a valid `stat`, which fstat fills.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer for the call.
    let ret = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) };
    cvt(ret.into())?;
    Ok(st)
}

/// `fchdir`: the gate binds by a short relative name from the pinned parent directory,
/// so the address never grows past the caller's own.
pub(crate) fn fchdir(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fchdir takes an integer.
    cvt(unsafe { libc::fchdir(fd.as_raw_fd()) }.into()).map(|_| ())
}

/// Give the calling thread its own working directory and umask: a thread of the
/// supervisor that must `fchdir` without moving the others.
pub(crate) fn unshare_fs() -> io::Result<()> {
    // SAFETY: unshare takes flags only; CLONE_FS copies this thread's fs_struct, no memory
    // of ours is touched.
    cvt(unsafe { libc::unshare(libc::CLONE_FS) }.into()).map(|_| ())
}

/// Set the umask, returning the old one.
pub(crate) fn set_umask(mask: libc::mode_t) -> libc::mode_t {
    // SAFETY: umask takes and returns an integer and cannot fail.
    unsafe { libc::umask(mask) }
}

/// Make this process non-dumpable: a same-uid process (the cage) can then neither read
/// nor write its memory through /proc or ptrace.
pub(crate) fn set_not_dumpable() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    cvt(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) }.into()).map(|_| ())
}

/// A NETLINK_SOCK_DIAG socket, in this process's network namespace.
pub(crate) fn open_sock_diag() -> io::Result<OwnedFd> {
    const NETLINK_SOCK_DIAG: libc::c_int = 4;
    // SAFETY: socket takes integers only.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    owned(fd.into())
}

/// The socket's `SO_COOKIE`: a 64-bit number the kernel gives it (on first asking) and
/// never gives another socket.
pub(crate) fn socket_cookie(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut value: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`, which is that size.
    let ret = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_COOKIE,
            (&mut value as *mut u64).cast(),
            &mut len,
        )
    };
    cvt(ret.into())?;
    Ok(value)
}

/// The filesystem object a bound unix socket is bound to, as the kernel's own device
/// number (`MAJOR << 20 | MINOR`) and inode number, asked by the socket's inode number.
/// With a `cookie`, only the socket that carries it answers (`sock_diag_check_cookie`):
/// a socket since closed, or another that got its inode number, is `None`. Only sockets of
/// this process's network namespace are found (`unix_lookup_by_ino`).
pub(crate) fn unix_socket_file(
    diag: BorrowedFd<'_>,
    sock_ino: u32,
    cookie: Option<u64>,
) -> io::Result<Option<(u32, u32)>> {
    // include/uapi/linux/sock_diag.h, unix_diag.h.
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const UDIAG_SHOW_VFS: u32 = 0x02;
    const UNIX_DIAG_VFS: u16 = 1;
    #[repr(C)]
    struct Request {
        header: libc::nlmsghdr,
        family: u8,
        protocol: u8,
        pad: u16,
        states: u32,
        ino: u32,
        show: u32,
        cookie: [u32; 2],
    }
    let request = Request {
        header: libc::nlmsghdr {
            nlmsg_len: std::mem::size_of::<Request>() as u32,
            nlmsg_type: SOCK_DIAG_BY_FAMILY,
            nlmsg_flags: libc::NLM_F_REQUEST as u16,
            nlmsg_seq: sock_ino,
            nlmsg_pid: 0,
        },
        family: libc::AF_UNIX as u8,
        protocol: 0,
        pad: 0,
        states: u32::MAX,
        ino: sock_ino,
        show: UDIAG_SHOW_VFS,
        // Low half first (sock_diag_check_cookie); INET_DIAG_NOCOOKIE in both halves
        // looks the socket up by inode alone.
        cookie: match cookie {
            Some(c) => [c as u32, (c >> 32) as u32],
            None => [u32::MAX, u32::MAX],
        },
    };
    // SAFETY: `request` is a plain repr(C) value of the size given.
    let sent = unsafe {
        libc::send(
            diag.as_raw_fd(),
            (&request as *const Request).cast(),
            std::mem::size_of::<Request>(),
            0,
        )
    };
    cvt(sent as libc::c_long)?;
    let mut buf = [0u8; 1024];
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::recv(diag.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    let n = cvt(n as libc::c_long)? as usize;
    parse_unix_diag_vfs(&buf[..n], UNIX_DIAG_VFS)
}

fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The VFS attribute of one sock_diag answer; an NLMSG_ERROR answer is that error.
fn parse_unix_diag_vfs(msg: &[u8], vfs_type: u16) -> io::Result<Option<(u32, u32)>> {
    const NLMSG_HDR: usize = 16;
    const UNIX_DIAG_MSG: usize = 16;
    let bad = || io::Error::from_raw_os_error(libc::EPROTO);
    let kind = le_u16(msg, 4).ok_or_else(bad)?;
    if kind == libc::NLMSG_ERROR as u16 {
        let errno = le_u32(msg, NLMSG_HDR).ok_or_else(bad)? as i32;
        return match -errno {
            0 => Ok(None),
            // No such socket, or not the one with that cookie.
            libc::ENOENT | libc::ESTALE => Ok(None),
            e => Err(io::Error::from_raw_os_error(e)),
        };
    }
    let total = le_u32(msg, 0).ok_or_else(bad)? as usize;
    let mut at = NLMSG_HDR + UNIX_DIAG_MSG;
    while at + 4 <= total.min(msg.len()) {
        let len = le_u16(msg, at).ok_or_else(bad)? as usize;
        let kind = le_u16(msg, at + 2).ok_or_else(bad)?;
        if len < 4 {
            return Err(bad());
        }
        if kind == vfs_type {
            let ino = le_u32(msg, at + 4).ok_or_else(bad)?;
            let dev = le_u32(msg, at + 8).ok_or_else(bad)?;
            return Ok(Some((dev, ino)));
        }
        at += (len + 3) & !3;
    }
    Ok(None)
}

/// `poll(2)` without a timeout.
pub(crate) fn poll(fds: &mut [libc::pollfd]) -> io::Result<usize> {
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures for the call.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
    cvt(n.into()).map(|n| n as usize)
}

/// Send `signo` to `pid`; a child that is already gone is not an error worth reporting.
pub(crate) fn kill(pid: libc::pid_t, signo: libc::c_int) {
    // SAFETY: kill takes integers only.
    unsafe { libc::kill(pid, signo) };
}

/// Reap `pid` and return how it ended.
pub(crate) fn wait_exit(pid: libc::pid_t) -> io::Result<std::process::ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; waitpid takes integers otherwise.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            return Ok(std::process::ExitStatus::from_raw(status));
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// Reap every child that has ended, without waiting: the supervisor is a child subreaper,
/// so the processes the command leaves behind become its children when their parents end,
/// and each must be reaped for the kernel to release its hold on the filter.
pub(crate) fn reap_all() -> Vec<(libc::pid_t, std::process::ExitStatus)> {
    use std::os::unix::process::ExitStatusExt;
    let mut reaped = Vec::new();
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid out-pointer; waitpid takes integers otherwise.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            reaped.push((pid, std::process::ExitStatus::from_raw(status)));
            continue;
        }
        if pid < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        // 0: children left, none ended; ECHILD: none left.
        return reaped;
    }
}

/// SIGKILL every child of this process. Only children: a child is not reaped until this
/// process reaps it, so its pid cannot name anyone else meanwhile. The supervisor is the
/// cage's child subreaper, so the children of a killed child become its own, and the next
/// call (at the next SIGCHLD) reaches them: the cage ends level by level, and a process
/// with SIGKILL pending forks nothing more.
pub(crate) fn kill_children() {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for task in tasks.filter_map(Result::ok) {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in children.split_whitespace().filter_map(|p| p.parse().ok()) {
            kill(pid, libc::SIGKILL);
        }
    }
}

/// Become the child subreaper of everything forked below this process.
pub(crate) fn set_child_subreaper() -> io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(Into::into)
}

/// Put `fd` in place of this process's standard input, output and error.
pub(crate) fn replace_stdio(fd: BorrowedFd<'_>) -> io::Result<()> {
    for target in 0..=2 {
        // SAFETY: dup2 takes integers; `fd` is open for the borrow, and replacing 0-2
        // closes this process's own copies only.
        cvt(unsafe { libc::dup2(fd.as_raw_fd(), target) }.into())?;
    }
    Ok(())
}

/// Signals blocked in this thread (and in the threads and children it starts later), with
/// the mask they replaced. Blocked before the fork, so a signal sent while the child is
/// being set up stays pending for the supervisor instead of killing it.
pub(crate) struct Blocked {
    set: libc::sigset_t,
    old: libc::sigset_t,
}

impl Blocked {
    pub(crate) fn new(signals: &[libc::c_int]) -> io::Result<Blocked> {
        // SAFETY: all-zero is a valid sigset_t, which sigemptyset initialises anyway.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid sigset_t for each call below.
        unsafe {
            libc::sigemptyset(&mut set);
            for s in signals {
                libc::sigaddset(&mut set, *s);
            }
        }
        // SAFETY: `set` is initialised and `old` a valid out-pointer.
        let ret = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
        if ret != 0 {
            return Err(io::Error::from_raw_os_error(ret));
        }
        Ok(Blocked { set, old })
    }

    /// In the forked child: put back the mask from before [`Blocked::new`], so the command
    /// it becomes receives these signals (a mask survives exec).
    pub(crate) fn restore(&self) -> io::Result<()> {
        // SAFETY: `old` was filled by pthread_sigmask; the old mask is not asked for.
        let ret =
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
        match ret {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// Blocked signals delivered as readable events, including those that arrived before it
/// was made (they were pending).
pub(crate) struct SignalFd(OwnedFd);

impl SignalFd {
    pub(crate) fn new(blocked: &Blocked) -> io::Result<SignalFd> {
        // SAFETY: `blocked.set` is initialised and outlives the call.
        let fd = unsafe { libc::signalfd(-1, &blocked.set, libc::SFD_CLOEXEC) };
        owned(fd.into()).map(SignalFd)
    }

    /// The number of the next pending signal.
    pub(crate) fn read(&self) -> io::Result<libc::c_int> {
        // SAFETY: all-zero is a valid signalfd_siginfo.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: read writes at most `size` bytes into `info`, which is that size.
        let n = unsafe {
            libc::read(
                self.0.as_raw_fd(),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size,
            )
        };
        cvt(n as libc::c_long)?;
        Ok(info.ssi_signo as libc::c_int)
    }
}

impl AsRawFd for SignalFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// A NUL-terminated string at `addr` in task `tid`, read a page at most at a time so a
/// string that ends just before an unmapped page is still read; at most PATH_MAX bytes.
pub(crate) fn read_cstring(tid: u32, addr: u64) -> io::Result<Vec<u8>> {
    const PATH_MAX: usize = 4096;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_MAX {
        let to_page_end = 4096 - (at as usize % 4096);
        let chunk = read_memory(tid, at, to_page_end.min(PATH_MAX - out.len()))?;
        if let Some(end) = chunk.iter().position(|b| *b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk);
        at += chunk.len() as u64;
    }
    Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG))
}

/// `renameat2(2)`; the errno on failure.
pub(crate) fn renameat2(
    old_dir: BorrowedFd<'_>,
    old: &[u8],
    new_dir: BorrowedFd<'_>,
    new: &[u8],
    flags: libc::c_uint,
) -> Result<(), i32> {
    let old = CString::new(old).map_err(|_| libc::EINVAL)?;
    let new = CString::new(new).map_err(|_| libc::EINVAL)?;
    // SAFETY: both names are NUL-terminated and outlive the call; the rest are integers.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            old_dir.as_raw_fd(),
            old.as_ptr(),
            new_dir.as_raw_fd(),
            new.as_ptr(),
            flags,
        )
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    }
}

/// Install `fd` in the caller of notification `id` (without answering the call): its
/// number there. Answered after by `notif_send` with that number: two steps, but each a
/// plain hand-off the sync wake-up speeds up (see `supervisor::send_file`).
pub(crate) fn notif_addfd(
    listener: BorrowedFd<'_>,
    id: u64,
    fd: BorrowedFd<'_>,
    cloexec: bool,
) -> io::Result<i32> {
    let addfd = libc::seccomp_notif_addfd {
        id,
        flags: 0,
        srcfd: fd.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: the ioctl reads one seccomp_notif_addfd from `addfd`.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &addfd as *const libc::seccomp_notif_addfd,
        )
    };
    cvt(ret.into()).map(|n| n as i32)
}
