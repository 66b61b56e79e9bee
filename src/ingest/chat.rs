//! The chat APIs' message logs: OpenAI Chat Completions and Responses, Anthropic Messages,
//! Gemini `contents`. Each takes a request body (the last one of a run holds its whole
//! history) or the bare list, plus the final answer where the log appends it.

use serde_json::Value;

use super::{Event, Format, Place, Refusal, json_arguments, text_result};

/// Chat Completions or Anthropic, for a `messages` list: OpenAI has `tool` messages and
/// `tool_calls`; Anthropic has typed content blocks of tools.
pub(super) fn messages_dialect(messages: &[Value]) -> Format {
    let anthropic_block = |b: &Value| {
        b.get("type").and_then(Value::as_str).is_some_and(|t| {
            matches!(
                t,
                "tool_use" | "tool_result" | "mcp_tool_use" | "mcp_tool_result" | "server_tool_use"
            )
        })
    };
    for m in messages {
        if m.get("role").and_then(Value::as_str) == Some("tool")
            || m.get("tool_calls").is_some()
            || m.get("function_call").is_some()
        {
            return Format::OpenAiChat;
        }
        if m.get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| blocks.iter().any(anthropic_block))
        {
            return Format::Anthropic;
        }
    }
    Format::OpenAiChat
}

/// The list at `key` of a request body, or the body itself when it is the list.
fn list<'a>(v: &'a Value, key: &str) -> Result<(&'a [Value], Place), Refusal> {
    match v {
        Value::Array(items) => Ok((items, Place::at(""))),
        Value::Object(o) => match o.get(key) {
            Some(Value::Array(items)) => Ok((items, Place::at(format!("/{key}")))),
            Some(_) => Err(Refusal::at(
                &Place::at(format!("/{key}")),
                format!("`{key}` must be an array"),
            )),
            None => Ok((&[], Place::at(""))),
        },
        _ => Err(Refusal::file(format!(
            "expected an object with `{key}` or an array"
        ))),
    }
}

/// Text of a content that is a string or a list of text parts (`{type: text, text}`); `None`
/// when it holds no text.
fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_none_or(|t| matches!(t, "text" | "input_text" | "output_text"))
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

fn str_at<'a>(v: &'a Value, key: &str, at: &Place, what: &str) -> Result<&'a str, Refusal> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::at(at, format!("{what} has no `{key}` string")))
}

/// Chat Completions `messages`: user and assistant text, assistant `tool_calls`, `tool`
/// messages; a `choices[0].message` or trailing assistant message is the final answer.
pub(super) fn openai_chat(v: &Value) -> Result<Vec<Event>, Refusal> {
    let (messages, base) = list(v, "messages")?;
    let mut events = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let at = base.join(i);
        message(m, &at, &mut events)?;
    }
    // A response appended as the body's `choices` (a request and its answer in one log).
    if let Some(m) = v.pointer("/choices/0/message") {
        message(m, &Place::at("/choices/0/message"), &mut events)?;
    }
    Ok(events)
}

fn message(m: &Value, at: &Place, events: &mut Vec<Event>) -> Result<(), Refusal> {
    let role = str_at(m, "role", at, "a message")?;
    match role {
        "user" => {
            if let Some(text) = m.get("content").and_then(text_of) {
                events.push(Event::User { text });
            }
        }
        "assistant" => {
            if let Some(text) = m.get("content").and_then(text_of) {
                events.push(Event::Text { text });
            }
            // The legacy single `function_call` (before `tool_calls`): a call without an id.
            if let Some(f) = m.get("function_call") {
                let at = at.join("function_call");
                let tool = str_at(f, "name", &at, "a `function_call`")?;
                let raw = f.get("arguments").ok_or_else(|| {
                    Refusal::at(&at, format!("the call of `{tool}` has no `arguments`"))
                })?;
                events.push(Event::Call {
                    id: None,
                    tool: tool.to_owned(),
                    arguments: json_arguments(tool, raw, &at)?,
                    output: None,
                    at,
                });
            }
            if let Some(calls) = m.get("tool_calls") {
                let calls = calls.as_array().ok_or_else(|| {
                    Refusal::at(&at.join("tool_calls"), "`tool_calls` must be an array")
                })?;
                for (j, c) in calls.iter().enumerate() {
                    let at = at.join(format!("tool_calls/{j}"));
                    let f = c
                        .get("function")
                        .ok_or_else(|| Refusal::at(&at, "a tool call without `function`"))?;
                    let tool = str_at(f, "name", &at, "a tool call's `function`")?;
                    let raw = f.get("arguments").ok_or_else(|| {
                        Refusal::at(&at, format!("the call of `{tool}` has no `arguments`"))
                    })?;
                    events.push(Event::Call {
                        id: c.get("id").and_then(Value::as_str).map(str::to_owned),
                        tool: tool.to_owned(),
                        arguments: json_arguments(tool, raw, &at)?,
                        output: None,
                        at,
                    });
                }
            }
        }
        "tool" => {
            let id = str_at(m, "tool_call_id", at, "a `tool` message")?;
            let text = m.get("content").and_then(text_of).unwrap_or_default();
            events.push(Event::Output {
                id: Some(id.to_owned()),
                tool: None,
                output: text_result(&text, None),
                at: at.clone(),
            });
        }
        // The legacy `function` message: the output of the waiting call of that name.
        "function" => {
            let tool = str_at(m, "name", at, "a `function` message")?;
            let text = m.get("content").and_then(text_of).unwrap_or_default();
            events.push(Event::Output {
                id: None,
                tool: Some(tool.to_owned()),
                output: text_result(&text, None),
                at: at.clone(),
            });
        }
        // system, developer: not the agent's.
        _ => {}
    }
    Ok(())
}

/// Anthropic Messages: `text`, `tool_use` / `tool_result`, `mcp_tool_use` / `mcp_tool_result`
/// blocks; a trailing `content` (the response) is the final answer.
pub(super) fn anthropic(v: &Value) -> Result<Vec<Event>, Refusal> {
    let (messages, base) = list(v, "messages")?;
    let mut events = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let at = base.join(i);
        let role = str_at(m, "role", &at, "a message")?;
        match m.get("content") {
            Some(Value::String(s)) => events.push(if role == "user" {
                Event::User { text: s.clone() }
            } else {
                Event::Text { text: s.clone() }
            }),
            Some(Value::Array(blocks)) => {
                for (j, b) in blocks.iter().enumerate() {
                    block(role, b, &at.join(format!("content/{j}")), &mut events)?;
                }
            }
            _ => {}
        }
    }
    // A response appended to the request: `{…, "response": {"content": […]}}`.
    if let Some(Value::Array(blocks)) = v.pointer("/response/content") {
        for (j, b) in blocks.iter().enumerate() {
            block(
                "assistant",
                b,
                &Place::at(format!("/response/content/{j}")),
                &mut events,
            )?;
        }
    }
    Ok(events)
}

fn block(role: &str, b: &Value, at: &Place, events: &mut Vec<Event>) -> Result<(), Refusal> {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("text");
    match kind {
        "text" => {
            let text = str_at(b, "text", at, "a text block")?.to_owned();
            events.push(if role == "user" {
                Event::User { text }
            } else {
                Event::Text { text }
            });
        }
        "tool_use" | "mcp_tool_use" | "server_tool_use" => {
            let tool = str_at(b, "name", at, "a `tool_use` block")?;
            let input = b.get("input").ok_or_else(|| {
                Refusal::at(at, format!("the `tool_use` of `{tool}` has no `input`"))
            })?;
            events.push(Event::Call {
                id: b.get("id").and_then(Value::as_str).map(str::to_owned),
                tool: tool.to_owned(),
                arguments: input.clone(),
                output: None,
                at: at.clone(),
            });
        }
        "tool_result" | "mcp_tool_result" => {
            let id = str_at(b, "tool_use_id", at, "a tool result block")?;
            let is_error = b.get("is_error").and_then(Value::as_bool);
            let output = match b.get("content") {
                Some(Value::Array(parts)) => {
                    // MCP-shaped already (text, image… blocks): keep it as a CallToolResult.
                    let mut o = serde_json::Map::new();
                    o.insert("content".into(), Value::Array(parts.clone()));
                    if let Some(e) = is_error {
                        o.insert("isError".into(), Value::Bool(e));
                    }
                    Value::Object(o)
                }
                Some(Value::String(s)) => text_result(s, is_error),
                _ => text_result("", is_error),
            };
            events.push(Event::Output {
                id: Some(id.to_owned()),
                tool: None,
                output,
                at: at.clone(),
            });
        }
        // thinking, images, documents: not calls.
        _ => {}
    }
    Ok(())
}

/// Gemini `contents`: `text`, `functionCall`, `functionResponse` parts (camelCase on the
/// wire; the SDK's snake_case accepted too); a `candidates[0].content` is the final answer.
pub(super) fn gemini(v: &Value) -> Result<Vec<Event>, Refusal> {
    let (contents, base) = list(v, "contents")?;
    let mut events = Vec::new();
    for (i, c) in contents.iter().enumerate() {
        content(c, &base.join(i), &mut events)?;
    }
    if let Some(c) = v.pointer("/candidates/0/content") {
        content(c, &Place::at("/candidates/0/content"), &mut events)?;
    }
    Ok(events)
}

fn content(c: &Value, at: &Place, events: &mut Vec<Event>) -> Result<(), Refusal> {
    let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
    let Some(parts) = c.get("parts").and_then(Value::as_array) else {
        return Ok(());
    };
    for (j, p) in parts.iter().enumerate() {
        let at = at.join(format!("parts/{j}"));
        let get = |camel: &str, snake: &str| p.get(camel).or_else(|| p.get(snake));
        if let Some(text) = p.get("text").and_then(Value::as_str) {
            if p.get("thought").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            events.push(if role == "user" {
                Event::User {
                    text: text.to_owned(),
                }
            } else {
                Event::Text {
                    text: text.to_owned(),
                }
            });
        } else if let Some(f) = get("functionCall", "function_call") {
            let tool = str_at(f, "name", &at, "a `functionCall`")?;
            events.push(Event::Call {
                id: f.get("id").and_then(Value::as_str).map(str::to_owned),
                tool: tool.to_owned(),
                arguments: f
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default())),
                output: None,
                at,
            });
        } else if let Some(f) = get("functionResponse", "function_response") {
            let tool = str_at(f, "name", &at, "a `functionResponse`")?;
            let response = f.get("response").cloned().unwrap_or(Value::Null);
            events.push(Event::Output {
                id: f.get("id").and_then(Value::as_str).map(str::to_owned),
                tool: Some(tool.to_owned()),
                output: gemini_output(response),
                at,
            });
        }
    }
    Ok(())
}

/// A `functionResponse.response` as a CallToolResult: the google-genai SDK's MCP adapter
/// nests the result under `result` with snake_case keys (`structured_content`, `is_error`);
/// anything else is the tool's JSON, kept as structured content.
fn gemini_output(response: Value) -> Value {
    let inner = response.get("result").cloned().unwrap_or(response.clone());
    if let Some(content) = inner.get("content").filter(|c| c.is_array()) {
        let mut o = serde_json::Map::new();
        o.insert("content".into(), content.clone());
        if let Some(s) = inner
            .get("structured_content")
            .or_else(|| inner.get("structuredContent"))
        {
            o.insert("structuredContent".into(), s.clone());
        }
        if let Some(e) = inner.get("is_error").or_else(|| inner.get("isError")) {
            o.insert("isError".into(), e.clone());
        }
        return Value::Object(o);
    }
    let text = serde_json::to_string(&response).unwrap_or_default();
    let mut o = text_result(&text, None);
    o["structuredContent"] = response;
    o
}

/// Responses API items: `message` (user or assistant), `function_call`,
/// `function_call_output`, `mcp_call` (its output recorded with it); `input` then `output`.
pub(super) fn responses(v: &Value) -> Result<Vec<Event>, Refusal> {
    let mut events = Vec::new();
    let mut lists: Vec<(&[Value], Place)> = Vec::new();
    match v {
        Value::Array(items) => lists.push((items, Place::at(""))),
        Value::Object(o) => {
            match o.get("input") {
                Some(Value::String(s)) => events.push(Event::User { text: s.clone() }),
                Some(Value::Array(items)) => lists.push((items, Place::at("/input"))),
                _ => {}
            }
            if let Some(Value::Array(items)) = o.get("output") {
                lists.push((items, Place::at("/output")));
            }
        }
        _ => {
            return Err(Refusal::file(
                "expected a Responses request body or a list of items",
            ));
        }
    }
    for (items, base) in lists {
        for (i, item) in items.iter().enumerate() {
            response_item(item, &base.join(i), &mut events)?;
        }
    }
    Ok(events)
}

fn response_item(item: &Value, at: &Place, events: &mut Vec<Event>) -> Result<(), Refusal> {
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or(if item.get("role").is_some() {
            "message"
        } else {
            ""
        });
    match kind {
        "message" => {
            let role = item
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("assistant");
            if let Some(text) = item.get("content").and_then(text_of) {
                events.push(if role == "user" {
                    Event::User { text }
                } else if role == "assistant" {
                    Event::Text { text }
                } else {
                    return Ok(());
                });
            }
        }
        "function_call" => {
            let tool = str_at(item, "name", at, "a `function_call`")?;
            let raw = item.get("arguments").ok_or_else(|| {
                Refusal::at(
                    at,
                    format!("the `function_call` of `{tool}` has no `arguments`"),
                )
            })?;
            events.push(Event::Call {
                id: Some(str_at(item, "call_id", at, "a `function_call`")?.to_owned()),
                tool: tool.to_owned(),
                arguments: json_arguments(tool, raw, at)?,
                output: None,
                at: at.clone(),
            });
        }
        "function_call_output" => {
            let id = str_at(item, "call_id", at, "a `function_call_output`")?;
            let output = match item.get("output") {
                Some(Value::String(s)) => text_result(s, None),
                Some(parts @ Value::Array(_)) => {
                    text_result(&text_of(parts).unwrap_or_default(), None)
                }
                _ => text_result("", None),
            };
            events.push(Event::Output {
                id: Some(id.to_owned()),
                tool: None,
                output,
                at: at.clone(),
            });
        }
        "mcp_call" => {
            let tool = str_at(item, "name", at, "an `mcp_call`")?;
            let raw = item.get("arguments").ok_or_else(|| {
                Refusal::at(at, format!("the `mcp_call` of `{tool}` has no `arguments`"))
            })?;
            let output = match (item.get("output"), item.get("error")) {
                (_, Some(Value::String(e))) => Some(text_result(e, Some(true))),
                (Some(Value::String(s)), _) => Some(text_result(s, None)),
                _ => None,
            };
            events.push(Event::Call {
                id: item.get("id").and_then(Value::as_str).map(str::to_owned),
                tool: tool.to_owned(),
                arguments: json_arguments(tool, raw, at)?,
                output,
                at: at.clone(),
            });
        }
        // reasoning, mcp_list_tools, web_search_call…: not the agent's tool calls here.
        _ => {}
    }
    Ok(())
}
