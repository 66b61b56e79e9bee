#!/usr/bin/env bash
# The book (docs/, mdBook): build it with a pinned mdbook, compiled once into a cache outside
# the checkout (~3-5 min cold on 2 cores; nothing warm). The book's links, generated pages,
# doctests and commands are checked by `cargo test` (tests/cli/docs.rs, tests/cli/readme.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.5.4
CACHE=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/mdbook-$VERSION
if [ ! -x "$CACHE/bin/mdbook" ]; then
  # No `serve`/`watch` (an HTTP server and a file watcher): half the build, not needed here.
  cargo install mdbook --locked --version "$VERSION" --no-default-features --features search \
    --root "$CACHE.tmp" --quiet
  rm -rf "$CACHE"
  mv "$CACHE.tmp" "$CACHE"
fi
# --install-only: .ci/run installs it in the background while the first builds run.
[[ ${1:-} != --install-only ]] || exit 0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Warnings (a missing page, a broken include) fail the build.
"$CACHE/bin/mdbook" build docs --dest-dir "$out" 2>&1 | tee "$out.log"
if grep -E '^\s*(WARN|ERROR)|\[(WARN|ERROR)\]' "$out.log"; then
  echo "mdbook build docs printed warnings or errors" >&2
  rm -f "$out.log"
  exit 1
fi
rm -f "$out.log"
test -f "$out/index.html"
echo "book: $(find "$out" -name '*.html' | wc -l) pages built"
