//! Seatbelt (macOS) profile rendering. Placeholder until the seatbelt branch lands.
use jaula_policy::Policy;
#[derive(Debug, thiserror::Error)]
pub enum SeatbeltError {
    #[error("placeholder")]
    Placeholder,
}
pub fn render_profile(_policy: &Policy) -> Result<String, SeatbeltError> {
    Err(SeatbeltError::Placeholder)
}
