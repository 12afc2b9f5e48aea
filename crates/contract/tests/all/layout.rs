//! The tree, allocation, wipe and listing, through the public API.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::*;
use jaula_contract::{
    ContractError, ContractId, ContractIsolation, RuntimeKind, UidMap, WorkRecordId,
};
use jaula_policy::uid_range::UidRange;

const WR1: &str = "0c1d2e3f-0000-4000-8000-000000000001";
const WR2: &str = "0c1d2e3f-0000-4000-8000-000000000002";

fn cid(s: &str) -> ContractId {
    ContractId::parse(s).unwrap()
}

fn wid(s: &str) -> WorkRecordId {
    WorkRecordId::parse(s).unwrap()
}

#[test]
fn uid_is_stable_across_calls_and_restarts() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(true));
    let (a, b) = (cid("contract-a"), cid("contract-b"));
    assert!(!isolation.has_uid(&a).unwrap());
    assert_eq!(isolation.uid_for(&a).unwrap(), Some(UID_MIN));
    assert!(isolation.has_uid(&a).unwrap());
    assert!(!isolation.has_uid(&b).unwrap(), "has_uid must not allocate");
    assert_eq!(isolation.uid_for(&b).unwrap(), Some(UID_MIN + 1));
    assert_eq!(isolation.uid_for(&a).unwrap(), Some(UID_MIN));
    let restarted = isolation_at(dir.path(), Some(true));
    assert_eq!(restarted.uid_for(&b).unwrap(), Some(UID_MIN + 1));
    assert_eq!(restarted.current_uid(&a).unwrap(), Some(UID_MIN));
    // Only first sight is evidence.
    let allocations: Vec<_> = evidence(&dir.path().join("state"))
        .into_iter()
        .filter(|e| e["event"] == "uid_allocated")
        .collect();
    assert_eq!(allocations.len(), 2);
    assert_eq!(allocations[0]["contract"], "contract-a");
    assert_eq!(allocations[0]["uid"], UID_MIN);
}

#[test]
fn sentinel_and_unseparated_runner_get_no_uid() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(true));
    let none = ContractId::parse("").unwrap();
    assert_eq!(isolation.uid_for(&none).unwrap(), None);
    let ws = isolation.prepare_workspace(&none, &wid(WR1)).unwrap();
    assert!(ws.is_dir());
    assert_eq!(
        ws,
        dir.path()
            .join("root/no-contract")
            .join(WR1)
            .canonicalize()
            .unwrap()
    );
    assert!(!dir.path().join("state/contract-uids.json").exists());

    let dir2 = scratch();
    let flat = isolation_at(dir2.path(), Some(false));
    assert_eq!(flat.uid_for(&cid("x")).unwrap(), None);
    assert!(!flat.has_uid(&cid("x")).unwrap());
    let sb = flat
        .sandbox(&cid("x"), &RuntimeKind::parse("codex").unwrap(), None)
        .unwrap();
    assert_eq!(sb.floor.uid, None);
    // Still per Contract and 0700.
    assert_eq!(mode(&flat.contract_dir(&cid("x"))), 0o700);
}

#[test]
fn sandbox_lays_out_the_tree_and_describes_the_floor() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(false));
    let c = cid("c1");
    let sb = isolation
        .sandbox(&c, &RuntimeKind::parse("claude").unwrap(), Some(123 << 20))
        .unwrap();
    let home = isolation.contract_dir(&c);
    assert_eq!(sb.home_dir, home);
    assert_eq!(sb.harness_config_dir, home.join("harness/claude"));
    assert_eq!(sb.tmp_dir, home.join("tmp"));
    for d in [
        &home,
        &home.join("harness"),
        &sb.harness_config_dir,
        &sb.tmp_dir,
    ] {
        assert!(d.is_dir());
        assert_eq!(mode(d), 0o700, "{}", d.display());
    }
    assert_eq!(mode(isolation.workspace_root()), 0o711);
    assert_eq!(
        fs::read_to_string(home.join(".gitconfig")).unwrap(),
        "[safe]\n\tdirectory = *\n"
    );
    assert_eq!(sb.floor.limits.max_memory_bytes, 123 << 20);
    assert_eq!(sb.floor.limits.max_processes, 256);
    let env: Vec<_> = sb
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    assert_eq!(
        env,
        vec![
            ("HOME", home.clone()),
            ("TMPDIR", home.join("tmp")),
            ("CLAUDE_CONFIG_DIR", home.join("harness/claude")),
        ]
    );
    let codex = isolation
        .sandbox(&c, &RuntimeKind::parse("codex").unwrap(), None)
        .unwrap();
    assert_eq!(codex.env[2].0, "CODEX_HOME");
    // A second sandbox call rewrites nothing it should not.
    assert_eq!(
        fs::read_to_string(home.join(".gitconfig")).unwrap(),
        "[safe]\n\tdirectory = *\n"
    );
}

#[test]
fn planted_symlink_in_the_tree_is_refused_not_followed() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(false));
    let c = cid("c1");
    isolation.prepare_workspace(&c, &wid(WR1)).unwrap();
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&outside, isolation.contract_dir(&c).join("tmp")).unwrap();
    let err = isolation
        .sandbox(&c, &RuntimeKind::parse("codex").unwrap(), None)
        .unwrap_err();
    assert!(
        matches!(err, ContractError::NotARealDirectory { .. }),
        "{err}"
    );
    assert_eq!(mode(&outside), 0o755, "chmod went through the symlink");
}

#[test]
fn invalid_ids_are_refused_and_nothing_is_created() {
    for bad in ["../x", "a/b", ".git", "-x"] {
        assert!(matches!(
            ContractId::parse(bad),
            Err(ContractError::InvalidContractId(_))
        ));
    }
    assert!(WorkRecordId::parse("tmp").is_err());
    assert!(RuntimeKind::parse("../codex").is_err());
}

#[test]
fn exhausted_range_is_a_clear_error_and_creates_nothing() {
    let dir = scratch();
    let mut cfg = config(dir.path(), Some(true));
    cfg.uids = UidRange::new(UID_MIN, UID_MIN + 1).unwrap();
    let isolation = ContractIsolation::new(cfg).unwrap();
    isolation.uid_for(&cid("a")).unwrap();
    isolation.uid_for(&cid("b")).unwrap();
    let err = isolation
        .prepare_workspace(&cid("c"), &wid(WR1))
        .unwrap_err();
    assert!(
        matches!(err, ContractError::UidRangeExhausted { min: UID_MIN, max } if max == UID_MIN + 1),
        "{err}"
    );
    assert!(!isolation.contract_dir(&cid("c")).exists());
}

#[test]
fn corrupt_map_is_an_error_not_an_empty_map() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(true));
    isolation.uid_for(&cid("a")).unwrap();
    let map = dir.path().join("state/contract-uids.json");
    for junk in [
        "{\"a\": 200000",
        "",
        "[1]",
        "{\"a\": 200000, \"b\": 200000}",
    ] {
        fs::write(&map, junk).unwrap();
        let err = isolation.uid_for(&cid("b")).unwrap_err();
        assert!(
            matches!(err, ContractError::CorruptUidMap { .. }),
            "{junk:?}: {err}"
        );
        assert!(isolation.has_uid(&cid("a")).is_err());
        assert_eq!(
            fs::read_to_string(&map).unwrap(),
            junk,
            "a corrupt map was rewritten"
        );
        // A wipe must not delete anything when it cannot retire the uid afterwards.
        fs::create_dir_all(isolation.contract_dir(&cid("a"))).unwrap();
        assert!(isolation.wipe(&cid("a")).is_err());
        assert!(isolation.contract_dir(&cid("a")).exists());
    }
}

#[test]
fn state_dir_that_is_not_a_directory_is_a_clear_error() {
    let dir = scratch();
    fs::write(dir.path().join("state"), "").unwrap();
    let isolation = isolation_at(dir.path(), Some(true));
    let err = isolation
        .prepare_workspace(&cid("a"), &wid(WR1))
        .unwrap_err();
    assert!(matches!(err, ContractError::StateDir { .. }), "{err}");
    assert!(err.to_string().contains("state"), "{err}");
    assert!(
        !dir.path().join("root").exists(),
        "tree created despite the failed allocation"
    );
}

#[test]
fn relative_paths_are_refused() {
    let dir = scratch();
    let mut cfg = config(dir.path(), Some(true));
    cfg.workspace_root = "relative/root".into();
    assert!(matches!(
        ContractIsolation::new(cfg),
        Err(ContractError::RelativePath { .. })
    ));
}

#[test]
fn wipe_counts_removes_retires_and_is_idempotent() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(true));
    let c = cid("c1");
    // Not root: uid_for works (no chown), but the tree must be made without separation.
    isolation.uid_for(&c).unwrap();
    let flat = isolation_at(dir.path(), Some(false));
    flat.prepare_workspace(&c, &wid(WR1)).unwrap();
    flat.prepare_workspace(&c, &wid(WR2)).unwrap();
    flat.sandbox(&c, &RuntimeKind::parse("codex").unwrap(), None)
        .unwrap();
    flat.sandbox(&c, &RuntimeKind::parse("claude").unwrap(), None)
        .unwrap();
    let ws = flat.workspace_path(&c, &wid(WR1));
    fs::create_dir_all(ws.join("a/b")).unwrap();
    fs::write(ws.join("a/b/f"), "x").unwrap();
    // A symlink to something outside: wiping must delete the link, not the target.
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("keep"), "k").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();

    let r = isolation.wipe(&c).unwrap();
    assert!(r.complete && r.failures.is_empty());
    assert_eq!(
        (r.workspaces_removed, r.harness_roots_removed, r.uid_retired),
        (2, 2, true)
    );
    assert!(!isolation.contract_dir(&c).exists());
    assert!(outside.join("keep").exists());
    assert!(!isolation.has_uid(&c).unwrap());

    let again = isolation.wipe(&c).unwrap();
    assert!(again.complete);
    assert_eq!(
        (
            again.workspaces_removed,
            again.harness_roots_removed,
            again.uid_retired
        ),
        (0, 0, false)
    );
    let wipes: Vec<_> = evidence(&dir.path().join("state"))
        .into_iter()
        .filter(|e| e["event"] == "wipe")
        .collect();
    assert_eq!(wipes.len(), 2);
    assert_eq!(wipes[0]["workspaces_removed"], 2);
    assert_eq!(wipes[0]["uid_retired"], true);
    // The retired uid is free again.
    assert_eq!(isolation.uid_for(&cid("c2")).unwrap(), Some(UID_MIN));
}

#[test]
fn held_lists_only_uuid_workspaces_and_remove_workspace_removes_one() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(false));
    assert!(isolation.held().unwrap().is_empty());
    isolation.prepare_workspace(&cid("c1"), &wid(WR1)).unwrap();
    isolation
        .prepare_workspace(&cid("c1"), &wid("not-a-uuid"))
        .unwrap();
    isolation.prepare_workspace(&cid("c2"), &wid(WR2)).unwrap();
    isolation
        .sandbox(&cid("c2"), &RuntimeKind::parse("codex").unwrap(), None)
        .unwrap();
    fs::write(
        isolation.contract_dir(&cid("c1")).join(WR2),
        "a file, not a workspace",
    )
    .unwrap();
    fs::create_dir(isolation.workspace_root().join(".stray")).unwrap();
    let held: Vec<_> = isolation
        .held()
        .unwrap()
        .into_iter()
        .map(|h| (h.contract, h.work_record))
        .collect();
    assert_eq!(
        held,
        vec![
            ("c1".to_string(), WR1.to_string()),
            ("c2".to_string(), WR2.to_string())
        ]
    );

    let r = isolation.remove_workspace(&cid("c1"), &wid(WR1)).unwrap();
    assert!(r.existed && r.removed);
    assert!(isolation
        .contract_dir(&cid("c1"))
        .join("not-a-uuid")
        .is_dir());
    let r = isolation.remove_workspace(&cid("c1"), &wid(WR1)).unwrap();
    assert!(!r.existed && !r.removed);
    let r = isolation
        .remove_workspace(&cid("nobody"), &wid(WR1))
        .unwrap();
    assert!(!r.existed);
}

#[test]
fn handover_refuses_paths_outside_the_contract_tree() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(false));
    let c = cid("c1");
    let ws = isolation.prepare_workspace(&c, &wid(WR1)).unwrap();
    isolation.prepare_workspace(&cid("c2"), &wid(WR1)).unwrap();
    let root = isolation.workspace_root().to_path_buf();
    for bad in [
        dir.path().join("elsewhere"),
        root.clone(),
        root.join("c1"),
        root.join("c2").join(WR1),
        ws.join("../../c2").join(WR1),
        "relative/c1/x".into(),
    ] {
        let err = isolation.hand_over(&c, &bad).unwrap_err();
        assert!(
            matches!(err, ContractError::OutsideContractTree { .. }),
            "{}: {err}",
            bad.display()
        );
    }
    assert!(isolation.hand_over(&c, &ws).is_ok());
}

#[test]
fn uid_map_is_readable_through_the_public_type() {
    let dir = scratch();
    let isolation = isolation_at(dir.path(), Some(true));
    isolation.uid_for(&cid("a")).unwrap();
    let map = UidMap::new(dir.path().join("state")).read().unwrap();
    assert_eq!(map.get("a"), Some(&UID_MIN));
    assert_eq!(mode(&dir.path().join("state/contract-uids.json")), 0o600);
    assert_eq!(mode(&dir.path().join("state")), 0o700);
}

/// The state directory and the workspace root share a parent jaula creates (the defaults'
/// `/var/lib/jaula`): it is 0711 like the root, not 0700 like the state directory, so a
/// Contract uid reaches its tree; allocating first (as `contract uid` does) changes nothing.
#[test]
fn a_shared_parent_jaula_creates_stays_searchable() {
    let dir = scratch();
    let jaula = dir.path().join("var/lib/jaula");
    let mut config = config(dir.path(), Some(true));
    config.workspace_root = jaula.join("contracts");
    config.state_dir = jaula.join("state");
    let isolation = ContractIsolation::new(config).unwrap();
    let c = cid("c1");
    isolation.uid_for(&c).unwrap();
    assert_eq!(mode(&jaula), 0o711);
    assert_eq!(mode(&jaula.join("state")), 0o700);
    let report = isolation.ensure_layout(&c).unwrap();
    assert!(report.repaired.is_empty(), "{report:?}");
    assert_eq!(mode(&jaula), 0o711);
    assert_eq!(mode(&jaula.join("contracts")), 0o711);
    isolation.prepare_workspace(&c, &wid(WR1)).unwrap();
    assert_eq!(mode(&isolation.contract_dir(&c)), 0o700);
    // Run again on what it left: nothing to repair, nothing refused.
    assert_eq!(isolation.ensure_layout(&c).unwrap(), Default::default());
}
