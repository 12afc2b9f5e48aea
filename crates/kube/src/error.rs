//! The one error type of the crate. Every variant names the value that caused it, so the
//! CLI can render it once, plainly.

use jaula_contract::ContractError;

/// Why a Contract could not be rendered for Kubernetes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KubeError {
    /// An id, kind or uid the contract crate refused.
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// A resource amount that is not a Kubernetes quantity, or not one this field takes.
    #[error("{what} {value:?} is not a valid quantity: {reason}")]
    InvalidQuantity {
        /// Which limit.
        what: &'static str,
        /// The text as given.
        value: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A name the Kubernetes API would refuse (namespace, pod, runtime class ...).
    #[error("{what} {value:?} is not a valid Kubernetes name: {reason}")]
    InvalidName {
        /// Which name.
        what: &'static str,
        /// The name as given or derived.
        value: String,
        /// Why it was refused, and what to do about it.
        reason: String,
    },
    /// An egress rule that does not parse.
    #[error("egress rule {value:?} is invalid: {reason}")]
    InvalidEgress {
        /// The rule as given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// The pod would run as root, or as a uid the pod's user namespace cannot map.
    #[error("uid {uid} cannot be the Contract's pod uid: {reason}")]
    InvalidUid {
        /// The uid.
        uid: u32,
        /// Why it was refused, and what to do about it.
        reason: String,
    },
    /// The Contract holds no uid (no-contract sentinel, or a runner that cannot separate
    /// uids), so there is no runAsUser to render.
    #[error(
        "contract {contract:?} has no uid here ({reason}); pass --uid to render with a given uid"
    )]
    NoUid {
        /// The Contract.
        contract: String,
        /// Why there is none.
        reason: String,
    },
    /// Any other setting that cannot be rendered.
    #[error("{what} {value:?} is invalid: {reason}")]
    InvalidSetting {
        /// Which setting.
        what: &'static str,
        /// The value as given.
        value: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// Serialising the objects failed (never expected for these types).
    #[error("cannot serialise the rendered objects: {0}")]
    Serialize(String),
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, KubeError>;
