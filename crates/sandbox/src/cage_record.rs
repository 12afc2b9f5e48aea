//! One record per live cage, for `jaula ps` and `jaula stop`: what the cage is (window,
//! repo, backend, command, when it started) and which process supervises it.
//!
//! The record is a file of JSON lines under the state home's cage directory
//! (`.runtime/cage/live/`), which no cage can write (it is jaula's own, protected, and
//! read-only in the bwrap view). The jaula that starts the cage creates it before anything
//! is confined and hands its descriptor down the launch; the supervisor, which cannot
//! create files there from inside the cage's Landlock domain, appends to that descriptor
//! (who it is when it starts, and that it ended when the last process under it has gone).
//! A record with neither an end nor a live supervisor belongs to a supervisor that died:
//! its cage's gated calls fail from then on, and `jaula ps` says so.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where the records live, under the state home.
pub const LIVE_DIR: &str = ".runtime/cage/live";

/// What a cage is, written when it is created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    /// The `--window` name, if one was given.
    pub window: Option<String>,
    /// The repo the cage makes writable.
    pub repo: PathBuf,
    /// `landlock` or `bwrap`.
    pub backend: String,
    /// Seconds since the epoch.
    pub started_unix: u64,
    /// The command, as text.
    pub command: Vec<String>,
    /// The jaula that created the record (to tell a launch that failed before its
    /// supervisor started from one that is starting).
    pub launcher: ProcessId,
}

/// A process, named so that a reused pid is not taken for it: its pid in its own PID
/// namespace and its start time (clock ticks since boot, `/proc/PID/stat` field 22),
/// which is the same in every namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    /// The pid as the process itself sees it.
    pub pid: i32,
    /// Its start time.
    pub start_ticks: u64,
}

/// One line of a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    /// The cage, as its launcher created it.
    Opened(Opening),
    /// The supervisor has started.
    Supervisor(ProcessId),
    /// The name the supervisor gave itself (`/proc/PID/comm`): with the start time and its
    /// innermost pid it tells it apart from a supervisor of another PID namespace that has
    /// the same pid there and started in the same clock tick.
    Named(String),
    /// The last process under the supervisor has ended, and the supervisor with it.
    Ended,
    /// A process of the cage bound a pathname socket (through the supervisor): the
    /// owner's other cages may connect to it while that very socket lives.
    Bound(BoundSocket),
}

/// A pathname socket a cage bound, named so that neither a reused path nor a reused inode
/// number is taken for it: the file it is bound to, and the socket itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BoundSocket {
    /// The socket file's device, as `stat` splits it.
    pub dev_major: u32,
    /// See `dev_major`.
    pub dev_minor: u32,
    /// The socket file's inode number.
    pub ino: u64,
    /// The socket's own inode number (in sockfs): what sock_diag looks it up by.
    pub socket_ino: u64,
    /// The socket's `SO_COOKIE`: a number the kernel gives one socket and never again, so
    /// a socket that has been closed never answers to it.
    pub cookie: u64,
}

/// This process, as a [`ProcessId`].
pub fn this_process() -> io::Result<ProcessId> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    Ok(ProcessId {
        pid: std::process::id() as i32,
        start_ticks: start_ticks(&stat).ok_or_else(|| io::Error::other("bad /proc/self/stat"))?,
    })
}

/// Give this process a name no other supervisor has (`jgate-` and 36 random bits, within
/// the kernel's 15 characters), and return it.
pub fn name_this_process() -> io::Result<String> {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let name = format!("jgate-{:09x}", hasher.finish() & 0xf_ffff_ffff);
    let c = std::ffi::CString::new(name.clone()).map_err(io::Error::other)?;
    rustix::thread::set_name(&c)?;
    Ok(name)
}

/// Field 22 of a `/proc/PID/stat` line (after the command name, which may hold spaces and
/// parentheses: the last `)` ends it).
pub fn start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // Fields 3.. follow; start time is field 22, the 20th of them.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Create a new record under `state_home` holding `opening`, and return it open for
/// appending. Never follows a planted link: the directory is made 0700 and the file with
/// `O_EXCL | O_NOFOLLOW`.
pub fn create(state_home: &Path, opening: &Opening) -> io::Result<(PathBuf, File)> {
    let dir = state_home.join(LIVE_DIR);
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(&dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let path = dir.join(format!("{nanos}-{}.jsonl", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)?;
    append(&mut file, &Line::Opened(opening.clone()))?;
    Ok((path, file))
}

/// This cage's record for `jaula ps` and `jaula stop`, made by the jaula that starts the
/// launch and inherited by the stage whose supervisor appends to it: the ended cages'
/// records pruned first (each would cost every later supervisor a look), then a new one
/// created, close-on-exec cleared, its ownership handed to the plan's descriptor number.
pub(crate) fn open_for_stage(
    plan: &crate::launch_plan::LaunchPlan,
    backend: &str,
    window: Option<String>,
) -> io::Result<std::os::fd::RawFd> {
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    prune_ended(plan.policy.state_home());
    let opening = Opening {
        window,
        repo: plan.policy.repo().to_path_buf(),
        backend: backend.to_owned(),
        started_unix,
        command: plan
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        launcher: this_process()?,
    };
    let (_, file) = create(plan.policy.state_home(), &opening)?;
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty())?;
    Ok(std::os::fd::IntoRawFd::into_raw_fd(file))
}

/// Remove the records whose cage has ended (their last line is [`Line::Ended`]), as
/// `jaula ps` does when it reads them. Called by each launch before it creates its own:
/// without it every launch an owner never listed with `jaula ps` would leave its record
/// behind, and each later supervisor would pass over all of them (the protected cage
/// directory's walk), a launch slower with every launch before it. A record that has not
/// ended, whose supervisor died, or whose last line is still being written stays.
pub fn prune_ended(state_home: &Path) {
    let dir = state_home.join(LIVE_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        // Never through a link (none can be planted here: the directory is jaula's own).
        let read = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .and_then(io::read_to_string);
        let Ok(text) = read else {
            continue;
        };
        let last = text.lines().rev().find(|l| !l.trim().is_empty());
        if last.and_then(|l| serde_json::from_str::<Line>(l).ok()) == Some(Line::Ended) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Append one line (one `write`, so lines from two processes never interleave).
pub fn append(file: &mut File, line: &Line) -> io::Result<()> {
    let mut text = serde_json::to_vec(line).map_err(io::Error::other)?;
    text.push(b'\n');
    file.write_all(&text)
}

/// Every record under `state_home`, parsed; a line that does not parse is skipped (a
/// record being written, or one from another jaula version).
pub fn read_all(state_home: &Path) -> Vec<(PathBuf, Vec<Line>)> {
    let Ok(entries) = std::fs::read_dir(state_home.join(LIVE_DIR)) else {
        return Vec::new();
    };
    let mut records: Vec<(PathBuf, Vec<Line>)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let lines = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            Some((path, lines))
        })
        .collect();
    records.sort_by(|a, b| a.0.cmp(&b.0));
    records
}

/// One process of the host, as `/proc` shows it to anyone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostProcess {
    /// The pid on the host.
    pub pid: i32,
    /// Its parent, on the host.
    pub ppid: i32,
    /// Its start time.
    pub start_ticks: u64,
    /// Its name (`comm`).
    pub name: String,
}

/// Every running process `/proc` lists now: one that ends while it is read, and a zombie
/// (ended, not yet reaped), are left out.
pub fn host_processes() -> Vec<HostProcess> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            if fields.next()? == "Z" {
                return None;
            }
            let ppid = fields.next()?.parse().ok()?;
            let name = &stat[stat.find('(')? + 1..stat.rfind(')')?];
            Some(HostProcess {
                pid,
                ppid,
                start_ticks: start_ticks(&stat)?,
                name: name.to_owned(),
            })
        })
        .collect()
}

/// The host pid of the process `id` names (its pid in its own namespace, and its start
/// time): the one with that start time whose innermost pid (`NSpid`'s last field) is
/// `id.pid`.
pub fn host_pid_of(id: ProcessId, name: Option<&str>, processes: &[HostProcess]) -> Option<i32> {
    processes
        .iter()
        .filter(|p| p.start_ticks == id.start_ticks)
        .filter(|p| name.is_none_or(|name| p.name == name))
        .find(|p| innermost_pid(p.pid) == Some(id.pid))
        .map(|p| p.pid)
}

fn innermost_pid(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))?
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

/// How many processes descend from `root` (itself not counted).
pub fn descendants(root: i32, processes: &[HostProcess]) -> usize {
    let mut count = 0;
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for child in processes
            .iter()
            .filter(|p| p.ppid == parent && p.pid != root)
        {
            count += 1;
            frontier.push(child.pid);
        }
    }
    count
}

/// What a record says of its cage, judged against the processes running now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CageState {
    /// The supervisor runs (host pid), with this many processes under it.
    Live {
        /// The supervisor's host pid.
        supervisor: i32,
        /// The cage's processes: every descendant of the supervisor, its child subreaper.
        processes: usize,
    },
    /// The launch has not started its supervisor yet.
    Starting,
    /// The supervisor is gone without ending the record: it was killed, and every gated
    /// call of the processes it left fails.
    Dead,
    /// The last process ended, and the supervisor with it.
    Ended,
    /// The launch stopped before it had a supervisor (refused, or killed while starting).
    NeverStarted,
}

/// One recorded cage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cage {
    /// The record's file.
    pub path: PathBuf,
    /// What the cage is.
    pub opening: Opening,
    /// How it stands now.
    pub state: CageState,
}

/// Every recorded cage under `state_home`, judged against `/proc` now.
pub fn survey(state_home: &Path) -> Vec<Cage> {
    let processes = host_processes();
    read_all(state_home)
        .into_iter()
        .filter_map(|(path, lines)| {
            let opening = lines.iter().find_map(|l| match l {
                Line::Opened(o) => Some(o.clone()),
                _ => None,
            })?;
            let state = judge(&lines, &opening, &processes);
            Some(Cage {
                path,
                opening,
                state,
            })
        })
        .collect()
}

/// A record's lines and the processes running now → its cage's state.
pub fn judge(lines: &[Line], opening: &Opening, processes: &[HostProcess]) -> CageState {
    if lines.contains(&Line::Ended) {
        return CageState::Ended;
    }
    let supervisor = lines.iter().find_map(|l| match l {
        Line::Supervisor(id) => Some(*id),
        _ => None,
    });
    let name = lines.iter().find_map(|l| match l {
        Line::Named(name) => Some(name.as_str()),
        _ => None,
    });
    match supervisor {
        Some(id) => match host_pid_of(id, name, processes) {
            Some(pid) => CageState::Live {
                supervisor: pid,
                processes: descendants(pid, processes),
            },
            None => CageState::Dead,
        },
        None if host_pid_of(opening.launcher, None, processes).is_some() => CageState::Starting,
        None => CageState::NeverStarted,
    }
}

#[cfg(test)]
#[path = "cage_record_tests.rs"]
mod tests;
