#!/usr/bin/env bash
# The foreign-format fixtures, re-made by the real libraries that write them, must still be
# what the tests read: tests/fixtures/ingest (OpenAI, Anthropic, Gemini and MCP Python SDKs, the
# OpenTelemetry OpenAI instrumentation, against a local fake provider and the real
# mcp-server-time), tests/fixtures/adk (Google ADK's own writers and TrajectoryEvaluator) and
# tests/fixtures/batch (the batch APIs' documents, checked by the openai, anthropic and
# google-genai SDKs).
# Everything third-party runs in a loopback-only network namespace (the scripts do it).
#
# Byte for byte, except the OTel traces (new span ids and times on every run): those are
# checked by running the ingest tests on the regenerated files.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/fixtures/adk/regenerate.sh --check
# The batch-API fixtures (OpenAI, Anthropic, Gemini), re-made and checked by their SDKs.
bash tests/fixtures/batch/regenerate.sh --check
bash tests/fixtures/ingest/regenerate.sh
bash tests/fixtures/ingest/regenerate-more.sh
if ! git diff --quiet -- tests/fixtures/ingest ':!tests/fixtures/ingest/otel'; then
  git --no-pager diff --stat -- tests/fixtures/ingest ':!tests/fixtures/ingest/otel' >&2
  echo "the ingest fixtures changed when regenerated (see above)" >&2
  exit 1
fi
cargo test --quiet --test cli -- ingest::every_format ingest::the_scenario ingest::check_discovers ingest::import_trace adk::
# Put the committed traces back (the regenerated ones differ only in ids and times).
git checkout -- tests/fixtures/ingest/otel
