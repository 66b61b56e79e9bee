#!/usr/bin/env bash
# The foreign-format fixtures, re-made by the real libraries that write them, must still be
# what the tests read: tests/fixtures/ingest (OpenAI, Anthropic, Gemini and MCP Python SDKs, the
# OpenTelemetry OpenAI instrumentation, against a local fake provider and the real
# mcp-server-time), tests/fixtures/adk (Google ADK's own writers and TrajectoryEvaluator) and
# tests/fixtures/batch (the batch APIs' documents, checked by the openai, anthropic and
# google-genai SDKs).
# Everything third-party runs in a loopback-only network namespace (the scripts do it).
#
# Byte for byte, except the OTel traces and the OpenAI Agents SDK's trace export (new ids and
# times on every run): those are checked by running the ingest tests on the regenerated files.
# Issue 33 added to regenerate-more.sh: Traceloop's instrumentation at its current release,
# vcrpy cassettes and proxy logs (http/), the Agents SDK export (openai-agents/); to
# regenerate.sh: runs without a parent span (otel/no-parent*) and the seq-wrapped MCP logs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/fixtures/adk/regenerate.sh --check
# The batch-API fixtures (OpenAI, Anthropic, Gemini), re-made and checked by their SDKs.
bash tests/fixtures/batch/regenerate.sh --check
bash tests/fixtures/ingest/regenerate.sh
bash tests/fixtures/ingest/regenerate-more.sh
if ! git diff --quiet -- tests/fixtures/ingest ':!tests/fixtures/ingest/otel' ':!tests/fixtures/ingest/openai-agents/*.jsonl' \
  || [ -n "$(git ls-files --others --exclude-standard -- tests/fixtures/ingest)" ]; then
  git --no-pager diff --stat -- tests/fixtures/ingest ':!tests/fixtures/ingest/otel' ':!tests/fixtures/ingest/openai-agents/*.jsonl' >&2
  git ls-files --others --exclude-standard -- tests/fixtures/ingest >&2
  echo "the ingest fixtures changed when regenerated (see above)" >&2
  exit 1
fi
cargo test --quiet --test cli -- ingest::every_format ingest::the_scenario ingest::check_discovers ingest::import_trace ingest::a_run_without_a_parent_span adk::
# Put the committed traces back (the regenerated ones differ only in ids and times).
git checkout -- tests/fixtures/ingest/otel tests/fixtures/ingest/openai-agents
