//! `jaula ps` and `jaula stop`: the live cages of this owner, and ending one.
//!
//! A cage lives as long as its processes: a helper a window leaves running keeps its cage
//! (and its supervisor) after `jaula run` has returned. Each window cage is recorded under
//! the state home (`jaula_sandbox::cage_record`); these commands read the records, judge
//! them against `/proc`, and tidy away the ones whose cage has ended.

use std::path::PathBuf;

use clap::Args;
use jaula_sandbox::cage_record::{self, Cage, CageState};

use crate::error::CliError;
use crate::{Outcome, Report};

/// Where the records are: the flags that name the state home.
#[derive(Args, Debug, Clone)]
pub struct StateHomeArgs {
    /// The home whose state home is read (default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The Agents City state home (overrides AGENTS_CITY_HOME and the config file's).
    #[arg(long, value_name = "DIR")]
    pub state_home: Option<PathBuf>,
    /// The config file (overrides JAULA_CONFIG; default ~/.config/jaula/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `jaula ps`: one line per live cage of this owner.
///
/// Each line: the window, the repo, the backend, when the cage started, how many processes
/// are still under it, its state and the command. A cage outlives `jaula run` while any
/// process it started runs (a bus hub, a build daemon); `dead` means its supervisor was
/// killed, so its processes' gated calls fail. Records of ended cages are removed.
#[derive(Args, Debug)]
pub struct PsArgs {
    #[command(flatten)]
    pub state: StateHomeArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `jaula stop WINDOW`: end one window's cage and every process under it.
///
/// The cage's supervisor, as the child subreaper of every process the window started,
/// kills them level by level with SIGKILL (only its own unreaped children, so no pid can
/// have been reused) and leaves when none is left. Exit 0 when a cage was stopped, 1 when
/// no live cage has that window name.
#[derive(Args, Debug)]
pub struct StopArgs {
    /// The window name (`--window` of `jaula run` or `jaula line`).
    pub window: String,
    #[command(flatten)]
    pub state: StateHomeArgs,
}

fn state_home(args: &StateHomeArgs) -> Result<PathBuf, CliError> {
    let flags = jaula_policy::CageFlags {
        home: args.home.clone(),
        state_home: args.state_home.clone(),
        config: args.config.clone(),
        ..Default::default()
    };
    let sources = crate::context::sources_from(&flags)?;
    let spec = &sources.spec;
    Ok(match &spec.state_home {
        Some(path) if path.is_absolute() => path.clone(),
        Some(path) => spec.home.join(path),
        None => spec.home.join(jaula_policy::defaults::DEFAULT_STATE_HOME),
    })
}

/// The cages worth showing; the records of ended ones, and of launches that never got a
/// supervisor, are removed on the way.
fn current(state_home: &std::path::Path) -> Vec<Cage> {
    cage_record::survey(state_home)
        .into_iter()
        .filter(|cage| {
            let finished = matches!(cage.state, CageState::Ended | CageState::NeverStarted);
            if finished {
                let _ = std::fs::remove_file(&cage.path);
            }
            !finished
        })
        .collect()
}

fn state_word(state: CageState) -> (&'static str, Option<usize>, Option<i32>) {
    match state {
        CageState::Live {
            supervisor,
            processes,
        } => ("live", Some(processes), Some(supervisor)),
        CageState::Starting => ("starting", None, None),
        CageState::Dead => ("dead", None, None),
        CageState::Ended => ("ended", None, None),
        CageState::NeverStarted => ("never-started", None, None),
    }
}

fn started(unix: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(unix);
    let ago = now.saturating_sub(unix);
    match ago {
        0..=59 => format!("{ago}s ago"),
        60..=3599 => format!("{}m ago", ago / 60),
        _ => format!("{}h{:02}m ago", ago / 3600, (ago % 3600) / 60),
    }
}

/// `jaula ps`.
pub fn ps(args: &PsArgs) -> Outcome {
    let cages = current(&state_home(&args.state)?);
    if args.json {
        let list: Vec<serde_json::Value> = cages
            .iter()
            .map(|c| {
                let (state, processes, supervisor) = state_word(c.state);
                serde_json::json!({
                    "window": c.opening.window,
                    "repo": c.opening.repo,
                    "backend": c.opening.backend,
                    "started_unix": c.opening.started_unix,
                    "command": c.opening.command,
                    "state": state,
                    "processes": processes,
                    "supervisor_pid": supervisor,
                })
            })
            .collect();
        return Report::json(&serde_json::Value::Array(list), 0);
    }
    let mut text = String::from("WINDOW\tREPO\tBACKEND\tSTARTED\tPROCS\tSTATE\tCOMMAND\n");
    for c in &cages {
        let (state, processes, _) = state_word(c.state);
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            c.opening.window.as_deref().unwrap_or("-"),
            c.opening.repo.display(),
            c.opening.backend,
            started(c.opening.started_unix),
            processes.map_or("-".to_owned(), |n| n.to_string()),
            state,
            c.opening.command.join(" "),
        ));
    }
    Ok(Report::printed(text, 0))
}

/// `jaula stop`.
pub fn stop(args: &StopArgs) -> Outcome {
    let state_home = state_home(&args.state)?;
    let mut stopped = 0;
    for cage in current(&state_home) {
        if cage.opening.window.as_deref() != Some(args.window.as_str()) {
            continue;
        }
        match cage.state {
            CageState::Live { supervisor, .. } => {
                stop_supervisor(supervisor, &cage, &state_home).map_err(|source| {
                    CliError::StopCage {
                        window: args.window.clone(),
                        source,
                    }
                })?;
                eprintln!(
                    "jaula: stopped the cage of window {} (repo {})",
                    args.window,
                    cage.opening.repo.display()
                );
                stopped += 1;
            }
            CageState::Dead => {
                eprintln!(
                    "jaula: the cage of window {} had lost its supervisor; its record is removed \
                     (its processes' gated calls fail; end them with kill)",
                    args.window
                );
                let _ = std::fs::remove_file(&cage.path);
            }
            _ => {}
        }
    }
    if stopped == 0 {
        eprintln!("jaula: no live cage has the window name {}", args.window);
        return Ok(Report::status(1));
    }
    Ok(Report::status(0))
}

/// Ask the supervisor (by pidfd, after checking it is still the recorded process) to end
/// its cage, and wait until it has.
fn stop_supervisor(pid: i32, cage: &Cage, state_home: &std::path::Path) -> std::io::Result<()> {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    let Some(id) = Pid::from_raw(pid) else {
        return Ok(());
    };
    let fd = match pidfd_open(id, PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::SRCH) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    // The pidfd pins the process: if it is still the recorded supervisor now, the signal
    // cannot reach another that took its pid.
    let still = cage_record::survey(state_home).into_iter().any(|c| {
        c.path == cage.path
            && matches!(c.state, CageState::Live { supervisor, .. } if supervisor == pid)
    });
    if !still {
        return Ok(());
    }
    let signal = Signal::from_named_raw(jaula_sandbox::call_gate::STOP_CAGE)
        .ok_or_else(|| std::io::Error::other("no stop signal"))?;
    pidfd_send_signal(&fd, signal)?;
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let limit = rustix::event::Timespec {
        tv_sec: 10,
        tv_nsec: 0,
    };
    let ready = rustix::event::poll(&mut fds, Some(&limit))?;
    if ready == 0 {
        return Err(std::io::Error::other(format!(
            "the supervisor (pid {pid}) has not ended within 10 s"
        )));
    }
    Ok(())
}
