//! agent-seer: grade how AI agents call MCP tools, as a `cargo test` harness.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod finding;
pub mod harness;
pub mod lint;
pub mod runner;
pub mod source;
pub mod spec;
