//! A sandbox the caged command starts itself (bubblewrap under an agent, `unshare`) cannot
//! create its namespaces in the cage: the call is refused as before, and now the gate's
//! supervisor sees it and `jaula run` says so in one line when the command ends. Live on
//! both backends, as root and as uid 65534; a plain fork gives no line, and without the
//! gate (`--no-socket-gate`) the deny-list refuses it silently, as documented.

use crate::common;

use std::process::{Output, Stdio};

use common::{bare_tree, cage_here, chown_tree, jaula_run, tools_or_skip, Backend, User};

const LINE: &str = "jaula: the command tried to create new namespaces (";

fn users() -> Vec<User> {
    if common::is_root() {
        vec![User::Root, User::Nobody]
    } else {
        vec![User::Root]
    }
}

fn caged(backend: Backend, user: User, flags: &[&str], script: &str) -> Output {
    let (_keep, root, home, repo) = bare_tree("nested-sandbox-");
    chown_tree(&root, user.uid());
    common::open_to_others(&root);
    let mut cmd = jaula_run(backend, &home, &repo);
    cmd.args(flags)
        .args(["--", "/bin/sh", "-c", script])
        .stdin(Stdio::null());
    user.apply(&mut cmd);
    cmd.output().unwrap()
}

#[test]
fn a_nested_sandbox_that_cannot_start_is_named_in_one_line() {
    if !tools_or_skip(&["unshare"]) {
        return;
    }
    for user in users() {
        for backend in [Backend::Landlock, Backend::Bwrap] {
            if !cage_here(backend, user) {
                continue;
            }
            let who = format!("{backend:?} as {user:?}");
            // Both ways in: unshare(2) and clone(2) with CLONE_NEWUSER (unshare --fork
            // clones after unsharing; -U alone is the unshare call).
            let out = caged(
                backend,
                user,
                &[],
                "unshare -U true; echo unshare=$?; unshare -n true; echo net=$?",
            );
            let all = jaula_testkit::output::describe(&out);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout.contains("unshare=1"),
                "{who}: the namespace was made: {all}"
            );
            assert!(
                stdout.contains("net=1"),
                "{who}: the namespace was made: {all}"
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(stderr.matches(LINE).count(), 1, "{who}: {all}");
            assert!(
                stderr.contains(&format!("{LINE}2 refused)")),
                "{who}: {all}"
            );

            // No false alarm: forks and threads are not namespaces.
            let out = caged(backend, user, &[], "true & wait; echo done");
            let all = jaula_testkit::output::describe(&out);
            assert!(out.status.success(), "{who}: {all}");
            assert!(!all.contains(LINE), "{who}: {all}");

            // Without the gate the deny-list refuses it, and nobody counts.
            let out = caged(
                backend,
                user,
                &["--no-socket-gate"],
                "unshare -U true; echo unshare=$?",
            );
            let all = jaula_testkit::output::describe(&out);
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("unshare=1"),
                "{who}: {all}"
            );
            assert!(!all.contains(LINE), "{who}: {all}");
        }
    }
}
