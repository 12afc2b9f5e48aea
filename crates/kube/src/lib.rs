//! jaula on Kubernetes: a Contract's cage rendered as typed Kubernetes objects (the
//! k8s-openapi crate, API version 1.33), and jaula's seccomp deny-list exported as an
//! OCI seccomp profile for the container runtime.
//!
//! Pure: no cluster access, no filesystem, no process spawning. The CLI
//! (`jaula contract render kubernetes`, `jaula render seccomp-json`) gathers the uid and
//! limits from `jaula_contract` and prints what this crate returns.
#![deny(missing_docs)]

pub mod egress;
pub mod error;
pub mod names;
pub mod quantity;
pub mod render;
pub mod sandbox_crd;
pub mod seccomp_oci;

pub use egress::{EgressRule, Ports, Protocol};
pub use error::{KubeError, Result};
pub use quantity::Amount;
pub use render::{
    parse_time, Format, NamespaceMode, RenderSpec, Rendered, SeccompChoice, VolumeSizes, Workload,
};
pub use sandbox_crd::{Sandbox, ShutdownPolicy};

/// The Kubernetes minor the objects are typed for (k8s-openapi feature `v1_33`).
pub const KUBERNETES_VERSION: &str = "1.33";
