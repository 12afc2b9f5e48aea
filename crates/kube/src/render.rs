//! A Contract's cage as Kubernetes objects: a Namespace (one per Contract, or a shared one
//! the runner owns), a default-deny `NetworkPolicy` with the Contract's allowed egress,
//! and the Pod, or an agent-sandbox `Sandbox` wrapping the same pod spec.
//!
//! Two layers hold inside the pod. The cluster enforces identity (the Contract's uid and
//! gid, optionally a user namespace), no privilege (no capabilities, no escalation), a
//! read-only image, a seccomp profile, resource limits and the network policy. jaula
//! itself is the container's entrypoint: `jaula run --backend landlock --tenant` applies
//! the Contract's file policy with Landlock, its own seccomp deny-list and process
//! hardening before exec'ing the agent. Landlock and seccomp need no privilege, so the
//! cage works in a `restricted` pod exactly as it does on one machine.
//!
//! Layout inside the pod mirrors a Contract's tree on a runner: `HOME` is
//! [`CONTRACT_HOME`] (on the read-only root, as the tenant cage leaves home unwritable),
//! with the workspace, the harness config root and `TMPDIR` as size-limited `emptyDir`
//! volumes beneath it.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use jaula_contract::{ContractId, RuntimeKind, WorkRecordId};
use jaula_policy::limits::ContractLimits;
use jaula_policy::run_argv::RunArgv;
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, Namespace, Pod, PodSecurityContext,
    PodSpec, ResourceRequirements, SeccompProfile, SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

use crate::egress::EgressRule;
use crate::error::{KubeError, Result};
use crate::names::{is_dns1123_label, is_dns1123_subdomain, is_label_value};
use crate::quantity::Amount;
use crate::sandbox_crd::{self, PodMetadata, PodTemplate, Sandbox, SandboxSpec, ShutdownPolicy};

/// `HOME` inside the pod: the Contract's tree, as on a runner.
pub const CONTRACT_HOME: &str = "/contract";
/// Where the image carries jaula, unless told otherwise.
pub const DEFAULT_JAULA_PATH: &str = "/usr/local/bin/jaula";
/// The image when none is given: a placeholder name a runner is expected to override.
pub const DEFAULT_IMAGE: &str = "jaula-agent:latest";
/// The agent container's name.
pub const CONTAINER_NAME: &str = "agent";
/// A pod's user namespace maps this many ids unless the kubelet is configured for more
/// (KubeletConfiguration `userNamespaces.idsPerPod`): container ids 0..65535.
pub const DEFAULT_IDS_PER_POD: u32 = 65_536;
/// The Pod Security Standards version the per-Contract namespace enforces: the same
/// Kubernetes minor the objects are typed for.
pub const PSS_VERSION: &str = "v1.33";

/// Label and annotation keys.
pub mod keys {
    /// Set on every object jaula renders.
    pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
    /// The Contract id (label when it is a valid label value; always an annotation).
    pub const CONTRACT: &str = "jaula/contract";
    /// The work record id.
    pub const WORK_RECORD: &str = "jaula/work-record";
    /// The runtime kind.
    pub const RUNTIME: &str = "jaula/runtime";
    /// The uid from jaula's allocator.
    pub const UID: &str = "jaula/uid";
}

/// Print a bare Pod or an agent-sandbox Sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `v1/Pod`.
    Pod,
    /// `agents.x-k8s.io/v1beta1/Sandbox` wrapping the same pod spec.
    Sandbox,
}

/// Where the Contract's objects live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamespaceMode {
    /// `jaula-<contract>`, rendered too, labelled to enforce Pod Security `restricted`.
    PerContract,
    /// A namespace the runner owns; not rendered. Pods are then told apart by the
    /// `jaula/contract` label, which the NetworkPolicy selects on.
    Shared(String),
}

/// The seccomp profile the container runtime applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeccompChoice {
    /// The runtime's default allow-list.
    RuntimeDefault,
    /// A profile file on the node, relative to the kubelet's seccomp root
    /// (`/var/lib/kubelet/seccomp`), e.g. jaula's own from `jaula render seccomp-json`.
    Localhost(String),
}

/// Sizes of the pod's `emptyDir` volumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeSizes {
    /// The workspace (the checkout).
    pub workspace: Amount,
    /// The harness config root (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`).
    pub harness: Amount,
    /// `TMPDIR`.
    pub tmp: Amount,
}

impl Default for VolumeSizes {
    fn default() -> VolumeSizes {
        VolumeSizes {
            workspace: Amount::gibibytes(10),
            harness: Amount::gibibytes(1),
            tmp: Amount::gibibytes(2),
        }
    }
}

/// Everything a rendering needs. Build it with [`RenderSpec::new`], then adjust fields.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSpec {
    /// The Contract.
    pub contract: ContractId,
    /// The work record the pod works on.
    pub work_record: WorkRecordId,
    /// The harness.
    pub runtime: RuntimeKind,
    /// The Contract's uid (and gid), from jaula's allocator or given.
    pub uid: u32,
    /// The container image; it must carry jaula at [`RenderSpec::jaula_path`].
    pub image: String,
    /// Where jaula is inside the image.
    pub jaula_path: String,
    /// Pod or Sandbox.
    pub format: Format,
    /// Per-Contract or shared namespace.
    pub namespace: NamespaceMode,
    /// `hostUsers` (false: the pod gets its own user namespace).
    pub host_users: bool,
    /// How many ids a pod's user namespace maps (see [`DEFAULT_IDS_PER_POD`]).
    pub ids_per_pod: u32,
    /// `runtimeClassName` (gVisor, Kata ...).
    pub runtime_class: Option<String>,
    /// The runtime's seccomp profile.
    pub seccomp: SeccompChoice,
    /// Memory limit (the cgroup's, and `RLIMIT_DATA` for each process via `jaula run`).
    pub memory: Amount,
    /// CPU limit, when any.
    pub cpu: Option<Amount>,
    /// `RLIMIT_NPROC` via `jaula run`.
    pub max_processes: u64,
    /// emptyDir sizes.
    pub volumes: VolumeSizes,
    /// Allow DNS to the cluster's kube-dns.
    pub dns: bool,
    /// Allowed destinations besides DNS.
    pub egress: Vec<EgressRule>,
    /// `shutdownTime` of a Sandbox.
    pub shutdown_time: Option<Time>,
    /// `shutdownPolicy` of a Sandbox (used with `shutdown_time`).
    pub shutdown_policy: ShutdownPolicy,
    /// The agent's command; the runtime kind's name when empty.
    pub command: Vec<String>,
}

impl RenderSpec {
    /// Defaults: a Pod in a per-Contract namespace, own user namespace, RuntimeDefault
    /// seccomp, DNS only, the Contract's limits, the runtime kind as the command.
    pub fn new(
        contract: ContractId,
        work_record: WorkRecordId,
        runtime: RuntimeKind,
        uid: u32,
        limits: ContractLimits,
    ) -> Result<RenderSpec> {
        let memory =
            Amount::from_bytes(limits.max_memory_bytes).ok_or(KubeError::InvalidQuantity {
                what: "memory limit",
                value: "0".into(),
                reason: "must be positive",
            })?;
        Ok(RenderSpec {
            contract,
            work_record,
            runtime,
            uid,
            image: DEFAULT_IMAGE.into(),
            jaula_path: DEFAULT_JAULA_PATH.into(),
            format: Format::Pod,
            namespace: NamespaceMode::PerContract,
            host_users: false,
            ids_per_pod: DEFAULT_IDS_PER_POD,
            runtime_class: None,
            seccomp: SeccompChoice::RuntimeDefault,
            memory,
            cpu: None,
            max_processes: limits.max_processes,
            volumes: VolumeSizes::default(),
            dns: true,
            egress: Vec::new(),
            shutdown_time: None,
            shutdown_policy: ShutdownPolicy::Delete,
            command: Vec::new(),
        })
    }

    /// `{CONTRACT_HOME}/{work_record}`.
    pub fn workspace_path(&self) -> String {
        format!("{CONTRACT_HOME}/{}", self.work_record)
    }

    /// `{CONTRACT_HOME}/harness/{runtime}`.
    pub fn harness_path(&self) -> String {
        format!("{CONTRACT_HOME}/harness/{}", self.runtime)
    }

    /// `{CONTRACT_HOME}/tmp`.
    pub fn tmp_path(&self) -> String {
        format!("{CONTRACT_HOME}/tmp")
    }

    /// The namespace the objects go in.
    pub fn namespace_name(&self) -> Result<String> {
        match &self.namespace {
            NamespaceMode::Shared(name) => {
                if is_dns1123_label(name) {
                    Ok(name.clone())
                } else {
                    Err(KubeError::InvalidName {
                        what: "namespace",
                        value: name.clone(),
                        reason: "must be a lowercase RFC 1123 label of at most 63 characters"
                            .into(),
                    })
                }
            }
            NamespaceMode::PerContract => {
                let name = format!("jaula-{}", self.contract);
                if is_dns1123_label(&name) {
                    Ok(name)
                } else {
                    // Lowercasing or truncating would map two Contracts onto one namespace.
                    Err(KubeError::InvalidName {
                        what: "per-Contract namespace",
                        value: name,
                        reason: "the contract id must be lowercase letters, digits and '-' \
                                 (at most 57 characters) to name its namespace; pass \
                                 --namespace to use a shared one"
                            .into(),
                    })
                }
            }
        }
    }

    fn workload_name(&self) -> Result<String> {
        let name = format!("jaula-{}", self.work_record);
        if is_dns1123_subdomain(&name) {
            Ok(name)
        } else {
            Err(KubeError::InvalidName {
                what: "pod name",
                value: name,
                reason: "the work record id must be lowercase letters, digits, '-' and '.' \
                         to name a pod"
                    .into(),
            })
        }
    }

    fn check(&self) -> Result<()> {
        if self.uid == 0 {
            return Err(KubeError::InvalidUid {
                uid: 0,
                reason: "the pod must run as non-root".into(),
            });
        }
        if !self.host_users && self.uid >= self.ids_per_pod {
            return Err(KubeError::InvalidUid {
                uid: self.uid,
                reason: format!(
                    "with hostUsers: false the pod's user namespace maps only ids \
                     0..{} (kubelet userNamespaces.idsPerPod); give Contracts a uid range \
                     below it (--uid-range 10000-65535), raise --ids-per-pod to match the \
                     kubelet, or use --host-users",
                    self.ids_per_pod - 1
                ),
            });
        }
        if self.image.is_empty() || self.image.chars().any(|c| c.is_whitespace()) {
            return Err(KubeError::InvalidSetting {
                what: "image",
                value: self.image.clone(),
                reason: "must be a non-empty image reference without whitespace",
            });
        }
        if !self.jaula_path.starts_with('/') {
            return Err(KubeError::InvalidSetting {
                what: "jaula path",
                value: self.jaula_path.clone(),
                reason: "must be absolute: the container's PATH is the image's choice",
            });
        }
        if let Some(rc) = &self.runtime_class {
            if !is_dns1123_subdomain(rc) {
                return Err(KubeError::InvalidName {
                    what: "runtime class",
                    value: rc.clone(),
                    reason: "must be a lowercase RFC 1123 subdomain (e.g. gvisor, kata)".into(),
                });
            }
        }
        if let SeccompChoice::Localhost(path) = &self.seccomp {
            let p = Path::new(path);
            if path.is_empty()
                || p.is_absolute()
                || p.components().any(|c| !matches!(c, Component::Normal(_)))
            {
                return Err(KubeError::InvalidSetting {
                    what: "localhost seccomp profile",
                    value: path.clone(),
                    reason: "must be a relative path below the kubelet's seccomp root, \
                             without '..' (e.g. profiles/jaula.json)",
                });
            }
        }
        if self.max_processes == 0 {
            return Err(KubeError::InvalidSetting {
                what: "max processes",
                value: "0".into(),
                reason: "must be positive",
            });
        }
        if self.shutdown_time.is_some() && self.format == Format::Pod {
            return Err(KubeError::InvalidSetting {
                what: "shutdown time",
                value: self
                    .shutdown_time
                    .as_ref()
                    .map(|t| t.0.to_string())
                    .unwrap_or_default(),
                reason: "only the Sandbox form has shutdownTime (--format sandbox)",
            });
        }
        if let Some(cpu) = &self.cpu {
            cpu.check_millis("cpu limit")?;
        }
        self.memory.bytes("memory limit")?;
        Ok(())
    }

    fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::from([(keys::MANAGED_BY.to_string(), "jaula".to_string())]);
        for (key, value) in [
            (keys::CONTRACT, self.contract.as_str()),
            (keys::WORK_RECORD, self.work_record.as_str()),
            (keys::RUNTIME, self.runtime.as_str()),
        ] {
            if is_label_value(value) {
                labels.insert(key.to_string(), value.to_string());
            }
        }
        labels
    }

    fn annotations(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (keys::CONTRACT.to_string(), self.contract.to_string()),
            (keys::WORK_RECORD.to_string(), self.work_record.to_string()),
            (keys::RUNTIME.to_string(), self.runtime.to_string()),
            (keys::UID.to_string(), self.uid.to_string()),
        ])
    }

    fn seccomp_profile(&self) -> SeccompProfile {
        match &self.seccomp {
            SeccompChoice::RuntimeDefault => SeccompProfile {
                type_: "RuntimeDefault".into(),
                localhost_profile: None,
            },
            SeccompChoice::Localhost(path) => SeccompProfile {
                type_: "Localhost".into(),
                localhost_profile: Some(path.clone()),
            },
        }
    }

    /// The container's argv: `jaula run` with the Contract's tenant policy, then the agent.
    pub fn container_command(&self) -> Vec<String> {
        // check() has verified the memory limit is whole bytes; were it not, RLIMIT_DATA 0
        // makes the spawn refuse to start rather than run without a ceiling.
        let max_data = self.memory.bytes("memory limit").unwrap_or(0);
        let run = RunArgv {
            backend: Some("landlock"),
            tenant: true,
            repo: Some(self.workspace_path().into()),
            home: Some(CONTRACT_HOME.into()),
            allow_write: vec![self.harness_path().into(), self.tmp_path().into()],
            max_processes: Some(self.max_processes),
            max_data_bytes: Some(max_data),
            ..RunArgv::default()
        };
        let agent = if self.command.is_empty() {
            vec![self.runtime.to_string()]
        } else {
            self.command.clone()
        };
        // Every part went in as a String, so every part comes out as one.
        run.argv(self.jaula_path.as_str(), agent)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn env(&self) -> Vec<EnvVar> {
        let var = |name: &str, value: String| EnvVar {
            name: name.into(),
            value: Some(value),
            value_from: None,
        };
        let mut env = vec![
            var("HOME", CONTRACT_HOME.into()),
            var("TMPDIR", self.tmp_path()),
        ];
        if let Some(name) = self.runtime.config_env_var() {
            env.push(var(name, self.harness_path()));
        }
        env
    }

    /// The pod spec every form shares.
    pub fn pod_spec(&self) -> Result<PodSpec> {
        self.check()?;
        let uid = i64::from(self.uid);
        let mut limits = BTreeMap::from([("memory".to_string(), self.memory.quantity())]);
        if let Some(cpu) = &self.cpu {
            limits.insert("cpu".into(), cpu.quantity());
        }
        let volume = |name: &str, size: &Amount| Volume {
            name: name.into(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: None,
                size_limit: Some(size.quantity()),
            }),
            ..Volume::default()
        };
        let mount = |name: &str, path: String| VolumeMount {
            name: name.into(),
            mount_path: path,
            ..VolumeMount::default()
        };
        let container = Container {
            name: CONTAINER_NAME.into(),
            image: Some(self.image.clone()),
            command: Some(self.container_command()),
            working_dir: Some(self.workspace_path()),
            env: Some(self.env()),
            resources: Some(ResourceRequirements {
                // requests = limits: the scheduler reserves what the Contract may use.
                requests: Some(limits.clone()),
                limits: Some(limits),
                claims: None,
            }),
            security_context: Some(SecurityContext {
                allow_privilege_escalation: Some(false),
                capabilities: Some(Capabilities {
                    add: None,
                    drop: Some(vec!["ALL".into()]),
                }),
                privileged: Some(false),
                read_only_root_filesystem: Some(true),
                run_as_non_root: Some(true),
                run_as_user: Some(uid),
                run_as_group: Some(uid),
                seccomp_profile: Some(self.seccomp_profile()),
                ..SecurityContext::default()
            }),
            volume_mounts: Some(vec![
                mount("workspace", self.workspace_path()),
                mount("harness", self.harness_path()),
                mount("tmp", self.tmp_path()),
            ]),
            ..Container::default()
        };
        Ok(PodSpec {
            automount_service_account_token: Some(false),
            enable_service_links: Some(false),
            host_users: Some(self.host_users),
            restart_policy: Some("Never".into()),
            runtime_class_name: self.runtime_class.clone(),
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                run_as_user: Some(uid),
                run_as_group: Some(uid),
                fs_group: Some(uid),
                seccomp_profile: Some(self.seccomp_profile()),
                ..PodSecurityContext::default()
            }),
            containers: vec![container],
            volumes: Some(vec![
                volume("workspace", &self.volumes.workspace),
                volume("harness", &self.volumes.harness),
                volume("tmp", &self.volumes.tmp),
            ]),
            ..PodSpec::default()
        })
    }

    fn network_policy(&self, namespace: &str) -> Result<NetworkPolicy> {
        let (name, selector) = match &self.namespace {
            // The namespace holds only this Contract's pods: select them all.
            NamespaceMode::PerContract => ("jaula-egress".to_string(), LabelSelector::default()),
            NamespaceMode::Shared(_) => {
                let name = format!("jaula-egress-{}", self.contract);
                if !is_dns1123_subdomain(&name) || !is_label_value(self.contract.as_str()) {
                    return Err(KubeError::InvalidName {
                        what: "NetworkPolicy for a shared namespace",
                        value: name,
                        reason: "in a shared namespace the contract id must be lowercase \
                                 letters, digits and '-' (a label value and a name)"
                            .into(),
                    });
                }
                (
                    name,
                    LabelSelector {
                        match_labels: Some(BTreeMap::from([(
                            keys::CONTRACT.to_string(),
                            self.contract.to_string(),
                        )])),
                        match_expressions: None,
                    },
                )
            }
        };
        let mut egress = Vec::new();
        if self.dns {
            let port = |protocol: &str| NetworkPolicyPort {
                port: Some(IntOrString::Int(53)),
                protocol: Some(protocol.into()),
                end_port: None,
            };
            egress.push(NetworkPolicyEgressRule {
                to: Some(vec![NetworkPolicyPeer {
                    namespace_selector: Some(LabelSelector {
                        match_labels: Some(BTreeMap::from([(
                            "kubernetes.io/metadata.name".to_string(),
                            "kube-system".to_string(),
                        )])),
                        match_expressions: None,
                    }),
                    pod_selector: Some(LabelSelector {
                        match_labels: Some(BTreeMap::from([(
                            "k8s-app".to_string(),
                            "kube-dns".to_string(),
                        )])),
                        match_expressions: None,
                    }),
                    ip_block: None,
                }]),
                ports: Some(vec![port("UDP"), port("TCP")]),
            });
        }
        for rule in &self.egress {
            egress.push(NetworkPolicyEgressRule {
                to: Some(vec![NetworkPolicyPeer {
                    ip_block: Some(IPBlock {
                        cidr: rule.cidr.clone(),
                        except: None,
                    }),
                    ..NetworkPolicyPeer::default()
                }]),
                ports: rule.ports.map(|p| {
                    vec![NetworkPolicyPort {
                        port: Some(IntOrString::Int(i32::from(p.first))),
                        end_port: p.last.map(i32::from),
                        protocol: Some(p.protocol.as_str().into()),
                    }]
                }),
            });
        }
        let mut metadata = self.meta(name, namespace);
        metadata.annotations = Some(BTreeMap::from([(
            keys::CONTRACT.to_string(),
            self.contract.to_string(),
        )]));
        // One policy serves every work record of the Contract.
        if let Some(labels) = metadata.labels.as_mut() {
            labels.remove(keys::WORK_RECORD);
        }
        Ok(NetworkPolicy {
            metadata,
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(selector),
                // Ingress listed with no rule: nothing may connect to an agent either.
                policy_types: Some(vec!["Ingress".into(), "Egress".into()]),
                // An empty list, not an absent one: "allow nothing" must survive
                // serialisation when DNS is off and no rule is configured.
                egress: Some(egress),
                ingress: None,
            }),
        })
    }

    fn meta(&self, name: String, namespace: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_string()),
            labels: Some(self.labels()),
            annotations: Some(self.annotations()),
            ..ObjectMeta::default()
        }
    }

    /// Render the objects.
    pub fn render(&self) -> Result<Rendered> {
        let namespace = self.namespace_name()?;
        let name = self.workload_name()?;
        let spec = self.pod_spec()?;
        let network_policy = self.network_policy(&namespace)?;
        let namespace_object = match self.namespace {
            NamespaceMode::Shared(_) => None,
            NamespaceMode::PerContract => {
                let mut labels = BTreeMap::from([
                    (keys::MANAGED_BY.to_string(), "jaula".to_string()),
                    (
                        "pod-security.kubernetes.io/enforce".to_string(),
                        "restricted".to_string(),
                    ),
                    (
                        "pod-security.kubernetes.io/enforce-version".to_string(),
                        PSS_VERSION.to_string(),
                    ),
                ]);
                if is_label_value(self.contract.as_str()) {
                    labels.insert(keys::CONTRACT.into(), self.contract.to_string());
                }
                Some(Namespace {
                    metadata: ObjectMeta {
                        name: Some(namespace.clone()),
                        labels: Some(labels),
                        annotations: Some(BTreeMap::from([(
                            keys::CONTRACT.to_string(),
                            self.contract.to_string(),
                        )])),
                        ..ObjectMeta::default()
                    },
                    ..Namespace::default()
                })
            }
        };
        let workload = match self.format {
            Format::Pod => Workload::Pod(Box::new(Pod {
                metadata: self.meta(name, &namespace),
                spec: Some(spec),
                status: None,
            })),
            Format::Sandbox => Workload::Sandbox(Box::new(Sandbox {
                api_version: sandbox_crd::API_VERSION.into(),
                kind: sandbox_crd::KIND.into(),
                metadata: self.meta(name, &namespace),
                spec: SandboxSpec {
                    pod_template: PodTemplate {
                        metadata: PodMetadata {
                            labels: self.labels(),
                            annotations: self.annotations(),
                        },
                        spec,
                    },
                    shutdown_policy: self.shutdown_time.as_ref().map(|_| self.shutdown_policy),
                    shutdown_time: self.shutdown_time.clone(),
                },
            })),
        };
        Ok(Rendered {
            namespace: namespace_object,
            network_policy,
            workload,
        })
    }
}

/// Parse an RFC 3339 timestamp (`2030-01-01T00:00:00Z`) for a Sandbox's `shutdownTime`.
pub fn parse_time(text: &str) -> Result<Time> {
    text.parse::<k8s_openapi::jiff::Timestamp>()
        .map(Time)
        .map_err(|_| KubeError::InvalidSetting {
            what: "shutdown time",
            value: text.to_string(),
            reason: "must be an RFC 3339 timestamp with a zone, e.g. 2030-01-01T00:00:00Z",
        })
}

/// The pod, in the chosen form.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// A bare Pod.
    Pod(Box<Pod>),
    /// A Sandbox.
    Sandbox(Box<Sandbox>),
}

/// The rendered objects, in the order they must be applied: the namespace, then the
/// network policy, then the pod, so the pod never runs before its egress is closed.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The per-Contract namespace (none when shared).
    pub namespace: Option<Namespace>,
    /// The default-deny policy with the allowed egress.
    pub network_policy: NetworkPolicy,
    /// The pod or Sandbox.
    pub workload: Workload,
}

impl Rendered {
    /// The pod spec, whichever the form.
    pub fn pod_spec(&self) -> Option<&PodSpec> {
        match &self.workload {
            Workload::Pod(pod) => pod.spec.as_ref(),
            Workload::Sandbox(sb) => Some(&sb.spec.pod_template.spec),
        }
    }

    /// Each object as JSON, in apply order.
    pub fn to_json_values(&self) -> Result<Vec<serde_json::Value>> {
        fn value(v: &impl Serialize) -> Result<serde_json::Value> {
            serde_json::to_value(v).map_err(|e| KubeError::Serialize(e.to_string()))
        }
        let mut out = Vec::new();
        if let Some(ns) = &self.namespace {
            out.push(value(ns)?);
        }
        out.push(value(&self.network_policy)?);
        out.push(match &self.workload {
            Workload::Pod(pod) => value(pod)?,
            Workload::Sandbox(sb) => value(sb)?,
        });
        Ok(out)
    }

    /// A multi-document YAML stream, in apply order.
    pub fn to_yaml(&self) -> Result<String> {
        fn doc(out: &mut String, v: &impl Serialize) -> Result<()> {
            out.push_str("---\n");
            out.push_str(
                &serde_norway::to_string(v).map_err(|e| KubeError::Serialize(e.to_string()))?,
            );
            Ok(())
        }
        let mut out = String::new();
        if let Some(ns) = &self.namespace {
            doc(&mut out, ns)?;
        }
        doc(&mut out, &self.network_policy)?;
        match &self.workload {
            Workload::Pod(pod) => doc(&mut out, pod)?,
            Workload::Sandbox(sb) => doc(&mut out, sb)?,
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
