//! The socket gate's supervisor cannot be stalled or starved by its cage, live, in both
//! backends, as root and as uid 65534.
//!
//! - A caged process that holds a read lease on its own file and then opens it for
//!   writing waits in the kernel's lease break (up to `/proc/sys/fs/lease-break-time`,
//!   45 s by default). The supervisor makes that open for it, so it must wait off the main
//!   path: an unrelated gated call of another caged process completes meanwhile. Judged
//!   by order (the staller has not returned when the other call has), never by time, and
//!   shown to be the kernel's own wait by the same run uncaged.
//! - With the supervisor out of descriptors (its `RLIMIT_NOFILE` lowered from the host), a
//!   gated call fails with `EMFILE` instead of waiting for an answer that never comes, and
//!   the gate works again once the limit is restored. The planting report that the
//!   starved supervisor makes when the command ends says it could not check, never that a
//!   protected file changed.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{bare_tree, cage_here, chown_tree, jaula_run, open_to_others, skip_or_fail};
use jaula_testkit::output::text;
use jaula_testkit::{Backend, User};

const BACKENDS: [Backend; 2] = [Backend::Landlock, Backend::Bwrap];

fn python_or_skip() -> bool {
    if Command::new("python3").arg("--version").output().is_err() {
        skip_or_fail("python3 is not installed");
        return false;
    }
    true
}

/// A staller (forked) takes a read lease on `leased` and opens it for writing; the
/// lease's break signal, taken by a thread of its own, says the open is under way. Only
/// then does the driver (another process) make a gated call, check the staller has not
/// returned, and release the lease.
const LEASE: &str = r#"
import fcntl, os, select, signal, threading
F_SETLEASE = 1024
def say(text): print(text, flush=True)
def line(fd):
    out = b""
    while not out.endswith(b"\n"):
        b = os.read(fd, 1)
        if not b: break
        out += b
    return out.decode().strip()
news_r, news_w = os.pipe()
release_r, release_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(news_r); os.close(release_w)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGIO])
    fd = os.open("leased", os.O_RDONLY)
    fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
    def holder():
        signal.sigwait([signal.SIGIO])
        os.write(news_w, b"breaking\n")
        os.read(release_r, 1)
        fcntl.fcntl(fd, F_SETLEASE, fcntl.F_UNLCK)
    threading.Thread(target=holder, daemon=True).start()
    w = os.open("leased", os.O_WRONLY)
    nonblock = bool(fcntl.fcntl(w, fcntl.F_GETFL) & os.O_NONBLOCK)
    os.write(news_w, f"opened nonblock={nonblock}\n".encode())
    os._exit(0)
os.close(news_w); os.close(release_r)
say(line(news_r))
os.close(os.open("unrelated", os.O_WRONLY | os.O_CREAT, 0o644))
say("created")
pending, _, _ = select.select([news_r], [], [], 0)
alive = os.waitpid(pid, os.WNOHANG) == (0, 0)
say("staller waiting" if alive and not pending else "staller returned")
os.write(release_w, b"x")
say(line(news_r))
os.waitpid(pid, 0)
"#;

const LEASE_WANT: [&str; 4] = [
    "breaking",
    "created",
    "staller waiting",
    "opened nonblock=False",
];

/// A tree owned by `user`, with `leased` in the repo (made here: a lease needs the
/// caller's own file, and no writer open on it).
fn lease_tree(user: User) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (keep, root, home, repo) = bare_tree("gate-stall-");
    fs::write(repo.join("leased"), "lease me\n").unwrap();
    chown_tree(&root, user.uid());
    open_to_others(&root);
    (keep, home, repo)
}

fn lines(stdout: &[u8]) -> Vec<String> {
    text(stdout).lines().map(str::to_owned).collect()
}

/// Run the lease program (`cmd`) as `user` and assert what it printed: [`LEASE_WANT`].
fn lease_output(user: User, mut cmd: Command, what: &str) -> std::process::Output {
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(
        lines(&out.stdout),
        LEASE_WANT,
        "{user:?} {what}: {}",
        text(&out.stderr)
    );
    out
}

/// A lease break the supervisor waits in for the cage holds up no other call.
#[test]
fn a_lease_break_on_the_gate_stalls_no_other_call() {
    if !python_or_skip() {
        return;
    }
    for user in common::users() {
        // Control: uncaged, the staller waits in its own open until the lease is
        // released (the kernel's wait, not the supervisor's).
        let (_k, _home, repo) = lease_tree(user);
        let mut control = Command::new("python3");
        control.args(["-c", LEASE]).current_dir(&repo);
        lease_output(user, control, "uncaged");
        for backend in BACKENDS {
            if !cage_here(backend, user) {
                continue;
            }
            let (_k, home, repo) = lease_tree(user);
            let mut cmd = jaula_run(backend, &home, &repo);
            cmd.args(["--", "python3", "-c", LEASE]);
            let out = lease_output(user, cmd, backend.name());
            assert!(out.status.success(), "{user:?} {}: {out:?}", backend.name());
            assert!(repo.join("unrelated").is_file());
        }
    }
}

/// The caged program: waits for the test between steps, makes a gated call (a creation in
/// the repo) and prints its result. Its last argument marks it in the host's /proc.
const STARVE: &str = r#"
import errno, os, sys
def attempt(name):
    try:
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644))
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print("ready", flush=True)
sys.stdin.readline()
print("starved", attempt("starved"), flush=True)
sys.stdin.readline()
print("restored", attempt("restored"), flush=True)
sys.stdin.readline()
"#;

/// The host pid of the process whose command line is `python3 … marker`.
fn caged_python(marker: &str) -> Option<u32> {
    fs::read_dir("/proc").ok()?.find_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        (args.first()?.ends_with(b"python3") && args.contains(&marker.as_bytes())).then_some(pid)
    })
}

fn field(pid: u32, file: &str, key: &str) -> String {
    let text = fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap();
    let line = text.lines().find(|l| l.starts_with(key)).unwrap();
    line[key.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// Set `pid`'s soft `RLIMIT_NOFILE`, as `user` (the supervisor's own uid: on this kernel
/// root's prlimit64 of the non-dumpable supervisor of uid 65534 is refused, EPERM).
fn set_soft_nofile(pid: u32, soft: &str, user: User) {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--pid={pid}"))
        .arg(format!("--nofile={soft}:"));
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "prlimit: {}", text(&out.stderr));
}

/// A soft `RLIMIT_NOFILE` of 3 leaves the supervisor its standard descriptors and no new
/// one (its next pidfd or open fails with EMFILE), while its poll of three descriptors
/// stays within the limit (poll(2) refuses more descriptors than the limit: EINVAL).
const STARVED: &str = "3";

/// Out of descriptors, the supervisor answers EMFILE rather than leave the caller waiting.
#[test]
fn a_starved_supervisor_answers_with_an_errno() {
    if !python_or_skip() {
        return;
    }
    if Command::new("prlimit").arg("--version").output().is_err() {
        skip_or_fail("prlimit (util-linux) is not installed");
        return;
    }
    common::each_cage_as(&common::users(), |backend, user| {
        starve(backend, user);
    });
}

fn starve(backend: Backend, user: User) {
    let what = format!("{user:?} {}", backend.name());
    let (_k, root, home, repo) = bare_tree("gate-starve-");
    // A protected file with content, which the report reads after the command.
    fs::write(home.join(".bashrc"), "# owner's\n").unwrap();
    chown_tree(&root, user.uid());
    open_to_others(&root);
    let marker = format!(
        "jaula-starve-{}",
        root.file_name().unwrap().to_string_lossy()
    );
    let mut cmd = jaula_run(backend, &home, &repo);
    cmd.args(["--", "python3", "-c", STARVE, &marker])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    user.apply(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut next = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        line.trim().to_owned()
    };
    assert_eq!(next(), "ready", "{what}");
    let python = caged_python(&marker).unwrap_or_else(|| panic!("{what}: no caged python"));
    let supervisor: u32 = field(python, "status", "PPid:").parse().unwrap();
    // The supervisor names itself `jgate-` and a random tag (its record names it so).
    let comm = fs::read_to_string(format!("/proc/{supervisor}/comm")).unwrap();
    assert!(
        comm.starts_with("jgate-"),
        "{what}: the command's parent is its supervisor: {comm}"
    );
    let soft = field(supervisor, "limits", "Max open files");

    set_soft_nofile(supervisor, STARVED, user);
    writeln!(stdin, "go").unwrap();
    assert_eq!(next(), "starved EMFILE", "{what}");
    set_soft_nofile(supervisor, &soft, user);
    writeln!(stdin, "go").unwrap();
    assert_eq!(next(), "restored ok", "{what}");
    // Starved again while the command ends: the report is made without descriptors.
    set_soft_nofile(supervisor, STARVED, user);
    writeln!(stdin, "end").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{what}: {:?} {stderr}", out.status);
    assert!(!repo.join("starved").exists(), "{what}");
    assert!(repo.join("restored").is_file(), "{what}");
    assert!(
        !stderr.contains("protected path changed"),
        "{what}: a failed read reported as a change: {stderr}"
    );
    assert_eq!(
        fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# owner's\n"
    );
    // Natively the supervisor makes the report (in the bwrap view the jaula waiting for
    // bubblewrap does, with descriptors to spare): it could not read what it compares.
    if backend == Backend::Landlock {
        assert!(
            stderr.contains("jaula: could not check protected path after the cage ran: "),
            "{what}: {stderr}"
        );
    }
}
