//! Classic-BPF plumbing around seccompiler: jaula's prologue, the stitching of one
//! seccompiler program per errno into a single filter, and an evaluator of the result.

use seccompiler::sock_filter;

use super::SeccompError;

// Opcodes (include/uapi/linux/bpf_common.h); BPF_LD, BPF_W and BPF_K are 0.
/// BPF_LD | BPF_W | BPF_ABS.
pub(crate) const LD_W_ABS: u16 = 0x20;
pub(crate) const ALU_AND_K: u16 = 0x04 | 0x50;
pub(crate) const JMP_JA: u16 = 0x05;
pub(crate) const JMP_JEQ_K: u16 = 0x05 | 0x10;
pub(crate) const JMP_JGT_K: u16 = 0x05 | 0x20;
pub(crate) const JMP_JGE_K: u16 = 0x05 | 0x30;
pub(crate) const JMP_JSET_K: u16 = 0x05 | 0x40;
pub(crate) const RET_K: u16 = 0x06;

/// Offsets in `struct seccomp_data` (include/uapi/linux/seccomp.h).
pub(crate) const DATA_NR: u32 = 0;
pub(crate) const DATA_ARCH: u32 = 4;
/// Offset of the low word of argument `i` (little-endian).
pub(crate) const fn data_arg_low(i: u32) -> u32 {
    16 + 8 * i
}

pub(crate) const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
pub(crate) const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
pub(crate) const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
pub(crate) const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_ACTION_FULL: u32 = 0xffff_0000;
const SECCOMP_RET_DATA: u32 = 0x0000_ffff;

/// The kernel's BPF_MAXINSNS.
pub(crate) const MAX_INSTRUCTIONS: usize = 4096;

/// The x32 ABI marks its syscall numbers with this bit while the audit arch stays
/// AUDIT_ARCH_X86_64 (arch/x86/include/uapi/asm/unistd.h), so an arch check alone lets x32
/// numbers through and a deny-list keyed on x86_64 numbers never matches them.
pub(crate) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

pub(crate) const fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

pub(crate) const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

pub(crate) const fn ret_errno(errno: i32) -> u32 {
    SECCOMP_RET_ERRNO | (errno as u32 & SECCOMP_RET_DATA)
}

/// jaula's prologue, placed before seccompiler's code.
///
/// seccompiler checks the audit arch, but x32 shares AUDIT_ARCH_X86_64, so this prologue
/// also refuses every number at or above the x32 bit. Number -1 is let through (the kernel
/// answers ENOSYS): it is how a ptracer cancels a syscall, and libseccomp spares it too.
/// A foreign arch (i386 through `int 0x80` from a 64-bit process, arm32 compat on aarch64)
/// is refused here with an errno instead of seccompiler's process kill, so both refusals
/// look alike to the caller.
///
/// Prepending is safe: classic-BPF jumps are relative and forward-only, so every jump in the
/// program that follows keeps its target, and that program starts by reloading what it
/// reads (arch, then nr) instead of trusting the accumulator left by the prologue.
pub(crate) fn prologue(audit_arch: u32, refuse: u32) -> Vec<sock_filter> {
    vec![
        stmt(LD_W_ABS, DATA_ARCH),
        jump(JMP_JEQ_K, audit_arch, 1, 0),
        stmt(RET_K, refuse),
        stmt(LD_W_ABS, DATA_NR),
        jump(JMP_JEQ_K, u32::MAX, 2, 0),
        jump(JMP_JGE_K, X32_SYSCALL_BIT, 0, 1),
        stmt(RET_K, refuse),
    ]
}

/// Chains per-errno programs into one.
///
/// seccompiler gives one match action per filter, and jaula needs two errnos (EPERM, and
/// ENOSYS for clone3). Installing two filters would make the install non-atomic, so each
/// program but the last has its "allow" returns (reached only when none of its rules
/// matched: its match action is an errno and its arch check kills) turned into a jump to
/// the first instruction after it, where the next program starts with its own loads.
/// BPF_JA takes a 32-bit offset, so the distance is never a problem.
pub(crate) fn chain(programs: Vec<Vec<sock_filter>>) -> Vec<sock_filter> {
    let count = programs.len();
    let mut out = Vec::new();
    for (index, mut program) in programs.into_iter().enumerate() {
        if index + 1 < count {
            let len = program.len();
            for (pc, insn) in program.iter_mut().enumerate() {
                if insn.code == RET_K && insn.k == SECCOMP_RET_ALLOW {
                    // `len - 1 - pc` lands on `len`, the next program's first instruction.
                    let skip = u32::try_from(len - 1 - pc).unwrap_or(u32::MAX);
                    *insn = stmt(JMP_JA, skip);
                }
            }
        }
        out.append(&mut program);
    }
    out
}

/// What a filter's return value asks the kernel to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "action", content = "data", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// The syscall runs.
    Allow,
    /// The syscall fails with this errno without running.
    Errno(i32),
    /// The whole process is killed (seccompiler's own arch check; unreachable behind the
    /// prologue).
    KillProcess,
    /// The call waits for the supervising process (the socket gate), which answers it.
    UserNotif,
    /// Any other SECCOMP_RET_* value, raw.
    Other(u32),
}

impl Action {
    pub(crate) fn from_ret(ret: u32) -> Action {
        match ret & SECCOMP_RET_ACTION_FULL {
            SECCOMP_RET_ALLOW => Action::Allow,
            SECCOMP_RET_ERRNO => Action::Errno((ret & SECCOMP_RET_DATA) as i32),
            SECCOMP_RET_KILL_PROCESS => Action::KillProcess,
            SECCOMP_RET_USER_NOTIF => Action::UserNotif,
            _ => Action::Other(ret),
        }
    }
}

/// Runs `program` on one `struct seccomp_data` the way the kernel's classic-BPF
/// interpreter would, for the instructions seccompiler and the prologue emit. The words
/// are laid out little-endian, as on both supported architectures: each 64-bit argument is
/// its low word followed by its high word.
pub(crate) fn evaluate(
    program: &[sock_filter],
    arch: u32,
    nr: i32,
    args: &[u64; 6],
) -> Result<u32, SeccompError> {
    let mut words = [0u32; 16];
    words[0] = nr as u32;
    words[1] = arch;
    for (i, arg) in args.iter().enumerate() {
        words[4 + 2 * i] = *arg as u32;
        words[5 + 2 * i] = (*arg >> 32) as u32;
    }
    let malformed = |pc: usize, what: &'static str| SeccompError::Malformed { pc, what };
    let mut acc: u32 = 0;
    let mut pc = 0usize;
    while let Some(insn) = program.get(pc) {
        let next = pc + 1;
        pc = match insn.code {
            LD_W_ABS => {
                if insn.k % 4 != 0 {
                    return Err(malformed(pc, "unaligned load"));
                }
                acc = *words
                    .get((insn.k / 4) as usize)
                    .ok_or_else(|| malformed(pc, "load beyond seccomp_data"))?;
                next
            }
            ALU_AND_K => {
                acc &= insn.k;
                next
            }
            JMP_JA => next + insn.k as usize,
            JMP_JEQ_K | JMP_JGT_K | JMP_JGE_K | JMP_JSET_K => {
                let taken = match insn.code {
                    JMP_JEQ_K => acc == insn.k,
                    JMP_JGT_K => acc > insn.k,
                    JMP_JGE_K => acc >= insn.k,
                    _ => acc & insn.k != 0,
                };
                next + usize::from(if taken { insn.jt } else { insn.jf })
            }
            RET_K => return Ok(insn.k),
            _ => return Err(malformed(pc, "instruction outside the evaluated subset")),
        };
    }
    Err(malformed(pc, "fell off the end of the program"))
}
