//! Run a child to its end from a parent that must outlive it (to report after it).
//!
//! Before the planting report, `jaula run` `exec`ed its cage; now it waits for it. The
//! signals a caller used to send to the cage must still reach it: SIGTERM and SIGHUP are
//! forwarded (a service manager or a closing terminal stops the cage). SIGINT and SIGQUIT
//! are swallowed, as system(3) ignores them: a terminal delivers them to the whole
//! foreground process group, so the child already has its own copy.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};

const HANDLED: [libc::c_int; 5] = [
    libc::SIGCHLD,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
];

/// Spawn `cmd` and wait for it, forwarding SIGTERM and SIGHUP. Call from a
/// single-threaded process: the signals are blocked in the calling thread and taken with
/// `sigwait`, and another thread with them unblocked would receive them instead.
pub fn spawn_and_wait(cmd: &mut Command) -> io::Result<ExitStatus> {
    let set = signal_set();
    let mut old = empty_set();
    // SAFETY: `set` and `old` are valid, initialised sigset_t values owned by this frame.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // A child inherits the signal mask across fork and exec, and the standard library
    // does not reset it: without this the caged command would start with SIGTERM
    // blocked and every forwarded signal would stay pending (pinned by a live test).
    let restore = old;
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // pthread_sigmask, which is async-signal-safe, on a sigset_t copied in by value.
    unsafe {
        cmd.pre_exec(move || {
            match libc::pthread_sigmask(libc::SIG_SETMASK, &restore, std::ptr::null_mut()) {
                0 => Ok(()),
                rc => Err(io::Error::from_raw_os_error(rc)),
            }
        });
    }
    let result = cmd
        .spawn()
        .and_then(|mut child| wait_forwarding(&mut child, &set));
    // A Ctrl-C that arrived with the child's exit must not kill this process when the
    // mask is restored: the caller still has to report and mirror the child's status.
    drain_interrupts();
    // SAFETY: restores the mask saved above; `old` is a valid sigset_t.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    result
}

fn wait_forwarding(child: &mut Child, set: &libc::sigset_t) -> io::Result<ExitStatus> {
    let pid = child.id() as libc::pid_t;
    loop {
        // The child may have exited before SIGCHLD was first awaited.
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is a valid sigset_t, `sig` a valid out-pointer.
        let rc = unsafe { libc::sigwait(set, &mut sig) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        if sig == libc::SIGTERM || sig == libc::SIGHUP {
            // SAFETY: kill(2) on our own, not yet reaped child: the pid cannot have been
            // reused, since only this function reaps it.
            unsafe { libc::kill(pid, sig) };
        }
    }
}

/// Take any pending SIGINT, SIGQUIT and SIGCHLD while they are still blocked.
fn drain_interrupts() {
    for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGCHLD] {
        let mut pending = empty_set();
        // SAFETY: `pending` is an initialised sigset_t owned by this frame.
        let is_pending =
            unsafe { libc::sigpending(&mut pending) == 0 && libc::sigismember(&pending, sig) == 1 };
        if is_pending {
            let mut only = empty_set();
            let mut taken: libc::c_int = 0;
            // SAFETY: `only` is initialised; the signal is pending and blocked, so
            // sigwait returns at once.
            unsafe {
                libc::sigaddset(&mut only, sig);
                libc::sigwait(&only, &mut taken);
            }
        }
    }
}

fn empty_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it fully.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        set
    }
}

fn signal_set() -> libc::sigset_t {
    let mut set = empty_set();
    for sig in HANDLED {
        // SAFETY: `set` is an initialised sigset_t and `sig` a valid signal number.
        unsafe { libc::sigaddset(&mut set, sig) };
    }
    set
}
