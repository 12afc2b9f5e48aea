//! The deny-list's numbers (data in [`jaula_policy::seccomp`], spelled out there so every
//! architecture's list builds on any host) checked against libc's for the build target,
//! at compile time: a typo in the policy's tables fails the build of this crate for that
//! target (`cargo check --target aarch64-unknown-linux-gnu` in .ci/run evaluates these).

use jaula_policy::seccomp::{
    deny_list_const, Arch, ArgMatch, DenyErrno, DenyRule, AF_ALG, AF_PACKET, AF_VSOCK, DENY_RULES,
    PRIO_PROCESS, TIOCLINUX, TIOCSTI,
};

#[cfg(target_arch = "x86_64")]
const NATIVE: Option<Arch> = Some(Arch::X86_64);
#[cfg(target_arch = "aarch64")]
const NATIVE: Option<Arch> = Some(Arch::Aarch64);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE: Option<Arch> = None;

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether every entry of `list` naming `syscall` carries `nr`, and at least one does.
const fn numbered(list: &[DenyRule; DENY_RULES], syscall: &str, nr: i64) -> bool {
    let mut seen = false;
    let mut i = 0;
    while i < list.len() {
        if same(list[i].syscall, syscall) {
            if list[i].nr != nr {
                return false;
            }
            seen = true;
        }
        i += 1;
    }
    seen
}

/// Whether some argument condition of `list` compares against `value` (so the constant is
/// in use and its check below means something).
const fn compares(list: &[DenyRule; DENY_RULES], value: u32) -> bool {
    let mut i = 0;
    while i < list.len() {
        if let [ArgMatch::Equals { value: v, .. }] = list[i].when {
            if *v == value {
                return true;
            }
        }
        i += 1;
    }
    false
}

const _: () = {
    if let Some(arch) = NATIVE {
        let list = deny_list_const(arch);
        assert!(numbered(&list, "ptrace", libc::SYS_ptrace));
        assert!(numbered(
            &list,
            "process_vm_readv",
            libc::SYS_process_vm_readv
        ));
        assert!(numbered(
            &list,
            "process_vm_writev",
            libc::SYS_process_vm_writev
        ));
        assert!(numbered(&list, "pidfd_getfd", libc::SYS_pidfd_getfd));
        assert!(numbered(&list, "prlimit64", libc::SYS_prlimit64));
        assert!(numbered(&list, "setpriority", libc::SYS_setpriority));
        assert!(numbered(&list, "ioprio_set", libc::SYS_ioprio_set));
        assert!(numbered(
            &list,
            "sched_setscheduler",
            libc::SYS_sched_setscheduler
        ));
        assert!(numbered(&list, "sched_setattr", libc::SYS_sched_setattr));
        assert!(numbered(&list, "io_uring_setup", libc::SYS_io_uring_setup));
        assert!(numbered(&list, "io_uring_enter", libc::SYS_io_uring_enter));
        assert!(numbered(
            &list,
            "io_uring_register",
            libc::SYS_io_uring_register
        ));
        assert!(numbered(&list, "bpf", libc::SYS_bpf));
        assert!(numbered(
            &list,
            "perf_event_open",
            libc::SYS_perf_event_open
        ));
        assert!(numbered(&list, "userfaultfd", libc::SYS_userfaultfd));
        assert!(numbered(&list, "add_key", libc::SYS_add_key));
        assert!(numbered(&list, "keyctl", libc::SYS_keyctl));
        assert!(numbered(&list, "request_key", libc::SYS_request_key));
        assert!(numbered(&list, "kexec_load", libc::SYS_kexec_load));
        assert!(numbered(
            &list,
            "kexec_file_load",
            libc::SYS_kexec_file_load
        ));
        assert!(numbered(&list, "init_module", libc::SYS_init_module));
        assert!(numbered(&list, "finit_module", libc::SYS_finit_module));
        assert!(numbered(&list, "delete_module", libc::SYS_delete_module));
        assert!(numbered(&list, "mount", libc::SYS_mount));
        assert!(numbered(&list, "umount2", libc::SYS_umount2));
        assert!(numbered(&list, "pivot_root", libc::SYS_pivot_root));
        assert!(numbered(&list, "chroot", libc::SYS_chroot));
        assert!(numbered(&list, "fsopen", libc::SYS_fsopen));
        assert!(numbered(&list, "fsconfig", libc::SYS_fsconfig));
        assert!(numbered(&list, "fsmount", libc::SYS_fsmount));
        assert!(numbered(&list, "fspick", libc::SYS_fspick));
        assert!(numbered(&list, "move_mount", libc::SYS_move_mount));
        assert!(numbered(&list, "open_tree", libc::SYS_open_tree));
        assert!(numbered(&list, "mount_setattr", libc::SYS_mount_setattr));
        assert!(numbered(&list, "unshare", libc::SYS_unshare));
        assert!(numbered(&list, "setns", libc::SYS_setns));
        assert!(numbered(&list, "clone", libc::SYS_clone));
        assert!(numbered(&list, "clone3", libc::SYS_clone3));
        assert!(numbered(
            &list,
            "open_by_handle_at",
            libc::SYS_open_by_handle_at
        ));
        assert!(numbered(
            &list,
            "name_to_handle_at",
            libc::SYS_name_to_handle_at
        ));
        assert!(numbered(&list, "ioctl", libc::SYS_ioctl));
        assert!(numbered(&list, "socket", libc::SYS_socket));
        assert!(numbered(&list, "socketpair", libc::SYS_socketpair));
        assert!(numbered(&list, "personality", libc::SYS_personality));
        assert!(compares(&list, TIOCSTI) && TIOCSTI == libc::TIOCSTI as u32);
        assert!(compares(&list, TIOCLINUX) && TIOCLINUX == libc::TIOCLINUX as u32);
        assert!(compares(&list, AF_PACKET) && AF_PACKET == libc::AF_PACKET as u32);
        assert!(compares(&list, AF_ALG) && AF_ALG == libc::AF_ALG as u32);
        assert!(compares(&list, AF_VSOCK) && AF_VSOCK == libc::AF_VSOCK as u32);
    }
    // IOPRIO_WHO_PROCESS is not in libc; linux/ioprio.h has it as 1 since Linux 2.6.13.
    // libc types it u32 on glibc, c_int elsewhere.
    assert!(PRIO_PROCESS as i64 == libc::PRIO_PROCESS as i64);
    assert!(DenyErrno::Eperm.raw() == libc::EPERM);
    assert!(DenyErrno::Enosys.raw() == libc::ENOSYS);
};
