//! Live, as root: hand-over re-owns the checkout but not `.git`, a process running as
//! the Contract's uid cannot plant a hook, the `.git` replacement attack is caught by the
//! guard, and the symlink-swap race never re-owns anything outside the workspace.

use crate::common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use jaula_contract::{check_git_dir, ContractError, ContractId, ContractIsolation, WorkRecordId};

const WR: &str = "0c1d2e3f-0000-4000-8000-0000000000aa";

fn cid(s: &str) -> ContractId {
    ContractId::parse(s).unwrap()
}

fn wr() -> WorkRecordId {
    WorkRecordId::parse(WR).unwrap()
}

/// Run `script` with /bin/sh as `uid:uid` (std drops supplementary groups first when the
/// parent is root), in `cwd`, with `HOME` set.
fn as_uid(uid: u32, cwd: &Path, home: &Path, script: &str) -> Output {
    Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .uid(uid)
        .gid(uid)
        .output()
        .unwrap()
}

use std::os::unix::process::CommandExt;

fn sh(cwd: &Path, script: &str) {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .output()
        .unwrap();
    jaula_testkit::output::assert_ok_for(script, &out);
}

/// A checkout as a root runner with umask 000 would leave it: every `.git` entry
/// world-writable.
fn checkout(isolation: &ContractIsolation, c: &ContractId) -> PathBuf {
    let ws = isolation.prepare_workspace(c, &wr()).unwrap();
    sh(
        &ws,
        // The runner's git needs safe.directory too: the worktree is the Contract's.
        "umask 000; G='git -c safe.directory=* -c user.name=r -c user.email=r@x'; \
         $G init -q . && mkdir -p src/deep && echo 'fn main() {}' > src/main.rs \
         && echo data > src/deep/file && $G add -A && $G commit -qm init",
    );
    ws
}

#[test]
fn detection_says_root_can_separate() {
    if !require_root("detection_says_root_can_separate") {
        return;
    }
    let s = jaula_contract::detect_uid_separation();
    assert!(s.can_separate_uids, "{}", s.reason);
}

#[test]
fn handover_reowns_all_but_git_and_the_contract_cannot_plant_a_hook() {
    if !require_root("handover_reowns_all_but_git") {
        return;
    }
    let dir = scratch();
    let isolation = isolation_at(dir.path(), None);
    assert!(isolation.can_separate_uids());
    let c = cid("tenant-hook");
    let ws = checkout(&isolation, &c);
    let home = isolation.contract_dir(&c);
    isolation
        .sandbox(
            &c,
            &jaula_contract::RuntimeKind::parse("codex").unwrap(),
            None,
        )
        .unwrap();
    let uid = isolation.current_uid(&c).unwrap().unwrap();

    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret"), "s").unwrap();
    fs::write(outside.join("linked"), "l").unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), ws.join("escape")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("src/escape-dir")).unwrap();
    fs::hard_link(outside.join("linked"), ws.join("hardlink")).unwrap();
    assert_ne!(
        mode(&ws.join(".git/config")) & 0o022,
        0,
        "fixture: .git must start world-writable"
    );

    let report = isolation.hand_over(&c, &ws).unwrap();
    assert_eq!(report.uid, Some(uid));
    assert_eq!(report.counts.symlinks_skipped, 2);
    assert_eq!(report.counts.hardlinks_skipped, 1);
    assert!(report.counts.git_entries_tightened > 0);

    for p in walk(&ws) {
        let rel = p.strip_prefix(&ws).unwrap();
        let in_git = rel.starts_with(".git");
        let meta = fs::symlink_metadata(&p).unwrap();
        if in_git {
            assert_eq!(meta.uid(), 0, "{} re-owned", p.display());
            if !meta.file_type().is_symlink() {
                assert_eq!(
                    meta.mode() & 0o022,
                    0,
                    "{} still group/other-writable",
                    p.display()
                );
            }
        } else if meta.file_type().is_symlink() || rel == Path::new("hardlink") {
            assert_eq!(meta.uid(), 0, "{} re-owned", p.display());
        } else {
            assert_eq!(
                (meta.uid(), meta.gid()),
                (uid, uid),
                "{} not handed over",
                p.display()
            );
        }
    }
    for p in walk(&outside) {
        assert_eq!(
            owner(&p),
            0,
            "{} outside the workspace re-owned",
            p.display()
        );
    }

    // Positive control: the Contract can write its own checkout...
    let ok = as_uid(
        uid,
        &ws,
        &home,
        "echo more >> src/main.rs && echo new > src/new",
    );
    jaula_testkit::output::assert_ok(&ok);
    // ...and its own git can read the runner-owned .git thanks to its .gitconfig.
    let st = as_uid(uid, &ws, &home, "git status --porcelain");
    jaula_testkit::output::assert_ok(&st);
    assert!(String::from_utf8_lossy(&st.stdout).contains("src/new"));

    // ...but cannot plant a hook or change the runner's git config.
    let config_before = fs::read(ws.join(".git/config")).unwrap();
    for attack in [
        "printf '#!/bin/sh\\nid > /tmp/pwned\\n' > .git/hooks/pre-commit",
        "echo '[core]\n\tfsmonitor = id' >> .git/config",
        "git config core.hooksPath /tmp",
        "touch .git/new-entry",
        "rm -f .git/config",
        "chmod 777 .git",
    ] {
        let out = as_uid(uid, &ws, &home, attack);
        assert!(!out.status.success(), "contract succeeded at: {attack}");
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join(".git/new-entry").exists());
    assert_eq!(fs::read(ws.join(".git/config")).unwrap(), config_before);
    isolation.check_git(&c, &wr()).unwrap();
    check_git_dir(&ws, 0).unwrap();

    let handovers: Vec<_> = evidence(&dir.path().join("state"))
        .into_iter()
        .filter(|e| e["event"] == "handover")
        .collect();
    assert_eq!(handovers.len(), 1);
    assert_eq!(handovers[0]["uid"], uid);
    assert_eq!(handovers[0]["symlinks_skipped"], 2);
}

#[test]
fn git_replacement_attacks_are_caught_by_the_guard() {
    if !require_root("git_replacement_attacks_are_caught") {
        return;
    }
    let dir = scratch();
    let isolation = isolation_at(dir.path(), None);
    let c = cid("tenant-swap");
    let ws = checkout(&isolation, &c);
    let home = isolation.contract_dir(&c);
    isolation.hand_over(&c, &ws).unwrap();
    let uid = isolation.current_uid(&c).unwrap().unwrap();
    isolation.check_git(&c, &wr()).unwrap();

    let attacks = [
        // Move the runner's .git aside (rename needs only the parent, which the
        // Contract owns) and plant a replica with a hook.
        (
            "mv .git .git-runner && mkdir -p .git/hooks && cp -r .git-runner/. .git/ 2>/dev/null; \
          printf '#!/bin/sh\\nid\\n' > .git/hooks/pre-commit",
            "owned by uid",
        ),
        ("rm -rf .git && ln -s .git-runner .git", "symlink"),
        (
            "rm -f .git && echo 'gitdir: /elsewhere' > .git",
            "not a directory",
        ),
    ];
    for (script, expected) in attacks {
        let out = as_uid(uid, &ws, &home, script);
        jaula_testkit::output::assert_ok_for(script, &out);
        let err = isolation.check_git(&c, &wr()).unwrap_err();
        assert!(
            matches!(&err, ContractError::GitGuard { reason, .. } if reason.contains(expected)),
            "{script}: {err}"
        );
        assert!(matches!(
            check_git_dir(&ws, 0),
            Err(ContractError::GitGuard { .. })
        ));
    }

    // The workspace itself swapped for a symlink to another tenant's checkout.
    let other = cid("tenant-other");
    let other_ws = checkout(&isolation, &other);
    let out = as_uid(
        uid,
        &home,
        &home,
        &format!("mv {WR} mine && ln -s {} {WR}", other_ws.display()),
    );
    jaula_testkit::output::assert_ok(&out);
    assert!(matches!(
        isolation.check_git(&c, &wr()),
        Err(ContractError::NotARealDirectory { .. })
    ));
    assert!(matches!(
        check_git_dir(&ws, 0),
        Err(ContractError::NotARealDirectory { .. })
    ));
    assert!(matches!(
        isolation.hand_over(&c, &ws),
        Err(ContractError::NotARealDirectory { .. })
    ));
    assert!(
        walk(&other_ws).iter().all(|p| owner(p) != uid),
        "the other tenant's checkout was re-owned to this tenant"
    );
}

#[test]
fn symlink_swap_race_never_reowns_outside_the_workspace() {
    if !require_root("symlink_swap_race") {
        return;
    }
    let dir = scratch();
    let isolation = isolation_at(dir.path(), None);
    let c = cid("tenant-race");
    let ws = isolation.prepare_workspace(&c, &wr()).unwrap();
    let home = isolation.contract_dir(&c);
    let victim = dir.path().join("victim");
    for base in [ws.join("d"), victim.clone()] {
        for i in 0..20 {
            fs::create_dir_all(base.join(format!("sub{i}"))).unwrap();
            fs::write(base.join(format!("sub{i}/f")), "x").unwrap();
            fs::write(base.join(format!("f{i}")), "x").unwrap();
        }
    }
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o755)).unwrap();
    let victim_entries = walk(&victim);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let attacker = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (ws, home, victim) = (ws.clone(), home.clone(), victim.clone());
        std::thread::spawn(move || {
            let d = ws.join("d");
            let d_real = ws.join("d.real");
            let ws_real = home.join("ws.real");
            while !stop.load(Ordering::Relaxed) {
                // Swap an inner directory for a symlink to the victim, and back.
                if fs::rename(&d, &d_real).is_ok() {
                    let _ = std::os::unix::fs::symlink(&victim, &d);
                    let _ = fs::remove_file(&d);
                    let _ = fs::rename(&d_real, &d);
                }
                // Swap the workspace itself, and back.
                if fs::rename(&ws, &ws_real).is_ok() {
                    let _ = std::os::unix::fs::symlink(&victim, &ws);
                    let _ = fs::remove_file(&ws);
                    let _ = fs::rename(&ws_real, &ws);
                }
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Start racing only once the attacker is demonstrably running.
    while swaps.load(Ordering::Relaxed) < 10 {
        std::thread::yield_now();
    }
    let (mut ok, mut refused, mut symlinks_seen) = (0u32, 0u32, 0u64);
    for round in 0..400 {
        match isolation.hand_over(&c, &ws) {
            Ok(r) => {
                ok += 1;
                symlinks_seen += r.counts.symlinks_skipped;
            }
            Err(ContractError::NotARealDirectory { .. }) | Err(ContractError::Io { .. }) => {
                refused += 1
            }
            Err(e) => panic!("round {round}: unexpected error {e}"),
        }
        for p in &victim_entries {
            let m = fs::symlink_metadata(p).unwrap();
            assert_eq!(
                (m.uid(), m.gid()),
                (0, 0),
                "round {round}: {} re-owned",
                p.display()
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    attacker.join().unwrap();
    eprintln!(
        "race: {ok} hand-overs completed, {refused} refused, {symlinks_seen} swapped symlinks met, {} attacker swaps",
        swaps.load(Ordering::Relaxed)
    );
    assert_eq!(ok + refused, 400);
}

/// The same hostile fixture under a runner-owned 0755 directory (walked as it is) and a
/// world-writable one (taken for the walk, its mode given back), with enough top-level
/// directories that the walk is shared among threads: exact counts, nothing re-owned that
/// a symlink or hard link points at, and each directory keeps its mode.
#[test]
fn both_walks_count_exactly_and_reown_nothing_outside() {
    if !require_root("both_walks_count_exactly") {
        return;
    }
    let dir = scratch();
    let isolation = isolation_at(dir.path(), None);
    let c = cid("tenant-routes");
    let ws = isolation.prepare_workspace(&c, &wr()).unwrap();
    let uid = isolation.uid_for(&c).unwrap().unwrap();
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret"), "s").unwrap();
    let mut expect_reowned = 1; // the workspace itself
    for (name, mode) in [("stable", 0o755), ("open", 0o777)] {
        let base = ws.join(name);
        fs::create_dir_all(base.join("sub")).unwrap();
        fs::write(base.join("f"), "x").unwrap();
        fs::write(base.join("sub/g"), "x").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), base.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, base.join("dirlink")).unwrap();
        fs::write(outside.join(format!("linked-{name}")), "l").unwrap();
        fs::hard_link(outside.join(format!("linked-{name}")), base.join("hard")).unwrap();
        fs::set_permissions(&base, fs::Permissions::from_mode(0o40000 | mode)).unwrap();
        expect_reowned += 4; // base, f, sub, sub/g
    }
    for i in 0..8 {
        fs::create_dir(ws.join(format!("more{i}"))).unwrap();
        fs::write(ws.join(format!("more{i}/h")), "x").unwrap();
        expect_reowned += 2;
    }
    let outside_entries = walk(&outside);

    let report = isolation.hand_over(&c, &ws).unwrap();
    assert_eq!(report.counts.symlinks_skipped, 4, "{:?}", report.counts);
    assert_eq!(report.counts.hardlinks_skipped, 2, "{:?}", report.counts);
    assert_eq!(report.counts.reowned, expect_reowned, "{:?}", report.counts);
    assert_eq!(report.counts.vanished, 0);
    for p in walk(&ws) {
        let m = fs::symlink_metadata(&p).unwrap();
        let skipped = m.file_type().is_symlink() || p.ends_with("hard");
        let want = if skipped { 0 } else { uid };
        assert_eq!(m.uid(), want, "{}", p.display());
    }
    assert_eq!(owner(&ws), uid);
    for (name, mode) in [("stable", 0o755), ("open", 0o777)] {
        let kept = fs::metadata(ws.join(name)).unwrap().mode() & 0o7777;
        assert_eq!(kept, mode, "{name}: mode not given back");
    }
    for p in outside_entries.iter().chain([&outside]) {
        assert_eq!(owner(p), 0, "{} re-owned", p.display());
    }
    // Again, now that the Contract owns every directory (so every one is taken first):
    // the same counts.
    let again = isolation.hand_over(&c, &ws).unwrap();
    assert_eq!(again.counts, report.counts);
}

/// In a directory the Contract can write, a name is swapped back and forth between a
/// file of its own and a hard link to a file outside while hand-overs run: the walk takes
/// the directory before it looks, so the names hold still and the outside file is never
/// re-owned. (A handle pinned on the name is not enough: a link renamed away between the
/// open and the `fstat` leaves the outside file with one link, the outside one.) The
/// attacker is an unprivileged process, as a Contract's are: root would rename through
/// any mode. The outside file is world-writable, so `protected_hardlinks` lets it link it.
#[test]
fn hardlink_swap_race_in_a_writable_directory_never_reowns_the_target() {
    if !require_root("hardlink_swap_race") {
        return;
    }
    let dir = scratch();
    let isolation = isolation_at(dir.path(), None);
    let c = cid("tenant-hardrace");
    let ws = isolation.prepare_workspace(&c, &wr()).unwrap();
    let open = ws.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    // Outside the workspace, in a directory nobody may search but not list.
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o711)).unwrap();
    let victim = outside.join("victim");
    fs::write(&victim, "v").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o666)).unwrap();
    const NAMES: usize = 32;
    for i in 0..NAMES {
        fs::write(open.join(format!("x{i}")), "x").unwrap();
    }
    // Opens the victim's directory and enters `open` as root, then becomes nobody and
    // swaps each name between a fresh file and a link to the victim (rename(2) replaces
    // atomically: a name is always one or the other); says "ready" after three sweeps, and
    // stops when the test is gone.
    let swapper = r#"
import os, sys
outside = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.chdir(sys.argv[2])
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
n = int(sys.argv[3]); sweeps = 0; parent = os.getppid()
while os.getppid() == parent:
    for i in range(n):
        x, t = "x%d" % i, "t%d" % i
        try:
            os.link("victim", t, src_dir_fd=outside); os.rename(t, x)
        except OSError:
            pass
        try:
            fd = os.open(t, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644); os.close(fd)
            os.rename(t, x)
        except OSError:
            pass
    sweeps += 1
    if sweeps == 3:
        print("ready", flush=True)
"#;
    let mut attacker = Command::new("/usr/bin/python3")
        .args(["-c", swapper])
        .arg(&outside)
        .arg(&open)
        .arg(NAMES.to_string())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert_eq!(jaula_testkit::output::first_line(&mut attacker), "ready\n");
    let (mut hardlinks_met, mut reowned) = (0u64, 0u64);
    for round in 0..300 {
        // Back to a root-owned world-writable directory, so that its mode alone is what
        // makes the walk take it (once the Contract owns it, its owner would as well).
        std::os::unix::fs::chown(&open, Some(0), Some(0)).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let r = isolation.hand_over(&c, &ws).unwrap();
        // Taken for the walk, given back: the Contract's, with its own mode.
        let taken = fs::metadata(&open).unwrap();
        assert_eq!(
            taken.mode() & 0o7777,
            0o777,
            "round {round}: mode not given back"
        );
        assert_ne!(taken.uid(), 0, "round {round}: not handed over");
        hardlinks_met += r.counts.hardlinks_skipped;
        reowned += r.counts.reowned;
        let m = fs::metadata(&victim).unwrap();
        assert_eq!(
            (m.uid(), m.gid()),
            (0, 0),
            "round {round}: the hard-linked file was re-owned"
        );
    }
    attacker.kill().unwrap();
    attacker.wait().unwrap();
    eprintln!(
        "hardlink race: {hardlinks_met} hard links met and skipped, {reowned} entries re-owned"
    );
    assert!(
        hardlinks_met > 0,
        "the attacker never had a hard link in place"
    );
}
