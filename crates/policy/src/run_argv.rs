//! The one place a `jaula run` command line is built.
//!
//! Three callers need one, each to start a cage later or elsewhere: `jaula line` (the
//! prefix a tmux launcher puts before a window's command), `jaula contract run` (the
//! tenant spawn it starts as the Contract's uid) and the Kubernetes renderer (the
//! container's command). jaula's own stages never get one: they read a resolved
//! `jaula_sandbox::launch_plan::LaunchPlan` instead.
//!
//! The flags come out in one fixed order, so a printed prefix is stable from run to run
//! and reads the same way whoever built it.

use std::ffi::OsString;
use std::path::PathBuf;

/// The `jaula run` subcommand's name.
pub const RUN_SUBCOMMAND: &str = "run";

/// What a `jaula run` command line says; every field is one flag (or none when empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunArgv {
    /// `--backend NAME`.
    pub backend: Option<&'static str>,
    /// `--no-pid-ns`: the bwrap view shares the host's PID namespace and `/proc`, so a pid
    /// the command writes down names it on the host too (no effect natively, where there
    /// is no PID namespace to leave).
    pub no_pid_ns: bool,
    /// `--tenant`: start from a tenant's writable set.
    pub tenant: bool,
    /// `--repo DIR`.
    pub repo: Option<PathBuf>,
    /// `--home DIR`.
    pub home: Option<PathBuf>,
    /// `--state-home DIR`.
    pub state_home: Option<PathBuf>,
    /// `--token-file FILE`.
    pub token_file: Option<PathBuf>,
    /// `--mounts`, colon-separated; omitted when empty.
    pub mounts: OsString,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--deny PATH`, once per path.
    pub deny: Vec<PathBuf>,
    /// `--allow-write PATH`, once per path.
    pub allow_write: Vec<PathBuf>,
    /// `--allow-unix-socket PATH`, once per socket.
    pub allow_unix_socket: Vec<PathBuf>,
    /// `--allow-unix-preset NAME`, once per preset.
    pub allow_unix_preset: Vec<String>,
    /// `--unprotect PATH`, once per path.
    pub unprotect: Vec<PathBuf>,
    /// `--protect-path-dirs`.
    pub protect_path_dirs: bool,
    /// `--window NAME`.
    pub window: Option<String>,
    /// `--max-procs N`.
    pub max_processes: Option<u64>,
    /// `--max-data BYTES`.
    pub max_data_bytes: Option<u64>,
    /// `--network MODE`.
    pub network: Option<&'static str>,
    /// `--allow-domain NAME`, once per name.
    pub allow_domain: Vec<String>,
    /// `--deny-domain NAME`, once per name.
    pub deny_domain: Vec<String>,
    /// `--allow-preset NAME`, once per preset.
    pub allow_preset: Vec<String>,
    /// `--allow-address ADDR[/PREFIX]`, once per range.
    pub allow_address: Vec<String>,
    /// `--log FILE`.
    pub network_log: Option<PathBuf>,
    /// `--hand-access-token AGENT`, once per agent.
    pub hand_access_token: Vec<&'static str>,
}

impl RunArgv {
    /// `PROGRAM run FLAGS -- COMMAND...` (a prefix ending in `--` when `command` is empty).
    pub fn argv<I>(&self, program: impl Into<OsString>, command: I) -> Vec<OsString>
    where
        I: IntoIterator,
        I::Item: Into<OsString>,
    {
        let mut out = Line(vec![program.into(), RUN_SUBCOMMAND.into()]);
        out.option("--backend", self.backend);
        out.switch("--no-pid-ns", self.no_pid_ns);
        out.switch("--tenant", self.tenant);
        out.option("--repo", self.repo.as_ref());
        out.option("--home", self.home.as_ref());
        out.option("--state-home", self.state_home.as_ref());
        out.option("--token-file", self.token_file.as_ref());
        out.option("--mounts", Some(&self.mounts).filter(|m| !m.is_empty()));
        out.option("--config", self.config.as_ref());
        out.each("--deny", &self.deny);
        out.each("--allow-write", &self.allow_write);
        out.each("--allow-unix-socket", &self.allow_unix_socket);
        out.each("--allow-unix-preset", &self.allow_unix_preset);
        out.each("--unprotect", &self.unprotect);
        out.switch("--protect-path-dirs", self.protect_path_dirs);
        out.option("--window", self.window.as_ref());
        out.option("--max-procs", self.max_processes.map(|n| n.to_string()));
        out.option("--max-data", self.max_data_bytes.map(|n| n.to_string()));
        out.option("--network", self.network);
        out.each("--allow-domain", &self.allow_domain);
        out.each("--deny-domain", &self.deny_domain);
        out.each("--allow-preset", &self.allow_preset);
        out.each("--allow-address", &self.allow_address);
        out.option("--log", self.network_log.as_ref());
        out.each("--hand-access-token", &self.hand_access_token);
        out.0.push("--".into());
        out.0.extend(command.into_iter().map(Into::into));
        out.0
    }
}

/// The command line being built.
struct Line(Vec<OsString>);

impl Line {
    fn option<V: AsRef<std::ffi::OsStr>>(&mut self, name: &str, value: Option<V>) {
        if let Some(v) = value {
            self.0.push(name.into());
            self.0.push(v.as_ref().to_os_string());
        }
    }

    fn each<V: AsRef<std::ffi::OsStr>>(&mut self, name: &str, values: &[V]) {
        for v in values {
            self.option(name, Some(v));
        }
    }

    fn switch(&mut self, name: &str, on: bool) {
        if on {
            self.0.push(name.into());
        }
    }
}

#[cfg(test)]
#[path = "run_argv_tests.rs"]
mod tests;
