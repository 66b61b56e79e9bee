//! The mock MCP server (`agent-seer serve <harness>`): it advertises the harness's tools and
//! answers each `tools/call` with the mock output of the workflow step it matches (same tool,
//! most equal arguments). A call the linter rejects gets the error result the real server
//! would give; a call no step makes gets a schema-shaped error result. Every call it receives
//! is recorded as a transcript, so any MCP client agent can be graded.
//!
//! [`Session::handle`] answers one line without I/O (the fuzz target `serve_session` feeds it
//! arbitrary bytes); [`serve`] is the loop that reads lines, records, and writes replies. A bad
//! line (not UTF-8, not JSON, too long) gets a JSON-RPC error and the session goes on.

use std::io::{BufRead, Read, Write};
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

/// One client's session with the mock: the reply to each line it sends, and the calls it made.
/// [`Session::handle`] turns one line into its reply without any I/O; [`serve`] is the loop
/// around it.
pub struct Session<'a> {
    suite: &'a Suite,
    calls: Vec<Recorded>,
    client_name: String,
}

impl<'a> Session<'a> {
    /// A session before `initialize`.
    pub fn new(suite: &'a Suite) -> Self {
        Self {
            suite,
            calls: Vec::new(),
            client_name: "an MCP client".to_owned(),
        }
    }

    /// How many `tools/call`s the session has received.
    pub fn calls(&self) -> usize {
        self.calls.len()
    }

    /// The reply to one line from the client, or `None` when none is due (a blank line, a
    /// notification, a response). A line that is not JSON (or not UTF-8) gets a parse error
    /// (-32700, id null) and one that is not a request an invalid-request error (-32600), as
    /// JSON-RPC 2.0 says; the session goes on either way.
    pub fn handle(&mut self, line: &[u8]) -> Option<Value> {
        let text = line.trim_ascii();
        if text.is_empty() {
            return None;
        }
        let msg: Value = match serde_json::from_slice(text) {
            Ok(v) => v,
            Err(e) => {
                return Some(error_reply(
                    Value::Null,
                    -32700,
                    format!("parse error: {e}"),
                ));
            }
        };
        let Some(obj) = msg.as_object() else {
            return Some(error_reply(
                Value::Null,
                -32600,
                "invalid request: a JSON-RPC message is an object (batches are not part of MCP)"
                    .into(),
            ));
        };
        let id = obj.get("id").cloned();
        let (method, id) = match (obj.get("method"), id) {
            // A notification.
            (Some(_), None) => return None,
            (Some(Value::String(m)), Some(id)) => (m.as_str(), id),
            // A response: the mock sends no requests, so there is nothing to match it to.
            (None, _) if obj.contains_key("result") || obj.contains_key("error") => return None,
            (_, id) => {
                return Some(error_reply(
                    id.unwrap_or(Value::Null),
                    -32600,
                    "invalid request: no `method` string".into(),
                ));
            }
        };
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        let result = self.answer(method, &params);
        Some(match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err((code, message)) => error_reply(id, code, message),
        })
    }

    fn answer(&mut self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        let suite = self.suite;
        match method {
            "initialize" => {
                if let Some(n) = params.pointer("/clientInfo/name").and_then(Value::as_str) {
                    self.client_name = n.to_owned();
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
                let Some(tool) = params.get("name").and_then(Value::as_str) else {
                    return Err((
                        -32602,
                        "invalid params: `tools/call` needs a `name` string".into(),
                    ));
                };
                let args = params
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let answer = mock_answer(suite, tool, &args);
                self.calls.push(Recorded {
                    tool: tool.to_owned(),
                    arguments: args,
                    output: answer.result.clone(),
                    step: answer.step,
                });
                Ok(answer.result)
            }
            other => Err((
                -32601,
                format!("method `{other}` is not supported by the agent-seer mock"),
            )),
        }
    }

    /// The calls so far as transcript YAML.
    fn recording(&self) -> Result<String, WriteError> {
        transcript_yaml(
            &self.calls,
            &format!("{} (recorded by agent-seer serve)", self.client_name),
        )
    }
}

fn error_reply(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Serves MCP over `input`/`output` until the client closes its side. Records every call in
/// `record` (rewritten atomically after each call) when given. A line longer than
/// [`MAX_LINE`](super::MAX_LINE) gets a parse error and is skipped.
pub fn serve(
    suite: &Suite,
    mut input: impl BufRead,
    mut output: impl Write,
    record: Option<&Path>,
) -> std::io::Result<()> {
    let mut session = Session::new(suite);
    let mut line = Vec::new();
    loop {
        line.clear();
        let cap = super::MAX_LINE as u64 + 1;
        if input.by_ref().take(cap).read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.len() > super::MAX_LINE {
            // Skip the rest of the line without holding it.
            while !line.ends_with(b"\n") {
                line.clear();
                if input
                    .by_ref()
                    .take(64 * 1024)
                    .read_until(b'\n', &mut line)?
                    == 0
                {
                    break;
                }
            }
            let message = format!(
                "parse error: a line longer than {} MiB",
                super::MAX_LINE >> 20
            );
            reply(&mut output, &error_reply(Value::Null, -32700, message))?;
            continue;
        }
        let before = session.calls();
        let answer = session.handle(&line);
        if let Some(path) = record
            && session.calls() > before
        {
            let text = session.recording().map_err(std::io::Error::other)?;
            crate::source::write_atomically(path, text.as_bytes()).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot write the recording {}: {e}", path.display()),
                )
            })?;
        }
        if let Some(msg) = answer {
            reply(&mut output, &msg)?;
        }
    }
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

    fn lyria() -> Suite {
        Suite::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/lyria.yaml"))
            .unwrap()
    }

    /// Every bad line gets its JSON-RPC error and the session answers the next one.
    #[test]
    fn one_line_one_reply() {
        let suite = lyria();
        let mut s = Session::new(&suite);
        let code = |r: Option<Value>| r.map(|r| (r["id"].clone(), r["error"]["code"].clone()));
        let bad: [(&[u8], Value, i64); 7] = [
            (b"\xff\xfe", Value::Null, -32700),
            (b"{\"id\": \"\xc3\x28\"}", Value::Null, -32700),
            (b"{\"jsonrpc\": \"2.0\", \"id\": 1,", Value::Null, -32700),
            (
                b"[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
                Value::Null,
                -32600,
            ),
            (b"{\"jsonrpc\": \"2.0\", \"id\": 2}", json!(2), -32600),
            (
                b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"nope\"}",
                json!(3),
                -32601,
            ),
            (
                b"{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"tools/call\", \"params\": []}",
                json!(4),
                -32602,
            ),
        ];
        for (line, id, want) in bad {
            assert_eq!(
                code(s.handle(line)),
                Some((id, json!(want))),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Nothing is due for a blank line, a notification or a response.
        for quiet in [
            &b" \r"[..],
            br#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
            br#"{"jsonrpc": "2.0", "id": 9, "result": {}}"#,
        ] {
            assert_eq!(s.handle(quiet), None);
        }
        let ping = s.handle(br#"{"jsonrpc": "2.0", "id": "p", "method": "ping"}"#);
        assert_eq!(
            ping,
            Some(json!({"jsonrpc": "2.0", "id": "p", "result": {}}))
        );
        assert_eq!(s.calls(), 0, "no call was made");
    }

    #[test]
    fn a_line_over_the_cap_is_refused_without_being_held() {
        let suite = lyria();
        let mut input = vec![b'x'; super::super::MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\n");
        let mut out = Vec::new();
        serve(&suite, &input[..], &mut out, None).unwrap();
        let replies: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[0]["error"]["code"], -32700);
        assert!(
            replies[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("16 MiB")
        );
        assert_eq!(replies[1]["result"], json!({}));
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
