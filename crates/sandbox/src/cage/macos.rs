//! A [`CageRequest`] under Seatbelt: the command runs under `/usr/bin/sandbox-exec -p
//! PROFILE`, with the profile `jaula profile` prints for the same policy and network.
//!
//! Everything up to the last step is platform-neutral, so [`prepare`] runs and is tested
//! on the Linux machines that build jaula: it makes the window's private temporary
//! directory (the command's `TMPDIR`, as the bwrap view's `/tmp` on Linux), binds
//! `--network allow`'s loopback listener and names it in the proxy variables, and renders
//! the profile and the command line. [`Prepared::start`] (macOS only) applies the process
//! hardening and execs `sandbox-exec`, or under `allow` spawns it for the caller's proxy.

use std::ffi::OsString;
use std::net::TcpListener;
use std::path::PathBuf;

use jaula_policy::network::proxy_env_at;
use jaula_policy::BackendChoice;

use super::{CageRequest, Chosen};
use crate::seatbelt::process::Hardening;
use crate::seatbelt::{self, ProfileNetwork, SeatbeltError};

/// The program that applies a Seatbelt profile, at its one trusted path.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// A Seatbelt cage, planned, not started yet: everything the last step needs.
#[derive(Debug)]
pub struct Prepared {
    /// `/usr/bin/sandbox-exec -p PROFILE CMD ARGS...`.
    pub argv: Vec<OsString>,
    /// The whole environment of the command (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// The profile text, also `argv[2]`.
    pub profile: String,
    /// The window's private temporary directory, created, and the command's `TMPDIR`.
    pub tmpdir: PathBuf,
    /// The process hardening applied before `exec`.
    pub hardening: Hardening,
    /// Print the profile and the hardening steps before `exec`.
    pub verbose: bool,
    /// `--network allow`: the loopback listener the profile admits, for the proxy.
    pub proxy: Option<ProxyListener>,
}

/// `--network allow`'s loopback listener, outside the cage, and its port.
#[derive(Debug)]
pub struct ProxyListener {
    /// Bound on `127.0.0.1`, port chosen by the kernel.
    pub listener: TcpListener,
    /// Its port, the one the profile admits and the proxy variables name.
    pub port: u16,
}

/// Why a Seatbelt cage could not be planned or started. Nothing ran.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeatbeltLaunchError {
    /// A Linux backend was asked for by name.
    #[error("--backend {0}: macOS has only Seatbelt")]
    Backend(BackendChoice),
    /// The window's temporary directory cannot be made; the host's is never used instead.
    #[error("refusing to run: cannot make the cage's private temporary directory: {0}")]
    PrivateTmp(String),
    /// `--network allow`: the proxy's loopback listener could not be bound.
    #[error("cannot bind the proxy: {0}")]
    ProxyBind(#[source] std::io::Error),
    /// The policy has no Seatbelt spelling.
    #[error(transparent)]
    Profile(#[from] SeatbeltError),
    /// A hardening step failed.
    #[error("process hardening failed: {0}")]
    Hardening(#[from] seatbelt::process::HardeningError),
    /// `sandbox-exec` could not be started.
    #[error("cannot execute {SANDBOX_EXEC}: {0}")]
    Start(#[source] std::io::Error),
}

/// Plan `request` under Seatbelt. `sandbox_exec`: whether [`SANDBOX_EXEC`] exists; without
/// it there is no cage. Creates the window's temporary directory and (under `allow`) binds
/// the proxy's listener; nothing else.
pub fn prepare(
    request: CageRequest,
    sandbox_exec: bool,
) -> Result<Chosen<Prepared>, SeatbeltLaunchError> {
    if request.backend != BackendChoice::Auto {
        return Err(SeatbeltLaunchError::Backend(request.backend));
    }
    if !sandbox_exec {
        return Ok(Chosen::NoCage {
            reason: format!("{SANDBOX_EXEC} is missing"),
            remedy: String::new(),
        });
    }
    let CageRequest {
        policy,
        network,
        mut env,
        limits,
        keep_fds,
        window,
        verbose,
        command,
        ..
    } = request;
    // The window's own temporary directory, as the bwrap view's /tmp: what the command
    // leaves there is found again under the state home, apart from the host's. Created as
    // the view's is (0700, owned, no link followed); the descriptors it opens for
    // bubblewrap are closed again at once: only the path is needed here.
    let name = crate::window_tmp::window_dir_name(window.as_deref(), policy.repo());
    crate::window_tmp::PrivateTmp::open(policy.state_home(), &name)
        .map_err(|e| SeatbeltLaunchError::PrivateTmp(e.to_string()))?;
    let tmpdir = seatbelt::cage_tmp_dir(&policy, window.as_deref());
    set_var(&mut env, "TMPDIR", tmpdir.clone().into_os_string());

    let proxy = match network.mode.through_proxy() {
        true => {
            // Port 0: the kernel picks a free one, and the profile is rendered with it.
            let listener =
                TcpListener::bind(("127.0.0.1", 0)).map_err(SeatbeltLaunchError::ProxyBind)?;
            let port = listener
                .local_addr()
                .map_err(SeatbeltLaunchError::ProxyBind)?
                .port();
            for (name, value) in proxy_env_at(port, network.proxy_localhost) {
                set_var(&mut env, &name, value.into());
            }
            Some(ProxyListener { listener, port })
        }
        false => None,
    };
    let profile_network = ProfileNetwork::for_mode(network.mode, proxy.as_ref().map(|p| p.port));
    let options = seatbelt::ProfileOptions {
        network: profile_network,
    };
    let profile = seatbelt::render_profile_with(&policy, &options)?;
    let mut argv: Vec<OsString> = vec![SANDBOX_EXEC.into(), "-p".into(), profile.clone().into()];
    argv.extend(command);
    Ok(Chosen::Cage(Prepared {
        argv,
        env,
        profile,
        tmpdir,
        hardening: Hardening {
            keep_fds,
            max_processes: limits.max_processes,
            max_data_bytes: limits.max_data_bytes,
        },
        verbose,
        proxy,
    }))
}

/// Set `name` to `value`, replacing any earlier value.
fn set_var(env: &mut Vec<(OsString, OsString)>, name: &str, value: OsString) {
    env.retain(|(n, _)| n != name);
    env.push((name.into(), value));
}

#[cfg(target_os = "macos")]
impl Prepared {
    /// Harden this process, then `exec` `sandbox-exec` (returns only with the failure), or
    /// under `--network allow` spawn it and hand the caller its proxy's duty.
    pub fn start(self) -> Result<super::Started, SeatbeltLaunchError> {
        use std::os::unix::process::CommandExt;
        use std::process::Command;
        let steps = seatbelt::process::harden(&self.hardening)?;
        if self.verbose {
            eprintln!("jaula: seatbelt: {SANDBOX_EXEC} -p with this profile:");
            eprint!("{}", self.profile);
            eprintln!("jaula: TMPDIR: {}", self.tmpdir.display());
            for step in steps {
                eprintln!("jaula: hardening: {step}");
            }
        }
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]).env_clear().envs(self.env);
        let Some(proxy) = self.proxy else {
            return Err(SeatbeltLaunchError::Start(cmd.exec()));
        };
        // Held from before the spawn until the proxy's handlers are in place: a SIGTERM in
        // between must reach the cage, not kill this process and leave the cage running.
        let held = crate::child::HeldSignals::hold().map_err(SeatbeltLaunchError::Start)?;
        held.unblock_in_child(&mut cmd);
        let child = cmd.spawn().map_err(SeatbeltLaunchError::Start)?;
        Ok(super::Started::Proxy(Box::new(super::ProxyDuty {
            child,
            forward: crate::child::Forward::Child,
            listener: proxy.listener,
            steered: None,
            dns: Vec::new(),
            held,
            hidden_tmp: Vec::new(),
        })))
    }
}
