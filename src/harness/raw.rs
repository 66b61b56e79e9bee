//! The YAML shapes, exactly as written, before normalisation into the model types.
//!
//! An optional member written `null` is refused where the JSON Schemas refuse it
//! ([`crate::source::present`]): absent and null are not the same file (issue 32, item 13).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::source::spanned::Spanned;

pub(super) type Args = BTreeMap<String, Spanned<Value>>;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHarness {
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub suite: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub server: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub tools: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub capabilities: Vec<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub thresholds: Option<RawThresholds>,
    #[serde(default)]
    pub severity: BTreeMap<String, Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub judge: Option<RawJudge>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub ground: Option<Spanned<RawGround>>,
    pub scenarios: Vec<Spanned<RawScenario>>,
}

/// `ground:`, on the suite or a scenario: how `agent-seer ground` prepares the real server.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGround {
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub setup: Option<String>,
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    #[serde(default)]
    pub server: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub paths: Option<Spanned<BTreeMap<String, String>>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub clock: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub skip: Option<Spanned<String>>,
}

/// `judge: { certify: { tpr: 0.8, tnr: 0.8 } }`.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJudge {
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub certify: Option<Spanned<RawCertify>>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCertify {
    pub tpr: Spanned<f64>,
    pub tnr: Spanned<f64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThresholds {
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub pass: Option<Spanned<f64>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_gap: Option<Spanned<f64>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub trajectory: Option<Spanned<RawTrajectoryGate>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub mutation: Option<Spanned<f64>>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrajectoryGate {
    #[serde(rename = "match")]
    pub kind: Spanned<String>,
    pub min: Spanned<f64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenarioThresholds {
    pub pass: Spanned<f64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub id: Spanned<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub tier: Option<super::Tier>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub category: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub novelty_reason: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<String>,
    #[serde(default)]
    pub forbid: Vec<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub thresholds: Option<Spanned<RawScenarioThresholds>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub ground: Option<Spanned<RawGround>>,
    pub turns: Vec<RawTurn>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTurn {
    pub prompt: String,
    #[serde(default)]
    pub workflow: Vec<Spanned<RawCall>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub expected_response: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub followup: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub order: Option<super::Order>,
    #[serde(default)]
    pub forbid: Vec<Spanned<String>>,
}

/// Every call shape we accept, in one struct: which fields may appear depends on the context
/// (oracle workflow or transcript) and is checked during normalisation, with a location.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCall {
    // Agent Seer shape
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub function_name: Option<String>,
    #[serde(default)]
    pub parameters: Option<Spanned<Args>>,
    // MCP shape
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    #[serde(default)]
    pub tool: Option<RawToolName>,
    #[serde(default)]
    pub arguments: Option<Spanned<Args>>,
    // OpenAI shape
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub function: Option<RawOpenAiFunction>,
    // transcript
    #[serde(default)]
    pub output: Option<Value>,
    // oracle
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub quick_explanation: Option<String>,
    #[serde(default, rename = "match")]
    pub match_policies: BTreeMap<String, Spanned<RawPolicy>>,
    #[serde(default)]
    pub mock_output: Option<Value>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub grounding: Option<super::Grounding>,
    #[serde(default)]
    pub optional: bool,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub count: Option<u32>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub min: Option<u32>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub max: Option<u32>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub any_of: Option<Vec<Vec<Spanned<RawCall>>>>,
    #[serde(default)]
    pub literal: Vec<String>,
    #[serde(default)]
    pub per_item: Option<RawPerItem>,
}

/// `per_item: {tool, list, as}`: a batch step also done by one call per item of a list.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPerItem {
    pub tool: String,
    pub list: String,
    #[serde(rename = "as")]
    pub param: String,
}

/// `tool: name`, or a step's alternatives `tool: [a, b]`.
#[derive(Deserialize, Serialize)]
#[serde(untagged)]
pub(super) enum RawToolName {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOpenAiFunction {
    pub name: String,
    /// A JSON string (as OpenAI sends it) or a mapping.
    #[serde(default)]
    pub arguments: Option<Spanned<Value>>,
}

// (Unknown keys refused: `{regex: …, nott: …}` would otherwise drop the misspelt key and
// compare without it. What matches no form is kept whole, for the loader to say why.)
#[derive(Deserialize, Serialize)]
#[serde(untagged, deny_unknown_fields)]
pub(super) enum RawPolicy {
    Named(String),
    Regex {
        regex: String,
        #[serde(default)]
        not: Option<String>,
    },
    Sql {
        sql: String,
    },
    AnyOf(RawAnyOf),
    Tolerance {
        tolerance: f64,
    },
    Path {
        path: String,
    },
    Unknown(Value),
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAnyOf {
    pub any_of: Vec<Value>,
    #[serde(default)]
    pub optional: bool,
    #[serde(default)]
    pub normalize: Option<String>,
    #[serde(default)]
    pub strict_integer: bool,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTranscript {
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub scenario: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub prompt: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub note: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub expect: Option<super::Expect>,
    #[serde(default)]
    pub faults: Vec<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub xfail: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub turns: Option<Vec<RawTranscriptTurn>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub calls: Option<Vec<Spanned<RawCall>>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub reply: Option<String>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTranscriptTurn {
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub prompt: Option<String>,
    #[serde(default)]
    pub calls: Vec<Spanned<RawCall>>,
    #[serde(
        default,
        deserialize_with = "crate::source::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub reply: Option<String>,
}
