//! `jaula contract run` and `prepare`, live, as root: when the Contract's uid cannot
//! enter its workspace or execute the jaula binary, the refusal names the step and the
//! directory before anything runs (issue 12, point 6), instead of "cannot write output".

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use common::*;

const C: &str = "cccccccc-0000-4000-8000-000000000003";
const W: &str = "cccccccc-1111-4111-8111-000000000003";

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

fn contract(binary: &Path, tenants: &Path, state: &Path, args: &[&str]) -> Output {
    Command::new(binary)
        .env("JAULA_CONTRACT_ROOT", tenants)
        .env("JAULA_CONTRACT_STATE", state)
        .env("JAULA_CONTRACT_UIDS", "231000-231099")
        .arg("contract")
        .args(args)
        .output()
        .unwrap()
}

fn run_args() -> Vec<&'static str> {
    vec![
        "run",
        C,
        "--work-record",
        W,
        "--runtime",
        "claude",
        "--",
        "true",
    ]
}

fn prepare_args() -> Vec<&'static str> {
    vec!["prepare", C, W]
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn private_dir(root: &Path) -> std::path::PathBuf {
    let private = root.join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    private
}

/// Both commands refuse, naming the workspace step and the 0700 directory; neither
/// creates the tenants' tree.
#[test]
fn a_workspace_root_under_a_closed_directory_is_refused_by_name() {
    if !is_root() {
        return skip_or_fail("contract uid separation needs root");
    }
    let (_keep, root) = scratch("reach-root");
    let private = private_dir(&root);
    let tenants = private.join("tenants");
    for args in [run_args(), prepare_args()] {
        let out = contract(&jaula(), &tenants, &root.join("state"), &args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert!(!err.contains("cannot write output"), "{err}");
        assert!(err.contains("cannot enter its workspace under"), "{err}");
        assert!(
            err.contains(&format!("{} (mode 0700, owner 0", private.display())),
            "{err}"
        );
        assert!(!tenants.exists(), "{args:?} created {}", tenants.display());
    }
}

/// A jaula installed where the tenant cannot reach it (under a 0700 directory, as
/// `/root/.cargo/bin` is) is named, before anything is created.
#[test]
fn a_jaula_binary_the_tenant_cannot_execute_is_refused_by_name() {
    if !is_root() {
        return skip_or_fail("contract uid separation needs root");
    }
    let (_keep, root) = scratch("reach-exe");
    let private = private_dir(&root);
    let binary = private.join("jaula");
    std::fs::copy(jaula(), &binary).unwrap();
    let tenants = root.join("tenants");
    for args in [run_args(), prepare_args()] {
        let out = contract(&binary, &tenants, &root.join("state"), &args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert!(!err.contains("cannot write output"), "{err}");
        assert!(
            err.contains(&format!("cannot execute {}", binary.display())),
            "{err}"
        );
        assert!(
            err.contains(&format!("{} (mode 0700", private.display())),
            "{err}"
        );
        assert!(!tenants.exists(), "{args:?} created {}", tenants.display());
    }
    // The same binary where the tenant can reach it runs the command.
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = contract(&binary, &tenants, &root.join("state"), &run_args());
    assert!(out.status.success(), "{}", stderr(&out));
}
