//! The outer half of a Linux launch: where a resolved [`LaunchPlan`] runs, and the process
//! that starts it there and waits.
//!
//! A plan runs in one of three places: in this very process (the launch sequence,
//! [`crate::launch`], on jaula itself), in jaula's own stage inside bubblewrap's view
//! ([`Stage::in_view`]), or in a stage child natively ([`Stage::native`]) when this
//! process must outlive the command to report after it. `--network allow` adds the
//! hand-over of the cage's listeners to a proxy beside it ([`start_allow`]). Nothing here
//! resolves a policy: the plan is final, and each stage reads it from a sealed descriptor.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

use jaula_policy::network::NetworkMode;
use jaula_policy::sources::BwrapHint;
use jaula_policy::{BackendChoice, Policy};

use crate::bwrap::{self, Availability, BwrapError, BwrapOptions};
use crate::child::{self, Forward, HeldSignals};
use crate::landlock::{self, PlanMode};
use crate::launch_plan::{LaunchPlan, PlanError, Reports};
use crate::network::netns::{self, CageListeners, NetnsError, NetnsInChild};
use crate::plan_fd::SealedPlan;
use crate::planting::{self, Snapshot};
use crate::window_tmp::{PrivateTmp, PrivateTmpError};

mod choose;

pub use choose::{Launcher, NoCage};

/// The hidden subcommand jaula starts its own stages with. It takes no arguments: its
/// whole input is the launch plan on an inherited descriptor.
pub const STAGE_SUBCOMMAND: &str = "stage";

/// What the outer stage needs beside the plan: how the caller asked for the cage, and the
/// program that is jaula's own stage.
#[derive(Clone, Debug)]
pub struct StartOptions {
    /// `jaula run --backend` or the config's `run.backend`.
    pub requested: BackendChoice,
    /// Where bubblewrap is, or that it is known to be missing (`CITY_CAGE_BWRAP`).
    pub bwrap: BwrapHint,
    /// A PID namespace and `/proc` of the cage's own in bubblewrap's view.
    pub proc_fs: bool,
    /// The window name the caller gave, if any: it names the view's private `/tmp`.
    pub window: Option<String>,
    /// This jaula binary, started as `BINARY stage`.
    pub own_binary: PathBuf,
    /// Where the command starts.
    pub cwd: PathBuf,
}

/// Why a stage could not be prepared or started. Each is a refusal: nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `--network allow`: the proxy's process could not be forked.
    #[error("cannot start the proxy's process: {0}")]
    ForkProxy(#[source] std::io::Error),
    /// A cage was needed and none can be built here.
    #[error("refusing to run: {reason}")]
    NoCage {
        /// Every reason that counted, in one line.
        reason: String,
    },
    /// `--network allow` without a network namespace: a port rule would admit any host.
    #[error(
        "refusing to run: --network allow needs a network namespace; bwrap: {bwrap}{landlock}"
    )]
    AllowNeedsNamespace {
        /// Why bubblewrap cannot build its namespace.
        bwrap: String,
        /// `"; landlock: ..."` when Landlock is missing too, else empty.
        landlock: String,
    },
    /// The view's own `/tmp` cannot be made; the host's is never used instead.
    #[error("refusing to run: cannot make the cage's private /tmp: {0}")]
    PrivateTmp(#[source] PrivateTmpError),
    /// One of jaula's own protected directories could not be created for the view to cover.
    #[error("cannot write {}: {source}", .path.display())]
    ProtectedDir {
        /// The directory.
        path: PathBuf,
        /// Why it could not be made.
        source: std::io::Error,
    },
    /// The view could not be rendered.
    #[error(transparent)]
    Bwrap(#[from] BwrapError),
    /// The network namespace, its hand-off channel or the DNS stub failed.
    #[error(transparent)]
    Netns(#[from] NetnsError),
    /// The plan could not be sealed for the stage.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// bubblewrap or the stage could not be started (126: the command was not looked at).
    #[error("cannot execute {}: {source}", .program.to_string_lossy())]
    Start {
        /// The program that failed to start.
        program: OsString,
        /// Why.
        source: std::io::Error,
    },
    /// The stage of `--network allow` ended before it handed its listener out, and could
    /// not be waited for.
    #[error("cannot wait for the cage's stage: {0}")]
    WaitStage(#[source] std::io::Error),
    /// `/proc/self/exe` did not answer: jaula starts itself as its own stage.
    #[error("cannot find jaula's own binary: {0}")]
    OwnBinary(#[source] std::io::Error),
    /// `--log`: the file could not be opened for the stage, or handed to it.
    #[error("cannot open the log {}: {source}", .path.display())]
    Log {
        /// The log file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The resource limits could not be set before the stage started.
    #[error(transparent)]
    Limits(crate::launch::LaunchError),
    /// A Contract's stage could not be started in its workspace.
    #[error("cannot start jaula's stage {} in {}: {source}", .program.to_string_lossy(), .cwd.display())]
    StartIn {
        /// The stage's program (jaula itself).
        program: OsString,
        /// The workspace it was to start in.
        cwd: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A Contract's cage with `--network allow`: its proxy runs only beside `jaula run`.
    #[error(
        "refusing to run: network mode allow needs jaula's proxy running beside the cage, \
         which a contract run does not start; use network mode none or host for Contracts"
    )]
    AllowNeedsProxy,
}

/// bubblewrap's options for a launch: its own PID namespace unless `--no-pid-ns`, and its
/// own network namespace unless the network is the host's.
pub(crate) fn bwrap_options(proc_fs: bool, mode: NetworkMode) -> BwrapOptions {
    BwrapOptions {
        proc_fs,
        unshare_net: mode.closes_host_network(),
        // A root stage binds the proxy's steering listeners on 443 and 80, then drops it.
        net_bind_service: mode.through_proxy(),
        ..BwrapOptions::default()
    }
}

/// The cage this launch gets: both probes (Landlock's ABI, bubblewrap's namespaces; the
/// latter cached in the state home, see [`bwrap::probe_cached`]) decided by
/// [`choose::choose`].
pub fn choose_cage(plan: &LaunchPlan, options: &StartOptions) -> Result<Launcher, NoCage> {
    let landlock = landlock::probe();
    let landlock_missing = (!landlock.floor_met).then(|| format!("landlock: {}", landlock.kernel));
    choose::choose(options.requested, landlock_missing, || {
        bwrap::probe_cached(
            options.bwrap,
            &bwrap_options(options.proc_fs, plan.network.mode),
            &plan.policy.state_home().join(planting::PROBE_CACHE_FILE),
        )
    })
}

/// A stage ready to start: its command, with the plan sealed on a descriptor, and what
/// must stay open until it has started (the view's private `/tmp`, the network namespace
/// made for it).
pub struct Stage {
    command: Command,
    forward: Forward,
    _sealed: SealedPlan,
    _private_tmp: Option<PrivateTmp>,
    _netns: Option<NetnsInChild>,
}

impl Stage {
    /// bubblewrap with the rendered view and jaula's stage inside it, reading `plan`.
    ///
    /// Under `none` and `allow` the network namespace (and the DNS stub the stage's
    /// supervisor answers on) is made by the child that execs bubblewrap, before it
    /// starts, so bubblewrap itself is told not to make one.
    pub fn in_view(
        plan: &LaunchPlan,
        availability: &Availability,
        options: &StartOptions,
    ) -> Result<Stage, StartError> {
        let mode = plan.network.mode;
        let mut view = bwrap_options(options.proc_fs, mode);
        let private_tmp = bwrap::private_view(
            &plan.policy,
            options.window.as_deref(),
            &mut view,
            plan.verbose,
        )
        .map_err(StartError::PrivateTmp)?;
        let mut stage = LaunchPlan {
            stage: PlanMode::BwrapView,
            ..plan.clone()
        };
        let netns = match mode.closes_host_network() {
            false => None,
            true => {
                let answers_dns = mode.through_proxy() || plan.socket_gate;
                let setup = NetnsInChild::prepare(answers_dns.then(netns::stub_addresses))?;
                view.unshare_net = false;
                stage.network.dns_fds = setup.dns_fds();
                Some(setup)
            }
        };
        ensure_protected_dirs(&plan.policy)?;
        let stage_program = [
            options.own_binary.clone().into_os_string(),
            STAGE_SUBCOMMAND.into(),
        ];
        let argv = bwrap::stage_argv(
            &plan.policy,
            &view,
            availability,
            &jaula_policy::RealHostFs,
            &plan.command[0],
            &options.cwd,
            &stage_program,
        )?;
        if plan.verbose {
            eprintln!(
                "jaula: backend bwrap, one mount a line:\n  {}",
                String::from_utf8_lossy(&bwrap::shell_lines(&argv))
            );
        }
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]);
        if let Some(setup) = &netns {
            setup.install(&mut command);
        }
        Stage::with(command, &stage, Forward::BwrapStage, private_tmp, netns)
    }

    /// `own_binary stage` as a child in `cwd`, natively, reading `plan`. Every step of the
    /// launch sequence (the plan's cgroup and identity included) runs in that child, so
    /// this process keeps its own uid, limits and cgroup.
    pub fn native(plan: &LaunchPlan, own_binary: &Path, cwd: &Path) -> Result<Stage, StartError> {
        let mut command = Command::new(own_binary);
        command.arg(STAGE_SUBCOMMAND).current_dir(cwd);
        Stage::with(command, plan, Forward::Child, None, None)
    }

    fn with(
        mut command: Command,
        plan: &LaunchPlan,
        forward: Forward,
        private_tmp: Option<PrivateTmp>,
        netns: Option<NetnsInChild>,
    ) -> Result<Stage, StartError> {
        let sealed = SealedPlan::new(plan)?;
        sealed.hand_to(&mut command);
        command.env_clear().envs(plan.env.iter().cloned());
        Ok(Stage {
            command,
            forward,
            _sealed: sealed,
            _private_tmp: private_tmp,
            _netns: netns,
        })
    }

    /// Become the stage: `exec` it in place of this process. Returns only on failure.
    pub fn exec(mut self) -> StartError {
        let source = std::os::unix::process::CommandExt::exec(&mut self.command);
        StartError::Start {
            program: self.command.get_program().to_owned(),
            source,
        }
    }

    /// Start the stage and wait for it, forwarding SIGTERM and SIGHUP to it (past
    /// bubblewrap, which passes neither on).
    pub fn run(mut self) -> Result<ExitStatus, StartError> {
        child::spawn_and_wait(&mut self.command, self.forward).map_err(|source| StartError::Start {
            program: self.command.get_program().to_owned(),
            source,
        })
    }

    /// [`Stage::run`], then report on the protected paths that
    /// changed meanwhile: natively Landlock cannot stop the creation of an absent one, and
    /// the view cannot cover one that did not exist when it was built.
    pub fn run_reporting(self, policy: &Policy, verbose: bool) -> Result<ExitStatus, StartError> {
        let snapshot = Snapshot::take(policy);
        if verbose {
            eprintln!(
                "jaula: planting guard: {} protected paths snapshotted; changes are reported \
                 after the command exits (evidence: {})",
                snapshot.len(),
                planting::evidence_path(policy).display()
            );
        }
        let status = self.run()?;
        planting::report_after(&snapshot, policy);
        Ok(status)
    }
}

/// `--network allow`'s stage, started: it binds the cage's listeners inside its network
/// namespace and hands them out here, for the proxy to serve until it ends.
pub(crate) enum AllowStage {
    /// The stage handed its listeners out and runs the command.
    Serving {
        /// The stage (bubblewrap, or `jaula stage`), to wait for.
        child: Child,
        /// Where forwarded signals go: past bubblewrap to the stage.
        forward: Forward,
        /// The proxy's listener, and the steering listeners when the stage could bind them.
        listeners: CageListeners,
        /// The DNS stub's sockets (empty when the stage ended between the two messages).
        dns: Vec<std::net::UdpSocket>,
        /// The protected paths as they were before the stage started.
        snapshot: Snapshot,
        /// SIGTERM, SIGHUP, SIGINT and SIGQUIT, blocked since before the spawn: release
        /// once the proxy's handlers are in place.
        held: HeldSignals,
        /// The proxy's end of the hand-off: its peer closes when the last process of the
        /// stage that holds it ends (the socket gate's supervisor, which stays for the
        /// helpers the command leaves running; without the gate, the stage itself). A
        /// proxy that must live as long as the cage serves until this reports hang-up.
        lifetime: std::os::unix::net::UnixStream,
    },
    /// The stage ended before it could bind (it said why on its stderr); the planting
    /// report is made.
    Ended(ExitStatus),
}

/// Start `--network allow`'s stage for `plan` on `launcher`, and take its listeners.
/// (There is no uncaged fallback: without a network namespace a port rule would admit any
/// host; `cage::linux::prepare` refuses before this.)
pub(crate) fn start_allow(
    plan: &LaunchPlan,
    launcher: Launcher,
    options: &StartOptions,
) -> Result<AllowStage, StartError> {
    let (channel, stage_end) = netns::handoff_pair()?;
    let mut stage_plan = LaunchPlan {
        reports: Reports::default(),
        ..plan.clone()
    };
    stage_plan.network.handoff_fd = Some(stage_end.as_raw_fd());
    let stage = match launcher {
        Launcher::Bwrap(availability) => Stage::in_view(&stage_plan, &availability, options)?,
        Launcher::Native { .. } => Stage::native(&stage_plan, &options.own_binary, &options.cwd)?,
    };
    let snapshot = Snapshot::take(&plan.policy);
    let Stage {
        mut command,
        forward,
        _sealed,
        _private_tmp,
        _netns,
    } = stage;
    let held = HeldSignals::hold().map_err(|source| StartError::Start {
        program: command.get_program().to_owned(),
        source,
    })?;
    held.unblock_in_child(&mut command);
    let mut child = command.spawn().map_err(|source| StartError::Start {
        program: command.get_program().to_owned(),
        source,
    })?;
    drop((stage_end, _sealed, _netns));
    let listeners = match CageListeners::recv(&channel) {
        Ok(Some(listeners)) => listeners,
        Ok(None) | Err(_) => {
            let status = child.wait().map_err(StartError::WaitStage)?;
            planting::report_after(&snapshot, &plan.policy);
            return Ok(AllowStage::Ended(status));
        }
    };
    let dns = netns::recv_dns_sockets(&channel).unwrap_or_default();
    Ok(AllowStage::Serving {
        child,
        forward,
        listeners,
        dns,
        snapshot,
        held,
        lifetime: channel,
    })
}

/// Which side of [`fork_proxy`] this process is.
#[derive(Debug)]
pub enum ProxyFork {
    /// The jaula the caller waits for; the proxy's process has this pid.
    Launcher(i32),
    /// The proxy's own process.
    Proxy,
}

/// Fork `--network allow`'s proxy off the jaula the caller waits for, so the proxy can
/// outlive it (serving the helpers a command leaves running) while the caller's `jaula
/// run` leaves with the command. Refused once the process has a second thread: a fork
/// of a threaded process copies locks held by threads that do not exist in the child.
pub fn fork_proxy() -> Result<ProxyFork, StartError> {
    let threads = std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0);
    if threads != 1 {
        return Err(StartError::ForkProxy(std::io::Error::other(format!(
            "the launching process has {threads} threads, not one"
        ))));
    }
    // SAFETY: the process has one thread (checked above), so the child is a complete copy
    // with no lock held by a thread that does not exist in it.
    match unsafe { libc::fork() } {
        pid if pid < 0 => Err(StartError::ForkProxy(std::io::Error::last_os_error())),
        0 => Ok(ProxyFork::Proxy),
        pid => Ok(ProxyFork::Launcher(pid)),
    }
}

/// Close every descriptor above 2 that is not close-on-exec: what the caller passed down
/// (a pipe of its own) and what was cleared for the stage to inherit (the cage's record).
/// For the proxy's process, which outlives the caller's `jaula run` and must hold none of
/// them; everything this program opens itself is close-on-exec and stays.
pub fn close_inherited() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: F_GETFD only reads the descriptor table; EBADF for the directory's own
        // descriptor, closed since.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
            // SAFETY: no Rust object owns a descriptor without close-on-exec (std and
            // rustix set it on all they open); these are inherited numbers nothing here
            // uses, so closing them cannot pull a descriptor from under an owner.
            unsafe { libc::close(fd) };
        }
    }
}

/// Put `/dev/null` in place of this process's standard descriptors: the proxy that stays
/// for a cage's helpers must not hold the caller's terminal or pipes (`$(jaula run ...)`
/// ends with the command).
pub fn let_go_of_stdio() -> std::io::Result<()> {
    let devnull = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    for target in 0..=2 {
        // SAFETY: dup2 takes integers; `devnull` is open for the call, and replacing 0-2
        // closes only this process's own copies of the caller's descriptors.
        if unsafe { libc::dup2(devnull.as_raw_fd(), target) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Create jaula's own protected directories that do not exist yet (mode 0700), so the
/// view can cover them: a cage cannot protect what is not there, and an empty directory
/// of jaula's own is harmless. The planting guard's paths are never created: an empty
/// `~/.config/systemd` or `.vscode` left on the owner's disk would be a placeholder of
/// exactly the kind that shows up in `git status`.
fn ensure_protected_dirs(policy: &Policy) -> Result<(), StartError> {
    use std::os::unix::fs::DirBuilderExt;
    for protected in policy.protected() {
        if protected.kind != jaula_policy::ProtectKind::Directory
            || !protected.source.is_cage_configuration()
            || Path::new(&protected.path).exists()
        {
            continue;
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&protected.path)
            .map_err(|source| StartError::ProtectedDir {
                path: protected.path.clone(),
                source,
            })?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "start_tests.rs"]
mod tests;
