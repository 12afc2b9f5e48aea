use super::*;

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
    let opening = Opening {
        window: Some("w".into()),
        repo: "/r".into(),
        backend: "landlock".into(),
        started_unix: 7,
        command: vec!["sh".into()],
        launcher: ProcessId {
            pid: 1,
            start_ticks: 2,
        },
    };
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
