//! bubblewrap argv rendering. Placeholder until the bwrap branch lands.
#[derive(Debug, thiserror::Error)]
pub enum BwrapError {
    #[error("placeholder")]
    Placeholder,
}
