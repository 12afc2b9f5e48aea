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
        })
    }
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
    if nr == calls.connect || nr == calls.bind {
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

/// The classic-BPF program for `calls`.
pub fn build(calls: &GateSyscalls) -> Vec<sock_filter> {
    let allow = SECCOMP_RET_ALLOW;
    let refuse_abi = ret_errno(libc::EPERM);
    let refuse_datagram = ret_errno(libc::EACCES);
    // Jump offsets are counted from the next instruction; the layout is fixed, so each
    // offset is written against the labels in the comments.
    vec![
        /* 0 */ stmt(LD_W_ABS, DATA_ARCH),
        /* 1 */ jump(JMP_JEQ_K, calls.audit_arch, 1, 0),
        /* 2 */ stmt(RET_K, refuse_abi),
        /* 3 */ stmt(LD_W_ABS, DATA_NR),
        // -1 is how a ptracer cancels a call; the kernel answers ENOSYS itself.
        /* 4 */
        jump(JMP_JEQ_K, u32::MAX, 14, 0), // -> 19
        /* 5 */ jump(JMP_JGE_K, X32_SYSCALL_BIT, 0, 1),
        /* 6 */ stmt(RET_K, refuse_abi),
        /* 7 */ jump(JMP_JEQ_K, calls.connect, 1, 0), // -> 9
        /* 8 */ jump(JMP_JEQ_K, calls.bind, 0, 1), // -> 9 / 10
        /* 9 */ stmt(RET_K, SECCOMP_RET_USER_NOTIF),
        /* 10 */ jump(JMP_JEQ_K, calls.socket, 1, 0), // -> 12
        /* 11 */ jump(JMP_JEQ_K, calls.socketpair, 0, 7), // -> 12 / 19
        /* 12 */ stmt(LD_W_ABS, data_arg_low(0)),
        /* 13 */ jump(JMP_JEQ_K, libc::AF_UNIX as u32, 0, 5), // -> 14 / 19
        /* 14 */ stmt(LD_W_ABS, data_arg_low(1)),
        /* 15 */ stmt(ALU_AND_K, SOCK_TYPE_MASK),
        /* 16 */ jump(JMP_JEQ_K, libc::SOCK_DGRAM as u32, 1, 0), // -> 18
        /* 17 */ jump(JMP_JEQ_K, libc::SOCK_RAW as u32, 0, 1), // -> 18 / 19
        /* 18 */ stmt(RET_K, refuse_datagram),
        /* 19 */ stmt(RET_K, allow),
    ]
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
