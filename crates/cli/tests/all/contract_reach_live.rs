//! `jaula contract run` and `prepare`, live, as root: when the Contract's uid cannot
//! enter its workspace, the refusal names the step and the directory before anything
//! runs, instead of "cannot write output"; where jaula itself is installed does not
//! matter to the tenant.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

const C: &str = "cccccccc-0000-4000-8000-000000000003";
const W: &str = "cccccccc-1111-4111-8111-000000000003";

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
    common::contract_run_args(C, W, &["true"])
}

fn prepare_args() -> Vec<&'static str> {
    vec!["prepare", C, W]
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A root-owned scratch tree (or a printed skip when not root) with a closed (0700)
/// directory in it: `(keep, root, root/private)`.
fn with_private_dir(prefix: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let (keep, root) = common::root_scratch("contract uid separation", prefix)?;
    let private = root.join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    Some((keep, root, private))
}

/// Both commands refuse, naming the workspace step and the 0700 directory; neither
/// creates the tenants' tree.
#[test]
fn a_workspace_root_under_a_closed_directory_is_refused_by_name() {
    let Some((_keep, root, private)) = with_private_dir("reach-root") else {
        return;
    };
    let tenants = private.join("tenants");
    for args in [run_args(), prepare_args()] {
        let out = contract(&jaula(), &tenants, &root.join("state"), &args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert!(!err.contains("cannot write output"), "{err}");
        for said in [
            "cannot enter its workspace under".to_string(),
            format!("{} (mode 0700, owner 0", private.display()),
            format!("fix: chmod o+x {} ", private.display()),
        ] {
            assert!(err.contains(&said), "{args:?}: {said}: {err}");
        }
        assert!(!tenants.exists(), "{args:?} created {}", tenants.display());
    }
}

/// A jaula installed where the tenant cannot reach it (under a 0700 directory, as
/// `/root/.cargo/bin` is) still runs a tenant's command: the runner executes its own stage,
/// which becomes the tenant (uid and gid from the range, no supplementary groups) before
/// the command runs.
#[test]
fn a_jaula_binary_under_a_closed_directory_still_runs_the_tenant_as_its_uid() {
    let Some((_keep, root, private)) = with_private_dir("reach-exe") else {
        return;
    };
    let binary = private.join("jaula");
    jaula_testkit::copy_program(&jaula(), &binary);
    let tenants = root.join("tenants");
    let prepare = contract(&binary, &tenants, &root.join("state"), &prepare_args());
    assert!(prepare.status.success(), "{}", stderr(&prepare));
    let mut args = run_args();
    args.truncate(args.len() - 1);
    args.extend(["sh", "-c", "id -u; id -g; id -G"]);
    let out = contract(&binary, &tenants, &root.join("state"), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let [uid, gid, groups @ ..] = ids.as_slice() else {
        panic!("no ids printed: {ids:?}");
    };
    assert!((231000..231100).contains(uid), "ran as uid {uid}");
    assert_eq!(gid, uid, "the gid is the uid");
    assert_eq!(groups, [*gid], "supplementary groups were kept: {groups:?}");
}
