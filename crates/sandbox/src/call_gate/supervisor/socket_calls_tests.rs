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
