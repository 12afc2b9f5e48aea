//! jaula-sandbox: turns a [`jaula_policy::Policy`] into an enforcement. The pure model
//! (resolving a policy, `decide`) is `jaula-policy`; this crate's public modules are what
//! the CLI, the benchmarks and its own integration tests call, by stage:
//!
//! - **render**, the backends, one shape (`backend`; `backends::all` lists them): `seatbelt`
//!   (a macOS profile), `bwrap` (a mount view's argv, and its probe), `landlock` (a plan
//!   of rules, and `landlock::restrict_self` to enforce it). Each answers for one path
//!   what its artifact does and lists its deviations from `decide`; `doc_tables` prints
//!   those lists for `docs/security.md`.
//! - **plan** (Linux): `launch_plan`, the launch resolved once, as data; `plan_fd`, that
//!   plan handed to the stage on a sealed descriptor.
//! - **ask and start**: `cage`, one shape per platform: a typed `CageRequest` in,
//!   `cage::prepare` (the cage chosen, or none with the reason) and `cage::start` (where
//!   it ran, or what the caller takes over); `cage::linux` and `cage::macos` behind it.
//! - **launch**: `start` (Linux: where a plan runs, in process or under bubblewrap, and
//!   the stage that runs it there); `launch` (Linux: the one ordered sequence that confines
//!   this process and `exec`s); `child` (waiting for the cage, signals forwarded); `exit`
//!   (ending as the command ended).
//! - **the layers** other crates call directly: `seccomp`, `hardening`, `identity` (a
//!   Contract's uid and gid), `call_gate` (host unix sockets by permission only, named files by the planting guard),
//!   `network` (the namespace, the DNS stub, the `none` log); and around a run,
//!   `absent_roots` (writable roots created before caging), `planting` (what changed at
//!   protected paths while it ran).
//!
//! Everything else is `pub(crate)`. This is the only crate allowed `unsafe`, each block
//! with a `// SAFETY:` comment (both enforced by its `[lints]` table). The profile language
//! the Seatbelt backend writes is `jaula-sbpl`.

// Render: the backends.
pub mod backend;
pub mod backends;
pub mod bwrap;
pub mod doc_tables;
pub mod landlock;
pub mod seatbelt;
// The window's own temporary directories, for bubblewrap's view and for Seatbelt.
pub mod window_tmp;

// Ask for a cage and start it: one shape per platform.
pub mod cage;

// Plan.
#[cfg(target_os = "linux")]
pub mod launch_plan;
#[cfg(target_os = "linux")]
pub mod plan_fd;

// Launch.
pub mod child;
pub mod exit;
#[cfg(target_os = "linux")]
pub mod launch;
#[cfg(target_os = "linux")]
pub mod start;

// The layers, and what runs around a cage.
pub mod absent_roots;
#[cfg(target_os = "linux")]
pub mod call_gate;
pub mod hardening;
#[cfg(target_os = "linux")]
pub mod identity;
mod limits;
pub mod network;
pub mod planting;
pub mod seccomp;
// What `jaula ps` and `jaula stop` read: one record per live cage.
#[cfg(target_os = "linux")]
pub mod cage_record;

#[cfg(test)]
mod test_support;
