//! Run the proxy beside the caged process and stop with it.
//!
//! `jaula run --network allow` cannot `exec` the cage as the other modes do: the proxy
//! must live in a process outside the cage for as long as the cage does. So `run` spawns
//! the cage as a child and [`supervise`] serves until that child exits, then returns its
//! status for the caller to mirror (`jaula_sandbox::exit::exit_like`).
//!
//! On Linux the proxy outlives that wait: [`serve_while`] serves in a process of its own,
//! for as long as the cage's processes live, and [`wait_forwarding`] is the wait alone,
//! in the jaula the caller waits for (`jaula run`'s `allow_proxy`).
//!
//! Signals: SIGTERM and SIGHUP sent to jaula are forwarded to the child (a service
//! manager or a closing terminal stops the cage, not just the proxy). SIGINT and SIGQUIT
//! are caught and not forwarded, as system(3) ignores them: a terminal delivers them to
//! the whole foreground process group, so the caged process already has its own copy,
//! and a second one would turn an agent's "press Ctrl-C again to quit" into a quit.

use std::process::{Child, ExitStatus};

use tokio::signal::unix::{signal, SignalKind};

use crate::steer::{self, SteeredListener};
use crate::{serve, Proxy, Summary};

/// How the supervised child ended, and what the proxy blocked meanwhile.
#[derive(Debug)]
pub struct Supervised {
    /// The caged child's exit status, passed on as jaula's own.
    pub status: ExitStatus,
    /// What the proxy allowed and blocked while the child ran.
    pub summary: Summary,
}

/// Why the proxy could not serve the caged child to its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuperviseError {
    /// The tokio runtime could not be built (threads, descriptors).
    #[error("cannot start the proxy's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The cage's listener could not be served.
    #[error("cannot serve on the cage's listener: {0}")]
    Listener(#[source] std::io::Error),
    /// The signal handlers (TERM and HUP forwarded to the child) could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Signals(#[source] std::io::Error),
    /// Waiting for the child failed.
    #[error("cannot wait for the caged process: {0}")]
    Wait(#[source] std::io::Error),
}

/// Everything the proxy serves for one cage: its own listener, the steering listeners
/// and the DNS stub's sockets (each possibly empty).
#[derive(Debug)]
pub struct Served {
    /// The listener the proxy variables name.
    pub listener: std::net::TcpListener,
    /// For clients that ignore the proxy variables (`steer`).
    pub steered: Vec<SteeredListener>,
    /// The cage's DNS stub (Linux): answered by the proxy's rules.
    pub dns: Vec<std::net::UdpSocket>,
}

/// Serve everything in `served` with `proxy` until `child` exits; return its status.
/// SIGTERM and SIGHUP are handed to `forward` with the child's pid: [`to_child`] signals
/// the child itself, and a caller whose child passes no signal on (bubblewrap) sends them
/// past it. `handlers_ready` is called once the signal handlers are in place: a caller
/// that kept the signals blocked since before it spawned `child` (so that one sent
/// meanwhile could not kill it and orphan the child) unblocks them there, and what
/// arrived in between is forwarded then.
pub fn supervise(
    child: Child,
    served: Served,
    proxy: Proxy,
    forward: impl Fn(rustix::process::Pid, rustix::process::Signal),
    handlers_ready: impl FnOnce(),
) -> Result<Supervised, SuperviseError> {
    let runtime = runtime()?;
    let tasks = {
        let _entered = runtime.enter();
        start_serving(served, &proxy)?
    };
    let status = wait_in(&runtime, child, forward, handlers_ready);
    for task in tasks {
        task.abort();
    }
    // Open tunnels end with the cage: nothing inside is left to use them.
    runtime.shutdown_background();
    Ok(Supervised {
        status: status?,
        summary: proxy.summary(),
    })
}

/// Serve everything in `served` with `proxy` while `during` runs on this thread, and stop
/// when it returns. `during` may block: the proxy's tasks run on the runtime's own
/// threads. For a proxy in a process of its own, which must serve for as long as the
/// cage's processes live, not only as long as one child does.
pub fn serve_while<T>(
    served: Served,
    proxy: Proxy,
    during: impl FnOnce(&Proxy) -> T,
) -> Result<T, SuperviseError> {
    let runtime = runtime()?;
    let tasks = {
        let _entered = runtime.enter();
        start_serving(served, &proxy)?
    };
    let out = during(&proxy);
    for task in tasks {
        task.abort();
    }
    runtime.shutdown_background();
    Ok(out)
}

/// Wait for `child`, forwarding SIGTERM and SIGHUP as [`supervise`] does, without serving
/// anything: for the jaula the caller waits for when the proxy runs in a process of its
/// own.
pub fn wait_forwarding(
    child: Child,
    forward: impl Fn(rustix::process::Pid, rustix::process::Signal),
    handlers_ready: impl FnOnce(),
) -> Result<ExitStatus, SuperviseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SuperviseError::Runtime)?;
    let status = wait_in(&runtime, child, forward, handlers_ready);
    runtime.shutdown_background();
    status
}

fn runtime() -> Result<tokio::runtime::Runtime, SuperviseError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(SuperviseError::Runtime)
}

/// Start serving the listener, the DNS stub and the steering listeners; call within the
/// runtime's context.
fn start_serving(
    served: Served,
    proxy: &Proxy,
) -> Result<Vec<tokio::task::JoinHandle<()>>, SuperviseError> {
    let Served {
        listener,
        steered,
        dns,
    } = served;
    listener
        .set_nonblocking(true)
        .map_err(SuperviseError::Listener)?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(SuperviseError::Listener)?;
    let mut tasks = vec![tokio::spawn(serve(listener, proxy.clone()))];
    for socket in dns {
        socket
            .set_nonblocking(true)
            .map_err(SuperviseError::Listener)?;
        let socket = tokio::net::UdpSocket::from_std(socket).map_err(SuperviseError::Listener)?;
        #[cfg(target_os = "linux")]
        tasks.push(tokio::spawn(crate::dns::serve_dns(socket, proxy.clone())));
        #[cfg(not(target_os = "linux"))]
        drop(socket);
    }
    for one in steered {
        tasks.push(steer::start(one, proxy.clone()).map_err(SuperviseError::Listener)?);
    }
    Ok(tasks)
}

/// Wait on `runtime` for `child` to exit, forwarding SIGTERM and SIGHUP.
fn wait_in(
    runtime: &tokio::runtime::Runtime,
    mut child: Child,
    forward: impl Fn(rustix::process::Pid, rustix::process::Signal),
    handlers_ready: impl FnOnce(),
) -> Result<ExitStatus, SuperviseError> {
    let pid = rustix::process::Pid::from_child(&child);
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    // A plain thread: waitpid blocks, and the runtime must not wait for it at shutdown.
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    runtime.block_on(async {
        let mut term = signal(SignalKind::terminate()).map_err(SuperviseError::Signals)?;
        let mut hup = signal(SignalKind::hangup()).map_err(SuperviseError::Signals)?;
        let mut int = signal(SignalKind::interrupt()).map_err(SuperviseError::Signals)?;
        let mut quit = signal(SignalKind::quit()).map_err(SuperviseError::Signals)?;
        handlers_ready();
        tokio::pin!(done_rx);
        let status = loop {
            tokio::select! {
                waited = &mut done_rx => break waited,
                _ = term.recv() => forward(pid, rustix::process::Signal::TERM),
                _ = hup.recv() => forward(pid, rustix::process::Signal::HUP),
                _ = int.recv() => {}
                _ = quit.recv() => {}
            }
        };
        match status {
            Ok(Ok(status)) => Ok(status),
            Ok(Err(e)) => Err(SuperviseError::Wait(e)),
            Err(_) => Err(SuperviseError::Wait(std::io::Error::other(
                "the waiting thread ended without a status",
            ))),
        }
    })
}

/// The plain forward for [`supervise`]: the signal to the child itself.
pub fn to_child(pid: rustix::process::Pid, signal: rustix::process::Signal) {
    // The child may already be gone (ESRCH); its exit is picked up by the wait above.
    let _ = rustix::process::kill_process(pid, signal);
}
