//! Contract mode, live, as root: two tenants run caged as their own uids and cannot reach
//! each other's trees or processes, nor the runner's `.git`.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use jaula_policy::limits::ResourceLimits;
use jaula_sandbox::identity::Identity;
use jaula_sandbox::launch_plan::{LaunchPlan, NetworkPlan, Reports, PLAN_VERSION};
use jaula_sandbox::plan_fd::SealedPlan;

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
        .args(contract_run_args(tenant, work, &["sh", "-c", script]))
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
        .args(contract_run_args(B, WB, &["sh", "-c"]))
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

/// The first steps of a Contract spawn's launch sequence, from its plan: the stage starts
/// as root, moves into the cgroup whose `cgroup.procs` the runner opened (inherited on the
/// plan's descriptor), becomes the plan's uid and gid with no supplementary groups, and
/// only then confines itself and execs. This host binds memory and pids to cgroup v1, so
/// the test uses a plain cgroup in the v2 hierarchy to prove the hand-off itself.
#[test]
fn a_contract_stage_enters_the_runners_cgroup_then_becomes_the_tenant() {
    use std::os::fd::AsRawFd;
    if !is_root() {
        return skip_or_fail("creating a cgroup and switching uids need root");
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
    let plan = stage_plan(
        &h,
        Some(inherited.as_raw_fd()),
        Some(Identity {
            uid: 65534,
            gid: 65534,
        }),
        "cat /proc/self/cgroup; id -u; id -g; id -G",
    );
    let out = run_stage(&plan, &h.repo, None);
    drop(inherited);
    // The stage returns when the command ends; the socket gate's supervisor, in the same
    // cgroup, leaves a moment later, once nothing is left under its filter.
    wait_until_unpopulated(&cg);
    let removed = std::fs::remove_dir(&cg);
    jaula_testkit::output::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("0::") && l.ends_with(&format!("/{name}"))),
        "{text}"
    );
    let ids: Vec<&str> = text.lines().rev().take(3).collect();
    assert_eq!(ids, ["65534", "65534", "65534"], "groups, gid, uid: {text}");
    assert!(removed.is_ok(), "the cgroup was left busy: {removed:?}");
}

/// Wait until no process is left in the cgroup `cg`: `cgroup.events` says `populated 0`,
/// and the kernel wakes a poll for POLLPRI on it at each change (cgroup-v2.rst).
fn wait_until_unpopulated(cg: &Path) {
    use std::io::{Read, Seek};
    let mut events = std::fs::File::open(cg.join("cgroup.events")).unwrap();
    loop {
        let mut text = String::new();
        events.rewind().unwrap();
        events.read_to_string(&mut text).unwrap();
        if text.lines().any(|l| l == "populated 0") {
            return;
        }
        let mut fds = [rustix::event::PollFd::new(
            &events,
            rustix::event::PollFlags::PRI,
        )];
        rustix::event::poll(&mut fds, None).unwrap();
    }
}

/// A stage that cannot become the plan's identity (here: started as nobody, asked to be
/// root) refuses before anything runs: it never goes on with the ids it has.
#[test]
fn a_stage_that_cannot_become_the_plans_identity_runs_nothing() {
    let Some((_keep, root)) = common::root_scratch("starting the stage as another uid", "identity")
    else {
        return;
    };
    let h = build_home(&root);
    let plan = stage_plan(&h, None, Some(Identity { uid: 0, gid: 0 }), "echo ran");
    let out = run_stage(&plan, &h.repo, Some(65534));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "{stderr}");
    assert!(
        stderr.contains("cannot become the contract's identity"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "the command ran: {out:?}");
}

/// A Contract spawn's plan for `script`, in `h`'s repo, with the first steps given.
fn stage_plan(
    h: &Home,
    cgroup_fd: Option<i32>,
    identity: Option<Identity>,
    script: &str,
) -> LaunchPlan {
    let policy = jaula_policy::PolicySpec::with_defaults(
        jaula_policy::Platform::Linux,
        h.home.clone(),
        h.repo.clone(),
    )
    .resolve()
    .unwrap();
    LaunchPlan {
        version: PLAN_VERSION,
        policy,
        stage: jaula_sandbox::landlock::PlanMode::Native,
        network: NetworkPlan {
            mode: jaula_policy::network::NetworkMode::Host,
            fallback: false,
            handoff_fd: None,
            proxy_localhost: false,
            dns_fds: Vec::new(),
            log_fd: None,
        },
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        limits: ResourceLimits::default(),
        cgroup_fd,
        identity,
        keep_fds: Vec::new(),
        record_fd: None,
        socket_gate: true,
        reports: Reports::default(),
        verbose: false,
        command: vec!["sh".into(), "-c".into(), script.into()],
    }
}

/// `jaula stage` with `plan` on its descriptor, in `cwd`, started as `uid` (else root).
fn run_stage(plan: &LaunchPlan, cwd: &Path, uid: Option<u32>) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let sealed = SealedPlan::new(plan).unwrap();
    let mut stage = Command::new(jaula());
    stage.arg("stage").current_dir(cwd);
    if let Some(uid) = uid {
        stage.uid(uid).gid(uid);
    }
    sealed.hand_to(&mut stage);
    stage.output().unwrap()
}
