//! Generation (paper §3, Appendix D): from a tool spec to a harness, in four stages — interpret
//! each tool, write scenarios with an oracle workflow, mock each call's output, expand into
//! turns. Every stage's output is validated (serde plus checks against the spec and the
//! linter); an invalid answer is asked again with the problem fed back (3 attempts), then the
//! record is dropped and counted, never written.
//!
//! This release has stages 1 ([`interpret`]) and 2 ([`scenarios`], with the coverage loop);
//! the main type is [`Generator`], whose [`Report`] counts what each stage produced, retried
//! and dropped.

pub mod expand;
pub mod interpret;
pub mod mocks;
pub mod scenarios;
pub mod write;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::llm::Client;
use crate::spec::{Capabilities, ToolSet};

/// What a stage did, for the generation report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StageCounts {
    pub produced: usize,
    /// Records that needed more than one attempt.
    pub retried: usize,
    /// Records dropped after the last attempt, with why.
    pub dropped: Vec<String>,
}

/// The generation report: per stage, what was produced, retried and dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub stages: BTreeMap<&'static str, StageCounts>,
}

/// A spec, its capability matrices, and the model that writes.
pub struct Generator<'a> {
    pub client: &'a Client,
    pub spec: &'a ToolSet,
    pub caps: &'a [Capabilities],
    pub report: Report,
}

impl<'a> Generator<'a> {
    pub fn new(client: &'a Client, spec: &'a ToolSet, caps: &'a [Capabilities]) -> Self {
        Self {
            client,
            spec,
            caps,
            report: Report::default(),
        }
    }
}
