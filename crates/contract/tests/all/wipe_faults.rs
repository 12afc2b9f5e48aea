//! Live, as root: a wipe that cannot remove part of the tree (an immutable file, a busy
//! mount) reports nothing removed and keeps the uid; a state dir the kernel refuses to
//! write is a clear error that changes nothing.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use jaula_contract::{ContractError, ContractId, RuntimeKind, WorkRecordId};

const WR: &str = "0c1d2e3f-0000-4000-8000-0000000000bb";

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Undo `chattr +i` / a mount even when an assertion fails, so the scratch dir can go.
struct Undo(Vec<(&'static str, Vec<String>)>);
impl Drop for Undo {
    fn drop(&mut self) {
        for (program, args) in self.0.drain(..) {
            let _ = Command::new(program).args(&args).output();
        }
    }
}

/// A scratch dir holding the tenant `name`, [`prepared`], and its workspace's path.
fn prepared_tenant(
    name: &str,
) -> (
    tempfile::TempDir,
    ContractId,
    jaula_contract::ContractIsolation,
    PathBuf,
) {
    let dir = scratch();
    let c = ContractId::parse(name).unwrap();
    let isolation = prepared(dir.path(), &c);
    let ws = isolation.workspace_path(&c, &WorkRecordId::parse(WR).unwrap());
    (dir, c, isolation, ws)
}

fn prepared(dir: &Path, c: &ContractId) -> jaula_contract::ContractIsolation {
    let isolation = isolation_at(dir, None);
    let ws = isolation
        .prepare_workspace(c, &WorkRecordId::parse(WR).unwrap())
        .unwrap();
    isolation
        .sandbox(c, &RuntimeKind::parse("codex").unwrap(), None)
        .unwrap();
    fs::create_dir_all(ws.join("src")).unwrap();
    fs::write(ws.join("src/a"), "a").unwrap();
    isolation
}

#[test]
fn immutable_file_makes_an_honest_partial_wipe_that_keeps_the_uid() {
    if !require_root("immutable_file_wipe") {
        return;
    }
    let (dir, c, isolation, ws) = prepared_tenant("tenant-immutable");
    let uid = isolation.current_uid(&c).unwrap().unwrap();
    let stuck = ws.join("src/stuck");
    fs::write(&stuck, "x").unwrap();
    let stuck_s = stuck.to_str().unwrap().to_string();
    run("chattr", &["+i", &stuck_s]);
    let undo = Undo(vec![("chattr", vec!["-i".into(), stuck_s.clone()])]);

    let r = isolation.wipe(&c).unwrap();
    assert!(!r.complete);
    assert_eq!(
        (r.workspaces_removed, r.harness_roots_removed, r.uid_retired),
        (0, 0, false)
    );
    assert!(
        r.failures.iter().any(|f| f.path == stuck),
        "{:?}",
        r.failures
    );
    assert!(stuck.exists());
    assert_eq!(
        isolation.current_uid(&c).unwrap(),
        Some(uid),
        "uid retired despite files left behind"
    );
    // The rest of the tree did go.
    assert!(!isolation.contract_dir(&c).join("harness").exists());
    let last = evidence(&dir.path().join("state")).pop().unwrap();
    assert_eq!(last["event"], "wipe");
    assert_eq!(last["complete"], false);
    assert_eq!(last["uid_retired"], false);
    assert_eq!(last["workspaces_removed"], 0);

    drop(undo);
    let r = isolation.wipe(&c).unwrap();
    assert!(r.complete && r.uid_retired);
    assert_eq!(r.workspaces_removed, 1);
    assert!(!isolation.has_uid(&c).unwrap());
}

#[test]
fn busy_mount_makes_an_honest_partial_wipe_and_its_contents_survive() {
    if !require_root("busy_mount_wipe") {
        return;
    }
    let (_dir, c, isolation, ws) = prepared_tenant("tenant-mount");
    let mnt = ws.join("mnt");
    fs::create_dir(&mnt).unwrap();
    let mnt_s = mnt.to_str().unwrap().to_string();
    run(
        "mount",
        &["-t", "tmpfs", "-o", "size=1m", "jaula-test", &mnt_s],
    );
    let undo = Undo(vec![("umount", vec![mnt_s.clone()])]);
    fs::write(mnt.join("on-the-mount"), "m").unwrap();

    let r = isolation.wipe(&c).unwrap();
    assert!(!r.complete);
    assert!(!r.uid_retired);
    assert_eq!((r.workspaces_removed, r.harness_roots_removed), (0, 0));
    assert!(r.failures.iter().any(|f| f.path == mnt), "{:?}", r.failures);
    assert!(
        mnt.join("on-the-mount").exists(),
        "wipe crossed into a mounted filesystem"
    );
    assert!(isolation.has_uid(&c).unwrap());

    drop(undo);
    let r = isolation.wipe(&c).unwrap();
    assert!(r.complete && r.uid_retired);
}

#[test]
fn unwritable_state_dir_is_a_clear_error_and_nothing_changes() {
    if !require_root("unwritable_state_dir") {
        return;
    }
    let dir = scratch();
    let state = dir.path().join("state");
    fs::create_dir(&state).unwrap();
    let state_s = state.to_str().unwrap().to_string();
    run("chattr", &["+i", &state_s]);
    let _undo = Undo(vec![("chattr", vec!["-i".into(), state_s.clone()])]);
    let isolation = isolation_at(dir.path(), None);
    let c = ContractId::parse("tenant-state").unwrap();
    let wr = WorkRecordId::parse(WR).unwrap();
    for err in [
        isolation.prepare_workspace(&c, &wr).unwrap_err(),
        isolation
            .sandbox(&c, &RuntimeKind::parse("codex").unwrap(), None)
            .unwrap_err(),
        isolation.wipe(&c).unwrap_err(),
    ] {
        assert!(matches!(err, ContractError::StateDir { .. }), "{err}");
        assert!(err.to_string().contains(&state_s), "{err}");
    }
    assert!(!dir.path().join("root").exists());
    assert_eq!(fs::read_dir(&state).unwrap().count(), 0);
}
