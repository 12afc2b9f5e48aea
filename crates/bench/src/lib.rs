//! Nothing to link: this crate exists for its criterion benchmarks (`benches/micro.rs`),
//! which `bench/run` builds and runs. See docs/benchmarks.md.
