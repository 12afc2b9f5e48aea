use super::*;
use crate::seccomp::bpf::{evaluate, Action};

fn calls() -> GateSyscalls {
    GateSyscalls::native().expect("a supported architecture")
}

fn as_action(v: GateVerdict) -> Action {
    match v {
        GateVerdict::Allow => Action::Allow,
        GateVerdict::Notify => Action::UserNotif,
        GateVerdict::Errno(e) => Action::Errno(e),
    }
}

/// Every syscall number below the x32 bit that matters, plus the edges, with argument
/// sets that cover each branch: the program answers exactly as `decide` does.
#[test]
fn the_program_answers_as_the_reference_on_every_case() {
    let c = calls();
    let program = build(&c);
    let families = [
        libc::AF_UNIX as u64,
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
        libc::AF_NETLINK as u64,
        (1u64 << 32) | libc::AF_UNIX as u64, // high word set: the kernel reads an int
    ];
    let types = [
        libc::SOCK_STREAM as u64,
        libc::SOCK_DGRAM as u64,
        libc::SOCK_SEQPACKET as u64,
        libc::SOCK_RAW as u64,
        (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64,
        (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as u64,
        (1u64 << 32) | libc::SOCK_DGRAM as u64,
    ];
    let mut numbers: Vec<i32> = (0..600).collect();
    numbers.extend([
        -1,
        X32_SYSCALL_BIT as i32,
        X32_SYSCALL_BIT as i32 + 42,
        i32::MAX,
    ]);
    let mut checked = 0;
    for arch in [c.audit_arch, 0x4000_0003 /* i386 */] {
        for &nr in &numbers {
            for &family in &families {
                for &kind in &types {
                    let args = [family, kind, 0, 0, 0, 0];
                    let got = Action::from_ret(evaluate(&program, arch, nr, &args).unwrap());
                    let want = as_action(decide(&c, arch, nr, &args));
                    assert_eq!(got, want, "arch {arch:#x} nr {nr} args {args:?}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 40_000);
}

#[test]
fn the_reference_gates_connect_and_bind_and_refuses_unix_datagrams() {
    let c = calls();
    let a = c.audit_arch;
    let unix = libc::AF_UNIX as u64;
    let none = [0u64; 6];
    assert_eq!(decide(&c, a, c.connect as i32, &none), GateVerdict::Notify);
    assert_eq!(decide(&c, a, c.bind as i32, &none), GateVerdict::Notify);
    for nr in [libc::SYS_renameat, libc::SYS_renameat2] {
        assert_eq!(decide(&c, a, nr as i32, &none), GateVerdict::Notify);
    }
    assert_eq!(
        decide(&c, a, libc::SYS_unlinkat as i32, &none),
        GateVerdict::Allow
    );
    for nr in [c.socket, c.socketpair] {
        for kind in [
            libc::SOCK_DGRAM,
            libc::SOCK_RAW,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
        ] {
            assert_eq!(
                decide(&c, a, nr as i32, &[unix, kind as u64, 0, 0, 0, 0]),
                GateVerdict::Errno(libc::EACCES)
            );
        }
        for kind in [libc::SOCK_STREAM, libc::SOCK_SEQPACKET] {
            assert_eq!(
                decide(&c, a, nr as i32, &[unix, kind as u64, 0, 0, 0, 0]),
                GateVerdict::Allow
            );
        }
        let inet = libc::AF_INET as u64;
        assert_eq!(
            decide(
                &c,
                a,
                nr as i32,
                &[inet, libc::SOCK_DGRAM as u64, 0, 0, 0, 0]
            ),
            GateVerdict::Allow
        );
    }
    assert_eq!(
        decide(&c, a, libc::SYS_sendmsg as i32, &none),
        GateVerdict::Allow
    );
    assert_eq!(
        decide(&c, 0x4000_0003, c.connect as i32, &none),
        GateVerdict::Errno(libc::EPERM)
    );
}

/// A filter that notified nothing, or let datagram sockets through, would be caught.
#[test]
fn broken_programs_are_caught_by_the_comparison() {
    let c = calls();
    let mut no_notify = build(&c);
    let notif = no_notify
        .iter()
        .position(|i| i.code == RET_K && i.k == SECCOMP_RET_USER_NOTIF)
        .unwrap();
    no_notify[notif] = stmt(RET_K, SECCOMP_RET_ALLOW);
    let args = [0u64; 6];
    assert_ne!(
        Action::from_ret(evaluate(&no_notify, c.audit_arch, c.connect as i32, &args).unwrap()),
        as_action(decide(&c, c.audit_arch, c.connect as i32, &args))
    );
    let mut dgram_open = build(&c);
    let eacces = dgram_open.len() - 2;
    dgram_open[eacces] = stmt(RET_K, SECCOMP_RET_ALLOW);
    let args = [libc::AF_UNIX as u64, libc::SOCK_DGRAM as u64, 0, 0, 0, 0];
    assert_ne!(
        Action::from_ret(evaluate(&dgram_open, c.audit_arch, c.socket as i32, &args).unwrap()),
        as_action(decide(&c, c.audit_arch, c.socket as i32, &args))
    );
}
