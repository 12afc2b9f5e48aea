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
