//! The runtime directory under the planting guard. `/run/user` is writable in the Landlock
//! backend (temp and device paths), and two host services run what lies in the owner's
//! `/run/user/UID`: systemd's user manager loads units from `systemd/user` (and
//! `systemd/transient`, `systemd/user.control`) at its next reload, and the session bus
//! activates services from `dbus-1/services`. Both are protected for the uid building the
//! policy whatever `XDG_RUNTIME_DIR` says: these tests run jaula with an empty environment,
//! as a `sudo` or `su` shell would have it.
//!
//! Each case plants a unit and a service, first uncaged (the control: both land on the
//! host, so the route is real for this user), then in `jaula run --backend B`: both must be
//! absent on the host, and the gate's refusal naming the protected directory is asserted.
//! The user manager and the bus are not run here (neither runs for a test user): the
//! verdict is the host file. `/run/user/UID` is made for the case's user when the machine
//! has none, as logind would at login, and removed after if this process made it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use crate::common::{
    bare_tree, cage_here, chown_tree, jaula_in, jaula_run, Backend, User, HOST_PATH,
};
use jaula_testkit::output::describe as text;
use jaula_testkit::SharedDir;

/// The cases share `/run/user/UID/{systemd,dbus-1}` on the host: one at a time, so one
/// case's clean-up never removes a directory another's plant is between making and using.
static SERIAL: Mutex<()> = Mutex::new(());

/// The two plants, each a name this run alone uses, relative to the runtime directory.
fn planted(backend: Backend) -> [PathBuf; 2] {
    let tag = format!("jaula-test-{}-{}", std::process::id(), backend.name());
    [
        PathBuf::from(format!("systemd/user/{tag}.service")),
        PathBuf::from(format!("dbus-1/services/{tag}.service")),
    ]
}

/// The plant: a unit whose `ExecStart` and a service whose `Exec` the owner's session
/// would run. Each attempted whatever the other's fate.
fn plant(runtime: &Path, files: &[PathBuf; 2]) -> String {
    let rt = runtime.display();
    let (unit, service) = (files[0].display(), files[1].display());
    format!(
        "mkdir -p {rt}/systemd/user && printf '[Service]\\nExecStart=/bin/true\\n' > {rt}/{unit}; \
         mkdir -p {rt}/dbus-1/services && \
         printf '[D-BUS Service]\\nName=org.jaula.Planted\\nExec=/bin/true\\n' > {rt}/{service}"
    )
}

/// Remove what a plant left on the host: the files, and the directories it made.
fn clean(runtime: &Path, files: &[PathBuf; 2], had: &[bool; 2]) {
    for (file, had) in files.iter().zip(had) {
        let _ = fs::remove_file(runtime.join(file));
        let top = runtime.join(file.components().next().unwrap());
        if !had {
            let _ = fs::remove_dir_all(top);
        }
    }
}

fn uncaged(user: User, home: &Path, script: &str) -> Output {
    let mut cmd = Command::new("/bin/sh");
    cmd.env_clear()
        .env("PATH", HOST_PATH)
        .env("HOME", home)
        .args(["-c", script]);
    user.apply(&mut cmd);
    cmd.output().unwrap()
}

fn case(backend: Backend, user: User) {
    if !cage_here(backend, user) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let uid = user.uid();
    let shared = SharedDir::acquire(Path::new(&format!("/run/user/{uid}")), 0o700, uid);
    let runtime = shared.path().to_path_buf();
    let files = planted(backend);
    let had = [
        runtime.join("systemd").exists(),
        runtime.join("dbus-1").exists(),
    ];
    let who = format!("{} as uid {uid}", backend.name());

    // Control: uncaged, both land.
    let (_keep, root, home, repo) = bare_tree("runtime-dir-");
    chown_tree(&root, uid);
    let out = uncaged(user, &home, &plant(&runtime, &files));
    let landed = files.iter().all(|f| runtime.join(f).is_file());
    clean(&runtime, &files, &had);
    assert!(
        landed,
        "{who}: control: the plant did not land uncaged: {}",
        text(&out)
    );

    // Caged: neither reaches the host, and the gate says why. The host's own `systemd`
    // directory exists meanwhile: the bwrap view's `/run/user` is the cage's own, and the
    // protected directory must not be bound into it from the host (it would bring in the
    // user manager's private socket).
    let host_file = runtime.join(format!("systemd/jaula-test-{}-host", std::process::id()));
    fs::create_dir_all(host_file.parent().unwrap()).unwrap();
    fs::write(&host_file, "the host's\n").unwrap();
    let mut cmd = jaula_run(backend, &home, &repo);
    let script = format!(
        "test -e {} && echo HOST-SYSTEMD-VISIBLE; {}",
        host_file.display(),
        plant(&runtime, &files)
    );
    cmd.args(["--", "/bin/sh", "-c", &script]);
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let _ = fs::remove_file(&host_file);
    let reached: Vec<&PathBuf> = files.iter().filter(|f| runtime.join(f).exists()).collect();
    clean(&runtime, &files, &had);
    assert!(
        reached.is_empty(),
        "{who}: {reached:?} reached the host's {}\ncage: {}",
        runtime.display(),
        text(&out)
    );
    if backend == Backend::Bwrap {
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("HOST-SYSTEMD-VISIBLE"),
            "{who}: the host's {} is in the view\ncage: {}",
            runtime.join("systemd").display(),
            text(&out)
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    for dir in ["systemd", "dbus-1"] {
        let protected = runtime.join(dir);
        assert!(
            stderr.lines().any(|l| l.starts_with("jaula: refused ")
                && l.contains(&format!(": protected: {}", protected.display()))),
            "{who}: no `jaula: refused …: protected: {}` line\ncage: {}",
            protected.display(),
            text(&out)
        );
    }
}

jaula_testkit::case_tests! {
    landlock_root_plant_in_run_user_is_refused => case(Backend::Landlock, User::Root);
    landlock_user_plant_in_run_user_is_refused => case(Backend::Landlock, User::Nobody);
    bwrap_root_plant_in_run_user_is_refused => case(Backend::Bwrap, User::Root);
    bwrap_user_plant_in_run_user_is_refused => case(Backend::Bwrap, User::Nobody);
}

/// `explain` gives the same answer for `/run/user/UID`'s unit and service directories with
/// `XDG_RUNTIME_DIR` unset, set to the same place, or set elsewhere; the Landlock row names
/// the gate, the bwrap row the cage's own `/run/user/UID`.
#[test]
fn explain_protects_run_user_whatever_xdg_runtime_dir_says() {
    for user in [User::Root, User::Nobody] {
        if user == User::Nobody && !crate::common::is_root() {
            continue;
        }
        let uid = user.uid();
        let (_keep, root, home, repo) = bare_tree("runtime-explain-");
        chown_tree(&root, uid);
        let runtime = format!("/run/user/{uid}");
        for xdg in [
            None,
            Some(runtime.clone()),
            Some(root.join("elsewhere").display().to_string()),
        ] {
            for (file, dir) in [
                ("systemd/user/x.service", "systemd"),
                ("dbus-1/services/x.service", "dbus-1"),
            ] {
                let path = format!("{runtime}/{file}");
                let mut cmd = jaula_in(&home, &repo);
                cmd.args(["explain", "--write", "--json", "--repo"])
                    .arg(&repo)
                    .arg("--home")
                    .arg(&home)
                    .arg(&path);
                if let Some(xdg) = &xdg {
                    cmd.env("XDG_RUNTIME_DIR", xdg);
                }
                user.apply(&mut cmd);
                let out = cmd.output().unwrap();
                assert!(out.status.success(), "{path}: {}", text(&out));
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                let why = format!("{path} as uid {uid}, XDG_RUNTIME_DIR={xdg:?}: {v}");
                assert_eq!(v["allowed"], false, "{why}");
                assert_eq!(v["rule_detail"]["rule"], "protected", "{why}");
                assert_eq!(
                    v["rule_detail"]["root"],
                    format!("{runtime}/{dir}"),
                    "{why}"
                );
                let landlock = crate::common::backend_row(&v, "landlock");
                assert_eq!(landlock["allowed"], false, "{why}");
                assert!(
                    crate::common::summary_says(&landlock, "closed by the gate"),
                    "{why}"
                );
                let bwrap = crate::common::backend_row(&v, "bwrap");
                assert!(
                    crate::common::summary_says(&bwrap, "the cage's own empty /run/user/UID"),
                    "{why}"
                );
            }
        }
    }
}
