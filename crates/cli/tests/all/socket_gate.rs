//! The socket gate, live, in both backends: what it must refuse (a host socket, even one
//! renamed over a socket the cage bound; unix datagram sockets; the supervisor's memory)
//! and what it must keep working (the cage's own sockets, TCP to the host's loopback,
//! blocking and non-blocking connects).
//!
//! Each case is a small python3 script run in the cage, whose printed verdicts are checked
//! against what a host-side listener saw.

use crate::common;

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{jaula, scratch, skip_or_fail};
use jaula_testkit::output::{success, text};

const BACKENDS: [&str; 2] = ["landlock", "bwrap"];

fn python_or_skip() -> bool {
    if Command::new("python3").arg("--version").output().is_err() {
        skip_or_fail("python3 is not installed");
        return false;
    }
    true
}

/// A fresh [`home`] (prefix `name`) and the Python `program` run uncaged in its repo:
/// `(keep, home, repo, output)`; `None` after a skip when python3 is missing.
fn uncaged_python(
    name: &str,
    program: &str,
) -> Option<(tempfile::TempDir, PathBuf, PathBuf, Output)> {
    if !python_or_skip() {
        return None;
    }
    let (keep, home, repo) = home(name);
    let uncaged = Command::new("python3")
        .args(["-c", program])
        .current_dir(&repo)
        .output()
        .unwrap();
    Some((keep, home, repo, uncaged))
}

/// Runs `program` caged on each backend: each run must print `want`, what it printed
/// uncaged. The directory `made` (what the program makes in the repo) is removed before
/// each run and after it. Returns each backend's output, for the caller's own checks.
fn caged_as_uncaged(
    home: &Path,
    repo: &Path,
    program: &str,
    made: &str,
    want: &[String],
) -> Vec<(&'static str, Output)> {
    let mut outs = Vec::new();
    fs::remove_dir_all(repo.join(made)).unwrap();
    for backend in BACKENDS {
        let out = caged(backend, home, repo, program, &[]);
        assert_eq!(lines(&out), want, "{backend}: {}", text(&out.stderr));
        fs::remove_dir_all(repo.join(made)).unwrap();
        outs.push((backend, out));
    }
    outs
}

/// A home with a repo and a writable cache directory, under the target dir.
fn home(name: &str) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let (keep, root) = scratch(name);
    let home = root.join("home");
    let repo = home.join("src/repo");
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(home.join(".cache")).unwrap();
    (keep, home, repo)
}

fn caged(backend: &str, home: &Path, repo: &Path, script: &str, extra: &[&str]) -> Output {
    Command::new(jaula())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(repo)
        .args(["run", "--backend", backend, "--repo"])
        .arg(repo)
        .args(extra)
        .args(["--", "python3", "-c", script])
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<String> {
    success(out).lines().map(str::to_owned).collect()
}

/// The cage binds `~/.cache/own.sock` (the gate records that file), moves it aside and
/// renames a host service's socket from the same writable directory into its place (a
/// rename across writable roots is refused by Landlock's REFER rule anyway). The name is
/// the one it bound, the file is the host's: the connect must be refused.
#[test]
fn a_host_socket_renamed_over_the_cages_own_is_refused() {
    if !python_or_skip() {
        return;
    }
    for backend in BACKENDS {
        let (_k, home, repo) = home("gate-swap");
        let host = home.join(".cache/svc.sock");
        let listener = UnixListener::bind(&host).unwrap();
        listener.set_nonblocking(true).unwrap();
        let script = format!(
            r#"
import os, socket
os.chdir(os.path.dirname({host:?}))
own = socket.socket(socket.AF_UNIX); own.bind("own.sock"); own.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("own.sock"); print("own", "ok"); c.close()
os.rename("own.sock", "aside.sock")
os.rename({host:?}, "own.sock")
c = socket.socket(socket.AF_UNIX)
try:
    c.connect("own.sock"); print("swapped", "CONNECTED")
except OSError as e:
    print("swapped", e.errno)
os.rename("own.sock", {host:?})
"#,
            host = host.display().to_string()
        );
        let out = caged(backend, &home, &repo, &script, &[]);
        assert_eq!(
            lines(&out),
            vec!["own ok".to_owned(), format!("swapped {}", libc::EACCES)],
            "{backend}: {}",
            text(&out.stderr)
        );
        assert!(
            listener.accept().is_err(),
            "{backend}: the host service saw a connection"
        );
    }
}

/// Datagram sockets name their destination per message: the gate refuses to make them.
/// Stream and seqpacket sockets and socketpairs still work.
#[test]
fn unix_datagram_sockets_are_refused_and_stream_ones_work() {
    if !python_or_skip() {
        return;
    }
    let script = r#"
import socket
for kind, name in ((socket.SOCK_DGRAM, "dgram"), (socket.SOCK_STREAM, "stream"), (socket.SOCK_SEQPACKET, "seqpacket")):
    try:
        socket.socket(socket.AF_UNIX, kind).close(); print(name, "ok")
    except OSError as e:
        print(name, e.errno)
try:
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); print("dgram pair ok")
except OSError as e:
    print("dgram pair", e.errno)
a, b = socket.socketpair(); a.sendall(b"x"); print("stream pair", b.recv(1).decode())
"#;
    for backend in BACKENDS {
        let (_k, home, repo) = home("gate-dgram");
        let out = caged(backend, &home, &repo, script, &[]);
        let eacces = libc::EACCES;
        assert_eq!(
            lines(&out),
            vec![
                format!("dgram {eacces}"),
                "stream ok".to_owned(),
                "seqpacket ok".to_owned(),
                format!("dgram pair {eacces}"),
                "stream pair x".to_owned(),
            ],
            "{backend}"
        );
    }
}

/// The gate performs every connect itself: TCP to the host's loopback keeps working, for
/// blocking and non-blocking sockets, and so does a socket the cage binds in /tmp.
#[test]
fn tcp_and_the_cages_own_sockets_keep_working_through_the_gate() {
    if !python_or_skip() {
        return;
    }
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let script = format!(
        r#"
import os, socket, select, tempfile
s = socket.create_connection(("127.0.0.1", {port})); print("tcp blocking ok"); s.close()
s = socket.socket(); s.setblocking(False)
err = s.connect_ex(("127.0.0.1", {port}))
select.select([], [s], [], 5)
print("tcp nonblocking", "ok" if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 else "failed")
d = tempfile.mkdtemp(); p = os.path.join(d, "t.sock")
l = socket.socket(socket.AF_UNIX); l.bind(p); l.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(p); print("tmp own ok", c.getpeername() == p)
"#
    );
    for backend in BACKENDS {
        let (_k, home, repo) = home("gate-tcp");
        let out = caged(backend, &home, &repo, &script, &[]);
        assert_eq!(
            lines(&out),
            vec!["tcp blocking ok", "tcp nonblocking ok", "tmp own ok True"],
            "{backend}: {}",
            text(&out.stderr)
        );
    }
}

/// The supervisor runs as the same uid, outside the seccomp deny-list: the cage must not be
/// able to read its memory or environment (it is non-dumpable), which an uncaged process of
/// the same uid can do to an ordinary process.
#[test]
fn the_supervisors_memory_is_out_of_the_cages_reach() {
    if !python_or_skip() {
        return;
    }
    let script = r#"
import os
ppid = os.getppid()
for what in ("environ", "mem", "maps"):
    try:
        with open(f"/proc/{ppid}/{what}", "rb") as f:
            f.read(16); print(what, "READ")
    except OSError as e:
        print(what, e.errno)
"#;
    // Control: a plain same-uid parent's environ is readable.
    let control = Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap();
    assert!(
        text(&control.stdout).contains("environ READ"),
        "control: {}",
        text(&control.stdout)
    );
    for backend in BACKENDS {
        let (_k, home, repo) = home("gate-mem");
        let out = caged(backend, &home, &repo, script, &[]);
        let got = lines(&out);
        assert_eq!(got.len(), 3, "{backend}: {got:?}");
        for line in got {
            assert!(!line.ends_with("READ"), "{backend}: {line}");
        }
    }
}

/// The kernel allows one notification listener per filter chain: a cage launched from
/// inside a cage cannot have its own gate, and must be refused rather than run with the
/// outer cage's weaker (or different) socket rules.
#[test]
fn a_cage_inside_a_cage_is_refused_with_the_reason() {
    for backend in BACKENDS {
        let (_k, home, repo) = home("gate-nested");
        let out = Command::new(jaula())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .current_dir(&repo)
            .args(["run", "--backend", backend, "--repo"])
            .arg(&repo)
            .arg("--")
            .arg(jaula())
            .args(["run", "--backend", "landlock", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(126), "{backend}: {out:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("already runs under a socket gate"),
            "{backend}: {stderr}"
        );
        // The reason is the inner jaula's last word; before it only the outer gate's
        // refusals of what the inner launch tried to write (its own protected profile
        // directory, and the record of its cage for `jaula ps`, which it says it could not
        // make), and after it only the outer cage's exit line naming those refusals.
        let mut lines: Vec<&str> = stderr.lines().collect();
        if lines
            .last()
            .is_some_and(|l| l.starts_with("jaula: the cage refused writes to "))
        {
            let summary = lines.pop().unwrap_or_default();
            assert!(summary.contains("(protected: "), "{backend}: {summary}");
        }
        assert!(
            lines
                .last()
                .is_some_and(|l| l.contains("already runs under a socket gate")),
            "{backend}: {stderr}"
        );
        assert!(
            lines[..lines.len() - 1]
                .iter()
                .all(
                    |l| (l.starts_with("jaula: refused ") && l.contains(": protected: "))
                        || l.starts_with("jaula: warning: cannot record this cage for jaula ps")
                ),
            "{backend}: {stderr}"
        );
    }
}

/// What a battery of file calls answers, as a program sees it: each line is a step and its
/// result (the errno's name on failure). The gate performs these calls itself, so a caged
/// run must print exactly what an uncaged run prints in the same kind of directory.
const FILE_CALLS: &str = r#"
import errno, os, stat, sys, threading
def name(e): return errno.errorcode.get(e.errno, str(e.errno))
def step(label, fn):
    try:
        r = fn()
        print(label, "ok" if r is None else r)
    except OSError as e:
        print(label, name(e))
os.makedirs("calls/sub", exist_ok=True)
os.chdir("calls")
def write(path, flags, data=b"", mode=0o666):
    fd = os.open(path, flags, mode)
    try:
        os.write(fd, data)
        return oct(os.fstat(fd).st_mode & 0o777) + " cloexec=" + str(bool(os.get_inheritable(fd) is False))
    finally:
        os.close(fd)
def read(path):
    with open(path, "rb") as f: return f.read().decode()
W, C, X, T, A = os.O_WRONLY, os.O_CREAT, os.O_EXCL, os.O_TRUNC, os.O_APPEND
os.umask(0o027)
step("create-excl", lambda: write("f", W|C|X, b"one"))
step("create-excl-again", lambda: write("f", W|C|X))
step("append", lambda: write("f", W|A, b"+two"))
step("content", lambda: read("f"))
step("trunc", lambda: write("f", W|T, b"3"))
step("content2", lambda: read("f"))
step("inheritable", lambda: os.get_inheritable(os.open("f", W)))
os.symlink("f", "link")
step("through-link", lambda: write("link", W|A, b"L"))
step("content3", lambda: read("f"))
step("nofollow-link", lambda: write("link", W|os.O_NOFOLLOW))
step("excl-on-link", lambda: write("link", W|C|X))
os.symlink("made-by-link", "dangling")
step("create-through-dangling", lambda: write("dangling", W|C, b"d"))
step("dangling-target", lambda: read("made-by-link"))
step("mkdir-existing", lambda: os.mkdir("sub"))
step("mkdir-no-parent", lambda: os.mkdir("none/x"))
step("mkdir-mode", lambda: (os.mkdir("m", 0o777), oct(os.stat("m").st_mode & 0o777))[1])
step("open-dir-for-write", lambda: write("sub", W))
step("create-trailing-slash", lambda: write("new/", W|C))
step("file-as-dir", lambda: write("f/", W))
step("rmdir-nonempty", lambda: (write("sub/x", W|C), os.rmdir("sub"))[1])
step("unlink-dir", lambda: os.unlink("sub"))
step("rmdir-file", lambda: os.rmdir("f"))
step("link", lambda: os.link("f", "hard"))
step("link-count", lambda: os.stat("f").st_nlink)
step("link-dir", lambda: os.link("sub", "subhard"))
step("rename", lambda: os.rename("hard", "moved"))
step("rename-missing", lambda: os.rename("hard", "x"))
step("replace", lambda: os.replace("moved", "f"))
step("truncate", lambda: (os.truncate("f", 1), os.stat("f").st_size)[1])
step("truncate-missing", lambda: os.truncate("nope", 0))
step("unlink-missing", lambda: os.unlink("nope"))
dirfd = os.open("sub", os.O_RDONLY | os.O_DIRECTORY)
step("openat-dirfd", lambda: (os.close(os.open("y", W|C, 0o600, dir_fd=dirfd)), sorted(os.listdir("sub")))[1])
step("mkdirat-dirfd", lambda: (os.mkdir("d", dir_fd=dirfd), os.path.isdir("sub/d"))[1])
step("unlinkat-dirfd", lambda: (os.unlink("y", dir_fd=dirfd), sorted(os.listdir("sub")))[1])
os.mkfifo("fifo")
got = []
t = threading.Thread(target=lambda: got.append(read("fifo")))
t.start()
step("fifo-blocking-write", lambda: write("fifo", W, b"through the fifo"))
t.join()
step("fifo-read", lambda: got[0])
step("dev-null", lambda: write("/dev/null", W, b"x"))
def tmpfile():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
    os.write(fd, b"tmp")
    os.link(f"/proc/self/fd/{fd}", "from-tmpfile", follow_symlinks=True)
    os.close(fd)
    return read("from-tmpfile")
step("tmpfile-link", tmpfile)
os.chdir("sub")
step("relative-up", lambda: write("../up", W|C, b"u"))
os.chdir("..")
step("listing", lambda: sorted(os.listdir(".")))
"#;

/// The gate makes these calls itself; a program must not be able to tell.
#[test]
fn file_calls_answer_as_they_do_uncaged() {
    let Some((_k, home, repo, uncaged)) = uncaged_python("gate-files", FILE_CALLS) else {
        return;
    };
    let want = lines(&uncaged);
    assert!(
        want.iter().any(|l| l == "fifo-read through the fifo"),
        "{want:?}"
    );
    for (backend, out) in caged_as_uncaged(&home, &repo, FILE_CALLS, "calls", &want) {
        assert!(
            !text(&out.stderr).contains("jaula:"),
            "{backend}: {}",
            text(&out.stderr)
        );
    }
}

/// Every file, directory, FIFO and socket the gate makes carries the umask of the thread
/// that asked, as the kernel would apply it: the supervisor keeps each process's mask and
/// learns of every change from the notified `umask` call, so the masks set here (before
/// and after a thread's first call, in a thread started before the change, in a forked
/// child) must give the modes an uncaged run gives.
const UMASKS: &str = r#"
import os, socket, threading
os.makedirs("masks", exist_ok=True)
os.chdir("masks")
def mode(p): return oct(os.stat(p).st_mode & 0o777)
def make(tag):
    os.close(os.open(f"f-{tag}", os.O_WRONLY | os.O_CREAT, 0o666))
    os.mkdir(f"d-{tag}", 0o777)
    os.mkfifo(f"p-{tag}", 0o666)
    s = socket.socket(socket.AF_UNIX); s.bind(f"s-{tag}"); s.close()
    print(tag, mode(f"f-{tag}"), mode(f"d-{tag}"), mode(f"p-{tag}"), mode(f"s-{tag}"), flush=True)
os.umask(0o077); make("077")
os.umask(0o002); make("002")
go, ready = threading.Event(), threading.Event()
def later():
    ready.set(); go.wait(); make("thread-after-027")
t = threading.Thread(target=later); t.start(); ready.wait()
os.umask(0o027); go.set(); t.join()
def seen_then_changed():
    make("thread-027")
    os.umask(0o007)
    make("thread-007")
t = threading.Thread(target=seen_then_changed); t.start(); t.join()
make("main-after-thread-007")
pid = os.fork()
if pid == 0:
    make("child-007"); os.umask(0o070); make("child-070"); os._exit(0)
os.waitpid(pid, 0)
make("parent-still-007")
"#;

#[test]
fn the_gate_gives_every_file_it_makes_the_callers_umask() {
    let Some((_k, home, repo, uncaged)) = uncaged_python("gate-umask", UMASKS) else {
        return;
    };
    let want = lines(&uncaged);
    assert_eq!(want.len(), 9, "{want:?}");
    assert!(
        want.contains(&"077 0o600 0o700 0o600 0o700".to_owned()),
        "{want:?}"
    );
    caged_as_uncaged(&home, &repo, UMASKS, "masks", &want);
}

/// Two processes race, directory by directory: one makes `config` holding a command for
/// the owner's git, the other makes `HEAD`, which turns the directory into one git
/// reads. The gate serves both at once on different threads, and a config made between
/// the check of `HEAD`'s making (nothing to admit yet) and the `HEAD` itself would be a
/// git directory's config no one admitted. The lock on names rules that out: `HEAD` is
/// made exclusively, so a config is either there to be admitted (and refused), or made
/// after, inside a git-like directory (where it is made empty and read-only). Uncaged,
/// every directory ends with the planted config. (With the lock taken shared for every
/// call, 1 run in 3 of 300 directories planted one.)
const GIT_RACE: &str = r#"
import os, sys, multiprocessing as mp
N = 400
HOSTILE = b"[core]\n\tfsmonitor = touch planted\n"
def make(barrier, name, data):
    for i in range(N):
        barrier.wait()
        try:
            fd = os.open(f"race/d{i}/{name}", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, data)
            os.close(fd)
        except OSError:
            pass
for i in range(N):
    os.makedirs(f"race/d{i}")
barrier = mp.Barrier(2)
ps = [mp.Process(target=make, args=(barrier, "config", HOSTILE)),
      mp.Process(target=make, args=(barrier, "HEAD", b"ref: refs/heads/main\n"))]
for p in ps: p.start()
for p in ps: p.join()
planted = 0
for i in range(N):
    d = f"race/d{i}"
    if os.path.exists(f"{d}/HEAD") and os.path.exists(f"{d}/config"):
        with open(f"{d}/config", "rb") as f:
            planted += b"fsmonitor" in f.read()
print("planted", planted)
"#;

#[test]
fn a_config_racing_the_head_that_makes_its_directory_git_like_is_never_planted() {
    let Some((_k, home, repo, uncaged)) = uncaged_python("gate-git-race", GIT_RACE) else {
        return;
    };
    assert_eq!(lines(&uncaged), ["planted 400"]);
    fs::remove_dir_all(repo.join("race")).unwrap();
    for backend in BACKENDS {
        let out = caged(backend, &home, &repo, GIT_RACE, &["--quiet"]);
        assert_eq!(
            lines(&out),
            ["planted 0"],
            "{backend}: {}",
            text(&out.stderr)
        );
        fs::remove_dir_all(repo.join("race")).unwrap();
    }
}

/// The supervisor keeps two descriptors for each thread that calls; under a low
/// descriptor limit (1024, the common soft limit) 800 short-lived processes,
/// each making a file, must all be answered: exited ones are dropped as the table grows.
#[test]
fn many_short_lived_processes_under_a_low_descriptor_limit_are_all_answered() {
    let (_k, home, repo) = home("gate-many-processes");
    fs::create_dir_all(repo.join("many")).unwrap();
    for backend in BACKENDS {
        let out = Command::new("sh")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .current_dir(&repo)
            .args([
                "-c",
                "ulimit -n 1024 && exec \"$0\" run --quiet --backend \"$1\" --repo . -- \
                 sh -c 'n=0; for i in $(seq 800); do touch many/f$i || n=$((n+1)); done; \
                 echo failed=$n'",
            ])
            .arg(jaula())
            .arg(backend)
            .output()
            .unwrap();
        assert_eq!(
            lines(&out),
            ["failed=0"],
            "{backend}: {}",
            text(&out.stderr)
        );
        assert_eq!(fs::read_dir(repo.join("many")).unwrap().count(), 800);
        fs::remove_dir_all(repo.join("many")).unwrap();
        fs::create_dir_all(repo.join("many")).unwrap();
    }
}

/// The supervisor opens files for the cage, but never its own: a path through its
/// `/proc/<pid>` (the command's parent) is refused, for writing and for making names.
/// Uncaged, a child may open its parent's descriptors this way.
#[test]
fn the_supervisors_own_proc_directory_is_out_of_reach() {
    if !python_or_skip() {
        return;
    }
    let script = r#"
import errno, os
p = os.getppid()
for label, fn in [
    ("write-parent-fd", lambda: os.close(os.open(f"/proc/{p}/fd/2", os.O_WRONLY))),
    ("create-via-parent-cwd", lambda: os.close(os.open(f"/proc/{p}/cwd/planted", os.O_WRONLY | os.O_CREAT))),
    ("mkdir-via-parent-cwd", lambda: os.mkdir(f"/proc/{p}/cwd/planted-dir")),
]:
    try:
        fn()
        print(label, "ok")
    except OSError as e:
        print(label, errno.errorcode[e.errno])
"#;
    let (_k, home, repo) = home("gate-own-proc");
    // The control: uncaged, python's parent is a shell whose working directory is a
    // scratch directory (the shell waits, so it stays the parent), where the names appear.
    let control_dir = repo.join("control");
    fs::create_dir_all(&control_dir).unwrap();
    let control = Command::new("sh")
        .args([
            "-c",
            "cd \"$1\" || exit 1; python3 -c \"$2\"; status=$?; exit $status",
            "sh",
        ])
        .arg(&control_dir)
        .arg(script)
        .current_dir(&control_dir)
        .output()
        .unwrap();
    assert_eq!(
        lines(&control),
        [
            "write-parent-fd ok",
            "create-via-parent-cwd ok",
            "mkdir-via-parent-cwd ok"
        ]
    );
    assert!(control_dir.join("planted").is_file() && control_dir.join("planted-dir").is_dir());
    for backend in BACKENDS {
        let out = caged(backend, &home, &repo, script, &[]);
        assert_eq!(
            lines(&out),
            [
                "write-parent-fd EACCES",
                "create-via-parent-cwd EACCES",
                "mkdir-via-parent-cwd EACCES"
            ],
            "{backend}: {}",
            text(&out.stderr)
        );
        assert!(!repo.join("planted").exists() && !repo.join("planted-dir").exists());
    }
}
