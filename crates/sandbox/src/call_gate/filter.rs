//! The gate's own seccomp filter: which calls wait for the supervisor.
//!
//! - `connect` and `bind`, whatever the socket: the supervisor performs them itself on
//!   the caller's socket. Its answer cannot rest on anything the caller can still change
//!   (the address in its memory, which socket its descriptor number names), so it never
//!   lets the kernel run the original call after looking at it.
//! - `socket`/`socketpair` of a unix datagram socket are refused outright (`EACCES`). A
//!   datagram names its destination in every `sendto`/`sendmsg`, where the address sits
//!   in the caller's memory and the descriptor may be swapped for another socket between
//!   a check and the kernel's own read; gating every send would mean copying every
//!   message. Stream and seqpacket unix sockets ignore or refuse a per-message address
//!   (`net/unix/af_unix.c`), so without datagram sockets a send reaches only the peer
//!   that `connect` already admitted.
//!
//! - `rename`, `renameat` and `renameat2`, and every call that makes, removes or writes a
//!   named file: `open`/`openat` when their flags ask for write access, creation or
//!   truncation, `creat`, `mkdir*`, `mknod*`, `symlink*`, `link*`, `unlink*`, `rmdir`,
//!   `truncate`. The supervisor performs them itself from pinned directories and refuses
//!   one whose target is a protected path (the planting guard): native Landlock cannot deny
//!   one name inside a writable directory (git's config, a new `.git/hooks/pre-commit`, a
//!   repo's `.envrc`), and the bwrap view cannot stop the creation of an absent one.
//!   Opens for reading never wait.
//! - `unshare` and `clone` asking for a new namespace: the supervisor refuses them
//!   (`EPERM`, as the deny-list would) and counts them, so `jaula run` can say that a
//!   sandbox of the command's own (bubblewrap under an agent) failed to start. A seccomp
//!   errno outranks a notification whichever filter returns it, so when the gate is on
//!   the deny-list leaves these two rules to this filter
//!   ([`crate::seccomp::install_without`] with [`crate::call_gate::enforces`]); the answer does not change, and without
//!   a listener the kernel fails the call with `ENOSYS`, never lets it run.
//! - `umask`, only to be seen: the supervisor notes the new mask (for the files it makes
//!   on the caller's behalf) and lets the call run as made.
//! - `openat2` is refused with `ENOSYS`: its flags sit in the caller's memory, where the
//!   filter cannot read them, and callers fall back to `openat` (it is new in Linux 5.6).
//!
//! Everything else runs untouched. A call through a foreign ABI or with an x32 number is
//! refused here too, as by the deny-list filter.

use jaula_policy::seccomp::{CLONE_NAMESPACE_FLAGS, UNSHARE_NAMESPACE_FLAGS};
use seccompiler::sock_filter;

use crate::seccomp::bpf::{
    data_arg_low, jump, ret_errno, stmt, ALU_AND_K, DATA_ARCH, DATA_NR, JMP_JEQ_K, JMP_JGE_K,
    JMP_JSET_K, LD_W_ABS, RET_K, SECCOMP_RET_ALLOW, SECCOMP_RET_USER_NOTIF, X32_SYSCALL_BIT,
};

/// The syscall numbers the filter looks at, for one architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GateSyscalls {
    pub(crate) audit_arch: u32,
    pub(crate) connect: u32,
    pub(crate) bind: u32,
    pub(crate) socket: u32,
    pub(crate) socketpair: u32,
    /// `umask`: notified so the supervisor learns each process's mask as it changes (and
    /// lets the call run as made), instead of reading `/proc` for every file it makes.
    pub(crate) umask: u32,
    /// Always notified besides `connect` and `bind`: the renames, the calls that make or
    /// remove a name, `creat` and `truncate`.
    pub(crate) paths: Vec<u32>,
    /// Notified when their flags argument (at the given index) asks for write access,
    /// creation or truncation: `open` (legacy ABIs) and `openat`.
    pub(crate) opens: Vec<(u32, u32)>,
    /// Refused with ENOSYS: `openat2`.
    pub(crate) unsupported: Vec<u32>,
    /// Notified when the low word of their first argument has any of the mask's bits:
    /// `unshare` and `clone` with a namespace flag (the deny-list's masks).
    pub(crate) namespaces: Vec<(u32, u32)>,
}

/// `O_WRONLY | O_RDWR | O_CREAT | O_TRUNC`: an open with none of these neither writes,
/// creates nor truncates. (`O_TMPFILE` carries `O_WRONLY` or `O_RDWR` by definition.)
const WRITE_INTENT: u32 = (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

impl GateSyscalls {
    /// This binary's architecture.
    pub(crate) fn native() -> Option<GateSyscalls> {
        Some(GateSyscalls::for_arch(
            jaula_policy::seccomp::Arch::native()?
        ))
    }

    /// The numbers of `arch`, spelled out (as the deny-list's are) so that the filter of
    /// every supported architecture is built and checked against [`decide`] on any host;
    /// the build target's are checked against libc's by the unit tests.
    fn for_arch(arch: jaula_policy::seccomp::Arch) -> GateSyscalls {
        use jaula_policy::seccomp::Arch;
        match arch {
            // arch/x86/entry/syscalls/syscall_64.tbl
            Arch::X86_64 => GateSyscalls {
                audit_arch: arch.audit_arch(),
                connect: 42,
                bind: 49,
                socket: 41,
                socketpair: 53,
                umask: 95,
                // renameat, renameat2, mkdirat, mknodat, symlinkat, linkat, unlinkat,
                // truncate; then the legacy rename, mkdir, mknod, symlink, link, unlink,
                // rmdir, creat.
                paths: vec![
                    264, 316, 258, 259, 266, 265, 263, 76, 82, 83, 133, 88, 86, 87, 84, 85,
                ],
                // openat (flags in arg 2), open (flags in arg 1).
                opens: vec![(257, 2), (2, 1)],
                unsupported: vec![437],
                // unshare, clone.
                namespaces: vec![(272, UNSHARE_NAMESPACE_FLAGS), (56, CLONE_NAMESPACE_FLAGS)],
            },
            // include/uapi/asm-generic/unistd.h: no legacy forms.
            Arch::Aarch64 => GateSyscalls {
                audit_arch: arch.audit_arch(),
                connect: 203,
                bind: 200,
                socket: 198,
                socketpair: 199,
                umask: 166,
                paths: vec![38, 276, 34, 33, 36, 37, 35, 45],
                opens: vec![(56, 2)],
                unsupported: vec![437],
                namespaces: vec![(97, UNSHARE_NAMESPACE_FLAGS), (220, CLONE_NAMESPACE_FLAGS)],
            },
        }
    }

    /// Whether `nr` is one of [`GateSyscalls::namespaces`]: a notification for it is a
    /// namespace refused.
    pub(crate) fn is_namespace_call(&self, nr: i64) -> bool {
        self.namespaces.iter().any(|(n, _)| i64::from(*n) == nr)
    }

    fn notified(&self) -> Vec<u32> {
        let mut out = vec![self.connect, self.bind, self.umask];
        out.extend(&self.paths);
        out
    }
}

/// `SOCK_TYPE_MASK` (include/linux/net.h): the type without SOCK_CLOEXEC/SOCK_NONBLOCK.
const SOCK_TYPE_MASK: u32 = 0xf;

/// What the gate filter does with one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// Only the tests compare the filter with its reference meaning.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum GateVerdict {
    /// The call goes on unexamined.
    Allow,
    /// Wait for the supervisor.
    Notify,
    /// The call fails with this errno.
    Errno(i32),
}

/// The reference meaning of [`build`]: the filter is tested against it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn decide(
    calls: &GateSyscalls,
    audit_arch: u32,
    nr: i32,
    args: &[u64; 6],
) -> GateVerdict {
    let refused_abi = GateVerdict::Errno(libc::EPERM);
    if audit_arch != calls.audit_arch {
        return refused_abi;
    }
    let nr = nr as u32;
    if nr == u32::MAX {
        return GateVerdict::Allow;
    }
    if nr >= X32_SYSCALL_BIT {
        return refused_abi;
    }
    if calls.notified().contains(&nr) {
        return GateVerdict::Notify;
    }
    if calls.unsupported.contains(&nr) {
        return GateVerdict::Errno(libc::ENOSYS);
    }
    if let Some((_, mask)) = calls.namespaces.iter().find(|(n, _)| *n == nr) {
        // Every namespace flag sits in the low word of the flags.
        return if args[0] as u32 & mask != 0 {
            GateVerdict::Notify
        } else {
            GateVerdict::Allow
        };
    }
    if let Some((_, arg)) = calls.opens.iter().find(|(n, _)| *n == nr) {
        // The kernel reads `int` flags: only the low word counts.
        return if args[*arg as usize] as u32 & WRITE_INTENT != 0 {
            GateVerdict::Notify
        } else {
            GateVerdict::Allow
        };
    }
    if nr == calls.socket || nr == calls.socketpair {
        // The kernel reads `int` arguments: only the low words count.
        let family = args[0] as u32;
        let kind = args[1] as u32 & SOCK_TYPE_MASK;
        // af_unix.c: unix_create maps SOCK_RAW to SOCK_DGRAM.
        let datagram = kind == libc::SOCK_DGRAM as u32 || kind == libc::SOCK_RAW as u32;
        if family == libc::AF_UNIX as u32 && datagram {
            return GateVerdict::Errno(libc::EACCES);
        }
    }
    GateVerdict::Allow
}

/// Where a jump of the program goes, resolved to an offset once the layout is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum To {
    Next,
    Allow,
    Notify,
    RefuseAbi,
    Unsupported,
    Refuse,
    /// The flags check of `opens[i]`.
    OpenCheck(usize),
    /// The flags check of `namespaces[i]`.
    NamespaceCheck(usize),
    SocketCheck,
}

/// One instruction before layout: a statement, or a conditional jump with symbolic targets.
enum Op {
    Stmt(u16, u32),
    Jump(u16, u32, To, To),
}

/// The classic-BPF program for `calls`. Every jump is forward: a dispatch on the syscall
/// number, then the argument checks, then the returns, each target placed after every
/// jump to it.
pub(crate) fn build(calls: &GateSyscalls) -> Vec<sock_filter> {
    use To::*;
    let mut dispatch = vec![
        Op::Stmt(LD_W_ABS, DATA_ARCH),
        Op::Jump(JMP_JEQ_K, calls.audit_arch, Next, RefuseAbi),
        Op::Stmt(LD_W_ABS, DATA_NR),
        // -1: the way a ptracer cancels a call; the kernel answers ENOSYS itself.
        Op::Jump(JMP_JEQ_K, u32::MAX, Allow, Next),
        Op::Jump(JMP_JGE_K, X32_SYSCALL_BIT, RefuseAbi, Next),
    ];
    for nr in calls.notified() {
        dispatch.push(Op::Jump(JMP_JEQ_K, nr, Notify, Next));
    }
    for nr in &calls.unsupported {
        dispatch.push(Op::Jump(JMP_JEQ_K, *nr, Unsupported, Next));
    }
    for (i, (nr, _)) in calls.namespaces.iter().enumerate() {
        dispatch.push(Op::Jump(JMP_JEQ_K, *nr, NamespaceCheck(i), Next));
    }
    for (i, (nr, _)) in calls.opens.iter().enumerate() {
        dispatch.push(Op::Jump(JMP_JEQ_K, *nr, OpenCheck(i), Next));
    }
    dispatch.push(Op::Jump(JMP_JEQ_K, calls.socket, SocketCheck, Next));
    dispatch.push(Op::Jump(JMP_JEQ_K, calls.socketpair, SocketCheck, Allow));
    let mut blocks: Vec<(To, Vec<Op>)> = Vec::new();
    for (i, (_, arg)) in calls.opens.iter().enumerate() {
        blocks.push((
            OpenCheck(i),
            vec![
                Op::Stmt(LD_W_ABS, data_arg_low(*arg)),
                Op::Jump(JMP_JSET_K, WRITE_INTENT, Notify, Allow),
            ],
        ));
    }
    for (i, (_, mask)) in calls.namespaces.iter().enumerate() {
        blocks.push((
            NamespaceCheck(i),
            vec![
                Op::Stmt(LD_W_ABS, data_arg_low(0)),
                Op::Jump(JMP_JSET_K, *mask, Notify, Allow),
            ],
        ));
    }
    blocks.push((
        SocketCheck,
        vec![
            Op::Stmt(LD_W_ABS, data_arg_low(0)),
            Op::Jump(JMP_JEQ_K, libc::AF_UNIX as u32, Next, Allow),
            Op::Stmt(LD_W_ABS, data_arg_low(1)),
            Op::Stmt(ALU_AND_K, SOCK_TYPE_MASK),
            Op::Jump(JMP_JEQ_K, libc::SOCK_DGRAM as u32, Refuse, Next),
            // af_unix.c: unix_create maps SOCK_RAW to SOCK_DGRAM.
            Op::Jump(JMP_JEQ_K, libc::SOCK_RAW as u32, Refuse, Allow),
        ],
    ));
    let returns = [
        (Allow, SECCOMP_RET_ALLOW),
        (Notify, SECCOMP_RET_USER_NOTIF),
        (RefuseAbi, ret_errno(libc::EPERM)),
        (Unsupported, ret_errno(libc::ENOSYS)),
        (Refuse, ret_errno(libc::EACCES)),
    ];
    // Layout: where each labelled target starts.
    let mut at = std::collections::HashMap::new();
    let mut len = dispatch.len();
    for (label, ops) in &blocks {
        at.insert(*label, len);
        len += ops.len();
    }
    for (label, _) in &returns {
        at.insert(*label, len);
        len += 1;
    }
    let mut program = Vec::with_capacity(len);
    let ops = dispatch
        .into_iter()
        .chain(blocks.into_iter().flat_map(|(_, ops)| ops));
    for op in ops {
        let here = program.len();
        let offset = |to: To| match to {
            Next => 0,
            // A target is always after its jumps; an offset that did not fit in the
            // instruction would be a layout bug, which the tests against `decide` catch.
            label => at
                .get(&label)
                .and_then(|t| u8::try_from(t - here - 1).ok())
                .unwrap_or(u8::MAX),
        };
        program.push(match op {
            Op::Stmt(code, k) => stmt(code, k),
            Op::Jump(code, k, t, f) => jump(code, k, offset(t), offset(f)),
        });
    }
    program.extend(returns.iter().map(|(_, ret)| stmt(RET_K, *ret)));
    program
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
