//! One module per command, and the pieces several commands share, each in a module named
//! for what it holds (`availability`, `run_args`, `cage_request`), so that no module
//! imports a sibling that imports it back (`layout_tests` checks).

// Hints printed by the Linux launch only (the macOS launch is `run_seatbelt`).
#[cfg(target_os = "linux")]
pub mod agent_hint;
pub mod availability;
// `jaula run`'s arguments, config and environment as one request for the sandbox crate.
pub mod cage_request;
// The line `run` prints when it cages with Landlock alone.
#[cfg(target_os = "linux")]
pub mod backend_notice;
#[cfg(target_os = "linux")]
pub mod cages;
pub mod check;
pub mod config_check;
#[cfg(target_os = "linux")]
pub mod contract;
// Contract mode (per-tenant uids, cgroups, the hand-over) is Linux-only: elsewhere
// `jaula contract` refuses with exit 126.
#[cfg(target_os = "linux")]
mod allow_proxy;
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
pub mod nested_sandbox;
#[cfg(target_os = "linux")]
pub mod network_notice;
#[cfg(target_os = "linux")]
pub mod none_log;
pub mod profile;
pub mod render;
pub mod run;
pub mod run_args;
#[cfg(target_os = "linux")]
pub mod run_stage;
// The line a failed command in bubblewrap's view gets when it was handed a host /tmp file.
#[cfg(target_os = "linux")]
pub mod tmp_notice;
// The macOS launch; compiled for the tests everywhere, since it runs up to its exec on any
// host with a recording executor.
#[cfg(any(target_os = "macos", test))]
pub mod run_seatbelt;
#[cfg(target_os = "linux")]
pub mod write_notice;

#[cfg(test)]
#[path = "layout_tests.rs"]
mod layout_tests;
