//! agent-seer grades how AI agents call MCP tools, as a `cargo test` harness.
//!
//! ```text
//! $ cargo test --test agents            # the suites under harnesses/ and transcripts/
//! $ agent-seer lint --spec tools.json --caps caps.yaml calls.jsonl
//! ```
//!
//! Engines, cheapest first, all reporting [`Finding`]s: the per-call [`Linter`] (JSON Schema
//! plus the server's capability matrix, [`Capabilities`]), the cross-call [`flow`] engine
//! (dataflow, ordering, redundancy), and the [`score::oracle`] scorer (the 14 sub-dimensions
//! against the scenario's workflow). [`evaluate`] runs them over one transcript of a loaded
//! [`Suite`]; [`verdict`] gives the verdict alone, fast. Users wire a `harness = false` test
//! target to [`harness::main`].
//!
//! # Layers
//!
//! Each module imports only the ones before it (checked by a test of `src/layers.rs`):
//!
//! | layer | job |
//! |---|---|
//! | [`source`], [`finding`] | locations, spans and errors; the one finding shape and its codes |
//! | [`spec`] | tool specs (MCP, OpenAI, BFCL) → [`ToolSet`]; capability matrices; profile; diff |
//! | [`harness`] | harness and transcript files, their typed writer, discovery, [`TrialId`] |
//! | [`stats`] | correlation, bootstrap intervals (for the judge and the report) |
//! | [`lint`], [`flow`], [`score`] | the engines: per call, across calls, against the oracle |
//! | [`trajectory`] | ADK / Vertex AI trajectory metrics beside TC (exact, in-order, any-order, P/R/F1) |
//! | [`check`] | [`Suite`], [`evaluate`], the gate, the fast path, trial records, the trial plan |
//! | [`bless`], [`bfcl`] | rewriting oracles from transcripts; importing BFCL |
//! | `llm`, `judge` | provider clients, cache, ledger; the LLM judge (feature `judge`) |
//! | `generate` | harnesses from a tool spec, the paper's four stages (feature `generate`) |
//! | `mcp`, `agent` | MCP client and mock server; the live runner (features `mcp`, `agent`) |
//! | [`report`] | run directories, terminal, JSON, JUnit, Markdown and HTML reports |
//! | runner | the libtest-mimic driver over the plan: [`harness::main`]; nothing imports it |
//!
//! With `default-features = false` only the harness is built (lint, flow, oracle, the gate,
//! reports): no HTTP client, no async runtime, no clap CLI.
// No unsafe code: the memory errors AddressSanitizer looks for cannot start here, which is why
// the fuzz targets run without it (.ci/fuzz.sh).
#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]

#[cfg(feature = "agent")]
pub mod agent;
pub mod audit;
pub mod bfcl;
pub mod bless;
pub mod check;
mod diff;
pub mod finding;
pub mod flow;
#[cfg(feature = "generate")]
pub mod generate;
#[cfg(feature = "mcp")]
pub mod ground;
#[path = "harness/mod.rs"]
mod harness_files;
mod hash;
pub mod ingest;
#[cfg(feature = "judge")]
pub mod judge;
pub mod lint;
#[cfg(feature = "judge")]
pub mod llm;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod pattern;
#[cfg(any(feature = "judge", feature = "mcp"))]
mod redact;
pub mod report;
mod runner;
pub mod score;
pub mod source;
pub mod spec;
pub mod sql;
pub mod stats;
pub mod trajectory;

#[cfg(test)]
mod layers;

pub use check::{Evaluation, HarnessConfig, Suite, Verdict, evaluate, quick_verdict, verdict};
pub use finding::{Code, Finding, Severity, SubDimension};
pub use harness::{TrialId, TrialKind};
pub use lint::Linter;
pub use report::Report;
pub use spec::{Capabilities, ToolSet, ToolSpec};

/// The allocator the `agent-seer` binary runs with, [mimalloc](https://github.com/microsoft/mimalloc)
/// (the `mimalloc` feature, on by default). A project's harness takes it with the feature and
/// one line beside its `main`:
/// `#[global_allocator] static ALLOC: agent_seer::Allocator = agent_seer::Allocator;`.
/// BENCHMARKS.md gives the figures with it and with the system's allocator.
#[cfg(feature = "mimalloc")]
pub use mimalloc::MiMalloc as Allocator;

/// Harness and transcript files ([`Harness`](harness::Harness),
/// [`Transcript`](harness::Transcript)), their discovery and trial names, and the `cargo test`
/// entry point [`main`](harness::main).
pub mod harness {
    pub use crate::harness_files::*;
    pub use crate::runner::main;
}

// The README's and the book's Rust blocks compile as doctests, so their examples stay true
// (tests/cli/docs.rs fails when a page with Rust code is missing here).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[doc = include_str!("../docs/src/guide/first-suite.md")]
#[cfg(doctest)]
pub struct BookFirstSuiteDoctests;

#[doc = include_str!("../docs/src/reference/harness-runner.md")]
#[cfg(doctest)]
pub struct BookHarnessRunnerDoctests;
