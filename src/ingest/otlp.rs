//! OpenTelemetry GenAI traces and logs in OTLP JSON — the OTel Collector's file form (ids in
//! hex, one `{"resourceSpans": …}` or `{"resourceLogs": …}` a line) and the protobuf-JSON
//! mapping (ids in base64, one document) alike: ids are compared as written, never decoded.
//!
//! The conversation comes, in this order of preference, from:
//! - the last chat span's `gen_ai.input.messages` and `gen_ai.output.messages` (the semantic
//!   conventions since 1.37: JSON messages with typed `parts`), which hold the whole history;
//! - the older indexed attributes `gen_ai.prompt.N.*` and `gen_ai.completion.N.*`;
//! - the log events of the last chat span (`gen_ai.user.message`, `gen_ai.assistant.message`,
//!   `gen_ai.tool.message`, `gen_ai.choice`: the conventions before 1.37), or the same events
//!   recorded as span events with their body as JSON in `gen_ai.event.content` (the Azure AI
//!   Inference SDK's tracing);
//! - else the `execute_tool` spans alone (`gen_ai.tool.name`, `gen_ai.tool.call.id`,
//!   `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`), in start-time order, which
//!   give calls and outputs but no prompt or reply.
//!
//! A run recorded with content capture off has none of these: every call it shows lacks its
//! arguments, and that is an error saying so, never a call without arguments.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Docs, Event, Place, Refusal, json_arguments, text_result};
use crate::harness::TraceLink;

/// One trace's events and, when its ids are valid, its link.
pub(super) type TraceRun = (Vec<Event>, Option<TraceLink>);

/// An id of `bytes` bytes as lowercase hex: as written when it is hex already (OTLP JSON),
/// decoded when it is base64 (the protobuf-JSON mapping); `None` when it is neither.
fn hex_id(id: &str, bytes: usize) -> Option<String> {
    if id.len() == bytes * 2 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Some(id.to_ascii_lowercase());
    }
    let decoded = base64(id)?;
    (decoded.len() == bytes).then(|| decoded.iter().map(|b| format!("{b:02x}")).collect())
}

/// Standard base64 (with or without padding; the URL-safe alphabet too).
fn base64(s: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        }))
    };
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// An OTLP `AnyValue` as plain JSON.
fn any(v: &Value) -> Value {
    let Some(o) = v.as_object() else {
        return v.clone();
    };
    if let Some(s) = o.get("stringValue") {
        return s.clone();
    }
    if let Some(b) = o.get("boolValue") {
        return b.clone();
    }
    if let Some(i) = o.get("intValue") {
        // int64 is a string in the protobuf-JSON mapping.
        return match i {
            Value::String(s) => s.parse::<i64>().map_or(i.clone(), Value::from),
            other => other.clone(),
        };
    }
    if let Some(d) = o.get("doubleValue") {
        return d.clone();
    }
    if let Some(a) = o.get("arrayValue") {
        return Value::Array(
            a.get("values")
                .and_then(Value::as_array)
                .map(|vs| vs.iter().map(any).collect())
                .unwrap_or_default(),
        );
    }
    if let Some(kv) = o.get("kvlistValue") {
        return Value::Object(attributes(kv.get("values")));
    }
    if let Some(b) = o.get("bytesValue") {
        return b.clone();
    }
    Value::Null
}

/// A list of OTLP `KeyValue`s as a JSON object.
fn attributes(list: Option<&Value>) -> Map<String, Value> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|kv| {
            let key = kv.get("key")?.as_str()?.to_owned();
            Some((key, kv.get("value").map(any).unwrap_or(Value::Null)))
        })
        .collect()
}

fn nanos(v: Option<&Value>) -> u128 {
    match v {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().map_or(0, u128::from),
        _ => 0,
    }
}

struct Span {
    trace: String,
    id: String,
    parent: String,
    name: String,
    start: u128,
    attrs: Map<String, Value>,
    at: Place,
}

struct Log {
    trace: String,
    span: String,
    /// The start of the span a span event belongs to (0 for a log record: those come in
    /// file order).
    start: u128,
    /// The span event's `gen_ai.event.content` was no valid JSON (cut by a length limit?).
    unparsable: bool,
    event: String,
    body: Value,
    at: Place,
}

/// What a file's spans and log records come to, kept as they stream by: per trace only what a
/// transcript is made of — the latest chat span that holds messages, the `execute_tool` spans,
/// the GenAI log events of the latest chat span — so a file
/// much larger than memory holds no more than its largest span at a time.
#[derive(Default)]
pub(super) struct Collector {
    /// Traces with GenAI content, in the order they first appear.
    order: Vec<String>,
    /// Per trace: the spans kept, by start time once finished.
    spans: std::collections::HashMap<String, Vec<Span>>,
    /// Per trace: the GenAI log events of the latest span that logged any.
    logs: std::collections::HashMap<String, Vec<(String, u128, Vec<Log>)>>,
}

impl Collector {
    fn genai(&mut self, trace: &str) {
        if !self.order.iter().any(|t| t == trace) {
            self.order.push(trace.to_owned());
        }
    }

    fn span(&mut self, mut s: Span) {
        if !is_genai(&s) {
            return;
        }
        self.genai(&s.trace);
        let kept = self.spans.entry(s.trace.clone()).or_default();
        if is_chat(&s) {
            // Only the latest chat span with content matters (it holds the history); one
            // without content is kept only while no other is.
            let content = has_content(&s);
            if let Some(i) = kept.iter().position(is_chat) {
                let old = &kept[i];
                let newer = s.start >= old.start;
                if (content && (!has_content(old) || newer)) || (!has_content(old) && newer) {
                    kept[i] = s;
                }
                return;
            }
        } else if s.attrs.get("gen_ai.operation.name").is_none()
            && s.attrs.get("mcp.method.name").is_some()
            && kept
                .iter()
                .any(|k| k.attrs.get("mcp.method.name").is_some())
        {
            // A bare MCP span carries no content; one is enough to say so. (An MCP span that
            // is also an `execute_tool` span is a call, and kept.)
            return;
        }
        s.attrs
            .retain(|k, _| k.starts_with("gen_ai.") || k.starts_with("mcp."));
        kept.push(s);
    }

    fn log(&mut self, l: Log) {
        if !CHAT_EVENTS.contains(&l.event.as_str()) || l.span.is_empty() {
            return;
        }
        self.genai(&l.trace);
        // One group per chat span, whatever order their records interleave in; the span
        // with the longest history is the one read.
        let groups = self.logs.entry(l.trace.clone()).or_default();
        match groups.iter_mut().find(|g| g.0 == l.span) {
            Some(g) => g.2.push(l),
            None => groups.push((l.span.clone(), l.start, vec![l])),
        }
    }

    /// Takes one OTLP document (`line`: its 0-based line in a JSON Lines file).
    pub(super) fn feed(&mut self, line: Option<usize>, doc: &Value) {
        let place = |p: String| Place { line, pointer: p };
        fn list<'a>(v: &'a Value, k: &str) -> &'a [Value] {
            v.get(k)
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice)
        }
        for (r, rs) in list(doc, "resourceSpans").iter().enumerate() {
            let scopes_key = if rs.get("scopeSpans").is_some() {
                "scopeSpans"
            } else {
                "instrumentationLibrarySpans"
            };
            for (s, ss) in list(rs, scopes_key).iter().enumerate() {
                for (k, sp) in list(ss, "spans").iter().enumerate() {
                    self.span(Span {
                        trace: sp
                            .get("traceId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        id: sp
                            .get("spanId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        parent: sp
                            .get("parentSpanId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        name: sp
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        start: nanos(sp.get("startTimeUnixNano")),
                        attrs: attributes(sp.get("attributes")),
                        at: place(format!("/resourceSpans/{r}/{scopes_key}/{s}/spans/{k}")),
                    });
                    // Message content as span events (the Azure AI Inference SDK's tracing):
                    // `gen_ai.*.message` / `gen_ai.choice` with the body as JSON in
                    // `gen_ai.event.content`, read as the log events of this span.
                    for (e, ev) in list(sp, "events").iter().enumerate() {
                        let name = ev.get("name").and_then(Value::as_str).unwrap_or("");
                        if !name.starts_with("gen_ai.") {
                            continue;
                        }
                        let attrs = attributes(ev.get("attributes"));
                        let (body, unparsable) = match attrs.get("gen_ai.event.content") {
                            Some(Value::String(json)) => match serde_json::from_str(json) {
                                Ok(v) => (v, false),
                                Err(_) => (Value::Null, true),
                            },
                            _ => (Value::Object(attrs), false),
                        };
                        let id = |key: &str| {
                            sp.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
                        };
                        self.log(Log {
                            trace: id("traceId"),
                            span: id("spanId"),
                            start: nanos(sp.get("startTimeUnixNano")),
                            unparsable,
                            event: name.to_owned(),
                            body,
                            at: place(format!(
                                "/resourceSpans/{r}/{scopes_key}/{s}/spans/{k}/events/{e}"
                            )),
                        });
                    }
                }
            }
        }
        for (r, rl) in list(doc, "resourceLogs").iter().enumerate() {
            for (s, sl) in list(rl, "scopeLogs").iter().enumerate() {
                for (k, lr) in list(sl, "logRecords").iter().enumerate() {
                    let attrs = attributes(lr.get("attributes"));
                    let event = lr
                        .get("eventName")
                        .and_then(Value::as_str)
                        .or_else(|| attrs.get("event.name").and_then(Value::as_str))
                        .unwrap_or("")
                        .to_owned();
                    self.log(Log {
                        trace: lr
                            .get("traceId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        span: lr
                            .get("spanId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        start: 0,
                        unparsable: false,
                        event,
                        body: lr.get("body").map(any).unwrap_or(Value::Null),
                        at: place(format!("/resourceLogs/{r}/scopeLogs/{s}/logRecords/{k}")),
                    });
                }
            }
        }
    }
}

/// The GenAI events that carry a chat's messages (as log records or span events).
const CHAT_EVENTS: &[&str] = &[
    "gen_ai.system.message",
    "gen_ai.user.message",
    "gen_ai.assistant.message",
    "gen_ai.tool.message",
    "gen_ai.choice",
];

fn is_chat(s: &Span) -> bool {
    matches!(
        s.attrs.get("gen_ai.operation.name").and_then(Value::as_str),
        Some("chat" | "text_completion" | "generate_content")
    ) || s.attrs.keys().any(|k| k.starts_with("gen_ai.prompt."))
}

fn has_content(s: &Span) -> bool {
    s.attrs.contains_key("gen_ai.input.messages")
        || s.attrs.keys().any(|k| k.starts_with("gen_ai.prompt."))
}

fn is_genai(s: &Span) -> bool {
    s.attrs.contains_key("gen_ai.operation.name")
        || s.attrs
            .keys()
            .any(|k| k.starts_with("gen_ai.prompt.") || k.starts_with("gen_ai.completion."))
        || s.attrs.get("mcp.method.name").and_then(Value::as_str) == Some("tools/call")
}

/// The GenAI traces of the file, in the order they first appear: each trace's events and
/// id. With `one`, a file holding several is refused (one run a file, as `check` grades).
pub(super) fn events(docs: &Docs, one: bool) -> Result<Vec<TraceRun>, Refusal> {
    let mut c = Collector::default();
    match docs {
        Docs::One(v) => c.feed(None, v),
        Docs::Lines(lines) => lines.iter().for_each(|(i, v)| c.feed(Some(*i), v)),
    }
    c.finish(one)
}

impl Collector {
    /// The GenAI traces seen, in the order they first appeared: each trace's events and link.
    /// With `one`, more than one trace is refused.
    pub(super) fn finish(mut self, one: bool) -> Result<Vec<TraceRun>, Refusal> {
        match self.order.as_slice() {
            [] => {
                return Err(Refusal::file(
                    "no GenAI span or event in it (no `gen_ai.*` attributes)",
                ));
            }
            [_] => {}
            many if one => {
                // The first few ids: 3,000 of them would bury the advice (issue 32, item 15).
                const SHOWN: usize = 5;
                let mut ids = many[..many.len().min(SHOWN)].join(", ");
                if many.len() > SHOWN {
                    ids.push_str(&format!(" and {} more", many.len() - SHOWN));
                }
                return Err(Refusal::file(format!(
                    "{} traces in one file ({ids}); grade one run a file: `agent-seer import trace` writes one transcript per trace",
                    many.len(),
                )));
            }
            _ => {}
        }
        let order = std::mem::take(&mut self.order);
        order
            .iter()
            .map(|trace| {
                let mut mine: Vec<Span> = self.spans.remove(trace).unwrap_or_default();
                mine.sort_by_key(|s| s.start);
                let mine: Vec<&Span> = mine.iter().collect();
                // The chat span whose events hold the most: the latest history.
                let logs = self
                    .logs
                    .remove(trace)
                    .unwrap_or_default()
                    .into_iter()
                    .max_by_key(|(_, start, events)| (events.len(), *start))
                    .map(|(_, _, events)| events)
                    .unwrap_or_default();
                let logs: Vec<&Log> = logs.iter().collect();
                // The run's root: the agent's invocation, else the outermost GenAI span (one
                // whose parent is no GenAI span).
                let root = mine
                    .iter()
                    .copied()
                    .find(|s| {
                        s.attrs.get("gen_ai.operation.name").and_then(Value::as_str)
                            == Some("invoke_agent")
                    })
                    .or_else(|| {
                        mine.iter()
                            .copied()
                            .find(|s| !mine.iter().any(|p| p.id == s.parent))
                    })
                    .and_then(|s| hex_id(&s.id, 8));
                // An id that is neither hex nor base64 of 16 bytes links to nothing: an OTLP
                // receiver would refuse the whole batch of results over it.
                let link = hex_id(trace, 16).map(|trace_id| TraceLink {
                    trace_id,
                    span_id: root,
                });
                let events = trace_events(&mine, &logs)?;
                if events.is_empty() {
                    return Err(Refusal::file(format!(
                        "trace {trace}: its GenAI spans and events hold no message and no tool call"
                    )));
                }
                Ok((events, link))
            })
            .collect()
    }
}

/// One trace's events, from the best source it has (see the module's documentation).
fn trace_events(spans: &[&Span], logs: &[&Log]) -> Result<Vec<Event>, Refusal> {
    let chats: Vec<&Span> = spans
        .iter()
        .copied()
        .filter(|s| {
            matches!(
                s.attrs.get("gen_ai.operation.name").and_then(Value::as_str),
                Some("chat" | "text_completion" | "generate_content")
            ) || s.attrs.keys().any(|k| k.starts_with("gen_ai.prompt."))
        })
        .collect();
    if let Some(last) = chats
        .iter()
        .rev()
        .find(|s| s.attrs.contains_key("gen_ai.input.messages"))
    {
        return parts_messages(last);
    }
    if let Some(last) = chats
        .iter()
        .rev()
        .find(|s| s.attrs.keys().any(|k| k.starts_with("gen_ai.prompt.")))
    {
        return indexed(last);
    }
    if !logs.is_empty() {
        return log_events(logs);
    }
    tool_spans(spans)
}

/// A JSON string attribute holding JSON, parsed.
fn json_attr(s: &Span, key: &str) -> Result<Option<Value>, Refusal> {
    match s.attrs.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => serde_json::from_str(text).map(Some).map_err(|e| {
            Refusal::at(
                &s.at,
                format!(
                    "span `{}`: `{key}` is not valid JSON ({e}); was it truncated?",
                    s.name
                ),
            )
        }),
        Some(other) => Ok(Some(other.clone())),
    }
}

/// `gen_ai.input.messages` + `gen_ai.output.messages`: `{role, parts: [{type: text, content},
/// {type: tool_call, id, name, arguments}, {type: tool_call_response, id, response}]}`.
fn parts_messages(s: &Span) -> Result<Vec<Event>, Refusal> {
    let mut events = Vec::new();
    for key in ["gen_ai.input.messages", "gen_ai.output.messages"] {
        let Some(messages) = json_attr(s, key)? else {
            continue;
        };
        let messages = messages.as_array().cloned().unwrap_or_default();
        for (i, m) in messages.iter().enumerate() {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            let parts = m
                .get("parts")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (j, p) in parts.iter().enumerate() {
                let what = format!("span `{}`, {key}[{i}].parts[{j}]", s.name);
                match p.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text" => {
                        let text = p
                            .get("content")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        match role {
                            "user" => events.push(Event::User { text }),
                            "assistant" => events.push(Event::Text { text }),
                            _ => {}
                        }
                    }
                    "tool_call" => {
                        let tool = p.get("name").and_then(Value::as_str).ok_or_else(|| {
                            Refusal::at(&s.at, format!("{what}: a tool call without `name`"))
                        })?;
                        let raw = p.get("arguments").ok_or_else(|| {
                            Refusal::at(&s.at, format!("{what}: the call of `{tool}` has no `arguments` (content capture off?)"))
                        })?;
                        events.push(Event::Call {
                            id: p.get("id").and_then(Value::as_str).map(str::to_owned),
                            tool: tool.to_owned(),
                            arguments: json_arguments(tool, raw, &s.at)?,
                            output: None,
                            at: s.at.clone(),
                        });
                    }
                    "tool_call_response" => {
                        let response = p.get("response").cloned().unwrap_or(Value::Null);
                        events.push(Event::Output {
                            id: p.get("id").and_then(Value::as_str).map(str::to_owned),
                            tool: None,
                            output: result_of(&response),
                            at: s.at.clone(),
                        });
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(events)
}

/// A recorded tool result as a CallToolResult: a string is its text (JSON inside it is read
/// by the dataflow engine as any text output is), a CallToolResult stays one.
fn result_of(v: &Value) -> Value {
    match v {
        Value::String(s) => text_result(s, None),
        Value::Object(o) if o.contains_key("content") => v.clone(),
        Value::Null => text_result("", None),
        other => {
            let mut r = text_result(&serde_json::to_string(other).unwrap_or_default(), None);
            r["structuredContent"] = other.clone();
            r
        }
    }
}

/// `gen_ai.prompt.N.role` / `.content` / `.tool_call_id` and `gen_ai.completion.N.*` with
/// `.tool_calls.M.id` / `.name` / `.arguments` (the indexed attributes of older
/// instrumentations).
fn indexed(s: &Span) -> Result<Vec<Event>, Refusal> {
    let mut events = Vec::new();
    for prefix in ["gen_ai.prompt.", "gen_ai.completion."] {
        let mut messages: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
        for (k, v) in &s.attrs {
            let Some(rest) = k.strip_prefix(prefix) else {
                continue;
            };
            let Some((n, field)) = rest.split_once('.') else {
                continue;
            };
            let Ok(n) = n.parse::<usize>() else { continue };
            messages
                .entry(n)
                .or_default()
                .insert(field.to_owned(), v.clone());
        }
        for (n, m) in messages {
            let get = |f: &str| m.get(f).and_then(Value::as_str);
            let role = get("role").unwrap_or(if prefix == "gen_ai.completion." {
                "assistant"
            } else {
                "user"
            });
            match role {
                "user" => {
                    if let Some(t) = get("content") {
                        events.push(Event::User { text: t.to_owned() });
                    }
                }
                "assistant" => {
                    if let Some(t) = get("content").filter(|t| !t.is_empty()) {
                        events.push(Event::Text { text: t.to_owned() });
                    }
                    for j in 0.. {
                        let Some(tool) = get(&format!("tool_calls.{j}.name")) else {
                            break;
                        };
                        let raw = m.get(&format!("tool_calls.{j}.arguments")).ok_or_else(|| {
                            Refusal::at(&s.at, format!("span `{}`: {prefix}{n}.tool_calls.{j} (`{tool}`) has no arguments (content capture off?)", s.name))
                        })?;
                        events.push(Event::Call {
                            id: get(&format!("tool_calls.{j}.id")).map(str::to_owned),
                            tool: tool.to_owned(),
                            arguments: json_arguments(tool, raw, &s.at)?,
                            output: None,
                            at: s.at.clone(),
                        });
                    }
                }
                "tool" => events.push(Event::Output {
                    id: get("tool_call_id").map(str::to_owned),
                    tool: None,
                    output: text_result(get("content").unwrap_or(""), None),
                    at: s.at.clone(),
                }),
                _ => {}
            }
        }
    }
    Ok(events)
}

/// The log events of one chat span, in order: `gen_ai.user.message` `{content}`,
/// `gen_ai.assistant.message` `{content?, tool_calls?}`, `gen_ai.tool.message` `{content, id?}`,
/// `gen_ai.choice` `{message: {content?, tool_calls?}}`.
fn log_events(group: &[&Log]) -> Result<Vec<Event>, Refusal> {
    let mut events = Vec::new();
    for l in group {
        if l.unparsable {
            return Err(Refusal::at(
                &l.at,
                format!(
                    "event `{}`: `gen_ai.event.content` is not valid JSON (cut by an attribute length limit?)",
                    l.event
                ),
            ));
        }
        let body = &l.body;
        match l.event.as_str() {
            "gen_ai.user.message" => {
                if let Some(t) = body.get("content").and_then(Value::as_str) {
                    events.push(Event::User { text: t.to_owned() });
                }
            }
            "gen_ai.assistant.message" => assistant(body, l, &mut events)?,
            "gen_ai.choice" => {
                assistant(body.get("message").unwrap_or(&Value::Null), l, &mut events)?
            }
            "gen_ai.tool.message" => events.push(Event::Output {
                id: body
                    .get("id")
                    .or_else(|| body.get("tool_call_id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                tool: None,
                output: text_result(
                    body.get("content").and_then(Value::as_str).unwrap_or(""),
                    None,
                ),
                at: l.at.clone(),
            }),
            _ => {}
        }
    }
    Ok(events)
}

fn assistant(m: &Value, l: &Log, events: &mut Vec<Event>) -> Result<(), Refusal> {
    if let Some(t) = m
        .get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        events.push(Event::Text { text: t.to_owned() });
    }
    for c in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = c.get("function").unwrap_or(c);
        let tool = f.get("name").and_then(Value::as_str).ok_or_else(|| {
            Refusal::at(
                &l.at,
                format!("event `{}`: a tool call without a name", l.event),
            )
        })?;
        let raw = f.get("arguments").ok_or_else(|| {
            Refusal::at(&l.at, format!("event `{}`: the call of `{tool}` was recorded without its arguments (content capture off: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)", l.event))
        })?;
        events.push(Event::Call {
            id: c.get("id").and_then(Value::as_str).map(str::to_owned),
            tool: tool.to_owned(),
            arguments: json_arguments(tool, raw, &l.at)?,
            output: None,
            at: l.at.clone(),
        });
    }
    Ok(())
}

/// `execute_tool` spans (and MCP `tools/call` spans not inside one), by start time.
fn tool_spans(spans: &[&Span]) -> Result<Vec<Event>, Refusal> {
    let mut events = Vec::new();
    for s in spans {
        let op = s.attrs.get("gen_ai.operation.name").and_then(Value::as_str);
        if op != Some("execute_tool") {
            continue;
        }
        let tool = s
            .attrs
            .get("gen_ai.tool.name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Refusal::at(
                    &s.at,
                    format!(
                        "span `{}`: an `execute_tool` span without `gen_ai.tool.name`",
                        s.name
                    ),
                )
            })?;
        let raw = s.attrs.get("gen_ai.tool.call.arguments").ok_or_else(|| {
            Refusal::at(&s.at, format!(
                "span `{}`: the call of `{tool}` was recorded without `gen_ai.tool.call.arguments` (content capture off: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)",
                s.name
            ))
        })?;
        events.push(Event::Call {
            id: s
                .attrs
                .get("gen_ai.tool.call.id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            tool: tool.to_owned(),
            arguments: json_arguments(tool, raw, &s.at)?,
            output: s.attrs.get("gen_ai.tool.call.result").map(result_of),
            at: s.at.clone(),
        });
    }
    if events.is_empty()
        && let Some(s) = spans
            .iter()
            .find(|s| s.attrs.get("mcp.method.name").and_then(Value::as_str) == Some("tools/call"))
    {
        return Err(Refusal::at(
            &s.at,
            format!(
                "span `{}`: MCP `tools/call` spans record no arguments; record the run with GenAI content capture on",
                s.name
            ),
        ));
    }
    if events.is_empty()
        && let Some(s) = spans.iter().find(|s| is_genai(s))
    {
        return Err(Refusal::at(
            &s.at,
            format!(
                "span `{}`: the trace records no messages and no tool calls (content capture off: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)",
                s.name
            ),
        ));
    }
    Ok(events)
}
