//! Recorded runs in the formats teams already keep, read into the [`Transcript`] the YAML loader
//! makes: OpenAI Chat Completions `messages` and Responses API items, Anthropic Messages,
//! Gemini `contents`, MCP JSON-RPC message logs (raw or wrapped), OpenTelemetry GenAI traces and
//! logs in OTLP JSON (the collector's file form and the protobuf-JSON mapping; a run spread over
//! several traces is stitched into one), provider HTTP exchange logs and VCR cassettes
//! (`http.rs`), and the OpenAI Agents SDK's trace export (`agents.rs`).
//!
//! The format is told from the content ([`detect`]) and named in every error. Each reader turns
//! its file into one list of [`Event`]s — a user message, a tool call, a tool's output, the
//! agent's text — each with the place the file records it; one assembler ([`assemble`]) makes
//! the turns: a user message opens a turn, outputs join their calls by id, the last text of a
//! turn is its reply.
//!
//! Lossless or refuse: a call whose arguments were not captured (OTel content capture off), an
//! output whose call id no call has, arguments that are not a JSON object, a truncated span —
//! each is an error naming the file, the message or span and what is missing. Unknown extra
//! fields are ignored. A recorded run names no scenario: a sidecar `<id>.label.yaml` (a
//! transcript without calls: `scenario:`, `expect:`, `faults:` …) gives it, else the first user
//! prompt is matched against the harness's scenarios ([`scenario_for`]).
//!
//! The main entry points are [`read`] (a file to [`Recorded`]) and [`load`] (a file, its
//! sidecar and the harness to a [`Transcript`]).

pub mod adk;
mod agents;
mod chat;
mod http;
mod jsonrpc;
mod otlp;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::harness::{Call, Harness, Transcript, TranscriptTurn};
use crate::source::{self, Location, SourceError, SourceFile};

/// A format of recorded runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenAI Chat Completions: a request body's `messages` (or the bare array), assistant
    /// `tool_calls` with string arguments, `tool` messages.
    OpenAiChat,
    /// OpenAI Responses API: `input` items and the response's `output` items
    /// (`function_call`, `function_call_output`, `mcp_call`, `message`).
    OpenAiResponses,
    /// Anthropic Messages: content blocks `tool_use`, `tool_result`, `mcp_tool_use`,
    /// `mcp_tool_result`, `text`.
    Anthropic,
    /// Gemini `contents`: parts `functionCall`, `functionResponse`, `text`.
    Gemini,
    /// MCP JSON-RPC messages, one a line, either direction (optionally wrapped with the
    /// direction beside the message: `{"dir", "msg"}`, `{"seq", "direction", "message"}`, …).
    McpJsonRpc,
    /// OpenTelemetry traces and logs as OTLP JSON, with the GenAI semantic conventions.
    Otlp,
    /// Provider HTTP exchanges: a recording proxy's `{method, path, request, response}` lines
    /// or a VCR-style cassette (YAML or JSON), SSE bodies included.
    Http,
    /// The OpenAI Agents SDK's trace export (`item.export()` a line, or `{"data": [...]}`).
    AgentsSdk,
}

impl Format {
    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "OpenAI Chat Completions log",
            Format::OpenAiResponses => "OpenAI Responses log",
            Format::Anthropic => "Anthropic Messages log",
            Format::Gemini => "Gemini contents log",
            Format::McpJsonRpc => "MCP JSON-RPC log",
            Format::Otlp => "OTLP trace",
            Format::Http => "provider HTTP log",
            Format::AgentsSdk => "OpenAI Agents SDK trace",
        }
    }
}

/// Where in the file an event is recorded: a JSON pointer, in the document or (JSON Lines) in
/// its line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Place {
    /// The 0-based line of a JSON Lines document; `None` for a one-document file.
    pub line: Option<usize>,
    /// The pointer within the document.
    pub pointer: String,
}

impl Place {
    pub(crate) fn at(pointer: impl Into<String>) -> Self {
        Self {
            line: None,
            pointer: pointer.into(),
        }
    }

    pub(crate) fn on_line(line: usize, pointer: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            pointer: pointer.into(),
        }
    }

    /// The same place, further in.
    pub(crate) fn join(&self, rest: impl std::fmt::Display) -> Self {
        Self {
            line: self.line,
            pointer: format!("{}/{rest}", self.pointer),
        }
    }
}

impl Event {
    /// The 0-based JSON Lines line the event is on, when it has a place there.
    fn line(&self) -> Option<usize> {
        match self {
            Event::Call { at, .. } | Event::Output { at, .. } => at.line,
            Event::User { .. } | Event::Text { .. } => None,
        }
    }
}

/// One thing a recorded run holds.
#[derive(Clone, Debug)]
pub(crate) enum Event {
    /// A user message: it opens a turn.
    User { text: String },
    /// The agent called a tool.
    Call {
        id: Option<String>,
        tool: String,
        arguments: Value,
        /// An MCP-style result recorded with the call itself (Responses `mcp_call`,
        /// OTel `execute_tool`).
        output: Option<Value>,
        at: Place,
    },
    /// A tool's output, for the call with this id (or, without ids, the earliest call of
    /// this tool still waiting).
    Output {
        id: Option<String>,
        tool: Option<String>,
        output: Value,
        at: Place,
    },
    /// The agent's text.
    Text { text: String },
}

/// A recorded run, read: its turns, and what it says about itself.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The format it was written in.
    pub format: Format,
    /// The turns, each opened by a user message (the first may have none: an MCP log records
    /// no chat).
    pub turns: Vec<TranscriptTurn>,
    /// The trace it came from (OTLP), ids in hex.
    pub trace: Option<crate::harness::TraceLink>,
}

impl Recorded {
    /// The first user prompt, if the run recorded one.
    pub fn first_prompt(&self) -> Option<&str> {
        self.turns.first().and_then(|t| t.prompt.as_deref())
    }
}

/// The error readers return: a message at a place (or about the whole file).
pub(crate) struct Refusal {
    pub at: Option<Place>,
    pub message: String,
}

impl Refusal {
    pub(crate) fn at(at: &Place, message: impl Into<String>) -> Self {
        Self {
            at: Some(at.clone()),
            message: message.into(),
        }
    }

    pub(crate) fn file(message: impl Into<String>) -> Self {
        Self {
            at: None,
            message: message.into(),
        }
    }
}

/// The document(s) of a file: one JSON document, or JSON Lines.
pub(crate) enum Docs {
    One(Value),
    Lines(Vec<(usize, Value)>),
}

/// Tells a file's format from its content: `None` when it is none of them.
pub fn detect(file: &SourceFile) -> Result<Option<Format>, SourceError> {
    Ok(detect_docs(&parse(file)?))
}

fn detect_docs(docs: &Docs) -> Option<Format> {
    match docs {
        Docs::One(v) => detect_value(v),
        Docs::Lines(lines) => {
            let (_, first) = lines.first()?;
            if jsonrpc::unwrap(first).is_some() {
                Some(Format::McpJsonRpc)
            } else if first.get("resourceSpans").is_some() || first.get("resourceLogs").is_some() {
                Some(Format::Otlp)
            } else if http::is_exchange(first) {
                Some(Format::Http)
            } else if agents::is_item(first) {
                Some(Format::AgentsSdk)
            } else {
                None
            }
        }
    }
}

fn detect_value(v: &Value) -> Option<Format> {
    match v {
        Value::Object(o) => {
            if o.contains_key("resourceSpans") || o.contains_key("resourceLogs") {
                Some(Format::Otlp)
            } else if http::is_cassette(v) {
                Some(Format::Http)
            } else if agents::is_batch(v) {
                Some(Format::AgentsSdk)
            } else if o.contains_key("jsonrpc") {
                Some(Format::McpJsonRpc)
            } else if let Some(Value::Array(m)) = o.get("messages") {
                // An Anthropic answer appended as `response` tells a text-only history apart.
                let answer: Vec<Value> = o
                    .get("response")
                    .map(|r| vec![serde_json::json!({"role": "assistant", "content": r.get("content").cloned().unwrap_or(Value::Null)})])
                    .unwrap_or_default();
                let all: Vec<Value> = m.iter().cloned().chain(answer).collect();
                Some(chat::messages_dialect(&all))
            } else if o.get("contents").is_some_and(Value::is_array) {
                Some(Format::Gemini)
            } else if o.contains_key("input") || o.get("output").is_some_and(Value::is_array) {
                Some(Format::OpenAiResponses)
            } else {
                None
            }
        }
        Value::Array(items) => {
            let first = items.first()?;
            if first.get("parts").is_some() {
                Some(Format::Gemini)
            } else if first.get("jsonrpc").is_some() {
                Some(Format::McpJsonRpc)
            } else if items.iter().any(|i| {
                i.get("type").and_then(Value::as_str).is_some_and(|t| {
                    matches!(
                        t,
                        "function_call" | "function_call_output" | "mcp_call" | "message"
                    )
                })
            }) {
                Some(Format::OpenAiResponses)
            } else if first.get("role").is_some() {
                Some(chat::messages_dialect(items))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn parse(file: &SourceFile) -> Result<Docs, SourceError> {
    if file.text.starts_with('\u{feff}') {
        return Err(file.parse_json().unwrap_err());
    }
    let whole = match serde_json::from_str::<Value>(&file.text) {
        Ok(v) => {
            // Strict, as for every JSON file: a key repeated in an object is an error.
            file.check_json_keys()?;
            return Ok(Docs::One(v));
        }
        Err(e) => e,
    };
    // JSON Lines only when the first line is a document of its own; else the file is one
    // malformed document, and its error is the one at its place.
    let first_is_a_document = file
        .text
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok());
    if !first_is_a_document {
        // A VCR cassette in YAML (vcrpy's default serializer).
        if file.text.lines().any(|l| l.starts_with("interactions:")) {
            return serde_saphyr::from_str::<Value>(&file.text)
                .map(Docs::One)
                .map_err(|e| file.error(format!("a YAML cassette that does not parse: {e}")));
        }
        return Err(file.json_error(&whole));
    }
    let mut lines = Vec::new();
    for (i, line) in file.text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // A key repeated within a line's object, as in any JSON file.
        if let Some((column, message)) = repeated_key(line) {
            return Err(file.error_at(i as u32 + 1, column, message));
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            file.error_at(
                i as u32 + 1,
                e.column().max(1) as u32,
                format!(
                    "not JSON (nor JSON Lines): {}",
                    source::strip_json_position(&e.to_string())
                ),
            )
        })?;
        lines.push((i, v));
    }
    if lines.is_empty() {
        return Err(file.error("empty file: no recorded run in it"));
    }
    Ok(Docs::Lines(lines))
}

/// A key repeated within a line's object, if any: its column and the error's words (the
/// caller makes the error, quoting the file only then: a streamed file's lines are not kept).
fn repeated_key(line: &str) -> Option<(u32, String)> {
    let d = source::json::duplicate_keys(line).into_iter().next()?;
    let (_, column) = source::json::line_column(line, d.second);
    let key = d.pointer.rsplit('/').next().unwrap_or_default();
    Some((
        column,
        format!("duplicate key `{key}`; JSON readers disagree on which one counts, so keep one"),
    ))
}

/// Reads a recorded run. The format is told from the content; a file that holds none of
/// them, or holds one that cannot be mapped exactly, is an error naming the format and place.
pub fn read(file: &SourceFile) -> Result<Recorded, SourceError> {
    let mut runs = read_runs(file, true)?;
    Ok(runs.remove(0))
}

/// Every recorded run in a file: one, or for OTLP one per GenAI trace (in the order the
/// traces first appear).
pub fn read_all(file: &SourceFile) -> Result<Vec<Recorded>, SourceError> {
    read_runs(file, false)
}

/// Reads the recorded runs of the file at `path` (with `one`, exactly one run): an OTLP JSON
/// Lines file is streamed — a line at a time, keeping only what transcripts are made of — so a
/// trace file larger than memory reads in memory bounded by its largest line. The file returned
/// holds the text errors and call locations quote: all of it, or for a streamed file its line
/// count and the lines quoted.
pub fn read_path(path: &Path, one: bool) -> Result<(SourceFile, Vec<Recorded>), SourceError> {
    if path.extension().is_some_and(|e| e == "jsonl") && first_line_is_otlp(path)? {
        return stream_otlp(path, one);
    }
    let file = SourceFile::read(path)?;
    let runs = read_runs(&file, one)?;
    Ok((file, runs))
}

fn first_line_is_otlp(path: &Path) -> Result<bool, SourceError> {
    use std::io::BufRead;
    let f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    let mut reader = std::io::BufReader::new(f);
    let mut line = String::new();
    // A first line too large to be worth reading twice is read once, here, and judged.
    reader
        .read_line(&mut line)
        .map_err(|e| SourceError::io(path, e))?;
    Ok(serde_json::from_str::<Value>(&line)
        .is_ok_and(|v| v.get("resourceSpans").is_some() || v.get("resourceLogs").is_some()))
}

fn stream_otlp(path: &Path, one: bool) -> Result<(SourceFile, Vec<Recorded>), SourceError> {
    use std::io::BufRead;
    let open = || -> Result<std::io::BufReader<std::fs::File>, SourceError> {
        Ok(std::io::BufReader::new(
            std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?,
        ))
    };
    let mut collector = otlp::Collector::default();
    let mut count = 0;
    // Bytes, not `lines()`: a line that is not UTF-8 is an error at its line and column, as in
    // any file read whole (issue 32, item 15), not a bare I/O error.
    for (i, bytes) in open()?.split(b'\n').enumerate() {
        let mut bytes = bytes.map_err(|e| SourceError::io(path, e))?;
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        count = i + 1;
        let line = match String::from_utf8(bytes) {
            Ok(l) => l,
            Err(e) => {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let column = String::from_utf8_lossy(valid).chars().count() + 1;
                let file = SourceFile::from_text(path, sparse_of(&[], i + 1));
                return Err(file.error_at(i as u32 + 1, column as u32, "not valid UTF-8"));
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| {
            let file = SourceFile::from_text(path, sparse_of(&[(i, line.as_str())], i + 1));
            file.error_at(
                i as u32 + 1,
                e.column().max(1) as u32,
                format!(
                    "{}: not JSON: {}",
                    Format::Otlp.name(),
                    source::strip_json_position(&e.to_string())
                ),
            )
        })?;
        // Strict, as every JSON input is (issue 32, item 10). (The file an error quotes is made
        // only for the error: made for every line, it cost the file's length a line.)
        if let Some((column, message)) = repeated_key(&line) {
            let file = SourceFile::from_text(path, sparse_of(&[(i, line.as_str())], i + 1));
            return Err(file.error_at(i as u32 + 1, column, message));
        }
        collector.feed(Some(i), &v);
    }
    let result = collector.finish(one);
    let mut wanted: Vec<usize> = match &result {
        Ok(runs) => runs
            .iter()
            .flat_map(|(events, _)| events.iter().filter_map(Event::line))
            .collect(),
        Err(r) => r.at.iter().filter_map(|p| p.line).collect(),
    };
    wanted.sort_unstable();
    wanted.dedup();
    // A second pass for the lines quoted: the file's text is its line count and those lines.
    let mut kept = Vec::new();
    for (i, line) in open()?.lines().enumerate() {
        if wanted.binary_search(&i).is_ok() {
            kept.push((i, line.map_err(|e| SourceError::io(path, e))?));
        }
    }
    let borrowed: Vec<(usize, &str)> = kept.iter().map(|(i, l)| (*i, l.as_str())).collect();
    let file = SourceFile::from_text(path, sparse_of(&borrowed, count));
    let runs = result.map_err(|r| refusal(&file, Format::Otlp, r))?;
    let mut locator = Locator::new(&file);
    let runs = runs
        .into_iter()
        .map(|(events, trace)| {
            Ok(Recorded {
                format: Format::Otlp,
                turns: assemble(&mut locator, Format::Otlp, events)?,
                trace,
            })
        })
        .collect::<Result<_, SourceError>>()?;
    Ok((file, runs))
}

/// Text of `count` lines, empty but for `lines` (0-based index, text).
fn sparse_of(lines: &[(usize, &str)], count: usize) -> String {
    let mut out = String::with_capacity(count + lines.iter().map(|(_, l)| l.len()).sum::<usize>());
    let mut next = 0;
    for &(i, l) in lines {
        while next < i {
            out.push('\n');
            next += 1;
        }
        out.push_str(l);
        out.push('\n');
        next += 1;
    }
    while next < count {
        out.push('\n');
        next += 1;
    }
    out
}

fn read_runs(file: &SourceFile, one: bool) -> Result<Vec<Recorded>, SourceError> {
    let docs = parse(file)?;
    let format = detect_docs(&docs).ok_or_else(|| {
        file.error(
            "not a recorded run agent-seer reads: expected OpenAI `messages` or Responses \
             items, Anthropic `messages`, Gemini `contents`, MCP JSON-RPC lines, OTLP JSON \
             (`resourceSpans` / `resourceLogs`), provider HTTP exchanges, a VCR cassette or an \
             OpenAI Agents SDK trace export",
        )
    })?;
    let refuse = |r: Refusal| refusal(file, format, r);
    let runs: Vec<(Vec<Event>, Option<crate::harness::TraceLink>)> = match (format, &docs) {
        (Format::OpenAiChat, Docs::One(v)) => vec![(chat::openai_chat(v).map_err(refuse)?, None)],
        (Format::Anthropic, Docs::One(v)) => vec![(chat::anthropic(v).map_err(refuse)?, None)],
        (Format::Gemini, Docs::One(v)) => vec![(chat::gemini(v).map_err(refuse)?, None)],
        (Format::OpenAiResponses, Docs::One(v)) => {
            vec![(chat::responses(v).map_err(refuse)?, None)]
        }
        (Format::McpJsonRpc, docs) => vec![(jsonrpc::events(docs).map_err(refuse)?, None)],
        (Format::Http, docs) => {
            // A YAML cassette's interactions are placed by line: pointers do not reach YAML.
            let yaml = !file.text.trim_start().starts_with('{') && matches!(docs, Docs::One(_));
            let lines = if yaml {
                http::yaml_interaction_lines(&file.text)
            } else {
                Vec::new()
            };
            vec![(http::events(docs, &lines).map_err(refuse)?, None)]
        }
        (Format::AgentsSdk, docs) => {
            let runs = agents::runs(docs).map_err(refuse)?;
            if one && runs.len() > 1 {
                return Err(file.error(format!(
                    "{}: {} traces in one file; grade one run a file: `agent-seer import trace` writes one transcript per trace",
                    format.name(),
                    runs.len()
                )));
            }
            runs.into_iter().map(|events| (events, None)).collect()
        }
        (Format::Otlp, docs) => otlp::events(docs, one)
            .map_err(refuse)?
            .into_iter()
            .collect(),
        (_, Docs::Lines(_)) => {
            unreachable!("only MCP, OTLP, HTTP logs and Agents SDK traces are told from JSON Lines")
        }
    };
    let mut locator = Locator::new(file);
    runs.into_iter()
        .map(|(events, trace)| {
            Ok(Recorded {
                format,
                turns: assemble(&mut locator, format, events)?,
                trace,
            })
        })
        .collect()
}

fn refusal(file: &SourceFile, format: Format, r: Refusal) -> SourceError {
    let message = format!("{}: {}", format.name(), r.message);
    match r.at {
        Some(at) => {
            let (line, column) = position(file, &at);
            file.error_at(line, column, message)
        }
        None => file.error(message),
    }
}

/// 1-based line and column of a place.
fn position(file: &SourceFile, at: &Place) -> (u32, u32) {
    match at.line {
        None => match source::json::locate(&file.text, &at.pointer) {
            Some(p) => source::json::line_column(&file.text, p.start()),
            None => (1, 1),
        },
        Some(i) => {
            let text = file.text.lines().nth(i).unwrap_or("");
            let column = source::json::locate(text, &at.pointer)
                .map_or(1, |p| source::json::line_column(text, p.start()).1);
            (i as u32 + 1, column)
        }
    }
}

/// Call locations for one file: line starts found once, and each place's position once (the
/// calls of a run stitched from many traces share places, and a file may hold thousands of
/// runs: finding a line by scanning from the top for each call would be quadratic).
pub(crate) struct Locator<'a> {
    file: &'a SourceFile,
    starts: Option<Vec<usize>>,
    memo: std::collections::HashMap<(Option<usize>, String), (u32, u32)>,
}

impl<'a> Locator<'a> {
    pub(crate) fn new(file: &'a SourceFile) -> Self {
        Self {
            file,
            starts: None,
            memo: Default::default(),
        }
    }

    fn location(&mut self, at: &Place) -> Location {
        let key = (at.line, at.pointer.clone());
        let (line, column) = match self.memo.get(&key) {
            Some(&p) => p,
            None => {
                let p = match at.line {
                    None => position(self.file, at),
                    Some(i) => {
                        let text = &self.file.text;
                        let starts = self.starts.get_or_insert_with(|| {
                            std::iter::once(0)
                                .chain(text.match_indices('\n').map(|(k, _)| k + 1))
                                .collect()
                        });
                        let line = starts.get(i).map_or("", |&a| {
                            let rest = &text[a..];
                            let line = rest.split('\n').next().unwrap_or("");
                            line.strip_suffix('\r').unwrap_or(line)
                        });
                        let column = source::json::locate(line, &at.pointer)
                            .map_or(1, |p| source::json::line_column(line, p.start()).1);
                        (i as u32 + 1, column)
                    }
                };
                self.memo.insert(key, p);
                p
            }
        };
        Location {
            file: self.file.path.clone(),
            line,
            column,
        }
    }
}

/// The events in order, made into turns.
fn assemble(
    locator: &mut Locator<'_>,
    format: Format,
    events: Vec<Event>,
) -> Result<Vec<TranscriptTurn>, SourceError> {
    let file = locator.file;
    let refuse = |at: &Place, m: String| refusal(file, format, Refusal::at(at, m));
    let mut turns: Vec<TranscriptTurn> = Vec::new();
    // Per turn: which calls still wait for an output, by index into the turn's calls.
    let mut waiting: Vec<(usize, usize)> = Vec::new();
    let mut all_ids: std::collections::HashMap<String, (usize, usize)> = Default::default();
    let open = |turns: &mut Vec<TranscriptTurn>, prompt: Option<String>| {
        turns.push(TranscriptTurn {
            prompt,
            calls: Vec::new(),
            reply: None,
        });
    };
    for e in events {
        match e {
            Event::User { text } => {
                // A user message with nothing between it and the last one belongs to it (a
                // system prompt split in two, a re-sent message).
                match turns.last_mut() {
                    Some(t) if t.calls.is_empty() && t.reply.is_none() => {
                        let p = t.prompt.get_or_insert_with(String::new);
                        if !p.is_empty() {
                            p.push('\n');
                        }
                        p.push_str(&text);
                    }
                    _ => open(&mut turns, Some(text)),
                }
            }
            Event::Call {
                id,
                tool,
                arguments,
                output,
                at,
            } => {
                if turns.is_empty() {
                    open(&mut turns, None);
                }
                let t = turns.len() - 1;
                if !arguments.is_object() {
                    return Err(refuse(
                        &at,
                        format!(
                            "the arguments of `{tool}` are {}, not a JSON object",
                            crate::finding::type_name(&arguments)
                        ),
                    ));
                }
                let turn = &mut turns[t];
                let c = turn.calls.len();
                if let Some(id) = &id
                    && all_ids.insert(id.clone(), (t, c)).is_some()
                {
                    return Err(refuse(&at, format!("a second call with the id `{id}`")));
                }
                let waits = output.is_none();
                turn.calls.push(Call::recorded(
                    tool,
                    arguments,
                    output,
                    id,
                    locator.location(&at),
                ));
                // An agent's text before a call is thinking aloud, not the reply.
                turn.reply = None;
                if waits {
                    waiting.push((t, c));
                }
            }
            Event::Output {
                id,
                tool,
                output,
                at,
            } => {
                let slot = match &id {
                    Some(id) => match all_ids.get(id) {
                        Some(&slot) => slot,
                        None => {
                            return Err(refuse(
                                &at,
                                format!("a tool output for the call id `{id}`, which no call has"),
                            ));
                        }
                    },
                    None => {
                        // No id: the earliest waiting call of that tool (of any tool, when
                        // the output does not name one either).
                        let name = tool.as_deref();
                        let fits = |s: &&(usize, usize)| {
                            name.is_none_or(|n| turns[s.0].calls[s.1].tool == n)
                        };
                        // The current turn's waiting calls first, then earlier turns'.
                        let current = turns.len().saturating_sub(1);
                        match waiting
                            .iter()
                            .filter(|s| s.0 == current)
                            .find(fits)
                            .or_else(|| waiting.iter().find(fits))
                        {
                            Some(&slot) => slot,
                            None => {
                                return Err(refuse(
                                    &at,
                                    match name {
                                        Some(n) => format!(
                                            "a tool output of `{n}` with no call of it waiting for one"
                                        ),
                                        None => "a tool output with no call waiting for one".into(),
                                    },
                                ));
                            }
                        }
                    }
                };
                let call = &mut turns[slot.0].calls[slot.1];
                if call.output.is_some() {
                    return Err(refuse(
                        &at,
                        format!("a second output for the call of `{}`", call.tool),
                    ));
                }
                call.output = Some(output);
                waiting.retain(|&s| s != slot);
            }
            Event::Text { text } => {
                if turns.is_empty() {
                    open(&mut turns, None);
                }
                let turn = turns.last_mut().expect("a turn is open");
                match &mut turn.reply {
                    Some(r) => {
                        r.push('\n');
                        r.push_str(&text);
                    }
                    None => turn.reply = Some(text),
                }
            }
        }
    }
    Ok(turns)
}

/// A tool's textual result as the MCP `CallToolResult` the engines read (one text block).
pub(crate) fn text_result(text: &str, is_error: Option<bool>) -> Value {
    let mut o = Map::new();
    o.insert(
        "content".into(),
        serde_json::json!([{"type": "text", "text": text}]),
    );
    if let Some(e) = is_error {
        o.insert("isError".into(), Value::Bool(e));
    }
    Value::Object(o)
}

/// Arguments written as a JSON string (OpenAI, OTel): parsed, or a refusal at `at`.
pub(crate) fn json_arguments(tool: &str, raw: &Value, at: &Place) -> Result<Value, Refusal> {
    match raw {
        Value::String(s) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(s) => serde_json::from_str(s).map_err(|e| {
            Refusal::at(
                at,
                format!("the arguments of `{tool}` are not valid JSON ({e}); was the log cut?"),
            )
        }),
        other => Ok(other.clone()),
    }
}

/// A recorded run's id: its file name without `.json` / `.jsonl` (`.yaml` / `.yml`: a cassette).
pub fn run_id(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".json"))
        .or_else(|| name.strip_suffix(".yaml"))
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(&name)
        .to_owned()
}

/// The sidecar of a recorded run at `path`: `<id>.label.yaml` beside it.
pub fn sidecar(path: &Path) -> PathBuf {
    path.with_file_name(format!("{}.label.yaml", run_id(path)))
}

/// Whether a file under `transcripts/` is a recorded run (JSON or JSON Lines).
pub fn is_recorded(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("json" | "jsonl")
    )
}

/// Loads a recorded run as a transcript with the id given: its label and scenario from the
/// sidecar when there is one, else the scenario whose first prompt is the run's
/// ([`scenario_for`]).
pub fn load(path: &Path, id: String, harness: Option<&Harness>) -> Result<Transcript, SourceError> {
    let (file, mut runs) = read_path(path, true)?;
    let recorded = runs.remove(0);
    let side = sidecar(path);
    let mut t = if side.is_file() {
        let label = Transcript::load(&side)?;
        if !label
            .turns
            .iter()
            .all(|t| t.calls.is_empty() && t.reply.is_none())
        {
            return Err(label.source.error_at(
                1,
                1,
                format!(
                    "a label file gives `scenario:`, `expect:`, `faults:`, `xfail:` and `note:`; \
                     the calls are {}'s",
                    path.display()
                ),
            ));
        }
        label
    } else {
        let scenario = match harness {
            Some(h) => scenario_for(&file, &recorded, h)?,
            None => {
                return Err(file.error(format!(
                    "{} names no scenario: give it a label file {} with `scenario:`",
                    recorded.format.name(),
                    side.display()
                )));
            }
        };
        let text = format!(
            "scenario: {}\n",
            serde_json::to_string(&scenario).unwrap_or_default()
        );
        Transcript::from_source(SourceFile::from_text(path, text), id.clone())?
    };
    t.id = id;
    t.path = path.to_path_buf();
    t.turns = recorded.turns;
    t.trace = recorded.trace;
    t.source = file;
    Ok(t)
}

/// The scenario of `harness` whose first prompt is the run's first user prompt (compared with
/// case and runs of whitespace ignored). No prompt, no match, or several, is an error listing
/// the candidates.
pub fn scenario_for(
    file: &SourceFile,
    run: &Recorded,
    harness: &Harness,
) -> Result<String, SourceError> {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let candidates = || {
        harness
            .scenarios
            .iter()
            .map(|s| format!("`{}`", s.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(prompt) = run.first_prompt() else {
        return Err(file.error(format!(
            "{} records no user prompt, so its scenario cannot be told: give it a label file {} with `scenario:` (one of {})",
            run.format.name(),
            sidecar(&file.path).display(),
            candidates()
        )));
    };
    let want = norm(prompt);
    let hits: Vec<&str> = harness
        .scenarios
        .iter()
        .filter(|s| s.turns.first().is_some_and(|t| norm(&t.prompt) == want))
        .map(|s| s.id.as_str())
        .collect();
    match hits.as_slice() {
        [one] => Ok((*one).to_owned()),
        // No scenario fits: the fix is a scenario for this prompt, not a label pointing at
        // some other scenario (issue 34).
        [] => Err(file.error(format!(
            "the first user prompt of this {} ({:?}) is no scenario's of suite `{}`: add a scenario for this prompt to {} (or `agent-seer import trace` the run as an editable transcript); if a scenario asks the same in other words, give a label file {} with `scenario:` (one of {})",
            run.format.name(),
            cut(prompt, 80),
            harness.suite,
            harness.path.display(),
            sidecar(&file.path).display(),
            candidates()
        ))),
        many => Err(file.error(format!(
            "the first user prompt of this {} is that of several scenarios ({}): give a label file {} with `scenario:`",
            run.format.name(),
            many.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
            sidecar(&file.path).display()
        ))),
    }
}

/// At most `n` characters of `s`, with `…` when cut.
fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// One transcript `import trace` wrote.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The YAML transcript written.
    pub path: PathBuf,
    /// The recorded run's file.
    pub from: PathBuf,
    /// Its format.
    pub format: Format,
    /// The scenario it answers.
    pub scenario: String,
    /// How many calls it holds.
    pub calls: usize,
}

/// Writes every recorded run of `files` as an editable YAML transcript under `out` (one per
/// run; an OTLP file gives one per trace, `<stem>-<n>.yaml`), through the typed writer, for
/// blessing and hand edits. The scenario is `scenario` when given, else the run's label file's,
/// else its first prompt's ([`scenario_for`]); a label file's `expect`, `faults` and `xfail`
/// are kept. Nothing is written unless every run converts, and an existing file is replaced
/// only with `force`.
pub fn import(
    files: &[PathBuf],
    harness: &Harness,
    scenario: Option<&str>,
    out: &Path,
    force: bool,
) -> Result<Vec<Imported>, SourceError> {
    use crate::harness::{CallDoc, LabelDoc, TranscriptBody, TranscriptDoc, TranscriptTurnDoc};
    if let Some(s) = scenario
        && !harness.scenarios.iter().any(|sc| sc.id == s)
    {
        return Err(harness.source.error(format!(
            "--scenario {s}: suite `{}` has no such scenario",
            harness.suite
        )));
    }
    let mut planned: Vec<(Imported, String)> = Vec::new();
    for path in files {
        let (file, runs) = read_path(path, false)?;
        let side = sidecar(path);
        let label = if side.is_file() {
            Some(Transcript::load(&side)?)
        } else {
            None
        };
        let stem = run_id(path);
        let many = runs.len() > 1;
        for (k, run) in runs.into_iter().enumerate() {
            let scenario = match (scenario, label.as_ref().and_then(|l| l.scenario.clone())) {
                (Some(s), _) => s.to_owned(),
                (None, Some(s)) => s,
                (None, None) => scenario_for(&file, &run, harness)?,
            };
            let id = if many {
                format!("{stem}-{}", k + 1)
            } else {
                stem.clone()
            };
            source::file_name(&id).map_err(|e| file.error(format!("transcript name {e}")))?;
            let target = out.join(format!("{id}.yaml"));
            let calls = run.turns.iter().map(|t| t.calls.len()).sum();
            let trace = run
                .trace
                .as_ref()
                .map_or(String::new(), |t| format!(", trace {}", t.trace_id));
            let l = label.as_ref().map(|l| &l.label);
            let doc = TranscriptDoc {
                scenario: Some(scenario.clone()),
                prompt: None,
                agent: label.as_ref().and_then(|l| l.agent.clone()),
                note: Some(format!(
                    "imported from {} ({}{trace})",
                    path.display(),
                    run.format.name()
                )),
                label: LabelDoc {
                    expect: l.and_then(|l| l.expect),
                    faults: l.map(|l| l.faults.clone()).unwrap_or_default(),
                    xfail: l.and_then(|l| l.xfail.clone()),
                },
                body: TranscriptBody::Turns {
                    turns: run
                        .turns
                        .iter()
                        .map(|t| TranscriptTurnDoc {
                            prompt: t.prompt.clone(),
                            calls: t
                                .calls
                                .iter()
                                .map(|c| CallDoc {
                                    tool: c.tool.clone(),
                                    arguments: c.args().clone(),
                                    id: c.id.clone(),
                                    output: c.output.clone(),
                                })
                                .collect(),
                            reply: t.reply.clone(),
                        })
                        .collect(),
                },
            };
            let text = doc
                .to_yaml()
                .map_err(|e| SourceError::caused_by(&target, e))?;
            planned.push((
                Imported {
                    path: target,
                    from: path.clone(),
                    format: run.format,
                    scenario,
                    calls,
                },
                text,
            ));
        }
    }
    // One writer for every file (issue 32, item 2): no link out of `out` followed, nothing
    // replaced without `force`, all staged before any is moved into place.
    let mut dir = source::OutDir::new(out, force);
    for (i, text) in &planned {
        if dir.contains(&i.path) {
            return Err(SourceError::about(
                &i.path,
                "two recorded runs would be written here (files with one name in two places); nothing was written",
            ));
        }
        dir.add(i.path.clone(), text.as_bytes())?;
    }
    dir.commit()?;
    Ok(planned.into_iter().map(|(i, _)| i).collect())
}
