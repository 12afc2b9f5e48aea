use super::*;
use crate::test_support::opening;

#[test]
fn start_ticks_is_field_22_even_after_a_command_name_with_spaces_and_parentheses() {
    let stat =
        "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
    assert_eq!(start_ticks(stat), Some(987_654));
    assert_eq!(start_ticks("4242 (x) S 1"), None);
}

#[test]
fn this_process_matches_its_own_proc_entry() {
    let me = this_process().unwrap();
    assert_eq!(me.pid, std::process::id() as i32);
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", me.pid)).unwrap();
    assert_eq!(start_ticks(&stat), Some(me.start_ticks));
}

#[test]
fn a_record_reads_back_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let opening = opening(Some("w"), "landlock", 7, &["sh"], 2);
    let (path, mut file) = create(dir.path(), &opening).unwrap();
    append(
        &mut file,
        &Line::Supervisor(ProcessId {
            pid: 3,
            start_ticks: 4,
        }),
    )
    .unwrap();
    append(&mut file, &Line::Ended).unwrap();
    let all = read_all(dir.path());
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].0, path);
    assert_eq!(
        all[0].1,
        vec![
            Line::Opened(opening),
            Line::Supervisor(ProcessId {
                pid: 3,
                start_ticks: 4
            }),
            Line::Ended
        ]
    );
}

fn process(pid: i32, ppid: i32) -> HostProcess {
    HostProcess {
        pid,
        ppid,
        start_ticks: pid as u64 * 10,
        name: "p".into(),
    }
}

#[test]
fn descendants_count_every_level_below_the_root_and_nothing_beside_it() {
    let procs = [
        process(1, 0),
        process(10, 1),
        process(11, 10),
        process(12, 11),
        process(13, 10),
        process(20, 1),
    ];
    assert_eq!(descendants(10, &procs), 3);
    assert_eq!(descendants(12, &procs), 0);
    assert_eq!(descendants(1, &procs), 5);
}

#[test]
fn a_record_is_judged_by_its_lines_and_the_processes_running() {
    let opening = Opening {
        window: None,
        repo: "/r".into(),
        backend: "landlock".into(),
        started_unix: 0,
        command: Vec::new(),
        launcher: this_process().unwrap(),
    };
    let me = this_process().unwrap();
    let procs = host_processes();
    let opened = Line::Opened(opening.clone());
    // No supervisor yet, and the launcher (this process) runs: starting.
    assert_eq!(
        judge(std::slice::from_ref(&opened), &opening, &procs),
        CageState::Starting
    );
    // The supervisor line names this process: live, with its children counted.
    let live = judge(&[opened.clone(), Line::Supervisor(me)], &opening, &procs);
    assert!(
        matches!(live, CageState::Live { supervisor, .. } if supervisor == me.pid),
        "{live:?}"
    );
    // A supervisor whose start time no process has: dead, unless the record ended.
    let gone = ProcessId {
        pid: me.pid,
        start_ticks: me.start_ticks + 1,
    };
    assert_eq!(
        judge(&[opened.clone(), Line::Supervisor(gone)], &opening, &procs),
        CageState::Dead
    );
    assert_eq!(
        judge(
            &[opened.clone(), Line::Supervisor(gone), Line::Ended],
            &opening,
            &procs
        ),
        CageState::Ended
    );
    // No supervisor and no launcher: the launch never started one.
    let stale = Opening {
        launcher: gone,
        ..opening
    };
    assert_eq!(
        judge(&[Line::Opened(stale.clone())], &stale, &procs),
        CageState::NeverStarted
    );
}

#[test]
fn a_supervisor_is_told_apart_by_its_name_from_one_with_the_same_pid_and_start() {
    // Two PID namespaces, each with a supervisor that is pid 3 there and started in the
    // same clock tick: only the name tells them apart.
    let me = this_process().unwrap();
    let procs = host_processes();
    let mine = procs.iter().find(|p| p.pid == me.pid).unwrap();
    assert_eq!(host_pid_of(me, Some(&mine.name), &procs), Some(me.pid));
    assert_eq!(host_pid_of(me, Some("jgate-000000000"), &procs), None);
    assert_eq!(host_pid_of(me, None, &procs), Some(me.pid));
}

#[test]
fn only_the_records_of_ended_cages_are_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let opening = opening(None, "bwrap", 1, &["true"], 2);
    let (ended, mut file) = create(dir.path(), &opening).unwrap();
    append(&mut file, &Line::Supervisor(opening.launcher)).unwrap();
    append(&mut file, &Line::Ended).unwrap();
    let (running, mut file) = create(dir.path(), &opening).unwrap();
    append(&mut file, &Line::Supervisor(opening.launcher)).unwrap();
    let (writing, mut file) = create(dir.path(), &opening).unwrap();
    file.write_all(b"\"end").unwrap();
    prune_ended(dir.path());
    assert!(!ended.exists(), "an ended cage's record stayed");
    assert!(running.exists(), "a running cage's record was removed");
    assert!(
        writing.exists(),
        "a record whose last line is unfinished was removed"
    );
    assert_eq!(read_all(dir.path()).len(), 2);
}
