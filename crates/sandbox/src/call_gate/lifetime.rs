//! Who waits for whom: the command's status reaches the caller as soon as the command
//! ends, while the supervisor stays for as long as anything lives under its filter.
//!
//! Three processes: the launching jaula (the *waiter*, the pid a shell or tmux waits for),
//! the supervisor it forks, and the command the supervisor forks. The supervisor must be
//! an ancestor of every process it answers for (ptrace access for `pidfd_getfd` and
//! `process_vm_readv` under Yama's `ptrace_scope = 1`, and its reaping as child
//! subreaper), so it cannot be the process the caller waits for: that one has to end with
//! the command. The supervisor hands the command's status to the waiter over a pipe when
//! the command ends, lets go of the caller's terminal or pipes, and goes on serving the
//! helpers the command left behind. A fork after the supervisor has started threads would
//! not be safe, which is why the waiter is forked off first, not last.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use super::sys;

/// The pipe the command's status travels through, supervisor → waiter.
pub(crate) fn status_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(Into::into)
}

/// How the wait for the command ended.
#[derive(Debug)]
pub(crate) enum Waited {
    /// The supervisor saw the command end, with this status.
    Command(ExitStatus),
    /// The supervisor itself ended (with this status) before it could say how the command
    /// ended: killed, or failed. The cage's gated calls fail from then on.
    SupervisorEnded(ExitStatus),
}

/// In the waiter: wait for the command's status from `report`, passing SIGTERM and SIGHUP
/// on to the supervisor (which passes them to the command).
pub(crate) fn wait_for_command(
    supervisor: libc::pid_t,
    report: OwnedFd,
    blocked: &sys::Blocked,
) -> io::Result<Waited> {
    let signals = sys::SignalFd::new(blocked)?;
    let mut raw = [0u8; 4];
    let mut got = 0;
    loop {
        let mut fds = [
            libc::pollfd {
                fd: report.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: signals.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if let Err(e) = sys::poll(&mut fds) {
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if fds[0].revents != 0 {
            let n = match rustix::io::read(&report, &mut raw[got..]) {
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                return Ok(Waited::SupervisorEnded(sys::wait_exit(supervisor)?));
            }
            got += n;
            if got == raw.len() {
                return Ok(Waited::Command(ExitStatus::from_raw(i32::from_ne_bytes(
                    raw,
                ))));
            }
        }
        if fds[1].revents & libc::POLLIN != 0 {
            let signo = signals.read()?;
            if signo == libc::SIGTERM || signo == libc::SIGHUP {
                sys::kill(supervisor, signo);
            }
        }
    }
}

/// In the supervisor: what it holds to let go of the caller when the command ends.
pub(crate) struct Release {
    report: Option<OwnedFd>,
    devnull: OwnedFd,
}

impl Release {
    /// `report` is the pipe's write end; `/dev/null` is opened now, while the caller's
    /// descriptors are still in place.
    pub(crate) fn new(report: OwnedFd) -> io::Result<Release> {
        let devnull = sys::open_path(std::path::Path::new("/dev/null"), libc::O_RDWR)?;
        Ok(Release {
            report: Some(report),
            devnull,
        })
    }

    /// Tell the waiter how the command ended, then let go of the caller's standard
    /// descriptors: a shell reading the output of `$(jaula run ...)` must see its end when
    /// the command ends, not when the last helper does. Later refusals go nowhere (the
    /// `--log` of `--network none` still records its own).
    pub(crate) fn command_ended(&mut self, status: ExitStatus) {
        if let Some(report) = self.report.take() {
            let _ = rustix::io::write(&report, &status.into_raw().to_ne_bytes());
        }
        let _ = sys::replace_stdio(self.devnull.as_fd());
    }

    /// Tell the waiter a status without a command behind it (the supervisor could not
    /// start, and the command was stopped).
    pub(crate) fn refuse(mut self, code: i32) {
        self.command_ended(ExitStatus::from_raw(code << 8));
    }
}
