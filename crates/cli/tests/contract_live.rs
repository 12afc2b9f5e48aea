//! Contract mode, live, as root: two tenants run caged as their own uids and cannot reach
//! each other's trees or processes, nor the runner's `.git`.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";
const WA: &str = "aaaaaaaa-1111-4111-8111-000000000001";
const WB: &str = "bbbbbbbb-1111-4111-8111-000000000002";

fn contract(root: &Path) -> Command {
    let mut c = Command::new(jaula());
    c.env("JAULA_CONTRACT_ROOT", root.join("tenants"))
        .env("JAULA_CONTRACT_STATE", root.join("state"))
        .env("JAULA_CONTRACT_UIDS", "230000-230099")
        .arg("contract");
    c
}

fn sh(root: &Path, tenant: &str, work: &str, script: &str) -> String {
    let out = contract(root)
        .args([
            "run",
            tenant,
            "--work-record",
            work,
            "--runtime",
            "claude",
            "--",
            "sh",
            "-c",
            script,
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn two_contracts_cannot_reach_each_other() {
    if !is_root() {
        return skip_or_fail("contract isolation needs root (uid separation)");
    }
    let (_keep, root) = scratch("contracts");
    let ws_b = root.join("tenants").join(B).join(WB);
    // B: a secret file in its workspace, and a long-lived process whose pid it reports.
    let mut victim = contract(&root)
        .args([
            "run",
            B,
            "--work-record",
            WB,
            "--runtime",
            "claude",
            "--",
            "sh",
            "-c",
        ])
        .arg("echo b-secret > secret.txt; echo $$; exec sleep 120")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let line = jaula_testkit::output::first_line(&mut victim);
    let pid: u32 = line.trim().parse().unwrap();
    assert!(ws_b.join("secret.txt").exists());
    let attack = format!(
        "cat '{b}/secret.txt' >/dev/null 2>&1 && echo READ; \
         ls '{b}' >/dev/null 2>&1 && echo LIST; \
         ls '{bt}' >/dev/null 2>&1 && echo LIST-TREE; \
         touch '{b}/planted' 2>/dev/null && echo WRITE; \
         kill -0 {pid} 2>/dev/null && echo SIGNAL; \
         cat /proc/{pid}/environ >/dev/null 2>&1 && echo ENVIRON; \
         cat /proc/{pid}/mem >/dev/null 2>&1 && echo MEM; \
         ls /proc/{pid}/cwd/ >/dev/null 2>&1 && echo CWD; \
         echo DONE",
        b = ws_b.display(),
        bt = root.join("tenants").join(B).display(),
    );
    let out = sh(&root, A, WA, &attack);
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert_eq!(out.trim(), "DONE", "tenant A reached tenant B: {out}");
    assert!(!ws_b.join("planted").exists());
    // The same probes from B against itself succeed: the test can see a breach.
    let own = sh(
        &root,
        B,
        WB,
        &format!("cat '{}/secret.txt'", ws_b.display()),
    );
    assert_eq!(own.trim(), "b-secret");
}

#[test]
fn a_contract_cannot_write_the_runner_git_dir_or_plant_a_hook() {
    if !is_root() {
        return skip_or_fail("contract isolation needs root (uid separation)");
    }
    if Command::new("git").arg("--version").output().is_err() {
        return skip_or_fail("git is not installed");
    }
    let (_keep, root) = scratch("gitguard");
    let ws = String::from_utf8(
        contract(&root)
            .args(["prepare", A, WA])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let ws = Path::new(ws.trim()).to_path_buf();
    assert!(Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap()
        .success());
    std::fs::write(ws.join("README"), "hi").unwrap();
    let attack = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit 2>/dev/null && echo HOOK; \
                  git config core.hooksPath /tmp 2>/dev/null && echo CONFIG; \
                  echo x >> .git/config 2>/dev/null && echo APPEND; \
                  echo edit >> README && echo OWN-FILE; \
                  git status --short >/dev/null 2>&1 && echo GIT-READ; \
                  echo DONE";
    let out = sh(&root, A, WA, attack);
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>(),
        vec!["OWN-FILE", "GIT-READ", "DONE"],
        "the contract wrote the runner's .git: {out}"
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    // And the guard passes on the untouched .git, then catches a replacement.
    let check = |ws: &Path| {
        contract(&root)
            .arg("check-git")
            .arg(ws)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(check(&ws), Some(0));
    std::fs::rename(ws.join(".git"), ws.join("git.moved")).unwrap();
    std::fs::create_dir(ws.join(".git")).unwrap();
    std::os::unix::fs::chown(ws.join(".git"), Some(230000), Some(230000)).unwrap();
    assert_ne!(check(&ws), Some(0));
}

/// The descriptor hand-off `jaula contract run` uses for cgroup v2 limits: the runner opens
/// `cgroup.procs`, and the spawn, already running as the tenant uid, moves itself in before
/// it confines itself and execs. This host binds memory and pids to cgroup v1, so the test
/// uses a plain cgroup in the v2 hierarchy to prove the hand-off itself.
#[test]
fn a_tenant_spawn_moves_itself_into_the_cgroup_the_runner_opened() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    if !is_root() {
        return skip_or_fail("creating a cgroup needs root");
    }
    let unified = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.join("cgroup.procs").exists() && p.join("cgroup.controllers").exists());
    let Some(unified) = unified else {
        return skip_or_fail("no cgroup v2 hierarchy mounted");
    };
    let (_keep, root) = scratch("cgroup");
    let h = build_home(&root);
    let name = format!("jaula-test-{}", std::process::id());
    let cg = unified.join(&name);
    std::fs::create_dir(&cg).unwrap();
    let procs = std::fs::OpenOptions::new()
        .write(true)
        .open(cg.join("cgroup.procs"))
        .unwrap();
    // A copy without close-on-exec, as the runner hands it down.
    let inherited = rustix::io::dup(&procs).unwrap();
    let out = Command::new(jaula())
        .args(["run", "--backend", "landlock", "--tenant", "--cgroup-fd"])
        .arg(inherited.as_raw_fd().to_string())
        .arg("--repo")
        .arg(&h.repo)
        .arg("--home")
        .arg(&h.home)
        .args(["--", "cat", "/proc/self/cgroup"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    drop(inherited);
    let removed = std::fs::remove_dir(&cg);
    jaula_testkit::output::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("0::") && l.ends_with(&format!("/{name}"))),
        "{text}"
    );
    assert!(removed.is_ok(), "the cgroup was left busy: {removed:?}");
}
