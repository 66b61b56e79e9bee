//! The mock MCP server (`agent-seer serve <harness>`): a twin of the captured server, not a
//! stub. It presents what `inspect` captured — the `tools/list` as the server wrote it (every
//! field, in its order), its name, version, capabilities and instructions (the `.server.json`
//! sidecar) — and nothing that says it is a test. A call that matches a workflow step gets
//! that step's mock output; a call the linter rejects gets the error result the real server
//! would give; a call of an unknown tool the spec's `-32602`; and a call that matches no step,
//! or names a thing no output produced, gets a not-found result — never another step's data —
//! and is noted as a finding. Every call is recorded as a transcript, attributed to the one
//! scenario the calls fit (`--scenario` pins it); a recording no scenario can be told for is an
//! error, not an oracle-less pass.
//!
//! Both protocol revisions are served: the session-based one through `initialize`, the
//! stateless 2026-07-28 one per request (`_meta`, `server/discover`, `resultType`). Faults can
//! be injected for resilience tests (latency, failed calls), seeded and recorded.
//!
//! [`Session::handle`] answers one line without I/O (the fuzz target `serve_session` feeds it
//! arbitrary bytes); [`serve`] is the stdio loop, [`serve_http`] the streamable HTTP one.

use std::collections::BTreeSet;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::{LEGACY_VERSION, MODERN_VERSION, SUPPORTED_VERSIONS, code, meta};
use crate::check::{Suite, evaluate};
use crate::finding::{Code, Severity};
use crate::harness::{
    CallDoc, LabelDoc, Transcript, TranscriptBody, TranscriptDoc, TranscriptTurnDoc, WriteError,
    sent_arguments,
};
use crate::source::SourceFile;

#[path = "server_http.rs"]
mod http;
pub use http::serve_http;

/// The mock's answer to one call, and which workflow step it came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MockAnswer {
    /// The `CallToolResult` to send back (`isError: true` for a rejected or unmatched call).
    pub result: Value,
    /// `(scenario id, turn index, step index)` of the matched step.
    pub step: Option<Step>,
    /// Why the call got no step's output, for the finding the mock notes.
    pub unmatched: Option<String>,
}

/// `(scenario id, turn index, step index)` of a workflow step.
pub(crate) type Step = (String, usize, usize);

/// A call the session has answered: what the agent sent and saw.
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

/// Answers call `tool(args)` after `history` (the calls of each turn so far; the call belongs
/// to the last), from the steps of the scenarios at `candidates` (indices into the harness):
/// lint errors first, then the best-matching step's mock output, unless the call names a
/// reference no earlier output produced or differs from that step where the step takes a
/// reference, in which case it is not found.
pub(crate) fn answer_call(
    suite: &Suite,
    candidates: &[usize],
    history: &[Vec<Recorded>],
    tool: &str,
    args: &Value,
) -> MockAnswer {
    let errors: Vec<String> = suite
        .linter
        .lint(tool, args)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.message)
        .collect();
    let best = best_step(suite, candidates, tool, args);
    let step = best.as_ref().map(|b| b.step.clone());
    // What the real server would reject, it rejects here too.
    if !errors.is_empty() {
        return MockAnswer {
            result: error_result(&errors.join("; ")),
            step,
            unmatched: None,
        };
    }
    let Some(best) = best else {
        return not_found(
            suite,
            tool,
            args,
            format!("no workflow step calls `{tool}` with these arguments"),
        );
    };
    if let Some(why) = unproduced_reference(suite, &best.step.0, history, tool, args) {
        return not_found(suite, tool, args, why);
    }
    let sc = &suite.harness.scenarios[best.scenario];
    let refs = crate::flow::inferred_references(sc);
    let want = &sc.turns[best.step.1].workflow[best.step.2];
    if let Some(patterns) = refs.get(tool) {
        for p in patterns.iter().filter(|p| p.starts_with('/')) {
            let theirs = crate::flow::values_at_any(want.call.arguments(), p);
            let ours = crate::flow::values_at_any(args, p);
            let same = theirs.len() == ours.len()
                && theirs
                    .iter()
                    .all(|(_, t)| ours.iter().any(|(_, o)| equal(o, t)));
            if !same {
                return not_found(
                    suite,
                    tool,
                    args,
                    format!(
                        "its `{p}` is not what the workflow's step passes there (a reference \
                         to another thing)"
                    ),
                );
            }
        }
    }
    if best.same == 0 && best.total > 0 {
        return not_found(
            suite,
            tool,
            args,
            format!(
                "no argument equals a workflow step's (nearest: `{tool}` in `{}`)",
                best.step.0
            ),
        );
    }
    let result = match &want.mock_output {
        Some(out) => out.clone(),
        // The step has no mock output: a bare success, as many servers answer an action.
        None => json!({"content": [{"type": "text", "text": "OK"}]}),
    };
    MockAnswer {
        result,
        step: Some(best.step),
        unmatched: None,
    }
}

struct Best {
    scenario: usize,
    step: Step,
    same: usize,
    total: usize,
}

/// The step of `tool` whose arguments most equal `args` (then the fewest unmatched ones),
/// among the scenarios at `candidates`.
fn best_step(suite: &Suite, candidates: &[usize], tool: &str, args: &Value) -> Option<Best> {
    let empty = Map::new();
    let given = args.as_object().unwrap_or(&empty);
    let mut best: Option<Best> = None;
    for &i in candidates {
        let sc = &suite.harness.scenarios[i];
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
                let better = best.as_ref().is_none_or(|b| {
                    same > b.same || (same == b.same && total - same < b.total - b.same)
                });
                if better {
                    best = Some(Best {
                        scenario: i,
                        step: (sc.id.clone(), ti, si),
                        same,
                        total,
                    });
                }
            }
        }
    }
    best
}

/// Why the call names something no earlier output produced, by the flow engine's reading of
/// the calls so far against `scenario`.
fn unproduced_reference(
    suite: &Suite,
    scenario: &str,
    history: &[Vec<Recorded>],
    tool: &str,
    args: &Value,
) -> Option<String> {
    // Only a call with references can name what nothing produced: the engine's run over the
    // calls so far is for those alone, so a loop of `read_graph` calls never pays it (issue
    // 32, item 6: 400 calls took 288 s).
    let (_, sc) = suite.scenario(scenario)?;
    let inferred = crate::flow::inferred_references(sc);
    if crate::flow::references_in(&suite.linter, tool, args, inferred.get(tool)).is_empty() {
        return None;
    }
    let mut turns: Vec<Vec<Recorded>> = history.to_vec();
    if turns.is_empty() {
        turns.push(Vec::new());
    }
    turns.last_mut()?.push(Recorded {
        tool: tool.to_owned(),
        arguments: args.clone(),
        output: Value::Null,
        step: None,
    });
    let mut doc = transcript_doc(&turns[0], "probe", Some(scenario.to_owned()), None);
    if turns.len() > 1 {
        doc.body = TranscriptBody::Turns {
            turns: turns
                .iter()
                .map(|calls| TranscriptTurnDoc {
                    prompt: None,
                    calls: call_docs(calls),
                    reply: None,
                })
                .collect(),
        };
    }
    #[cfg(test)]
    PROBED.with(|n| n.set(n.get() + turns.iter().map(Vec::len).sum::<usize>()));
    let text = doc.to_yaml().ok()?;
    let t =
        Transcript::from_source(SourceFile::from_text("probe.yaml", text), "probe".into()).ok()?;
    let ev = evaluate(suite, &t).ok()?;
    let last = turns.iter().map(Vec::len).sum::<usize>() - 1;
    ev.findings
        .iter()
        .find(|f| {
            f.call == Some(last)
                && matches!(f.code, Code::UnknownReference | Code::UseBeforeProduce)
        })
        .map(|f| f.message.clone())
}

// How many calls the reference probes of this thread have run the engine over: the work a
// session does per call, which must not grow with the calls so far.
#[cfg(test)]
thread_local! {
    pub(crate) static PROBED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The server's answer to a call naming a thing that does not exist: the matrix's
/// `not_found:` for the tool, else an `isError` result naming it.
fn not_found(suite: &Suite, tool: &str, args: &Value, why: String) -> MockAnswer {
    // The value the call names, when one stands out: its first string argument (or item).
    let named = args.as_object().and_then(|m| {
        m.values().find_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(a) => a.iter().find_map(Value::as_str).map(str::to_owned),
            _ => None,
        })
    });
    let declared = suite
        .linter
        .facts(tool)
        .and_then(|(_, t)| t.not_found.clone());
    let result = match declared {
        Some(mut r) => {
            fill(&mut r, named.as_deref().unwrap_or(""));
            r
        }
        None => error_result(&match &named {
            Some(n) => format!("Not found: {n}"),
            None => "Not found".to_owned(),
        }),
    };
    MockAnswer {
        result,
        step: None,
        unmatched: Some(format!("`{tool}`: answered not-found: {why}")),
    }
}

/// Replaces `{value}` in every string of `v`.
fn fill(v: &mut Value, value: &str) {
    match v {
        Value::String(s) if s.contains("{value}") => *s = s.replace("{value}", value),
        Value::Array(a) => a.iter_mut().for_each(|x| fill(x, value)),
        Value::Object(o) => o.values_mut().for_each(|x| fill(x, value)),
        _ => {}
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

/// The harness's tools as MCP `Tool` objects (for specs in another dialect).
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

/// What the mock presents: the captured `tools/list` and identity.
#[derive(Clone, Debug)]
pub struct Twin {
    /// Each tool's JSON text, on one line, as the capture wrote it.
    tools: Vec<String>,
    /// `serverInfo` (`name`, `version`, …) as captured.
    server_info: Value,
    /// The `capabilities` as captured.
    capabilities: Value,
    /// The `instructions`, when the server gave any.
    instructions: Option<String>,
}

/// The sidecar `inspect -o X.tools.json` writes beside the tools: `X.server.json`.
pub fn sidecar_of(tools: &Path) -> PathBuf {
    let name = tools
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".tools.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name);
    tools.with_file_name(format!("{stem}.server.json"))
}

impl Twin {
    /// The twin of the suite's server: its tool files' text (MCP dialect; other dialects are
    /// converted), and the identity in the first tool file's sidecar (without one, the suite's
    /// name and tools capability only).
    pub fn load(suite: &Suite) -> Result<Self, crate::source::SourceError> {
        let mut tools = Vec::new();
        let mut verbatim = true;
        for p in &suite.harness.tools {
            let file = SourceFile::read(p)?;
            match mcp_tools_text(&file.text) {
                Some(t) => tools.extend(t),
                None => verbatim = false,
            }
        }
        if !verbatim {
            tools = tools_json(suite).iter().map(Value::to_string).collect();
        }
        let mut twin = Twin {
            tools,
            server_info: json!({"name": suite.harness.suite, "version": "1.0.0"}),
            capabilities: json!({"tools": {}}),
            instructions: None,
        };
        if let Some(p) = suite.harness.tools.first().map(|p| sidecar_of(p))
            && p.is_file()
        {
            let file = SourceFile::read(&p)?;
            let v: Value = file.parse_json()?;
            let result = v
                .get("initialize")
                .or_else(|| v.get("discover"))
                .ok_or_else(|| {
                    file.error_at(1, 1, "a server sidecar holds `initialize` or `discover`")
                })?;
            let info = result.get("serverInfo").cloned().or_else(|| {
                result
                    .get("_meta")
                    .and_then(|m| m.get(meta::SERVER_INFO))
                    .cloned()
            });
            if let Some(i) = info {
                twin.server_info = i;
            }
            if let Some(c) = result.get("capabilities") {
                twin.capabilities = c.clone();
            }
            twin.instructions = result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        Ok(twin)
    }
}

/// Each tool of an MCP `tools/list` file (a bare array or `{"tools": […]}`) as one line of
/// its own text; `None` for another dialect.
fn mcp_tools_text(text: &str) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Wrapped<'a> {
        #[serde(borrow)]
        tools: Vec<&'a RawValue>,
    }
    let text = text.trim_start_matches('\u{feff}');
    let items: Vec<&RawValue> = serde_json::from_str::<Vec<&RawValue>>(text)
        .or_else(|_| serde_json::from_str::<Wrapped>(text).map(|w| w.tools))
        .ok()?;
    let mut out = Vec::new();
    for t in items {
        let v: Value = serde_json::from_str(t.get()).ok()?;
        v.get("inputSchema")?;
        out.push(crate::source::json::reformat(t.get(), None));
    }
    Some(out)
}

/// Faults to inject, for resilience tests.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Every answer waits this long (a range: uniformly between).
    pub latency: Option<(Duration, Duration)>,
    /// The share of calls that fail, drawn with [`Faults::seed`].
    pub fail_rate: f64,
    /// Calls that fail, 1-based in the order received.
    pub fail_calls: BTreeSet<usize>,
    /// The seed of the draws.
    pub seed: u64,
}

impl Faults {
    fn any(&self) -> bool {
        self.latency.is_some() || self.fail_rate > 0.0 || !self.fail_calls.is_empty()
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some((lo, hi)) = self.latency {
            parts.push(if lo == hi {
                format!("latency {lo:?}")
            } else {
                format!("latency {lo:?}..{hi:?}")
            });
        }
        if self.fail_rate > 0.0 {
            parts.push(format!("fail rate {}", self.fail_rate));
        }
        if !self.fail_calls.is_empty() {
            let c: Vec<String> = self.fail_calls.iter().map(usize::to_string).collect();
            parts.push(format!("failed calls {}", c.join(",")));
        }
        format!("{} (seed {})", parts.join(", "), self.seed)
    }
}

/// How to serve.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The scenario every call is attributed to; without it, the calls tell.
    pub scenario: Option<String>,
    /// Faults to inject.
    pub faults: Faults,
}

/// The recorded calls as a transcript, attributed to `scenario`.
fn transcript_doc(
    calls: &[Recorded],
    agent: &str,
    scenario: Option<String>,
    note: Option<String>,
) -> TranscriptDoc {
    TranscriptDoc {
        scenario,
        prompt: None,
        agent: Some(agent.to_owned()),
        note,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls {
            calls: call_docs(calls),
            reply: None,
        },
    }
}

fn call_docs(calls: &[Recorded]) -> Vec<CallDoc> {
    calls
        .iter()
        .map(|c| CallDoc {
            tool: c.tool.clone(),
            arguments: sent_arguments(&c.arguments),
            id: None,
            output: Some(c.output.clone()),
        })
        .collect()
}

/// A JSON-RPC error: code, message, data.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
}

/// One answer the session gives: the reply's text (none for a notification or a response)
/// and how long to wait before sending it.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub reply: Option<String>,
    pub delay: Duration,
    /// The JSON-RPC error code, when the reply is an error (the HTTP status follows it).
    pub error: Option<i64>,
    /// The request was a legacy `initialize` that succeeded.
    pub initialized: bool,
    /// The request is malformed in a way HTTP answers with `400` (a 2026-07-28 `_meta`
    /// without its required members).
    pub malformed: bool,
}

/// One client's session with the mock: the reply to each message, and the calls made.
/// [`Session::handle`] turns one line into its reply without any I/O.
pub struct Session<'a> {
    suite: &'a Suite,
    // Set by the HTTP transport for a request its headers call 2026-07-28.
    pub(crate) stateless: bool,
    twin: Twin,
    options: Options,
    calls: Vec<Recorded>,
    // The calls so far, each distinct (tool, arguments, output) once, in order: what a call's
    // references are checked against. A repeat grounds nothing its first did not (the same
    // output, so the same success or failure), so a session repeating calls checks each
    // against a history that does not grow.
    distinct: Vec<Recorded>,
    seen: std::collections::HashSet<String>,
    client_name: String,
    // Scenarios (indices) every call so far fits.
    candidates: Vec<usize>,
    findings: Vec<String>,
    rng: u64,
    // The calls the recording file holds, when it was last written, and how long calls may
    // wait unwritten ([`Session::record_due`]; [`RECORD_WAIT`] but in tests).
    recorded: usize,
    recorded_at: Option<std::time::Instant>,
    record_wait: Duration,
    // How many calls the recording's writes have written, added up over the writes (from
    // either thread of a stdio session): its recording work, which must grow with its
    // length, not its square.
    #[cfg(test)]
    pub(crate) written_in_all: usize,
}

/// The calls of a session each written to its recording as soon as it is made; past them, see
/// [`Session::record_due`].
const RECORD_EACH: usize = 64;

/// How long after the last write calls may wait unwritten.
const RECORD_WAIT: Duration = Duration::from_secs(1);

impl<'a> Session<'a> {
    /// A session over the suite's twin, with default options; a twin that does not load (a
    /// malformed sidecar) falls back to the converted tools and the suite's name. `serve`
    /// loads the twin with [`Twin::load`] and reports such errors; this is for the fuzz target
    /// and tests.
    pub fn new(suite: &'a Suite) -> Self {
        let twin = Twin::load(suite).unwrap_or_else(|_| Twin {
            tools: tools_json(suite).iter().map(Value::to_string).collect(),
            server_info: json!({"name": suite.harness.suite, "version": "1.0.0"}),
            capabilities: json!({"tools": {}}),
            instructions: None,
        });
        Self::with(suite, twin, Options::default())
    }

    /// A session over `twin` with `options` (an unknown `--scenario` is refused before).
    pub fn with(suite: &'a Suite, twin: Twin, options: Options) -> Self {
        let candidates = match &options.scenario {
            Some(id) => suite.scenario(id).map(|(i, _)| vec![i]).unwrap_or_default(),
            None => (0..suite.harness.scenarios.len()).collect(),
        };
        Self {
            suite,
            stateless: false,
            twin,
            rng: options.faults.seed ^ 0x9e37_79b9_7f4a_7c15,
            options,
            calls: Vec::new(),
            distinct: Vec::new(),
            seen: std::collections::HashSet::new(),
            client_name: "an MCP client".to_owned(),
            candidates,
            findings: Vec::new(),
            recorded: 0,
            recorded_at: None,
            record_wait: RECORD_WAIT,
            #[cfg(test)]
            written_in_all: 0,
        }
    }

    /// Whether the recording is to be written now, a call having come: after each of the first
    /// [`RECORD_EACH`] calls, then when a second has gone by since the last write (an agent that
    /// thinks between calls has each one written as it is made) or when the calls not yet
    /// written are an eighth of those written; then a second on, though no call follows
    /// ([`Session::record_stale`]); and when the session ends ([`serve`], [`serve_http`]).
    /// The file is rewritten whole each time: written after every call, a session of 4,000
    /// calls took 296 s, the square of its length; written so, a session's writes add up to a
    /// few times its recording.
    pub(crate) fn record_due(&self) -> bool {
        let n = self.calls.len();
        n <= RECORD_EACH || (n - self.recorded) * 8 >= self.recorded || self.record_waited()
    }

    /// Whether [`RECORD_WAIT`] has gone by since the last write (or nothing was written).
    fn record_waited(&self) -> bool {
        self.recorded_at
            .is_none_or(|at| at.elapsed() >= self.record_wait)
    }

    /// Whether calls came since the recording was last written.
    pub(crate) fn record_pending(&self) -> bool {
        self.calls.len() > self.recorded
    }

    /// Whether calls wait unwritten a second after the last write: [`serve`] and
    /// [`serve_http`] write them then without waiting for another call.
    pub(crate) fn record_stale(&self) -> bool {
        self.record_pending() && self.record_waited()
    }

    /// The recording as of now ([`Session::recording`]), to be written.
    pub(crate) fn snapshot(&self) -> std::io::Result<Recording> {
        Ok(Recording {
            text: self.recording().map_err(std::io::Error::other)?,
            calls: self.calls.len(),
        })
    }

    /// Counts the first `calls` calls written: [`Session::record_due`] schedules the next
    /// write from here.
    pub(crate) fn written(&mut self, calls: usize) {
        self.recorded = calls;
        self.recorded_at = Some(std::time::Instant::now());
        #[cfg(test)]
        {
            self.written_in_all += calls;
        }
    }

    /// How many `tools/call`s the session has received.
    pub fn calls(&self) -> usize {
        self.calls.len()
    }

    /// The findings the mock noted: calls that matched no step.
    pub fn findings(&self) -> &[String] {
        &self.findings
    }

    /// The reply to one line from the client, or `None` when none is due (a blank line, a
    /// notification, a response). A line that is not JSON (or not UTF-8) gets a parse error
    /// (-32700, id null) and one that is not a request an invalid-request error (-32600), as
    /// JSON-RPC 2.0 says; the session goes on either way.
    pub fn handle(&mut self, line: &[u8]) -> Option<Value> {
        self.reply(line).and_then(|r| serde_json::from_str(&r).ok())
    }

    /// [`Session::handle`]'s reply as the text sent (a `tools/list` carries each tool as the
    /// capture wrote it, which a parsed value would re-order).
    pub fn reply(&mut self, line: &[u8]) -> Option<String> {
        self.answer_line(line).reply
    }

    pub(crate) fn answer_line(&mut self, line: &[u8]) -> Answer {
        let text = line.trim_ascii();
        if text.is_empty() {
            return Answer::default();
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(msg) => self.answer_message(&msg),
            Err(e) => error_answer(
                &Value::Null,
                RpcError::new(-32700, format!("Parse error: {e}")),
            ),
        }
    }

    /// The answer to one parsed message.
    pub(crate) fn answer_message(&mut self, msg: &Value) -> Answer {
        let Some(obj) = msg.as_object() else {
            return error_answer(
                &Value::Null,
                RpcError::new(
                    -32600,
                    "Invalid Request: a JSON-RPC message is an object (batches are not part of MCP)",
                ),
            );
        };
        let id = obj.get("id").cloned();
        let (method, id) = match (obj.get("method"), id) {
            // A notification.
            (Some(_), None) => return Answer::default(),
            (Some(Value::String(m)), Some(id)) => (m.as_str(), id),
            // A response: the mock sends no requests, so there is nothing to match it to.
            (None, _) if obj.contains_key("result") || obj.contains_key("error") => {
                return Answer::default();
            }
            (_, id) => {
                return error_answer(
                    &id.unwrap_or(Value::Null),
                    RpcError::new(-32600, "Invalid Request: no `method` string"),
                );
            }
        };
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        let modern = params
            .get("_meta")
            .and_then(|m| m.get(meta::VERSION))
            .cloned()
            .or_else(|| self.stateless.then_some(Value::Null));
        if modern.is_some()
            && let Some(missing) = missing_meta(&params)
        {
            return Answer {
                malformed: true,
                ..error_answer(
                    &id,
                    RpcError::new(
                        -32602,
                        format!(
                            "Invalid params: `_meta` has no `{missing}`, which every request of the {MODERN_VERSION} revision carries"
                        ),
                    ),
                )
            };
        }
        let mut delay = Duration::ZERO;
        let result = match modern {
            Some(version) => self.modern(method, &params, &version, &mut delay),
            None => self.legacy(method, &params, &mut delay),
        };
        match result {
            Ok(r) => Answer {
                reply: Some(format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{r}}}",
                    serde_json::to_string(&id).unwrap_or_else(|_| "null".into())
                )),
                delay,
                error: None,
                initialized: method == "initialize",
                malformed: false,
            },
            Err(e) => Answer {
                delay,
                ..error_answer(&id, e)
            },
        }
    }

    fn legacy(
        &mut self,
        method: &str,
        params: &Value,
        delay: &mut Duration,
    ) -> Result<String, RpcError> {
        match method {
            "initialize" => {
                if let Some(n) = params.pointer("/clientInfo/name").and_then(Value::as_str) {
                    self.client_name = n.to_owned();
                }
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                // The client's version when we speak it, else our newest session-based one.
                let version = asked
                    .filter(|v| *v != MODERN_VERSION && SUPPORTED_VERSIONS.contains(v))
                    .unwrap_or(LEGACY_VERSION);
                let mut r = json!({
                    "protocolVersion": version,
                    "capabilities": self.twin.capabilities,
                    "serverInfo": self.twin.server_info,
                });
                if let Some(i) = &self.twin.instructions {
                    r["instructions"] = i.clone().into();
                }
                Ok(r.to_string())
            }
            "ping" => Ok("{}".into()),
            "tools/list" => Ok(format!("{{\"tools\":[{}]}}", self.twin.tools.join(","))),
            "tools/call" => {
                let (result, wait) = self.call(params)?;
                *delay = wait;
                Ok(result.to_string())
            }
            other => Err(RpcError::new(-32601, format!("Method not found: {other}"))),
        }
    }

    fn modern(
        &mut self,
        method: &str,
        params: &Value,
        version: &Value,
        delay: &mut Duration,
    ) -> Result<String, RpcError> {
        if version != MODERN_VERSION {
            return Err(RpcError {
                code: code::UNSUPPORTED_VERSION,
                message: "Unsupported protocol version".into(),
                data: Some(json!({"supported": SUPPORTED_VERSIONS, "requested": version})),
            });
        }
        if let Some(n) = params
            .pointer(&format!(
                "/_meta/{}/name",
                meta::CLIENT_INFO.replace('/', "~1")
            ))
            .and_then(Value::as_str)
        {
            self.client_name = n.to_owned();
        }
        let server_meta = json!({ (meta::SERVER_INFO): self.twin.server_info }).to_string();
        // Every result carries `resultType`; the server names itself in `_meta`; list results
        // say how long they stay fresh.
        let complete = |body: String, cacheable: bool| -> String {
            // `body` is an object's text: its closing brace goes after the added members.
            let inner = body.strip_suffix('}').unwrap_or(&body);
            let sep = if inner.ends_with('{') { "" } else { "," };
            let cache = if cacheable {
                ",\"ttlMs\":3600000,\"cacheScope\":\"public\""
            } else {
                ""
            };
            format!("{inner}{sep}\"resultType\":\"complete\"{cache},\"_meta\":{server_meta}}}")
        };
        match method {
            "server/discover" => {
                let mut r = json!({
                    "supportedVersions": SUPPORTED_VERSIONS,
                    "capabilities": self.twin.capabilities,
                });
                if let Some(i) = &self.twin.instructions {
                    r["instructions"] = i.clone().into();
                }
                Ok(complete(r.to_string(), true))
            }
            "tools/list" => Ok(complete(
                format!("{{\"tools\":[{}]}}", self.twin.tools.join(",")),
                true,
            )),
            "tools/call" => {
                let (result, wait) = self.call(params)?;
                *delay = wait;
                let mut result = result;
                if let Value::Object(m) = &mut result {
                    m.remove("_meta");
                }
                Ok(complete(result.to_string(), false))
            }
            other => Err(RpcError::new(-32601, format!("Method not found: {other}"))),
        }
    }

    /// A `tools/call`: answered, recorded, attributed; with the delay an injected latency asks.
    fn call(&mut self, params: &Value) -> Result<(Value, Duration), RpcError> {
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            return Err(RpcError::new(
                -32602,
                "Invalid params: `tools/call` needs a `name` string",
            ));
        };
        let args = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let n = self.calls.len() + 1;
        let delay = self.latency();
        let known = self.suite.tools.tools().iter().any(|t| t.name == tool);
        let injected = self.options.faults.fail_calls.contains(&n)
            || (self.options.faults.fail_rate > 0.0 && self.draw() < self.options.faults.fail_rate);
        let (output, step, refused) = if !known {
            self.findings
                .push(format!("call {n}: `{tool}` is no tool of the server"));
            let e = RpcError::new(-32602, format!("Unknown tool: {tool}"));
            (error_result(&e.message), None, Some(e))
        } else if injected {
            self.findings
                .push(format!("call {n}: `{tool}` failed by injection"));
            (
                error_result("Internal error: the service is temporarily unavailable"),
                None,
                None,
            )
        } else {
            self.narrow(tool, &args);
            let history = [std::mem::take(&mut self.distinct)];
            let a = answer_call(self.suite, &self.candidates, &history, tool, &args);
            let [distinct] = history;
            self.distinct = distinct;
            if let Some(why) = a.unmatched {
                self.findings.push(format!("call {n}: {why}"));
            }
            (a.result, a.step, None)
        };
        let recorded = Recorded {
            tool: tool.to_owned(),
            arguments: args,
            output: output.clone(),
            step,
        };
        let key = json!([recorded.tool, recorded.arguments, recorded.output]).to_string();
        if self.seen.insert(key) {
            self.distinct.push(recorded.clone());
        }
        self.calls.push(recorded);
        match refused {
            Some(e) => Err(e),
            None => Ok((output, delay)),
        }
    }

    /// Keeps the candidate scenarios the call fits: those with a step whose arguments all equal
    /// the call's, else those with a step of the tool; none fitting leaves them as they were.
    fn narrow(&mut self, tool: &str, args: &Value) {
        if self.options.scenario.is_some() {
            return;
        }
        let fits = |exact: bool| -> Vec<usize> {
            self.candidates
                .iter()
                .copied()
                .filter(|&i| {
                    best_step(self.suite, &[i], tool, args)
                        .is_some_and(|b| !exact || b.same == b.total)
                })
                .collect()
        };
        let exact = fits(true);
        let chosen = if exact.is_empty() { fits(false) } else { exact };
        if !chosen.is_empty() {
            self.candidates = chosen;
        }
    }

    /// The scenario the calls are attributed to, or why none can be.
    pub fn attribution(&self) -> Result<String, String> {
        if let Some(s) = &self.options.scenario {
            return Ok(s.clone());
        }
        let fitting: Vec<&str> = self
            .candidates
            .iter()
            .map(|&i| self.suite.harness.scenarios[i].id.as_str())
            .collect();
        let matched = self.calls.iter().any(|c| c.step.is_some());
        match fitting.as_slice() {
            [one] if matched => Ok((*one).to_owned()),
            _ if !matched => Err("no call matched a workflow step".to_owned()),
            many => Err(format!(
                "the calls fit {} scenarios ({}); record again with `--scenario ID`",
                many.len(),
                many.iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    fn draw(&mut self) -> f64 {
        // SplitMix64: a fixed sequence per seed, so a resilience run is reproducible.
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn latency(&mut self) -> Duration {
        match self.options.faults.latency {
            None => Duration::ZERO,
            Some((lo, hi)) if lo >= hi => lo,
            Some((lo, hi)) => lo + (hi - lo).mul_f64(self.draw()),
        }
    }

    /// The calls so far as transcript YAML: attributed to its scenario, or, when none can be
    /// told, with neither scenario nor prompt (so it does not load as an oracle-less pass) and
    /// a note saying why; faults injected and mock findings in the note too.
    pub fn recording(&self) -> Result<String, WriteError> {
        let mut note = Vec::new();
        let scenario = match self.attribution() {
            Ok(s) => Some(s),
            Err(why) => {
                note.push(format!("the scenario could not be told: {why}"));
                None
            }
        };
        if self.options.faults.any() {
            note.push(format!(
                "faults injected: {}",
                self.options.faults.describe()
            ));
        }
        note.extend(self.findings.iter().cloned());
        let note = (!note.is_empty())
            .then(|| format!("recorded by agent-seer serve; {}", note.join("; ")));
        transcript_doc(
            &self.calls,
            &format!("{} (recorded by agent-seer serve)", self.client_name),
            scenario,
            note,
        )
        .to_yaml()
    }
}

/// The required 2026-07-28 `_meta` member a request lacks, if any.
fn missing_meta(params: &Value) -> Option<&'static str> {
    let m = params.get("_meta");
    [meta::VERSION, meta::CLIENT_CAPABILITIES]
        .into_iter()
        .find(|k| m.and_then(|m| m.get(*k)).is_none())
}

fn error_answer(id: &Value, e: RpcError) -> Answer {
    let mut err = json!({"code": e.code, "message": e.message});
    if let Some(d) = e.data {
        err["data"] = d;
    }
    Answer {
        reply: Some(json!({"jsonrpc": "2.0", "id": id, "error": err}).to_string()),
        delay: Duration::ZERO,
        error: Some(e.code),
        initialized: false,
        malformed: false,
    }
}

/// Writes the session's recording to `path` (atomically), and counts its calls written.
pub(crate) fn write_recording(session: &mut Session, path: &Path) -> std::io::Result<()> {
    let recording = session.snapshot()?;
    recording.write(path)?;
    session.written(recording.calls);
    Ok(())
}

/// A session's recording as of one moment: made under the session's lock, written after it (an
/// HTTP server writes it on a blocking thread, not its async ones, with the lock released).
pub(crate) struct Recording {
    text: String,
    /// The session's calls it holds.
    pub(crate) calls: usize,
}

impl Recording {
    /// Writes the recording to `path` (atomically); the error names the path.
    pub(crate) fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::source::write_atomically(path, self.text.as_bytes()).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot write the recording {}: {e}", path.display()),
            )
        })
    }
}

/// Serves MCP over `input`/`output` until the client closes its side. Records the calls in
/// `record` when given: rewritten atomically as they come ([`Session::record_due`]), a second
/// on for calls a batch left unwritten though no call follows (a thread of its own: the reads
/// block), and once more at the end for any not yet written, whether the session ends at the
/// client's close or at an error (its output gone). A line longer than
/// [`MAX_LINE`](super::MAX_LINE) gets a parse error and is skipped. Gives the session back for
/// its attribution and findings.
pub fn serve<'a>(
    suite: &'a Suite,
    twin: Twin,
    options: Options,
    input: impl BufRead,
    output: impl Write,
    record: Option<&Path>,
) -> std::io::Result<Session<'a>> {
    let session = std::sync::Mutex::new(Session::with(suite, twin, options));
    let (served, idle) = std::thread::scope(|scope| {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        // Its error, the first write it could not make, ends the session.
        let idle = record.map(|path| {
            let session = &session;
            scope.spawn(move || -> std::io::Result<()> {
                let wait = lock(session).record_wait;
                // Until the loop below ends (and drops `stop`).
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(wait)
                {
                    let mut s = lock(session);
                    if s.record_stale() {
                        write_recording(&mut s, path)?;
                    }
                }
                Ok(())
            })
        });
        let served = serve_lines(&session, input, output, record);
        drop(stop);
        let idle = idle.map_or(Ok(()), |h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (served, idle)
    });
    let mut session = session.into_inner().unwrap_or_else(|p| p.into_inner());
    let written = idle.and_then(|()| match record {
        Some(path) if session.record_pending() => write_recording(&mut session, path),
        _ => Ok(()),
    });
    // The session's own error first: the output gone, say, before the recording.
    served.and(written).map(|()| session)
}

/// A lock on `m`, whatever a thread that panicked holding it left.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`serve`]'s loop, until the client closes its side (or an error).
fn serve_lines(
    session: &std::sync::Mutex<Session>,
    mut input: impl BufRead,
    mut output: impl Write,
    record: Option<&Path>,
) -> std::io::Result<()> {
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
                "Parse error: a line longer than {} MiB",
                super::MAX_LINE >> 20
            );
            let a = error_answer(&Value::Null, RpcError::new(-32700, message));
            reply(&mut output, a.reply.as_deref().unwrap_or_default())?;
            continue;
        }
        let answer = {
            let mut session = lock(session);
            let before = session.calls();
            let answer = session.answer_line(&line);
            if let Some(path) = record
                && session.calls() > before
                && session.record_due()
            {
                write_recording(&mut session, path)?;
            }
            answer
        };
        if !answer.delay.is_zero() {
            std::thread::sleep(answer.delay);
        }
        if let Some(msg) = answer.reply {
            reply(&mut output, &msg)?;
        }
    }
}

fn reply(out: &mut impl Write, msg: &str) -> std::io::Result<()> {
    writeln!(out, "{msg}")?;
    out.flush()
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
