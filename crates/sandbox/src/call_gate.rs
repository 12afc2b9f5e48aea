//! The call gate: a supervisor outside the cage performs the cage's guarded calls itself,
//! one module per family of calls. Its socket family (`supervisor/socket_calls.rs`) sees
//! that no host service is reached over a pathname unix socket unless the owner allowed
//! it; its file family (`file_calls.rs`, the planting guard) that no name the owner's
//! tools will run later is created or replaced. The flags and messages call it the
//! socket gate (`--no-socket-gate`), the name it had before it guarded files.
//!
//! A caged process can ask an uncaged program to act for it: the tmux server hosting its
//! own window opens an uncaged window on request, Docker starts containers, the session
//! bus starts systemd units, ssh-agent signs. Landlock below ABI 9 has no right for
//! `connect(2)` to a pathname socket, and a read-only mount does not stop it either. The
//! gate closes that door with a seccomp user-notification filter (`filter`) and a
//! supervisor (`Supervisor`) that performs every `connect` and `bind` of the cage itself,
//! admitting a pathname socket only when the cage bound it or the policy allows it
//! (`Policy::decide(path, Access::Connect)`).
//!
//! The launch forks twice (see `lifetime`): the launching process waits for the
//! command's status; its child, already inside the cage's Landlock domain and network
//! namespace, becomes the supervisor; the supervisor's child installs the filter, hands
//! its listener up and execs the command. The supervisor serves the notifications for as
//! long as any process lives under the filter. If the gate cannot be set up, the launch
//! fails (the caller refuses to run).

mod caller_path;
mod file_calls;
mod filter;
mod git_dirs;
mod lifetime;
mod peers;
mod supervisor;
mod sys;
mod tasks;
mod unreachable;
pub mod write_refusals;

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use jaula_policy::Policy;
use seccompiler::sock_filter;

pub(crate) use lifetime::{status_pipe, wait_for_command, Release, Waited};
pub use peers::{cage_that_bound, Binder};
pub(crate) use supervisor::GateCounts;
use supervisor::Supervisor;
pub(crate) use sys::Blocked;
pub(crate) use unreachable::set_stub_addresses;
pub use unreachable::{unreachable_destinations, Refused};

/// Why the gate could not be set up. The command never runs without it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// This architecture has no gate filter (only x86_64 and aarch64 do).
    #[error("the socket gate supports Linux on x86_64 and aarch64 only")]
    UnsupportedTarget,
    /// The `NETLINK_SOCK_DIAG` socket the supervisor identifies bound sockets with could
    /// not be opened.
    #[error("cannot open a sock_diag socket: {0}")]
    SockDiag(io::Error),
    /// The pipes between parent and child could not be made.
    #[error("cannot make the hand-off pipes: {0}")]
    Pipe(io::Error),
    /// The child could not install the user-notification filter.
    #[error("cannot install the seccomp notification filter: {0}")]
    Install(io::Error),
    /// The kernel refused a second listener: this process is already under a gate.
    #[error(
        "this process already runs under a socket gate (a jaula cage inside a jaula cage): \
         the kernel allows one notification listener per filter chain, so the inner cage \
         cannot have its own gate; run it from outside the cage"
    )]
    Nested,
    /// The hand-off between parent and child failed: passing the listener's number or the
    /// acknowledgement, forking or reaping the probe's child, or starting the supervisor.
    #[error("the hand-off of the filter's listener failed: {0}")]
    Handoff(io::Error),
    /// `pidfd_getfd` could not copy the listener out of the child.
    #[error(
        "cannot take the filter's listener from the child (pidfd_getfd, Linux 5.6+, needs \
         ptrace access to the child): {0}"
    )]
    TakeListener(io::Error),
    /// The command's nested Landlock domain (the gate took the plan's write splits over)
    /// could not be built or entered.
    #[error("{0}")]
    CommandDomain(crate::landlock::LandlockError),
    /// The child exited before handing over its listener; it printed its own reason.
    #[error("the child ended before it installed the filter (it said why)")]
    ChildEnded,
    /// `PR_SET_DUMPABLE` failed, which would leave the supervisor's memory open to a
    /// process of the same uid (`/proc/<pid>/mem`, ptrace).
    #[error("cannot make the supervisor non-dumpable: {0}")]
    Dumpable(io::Error),
}

/// Everything made before the fork.
pub(crate) struct GateLaunch {
    program: Vec<sock_filter>,
    diag: OwnedFd,
    /// Child → parent: the listener's descriptor number.
    number: (OwnedFd, OwnedFd),
    /// Parent → child: the listener was taken, close yours.
    taken: (OwnedFd, OwnedFd),
    /// The write splits the supervisor takes over, when the plan has any.
    split: Option<TakenSplit>,
}

/// The write-split directories the supervisor's Landlock domain grants whole, and the
/// command's nested domain that keeps the split for the command's own calls (see
/// `Plan::gate_split`).
#[derive(Debug)]
pub(crate) struct TakenSplit {
    /// Beneath these the supervisor refuses whatever `decide` denies, and it never moves
    /// or removes one of them.
    pub(crate) widened: Vec<std::path::PathBuf>,
    /// Entered by the child before the command, and by the thread that binds a socket
    /// outside the widened directories.
    pub(crate) command: crate::landlock::WritesDomain,
}

/// Whether the gate's filter enforces `rule` of the deny-list itself, so the deny-list
/// installed beside it may leave the rule out: a namespace rule (`unshare`, `clone`) whose
/// one condition is the very mask the gate's filter checks on the same syscall.
pub(crate) fn enforces(rule: &jaula_policy::seccomp::DenyRule) -> bool {
    use jaula_policy::seccomp::ArgMatch;
    let Some(calls) = filter::GateSyscalls::native() else {
        return false;
    };
    calls.namespaces.iter().any(|&(nr, mask)| {
        i64::from(nr) == rule.nr
            && rule.errno == jaula_policy::seccomp::DenyErrno::Eperm
            && rule.when == [ArgMatch::AnyBitOf { arg: 0, mask }]
    })
}

/// Open what the supervisor needs while the process may still make sockets: call it in the
/// network namespace the cage will use, before any filter that refuses socket families.
pub(crate) fn prepare() -> Result<GateLaunch, GateError> {
    let calls = filter::GateSyscalls::native().ok_or(GateError::UnsupportedTarget)?;
    let diag = sys::open_sock_diag().map_err(GateError::SockDiag)?;
    let pipe = || {
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| GateError::Pipe(e.into()))
    };
    Ok(GateLaunch {
        program: filter::build(&calls),
        diag,
        number: pipe()?,
        taken: pipe()?,
        split: None,
    })
}

impl GateLaunch {
    /// Take `split`'s write-split directories over: build the command's nested domain now,
    /// before the fork, so that child and supervisor hold the same one.
    pub(crate) fn take_split(
        mut self,
        split: Option<&crate::landlock::GateSplit>,
    ) -> Result<GateLaunch, GateError> {
        if let Some(split) = split {
            let command = crate::landlock::WritesDomain::prepare(&split.command_writes)
                .map_err(GateError::CommandDomain)?;
            self.split = Some(TakenSplit {
                widened: split.widened.clone(),
                command,
            });
        }
        Ok(self)
    }

    /// In the child: install the filter, hand its listener out, wait until the parent
    /// holds it, and close this process's copy (a cage holding its own listener could
    /// answer its own calls).
    pub(crate) fn in_child(self) -> Result<(), GateError> {
        let GateLaunch {
            program,
            diag,
            number,
            taken,
            split,
        } = self;
        // The command's own calls meet the plan's split again (stacked on the
        // supervisor's domain, which grants the split directories whole).
        if let Some(split) = split {
            split.command.enter().map_err(GateError::CommandDomain)?;
        }
        drop(diag);
        drop(number.0);
        drop(taken.1);
        let listener = sys::install_filter_with_listener(&program).map_err(|e| {
            // kernel/seccomp.c, has_duplicate_listener: EBUSY when a filter already in
            // this task's chain has a listener.
            if e.raw_os_error() == Some(libc::EBUSY) {
                GateError::Nested
            } else {
                GateError::Install(e)
            }
        })?;
        let raw: RawFd = listener.as_raw_fd();
        rustix::io::write(&number.1, &raw.to_ne_bytes())
            .map_err(|e| GateError::Handoff(e.into()))?;
        let mut ack = [0u8; 1];
        let n = rustix::io::read(&taken.0, &mut ack).map_err(|e| GateError::Handoff(e.into()))?;
        if n != 1 {
            return Err(GateError::Handoff(io::Error::other(
                "the supervisor went away before taking the listener",
            )));
        }
        drop(listener);
        Ok(())
    }

    /// In the parent: take the child's listener and become its supervisor. `record` is
    /// the cage's record (a window cage's), where the sockets it binds are written.
    pub(crate) fn in_parent(
        mut self,
        child: libc::pid_t,
        policy: Policy,
        record: Option<std::fs::File>,
    ) -> Result<Supervisor, GateError> {
        let split = self.split.take();
        let (listener, diag) = self.take_listener(child, true)?;
        Supervisor::new(listener, diag, policy, split, record).map_err(GateError::Handoff)
    }

    fn take_listener(
        self,
        child: libc::pid_t,
        guard_memory: bool,
    ) -> Result<(OwnedFd, OwnedFd), GateError> {
        let GateLaunch {
            program: _,
            diag,
            number,
            taken,
            split: _,
        } = self;
        drop(number.1);
        drop(taken.0);
        let mut raw = [0u8; 4];
        let mut got = 0;
        while got < raw.len() {
            let n = rustix::io::read(&number.0, &mut raw[got..])
                .map_err(|e| GateError::Handoff(e.into()))?;
            if n == 0 {
                return Err(GateError::ChildEnded);
            }
            got += n;
        }
        let child_fd = RawFd::from_ne_bytes(raw);
        let pidfd = sys::pidfd_for_task(child as u32).map_err(GateError::TakeListener)?;
        let listener =
            sys::pidfd_getfd(pidfd.as_fd(), child_fd).map_err(GateError::TakeListener)?;
        // Before the child can run anything of the cage's: from here on, a process of
        // the same uid cannot read or write this one's memory (/proc/<pid>/mem, ptrace).
        if guard_memory {
            sys::set_not_dumpable().map_err(GateError::Dumpable)?;
        }
        rustix::io::write(&taken.1, b"1").map_err(|e| GateError::Handoff(e.into()))?;
        Ok((listener, diag))
    }
}

/// The signals a supervisor takes instead of dying of them: [`block_forwarded`] before
/// the fork, and the command restores its mask. SIGCHLD is among them so that the
/// supervisor, a child subreaper, learns of every process of the cage that ends through
/// its signalfd (a signal the default disposition ignores would otherwise be dropped).
const FORWARDED: [libc::c_int; 6] = [
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGCHLD,
    STOP_CAGE,
];

/// The signal `jaula stop` sends a supervisor: end every process of the cage. A cage
/// cannot send it (Landlock's signal scope keeps the command and its descendants from
/// signalling their supervisor, ABI 6+); below that, a cage could only stop itself.
pub const STOP_CAGE: libc::c_int = libc::SIGUSR1;

/// Block [`FORWARDED`] in this (single-threaded) process, before it forks the processes it
/// will wait for and supervise: a SIGTERM that arrives while they are set up must wait to
/// be passed on, not kill jaula and orphan the command.
pub(crate) fn block_forwarded() -> io::Result<sys::Blocked> {
    sys::Blocked::new(&FORWARDED)
}

/// What the supervisor does once the command itself has ended, while the cage may live on
/// in the processes it left behind.
pub(crate) trait CommandEnded {
    /// Called once, with how the command ended and what the gate answered until then.
    fn command_ended(&mut self, status: std::process::ExitStatus, counts: GateCounts);
}

/// Serve the cage's calls for as long as any process lives under the filter, not only as
/// long as the command: a helper the command left running (a bus hub, a build daemon, a
/// dev server) keeps a working gate. The supervisor is the cage's child subreaper, so
/// every process the command leaves behind is reparented to it and reaped here; the
/// listener reports hang-up once the last of them is gone.
///
/// SIGTERM and SIGHUP sent to this process, including any that came while `blocked` held
/// them, are passed on to the command while it lives; SIGINT and SIGQUIT are left to the
/// terminal, which sends them to the command's process group itself. After the command
/// ends they are ignored: a closed window must not take a helper's gate with it.
///
/// The calls are served by threads of their own ([`Supervisor::serve_until_hang_up`]), one
/// per CPU, so calls of different processes and threads proceed at once; this thread only
/// waits for signals and for the listener's hang-up. When no serving thread can be
/// started (the cage's process limit), this thread serves the calls itself, one at a time.
pub(crate) fn supervise(
    supervisor: Supervisor,
    command: libc::pid_t,
    blocked: &sys::Blocked,
    ended: &mut dyn CommandEnded,
) -> io::Result<()> {
    let supervisor = std::sync::Arc::new(supervisor);
    let (failed, failure) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let servers = start_servers(&supervisor, &std::sync::Arc::new(failure));
    let serving_here = servers.is_empty();
    let signals = sys::SignalFd::new(blocked)?;
    let mut listening = true;
    let mut command_alive = true;
    let mut stopping = false;
    // The command may have ended before the signalfd existed: its SIGCHLD is pending then,
    // and the first poll sees it.
    while listening || command_alive {
        let mut fds = [
            libc::pollfd {
                fd: signals.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if listening {
                    supervisor.listener().as_raw_fd()
                } else {
                    -1
                },
                // Hang-up is always reported; notifications only when this thread serves.
                events: if serving_here { libc::POLLIN } else { 0 },
                revents: 0,
            },
            libc::pollfd {
                fd: failed.as_raw_fd(),
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
        if fds[2].revents & libc::POLLIN != 0 {
            // A serving thread's listener failed: as when this thread's own fails.
            let mut errno = [0u8; 4];
            let _ = rustix::io::read(&failed, &mut errno);
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
        }
        if serving_here && fds[1].revents & libc::POLLIN != 0 {
            supervisor.serve_one()?;
        } else if fds[1].revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            // No process is left under the filter: nothing more will ask.
            listening = false;
        }
        if fds[0].revents & libc::POLLIN != 0 {
            let signo = signals.read()?;
            match signo {
                libc::SIGTERM | libc::SIGHUP if command_alive => sys::kill(command, signo),
                libc::SIGCHLD => {
                    for (pid, status) in sys::reap_all() {
                        if pid == command {
                            command_alive = false;
                            ended.command_ended(status, supervisor.counts());
                        }
                    }
                    if stopping {
                        sys::kill_children();
                    }
                }
                STOP_CAGE => {
                    stopping = true;
                    sys::kill_children();
                }
                _ => {}
            }
        }
    }
    // Every serving thread returns once the listener has hung up.
    for server in servers {
        let _ = server.join();
    }
    Ok(())
}

/// The most threads that serve the cage's calls.
const MAX_SERVERS: usize = 8;

/// Start the threads that serve the cage's calls: one per CPU this process may run on
/// (at least two, so a call waiting for the exclusive lock on names never leaves the
/// cage unserved), up to [`MAX_SERVERS`]. Fewer when the process limit refuses more.
///
/// A thread whose listener fails writes the errno to `failure` and ends.
fn start_servers(
    supervisor: &std::sync::Arc<Supervisor>,
    failure: &std::sync::Arc<OwnedFd>,
) -> Vec<std::thread::JoinHandle<()>> {
    let wanted = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, MAX_SERVERS);
    (0..wanted)
        .map_while(|_| {
            let supervisor = std::sync::Arc::clone(supervisor);
            let failure = std::sync::Arc::clone(failure);
            std::thread::Builder::new()
                .name("jaula-gate".into())
                .spawn(move || {
                    // Its own working directory and umask: a bind's `fchdir` and a
                    // creation's umask are this thread's alone. Without them it must not
                    // serve, and the cage must not go on with a server fewer.
                    let served = sys::unshare_fs().and_then(|()| supervisor.serve_until_hang_up());
                    if let Err(e) = served {
                        let errno = e.raw_os_error().unwrap_or(libc::EIO);
                        let _ = rustix::io::write(&*failure, &errno.to_ne_bytes());
                    }
                })
                .ok()
        })
        .collect()
}
/// See [`sys::set_child_subreaper`].
pub(crate) fn set_child_subreaper() -> io::Result<()> {
    sys::set_child_subreaper()
}

/// Keep this process's memory out of reach of processes of the same uid.
pub(crate) fn set_not_dumpable() -> io::Result<()> {
    sys::set_not_dumpable()
}

/// Kill and reap a child the gate can no longer supervise: it must not run unguarded.
pub(crate) fn kill_child(pid: libc::pid_t) {
    sys::kill(pid, libc::SIGKILL);
    let _ = sys::wait_exit(pid);
}

/// Whether a gate can be set up here: a child installs the filter and hands its listener
/// over, exactly as a launch does, then exits. For `jaula check`; never run in a launch.
pub fn probe() -> Result<(), GateError> {
    let launch = prepare()?;
    // SAFETY: the child only sets no_new_privs, runs the hand-off and `_exit`s; the
    // callers (`jaula check`, tests) hold no lock the child needs.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(GateError::Handoff(io::Error::last_os_error()));
    }
    if pid == 0 {
        let ok = rustix::thread::set_no_new_privs(true).is_ok() && launch.in_child().is_ok();
        // SAFETY: _exit ends the forked child without running the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let taken = launch.take_listener(pid, false);
    let status = sys::wait_exit(pid).map_err(GateError::Handoff)?;
    taken?;
    if status.success() {
        Ok(())
    } else {
        Err(GateError::Install(io::Error::other(
            "the probe child could not install the filter",
        )))
    }
}

/// Reap a child that ended on its own.
pub(crate) fn wait_child(pid: libc::pid_t) -> io::Result<std::process::ExitStatus> {
    sys::wait_exit(pid)
}
