use super::*;

#[test]
fn pathnames_are_read_up_to_their_nul_and_abstract_or_unnamed_are_none() {
    let af = (libc::AF_UNIX as u16).to_ne_bytes();
    let with = |tail: &[u8]| [af.as_slice(), tail].concat();
    assert_eq!(unix_pathname(&with(b"/tmp/s\0junk")), Some(&b"/tmp/s"[..]));
    assert_eq!(unix_pathname(&with(b"rel/s")), Some(&b"rel/s"[..]));
    assert_eq!(unix_pathname(&with(b"\0abstract")), None);
    assert_eq!(unix_pathname(&with(b"")), None);
    assert_eq!(unix_pathname(&af), None);
    assert_eq!(unix_pathname(&[1]), None);
}

#[test]
fn addresses_round_trip() {
    let addr = unix_address(b"/proc/self/fd/7");
    assert_eq!(unix_pathname(&addr), Some(&b"/proc/self/fd/7"[..]));
    assert_eq!(&addr[..2], &(libc::AF_UNIX as u16).to_ne_bytes());
}

/// At the bound a job is refused with EAGAIN at once (the main thread never waits for a
/// worker) and is never run; a worker that finished takes the next job, and no more
/// threads than the bound are ever started.
#[test]
fn workers_stop_at_their_bound_and_refuse_with_eagain() {
    use std::sync::mpsc;
    let workers = Workers::new(2);
    let (done_tx, done_rx) = mpsc::channel::<&str>();
    let mut releases = Vec::new();
    for name in ["first", "second"] {
        let (release_tx, release_rx) = mpsc::channel::<()>();
        releases.push(release_tx);
        let done = done_tx.clone();
        let job: Job = Box::new(move || {
            release_rx.recv().unwrap();
            done.send(name).unwrap();
        });
        assert_eq!(workers.run(job), Ok(()), "{name}");
    }
    let refused = done_tx.clone();
    let over: Job = Box::new(move || refused.send("over the bound").unwrap());
    assert_eq!(workers.run(over), Err(libc::EAGAIN));
    for release in releases {
        release.send(()).unwrap();
    }
    let mut finished = [done_rx.recv().unwrap(), done_rx.recv().unwrap()];
    finished.sort_unstable();
    assert_eq!(finished, ["first", "second"]);
    // Both workers go back to waiting; then a job is theirs again.
    let idle = || workers.shared.0.lock().unwrap().idle;
    while idle() < 2 {
        std::thread::yield_now();
    }
    let again = done_tx.clone();
    let job: Job = Box::new(move || again.send("third").unwrap());
    assert_eq!(workers.run(job), Ok(()));
    assert_eq!(done_rx.recv().unwrap(), "third");
    assert_eq!(workers.shared.0.lock().unwrap().threads, 2);
    // The refused job was dropped, never run.
    drop(done_tx);
    assert!(done_rx.recv().is_err());
}

#[test]
fn a_bind_stays_on_the_supervisors_thread_only_for_plain_words_into_the_directory() {
    let runtime = Path::new("/h/.agents-city/.runtime");
    let cwd = Path::new("/h/repo");
    assert!(names_entry_of(
        cwd,
        b"/h/.agents-city/.runtime/hub.sock",
        runtime
    ));
    assert!(names_entry_of(runtime, b"hub.sock", runtime));
    assert!(names_entry_of(
        Path::new("/h"),
        b".agents-city/.runtime/hub.sock",
        runtime
    ));
    assert!(names_entry_of(
        cwd,
        b"/h//.agents-city/./.runtime/hub.sock",
        runtime
    ));
    // A `..` could walk a symlink the words do not show; a deeper entry is not directly
    // inside; a name that is the directory itself makes nothing.
    assert!(!names_entry_of(
        cwd,
        b"../.agents-city/.runtime/hub.sock",
        runtime
    ));
    assert!(!names_entry_of(
        cwd,
        b"/h/.agents-city/.runtime/broker/s",
        runtime
    ));
    assert!(!names_entry_of(
        cwd,
        b"/h/.agents-city/.runtime/..",
        runtime
    ));
    // Other words reaching it (a symlink the lookup followed) are not the directory's.
    assert!(!names_entry_of(cwd, b"/h/link/hub.sock", runtime));
}

/// No namespace refused, no line; any, one line naming the count and the remedy.
#[test]
fn the_nested_sandbox_line_is_one_line_and_only_after_a_refusal() {
    let mut counts = GateCounts::default();
    assert_eq!(counts.nested_sandbox_line(), None);
    counts.namespaces = 3;
    let line = counts.nested_sandbox_line().unwrap();
    assert!(line.starts_with("jaula: the command tried to create new namespaces (3 refused)"));
    assert!(line.contains("--sandbox danger-full-access"), "{line}");
    assert!(!line.contains('\n'));
}
