use super::*;

fn native() -> Option<Arch> {
    Arch::native()
}

#[test]
fn the_list_covers_every_required_kernel_surface() {
    let required = [
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "keyctl",
        "add_key",
        "request_key",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "move_mount",
        "open_tree",
        "mount_setattr",
        "unshare",
        "setns",
        "clone",
        "clone3",
        "open_by_handle_at",
        "name_to_handle_at",
        "ioctl",
        "socket",
        "personality",
    ];
    for name in required {
        assert!(
            deny_list().iter().any(|rule| rule.syscall == name),
            "{name} missing from the deny-list"
        );
    }
}

#[test]
fn every_rule_has_a_one_line_reason_and_a_unique_condition() {
    for (i, rule) in deny_list().iter().enumerate() {
        assert!(
            !rule.reason.trim().is_empty(),
            "{} has no reason",
            rule.syscall
        );
        assert!(
            !rule.reason.contains('\n'),
            "{} reason spans lines",
            rule.syscall
        );
        for other in &deny_list()[i + 1..] {
            assert!(
                !(other.nr == rule.nr && other.when == rule.when),
                "{} listed twice with the same condition",
                rule.syscall
            );
            if other.syscall == rule.syscall {
                assert_eq!(other.nr, rule.nr, "{} has two numbers", rule.syscall);
            }
        }
    }
}

/// The two tables are one list: the same syscalls, conditions, errnos and reasons in the
/// same order, only the numbers differ (where the architectures' numbers differ).
#[test]
fn both_architectures_have_the_same_list() {
    let x86 = deny_list_for(Arch::X86_64);
    let arm = deny_list_for(Arch::Aarch64);
    assert_eq!(x86.len(), arm.len());
    for (a, b) in x86.iter().zip(arm) {
        assert_eq!(
            (a.syscall, a.when, a.errno, a.reason),
            (b.syscall, b.when, b.errno, b.reason)
        );
    }
    if let Some(arch) = native() {
        assert_eq!(deny_list_for(arch), deny_list());
    }
}

#[test]
fn the_rules_serialize_for_export() {
    let json = match serde_json::to_value(deny_list()) {
        Ok(json) => json,
        Err(err) => panic!("{err}"),
    };
    let ioctl = json
        .as_array()
        .and_then(|rules| rules.iter().find(|rule| rule["syscall"] == "ioctl"));
    let Some(ioctl) = ioctl else {
        panic!("ioctl missing from {json}")
    };
    assert_eq!(ioctl["errno"], "EPERM");
    assert_eq!(ioctl["when"][0]["op"], "equals");
    assert_eq!(ioctl["when"][0]["arg"], 1);
}

#[test]
fn clone3_alone_gets_enosys_so_glibc_falls_back_to_clone() {
    for rule in deny_list() {
        let expected = if rule.syscall == "clone3" {
            DenyErrno::Enosys
        } else {
            DenyErrno::Eperm
        };
        assert_eq!(rule.errno, expected, "{}", rule.syscall);
    }
}

#[test]
fn errnos_are_linux_numbers() {
    assert_eq!(DenyErrno::Eperm.raw(), 1);
    assert_eq!(DenyErrno::Enosys.raw(), 38);
}

#[test]
fn the_constant_list_is_the_static_one() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        assert_eq!(&deny_list_const(arch)[..], deny_list_for(arch));
        assert_eq!(deny_list_for(arch).len(), DENY_RULES);
    }
}
