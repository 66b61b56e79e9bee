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
    /// The same traces, for a membership test in constant time.
    seen: std::collections::HashSet<String>,
    /// Per trace: the spans kept, by start time once finished.
    spans: std::collections::HashMap<String, Vec<Span>>,
    /// Per trace: the GenAI log events of the latest span that logged any.
    logs: std::collections::HashMap<String, Vec<(String, u128, Vec<Log>)>>,
}

impl Collector {
    fn genai(&mut self, trace: &str) {
        if !self.seen.contains(trace) {
            self.seen.insert(trace.to_owned());
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
        s.attrs.retain(|k, _| {
            k.starts_with("gen_ai.")
                || k.starts_with("mcp.")
                || CONVERSATION_KEYS.contains(&k.as_str())
        });
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

/// Span attributes that name the conversation a trace belongs to: traces that share one are
/// one run, in start-time order.
const CONVERSATION_KEYS: &[&str] = &["gen_ai.conversation.id", "session.id"];

/// One trace, read: its events and what says which run it belongs to.
struct TraceRead {
    /// Its id, as written.
    name: String,
    events: Vec<Event>,
    link: Option<TraceLink>,
    /// It has an agent-level span (`invoke_agent`): a whole run on its own, never stitched.
    whole: bool,
    conversation: Option<String>,
    /// Its earliest span's start.
    start: u128,
    /// Its first span, for a refusal about the trace.
    at: Place,
}

impl Collector {
    /// The GenAI runs seen, in the order they first appeared: each run's events and link. A
    /// run is one trace, or traces stitched together ([`stitch`]); traces that hold only the
    /// MCP SDK's client spans (no arguments, no content) are left out when any trace holds
    /// content. With `one`, more than one run is refused.
    pub(super) fn finish(mut self, one: bool) -> Result<Vec<TraceRun>, Refusal> {
        if self.order.is_empty() {
            return Err(Refusal::file(
                "no GenAI span or event in it (no `gen_ai.*` attributes)",
            ));
        }
        let order = std::mem::take(&mut self.order);
        let mut reads = Vec::new();
        let mut bare_mcp: Option<Vec<Span>> = None;
        for trace in &order {
            let mut mine: Vec<Span> = self.spans.remove(trace).unwrap_or_default();
            mine.sort_by_key(|s| s.start);
            // The chat span whose events hold the most: the latest history.
            let logs = self
                .logs
                .remove(trace)
                .unwrap_or_default()
                .into_iter()
                .max_by_key(|(_, start, events)| (events.len(), *start))
                .map(|(_, _, events)| events)
                .unwrap_or_default();
            if logs.is_empty()
                && mine.iter().all(|s| {
                    s.attrs.get("gen_ai.operation.name").is_none()
                        && s.attrs.contains_key("mcp.method.name")
                })
            {
                // Only MCP client spans: a run recorded without a parent span has one such
                // trace per MCP request.
                bare_mcp.get_or_insert(mine);
                continue;
            }
            let mine: Vec<&Span> = mine.iter().collect();
            let logs: Vec<&Log> = logs.iter().collect();
            // The run's root: the agent's invocation, else the outermost GenAI span (one
            // whose parent is no GenAI span).
            let agent = mine.iter().copied().find(|s| {
                s.attrs.get("gen_ai.operation.name").and_then(Value::as_str) == Some("invoke_agent")
            });
            let ids: std::collections::HashSet<&str> = mine.iter().map(|s| s.id.as_str()).collect();
            let root = agent
                .or_else(|| {
                    mine.iter()
                        .copied()
                        .find(|s| !ids.contains(s.parent.as_str()))
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
            let conversation = mine.iter().find_map(|s| {
                CONVERSATION_KEYS
                    .iter()
                    .find_map(|k| s.attrs.get(*k).and_then(Value::as_str))
                    .map(str::to_owned)
            });
            reads.push(TraceRead {
                name: trace.clone(),
                events,
                link,
                whole: agent.is_some(),
                conversation,
                start: mine.first().map_or(0, |s| s.start),
                at: mine
                    .first()
                    .map(|s| s.at.clone())
                    .or_else(|| logs.first().map(|l| l.at.clone()))
                    .unwrap_or_default(),
            });
        }
        if reads.is_empty() {
            // Only MCP client spans: they record no arguments.
            let spans = bare_mcp.unwrap_or_default();
            let spans: Vec<&Span> = spans.iter().collect();
            tool_spans(&spans)?;
            return Err(Refusal::file(
                "no GenAI span or event in it (no `gen_ai.*` attributes)",
            ));
        }
        let runs = stitch(reads)?;
        if one && runs.len() > 1 {
            // The first few ids: 3,000 of them would bury the advice (issue 32, item 15).
            const SHOWN: usize = 5;
            let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
            let mut ids = names[..names.len().min(SHOWN)].join(", ");
            if names.len() > SHOWN {
                ids.push_str(&format!(" and {} more", names.len() - SHOWN));
            }
            return Err(Refusal::file(format!(
                "{} traces in one file ({ids}); grade one run a file: `agent-seer import trace` writes one transcript per trace",
                names.len(),
            )));
        }
        Ok(runs.into_iter().map(|r| (r.events, r.link)).collect())
    }
}

/// An event's content, hashed: what two traces must agree on for one to continue the other
/// (not where the file records it).
pub(super) fn fingerprint(e: &Event) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match e {
        Event::User { text } => (0u8, text).hash(&mut h),
        Event::Text { text } => (1u8, text).hash(&mut h),
        Event::Call {
            id,
            tool,
            arguments,
            output,
            ..
        } => (
            2u8,
            id,
            tool,
            arguments.to_string(),
            output.as_ref().map(Value::to_string),
        )
            .hash(&mut h),
        Event::Output {
            id, tool, output, ..
        } => (3u8, id, tool, output.to_string()).hash(&mut h),
    }
    h.finish()
}

/// Runs spread over several traces, made one: a run recorded without an agent-level parent
/// span has one trace per model request (and each request repeats the history so far).
///
/// - Traces with an `invoke_agent` span are whole runs, left alone.
/// - Traces that share a conversation id ([`CONVERSATION_KEYS`]) are one run, in start-time
///   order: a trace whose history extends the run so far replaces it; one that holds only new
///   items (a request sent with `previous_response_id`) is appended; one that starts like
///   the run but does not extend it is refused.
/// - The rest by history: a trace continues the trace whose whole history is the longest
///   proper prefix of its own. Two traces it could continue, or two traces continuing one,
///   is ambiguous and refused; so is a trace recorded twice.
///
/// Cost: one hash per event and one per history prefix, a hash-map lookup per prefix, and one
/// comparison of the prefix found: linear in the events of all traces.
fn stitch(reads: Vec<TraceRead>) -> Result<Vec<TraceRead>, Refusal> {
    use std::collections::HashMap;
    let n = reads.len();
    // Which run each trace ends up in: the index of the run's first trace.
    let mut head: Vec<usize> = (0..n).collect();
    // The trace whose events the run takes (the latest of the chain), or a run built of
    // several traces' events (a conversation appended to).
    let mut appended: HashMap<usize, Vec<Event>> = HashMap::new();
    let mut last: Vec<usize> = (0..n).collect();
    let fps: Vec<Vec<u64>> = reads
        .iter()
        .map(|r| r.events.iter().map(fingerprint).collect())
        .collect();
    let prefix_hashes = |fp: &[u64]| -> Vec<u64> {
        use std::hash::{Hash, Hasher};
        let mut out = Vec::with_capacity(fp.len() + 1);
        let mut acc = 0u64;
        out.push(acc);
        for f in fp {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (acc, f).hash(&mut h);
            acc = h.finish();
            out.push(acc);
        }
        out
    };
    let prefixes: Vec<Vec<u64>> = fps.iter().map(|f| prefix_hashes(f)).collect();

    // By conversation id.
    let mut conversations: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_history = Vec::new();
    for (i, r) in reads.iter().enumerate() {
        match (&r.conversation, r.whole) {
            (_, true) => {}
            (Some(c), false) => conversations.entry(c.as_str()).or_default().push(i),
            (None, false) => by_history.push(i),
        }
    }
    for (id, mut members) in conversations {
        members.sort_by_key(|&i| (reads[i].start, i));
        let first = members[0];
        let mut run: Vec<u64> = fps[first].clone();
        let mut events: Option<Vec<Event>> = None;
        for &i in &members[1..] {
            head[i] = first;
            if fps[i].starts_with(&run) {
                run = fps[i].clone();
                events = None;
                last[first] = i;
            } else if !fps[i].is_empty() && fps[i].first() == run.first() {
                return Err(Refusal::at(
                    &reads[i].at,
                    format!(
                        "trace {}: conversation `{id}` goes on in it, but its history is not the one recorded so far (trace {}); which is the run cannot be told",
                        reads[i].name, reads[last[first]].name
                    ),
                ));
            } else {
                let so_far = events.get_or_insert_with(|| reads[last[first]].events.clone());
                so_far.extend(reads[i].events.iter().cloned());
                run.extend(fps[i].iter().copied());
                last[first] = i;
            }
        }
        if let Some(e) = events {
            appended.insert(first, e);
        }
    }

    // By history: each trace's whole history, by its hash.
    let mut whole_history: HashMap<u64, Vec<usize>> = HashMap::new();
    for &i in &by_history {
        whole_history
            .entry(*prefixes[i].last().unwrap_or(&0))
            .or_default()
            .push(i);
    }
    let mut continues: Vec<Option<usize>> = vec![None; n];
    let mut continued_by: Vec<Option<usize>> = vec![None; n];
    for &u in &by_history {
        let len = fps[u].len();
        // The longest prefix of u's history that is another trace's whole history.
        for k in (1..=len).rev() {
            let Some(candidates) = whole_history.get(&prefixes[u][k]) else {
                continue;
            };
            let found: Vec<usize> = candidates
                .iter()
                .copied()
                .filter(|&t| t != u && fps[t].len() == k && fps[t][..] == fps[u][..k])
                .collect();
            match found.as_slice() {
                [] => continue,
                [t] if k < len => {
                    if let Some(other) = continued_by[*t] {
                        return Err(Refusal::at(
                            &reads[u].at,
                            format!(
                                "traces {} and {} both continue the history of trace {}: which one the run went on in cannot be told; record a conversation id (`gen_ai.conversation.id`) or wrap each run in a span",
                                reads[other].name, reads[u].name, reads[*t].name
                            ),
                        ));
                    }
                    continues[u] = Some(*t);
                    continued_by[*t] = Some(u);
                }
                [t, ..] => {
                    let (a, b) = if k == len {
                        (*t, u)
                    } else {
                        (found[0], found[1])
                    };
                    return Err(Refusal::at(
                        &reads[u].at,
                        format!(
                            "traces {} and {} record the same requests, so which run {} continues cannot be told; record a conversation id (`gen_ai.conversation.id`) or wrap each run in a span",
                            reads[a.min(b)].name,
                            reads[a.max(b)].name,
                            if k == len { "each" } else { "the next" }
                        ),
                    ));
                }
            }
            break;
        }
    }
    for &u in &by_history {
        if continues[u].is_some() {
            continue;
        }
        // A chain's first trace: follow it to its end.
        let mut at = u;
        while let Some(next) = continued_by[at] {
            head[next] = u;
            at = next;
        }
        last[u] = at;
    }

    // One run per head, in the order its first trace appeared in the file.
    let mut first_seen = vec![usize::MAX; n];
    for (i, &h) in head.iter().enumerate() {
        first_seen[h] = first_seen[h].min(i);
    }
    let mut heads: Vec<usize> = (0..n).filter(|&i| head[i] == i).collect();
    heads.sort_by_key(|&h| first_seen[h]);
    let mut reads: Vec<Option<TraceRead>> = reads.into_iter().map(Some).collect();
    let mut runs = Vec::new();
    for i in heads {
        let end = last[i];
        let mut run = reads[end]
            .take()
            .ok_or_else(|| Refusal::file("internal: a trace stitched into two runs"))?;
        if let Some(events) = appended.remove(&i) {
            run.events = events;
        }
        runs.push(run);
    }
    Ok(runs)
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
    rejoin_responses_ids(&mut events);
    Ok(events)
}

/// Traceloop's Responses instrumentation (0.55.0 to 0.62.4 at least) writes a `function_call`
/// input item as a tool-call part with the item's `id` (`fc_…`), but its output with the
/// item's `call_id` (`call_…`): the two ids of one call differ
/// (`responses_wrappers.py: _set_responses_json_messages`). An output whose id is no call's
/// takes the earliest `fc_` call that no output names, in order (the order the app sent the
/// outputs in), and the call gets the output's id; every other mismatch stays, and is refused
/// where outputs are joined to calls.
fn rejoin_responses_ids(events: &mut [Event]) {
    use std::collections::{HashSet, VecDeque};
    let mut calls = HashSet::new();
    let mut outputs = HashSet::new();
    for e in events.iter() {
        match e {
            Event::Call { id: Some(id), .. } => calls.insert(id.clone()),
            Event::Output { id: Some(id), .. } => outputs.insert(id.clone()),
            _ => false,
        };
    }
    let mut waiting: VecDeque<usize> = VecDeque::new();
    for i in 0..events.len() {
        let renamed = match &events[i] {
            Event::Call { id: Some(id), .. } if id.starts_with("fc_") && !outputs.contains(id) => {
                waiting.push_back(i);
                None
            }
            Event::Output { id: Some(id), .. } if !calls.contains(id) => {
                waiting.pop_front().map(|c| (c, id.clone()))
            }
            _ => None,
        };
        if let Some((c, new)) = renamed
            && let Event::Call { id, .. } = &mut events[c]
        {
            *id = Some(new);
        }
    }
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
