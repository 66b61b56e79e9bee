#!/usr/bin/env bash
# Builds the agent-seer binary (pass --release for the optimised one) with the features
# `cargo test` and `cargo bench` build its dependencies with, so that it shares their builds.
# A bare `cargo build --bin agent-seer` resolves features without the dev-dependencies, which
# turn on more (syn's `full`, zerocopy's `derive`, bitflags' `std`, …): about 60 crates, the
# library among them, would be compiled a second time beside the tests' (7 CPU-minutes of a
# release build on the reference machine). An example is a dev target: built with the binary,
# it makes cargo resolve the dev-dependencies' features for both.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet "$@" --bin agent-seer --example parse_only
