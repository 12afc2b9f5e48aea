use super::*;

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
