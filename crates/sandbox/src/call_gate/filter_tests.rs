use super::*;
use crate::seccomp::bpf::{evaluate, Action};

fn calls() -> GateSyscalls {
    GateSyscalls::native().expect("a supported architecture")
}

/// The calls that make, remove or write a name, beside the renames, in the gate's order.
const NAME_CALLS: [libc::c_long; 6] = [
    libc::SYS_mkdirat,
    libc::SYS_mknodat,
    libc::SYS_symlinkat,
    libc::SYS_linkat,
    libc::SYS_unlinkat,
    libc::SYS_truncate,
];

/// Their legacy forms (x86_64 only), with `creat`, in the gate's order.
#[cfg(target_arch = "x86_64")]
const LEGACY_NAME_CALLS: [libc::c_long; 7] = [
    libc::SYS_mkdir,
    libc::SYS_mknod,
    libc::SYS_symlink,
    libc::SYS_link,
    libc::SYS_unlink,
    libc::SYS_rmdir,
    libc::SYS_creat,
];

fn as_action(v: GateVerdict) -> Action {
    match v {
        GateVerdict::Allow => Action::Allow,
        GateVerdict::Notify => Action::UserNotif,
        GateVerdict::Errno(e) => Action::Errno(e),
    }
}

/// What `program` answers for one call, and what the reference `decide` answers.
fn answers(
    program: &[sock_filter],
    c: &GateSyscalls,
    arch: u32,
    nr: i32,
    args: &[u64; 6],
) -> (Action, Action) {
    let got = Action::from_ret(evaluate(program, arch, nr, args).unwrap());
    (got, as_action(decide(c, arch, nr, args)))
}

/// The gate's program with its first instruction that `pick` finds broken by `break_it`.
fn broken(
    c: &GateSyscalls,
    pick: impl Fn(&sock_filter) -> bool,
    break_it: impl FnOnce(&mut sock_filter),
) -> Vec<sock_filter> {
    let mut program = build(c);
    let at = program.iter().position(pick).unwrap();
    break_it(&mut program[at]);
    program
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
    // Open flags sit in arg 1 (`open`) or arg 2 (`openat`): each position gets read-only,
    // each write-intent bit alone, a mix, and a write bit only in the ignored high word.
    let flags = [
        libc::O_RDONLY as u64,
        (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_DIRECTORY | libc::O_NOFOLLOW) as u64,
        libc::O_WRONLY as u64,
        libc::O_RDWR as u64,
        libc::O_CREAT as u64,
        libc::O_TRUNC as u64,
        (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC) as u64,
        (libc::O_TMPFILE | libc::O_RDWR) as u64,
        1u64 << 32,
    ];
    let mut checked = 0;
    for arch in [c.audit_arch, 0x4000_0003 /* i386 */] {
        for &nr in &numbers {
            for &family in &families {
                for (i, &kind) in types.iter().enumerate() {
                    let flag = flags[i % flags.len()];
                    let args = [family, kind, flag, 0, 0, 0];
                    let (got, want) = answers(&program, &c, arch, nr, &args);
                    assert_eq!(got, want, "arch {arch:#x} nr {nr} args {args:?}");
                    checked += 1;
                }
            }
            for &flag in &flags {
                for args in [[0, flag, 0, 0, 0, 0], [0, 0, flag, 0, 0, 0]] {
                    let (got, want) = answers(&program, &c, arch, nr, &args);
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
        decide(&c, a, libc::SYS_getpid as i32, &none),
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

/// A filter that notified nothing, let unix datagram sockets through, or let write-opens
/// through unseen would be caught: on the call each breaks, it answers unlike the reference.
#[test]
fn broken_programs_are_caught_by_the_comparison() {
    let c = calls();
    let no_notify = broken(
        &c,
        |i| i.code == RET_K && i.k == SECCOMP_RET_USER_NOTIF,
        |i| *i = stmt(RET_K, SECCOMP_RET_ALLOW),
    );
    let mut dgram_open = build(&c);
    let eacces = dgram_open.len() - 1;
    dgram_open[eacces] = stmt(RET_K, SECCOMP_RET_ALLOW);
    let write_open = broken(
        &c,
        |i| i.code == crate::seccomp::bpf::JMP_JSET_K,
        |i| i.k = libc::O_CREAT as u32,
    );
    let unix_dgram = [libc::AF_UNIX as u64, libc::SOCK_DGRAM as u64, 0, 0, 0, 0];
    let write = [0, 0, libc::O_WRONLY as u64, 0, 0, 0];
    for (name, program, nr, args) in [
        ("nothing notified", no_notify, c.connect as i32, [0u64; 6]),
        ("unix datagrams", dgram_open, c.socket as i32, unix_dgram),
        ("write-opens", write_open, libc::SYS_openat as i32, write),
    ] {
        let (got, want) = answers(&program, &c, c.audit_arch, nr, &args);
        assert_ne!(
            got, want,
            "{name}: the comparison missed the broken program"
        );
    }
}

#[test]
fn the_reference_gates_every_call_that_makes_removes_or_writes_a_name() {
    let c = calls();
    let a = c.audit_arch;
    let none = [0u64; 6];
    for nr in NAME_CALLS {
        assert_eq!(decide(&c, a, nr as i32, &none), GateVerdict::Notify, "{nr}");
    }
    #[cfg(target_arch = "x86_64")]
    for nr in LEGACY_NAME_CALLS.into_iter().chain([libc::SYS_rename]) {
        assert_eq!(decide(&c, a, nr as i32, &none), GateVerdict::Notify, "{nr}");
    }
    let openat = |flags: i32| {
        decide(
            &c,
            a,
            libc::SYS_openat as i32,
            &[0, 0, flags as u64, 0, 0, 0],
        )
    };
    for flags in [
        libc::O_RDONLY,
        libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_DIRECTORY,
        libc::O_PATH,
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
    ] {
        assert_eq!(openat(flags), GateVerdict::Allow, "{flags:#o}");
    }
    for flags in [
        libc::O_WRONLY,
        libc::O_RDWR,
        libc::O_RDONLY | libc::O_CREAT,
        libc::O_RDONLY | libc::O_TRUNC,
        libc::O_WRONLY | libc::O_APPEND,
        libc::O_TMPFILE | libc::O_WRONLY,
    ] {
        assert_eq!(openat(flags), GateVerdict::Notify, "{flags:#o}");
    }
    // The high word is not the kernel's: it cannot turn a read into a notified write.
    assert_eq!(
        decide(&c, a, libc::SYS_openat as i32, &[0, 0, 1 << 32, 0, 0, 0]),
        GateVerdict::Allow
    );
    assert_eq!(
        decide(&c, a, libc::SYS_openat2 as i32, &none),
        GateVerdict::Errno(libc::ENOSYS)
    );
}

/// The spelled-out numbers of the build target are libc's.
#[test]
fn the_native_numbers_are_libcs() {
    let c = calls();
    let nr = |n: libc::c_long| n as u32;
    assert_eq!(
        (c.connect, c.bind, c.socket, c.socketpair),
        (
            nr(libc::SYS_connect),
            nr(libc::SYS_bind),
            nr(libc::SYS_socket),
            nr(libc::SYS_socketpair)
        )
    );
    let mut paths = vec![nr(libc::SYS_renameat), nr(libc::SYS_renameat2)];
    paths.extend(NAME_CALLS.map(nr));
    #[allow(unused_mut)]
    let mut opens = vec![(nr(libc::SYS_openat), 2)];
    #[cfg(target_arch = "x86_64")]
    {
        paths.push(nr(libc::SYS_rename));
        paths.extend(LEGACY_NAME_CALLS.map(nr));
        opens.push((nr(libc::SYS_open), 1));
    }
    assert_eq!(c.umask, nr(libc::SYS_umask));
    assert_eq!(c.paths, paths);
    assert_eq!(c.opens, opens);
    assert_eq!(c.unsupported, vec![nr(libc::SYS_openat2)]);
    let numbers: Vec<u32> = c.namespaces.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [nr(libc::SYS_unshare), nr(libc::SYS_clone)]);
}

/// `unshare` and `clone` wait for the supervisor exactly when they ask for a namespace (a
/// bit of the deny-list's mask in the low word), on every architecture's table; without
/// one (a plain fork, `unshare(CLONE_FILES)`) they run unexamined.
#[test]
fn namespace_calls_are_notified_exactly_when_they_ask_for_a_namespace() {
    use jaula_policy::seccomp::{Arch, CLONE_NAMESPACE_FLAGS, CLONE_NEWTIME};
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let c = GateSyscalls::for_arch(arch);
        let program = build(&c);
        for &(nr, mask) in &c.namespaces {
            let mut values = vec![
                0u64,
                libc::SIGCHLD as u64,
                (libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD) as u64,
                libc::CLONE_FILES as u64,
                u64::from(CLONE_NEWTIME),
                1 << 40,
            ];
            for bit in 0..32 {
                if CLONE_NAMESPACE_FLAGS & (1 << bit) != 0 {
                    values.push(1 << bit);
                    values.push((1 << bit) | libc::SIGCHLD as u64 | (1 << 40));
                }
            }
            for v in values {
                let args = [v, 0, 0, 0, 0, 0];
                let want = if v as u32 & mask != 0 {
                    GateVerdict::Notify
                } else {
                    GateVerdict::Allow
                };
                assert_eq!(
                    decide(&c, c.audit_arch, nr as i32, &args),
                    want,
                    "{arch:?} {nr} {v:#x}"
                );
                assert_eq!(
                    Action::from_ret(evaluate(&program, c.audit_arch, nr as i32, &args).unwrap()),
                    as_action(want),
                    "{arch:?} {nr} {v:#x}"
                );
            }
            assert!(c.is_namespace_call(i64::from(nr)));
        }
    }
}

/// The aarch64 filter, built on whatever host runs the tests, answers as its reference on
/// aarch64's numbers, and so does the x86_64 one.
#[test]
fn every_architectures_program_answers_as_the_reference() {
    use jaula_policy::seccomp::Arch;
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let c = GateSyscalls::for_arch(arch);
        let program = build(&c);
        let flags = [0u64, libc::O_WRONLY as u64, libc::O_CREAT as u64, 1 << 32];
        let families = [libc::AF_UNIX as u64, libc::AF_INET as u64];
        let types = [libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64];
        let mut checked = 0;
        for nr in (0..600).chain([-1, X32_SYSCALL_BIT as i32]) {
            for &flag in &flags {
                for &family in &families {
                    for &kind in &types {
                        for args in [[family, kind, flag, 0, 0, 0], [family, flag, kind, 0, 0, 0]] {
                            let (got, want) = answers(&program, &c, c.audit_arch, nr, &args);
                            assert_eq!(got, want, "{arch:?} {nr} {args:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 19_000);
        // aarch64's `openat` is 56, x86_64's 257: each table is its own.
        let openat = if arch == Arch::Aarch64 { 56 } else { 257 };
        let write = [0, 0, libc::O_WRONLY as u64, 0, 0, 0];
        assert_eq!(
            decide(&c, c.audit_arch, openat, &write),
            GateVerdict::Notify
        );
    }
}
