//! Stage 3, mock outputs: one per call, shaped like the tool's real output when seed outputs
//! exist, validated against the tool's `outputSchema` when it has one, and consistent across
//! the workflow: a URI a later call consumes must come out of the earlier call that produces
//! it (the flow engine checks; the paper lists this as a limitation). Grounding tier per
//! output: high (a sample of this tool), medium (samples only of other tools), low (schema
//! only). The answer also carries the expected response, which must quote a concrete value
//! from the outputs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Generator;
use super::scenarios::GeneratedScenario;
use crate::finding::Code;
use crate::harness::{
    CallDoc, Grounding, LabelDoc, Transcript, TranscriptBody, TranscriptDoc, WriteError,
    object_arguments,
};
use crate::lint::Linter;
use crate::llm::{LlmError, Request};
use crate::source::SourceFile;
use crate::spec::ToolSet;

/// Bumped when the prompt or schema changes meaning (part of the cache key).
pub(crate) const PROMPT_VERSION: &str = "agent-seer-mocks-1";

/// Seed outputs per tool (`*.seed_outputs.json`: `{"samples": [{"tool", "result"}]}`).
pub type Seeds = BTreeMap<String, Vec<Value>>;

/// The samples of a seed-outputs document, grouped by tool in file order; entries without a
/// `tool` string or a `result` are skipped.
pub fn load_seeds(v: &Value) -> Seeds {
    let mut out = Seeds::new();
    for s in v
        .get("samples")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let (Some(tool), Some(result)) = (s.get("tool").and_then(Value::as_str), s.get("result"))
        {
            out.entry(tool.to_owned()).or_default().push(result.clone());
        }
    }
    out
}

/// Stage 3's answer for one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MockedWorkflow {
    /// One `CallToolResult` per call, in order.
    pub outputs: Vec<Value>,
    /// The assistant's expected final reply, quoting a value from the outputs.
    pub expected_response: String,
}

/// A scenario with its mock outputs and their grounding tiers.
#[derive(Clone, Debug, PartialEq)]
pub struct Mocked {
    /// The stage-2 scenario, unchanged.
    pub scenario: GeneratedScenario,
    /// One MCP `CallToolResult` per workflow call, in order, checked against the tool's
    /// `outputSchema` when it has one.
    pub outputs: Vec<Value>,
    /// Per call, how its output was grounded: high (seed samples of this tool), medium (only
    /// of other tools), low (the schema alone).
    pub grounding: Vec<Grounding>,
    /// The assistant's expected final reply; it quotes a value (a URI) from the outputs when
    /// they produce one.
    pub expected_response: String,
}

const SYSTEM: &str = "\
You write the outputs that tools would return for a workflow of calls, so an assistant can be \
tested without running them. Each output is an MCP CallToolResult: {\"content\": [...]} with \
text items and, for files, resource_link items carrying a URI. Follow the example outputs' \
shape and wording when given. Keep values consistent across the workflow: when a later call \
takes a URI or id as input, the earlier call that produces it must return exactly that value. \
Also write the assistant's expected final response, quoting concrete values from the outputs. \
Answer with one JSON object that follows the schema.";

/// The grounding tier of `tool`'s mock output: high with a sample of this tool, medium with
/// samples only of other tools, low with none.
pub(crate) fn grounding(seeds: &Seeds, tool: &str) -> Grounding {
    if seeds.get(tool).is_some_and(|s| !s.is_empty()) {
        Grounding::High
    } else if !seeds.is_empty() {
        Grounding::Medium
    } else {
        Grounding::Low
    }
}

/// The stage-3 prompt for one scenario: its calls, each with the tool's output schema and up
/// to two example outputs (this tool's seeds, else one of another tool's).
pub(crate) fn request(generator: &Generator<'_>, s: &GeneratedScenario, seeds: &Seeds) -> Request {
    let mut user = format!("## The user asked\n{}\n\n## The workflow\n", s.prompt);
    for (i, c) in s.agent_workflow.iter().enumerate() {
        user.push_str(&format!(
            "{}. {} {}\n",
            i + 1,
            c.function_name,
            c.parameters
        ));
        if let Some(out) = generator
            .spec
            .get(&c.function_name)
            .and_then(|t| t.output_schema.as_ref())
        {
            user.push_str(&format!("   output schema: {out}\n"));
        }
        let examples = seeds
            .get(&c.function_name)
            .cloned()
            .unwrap_or_else(|| seeds.values().flatten().take(1).cloned().collect());
        for e in examples.iter().take(2) {
            user.push_str(&format!("   example output: {e}\n"));
        }
    }
    user.push_str(&format!(
        "\nWrite exactly {} outputs, one per call, in order.",
        s.agent_workflow.len()
    ));
    Request {
        system: SYSTEM.into(),
        user,
        schema_name: "mocked_workflow".into(),
        schema: json!({"type": "object", "additionalProperties": false, "required": ["outputs", "expected_response"],
            "properties": {"outputs": {"type": "array", "maxItems": 8, "items": {"type": "object"}}, "expected_response": {"type": "string", "maxLength": 800}}}),
        temperature: 0.7,
        max_tokens: 3000,
        cache_tag: PROMPT_VERSION.into(),
        seed: None,
    }
}

/// The workflow with these outputs, as a transcript, for the flow engine; or the problem that
/// keeps it from being one.
fn as_transcript(s: &GeneratedScenario, outputs: &[Value]) -> Result<Transcript, String> {
    let problem = |e: WriteError| format!("the workflow is no transcript: {e}");
    let calls = s
        .agent_workflow
        .iter()
        .zip(outputs)
        .map(|(c, o)| {
            Ok(CallDoc {
                tool: c.function_name.clone(),
                arguments: object_arguments(&c.function_name, &c.parameters)?,
                id: None,
                output: Some(o.clone()),
            })
        })
        .collect::<Result<_, WriteError>>()
        .map_err(problem)?;
    let doc = TranscriptDoc {
        scenario: None,
        prompt: Some(s.prompt.clone()),
        agent: None,
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls { calls, reply: None },
    };
    let text = doc.to_yaml().map_err(problem)?;
    Transcript::from_source(
        SourceFile::from_text("generated.yaml", text),
        "generated".into(),
    )
    .map_err(|e| format!("the workflow is no transcript: {}", e.message))
}

/// What is wrong with a mocked workflow, if anything.
pub(crate) fn problems(
    spec: &ToolSet,
    linter: &Linter,
    s: &GeneratedScenario,
    m: &MockedWorkflow,
) -> Vec<String> {
    let mut out = Vec::new();
    if m.outputs.len() != s.agent_workflow.len() {
        return vec![format!(
            "{} outputs for {} calls",
            m.outputs.len(),
            s.agent_workflow.len()
        )];
    }
    for (i, (c, o)) in s.agent_workflow.iter().zip(&m.outputs).enumerate() {
        if let Some(schema) = spec
            .get(&c.function_name)
            .and_then(|t| t.output_schema.as_ref())
        {
            let structured = o.get("structuredContent").unwrap_or(o);
            if let Ok(v) = jsonschema::validator_for(schema)
                && let Some(e) = v.iter_errors(structured).next()
            {
                out.push(format!(
                    "output {} does not match `{}`'s output schema: {e}",
                    i + 1,
                    c.function_name
                ));
            }
        }
        if o.get("content").and_then(Value::as_array).is_none() {
            out.push(format!("output {} has no `content` array", i + 1));
        }
    }
    match as_transcript(s, &m.outputs) {
        Ok(t) => {
            let failed = vec![false; s.agent_workflow.len()];
            for f in crate::flow::analyze(&t, None, linter, &failed).findings {
                if matches!(f.code, Code::UnknownReference | Code::UseBeforeProduce) {
                    out.push(format!(
                        "call {}: {} — make the earlier output produce it",
                        f.call.map_or(0, |c| c + 1),
                        f.message
                    ));
                }
            }
        }
        Err(problem) => out.push(problem),
    }
    let produced = crate::flow::artifacts_of_value(&Value::Array(m.outputs.clone()));
    if !produced.is_empty()
        && !produced
            .iter()
            .any(|a| m.expected_response.contains(a.trim_start_matches("gs://")))
    {
        out.push("the expected response quotes no value from the outputs".into());
    }
    out
}

impl Generator<'_> {
    /// Stage 3 over scenarios; a scenario whose outputs never validate is dropped and counted.
    /// The scenarios are mocked concurrently (each one's outputs depend on its own workflow
    /// alone), up to the client's cap.
    pub async fn mocks(
        &mut self,
        scenarios: Vec<GeneratedScenario>,
        linter: &Linter,
        seeds: &Seeds,
    ) -> Result<Vec<Mocked>, LlmError> {
        let reqs: Vec<Request> = scenarios.iter().map(|s| request(self, s, seeds)).collect();
        let this = &*self;
        let spec = this.spec;
        let results = super::ordered::run(&this.keys(&reqs), |i| {
            let s = &scenarios[i];
            this.record("mocks", &s.title, &reqs[i], move |m: &MockedWorkflow| {
                let p = problems(spec, linter, s, m);
                if p.is_empty() {
                    Ok(())
                } else {
                    Err(p.join("; "))
                }
            })
        })
        .await?;
        let mut out = Vec::new();
        for (s, (checked, counts)) in scenarios.into_iter().zip(results) {
            self.tally("mocks", counts);
            if let Some(m) = checked {
                let grounding = s
                    .agent_workflow
                    .iter()
                    .map(|c| grounding(seeds, &c.function_name))
                    .collect();
                out.push(Mocked {
                    outputs: m.outputs,
                    grounding,
                    expected_response: m.expected_response,
                    scenario: s,
                });
            }
        }
        Ok(out)
    }
}
