//! The spawn floor's rlimits, applied in a re-executed child (they are per process, and
//! must not leak into the test harness), and inherited by what that child spawns.

use std::process::Command;

use jaula_contract::SpawnFloor;
use jaula_policy::limits::ContractLimits;

const ROLE: &str = "JAULA_CONTRACT_TEST_ROLE";

fn floor(uid: Option<u32>) -> SpawnFloor {
    SpawnFloor {
        uid,
        gid: uid,
        limits: ContractLimits {
            max_processes: 77,
            max_memory_bytes: 3 << 30,
        },
    }
}

#[test]
fn child_apply_floor() {
    if std::env::var(ROLE).as_deref() != Ok("apply-floor") {
        return;
    }
    floor(None).apply_rlimits().unwrap();
    let out = Command::new("/bin/cat")
        .arg("/proc/self/limits")
        .output()
        .unwrap();
    print!("{}", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn rlimits_are_applied_and_inherited_and_address_space_is_left_alone() {
    let out = jaula_testkit::rerun::command(&jaula_testkit::this_test!("child_apply_floor"))
        .env(ROLE, "apply-floor")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let row = |name: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing from\n{text}"));
        line[name.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(row("Max processes")[..2], ["77", "77"]);
    let data = (3u64 << 30).to_string();
    assert_eq!(row("Max data size")[..2], [data.clone(), data]);
    // V8 reserves a large PROT_NONE cage at start-up: the address space must stay open.
    let ours = rustix::process::getrlimit(rustix::process::Resource::As)
        .current
        .map_or_else(|| "unlimited".to_string(), |v| v.to_string());
    assert_eq!(row("Max address space")[0], ours);
}

#[test]
fn nproc_is_reported_unenforced_for_uid_zero_only() {
    let f = floor(None);
    let as_root = f.limits_in_force(0);
    assert_eq!(as_root[0].name, "RLIMIT_NPROC");
    assert!(!as_root[0].enforced && as_root[0].note.is_some());
    assert!(as_root[1].enforced);
    assert!(f.limits_in_force(1000)[0].enforced);
    assert!(floor(Some(200000)).limits_in_force(0)[0].enforced);
}
