//! The seccomp deny-list as data, and its reference semantics.
//!
//! A deny-list in the spirit of Docker's and Flatpak's defaults: everything runs except a
//! short list of syscalls (or syscall/argument combinations) that reach kernel surface or
//! other processes no coding agent needs. The list is data ([`deny_list`]), one
//! [`DenyRule`] per entry with its one-line reason. Everything else is derived from it:
//! the native BPF filter (`jaula_sandbox::seccomp`, which compiles and installs it), the
//! reference decision ([`decide`], the meaning every compiled filter is tested against)
//! and the OCI seccomp profile of the Kubernetes renderer (`jaula-kube`).
//!
//! Beyond the rules, the filter refuses with EPERM any call made through a foreign ABI
//! (i386 `int 0x80` from an x86_64 process, arm32 compat on aarch64) and any syscall number
//! at or above the x32 bit (x32 shares x86_64's audit arch, so only the number tells).

mod rules;

use serde::Serialize;

pub use rules::{
    deny_list, deny_list_const, deny_list_for, ArgMatch, DenyErrno, DenyRule, AF_ALG, AF_PACKET,
    AF_VSOCK, ALLOWED_PERSONAS, CLONE_NAMESPACE_FLAGS, CLONE_NEWTIME, DENY_RULES,
    IOPRIO_WHO_PROCESS, PERSONALITY_QUERY, PER_LINUX, PER_LINUX32, PRIO_PROCESS, TIOCLINUX,
    TIOCSTI, UNAME26, UNSHARE_NAMESPACE_FLAGS,
};

/// The errno for calls through a foreign ABI or with a non-native syscall number.
pub const REFUSED_ABI_ERRNO: DenyErrno = DenyErrno::Eperm;

/// The syscall number bit the x32 ABI sets; numbers at or above it are refused.
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// An architecture the native filter can be built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
// Not `#[non_exhaustive]`: the filter compiler and the OCI export match every variant, so
// a new one must fail their build rather than fall into a catch-all.
pub enum Arch {
    /// `AUDIT_ARCH_X86_64`; i386 calls are foreign to it (x32 ones are told by number).
    X86_64,
    /// `AUDIT_ARCH_AARCH64`; arm32 calls are foreign to it.
    Aarch64,
}

impl Arch {
    /// The architecture this binary was built for, when the filter supports it.
    pub const fn native() -> Option<Arch> {
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            Some(Arch::X86_64)
        } else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
            Some(Arch::Aarch64)
        } else {
            None
        }
    }

    /// The AUDIT_ARCH_* value the kernel puts in `seccomp_data.arch` for native calls
    /// (include/uapi/linux/audit.h: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE).
    pub const fn audit_arch(self) -> u32 {
        match self {
            Arch::X86_64 => 62 | 0x8000_0000 | 0x4000_0000,
            Arch::Aarch64 => 183 | 0x8000_0000 | 0x4000_0000,
        }
    }

    /// The Rust/kernel name of the architecture.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a call is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// Not `#[non_exhaustive]`: the filter compiler and the OCI export match every variant, so
// a new one must fail their build rather than fall into a catch-all.
pub enum DenyCause {
    /// A deny-list entry matched.
    Rule(&'static DenyRule),
    /// The call came through another ABI than the native one.
    ForeignArch {
        /// The call's `AUDIT_ARCH_*` value.
        audit_arch: u32,
    },
    /// The number is at or above the x32 bit (and is not -1).
    NonNativeNumber {
        /// The syscall number.
        nr: u32,
    },
}

/// The reference decision for one syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// Not `#[non_exhaustive]`: the filter compiler and the OCI export match every variant, so
// a new one must fail their build rather than fall into a catch-all.
pub enum Verdict {
    /// The filter lets the call through.
    Allow,
    /// The filter answers the call with an errno, never running it.
    Deny {
        /// The errno the caller sees.
        errno: DenyErrno,
        /// What refused it.
        cause: DenyCause,
    },
}

impl Verdict {
    /// Whether the call runs.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Verdict::Allow)
    }
}

/// The reference semantics of the filter for a call through the native ABI.
pub fn decide_syscall(nr: i64, args: &[u64; 6]) -> Verdict {
    match Arch::native() {
        Some(arch) => decide(arch, arch.audit_arch(), nr, args),
        None => Verdict::Allow,
    }
}

/// The reference semantics of the filter built for `arch`, for a call whose
/// `seccomp_data` carries `audit_arch` and `nr`. The kernel stores the number as a C
/// `int`, so `nr` is read as its low 32 bits, as the filter does.
pub fn decide(arch: Arch, audit_arch: u32, nr: i64, args: &[u64; 6]) -> Verdict {
    if audit_arch != arch.audit_arch() {
        return Verdict::Deny {
            errno: REFUSED_ABI_ERRNO,
            cause: DenyCause::ForeignArch { audit_arch },
        };
    }
    let word = nr as u32;
    if word >= X32_SYSCALL_BIT && word != u32::MAX {
        return Verdict::Deny {
            errno: REFUSED_ABI_ERRNO,
            cause: DenyCause::NonNativeNumber { nr: word },
        };
    }
    let nr = i64::from(word as i32);
    match deny_list_for(arch)
        .iter()
        .find(|rule| rule.matches(nr, args))
    {
        Some(rule) => Verdict::Deny {
            errno: rule.errno,
            cause: DenyCause::Rule(rule),
        },
        None => Verdict::Allow,
    }
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
