//! jaula-sandbox: turns a [`jaula_policy::Policy`] into an enforcement.
//!
//! Renderers (`seatbelt`, `bwrap`) are pure functions of a policy. The Linux layers that
//! act on the running process (`landlock`, `seccomp`, `hardening`) live here too; this is
//! the only crate allowed `unsafe`, each block with a `// SAFETY:` comment (both enforced
//! by its `[lints]` table).

pub mod absent_roots;
pub mod backend;
pub mod bwrap;
pub mod child;
pub mod doc_tables;
pub mod exit;
pub mod hardening;
#[cfg(target_os = "linux")]
pub mod identity;
pub mod landlock;
#[cfg(target_os = "linux")]
pub mod launch;
#[cfg(target_os = "linux")]
pub mod launch_plan;
pub mod limits;
pub mod network;
#[cfg(target_os = "linux")]
pub mod plan_fd;
pub mod planting;
// moved to jaula_policy::run_argv; re-export kept for callers
pub use jaula_policy::run_argv;
pub mod seatbelt;
pub mod seccomp;
#[cfg(target_os = "linux")]
pub mod socket_gate;
