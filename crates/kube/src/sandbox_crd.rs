//! The `Sandbox` custom resource of the kubernetes-sigs agent-sandbox project
//! (`agents.x-k8s.io/v1beta1`), typed here because k8s-openapi only carries the built-in
//! API. Only the fields jaula sets are modelled; the CRD's OpenAPI schema is the
//! reference, and the tests validate every rendered Sandbox against it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

/// `apiVersion` of the Sandbox resource.
pub const API_VERSION: &str = "agents.x-k8s.io/v1beta1";
/// `kind` of the Sandbox resource.
pub const KIND: &str = "Sandbox";

/// A Sandbox: one pod, kept (or deleted) by the agent-sandbox controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sandbox {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// Always [`KIND`].
    pub kind: String,
    /// Name, namespace, labels, annotations.
    pub metadata: ObjectMeta,
    /// What to run.
    pub spec: SandboxSpec,
}

/// `spec` of a Sandbox.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxSpec {
    /// The pod the controller creates.
    pub pod_template: PodTemplate,
    /// When the controller ends the Sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_time: Option<Time>,
    /// What happens to the Sandbox object at `shutdown_time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_policy: Option<ShutdownPolicy>,
}

/// `spec.shutdownPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ShutdownPolicy {
    /// Delete the Sandbox (and so its pod and emptyDir volumes): the wipe.
    Delete,
    /// Keep the Sandbox object after its pod is gone.
    Retain,
}

/// `spec.podTemplate`: the CRD allows only labels and annotations in its metadata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodTemplate {
    /// Labels and annotations of the pod.
    #[serde(default, skip_serializing_if = "PodMetadata::is_empty")]
    pub metadata: PodMetadata,
    /// The pod spec.
    pub spec: PodSpec,
}

/// `spec.podTemplate.metadata`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodMetadata {
    /// Pod labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Pod annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl PodMetadata {
    fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty()
    }
}
