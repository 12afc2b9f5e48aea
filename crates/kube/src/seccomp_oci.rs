//! jaula's seccomp deny-list as an OCI / Docker seccomp profile (the JSON a container
//! runtime loads for `seccompProfile: {type: Localhost}`), derived from the same rules
//! the native filter is compiled from.
//!
//! How each rule is expressed, and why:
//!
//! - `defaultAction: SCMP_ACT_ALLOW`; every rule is `SCMP_ACT_ERRNO` with `errnoRet`
//!   (runtime-spec 1.0.2; a runtime that predates it returns EPERM, so clone3 would get
//!   EPERM instead of ENOSYS and glibc would not fall back to clone).
//! - Every value comparison is `SCMP_CMP_MASKED_EQ` with the mask in `value` and the
//!   datum in `valueTwo`, masks within `0xffffffff`: libseccomp compares all 64 bits, and
//!   a mask without the upper word makes garbage there irrelevant, as the kernel makes it
//!   for these `int` arguments (the CVE-2019-10063 lesson the native filter follows).
//!   A pointer tested for NULL (prlimit64's new limit) is `SCMP_CMP_NE 0` on all 64 bits,
//!   as the kernel reads it.
//! - Each entry carries at most one condition per argument. runc adds conditions of one
//!   entry that name the same argument as separate rules (OR, not AND), while other
//!   runtimes AND them; conditions on different arguments every runtime ANDs (a rule
//!   whose conditions must all hold, as prlimit64's "another pid and a new limit").
//! - "any of these bits" (clone, unshare) is one entry per bit.
//! - "none of these values" (personality) cannot be several `SCMP_CMP_NE` on one
//!   argument (runc would OR them, denying every call), nor ALLOW rules for the allowed
//!   values (runc drops rules whose action equals the default). It is written as the
//!   complement: walking the 32-bit binary trie of the allowed values, every subtree
//!   holding none of them is one masked-equality entry (top bits fixed), and their union
//!   is exactly every value but the allowed ones.
//! - `architectures` lists only the native one. libseccomp then applies its bad-arch
//!   action (kill) to foreign ABIs, and on x86_64 to x32 numbers (≥ 0x40000000, except
//!   -1): refused like the native filter refuses them, but by killing the thread where
//!   the native filter returns EPERM.
//!
//! Syscalls are named, and the runtime resolves names with the node's libseccomp, which
//! silently drops names it does not know (runc logs them at debug level only):
//! `open_tree_attr` needs a libseccomp that knows Linux 6.15. jaula's own filter inside
//! the pod still denies it.

use std::collections::BTreeMap;

use jaula_policy::seccomp::{deny_list, Arch, ArgMatch, DenyErrno, DenyRule};
use serde::{Deserialize, Serialize};

/// A seccomp profile in the OCI runtime-spec / Docker JSON format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OciProfile {
    /// What a call no rule matches gets.
    pub default_action: OciAction,
    /// The ABIs the filter accepts; any other is refused by the bad-arch action.
    pub architectures: Vec<String>,
    /// The rules.
    pub syscalls: Vec<OciSyscall>,
}

/// One rule: the named syscalls, when every condition holds, get `action`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OciSyscall {
    /// Syscall names, resolved by the runtime's libseccomp.
    pub names: Vec<String>,
    /// The action.
    pub action: OciAction,
    /// The errno for `SCMP_ACT_ERRNO`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno_ret: Option<u32>,
    /// Conditions, AND-ed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<OciArg>,
    /// Why (Docker's profiles carry the same field; runtimes ignore it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// One argument condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OciArg {
    /// The argument index, 0..=5.
    pub index: u32,
    /// The operand (the mask, for `SCMP_CMP_MASKED_EQ`).
    pub value: u64,
    /// The second operand (the datum, for `SCMP_CMP_MASKED_EQ`).
    pub value_two: u64,
    /// The comparison.
    pub op: OciOp,
}

/// Actions jaula's profile uses (and the others the format names, for reading).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum OciAction {
    /// Run the syscall.
    #[serde(rename = "SCMP_ACT_ALLOW")]
    Allow,
    /// Fail with `errnoRet`.
    #[serde(rename = "SCMP_ACT_ERRNO")]
    Errno,
    /// Kill the thread.
    #[serde(rename = "SCMP_ACT_KILL")]
    Kill,
    /// Kill the process.
    #[serde(rename = "SCMP_ACT_KILL_PROCESS")]
    KillProcess,
}

/// libseccomp comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum OciOp {
    /// `arg != value`.
    #[serde(rename = "SCMP_CMP_NE")]
    Ne,
    /// `arg < value`.
    #[serde(rename = "SCMP_CMP_LT")]
    Lt,
    /// `arg <= value`.
    #[serde(rename = "SCMP_CMP_LE")]
    Le,
    /// `arg == value`.
    #[serde(rename = "SCMP_CMP_EQ")]
    Eq,
    /// `arg >= value`.
    #[serde(rename = "SCMP_CMP_GE")]
    Ge,
    /// `arg > value`.
    #[serde(rename = "SCMP_CMP_GT")]
    Gt,
    /// `arg & value == value_two`.
    #[serde(rename = "SCMP_CMP_MASKED_EQ")]
    MaskedEq,
}

/// The low 32 bits, where every compared argument lives.
pub const LOW_WORD: u64 = 0xffff_ffff;

/// libseccomp's architecture token, for the architectures jaula builds filters for.
pub fn scmp_arch(arch: Arch) -> Option<&'static str> {
    match arch {
        Arch::X86_64 => Some("SCMP_ARCH_X86_64"),
        Arch::Aarch64 => Some("SCMP_ARCH_AARCH64"),
    }
}

/// `(mask, value)` pairs, masks of the top bits of the low word, whose union is exactly
/// the 32-bit values not in `allowed`.
pub fn complement_patterns(allowed: &[u32]) -> Vec<(u32, u32)> {
    fn walk(depth: u32, prefix: u32, values: &[u32], out: &mut Vec<(u32, u32)>) {
        if depth == 32 {
            // A leaf: the one allowed value.
            return;
        }
        let bit = 1u32 << (31 - depth);
        let mask = u32::MAX << (31 - depth);
        for side in [0, bit] {
            let below: Vec<u32> = values.iter().copied().filter(|v| v & bit == side).collect();
            if below.is_empty() {
                out.push((mask, prefix | side));
            } else {
                walk(depth + 1, prefix | side, &below, out);
            }
        }
    }
    let mut values = allowed.to_vec();
    values.sort_unstable();
    values.dedup();
    if values.is_empty() {
        return vec![(0, 0)];
    }
    let mut out = Vec::new();
    walk(0, 0, &values, &mut out);
    out
}

fn masked(index: u8, mask: u32, value: u32) -> OciArg {
    OciArg {
        index: u32::from(index),
        value: u64::from(mask),
        value_two: u64::from(value),
        op: OciOp::MaskedEq,
    }
}

/// The alternatives of one condition (each a single comparison, or none for "always").
fn alternatives(cond: &ArgMatch) -> Vec<Option<OciArg>> {
    match cond {
        ArgMatch::Equals { arg, value } => vec![Some(masked(*arg, u32::MAX, *value))],
        ArgMatch::AnyBitOf { arg, mask } => (0..32)
            .map(|b| 1u32 << b)
            .filter(|b| mask & b != 0)
            .map(|b| Some(masked(*arg, b, b)))
            .collect(),
        ArgMatch::NoneOf { arg, allowed } => complement_patterns(allowed)
            .into_iter()
            .map(|(m, v)| (m != 0).then(|| masked(*arg, m, v)))
            .collect(),
        ArgMatch::NonNull { arg } => vec![Some(OciArg {
            index: u32::from(*arg),
            value: 0,
            value_two: 0,
            op: OciOp::Ne,
        })],
    }
}

/// The entries' argument lists of one rule: its conditions AND-ed, each condition's
/// alternatives OR-ed, multiplied out. An empty list is "whatever the arguments".
fn entries(conds: &[ArgMatch]) -> Vec<Vec<OciArg>> {
    let mut out = vec![Vec::new()];
    for cond in conds {
        out = out
            .iter()
            .flat_map(|args: &Vec<OciArg>| {
                alternatives(cond).into_iter().map(move |alt| {
                    let mut more = args.clone();
                    more.extend(alt);
                    more
                })
            })
            .collect();
    }
    out
}

/// The profile for `rules` on `arch`.
pub fn profile_for(arch: Arch, rules: &[DenyRule]) -> OciProfile {
    let mut syscalls = Vec::new();
    // Unconditional rules, grouped per errno as Docker's profiles do; order kept.
    let mut always: BTreeMap<DenyErrno, Vec<String>> = BTreeMap::new();
    for rule in rules {
        for args in entries(rule.when) {
            if args.is_empty() {
                always
                    .entry(rule.errno)
                    .or_default()
                    .push(rule.syscall.to_string());
            } else {
                syscalls.push(OciSyscall {
                    names: vec![rule.syscall.to_string()],
                    action: OciAction::Errno,
                    errno_ret: Some(rule.errno.raw().unsigned_abs()),
                    args,
                    comment: Some(rule.reason.to_string()),
                });
            }
        }
    }
    let mut head: Vec<OciSyscall> = always
        .into_iter()
        .map(|(errno, mut names)| {
            names.dedup();
            OciSyscall {
                names,
                action: OciAction::Errno,
                errno_ret: Some(errno.raw().unsigned_abs()),
                args: Vec::new(),
                comment: Some(format!(
                    "denied whatever the arguments ({errno}); reasons in jaula's deny-list"
                )),
            }
        })
        .collect();
    head.append(&mut syscalls);
    OciProfile {
        default_action: OciAction::Allow,
        // An empty list means "the native one" to runc; a known token says it outright.
        architectures: scmp_arch(arch).map(String::from).into_iter().collect(),
        syscalls: head,
    }
}

/// The profile for this build's architecture and deny-list, or `None` where jaula has no
/// native filter.
pub fn native_profile() -> Option<OciProfile> {
    Arch::native().map(|arch| profile_for(arch, deny_list()))
}

/// The profile as pretty JSON, ending in a newline.
pub fn to_json(profile: &OciProfile) -> serde_json::Result<String> {
    let mut text = serde_json::to_string_pretty(profile)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
#[path = "seccomp_oci_tests.rs"]
mod tests;
