//! Fault tests of the uid map with real processes: this test binary re-executes itself
//! (`--exact <child test> --nocapture`) with `JAULA_CONTRACT_TEST_ROLE` naming the child's
//! job. Without that variable the child tests return at once: they are helpers, and the
//! parent tests below are what assert.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use common::*;
use jaula_contract::{ContractId, UidMap};

const ROLE: &str = "JAULA_CONTRACT_TEST_ROLE";
const DIR: &str = "JAULA_CONTRACT_TEST_DIR";
const INDEX: &str = "JAULA_CONTRACT_TEST_INDEX";
const CONTRACTS: usize = 200;
const PROCESSES: usize = 16;

fn spawn_child(test: &str, role: &str, dir: &Path, index: usize) -> Child {
    jaula_testkit::rerun::command(&jaula_testkit::this_test!(test))
        .env(ROLE, role)
        .env(DIR, dir)
        .env(INDEX, index.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

fn child_env(role: &str) -> Option<(std::path::PathBuf, usize)> {
    if std::env::var(ROLE).ok()? != role {
        return None;
    }
    let dir = std::env::var(DIR).ok()?.into();
    let index = std::env::var(INDEX).ok()?.parse().ok()?;
    Some((dir, index))
}

#[test]
fn child_allocate_all() {
    let Some((dir, index)) = child_env("allocate-all") else {
        return;
    };
    let isolation = isolation_at(&dir, Some(true));
    // Each process walks the contracts from a different offset, so they collide on
    // different names at different moments.
    for k in 0..CONTRACTS {
        let n = (k + index * 13) % CONTRACTS;
        let c = ContractId::parse(&format!("contract-{n:03}")).unwrap();
        let uid = isolation.uid_for(&c).unwrap().unwrap();
        println!("ALLOC {c} {uid}");
    }
}

/// libtest prints `test NAME ... ` without a newline before the child's first line.
fn marker<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    line.split_once(tag).map(|(_, rest)| rest)
}

/// Applies one `ALLOC`/`RETIRED` report line to `held`; false for any other line.
fn apply_report(line: &str, held: &mut BTreeMap<String, u32>) -> bool {
    if let Some(rest) = marker(line, "ALLOC ") {
        let (c, u) = rest.split_once(' ').unwrap();
        held.insert(c.to_string(), u.parse().unwrap());
        true
    } else if let Some(c) = marker(line, "RETIRED ") {
        held.remove(c);
        true
    } else {
        false
    }
}

fn alloc_lines(child: Child) -> Vec<(String, u32)> {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "child failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| marker(l, "ALLOC "))
        .map(|l| {
            let (c, u) = l.split_once(' ').unwrap();
            (c.to_string(), u.parse().unwrap())
        })
        .collect()
}

#[test]
fn sixteen_processes_allocating_for_200_contracts_agree_and_never_duplicate() {
    let dir = scratch();
    let children: Vec<Child> = (0..PROCESSES)
        .map(|i| spawn_child("child_allocate_all", "allocate-all", dir.path(), i))
        .collect();
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for child in children {
        let lines = alloc_lines(child);
        assert_eq!(
            lines.len(),
            CONTRACTS,
            "a child did not allocate every contract"
        );
        for (c, uid) in lines {
            let first = *seen.entry(c.clone()).or_insert(uid);
            assert_eq!(first, uid, "{c} was given two uids");
        }
    }
    assert_eq!(seen.len(), CONTRACTS);
    let distinct: BTreeSet<u32> = seen.values().copied().collect();
    assert_eq!(distinct.len(), CONTRACTS, "two contracts share a uid");
    assert!(distinct.iter().all(|u| (UID_MIN..=UID_MAX).contains(u)));
    // First free on first sight: the range is filled from the bottom with no holes.
    assert_eq!(distinct, (UID_MIN..UID_MIN + CONTRACTS as u32).collect());
    let map = UidMap::new(dir.path().join("state")).read().unwrap();
    assert_eq!(map, seen);
    let allocated = evidence(&dir.path().join("state"))
        .into_iter()
        .filter(|e| e["event"] == "uid_allocated")
        .count();
    assert_eq!(
        allocated, CONTRACTS,
        "each allocation is evidence exactly once"
    );
}

#[test]
fn child_allocate_forever() {
    let Some((dir, index)) = child_env("allocate-forever") else {
        return;
    };
    let isolation = isolation_at(&dir, Some(true));
    for k in 0.. {
        let c = ContractId::parse(&format!("round{index}-c{k}")).unwrap();
        let uid = isolation.uid_for(&c).unwrap().unwrap();
        println!("ALLOC {c} {uid}");
        // Retire every other one too, so the kill can also land in a shrinking write.
        if k % 2 == 1 {
            let prev = ContractId::parse(&format!("round{index}-c{}", k - 1)).unwrap();
            isolation.wipe(&prev).unwrap();
            println!("RETIRED {prev}");
        }
    }
}

#[test]
fn sigkill_at_random_points_never_leaves_an_unreadable_map() {
    let dir = scratch();
    let map = UidMap::new(dir.path().join("state"));
    let mut held: BTreeMap<String, u32> = BTreeMap::new();
    // A cheap deterministic spread of kill points (after 1..=41 completed operations).
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..30 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let kill_after = 1 + (seed % 41) as usize;
        let mut child = spawn_child(
            "child_allocate_forever",
            "allocate-forever",
            dir.path(),
            round,
        );
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut done = 0;
        while done < kill_after {
            let line = lines.next().unwrap().unwrap();
            if apply_report(&line, &mut held) {
                done += 1;
            }
        }
        // The child is now somewhere in a later lock/read/write/rename cycle: it ran on
        // while this side read, so the kill lands at an unknown point.
        child.kill().unwrap();
        child.wait().unwrap();
        // Every operation the child completed and reported is still in the pipe.
        for line in lines {
            apply_report(&line.unwrap(), &mut held);
        }
        let on_disk = map
            .read()
            .unwrap_or_else(|e| panic!("round {round}: map unreadable after SIGKILL: {e}"));
        // Every reported allocation survived unchanged. At most one entry differs: the
        // operation the kill interrupted after its rename but before its report (an
        // allocation present but unreported, or a retirement done but unreported).
        for (c, uid) in &on_disk {
            if let Some(reported) = held.get(c) {
                assert_eq!(reported, uid, "round {round}: {c} changed");
            }
        }
        let differing: Vec<&String> = on_disk
            .keys()
            .filter(|c| !held.contains_key(*c))
            .chain(held.keys().filter(|c| !on_disk.contains_key(*c)))
            .collect();
        assert!(
            differing.len() <= 1,
            "round {round}: entries unexplained by the reports: {differing:?}"
        );
        assert!(
            differing
                .iter()
                .all(|c| c.starts_with(&format!("round{round}-"))),
            "round {round}: an earlier round's entry changed: {differing:?}"
        );
        held = on_disk;
    }
    // The lock was released by every killed holder: a fresh allocation still works.
    let isolation = isolation_at(dir.path(), Some(true));
    assert!(isolation
        .uid_for(&ContractId::parse("after").unwrap())
        .unwrap()
        .is_some());
}
