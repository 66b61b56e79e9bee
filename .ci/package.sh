#!/usr/bin/env bash
# Issue 34, item 4: the crate as crates.io would get it. `cargo package` builds the .crate
# (without its verify build: the next step builds what a user builds), then a throwaway
# project depends on the unpacked crate with the lean line the README gives
# (`default-features = false`), and its `cargo test` runs one trial of a one-tool suite.
# Reuses the checkout's target directory and lock file, so only the lean library is compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

cargo package --locked --no-verify --quiet ${ALLOW_DIRTY:+--allow-dirty}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
crate="$repo/target/package/agent-seer-$version.crate"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$crate" -C "$work"
mkdir -p "$work/user/tests" "$work/user/harnesses" "$work/user/transcripts/tiny"
cat >"$work/user/Cargo.toml" <<TOML
[package]
name = "user-agents"
version = "0.0.0"
edition = "2024"
publish = false

[dev-dependencies]
agent-seer = { path = "../agent-seer-$version", default-features = false }

[[test]]
name = "agents"
harness = false
TOML
echo 'fn main() -> std::process::ExitCode { agent_seer::harness::main() }' >"$work/user/tests/agents.rs"
cat >"$work/user/harnesses/tiny.tools.json" <<'JSON'
{"tools": [{"name": "paint", "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}}]}
JSON
cat >"$work/user/harnesses/tiny.yaml" <<'YAML'
tools: [tiny.tools.json]
scenarios:
  - id: cat
    turns:
      - prompt: paint a cat
        workflow:
          - tool: paint
            arguments: {prompt: a cat}
YAML
cat >"$work/user/transcripts/tiny/cat.yaml" <<'YAML'
scenario: cat
turns:
  - calls:
      - tool: paint
        arguments: {prompt: a cat}
YAML
cp Cargo.lock "$work/user/Cargo.lock"
(cd "$work/user" && CARGO_TARGET_DIR="$repo/target" cargo test --test agents) | tee "$work/out.txt"
grep -q "tiny::cat" "$work/out.txt" || {
  echo "the packaged crate's harness did not run tiny::cat" >&2
  exit 1
}
echo "cargo package: agent-seer-$version.crate builds and runs a suite as a lean dependency"
