//! `jaula contract render kubernetes` and `jaula render seccomp-json` through the binary:
//! the uid from the allocator (as root) or from --uid, the output formats, and bad input
//! refused with a clear message and nothing written to the state directory.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

const C: &str = "0f8e3c1a-5b7d-4e2f-9a6c-1d2e3f4a5b6c";
const W: &str = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

fn render(state: &Path, args: &[&str]) -> Output {
    Command::new(jaula())
        .env("JAULA_CONTRACT_ROOT", state.join("tenants"))
        .env("JAULA_CONTRACT_STATE", state.join("state"))
        .env("JAULA_CONTRACT_UIDS", "23000-23099")
        .args(["contract", "render", "kubernetes"])
        .args(args)
        .output()
        .unwrap()
}

fn items(out: &Output) -> Vec<serde_json::Value> {
    jaula_testkit::output::assert_ok(out);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["kind"], "List");
    list["items"].as_array().unwrap().clone()
}

fn pod_uid(items: &[serde_json::Value]) -> i64 {
    items.last().unwrap()["spec"]["securityContext"]["runAsUser"]
        .as_i64()
        .unwrap()
}

#[test]
fn a_given_uid_renders_without_touching_the_state_directory() {
    let (_guard, root) = scratch("kube-render");
    let out = render(
        &root,
        &[
            C,
            "--work-record",
            W,
            "--runtime",
            "codex",
            "--uid",
            "20001",
        ],
    );
    jaula_testkit::output::assert_ok(&out);
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert_eq!(yaml.matches("\nkind: ").count(), 3, "{yaml}");
    assert!(yaml.contains("runAsUser: 20001"));
    assert!(
        !root.join("state").exists(),
        "a given uid allocates nothing"
    );

    let out = render(
        &root,
        &[
            C,
            "--work-record",
            W,
            "--runtime",
            "claude",
            "--uid",
            "20001",
            "--format",
            "sandbox",
            "--shutdown-time",
            "2030-01-01T00:00:00Z",
            "--namespace",
            "agents",
            "--json",
            "--",
            "claude",
            "-p",
            "hi",
        ],
    );
    let items = items(&out);
    assert_eq!(items.len(), 2, "no Namespace object in a shared namespace");
    assert_eq!(items[1]["kind"], "Sandbox");
    assert_eq!(items[1]["spec"]["shutdownTime"], "2030-01-01T00:00:00Z");
    let cmd = &items[1]["spec"]["podTemplate"]["spec"]["containers"][0]["command"];
    assert_eq!(cmd.as_array().unwrap().last().unwrap(), "hi");
}

#[test]
fn the_allocator_gives_each_contract_its_own_uid() {
    let Some((_guard, root)) = common::root_scratch("the uid allocator", "kube-alloc") else {
        return;
    };
    let a = pod_uid(&items(&render(
        &root,
        &[C, "--work-record", W, "--runtime", "codex", "--json"],
    )));
    let b = pod_uid(&items(&render(
        &root,
        &[
            "other-contract",
            "--work-record",
            W,
            "--runtime",
            "codex",
            "--json",
        ],
    )));
    let again = pod_uid(&items(&render(
        &root,
        &[
            C,
            "--work-record",
            "another-run",
            "--runtime",
            "codex",
            "--json",
        ],
    )));
    assert!((23000..=23099).contains(&a) && (23000..=23099).contains(&b));
    assert_ne!(a, b);
    assert_eq!(a, again, "a Contract keeps its uid");
}

#[test]
fn bad_input_is_refused_plainly_and_changes_nothing() {
    let (_guard, root) = scratch("kube-bad");
    // Ids are refused by the argument parser: a usage error, exit 2.
    let ids: &[(&[&str], &str)] = &[
        (
            &["bad/id", "--work-record", W, "--runtime", "codex"],
            "contract id",
        ),
        (
            &[C, "--work-record", "tmp", "--runtime", "codex"],
            "work record",
        ),
        (
            &[C, "--work-record", W, "--runtime", "Codex"],
            "runtime kind",
        ),
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                C,
                "--work-record",
                W,
                "--runtime",
                "codex",
                "--memory",
                "8GB",
            ],
            "memory limit \"8GB\" is not a valid quantity",
        ),
        (
            &[C, "--work-record", W, "--runtime", "codex", "--cpu", "two"],
            "cpu limit \"two\"",
        ),
        (
            &[
                C,
                "--work-record",
                W,
                "--runtime",
                "codex",
                "--tmp-size=-1Gi",
            ],
            "tmp size",
        ),
        (
            &[
                C,
                "--work-record",
                W,
                "--runtime",
                "codex",
                "--egress",
                "github.com:443",
            ],
            "domain name",
        ),
        (
            &[
                C,
                "--work-record",
                W,
                "--runtime",
                "codex",
                "--shutdown-time",
                "soon",
            ],
            "RFC 3339",
        ),
        (
            &[C, "--work-record", W, "--runtime", "codex", "--image", ""],
            "image",
        ),
        (
            &[C, "--work-record", W, "--runtime", "codex", "--uid", "0"],
            "non-root",
        ),
    ];
    for (code, table) in [(2, ids), (1, cases)] {
        for (args, needle) in table {
            let out = render(&root, args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
            assert!(stderr.contains(needle), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{args:?} printed objects");
        }
    }
    assert!(!root.join("state").exists(), "bad input allocated a uid");
}

#[test]
fn seccomp_json_is_the_oci_profile() {
    let out = common::jaula_output(&["render", "seccomp-json"]);
    jaula_testkit::output::assert_ok(&out);
    let profile: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(profile["defaultAction"], "SCMP_ACT_ALLOW");
    let names: Vec<&str> = profile["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["names"].as_array().unwrap())
        .map(|n| n.as_str().unwrap())
        .collect();
    for name in ["ptrace", "clone3", "personality", "ioctl", "unshare"] {
        assert!(names.contains(&name), "{name} missing");
    }
}

/// The pod's container command and environment, run here as the pod's uid with `/contract`
/// moved to a scratch tree: the workspace, harness root and tmp are writable, HOME and the
/// host's /tmp are not. (In the pod the root filesystem is also read-only; this shows the
/// jaula layer alone holds.)
#[test]
fn the_rendered_container_command_cages_as_on_a_runner() {
    use std::os::unix::fs::{chown, PermissionsExt};
    let Some((_guard, root)) = common::root_scratch("running as the pod's uid", "kube-cmd") else {
        return;
    };
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let uid = 23_777u32;
    let items = items(&render(
        &root,
        &[
            C,
            "--work-record",
            W,
            "--runtime",
            "codex",
            "--uid",
            "23777",
            "--json",
            "--",
            "sh",
            "-c",
            "touch ws_ok \"$TMPDIR/t\" \"$CODEX_HOME/c\" && ! touch \"$HOME/x\" 2>/dev/null \
             && ! touch /tmp/jaula-kube-probe-23777 2>/dev/null && echo caged",
        ],
    ));
    let container = &items.last().unwrap()["spec"]["containers"][0];
    let home = root.join("contract");
    let moved = |s: &str| s.replacen("/contract", home.to_str().unwrap(), 1);
    let argv: Vec<String> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| moved(a.as_str().unwrap()))
        .collect();
    assert_eq!(argv[0], "/usr/local/bin/jaula");
    for mount in container["volumeMounts"].as_array().unwrap() {
        let dir = std::path::PathBuf::from(moved(mount["mountPath"].as_str().unwrap()));
        std::fs::create_dir_all(&dir).unwrap();
        chown(&dir, Some(uid), Some(uid)).unwrap();
    }
    // HOME owned by the uid, so only the cage, not file modes, can stop the write there.
    chown(&home, Some(uid), Some(uid)).unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid", "23777", "--regid", "23777", "--clear-groups"])
        .arg(jaula())
        .args(&argv[1..])
        .current_dir(moved(container["workingDir"].as_str().unwrap()))
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    for e in container["env"].as_array().unwrap() {
        cmd.env(
            e["name"].as_str().unwrap(),
            moved(e["value"].as_str().unwrap()),
        );
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_file("/tmp/jaula-kube-probe-23777");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "caged\n");
    assert!(home.join(W).join("ws_ok").exists());
    assert!(!home.join("x").exists());
}
