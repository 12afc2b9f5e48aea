use super::*;
use crate::test_support::opening;

use std::os::fd::AsFd;
use std::os::unix::net::UnixListener;

fn socket(ino: u64, cookie: u64) -> BoundSocket {
    BoundSocket {
        dev_major: 8,
        dev_minor: 1,
        ino,
        socket_ino: 1000 + ino,
        cookie,
    }
}

fn opened(window: &str) -> Line {
    Line::Opened(Opening {
        repo: format!("/repo/{window}").into(),
        ..opening(Some(window), "landlock", 1, &["sh"], 1)
    })
}

fn supervisor(pid: i32) -> Line {
    Line::Supervisor(ProcessId {
        pid,
        start_ticks: 9,
    })
}

#[test]
fn the_binder_is_the_live_cage_whose_socket_the_kernel_confirms() {
    let records = vec![
        (
            PathBuf::from("1-a.jsonl"),
            vec![opened("a"), supervisor(11), Line::Bound(socket(5, 50))],
        ),
        (
            PathBuf::from("2-b.jsonl"),
            vec![opened("b"), supervisor(22), Line::Bound(socket(6, 60))],
        ),
    ];
    let found = find_binder(&records, (8, 1, 5), |_| true).unwrap();
    assert_eq!(found.record, PathBuf::from("1-a.jsonl"));
    assert_eq!(found.socket, socket(5, 50));
    assert_eq!(found.supervisor.map(|p| p.pid), Some(11));
    assert_eq!(
        found.describe(),
        "the cage of window a (repo /repo/a, supervisor pid 11)"
    );
    // Another device, or an inode nobody recorded: no binder.
    assert_eq!(find_binder(&records, (8, 2, 5), |_| true), None);
    assert_eq!(find_binder(&records, (8, 1, 7), |_| true), None);
    // A record alone admits nothing: the kernel must confirm the socket.
    assert_eq!(find_binder(&records, (8, 1, 5), |_| false), None);
}

#[test]
fn an_ended_cage_binds_nothing_and_only_the_confirmed_socket_counts() {
    let records = vec![
        (
            PathBuf::from("1-a.jsonl"),
            vec![opened("a"), Line::Bound(socket(5, 50)), Line::Ended],
        ),
        (
            PathBuf::from("2-b.jsonl"),
            vec![
                opened("b"),
                Line::Bound(socket(5, 51)),
                Line::Bound(socket(5, 52)),
            ],
        ),
    ];
    let mut asked = Vec::new();
    let found = find_binder(&records, (8, 1, 5), |s| {
        asked.push(s.cookie);
        s.cookie == 51
    })
    .unwrap();
    // The ended cage is never asked about; the newest line first.
    assert_eq!(asked, vec![52, 51]);
    assert_eq!(found.socket.cookie, 51);
    assert_eq!(found.supervisor, None);
    assert_eq!(found.describe(), "the cage of window b (repo /repo/b)");
}

/// What the supervisor records for a socket it bound.
fn record_of(listener: &UnixListener) -> BoundSocket {
    let diag = crate::call_gate::sys::open_sock_diag().unwrap();
    let st = crate::call_gate::sys::fstat(listener.as_fd()).unwrap();
    let (dev, ino) = crate::call_gate::sys::unix_socket_file(diag.as_fd(), st.st_ino as u32, None)
        .unwrap()
        .unwrap();
    BoundSocket {
        dev_major: dev >> 20,
        dev_minor: dev & 0xf_ffff,
        ino: u64::from(ino),
        socket_ino: st.st_ino,
        cookie: crate::call_gate::sys::socket_cookie(listener.as_fd()).unwrap(),
    }
}

/// Live: the kernel confirms a socket by its inode and cookie while it lives, and never
/// again once it is closed, even when a new socket is bound at the same path.
#[test]
fn the_kernel_confirms_the_very_socket_and_not_its_successor_at_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let diag = crate::call_gate::sys::open_sock_diag().unwrap();
    let first = UnixListener::bind(&path).unwrap();
    let recorded = record_of(&first);
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (recorded.dev_major, recorded.dev_minor, recorded.ino),
        (libc::major(meta.dev()), libc::minor(meta.dev()), meta.ino())
    );
    assert!(still_bound(diag.as_fd(), &recorded));
    let wrong_cookie = BoundSocket {
        cookie: recorded.cookie ^ 1,
        ..recorded
    };
    assert!(!still_bound(diag.as_fd(), &wrong_cookie));
    let other_file = BoundSocket {
        ino: recorded.ino + 1,
        ..recorded
    };
    assert!(!still_bound(diag.as_fd(), &other_file));
    drop(first);
    std::fs::remove_file(&path).unwrap();
    let second = UnixListener::bind(&path).unwrap();
    assert!(!still_bound(diag.as_fd(), &recorded));
    assert!(still_bound(diag.as_fd(), &record_of(&second)));
}

/// Live: `cage_that_bound` finds the recorded cage of a live socket by its path, and
/// nothing once the socket is gone and a new one holds the path.
#[test]
fn a_path_is_traced_to_the_cage_that_bound_it() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hub.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let opening = opening(Some("a"), "landlock", 1, &["hub"], 1);
    let (_, mut file) = cage_record::create(state.path(), &opening).unwrap();
    cage_record::append(&mut file, &Line::Bound(record_of(&listener))).unwrap();
    let found = cage_that_bound(state.path(), &path).unwrap().unwrap();
    assert_eq!(found.opening.unwrap().window.as_deref(), Some("a"));
    // Not a socket: no binder, no error.
    assert_eq!(cage_that_bound(state.path(), dir.path()).unwrap(), None);
    drop(listener);
    std::fs::remove_file(&path).unwrap();
    let _host = UnixListener::bind(&path).unwrap();
    assert_eq!(cage_that_bound(state.path(), &path).unwrap(), None);
}

/// The text filter agrees with what `append` writes: a `bound` line on the file is seen,
/// one on another file or in an ended record is not.
#[test]
fn the_text_filter_reads_lines_as_append_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let opening = opening(None, "bwrap", 1, &[], 1);
    let (path, mut file) = cage_record::create(dir.path(), &opening).unwrap();
    cage_record::append(&mut file, &Line::Bound(socket(5, 50))).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(names_file(&text, (8, 1, 5)));
    assert!(!names_file(&text, (8, 1, 6)));
    cage_record::append(&mut file, &Line::Ended).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!names_file(&text, (8, 1, 5)));
}
