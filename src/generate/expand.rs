//! Stage 4, multi-turn expansion: split a mocked workflow at its phase boundaries into turns,
//! each with a self-contained user prompt (later ones quoting concrete values from earlier
//! outputs) and the calls it covers. The answer names calls by index, so every original call
//! lands in exactly one turn, in order, with its arguments and output unchanged; an expansion
//! into a single turn is discarded and recorded (the scenario stays single-turn).

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Generator;
use super::mocks::Mocked;
use crate::llm::{LlmError, Request};

/// Bumped when the prompt or schema changes meaning (part of the cache key).
pub(crate) const PROMPT_VERSION: &str = "agent-seer-expand-1";

/// One turn of an expansion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpandedTurn {
    /// The user's self-contained prompt for this turn (at most 800 characters).
    pub prompt: String,
    /// 1-based indices of the workflow's calls this turn makes.
    pub calls: Vec<usize>,
    /// The turn's follow-up question (at most 300 characters; may be empty).
    pub followup: String,
}

/// Stage 4's answer for one scenario: its workflow split into turns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expansion {
    /// The turns (the schema allows 1 to 8), every call in exactly one, in order;
    /// [`Generator::expand`] keeps only expansions into two or more.
    pub turns: Vec<ExpandedTurn>,
}

const SYSTEM: &str = "\
You turn a single request and its workflow of tool calls into a natural multi-turn \
conversation. Split at phase boundaries (batch related calls in one turn), make each user turn \
self-contained, and let later turns refer to concrete values (URIs, ids) from earlier tool \
outputs. Every call must be in exactly one turn, in the original order; name calls by their \
1-based numbers. Answer with one JSON object that follows the schema.";

/// The stage-4 prompt for one mocked scenario: its request and its numbered calls with their
/// outputs.
pub(crate) fn request(m: &Mocked) -> Request {
    let mut user = format!("## The request\n{}\n\n## The workflow\n", m.scenario.prompt);
    for (i, (c, o)) in m.scenario.agent_workflow.iter().zip(&m.outputs).enumerate() {
        user.push_str(&format!(
            "{}. {} {}\n   output: {o}\n",
            i + 1,
            c.function_name,
            c.parameters
        ));
    }
    Request {
        system: SYSTEM.into(),
        user,
        schema_name: "expansion".into(),
        schema: json!({"type": "object", "additionalProperties": false, "required": ["turns"], "properties": {"turns": {
            "type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "object", "additionalProperties": false,
            "required": ["prompt", "calls", "followup"], "properties": {
                "prompt": {"type": "string", "maxLength": 800}, "calls": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                "followup": {"type": "string", "maxLength": 300}}}}}}),
        temperature: 0.7,
        max_tokens: 2000,
        cache_tag: PROMPT_VERSION.into(),
        seed: None,
    }
}

/// Every call exactly once, in order, prompts non-empty.
pub(crate) fn check(m: &Mocked, e: &Expansion) -> Result<(), String> {
    let flat: Vec<usize> = e
        .turns
        .iter()
        .flat_map(|t| t.calls.iter().copied())
        .collect();
    let want: Vec<usize> = (1..=m.scenario.agent_workflow.len()).collect();
    if flat != want {
        return Err(format!(
            "the turns name calls {flat:?}; every call 1..={} must appear exactly once, in order",
            want.len()
        ));
    }
    if let Some(i) = e.turns.iter().position(|t| t.prompt.trim().is_empty()) {
        return Err(format!("turn {} has an empty prompt", i + 1));
    }
    Ok(())
}

impl Generator<'_> {
    /// Stage 4: returns, per scenario, the expansion (None when it stays single-turn). The
    /// scenarios of two or more calls are expanded concurrently (each stands alone), up to
    /// the client's cap.
    pub async fn expand(&mut self, mocked: &[Mocked]) -> Result<Vec<Option<Expansion>>, LlmError> {
        let asked: Vec<&Mocked> = mocked
            .iter()
            .filter(|m| m.scenario.agent_workflow.len() >= 2)
            .collect();
        let reqs: Vec<Request> = asked.iter().map(|m| request(m)).collect();
        let this = &*self;
        let results = super::ordered::run(&this.keys(&reqs), |i| {
            let m = asked[i];
            this.record("expand", &m.scenario.title, &reqs[i], move |e| check(m, e))
        })
        .await?;
        let mut results = results.into_iter();
        let mut out = Vec::new();
        for m in mocked {
            if m.scenario.agent_workflow.len() < 2 {
                out.push(None);
                continue;
            }
            let Some((expansion, mut counts)) = results.next() else {
                out.push(None);
                continue;
            };
            match expansion {
                Some(e) if e.turns.len() >= 2 => out.push(Some(e)),
                Some(_) => {
                    // Validated but single-turn: not an expansion after all.
                    counts.produced -= 1;
                    counts.dropped.push(format!(
                        "{}: a single-turn expansion, discarded (the scenario stays single-turn)",
                        m.scenario.title
                    ));
                    out.push(None);
                }
                None => out.push(None),
            }
            self.tally("expand", counts);
        }
        Ok(out)
    }
}
