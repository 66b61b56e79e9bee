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

pub mod agent;
pub mod bfcl;
pub mod bless;
mod diff;
pub mod finding;
pub mod flow;
pub mod generate;
pub mod harness;
pub mod judge;
pub mod lint;
pub mod llm;
pub mod mcp;
pub mod report;
pub mod runner;
pub mod score;
pub mod source;
pub mod spec;

// The README's Rust blocks compile as doctests, so its examples stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
