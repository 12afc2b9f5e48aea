//! The rendered pods pass the Pod Security Standards `restricted` profile (which includes
//! `baseline`), checked by an implementation of the published controls written here from
//! the standard (kubernetes.io/docs/concepts/security/pod-security-standards, v1.33), on
//! the JSON the cluster receives. Each control is also shown to fire on a mutated pod, so
//! a pass means something.

use crate::common;

use serde_json::{json, Value};

const BASELINE_CAPS: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];
const SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SELINUX_TYPES: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];
const RESTRICTED_VOLUMES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

fn truthy(v: &Value) -> bool {
    v.as_bool() == Some(true)
}

fn containers(spec: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for key in ["containers", "initContainers", "ephemeralContainers"] {
        for c in spec[key].as_array().into_iter().flatten() {
            out.push((format!("{key}/{}", c["name"].as_str().unwrap_or("?")), c));
        }
    }
    out
}

/// Every violation of `restricted` (baseline included), named by control.
fn restricted_violations(spec: &Value, annotations: &Value) -> Vec<String> {
    let mut v = Vec::new();
    let psc = &spec["securityContext"];
    let all = containers(spec);

    // baseline: HostProcess
    if truthy(&psc["windowsOptions"]["hostProcess"])
        || all
            .iter()
            .any(|(_, c)| truthy(&c["securityContext"]["windowsOptions"]["hostProcess"]))
    {
        v.push("hostProcess".into());
    }
    // baseline: host namespaces
    for key in ["hostNetwork", "hostPID", "hostIPC"] {
        if truthy(&spec[key]) {
            v.push(key.into());
        }
    }
    // baseline: host path volumes; restricted: volume types
    for vol in spec["volumes"].as_array().into_iter().flatten() {
        let Some(obj) = vol.as_object() else { continue };
        for key in obj.keys().filter(|k| *k != "name") {
            if key == "hostPath" {
                v.push("hostPath volume".into());
            }
            if !RESTRICTED_VOLUMES.contains(&key.as_str()) {
                v.push(format!("volume type {key}"));
            }
        }
    }
    // baseline: AppArmor (field and legacy annotation)
    let apparmor_ok = |p: &Value| {
        p.is_null() || matches!(p["type"].as_str(), Some("RuntimeDefault" | "Localhost"))
    };
    if !apparmor_ok(&psc["appArmorProfile"]) {
        v.push("appArmor".into());
    }
    for (key, value) in annotations.as_object().into_iter().flatten() {
        if key.starts_with("container.apparmor.security.beta.kubernetes.io/") {
            let s = value.as_str().unwrap_or("");
            if s != "runtime/default" && !s.starts_with("localhost/") {
                v.push("appArmor annotation".into());
            }
        }
    }
    // baseline: SELinux
    let selinux_ok = |o: &Value| {
        o.is_null()
            || (SELINUX_TYPES.contains(&o["type"].as_str().unwrap_or(""))
                && o["user"].is_null()
                && o["role"].is_null())
    };
    if !selinux_ok(&psc["seLinuxOptions"]) {
        v.push("seLinux".into());
    }
    // baseline: sysctls
    for s in psc["sysctls"].as_array().into_iter().flatten() {
        if !SAFE_SYSCTLS.contains(&s["name"].as_str().unwrap_or("")) {
            v.push("sysctl".into());
        }
    }
    // restricted: running as non-root, non-root user, seccomp at pod level
    let pod_nonroot = truthy(&psc["runAsNonRoot"]);
    if psc["runAsUser"].as_i64() == Some(0) {
        v.push("runAsUser 0 (pod)".into());
    }
    let seccomp_restricted =
        |p: &Value| matches!(p["type"].as_str(), Some("RuntimeDefault" | "Localhost"));
    let pod_seccomp = &psc["seccompProfile"];
    if pod_seccomp["type"].as_str() == Some("Unconfined") {
        v.push("seccomp Unconfined (pod)".into());
    }
    for (name, c) in &all {
        let sc = &c["securityContext"];
        if truthy(&sc["privileged"]) {
            v.push(format!("privileged {name}"));
        }
        for p in c["ports"].as_array().into_iter().flatten() {
            if p["hostPort"].as_i64().unwrap_or(0) != 0 {
                v.push(format!("hostPort {name}"));
            }
        }
        if !matches!(sc["procMount"].as_str(), None | Some("Default")) {
            v.push(format!("procMount {name}"));
        }
        if !apparmor_ok(&sc["appArmorProfile"]) {
            v.push(format!("appArmor {name}"));
        }
        if !selinux_ok(&sc["seLinuxOptions"]) {
            v.push(format!("seLinux {name}"));
        }
        if sc["allowPrivilegeEscalation"].as_bool() != Some(false) {
            v.push(format!("allowPrivilegeEscalation {name}"));
        }
        match sc["runAsNonRoot"].as_bool() {
            Some(false) => v.push(format!("runAsNonRoot false {name}")),
            None if !pod_nonroot => v.push(format!("runAsNonRoot unset {name}")),
            _ => {}
        }
        if sc["runAsUser"].as_i64() == Some(0) {
            v.push(format!("runAsUser 0 {name}"));
        }
        let cs = &sc["seccompProfile"];
        if cs["type"].as_str() == Some("Unconfined") {
            v.push(format!("seccomp Unconfined {name}"));
        }
        let inherited = cs.is_null() && seccomp_restricted(pod_seccomp);
        if !(seccomp_restricted(cs) || inherited) {
            v.push(format!("seccomp {name}"));
        }
        let caps = &sc["capabilities"];
        let drops_all = caps["drop"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d.as_str() == Some("ALL"));
        if !drops_all {
            v.push(format!("capabilities drop ALL {name}"));
        }
        for add in caps["add"].as_array().into_iter().flatten() {
            let add = add.as_str().unwrap_or("");
            if !BASELINE_CAPS.contains(&add) {
                v.push(format!("capability {add} (baseline) {name}"));
            }
            if add != "NET_BIND_SERVICE" {
                v.push(format!("capability {add} (restricted) {name}"));
            }
        }
    }
    v
}

fn pod_of(r: &jaula_kube::Rendered) -> (Value, Value) {
    let objects = r.to_json_values().unwrap();
    let workload = objects.last().unwrap().clone();
    match workload["kind"].as_str() {
        Some("Pod") => (
            workload["spec"].clone(),
            workload["metadata"]["annotations"].clone(),
        ),
        Some("Sandbox") => (
            workload["spec"]["podTemplate"]["spec"].clone(),
            workload["spec"]["podTemplate"]["metadata"]["annotations"].clone(),
        ),
        other => panic!("unexpected workload {other:?}"),
    }
}

#[test]
fn every_rendered_pod_passes_restricted() {
    for (name, spec) in common::fixtures() {
        let (pod, annotations) = pod_of(&common::render(&spec));
        let violations = restricted_violations(&pod, &annotations);
        assert!(violations.is_empty(), "{name}: {violations:?}");
    }
}

#[test]
fn the_isolation_fields_the_issue_lists_are_all_set() {
    for (name, spec) in common::fixtures() {
        let (pod, _) = pod_of(&common::render(&spec));
        let c = &pod["containers"][0]["securityContext"];
        assert_eq!(c["readOnlyRootFilesystem"], true, "{name}");
        assert_eq!(c["capabilities"]["drop"], json!(["ALL"]), "{name}");
        assert!(c["capabilities"]["add"].is_null(), "{name}");
        assert_eq!(pod["automountServiceAccountToken"], false, "{name}");
        assert_eq!(pod["enableServiceLinks"], false, "{name}");
        assert_eq!(pod["restartPolicy"], "Never", "{name}");
        assert_eq!(pod["hostUsers"], json!(spec.host_users), "{name}");
        let uid = json!(spec.uid);
        for key in ["runAsUser", "runAsGroup", "fsGroup"] {
            assert_eq!(pod["securityContext"][key], uid, "{name} {key}");
        }
        let limits = &pod["containers"][0]["resources"]["limits"];
        assert_eq!(limits["memory"], spec.memory.as_str(), "{name}");
    }
}

#[test]
fn the_per_contract_namespace_enforces_restricted() {
    let r = common::render(&common::codex_pod());
    let ns = serde_json::to_value(r.namespace.unwrap()).unwrap();
    let labels = &ns["metadata"]["labels"];
    assert_eq!(labels["pod-security.kubernetes.io/enforce"], "restricted");
    assert_eq!(
        labels["pod-security.kubernetes.io/enforce-version"],
        "v1.33"
    );
}

#[test]
fn each_control_fires_on_a_pod_that_breaks_it() {
    let (good, annotations) = pod_of(&common::render(&common::codex_pod()));
    type Breaker = fn(&mut Value);
    let cases: &[(&str, Breaker)] = &[
        ("hostNetwork", |p| p["hostNetwork"] = json!(true)),
        ("hostPID", |p| p["hostPID"] = json!(true)),
        ("hostIPC", |p| p["hostIPC"] = json!(true)),
        ("hostProcess", |p| {
            p["securityContext"]["windowsOptions"] = json!({"hostProcess": true})
        }),
        ("privileged", |p| {
            p["containers"][0]["securityContext"]["privileged"] = json!(true)
        }),
        ("hostPath volume", |p| {
            p["volumes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "h", "hostPath": {"path": "/"}}))
        }),
        ("volume type nfs", |p| {
            p["volumes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "n", "nfs": {"server": "x", "path": "/"}}))
        }),
        ("hostPort", |p| {
            p["containers"][0]["ports"] = json!([{"containerPort": 80, "hostPort": 80}])
        }),
        ("procMount", |p| {
            p["containers"][0]["securityContext"]["procMount"] = json!("Unmasked")
        }),
        ("sysctl", |p| {
            p["securityContext"]["sysctls"] = json!([{"name": "kernel.msgmax", "value": "1"}])
        }),
        ("seLinux", |p| {
            p["securityContext"]["seLinuxOptions"] = json!({"type": "spc_t"})
        }),
        ("appArmor", |p| {
            p["containers"][0]["securityContext"]["appArmorProfile"] = json!({"type": "Unconfined"})
        }),
        ("allowPrivilegeEscalation", |p| {
            p["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = Value::Null
        }),
        ("runAsNonRoot unset", |p| {
            p["securityContext"]["runAsNonRoot"] = Value::Null;
            p["containers"][0]["securityContext"]["runAsNonRoot"] = Value::Null;
        }),
        ("runAsNonRoot false", |p| {
            p["containers"][0]["securityContext"]["runAsNonRoot"] = json!(false)
        }),
        ("runAsUser 0", |p| {
            p["containers"][0]["securityContext"]["runAsUser"] = json!(0)
        }),
        ("seccomp Unconfined", |p| {
            p["containers"][0]["securityContext"]["seccompProfile"] = json!({"type": "Unconfined"})
        }),
        ("seccomp", |p| {
            p["securityContext"]["seccompProfile"] = Value::Null;
            p["containers"][0]["securityContext"]["seccompProfile"] = Value::Null;
        }),
        ("capabilities drop ALL", |p| {
            p["containers"][0]["securityContext"]["capabilities"]["drop"] = json!(["NET_RAW"])
        }),
        ("capability SYS_ADMIN (baseline)", |p| {
            p["containers"][0]["securityContext"]["capabilities"]["add"] = json!(["SYS_ADMIN"])
        }),
        ("capability CHOWN (restricted)", |p| {
            p["containers"][0]["securityContext"]["capabilities"]["add"] = json!(["CHOWN"])
        }),
    ];
    for (control, breaker) in cases {
        let mut pod = good.clone();
        breaker(&mut pod);
        let violations = restricted_violations(&pod, &annotations);
        assert!(
            violations.iter().any(|v| v.starts_with(control)),
            "{control} not detected: {violations:?}"
        );
    }
    // What restricted still allows.
    let mut pod = good.clone();
    pod["containers"][0]["securityContext"]["capabilities"]["add"] = json!(["NET_BIND_SERVICE"]);
    pod["containers"][0]["securityContext"]["seccompProfile"] = Value::Null;
    assert!(restricted_violations(&pod, &annotations).is_empty());
    let bad_annotation =
        json!({"container.apparmor.security.beta.kubernetes.io/agent": "unconfined"});
    assert!(!restricted_violations(&good, &bad_annotation).is_empty());
}
