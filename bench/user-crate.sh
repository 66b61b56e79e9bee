#!/usr/bin/env bash
# What a user pays for: a fresh crate that depends on this checkout as a dev-dependency,
# with the README's tests/agents.rs and one shipped suite, built and tested from nothing
# (its own empty target directory) — once with `default-features = false`, once with the
# default features. Prints the wall time of `cargo test --test agents` and the crates built.
# Usage: bash bench/user-crate.sh [lean|default]...   (both when none is named)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(lean default)
for cfg in "${configs[@]}"; do
  dir=$(mktemp -d)
  case "$cfg" in
    lean) dep="agent-seer = { path = \"$REPO\", default-features = false }" ;;
    default) dep="agent-seer = { path = \"$REPO\" }" ;;
    *) echo "unknown configuration $cfg" >&2; exit 2 ;;
  esac
  mkdir -p "$dir/src" "$dir/tests" "$dir/harnesses" "$dir/capabilities" "$dir/transcripts"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "user-crate"
version = "0.1.0"
edition = "2024"

[dev-dependencies]
$dep

[[test]]
name = "agents"
harness = false
TOML
  echo "" > "$dir/src/lib.rs"
  printf 'fn main() -> std::process::ExitCode {\n    agent_seer::harness::main()\n}\n' > "$dir/tests/agents.rs"
  cp harnesses/veo.* "$dir/harnesses/"
  cp capabilities/mcp-veo-go.yaml "$dir/capabilities/"
  cp -r transcripts/veo "$dir/transcripts/"
  # The same lock file as the checkout, so both configurations resolve the same versions.
  cp Cargo.lock "$dir/Cargo.lock"
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" AGENT_SEER_REPORT=off cargo test --test agents >"$dir/out" 2>&1) || {
    cat "$dir/out" >&2; exit 1; }
  end=$(date +%s.%N)
  built=$(grep -c "^ *Compiling " "$dir/out")
  result=$(grep -E "^test result" "$dir/out" | tail -1)
  printf '%s: %.0f s for a first `cargo test --test agents`, %s crates built (%s)\n' \
    "$cfg" "$(echo "$end - $start" | bc)" "$built" "$result"
  rm -rf "$dir"
done
