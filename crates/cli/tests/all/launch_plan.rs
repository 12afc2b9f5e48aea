//! The launch plan's hand-over, live: `jaula stage` reads only a sealed memfd on the fixed
//! descriptor and refuses (126) anything else, a plan of another version, or a malformed
//! one; and the user-facing command shows no internal knob.

use crate::common;

use std::process::{Command, Output};

use common::{jaula, skip_or_fail};
use jaula_sandbox::launch_plan::PLAN_VERSION;

/// The plan descriptor (`jaula_sandbox::plan_fd::PLAN_FD`).
const PLAN_FD: i32 = 1000;

/// Start `jaula stage` with `contents` on descriptor 1000, in a memfd sealed as `seals`
/// says ("all", "none") or in a plain file ("file"). Python makes the memfd: the test
/// crate holds no `unsafe`, and a shell cannot seal. `None` when python3 is missing.
fn stage_with(contents: &str, how: &str) -> Option<Output> {
    let script = r#"
import fcntl, os, sys, tempfile
contents, how, jaula, target = sys.argv[1].encode(), sys.argv[2], sys.argv[3], int(sys.argv[4])
if how == "file":
    f = tempfile.TemporaryFile()
    f.write(contents); f.flush(); fd = f.fileno()
else:
    fd = os.memfd_create("forged", os.MFD_ALLOW_SEALING)
    os.write(fd, contents)
    if how == "all":
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
os.lseek(fd, 0, 0)
os.dup2(fd, target)
os.execv(jaula, [jaula, "stage"])
"#;
    let out = Command::new("python3")
        .args(["-c", script, contents, how])
        .arg(jaula())
        .arg(PLAN_FD.to_string())
        .output();
    match out {
        Ok(out) => Some(out),
        Err(e) => {
            skip_or_fail(&format!(
                "python3 is needed to forge a plan descriptor: {e}"
            ));
            None
        }
    }
}

fn says(out: &Output, code: i32, text: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(stderr.contains(text), "want {text:?} in: {stderr}");
    assert!(out.stdout.is_empty(), "nothing may run: {out:?}");
}

#[test]
fn a_stage_without_a_plan_refuses() {
    let out = Command::new(jaula()).arg("stage").output().unwrap();
    says(&out, 126, "no launch plan was inherited on descriptor 1000");
}

#[test]
fn a_plan_of_another_version_is_refused_by_name() {
    let Some(out) = stage_with(r#"{"version": 999, "command": ["echo", "ran"]}"#, "all") else {
        return;
    };
    says(&out, 126, "format version 999");
}

#[test]
fn a_malformed_plan_is_refused() {
    // The current version, so the refusal is about the missing fields, not the version.
    let partial = format!(r#"{{"version": {PLAN_VERSION}, "command": ["echo", "ran"]}}"#);
    let Some(out) = stage_with(&partial, "all") else {
        return;
    };
    says(&out, 126, "the launch plan is malformed");
    let Some(out) = stage_with("echo ran", "all") else {
        return;
    };
    says(&out, 126, "the launch plan is malformed");
}

#[test]
fn a_plan_that_is_not_a_sealed_memfd_is_not_read() {
    // Contents that would parse as far as the version: only the descriptor is wrong.
    let plan = &format!(r#"{{"version": {PLAN_VERSION}}}"#);
    let Some(out) = stage_with(plan, "none") else {
        return;
    };
    says(&out, 126, "not sealed against change");
    let Some(out) = stage_with(plan, "file") else {
        return;
    };
    says(&out, 126, "not a sealed memfd");
}

#[test]
fn the_user_facing_help_shows_no_internal_knob() {
    let run = common::jaula_output(&["run", "--help"]);
    let run = String::from_utf8_lossy(&run.stdout);
    for internal in [
        "inner-stage",
        "planting-child",
        "network-handoff-fd",
        "network-proxy-localhost",
        "cgroup-fd",
        "network-resolve",
        "network-fallback",
    ] {
        assert!(
            !run.contains(internal),
            "run --help shows {internal}:\n{run}"
        );
    }
    let top = Command::new(jaula()).arg("--help").output().unwrap();
    let top = String::from_utf8_lossy(&top.stdout);
    assert!(
        !top.lines().any(|l| l.trim_start().starts_with("stage")),
        "jaula --help lists the internal stage:\n{top}"
    );
}

/// The cgroup and the identity of a Contract's spawn travel only in its plan: `jaula run`
/// has no flag for either (the hidden `--cgroup-fd` is gone).
#[test]
fn run_takes_no_cgroup_descriptor_from_its_command_line() {
    let out = common::jaula_output(&["run", "--cgroup-fd", "3", "--", "echo", "ran"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--cgroup-fd"), "{stderr}");
    assert!(out.stdout.is_empty(), "the command ran: {out:?}");
}

#[test]
fn keep_fd_cannot_claim_the_plan_descriptor() {
    let out = common::jaula_output(&["run", "--keep-fd", &PLAN_FD.to_string(), "--", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("launch plan"), "{stderr}");
}

/// The plan carries paths byte-exact: a repo whose name is not UTF-8 is caged by every
/// backend (natively in-process, and through the plan handed to the stage in the bwrap
/// view), with the repo writable and the command started in it.
#[test]
fn a_repo_named_with_non_utf8_bytes_is_caged_by_both_backends() {
    use common::{bare_tree, cage_here, jaula_in, Backend, User};
    use std::os::unix::ffi::OsStringExt;
    for backend in [Backend::Landlock, Backend::Bwrap] {
        if !cage_here(backend, User::Root) {
            continue;
        }
        let (_keep, root, home, _) = bare_tree("plan-bytes-");
        let repo = root.join(std::ffi::OsString::from_vec(b"r\xe9po".to_vec()));
        std::fs::create_dir_all(&repo).unwrap();
        let out = jaula_in(&home, &repo)
            .args(["run", "--backend", backend.name(), "--home"])
            .arg(&home)
            .args(["--", "/bin/sh", "-c", "echo caged > written && cat written"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", backend.name());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "caged\n");
        assert!(repo.join("written").is_file(), "{}", backend.name());
    }
}

/// The command never inherits the plan's descriptor, whichever way the plan reached the
/// stage (bwrap, the planting child under --no-socket-gate, in-process).
#[test]
fn the_command_never_sees_the_plan_descriptor() {
    use common::{bare_tree, cage_here, jaula_in, Backend, User};
    let cases: [(Backend, &[&str]); 4] = [
        (Backend::Bwrap, &[]),
        (Backend::Bwrap, &["--no-socket-gate"]),
        (Backend::Landlock, &[]),
        (Backend::Landlock, &["--no-socket-gate"]),
    ];
    for (backend, extra) in cases {
        if !cage_here(backend, User::Root) {
            continue;
        }
        let (_keep, _, home, repo) = bare_tree("plan-fd-");
        let out = jaula_in(&home, &repo)
            .args(["run", "--backend", backend.name(), "--home"])
            .arg(&home)
            .args(extra)
            .args([
                "--",
                "/bin/sh",
                "-c",
                &format!("if [ -e /proc/self/fd/{PLAN_FD} ]; then echo open; else echo closed; fi"),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{} {extra:?}: {stderr}",
            backend.name()
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "closed\n",
            "{} {extra:?}",
            backend.name()
        );
    }
}

/// An open-file limit that leaves no room for the plan's descriptor is refused up front,
/// in words (a failed dup2 in the child would only say EBADF on bubblewrap's name).
#[test]
fn no_room_for_the_plan_descriptor_is_refused_in_words() {
    use common::{bare_tree, cage_here, Backend, User, HOST_PATH};
    if !cage_here(Backend::Landlock, User::Root) {
        return;
    }
    let (_keep, _, home, repo) = bare_tree("plan-nofile-");
    // --no-socket-gate natively: the planting child is a stage started with the plan.
    let out = Command::new("/bin/sh")
        .args(["-c", "ulimit -n 512 && exec \"$@\"", "sh"])
        .arg(jaula())
        .args(["run", "--backend", "landlock", "--no-socket-gate", "--home"])
        .arg(&home)
        .args(["--", "echo", "ran"])
        .current_dir(&repo)
        .env_clear()
        .env("PATH", HOST_PATH)
        .env("HOME", &home)
        .output()
        .unwrap();
    says(&out, 126, "leaves no room for descriptor 1000");
}
