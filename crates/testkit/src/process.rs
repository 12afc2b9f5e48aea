//! Processes a test starts beside the cage (servers, agents, victims): never left running
//! after the test, whether it passed or panicked.

use std::process::Child;

/// A child process that is killed and reaped when dropped (or when [`Reaped::stop`] is
/// called first, for a test that must order its clean-up).
pub struct Reaped(pub Child);

impl Reaped {
    /// Kill and reap the process; a process already gone is no error.
    pub fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// The process's pid.
    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Copy the program `from` to `to` (mode 0755) by running `cp`, never by opening `to` for
/// writing in this process: the tests of a crate run as threads of one process, and any
/// other thread's fork would inherit such a descriptor until its exec; executing `to`
/// meanwhile fails with ETXTBSY ("Text file busy").
pub fn copy_program(from: &std::path::Path, to: &std::path::Path) {
    let copied = std::process::Command::new("cp")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(copied.success(), "cp {} {}", from.display(), to.display());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Wait until the process `pid` (not this process's child) has ended: on a pidfd, never
/// on a timer. A pid that names no process any more has ended already.
#[cfg(target_os = "linux")]
pub fn wait_until_gone(pid: i32) {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        panic!("not a pid: {pid}");
    };
    let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else {
        return;
    };
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    rustix::event::poll(&mut fds, None).unwrap();
}

/// Make the FIFOs `names` (mode 0600) in `dir`: how a test and a caged helper hand each
/// other a turn without a timer.
#[cfg(target_os = "linux")]
pub fn make_fifos(dir: &std::path::Path, names: &[&str]) {
    for name in names {
        rustix::fs::mkfifoat(rustix::fs::CWD, dir.join(name), 0o600.into()).unwrap();
    }
}

/// A child started with stdin and stdout piped that has said it is ready: its first
/// line was `ready` (asserted). The stdin is held apart from the child, so waiting on the
/// child does not close it; the child's input ends when the test drops it.
pub struct Ready {
    /// The running child (its stdin and stdout taken).
    pub child: Child,
    /// The child's input, open until dropped.
    pub stdin: std::process::ChildStdin,
    /// The rest of the child's output, after the ready line.
    pub stdout: std::io::BufReader<std::process::ChildStdout>,
}

/// Spawn `cmd` with stdin and stdout piped and read its first line, which must be
/// `ready` followed by a newline.
pub fn spawn_ready(cmd: &mut std::process::Command, ready: &str) -> Ready {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, format!("{ready}\n"));
    Ready {
        child,
        stdin,
        stdout,
    }
}

/// The pids of the processes in `/proc`, each with its `/proc/PID` directory: for a test
/// that finds the processes a run left behind.
pub fn proc_pids() -> Vec<(i32, std::path::PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            Some((pid, entry.path()))
        })
        .collect()
}
