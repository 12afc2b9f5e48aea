#!/usr/bin/env bash
# Network proxy throughput and per-connection latency, direct vs through jaula's proxy,
# in one run on loopback (crates/proxy/examples/bench.rs, release build). Writes
# bench/results/network.json; docs/benchmarks.md ("Network proxy") reports it.
#
# Not a test and never run by CI: timings belong to a machine, not to a pass/fail.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
cargo run --quiet --release -p jaula-proxy --example bench | tee bench/results/network.json
