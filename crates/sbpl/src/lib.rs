//! jaula-sbpl: the Seatbelt profile language, as far as jaula writes and checks it.
//!
//! Seatbelt profiles cannot be run on the Linux machines that build and test jaula, so the
//! profile the Seatbelt backend renders is parsed back and evaluated here instead, with
//! Seatbelt's own last-match-wins rule, and held to `Policy::decide` by the conformance
//! suite. Pure: no disk, no process, no `unsafe`.
//!
//! - [`quote`]: spelling a path as an SBPL string or as a regex that matches it exactly.
//! - [`ere`]: the subset of POSIX extended regular expressions the profiles use.
//! - [`eval`]: the profile parser and evaluator.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod ere;
pub mod eval;
pub mod quote;
