//! Reading a finished command's output in assertions.

use std::process::Output;

/// Bytes as text, lossily (a test message must print whatever came out).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// The command's status, stdout and stderr, for a failure message.
pub fn describe(out: &Output) -> String {
    format!(
        "{:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The stdout of a command that must have succeeded; otherwise the test fails with
/// [`describe`].
pub fn success(out: &Output) -> String {
    assert!(out.status.success(), "{}", describe(out));
    text(&out.stdout)
}

/// Fail the test, with status, stdout and stderr, unless the command succeeded.
#[track_caller]
pub fn assert_ok(out: &Output) {
    assert!(out.status.success(), "{}", describe(out));
}

/// [`assert_ok`], naming what ran (a script, a tool) in the failure message.
#[track_caller]
pub fn assert_ok_for(what: impl std::fmt::Display, out: &Output) {
    assert!(out.status.success(), "{what}: {}", describe(out));
}

/// The first line a spawned child (stdout piped) writes: how a helper process says it is
/// ready, or hands over an address or a pid, without the test sleeping.
pub fn first_line(child: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line
}

/// All a reader gives until its end, as text: a child's taken stdout or stderr (the test
/// reads to EOF, never waiting on a timer), or a FIFO opened for reading.
pub fn read_all(mut reader: impl std::io::Read) -> String {
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    text
}

/// What a writer puts in the FIFO (or file) at `path`, read to its end.
pub fn read_fifo(path: &std::path::Path) -> String {
    read_all(std::fs::File::open(path).unwrap())
}

/// The lines of `text` that start with `prefix`: what jaula said of one kind.
pub fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Spawn `cmd` with no input and its stdout piped, and read the first line it writes
/// (see [`first_line`]): a server's word that it is listening.
pub fn spawn_until_first_line(cmd: &mut std::process::Command) -> (std::process::Child, String) {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let line = first_line(&mut child);
    (child, line)
}

/// Fail the test unless `text` holds every one of `said`, naming the first missing one,
/// `what` ran (a backend, a user, the other stream) and the whole text.
#[track_caller]
pub fn assert_says(text: &str, said: &[&str], what: impl std::fmt::Display) {
    for needle in said {
        assert!(
            text.contains(needle),
            "{what}: {needle:?} missing from:\n{text}"
        );
    }
}
