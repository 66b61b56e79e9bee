//! Stage 2, scenarios: simple (everyday, short chains) and complex (novel, multi-step,
//! cross-tool) scenarios, each with a title, prompt, ordered workflow (tool, arguments, a
//! one-line reason), a novelty reason and a follow-up (paper §3.2). Coverage: the first round
//! asks that every tool appear; later rounds offer only the tools still uncovered, in batches
//! (so every tool of a large spec is put in front of the model — the paper stalled at 56 % on
//! 64 tools), until all are covered or the round budget is spent. Every scenario is checked:
//! tools must exist in the spec and every call must lint clean (an oracle the linter rejects
//! would grade correct agents as wrong); problems are fed back, and what still fails after the
//! last attempt is dropped and counted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::interpret::ToolExplanation;
use super::{Generator, StageCounts};
use crate::finding::Severity;
use crate::harness::Tier;
use crate::lint::Linter;
use crate::llm::{LlmError, Request, extract_json};

/// Bumped when the prompt or schema changes meaning (part of the cache key).
pub(crate) const PROMPT_VERSION: &str = "agent-seer-scenarios-3";

/// One generated call of a workflow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratedCall {
    /// The tool, one of those the request offered (the schema's enum).
    pub function_name: String,
    /// The arguments, a JSON object with no lint error against the spec and the matrices
    /// (stage 2 drops the scenario otherwise).
    pub parameters: Value,
    /// A one-line reason for the call (at most 200 characters).
    pub quick_explanation: String,
}

/// One generated scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratedScenario {
    /// A short title (at most 120 characters); the harness names the scenario by its slug.
    pub title: String,
    /// Simple (one or two everyday calls) or complex (a novel multi-step chain).
    pub tier: Tier,
    /// A domain category (at most 80 characters).
    pub category: String,
    /// The user's request; it contains every input value (URI, id) the first call takes.
    pub prompt: String,
    /// The oracle: the ordered calls that serve the prompt, one to eight.
    pub agent_workflow: Vec<GeneratedCall>,
    /// Why the scenario is a useful test (at most 300 characters).
    pub novelty_reason: String,
    /// A natural follow-up question (at most 300 characters).
    pub agent_followup: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Batch {
    scenarios: Vec<GeneratedScenario>,
}

/// Coverage of a set of scenarios over a spec.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Coverage {
    /// Tools offered: one per stage-1 record given to [`Generator::scenarios`].
    pub tools: usize,
    /// Tools that at least one kept scenario calls.
    pub covered: usize,
    /// The tools no kept scenario calls, sorted by name.
    pub uncovered: Vec<String>,
    /// Gini coefficient of calls per tool (0 = every tool used equally).
    pub gini: f64,
}

/// How many scenarios per round, how many rounds, how many tools per batch.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Simple scenarios asked for per request (default 3).
    pub simple: usize,
    /// Complex scenarios asked for per request (default 3).
    pub complex: usize,
    /// Rounds of the coverage loop at most (default 5); the first offers every tool, later
    /// ones only the uncovered.
    pub rounds: usize,
    /// Tools offered per request (default 12; 0 counts as 1).
    pub batch: usize,
}

impl Default for Plan {
    fn default() -> Self {
        Self {
            simple: 3,
            complex: 3,
            rounds: 5,
            batch: 12,
        }
    }
}

const SYSTEM: &str = "\
You write realistic evaluation scenarios for an AI assistant that can call the tools listed. \
A simple scenario is an everyday request served by one or two calls; a complex one is a novel, \
multi-step request that chains several tools, passing values from earlier results to later \
calls. For each scenario give a short title, its tier, a category, the user's prompt, the \
exact ordered workflow of tool calls that serves it (each with the tool's exact name, \
arguments that follow its schema and the server's limits, and a one-line reason), why the \
scenario is a useful test (novelty_reason), and a natural follow-up question. Use only the \
tools listed, with their names exactly as written. Answer with one JSON object that follows \
the schema.";

/// The answer's schema. A workflow call is one of the offered tools, each with its own input
/// schema: `function_name` that tool's name and `parameters` what its `inputSchema` allows, so a
/// provider that decodes under the schema (llama.cpp's grammars, OpenAI's structured outputs,
/// Gemini's `responseJsonSchema`) can neither invent a tool nor write arguments its schema
/// rejects, and the answer is checked against the same schema before the linter sees it.
fn schema(tools: &[(&str, Option<&Value>)]) -> Value {
    let text = |n: u32| json!({"type": "string", "maxLength": n});
    let calls: Vec<Value> = tools
        .iter()
        .map(|(name, input)| {
            json!({
                "type": "object", "additionalProperties": false, "required": ["function_name", "parameters", "quick_explanation"],
                "properties": {"function_name": {"type": "string", "enum": [name]}, "parameters": parameters_schema(*input), "quick_explanation": text(200)}})
        })
        .collect();
    json!({
        "type": "object", "additionalProperties": false, "required": ["scenarios"],
        "properties": {"scenarios": {"type": "array", "minItems": 1, "maxItems": 12, "items": {
            "type": "object", "additionalProperties": false,
            "required": ["title", "tier", "category", "prompt", "agent_workflow", "novelty_reason", "agent_followup"],
            "properties": {
                "title": text(120), "tier": {"enum": ["simple", "complex"]}, "category": text(80), "prompt": text(800),
                "agent_workflow": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"anyOf": calls}},
                "novelty_reason": text(300), "agent_followup": text(300)
            }}}}
    })
}

/// A tool's `inputSchema` as a call's `parameters` schema: an object schema as the server
/// gives it, without `$schema` (one per document). One that refers elsewhere (`$ref`, which
/// would resolve against the answer's schema, not the tool's) or is no object schema is only
/// `{"type": "object"}`: the linter still checks those calls.
fn parameters_schema(input: Option<&Value>) -> Value {
    fn refers(v: &Value) -> bool {
        match v {
            Value::Object(o) => {
                o.keys()
                    .any(|k| crate::lint::cycle::REFS.contains(&k.as_str()))
                    || o.values().any(refers)
            }
            Value::Array(a) => a.iter().any(refers),
            _ => false,
        }
    }
    match input {
        Some(v @ Value::Object(o)) if o.get("type").is_none_or(|t| t == "object") && !refers(v) => {
            let mut o = o.clone();
            o.remove("$schema");
            o.insert("type".into(), json!("object"));
            Value::Object(o)
        }
        _ => json!({"type": "object"}),
    }
}

/// The request for one round over a batch of tools.
pub(crate) fn request(
    tools: &[&ToolExplanation],
    generator: &Generator<'_>,
    plan: &Plan,
    must_cover: &[String],
) -> Request {
    let mut user = String::from("## Tools\n");
    for t in tools {
        let schema = generator
            .spec
            .get(&t.tool_name)
            .map(|s| s.input_schema.to_string())
            .unwrap_or_default();
        user.push_str(&format!(
            "- {}: {}\n  needs: {}\n  used for: {}\n  contexts: {}\n  input schema: {schema}\n",
            t.tool_name,
            t.what_it_does,
            t.what_it_needs,
            t.why_its_used,
            t.enterprise_context.join(", ")
        ));
    }
    user.push_str(&format!(
        "\nWrite {} simple and {} complex scenarios.",
        plan.simple, plan.complex
    ));
    if !must_cover.is_empty() {
        user.push_str(&format!(
            " Every one of these tools must appear in at least one workflow: {}.",
            must_cover.join(", ")
        ));
    }
    Request {
        system: SYSTEM.into(),
        user,
        schema_name: "scenarios".into(),
        schema: schema(
            &tools
                .iter()
                .map(|t| {
                    let input = generator.spec.get(&t.tool_name).map(|s| &s.input_schema);
                    (t.tool_name.as_str(), input)
                })
                .collect::<Vec<_>>(),
        ),
        temperature: 0.7,
        max_tokens: 4096,
        cache_tag: PROMPT_VERSION.into(),
        seed: None,
    }
}

/// What is wrong with a scenario, if anything: unknown tools, calls the linter rejects.
pub(crate) fn problems(s: &GeneratedScenario, linter: &Linter) -> Vec<String> {
    let mut out = Vec::new();
    for (i, c) in s.agent_workflow.iter().enumerate() {
        if linter.tool(&c.function_name).is_none() {
            let hint = crate::finding::did_you_mean(
                &c.function_name,
                linter.tools().map(|t| t.name.as_str()),
            );
            out.push(format!(
                "scenario `{}`, call {}: `{}` is not a tool of the spec{hint}",
                s.title,
                i + 1,
                c.function_name
            ));
            continue;
        }
        for f in linter
            .lint(&c.function_name, &c.parameters)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
        {
            out.push(format!(
                "scenario `{}`, call {} (`{}`): {}",
                s.title,
                i + 1,
                c.function_name,
                f.message
            ));
        }
        // The first call's inputs can only come from the user: the prompt must name them.
        if i == 0 {
            let inputs = linter
                .facts(&c.function_name)
                .map(|(_, f)| f.inputs.clone())
                .unwrap_or_default();
            for p in inputs {
                let values: Vec<&str> = match c.parameters.get(&p) {
                    Some(Value::String(v)) => vec![v.as_str()],
                    Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                for v in values.into_iter().filter(|v| !s.prompt.contains(*v)) {
                    out.push(format!("scenario `{}`: the first call takes `{p}` = `{v}`, which the prompt never gives; name it in the prompt", s.title));
                }
            }
        }
    }
    out
}

/// Coverage and the Gini coefficient of tool use.
pub(crate) fn coverage(scenarios: &[GeneratedScenario], tools: &[String]) -> Coverage {
    let mut counts: BTreeMap<&str, usize> = tools.iter().map(|t| (t.as_str(), 0)).collect();
    for s in scenarios {
        for c in &s.agent_workflow {
            if let Some(n) = counts.get_mut(c.function_name.as_str()) {
                *n += 1;
            }
        }
    }
    let uncovered: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(t, _)| (*t).to_owned())
        .collect();
    let xs: Vec<f64> = counts.values().map(|n| *n as f64).collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n.max(1.0);
    let gini = if mean == 0.0 {
        0.0
    } else {
        xs.iter()
            .flat_map(|a| xs.iter().map(move |b| (a - b).abs()))
            .sum::<f64>()
            / (2.0 * n * n * mean)
    };
    Coverage {
        tools: tools.len(),
        covered: tools.len() - uncovered.len(),
        uncovered,
        gini,
    }
}

impl Generator<'_> {
    /// Stage 2 with the coverage loop. `linter` checks every call.
    pub async fn scenarios(
        &mut self,
        tools: &[ToolExplanation],
        linter: &Linter,
        plan: Plan,
    ) -> Result<(Vec<GeneratedScenario>, Coverage), LlmError> {
        let names: Vec<String> = tools.iter().map(|t| t.tool_name.clone()).collect();
        let mut kept: Vec<GeneratedScenario> = Vec::new();
        for round in 0..plan.rounds {
            let uncovered = coverage(&kept, &names).uncovered;
            if round > 0 && uncovered.is_empty() {
                break;
            }
            // Round 1 offers every tool (in batches); later rounds only the uncovered ones.
            let pool: Vec<&ToolExplanation> = tools
                .iter()
                .filter(|t| round == 0 || uncovered.contains(&t.tool_name))
                .collect();
            // A round's batches are independent (what each asks for was fixed when the round
            // began), so they run concurrently; the rounds stay in sequence, each asking for
            // what the ones before left uncovered.
            let reqs: Vec<Request> = pool
                .chunks(plan.batch.max(1))
                .map(|batch| {
                    let must: Vec<String> = batch.iter().map(|t| t.tool_name.clone()).collect();
                    request(batch, self, &plan, &must)
                })
                .collect();
            let this = &*self;
            let answers =
                super::ordered::run(&this.keys(&reqs), |i| this.ask(&reqs[i], linter)).await?;
            for (got, counts) in answers {
                self.tally("scenarios", counts);
                kept.extend(got);
            }
        }
        let cov = coverage(&kept, &names);
        Ok((kept, cov))
    }

    /// One request, up to 3 attempts with the problems fed back, all within the client's one
    /// budget of requests; after the last, the valid scenarios are kept and the others dropped
    /// and counted. It changes nothing itself: the counts come back with the scenarios.
    async fn ask(
        &self,
        req: &Request,
        linter: &Linter,
    ) -> Result<(Vec<GeneratedScenario>, StageCounts), LlmError> {
        let mut attempt_req = req.clone();
        let mut budget = self.client.budget();
        let mut counts = StageCounts::default();
        for attempt in 1..=3 {
            let answer = self.client.answer(&attempt_req, &mut budget).await?;
            let last = attempt == 3 || budget.is_spent();
            let batch = extract_json(&answer.text)
                .ok_or_else(|| "the answer holds no complete JSON object".to_owned())
                .and_then(|v| {
                    serde_json::from_value::<Batch>(v)
                        .map_err(|e| format!("the JSON does not fit the schema: {e}"))
                });
            let problems_text = match batch {
                Err(p) => p,
                Ok(batch) => {
                    let checked: Vec<(GeneratedScenario, Vec<String>)> = batch
                        .scenarios
                        .into_iter()
                        .map(|s| {
                            let p = problems(&s, linter);
                            (s, p)
                        })
                        .collect();
                    let all: Vec<String> = checked.iter().flat_map(|(_, p)| p.clone()).collect();
                    if all.is_empty() || last {
                        counts.retried += usize::from(attempt > 1);
                        let mut keep = Vec::new();
                        for (s, p) in checked {
                            if p.is_empty() {
                                counts.produced += 1;
                                keep.push(s);
                            } else {
                                counts.dropped.push(p.join("; "));
                            }
                        }
                        if all.is_empty() {
                            self.client.remember(req, &answer)?;
                        }
                        return Ok((keep, counts));
                    }
                    all.join("\n")
                }
            };
            if last {
                counts
                    .dropped
                    .push(format!("a whole answer: {problems_text}"));
                return Ok((Vec::new(), counts));
            }
            attempt_req.user = format!(
                "{}\n\nYour previous answer was rejected:\n{problems_text}\nAnswer again, fixing these.",
                req.user
            );
        }
        Ok((Vec::new(), counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(calls: &[&str]) -> GeneratedScenario {
        GeneratedScenario {
            title: "t".into(),
            tier: Tier::Simple,
            category: "c".into(),
            prompt: "p".into(),
            agent_workflow: calls
                .iter()
                .map(|c| GeneratedCall {
                    function_name: (*c).into(),
                    parameters: json!({}),
                    quick_explanation: "q".into(),
                })
                .collect(),
            novelty_reason: "n".into(),
            agent_followup: "f".into(),
        }
    }

    #[test]
    fn coverage_and_gini() {
        let tools: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .map(|t| (*t).to_owned())
            .collect();
        let c = coverage(&[s(&["a", "b"]), s(&["c", "d"])], &tools);
        assert_eq!((c.covered, c.gini), (4, 0.0));
        let c = coverage(&[s(&["a", "a", "a"])], &tools);
        assert_eq!(c.uncovered, ["b", "c", "d"]);
        // One tool has every call: (|3-0|·2·3) / (2·16·0.75) = 18 / 24 = 0.75.
        assert!((c.gini - 0.75).abs() < 1e-9, "{}", c.gini);
        assert_eq!(
            coverage(&[s(&["zz"])], &tools).covered,
            0,
            "unknown tools do not count"
        );
    }
}
