//! Writing harness and transcript YAML: the typed counterpart of [`raw`](super::raw), for every
//! writer in the crate (`run` and `serve --record` record transcripts, `generate` and
//! `import bfcl` write harnesses, `bless` rewrites workflow steps and labels).
//!
//! Each struct here is one YAML mapping, its fields in the order the file shows them (the
//! order of `raw.rs` and of the JSON Schemas), with empty optional fields left out, so what
//! is written loads back through [`Harness::load`](super::Harness::load) and
//! [`Transcript::load`](super::Transcript::load) unchanged. The main types are [`HarnessDoc`]
//! and [`TranscriptDoc`], serialised with [`HarnessDoc::to_yaml`] and
//! [`TranscriptDoc::to_yaml`]; a failure is a [`WriteError`], never an empty file.
//!
//! Arguments are `Map`s, because the loader reads only mappings there: [`object_arguments`]
//! turns a generated call's JSON into one (or says why not), [`sent_arguments`] records
//! whatever an agent sent.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::model::{
    Call, Expect, Grounding, Label, MatchPolicy, Order, Tier, Transcript, TranscriptTurn,
    refused_fault,
};
use crate::source::SourceFile;

/// Why a document could not be written.
///
/// Every map key is a string by type, so the one failure these types provoke is a number that
/// is not finite where the document holds an `f64` (a threshold, a tolerance): the loader
/// refuses `.nan` and `.inf` in a match policy, and a NaN or infinite gate decides every
/// trial alike, so the writer refuses them all. Whatever fails stops the write; no empty file
/// is left.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError {
    /// The serialiser refused the document.
    Yaml {
        /// `harness`, `transcript`, `workflow step`, `label`.
        what: &'static str,
        /// The serialiser's error.
        source: serde_saphyr::SerializeError,
    },
    /// A call's arguments are no object.
    ArgumentsNotObject {
        /// The call's tool.
        tool: String,
        /// The JSON type they are.
        got: &'static str,
    },
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Yaml { what, source } => {
                write!(f, "cannot write the {what} as YAML: {source}")
            }
            WriteError::ArgumentsNotObject { tool, got } => write!(
                f,
                "the arguments of a call to `{tool}` are {got}, not an object: a harness holds a call's arguments as a mapping"
            ),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Yaml { source, .. } => Some(source),
            WriteError::ArgumentsNotObject { .. } => None,
        }
    }
}

fn yaml<T: Serialize>(what: &'static str, doc: &T) -> Result<String, WriteError> {
    serde_saphyr::to_string(doc).map_err(|source| WriteError::Yaml { what, source })
}

/// A call's JSON arguments as a mapping: an object as it is, `null` as no arguments (as the
/// loader and the linter read `null`). Anything else cannot be written.
pub fn object_arguments(tool: &str, arguments: &Value) -> Result<Map<String, Value>, WriteError> {
    match arguments {
        Value::Object(m) => Ok(m.clone()),
        Value::Null => Ok(Map::new()),
        other => Err(WriteError::ArgumentsNotObject {
            tool: tool.to_owned(),
            got: crate::finding::type_name(other),
        }),
    }
}

/// The key under which [`sent_arguments`] records arguments that are no object (the name the
/// chat clients give arguments they cannot parse, so the linter reports it as an unknown
/// parameter).
pub const UNPARSABLE: &str = "__unparsable__";

/// Arguments as an agent sent them, for a transcript: an object as it is, `null` as no
/// arguments, anything else as its JSON text under [`UNPARSABLE`] — so the transcript still
/// loads, and grading says the call was wrong instead of the file failing to load.
pub fn sent_arguments(arguments: &Value) -> Map<String, Value> {
    match arguments {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert(UNPARSABLE.into(), Value::String(other.to_string()));
            m
        }
    }
}

/// An `f64` field, refused when it is not finite (see [`WriteError`]).
fn finite<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        Err(serde::ser::Error::custom(format!(
            "{x} is not a finite number (a policy holding one does not load, a gate of one decides every trial alike)"
        )))
    }
}

fn finite_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => finite(x, s),
        None => s.serialize_none(),
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A harness file (`harnesses/<suite>.yaml`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HarnessDoc {
    /// Must equal the file's stem when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// `description:`, what the suite covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `server:`, the server under test (`mcp-veo-go`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Tool spec files, relative to the harness; `None` is `<suite>.tools.json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Capability matrix files, relative to the harness; left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// `thresholds:`; `None` leaves both gates at the loader's defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<ThresholdsDoc>,
    /// `scenarios:`, ids unique (the loader refuses a duplicate).
    pub scenarios: Vec<ScenarioDoc>,
}

impl HarnessDoc {
    /// The harness file's text.
    pub(crate) fn to_yaml(&self) -> Result<String, WriteError> {
        yaml("harness", self)
    }
}

/// A suite's gates; a threshold left out takes the loader's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ThresholdsDoc {
    /// `pass:`, the lowest passing TC (0–1; default 0.8).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "finite_opt")]
    pub pass: Option<f64>,
    /// `min_gap:`, the discrimination gate's least mean TC gap (0–1; default 0.3).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "finite_opt")]
    pub min_gap: Option<f64>,
    /// `trajectory: {match, min}`, a minimum on one literal trajectory match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<TrajectoryGateDoc>,
}

/// `thresholds.trajectory`: the match (`exact`, `in_order`, `any_order`) and its minimum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrajectoryGateDoc {
    /// `match:`.
    #[serde(rename = "match")]
    pub kind: crate::harness::TrajectoryMatch,
    /// `min:`, 0–1.
    #[serde(serialize_with = "finite")]
    pub min: f64,
}

/// One entry of a harness's `scenarios:`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ScenarioDoc {
    /// `id:`, unique in the harness.
    pub id: String,
    /// `tier:`, `simple` or `complex`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// `title:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `category:`, the use case (`Marketing video`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// `novelty_reason:`, why the scenario is a useful test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub novelty_reason: Option<String>,
    /// `artifacts:`, values that exist before the conversation (references to them are
    /// grounded); left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// At least one (the loader refuses a scenario without turns).
    pub turns: Vec<TurnDoc>,
}

/// One entry of a scenario's `turns:`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TurnDoc {
    /// `prompt:`, the user's message.
    pub prompt: String,
    /// `workflow:`, the oracle steps in order (written even when empty: no call is right).
    pub workflow: Vec<StepDoc>,
    /// `expected_response:`, what a good reply says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_response: Option<String>,
    /// `followup:`, a natural next user message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub followup: Option<String>,
    /// `order:`; `None` is `dataflow`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
}

/// One step of an oracle workflow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepDoc {
    /// The tool and arguments, flattened into the step's mapping.
    #[serde(flatten)]
    pub call: StepCall,
    /// `quick_explanation:`, why this call serves the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quick_explanation: Option<String>,
    /// `match:`, a policy per parameter; left out when empty (every argument `exact`).
    #[serde(rename = "match", skip_serializing_if = "BTreeMap::is_empty")]
    pub match_policies: BTreeMap<String, PolicyDoc>,
    /// `mock_output:`, what the mock tool returns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mock_output: Option<Value>,
    /// `grounding:`, how the mock output was grounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding: Option<Grounding>,
}

impl StepDoc {
    /// The call alone, with no explanation, policies, mock output or grounding.
    pub fn new(call: StepCall) -> Self {
        Self {
            call,
            quick_explanation: None,
            match_policies: BTreeMap::new(),
            mock_output: None,
            grounding: None,
        }
    }

    /// The step as a one-item YAML mapping (what `bless` splices into a workflow).
    pub(crate) fn to_yaml(&self) -> Result<String, WriteError> {
        yaml("workflow step", self)
    }
}

/// A step's tool and arguments under either pair of keys the loader reads.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StepCall {
    /// `tool:` and `arguments:` (the MCP shape).
    Mcp {
        /// `tool:`, the tool's name.
        tool: String,
        /// `arguments:`.
        arguments: Map<String, Value>,
    },
    /// `function_name:` and `parameters:` (the Agent Seer paper's shape).
    AgentSeer {
        /// `function_name:`, the tool's name.
        function_name: String,
        /// `parameters:`.
        parameters: Map<String, Value>,
    },
}

impl StepCall {
    /// The tool's name, under either key.
    pub fn tool(&self) -> &str {
        match self {
            StepCall::Mcp { tool, .. } => tool,
            StepCall::AgentSeer { function_name, .. } => function_name,
        }
    }

    /// The arguments, under either key.
    pub fn arguments(&self) -> &Map<String, Value> {
        match self {
            StepCall::Mcp { arguments, .. } => arguments,
            StepCall::AgentSeer { parameters, .. } => parameters,
        }
    }
}

/// A match policy, as written under a step's `match:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PolicyDoc {
    /// `exact`, `ignore`, `from_output`, `semantic`, `absent`.
    Named(PolicyName),
    /// `{regex: …}`.
    Regex {
        /// The pattern, Rust regex syntax (the loader refuses one that does not compile).
        regex: String,
        /// `not:`, a pattern the value must not match anywhere; written only when set.
        #[serde(skip_serializing_if = "Option::is_none")]
        not: Option<String>,
    },
    /// `{any_of: […]}`.
    AnyOf(AnyOfDoc),
    /// `{sql: dialect}`: SQL saying the same as the step's, parsed in that dialect.
    Sql {
        /// The dialect (`duckdb`, `sqlite`, `postgres`, …).
        sql: String,
    },
    /// `{path: directory}`: the step's path, a relative one read from the directory.
    Path {
        /// The directory relative paths are read from (`/srv/data`).
        path: String,
    },
    /// `{tolerance: …}`: a number within ± this of the step's.
    Tolerance {
        /// The largest accepted difference; finite, or the write fails.
        #[serde(serialize_with = "finite")]
        tolerance: f64,
    },
}

/// A policy written as a bare name; each is the [`MatchPolicy`] variant of that name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyName {
    /// `exact`: equal to the step's value (what a parameter without a policy gets).
    Exact,
    /// `ignore`: any value, or none.
    Ignore,
    /// `from_output`: a value an earlier call's output produced.
    FromOutput,
    /// `semantic`: left to the judge; deterministically, present and of the step's type.
    Semantic,
    /// `absent`: the agent must not pass the parameter.
    Absent,
    /// `unordered`: the step's array items in any order.
    Unordered,
    /// `sql`: SQL saying the same as the step's (generic dialect).
    Sql,
    /// `path`: a string naming the same path as the step's.
    Path,
}

/// The `any_of` policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AnyOfDoc {
    /// `any_of:`, the accepted values.
    pub any_of: Vec<Value>,
    /// `optional: true`: leaving the parameter out is correct too; written only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub optional: bool,
    /// `normalize:`; `None` compares as `exact` does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalize: Option<Normalize>,
    /// `strict_integer: true`: an integer option is not matched by a float (`3.0`); written
    /// only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub strict_integer: bool,
}

pub use super::model::Normalize;

impl From<&MatchPolicy> for PolicyDoc {
    fn from(p: &MatchPolicy) -> Self {
        match p {
            MatchPolicy::Exact => PolicyDoc::Named(PolicyName::Exact),
            MatchPolicy::Ignore => PolicyDoc::Named(PolicyName::Ignore),
            MatchPolicy::FromOutput => PolicyDoc::Named(PolicyName::FromOutput),
            MatchPolicy::Semantic => PolicyDoc::Named(PolicyName::Semantic),
            MatchPolicy::Absent => PolicyDoc::Named(PolicyName::Absent),
            MatchPolicy::Unordered => PolicyDoc::Named(PolicyName::Unordered),
            MatchPolicy::Regex(r, not) => PolicyDoc::Regex {
                regex: r.as_str().to_owned(),
                not: not.as_ref().map(|n| n.as_str().to_owned()),
            },
            MatchPolicy::AnyOf(a) => PolicyDoc::AnyOf(AnyOfDoc {
                any_of: a.options.clone(),
                optional: a.optional,
                normalize: a.normalize,
                strict_integer: a.strict_integer,
            }),
            MatchPolicy::Tolerance(t) => PolicyDoc::Tolerance { tolerance: *t },
            MatchPolicy::Sql(None) => PolicyDoc::Named(PolicyName::Sql),
            MatchPolicy::Sql(Some(d)) => PolicyDoc::Sql { sql: d.clone() },
            MatchPolicy::Path(None) => PolicyDoc::Named(PolicyName::Path),
            MatchPolicy::Path(Some(base)) => PolicyDoc::Path { path: base.clone() },
        }
    }
}

/// A transcript file (`transcripts/<suite>/<id>.yaml`). The loader needs `scenario` or
/// `prompt` (or both).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TranscriptDoc {
    /// `scenario:`, the id of a scenario in the suite's harness.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// `prompt:`, an inline user prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `agent:`, which agent produced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `note:`, free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `expect`, `faults` and `xfail`, flattened into the top-level mapping.
    #[serde(flatten)]
    pub label: LabelDoc,
    /// `turns:`, or `calls:` and `reply:`, flattened likewise.
    #[serde(flatten)]
    pub body: TranscriptBody,
}

impl TranscriptDoc {
    /// The transcript file's text.
    pub(crate) fn to_yaml(&self) -> Result<String, WriteError> {
        yaml("transcript", self)
    }

    /// The transcript file's text, for a caller that writes it (`mutate --write`).
    pub fn to_yaml_text(&self) -> Result<String, WriteError> {
        self.to_yaml()
    }

    /// The transcript this document is, as [`Transcript::from_source`] reads it from
    /// [`TranscriptDoc::to_yaml`]'s text, without writing and reading that text (a mutant is
    /// graded, not read: the YAML was most of a mutation gate). Every place is the start of
    /// `file`, which holds no text of it. `None` where that read would fail: a document with
    /// neither `scenario:` nor `prompt:`, or a label the reader refuses.
    pub(crate) fn to_transcript(&self, file: SourceFile, id: String) -> Option<Transcript> {
        let label = &self.label;
        let faults = label.faults.iter().map(String::as_str);
        if (self.scenario.is_none() && self.prompt.is_none())
            || refused_fault(label.expect, faults).is_some()
        {
            return None;
        }
        let start = file.location(1, 1);
        let calls = |calls: &[CallDoc]| {
            calls
                .iter()
                .map(|c| {
                    Call::recorded(
                        c.tool.clone(),
                        Value::Object(c.arguments.clone()),
                        // `output: null` reads as no output.
                        c.output.clone().filter(|o| !o.is_null()),
                        c.id.clone(),
                        start.clone(),
                    )
                })
                .collect()
        };
        let turns = match &self.body {
            TranscriptBody::Turns { turns } => turns
                .iter()
                .map(|t| TranscriptTurn {
                    prompt: t.prompt.clone(),
                    calls: calls(&t.calls),
                    reply: t.reply.clone(),
                })
                .collect(),
            TranscriptBody::Calls { calls: cs, reply } => vec![TranscriptTurn {
                prompt: None,
                calls: calls(cs),
                reply: reply.clone(),
            }],
        };
        Some(Transcript {
            id,
            path: file.path.to_path_buf(),
            scenario_location: self.scenario.as_ref().map(|_| start.clone()),
            scenario: self.scenario.clone(),
            prompt: self.prompt.clone(),
            agent: self.agent.clone(),
            note: self.note.clone(),
            label: Label {
                expect: label.expect,
                faults: label.faults.clone(),
                xfail: label.xfail.clone(),
            },
            turns,
            trace: None,
            source: file,
        })
    }
}

/// A transcript's label: `expect`, `faults` (in flow style, `faults: [a, b]`, as people write
/// them) and `xfail`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabelDoc {
    /// `expect:`, `pass` or `fail`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// `faults:`, finding codes, sub-dimensions, dimensions or engines; left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "flow_seq")]
    pub faults: Vec<String>,
    /// `xfail:`, why the trial is expected to fail for now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xfail: Option<String>,
}

impl LabelDoc {
    /// The label's lines alone (what `bless` puts in place of a transcript's `faults:`).
    pub(crate) fn to_yaml(&self) -> Result<String, WriteError> {
        yaml("label", self)
    }
}

fn flow_seq<S: serde::Serializer>(v: &[String], s: S) -> Result<S::Ok, S::Error> {
    serde_saphyr::FlowSeq(v).serialize(s)
}

/// A transcript's turns, or the one-turn shortcut.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TranscriptBody {
    /// `turns:`, one entry per user turn.
    Turns {
        /// The turns, in order.
        turns: Vec<TranscriptTurnDoc>,
    },
    /// Top-level `calls:` and `reply:`: one turn, its prompt the transcript's (or the
    /// scenario's).
    Calls {
        /// The calls, in order.
        calls: Vec<CallDoc>,
        /// The agent's final text.
        #[serde(skip_serializing_if = "Option::is_none")]
        reply: Option<String>,
    },
}

/// One entry of a transcript's `turns:`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TranscriptTurnDoc {
    /// `prompt:`, the user's message; `None` leaves it to the scenario (or, on the first
    /// turn, to the transcript's `prompt:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `calls:`, in order (written even when empty).
    pub calls: Vec<CallDoc>,
    /// `reply:`, the agent's final text for the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

/// One call an agent made.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CallDoc {
    /// `tool:`, the tool's name.
    pub tool: String,
    /// `arguments:`, as sent (see [`sent_arguments`] for arguments that are no object).
    pub arguments: Map<String, Value>,
    /// `id:`, the client's id for the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What the tool returned. `Some(Value::Null)` is written as `output: null`, which loads
    /// as no output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
