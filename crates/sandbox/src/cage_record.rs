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

#[cfg(test)]
#[path = "cage_record_tests.rs"]
mod tests;
