use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::*;

/// A caller that is another process, as in the gate: `cat` waiting on a pipe, with its
/// working directory in `cwd`.
struct OtherProcess(Child);

impl OtherProcess {
    fn start(cwd: &Path) -> OtherProcess {
        OtherProcess(
            Command::new("cat")
                .current_dir(cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    fn caller(&self) -> Caller {
        Caller::new(self.0.id())
    }
}

impl Drop for OtherProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn path_of(fd: BorrowedFd<'_>) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
}

fn cwd_of(caller: &Caller) -> OwnedFd {
    open_path(
        rustix::fs::CWD,
        format!("/proc/{}/cwd", caller.tid()).as_bytes(),
        OFlags::DIRECTORY,
    )
    .unwrap()
}

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/b/file"), "x").unwrap();
    symlink("a/b", root.join("rel")).unwrap();
    symlink(root.join("a"), root.join("abs")).unwrap();
    symlink("loop2", root.join("loop1")).unwrap();
    symlink("loop1", root.join("loop2")).unwrap();
    symlink("a/b/file", root.join("to-file")).unwrap();
    symlink("a/b/absent", root.join("dangling")).unwrap();
    (dir, root)
}

#[test]
fn relative_and_symlinked_parents_resolve_from_the_callers_directory() {
    let (_d, root) = tree();
    let other = OtherProcess::start(&root);
    let c = other.caller();
    let e = c.locate(cwd_of(&c), b"a/b/new").unwrap();
    assert_eq!(path_of(e.parent.as_fd()), root.join("a/b"));
    assert_eq!(e.name, b"new");
    assert!(!e.dir_only);
    let e = c.locate(cwd_of(&c), b"rel/new").unwrap();
    assert_eq!(path_of(e.parent.as_fd()), root.join("a/b"));
    let e = c.locate(cwd_of(&c), b"abs/b/../b/./new/").unwrap();
    assert_eq!(path_of(e.parent.as_fd()), root.join("a/b"));
    assert_eq!(e.name, b"new");
    assert!(e.dir_only);
    let e = c.locate(cwd_of(&c), b"a/..").unwrap();
    assert_eq!(path_of(e.parent.as_fd()), root);
    assert_eq!(e.name, b".");
    assert_eq!(c.locate(cwd_of(&c), b"").unwrap_err(), libc::ENOENT);
    assert_eq!(
        c.locate(cwd_of(&c), b"a/b/file/x").unwrap_err(),
        libc::ENOTDIR
    );
    assert_eq!(c.locate(cwd_of(&c), b"loop1/x").unwrap_err(), libc::ELOOP);
}

#[test]
fn lookup_follows_or_keeps_the_last_symlink() {
    let (_d, root) = tree();
    let other = OtherProcess::start(&root);
    let c = other.caller();
    let found = |path: &[u8], follow: bool| match c
        .lookup(c.locate(cwd_of(&c), path).unwrap(), follow)
        .unwrap()
    {
        Target::Found { file, .. } => (path_of(file.as_fd()), file_type(file.as_fd()).unwrap()),
        Target::Missing(e) => panic!("missing: {e:?}"),
    };
    assert_eq!(
        found(b"to-file", true),
        (root.join("a/b/file"), libc::S_IFREG)
    );
    assert_eq!(
        found(b"to-file", false),
        (root.join("to-file"), libc::S_IFLNK)
    );
    // A dangling link is followed to where its target would be made.
    match c
        .lookup(c.locate(cwd_of(&c), b"dangling").unwrap(), true)
        .unwrap()
    {
        Target::Missing(e) => {
            assert_eq!(path_of(e.parent.as_fd()), root.join("a/b"));
            assert_eq!(e.name, b"absent");
        }
        Target::Found { .. } => panic!("found a dangling link's target"),
    }
    assert_eq!(
        c.lookup(c.locate(cwd_of(&c), b"loop1").unwrap(), true)
            .unwrap_err(),
        libc::ELOOP
    );
    assert_eq!(
        c.lookup(c.locate(cwd_of(&c), b"to-file/").unwrap(), true)
            .unwrap_err(),
        libc::ENOTDIR
    );
}

/// `/proc/self`, `/proc/thread-self` and `/dev/fd/N` name the caller, never the supervisor.
#[test]
fn procfs_self_names_the_caller() {
    let (_d, root) = tree();
    let other = OtherProcess::start(&root.join("a"));
    let c = other.caller();
    let start = || cwd_of(&c);
    let e = c.locate(start(), b"/proc/self/cwd/b/new").unwrap();
    assert_eq!(path_of(e.parent.as_fd()), root.join("a/b"));
    let e = c.locate(start(), b"/proc/thread-self/cwd/b/new").unwrap();
    assert_eq!(path_of(e.parent.as_fd()), root.join("a/b"));
    // The caller's stdin is a pipe; this test's own is not.
    for path in [&b"/dev/stdin"[..], b"/dev/fd/0", b"/proc/self/fd/0"] {
        match c.lookup(c.locate(start(), path).unwrap(), true).unwrap() {
            Target::Found { file, .. } => {
                assert_eq!(file_type(file.as_fd()).unwrap(), libc::S_IFIFO, "{path:?}")
            }
            Target::Missing(_) => panic!("{path:?} missing"),
        }
    }
    match c
        .lookup(c.locate(start(), b"/proc/self").unwrap(), true)
        .unwrap()
    {
        Target::Found { file, .. } => assert_eq!(
            path_of(file.as_fd()),
            PathBuf::from(format!("/proc/{}", other.0.id()))
        ),
        Target::Missing(_) => panic!("/proc/self missing"),
    }
}

/// The supervisor's own process directory is out of the caller's reach through it.
#[test]
fn the_supervisors_own_proc_directory_is_refused() {
    let (_d, root) = tree();
    let other = OtherProcess::start(&root);
    let c = other.caller();
    let me = std::process::id();
    let own_fd = format!("/proc/{me}/fd/0");
    assert_eq!(
        c.locate(cwd_of(&c), own_fd.as_bytes()).unwrap_err(),
        libc::EACCES
    );
    let own = format!("/proc/{me}");
    let err = c
        .lookup(c.locate(cwd_of(&c), own.as_bytes()).unwrap(), true)
        .unwrap_err();
    assert_eq!(err, libc::EACCES);
    // Another process's directory is fine (here: the caller's own).
    let theirs = format!("/proc/{}/fd/0", other.0.id());
    assert!(c.locate(cwd_of(&c), theirs.as_bytes()).is_ok());
}
