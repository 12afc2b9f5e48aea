use super::*;
use jaula_policy::seccomp::{
    decide, decide_syscall, deny_list_for, DenyCause, Verdict, ALLOWED_PERSONAS,
    CLONE_NAMESPACE_FLAGS, CLONE_NEWTIME, PER_LINUX32, UNSHARE_NAMESPACE_FLAGS,
};

use proptest::prelude::*;

/// i386 and arm32: the compat ABIs a 64-bit process can still enter the kernel through.
const AUDIT_ARCH_I386: u32 = 3 | 0x4000_0000;
const AUDIT_ARCH_ARM: u32 = 40 | 0x4000_0000;
const GARBAGE_HIGH: u64 = 0xdead_beef_0000_0000;

fn native() -> Arch {
    match Arch::native() {
        Some(arch) => arch,
        None => panic!("unit tests run on a supported target"),
    }
}

/// Compiles `arch`'s deny-list into the filter for `arch`, whatever this binary's own
/// architecture: the BPF program is plain data, evaluated here on every host.
fn compile_for(arch: Arch) -> Result<CompiledFilter, SeccompError> {
    compile_list(arch, deny_list_for(arch))
}

/// The seccomp action a filter implementing `verdict` returns.
fn action_of(verdict: &Verdict) -> Action {
    match verdict {
        Verdict::Allow => Action::Allow,
        Verdict::Deny { errno, .. } => Action::Errno(errno.raw()),
    }
}

fn filter() -> CompiledFilter {
    match compile() {
        Ok(filter) => filter,
        Err(err) => panic!("the deny-list must compile: {err}"),
    }
}

fn errno_of(verdict: Verdict) -> Option<i32> {
    match verdict {
        Verdict::Allow => None,
        Verdict::Deny { errno, .. } => Some(errno.raw()),
    }
}

fn with_arg(index: u8, value: u64) -> [u64; 6] {
    let mut args = [0u64; 6];
    args[usize::from(index)] = value;
    args
}

/// Argument vectors that hit and miss every condition in the list, with and without
/// garbage in the upper halves.
fn interesting_args() -> Vec<[u64; 6]> {
    let mut out = vec![[0; 6], [u64::MAX; 6], [GARBAGE_HIGH; 6]];
    for rule in deny_list() {
        let per_cond: Vec<(usize, Vec<u64>)> = rule
            .when
            .iter()
            .map(|cond| (usize::from(cond.arg()), values_for(cond)))
            .collect();
        for (arg, values) in &per_cond {
            for value in values {
                out.push(with_arg(*arg as u8, *value));
                out.push(with_arg(*arg as u8, value | GARBAGE_HIGH));
            }
        }
        // Conditions AND-ed: every combination of their values, so each is seen both
        // alone and together with the others.
        if per_cond.len() > 1 {
            let mut combos = vec![[0u64; 6]];
            for (arg, values) in &per_cond {
                combos = combos
                    .iter()
                    .flat_map(|args| {
                        values.iter().flat_map(move |value| {
                            [*value, value | GARBAGE_HIGH].map(|v| {
                                let mut more = *args;
                                more[*arg] = v;
                                more
                            })
                        })
                    })
                    .collect();
            }
            out.extend(combos);
        }
    }
    out
}

fn values_for(cond: &ArgMatch) -> Vec<u64> {
    let mut values: Vec<u64> = Vec::new();
    match *cond {
        ArgMatch::Equals { value, .. } => {
            values.extend([value, value ^ 1, value.wrapping_add(1)].map(u64::from))
        }
        ArgMatch::AnyBitOf { mask, .. } => {
            values.extend([0, u64::from(mask), u64::from(!mask)]);
            values.extend((0..32).map(|bit| 1u64 << bit));
        }
        ArgMatch::NoneOf { allowed, .. } => {
            values.extend(allowed.iter().map(|v| u64::from(*v)));
            values.extend(allowed.iter().map(|v| u64::from(v.wrapping_add(1))));
            values.extend([0x0040_0000, 0x0004_0000, 0x0010_0000]);
        }
        ArgMatch::NonNull { .. } => values.extend([0, 1, 1 << 32, 1 << 63]),
    }
    values
}

/// prlimit64 on another process is refused only when it sets a limit; the pid is read as
/// the kernel's `pid_t` (low word), the new-limit pointer whole (a low word of 0 is not
/// NULL).
#[test]
fn prlimit64_refuses_setting_another_processs_limits_only() {
    let filter = filter();
    let audit = native().audit_arch();
    let nr = libc::SYS_prlimit64;
    let answer = |pid: u64, new: u64| {
        let args = [pid, libc::RLIMIT_NOFILE as u64, new, 0x7000, 0, 0];
        let action = filter.evaluate(audit, nr, &args).ok();
        let reference = action_of(&decide_syscall(nr, &args));
        assert_eq!(action, Some(reference), "pid {pid:#x} new {new:#x}");
        reference
    };
    let refused = Action::Errno(libc::EPERM);
    for pid in [1, 4242, 0xffff_ffff, 4242 | GARBAGE_HIGH] {
        for new in [0x7000, 1 << 32, GARBAGE_HIGH, u64::MAX] {
            assert_eq!(answer(pid, new), refused, "pid {pid:#x} new {new:#x}");
        }
        // Reading another process's limits: no new limit.
        assert_eq!(answer(pid, 0), Action::Allow, "pid {pid:#x}");
    }
    // pid 0 is the caller, however the upper half is filled: setrlimit and ulimit.
    for pid in [0, GARBAGE_HIGH] {
        for new in [0, 0x7000, 1 << 32] {
            assert_eq!(answer(pid, new), Action::Allow, "pid {pid:#x} new {new:#x}");
        }
    }
}

/// setpriority, ioprio_set and the scheduler calls act on the caller only (who/pid 0);
/// the process-group and per-uid forms are refused whatever `who` is.
#[test]
fn priorities_and_schedulers_of_other_processes_are_refused() {
    let refused = Some(libc::EPERM);
    let prio_pgrp = libc::PRIO_PGRP as u64;
    let prio_user = libc::PRIO_USER as u64;
    let process = libc::PRIO_PROCESS as u64;
    for (nr, args, expected) in [
        (libc::SYS_setpriority, [process, 0, 19], None),
        (libc::SYS_setpriority, [process, GARBAGE_HIGH, 19], None),
        (libc::SYS_setpriority, [process, 4242, 19], refused),
        (libc::SYS_setpriority, [prio_pgrp, 0, 19], refused),
        (libc::SYS_setpriority, [prio_user, 0, 19], refused),
        (libc::SYS_ioprio_set, [1, 0, 7], None),
        (libc::SYS_ioprio_set, [1, 4242, 7], refused),
        (libc::SYS_ioprio_set, [2, 0, 7], refused),
        (libc::SYS_ioprio_set, [3, 0, 7], refused),
        (libc::SYS_sched_setscheduler, [0, 5, 0x7000], None),
        (libc::SYS_sched_setscheduler, [4242, 5, 0x7000], refused),
        (libc::SYS_sched_setattr, [0, 0x7000, 0], None),
        (libc::SYS_sched_setattr, [4242, 0x7000, 0], refused),
        // Not refused: reading, and the calls that cannot starve the supervisor.
        (libc::SYS_getpriority, [process, 4242, 0], None),
        (libc::SYS_sched_setaffinity, [4242, 8, 0x7000], None),
        (libc::SYS_sched_setparam, [4242, 0x7000, 0], None),
    ] {
        let args = [args[0], args[1], args[2], 0, 0, 0];
        assert_eq!(
            errno_of(decide_syscall(nr, &args)),
            expected,
            "nr {nr} args {args:x?}"
        );
        let action = filter().evaluate(native().audit_arch(), nr, &args).ok();
        assert_eq!(action, Some(action_of(&decide_syscall(nr, &args))));
    }
}

#[test]
fn clone3_gets_enosys_natively() {
    assert_eq!(
        errno_of(decide_syscall(libc::SYS_clone3, &[0; 6])),
        Some(libc::ENOSYS)
    );
}

#[test]
fn numbers_match_the_libc_constants_for_this_arch() {
    // libc's number for each name it has one for here (`open_tree_attr` is too new for
    // libc: its number, the same on every architecture, is spelled out).
    let libc_nr = |name: &str| match name {
        "ptrace" => Some(libc::SYS_ptrace),
        "clone" => Some(libc::SYS_clone),
        "clone3" => Some(libc::SYS_clone3),
        "ioctl" => Some(libc::SYS_ioctl),
        "socket" => Some(libc::SYS_socket),
        "socketpair" => Some(libc::SYS_socketpair),
        "personality" => Some(libc::SYS_personality),
        "unshare" => Some(libc::SYS_unshare),
        "mount" => Some(libc::SYS_mount),
        "open_tree_attr" => Some(467),
        _ => None,
    };
    for rule in deny_list().iter() {
        if let Some(nr) = libc_nr(rule.syscall) {
            assert_eq!(rule.nr, nr, "{}", rule.syscall);
        }
    }
}

#[test]
fn tiocsti_and_tioclinux_are_compared_on_the_low_32_bits() {
    for cmd in [
        u64::from(libc::TIOCSTI as u32),
        u64::from(libc::TIOCLINUX as u32),
    ] {
        for high in [0, GARBAGE_HIGH, 0xffff_ffff_0000_0000] {
            let verdict = decide_syscall(libc::SYS_ioctl, &[0, cmd | high, 0, 0, 0, 0]);
            assert_eq!(
                errno_of(verdict),
                Some(libc::EPERM),
                "cmd {:#x}",
                cmd | high
            );
        }
    }
    assert!(decide_syscall(
        libc::SYS_ioctl,
        &[0, u64::from(libc::FIONREAD as u32), 0, 0, 0, 0]
    )
    .is_allowed());
    assert!(decide_syscall(
        libc::SYS_ioctl,
        &[0, u64::from(libc::TCGETS as u32), 0, 0, 0, 0]
    )
    .is_allowed());
}

#[test]
fn clone_is_refused_for_each_namespace_flag_and_nothing_else() {
    let sigchld = libc::SIGCHLD as u64;
    for bit in (0..32).map(|b| 1u32 << b) {
        let verdict = decide_syscall(libc::SYS_clone, &with_arg(0, u64::from(bit) | sigchld));
        assert_eq!(
            verdict.is_allowed(),
            bit & CLONE_NAMESPACE_FLAGS == 0,
            "clone flag {bit:#x}"
        );
    }
    // What fork(), posix_spawn and pthread_create pass.
    let thread = (libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM
        | libc::CLONE_SETTLS
        | libc::CLONE_PARENT_SETTID
        | libc::CLONE_CHILD_CLEARTID) as u64;
    let spawn = (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | sigchld;
    for flags in [sigchld, thread, spawn] {
        assert!(decide_syscall(libc::SYS_clone, &with_arg(0, flags)).is_allowed());
    }
    let newuser = libc::CLONE_NEWUSER as u64;
    assert!(!decide_syscall(libc::SYS_clone, &with_arg(0, newuser | GARBAGE_HIGH)).is_allowed());
}

#[test]
fn unshare_is_refused_for_namespaces_including_time_but_not_for_fs_or_files() {
    for flag in [
        libc::CLONE_NEWUSER as u32,
        libc::CLONE_NEWNS as u32,
        CLONE_NEWTIME,
    ] {
        assert!(!decide_syscall(libc::SYS_unshare, &with_arg(0, u64::from(flag))).is_allowed());
    }
    let harmless = (libc::CLONE_FS | libc::CLONE_FILES | libc::CLONE_SYSVSEM) as u64;
    assert!(decide_syscall(libc::SYS_unshare, &with_arg(0, harmless)).is_allowed());
}

#[test]
fn personality_allows_only_uname_personas_and_the_query() {
    for persona in ALLOWED_PERSONAS {
        let args = with_arg(0, u64::from(*persona));
        assert!(decide_syscall(libc::SYS_personality, &args).is_allowed());
        let args = with_arg(0, u64::from(*persona) | GARBAGE_HIGH);
        assert!(decide_syscall(libc::SYS_personality, &args).is_allowed());
    }
    for persona in [
        libc::ADDR_NO_RANDOMIZE,
        libc::READ_IMPLIES_EXEC,
        libc::MMAP_PAGE_ZERO,
        libc::ADDR_COMPAT_LAYOUT,
        libc::ADDR_NO_RANDOMIZE | PER_LINUX32 as i32,
    ] {
        let verdict = decide_syscall(libc::SYS_personality, &with_arg(0, persona as u64));
        assert_eq!(errno_of(verdict), Some(libc::EPERM), "persona {persona:#x}");
    }
}

#[test]
fn socket_families_are_refused_only_for_the_listed_ones() {
    for family in [libc::AF_PACKET, libc::AF_ALG, libc::AF_VSOCK] {
        for nr in [libc::SYS_socket, libc::SYS_socketpair] {
            let verdict = decide_syscall(nr, &with_arg(0, family as u64 | GARBAGE_HIGH));
            assert_eq!(errno_of(verdict), Some(libc::EPERM), "family {family}");
        }
    }
    for family in [
        libc::AF_UNIX,
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_NETLINK,
    ] {
        assert!(decide_syscall(libc::SYS_socket, &with_arg(0, family as u64)).is_allowed());
    }
}

#[test]
fn foreign_abis_and_x32_numbers_are_refused_but_minus_one_is_not() {
    let arch = native();
    let getpid = libc::SYS_getpid;
    for foreign in [AUDIT_ARCH_I386, AUDIT_ARCH_ARM, 0] {
        let verdict = decide(arch, foreign, getpid, &[0; 6]);
        assert!(matches!(
            verdict,
            Verdict::Deny {
                errno: DenyErrno::Eperm,
                cause: DenyCause::ForeignArch { .. }
            }
        ));
    }
    for nr in [
        i64::from(X32_SYSCALL_BIT) | getpid,
        0x7fff_ffff,
        0x8000_0000,
        0xbfff_ffff,
    ] {
        let verdict = decide_syscall(nr, &[0; 6]);
        assert!(
            matches!(
                verdict,
                Verdict::Deny {
                    cause: DenyCause::NonNativeNumber { .. },
                    ..
                }
            ),
            "{nr:#x}"
        );
    }
    assert!(decide_syscall(-1, &[0; 6]).is_allowed());
    assert!(decide_syscall(getpid, &[0; 6]).is_allowed());
}

/// Every architecture's filter, built on this host from its own numbers, is run by the
/// BPF evaluator against `decide` for that architecture: the aarch64 filter is checked
/// on x86_64 machines as the native one is.
#[test]
fn the_compiled_program_agrees_with_decide_on_every_number_below_1024() {
    let args = interesting_args();
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let filter = match compile_for(arch) {
            Ok(filter) => filter,
            Err(err) => panic!("the {arch} deny-list must compile: {err}"),
        };
        assert_eq!(filter.arch(), arch);
        let numbers = (0..1024)
            .chain([-1, 0x3fff_ffff, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe])
            .chain(
                deny_list_for(arch)
                    .iter()
                    .map(|rule| rule.nr | i64::from(X32_SYSCALL_BIT)),
            );
        let audit_arches = [
            Arch::X86_64.audit_arch(),
            Arch::Aarch64.audit_arch(),
            AUDIT_ARCH_I386,
            AUDIT_ARCH_ARM,
        ];
        for nr in numbers {
            for audit_arch in audit_arches {
                for args in &args {
                    let expected = action_of(&decide(arch, audit_arch, nr, args));
                    let got = filter.evaluate(audit_arch, nr, args);
                    assert_eq!(
                        got.ok(),
                        Some(expected),
                        "{arch}: nr {nr:#x} arch {audit_arch:#x} args {args:x?}"
                    );
                }
            }
        }
    }
}

/// The aarch64 filter denies by aarch64's numbers, not x86_64's: ptrace is 117 there and
/// 101 is nanosleep; a call through the x86_64 ABI is a foreign one.
#[test]
fn the_aarch64_filter_uses_aarch64_numbers() {
    let filter = compile_for(Arch::Aarch64).unwrap();
    let audit = Arch::Aarch64.audit_arch();
    let eperm = Action::Errno(libc::EPERM);
    assert_eq!(filter.evaluate(audit, 117, &[0; 6]).ok(), Some(eperm));
    assert_eq!(
        filter.evaluate(audit, 101, &[0; 6]).ok(),
        Some(Action::Allow)
    );
    // clone with CLONE_NEWUSER (aarch64 220), clone3 gets ENOSYS (435 everywhere).
    assert_eq!(
        filter.evaluate(audit, 220, &with_arg(0, 0x1000_0000)).ok(),
        Some(eperm)
    );
    assert_eq!(
        filter.evaluate(audit, 435, &[0; 6]).ok(),
        Some(Action::Errno(libc::ENOSYS))
    );
    // TIOCSTI on aarch64's ioctl (29); x86_64's ioctl number (16) is another syscall.
    assert_eq!(
        filter.evaluate(audit, 29, &with_arg(1, 0x5412)).ok(),
        Some(eperm)
    );
    assert_eq!(
        filter.evaluate(audit, 16, &with_arg(1, 0x5412)).ok(),
        Some(Action::Allow)
    );
    assert_eq!(
        filter
            .evaluate(Arch::X86_64.audit_arch(), 117, &[0; 6])
            .ok(),
        Some(eperm),
        "a foreign ABI is refused"
    );
}

proptest! {
    #[test]
    fn the_compiled_program_agrees_with_decide_on_random_calls(
        pick in 0usize..64,
        raw_nr in any::<u32>(),
        args in any::<[u64; 6]>(),
        low in any::<u32>(),
        arg in 0usize..6,
    ) {
        let aarch64 = pick % 3 == 0;
        let arch = if aarch64 { Arch::Aarch64 } else { native() };
        let filter = compile_for(arch).unwrap();
        let list = deny_list_for(arch);
        // Mostly numbers the list names, so the argument conditions are exercised.
        let nr = match list.get(pick) {
            Some(rule) => rule.nr,
            None => i64::from(raw_nr as i32),
        };
        let mut args = args;
        // Half the time keep only a small low word, the range where conditions live.
        if pick % 2 == 0 {
            args[arg] = (args[arg] & 0xffff_ffff_0000_0000) | u64::from(low % 0x100);
        }
        let expected = action_of(&decide(arch, arch.audit_arch(), nr, &args));
        prop_assert_eq!(filter.evaluate(arch.audit_arch(), nr, &args).ok(), Some(expected));
    }
}

#[test]
fn chaining_leaves_no_allow_before_the_last_program() {
    let filter = filter();
    let program = filter.program();
    let enosys_start = program
        .iter()
        .position(|insn| insn.code == bpf::RET_K && insn.k == bpf::ret_errno(libc::ENOSYS))
        .unwrap_or(program.len());
    let eperm_rules_end = program
        .iter()
        .rposition(|insn| insn.code == bpf::RET_K && insn.k == bpf::ret_errno(libc::EPERM))
        .unwrap_or(0);
    assert!(
        eperm_rules_end < enosys_start,
        "EPERM group precedes the ENOSYS one"
    );
    let allows_before = program[..eperm_rules_end]
        .iter()
        .filter(|insn| insn.code == bpf::RET_K && insn.k == bpf::SECCOMP_RET_ALLOW)
        .count();
    assert_eq!(allows_before, 0);
    assert!(program.len() <= bpf::MAX_INSTRUCTIONS);
}

#[test]
fn two_errnos_for_one_syscall_are_refused() {
    let list = [
        DenyRule {
            syscall: "clone",
            nr: libc::SYS_clone,
            when: &[],
            errno: DenyErrno::Eperm,
            reason: "test",
        },
        DenyRule {
            syscall: "clone",
            nr: libc::SYS_clone,
            when: &[ArgMatch::Equals { arg: 0, value: 1 }],
            errno: DenyErrno::Enosys,
            reason: "test",
        },
    ];
    assert!(matches!(
        compile_list(native(), &list),
        Err(SeccompError::ConflictingErrno {
            syscall: "clone",
            ..
        })
    ));
}

#[test]
fn numbers_outside_the_native_range_are_refused_at_compile_time() {
    for nr in [-1, i64::from(X32_SYSCALL_BIT) | 39] {
        let list = [DenyRule {
            syscall: "bogus",
            nr,
            when: &[],
            errno: DenyErrno::Eperm,
            reason: "test",
        }];
        assert!(matches!(
            compile_list(native(), &list),
            Err(SeccompError::InvalidNumber { .. })
        ));
    }
}

#[test]
fn an_unconditional_rule_wins_over_a_conditional_one_on_the_same_syscall() {
    let cond = DenyRule {
        syscall: "ioctl",
        nr: libc::SYS_ioctl,
        when: &[ArgMatch::Equals { arg: 1, value: 7 }],
        errno: DenyErrno::Eperm,
        reason: "test",
    };
    let all = DenyRule { when: &[], ..cond };
    for list in [[cond, all], [all, cond]] {
        let filter = match compile_list(native(), &list) {
            Ok(filter) => filter,
            Err(err) => panic!("{err}"),
        };
        let audit = native().audit_arch();
        let action = filter.evaluate(audit, libc::SYS_ioctl, &with_arg(1, 8));
        assert_eq!(action.ok(), Some(Action::Errno(libc::EPERM)));
    }
}

#[test]
fn a_condition_that_can_never_hold_denies_nothing() {
    let list = [DenyRule {
        syscall: "unshare",
        nr: libc::SYS_unshare,
        when: &[ArgMatch::AnyBitOf { arg: 0, mask: 0 }],
        errno: DenyErrno::Eperm,
        reason: "test",
    }];
    let filter = match compile_list(native(), &list) {
        Ok(filter) => filter,
        Err(err) => panic!("{err}"),
    };
    let audit = native().audit_arch();
    for flags in [0, u64::MAX, u64::from(UNSHARE_NAMESPACE_FLAGS)] {
        let action = filter.evaluate(audit, libc::SYS_unshare, &with_arg(0, flags));
        assert_eq!(action.ok(), Some(Action::Allow), "flags {flags:#x}");
        assert!(!list[0].matches(libc::SYS_unshare, &with_arg(0, flags)));
    }
}

#[test]
fn the_evaluator_rejects_programs_outside_its_subset() {
    let bad = [seccompiler::sock_filter {
        code: 0x07, // BPF_MISC: never emitted
        jt: 0,
        jf: 0,
        k: 0,
    }];
    assert!(matches!(
        bpf::evaluate(&bad, 0, 0, &[0; 6]),
        Err(SeccompError::Malformed { pc: 0, .. })
    ));
    assert!(matches!(
        bpf::evaluate(&[], 0, 0, &[0; 6]),
        Err(SeccompError::Malformed { .. })
    ));
}

#[test]
fn the_report_displays_and_serializes() {
    let report = SeccompReport {
        arch: Arch::X86_64,
        audit_arch: Arch::X86_64.audit_arch(),
        rules: 46,
        syscalls: 40,
        instructions: 300,
        set_no_new_privs: true,
    };
    let text = report.to_string();
    assert!(text.contains("46 deny rules over 40 syscalls"), "{text}");
    assert!(
        text.contains("x86_64") && text.contains("no_new_privs set"),
        "{text}"
    );
    let json = match serde_json::to_value(&report) {
        Ok(json) => json,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(json["arch"], "x86_64");
    assert_eq!(json["audit_arch"], 0xc000_003e_u32);
    assert_eq!(json["rules"], 46);
}

/// Beside the gate the deny-list leaves out exactly its two namespace rules (`unshare`,
/// `clone` with a namespace flag), which the gate's filter checks with the same masks;
/// `clone3`'s ENOSYS and every other rule stay.
#[cfg(target_os = "linux")]
#[test]
fn beside_the_gate_only_the_namespace_rules_move_to_the_gate() {
    let moved: Vec<&str> = deny_list()
        .iter()
        .filter(|r| crate::call_gate::enforces(r))
        .map(|r| r.syscall)
        .collect();
    assert_eq!(moved, ["unshare", "clone"]);
}
