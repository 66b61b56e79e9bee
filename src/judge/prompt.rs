//! The judge's prompt, in our own words, carrying the paper's rubric (Appendix E, Table 18)
//! and its cascade rules; and the JSON Schema of the answer (bounded, so even a small model
//! under a grammar cannot run on forever).

use std::collections::BTreeSet;
use std::fmt::Write;

use serde_json::{Value, json};

use super::Mode;
use crate::check::{Evaluation, Suite};
use crate::finding::SubDimension;
use crate::harness::{Scenario, Transcript};
use crate::source::json::text as compact;
use crate::spec::capability::{Constraint, Outcome};

/// Bumped whenever the prompt or the schema changes meaning: it is part of every cache key.
pub(crate) const RUBRIC_VERSION: &str = "agent-seer-judge-1";

const SYSTEM: &str = "\
You grade how an AI assistant used tools to serve a user. You do not run any tool: you read \
the user's request, the tools' specifications, the calls the assistant made with the outputs \
it got back, and its reply, and you score the tool use on a fixed rubric.

Score every sub-dimension from 0 (wrong) to 10 (right):
- usage.necessity: was calling tools warranted, rather than answering directly?
- usage.overuse: 10 when no call was redundant or unnecessary (recorded, not averaged).
- selection.correctness: do the chosen tools match what the user asked for?
- selection.specificity: where several tools could serve, was the most specific one chosen?
- selection.completeness: was every tool the task needs called, and did those calls succeed?
- ordering.sequence_logic: is the order of calls logical; do later calls build on earlier ones?
- ordering.dependency_handling: does each call take its inputs from the outputs that produce \
them (output → input), never from values nobody produced?
- ordering.execution_efficiency: is there no wasted, repeated or avoidable call?
- arguments.completeness: are all required parameters given?
- arguments.name_accuracy: does every parameter name match the schema exactly (case-sensitive)?
- arguments.value_accuracy: is every value correct, supported by the chosen model, and grounded \
in the user's request or an earlier tool output?
- arguments.type_compliance: does every value have the schema's type?
- arguments.format_compliance: does every value follow the expected format (enums, patterns, \
URIs, ranges)?
- arguments.relevancy: are there no extra or invalid parameters outside the schema?
Set ordering.applicable to false when the assistant made fewer than two calls.

Cascade rules, which you must apply: when a parameter name is wrong or a required parameter is \
missing, score value_accuracy, type_compliance and format_compliance at 2 or below. When a \
value is wrong (value_accuracy 3 or below), score type_compliance, format_compliance and \
relevancy at 3 or below. A single critical error must collapse the argument scores; do not \
average it away. Values the assistant copied correctly from earlier tool outputs are correct.

Coherence of the reply, from 1 (poor) to 3 (good): logical_flow, completeness (does it answer \
everything asked), conciseness, topic_relevance, and context_retention (use of earlier turns; \
0 when there is no earlier turn).

List in `failures` the sub-dimensions (e.g. argument_value, selection_correctness) that \
scored below 10, and give a short rationale. Answer with one JSON object that follows the \
schema, and nothing else.";

const FACTS: &str = "\
The capability matrix below is what the server really accepts for the model each call \
selects; the tool schemas do not say it. The deterministic findings were checked against the \
specs, the matrix and the dataflow between calls: they are facts. Never score a sub-dimension \
as perfect when a finding says it is broken.";

/// The system and user messages for one transcript.
pub(crate) fn render(
    suite: &Suite,
    t: &Transcript,
    scenario: Option<&Scenario>,
    ev: &Evaluation,
    mode: Mode,
) -> (String, String) {
    let mut system = SYSTEM.to_owned();
    if mode == Mode::Enriched {
        system.push_str("\n\n");
        system.push_str(FACTS);
    }
    let mut u = String::new();
    // The conversation.
    for (i, turn) in t.turns.iter().enumerate() {
        let prompt = turn
            .prompt
            .as_deref()
            .or_else(|| {
                scenario
                    .and_then(|s| s.turns.get(i))
                    .map(|st| st.prompt.as_str())
            })
            .or(if i == 0 { t.prompt.as_deref() } else { None })
            .unwrap_or("(no prompt recorded)");
        let _ = writeln!(u, "## Turn {}: the user\n{}\n", i + 1, prompt.trim());
        let _ = writeln!(u, "## Turn {}: the assistant's tool calls", i + 1);
        if turn.calls.is_empty() {
            let _ = writeln!(u, "(none)");
        }
        for (j, c) in turn.calls.iter().enumerate() {
            let _ = writeln!(u, "{}. {} {}", j + 1, c.tool, compact(c.arguments()));
            if let Some(out) = &c.output {
                let _ = writeln!(u, "   output: {}", truncate(&compact(out), 600));
            }
        }
        let _ = writeln!(
            u,
            "\n## Turn {}: the assistant's reply\n{}\n",
            i + 1,
            turn.reply.as_deref().unwrap_or("(none)").trim()
        );
    }
    // The tools involved.
    let mut tools: BTreeSet<&str> = t.calls().map(|(_, c)| c.tool.as_str()).collect();
    if mode == Mode::Enriched {
        tools.extend(
            scenario
                .into_iter()
                .flat_map(|s| &s.turns)
                .flat_map(|st| &st.workflow)
                .map(|o| o.call.tool.as_str()),
        );
    }
    let _ = writeln!(u, "## Tool specifications");
    for name in &tools {
        match suite.linter.tool(name) {
            Some(spec) => {
                let _ = writeln!(
                    u,
                    "- {}: {}\n  input schema: {}",
                    spec.name,
                    spec.description.trim(),
                    compact(&spec.input_schema)
                );
            }
            None => {
                let _ = writeln!(u, "- {name}: not a tool of this server");
            }
        }
    }
    if mode == Mode::Enriched {
        let rows = matrix_rows(suite, t);
        if !rows.is_empty() {
            let _ = writeln!(
                u,
                "\n## Capability matrix (what the server really does)\n{rows}"
            );
        }
        if let Some(sc) = scenario {
            let _ = writeln!(
                u,
                "## A reference workflow (one correct way; equivalent ones are fine)"
            );
            for (i, st) in sc.turns.iter().enumerate() {
                for o in &st.workflow {
                    let why = o
                        .quick_explanation
                        .as_deref()
                        .map_or(String::new(), |q| format!(" — {q}"));
                    let _ = writeln!(
                        u,
                        "- turn {}: {}{} {}{}{why}",
                        i + 1,
                        o.call.tool,
                        o.alternatives
                            .iter()
                            .map(|a| format!(" or {a}"))
                            .collect::<String>(),
                        compact(o.call.arguments()),
                        step_terms(o)
                    );
                }
                if !st.forbid.is_empty() {
                    let list: Vec<String> = st.forbid.iter().map(ToString::to_string).collect();
                    let _ = writeln!(u, "- turn {}: forbidden: {}", i + 1, list.join(", "));
                }
            }
            u.push('\n');
        }
        let _ = writeln!(u, "## Deterministic findings (facts)");
        if ev.findings.is_empty() {
            let _ = writeln!(u, "(none)");
        }
        for f in &ev.findings {
            let call = f
                .call
                .map_or(String::new(), |c| format!("call {}: ", c + 1));
            let _ = writeln!(
                u,
                "- {call}{} [{}] lowers {}: {}",
                f.severity, f.code, f.sub_dimension, f.message
            );
        }
    }
    let _ = write!(u, "\nScore the assistant's tool use on the rubric.");
    (system, u)
}

/// The matrix facts for the models and tools the calls involve, one line per rule.
fn matrix_rows(suite: &Suite, t: &Transcript) -> String {
    let mut out = String::new();
    let mut seen = BTreeSet::new();
    for (_, call) in t.calls() {
        let Some((matrix, facts)) = suite.linter.facts(&call.tool) else {
            continue;
        };
        let model = suite.linter.model_of(&call.tool, call.args());
        let key = format!("{}/{}", call.tool, model.map_or("", |m| m.id.as_str()));
        if !seen.insert(key) {
            continue;
        }
        let _ = write!(out, "- {} on {}", call.tool, matrix.server);
        if let Some(m) = model {
            let _ = write!(out, ", model {}", m.id);
            if let Some(tools) = &m.tools {
                let _ = write!(
                    out,
                    " (serves: {})",
                    tools.iter().cloned().collect::<Vec<_>>().join(", ")
                );
            }
        }
        out.push('\n');
        if let Some(f) = facts.family.map(|i| &matrix.families[i]) {
            if let Some(w) = f.when_absent {
                let _ = writeln!(
                    out,
                    "  when `{}` is absent the server uses {}",
                    f.selector, f.models[w].id
                );
            }
            let names: Vec<&str> = f.models.iter().map(|m| m.id.as_str()).collect();
            let _ = writeln!(out, "  known models: {}", names.join(", "));
        }
        for (p, v) in &facts.defaults {
            let _ = writeln!(out, "  default {p} = {v}");
        }
        let model_rules = model.into_iter().flat_map(|m| &m.parameters);
        for (p, cs) in facts.parameters.iter().chain(model_rules) {
            for c in cs {
                let _ = writeln!(out, "  {p}: {}", describe(c));
            }
        }
        if let Some(why) = &matrix.retired {
            let _ = writeln!(out, "  retired: {why}");
        }
    }
    out
}

fn describe(c: &Constraint) -> String {
    let mut parts = Vec::new();
    if c.unsupported {
        parts.push("not supported".to_owned());
    }
    if c.integer {
        parts.push("integer".to_owned());
    }
    if let Some(v) = &c.one_of {
        parts.push(format!("one of {}", compact(&Value::Array(v.clone()))));
    }
    for (name, v) in [
        ("≥", c.minimum),
        ("≤", c.maximum),
        (">", c.exclusive_minimum),
        ("<", c.exclusive_maximum),
    ] {
        if let Some(x) = v {
            parts.push(format!("{name} {x}"));
        }
    }
    if let Some(n) = c.max_items {
        parts.push(format!("at most {n} items"));
    }
    if let Some(n) = c.max_length {
        parts.push(format!("at most {n} characters"));
    }
    if let Some(r) = &c.pattern {
        parts.push(format!("matches {}", r.as_str()));
    }
    if let Some(r) = &c.not_pattern {
        parts.push(format!("does not match {}", r.as_str()));
    }
    if let Some(p) = &c.when_absent {
        parts.push(format!("when {p} is absent"));
    }
    let outcome = match c.on_violation {
        Outcome::Reject => "otherwise the call fails",
        Outcome::Coerce => "otherwise silently replaced",
        Outcome::Clamp => "otherwise silently clamped",
        Outcome::Truncate => "otherwise silently truncated",
        Outcome::Ignore => "otherwise silently ignored",
    };
    let rule = c.rule.as_ref().map_or(String::new(), |r| format!(" [{r}]"));
    format!("{}; {outcome}{rule}", parts.join(", "))
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// The answer's JSON Schema: every field required, no extras, scores bounded.
pub(crate) fn schema() -> Value {
    let ten = json!({"type": "integer", "minimum": 0, "maximum": 10});
    let three = json!({"type": "integer", "minimum": 1, "maximum": 3});
    let obj = |props: Value| {
        let required: Vec<String> = props
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        json!({"type": "object", "additionalProperties": false, "required": required, "properties": props})
    };
    let failures: Vec<&str> = SubDimension::ALL.iter().map(|d| d.as_str()).collect();
    obj(json!({
        "usage": obj(json!({"necessity": ten, "overuse": ten})),
        "selection": obj(json!({"correctness": ten, "specificity": ten, "completeness": ten})),
        "ordering": obj(json!({"applicable": {"type": "boolean"}, "sequence_logic": ten, "dependency_handling": ten, "execution_efficiency": ten})),
        "arguments": obj(json!({
            "completeness": ten, "name_accuracy": ten, "value_accuracy": ten,
            "type_compliance": ten, "format_compliance": ten, "relevancy": ten
        })),
        "coherence": obj(json!({
            "logical_flow": three, "completeness": three, "conciseness": three, "topic_relevance": three,
            "context_retention": {"type": "integer", "minimum": 0, "maximum": 3}
        })),
        "failures": {"type": "array", "maxItems": 6, "items": {"enum": failures}},
        "rationale": {"type": "string", "maxLength": 400},
    }))
}

/// What a step allows beyond one call, in the judge's words: optional, repeated, one of an
/// `any_of` item's lists. Empty for a plain step, so plain workflows read as before.
fn step_terms(o: &crate::harness::OracleCall) -> String {
    let mut terms = Vec::new();
    if o.optional {
        terms.push("optional".to_owned());
    }
    match (o.min, o.max) {
        (1, Some(1)) => {}
        (n, Some(m)) if n == m => terms.push(format!("{n} times")),
        (n, Some(m)) => terms.push(format!("{n} to {m} times")),
        (n, None) => terms.push(format!("{n} times or more")),
    }
    if let Some((g, b)) = o.branch {
        terms.push(format!(
            "way {} of choice {}: any one way of a choice does it",
            b + 1,
            g + 1
        ));
    }
    if terms.is_empty() {
        String::new()
    } else {
        format!(" ({})", terms.join("; "))
    }
}
