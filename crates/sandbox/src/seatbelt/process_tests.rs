use std::os::fd::AsRawFd;

use rustix::io::{fcntl_getfd, FdFlags};
use rustix::pipe::pipe;

use super::*;

fn cloexec(fd: &impl std::os::fd::AsFd) -> bool {
    fcntl_getfd(fd).unwrap().contains(FdFlags::CLOEXEC)
}

/// An inherited descriptor (no close-on-exec, as a leaking launcher leaves it) is marked;
/// a kept one is left alone; core dumps end up off. Changes only this test process.
#[test]
fn inherited_descriptors_are_marked_and_kept_ones_left_open() {
    // pipe(2): no close-on-exec, as an inherited descriptor arrives.
    let (leaked, kept) = pipe().unwrap();
    assert!(!cloexec(&leaked) && !cloexec(&kept));
    let report = harden(&Hardening {
        keep_fds: vec![kept.as_raw_fd()],
        ..Hardening::default()
    })
    .unwrap();
    assert!(cloexec(&leaked), "the leaked descriptor is closed at exec");
    assert!(
        !cloexec(&kept),
        "the kept descriptor stays open across exec"
    );
    assert!(report.iter().any(|l| l == "RLIMIT_CORE 0/0"), "{report:?}");
    let core = rustix::process::getrlimit(rustix::process::Resource::Core);
    assert_eq!((core.current, core.maximum), (Some(0), Some(0)));
}

#[test]
fn a_kept_descriptor_must_be_open_and_above_2() {
    for fd in [1, 4000] {
        match harden(&Hardening {
            keep_fds: vec![fd],
            ..Hardening::default()
        }) {
            Err(HardeningError::KeepFd { fd: got }) => assert_eq!(got, fd),
            other => panic!("{fd}: {other:?}"),
        }
    }
}
