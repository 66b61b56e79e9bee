//! agent-seer grades how AI agents call MCP tools, as a `cargo test` harness.
//!
//! ```text
//! $ cargo test --test agents            # the suites under harnesses/ and transcripts/
//! $ agent-seer lint --spec tools.json --caps caps.yaml calls.jsonl
//! ```
//!
//! Engines, cheapest first, all reporting [`finding::Finding`]s: the per-call [`lint`]er
//! (JSON Schema plus the server's capability matrix, [`spec::capability`]), the cross-call
//! [`flow`] engine (dataflow, ordering, redundancy), and the [`score::oracle`] scorer (the 14
//! sub-dimensions against the scenario's workflow). Users wire a `harness = false` test target
//! to [`harness::main`].
#![warn(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "agent")]
pub mod agent;
pub mod bfcl;
pub mod bless;
pub mod check;
pub mod finding;
pub mod flow;
#[cfg(feature = "generate")]
pub mod generate;
#[path = "harness/mod.rs"]
mod harness_files;
#[cfg(feature = "judge")]
pub mod judge;
pub mod lint;
#[cfg(feature = "judge")]
pub mod llm;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod report;
mod runner;
pub mod score;
pub mod source;
pub mod spec;
pub mod stats;

/// Harness and transcript files ([`Harness`](harness::Harness),
/// [`Transcript`](harness::Transcript)), their discovery and trial names, and the `cargo test`
/// entry point [`main`](harness::main).
pub mod harness {
    pub use crate::harness_files::*;
    pub use crate::runner::main;
}

// The README's Rust blocks compile as doctests, so its examples stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
