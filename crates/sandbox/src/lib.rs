//! jaula-sandbox: turns a [`jaula_policy::Policy`] into an enforcement.
//!
//! Every backend (`seatbelt`, `bwrap`, `landlock`) has one shape, [`backend::Backend`]:
//! render its artifact from a policy and the host's filesystem, answer for one path what
//! that artifact does, list its deviations from `decide` as data; [`backend::all`] lists
//! them. The Linux layers that act on the running process (`landlock`, `seccomp`,
//! `hardening`) live here too; this is the only crate allowed `unsafe`, each block with a
//! `// SAFETY:` comment (both enforced by its `[lints]` table). The profile language the
//! Seatbelt backend writes is `jaula-sbpl`.

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
mod limits;
pub mod network;
#[cfg(target_os = "linux")]
pub mod plan_fd;
pub mod planting;
pub mod seatbelt;
pub mod seccomp;
#[cfg(target_os = "linux")]
pub mod socket_gate;
#[cfg(target_os = "linux")]
pub mod start;
