//! Harness and transcript files: the YAML a user keeps in their repository.
//!
//! A **harness** (`harnesses/<suite>.yaml`) is the paper's artifact (Table 1, Appendix F): per
//! scenario an id, tier, title, category, novelty reason and turns, each turn with the user
//! prompt, the oracle workflow (tool, arguments, quick explanation, match policies, mock output,
//! grounding tier), the expected response and the follow-up. A **transcript**
//! (`transcripts/<suite>/<id>.yaml`) is what an agent actually did, with an optional label
//! (`expect`, `faults`, `xfail`). Calls may be written in the Agent Seer shape
//! (`function_name`/`parameters`), the MCP shape (`name`/`arguments`, or `tool`) or the OpenAI
//! shape (`function: {name, arguments}` with arguments as a JSON string).
//!
//! Parsed with serde-saphyr, keeping spans: every error names file:line:column with the line
//! quoted, and every call and argument keeps its [`Location`](crate::source::Location). The
//! main types are [`Harness`] and [`Transcript`], loaded with [`Harness::load`] and
//! [`Transcript::load`]; [`discover`] finds them. Every writer in the crate writes them
//! through [`HarnessDoc`] and [`TranscriptDoc`]. Trial names are typed ([`TrialId`]): built
//! and read back in one place.
//!
//! The `cargo test` entry point `agent_seer::harness::main` is the runner's, re-exported at
//! this path by the crate root (this module does not import the runner).

mod discover;
mod drift;
mod model;
mod raw;
mod trial;
mod write;

pub use discover::{Layout, SuiteFiles, discover, suite_transcripts};
pub use drift::touch;
pub use model::{
    AnyOf, Call, CertifyBar, Expect, Forbid, Ground, Grounding, Harness, Label, MatchPolicy,
    OracleCall, Order, Scenario, Thresholds, Tier, Times, TraceLink, TrajectoryGate,
    TrajectoryMatch, Transcript, TranscriptTurn, Turn, normal_path, same_path, same_path_from,
};
pub use trial::{RESERVED_SUITES, RESERVED_TRANSCRIPTS, TrialId, TrialIdError, TrialKind};
pub use write::{
    AnyOfDoc, CallDoc, HarnessDoc, LabelDoc, Normalize, PolicyDoc, PolicyName, ScenarioDoc,
    StepCall, StepDoc, ThresholdsDoc, TrajectoryGateDoc, TranscriptBody, TranscriptDoc,
    TranscriptTurnDoc, TurnDoc, UNPARSABLE, WriteError, object_arguments, sent_arguments,
};
