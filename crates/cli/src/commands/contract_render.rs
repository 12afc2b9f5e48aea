//! `jaula contract render kubernetes CONTRACT --work-record W --runtime KIND ...`: print the
//! Contract's cage as Kubernetes objects (YAML, or a `v1/List` with `--json`). The uid
//! comes from the runner's allocator (which needs root and the state directory) unless
//! `--uid` gives one; the limits from the `[contract]` configuration unless overridden.
//! The objects themselves are built by `jaula_kube`.

use std::io::Write;

use clap::{Args, ValueEnum};
use jaula_contract::{ContractId, ContractIsolation, RuntimeKind, WorkRecordId};
use jaula_kube::{
    Amount, EgressRule, Format, KubeError, NamespaceMode, RenderSpec, SeccompChoice, ShutdownPolicy,
};

use crate::args::JsonFlag;
use crate::error::CliError;
use crate::ids;

/// What to render.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderTarget {
    /// Namespace, NetworkPolicy and Pod (or agent-sandbox Sandbox), Kubernetes 1.33 API.
    Kubernetes,
}

/// `--format`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// A bare v1 Pod.
    Pod,
    /// An agents.x-k8s.io/v1beta1 Sandbox wrapping the same pod spec.
    Sandbox,
}

/// `--shutdown-policy`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownPolicyArg {
    /// Delete the Sandbox (and its volumes) at the shutdown time.
    Delete,
    /// Keep the Sandbox object.
    Retain,
}

/// `jaula contract render kubernetes ...`.
#[derive(Debug, Args)]
pub struct KubeRenderArgs {
    /// What to render.
    #[arg(value_enum)]
    pub target: RenderTarget,
    /// The contract id.
    #[arg(value_parser = ids::contract_id)]
    pub contract: ContractId,
    /// The work record the pod works on.
    #[arg(long, value_name = "ID", value_parser = ids::work_record_id)]
    pub work_record: WorkRecordId,
    /// The harness runtime (codex, claude, ...).
    #[arg(long, value_name = "KIND", value_parser = ids::runtime_kind)]
    pub runtime: RuntimeKind,
    /// Container image; it must carry jaula at --jaula-path and the harness.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Where jaula is inside the image.
    #[arg(long, value_name = "PATH")]
    pub jaula_path: Option<String>,
    /// A bare Pod, or an agent-sandbox Sandbox.
    #[arg(long, value_enum, default_value = "pod")]
    pub format: FormatArg,
    /// Put the objects in this existing namespace instead of a namespace of the Contract's own.
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Render with this uid instead of the allocator's (which needs root and the state dir).
    #[arg(long, value_name = "UID")]
    pub uid: Option<u32>,
    /// Share the node's user namespace (hostUsers: true) instead of a per-pod one.
    #[arg(long)]
    pub host_users: bool,
    /// Ids a pod's user namespace maps (the kubelet's userNamespaces.idsPerPod).
    #[arg(long, value_name = "N")]
    pub ids_per_pod: Option<u32>,
    /// runtimeClassName (gvisor, kata, ...).
    #[arg(long, value_name = "NAME")]
    pub runtime_class: Option<String>,
    /// Use this node-local seccomp profile (relative to the kubelet's seccomp root, e.g.
    /// profiles/jaula.json from `jaula render seccomp-json`) instead of RuntimeDefault.
    #[arg(long, value_name = "PATH")]
    pub seccomp_localhost: Option<String>,
    /// Memory limit as a Kubernetes quantity (8Gi, 512Mi); default: the Contract's RLIMIT_DATA.
    #[arg(long, value_name = "QUANTITY")]
    pub memory: Option<String>,
    /// CPU limit as a Kubernetes quantity (2, 500m); default: none.
    #[arg(long, value_name = "QUANTITY")]
    pub cpu: Option<String>,
    /// RLIMIT_NPROC inside the pod; default: the Contract's.
    #[arg(long, value_name = "N")]
    pub max_procs: Option<u64>,
    /// Size limit of the workspace emptyDir [default: 10Gi].
    #[arg(long, value_name = "QUANTITY")]
    pub workspace_size: Option<String>,
    /// Size limit of the harness emptyDir [default: 1Gi].
    #[arg(long, value_name = "QUANTITY")]
    pub harness_size: Option<String>,
    /// Size limit of the tmp emptyDir [default: 2Gi].
    #[arg(long, value_name = "QUANTITY")]
    pub tmp_size: Option<String>,
    /// Allow egress to CIDR[:PORT[-END][/tcp|udp|sctp]] (IPv6 in brackets); repeatable.
    /// Domain names cannot be expressed in a NetworkPolicy.
    #[arg(long = "egress", value_name = "RULE")]
    pub egress: Vec<String>,
    /// Do not allow DNS to kube-dns.
    #[arg(long)]
    pub no_dns: bool,
    /// Sandbox shutdownTime (RFC 3339, e.g. 2030-01-01T00:00:00Z).
    #[arg(long, value_name = "TIME")]
    pub shutdown_time: Option<String>,
    /// What happens to the Sandbox at its shutdown time.
    #[arg(long, value_enum, default_value = "delete")]
    pub shutdown_policy: ShutdownPolicyArg,
    #[command(flatten)]
    pub out: JsonFlag,
    /// The agent's command [default: the runtime kind].
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

fn amount(what: &'static str, text: &Option<String>) -> Result<Option<Amount>, KubeError> {
    text.as_deref().map(|t| Amount::parse(what, t)).transpose()
}

/// Stands in for the allocator's uid while the rest of the input is checked.
const PLACEHOLDER_UID: u32 = 1;

/// Build the rendering from the arguments, with `uid`.
pub fn spec(
    args: &KubeRenderArgs,
    limits: jaula_policy::limits::ContractLimits,
    uid: u32,
) -> Result<RenderSpec, KubeError> {
    let memory = amount("memory limit", &args.memory)?;
    let cpu = amount("cpu limit", &args.cpu)?;
    let sizes = [
        amount("workspace size", &args.workspace_size)?,
        amount("harness size", &args.harness_size)?,
        amount("tmp size", &args.tmp_size)?,
    ];
    let egress = args
        .egress
        .iter()
        .map(|r| r.parse::<EgressRule>())
        .collect::<Result<Vec<_>, _>>()?;
    let shutdown_time = args
        .shutdown_time
        .as_deref()
        .map(jaula_kube::parse_time)
        .transpose()?;
    let mut spec = RenderSpec::new(
        args.contract.clone(),
        args.work_record.clone(),
        args.runtime.clone(),
        uid,
        limits,
    )?;
    if let Some(image) = &args.image {
        spec.image = image.clone();
    }
    if let Some(path) = &args.jaula_path {
        spec.jaula_path = path.clone();
    }
    spec.format = match args.format {
        FormatArg::Pod => Format::Pod,
        FormatArg::Sandbox => Format::Sandbox,
    };
    if let Some(ns) = &args.namespace {
        spec.namespace = NamespaceMode::Shared(ns.clone());
    }
    spec.host_users = args.host_users;
    if let Some(n) = args.ids_per_pod {
        spec.ids_per_pod = n;
    }
    spec.runtime_class = args.runtime_class.clone();
    if let Some(path) = &args.seccomp_localhost {
        spec.seccomp = SeccompChoice::Localhost(path.clone());
    }
    if let Some(m) = memory {
        spec.memory = m;
    }
    spec.cpu = cpu;
    if let Some(n) = args.max_procs {
        spec.max_processes = n;
    }
    let [workspace, harness, tmp] = sizes;
    if let Some(a) = workspace {
        spec.volumes.workspace = a;
    }
    if let Some(a) = harness {
        spec.volumes.harness = a;
    }
    if let Some(a) = tmp {
        spec.volumes.tmp = a;
    }
    spec.dns = !args.no_dns;
    spec.egress = egress;
    spec.shutdown_time = shutdown_time;
    spec.shutdown_policy = match args.shutdown_policy {
        ShutdownPolicyArg::Delete => ShutdownPolicy::Delete,
        ShutdownPolicyArg::Retain => ShutdownPolicy::Retain,
    };
    spec.command = args.cmd.clone();
    Ok(spec)
}

pub fn run(
    isolation: &ContractIsolation,
    args: &KubeRenderArgs,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let mut spec = spec(
        args,
        isolation.limits(),
        args.uid.unwrap_or(PLACEHOLDER_UID),
    )?;
    // Everything but the uid is checked before the allocator may record one: bad input
    // changes nothing on disk.
    spec.render()?;
    if args.uid.is_none() {
        let contract = &spec.contract;
        spec.uid = isolation
            .uid_for(contract)?
            .ok_or_else(|| KubeError::NoUid {
                contract: contract.to_string(),
                reason: if contract.is_no_contract() {
                    "the no-contract sentinel never holds a uid".into()
                } else {
                    isolation.separation().reason.clone()
                },
            })?;
    }
    let rendered = spec.render()?;
    if args.out.json {
        let list = serde_json::json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": rendered.to_json_values()?,
        });
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&list).map_err(std::io::Error::other)?
        )?;
    } else {
        out.write_all(rendered.to_yaml()?.as_bytes())?;
    }
    Ok(0)
}
