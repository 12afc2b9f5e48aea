//! The rendered objects validate offline: Namespace, NetworkPolicy and Pod against the
//! Kubernetes JSON schemas of 1.33 (the API version the objects are typed for) through
//! 1.37, strict (an unknown field is an error), with the `kubernetes-validate` package;
//! the Sandbox against the OpenAPI v3 schema embedded in the agent-sandbox CRD that
//! `../shared/data/agent-sandbox/` holds. Deliberately broken copies are validated too, so
//! a clean report cannot come from a validator that checks nothing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const VERSIONS: &str = "1.33.0,1.34.0,1.35.0,1.36.0,1.37.0";

/// `../shared/data` beside the project root; `JAULA_SHARED_DATA` names another place (a
/// git worktree that does not sit beside `shared/`).
fn crd() -> Option<PathBuf> {
    let data = std::env::var_os("JAULA_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let path = data.join("agent-sandbox/agents.x-k8s.io_sandboxes.yaml");
    path.is_file().then_some(path)
}

fn python_ready() -> bool {
    Command::new("python3")
        .args(["-c", "import kubernetes_validate, jsonschema, yaml"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn write(dir: &Path, name: &str, value: &Value) {
    std::fs::write(dir.join(name), serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

#[test]
fn rendered_objects_validate_against_the_kubernetes_and_crd_schemas() {
    let Some(crd) = crd() else {
        return common::skip(
            "../shared/data/agent-sandbox/agents.x-k8s.io_sandboxes.yaml is absent",
        );
    };
    if !python_ready() {
        return common::skip(
            "python3 with kubernetes-validate is missing (pip install kubernetes-validate==1.37.0)",
        );
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut expected_clean = Vec::new();
    let mut sandboxes = 0;
    for (name, spec) in common::fixtures() {
        for (i, obj) in common::render(&spec)
            .to_json_values()
            .unwrap()
            .iter()
            .enumerate()
        {
            let kind = obj["kind"].as_str().unwrap().to_lowercase();
            sandboxes += usize::from(kind == "sandbox");
            let file = format!("{name}_{i}_{kind}.json");
            write(dir.path(), &file, obj);
            expected_clean.push(file);
        }
    }
    assert_eq!(sandboxes, 2, "both Sandbox fixtures are validated");

    let pod = common::render(&common::codex_pod())
        .to_json_values()
        .unwrap();
    let sandbox = common::render(&common::claude_sandbox())
        .to_json_values()
        .unwrap()
        .into_iter()
        .find(|o| o["kind"] == "Sandbox")
        .unwrap();
    let mut broken: Vec<(&str, Value)> = Vec::new();
    let mut b = pod[2].clone();
    b["spec"]["securityContext"]["runAsUserr"] = json!(1);
    broken.push(("zz_pod_unknown_field.json", b));
    let mut b = pod[1].clone();
    b["spec"]["policyTypes"] = json!("Egress");
    broken.push(("zz_netpol_wrong_type.json", b));
    let mut b = sandbox.clone();
    b["spec"]["shutdownTme"] = json!("2030-01-01T00:00:00Z");
    broken.push(("zz_sandbox_unknown_field.json", b));
    let mut b = sandbox.clone();
    b["spec"]["podTemplate"]["spec"]["containers"][0]["securityContext"]["privilegedd"] =
        json!(false);
    broken.push(("zz_sandbox_pod_unknown_field.json", b));
    let mut b = sandbox.clone();
    b["spec"]["shutdownPolicy"] = json!("Wipe");
    broken.push(("zz_sandbox_bad_enum.json", b));
    let mut b = sandbox.clone();
    b["metadata"]["labels"] = json!({"a": 1});
    broken.push(("zz_sandbox_bad_metadata.json", b));
    for (file, value) in &broken {
        write(dir.path(), file, value);
    }

    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validate_schemas.py"))
        .arg(&crd)
        .arg(VERSIONS)
        .arg(dir.path())
        .output()
        .unwrap();
    jaula_testkit::output::assert_ok_for("validator failed", &out);
    let report: serde_json::Map<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    for file in &expected_clean {
        assert_eq!(report[file], json!([]), "{file} does not validate");
    }
    for (file, _) in &broken {
        let errors = report[*file].as_array().unwrap();
        assert!(!errors.is_empty(), "{file} validated although broken");
    }
    eprintln!(
        "validated {} objects against Kubernetes {VERSIONS} and the Sandbox CRD; {} broken controls refused",
        expected_clean.len(),
        broken.len()
    );
}
