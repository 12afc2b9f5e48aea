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
//! - `rename`, `renameat` and `renameat2`: the supervisor performs them itself from pinned
//!   parent directories, and refuses one that would move, replace or create a protected
//!   path (the planting guard). That is how git writes its config (`config.lock` renamed
//!   over `config`), which native Landlock cannot stop inside a writable repo, and it
//!   turns the bwrap view's bare `EBUSY` on a protected mount into a refusal that names
//!   the protection.
//!
//! Everything else runs untouched. A call through a foreign ABI or with an x32 number is
//! refused here too, as by the deny-list filter.

use seccompiler::sock_filter;

use crate::seccomp::bpf::{
    data_arg_low, jump, ret_errno, stmt, ALU_AND_K, DATA_ARCH, DATA_NR, JMP_JEQ_K, JMP_JGE_K,
    LD_W_ABS, RET_K, SECCOMP_RET_ALLOW, SECCOMP_RET_USER_NOTIF, X32_SYSCALL_BIT,
};

/// The syscall numbers the filter looks at, for one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateSyscalls {
    pub audit_arch: u32,
    pub connect: u32,
    pub bind: u32,
    pub socket: u32,
    pub socketpair: u32,
    /// `rename`, `renameat`, `renameat2` (aarch64 has only the last two).
    pub renames: [Option<u32>; 3],
}

impl GateSyscalls {
    /// This binary's architecture.
    pub fn native() -> Option<GateSyscalls> {
        let audit_arch = crate::seccomp::Arch::native()?.audit_arch();
        Some(GateSyscalls {
            audit_arch,
            connect: libc::SYS_connect as u32,
            bind: libc::SYS_bind as u32,
            socket: libc::SYS_socket as u32,
            socketpair: libc::SYS_socketpair as u32,
            renames: [
                legacy_rename(),
                Some(libc::SYS_renameat as u32),
                Some(libc::SYS_renameat2 as u32),
            ],
        })
    }

    fn notified(&self) -> Vec<u32> {
        let mut out = vec![self.connect, self.bind];
        out.extend(self.renames.iter().flatten());
        out
    }
}

#[cfg(target_arch = "x86_64")]
fn legacy_rename() -> Option<u32> {
    Some(libc::SYS_rename as u32)
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy_rename() -> Option<u32> {
    None
}

/// `SOCK_TYPE_MASK` (include/linux/net.h): the type without SOCK_CLOEXEC/SOCK_NONBLOCK.
const SOCK_TYPE_MASK: u32 = 0xf;

/// What the gate filter does with one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateVerdict {
    Allow,
    /// Wait for the supervisor.
    Notify,
    Errno(i32),
}

/// The reference meaning of [`build`]: the filter is tested against it.
pub fn decide(calls: &GateSyscalls, audit_arch: u32, nr: i32, args: &[u64; 6]) -> GateVerdict {
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

/// The classic-BPF program for `calls`. Every jump is forward and counted from the next
/// instruction; the tail (the socket-family check) has a fixed shape, so the offsets into
/// it are computed from its length.
pub fn build(calls: &GateSyscalls) -> Vec<sock_filter> {
    let refuse_abi = ret_errno(libc::EPERM);
    let notified = calls.notified();
    let mut p = vec![
        stmt(LD_W_ABS, DATA_ARCH),
        jump(JMP_JEQ_K, calls.audit_arch, 1, 0),
        stmt(RET_K, refuse_abi),
        stmt(LD_W_ABS, DATA_NR),
    ];
    // The tail, after the notified numbers and the NOTIF return (t = its first index):
    //   t0 jeq socket     -> t2           t4 ld arg1 (type)
    //   t1 jeq socketpair -> t2 / t9      t5 and SOCK_TYPE_MASK
    //   t2 ld arg0 (family)               t6 jeq DGRAM -> t8
    //   t3 jeq AF_UNIX    -> t4 / t9      t7 jeq RAW   -> t8 / t9
    //   t8 ret EACCES                     t9 ret ALLOW
    let tail = [
        jump(JMP_JEQ_K, calls.socket, 1, 0),
        jump(JMP_JEQ_K, calls.socketpair, 0, 7),
        stmt(LD_W_ABS, data_arg_low(0)),
        jump(JMP_JEQ_K, libc::AF_UNIX as u32, 0, 5),
        stmt(LD_W_ABS, data_arg_low(1)),
        stmt(ALU_AND_K, SOCK_TYPE_MASK),
        jump(JMP_JEQ_K, libc::SOCK_DGRAM as u32, 1, 0),
        jump(JMP_JEQ_K, libc::SOCK_RAW as u32, 0, 1),
        stmt(RET_K, ret_errno(libc::EACCES)),
        stmt(RET_K, SECCOMP_RET_ALLOW),
    ];
    let n = notified.len();
    // Indices: 4 the -1 check, 5-6 the x32 check, 7..7+n the notified numbers, 7+n a jump
    // over the NOTIF return at 8+n, the tail from 9+n; its ALLOW is the last instruction.
    let allow = 9 + n + tail.len() - 1;
    let offset = |from: usize, to: usize| u8::try_from(to - from - 1).unwrap_or(u8::MAX);
    // -1: the way a ptracer cancels a call; the kernel answers ENOSYS itself.
    p.push(jump(JMP_JEQ_K, u32::MAX, offset(4, allow), 0));
    p.push(jump(JMP_JGE_K, X32_SYSCALL_BIT, 0, 1));
    p.push(stmt(RET_K, refuse_abi));
    for (i, nr) in notified.iter().enumerate() {
        p.push(jump(JMP_JEQ_K, *nr, offset(7 + i, 8 + n), 0));
    }
    p.push(stmt(crate::seccomp::bpf::JMP_JA, 1));
    p.push(stmt(RET_K, SECCOMP_RET_USER_NOTIF));
    p.extend(tail);
    p
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
