//! The deny-list as data: the single source of truth for the native BPF filter, for
//! [`super::decide`] and for any later export (OCI/Docker seccomp JSON).
//!
//! Every argument comparison is on the low 32 bits. The arguments compared here are C `int`
//! or `unsigned int` in the kernel (ioctl's `cmd`, socket's `domain`, personality's
//! `persona`) or are truncated by it (clone's flags go through `lower_32_bits()`), so a
//! 64-bit comparison could be dodged with garbage in the upper half: Flatpak's TIOCSTI
//! filter was bypassed exactly that way (CVE-2019-10063).

use serde::Serialize;

/// The errno a denied syscall returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
#[non_exhaustive]
pub enum DenyErrno {
    /// "Operation not permitted": the usual refusal, what an unprivileged caller would get.
    Eperm,
    /// "Function not implemented": for syscalls whose callers fall back to an older,
    /// filterable syscall when the new one appears to be missing (clone3 → clone).
    Enosys,
}

impl DenyErrno {
    /// The numeric errno, as the kernel returns it.
    pub const fn raw(self) -> i32 {
        match self {
            DenyErrno::Eperm => libc::EPERM,
            DenyErrno::Enosys => libc::ENOSYS,
        }
    }

    /// The symbolic name (`EPERM`, `ENOSYS`).
    pub const fn name(self) -> &'static str {
        match self {
            DenyErrno::Eperm => "EPERM",
            DenyErrno::Enosys => "ENOSYS",
        }
    }
}

impl std::fmt::Display for DenyErrno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A condition on one syscall argument. All comparisons use the argument's low 32 bits
/// (see the module documentation for why).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ArgMatch {
    /// `(args[arg] as u32) == value`.
    Equals { arg: u8, value: u32 },
    /// `(args[arg] as u32) & mask != 0`: any of the bits is set.
    AnyBitOf { arg: u8, mask: u32 },
    /// `(args[arg] as u32)` is none of `allowed`.
    NoneOf { arg: u8, allowed: &'static [u32] },
}

impl ArgMatch {
    /// The index of the argument this condition reads.
    pub const fn arg(&self) -> u8 {
        match *self {
            ArgMatch::Equals { arg, .. }
            | ArgMatch::AnyBitOf { arg, .. }
            | ArgMatch::NoneOf { arg, .. } => arg,
        }
    }

    /// Whether the syscall arguments satisfy this condition.
    pub fn matches(&self, args: &[u64; 6]) -> bool {
        let Some(&raw) = args.get(usize::from(self.arg())) else {
            return false;
        };
        // Truncation is the point: the kernel reads these arguments as 32-bit values.
        let low = raw as u32;
        match *self {
            ArgMatch::Equals { value, .. } => low == value,
            ArgMatch::AnyBitOf { mask, .. } => low & mask != 0,
            ArgMatch::NoneOf { allowed, .. } => !allowed.contains(&low),
        }
    }
}

/// One entry of the deny-list: `syscall` (when `when` holds, or always) fails with `errno`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DenyRule {
    /// The syscall's kernel name.
    pub syscall: &'static str,
    /// Its number on the architecture this binary was built for.
    pub nr: i64,
    /// The argument condition; `None` denies every call.
    pub when: Option<ArgMatch>,
    /// What the denied call returns.
    pub errno: DenyErrno,
    /// Why, in one line.
    pub reason: &'static str,
}

impl DenyRule {
    /// Whether a call of `nr` with `args` falls under this rule.
    pub fn matches(&self, nr: i64, args: &[u64; 6]) -> bool {
        self.nr == nr
            && match &self.when {
                None => true,
                Some(cond) => cond.matches(args),
            }
    }
}

/// Every namespace-creating clone flag that fits the clone(2) flags word. CLONE_NEWTIME
/// (0x80) is left out here: in clone(2) that bit belongs to CSIGNAL, the exit signal, and
/// the kernel only accepts CLONE_NEWTIME through unshare(2) and clone3(2).
/// The values are the kernel's uapi ABI (include/uapi/linux/sched.h), identical on every
/// architecture, so they are spelled out rather than taken from a libc that only has them
/// on Linux.
pub const CLONE_NAMESPACE_FLAGS: u32 = 0x0002_0000 // CLONE_NEWNS
    | 0x0200_0000 // CLONE_NEWCGROUP
    | 0x0400_0000 // CLONE_NEWUTS
    | 0x0800_0000 // CLONE_NEWIPC
    | 0x1000_0000 // CLONE_NEWUSER
    | 0x2000_0000 // CLONE_NEWPID
    | 0x4000_0000; // CLONE_NEWNET

/// The namespace flags unshare(2) accepts: the clone(2) set plus CLONE_NEWTIME.
pub const UNSHARE_NAMESPACE_FLAGS: u32 = CLONE_NAMESPACE_FLAGS | CLONE_NEWTIME;

/// CLONE_NEWTIME (Linux 5.6), spelled out because not every libc exports it.
pub const CLONE_NEWTIME: u32 = 0x0000_0080;

/// The personas a caged process may still select. Each only changes what uname(2) reports
/// (`setarch i686`/`linux32` for 32-bit builds, `--uname-2.6` for ancient configure scripts);
/// 0xffffffff is the read-only query. Everything else is refused, in particular
/// ADDR_NO_RANDOMIZE (`setarch -R`, gdb), which turns ASLR off for every later exec.
pub const ALLOWED_PERSONAS: &[u32] = &[
    PER_LINUX,
    PER_LINUX32,
    UNAME26,
    UNAME26 | PER_LINUX32,
    PERSONALITY_QUERY,
];

/// PER_LINUX: the default persona.
pub const PER_LINUX: u32 = 0x0000;
/// PER_LINUX32: uname reports a 32-bit machine.
pub const PER_LINUX32: u32 = 0x0008;
/// UNAME26: uname reports a 2.6 release.
pub const UNAME26: u32 = 0x0002_0000;
/// personality(0xffffffff) returns the current persona without changing it.
pub const PERSONALITY_QUERY: u32 = 0xffff_ffff;

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod native {
    use super::*;

    /// open_tree_attr(2), Linux 6.15. New syscalls share one number on every architecture
    /// except alpha since Linux 5.1, and the libc crate does not export this one yet.
    const SYS_OPEN_TREE_ATTR: i64 = 467;

    const fn always(syscall: &'static str, nr: i64, reason: &'static str) -> DenyRule {
        DenyRule {
            syscall,
            nr,
            when: None,
            errno: DenyErrno::Eperm,
            reason,
        }
    }

    const fn when(
        syscall: &'static str,
        nr: i64,
        cond: ArgMatch,
        reason: &'static str,
    ) -> DenyRule {
        DenyRule {
            syscall,
            nr,
            when: Some(cond),
            errno: DenyErrno::Eperm,
            reason,
        }
    }

    const IO_URING: &str = "runs file and network operations outside syscalls, where seccomp \
                        cannot see them; a leading source of kernel exploits";
    const KEYRING: &str = "the kernel keyring is not namespaced: keys of the owner's login \
                       session (Kerberos, disk encryption) would be reachable";
    const NEW_MOUNT_API: &str = "new mount API: the same power as mount(2) over the filesystem \
                             view the other layers rely on";
    const NAMESPACES: &str = "new namespaces (above all user namespaces) hand out capabilities \
                          over kernel surface that is otherwise root-only, and private mounts";
    const SOCKETPAIR: &str = "socketpair(2) runs the family's socket constructor (and autoloads \
                          its module) even though only AF_UNIX can make pairs";

    pub(super) static DENY_LIST: &[DenyRule] = &[
    always(
        "ptrace",
        libc::SYS_ptrace,
        "reads and rewrites other processes' memory and registers: the classic way out of any \
         per-process confinement",
    ),
    always(
        "process_vm_readv",
        libc::SYS_process_vm_readv,
        "reads another process's memory with ptrace's power but without attaching",
    ),
    always(
        "process_vm_writev",
        libc::SYS_process_vm_writev,
        "writes another process's memory with ptrace's power but without attaching",
    ),
    always(
        "pidfd_getfd",
        libc::SYS_pidfd_getfd,
        "copies open file descriptors out of another process (ptrace-attach permission)",
    ),
    always("io_uring_setup", libc::SYS_io_uring_setup, IO_URING),
    always("io_uring_enter", libc::SYS_io_uring_enter, IO_URING),
    always("io_uring_register", libc::SYS_io_uring_register, IO_URING),
    always(
        "bpf",
        libc::SYS_bpf,
        "loads programs into the kernel: large exploit surface, and tracing programs read \
         other processes' data",
    ),
    always(
        "perf_event_open",
        libc::SYS_perf_event_open,
        "kernel profiling: exploit surface and side channels into other processes",
    ),
    always(
        "userfaultfd",
        libc::SYS_userfaultfd,
        "lets a process stall kernel page-fault handling at will, the standard way to win \
         races in kernel exploits",
    ),
    always("add_key", libc::SYS_add_key, KEYRING),
    always("keyctl", libc::SYS_keyctl, KEYRING),
    always("request_key", libc::SYS_request_key, KEYRING),
    always(
        "kexec_load",
        libc::SYS_kexec_load,
        "replaces the running kernel",
    ),
    always(
        "kexec_file_load",
        libc::SYS_kexec_file_load,
        "replaces the running kernel",
    ),
    always(
        "init_module",
        libc::SYS_init_module,
        "loads code into the kernel",
    ),
    always(
        "finit_module",
        libc::SYS_finit_module,
        "loads code into the kernel",
    ),
    always(
        "delete_module",
        libc::SYS_delete_module,
        "unloads kernel code, security modules included",
    ),
    always(
        "mount",
        libc::SYS_mount,
        "changes the filesystem view the other layers rely on (remount writable, bind over a \
         sealed path)",
    ),
    always(
        "umount2",
        libc::SYS_umount2,
        "detaches mounts; the bubblewrap view hides sealed paths under tmpfs and /dev/null mounts",
    ),
    always(
        "pivot_root",
        libc::SYS_pivot_root,
        "swaps the root filesystem",
    ),
    always(
        "chroot",
        libc::SYS_chroot,
        "moves the root directory; with any privilege left a known escape from path-based \
         confinement",
    ),
    always("fsopen", libc::SYS_fsopen, NEW_MOUNT_API),
    always("fsconfig", libc::SYS_fsconfig, NEW_MOUNT_API),
    always("fsmount", libc::SYS_fsmount, NEW_MOUNT_API),
    always("fspick", libc::SYS_fspick, NEW_MOUNT_API),
    always("move_mount", libc::SYS_move_mount, NEW_MOUNT_API),
    always("open_tree", libc::SYS_open_tree, NEW_MOUNT_API),
    always("open_tree_attr", SYS_OPEN_TREE_ATTR, NEW_MOUNT_API),
    always("mount_setattr", libc::SYS_mount_setattr, NEW_MOUNT_API),
    when(
        "unshare",
        libc::SYS_unshare,
        ArgMatch::AnyBitOf {
            arg: 0,
            mask: UNSHARE_NAMESPACE_FLAGS,
        },
        NAMESPACES,
    ),
    always(
        "setns",
        libc::SYS_setns,
        "joins namespaces (the host's included) through inherited or /proc-opened descriptors",
    ),
    when(
        "clone",
        libc::SYS_clone,
        ArgMatch::AnyBitOf {
            arg: 0,
            mask: CLONE_NAMESPACE_FLAGS,
        },
        NAMESPACES,
    ),
    DenyRule {
        syscall: "clone3",
        nr: libc::SYS_clone3,
        when: None,
        errno: DenyErrno::Enosys,
        reason: "its flags sit in memory seccomp cannot read; ENOSYS makes glibc and other \
                 callers fall back to clone(2), whose flags are checked",
    },
    always(
        "open_by_handle_at",
        libc::SYS_open_by_handle_at,
        "opens files by inode handle, bypassing path-based checks (Landlock, mount views): \
         the 'shocker' container escape",
    ),
    always(
        "name_to_handle_at",
        libc::SYS_name_to_handle_at,
        "mints the handles open_by_handle_at consumes and exposes inode identities across views",
    ),
    when(
        "ioctl",
        libc::SYS_ioctl,
        ArgMatch::Equals {
            arg: 1,
            value: libc::TIOCSTI as u32,
        },
        "TIOCSTI pushes keystrokes into the terminal, run by the owner's shell once the agent \
         exits (CVE-2017-5226)",
    ),
    when(
        "ioctl",
        libc::SYS_ioctl,
        ArgMatch::Equals {
            arg: 1,
            value: libc::TIOCLINUX as u32,
        },
        "TIOCLINUX selection paste injects input into a virtual console like TIOCSTI \
         (CVE-2023-1523)",
    ),
    when(
        "socket",
        libc::SYS_socket,
        ArgMatch::Equals {
            arg: 0,
            value: libc::AF_PACKET as u32,
        },
        "raw link-layer sockets: sniffing and spoofing, repeated kernel exploits \
         (CVE-2016-8655, CVE-2017-7308)",
    ),
    when(
        "socket",
        libc::SYS_socket,
        ArgMatch::Equals {
            arg: 0,
            value: libc::AF_ALG as u32,
        },
        "kernel crypto API sockets: exploit surface no coding tool needs",
    ),
    when(
        "socket",
        libc::SYS_socket,
        ArgMatch::Equals {
            arg: 0,
            value: libc::AF_VSOCK as u32,
        },
        "talks to the hypervisor and host services from inside a VM (CVE-2021-26708)",
    ),
    when(
        "socketpair",
        libc::SYS_socketpair,
        ArgMatch::Equals {
            arg: 0,
            value: libc::AF_PACKET as u32,
        },
        SOCKETPAIR,
    ),
    when(
        "socketpair",
        libc::SYS_socketpair,
        ArgMatch::Equals {
            arg: 0,
            value: libc::AF_ALG as u32,
        },
        SOCKETPAIR,
    ),
    when(
        "socketpair",
        libc::SYS_socketpair,
        ArgMatch::Equals {
            arg: 0,
            value: libc::AF_VSOCK as u32,
        },
        SOCKETPAIR,
    ),
    when(
        "personality",
        libc::SYS_personality,
        ArgMatch::NoneOf {
            arg: 0,
            allowed: ALLOWED_PERSONAS,
        },
        "other personas weaken exploit mitigations for every later exec: ADDR_NO_RANDOMIZE \
         turns ASLR off, READ_IMPLIES_EXEC makes data executable, MMAP_PAGE_ZERO maps page 0",
    ),
];
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
use native::DENY_LIST;

/// No native filter exists elsewhere: [`super::compile`] refuses unsupported targets.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
static DENY_LIST: &[DenyRule] = &[];

/// The deny-list for the architecture this binary was built for, in the order rules are
/// documented. Several entries may name the same syscall (one per argument condition);
/// a call is denied when any entry matches.
pub fn deny_list() -> &'static [DenyRule] {
    DENY_LIST
}
