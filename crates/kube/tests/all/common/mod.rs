//! Fixtures shared by the rendering tests: a few Contracts that between them set every
//! option, and the CI rule for tests that need something from outside the crate.
#![allow(dead_code, unused_imports)]

use jaula_contract::{ContractId, RuntimeKind, WorkRecordId};
use jaula_kube::{parse_time, Amount, Format, NamespaceMode, RenderSpec, Rendered, SeccompChoice};
use jaula_policy::limits::ContractLimits;

/// Skip with a printed reason, or fail when CI=true (where everything must be present).
pub use jaula_testkit::skip_or_fail as skip;

fn base(contract: &str, work_record: &str, runtime: &str, uid: u32) -> RenderSpec {
    RenderSpec::new(
        ContractId::parse(contract).unwrap(),
        WorkRecordId::parse(work_record).unwrap(),
        RuntimeKind::parse(runtime).unwrap(),
        uid,
        ContractLimits::default(),
    )
    .unwrap()
}

/// The defaults: a codex Pod in its Contract's namespace, own user namespace.
pub fn codex_pod() -> RenderSpec {
    base(
        "0f8e3c1a-5b7d-4e2f-9a6c-1d2e3f4a5b6c",
        "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "codex",
        20_001,
    )
}

/// A claude Sandbox under gVisor with jaula's own seccomp profile, a shutdown time,
/// CPU, custom sizes and egress.
pub fn claude_sandbox() -> RenderSpec {
    let mut s = base(
        "c0ffee00-1111-4222-8333-444455556666",
        "d00dfeed-aaaa-4bbb-8ccc-dddd00001111",
        "claude",
        30_123,
    );
    s.format = Format::Sandbox;
    s.image = "registry.example/agents/claude@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into();
    s.runtime_class = Some("gvisor".into());
    s.seccomp = SeccompChoice::Localhost("profiles/jaula.json".into());
    s.shutdown_time = Some(parse_time("2030-01-01T12:00:00Z").unwrap());
    s.cpu = Some(Amount::parse("cpu limit", "1500m").unwrap());
    s.memory = Amount::parse("memory limit", "4Gi").unwrap();
    s.max_processes = 256;
    s.volumes.workspace = Amount::parse("workspace size", "20Gi").unwrap();
    s.volumes.tmp = Amount::parse("tmp size", "500M").unwrap();
    s.egress = vec![
        "10.20.0.0/16:443".parse().unwrap(),
        "192.168.7.10:5432/tcp".parse().unwrap(),
        "[2001:db8::/48]:8000-8100/udp".parse().unwrap(),
    ];
    s.command = vec!["claude".into(), "-p".into(), "fix the failing test".into()];
    s
}

/// A harness jaula does not know, in a shared namespace, on the node's user namespace
/// with the default uid range, no DNS.
pub fn shared_aider() -> RenderSpec {
    let mut s = base("tenant-a", "run-42", "aider", 2_000_007);
    s.namespace = NamespaceMode::Shared("agents".into());
    s.host_users = true;
    s.dns = false;
    s.egress = vec!["0.0.0.0/0:443".parse().unwrap()];
    s.image = "aider-jaula:1.2".into();
    s.jaula_path = "/opt/jaula/bin/jaula".into();
    s
}

/// A Sandbox without a shutdown time.
pub fn codex_sandbox() -> RenderSpec {
    let mut s = codex_pod();
    s.format = Format::Sandbox;
    s
}

/// Every fixture, named.
pub fn fixtures() -> Vec<(&'static str, RenderSpec)> {
    vec![
        ("codex_pod", codex_pod()),
        ("claude_sandbox", claude_sandbox()),
        ("shared_aider", shared_aider()),
        ("codex_sandbox", codex_sandbox()),
    ]
}

/// Render, or panic with the error.
pub fn render(spec: &RenderSpec) -> Rendered {
    spec.render()
        .unwrap_or_else(|e| panic!("render failed: {e}"))
}

/// The pod spec of a rendering, as JSON (what the cluster receives).
pub fn pod_spec_json(r: &Rendered) -> serde_json::Value {
    serde_json::to_value(r.pod_spec().unwrap()).unwrap()
}
