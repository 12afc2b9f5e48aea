//! One module per command.

pub mod check;
pub mod explain;
pub mod line;
pub mod profile;
pub mod render;
pub mod backends;
