//! The OCI seccomp profile (`jaula render seccomp-json`) decides every syscall as the
//! native filter does. Both are compiled: the native one with
//! `jaula_sandbox::seccomp::compile()` and run by its BPF interpreter; the JSON one read
//! from its text and interpreted here the way runc loads it into libseccomp:
//!
//! - names resolve to this architecture's numbers (from libc here, not from the
//!   deny-list); a name that does not resolve fails the test (runc would silently drop it);
//! - an entry whose action equals `defaultAction` is dropped (runc `matchCall`);
//! - an entry with several conditions on one argument becomes one rule per condition,
//!   OR-ed (runc), otherwise one rule with its conditions AND-ed;
//! - comparisons are libseccomp's, on the full 64-bit argument;
//! - a call through an ABI not in `architectures` (plus the native one), and on x86_64 a
//!   number at or above the x32 bit other than -1, gets the bad-arch action (kill).
//!
//! Every number 0..=1023 plus edge values is compared, with argument values derived from
//! every rule's condition, each with and without garbage in the upper 32 bits. The one
//! difference allowed is the x32/foreign-ABI refusal: EPERM natively, a kill under
//! libseccomp; both refuse. Two deliberately wrong exports show the comparison can fail.
//!
//! It lives with the CLI, which links both halves, so that neither jaula-kube nor
//! jaula-sandbox depends on the other.

use std::collections::BTreeMap;

use jaula_kube::seccomp_oci::{native_profile, to_json};
use jaula_policy::seccomp::{deny_list, Arch, ArgMatch, X32_SYSCALL_BIT};
use jaula_sandbox::seccomp::{compile, Action};
use serde_json::Value;

const EPERM: i32 = libc::EPERM;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Allow,
    Errno(i32),
    /// libseccomp's bad-arch action (runc leaves libseccomp's default: kill).
    BadArch,
}

fn syscall_number(name: &str) -> Option<i64> {
    Some(match name {
        "ptrace" => libc::SYS_ptrace,
        "process_vm_readv" => libc::SYS_process_vm_readv,
        "process_vm_writev" => libc::SYS_process_vm_writev,
        "pidfd_getfd" => libc::SYS_pidfd_getfd,
        "prlimit64" => libc::SYS_prlimit64,
        "setpriority" => libc::SYS_setpriority,
        "ioprio_set" => libc::SYS_ioprio_set,
        "sched_setscheduler" => libc::SYS_sched_setscheduler,
        "sched_setattr" => libc::SYS_sched_setattr,
        "io_uring_setup" => libc::SYS_io_uring_setup,
        "io_uring_enter" => libc::SYS_io_uring_enter,
        "io_uring_register" => libc::SYS_io_uring_register,
        "bpf" => libc::SYS_bpf,
        "perf_event_open" => libc::SYS_perf_event_open,
        "userfaultfd" => libc::SYS_userfaultfd,
        "add_key" => libc::SYS_add_key,
        "keyctl" => libc::SYS_keyctl,
        "request_key" => libc::SYS_request_key,
        "kexec_load" => libc::SYS_kexec_load,
        "kexec_file_load" => libc::SYS_kexec_file_load,
        "init_module" => libc::SYS_init_module,
        "finit_module" => libc::SYS_finit_module,
        "delete_module" => libc::SYS_delete_module,
        "mount" => libc::SYS_mount,
        "umount2" => libc::SYS_umount2,
        "pivot_root" => libc::SYS_pivot_root,
        "chroot" => libc::SYS_chroot,
        "fsopen" => libc::SYS_fsopen,
        "fsconfig" => libc::SYS_fsconfig,
        "fsmount" => libc::SYS_fsmount,
        "fspick" => libc::SYS_fspick,
        "move_mount" => libc::SYS_move_mount,
        "open_tree" => libc::SYS_open_tree,
        // Linux 6.15; one number on every architecture but alpha (asm-generic table).
        "open_tree_attr" => 467,
        "mount_setattr" => libc::SYS_mount_setattr,
        "unshare" => libc::SYS_unshare,
        "setns" => libc::SYS_setns,
        "clone" => libc::SYS_clone,
        "clone3" => libc::SYS_clone3,
        "open_by_handle_at" => libc::SYS_open_by_handle_at,
        "name_to_handle_at" => libc::SYS_name_to_handle_at,
        "ioctl" => libc::SYS_ioctl,
        "socket" => libc::SYS_socket,
        "socketpair" => libc::SYS_socketpair,
        "personality" => libc::SYS_personality,
        _ => return None,
    })
}

fn audit_arch_of(token: &str) -> u32 {
    match token {
        "SCMP_ARCH_X86_64" => Arch::X86_64.audit_arch(),
        "SCMP_ARCH_AARCH64" => Arch::Aarch64.audit_arch(),
        other => panic!("architecture {other} not modelled"),
    }
}

#[derive(Clone, Copy, Debug)]
struct Cond {
    index: usize,
    op: &'static str,
    value: u64,
    value_two: u64,
}

impl Cond {
    fn holds(&self, args: &[u64; 6]) -> bool {
        let a = args[self.index];
        match self.op {
            "SCMP_CMP_NE" => a != self.value,
            "SCMP_CMP_LT" => a < self.value,
            "SCMP_CMP_LE" => a <= self.value,
            "SCMP_CMP_EQ" => a == self.value,
            "SCMP_CMP_GE" => a >= self.value,
            "SCMP_CMP_GT" => a > self.value,
            "SCMP_CMP_MASKED_EQ" => a & self.value == self.value_two,
            other => panic!("operator {other} not modelled"),
        }
    }
}

struct Loaded {
    native: Arch,
    default: Outcome,
    arches: Vec<u32>,
    rules: BTreeMap<i64, Vec<(Vec<Cond>, Outcome)>>,
}

fn action(entry: &Value, action_key: &str, errno_key: &str) -> Outcome {
    match entry[action_key].as_str().unwrap() {
        "SCMP_ACT_ALLOW" => Outcome::Allow,
        // runc: errnoRet when given, else EPERM.
        "SCMP_ACT_ERRNO" => Outcome::Errno(entry[errno_key].as_i64().map_or(EPERM, |e| e as i32)),
        other => panic!("action {other} not modelled"),
    }
}

fn op_name(op: &str) -> &'static str {
    [
        "SCMP_CMP_NE",
        "SCMP_CMP_LT",
        "SCMP_CMP_LE",
        "SCMP_CMP_EQ",
        "SCMP_CMP_GE",
        "SCMP_CMP_GT",
        "SCMP_CMP_MASKED_EQ",
    ]
    .into_iter()
    .find(|o| *o == op)
    .unwrap_or_else(|| panic!("operator {op} not modelled"))
}

fn load(text: &str, native: Arch) -> Loaded {
    let profile: Value = serde_json::from_str(text).unwrap();
    let default = action(&profile, "defaultAction", "defaultErrnoRet");
    let mut arches = vec![native.audit_arch()];
    for a in profile["architectures"].as_array().into_iter().flatten() {
        arches.push(audit_arch_of(a.as_str().unwrap()));
    }
    let mut rules: BTreeMap<i64, Vec<(Vec<Cond>, Outcome)>> = BTreeMap::new();
    for entry in profile["syscalls"].as_array().unwrap() {
        let act = action(entry, "action", "errnoRet");
        if act == default {
            continue;
        }
        let conds: Vec<Cond> = entry["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| Cond {
                index: a["index"].as_u64().unwrap() as usize,
                op: op_name(a["op"].as_str().unwrap()),
                value: a["value"].as_u64().unwrap(),
                value_two: a["valueTwo"].as_u64().unwrap_or(0),
            })
            .collect();
        let mut per_index = [0usize; 6];
        for c in &conds {
            per_index[c.index] += 1;
        }
        let alternatives: Vec<Vec<Cond>> = if per_index.iter().any(|n| *n > 1) {
            conds.iter().map(|c| vec![*c]).collect()
        } else {
            vec![conds]
        };
        for name in entry["names"].as_array().unwrap() {
            let name = name.as_str().unwrap();
            let nr = syscall_number(name)
                .unwrap_or_else(|| panic!("{name} does not resolve on {native}"));
            for alt in &alternatives {
                rules.entry(nr).or_default().push((alt.clone(), act));
            }
        }
    }
    Loaded {
        native,
        default,
        arches,
        rules,
    }
}

impl Loaded {
    fn eval(&self, audit_arch: u32, nr: u32, args: &[u64; 6]) -> Outcome {
        if !self.arches.contains(&audit_arch) {
            return Outcome::BadArch;
        }
        if self.native == Arch::X86_64 && nr >= X32_SYSCALL_BIT && nr != u32::MAX {
            return Outcome::BadArch;
        }
        let nr = i64::from(nr as i32);
        let hits: Vec<Outcome> = self
            .rules
            .get(&nr)
            .into_iter()
            .flatten()
            .filter(|(conds, _)| conds.iter().all(|c| c.holds(args)))
            .map(|(_, o)| *o)
            .collect();
        match hits.first() {
            None => self.default,
            Some(first) => {
                assert!(
                    hits.iter().all(|h| h == first),
                    "conflicting actions for {nr}"
                );
                *first
            }
        }
    }
}

fn native_outcome(action: Action) -> Outcome {
    match action {
        Action::Allow => Outcome::Allow,
        Action::Errno(e) => Outcome::Errno(e),
        other => panic!("native filter returned {other:?}"),
    }
}

/// Values worth trying for one condition (low-word values, but for a pointer's NULL test,
/// which reads all 64 bits).
fn values_for(cond: &ArgMatch) -> Vec<u64> {
    let mut v: Vec<u32> = vec![0, 1, u32::MAX];
    match *cond {
        ArgMatch::Equals { value, .. } => v.extend([
            value,
            value ^ 1,
            value.wrapping_add(1),
            value.wrapping_sub(1),
        ]),
        ArgMatch::AnyBitOf { mask, .. } => {
            v.extend([mask, !mask]);
            v.extend((0..32).map(|b| 1u32 << b).filter(|b| mask & b != 0));
            // SIGCHLD in the exit-signal byte, as fork() passes it.
            v.extend(
                (0..32)
                    .map(|b| 1u32 << b)
                    .filter(|b| mask & b != 0)
                    .map(|b| b | 17),
            );
        }
        ArgMatch::NoneOf { allowed, .. } => {
            for a in allowed {
                v.extend([*a, a.wrapping_add(1), a.wrapping_sub(1), a ^ 0x8000_0000]);
            }
            // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, PER_BSD.
            v.extend([0x0004_0000, 0x0040_0000, 0x0010_0000, 0x0006]);
        }
        // The GARBAGE upper halves below supply the pointers whose low word is 0.
        ArgMatch::NonNull { .. } => v.push(0x7000),
    }
    v.into_iter().map(u64::from).collect()
}

const GARBAGE: [u64; 3] = [0, 0xdead_beef_0000_0000, 0xffff_ffff_0000_0000];

fn arg_sets() -> Vec<[u64; 6]> {
    let mut sets = vec![[0; 6], [u64::MAX; 6]];
    for rule in deny_list() {
        // Every combination of the rule's conditions' values (one condition: its values
        // alone), each value with each garbage upper half.
        let mut combos = vec![[0u64; 6]];
        for cond in rule.when {
            let index = usize::from(cond.arg());
            let mut next = Vec::new();
            for args in &combos {
                for value in values_for(cond) {
                    for g in GARBAGE {
                        let mut more = *args;
                        more[index] = g | value;
                        next.push(more);
                        if rule.when.len() == 1 {
                            sets.push([g | value; 6]);
                        }
                    }
                }
            }
            combos = next;
        }
        if !rule.when.is_empty() {
            sets.extend(combos);
        }
    }
    sets.sort_unstable();
    sets.dedup();
    sets
}

fn numbers() -> Vec<u32> {
    let mut n: Vec<u32> = (0..=1023).collect();
    n.extend([
        u32::MAX,
        u32::MAX - 1,
        0x3fff_ffff,
        X32_SYSCALL_BIT,
        X32_SYSCALL_BIT | libc::SYS_ptrace as u32,
        X32_SYSCALL_BIT | libc::SYS_ioctl as u32,
        X32_SYSCALL_BIT | 512,
        0x7fff_ffff,
        0x8000_0000,
        4095,
        4096,
        65_535,
    ]);
    n
}

/// Every difference between the JSON's decisions and the native filter's, beyond the
/// x32/foreign-ABI kill-versus-EPERM one.
fn differences(json: &str) -> Vec<String> {
    let native_arch = Arch::native().unwrap();
    let filter = compile().unwrap();
    let loaded = load(json, native_arch);
    let audit = native_arch.audit_arch();
    let sets = arg_sets();
    let mut diffs = Vec::new();
    for nr in numbers() {
        for args in &sets {
            let native = native_outcome(filter.evaluate(audit, i64::from(nr), args).unwrap());
            let oci = loaded.eval(audit, nr, args);
            let both_refuse_x32 = oci == Outcome::BadArch
                && native == Outcome::Errno(EPERM)
                && native_arch == Arch::X86_64
                && nr >= X32_SYSCALL_BIT
                && nr != u32::MAX;
            if native != oci && !both_refuse_x32 {
                diffs.push(format!(
                    "nr {nr:#x} args {args:x?}: native {native:?}, json {oci:?}"
                ));
            }
        }
    }
    diffs
}

fn profile_json() -> Option<String> {
    match native_profile() {
        Some(p) => Some(to_json(&p).unwrap()),
        None => {
            eprintln!("skipped: jaula has no native seccomp filter on this target");
            None
        }
    }
}

#[test]
fn the_json_profile_decides_every_syscall_as_the_native_filter() {
    let Some(json) = profile_json() else { return };
    let diffs = differences(&json);
    assert!(
        diffs.is_empty(),
        "{} differences, first: {:#?}",
        diffs.len(),
        &diffs[..diffs.len().min(10)]
    );
    eprintln!(
        "compared {} syscall numbers x {} argument sets",
        numbers().len(),
        arg_sets().len()
    );
}

#[test]
fn foreign_abis_and_x32_numbers_are_refused_by_both() {
    let Some(json) = profile_json() else { return };
    let native_arch = Arch::native().unwrap();
    let filter = compile().unwrap();
    let loaded = load(&json, native_arch);
    let foreign = match native_arch {
        Arch::X86_64 => 0x4000_0003, // AUDIT_ARCH_I386
        _ => 0x4000_0028,            // AUDIT_ARCH_ARM
    };
    for nr in [0u32, 1, libc::SYS_ptrace as u32] {
        assert_eq!(loaded.eval(foreign, nr, &[0; 6]), Outcome::BadArch);
        assert_eq!(
            native_outcome(filter.evaluate(foreign, i64::from(nr), &[0; 6]).unwrap()),
            Outcome::Errno(EPERM)
        );
    }
    if native_arch == Arch::X86_64 {
        let x32_read = X32_SYSCALL_BIT;
        assert_eq!(
            loaded.eval(native_arch.audit_arch(), x32_read, &[0; 6]),
            Outcome::BadArch
        );
        // -1 is not an x32 number: both let it through to "no such syscall".
        assert_eq!(
            loaded.eval(native_arch.audit_arch(), u32::MAX, &[0; 6]),
            Outcome::Allow
        );
    }
}

#[test]
fn the_comparison_catches_a_profile_that_ignores_the_low_word_rule() {
    let Some(json) = profile_json() else { return };
    // Full 64-bit masks: garbage in the upper half would slip past (CVE-2019-10063).
    let mut profile: Value = serde_json::from_str(&json).unwrap();
    for entry in profile["syscalls"].as_array_mut().unwrap() {
        for arg in entry["args"].as_array_mut().into_iter().flatten() {
            let mask = arg["value"].as_u64().unwrap();
            if mask == 0xffff_ffff {
                arg["value"] = Value::from(u64::MAX);
            }
        }
    }
    let diffs = differences(&profile.to_string());
    assert!(!diffs.is_empty());
    assert!(diffs
        .iter()
        .all(|d| d.contains("deadbeef") || d.contains("ffffffff")));
}

#[test]
fn the_comparison_catches_personality_written_as_not_equal_conditions() {
    let Some(json) = profile_json() else { return };
    // The naive NoneOf: one entry with SCMP_CMP_NE per allowed persona. runc splits
    // same-argument conditions into separate (OR-ed) rules, so every persona is denied.
    let mut profile: Value = serde_json::from_str(&json).unwrap();
    let entries = profile["syscalls"].as_array_mut().unwrap();
    entries.retain(|e| e["names"][0] != "personality");
    let args: Vec<Value> = jaula_policy::seccomp::ALLOWED_PERSONAS
        .iter()
        .map(|p| serde_json::json!({"index": 0, "value": p, "valueTwo": 0, "op": "SCMP_CMP_NE"}))
        .collect();
    entries.push(serde_json::json!({
        "names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1, "args": args
    }));
    let diffs = differences(&profile.to_string());
    let personality = format!("nr {:#x} ", libc::SYS_personality);
    assert!(!diffs.is_empty());
    assert!(
        diffs.iter().all(|d| d.starts_with(&personality)),
        "{diffs:?}"
    );
    assert!(diffs.iter().any(|d| d.contains("native Allow")));
}

#[test]
fn the_comparison_catches_a_null_test_on_the_low_word_only() {
    let Some(json) = profile_json() else { return };
    // prlimit64's new-limit pointer tested like a value, on its low word ("any bit of
    // 0xffffffff"): a pointer above 4 GiB with a low word of 0 would pass as NULL.
    let mut profile: Value = serde_json::from_str(&json).unwrap();
    let entries = profile["syscalls"].as_array_mut().unwrap();
    let prlimit: Vec<Value> = entries
        .iter()
        .filter(|e| e["names"][0] == "prlimit64")
        .cloned()
        .collect();
    assert!(!prlimit.is_empty());
    entries.retain(|e| e["names"][0] != "prlimit64");
    for entry in prlimit {
        for bit in 0..32 {
            let mut low = entry.clone();
            low["args"][1] = serde_json::json!({
                "index": 2, "value": 1u64 << bit, "valueTwo": 1u64 << bit,
                "op": "SCMP_CMP_MASKED_EQ"
            });
            entries.push(low);
        }
    }
    let diffs = differences(&profile.to_string());
    let prlimit = format!("nr {:#x} ", libc::SYS_prlimit64);
    assert!(!diffs.is_empty());
    assert!(diffs.iter().all(|d| d.starts_with(&prlimit)), "{diffs:?}");
    assert!(diffs.iter().all(|d| d.contains("json Allow")), "{diffs:?}");
}
