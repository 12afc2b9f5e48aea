//! `jaula run --network allow`: the proxy in a process of its own, which lives as long as
//! the cage's processes do, while the jaula the caller waits for leaves with the command.
//!
//! Once the stage has handed its listeners out, the launching jaula (the *launcher*, the
//! pid a shell or tmux waits for) forks the *proxy* process, before either has a thread.
//! The launcher waits for the stage and forwards SIGTERM and SIGHUP past it, as before;
//! the proxy serves the cage's listeners and DNS stub. When the stage ends, the launcher
//! hands its status to the proxy over a pipe; the proxy prints the exit summary (what it
//! did while the command ran) on the caller's stderr, puts `/dev/null` in place of the
//! caller's descriptors and says so over a second pipe; the launcher then leaves with the
//! status. The proxy serves on silently (its `--log` still records every decision) until
//! the hand-off channel hangs up: the stage's socket gate supervisor holds its other end
//! until the cage's last process has ended (without the gate, the stage does, until the
//! command's exec).

use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use jaula_sandbox::cage::ProxyDuty;
use jaula_sandbox::exit::exit_like;
use jaula_sandbox::planting;
use jaula_sandbox::start::{self, ProxyFork};

use crate::commands::network_notice;
use crate::Outcome;

/// Serve the cage's proxy in a process of its own and leave, in this one, with the
/// command's status once the stage has ended.
pub(crate) fn run(
    duty: ProxyDuty,
    proxy: jaula_proxy::Proxy,
    policy: &jaula_policy::Policy,
) -> Outcome {
    let pipe = || {
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| start::StartError::ForkProxy(e.into()))
    };
    let (ended_in, ended_out) = pipe()?;
    let (told_in, told_out) = pipe()?;
    let ProxyDuty {
        child,
        forward,
        listener,
        steered,
        dns,
        held,
        snapshot,
        lifetime,
        hidden_tmp,
    } = duty;
    let served = jaula_proxy::Served {
        listener,
        steered: match steered {
            Some((tls, http)) => vec![
                jaula_proxy::SteeredListener::tls(tls),
                jaula_proxy::SteeredListener::http(http),
            ],
            None => Vec::new(),
        },
        dns,
    };
    match start::fork_proxy()? {
        ProxyFork::Proxy => {
            drop((child, ended_out, told_in, snapshot));
            // TERM, HUP, INT and QUIT stay blocked here and in the runtime's threads:
            // they are the launcher's to forward while the command lives, and must not end
            // the proxy a helper still uses.
            std::mem::forget(held);
            serve(served, proxy, lifetime, ended_in, told_out)
        }
        ProxyFork::Launcher(_) => {
            drop((served, lifetime, ended_in, told_out));
            let forward_past = |pid: rustix::process::Pid, signal: rustix::process::Signal| {
                jaula_sandbox::child::forward_signal(
                    pid.as_raw_nonzero().get(),
                    signal.as_raw(),
                    forward,
                )
            };
            let status = jaula_proxy::wait_forwarding(child, forward_past, || held.release())?;
            let _ = rustix::io::write(&ended_out, &status.into_raw().to_ne_bytes());
            drop(ended_out);
            // The proxy's word that its summary is out, or its end.
            let mut byte = [0u8; 1];
            while let Err(rustix::io::Errno::INTR) = rustix::io::read(&told_in, &mut byte) {}
            planting::report_after(&snapshot, policy);
            if let Some(line) = crate::commands::tmp_notice::after_exit(status, &hidden_tmp) {
                eprintln!("{line}");
            }
            exit_like(status)
        }
    }
}

/// The proxy's process: serve until the cage's last process has ended.
fn serve(
    served: jaula_proxy::Served,
    proxy: jaula_proxy::Proxy,
    lifetime: UnixStream,
    ended: OwnedFd,
    told: OwnedFd,
) -> ! {
    // A session of its own: a terminal's SIGINT, SIGQUIT and SIGHUP go to its foreground
    // group, which this process leaves. Named, for `ps`.
    let _ = rustix::process::setsid();
    // Nothing of the caller's beyond its standard descriptors (let go of below, once the
    // summary is out), nor the cage's record: the proxy may outlive them all.
    start::close_inherited();
    let _ = rustix::thread::set_name(c"jaula-proxy");
    let served = jaula_proxy::serve_while(served, proxy, move |proxy| {
        if let Some(status) = read_status(&ended) {
            let summary = proxy.summary();
            if !summary.is_empty() {
                eprintln!("{summary}");
            }
            let saw_requests = summary.allowed > 0 || !summary.is_empty();
            if let Some(note) = network_notice::after_allow(status, saw_requests) {
                eprintln!("{note}");
            }
        }
        drop(ended);
        let _ = start::let_go_of_stdio();
        let _ = rustix::io::write(&told, &[1]);
        drop(told);
        wait_for_hangup(&lifetime);
    });
    match served {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("jaula: network allow: {e}");
            std::process::exit(1)
        }
    }
}

/// The stage's status from the launcher; `None` when the launcher ended without one
/// (killed): there is no summary to print then.
fn read_status(ended: &OwnedFd) -> Option<ExitStatus> {
    let mut raw = [0u8; 4];
    let mut got = 0;
    while got < raw.len() {
        match rustix::io::read(ended, &mut raw[got..]) {
            Ok(0) => return None,
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
    Some(ExitStatus::from_raw(i32::from_ne_bytes(raw)))
}

/// Block until the stage's end of the hand-off has been closed by every process that held
/// it. Nothing more is sent on it after the listeners: anything that is, is read and
/// dropped.
fn wait_for_hangup(lifetime: &UnixStream) {
    use std::io::Read;
    let mut buf = [0u8; 64];
    let mut lifetime = lifetime;
    loop {
        match lifetime.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
