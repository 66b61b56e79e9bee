//! Provider HTTP exchanges: a recording proxy's log (one `{"method", "path", "request",
//! "response"}` object a line; `url` or `uri` for `path`; a body as JSON, as a JSON string, or
//! under `body`) and VCR-style cassettes (vcrpy / pytest-recording, YAML or JSON:
//! `interactions[].request.{uri, body}` and `.response.body.string`), for OpenAI Chat
//! Completions and Responses, Anthropic Messages and Gemini `generateContent`, streaming (SSE)
//! bodies included.
//!
//! Each request carries the history so far, so the run is the last exchange's request with its
//! response appended, read by the format's own reader. Lossless or refuse: every exchange's
//! history with its answer must begin the next exchange's (else the log holds more than one
//! conversation, and is refused at the exchange that breaks the chain); an SSE stream without
//! its end, or tool arguments cut mid-stream, is refused. Exchanges with other endpoints
//! (`GET /v1/models` …) are skipped.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::{Docs, Event, Place, Refusal, chat};

/// The provider APIs told from an exchange's path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

impl Api {
    fn of(path: &str) -> Option<Api> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/chat/completions") {
            Some(Api::Chat)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else if path.ends_with("/messages") {
            Some(Api::Anthropic)
        } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
            Some(Api::Gemini)
        } else {
            None
        }
    }
}

/// Whether a document is a cassette (`interactions`).
pub(super) fn is_cassette(v: &Value) -> bool {
    v.get("interactions").is_some_and(Value::is_array)
}

/// Whether a line is one exchange of a proxy's log.
pub(super) fn is_exchange(v: &Value) -> bool {
    v.get("request").is_some()
        && v.get("response").is_some()
        && ["path", "url", "uri", "method"]
            .iter()
            .any(|k| v.get(*k).is_some())
}

/// A body as JSON: an object as it is, a string parsed (`None` when it is no JSON: an SSE
/// stream, or nothing).
fn json_body(v: &Value) -> Option<Cow<'_, Value>> {
    match v {
        Value::String(s) => serde_json::from_str(s).ok().map(Cow::Owned),
        Value::Null => None,
        other => Some(Cow::Borrowed(other)),
    }
}

/// One exchange: the API, the request body, the response body (JSON or SSE text), its place.
struct Exchange<'a> {
    api: Api,
    request: Cow<'a, Value>,
    response: &'a Value,
    at: Place,
}

/// The exchanges of a log or cassette. `lines` gives the line of each interaction of a YAML
/// cassette (JSON pointers do not reach into YAML).
fn exchanges<'a>(docs: &'a Docs, lines: &[usize]) -> Result<Vec<Exchange<'a>>, Refusal> {
    let mut out = Vec::new();
    let mut push = |path: &str, request: &'a Value, response: &'a Value, at: Place| {
        let Some(api) = Api::of(path) else {
            return Ok(());
        };
        let request = json_body(request).ok_or_else(|| {
            Refusal::at(
                &at,
                format!("the request to {path} has no JSON body (was the body filtered out?)"),
            )
        })?;
        out.push(Exchange {
            api,
            request,
            response,
            at,
        });
        Ok::<(), Refusal>(())
    };
    match docs {
        Docs::One(v) => {
            let list = v
                .get("interactions")
                .and_then(Value::as_array)
                .ok_or_else(|| Refusal::file("a cassette without `interactions`"))?;
            for (k, it) in list.iter().enumerate() {
                let at = match lines.get(k) {
                    Some(&line) => Place::on_line(line, ""),
                    None => Place::at(format!("/interactions/{k}")),
                };
                let uri = it
                    .pointer("/request/uri")
                    .or_else(|| it.pointer("/request/url"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| Refusal::at(&at, "an interaction without `request.uri`"))?;
                let request = it.pointer("/request/body").unwrap_or(&Value::Null);
                let response = it
                    .pointer("/response/body/string")
                    .or_else(|| it.pointer("/response/body"))
                    .or_else(|| it.pointer("/response/content"))
                    .unwrap_or(&Value::Null);
                push(uri, request, response, at)?;
            }
        }
        Docs::Lines(list) => {
            for (i, line) in list {
                let at = Place::on_line(*i, "");
                let path = ["path", "url", "uri"]
                    .iter()
                    .find_map(|k| line.get(*k).and_then(Value::as_str))
                    .ok_or_else(|| Refusal::at(&at, "an exchange without `path` (or `url`)"))?;
                let body = |v: &'a Value| v.get("body").filter(|_| v.is_object()).unwrap_or(v);
                let request = body(line.get("request").unwrap_or(&Value::Null));
                let response = body(line.get("response").unwrap_or(&Value::Null));
                push(path, request, response, at.join("request"))?;
            }
        }
    }
    Ok(out)
}

/// The events of the run the exchanges record.
pub(super) fn events(docs: &Docs, lines: &[usize]) -> Result<Vec<Event>, Refusal> {
    let exchanges = exchanges(docs, lines)?;
    if exchanges.is_empty() {
        return Err(Refusal::file(
            "no exchange with a model API it reads (`/chat/completions`, `/responses`, `/messages`, `:generateContent`)",
        ));
    }
    let mut previous: Option<Vec<u64>> = None;
    let mut last = Vec::new();
    for x in &exchanges {
        let response = response_of(x)?;
        let doc = run_of(x.api, &x.request, &response);
        let read = match x.api {
            Api::Chat => chat::openai_chat(&doc),
            Api::Responses => chat::responses(&doc),
            Api::Anthropic => chat::anthropic(&doc),
            Api::Gemini => chat::gemini(&doc),
        };
        // Places in the document made here mean nothing in the file: the exchange's instead.
        let mut events = read.map_err(|r| Refusal::at(&x.at, r.message))?;
        for e in &mut events {
            if let Event::Call { at, .. } | Event::Output { at, .. } = e {
                *at = x.at.clone();
            }
        }
        let prints: Vec<u64> = events.iter().map(super::otlp::fingerprint).collect();
        if let Some(before) = &previous
            && !prints.starts_with(before)
        {
            return Err(Refusal::at(
                &x.at,
                "this exchange does not continue the one before it (its history is not that one's with its answer): the log holds more than one conversation; keep one run a file",
            ));
        }
        previous = Some(prints);
        last = events;
    }
    Ok(last)
}

/// The request's history with the response appended, as the format's reader takes it.
fn run_of(api: Api, request: &Value, response: &Value) -> Value {
    let list = |k: &str| request.get(k).cloned().unwrap_or(Value::Array(Vec::new()));
    let push = |mut list: Value, item: Option<Value>| {
        if let (Value::Array(items), Some(item)) = (&mut list, item) {
            items.push(item);
        }
        list
    };
    match api {
        Api::Chat => {
            json!({"messages": push(list("messages"), response.pointer("/choices/0/message").cloned())})
        }
        Api::Responses => json!({
            "input": request.get("input").cloned().unwrap_or(Value::Array(Vec::new())),
            "output": response.get("output").cloned().unwrap_or(Value::Array(Vec::new())),
        }),
        Api::Anthropic => json!({"messages": push(
            list("messages"),
            response
                .get("content")
                .map(|c| json!({"role": "assistant", "content": c})),
        )}),
        Api::Gemini => json!({"contents": push(
            list("contents"),
            response.pointer("/candidates/0/content").cloned(),
        )}),
    }
}

/// A response body as the API's JSON response: as written, or assembled from its SSE stream.
fn response_of(x: &Exchange<'_>) -> Result<Value, Refusal> {
    if let Some(v) = json_body(x.response)
        && !v.is_string()
    {
        return Ok(v.into_owned());
    }
    let Some(text) = x.response.as_str() else {
        return Err(Refusal::at(&x.at, "a response without a body"));
    };
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    if data.is_empty() {
        return Err(Refusal::at(
            &x.at,
            "the response body is neither JSON nor an SSE stream (`data:` lines)",
        ));
    }
    let mut chunks = Vec::with_capacity(data.len());
    let mut done = false;
    for d in data {
        if d == "[DONE]" {
            done = true;
            continue;
        }
        chunks.push(serde_json::from_str::<Value>(d).map_err(|e| {
            Refusal::at(
                &x.at,
                format!("an SSE event whose data is not JSON ({e}); was the stream cut?"),
            )
        })?);
    }
    match x.api {
        Api::Chat => chat_stream(&chunks, done, &x.at),
        Api::Responses => chunks
            .iter()
            .rev()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("response.completed"))
            .and_then(|c| c.get("response").cloned())
            .ok_or_else(|| {
                Refusal::at(
                    &x.at,
                    "a Responses stream without `response.completed`: was it cut?",
                )
            }),
        Api::Anthropic => anthropic_stream(&chunks, &x.at),
        Api::Gemini => Ok(gemini_stream(&chunks)),
    }
}

/// Chat Completions chunks: `choices[0].delta` content and `tool_calls` by index, arguments
/// concatenated.
fn chat_stream(chunks: &[Value], done: bool, at: &Place) -> Result<Value, Refusal> {
    let mut content = String::new();
    let mut calls: Vec<Map<String, Value>> = Vec::new();
    let mut finished = done;
    for c in chunks {
        let Some(choice) = c.pointer("/choices/0") else {
            continue;
        };
        finished |= choice.get("finish_reason").is_some_and(|f| !f.is_null());
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            content.push_str(t);
        }
        for tc in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = tc.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            if i > calls.len() {
                return Err(Refusal::at(
                    at,
                    format!(
                        "a streamed tool call at index {i} before the one at {}",
                        calls.len()
                    ),
                ));
            }
            if i == calls.len() {
                calls.push(Map::new());
            }
            let call = &mut calls[i];
            for k in ["id", "type"] {
                if let Some(v) = tc.get(k) {
                    call.insert(k.into(), v.clone());
                }
            }
            let f = call
                .entry("function")
                .or_insert_with(|| json!({"name": "", "arguments": ""}));
            for k in ["name", "arguments"] {
                if let Some(part) = tc
                    .pointer(&format!("/function/{k}"))
                    .and_then(Value::as_str)
                    && let Some(Value::String(s)) = f.get_mut(k)
                {
                    s.push_str(part);
                }
            }
        }
    }
    if !finished {
        return Err(Refusal::at(
            at,
            "a Chat Completions stream without a `finish_reason` or `[DONE]`: was it cut?",
        ));
    }
    let mut message = json!({"role": "assistant"});
    if !content.is_empty() {
        message["content"] = Value::String(content);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.into_iter().map(Value::Object).collect());
    }
    Ok(json!({"choices": [{"message": message}]}))
}

/// Anthropic Messages events: `content_block_start` blocks with their `text_delta` and
/// `input_json_delta` parts, up to `message_stop`.
fn anthropic_stream(chunks: &[Value], at: &Place) -> Result<Value, Refusal> {
    let mut blocks: Vec<(Value, String)> = Vec::new();
    let mut stopped = false;
    for c in chunks {
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match c.get("type").and_then(Value::as_str).unwrap_or("") {
            "content_block_start" => {
                let b = c.get("content_block").cloned().unwrap_or(Value::Null);
                if index != blocks.len() {
                    return Err(Refusal::at(
                        at,
                        format!(
                            "a streamed content block {index} after {} blocks",
                            blocks.len()
                        ),
                    ));
                }
                blocks.push((b, String::new()));
            }
            "content_block_delta" => {
                let Some((block, json)) = blocks.get_mut(index) else {
                    return Err(Refusal::at(
                        at,
                        format!("a delta for the content block {index}, which did not start"),
                    ));
                };
                let d = c.get("delta").unwrap_or(&Value::Null);
                if let Some(t) = d.get("text").and_then(Value::as_str)
                    && let Some(Value::String(s)) = block.get_mut("text")
                {
                    s.push_str(t);
                }
                if let Some(p) = d.get("partial_json").and_then(Value::as_str) {
                    json.push_str(p);
                }
            }
            "message_stop" => stopped = true,
            _ => {}
        }
    }
    if !stopped {
        return Err(Refusal::at(
            at,
            "an Anthropic stream without `message_stop`: was it cut?",
        ));
    }
    let content = blocks
        .into_iter()
        .map(|(mut b, json)| {
            if !json.is_empty() {
                let input: Value = serde_json::from_str(&json).map_err(|e| {
                    Refusal::at(
                        at,
                        format!("streamed tool input that is not JSON ({e}); was the stream cut?"),
                    )
                })?;
                b["input"] = input;
            }
            Ok(b)
        })
        .collect::<Result<Vec<_>, Refusal>>()?;
    Ok(json!({"content": content}))
}

/// Gemini `streamGenerateContent` chunks: the first candidate's parts, in order (runs of
/// text joined).
fn gemini_stream(chunks: &[Value]) -> Value {
    let mut parts: Vec<Value> = Vec::new();
    for c in chunks {
        for p in c
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match (parts.last_mut(), p.get("text").and_then(Value::as_str)) {
                (Some(Value::Object(last)), Some(t)) if last.len() == 1 => {
                    if let Some(Value::String(s)) = last.get_mut("text") {
                        s.push_str(t);
                    } else {
                        parts.push(p.clone());
                    }
                }
                _ => parts.push(p.clone()),
            }
        }
    }
    json!({"candidates": [{"content": {"role": "model", "parts": parts}}]})
}

/// The 0-based lines where a YAML cassette's interactions start (`- request:`).
pub(super) fn yaml_interaction_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- request:"))
        .map(|(i, _)| i)
        .collect()
}
