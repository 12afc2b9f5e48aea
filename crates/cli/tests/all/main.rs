//! The CLI's integration tests, one module a suite, linked into ONE test binary: each
//! `tests/*.rs` used to be a binary of its own, linked separately, which cost CI more time
//! than running them. A test's name is `suite::test` (`cargo test -p jaula --test all
//! escape::` runs one suite).
//!
//! They share one process now, so a suite must not change process-wide state (the
//! environment, the working directory, signal dispositions) and a host directory two
//! suites use (`/run/user/UID`) is shared through `jaula_testkit::SharedDir`. A child that
//! re-runs one test of this binary names it with `jaula_testkit::this_test!`.

mod common;

mod agents_smoke;
mod bwrap_view;
mod cage_repos;
#[cfg(target_os = "linux")]
mod city;
mod cli;
mod conformance;
mod contract_reach_live;
mod escape_planting;
mod escape_sockets;
mod exit_codes;
mod first_run;
mod kube_render;
#[cfg(target_os = "linux")]
mod lifetime;
mod network;
mod network_notice;
mod network_steer;
mod network_upstream;
mod planting;
// Python drives the gate's calls; the owner's git judges. Linux layers only.
#[cfg(target_os = "linux")]
mod planting_property;
mod runtime_entries;
mod seed_compat;
mod socket_gate;
mod workloads;

// Contract mode and its launch plan are Linux-only.
#[cfg(target_os = "linux")]
mod contract_layout_live;
#[cfg(target_os = "linux")]
mod contract_live;
// Linux layers (or Linux-only syscalls and flags): nothing to build elsewhere.
#[cfg(target_os = "linux")]
mod escape;
// `/run/user/UID` is Linux's runtime directory.
#[cfg(target_os = "linux")]
mod escape_runtime_dir;
// What jaula says when a Linux cage loses a layer, refuses a repo, or hides a file.
#[cfg(target_os = "linux")]
mod refusals;
// The launch plan hands the Linux launch between its stages.
#[cfg(target_os = "linux")]
mod launch_plan;
// What a launcher's line carries, the token hand-over and socket variables: Linux launch.
#[cfg(target_os = "linux")]
mod launcher;
// No crate has an import circle between its modules.
mod layout;
// Each launch sees the home as it is when it starts (nothing cached across launches).
#[cfg(target_os = "linux")]
mod launch_fresh;
// The gate's supervisor counts refused namespaces: Linux layers.
#[cfg(target_os = "linux")]
mod nested_sandbox;
// The launcher's prefix and the PIDs its Linux backends give a window.
#[cfg(target_os = "linux")]
mod line_pids;
// The DNS stub lives in the cage's Linux network namespace.
#[cfg(target_os = "linux")]
mod network_dns;
// Linux layers (or Linux-only syscalls and flags): nothing to build elsewhere.
#[cfg(target_os = "linux")]
mod seccomp_equivalence;
// prlimit64, pidfd and the Landlock signal scope are Linux's.
#[cfg(target_os = "linux")]
mod supervisor_reach;
// Caged peers: sock_diag and the cage records are Linux's.
#[cfg(target_os = "linux")]
mod peers;
// Leases, prlimit and /proc: Linux only.
#[cfg(target_os = "linux")]
mod supervisor_stall;
// The socket gate's supervisor sees the refused writes: Linux only.
#[cfg(target_os = "linux")]
mod write_refusals;
