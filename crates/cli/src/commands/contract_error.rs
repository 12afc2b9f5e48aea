//! What can go wrong in `jaula contract`: one type for every contract command, so the
//! subcommands (`run`, `render`) and the dispatcher share it without importing each other.

use jaula_contract::ContractError;

/// What can go wrong in `jaula contract`.
#[derive(Debug, thiserror::Error)]
pub enum ContractCliError {
    /// The library refused.
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// The Kubernetes rendering refused.
    #[error(transparent)]
    Kube(#[from] jaula_kube::KubeError),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    /// The path of the running jaula, which the spawn executes, is unknown.
    #[error("cannot find the jaula binary to spawn (/proc/self/exe): {0}")]
    OwnBinary(std::io::Error),
    /// The cgroup descriptor could not be handed to the spawn.
    #[error("cannot pass the Contract's cgroup to its spawn (dup): {0}")]
    CgroupFd(std::io::Error),
    /// The tenant's cage could not be planned or started (names the step).
    #[error(transparent)]
    Cage(#[from] crate::error::CliError),
    /// There is no cage to start for the tenant: it is disabled, or its network mode is
    /// not one a Contract's spawn supports.
    #[error("refusing to start the tenant cage: {0}")]
    CageRefused(String),
}
