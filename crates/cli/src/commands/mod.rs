//! One module per command.

pub mod access_token;

// Hints printed by the Linux launch only (the macOS launch is `run_seatbelt`).
#[cfg(target_os = "linux")]
pub mod agent_hint;
pub mod check;
pub mod config_check;
#[cfg(target_os = "linux")]
pub mod contract;
// Contract mode (per-tenant uids, cgroups, the hand-over) is Linux-only: elsewhere
// `jaula contract` refuses with exit 126.
#[cfg(not(target_os = "linux"))]
#[path = "contract_unsupported.rs"]
pub mod contract;
#[cfg(target_os = "linux")]
pub mod contract_render;
#[cfg(target_os = "linux")]
pub mod contract_run;
#[cfg(target_os = "linux")]
pub mod contract_wiring;
pub mod explain;
pub mod line;
#[cfg(target_os = "linux")]
pub mod network_notice;
#[cfg(target_os = "linux")]
pub mod none_log;
pub mod profile;
pub mod render;
pub mod run;
#[cfg(target_os = "linux")]
pub mod run_stage;
// The macOS launch; compiled for the tests everywhere, since it runs up to its exec on any
// host with a recording executor.
#[cfg(any(target_os = "macos", test))]
pub mod run_seatbelt;
