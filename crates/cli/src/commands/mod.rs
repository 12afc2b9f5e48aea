//! One module per command.

pub mod agent_hint;
pub mod backends;
pub mod check;
pub mod config_check;
pub mod contract;
pub mod contract_render;
pub mod contract_run;
pub mod contract_wiring;
pub mod explain;
pub mod line;
pub mod network_notice;
pub mod profile;
pub mod render;
pub mod run;
