//! The deny-list as data: the single source of truth for the native BPF filter, for
//! [`super::decide`] and for any later export (OCI/Docker seccomp JSON).
//!
//! Every value comparison is on the low 32 bits. The arguments compared here are C `int`
//! or `unsigned int` in the kernel (ioctl's `cmd`, socket's `domain`, personality's
//! `persona`, a `pid_t`) or are truncated by it (clone's flags go through
//! `lower_32_bits()`), so a 64-bit comparison could be dodged with garbage in the upper
//! half: Flatpak's TIOCSTI filter was bypassed exactly that way (CVE-2019-10063). The one
//! exception is a pointer tested for NULL ([`ArgMatch::NonNull`]): the kernel reads all 64
//! bits of a pointer, so a low-word test would let `0x1_0000_0000` through as NULL.

use serde::Serialize;

use super::Arch;

/// The errno a denied syscall returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
// Not `#[non_exhaustive]`: the filter compiler and the OCI export match every variant, so
// a new one must fail their build rather than fall into a catch-all.
pub enum DenyErrno {
    /// "Operation not permitted": the usual refusal, what an unprivileged caller would get.
    Eperm,
    /// "Function not implemented": for syscalls whose callers fall back to an older,
    /// filterable syscall when the new one appears to be missing (clone3 → clone).
    Enosys,
}

impl DenyErrno {
    /// The numeric errno, as the Linux kernel returns it.
    pub const fn raw(self) -> i32 {
        match self {
            // Linux's numbers (asm-generic/errno-base.h, errno.h), the same on every
            // architecture the filter supports; spelled out so the list builds on any host.
            // jaula-sandbox checks them against libc's at compile time.
            DenyErrno::Eperm => 1,
            DenyErrno::Enosys => 38,
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
// Not `#[non_exhaustive]`: the filter compiler and the OCI export match every variant, so
// a new one must fail their build rather than fall into a catch-all.
pub enum ArgMatch {
    /// `(args[arg] as u32) == value`.
    Equals {
        /// The argument's index (0 to 5).
        arg: u8,
        /// The value that matches.
        value: u32,
    },
    /// `(args[arg] as u32) & mask != 0`: any of the bits is set.
    AnyBitOf {
        /// The argument's index (0 to 5).
        arg: u8,
        /// The bits looked for.
        mask: u32,
    },
    /// `(args[arg] as u32)` is none of `allowed`.
    NoneOf {
        /// The argument's index (0 to 5).
        arg: u8,
        /// The values that do not match.
        allowed: &'static [u32],
    },
    /// `args[arg] != 0` on all 64 bits: a pointer argument that is not NULL.
    NonNull {
        /// The argument's index (0 to 5).
        arg: u8,
    },
}

impl ArgMatch {
    /// The index of the argument this condition reads.
    pub const fn arg(&self) -> u8 {
        match *self {
            ArgMatch::Equals { arg, .. }
            | ArgMatch::AnyBitOf { arg, .. }
            | ArgMatch::NoneOf { arg, .. }
            | ArgMatch::NonNull { arg } => arg,
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
            // A pointer is read whole: no truncation.
            ArgMatch::NonNull { .. } => raw != 0,
        }
    }
}

/// One entry of the deny-list: `syscall`, when every condition of `when` holds (always,
/// when there is none), fails with `errno`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DenyRule {
    /// The syscall's kernel name.
    pub syscall: &'static str,
    /// Its number on the architecture the list was built for.
    pub nr: i64,
    /// The argument conditions, all of which must hold (AND; at most one per argument);
    /// empty denies every call.
    pub when: &'static [ArgMatch],
    /// What the denied call returns.
    pub errno: DenyErrno,
    /// Why, in one line.
    pub reason: &'static str,
}

impl DenyRule {
    /// Whether a call of `nr` with `args` falls under this rule.
    pub fn matches(&self, nr: i64, args: &[u64; 6]) -> bool {
        self.nr == nr && self.when.iter().all(|cond| cond.matches(args))
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

const fn always(syscall: &'static str, nr: i64, reason: &'static str) -> DenyRule {
    DenyRule {
        syscall,
        nr,
        when: &[],
        errno: DenyErrno::Eperm,
        reason,
    }
}

const fn when(
    syscall: &'static str,
    nr: i64,
    conds: &'static [ArgMatch],
    reason: &'static str,
) -> DenyRule {
    DenyRule {
        syscall,
        nr,
        when: conds,
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

/// The syscall numbers the deny-list names, for one architecture. Spelled out rather than
/// taken from `libc::SYS_*` (which has only the build target's), so the filter of every
/// supported architecture can be built and evaluated on any host: the aarch64 filter is
/// checked instruction by instruction on the x86_64 machines that build jaula. The build
/// target's numbers are checked against libc's at compile time by jaula-sandbox
/// (`seccomp/numbers_check.rs`, which sees them through [`deny_list_const`]) and by the
/// unit tests. `open_tree_attr` (Linux 6.15) is not in libc yet; new syscalls share
/// one number on every architecture but alpha since Linux 5.1.
struct Numbers {
    ptrace: i64,
    process_vm_readv: i64,
    process_vm_writev: i64,
    pidfd_getfd: i64,
    prlimit64: i64,
    setpriority: i64,
    ioprio_set: i64,
    sched_setscheduler: i64,
    sched_setattr: i64,
    io_uring_setup: i64,
    io_uring_enter: i64,
    io_uring_register: i64,
    bpf: i64,
    perf_event_open: i64,
    userfaultfd: i64,
    add_key: i64,
    keyctl: i64,
    request_key: i64,
    kexec_load: i64,
    kexec_file_load: i64,
    init_module: i64,
    finit_module: i64,
    delete_module: i64,
    mount: i64,
    umount2: i64,
    pivot_root: i64,
    chroot: i64,
    fsopen: i64,
    fsconfig: i64,
    fsmount: i64,
    fspick: i64,
    move_mount: i64,
    open_tree: i64,
    open_tree_attr: i64,
    mount_setattr: i64,
    unshare: i64,
    setns: i64,
    clone: i64,
    clone3: i64,
    open_by_handle_at: i64,
    name_to_handle_at: i64,
    ioctl: i64,
    socket: i64,
    socketpair: i64,
    personality: i64,
}

/// arch/x86/entry/syscalls/syscall_64.tbl
const X86_64: Numbers = Numbers {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    pidfd_getfd: 438,
    prlimit64: 302,
    setpriority: 141,
    ioprio_set: 251,
    sched_setscheduler: 144,
    sched_setattr: 314,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    add_key: 248,
    keyctl: 250,
    request_key: 249,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    chroot: 161,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    move_mount: 429,
    open_tree: 428,
    open_tree_attr: 467,
    mount_setattr: 442,
    unshare: 272,
    setns: 308,
    clone: 56,
    clone3: 435,
    open_by_handle_at: 304,
    name_to_handle_at: 303,
    ioctl: 16,
    socket: 41,
    socketpair: 53,
    personality: 135,
};

/// include/uapi/asm-generic/unistd.h, which aarch64 uses.
const AARCH64: Numbers = Numbers {
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    pidfd_getfd: 438,
    prlimit64: 261,
    setpriority: 140,
    ioprio_set: 30,
    sched_setscheduler: 119,
    sched_setattr: 274,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    add_key: 217,
    keyctl: 219,
    request_key: 218,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    chroot: 51,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    move_mount: 429,
    open_tree: 428,
    open_tree_attr: 467,
    mount_setattr: 442,
    unshare: 97,
    setns: 268,
    clone: 220,
    clone3: 435,
    open_by_handle_at: 265,
    name_to_handle_at: 264,
    ioctl: 29,
    socket: 198,
    socketpair: 199,
    personality: 92,
};

/// ioctl request numbers and socket families: the same on every Linux architecture jaula
/// supports (asm-generic/ioctls.h, linux/socket.h), spelled out for the same reason.
/// ioctl: push a byte into a terminal's input queue.
pub const TIOCSTI: u32 = 0x5412;
/// ioctl: the virtual console's multiplexed requests (selection paste among them).
pub const TIOCLINUX: u32 = 0x541C;
/// Socket family: raw link-layer packets.
pub const AF_PACKET: u32 = 17;
/// Socket family: the kernel crypto API.
pub const AF_ALG: u32 = 38;
/// Socket family: host/guest virtual sockets.
pub const AF_VSOCK: u32 = 40;
/// setpriority(2)'s `which`: one process (or thread), named by `who`; 0 is the caller.
/// The other two, PRIO_PGRP and PRIO_USER, reach other processes even with `who` 0.
pub const PRIO_PROCESS: u32 = 0;
/// ioprio_set(2)'s `which`: one process (or thread), named by `who`; 0 is the caller.
/// The other two, IOPRIO_WHO_PGRP and IOPRIO_WHO_USER, reach other processes even with
/// `who` 0 (linux/ioprio.h).
pub const IOPRIO_WHO_PROCESS: u32 = 1;

const ANOTHER_PROCESS_IN_ARG0: &[ArgMatch] = &[ArgMatch::NoneOf {
    arg: 0,
    allowed: &[0],
}];
const ANOTHER_PROCESS_IN_ARG1: &[ArgMatch] = &[ArgMatch::NoneOf {
    arg: 1,
    allowed: &[0],
}];

/// The deny-list with `n`'s numbers, in the order rules are documented.
const fn rules(n: &Numbers) -> [DenyRule; DENY_RULES] {
    [
    always(
        "ptrace",
        n.ptrace,
        "reads and rewrites other processes' memory and registers: the classic way out of any \
         per-process confinement",
    ),
    always(
        "process_vm_readv",
        n.process_vm_readv,
        "reads another process's memory with ptrace's power but without attaching",
    ),
    always(
        "process_vm_writev",
        n.process_vm_writev,
        "writes another process's memory with ptrace's power but without attaching",
    ),
    always(
        "pidfd_getfd",
        n.pidfd_getfd,
        "copies open file descriptors out of another process (ptrace-attach permission)",
    ),
    when(
        "prlimit64",
        n.prlimit64,
        &[
            ArgMatch::NoneOf {
                arg: 0,
                allowed: &[0],
            },
            ArgMatch::NonNull { arg: 2 },
        ],
        "sets another process's limits with a same-uid check only, Landlock and \
         non-dumpability do not apply: NOFILE starves the gate's supervisor, FSIZE 0 kills \
         it, and the owner's processes outside the cage are reachable. Reading them, and \
         setrlimit/ulimit (pid 0), still work",
    ),
    when(
        "setpriority",
        n.setpriority,
        &[ArgMatch::NoneOf {
            arg: 0,
            allowed: &[PRIO_PROCESS],
        }],
        "PRIO_PGRP and PRIO_USER renice the supervisor and every process of the owner's uid \
         (host-wide natively), which only a same-uid check guards; nice(1) is PRIO_PROCESS",
    ),
    when(
        "setpriority",
        n.setpriority,
        ANOTHER_PROCESS_IN_ARG1,
        "renices another process (the supervisor, the owner's outside the cage) with a \
         same-uid check only; nice(1) and nice(2) name the caller (0). renice(1) of \
         another pid and per-thread nice by tid (a best-effort hint in Chromium) fail",
    ),
    when(
        "ioprio_set",
        n.ioprio_set,
        &[ArgMatch::NoneOf {
            arg: 0,
            allowed: &[IOPRIO_WHO_PROCESS],
        }],
        "a process group's or the whole uid's I/O class (the idle class starves the \
         supervisor's writes), with a same-uid check only",
    ),
    when(
        "ioprio_set",
        n.ioprio_set,
        ANOTHER_PROCESS_IN_ARG1,
        "another process's I/O class, with a same-uid check only; ionice(1) of a command \
         names the caller (0), ionice -p of another pid fails",
    ),
    when(
        "sched_setscheduler",
        n.sched_setscheduler,
        ANOTHER_PROCESS_IN_ARG0,
        "SCHED_IDLE on the supervisor, allowed to the same uid, starves it behind any busy \
         cage process; pid 0 (chrt of a command) works, a thread's tid (glibc's \
         pthread_setschedparam, clangd's background-index hint) fails",
    ),
    when(
        "sched_setattr",
        n.sched_setattr,
        ANOTHER_PROCESS_IN_ARG0,
        "sched_setscheduler's power with more (nice, utilisation clamps) on another \
         process; pid 0 works",
    ),
    always("io_uring_setup", n.io_uring_setup, IO_URING),
    always("io_uring_enter", n.io_uring_enter, IO_URING),
    always("io_uring_register", n.io_uring_register, IO_URING),
    always(
        "bpf",
        n.bpf,
        "loads programs into the kernel: large exploit surface, and tracing programs read \
         other processes' data",
    ),
    always(
        "perf_event_open",
        n.perf_event_open,
        "kernel profiling: exploit surface and side channels into other processes",
    ),
    always(
        "userfaultfd",
        n.userfaultfd,
        "lets a process stall kernel page-fault handling at will, the standard way to win \
         races in kernel exploits",
    ),
    always("add_key", n.add_key, KEYRING),
    always("keyctl", n.keyctl, KEYRING),
    always("request_key", n.request_key, KEYRING),
    always(
        "kexec_load",
        n.kexec_load,
        "replaces the running kernel",
    ),
    always(
        "kexec_file_load",
        n.kexec_file_load,
        "replaces the running kernel",
    ),
    always(
        "init_module",
        n.init_module,
        "loads code into the kernel",
    ),
    always(
        "finit_module",
        n.finit_module,
        "loads code into the kernel",
    ),
    always(
        "delete_module",
        n.delete_module,
        "unloads kernel code, security modules included",
    ),
    always(
        "mount",
        n.mount,
        "changes the filesystem view the other layers rely on (remount writable, bind over a \
         sealed path)",
    ),
    always(
        "umount2",
        n.umount2,
        "detaches mounts; the bubblewrap view hides sealed paths under tmpfs and /dev/null mounts",
    ),
    always(
        "pivot_root",
        n.pivot_root,
        "swaps the root filesystem",
    ),
    always(
        "chroot",
        n.chroot,
        "moves the root directory; with any privilege left a known escape from path-based \
         confinement",
    ),
    always("fsopen", n.fsopen, NEW_MOUNT_API),
    always("fsconfig", n.fsconfig, NEW_MOUNT_API),
    always("fsmount", n.fsmount, NEW_MOUNT_API),
    always("fspick", n.fspick, NEW_MOUNT_API),
    always("move_mount", n.move_mount, NEW_MOUNT_API),
    always("open_tree", n.open_tree, NEW_MOUNT_API),
    always("open_tree_attr", n.open_tree_attr, NEW_MOUNT_API),
    always("mount_setattr", n.mount_setattr, NEW_MOUNT_API),
    when(
        "unshare",
        n.unshare,
        &[ArgMatch::AnyBitOf {
            arg: 0,
            mask: UNSHARE_NAMESPACE_FLAGS,
        }],
        NAMESPACES,
    ),
    always(
        "setns",
        n.setns,
        "joins namespaces (the host's included) through inherited or /proc-opened descriptors",
    ),
    when(
        "clone",
        n.clone,
        &[ArgMatch::AnyBitOf {
            arg: 0,
            mask: CLONE_NAMESPACE_FLAGS,
        }],
        NAMESPACES,
    ),
    DenyRule {
        syscall: "clone3",
        nr: n.clone3,
        when: &[],
        errno: DenyErrno::Enosys,
        reason: "its flags sit in memory seccomp cannot read; ENOSYS makes glibc and other \
                 callers fall back to clone(2), whose flags are checked",
    },
    always(
        "open_by_handle_at",
        n.open_by_handle_at,
        "opens files by inode handle, bypassing path-based checks (Landlock, mount views): \
         the 'shocker' container escape",
    ),
    always(
        "name_to_handle_at",
        n.name_to_handle_at,
        "mints the handles open_by_handle_at consumes and exposes inode identities across views",
    ),
    when(
        "ioctl",
        n.ioctl,
        &[ArgMatch::Equals {
            arg: 1,
            value: TIOCSTI,
        }],
        "TIOCSTI pushes keystrokes into the terminal, run by the owner's shell once the agent \
         exits (CVE-2017-5226)",
    ),
    when(
        "ioctl",
        n.ioctl,
        &[ArgMatch::Equals {
            arg: 1,
            value: TIOCLINUX,
        }],
        "TIOCLINUX selection paste injects input into a virtual console like TIOCSTI \
         (CVE-2023-1523)",
    ),
    when(
        "socket",
        n.socket,
        &[ArgMatch::Equals {
            arg: 0,
            value: AF_PACKET,
        }],
        "raw link-layer sockets: sniffing and spoofing, repeated kernel exploits \
         (CVE-2016-8655, CVE-2017-7308)",
    ),
    when(
        "socket",
        n.socket,
        &[ArgMatch::Equals {
            arg: 0,
            value: AF_ALG,
        }],
        "kernel crypto API sockets: exploit surface no coding tool needs",
    ),
    when(
        "socket",
        n.socket,
        &[ArgMatch::Equals {
            arg: 0,
            value: AF_VSOCK,
        }],
        "talks to the hypervisor and host services from inside a VM (CVE-2021-26708)",
    ),
    when(
        "socketpair",
        n.socketpair,
        &[ArgMatch::Equals {
            arg: 0,
            value: AF_PACKET,
        }],
        SOCKETPAIR,
    ),
    when(
        "socketpair",
        n.socketpair,
        &[ArgMatch::Equals {
            arg: 0,
            value: AF_ALG,
        }],
        SOCKETPAIR,
    ),
    when(
        "socketpair",
        n.socketpair,
        &[ArgMatch::Equals {
            arg: 0,
            value: AF_VSOCK,
        }],
        SOCKETPAIR,
    ),
    when(
        "personality",
        n.personality,
        &[ArgMatch::NoneOf {
            arg: 0,
            allowed: ALLOWED_PERSONAS,
        }],
        "other personas weaken exploit mitigations for every later exec: ADDR_NO_RANDOMIZE \
         turns ASLR off, READ_IMPLIES_EXEC makes data executable, MMAP_PAGE_ZERO maps page 0",
    ),
    ]
}

/// How many entries the deny-list has (the same on every architecture).
pub const DENY_RULES: usize = 52;

static DENY_X86_64: [DenyRule; DENY_RULES] = rules(&X86_64);
static DENY_AARCH64: [DenyRule; DENY_RULES] = rules(&AARCH64);

/// The deny-list of `arch` as a constant value, for checks a build makes at compile time
/// (a `static` cannot be read in a constant).
pub const fn deny_list_const(arch: Arch) -> [DenyRule; DENY_RULES] {
    match arch {
        Arch::X86_64 => rules(&X86_64),
        Arch::Aarch64 => rules(&AARCH64),
    }
}

/// The deny-list of the filter built for `arch`.
pub fn deny_list_for(arch: Arch) -> &'static [DenyRule] {
    match arch {
        Arch::X86_64 => &DENY_X86_64,
        Arch::Aarch64 => &DENY_AARCH64,
    }
}

/// The deny-list for the architecture this binary was built for, in the order rules are
/// documented (empty where no native filter exists: `jaula_sandbox::seccomp::compile`
/// refuses those).
/// Several entries may name the same syscall (one per argument condition); a call is
/// denied when any entry matches.
pub fn deny_list() -> &'static [DenyRule] {
    match Arch::native() {
        Some(arch) => deny_list_for(arch),
        None => &[],
    }
}
