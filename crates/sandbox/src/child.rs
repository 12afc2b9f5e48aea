//! Run a child to its end from a parent that must outlive it (to report after it).
//!
//! Before the planting report, `jaula run` `exec`ed its cage; now it waits for it. The
//! signals a caller used to send to the cage must still reach it: SIGTERM and SIGHUP are
//! forwarded (a service manager or a closing terminal stops the cage). SIGINT and SIGQUIT
//! are swallowed, as system(3) ignores them: a terminal delivers them to the whole
//! foreground process group, so the child already has its own copy.
//!
//! When the child is bubblewrap, the signal must skip it: its monitor dies of SIGTERM
//! without passing it on, and its init inside the PID namespace ignores every signal sent
//! from outside, so the stage and the command would run on, orphaned. [`Forward::BwrapStage`]
//! finds the stage below them and signals it instead.

// Spawning and waiting serve the Linux launch (`start`); elsewhere only `forward_signal` is
// called.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

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

/// Where a forwarded SIGTERM or SIGHUP goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// To the child itself.
    Child,
    /// The child is bubblewrap running jaula's stage: to the stage (found through `/proc`),
    /// or to bubblewrap when no stage is found (it has already ended).
    BwrapStage,
}

/// Spawn `cmd` and wait for it, forwarding SIGTERM and SIGHUP where `forward` says. Call
/// from a single-threaded process: the signals are blocked in the calling thread and taken
/// with `sigwait`, and another thread with them unblocked would receive them instead.
pub(crate) fn spawn_and_wait(cmd: &mut Command, forward: Forward) -> io::Result<ExitStatus> {
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
    unblock_in_child(cmd, old);
    let result = cmd
        .spawn()
        .and_then(|mut child| wait_forwarding(&mut child, &set, forward));
    // A Ctrl-C that arrived with the child's exit must not kill this process when the
    // mask is restored: the caller still has to report and mirror the child's status.
    drain_interrupts();
    // SAFETY: restores the mask saved above; `old` is a valid sigset_t.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    result
}

fn wait_forwarding(
    child: &mut Child,
    set: &libc::sigset_t,
    forward: Forward,
) -> io::Result<ExitStatus> {
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
            forward_signal(pid, sig, forward);
        }
    }
}

/// SIGTERM, SIGHUP, SIGINT and SIGQUIT held (blocked in the calling thread) from before a
/// child is spawned until its parent is ready to take them: one that arrives while the
/// child starts stays pending instead of killing the parent and orphaning the child. The
/// threads started meanwhile inherit the block; [`HeldSignals::release`] (or drop) lifts
/// it in this thread, and anything pending is delivered there at once.
pub struct HeldSignals {
    // Boxed: a sigset_t is 128 bytes on Linux, and this travels in enums.
    old: Box<libc::sigset_t>,
}

impl HeldSignals {
    /// Block the four signals in the calling thread.
    pub fn hold() -> io::Result<HeldSignals> {
        let mut set = empty_set();
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: `set` is an initialised sigset_t and `sig` a valid signal number.
            unsafe { libc::sigaddset(&mut set, sig) };
        }
        let mut old = empty_set();
        // SAFETY: `set` and `old` are valid, initialised sigset_t values owned by this frame.
        match unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) } {
            0 => Ok(HeldSignals { old: Box::new(old) }),
            rc => Err(io::Error::from_raw_os_error(rc)),
        }
    }

    /// Let `cmd`'s process start with the mask from before [`HeldSignals::hold`].
    pub fn unblock_in_child(&self, cmd: &mut Command) {
        unblock_in_child(cmd, *self.old);
    }

    /// Lift the block in this thread: call once the handlers are in place.
    pub fn release(self) {}
}

impl Drop for HeldSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `hold`; `old` is a valid sigset_t.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &*self.old, std::ptr::null_mut()) };
    }
}

/// Have `cmd`'s child set its signal mask to `mask` between fork and exec.
fn unblock_in_child(cmd: &mut Command, mask: libc::sigset_t) {
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // pthread_sigmask, which is async-signal-safe, on a sigset_t copied in by value.
    unsafe {
        cmd.pre_exec(move || {
            match libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) {
                0 => Ok(()),
                rc => Err(io::Error::from_raw_os_error(rc)),
            }
        });
    }
}

/// Send `sig` where `forward` says, for the child `pid` this process has not reaped yet.
pub fn forward_signal(pid: libc::pid_t, sig: libc::c_int, forward: Forward) {
    // Only Linux runs bubblewrap; elsewhere every signal goes to the child.
    #[cfg(not(target_os = "linux"))]
    let _ = forward;
    #[cfg(target_os = "linux")]
    if forward == Forward::BwrapStage {
        let named = rustix::process::Signal::from_named_raw(sig);
        if let (Some(stage), Some(named)) = (proc_tree::bwrap_stage(pid), named) {
            if rustix::process::pidfd_send_signal(&stage, named).is_ok() {
                return;
            }
        }
    }
    // SAFETY: kill(2) on our own, not yet reaped child: the pid cannot have been reused,
    // since only this process reaps it.
    unsafe { libc::kill(pid, sig) };
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

#[cfg(target_os = "linux")]
mod proc_tree {
    /// jaula's stage below the bubblewrap monitor `monitor` (this process's child), as a
    /// pidfd. bubblewrap's child is either the stage itself (no PID namespace) or the
    /// namespace's init (pid 1 there), whose first child, pid 2 in the namespace, is the
    /// stage; any later child of that init is an orphan reparented to it, not the stage. The
    /// pidfd is taken before the parent is checked again, so a pid reused in between is
    /// never signalled.
    pub(super) fn bwrap_stage(monitor: libc::pid_t) -> Option<std::os::fd::OwnedFd> {
        let first = only_child(monitor)?;
        let (parent, stage) = if namespace_pid(first) == Some(1) {
            let stage = children(first)
                .into_iter()
                .find(|&c| namespace_pid(c) == Some(2))?;
            (first, stage)
        } else {
            (monitor, first)
        };
        let pid = rustix::process::Pid::from_raw(stage)?;
        let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
        (parent_of(stage) == Some(parent)).then_some(fd)
    }

    /// The one child of `pid`, or `None` when it has none or several.
    fn only_child(pid: libc::pid_t) -> Option<libc::pid_t> {
        match children(pid).as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The children of `pid`'s main thread (`/proc/PID/task/PID/children`); bubblewrap forks
    /// from its only thread.
    fn children(pid: libc::pid_t) -> Vec<libc::pid_t> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .map(|text| {
                text.split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `pid`'s number in its own, innermost PID namespace (the last `NSpid` field).
    fn namespace_pid(pid: libc::pid_t) -> Option<libc::pid_t> {
        status_field(pid, "NSpid:")?
            .split_whitespace()
            .last()?
            .parse()
            .ok()
    }

    fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
        status_field(pid, "PPid:")?.trim().parse().ok()
    }

    fn status_field(pid: libc::pid_t, name: &str) -> Option<String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(str::to_owned)
    }
}
