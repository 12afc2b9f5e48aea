use super::*;

const CONTRACT: &str = "0f8e3c1a-5b7d-4e2f-9a6c-1d2e3f4a5b6c";
const WORK_RECORD: &str = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

fn spec(runtime: &str) -> RenderSpec {
    RenderSpec::new(
        ContractId::parse(CONTRACT).unwrap(),
        WorkRecordId::parse(WORK_RECORD).unwrap(),
        RuntimeKind::parse(runtime).unwrap(),
        20_001,
        ContractLimits::default(),
    )
    .unwrap()
}

fn container(r: &Rendered) -> &Container {
    &r.pod_spec().unwrap().containers[0]
}

#[test]
fn the_container_runs_jaula_with_the_contracts_tenant_policy() {
    let mut s = spec("codex");
    s.command = vec!["codex".into(), "exec".into(), "fix the tests".into()];
    let r = s.render().unwrap();
    let ws = format!("/contract/{WORK_RECORD}");
    assert_eq!(
        container(&r).command.as_deref().unwrap(),
        [
            "/usr/local/bin/jaula",
            "run",
            "--backend",
            "landlock",
            "--tenant",
            "--repo",
            &ws,
            "--home",
            "/contract",
            "--allow-write",
            "/contract/harness/codex",
            "--allow-write",
            "/contract/tmp",
            "--max-procs",
            "512",
            "--max-data",
            "8589934592",
            "--",
            "codex",
            "exec",
            "fix the tests",
        ]
    );
    assert_eq!(container(&r).working_dir.as_deref(), Some(ws.as_str()));
}

#[test]
fn the_command_defaults_to_the_runtime_kind() {
    let r = spec("claude").render().unwrap();
    assert_eq!(
        container(&r).command.as_ref().unwrap().last().unwrap(),
        "claude"
    );
}

#[test]
fn home_tmpdir_and_the_harness_variable_point_at_the_volumes() {
    let env = |s: &RenderSpec| -> Vec<(String, String)> {
        container(&s.render().unwrap())
            .env
            .as_ref()
            .unwrap()
            .iter()
            .map(|e| (e.name.clone(), e.value.clone().unwrap()))
            .collect()
    };
    assert_eq!(
        env(&spec("claude")),
        [
            ("HOME".to_string(), "/contract".to_string()),
            ("TMPDIR".into(), "/contract/tmp".into()),
            (
                "CLAUDE_CONFIG_DIR".into(),
                "/contract/harness/claude".into()
            ),
        ]
    );
    // A harness jaula does not know gets no variable, as on a runner.
    assert_eq!(env(&spec("aider")).len(), 2);
    let r = spec("codex").render().unwrap();
    let mounts: Vec<_> = container(&r)
        .volume_mounts
        .as_ref()
        .unwrap()
        .iter()
        .map(|m| (m.name.as_str(), m.mount_path.as_str()))
        .collect();
    assert!(mounts.contains(&("harness", "/contract/harness/codex")));
    assert!(mounts.contains(&("tmp", "/contract/tmp")));
    let volumes = r.pod_spec().unwrap().volumes.as_ref().unwrap();
    assert_eq!(volumes.len(), 3);
    for v in volumes {
        let dir = v.empty_dir.as_ref().expect("only emptyDir volumes");
        assert!(dir.size_limit.is_some(), "{} has no size limit", v.name);
    }
}

#[test]
fn uid_gid_and_fsgroup_come_from_the_given_uid() {
    let r = spec("codex").render().unwrap();
    let pod = r.pod_spec().unwrap();
    let sc = pod.security_context.as_ref().unwrap();
    assert_eq!(
        (sc.run_as_user, sc.run_as_group, sc.fs_group),
        (Some(20_001), Some(20_001), Some(20_001))
    );
    let csc = container(&r).security_context.as_ref().unwrap();
    assert_eq!(
        (csc.run_as_user, csc.run_as_group),
        (Some(20_001), Some(20_001))
    );
}

#[test]
fn root_and_unmappable_uids_are_refused() {
    let mut s = spec("codex");
    s.uid = 0;
    assert!(s.render().unwrap_err().to_string().contains("non-root"));
    s.uid = 2_000_000;
    let err = s.render().unwrap_err().to_string();
    assert!(
        err.contains("2000000") && err.contains("idsPerPod"),
        "{err}"
    );
    s.ids_per_pod = 65_536 * 32;
    assert!(s.render().is_ok());
    s.ids_per_pod = DEFAULT_IDS_PER_POD;
    s.host_users = true;
    let r = s.render().unwrap();
    assert_eq!(r.pod_spec().unwrap().host_users, Some(true));
}

#[test]
fn names_that_would_have_to_be_altered_are_refused() {
    let mut s = spec("codex");
    s.contract = ContractId::parse("Tenant_A").unwrap();
    let err = s.render().unwrap_err().to_string();
    assert!(
        err.contains("jaula-Tenant_A") && err.contains("--namespace"),
        "{err}"
    );
    // A shared namespace takes any pod, but its policy selects on the contract label.
    s.namespace = NamespaceMode::Shared("agents".into());
    assert!(s
        .render()
        .unwrap_err()
        .to_string()
        .contains("shared namespace"));
    s.contract = ContractId::parse("tenant-a").unwrap();
    let r = s.render().unwrap();
    assert!(r.namespace.is_none());
    let sel = r
        .network_policy
        .spec
        .as_ref()
        .unwrap()
        .pod_selector
        .as_ref()
        .unwrap();
    assert_eq!(
        sel.match_labels
            .as_ref()
            .unwrap()
            .get(keys::CONTRACT)
            .map(String::as_str),
        Some("tenant-a")
    );
    s.namespace = NamespaceMode::Shared("Agents".into());
    assert!(s.render().is_err());
    let mut s = spec("codex");
    s.work_record = WorkRecordId::parse("Run_1").unwrap();
    assert!(s.render().unwrap_err().to_string().contains("pod name"));
}

#[test]
fn bad_settings_get_a_clear_error() {
    type Change = Box<dyn Fn(&mut RenderSpec)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|s| s.image = "".into()), "image"),
        (Box::new(|s| s.image = "a b".into()), "image"),
        (Box::new(|s| s.jaula_path = "jaula".into()), "absolute"),
        (
            Box::new(|s| s.runtime_class = Some("gVisor".into())),
            "runtime class",
        ),
        (
            Box::new(|s| s.seccomp = SeccompChoice::Localhost("/etc/x.json".into())),
            "relative",
        ),
        (
            Box::new(|s| s.seccomp = SeccompChoice::Localhost("../x.json".into())),
            "'..'",
        ),
        (Box::new(|s| s.max_processes = 0), "max processes"),
        (
            Box::new(|s| s.memory = Amount::parse("memory limit", "100m").unwrap()),
            "whole number of bytes",
        ),
        (
            Box::new(|s| s.cpu = Some(Amount::parse("cpu limit", "1u").unwrap())),
            "millicores",
        ),
        (
            Box::new(|s| s.shutdown_time = Some(Time("2030-01-01T00:00:00Z".parse().unwrap()))),
            "Sandbox",
        ),
    ];
    for (change, needle) in cases {
        let mut s = spec("codex");
        change(&mut s);
        let err = s.render().unwrap_err().to_string();
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

#[test]
fn zero_memory_in_the_contracts_limits_is_refused() {
    let limits = ContractLimits {
        max_processes: 10,
        max_memory_bytes: 0,
    };
    let err = RenderSpec::new(
        ContractId::parse(CONTRACT).unwrap(),
        WorkRecordId::parse(WORK_RECORD).unwrap(),
        RuntimeKind::parse("codex").unwrap(),
        20_001,
        limits,
    )
    .unwrap_err();
    assert!(err.to_string().contains("memory limit"));
}

#[test]
fn egress_is_default_deny_plus_dns_plus_the_configured_blocks() {
    let mut s = spec("codex");
    let r = s.render().unwrap();
    let np = r.network_policy.spec.as_ref().unwrap();
    assert_eq!(np.policy_types.as_deref().unwrap(), ["Ingress", "Egress"]);
    assert!(np.ingress.is_none());
    assert_eq!(np.egress.as_ref().unwrap().len(), 1, "DNS only");
    assert_eq!(np.pod_selector, Some(LabelSelector::default()));

    s.dns = false;
    let r = s.render().unwrap();
    let json = serde_json::to_value(&r.network_policy).unwrap();
    // "egress: []" denies everything; an absent key would too, but only by policyTypes.
    assert_eq!(json["spec"]["egress"], serde_json::json!([]));

    s.egress = vec![
        "10.0.0.0/8:443".parse().unwrap(),
        "[2001:db8::/32]".parse().unwrap(),
    ];
    let r = s.render().unwrap();
    let rules = r
        .network_policy
        .spec
        .as_ref()
        .unwrap()
        .egress
        .clone()
        .unwrap();
    assert_eq!(rules.len(), 2);
    let block = |i: usize| {
        rules[i].to.as_ref().unwrap()[0]
            .ip_block
            .clone()
            .unwrap()
            .cidr
    };
    assert_eq!(block(0), "10.0.0.0/8");
    assert_eq!(block(1), "2001:db8::/32");
    assert_eq!(
        rules[0].ports.as_ref().unwrap()[0].port,
        Some(IntOrString::Int(443))
    );
    assert!(rules[1].ports.is_none(), "every port");
}

#[test]
fn the_sandbox_wraps_the_same_pod_spec() {
    let mut s = spec("codex");
    let pod = s.render().unwrap();
    s.format = Format::Sandbox;
    s.shutdown_time = Some(Time("2030-01-01T00:00:00Z".parse().unwrap()));
    let sb = s.render().unwrap();
    assert_eq!(pod.pod_spec(), sb.pod_spec());
    let Workload::Sandbox(sandbox) = &sb.workload else {
        panic!("not a sandbox");
    };
    assert_eq!(sandbox.api_version, "agents.x-k8s.io/v1beta1");
    assert_eq!(sandbox.spec.shutdown_policy, Some(ShutdownPolicy::Delete));
    let json = serde_json::to_value(sandbox).unwrap();
    assert_eq!(json["spec"]["shutdownTime"], "2030-01-01T00:00:00Z");
    assert_eq!(
        json["spec"]["podTemplate"]["metadata"]["labels"][keys::CONTRACT],
        CONTRACT
    );
}

#[test]
fn yaml_puts_the_policy_before_the_pod() {
    let yaml = spec("codex").render().unwrap().to_yaml().unwrap();
    let kinds: Vec<&str> = yaml
        .lines()
        .filter_map(|l| l.strip_prefix("kind: "))
        .collect();
    assert_eq!(kinds, ["Namespace", "NetworkPolicy", "Pod"]);
    assert_eq!(yaml.matches("---\n").count(), 3);
}

#[test]
fn shutdown_times_must_be_rfc3339_with_a_zone() {
    assert_eq!(
        parse_time("2030-01-01T00:00:00Z").unwrap().0.to_string(),
        "2030-01-01T00:00:00Z"
    );
    for bad in ["2030-01-01", "2030-01-01T00:00:00", "tomorrow", ""] {
        let err = parse_time(bad).unwrap_err().to_string();
        assert!(
            err.contains("RFC 3339") && err.contains(&format!("{bad:?}")),
            "{err}"
        );
    }
}
