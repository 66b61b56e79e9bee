//! The mock MCP server (`agent-seer serve <harness>`): it advertises the harness's tools and
//! answers each `tools/call` with the mock output of the workflow step it matches (same tool,
//! most equal arguments). A call the linter rejects gets the error result the real server
//! would give; a call no step makes gets a schema-shaped error result. Every call it receives
//! is recorded as a transcript, so any MCP client agent can be graded.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

use super::PROTOCOL_VERSION;
use crate::check::Suite;
use crate::finding::Severity;
use crate::harness::{
    CallDoc, LabelDoc, TranscriptBody, TranscriptDoc, WriteError, sent_arguments,
};

/// The mock's answer to one call, and which workflow step it came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MockAnswer {
    /// The `CallToolResult` to send back (`isError: true` for a rejected or unknown call).
    pub result: Value,
    /// `(scenario id, turn index, step index)` of the matched step.
    pub step: Option<Step>,
}

/// `(scenario id, turn index, step index)` of a workflow step.
pub(crate) type Step = (String, usize, usize);

/// Answers a call from the harness: lint errors first, then the best-matching step's mock
/// output.
pub(crate) fn mock_answer(suite: &Suite, tool: &str, args: &Value) -> MockAnswer {
    let empty = Map::new();
    let given = args.as_object().unwrap_or(&empty);
    // (equal arguments, step arguments, step, its mock output)
    let mut best: Option<(usize, usize, Step, Option<&Value>)> = None;
    for sc in &suite.harness.scenarios {
        for (ti, turn) in sc.turns.iter().enumerate() {
            for (si, o) in turn.workflow.iter().enumerate() {
                if o.call.tool != tool {
                    continue;
                }
                let want = o.call.args();
                let same = want
                    .iter()
                    .filter(|(k, v)| given.get(*k).is_some_and(|g| equal(g, v)))
                    .count();
                let total = want.len();
                // Most equal arguments, then the fewest unmatched ones.
                let better = best
                    .as_ref()
                    .is_none_or(|(s, t, ..)| same > *s || (same == *s && total - same < t - s));
                if better {
                    best = Some((same, total, (sc.id.clone(), ti, si), o.mock_output.as_ref()));
                }
            }
        }
    }
    let step = best.as_ref().map(|b| b.2.clone());
    // What the real server would reject, it rejects here too (flow and oracle findings need
    // the whole conversation, so only the linter speaks).
    let errors: Vec<String> = suite
        .linter
        .lint(tool, args)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.message)
        .collect();
    if !errors.is_empty() {
        return MockAnswer {
            result: error_result(&errors.join("; ")),
            step,
        };
    }
    match best {
        Some((.., Some(out))) => MockAnswer {
            result: out.clone(),
            step,
        },
        Some((.., None)) => MockAnswer {
            result: json!({"content": [{"type": "text", "text": format!("`{tool}` completed (agent-seer mock: the workflow step has no mock output).")}]}),
            step,
        },
        None => MockAnswer {
            result: error_result(&format!(
                "agent-seer mock: no workflow step of suite `{}` calls `{tool}`",
                suite.harness.suite
            )),
            step: None,
        },
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn error_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// The harness's tools as MCP `Tool` objects.
pub(crate) fn tools_json(suite: &Suite) -> Vec<Value> {
    suite
        .tools
        .tools()
        .iter()
        .map(|t| {
            let mut o = json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema});
            if let Some(out) = &t.output_schema {
                o["outputSchema"] = out.clone();
            }
            o
        })
        .collect()
}

/// A recorded call.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    /// The tool the client called.
    pub tool: String,
    /// The arguments as the client sent them (`{}` when it sent none).
    pub arguments: Value,
    /// What the mock answered.
    pub output: Value,
    /// The workflow step the call matched, if any.
    pub step: Option<Step>,
}

/// The recorded calls as transcript YAML (`scenario:` when every matched call belongs to one
/// scenario).
pub(crate) fn transcript_yaml(calls: &[Recorded], agent: &str) -> Result<String, WriteError> {
    let mut scenarios: Vec<&str> = calls
        .iter()
        .filter_map(|c| c.step.as_ref().map(|s| s.0.as_str()))
        .collect();
    scenarios.dedup();
    let (scenario, prompt) = match scenarios.as_slice() {
        [one] => (Some((*one).to_owned()), None),
        _ => (
            None,
            Some(
                "(recorded by agent-seer serve; the scenario could not be told from the calls)"
                    .to_owned(),
            ),
        ),
    };
    TranscriptDoc {
        scenario,
        prompt,
        agent: Some(agent.to_owned()),
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls {
            calls: calls
                .iter()
                .map(|c| CallDoc {
                    tool: c.tool.clone(),
                    arguments: sent_arguments(&c.arguments),
                    id: None,
                    output: Some(c.output.clone()),
                })
                .collect(),
            reply: None,
        },
    }
    .to_yaml()
}

/// Serves MCP over `input`/`output` until the client closes its side. Records every call in
/// `record` (rewritten atomically after each call) when given.
pub fn serve(
    suite: &Suite,
    input: impl BufRead,
    mut output: impl Write,
    record: Option<&Path>,
) -> std::io::Result<()> {
    let mut calls: Vec<Recorded> = Vec::new();
    let mut client_name = "an MCP client".to_owned();
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                reply(
                    &mut output,
                    &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {e}")}}),
                )?;
                continue;
            }
        };
        let Some(id) = msg.get("id").cloned() else {
            continue;
        }; // a notification
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => {
                if let Some(n) = params.pointer("/clientInfo/name").and_then(Value::as_str) {
                    client_name = n.to_owned();
                }
                let version = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or(PROTOCOL_VERSION);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": format!("agent-seer-mock/{}", suite.harness.suite), "version": env!("CARGO_PKG_VERSION")},
                    "instructions": "A mock server: answers come from the harness's mock outputs; every call is recorded for grading.",
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": tools_json(suite)})),
            "tools/call" => {
                let tool = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let args = params
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let answer = mock_answer(suite, &tool, &args);
                calls.push(Recorded {
                    tool,
                    arguments: args,
                    output: answer.result.clone(),
                    step: answer.step,
                });
                if let Some(path) = record {
                    let text = transcript_yaml(
                        &calls,
                        &format!("{client_name} (recorded by agent-seer serve)"),
                    )
                    .map_err(std::io::Error::other)?;
                    crate::source::write_atomically(path, text.as_bytes()).map_err(|e| {
                        std::io::Error::new(
                            e.kind(),
                            format!("cannot write the recording {}: {e}", path.display()),
                        )
                    })?;
                }
                Ok(answer.result)
            }
            other => Err(
                json!({"code": -32601, "message": format!("method `{other}` is not supported by the agent-seer mock")}),
            ),
        };
        let msg = match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
        };
        reply(&mut output, &msg)?;
    }
    Ok(())
}

fn reply(out: &mut impl Write, msg: &Value) -> std::io::Result<()> {
    writeln!(out, "{msg}")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::harness::{Transcript, UNPARSABLE};
    use crate::source::SourceFile;

    fn load(text: String) -> Transcript {
        Transcript::from_source(SourceFile::from_text("t.yaml", text), "t".into()).unwrap()
    }

    #[test]
    fn a_recording_loads_whatever_the_client_sent() {
        let recorded = |arguments: Value, step: Option<Step>| Recorded {
            tool: "paint".into(),
            arguments,
            output: error_result("no"),
            step,
        };
        let one = Some(("square".to_owned(), 0, 0));
        let calls = [
            recorded(json!({"ratio": "1:1"}), one.clone()),
            recorded(Value::Null, one),
            // Not MCP: arguments are an object. Kept, so grading can say so.
            recorded(json!(["1:1"]), None),
        ];
        let t = load(transcript_yaml(&calls, "a client").unwrap());
        assert_eq!(t.scenario.as_deref(), Some("square"));
        assert_eq!(t.agent.as_deref(), Some("a client"));
        let args: Vec<Value> = t.calls().map(|(_, c)| c.arguments.clone()).collect();
        assert_eq!(
            args,
            [
                json!({"ratio": "1:1"}),
                json!({}),
                json!({(UNPARSABLE): "[\"1:1\"]"})
            ]
        );
        assert!(t.calls().all(|(_, c)| c.output == Some(error_result("no"))));
        // Calls of no one scenario: the transcript says so in its prompt.
        let t = load(transcript_yaml(&calls[2..], "a client").unwrap());
        assert_eq!(t.scenario, None);
        assert!(t.prompt.is_some_and(|p| p.contains("could not be told")));
    }
}
