//! Seatbelt (macOS) profile rendering.
