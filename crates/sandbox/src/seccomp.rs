//! seccomp deny-list layer: the native filter.
//!
//! The deny-list itself, and the reference decision every filter is tested against, are
//! data in [`jaula_policy::seccomp`]; this module compiles that list into a BPF program
//! and installs it.
//!
//! Backend choice: seccompiler (rust-vmm, Firecracker's filter compiler) rather than
//! libseccomp. It is pure Rust, so jaula builds and ships without a C library or headers,
//! and the generated program is plain data that the unit tests evaluate instruction by
//! instruction. What it cannot express is done here in a few lines of BPF: one match
//! action per program (jaula needs EPERM and ENOSYS, so one program per errno is chained,
//! see `bpf::chain`) and no x32 distinction in its arch check (jaula's prologue, see
//! `bpf::prologue`).
//!
//! Threads: [`install`] filters the calling thread only (no TSYNC), and every thread and
//! process it creates afterwards inherits the filter. Call it in the thread that will
//! `exec` the confined program, after any other setup that needs the denied syscalls
//! (a bwrap view, unshare) and after no_new_privs, which it sets if it is not already set.

#[cfg(target_os = "linux")]
pub(crate) mod bpf;
#[cfg(target_os = "linux")]
mod numbers_check;

use jaula_policy::seccomp::{deny_list, Arch, DenyErrno, DenyRule, X32_SYSCALL_BIT};
#[cfg(target_os = "linux")]
use jaula_policy::seccomp::{ArgMatch, REFUSED_ABI_ERRNO};
use serde::Serialize;

#[cfg(target_os = "linux")]
pub use bpf::Action;

/// What [`install`] did, for `jaula check` and logs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeccompReport {
    /// The architecture the filter was compiled for: this binary's own.
    pub(crate) arch: Arch,
    /// Its `AUDIT_ARCH_*` value, the one the filter's prologue admits.
    pub(crate) audit_arch: u32,
    /// Deny-list entries compiled in.
    pub(crate) rules: usize,
    /// Distinct syscalls they cover.
    pub(crate) syscalls: usize,
    /// Length of the installed BPF program.
    pub(crate) instructions: usize,
    /// Whether install turned no_new_privs on (false: it already was).
    pub(crate) set_no_new_privs: bool,
}

impl std::fmt::Display for SeccompReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seccomp: {} deny rules over {} syscalls, {} BPF instructions, arch {} \
             (foreign ABIs and x32 numbers refused)",
            self.rules, self.syscalls, self.instructions, self.arch
        )?;
        if self.set_no_new_privs {
            f.write_str("; no_new_privs set")?;
        }
        Ok(())
    }
}

/// Failures to build or install the filter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeccompError {
    /// This build's OS or architecture has no filter (only Linux on x86_64 and aarch64).
    #[error("the seccomp filter supports Linux on x86_64 and aarch64, not {target}")]
    UnsupportedTarget {
        /// The OS or architecture found.
        target: &'static str,
    },
    /// A deny rule's syscall number is negative or in the x32 range, which the filter's
    /// prologue handles on its own.
    #[error("deny rule for `{syscall}` has syscall number {nr}, outside 0..{X32_SYSCALL_BIT:#x}")]
    InvalidNumber {
        /// The syscall's name in the deny-list.
        syscall: &'static str,
        /// Its listed number.
        nr: i64,
    },
    /// One syscall listed with two errnos: the chained programs would make the answer
    /// depend on their order rather than on the list.
    #[error("syscall `{syscall}` is listed with both {first} and {second}; one errno per syscall")]
    ConflictingErrno {
        /// The syscall's name in the deny-list.
        syscall: &'static str,
        /// The errno of its first rule.
        first: DenyErrno,
        /// The different errno of a later rule.
        second: DenyErrno,
    },
    /// seccompiler refused one rule's argument conditions.
    #[cfg(target_os = "linux")]
    #[error("deny rule for `{syscall}` cannot be compiled: {source}")]
    Rule {
        /// The syscall's name in the deny-list.
        syscall: &'static str,
        /// seccompiler's error.
        #[source]
        source: seccompiler::BackendError,
    },
    /// seccompiler could not build a program from the rules.
    #[cfg(target_os = "linux")]
    #[error("seccompiler cannot build the filter: {0}")]
    Backend(#[source] seccompiler::BackendError),
    /// The chained program is longer than the kernel's `BPF_MAXINSNS`.
    #[error("the filter has {instructions} BPF instructions, the kernel accepts at most 4096")]
    TooLarge {
        /// The program's length.
        instructions: usize,
    },
    /// The evaluator met what it cannot run: an unaligned or out-of-range load, an
    /// instruction outside the subset it evaluates, or the end with no return.
    #[error("the filter program is malformed at instruction {pc}: {what}")]
    Malformed {
        /// The instruction's index.
        pc: usize,
        /// What is wrong with it.
        what: &'static str,
    },
    /// `prctl(PR_GET_NO_NEW_PRIVS)` or `PR_SET_NO_NEW_PRIVS` failed.
    #[error("cannot read or set no_new_privs: {0}")]
    NoNewPrivs(#[source] std::io::Error),
    /// `seccomp(2)` refused the program.
    #[cfg(target_os = "linux")]
    #[error("the kernel refused the seccomp filter: {0}")]
    Install(#[source] seccompiler::Error),
}

/// A filter compiled from a deny-list, ready to install or evaluate.
#[derive(Clone, Debug)]
// Elsewhere than Linux no filter is ever compiled (`compile_list` refuses), so the fields
// are never read there.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct CompiledFilter {
    arch: Arch,
    #[cfg(target_os = "linux")]
    program: Vec<seccompiler::sock_filter>,
    rules: usize,
    syscalls: usize,
}

/// Compiles [`deny_list`] for the native architecture.
pub fn compile() -> Result<CompiledFilter, SeccompError> {
    let arch = Arch::native().ok_or(SeccompError::UnsupportedTarget {
        target: std::env::consts::ARCH,
    })?;
    compile_list(arch, deny_list())
}

/// Compiles the deny-list and installs it on the calling thread (see the module
/// documentation for which thread that must be).
pub fn install() -> Result<SeccompReport, SeccompError> {
    compile()?.install()
}

/// Compiles and installs the deny-list without the rules `enforced_elsewhere` says a filter
/// already installed on this thread enforces itself: beside the socket gate, `unshare` and
/// `clone` with a namespace flag (`call_gate::enforces`). The gate's supervisor refuses
/// those with the same `EPERM` and counts them; left in here, this filter's errno would
/// outrank the gate's notification and nobody would know that a sandbox in the cage
/// failed to start. The caller passes the judgement, so this module names no other layer.
#[cfg(target_os = "linux")]
pub fn install_without(
    enforced_elsewhere: impl Fn(&DenyRule) -> bool,
) -> Result<SeccompReport, SeccompError> {
    let arch = Arch::native().ok_or(SeccompError::UnsupportedTarget {
        target: std::env::consts::ARCH,
    })?;
    let rules: Vec<DenyRule> = deny_list()
        .iter()
        .filter(|rule| !enforced_elsewhere(rule))
        .copied()
        .collect();
    compile_list(arch, &rules)?.install()
}

#[cfg(not(target_os = "linux"))]
fn compile_list(_arch: Arch, _rules: &[DenyRule]) -> Result<CompiledFilter, SeccompError> {
    Err(SeccompError::UnsupportedTarget {
        target: std::env::consts::OS,
    })
}

#[cfg(not(target_os = "linux"))]
impl CompiledFilter {
    /// Refused: no filter is compiled outside Linux, so there is none to install.
    pub(crate) fn install(&self) -> Result<SeccompReport, SeccompError> {
        Err(SeccompError::UnsupportedTarget {
            target: std::env::consts::OS,
        })
    }
}

#[cfg(target_os = "linux")]
fn compile_list(arch: Arch, rules: &[DenyRule]) -> Result<CompiledFilter, SeccompError> {
    use std::collections::BTreeMap;

    use seccompiler::{SeccompAction, SeccompFilter, SeccompRule, TargetArch};

    // Per errno: syscall number → its argument rules, where `None` means the syscall is
    // denied whatever its arguments. Each syscall sits in exactly one group (checked
    // below), so the order the groups are chained in cannot change any answer.
    type Group = BTreeMap<i64, Option<Vec<SeccompRule>>>;
    let mut groups: BTreeMap<DenyErrno, Group> = BTreeMap::new();
    let mut errno_of: BTreeMap<i64, DenyErrno> = BTreeMap::new();
    for rule in rules {
        if !(0..i64::from(X32_SYSCALL_BIT)).contains(&rule.nr) {
            return Err(SeccompError::InvalidNumber {
                syscall: rule.syscall,
                nr: rule.nr,
            });
        }
        // The chained programs are tried in order, so two errnos for one syscall would make
        // the answer depend on that order instead of on the list: refuse it.
        let first = *errno_of.entry(rule.nr).or_insert(rule.errno);
        if first != rule.errno {
            return Err(SeccompError::ConflictingErrno {
                syscall: rule.syscall,
                first,
                second: rule.errno,
            });
        }
        let group = groups.entry(rule.errno).or_default();
        let entry = group.entry(rule.nr).or_insert_with(|| Some(Vec::new()));
        let compiled = seccomp_rules(rule.when).map_err(|source| SeccompError::Rule {
            syscall: rule.syscall,
            source,
        })?;
        match (entry.as_mut(), compiled) {
            // Already unconditional: nothing can widen it.
            (None, _) => {}
            (Some(_), None) => *entry = None,
            (Some(list), Some(mut more)) => list.append(&mut more),
        }
    }

    let target = match arch {
        Arch::X86_64 => TargetArch::x86_64,
        Arch::Aarch64 => TargetArch::aarch64,
    };
    let refuse = bpf::ret_errno(REFUSED_ABI_ERRNO.raw());
    let mut programs = vec![bpf::prologue(arch.audit_arch(), refuse)];
    for (errno, group) in groups {
        // seccompiler reads an empty rule list as "always"; a condition that compiled to no
        // alternative (an empty AnyBitOf mask) matches nothing and must vanish instead.
        let map = group
            .into_iter()
            .filter_map(|(nr, rules)| match rules {
                None => Some((nr, Vec::new())),
                Some(rules) if rules.is_empty() => None,
                Some(rules) => Some((nr, rules)),
            })
            .collect();
        let filter = SeccompFilter::new(
            map,
            SeccompAction::Allow,
            SeccompAction::Errno(errno.raw() as u32),
            target,
        )
        .map_err(SeccompError::Backend)?;
        let program: seccompiler::BpfProgram = filter.try_into().map_err(SeccompError::Backend)?;
        programs.push(program);
    }
    let program = bpf::chain(programs);
    if program.len() > bpf::MAX_INSTRUCTIONS {
        return Err(SeccompError::TooLarge {
            instructions: program.len(),
        });
    }
    Ok(CompiledFilter {
        arch,
        program,
        rules: rules.len(),
        syscalls: errno_of.len(),
    })
}

/// One seccompiler rule per alternative: rules on one syscall are OR-ed, the conditions
/// inside one rule AND-ed. `None` is "whatever the arguments" (no condition at all). A
/// value comparison is a Dword one, which loads only the low word of the argument (see
/// `rules` for why); a NULL test is a Qword one, since the kernel reads a pointer whole.
#[cfg(target_os = "linux")]
fn seccomp_rules(
    conds: &[ArgMatch],
) -> Result<Option<Vec<seccompiler::SeccompRule>>, seccompiler::BackendError> {
    use seccompiler::SeccompRule;

    // The conjunction of disjunctions, multiplied out: every pick of one alternative per
    // condition is one rule.
    let mut rules: Option<Vec<Vec<seccompiler::SeccompCondition>>> = None;
    for cond in conds {
        let Some(alternatives) = alternatives(cond)? else {
            // Always true: adds nothing to the conjunction.
            continue;
        };
        rules = Some(match rules {
            None => alternatives,
            Some(so_far) => so_far
                .iter()
                .flat_map(|rule| {
                    alternatives.iter().map(move |alt| {
                        let mut both = rule.clone();
                        both.extend(alt.iter().cloned());
                        both
                    })
                })
                .collect(),
        });
    }
    rules
        .map(|rules| rules.into_iter().map(SeccompRule::new).collect())
        .transpose()
}

/// One condition as alternatives (OR) of AND-ed comparisons; `None` when it always holds.
/// An empty list never holds.
#[cfg(target_os = "linux")]
fn alternatives(
    cond: &ArgMatch,
) -> Result<Option<Vec<Vec<seccompiler::SeccompCondition>>>, seccompiler::BackendError> {
    use seccompiler::{
        SeccompCmpArgLen::{Dword, Qword},
        SeccompCmpOp, SeccompCondition,
    };

    match *cond {
        ArgMatch::Equals { arg, value } => Ok(Some(vec![vec![SeccompCondition::new(
            arg,
            Dword,
            SeccompCmpOp::Eq,
            u64::from(value),
        )?]])),
        // "Any bit of the mask" has no single comparison; it is one alternative per bit.
        ArgMatch::AnyBitOf { arg, mask } => (0..32)
            .map(|bit| 1u32 << bit)
            .filter(|bit| mask & bit != 0)
            .map(|bit| {
                Ok(vec![SeccompCondition::new(
                    arg,
                    Dword,
                    SeccompCmpOp::MaskedEq(u64::from(bit)),
                    u64::from(bit),
                )?])
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        // An empty allowed set holds for every value.
        ArgMatch::NoneOf { allowed: &[], .. } => Ok(None),
        ArgMatch::NoneOf { arg, allowed } => Ok(Some(vec![allowed
            .iter()
            .map(|value| SeccompCondition::new(arg, Dword, SeccompCmpOp::Ne, u64::from(*value)))
            .collect::<Result<Vec<_>, _>>()?])),
        ArgMatch::NonNull { arg } => Ok(Some(vec![vec![SeccompCondition::new(
            arg,
            Qword,
            SeccompCmpOp::Ne,
            0,
        )?]])),
    }
}

#[cfg(target_os = "linux")]
impl CompiledFilter {
    /// The architecture the program admits; calls from any other ABI are refused.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The BPF program as the kernel will receive it.
    #[cfg(test)]
    pub(crate) fn program(&self) -> &[seccompiler::sock_filter] {
        &self.program
    }

    /// Runs the compiled program on one call, as the kernel's BPF interpreter would.
    pub fn evaluate(
        &self,
        audit_arch: u32,
        nr: i64,
        args: &[u64; 6],
    ) -> Result<Action, SeccompError> {
        bpf::evaluate(&self.program, audit_arch, nr as i32, args).map(Action::from_ret)
    }

    /// Installs the filter on the calling thread, turning no_new_privs on first if needed
    /// (the kernel refuses an unprivileged filter without it, and it must hold anyway so
    /// that a setuid binary cannot run outside the rules).
    pub(crate) fn install(&self) -> Result<SeccompReport, SeccompError> {
        let already =
            rustix::thread::no_new_privs().map_err(|err| SeccompError::NoNewPrivs(err.into()))?;
        if !already {
            rustix::thread::set_no_new_privs(true)
                .map_err(|err| SeccompError::NoNewPrivs(err.into()))?;
        }
        seccompiler::apply_filter(&self.program).map_err(SeccompError::Install)?;
        Ok(SeccompReport {
            arch: self.arch,
            audit_arch: self.arch.audit_arch(),
            rules: self.rules,
            syscalls: self.syscalls,
            instructions: self.program.len(),
            set_no_new_privs: !already,
        })
    }
}

// The tests name the host's syscalls and flags through libc, which has them on Linux only.
#[cfg(all(test, target_os = "linux"))]
#[path = "seccomp_tests.rs"]
mod tests;
