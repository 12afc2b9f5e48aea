//! bubblewrap as the first half of a launch: the argv that starts jaula's own stage inside
//! the view (the stage then reads its [`LaunchPlan`](crate::launch_plan::LaunchPlan) from an
//! inherited descriptor), and the cage's private directories that argv binds.

// bubblewrap is Linux-only: the launch that calls this (`start`) is built there alone.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use jaula_policy::{HostFs, Policy};

use super::{render_argv, Availability, BwrapError, BwrapOptions};
use crate::window_tmp::{window_dir_name, PrivateTmp, PrivateTmpError};

/// The directories the view replaces with the window's own.
const REPLACED: [&str; 2] = ["/tmp", "/var/tmp"];

/// bubblewrap's argv for `policy`, ending in `-- STAGE...` (jaula's own stage command).
///
/// Beyond the rendered view: the command, when `command0` names a file beneath `/tmp` or
/// `/var/tmp`, bound read-only at its own path (or it could not even be started; only the
/// file: what it reads from there stays the window's); the working directory likewise when
/// it lies beneath them and outside every other writable root, so the command starts
/// where the caller stood; and `--chdir` to it.
pub(crate) fn stage_argv(
    policy: &Policy,
    options: &BwrapOptions,
    availability: &Availability,
    disk: &dyn HostFs,
    command0: &OsStr,
    cwd: &Path,
    stage: &[OsString],
) -> Result<Vec<OsString>, BwrapError> {
    let mut argv = render_argv(policy, options, disk)?;
    if let Some(program) = availability.program() {
        argv[0] = program.as_os_str().to_os_string();
    }
    let ro_bind = |argv: &mut Vec<OsString>, path: PathBuf| {
        argv.extend([
            "--ro-bind-try".into(),
            path.clone().into_os_string(),
            path.into_os_string(),
        ]);
    };
    if let Some(program) = command_beneath_replaced(command0, cwd) {
        ro_bind(&mut argv, program);
    }
    let in_writable = policy
        .writable()
        .iter()
        .any(|w| !REPLACED.iter().any(|r| w.path == Path::new(r)) && cwd.starts_with(&w.path));
    if !in_writable {
        if let Some(dir) = beneath_replaced(cwd) {
            ro_bind(&mut argv, dir);
        }
    }
    argv.extend(["--chdir".into(), cwd.as_os_str().to_os_string()]);
    argv.push("--".into());
    argv.extend(stage.iter().cloned());
    Ok(argv)
}

fn command_beneath_replaced(program: &OsStr, cwd: &Path) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.components().count() < 2 {
        return None; // a bare name is found on PATH, outside /tmp
    }
    beneath_replaced(&cwd.join(path))
}

/// `arg`, canonical, when it names something the host has beneath a directory this
/// policy's view replaces with the window's own (`/tmp`, `/var/tmp`, where the policy makes
/// them writable) and nothing else binds into the view (another writable root, the working
/// directory `stage_argv` binds): a command handed `arg` in the cage finds nothing there.
/// `None` for anything else, a bare word included: this judges paths only.
pub fn hidden_by_private_tmp(policy: &Policy, cwd: &Path, arg: &OsStr) -> Option<PathBuf> {
    let path = Path::new(arg);
    if !path.is_absolute() && path.components().count() < 2 {
        return None; // a bare word: an option, a name, not a path under /tmp
    }
    let real = beneath_replaced(&cwd.join(path))?;
    let replaced_here = REPLACED.iter().any(|dir| {
        real.starts_with(dir) && policy.writable().iter().any(|w| w.path == Path::new(dir))
    });
    let bound = policy
        .writable()
        .iter()
        .any(|w| !REPLACED.iter().any(|r| w.path == Path::new(r)) && real.starts_with(&w.path));
    let cwd_bound = std::fs::canonicalize(cwd)
        .ok()
        .and_then(|c| beneath_replaced(&c))
        .is_some_and(|c| real.starts_with(c));
    (replaced_here && !bound && !cwd_bound).then_some(real)
}

/// `path`, canonical, when it lies beneath a directory the view replaces.
fn beneath_replaced(path: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    REPLACED
        .iter()
        .any(|dir| real.starts_with(dir) && real != Path::new(dir))
        .then_some(real)
}

/// The cage's own `/tmp`, `/var/tmp` and `/run/user/UID` in the view, wherever the policy
/// makes the host's writable (a window; a tenant never gets them): the host's hold the
/// owner's tmux, X11, D-Bus, docker and agent sockets, which connect(2) reaches through
/// any bind. An error is the reason to refuse: never fall back to the host's `/tmp`.
///
/// `window` is the window name the caller was given, if any. The returned directories
/// must stay open until bubblewrap has started: it binds them by descriptor.
pub(crate) fn private_view(
    policy: &Policy,
    window: Option<&str>,
    options: &mut BwrapOptions,
    verbose: bool,
) -> Result<Option<PrivateTmp>, PrivateTmpError> {
    if verbose {
        eprintln!("jaula: pid namespace: {}", describe_pid_ns(options.proc_fs));
    }
    let writable = |p: &str| policy.writable().iter().any(|w| w.path == Path::new(p));
    if writable("/run/user") {
        // The real uid: the one bubblewrap maps into its user namespace, and the one the
        // owner's XDG_RUNTIME_DIR is named after.
        let uid = rustix::process::getuid().as_raw();
        options.private_run_user = Some(uid);
        if verbose {
            eprintln!(
                "jaula: /run/user: the cage's own, empty /run/user/{uid} (the host's bus, \
                 docker, podman and agent sockets are not in the view)"
            );
        }
    }
    if !writable("/tmp") {
        return Ok(None);
    }
    let name = window_dir_name(window, policy.repo());
    let tmp = PrivateTmp::open(policy.state_home(), &name)?;
    options.private_tmp = Some(tmp.fds());
    if verbose {
        eprintln!(
            "jaula: /tmp and /var/tmp: the cage's own, {dir}/{} and {dir}/{} (the host's are \
             not in the view)",
            crate::window_tmp::TMP_NAME,
            crate::window_tmp::VAR_TMP_NAME,
            dir = tmp.window_dir().display()
        );
    }
    Ok(Some(tmp))
}

/// What `/proc` shows the caged process, for `-v`.
pub fn describe_pid_ns(own: bool) -> &'static str {
    if own {
        "the cage's own, with its own /proc: host processes and their command lines are \
         not visible"
    } else {
        "the host's (LIMIT): /proc lists every host process, and their command lines \
         (/proc/<pid>/cmdline) are readable; never pass secrets in argv"
    }
}

#[cfg(test)]
#[path = "stage_tests.rs"]
mod tests;
