use super::*;

fn gettid() -> u32 {
    rustix::thread::gettid().as_raw_nonzero().get() as u32
}

#[test]
fn status_gives_the_thread_group_and_the_umask() {
    let text = b"Name:\tcat\nUmask:\t0077\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4243\n";
    assert_eq!(parse_status(text), Some((4242, 0o077)));
    // Before Linux 4.7 there is no Umask line.
    assert_eq!(parse_status(b"Tgid:\t7\n"), Some((7, 0o022)));
    assert_eq!(parse_status(b"Name:\tx\n"), None);
}

#[test]
fn a_thread_is_kept_with_its_group_and_its_umask_from_proc() {
    let mut tasks = Tasks::default();
    let tid = gettid();
    let known = tasks.caller(tid).expect("this thread");
    let own = parse_status(&std::fs::read(format!("/proc/{tid}/status")).expect("status"))
        .expect("parsed");
    assert_eq!(known.caller.umask(), Ok(own.1));
    assert_eq!(
        tasks.known.get(&tid).map(|t| t.tgid),
        Some(std::process::id())
    );
    // Its working directory is reached through the kept /proc directory.
    let cwd = known.caller.cwd().expect("cwd");
    let expected = std::fs::metadata(".").expect("cwd");
    let st = rustix::fs::fstat(&cwd).expect("fstat");
    use std::os::unix::fs::MetadataExt;
    assert_eq!((st.st_dev, st.st_ino), (expected.dev(), expected.ino()));
}

/// A notified `umask` is the mask of every kept thread of the group, and of a thread of
/// the group seen only afterwards, even though its `/proc` status (this process's real
/// umask, which the test never changes) says otherwise.
#[test]
fn a_notified_umask_holds_for_the_whole_group_and_for_threads_seen_later() {
    let mut tasks = Tasks::default();
    let tid = gettid();
    let real = parse_status(&std::fs::read(format!("/proc/{tid}/status")).expect("status"))
        .expect("parsed")
        .1;
    let notified = if real == 0o077 { 0o027 } else { 0o077 };
    tasks.caller(tid).expect("this thread");
    tasks.set_umask(tid, notified | 0o7000);
    assert_eq!(
        tasks.caller(tid).expect("kept").caller.umask(),
        Ok(notified)
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        tx.send(gettid()).expect("send");
        let _ = done_rx.recv();
    });
    let other = rx.recv().expect("tid");
    assert_eq!(
        tasks.caller(other).expect("sibling").caller.umask(),
        Ok(notified)
    );
    done_tx.send(()).expect("send");
    thread.join().expect("join");
}

/// A thread that has exited is not answered from what was kept: its id is looked up
/// again (and here found gone).
#[test]
fn an_exited_task_is_not_answered_from_what_was_kept() {
    let mut child = std::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("cat");
    let pid = child.id();
    let mut tasks = Tasks::default();
    tasks.caller(pid).expect("the child");
    tasks.set_umask(pid, 0o077);
    drop(child.stdin.take());
    child.wait().expect("wait");
    assert!(tasks.caller(pid).is_err());
    assert!(!tasks.known.contains_key(&pid));
}

/// Exited threads are dropped once the table grows (each holds two of the supervisor's
/// descriptors), live ones kept, and the table never holds more than its bound.
#[test]
fn exited_threads_are_dropped_and_the_table_stays_within_its_bound() {
    let mut tasks = Tasks::bounded(8);
    let mut live: Vec<std::process::Child> = (0..3)
        .map(|_| {
            std::process::Command::new("cat")
                .stdin(std::process::Stdio::piped())
                .spawn()
                .expect("cat")
        })
        .collect();
    for child in &live {
        tasks.caller(child.id()).expect("a live child");
    }
    for _ in 0..20 {
        let mut child = std::process::Command::new("true").spawn().expect("true");
        // Learnt while it may still run; it has exited (and is reaped) right after.
        let _ = tasks.caller(child.id());
        child.wait().expect("wait");
    }
    assert!(tasks.known.len() <= 8, "{}", tasks.known.len());
    for child in &live {
        assert!(
            tasks.known.contains_key(&child.id()),
            "a live child was dropped"
        );
    }
    for child in &mut live {
        drop(child.stdin.take());
        child.wait().expect("wait");
    }
}
